//! The worlds a bot searches in: states drawn from what its seat has seen,
//! never the true state while something is hidden from it.
//!
//! A bot must move whatever happens: when no world fits what the seat saw
//! (`Game::determinize_worlds` gives up), it decides on loose worlds
//! (`Game::determinize_loose`: what it cannot see drawn afresh, what it saw
//! replayed even where the world's rules would not allow it), and says so
//! once per process on standard error. A human's game goes on. Every such
//! decision is counted (`Worlds::loose`, then the bot's
//! `loose_decisions`), and `simulate` reports the count.

use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::GameRng;
use rulesmith_core::state::{Seat, State};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the warning about a bot deciding on loose worlds was printed.
static WARNED: AtomicBool = AtomicBool::new(false);

/// The states a bot of `seat` may reason about: the true one when the seat
/// sees everything, else `count` worlds drawn from its view; when no world
/// fits that view, `count` loose worlds (see the module's documentation).
/// An error only when the rules themselves fail.
pub fn worlds(game: &Game, state: &State, seat: Seat, rng: &mut GameRng, count: usize) -> Result<Worlds, GameError> {
    if !state.core.hides_from(Some(seat)) {
        return Ok(Worlds {
            states: vec![state.clone()],
            loose: false,
        });
    }
    match game.determinize_worlds(state, Some(seat), rng, count) {
        Ok(states) => Ok(Worlds { states, loose: false }),
        Err(why) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                eprintln!("warning: {} (said once)", no_world_warning(game, state, seat, &why));
            }
            let states = (0..count.max(1))
                .map(|_| game.determinize_loose(state, Some(seat), rng))
                .collect::<Result<_, _>>()?;
            Ok(Worlds { states, loose: true })
        }
    }
}

/// What [`worlds`] drew.
pub struct Worlds {
    pub states: Vec<State>,
    /// No world fitted: these are loose ones. Bots count such decisions
    /// ([`crate::bot::Bot::loose_decisions`]), and `simulate` reports them,
    /// for figures from games where bots decided on them are less sure.
    pub loose: bool,
}

/// The warning printed when a bot finds no world that fits: the seat, the
/// decision (turn, step and its place in the game) and why.
pub fn no_world_warning(game: &Game, state: &State, seat: Seat, why: &GameError) -> String {
    let step = state
        .core
        .step
        .map_or("setup", |k| game.variant().steps[k].name.as_str());
    format!(
        "the bot playing P{} found no world that fits what it has seen, at its decision in turn {}, step '{}' (step {} of the game): {why}; it decides on worlds that ignore what does not fit",
        seat + 1,
        state.core.turn,
        step,
        state.history.len() + 1
    )
}
