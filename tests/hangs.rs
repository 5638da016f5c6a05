//! No hangs, no silent passes: a rule set whose games never end, an
//! evaluate that fails, zero games or threads, a failing game's record and
//! a finding that cannot be written are all reported, never passed over.

mod common;

use common::rulesmith;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const ENDLESS: &str = "tests/sandbox/endless";
const BAD_EVALUATE: &str = "tests/sandbox/bad-evaluate";

/// A fresh, empty folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rulesmith-hangs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// Runs a command that must fail with exit 1 within a minute; returns its
/// standard output and error.
fn fails(args: &[&str]) -> (String, String) {
    let start = Instant::now();
    let out = rulesmith(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{args:?} took {:?}",
        start.elapsed()
    );
    (stdout, stderr)
}

/// The one `.record` file in `dir`.
fn the_record(dir: &std::path::Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "record"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// The record replays (the game so far is legal) and holds `decisions`
/// decision lines.
fn replays_with(record: &std::path::Path, variant: &str, decisions: usize) {
    let body = std::fs::read_to_string(record).unwrap();
    let lines = body.lines().filter(|l| l.starts_with('P')).count();
    assert_eq!(lines, decisions, "{body:.300}");
    let out = rulesmith(&["replay", variant, record.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ongoing"), "{}", text(&out.stdout));
}

#[test]
fn check_catches_a_game_that_never_ends_with_the_default_bound() {
    let dir = scratch("check-endless");
    let (_, err) = fails(&["check", ENDLESS, "--failures", dir.to_str().unwrap()]);
    assert!(err.contains("did not end within 20000 decisions"), "{err}");
    let record = the_record(&dir);
    assert!(
        err.contains(&format!("replay it: rulesmith replay {ENDLESS} {}", record.display())),
        "{err}"
    );
    replays_with(&record, ENDLESS, 20_000);
}

#[test]
fn simulate_and_compare_stop_a_game_that_never_ends() {
    let dir = scratch("simulate-endless");
    let d = dir.to_str().unwrap();
    let (_, err) = fails(&[
        "simulate",
        ENDLESS,
        "--games",
        "3",
        "--max-decisions",
        "500",
        "--failures",
        d,
    ]);
    assert!(
        err.contains("game 1 (seed") && err.contains("did not end within 500 decisions"),
        "{err}"
    );
    replays_with(&the_record(&dir), ENDLESS, 500);

    let dir = scratch("compare-endless");
    let d = dir.to_str().unwrap();
    let (_, err) = fails(&[
        "compare",
        ENDLESS,
        ENDLESS,
        "--games",
        "2",
        "--max-decisions",
        "300",
        "--failures",
        d,
    ]);
    assert!(err.contains("did not end within 300 decisions"), "{err}");
    replays_with(&the_record(&dir), ENDLESS, 300);
}

#[test]
fn profile_and_fuzz_stop_a_game_that_never_ends() {
    let dir = scratch("profile-endless");
    let d = dir.to_str().unwrap();
    let (_, err) = fails(&[
        "profile",
        ENDLESS,
        "--games",
        "2",
        "--max-decisions",
        "400",
        "--failures",
        d,
    ]);
    assert!(err.contains("did not end within 400 decisions"), "{err}");
    replays_with(&the_record(&dir), ENDLESS, 400);

    let dir = scratch("fuzz-endless");
    let out = dir.join("endless.record");
    let (stdout, _) = fails(&[
        "fuzz",
        ENDLESS,
        "--games",
        "8",
        "--max-decisions",
        "300",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.contains("FINDING: game without end"), "{stdout}");
    assert!(out.exists());
}

#[test]
fn a_failing_evaluate_stops_the_bots_and_check_naming_file_and_line() {
    for bots in ["greedy", "mcts:20"] {
        let dir = scratch(&format!("evaluate-{}", bots.replace(':', "")));
        let (_, err) = fails(&[
            "simulate",
            BAD_EVALUATE,
            "--games",
            "20",
            "--bots",
            bots,
            "--failures",
            dir.to_str().unwrap(),
        ]);
        assert!(err.contains("game 1 (seed"), "{err}");
        assert!(err.contains("rules.rhai") && err.contains(":18"), "{err}");
    }
    let dir = scratch("check-evaluate");
    let (_, err) = fails(&["check", BAD_EVALUATE, "--failures", dir.to_str().unwrap()]);
    assert!(err.contains("rules.rhai") && err.contains(":18"), "{err}");
}

#[test]
fn zero_games_or_threads_are_usage_errors() {
    let floor = "benches/floor";
    let cases: &[&[&str]] = &[
        &["simulate", floor, "--games", "0"],
        &["simulate", floor, "--jobs", "0"],
        &["compare", floor, floor, "--games", "0"],
        &["compare", floor, floor, "--jobs", "0"],
        &["fuzz", floor, "--games", "0"],
        &["fuzz", floor, "--jobs", "0"],
        &["fuzz", floor, "--max-decisions", "0"],
        &["profile", floor, "--games", "0"],
        &["simulate", floor, "--max-decisions", "0"],
        &["check", floor, "--max-decisions", "0"],
    ];
    for args in cases {
        let out = rulesmith(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn check_writes_the_whole_failing_game_and_it_replays_to_the_same_error() {
    let dir = scratch("check-script-error");
    let variant = "tests/fuzz-variants/script-error";
    let (_, err) = fails(&["check", variant, "--failures", dir.to_str().unwrap()]);
    let record = the_record(&dir);
    let cause = err
        .lines()
        .next()
        .unwrap()
        .split(" fails: ")
        .nth(1)
        .unwrap()
        .to_string();
    assert!(cause.contains("repair.rhai"), "{err}");
    assert!(
        err.contains(&format!("rulesmith replay {variant} {}", record.display())),
        "{err}"
    );
    let out = rulesmith(&["replay", variant, record.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let replayed = text(&out.stderr);
    assert!(
        replayed.contains("repairs at power 3 are not written yet"),
        "{replayed}"
    );
    assert!(cause.contains("repairs at power 3 are not written yet"), "{cause}");
}

#[test]
fn a_finding_that_cannot_be_written_is_refused_before_fuzzing() {
    // The output path is checked before any game is played (issue 34:
    // a path found wrong at the end used to cost the whole run).
    let out = rulesmith(&[
        "fuzz",
        "tests/fuzz-variants/script-error",
        "--games",
        "16",
        "--shrink-budget",
        "500",
        "--out",
        "/nonexistent-folder/finding.record",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--out /nonexistent-folder/finding.record: the folder /nonexistent-folder does not exist"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("FINDING"), "no game was played");
}

#[test]
fn simulate_echoes_the_parameters_in_force() {
    let out = rulesmith(&["simulate", "benches/floor", "--games", "2", "--set", "max_turns=7"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("parameters: --set max_turns=7"),
        "{}",
        text(&out.stdout)
    );
    let out = rulesmith(&["simulate", "benches/floor", "--games", "2"]);
    assert!(
        text(&out.stdout).contains("parameters: the variant's own"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn the_report_has_a_win_rate_table_per_lifeboat_card() {
    let dir = scratch("report");
    let report = dir.join("report.html");
    let out = rulesmith(&[
        "simulate",
        "variants/sirius-lifeboats",
        "--games",
        "12",
        "--bots",
        "greedy,random",
        "--rotate",
        "--set",
        "max_turns=40",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("parameters: --set max_turns=40"), "header echoes --set");
    assert!(html.contains("<table class=\"cards\">"), "card table");
    assert!(html.contains("<th>win rate</th><th>95% interval</th>"));
    assert!(html.contains("<td>emerald</td>") || html.contains("<td>gold</td>"));
    assert!(html.contains("class=\"yaxis\""), "histograms have a y axis");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("winner's lifeboat"), "{stdout}");
}

/// A designer function deep in a chain of calls loops or recurses without
/// end: both engines name it, its file and line, and the same calls, in
/// setup, in a legal function, in an action and in a bot's evaluate.
#[test]
fn both_engines_name_a_runaway_function_and_the_calls_that_led_to_it() {
    const RUNAWAY: &str = "tests/sandbox/runaway";
    let dir = scratch("runaway");
    let d = dir.to_str().unwrap();
    // (fault, the function and its place, the entry point and its call)
    let faults = [(1, "count_up", "helpers.rhai:12:"), (2, "deeper", "helpers.rhai:15:1")];
    let stages = [
        (0, "setup (tests/sandbox/runaway/rules.rhai:6:9)"),
        (1, "do_pass (tests/sandbox/runaway/rules.rhai:19:9)"),
        (2, "play_legal (tests/sandbox/runaway/rules.rhai:12:9)"),
        (3, "evaluate (tests/sandbox/runaway/rules.rhai:26:9)"),
    ];
    for (fault, function, place) in faults {
        for (stage, entry) in stages {
            let (fault_set, stage_set) = (format!("fault={fault}"), format!("stage={stage}"));
            let run = |engine: &str| {
                let args = [
                    "simulate",
                    RUNAWAY,
                    "--games",
                    "1",
                    "--bots",
                    "greedy",
                    "--set",
                    &fault_set,
                    "--set",
                    &stage_set,
                    "--engine",
                    engine,
                    "--failures",
                    d,
                ];
                let (_, err) = fails(&args);
                // The message and its backtrace, without the notices and
                // the lines about the record.
                let at = err.find("script error in").unwrap_or_else(|| panic!("{engine}: {err}"));
                let lines: Vec<String> = err[at..]
                    .lines()
                    .take_while(|l| !l.starts_with("the game's record"))
                    .map(str::to_string)
                    .collect();
                lines
            };
            let (interpreted, compiled) = (run("interpreted"), run("compiled"));
            for lines in [&interpreted, &compiled] {
                let head = format!("script error in {function}() at tests/sandbox/runaway/{place}");
                assert!(lines[0].starts_with(&head), "{lines:#?}");
                assert!(
                    lines[1].starts_with(&format!("  at {function} (tests/sandbox/runaway/{place}")),
                    "{lines:#?}"
                );
                assert_eq!(lines.last().unwrap(), &format!("  at {entry}"), "{lines:#?}");
                let tidy = format!("  at tidy_up (tests/sandbox/runaway/helpers.rhai:{}:21)", 4 + fault);
                assert_eq!(lines[lines.len() - 2], tidy, "{lines:#?}");
            }
            // The same calls; only where in a loop each engine stops may
            // differ (the loop itself, or the variable the interpreter read).
            assert_eq!(interpreted[2..], compiled[2..], "fault {fault} stage {stage}");
        }
    }
}
