//! `rulesmith profile`: playout speed and where the script time goes.

mod common;

use common::rulesmith;
use serde_json::Value;

fn profile(args: &[&str]) -> Value {
    // Rhai's operation counts are the interpreter's: profile it.
    let mut all = vec!["profile", "--engine", "interpreted"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = rulesmith(&all);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// The per-function figures that do not depend on timing.
fn counts(v: &Value) -> Vec<(String, u64, u64)> {
    v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["calls"].as_u64().unwrap(),
                f["operations"].as_u64().unwrap(),
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn function<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

#[test]
fn calls_and_operations_are_counted_per_function_the_same_on_every_run() {
    let a = profile(&["variants/sirius-basic", "--games", "20"]);
    let b = profile(&["variants/sirius-basic", "--games", "20"]);
    assert_eq!(counts(&a), counts(&b), "same seed, same games, same counts");
    assert_eq!(a["decisions"], b["decisions"]);
    assert!(a["decisions_per_second"].as_f64().unwrap() > 0.0);
    // Legal lists: the same on every run; at least one action at each
    // decision; the longest at least the mean.
    assert_eq!(a["legal_mean"], b["legal_mean"]);
    let (mean, max) = (a["legal_mean"].as_f64().unwrap(), a["legal_max"].as_u64().unwrap());
    assert!(mean >= 1.0 && max as f64 >= mean, "{mean} {max}");
    let lock = function(&a, "lock_legal");
    assert!(lock["calls"].as_u64().unwrap() > 0 && lock["operations"].as_u64().unwrap() > 0);
    let share = a["engine_share"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&share), "{share}");
    // A different seed plays different games.
    let c = profile(&["variants/sirius-basic", "--games", "20", "--seed", "2"]);
    assert_ne!(counts(&a), counts(&c));
}

#[test]
fn the_floor_does_a_handful_of_operations_where_sirius_does_hundreds() {
    let floor = profile(&["benches/floor", "--games", "50"]);
    let sirius = profile(&["variants/sirius-basic", "--games", "20"]);
    let per = |v: &Value| v["operations_per_decision"].as_f64().unwrap();
    assert!(per(&floor) < 10.0, "{}", per(&floor));
    assert!(per(&sirius) > 100.0, "{}", per(&sirius));
    // One legal function call and one apply call per decision.
    let decisions = floor["decisions"].as_u64().unwrap();
    assert_eq!(function(&floor, "play_legal")["calls"].as_u64().unwrap(), decisions);
    assert_eq!(function(&floor, "do_pass")["calls"].as_u64().unwrap(), decisions);
}

#[test]
fn card_hooks_are_profiled_on_their_own() {
    let v = profile(&["variants/sirius-custom-cards", "--games", "60"]);
    let hooks: Vec<_> = counts(&v)
        .into_iter()
        .filter(|(name, _, _)| name.starts_with("card ") && name.contains(": on_"))
        .collect();
    assert!(!hooks.is_empty(), "{v}");
    assert!(hooks.iter().all(|(_, calls, ops)| *calls > 0 && *ops > 0), "{hooks:?}");
}

#[test]
fn no_games_is_a_usage_error() {
    let o = rulesmith(&["profile", "variants/sirius-basic", "--games", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--games"));
}
