//! Rulesmith's reference rule engine: a variant's Rhai scripts, compiled
//! once and interpreted in a sandbox ([`Interpreter`], an implementation of
//! core's [`Rules`](rulesmith_core::Rules)). Compiled rules must behave
//! exactly like it.

pub mod script;

pub use rulesmith_core::{FunctionProfile, Limits};
pub use script::Interpreter;

use rulesmith_core::{Game, LoadError, Variant};
use std::sync::Arc;

/// A game of `variant` with its scripts interpreted, under the default
/// sandbox limits.
pub fn interpreted(variant: impl Into<Arc<Variant>>) -> Result<Game, LoadError> {
    interpreted_with_limits(variant, Limits::default())
}

/// [`interpreted`] under other sandbox limits.
pub fn interpreted_with_limits(variant: impl Into<Arc<Variant>>, limits: Limits) -> Result<Game, LoadError> {
    let variant = variant.into();
    Game::from_rules(variant.clone(), Interpreter::new(variant, limits, false)?)
}

/// A game that profiles its scripts from the start: per function, the
/// calls, the time and Rhai's count of operations ([`Game::profile`]).
/// Counting operations slows every script a little, so only a game built
/// this way does it.
pub fn interpreted_profiled(variant: impl Into<Arc<Variant>>) -> Result<Game, LoadError> {
    let variant = variant.into();
    let game = Game::from_rules(variant.clone(), Interpreter::new(variant, Limits::default(), true)?)?;
    game.track_calls(true);
    Ok(game)
}
