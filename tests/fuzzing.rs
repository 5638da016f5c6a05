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
        "--shrink-budget",
        "800",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(o.status.code(), Some(1), "a finding exits 1");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("FINDING: invariant 'power_in_range'"), "{text}");
    assert!(
        text.contains("found after"),
        "the time to the first break is reported: {text}"
    );
    assert!(
        text.contains("rulesmith replay variants/examples/broken-repair"),
        "{text}"
    );
    let record = std::fs::read_to_string(&out).unwrap();
    // The variant is written as it was given, not as an absolute path
    // (records travel between machines and checkouts).
    assert!(
        record.contains("# variant variants/examples/broken-repair, fuzz seed 1"),
        "{record}"
    );
    assert!(!record.contains(&*root().to_string_lossy()), "{record}");
    let lines = record
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count();
    // The hand-made shortest game is 12 lines; the aim is within 1.5 times.
    let shortest = entries(&root().join("variants/examples/broken-repair/handmade.record"));
    assert_eq!(shortest, 12);
    assert!(lines * 2 <= shortest * 3, "shrunk to {lines} lines:\n{record}");
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

/// A batch of `games` fuzzed games from `seed` of `tests/fuzz-variants/NAME`
/// on the interpreter, with a small shrink budget.
fn fuzz_test_variant(name: &str, seed: u64, games: u32) -> fuzz::Batch {
    let path = root().join("tests/fuzz-variants").join(name);
    let g = Rc::new(rulesmith_rhai::interpreted(Variant::load(path).unwrap()).unwrap());
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let opts = Options {
        shrink_budget: 300,
        ..Options::default()
    };
    fuzz::run_batch(&mut game_for, &opts, &[], seed, games)
}

#[test]
fn a_script_error_during_play_is_a_finding_naming_file_and_line() {
    let batch = fuzz_test_variant("script-error", 7, 64);
    let (f, _) = batch.finding.expect("the failing script is found");
    assert_eq!(f.kind, FindingKind::Script);
    assert!(f.message.contains("repair.rhai:4"), "{}", f.message);
    assert!(f.message.contains("not written yet"), "{}", f.message);
}

/// The texts of actions seen before are not checked again, but a list
/// holding one action twice is still found.
#[test]
fn an_action_listed_twice_is_a_finding_even_after_its_text_was_checked() {
    let batch = fuzz_test_variant("stay-twice", 3, 16);
    let (f, _) = batch.finding.expect("the doubled action is found");
    assert_eq!(
        f.kind,
        FindingKind::Check(fuzz::GenericCheck::UniqueTexts),
        "{}",
        f.message
    );
    assert_eq!(f.message, "'stay' is listed twice");
}

/// An invariant broken right after setup (a check without its final
/// `true` returns ()): a finding with no choice before it, which the
/// shrinker used to crash on (a random cut of an empty record).
#[test]
fn an_invariant_broken_right_after_setup_is_a_finding_with_an_empty_record() {
    let batch = fuzz_test_variant("no-final-true", 1, 8);
    let (f, _) = batch.finding.expect("the check without `true` is a break");
    assert_eq!(f.kind, FindingKind::Invariant("forgot_true".into()));
    assert_eq!(f.message, "the check returned (), not true or a message");
    assert_eq!((f.decisions, f.record.len()), (0, 0));
}

/// A legal function that writes to the state now and then: the finding
/// names that check, whichever check saw the state differ first.
#[test]
fn a_listing_that_writes_is_named_even_when_the_replay_sees_it_first() {
    let batch = fuzz_test_variant("listing-writes", 1, 8);
    let (f, _) = batch.finding.expect("the writing listing is found");
    assert_eq!(
        f.kind,
        FindingKind::Check(fuzz::GenericCheck::LegalIsPure),
        "{}",
        f.message
    );
    assert!(f.message.contains("step 'maneuver'"), "{}", f.message);
}

/// A secret round whose apply function takes the bid card out of the
/// bidder's hand at once: the second bidder's view shows the first bid.
/// The games are 10 decisions long, so a leak check every 64th decision
/// never saw a secret bid.
#[test]
fn a_bid_leaked_to_the_second_bidder_is_found() {
    let batch = fuzz_test_variant("leaky-bid", 1, 200);
    let (f, _) = batch.finding.expect("the leaked bid is found");
    assert_eq!(
        f.kind,
        FindingKind::Check(fuzz::GenericCheck::NoViewLeak),
        "{}",
        f.message
    );
    assert!(f.message.contains("P2's view changes"), "{}", f.message);
    assert_eq!(f.decisions, 1, "found at the second bidder's first decision");
}

