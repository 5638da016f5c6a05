//! `rulesmith lsp`: the language server (`rulesmith-lsp`) on standard
//! input and output, given `check`'s smoke games to play when a file is
//! saved. Editors start it; see docs/editor.md.

use crate::check::smoke_games;
use crate::Failure;
use rulesmith_core::GameError;
use rulesmith_lsp::{SmokeCheck, SmokeFailure};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> Result<(), Failure> {
    let smoke: SmokeCheck = Arc::new(|variant, stop| {
        let max = variant.max_decisions.unwrap_or(rulesmith_lab::sim::MAX_DECISIONS);
        // Built on this worker thread: a game's scripts never cross threads.
        let game = rulesmith_rhai::interpreted(variant).map_err(|e| SmokeFailure {
            message: e.to_string(),
            at: None,
        })?;
        smoke_games(&game, max, stop).map(|_| ()).map_err(|f| SmokeFailure {
            message: format!(
                "rulesmith check: a random {}-player game (seed {}) fails: {}",
                f.players, f.seed, f.error
            ),
            at: match &f.error {
                GameError::Script(e) => Some((e.file.clone(), e.line, e.column)),
                _ => None,
            },
        })
    });
    rulesmith_lsp::stdio(Some(smoke)).map_err(|e| Failure::input(format!("rulesmith lsp: {e}")))
}
