//! Rules fuzzing: shipped variants hold every invariant and engine check;
//! broken ones are caught, shrunk and reported with a replayable record.

mod common;

use common::{cases, game, root, rulesmith};
use rulesmith_core::{rng, Game, Variant};
use rulesmith_lab::fuzz::{self, FindingKind, Options};
use std::rc::Rc;

/// Fuzzes `variant` in-process: `games` checked games, no finding allowed.
fn holds(variant: &str, players: usize, games: u32, sweep: bool) {
    let g = Rc::new(game(variant));
    let base: Variant = (**g.variant()).clone();
    let sweeps = if sweep { fuzz::sweepable(&g) } else { Vec::new() };
    let opts = Options {
        players,
        ..Options::default()
    };
    let mut game_for = |params: &[(String, i64)]| -> Result<Rc<Game>, String> {
        if params.is_empty() {
            return Ok(g.clone());
        }
        rulesmith_rhai::interpreted(fuzz::with_params(&base, params)?)
            .map(Rc::new)
            .map_err(|e| e.to_string())
    };
    let batch = fuzz::run_batch(
        &mut game_for,
        &opts,
        &sweeps,
        rng::derive(0xF022, players as u64),
        games,
    );
    if let Some((f, params)) = &batch.finding {
        panic!(
            "{variant} ({players} players): {} - {}\nparams {params:?}\n{}",
            f.kind,
            f.message,
            f.record.to_text(&[])
        );
    }
    assert_eq!(batch.totals.games, games as u64, "every game was played");
}

#[test]
fn sirius_basic_keeps_every_invariant() {
    holds("sirius-basic", 2, cases(24), false);
}

#[test]
fn sirius_lifeboats_keeps_every_invariant() {
    holds("sirius-lifeboats", 2, cases(16), false);
}

#[test]
fn sirius_custom_cards_keep_every_invariant() {
    holds("sirius-custom-cards", 2, cases(16), false);
}

#[test]
fn sirius_multiplayer_keeps_every_invariant_for_every_player_count() {
    for players in 3..=6 {
        holds("sirius-multiplayer", players, cases(4), false);
    }
}

#[test]
fn sirius_advanced_keeps_every_invariant_for_every_player_count() {
    for players in 2..=6 {
        holds("sirius-advanced", players, cases(4), false);
    }
}

#[test]
fn space_war_keeps_every_invariant() {
    holds("space-war", 2, cases(6), false);
}

#[test]
fn battleship_galaxies_keeps_every_invariant() {
    holds("battleship-galaxies", 2, cases(4), false);
}

/// Space War's orders listed through the turn memo: recalled groups are
/// what a listing from scratch gives (memo-is-transparent), game after game.
#[test]
fn space_war_with_the_turn_memo_keeps_every_check() {
    let g = Rc::new(
        rulesmith_rhai::interpreted(Variant::load(root().join("tests/fuzz-variants/space-war-memo")).unwrap()).unwrap(),
    );
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let batch = fuzz::run_batch(&mut game_for, &Options::default(), &[], 11, cases(4));
    if let Some((f, _)) = &batch.finding {
        panic!("{} - {}\n{}", f.kind, f.message, f.record.to_text(&[]));
    }
}

/// A memo stamp that misses what a group depends on is found: the fuzzer
/// lists from scratch beside the memo and compares (checked games only, no
/// shrinking, which `rulesmith fuzz` does).
#[test]
fn a_stale_memo_stamp_is_found() {
    use proptest::strategy::{Strategy, ValueTree};
    let g = rulesmith_rhai::interpreted(Variant::load(root().join("tests/fuzz-variants/stale-memo")).unwrap()).unwrap();
    let mut runner = common::runner(1);
    let tapes = proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 400);
    let mut found = None;
    for _ in 0..8 {
        let decisions = tapes.new_tree(&mut runner).unwrap().current();
        let tape = fuzz::Tape {
            decisions,
            chance: Vec::new(),
        };
        let mut cov = fuzz::Coverage::default();
        if let Err(f) = fuzz::play_checked(&g, &Options::default(), &tape, &mut cov) {
            found = Some(f);
            break;
        }
    }
    let f = found.expect("the stale stamp is found within 8 games");
    assert_eq!(
        f.kind,
        FindingKind::Check(fuzz::GenericCheck::MemoIsTransparent),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("differ from a listing from scratch"),
        "{}",
        f.message
    );
}

#[test]
fn parameters_anywhere_in_their_declared_ranges_keep_every_invariant() {
    holds("sirius-basic", 2, cases(24), true);
    holds("sirius-lifeboats", 2, cases(8), true);
    holds("space-war", 2, cases(6), true);
}

#[test]
fn the_broken_example_is_caught_and_shrunk_to_a_short_record() {
    let out = root().join("target/broken-repair-finding.record");
    let o = rulesmith(&[
        "fuzz",
        "variants/examples/broken-repair",
        "--games",
        "200",
        "--seed",
        "1",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1), "a finding exits 1");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("FINDING: invariant 'power_in_range'"), "{text}");
    assert!(
        text.contains("rulesmith replay variants/examples/broken-repair"),
        "{text}"
    );
    let record = std::fs::read_to_string(&out).unwrap();
    let lines = record
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count();
    assert!(lines <= 30, "shrunk to {lines} lines:\n{record}");
    // The record shows the break when replayed with --check.
    let r = rulesmith(&[
        "replay",
        "variants/examples/broken-repair",
        &out.to_string_lossy(),
        "--check",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("invariant 'power_in_range' does not hold"));
}

#[test]
fn a_script_error_during_play_is_a_finding_naming_file_and_line() {
    let g = Rc::new(
        rulesmith_rhai::interpreted(Variant::load(root().join("tests/fuzz-variants/script-error")).unwrap()).unwrap(),
    );
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let batch = fuzz::run_batch(&mut game_for, &Options::default(), &[], 7, 64);
    let (f, _) = batch.finding.expect("the failing script is found");
    assert_eq!(f.kind, FindingKind::Script);
    assert!(f.message.contains("repair.rhai:4"), "{}", f.message);
    assert!(f.message.contains("not written yet"), "{}", f.message);
}

#[test]
fn results_do_not_depend_on_the_number_of_jobs() {
    let run = |jobs: &str| {
        let o = rulesmith(&[
            "fuzz",
            "variants/sirius-lifeboats",
            "--games",
            "24",
            "--seed",
            "5",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let obj = v.as_object_mut().unwrap();
        obj.remove("seconds");
        obj.remove("decisions_per_second");
        v
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one["games"], 24);
    assert!(one["finding"].is_null());
    // Coverage says what was never reached: with two players, no one places.
    let never = &one["coverage"]["never"]["actions"];
    assert!(never.as_array().unwrap().iter().any(|a| a == "place"), "{never}");
}