#[test]
fn a_games_coverage_counts_each_decision_once_and_every_invariant_at_each_check() {
    use proptest::strategy::{Strategy, ValueTree};
    let g = game("sirius-basic");
    let opts = Options::default();
    let mut runner = common::runner(1);
    let tapes = proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 400);
    for _ in 0..3 {
        let tape = fuzz::Tape {
            decisions: tapes.new_tree(&mut runner).unwrap().current(),
            chance: Vec::new(),
        };
        let mut cov = fuzz::Coverage::default();
        let totals = fuzz::play_checked(&g, &opts, &tape, &mut cov).unwrap_or_else(|f| panic!("{}", f.message));
        assert!(totals.decisions > 0);
        assert_eq!(cov.steps.values().sum::<u64>(), totals.decisions, "decisions by step");
        assert_eq!(
            cov.actions.values().sum::<u64>(),
            totals.decisions,
            "decisions by action"
        );
        assert_eq!(cov.invariants.len(), g.variant().invariants.len());
        let checks = cov.invariants.values().next().copied().unwrap();
        assert!(cov.invariants.values().all(|n| *n == checks), "{:?}", cov.invariants);
        // Once set up, then after every decision and chance event.
        assert!(
            checks > totals.decisions,
            "{checks} checks, {} decisions",
            totals.decisions
        );
    }
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

/// Decision and chance lines of a record file.
fn entries(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.split('#').next().unwrap_or("").trim().is_empty())
        .count()
}

/// Fuzzes a broken example in-process (interpreted rules) and returns its
/// shrunk finding; small budgets keep a debug build quick.
fn shrunk_finding(example: &str, players: usize, seed: u64, games: u32, budget: usize) -> fuzz::Finding {
    let g = Rc::new(game(&format!("examples/{example}")));
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let opts = Options {
        players,
        shrink_budget: budget,
        ..Options::default()
    };
    let batch = fuzz::run_batch(&mut game_for, &opts, &[], seed, games);
    let (f, _) = batch
        .finding
        .unwrap_or_else(|| panic!("{example} ({players} players): no finding in {games} games"));
    let stats = batch.search.expect("a finding comes with how it was found");
    assert!(
        stats.found_lines >= f.record.len(),
        "shrinking never lengthens a record"
    );
    f
}

/// The shrunk record replays to the same break with `rulesmith replay --check`.
fn replays_to_the_break(example: &str, players: usize, f: &fuzz::Finding) {
    let path = std::env::temp_dir().join(format!("rulesmith-{example}-{players}-{}.record", std::process::id()));
    std::fs::write(&path, f.record.to_text(&[format!("players: {players}")])).unwrap();
    let o = rulesmith(&[
        "replay",
        &format!("variants/examples/{example}"),
        &path.to_string_lossy(),
        "--check",
    ]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let FindingKind::Invariant(name) = &f.kind else {
        panic!("expected an invariant break, got {}", f.kind)
    };
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("invariant '{name}' does not hold")),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_quiet_win_that_leaves_the_loser_in_play_is_shrunk_to_the_shortest_game() {
    let f = shrunk_finding("broken-quiet-win", 2, 1, 64, 400);
    assert_eq!(f.kind, FindingKind::Invariant("end_consistent".into()), "{}", f.message);
    // No game shows it in fewer lines: four priority dice, six quiet turns.
    let shortest = entries(&root().join("variants/examples/broken-quiet-win/handmade.record"));
    assert_eq!(f.record.len(), shortest, "{}", f.record.to_text(&[]));
    replays_to_the_break("broken-quiet-win", 2, &f);
}

/// With two players the gap needs a destroyed ship in column 0: found within
/// a few games by swarm play. A small shrink budget keeps this quick in a
/// debug build, so only the direction is checked here; how close shrinking
/// gets to the shortest game is measured by benches/fuzz_measure.py.
#[test]
fn a_grid_left_with_a_gap_is_found_and_shrunk_with_two_players() {
    let g = Rc::new(game("examples/broken-compact"));
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let opts = Options {
        players: 2,
        shrink_budget: 1500,
        ..Options::default()
    };
    let batch = fuzz::run_batch(&mut game_for, &opts, &[], 1, 64);
    let (f, _) = batch.finding.expect("the gap is found within 64 games");
    assert_eq!(f.kind, FindingKind::Invariant("compact_grid".into()), "{}", f.message);
    let stats = batch.search.expect("a finding comes with how it was found");
    assert!(
        f.record.len() < stats.found_lines,
        "shrunk from {} to {} lines",
        stats.found_lines,
        f.record.len()
    );
    replays_to_the_break("broken-compact", 2, &f);
}

/// A variant folder in the temporary directory that extends `base`.
fn scratch_variant(name: &str, base: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rulesmith-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("variant.toml"),
        format!(
            "[variant]\nname = \"{name}\"\nextends = \"{}\"\n",
            root().join(base).display().to_string().replace('\\', "/")
        ),
    )
    .unwrap();
    dir
}

