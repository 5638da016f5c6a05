//! Scenario records: every `tests/records/VARIANT/NAME.record` is replayed
//! with `variants/VARIANT` and checked against what sits beside it:
//!
//! - `NAME.json`: the expected summary (compared as JSON values);
//! - `NAME.error`: the replay must fail; line 1 is the record line number,
//!   every further line a text the message must contain;
//! - `NAME.legal`: the expected legal actions of the next decision, one per
//!   line, in order.
//!
//! A record's header may say `# players: N` (default: the variant's) and
//! `# set: KEY=VALUE` (repeatable) to override parameters; a deck file in
//! `# set: deck.NAME=FILE` is relative to the record.

use rulesmith_core::{record, ToMove, Variant};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Scenario {
    path: PathBuf,
    variant: String,
    text: String,
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
            let text = std::fs::read_to_string(&path).unwrap();
            out.push(Scenario {
                path,
                variant: name.clone(),
                text,
            });
        }
    }
    out
}

fn header_values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let prefix = format!("# {key}:");
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .map(str::trim)
        .collect()
}

fn run(s: &Scenario) -> Result<(), String> {
    let mut variant = Variant::load(root().join("variants").join(&s.variant)).map_err(|e| e.to_string())?;
    for kv in header_values(&s.text, "set") {
        let (k, v) = kv.split_once('=').ok_or(format!("bad '# set: {kv}'"))?;
        // A deck file is named relative to the record.
        let v = if k.trim().starts_with("deck.") {
            s.path.parent().unwrap().join(v.trim()).to_string_lossy().into_owned()
        } else {
            v.trim().to_string()
        };
        variant.set(k.trim(), &v)?;
    }
    let game = rulesmith_rhai::interpreted(variant).map_err(|e| e.to_string())?;
    let players = match header_values(&s.text, "players").first() {
        Some(p) => p.parse().map_err(|_| format!("bad players '{p}'"))?,
        None => game.variant().players.default,
    };
    let result = record::replay(&game, players, &s.text, &s.path);
    let sibling = |ext: &str| s.path.with_extension(ext);
    let mut checked = false;
    if let Ok(expected) = std::fs::read_to_string(sibling("error")) {
        checked = true;
        let err = match &result {
            Ok(_) => return Err("replay succeeded but an error was expected".into()),
            Err(e) => e,
        };
        let mut lines = expected.lines();
        let line: usize = lines
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or("the .error file starts with a line number")?;
        if err.line != line {
            return Err(format!("error on line {} (expected line {line}): {err}", err.line));
        }
        let message = err.to_string();
        for needle in lines.filter(|l| !l.trim().is_empty()) {
            if !message.contains(needle.trim()) {
                return Err(format!("error message lacks '{}': {message}", needle.trim()));
            }
        }
    }
    if let Ok(expected) = std::fs::read_to_string(sibling("json")) {
        checked = true;
        let state = result.as_ref().map_err(|e| format!("replay failed: {e}"))?;
        let want: serde_json::Value = serde_json::from_str(&expected).map_err(|e| format!("bad .json: {e}"))?;
        let got = game.summary(state, None).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!("summary differs.\n  expected: {want}\n  got:      {got}"));
        }
    }
    if let Ok(expected) = std::fs::read_to_string(sibling("legal")) {
        checked = true;
        let state = result.as_ref().map_err(|e| format!("replay failed: {e}"))?;
        let got = match state.to_move() {
            ToMove::Decision(_) => game.texts(&game.legal_actions(state).map_err(|e| e.to_string())?),
            _ => Vec::new(),
        };
        let want: Vec<String> = expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if got != want {
            return Err(format!(
                "legal actions differ.\n  expected: {want:?}\n  got:      {got:?}"
            ));
        }
    }
    if !checked {
        return Err("no .json, .error or .legal file beside the record".into());
    }
    Ok(())
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
