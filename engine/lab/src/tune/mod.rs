//! Balancing by search: which values of a variant's parameters meet a
//! designer's targets (`rulesmith tune`).
//!
//! - [`target`]: the targets (`first_player_advantage = 0`, `turns.mean in
//!   10..16 @0.05`) and the figures of `simulate --json` they name;
//! - [`space`]: the parameters searched and their values;
//! - [`search`]: the search itself, which spends games where they decide
//!   something: every candidate of a small space (or the finalists an
//!   NTBEA search proposes in a large one) raced on the same game seeds,
//!   each dropped as soon as its interval shows it cannot be the best;
//! - [`bisect`]: for one ordered parameter and one `PATH = V` target, a
//!   bisection on the parameter's order that races only the values
//!   around the crossing (and races them all if the figure is not
//!   monotone).
//!
//! The library plays no game itself: the caller gives a function that
//! plays given games of given candidates (on its threads, on its engine)
//! and returns their results in order, so an answer depends only on the
//! seed and the budget.

pub mod bisect;
pub mod search;
pub mod space;
pub mod target;

pub use search::{search, Estimate, Method, Outcome, Ranked, Sensitivity, Settings};
pub use space::{Candidate, Space};
pub use target::Target;

/// What can go wrong in a tune run, naming the flag's text and what was
/// expected there.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TuneError {
    #[error("--target '{text}': expected {expected}")]
    Target { text: String, expected: String },
    #[error("--target: '{path}' is not a figure of simulate --json's summary; expected {expected}")]
    Figure { path: String, expected: String },
    #[error("--param '{text}': expected {expected}")]
    Param { text: String, expected: String },
    #[error("--budget {budget}: expected at least {needed} games ({why})")]
    Budget { budget: u64, needed: u64, why: String },
    #[error("--method {method}: it needs {why}")]
    Method { method: String, why: String },
    /// A game could not be played (the caller's message).
    #[error("{0}")]
    Play(String),
}