/// `--save-case` keeps a finding as a regression case: `rulesmith test`
/// fails on it while the bug is there (naming the line where the invariant
/// breaks) and passes with the rules fixed.
#[test]
fn a_saved_finding_is_a_regression_case_that_fails_until_the_rules_are_fixed() {
    let broken = scratch_variant("broken-copy", "variants/examples/broken-repair");
    let o = rulesmith(&[
        "fuzz",
        &broken.to_string_lossy(),
        "--games",
        "64",
        "--seed",
        "1",
        "--shrink-budget",
        "300",
        "--out",
        &broken.join("finding.record").to_string_lossy(),
        "--save-case",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("saved as a regression case"), "{out}");
    let case = broken.join("tests/fuzz-power-in-range-seed1.record");
    let holds = std::fs::read_to_string(case.with_extension("holds")).unwrap();
    assert_eq!(holds.trim(), "power_in_range");

    let t = rulesmith(&["test", &broken.to_string_lossy()]);
    let text = String::from_utf8_lossy(&t.stdout);
    assert_eq!(t.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("invariant 'power_in_range' does not hold"), "{text}");
    assert!(text.contains("1 cases, 0 passed, 1 failed"), "{text}");

    // The same case against the fixed rules (sirius-basic) passes.
    let fixed = scratch_variant("fixed-copy", "variants/sirius-basic");
    std::fs::create_dir_all(fixed.join("tests")).unwrap();
    for ext in ["record", "holds"] {
        std::fs::copy(case.with_extension(ext), fixed.join("tests/case").with_extension(ext)).unwrap();
    }
    let t = rulesmith(&["test", &fixed.to_string_lossy()]);
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(t.status.success(), "{text}");
    assert!(text.contains("1 cases, 1 passed, 0 failed"), "{text}");
    // The move the bug allowed is refused by the fixed rules.
    assert!(text.contains("which the rules now refuse"), "{text}");
    let _ = std::fs::remove_dir_all(&broken);
    let _ = std::fs::remove_dir_all(&fixed);
}

/// The Sirius variants ship their scenario records as regression cases
/// (linked from tests/records by an include file), and they all pass.
#[test]
fn a_shipped_variant_passes_its_own_regression_cases() {
    let t = rulesmith(&["test", "variants/sirius-basic"]);
    let text = String::from_utf8_lossy(&t.stdout);
    assert!(t.status.success(), "{text}");
    let records = std::fs::read_dir(root().join("tests/records/sirius-basic"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "record"))
        .count();
    assert!(records > 0);
    assert!(
        text.contains(&format!("{records} cases, {records} passed, 0 failed")),
        "{text}"
    );
}

/// A case without an expectation, and a tests folder that is missing, are
/// clear errors naming the file.
#[test]
fn a_case_without_an_expectation_is_an_error_naming_it() {
    let v = scratch_variant("no-expectation", "variants/sirius-basic");
    let none = rulesmith(&["test", &v.to_string_lossy()]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no tests folder"));
    std::fs::create_dir_all(v.join("tests")).unwrap();
    std::fs::write(v.join("tests/lonely.record"), "chance 6\n").unwrap();
    let t = rulesmith(&["test", &v.to_string_lossy()]);
    let text = String::from_utf8_lossy(&t.stdout);
    assert_eq!(t.status.code(), Some(1), "{text}");
    assert!(
        text.contains("lonely.record") && text.contains("no expectation"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&v);
}
