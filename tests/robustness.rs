//! No input crashes the tool: mutated variants, decks, scripts and records
//! give errors, never panics. A proptest fuzz target over real files.
//! `RULESMITH_PROPTEST_CASES=N` runs more cases.

mod common;

use common::{cases, root, runner};
use proptest::prelude::*;
use rulesmith_core::{record, rng, Variant};
use rulesmith_lab::playout;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// One edit of a text.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Insert(usize, String),
    ReplaceChar(usize, char),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let token = prop_oneof![
        Just("=".to_string()),
        Just("[".to_string()),
        Just("]]".to_string()),
        Just("\"".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("-1".to_string()),
        Just("999999999999999999999".to_string()),
        Just("\n[params.x]\n".to_string()),
        Just("fn ".to_string()),
        Just("P9 ".to_string()),
        Just("chance 0".to_string()),
        Just("\u{0}".to_string()),
        Just("é".to_string()),
        "[ -~]{0,8}",
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), token).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<usize>(), any::<char>()).prop_map(|(a, c)| Mutation::ReplaceChar(a, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut s = text.to_string();
    for m in muts {
        let mut lines: Vec<String> = s.lines().map(String::from).collect();
        let n = lines.len().max(1);
        match m {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Mutation::Insert(at, t) => {
                let chars: Vec<char> = s.chars().collect();
                let at = at % (chars.len() + 1);
                let (head, tail): (String, String) = (chars[..at].iter().collect(), chars[at..].iter().collect());
                s = format!("{head}{t}{tail}");
                continue;
            }
            Mutation::ReplaceChar(at, c) => {
                let mut chars: Vec<char> = s.chars().collect();
                if !chars.is_empty() {
                    let at = at % chars.len();
                    chars[at] = *c;
                }
                s = chars.into_iter().collect();
                continue;
            }
            Mutation::Truncate(at) => {
                let chars: Vec<char> = s.chars().collect();
                s = chars[..at % (chars.len() + 1)].iter().collect();
                continue;
            }
            _ => {}
        }
        s = lines.join("\n") + "\n";
    }
    s
}

/// A scratch copy of the lifeboat variant (its files and the scripts) where
/// one file is replaced by `text`.
fn scratch(case: u64, which: &str, text: &str) -> PathBuf {
    let base = root().join("target/robustness").join(format!("case{}", case % 4));
    let _ = std::fs::remove_dir_all(&base);
    let variants = base.join("variants");
    for v in ["sirius-basic", "sirius-lifeboats"] {
        let dir = variants.join(v);
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(root().join("variants").join(v)).unwrap() {
            let p = f.unwrap().path();
            if p.is_file() {
                std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
            }
        }
    }
    let scripts = base.join("scripts/sirius");
    std::fs::create_dir_all(&scripts).unwrap();
    for f in std::fs::read_dir(root().join("scripts/sirius")).unwrap() {
        let p = f.unwrap().path();
        std::fs::copy(&p, scripts.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::write(base.join(which), text).unwrap();
    variants.join("sirius-lifeboats")
}

/// Loads, compiles and plays the variant at `dir`; errors are fine.
fn exercise(dir: &Path) {
    let Ok(v) = Variant::load(dir) else { return };
    let Ok(g) = rulesmith_rhai::interpreted(v) else { return };
    for seed in 0..2 {
        let mut r = rng::seeded(seed);
        if let Ok(mut s) = g.new_game(2) {
            let _ = playout::random_playout(&g, &mut s, &mut r, None, 300);
        }
    }
}

#[test]
fn mutated_variants_decks_and_scripts_never_panic() {
    let targets = [
        "variants/sirius-lifeboats/variant.toml",
        "variants/sirius-basic/variant.toml",
        "variants/sirius-lifeboats/deck.toml",
        "scripts/sirius/fire.rhai",
        "scripts/sirius/setup.rhai",
    ];
    let mut runner = runner(cases(40));
    let strategy = (
        0..targets.len(),
        proptest::collection::vec(mutation(), 1..4),
        any::<u64>(),
    );
    runner
        .run(&strategy, |(t, muts, case)| {
            let original = std::fs::read_to_string(root().join(targets[t])).unwrap();
            let text = apply(&original, &muts);
            let dir = scratch(case, targets[t], &text);
            let r = catch_unwind(AssertUnwindSafe(|| exercise(&dir)));
            prop_assert!(r.is_ok(), "{} with {muts:?} panicked", targets[t]);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_records_never_panic_and_errors_name_a_line() {
    let g = rulesmith_rhai::interpreted(Variant::load(root().join("variants/sirius-lifeboats")).unwrap()).unwrap();
    let base = "chance bronze\nchance violet\nchance 6\nchance 6\nchance 1\nchance 1\nP1 stay\nP1 lock starboard P2.port\nP1 done\nP2 sentry 1\nchance 3\nP1 fire 1 2\nchance 4\nchance 4\nP1 repair starboard\n";
    let mut runner = runner(cases(200));
    runner
        .run(&proptest::collection::vec(mutation(), 1..5), |muts| {
            let text = apply(base, &muts);
            let lines = text.lines().count().max(1);
            let r = catch_unwind(AssertUnwindSafe(|| {
                record::replay(&g, 2, &text, Path::new("mutated.record"))
            }));
            match r {
                Err(_) => prop_assert!(false, "replay panicked on {text:?}"),
                Ok(Err(e)) => prop_assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}: {e}", e.line),
                Ok(Ok(_)) => {}
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_command_never_exits_by_panic_on_bad_input() {
    let bad = root().join("target/robustness/bad.record");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    for text in [
        "\u{0}\u{1}",
        "P1",
        "chance",
        "P99999999999999999999 stay",
        "chance 99999999999999999999",
    ] {
        std::fs::write(&bad, text).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
            .args(["replay", "variants/sirius-basic"])
            .arg(&bad)
            .current_dir(root())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{text:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(["check", "target/robustness/no-such-variant"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}

/// `rulesmith ARGS` from the repository root, standard input closed.
fn run(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Every output path is checked before any work starts: a game, a run or a
/// report is never lost at the end for a folder that does not exist.
#[test]
fn output_paths_in_missing_folders_are_refused_before_any_work() {
    let example = "tests/records/sirius-basic/worked-example.record";
    let file = root().join("target/robustness/a-file");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "").unwrap();
    let file = file.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["play", "variants/sirius-basic", "--record", "no/such/dir/g.txt"],
            "--record",
        ),
        (
            vec![
                "--engine",
                "interpreted",
                "simulate",
                "variants/sirius-basic",
                "--rows",
                "no/such/dir/r.jsonl",
            ],
            "--rows",
        ),
        (
            vec![
                "--engine",
                "interpreted",
                "simulate",
                "variants/sirius-basic",
                "--report",
                "no/such/dir/r.html",
            ],
            "--report",
        ),
        (
            vec![
                "--engine",
                "interpreted",
                "simulate",
                "variants/sirius-basic",
                "--records",
                &file,
            ],
            "--records",
        ),
        (
            vec![
                "--engine",
                "interpreted",
                "compare",
                "variants/sirius-basic",
                "variants/sirius-basic",
                "--rows",
                "no/such/dir/r.jsonl",
            ],
            "--rows",
        ),
        (
            vec![
                "--engine",
                "interpreted",
                "fuzz",
                "variants/sirius-basic",
                "--out",
                "no/such/dir/f.record",
            ],
            "--out",
        ),
        (
            vec!["view", "variants/sirius-basic", example, "-o", "no/such/dir/v.html"],
            "--out",
        ),
        (
            vec!["merge", "no-such-part.json", "--report", "no/such/dir/r.html"],
            "--report",
        ),
        (
            vec![
                "compile",
                "variants/sirius-basic",
                "--no-build",
                "--emit",
                "no/such/dir/x.rs",
            ],
            "--emit",
        ),
    ];
    for (args, flag) in cases {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            o.stdout.is_empty(),
            "{args:?}: nothing was played: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// Arguments that once passed silently or read badly.
#[test]
fn bad_arguments_get_a_clear_refusal() {
    let refused = |args: &[&str], code: i32, says: &str| {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(&["compile", "variants/sirius-basic", "--verify", "0"], 2, "--verify");
    refused(
        &["compile", "variants/sirius-basic", "--verify", "5", "--no-build"],
        2,
        "cannot be used with",
    );
    refused(
        &[
            "--engine",
            "interpreted",
            "simulate",
            "variants/sirius-basic",
            "--bots",
            "mcts:0",
        ],
        2,
        "at least 1",
    );
    // A negative number is the option's own mistake, not a flag.
    refused(
        &["simulate", "variants/sirius-basic", "--seed", "-5"],
        2,
        "invalid value '-5'",
    );
    refused(
        &[
            "check",
            "variants/sirius-basic",
            "--set",
            "max_power=99999999999999999999",
        ],
        1,
        "too large for a whole number",
    );
}

/// `--jobs` far above the work starts no more threads than games, and a
/// run whose output is not a terminal says what it is doing.
#[test]
fn runaway_jobs_are_capped_at_the_games() {
    let o = run(&[
        "--engine",
        "interpreted",
        "simulate",
        "variants/sirius-basic",
        "--games",
        "3",
        "--jobs",
        "100000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["games"], 3);
}
