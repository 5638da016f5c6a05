//! The random bot.

use super::Bot;
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::{Action, State};

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

    fn choose(&mut self, _game: &Game, _state: &State, legal: &[Action]) -> Result<usize, GameError> {
        Ok(rng::below(&mut self.rng, legal.len() as u32) as usize)
    }

    fn uniform(&mut self) -> Option<&mut GameRng> {
        Some(&mut self.rng)
    }
}
