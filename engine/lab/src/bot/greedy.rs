//! The greedy bot: one decision of lookahead on the variant's `evaluate`.

use super::{resolve_chance, worlds, Bot};
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::{Action, Seat, State, ToMove};

/// One-ply lookahead on the variant's evaluate function: each action is
/// applied, chance after it (and the rest of a round of simultaneous
/// commitments) sampled a few times, and the results averaged.
/// When the seat cannot see everything, each sample is taken in a world of
/// its own, drawn from the seat's view: the action is judged against what
/// the others might hold or have decided, not against one guess.
pub struct GreedyBot {
    rng: GameRng,
    /// Samples of the chance events (and hidden worlds) that follow an action.
    samples: usize,
    /// Decisions taken on loose worlds (see [`Bot::loose_decisions`]).
    loose: u64,
}

/// At most this many other seats' commitments are drawn to finish a round.
const ROUND_BOUND: usize = 64;

impl GreedyBot {
    pub fn new(seed: u64) -> Self {
        GreedyBot {
            rng: rng::seeded(seed),
            samples: 6,
            loose: 0,
        }
    }

    fn value(&mut self, game: &Game, worlds: &[State], a: Action, me: Seat) -> Result<f64, GameError> {
        let mut total = 0.0;
        let mut n = 0;
        for k in 0..self.samples {
            let mut s = worlds[k % worlds.len()].clone();
            if game.apply_scratch(&mut s, a).is_err() {
                return Ok(f64::NEG_INFINITY);
            }
            let mut random = s.to_move() == ToMove::Chance;
            if !resolve_chance(game, &mut s, &mut self.rng) {
                return Ok(f64::NEG_INFINITY);
            }
            // In a round where every seat commits at once, the seats still
            // to commit decide without seeing this action, and this seat
            // cannot know what they will choose: like chance, their
            // commitments are drawn (uniformly) and the round played out,
            // so the action is judged by how the round ends, not by a
            // position in which only this seat has committed.
            let mut committed = 0;
            while s.core.round != 0 && committed < ROUND_BOUND && matches!(s.to_move(), ToMove::Decision(_)) {
                random = true;
                let rng = &mut self.rng;
                if game
                    .pick_and_apply_scratch(&mut s, |n| rng::below(rng, n as u32) as usize, |_, _| {})
                    .is_err()
                {
                    break;
                }
                committed += 1;
                if !resolve_chance(game, &mut s, &mut self.rng) {
                    return Ok(f64::NEG_INFINITY);
                }
            }
            total += if s.is_terminal() {
                // A finished game outweighs any evaluation: its result
                // (scores scaled to -1..=1 by their declared range) times 1000.
                game.unit_returns(&s)[me] * 1000.0
            } else {
                game.evaluate(&s, me)?
            };
            n += 1;
            if !random && worlds.len() == 1 {
                break; // no chance after this action: one look is exact
            }
        }
        Ok(total / n as f64)
    }
}

impl Bot for GreedyBot {
    fn name(&self) -> &str {
        "greedy"
    }

    fn loose_decisions(&self) -> u64 {
        self.loose
    }

    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError> {
        let ToMove::Decision(me) = state.to_move() else {
            return Ok(0);
        };
        let drawn = worlds(game, state, me, &mut self.rng, self.samples)?;
        self.loose += u64::from(drawn.loose);
        let worlds = drawn.states;
        let mut best = Vec::new();
        let mut best_value = f64::NEG_INFINITY;
        for (i, &a) in legal.iter().enumerate() {
            let v = self.value(game, &worlds, a, me)?;
            if v > best_value + 1e-9 {
                best_value = v;
                best.clear();
                best.push(i);
            } else if (v - best_value).abs() <= 1e-9 {
                best.push(i);
            }
        }
        if best.is_empty() {
            return Ok(0);
        }
        Ok(best[rng::below(&mut self.rng, best.len() as u32) as usize])
    }
}
