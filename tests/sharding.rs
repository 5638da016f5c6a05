//! Runs bigger than one process: `--shard i/n` + `rulesmith merge` print
//! the unsharded run's JSON byte for byte; `--rows` writes one row per
//! game; `compare --sprt` stops when the difference is decided.
//!
//! The long runs use compiled rules (built once, shared with
//! tests/compiled.rs): sharding does not depend on the engine, and the
//! interpreter in a debug build made this the slowest test binary.

mod common;

use common::{root, rulesmith};
use std::path::PathBuf;

fn ok(args: &[&str]) -> String {
    let o = rulesmith(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = root().join("target").join("sharding-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rows `--rows` wrote, one JSON object per game.
fn read_rows(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Runs `args` as shards 1..=n into files, merges them (in reverse order:
/// the order does not matter), and returns the merged output.
fn sharded(dir: &std::path::Path, args: &[&str], n: u64) -> String {
    let mut files = Vec::new();
    for i in 1..=n {
        let shard = format!("{i}/{n}");
        let mut a = args.to_vec();
        a.extend(["--shard", &shard]);
        let f = dir.join(format!("part-{i}-of-{n}.json"));
        std::fs::write(&f, ok(&a)).unwrap();
        files.push(f.display().to_string());
    }
    files.reverse();
    let mut m = vec!["merge", "--json"];
    m.extend(files.iter().map(String::as_str));
    ok(&m)
}

#[test]
fn merged_shards_print_the_unsharded_json_byte_for_byte() {
    let dir = scratch("simulate");
    let sim = [
        "--engine",
        "compiled",
        "simulate",
        "variants/sirius-lifeboats",
        "--games",
        "9",
        "--bots",
        "random,greedy",
        "--rotate",
        "--seed",
        "4",
    ];
    let whole = ok(&[&sim[..], &["--json"]].concat());
    for n in [1, 2, 7] {
        assert_eq!(sharded(&dir, &sim, n), whole, "simulate in {n} shards");
    }
    let cmp = [
        "--engine",
        "compiled",
        "compare",
        "variants/sirius-basic",
        "variants/sirius-basic",
        "--set-b",
        "start_power=3",
        "--games",
        "15",
        "--seed",
        "2",
    ];
    let whole = ok(&[&cmp[..], &["--json"]].concat());
    for n in [1, 2, 7] {
        assert_eq!(sharded(&dir, &cmp, n), whole, "compare in {n} shards");
    }
}

#[test]
fn merge_refuses_incomplete_or_mixed_shards() {
    let dir = scratch("refuse");
    let part = |args: &[&str], name: &str| {
        let f = dir.join(name);
        std::fs::write(&f, ok(args)).unwrap();
        f.display().to_string()
    };
    let base = [
        "--engine",
        "interpreted",
        "simulate",
        "variants/sirius-basic",
        "--games",
        "6",
    ];
    let one = part(&[&base[..], &["--shard", "1/2"]].concat(), "one.json");
    let two = part(&[&base[..], &["--shard", "2/2"]].concat(), "two.json");
    let other = part(&[&base[..], &["--shard", "2/2", "--seed", "9"]].concat(), "other.json");
    let fails = |files: &[&str], expect: &str| {
        let mut a = vec!["merge"];
        a.extend(files);
        let o = rulesmith(&a);
        assert_eq!(o.status.code(), Some(1), "{files:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expect), "{err}");
    };
    fails(&[&one], "shard 2/2 is missing");
    fails(&[&one, &one, &two], "given twice");
    fails(&[&one, &other], "another run");
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"simulate_shard\": 3}").unwrap();
    fails(&[&junk.display().to_string()], "junk.json:1:");
    for bad in ["0/3", "4/3", "1/0", "two"] {
        let o = rulesmith(&[&base[..], &["--shard", bad]].concat());
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
    }
}

#[test]
fn rows_hold_one_line_per_game_that_adds_up_to_the_summary() {
    let dir = scratch("rows");
    let rows = dir.join("rows.jsonl");
    let out = ok(&[
        "--engine",
        "interpreted",
        "simulate",
        "variants/sirius-lifeboats",
        "--games",
        "12",
        "--set",
        "max_power=5",
        "--rows",
        &rows.display().to_string(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lines = read_rows(&rows);
    assert_eq!(lines.len(), 12);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["game"], i as u64 + 1);
        assert_eq!(l["params"]["max_power"], 5);
        assert_eq!(l["side"], serde_json::Value::Null);
    }
    for seat in v["summary"]["seats"].as_array().unwrap() {
        let won = lines.iter().filter(|l| l["winner"] == seat["seat"]).count() as u64;
        assert_eq!(won, seat["wins"]["count"].as_u64().unwrap());
    }
    // The first-player figure counts decided games only, as the rows do.
    let decided: Vec<_> = lines
        .iter()
        .filter(|l| !l["winner"].is_null() && !l["first"].is_null())
        .collect();
    let first_won = decided.iter().filter(|l| l["winner"] == l["first"]).count() as u64;
    let first = &v["summary"]["first_player"];
    assert!(
        decided.len() < lines.len(),
        "the sample needs a draw to tell the figures apart"
    );
    assert_eq!(first["of"].as_u64().unwrap(), decided.len() as u64);
    assert_eq!(first["count"].as_u64().unwrap(), first_won);
    let turns: u64 = lines.iter().map(|l| l["turns"].as_u64().unwrap()).sum();
    assert_eq!(turns as f64 / 12.0, v["summary"]["turns"]["mean"].as_f64().unwrap());
    for c in v["summary"]["counters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let total: i64 = lines.iter().map(|l| l["counters"][name].as_i64().unwrap()).sum();
        assert_eq!(total, c["total"].as_i64().unwrap(), "{name}");
    }
    let bad = rulesmith(&[
        "--engine",
        "interpreted",
        "simulate",
        "variants/sirius-basic",
        "--rows",
        "rows.csv",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".parquet"));
}

#[test]
fn a_sequential_comparison_stops_once_decided() {
    let run = |set_b: &str| -> serde_json::Value {
        let out = ok(&[
            "--engine",
            "compiled",
            "compare",
            "variants/sirius-basic",
            "variants/sirius-basic",
            "--set-b",
            set_b,
            "--games",
            "400",
            "--sprt",
            "turns",
            "--sprt-delta",
            "2",
            "--json",
        ]);
        serde_json::from_str(&out).unwrap()
    };
    // Much weaker ships: far shorter games, decided early.
    let weak = run("start_power=2");
    assert_eq!(weak["sprt"]["decision"], "B lower", "{}", weak["sprt"]);
    let games = weak["games"].as_u64().unwrap();
    assert!((30..400).contains(&games), "{games}");
    assert_eq!(
        weak["a"]["summary"]["games"].as_u64(),
        Some(games),
        "figures over the games played"
    );
    // No change at all: decided as no difference.
    let same = run("start_power=6");
    assert_eq!(same["sprt"]["decision"], "no difference", "{}", same["sprt"]);
    let o = rulesmith(&[
        "--engine",
        "interpreted",
        "compare",
        "variants/sirius-basic",
        "variants/sirius-basic",
        "--sprt",
        "nonsense",
        "--sprt-delta",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected one of P1, P2"));
}

#[test]
fn rows_carry_each_seats_score_where_the_variant_declares_scores() {
    let dir = scratch("rows-scores");
    let rows = dir.join("rows.jsonl");
    let out = ok(&[
        "--engine",
        "interpreted",
        "simulate",
        "tests/openspiel/kuhn-poker",
        "--games",
        "40",
        "--rows",
        &rows.display().to_string(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lines = read_rows(&rows);
    assert_eq!(lines.len(), 40);
    let scores: Vec<Vec<i64>> = lines
        .iter()
        .map(|l| {
            l["scores"]
                .as_array()
                .unwrap_or_else(|| panic!("no scores in {l}"))
                .iter()
                .map(|s| s.as_i64().unwrap())
                .collect()
        })
        .collect();
    for s in &scores {
        assert_eq!(s.len(), 2);
        assert_eq!(s[0] + s[1], 0, "Kuhn poker is zero-sum: {s:?}");
    }
    assert!(scores.iter().any(|s| s[0] != 0), "chips changed hands");
    // The rows add up to the summary's mean score per seat.
    for (seat, stats) in v["summary"]["scores"].as_array().unwrap().iter().enumerate() {
        let total: i64 = scores.iter().map(|s| s[seat]).sum();
        let mean = stats["mean"].as_f64().unwrap();
        assert!(
            (total as f64 / 40.0 - mean).abs() < 1e-9,
            "seat {seat}: {total} vs {mean}"
        );
    }
    // Without [scores], the column is null.
    let plain = dir.join("plain.jsonl");
    ok(&[
        "--engine",
        "interpreted",
        "simulate",
        "tests/openspiel/tic-tac-toe",
        "--games",
        "3",
        "--rows",
        &plain.display().to_string(),
    ]);
    for l in std::fs::read_to_string(&plain).unwrap().lines() {
        let l: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(l["scores"].is_null(), "{l}");
    }
}

#[test]
fn the_decision_cap_defaults_to_the_variants_declared_longest_game() {
    // Tic-tac-toe declaring 4 decisions at most: no game can end in 4, so
    // simulate (and fuzz) call every game endless unless told otherwise.
    let dir = scratch("declared-cap");
    let variant = dir.join("short-ttt");
    std::fs::create_dir_all(&variant).unwrap();
    let source = root().join("tests/openspiel/tic-tac-toe");
    let toml = std::fs::read_to_string(source.join("variant.toml")).unwrap();
    assert!(toml.contains("max_decisions = 9"));
    std::fs::write(
        variant.join("variant.toml"),
        toml.replace("max_decisions = 9", "max_decisions = 4"),
    )
    .unwrap();
    std::fs::copy(source.join("rules.rhai"), variant.join("rules.rhai")).unwrap();
    let v = variant.display().to_string();
    let d = dir.display().to_string();
    let capped = rulesmith(&[
        "--engine",
        "interpreted",
        "simulate",
        &v,
        "--games",
        "2",
        "--failures",
        &d,
    ]);
    assert_eq!(
        capped.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&capped.stdout)
    );
    let err = String::from_utf8_lossy(&capped.stderr);
    assert!(err.contains("4 decisions"), "{err}");
    // The flag still wins.
    ok(&[
        "--engine",
        "interpreted",
        "simulate",
        &v,
        "--games",
        "2",
        "--max-decisions",
        "9",
    ]);
    let fuzzed = rulesmith(&[
        "--engine",
        "interpreted",
        "fuzz",
        &v,
        "--games",
        "8",
        "--json",
        "--out",
        &dir.join("finding.record").display().to_string(),
    ]);
    let text = String::from_utf8_lossy(&fuzzed.stdout);
    assert!(
        text.contains("4 decisions"),
        "{text}\n{}",
        String::from_utf8_lossy(&fuzzed.stderr)
    );
}
