//! Bots: automatic players that pick among the legal actions.

use crate::game::Game;
use crate::rng::{self, GameRng};
use crate::state::{Action, State};

/// A player that decides by itself.
pub trait Bot {
    /// A short name for reports (`random`, `greedy`, ...).
    fn name(&self) -> &str;

    /// Index into `legal` of the chosen action. `legal` is never empty.
    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> usize;
}

/// Uniform over the legal actions; it looks at nothing else, so it can
/// never peek at hidden information.
pub struct RandomBot {
    rng: GameRng,
}

impl RandomBot {
    pub fn new(seed: u64) -> Self {
        RandomBot { rng: rng::seeded(seed) }
    }
}

impl Bot for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, _game: &Game, _state: &State, legal: &[Action]) -> usize {
        rng::below(&mut self.rng, legal.len() as u32) as usize
    }
}
