//! `Batch`: many games of one `Game` stepped together by one call, for
//! reinforcement-learning loops (`rulesmith.VectorGame` wraps it with
//! NumPy arrays). Chance is played inside with the batch's own seeded
//! generator, so every game waits at a decision or has ended; a secret
//! round is played seat by seat. Arrays cross as little-endian bytes
//! (`numpy.frombuffer` reads them without a copy): masks one byte per
//! action, tensors `f32`, returns `f64`, players and actions `i64`.

use crate::error;
use crate::game::{PyGame, PyState, Shared, TERMINAL};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::ToMove;
use rulesmith_core::{Action, GameError, State};
use std::rc::Rc;

/// One game of the batch, with what its seat to move may do.
struct Slot {
    state: State,
    decisions: u64,
    /// The legal actions of the seat to move and their numbers (empty
    /// once the game is over).
    legal: Vec<Action>,
    numbers: Vec<u64>,
}

#[pyclass(name = "Batch", unsendable, module = "rulesmith")]
pub struct PyBatch {
    shared: Rc<Shared>,
    slots: Vec<Slot>,
    rng: GameRng,
    auto_reset: bool,
}

impl PyBatch {
    pub fn new(game: &PyGame, size: usize, seed: u64, auto_reset: bool) -> PyResult<PyBatch> {
        if size == 0 {
            return Err(error("a batch holds at least one game"));
        }
        let mut batch = PyBatch {
            shared: game.shared.clone(),
            slots: Vec::with_capacity(size),
            rng: rng::seeded(seed),
            auto_reset,
        };
        for i in 0..size {
            let slot = batch.fresh().map_err(|e| error(format!("game {i}: {e}")))?;
            batch.slots.push(slot);
        }
        Ok(batch)
    }

    /// A new game, its chance played up to the first decision.
    fn fresh(&mut self) -> Result<Slot, GameError> {
        let state = self.shared.game.new_game(self.shared.players)?;
        let mut slot = Slot {
            state,
            decisions: 0,
            legal: Vec::new(),
            numbers: Vec::new(),
        };
        self.settle(&mut slot)?;
        Ok(slot)
    }

    /// Plays chance until a seat decides or the game ends, then lists the
    /// legal actions of the seat to move.
    fn settle(&mut self, slot: &mut Slot) -> Result<(), GameError> {
        let g = &self.shared.game;
        while slot.state.to_move() == ToMove::Chance {
            let o = g
                .sample_outcome(&slot.state, &mut self.rng)
                .ok_or_else(|| GameError::Rules("a chance event has no outcome".into()))?;
            g.apply_outcome(&mut slot.state, o)?;
        }
        slot.legal.clear();
        slot.numbers.clear();
        if let ToMove::Decision(seat) = slot.state.to_move() {
            g.legal_actions_into(&mut slot.state, &mut slot.legal)?;
            for a in &slot.legal {
                let n = self
                    .shared
                    .enc
                    .action(a, Some(seat), || g.action_text(a))
                    .map_err(GameError::Rules)?;
                slot.numbers.push(n);
            }
        }
        Ok(())
    }

    fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
        PyBytes::new(py, data)
    }
}

#[pymethods]
impl PyBatch {
    /// How many games the batch holds.
    fn __len__(&self) -> usize {
        self.slots.len()
    }

