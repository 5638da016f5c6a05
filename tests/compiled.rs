//! The compiled engine against the interpreter, its oracle.
//!
//! `rulesmith compile VARIANT --verify N` builds the variant's rules into
//! the compiled binary (the first build also builds the engine, in release
//! mode: minutes; each later one seconds) and plays N random games per
//! player count on both engines in lockstep, comparing every legal list,
//! every seat's summary and render, invariants, evaluations, counters,
//! labels and the records; `--records DIR` also replays every scenario
//! record on both and compares the states reached and the legal lists.

mod common;

use common::{root, rulesmith};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every shipped variant: random games at every player count, and the
/// scenario records where the variant has them.
#[test]
fn every_shipped_variant_plays_identically_compiled() {
    let cases = [
        ("sirius-basic", "150"),
        ("sirius-lifeboats", "100"),
        ("sirius-multiplayer", "30"),
        ("sirius-advanced", "15"),
        ("sirius-custom-cards", "100"),
        ("examples/broken-repair", "60"),
        ("battlefield-space", "20"),
        ("space-war", "16"),
        ("battleship-galaxies", "12"),
    ];
    for (variant, games) in cases {
        let path = format!("variants/{variant}");
        let records = format!("tests/records/{variant}");
        let mut args = vec!["compile", path.as_str(), "--verify", games];
        if root().join(&records).is_dir() {
            args.extend(["--records", records.as_str()]);
        }
        let o = rulesmith(&args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{variant}: {out}\n{}", stderr(&o));
        assert!(out.contains(": identical"), "{variant}: {out}");
        if root().join(&records).is_dir() {
            assert!(out.contains("records replayed identically"), "{variant}: {out}");
        }
    }
}

/// The parts of Space War the shipped random games above do not reach: the
/// hex board (the same compiled rules, other parameters: no rebuild), and
/// the turn memo (`recall`/`remember`) in a variant that lists its orders
/// through it.
#[test]
fn space_war_on_the_hex_board_and_with_the_memo_plays_identically_compiled() {
    plays_identically(&["compile", "variants/space-war", "--verify", "6", "--set", "hex=true"]);
    plays_identically(&["compile", "tests/fuzz-variants/space-war-memo", "--verify", "8"]);
}

/// The OpenSpiel ports (`tests/openspiel`) the other tests do not cover:
/// scores (`set_score`, `[scores]`) in Kuhn poker, Breakthrough's
/// notation (declared ranges, a range relative to another slot, touching
/// slots: the engine's, so compiled rules list and write the same
/// actions), Liar's dice's secret rolls (a continuation whose parameter is
/// dynamic, `this.dice[0] = faces` into an array of arrays: the dispatch
/// converts the faces to a `Value`, where it once failed to build) and
/// Oshi-Zumo's secret round of bids.
#[test]
fn the_openspiel_ports_play_identically_compiled() {
    for (port, games) in [
        ("kuhn-poker", "30"),
        ("breakthrough", "10"),
        ("liars-dice", "30"),
        ("oshi-zumo", "10"),
    ] {
        plays_identically(&["compile", &format!("tests/openspiel/{port}"), "--verify", games]);
    }
}

/// The card-game structure on both engines: piles (moved, drawn into,
/// refilled, shown by visibility), a deal round the table into hands, turns
/// the rules hand to a seat (`end_turn_to`), and a card schema shared.
#[test]
fn the_card_game_test_variants_play_identically_compiled() {
    plays_identically(&["compile", "tests/bots/oh-hell", "--verify", "6", "--set", "hands=2"]);
    plays_identically(&["compile", "tests/bots/deck-builder", "--verify", "8"]);
}

/// Runs `rulesmith compile ... --verify`, which must succeed and find both
/// engines identical.
fn plays_identically(args: &[&str]) {
    let o = rulesmith(args);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {out}\n{}", stderr(&o));
    assert!(out.contains(": identical"), "{args:?}: {out}");
}

/// Simulation results do not depend on the engine: the same seed gives the
/// same JSON, bots and counters included.
#[test]
fn simulate_gives_the_same_results_on_both_engines() {
    let run = |engine: &str| {
        let o = rulesmith(&[
            "simulate",
            "variants/sirius-lifeboats",
            "--games",
            "40",
            "--bots",
            "greedy,random",
            "--seed",
            "9",
            "--json",
            "--engine",
            engine,
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        let mut v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        // The run's time is the one thing that differs.
        v.as_object_mut().unwrap().remove("seconds");
        v
    };
    let (a, b) = (run("interpreted"), run("compiled"));
    assert_eq!(a["summary"]["games"], 40, "{a}");
    assert_eq!(a, b);
}

/// The fuzzer finds the broken example with compiled rules too.
#[test]
fn fuzz_finds_the_broken_repair_with_compiled_rules() {
    let o = rulesmith(&[
        "fuzz",
        "variants/examples/broken-repair",
        "--engine",
        "compiled",
        "--seed",
        "3",
        "--out",
        std::env::temp_dir()
            .join(format!("rulesmith-compiled-fuzz-{}.record", std::process::id()))
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}\n{}", stdout(&o), stderr(&o));
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(text.contains("power_in_range"), "{text}");
}

/// A script that fails in compiled code is reported at the script's own
/// file, function and line, as the interpreter reports it.
#[test]
fn a_failing_compiled_script_names_its_file_function_and_line() {
    // The failing game's record goes to a scratch folder, not the repository.
    let failures = std::env::temp_dir().join(format!("rulesmith-compiled-failures-{}", std::process::id()));
    let o = rulesmith(&[
        "simulate",
        "tests/sandbox/bad-evaluate",
        "--bots",
        "greedy",
        "--games",
        "2",
        "--engine",
        "compiled",
        "--failures",
        failures.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("rules.rhai:18"), "{e}");
    assert!(e.contains("evaluate"), "{e}");
    assert!(e.contains("Division by zero"), "{e}");
}

/// The sandbox's size limits hold in compiled code: a card script that
/// doubles a string forever stops at the limit, with the interpreter's
/// message and backtrace, instead of exhausting memory.
#[test]
fn compiled_rules_stop_a_string_at_the_size_limit() {
    let o = rulesmith(&[
        "replay",
        "tests/sandbox/bigstring",
        "tests/sandbox/bigstring/lock-on-bronze.record",
        "--engine",
        "compiled",
    ]);
    let e = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("a string grew past the limit of 65536 bytes"), "{e}");
    assert!(
        e.contains("at widen (tests/sandbox/bigstring/cards/hostile.rhai:9:"),
        "{e}"
    );
    assert!(e.contains("at on_locked"), "{e}");
}

/// Runs rulesmith with its own `PATH` (which cargo it finds) and build cache.
fn with_path_and_cache(args: &[&str], path: &std::ffi::OsStr, cache: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(args)
        .current_dir(root())
        .env("PATH", path)
        .env("RULESMITH_CACHE", cache)
        .output()
        .expect("runs")
}

/// Without a Rust toolchain the commands that prefer compiled rules say so
/// in one line and run the interpreter; asking for compiled rules is an error.
#[test]
fn without_a_toolchain_the_interpreter_runs_with_a_notice() {
    let empty = std::env::temp_dir().join(format!("rulesmith-no-cargo-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let run = |args: &[&str]| with_path_and_cache(args, empty.as_os_str(), &empty.join("cache"));
    let o = run(&["simulate", "variants/sirius-basic", "--games", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("no Rust toolchain") && e.contains("interpreted"), "{e}");
    assert_eq!(e.lines().filter(|l| l.contains("toolchain")).count(), 1, "{e}");
    let o = run(&[
        "simulate",
        "variants/sirius-basic",
        "--games",
        "3",
        "--engine",
        "compiled",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--engine compiled: no Rust toolchain"),
        "{}",
        stderr(&o)
    );
}

/// Generated Rust that does not build (a compiler bug) must not stop a
/// designer: the commands that prefer compiled rules say so in one line and
/// play on the interpreter, and the failure is remembered (no second
/// build); asking for compiled rules is an error naming cargo's log.
#[cfg(unix)]
#[test]
fn compiled_rules_that_do_not_build_fall_back_to_the_interpreter() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("rulesmith-bad-cargo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A cargo that runs, but fails every build, counting its builds.
    let cargo = dir.join("cargo");
    let builds = dir.join("builds");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'cargo 1.0'; exit 0; fi\n\
             echo build >> '{}'\necho 'error[E0308]: mismatched types' >&2\nexit 101\n",
            builds.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |args: &[&str]| with_path_and_cache(args, path.as_ref(), &dir.join("cache"));
    let builds_so_far = || std::fs::read_to_string(&builds).map(|t| t.lines().count()).unwrap_or(0);
    for _ in 0..2 {
        let o = run(&["simulate", "variants/sirius-basic", "--games", "3"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("3 games"), "{}", stdout(&o));
        let e = stderr(&o);
        assert!(
            e.contains("build.log") && e.contains("running interpreted rules"),
            "{e}"
        );
    }
    assert_eq!(builds_so_far(), 1, "a failed build is not tried again");
    let o = run(&[
        "simulate",
        "variants/sirius-basic",
        "--games",
        "3",
        "--engine",
        "compiled",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("build.log"), "{}", stderr(&o));
}

/// `--explain` lists what stays dynamic, with the place and the reason.
#[test]
fn explain_lists_the_dynamic_values_and_why() {
    let o = rulesmith(&["compile", "variants/sirius-custom-cards", "--explain", "--no-build"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("functions translated"), "{out}");
    // die_against's hook returns a card's number or (): an option, kept
    // dynamic; the function's result is typed by its `type_of` test.
    assert!(out.contains("fire.rhai"), "{out}");
    assert!(out.contains("die_against: variable 'v' is dynamic"), "{out}");
    assert!(!out.contains("die_against: the return value is dynamic"), "{out}");
}

/// A script that mixes kinds of values on purpose (loops over dynamic
/// arrays, typed values pushed into them, sorted, compared, natives' results
/// in dynamic places): the generated Rust must build and agree with the
/// interpreter at every step.
#[test]
fn dynamic_values_everywhere_build_and_play_identically() {
    plays_identically(&["compile", "tests/fuzz-variants/mixed-kinds", "--verify", "10"]);
}

/// Arrays the compiler keeps fixed-size (`[T; N]`) next to vectors, each
/// operation checked against the vector form by an invariant: the compiled
/// rules must agree with the interpreter at every step.
#[test]
fn fixed_size_arrays_play_identically() {
    plays_identically(&["compile", "tests/fuzz-variants/fixed-arrays", "--verify", "10"]);
}

/// The compiler's corpus (`tests/compiler-corpus/loose`): loosely written
/// scripts (anonymous functions, names held in variables, `??`, negative
/// indices, computed keys, values that change type, mixed arrays,
/// recursion, bit operations, string building) play the same games on both
/// engines, step by step, at every player count; its render prints what
/// each construct computed.
#[test]
fn the_compiler_corpus_plays_identically() {
    plays_identically(&["compile", "tests/compiler-corpus/loose", "--verify", "25"]);
}

/// A script that throws fails the same way compiled: the thrown text, at
/// the `throw`.
#[test]
fn a_thrown_failure_plays_identically() {
    plays_identically(&["compile", "tests/fuzz-variants/script-error", "--verify", "20"]);
}

/// What the compiler refuses, `check` refuses too: the file, the line, the
/// construct and why (the same table docs/compiler.md lists).
#[test]
fn check_and_compile_refuse_a_switch_at_its_line() {
    for args in [
        &["check", "tests/compiler-corpus/refused-switch-char"][..],
        &["compile", "tests/compiler-corpus/refused-switch-char", "--no-build"][..],
    ] {
        let o = rulesmith(args);
        let text = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains("rules.rhai:18:"), "{args:?}: {text}");
        assert!(
            text.contains("does not translate switch") && text.contains("if / else"),
            "{args:?}: {text}"
        );
    }
}

/// `profile` measures compiled rules too, and says which engine it ran.
#[test]
fn profile_runs_compiled_rules_and_says_so() {
    // No llvm-profdata is needed for the hint: Rulesmith merges the
    // profiles of this rustc itself.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args([
            "profile",
            "variants/sirius-basic",
            "--games",
            "50",
            "--engine",
            "compiled",
        ])
        .current_dir(root())
        .env("RULESMITH_LLVM_PROFDATA", "/no/such/llvm-profdata")
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("compiled rules"), "{out}");
    assert!(out.contains("decisions/s"), "{out}");
    // A plain build points to the faster one (unless this cache holds a
    // profile-guided build already, which says so instead).
    let guided = out.contains("compiled, profile-guided rules");
    assert!(
        guided || out.contains("faster: rulesmith compile variants/sirius-basic --pgo)"),
        "{out}"
    );
    // Call counts come from the compiled functions themselves: the most
    // called function of a Sirius game is a helper of the fire step.
    assert!(out.contains("weapon_cost"), "{out}");
}
