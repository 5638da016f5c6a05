//! The language server's latency and memory over edits of one script.
//!
//! `latency`: one edit of one character in a script, as an editor sends
//! it, then the re-check of every variant that reads the script (the
//! debounce wait not counted), with each folder of `LSP_BENCH_FOLDERS`
//! open in turn. Then `memory`: `LSP_BENCH_EDITS` such edits (3000) with
//! the first folder open, resident memory before and after (printed).
//!
//! The script is `LSP_BENCH_SCRIPT` (by default the largest `.rhai` file
//! under `scripts/`); folders are comma-separated, relative to the
//! repository (by default `variants`: every variant). docs/editor.md has
//! the command and the figures.

use criterion::Criterion;
use rulesmith_lsp::server::Server;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository")
}

/// The largest script under `dir`.
fn largest_script(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        let found = if p.is_dir() {
            largest_script(&p).map(|f| (f.metadata().map_or(0, |m| m.len()), f))
        } else if p.extension().is_some_and(|e| e == "rhai") {
            Some((entry.metadata().map_or(0, |m| m.len()), p))
        } else {
            None
        };
        if let Some(f) = found {
            if best.as_ref().is_none_or(|b| f.0 > b.0) {
                best = Some(f);
            }
        }
    }
    best.map(|b| b.1)
}

/// A server that has found the variants under `folder` and opened the
/// script.
fn server(folder: &Path, script: &Path, text: &str) -> Server {
    let (mut s, messages) = Server::detached();
    s.discover(&[folder.to_path_buf()]);
    s.open(script.to_path_buf(), text.to_string());
    // What it publishes is dropped as it comes, on a thread of its own
    // (which ends with the server), so that the loop measures the server.
    std::thread::spawn(move || for _ in messages.iter() {});
    s
}

/// Sends the script's text with one character more or less (a space at
/// the end of its first line).
fn edit(s: &mut Server, script: &Path, text: &str, version: i32) {
    let mut changed = text.to_string();
    if version % 2 == 1 {
        let eol = changed.find('\n').unwrap_or(changed.len());
        changed.insert(eol, ' ');
    }
    s.change(script.to_path_buf(), changed);
}

/// Resident memory of this process, in KiB (Linux; 0 elsewhere).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn main() {
    let repo = repo();
    let script = match std::env::var("LSP_BENCH_SCRIPT") {
        Ok(s) => repo.join(s),
        Err(_) => largest_script(&repo.join("scripts")).expect("a script under scripts/"),
    };
    let folders: Vec<PathBuf> = std::env::var("LSP_BENCH_FOLDERS")
        .unwrap_or_else(|_| "variants".into())
        .split(',')
        .map(|f| repo.join(f.trim()))
        .collect();
    let text = std::fs::read_to_string(&script).expect("the script");
    let shown = script.strip_prefix(&repo).unwrap_or(&script).display().to_string();
    let mut c = Criterion::default().sample_size(20).configure_from_args();
    for folder in &folders {
        let name = format!(
            "one character in {shown}, {} open",
            folder.strip_prefix(&repo).unwrap_or(folder).display()
        );
        let mut s = server(folder, &script, &text);
        let mut version = 1;
        // The edited file's own variant checked and published (what the
        // designer waits for), the other variants that read it after.
        c.bench_function(&format!("{name}: the first variant"), |b| {
            b.iter_custom(|iterations| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    version += 1;
                    edit(&mut s, &script, &text, version);
                    let started = std::time::Instant::now();
                    s.check_dirty();
                    spent += started.elapsed();
                    s.check_all_dirty();
                }
                spent
            })
        });
        c.bench_function(&format!("{name}: every variant"), |b| {
            b.iter(|| {
                version += 1;
                edit(&mut s, &script, &text, version);
                s.check_all_dirty();
            })
        });
    }
    c.final_summary();

    // Memory over many edits: after a warm-up (allocator pools, the
    // interpreter's caches), resident memory should stay flat.
    let edits: i32 = std::env::var("LSP_BENCH_EDITS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3000);
    let mut s = server(&folders[0], &script, &text);
    for v in 0..200 {
        edit(&mut s, &script, &text, v);
        s.check_all_dirty();
    }
    let before = resident_kib();
    let started = std::time::Instant::now();
    for v in 0..edits {
        edit(&mut s, &script, &text, v);
        s.check_all_dirty();
    }
    let after = resident_kib();
    println!(
        "memory: {edits} edits of {shown} ({} open) in {:.1} s: resident {} KiB before, {} KiB after ({:+} KiB)",
        folders[0].strip_prefix(&repo).unwrap_or(&folders[0]).display(),
        started.elapsed().as_secs_f64(),
        before,
        after,
        after as i64 - before as i64
    );
}
