//! The language server's latency and memory over edits of a Sirius script.
//!
//! `latency`: one edit of one character in `scripts/sirius/fire.rhai`, as
//! an editor sends it, then the re-check of every variant that reads the
//! script (the debounce wait not counted): with sirius-basic alone open,
//! and with the whole `variants/` folder open (every Sirius variant reads
//! the script). Then `memory`: thousands of such edits, resident memory
//! before and after (printed).
//!
//! Run with `cargo bench --workspace --bench latency`.

use criterion::Criterion;
use lsp_server::{Message, Notification};
use lsp_types::notification::{DidChangeTextDocument, DidOpenTextDocument, Notification as _};
use lsp_types::{
    DidChangeTextDocumentParams, DidOpenTextDocumentParams, TextDocumentContentChangeEvent, TextDocumentItem,
    VersionedTextDocumentIdentifier,
};
use rulesmith_lsp::server::Server;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository")
}

/// A server that has found the variants under `folder` and opened the
/// script, with the channel its messages go to.
fn server(folder: &Path, script: &Path, text: &str) -> (Server, crossbeam_channel::Receiver<Message>) {
    let (sender, receiver) = crossbeam_channel::unbounded();
    let mut s = Server::new(sender, None);
    s.ws.discover(folder);
    s.notification(Notification::new(
        DidOpenTextDocument::METHOD.into(),
        DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(rulesmith_lsp::uri::from_path(script), "rhai".into(), 1, text.into()),
        },
    ));
    s.check_dirty();
    (s, receiver)
}

/// Sends the script's text with one character more or less (a space at
/// the end of its first line) and re-checks, as after the debounce.
fn edit(s: &mut Server, script: &Path, text: &str, version: i32) {
    let mut changed = text.to_string();
    if version % 2 == 1 {
        let eol = changed.find('\n').unwrap_or(changed.len());
        changed.insert(eol, ' ');
    }
    s.notification(Notification::new(
        DidChangeTextDocument::METHOD.into(),
        DidChangeTextDocumentParams {
            text_document: VersionedTextDocumentIdentifier::new(rulesmith_lsp::uri::from_path(script), version),
            content_changes: vec![TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: changed,
            }],
        },
    ));
    s.check_dirty();
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
    let script = repo.join("scripts/sirius/fire.rhai");
    let text = std::fs::read_to_string(&script).expect("fire.rhai");
    let mut c = Criterion::default().sample_size(20).configure_from_args();
    for (name, folder) in [
        (
            "one character in fire.rhai, sirius-basic open",
            repo.join("variants/sirius-basic"),
        ),
        ("one character in fire.rhai, all variants open", repo.join("variants")),
    ] {
        let (mut s, messages) = server(&folder, &script, &text);
        let mut version = 1;
        c.bench_function(name, |b| {
            b.iter(|| {
                version += 1;
                edit(&mut s, &script, &text, version);
                messages.try_iter().count()
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
    let (mut s, messages) = server(&repo.join("variants/sirius-basic"), &script, &text);
    for v in 0..200 {
        edit(&mut s, &script, &text, v);
        messages.try_iter().count();
    }
    let before = resident_kib();
    let started = std::time::Instant::now();
    for v in 0..edits {
        edit(&mut s, &script, &text, v);
        messages.try_iter().count();
    }
    let after = resident_kib();
    println!(
        "memory: {edits} edits of fire.rhai (sirius-basic) in {:.1} s: resident {} KiB before, {} KiB after ({:+} KiB)",
        started.elapsed().as_secs_f64(),
        before,
        after,
        after as i64 - before as i64
    );
}
