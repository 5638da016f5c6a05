//! The JSON Schemas in schemas/ stay in step with what the loader accepts,
//! and every shipped file satisfies them.

mod common;

use common::root;
use rulesmith_core::Variant;
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn schema(name: &str) -> Json {
    serde_json::from_str(&std::fs::read_to_string(root().join("schemas").join(name)).unwrap()).unwrap()
}

/// The keys the loader accepts in a table, read from its own message about
/// an unknown key there ("unknown field `x`, expected one of `a`, `b`").
fn loader_keys(toml: &str) -> BTreeSet<String> {
    let dir = root().join("target/schema-probe");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("variant.toml"), toml).unwrap();
    let err = Variant::load(&dir).expect_err("the probe key is unknown").to_string();
    let expected = err
        .split("expected")
        .nth(1)
        .unwrap_or_else(|| panic!("no key list in: {err}"));
    expected.split('`').skip(1).step_by(2).map(String::from).collect()
}

fn schema_keys(node: &Json) -> BTreeSet<String> {
    node["properties"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn the_variant_schema_names_exactly_the_keys_the_loader_accepts() {
    let s = schema("variant.schema.json");
    let p = &s["properties"];
    let item = |table: &str| p[table]["additionalProperties"].clone();
    let cases: Vec<(&str, Json, &str)> = vec![
        ("top level", s.clone(), "zzz_probe = 1\n"),
        ("[variant]", p["variant"].clone(), "[variant]\nzzz_probe = 1\n"),
        (
            "players",
            p["variant"]["properties"]["players"].clone(),
            "[variant]\nplayers = { min = 1, max = 2, zzz_probe = 1 }\n",
        ),
        ("[params.*]", item("params"), "[params.x]\nvalue = 1\nzzz_probe = 1\n"),
        (
            "[actions.*]",
            item("actions"),
            "[actions.x]\ntext = \"x\"\napply = \"f\"\nzzz_probe = 1\n",
        ),
        ("[steps.*]", item("steps"), "[steps.x]\nlegal = \"f\"\nzzz_probe = 1\n"),
        ("[turn]", p["turn"].clone(), "[turn]\nzzz_probe = 1\n"),
        ("[setup]", p["setup"].clone(), "[setup]\nrun = \"f\"\nzzz_probe = 1\n"),
        ("[end]", p["end"].clone(), "[end]\nzzz_probe = 1\n"),
        ("[output]", p["output"].clone(), "[output]\nzzz_probe = 1\n"),
        (
            "[output] observation_tensor",
            p["output"]["properties"]["observation_tensor"].clone(),
            "[output]\nobservation_tensor = { key = \"k\", shape = [1], zzz_probe = 1 }\n",
        ),
        (
            "[output] information_tensor",
            p["output"]["properties"]["information_tensor"].clone(),
            "[output]\ninformation_tensor = { key = \"k\", shape = [1], zzz_probe = 1 }\n",
        ),
        (
            "[decks.*]",
            item("decks"),
            "[decks.x]\nfile = \"d.toml\"\nzzz_probe = 1\n",
        ),
        (
            "[decks.*.fields.*]",
            item("decks")["properties"]["fields"]["additionalProperties"].clone(),
            "[decks.x.fields.y]\ntype = \"int\"\nzzz_probe = 1\n",
        ),
        (
            "[card_schemas.*.*]",
            item("card_schemas")["additionalProperties"].clone(),
            "[card_schemas.x.y]\ntype = \"int\"\nzzz_probe = 1\n",
        ),
        (
            "[piles.*]",
            item("piles"),
            "[piles.x]\ndeck = \"d\"\nvisible = \"owner\"\nzzz_probe = 1\n",
        ),
        (
            "[invariants.*]",
            item("invariants"),
            "[invariants.x]\ncheck = \"f\"\nzzz_probe = 1\n",
        ),
        (
            "[scores]",
            p["scores"].clone(),
            "[scores]\nmin = 0\nmax = 1\nzzz_probe = 1\n",
        ),
    ];
    for (name, node, probe) in cases {
        assert_eq!(
            schema_keys(&node),
            loader_keys(probe),
            "{name}: schema and loader disagree"
        );
    }
}

/// A small JSON Schema check: the parts our schemas use.
fn check(value: &Json, schema: &Json, path: &str, errors: &mut Vec<String>) {
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Json::String(t) => vec![t.as_str()],
            Json::Array(ts) => ts.iter().filter_map(|t| t.as_str()).collect(),
            _ => vec![],
        };
        let ok = names.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{path}: {value} is not {names:?}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Json::as_array) {
        if !e.contains(value) {
            errors.push(format!("{path}: {value} not in {e:?}"));
        }
    }
    if let (Some(min), Some(v)) = (schema.get("minimum").and_then(Json::as_i64), value.as_i64()) {
        if v < min {
            errors.push(format!("{path}: {v} < {min}"));
        }
    }
    if let (Some(min), Some(v)) = (schema.get("exclusiveMinimum").and_then(Json::as_f64), value.as_f64()) {
        if v <= min {
            errors.push(format!("{path}: {v} <= {min}"));
        }
    }
    if let (Some(max), Some(v)) = (schema.get("maximum").and_then(Json::as_i64), value.as_i64()) {
        if v > max {
            errors.push(format!("{path}: {v} > {max}"));
        }
    }
    if let Some(obj) = value.as_object() {
        for r in schema.get("required").and_then(Json::as_array).into_iter().flatten() {
            if !obj.contains_key(r.as_str().unwrap()) {
                errors.push(format!("{path}: missing {r}"));
            }
        }
        for (k, v) in obj {
            match schema.get("properties").and_then(|p| p.get(k)) {
                Some(s) => check(v, s, &format!("{path}.{k}"), errors),
                None => match schema.get("additionalProperties") {
                    Some(Json::Bool(false)) => errors.push(format!("{path}: unknown key {k}")),
                    Some(s @ Json::Object(_)) => check(v, s, &format!("{path}.{k}"), errors),
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            check(v, items, &format!("{path}[{i}]"), errors);
        }
    }
}

fn toml_as_json(path: &Path) -> Json {
    let t: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::to_value(t).unwrap()
}

fn files(dir: &Path, name_filter: &dyn Fn(&str) -> bool, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, name_filter, out);
        } else if name_filter(&p.file_name().unwrap().to_string_lossy()) {
            out.push(p);
        }
    }
}