    /// Each game's seat to decide (from 0), -4 for a game over (only
    /// without auto-reset): `i64` bytes.
    fn current_players<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(self.slots.len() * 8);
        for s in &self.slots {
            let p = match s.state.to_move() {
                ToMove::Decision(seat) => seat as i64,
                _ => TERMINAL,
            };
            out.extend_from_slice(&p.to_le_bytes());
        }
        Self::bytes(py, &out)
    }

    /// One byte per game and action number, 1 where the action is legal
    /// for the game's seat to move: [games, num_distinct_actions].
    fn legal_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let width = self.shared.enc.num_actions() as usize;
        let mut out = vec![0u8; self.slots.len() * width];
        for (i, s) in self.slots.iter().enumerate() {
            for &n in &s.numbers {
                out[i * width + n as usize] = 1;
            }
        }
        Self::bytes(py, &out)
    }

    /// Applies one action per game (`i64` bytes, the action numbers of
    /// each game's seat to move; ignored for a game over), plays chance to
    /// the next decision, and returns each game's returns (`f64` bytes,
    /// [games, players]: non-zero only where a game just ended) and
    /// whether it just ended (one byte per game). With auto-reset a game
    /// that ended starts again at once. Every action is checked before any
    /// is applied: a bad one raises, naming the game, and nothing changes.
    fn step<'py>(&mut self, py: Python<'py>, actions: &[u8]) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let n = self.slots.len();
        if actions.len() != n * 8 {
            return Err(error(format!(
                "step: {} bytes of actions for {n} games (one i64 each: {} bytes)",
                actions.len(),
                n * 8
            )));
        }
        let mut chosen = Vec::with_capacity(n);
        for (i, s) in self.slots.iter().enumerate() {
            let number = i64::from_le_bytes(actions[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            let ToMove::Decision(_) = s.state.to_move() else {
                chosen.push(None);
                continue;
            };
            let Some(k) = u64::try_from(number)
                .ok()
                .and_then(|x| s.numbers.iter().position(|&m| m == x))
            else {
                let mut legal = s.numbers.clone();
                legal.sort_unstable();
                return Err(error(format!(
                    "step: game {i}: action {number} is not legal there (legal: {legal:?})"
                )));
            };
            if s.decisions >= self.shared.max_decisions {
                return Err(error(format!(
                    "step: game {i}: {}",
                    rulesmith_lab::sim::endless_game(self.shared.max_decisions, s.state.core.turn)
                )));
            }
            chosen.push(Some(s.legal[k]));
        }
        let players = self.shared.players;
        let mut rewards = vec![0u8; n * players * 8];
        let mut done = vec![0u8; n];
        let mut slots = std::mem::take(&mut self.slots);
        let result = (|| {
            for (i, (slot, a)) in slots.iter_mut().zip(chosen).enumerate() {
                let Some(a) = a else { continue };
                let fail = |e: GameError| error(format!("step: game {i}: {e}"));
                self.shared.game.apply_trusted(&mut slot.state, a).map_err(fail)?;
                slot.decisions += 1;
                self.settle(slot).map_err(fail)?;
                if slot.state.is_terminal() {
                    done[i] = 1;
                    for (p, r) in self.shared.game.returns(&slot.state).into_iter().enumerate() {
                        let at = (i * players + p) * 8;
                        rewards[at..at + 8].copy_from_slice(&r.to_le_bytes());
                    }
                    if self.auto_reset {
                        *slot = self.fresh().map_err(fail)?;
                    }
                }
            }
            Ok::<(), PyErr>(())
        })();
        self.slots = slots;
        result?;
        Ok((Self::bytes(py, &rewards), Self::bytes(py, &done)))
    }

    /// Each game's observation tensor for `player`, or for its seat to move
    /// (seat 0 in a game over): `f32` bytes, [games, *shape].
    #[pyo3(signature = (player=None))]
    fn observation_tensors<'py>(&self, py: Python<'py>, player: Option<i64>) -> PyResult<Bound<'py, PyBytes>> {
        let layout = &self.shared.observation;
        let mut out = Vec::with_capacity(self.slots.len() * layout.size() * 4);
        for (i, s) in self.slots.iter().enumerate() {
            let seat = match (player, s.state.to_move()) {
                (Some(p), _) if p >= 0 && (p as usize) < self.shared.players => p as usize,
                (Some(p), _) => return Err(error(format!("player {p}: expected 0..{}", self.shared.players))),
                (None, ToMove::Decision(seat)) => seat,
                (None, _) => 0,
            };
            let numbers = layout
                .numbers(&self.shared.game, &s.state, seat)
                .map_err(|e| error(format!("game {i}: {e}")))?;
            for x in numbers {
                out.extend_from_slice(&(x as f32).to_le_bytes());
            }
        }
        Ok(Self::bytes(py, &out))
    }

    /// Each game's returns so far (`f64` bytes, [games, players]): 0
    /// until a game ends.
    fn returns<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(self.slots.len() * self.shared.players * 8);
        for s in &self.slots {
            for r in self.shared.game.returns(&s.state) {
                out.extend_from_slice(&r.to_le_bytes());
            }
        }
        Self::bytes(py, &out)
    }

    /// A copy of game `i` as a `State` (its history, views, record).
    fn state(&self, i: usize) -> PyResult<PyState> {
        let s = self
            .slots
            .get(i)
            .ok_or_else(|| error(format!("game {i}: the batch holds {}", self.slots.len())))?;
        Ok(PyState::new(self.shared.clone(), s.state.clone()))
    }

    /// Starts every game again (the generator goes on).
    fn reset(&mut self) -> PyResult<()> {
        for i in 0..self.slots.len() {
            self.slots[i] = self.fresh().map_err(|e| error(format!("game {i}: {e}")))?;
        }
        Ok(())
    }
}
