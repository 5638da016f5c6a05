//! Scenario records: every `tests/records/VARIANT/NAME.record` is replayed
//! with `variants/VARIANT` and checked against what sits beside it:
//!
//! - `NAME.json`: the expected summary (compared as JSON values);
//! - `NAME.error`: the replay must fail; line 1 is the record line number,
//!   every further line a text the message must contain;
//! - `NAME.legal`: the expected legal actions of the next decision, one per
//!   line, in order;
//! - `NAME.holds`: invariants that must hold after every line.
//!
//! A record's header may say `# players: N` (default: the variant's) and
//! `# set: KEY=VALUE` (repeatable) to override parameters; a deck file in
//! `# set: deck.NAME=FILE` is relative to the record.

use rulesmith_core::Variant;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Scenario {
    path: PathBuf,
    variant: String,
}

fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    let dir = root().join("tests/records");
    for variant in std::fs::read_dir(&dir).expect("tests/records exists") {
        let variant = variant.unwrap().path();
        if !variant.is_dir() {
            continue;
        }
        let name = variant.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&variant)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "record"))
            .collect();
        files.sort();
        for path in files {
            out.push(Scenario {
                path,
                variant: name.clone(),
            });
        }
    }
    out
}

/// One scenario, checked exactly as `rulesmith test` checks a case (the
/// same code: headers, expectation files, messages).
fn run(s: &Scenario) -> Result<(), String> {
    rulesmith::check_scenario(&root().join("variants").join(&s.variant), &s.path).map(drop)
}

#[test]
fn every_scenario_record_replays_as_expected() {
    let all = scenarios();
    assert!(!all.is_empty(), "no scenario records found");
    let failures: Vec<String> = all
        .iter()
        .filter_map(|s| {
            run(s)
                .err()
                .map(|e| format!("{}: {e}", s.path.strip_prefix(root()).unwrap_or(&s.path).display()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
    eprintln!("{} scenarios passed", all.len());
}

#[test]
fn scenario_directories_name_real_variants() {
    for s in scenarios() {
        assert!(
            Path::new(&root().join("variants").join(&s.variant)).is_dir(),
            "tests/records/{} is not a variant",
            s.variant
        );
    }
}

/// `super_NAME`: each override of a three-level chain adds to the setup it
/// replaced (see docs/variant-format.md).
#[test]
fn overrides_call_the_definition_they_replaced_three_levels_deep() {
    for (variant, count) in [("base", 0), ("child", 10), ("grandchild", 110)] {
        let v = Variant::load(root().join("tests/super").join(variant)).unwrap_or_else(|e| panic!("{e}"));
        let g = rulesmith_rhai::interpreted(v).unwrap_or_else(|e| panic!("{e}"));
        let state = g.new_game(2).unwrap();
        let summary = g.summary(&state, None).unwrap();
        assert_eq!(summary["count"], count, "{variant}: {summary}");
    }
}
