//! Rulesmith's generic turn/phase engine.
//!
//! A rule set (a *variant*) is a folder of TOML data and Rhai scripts. The
//! engine loads it ([`Variant`]), compiles its scripts once ([`Game`]) and
//! runs games as explicit states ([`State`]): at every point either one seat
//! decides among legal actions, or a chance event (dice, a card draw) is
//! pending, or the game is over. Records of games replay exactly
//! ([`record`]); random playouts drive fuzzing and simulation ([`playout`]).
//!
//! The engine knows no particular game: seats, turns, steps, chance, hidden
//! draws and the end of the game are generic; everything else lives in the
//! variant's data and scripts.

pub mod bot;
pub mod error;
pub mod fuzz;
pub mod game;
pub mod grid;
pub mod notation;
pub mod playout;
pub mod record;
pub mod rng;
pub mod script;
pub mod sim;
pub mod state;
pub mod variant;

pub use error::{Diagnostic, GameError, LoadError, RecordError, ScriptError};
pub use game::Game;
pub use script::{FunctionProfile, Limits};
pub use state::{Action, Outcome, Seat, State, Status, ToMove};
pub use variant::Variant;
