//! Helpers shared by the integration tests.
#![allow(dead_code)]

use proptest::sample::Index;
use rulesmith_core::record::Record;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::{Game, GameError, State, ToMove, Variant};
use std::path::PathBuf;

/// Runs the `rulesmith` command from the repository root.
pub fn rulesmith(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("runs")
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn game(variant: &str) -> Game {
    rulesmith_rhai::interpreted(Variant::load(root().join("variants").join(variant)).unwrap_or_else(|e| panic!("{e}")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A variant folder of one test: `files` (name, text) written into a
/// fresh folder of its own. Each call has its own folder: tests that share
/// a rule set (and so a name) run at once on the harness's threads.
pub fn scratch_variant(name: &str, files: &[(&str, &str)]) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "rulesmith-{}-{name}-{}-{call}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// A rule set of one test: `variant_toml` and `rules` written as
/// `variant.toml` and `rules.rhai` ([`scratch_variant`]), loaded for the
/// interpreter.
pub fn scratch_game(name: &str, variant_toml: &str, rules: &str) -> Game {
    let dir = scratch_variant(name, &[("variant.toml", variant_toml), ("rules.rhai", rules)]);
    rulesmith_rhai::interpreted(Variant::load(&dir).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"))
}

/// A proptest runner with a fixed seed: CI runs are reproducible, and
/// `RULESMITH_PROPTEST_CASES` (see [`cases`]) explores further.
pub fn runner(cases: u32) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

/// proptest cases: `RULESMITH_PROPTEST_CASES` for deeper runs.
pub fn cases(default: u32) -> u32 {
    std::env::var("RULESMITH_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A game driven by proptest: decisions pick `legal[choice.index(len)]`
/// (after the choices run out: uniform from the seed), chance comes from
/// the seed. Returns the final state and the full record.
pub fn driven_playout(
    game: &Game,
    players: usize,
    seed: u64,
    choices: &[Index],
    max_decisions: usize,
) -> Result<(State, Record), GameError> {
    let mut chance: GameRng = rng::seeded(seed);
    let mut state = game.new_game(players)?;
    let mut record = Record::default();
    let mut decisions = 0;
    loop {
        match state.to_move() {
            ToMove::Terminal => return Ok((state, record)),
            ToMove::Chance => {
                let o = game.sample_outcome(&state, &mut chance).expect("chance has outcomes");
                record.chance(game.outcome_text(o));
                game.apply_outcome(&mut state, o)?;
            }
            ToMove::Decision(seat) => {
                if decisions >= max_decisions {
                    return Ok((state, record));
                }
                let legal = game.legal_actions(&state)?;
                let i = match choices.get(decisions) {
                    Some(ix) => ix.index(legal.len()),
                    None => rng::below(&mut chance, legal.len() as u32) as usize,
                };
                record.decision(seat, game.action_text(&legal[i]));
                game.apply_action(&mut state, legal[i])?;
                decisions += 1;
            }
        }
    }
}
