//! Bots: automatic players that pick among the legal actions.
//!
//! A bot must not cheat: where a seat cannot see part of the state (a card
//! dealt to another seat, another seat's secret decision), the greedy and
//! MCTS bots decide on states drawn with [`Game::determinize`], which
//! depend only on what that seat knows.
//!
//! A bot is named by a spec, the same in every command and in Python:
//! `random`, `greedy`, or `mcts` with an optional budget and options
//! (`mcts:1000`, `mcts:200ms`, `mcts:1000:rollout=random:depth=end`); see
//! [`from_spec`].

mod greedy;
mod mcts;
mod random;
mod workers;

pub use greedy::GreedyBot;
pub use mcts::{Depth, MctsBot, MctsConfig, Rollout};
pub use random::RandomBot;

use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::GameRng;
use rulesmith_core::state::{Action, State, ToMove};
use std::time::Duration;

/// A player that decides by itself.
pub trait Bot {
    /// A short name for reports (`random`, `greedy`, `mcts:400`, ...).
    fn name(&self) -> &str;

    /// Index into `legal` of the chosen action. `legal` is never empty and
    /// holds the legal actions of the seat to move in `state`.
    ///
    /// An error is a failure of the variant's own functions the bot relies
    /// on (its `evaluate`): a bot never hides one by scoring the position 0,
    /// so a broken evaluation stops the game at its first failing call.
    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError>;

    /// The generator of a bot that picks uniformly among the legal
    /// actions, `rng::below(rng, legal.len())`, and does nothing else:
    /// then a game need not list the actions to pick one (see
    /// `Game::pick_and_apply_scratch`), and picks the same one.
    fn uniform(&mut self) -> Option<&mut GameRng> {
        None
    }

    /// The decisions so far at which the bot found no world that fits
    /// what its seat has seen, and decided on loose ones (see
    /// [`crate::worlds`]).
    fn loose_decisions(&self) -> u64 {
        0
    }
}

/// How much search an MCTS decision gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// Iterations (simulations) per decision: reproducible.
    Playouts(u32),
    /// Wall-clock time: stronger on fast machines, and not reproducible.
    Time(Duration),
}

/// What a spec may say, for error messages.
const EXPECTED: &str = "random, greedy, mcts, mcts:N, mcts:Nms or mcts[:N]:OPTION=VALUE...";

/// Builds a bot from its spec.
///
/// - `random`, `greedy`;
/// - `mcts`, `mcts:N` (N iterations per decision), `mcts:Nms` (a time
///   budget; not reproducible), each optionally followed by options
///   `:KEY=VALUE` (see [`MctsConfig::set`]): `rollout=random|none`,
///   `depth=N|auto|end`, `c=X`, `worlds=N`, `trees=N`, `threads=N`,
///   `widen=auto|on|off`, `reuse=on|off`, `peek=on|off`.
pub fn from_spec(spec: &str, seed: u64) -> Result<Box<dyn Bot>, String> {
    let spec = spec.trim();
    let mut parts = spec.split(':');
    let kind = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    match kind {
        "random" | "greedy" if !rest.is_empty() => Err(format!(
            "bot '{spec}': {kind} takes no budget or options (expected {EXPECTED})"
        )),
        "random" => Ok(Box::new(RandomBot::new(seed))),
        "greedy" => Ok(Box::new(GreedyBot::new(seed))),
        "mcts" => {
            let config = MctsConfig::parse(&rest).map_err(|e| format!("bot '{spec}': {e}"))?;
            Ok(Box::new(MctsBot::with_config(seed, config, spec.to_string())))
        }
        _ => Err(format!("unknown bot '{spec}' (expected {EXPECTED})")),
    }
}

// The states a bot may reason about: never the true state while something
// is hidden from the seat.
use crate::worlds::worlds;

/// Plays out chance events until a decision or the end (false if the
/// rules fail, or keep rolling past the engine's bound). `state` is a
/// throwaway copy: after a failure it is half-changed and must not be scored.
fn resolve_chance(game: &Game, state: &mut State, rng: &mut GameRng) -> bool {
    let mut drawn = 0;
    while state.to_move() == ToMove::Chance {
        drawn += 1;
        if drawn > crate::playout::chance_bound(0) {
            return false;
        }
        let Some(o) = game.sample_outcome(state, rng) else {
            return false;
        };
        if game.apply_outcome_scratch(state, o).is_err() {
            return false;
        }
    }
    true
}
