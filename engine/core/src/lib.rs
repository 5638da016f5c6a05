//! Rulesmith's engine machinery, independent of how rules are run.
//!
//! A rule set (a *variant*) is a folder of TOML data and Rhai scripts. Core
//! loads it ([`Variant`]) and runs games as explicit states ([`State`]): at
//! every point either one seat decides among legal actions, or a chance
//! event (dice, a card draw) is pending, or the game is over. [`Game`] is
//! the turn machinery (settling, turns, steps, chance, transactions,
//! determinizing, notation); it calls the rules through the [`Rules`]
//! protocol, which the Rhai interpreter (`rulesmith-rhai`) and compiled
//! rules implement. Records of games replay exactly ([`record`]).
//!
//! Core knows no interpreter: it parses Rhai for diagnostics ([`source`])
//! but runs no script. It knows no particular game either: seats, turns,
//! steps, chance, hidden draws and the end of the game are generic;
//! everything else lives in the variant's data and scripts.

pub mod board;
pub mod ctx;
pub mod data;
mod decisions;
mod determinize;
pub mod error;
pub mod fields;
pub mod game;
pub mod grid;
pub mod legal;
pub mod lint;
mod loading;
pub mod natives;
pub mod notation;
pub mod piles;
pub mod record;
pub mod rng;
pub mod rules;
pub mod source;
pub mod state;
pub mod variant;

pub use ctx::Place;
pub use ctx::{Ctx, Names};
pub use error::{Diagnostic, Frame, GameError, LoadError, RecordError, ScriptError};
pub use game::Game;
pub use rules::{Data, Entry, FunctionProfile, Limits, NativeData, Reply, Rules};
pub use state::{Action, Outcome, Seat, State, Status, ToMove};
pub use variant::Variant;
