//! Playing games out: random playouts for fuzzing, simulation and
//! benchmarks, with an optional record of every step.

use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::record::Record;
use rulesmith_core::rng;
use rulesmith_core::state::{State, ToMove};

/// Chance outcomes allowed in a game that has taken `decisions` decisions:
/// rules that keep rolling without ever asking anyone anything (a tie that
/// always re-rolls, say) must end in an error, not a hang.
pub fn chance_bound(decisions: u64) -> u64 {
    10_000 + 100 * decisions
}

/// The error for rules that draw chance outcomes without end.
pub fn endless_chance(drawn: u64) -> GameError {
    GameError::Rules(format!(
        "{drawn} chance outcomes drawn without a decision in between: do the rules re-roll forever?"
    ))
}

/// What a playout did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub decisions: u64,
    pub chance: u64,
    /// The legal lists' lengths added up over the decisions, and the
    /// longest: how wide the game's choices are.
    pub legal_actions: u64,
    pub legal_max: u64,
}

impl Counts {
    /// Adds another run's counts to these.
    pub fn add(&mut self, other: &Counts) {
        self.decisions += other.decisions;
        self.chance += other.chance;
        self.legal_actions += other.legal_actions;
        self.legal_max = self.legal_max.max(other.legal_max);
    }

    /// The mean length of a legal list at a decision.
    pub fn legal_mean(&self) -> f64 {
        self.legal_actions as f64 / self.decisions.max(1) as f64
    }
}

/// Plays `state` to the end (or `max_decisions`), choosing uniformly among
/// legal actions and drawing chance from `rng`. Writes every step to
/// `record` when given. Returns what was played. On an error the state is
/// left half-changed (steps are applied without a backup, see
/// [`Game::apply_scratch`]): the record, not the state, tells what happened.
pub fn random_playout<R: rand::Rng + ?Sized>(
    game: &Game,
    state: &mut State,
    rng: &mut R,
    mut record: Option<&mut Record>,
    max_decisions: u64,
) -> Result<Counts, GameError> {
    let mut counts = Counts::default();
    loop {
        match state.to_move() {
            ToMove::Terminal => return Ok(counts),
            ToMove::Chance => {
                if counts.chance >= chance_bound(counts.decisions) {
                    return Err(endless_chance(counts.chance));
                }
                let o = game.sample_outcome(state, rng).expect("a chance node has outcomes");
                if let Some(r) = record.as_deref_mut() {
                    r.chance(game.outcome_text(o));
                }
                game.apply_outcome_scratch(state, o)?;
                counts.chance += 1;
            }
            ToMove::Decision(seat) => {
                if counts.decisions >= max_decisions {
                    return Ok(counts);
                }
                // Only the chosen action is built: the list stays factored.
                game.pick_and_apply_scratch(
                    state,
                    |n| rng::below(rng, n as u32) as usize,
                    |a, n| {
                        counts.legal_actions += n as u64;
                        counts.legal_max = counts.legal_max.max(n as u64);
                        if let Some(r) = record.as_deref_mut() {
                            r.decision(seat, game.action_text(a));
                        }
                    },
                )?;
                counts.decisions += 1;
            }
        }
    }
}

/// A new `players`-seat game in `scratch`: copied into the state a
/// previous game left there (reusing its allocations), or made afresh into
/// an empty one. A loop of games keeps one `scratch` for all of them.
pub fn new_game_in<'s>(
    game: &Game,
    players: usize,
    scratch: &'s mut Option<State>,
) -> Result<&'s mut State, GameError> {
    match scratch {
        Some(s) => {
            game.new_game_into(players, s)?;
            Ok(s)
        }
        None => Ok(scratch.insert(game.new_game(players)?)),
    }
}

/// Plays one random game per seed from a fresh `players`-seat game, each to
/// the end or `max_decisions`, and adds up what they did: the loop of
/// benchmarks and `rulesmith profile`. No record is written, so none is
/// timed. On an error, returns the seed of the failing game with it.
pub fn random_games(
    game: &Game,
    players: usize,
    seeds: impl IntoIterator<Item = u64>,
    max_decisions: u64,
) -> Result<Counts, (u64, GameError)> {
    let mut total = Counts::default();
    let mut state = None;
    for seed in seeds {
        let mut r = rng::seeded(seed);
        let counts = new_game_in(game, players, &mut state)
            .and_then(|s| {
                s.forget_history();
                random_playout(game, s, &mut r, None, max_decisions)
            })
            .map_err(|e| (seed, e))?;
        total.add(&counts);
    }
    Ok(total)
}
