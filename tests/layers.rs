//! Core's files stand in layers (docs/ARCHITECTURE.md, "Architecture
//! invariants"): no file imports, through others, one that imports it.
//! The imports are read from the source text (`crate::NAME` paths), so a
//! new circle fails here, named, before it sets into the code.

use std::collections::BTreeMap;
use std::path::Path;

/// Each module of `engine/core/src` and the modules it names.
fn imports() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("engine/core/src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let (name, file) = if path.is_dir() {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path.join("mod.rs"),
            )
        } else if path.extension().is_some_and(|e| e == "rs") {
            (path.file_stem().unwrap().to_string_lossy().into_owned(), path.clone())
        } else {
            continue;
        };
        if name != "lib" {
            files.insert(name, std::fs::read_to_string(file).unwrap());
        }
    }
    let names: Vec<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(name, text)| {
            // Comments may name modules freely.
            let code: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            let used = names
                .iter()
                .filter(|m| *m != name)
                .filter(|m| {
                    code.match_indices(&format!("crate::{m}")).any(|(i, _)| {
                        let after = code[i + 7 + m.len()..].chars().next();
                        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    })
                })
                .cloned()
                .collect();
            (name.clone(), used)
        })
        .collect()
}

/// A circle of imports through `start`, if any: the path back to it.
fn circle(graph: &BTreeMap<String, Vec<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = std::collections::BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in &graph[&at] {
            if next == start {
                let mut found = path.clone();
                found.push(start.to_string());
                return Some(found);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn cores_files_import_in_layers_with_no_circle() {
    let graph = imports();
    assert!(
        graph.contains_key("state") && graph.contains_key("variant"),
        "{graph:?}"
    );
    // The reading of imports itself: `game` uses `state`.
    assert!(graph["game"].contains(&"state".to_string()), "{:?}", graph["game"]);
    for module in graph.keys() {
        if let Some(path) = circle(&graph, module) {
            panic!("an import circle in engine/core/src: {}", path.join(" -> "));
        }
    }
}
