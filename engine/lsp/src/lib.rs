//! Rulesmith's language server: the problems `rulesmith check` finds in a
//! variant, shown in the editor as the designer types, with hovers,
//! completion, definitions, references and renames that follow names
//! between the TOML files and the Rhai scripts, across `extends` chains.
//!
//! Synchronous, on `lsp-server` (rust-analyzer's protocol crate): one
//! thread owns the state and answers every message in turn; the smoke
//! games of a save run on a worker thread that a newer edit cancels.
//!
//! - `server.rs`: the message loop, debounced diagnostics, the save worker.
//! - `workspace.rs`: open documents (an overlay over the disk) and the
//!   variants found, with the files each reads.
//! - `analysis.rs`: one variant checked as `check` does, without games.
//! - `features.rs`: hover, completion, definition, references, rename.
//! - `lex.rs`, `toml_text.rs`: names and strings with their ranges, in
//!   Rhai and TOML text that may not parse.
//! - `natives.rs`: the natives' signatures and docs (from
//!   `docs/scripting.md`) and what their string arguments name.
//! - `text.rs`, `uri.rs`: positions and file URIs.

pub mod analysis;
pub mod features;
pub mod lex;
pub mod natives;
pub mod server;
pub mod text;
pub mod toml_text;
pub mod uri;
pub mod workspace;

pub use server::{serve, stdio, SmokeCheck, SmokeFailure};