#[test]
fn every_shipped_variant_and_deck_satisfies_its_schema() {
    let mut found = Vec::new();
    files(&root().join("variants"), &|n| n == "variant.toml", &mut found);
    assert!(found.len() >= 6);
    // The OpenSpiel ports declare scores, roll dice in secret, and use ranges, seats'
    // words and tensors.
    let ports = found.len();
    files(&root().join("tests/openspiel"), &|n| n == "variant.toml", &mut found);
    assert!(found.len() > ports, "no variant under tests/openspiel");
    for f in &found {
        let mut errors = Vec::new();
        check(&toml_as_json(f), &schema("variant.schema.json"), "", &mut errors);
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
    let mut decks = Vec::new();
    files(&root().join("variants"), &|n| n == "deck.toml", &mut decks);
    for f in &decks {
        let mut errors = Vec::new();
        check(&toml_as_json(f), &schema("deck.schema.json"), "", &mut errors);
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
}

#[test]
fn a_variant_specific_deck_schema_catches_what_the_loader_refuses() {
    let out = Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(["schema", "variants/sirius-lifeboats", "--deck", "lifeboats"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let s: Json = serde_json::from_slice(&out.stdout).unwrap();
    let mut good = toml_as_json(&root().join("variants/sirius-lifeboats/deck.toml"));
    let mut errors = Vec::new();
    check(&good, &s, "", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    good["cards"][0]["hull"] = 9.into();
    good["cards"][1].as_object_mut().unwrap().remove("sentry");
    check(&good, &s, "", &mut errors);
    assert_eq!(errors.len(), 2, "{errors:?}");
    let params = Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(["schema", "variants/sirius-basic", "--params"])
        .current_dir(root())
        .output()
        .unwrap();
    let p: Json = serde_json::from_slice(&params.stdout).unwrap();
    assert_eq!(p["properties"]["max_power"]["maximum"], 12);
}
