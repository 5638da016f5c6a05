//! `Game` and `State` for Python, shaped like OpenSpiel's: players are
//! numbered from 0, chance is player -1 and the end of the game -4,
//! actions and chance outcomes are integers (see `encoding.rs`).
//!
//! Both classes are `unsendable`: a core `Game` holds the interpreter,
//! which is not `Send`, so an object stays on the thread that made it
//! (another thread gets a Python error, never a data race).

use crate::encoding::Encoding;
use crate::tensor::{Kind, Layout};
use crate::{engine_game, error, Unsent};
use pyo3::prelude::*;
use pyo3::types::PyList;
use rulesmith_core::record::Record;
use rulesmith_core::state::{ChanceSource, Seat, Step, ToMove};
use rulesmith_core::{Action, Game, State, Variant};
use rulesmith_lab::bot;
use std::rc::Rc;
use std::sync::Arc;

/// OpenSpiel's player numbers for chance and for the end of the game.
pub const CHANCE: i64 = -1;
pub const SIMULTANEOUS: i64 = -2;
pub const TERMINAL: i64 = -4;
/// OpenSpiel's "no action": what a seat that does not decide at a
/// simultaneous node (it is out of play) passes in `apply_actions`.
pub const INVALID_ACTION: i64 = -1;

/// The most decisions a game may take when neither the caller nor the
/// variant (`[end] max_decisions`) says.
pub const DEFAULT_MAX_DECISIONS: u64 = 20_000;

/// What every state of one game shares.
pub struct Shared {
    pub game: Game,
    pub enc: Encoding,
    pub observation: Layout,
    pub information: Layout,
    pub players: usize,
    pub max_decisions: u64,
    pub path: String,
    pub sets: Vec<String>,
}

/// A variant loaded for a number of players (`rulesmith.load_game`).
#[pyclass(name = "Game", unsendable, module = "rulesmith")]
pub struct PyGame {
    pub shared: Rc<Shared>,
}

/// The variant at `path` with `sets` (`KEY=VALUE`) applied.
pub fn load_variant(path: &str, sets: &[String]) -> PyResult<Variant> {
    let mut v = Variant::load(path).map_err(|e| error(e.to_string()))?;
    for s in sets {
        let Some((k, val)) = s.split_once('=') else {
            return Err(error(format!("parameter {s:?}: expected KEY=VALUE")));
        };
        v.set(k.trim(), val.trim()).map_err(|e| error(format!("{s}: {e}")))?;
    }
    Ok(v)
}

#[pymethods]
impl PyGame {
    #[new]
    #[pyo3(signature = (variant, players=None, sets=Vec::new(), engine="interpreted", value_bound=None, max_decisions=None))]
    fn new(
        variant: &str,
        players: Option<usize>,
        sets: Vec<String>,
        engine: &str,
        value_bound: Option<u32>,
        max_decisions: Option<u64>,
    ) -> PyResult<Self> {
        let v = Arc::new(load_variant(variant, &sets)?);
        let game = engine_game(v.clone(), engine)?;
        let players = players.unwrap_or(v.players.default);
        if players < v.players.min || players > v.players.max {
            return Err(error(format!(
                "{variant}: {players} players; this variant is played by {} to {}",
                v.players.min, v.players.max
            )));
        }
        let enc = Encoding::new(&v, players, value_bound).map_err(error)?;
        // The variant's declared longest game, else the guard `simulate` uses.
        let max_decisions = max_decisions.or(v.max_decisions).unwrap_or(DEFAULT_MAX_DECISIONS);
        let observation = Layout::new(&game, players, Kind::Observation).map_err(error)?;
        let information = Layout::new(&game, players, Kind::Information).map_err(error)?;
        Ok(PyGame {
            shared: Rc::new(Shared {
                game,
                enc,
                observation,
                information,
                players,
                max_decisions,
                path: variant.to_string(),
                sets,
            }),
        })
    }

    /// A new game, run up to its first decision or chance event.
    fn new_initial_state(&self) -> PyResult<PyState> {
        let state = self
            .shared
            .game
            .new_game(self.shared.players)
            .map_err(|e| error(e.to_string()))?;
        Ok(PyState::new(self.shared.clone(), state))
    }

    /// `size` games stepped together (`rulesmith.VectorGame`): chance
    /// played with a generator seeded by `seed`, a game that ends started
    /// again when `auto_reset`.
    #[pyo3(signature = (size, seed=0, auto_reset=true))]
    fn batch(&self, size: usize, seed: u64, auto_reset: bool) -> PyResult<crate::batch::PyBatch> {
        crate::batch::PyBatch::new(self, size, seed, auto_reset)
    }

    fn num_players(&self) -> usize {
        self.shared.players
    }

    fn num_distinct_actions(&self) -> u64 {
        self.shared.enc.num_actions()
    }

    fn max_chance_outcomes(&self) -> u64 {
        self.shared.enc.num_outcomes()
    }

    /// The shape of every observation tensor (see `tensor.rs`).
    fn observation_tensor_shape(&self) -> Vec<usize> {
        self.shared.observation.shape.clone()
    }

    fn observation_tensor_size(&self) -> usize {
        self.shared.observation.size()
    }

    /// The shape of every information-state tensor.
    fn information_state_tensor_shape(&self) -> Vec<usize> {
        self.shared.information.shape.clone()
    }

    fn information_state_tensor_size(&self) -> usize {
        self.shared.information.size()
    }

    /// Whether the variant lays its tensors out itself (`[output]
    /// observation_tensor`, `information_tensor`) rather than leaving them
    /// to be read from its whole summary.
    fn declares_tensors(&self) -> (bool, bool) {
        let v = self.shared.game.variant();
        (v.observation_tensor.is_some(), v.information_tensor.is_some())
    }

    /// The most decisions a game may take: the `max_decisions` option, else
    /// the variant's `[end] max_decisions`, else 20,000. A game that runs
    /// longer is an error, as in `rulesmith simulate`.
    fn max_game_length(&self) -> u64 {
        self.shared.max_decisions
    }

    /// A state written by `State.serialize()`.
    fn deserialize_state(&self, text: &str) -> PyResult<PyState> {
        let state = self.shared.game.load_state(text).map_err(|e| error(e.to_string()))?;
        Ok(PyState::new(self.shared.clone(), state))
    }

    /// The variant's name, title, folder, engine and parameters in force.
    #[getter]
    fn name(&self) -> String {
        self.shared.game.variant().name.clone()
    }

    #[getter]
    fn title(&self) -> String {
        self.shared.game.variant().title.clone()
    }

    #[getter]
    fn path(&self) -> String {
        self.shared.path.clone()
    }

    #[getter]
    fn engine(&self) -> &'static str {
        self.shared.game.engine_name()
    }

    #[getter]
    fn sets(&self) -> Vec<String> {
        self.shared.sets.clone()
    }

    /// Every parameter in force, as JSON (name -> value).
    fn params_json(&self) -> String {
        let m: serde_json::Map<String, serde_json::Value> = self
            .shared
            .game
            .variant()
            .params
            .iter()
            .map(|p| {
                let v = match &p.value {
                    rulesmith_core::variant::Value::Int(i) => serde_json::json!(i),
                    rulesmith_core::variant::Value::Bool(b) => serde_json::json!(b),
                    rulesmith_core::variant::Value::Str(s) => serde_json::json!(s),
                };
                (p.name.clone(), v)
            })
            .collect();
        serde_json::Value::Object(m).to_string()
    }

    /// Whether a seat may not see everything: the variant deals cards, has
    /// secret steps, or its scripts roll dice in secret (OpenSpiel's
    /// imperfect information).
    fn hides_information(&self) -> bool {
        let v = self.shared.game.variant();
        !v.decks.is_empty() || v.steps.iter().any(|s| s.secret) || rolls_in_secret(v)
    }

    /// Whether the variant has secret rounds (a step with `actor =
    /// "every"` and `secret = true`): every seat decides without seeing the
    /// others' choices, which the OpenSpiel bridge plays as one
    /// simultaneous node (`State.is_simultaneous_node`).
    fn has_simultaneous_rounds(&self) -> bool {
        self.shared.game.variant().steps.iter().any(is_secret_round)
    }

    /// The lowest and highest result a seat can get: the declared
    /// `[scores]` range, else -1 and 1 (OpenSpiel's `min_utility` and
    /// `max_utility`).
    fn min_utility(&self) -> f64 {
        self.shared
            .game
            .variant()
            .scores
            .as_ref()
            .map_or(-1.0, |s| s.min as f64)
    }

    fn max_utility(&self) -> f64 {
        self.shared.game.variant().scores.as_ref().map_or(1.0, |s| s.max as f64)
    }

    /// How every game's results add up, as OpenSpiel's utility kinds name
    /// it: "zero_sum", "constant_sum" or "general_sum". Without `[scores]`
    /// (1 to the winner, -1 to each other seat): zero-sum with two seats,
    /// general-sum with more (a draw gives 0 to all).
    fn utility(&self) -> &'static str {
        use rulesmith_core::variant::ScoreSum;
        match self.shared.game.variant().scores.as_ref().map(|s| s.sum) {
            Some(ScoreSum::Zero) => "zero_sum",
            Some(ScoreSum::Constant(_)) => "constant_sum",
            Some(ScoreSum::General) => "general_sum",
            None if self.shared.players == 2 => "zero_sum",
            None => "general_sum",
        }
    }

    /// What the seats' results add up to in every game (zero- and
    /// constant-sum games), else None.
    fn utility_sum(&self) -> Option<f64> {
        use rulesmith_core::variant::ScoreSum;
        match self.shared.game.variant().scores.as_ref().map(|s| s.sum) {
            Some(ScoreSum::Zero) => Some(0.0),
            Some(ScoreSum::Constant(t)) => Some(t as f64),
            Some(ScoreSum::General) => None,
            None if self.shared.players == 2 => Some(0.0),
            None => None,
        }
    }
}

/// A step in which every seat in play decides once, in secret: a round of
/// simultaneous decisions.
fn is_secret_round(step: &rulesmith_core::variant::StepDef) -> bool {
    step.secret && step.actor == rulesmith_core::variant::Actor::Every
}

/// Whether a rule or card script of `v` calls `roll_secret`: read from
/// the scripts' text, as a variant declares no secret dice elsewhere.
fn rolls_in_secret(v: &Variant) -> bool {
    v.files.iter().any(|f| f.text.contains("roll_secret"))
}

/// One game in progress.
#[pyclass(name = "State", unsendable, module = "rulesmith")]
pub struct PyState {
    shared: Rc<Shared>,
    state: State,
    /// Decisions taken so far (the `max_decisions` guard, `move_number`).
    decisions: u64,
    /// The legal actions of the seat to move in `state`, when
    /// `legal_listed`: listed once for `legal_actions` and the
    /// `apply_action` that usually follows it; their numbers (sorted) once
    /// `legal_actions` asked.
    legal: Vec<Action>,
    numbers: Option<Vec<u64>>,
    legal_listed: bool,
}

impl PyState {
    /// A state of `shared`'s game; its decisions counted from its history.
    pub(crate) fn new(shared: Rc<Shared>, state: State) -> PyState {
        let decisions = state
            .history
            .to_vec()
            .iter()
            .filter(|s| matches!(s, Step::Decision(_)))
            .count() as u64;
        PyState {
            shared,
            state,
            decisions,
            legal: Vec::new(),
            numbers: None,
            legal_listed: false,
        }
    }

    fn g(&self) -> &Game {
        &self.shared.game
    }

    /// The seat to decide, -1 at a chance event, -4 at the end.
    fn player(&self) -> i64 {
        match self.state.to_move() {
            ToMove::Decision(s) => s as i64,
            ToMove::Chance => CHANCE,
            ToMove::Terminal => TERMINAL,
        }
    }

    /// Lists the legal actions of the seat to move into `self.legal`,
    /// unless they are listed already.
    fn list_legal(&mut self) -> PyResult<()> {
        if !self.legal_listed {
            let g = &self.shared.game;
            g.legal_actions_into(&mut self.state, &mut self.legal)
                .map_err(|e| error(e.to_string()))?;
            self.numbers = None;
            self.legal_listed = true;
        }
        Ok(())
    }

    /// The numbers of `legal`, decided by `seat`, sorted.
    fn numbered(&self, legal: &[Action], seat: Seat) -> PyResult<Vec<u64>> {
        let enc = &self.shared.enc;
        let mut out = Vec::with_capacity(legal.len());
        for a in legal {
            out.push(enc.action(a, Some(seat), || self.g().action_text(a)).map_err(error)?);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The seats (one bit each) of the secret round that starts here, when
    /// this state is a simultaneous node: a decision of a step with `actor
    /// = "every"` and `secret = true`, before any seat of the round has
    /// decided. None elsewhere, including inside a round that
    /// `apply_action` plays seat by seat.
    fn round_seats(&self) -> Option<u64> {
        let ToMove::Decision(_) = self.state.to_move() else {
            return None;
        };
        let step = self.state.core.step?;
        if !is_secret_round(&self.g().variant().steps[step]) {
            return None;
        }
        let core = &self.state.core;
        let in_play = (0..core.seats)
            .filter(|&s| !core.out[s])
            .fold(0u64, |m, s| m | (1 << s));
        (core.round == in_play).then_some(in_play)
    }

    /// The legal actions of `seat` in the secret round starting here: those
    /// it has once the seats before it have decided (the first of their
    /// legal actions: what they chose must not change what it may do,
    /// which `rulesmith check` verifies).
    fn round_legal(&self, seat: Seat) -> PyResult<Vec<Action>> {
        let g = self.g();
        let fail = |e: rulesmith_core::GameError| error(e.to_string());
        let mut s = self.state.clone();
        let mut legal = Vec::new();
        loop {
            g.legal_actions_into(&mut s, &mut legal).map_err(fail)?;
            match s.to_move() {
                ToMove::Decision(d) if d == seat => return Ok(legal),
                ToMove::Decision(d) if d < seat => g.apply_trusted(&mut s, legal[0]).map_err(fail)?,
                _ => return Err(self.interrupted(&s, seat)),
            }
        }
    }

    /// The error of a secret round in which `seat` is not to decide when
    /// its turn in the round comes.
    fn interrupted(&self, s: &State, seat: Seat) -> PyErr {
        let step = self
            .state
            .core
            .step
            .map_or("?", |i| self.g().variant().steps[i].name.as_str());
        let now = match s.to_move() {
            ToMove::Decision(d) => format!("P{} is to decide", d + 1),
            ToMove::Chance => "a chance event is due".to_string(),
            ToMove::Terminal => "the game is over".to_string(),
        };
        error(format!(
            "the secret round of step '{step}' cannot be played as one simultaneous node: when P{} should \
             decide, {now} (a round whose decisions are separated by chance or by other steps must be \
             played seat by seat, with apply_action)",
            seat + 1
        ))
    }

    /// The decision `a` of the seat to move in `s`, checked against the
    /// `max_decisions` guard and applied. `legal` is the list of `s`: an
    /// action not in it is refused with the legal ones. A state that keeps
    /// no history is left as it was on an error; one that does may be
    /// half-changed, with the failed step added to its history (see
    /// [`PyState::all_or_nothing`]), unless the action was refused before
    /// it applied.
    fn decide(shared: &Shared, s: &mut State, legal: &[Action], decisions: u64, a: Action) -> Result<(), String> {
        let g = &shared.game;
        if !legal.contains(&a) {
            let illegal = rulesmith_core::GameError::Illegal {
                text: g.action_text(&a),
                legal: g.texts(legal),
            };
            return Err(illegal.to_string());
        }
        if decisions >= shared.max_decisions {
            return Err(rulesmith_lab::sim::endless_game(shared.max_decisions, s.core.turn).to_string());
        }
        match s.history.is_kept() {
            true => g.apply_scratch(s, a).map_err(|e| e.to_string()),
            false => g.apply_trusted(s, a).map_err(|e| e.to_string()),
        }
    }

    /// Runs `apply` on the state; if it fails after changing the state,
    /// puts back the state from before, replayed from its history. The
    /// engine's own all-or-nothing steps copy the whole state before every
    /// step, for the rare failure; here only a failure pays (the engine is
    /// deterministic, so the replay gives the same state). `apply` must
    /// add exactly one step to the history when it changes the state (what
    /// the engine's `_scratch` steps do), or leave a state that keeps no
    /// history as it was.
    fn all_or_nothing(&mut self, apply: impl FnOnce(&Shared, &mut State) -> Result<(), String>) -> PyResult<()> {
        let before = self.state.history.len();
        let Err(e) = apply(&self.shared, &mut self.state) else {
            return Ok(());
        };
        if self.state.history.is_kept() && self.state.history.len() > before {
            self.state = self.g().replay_history(&self.state, before).map_err(|again| {
                error(format!(
                    "{e}\n(and the state before it could not be made again: {again}; do not use this state)"
                ))
            })?;
        }
        Err(error(e))
    }

    /// The place (deck or pile place) the pending chance event draws
    /// cards from, if it draws cards.
    fn drawing_from(&self) -> Option<usize> {
        match self.state.core.chance.as_ref()?.source {
            ChanceSource::Deck { deck, .. } => Some(deck),
            ChanceSource::Dice { .. } => None,
        }
    }

    /// The outcomes of the pending chance event, by number, sorted, with
    /// their probabilities. The engine lists them in card or face order,
    /// which numbers keep: they are sorted only when they are not.
    fn numbered_outcomes(&self) -> PyResult<Vec<(u64, f64)>> {
        let enc = &self.shared.enc;
        let mut out = self
            .g()
            .chance_outcomes(&self.state)
            .into_iter()
            .map(|(o, p)| enc.outcome(o).map(|n| (n, p)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(error)?;
        if !out.is_sorted_by_key(|(n, _)| *n) {
            out.sort_by_key(|(n, _)| *n);
        }
        Ok(out)
    }

    fn seat(&self, player: i64) -> PyResult<Seat> {
        if player < 0 || player as usize >= self.shared.players {
            return Err(error(format!(
                "player {player}: expected 0..{} (players are numbered from 0)",
                self.shared.players
            )));
        }
        Ok(player as Seat)
    }

    fn text_of(&self, player: i64, action: u64) -> PyResult<String> {
        if player == CHANCE {
            let o = self
                .shared
                .enc
                .decode_outcome(action, self.drawing_from())
                .ok_or_else(|| error(format!("{action} is no chance outcome of this game")))?;
            return Ok(self.g().outcome_text(o));
        }
        // A seat's word is the deciding seat's: `player` here.
        let seat = Seat::try_from(player).ok().filter(|s| *s < self.shared.players);
        let a = self
            .shared
            .enc
            .decode_action(action, seat.unwrap_or(0))
            .ok_or_else(|| error(format!("{action} is no action of this game")))?;
        Ok(self.g().action_text(&a))
    }
}

#[pymethods]
impl PyState {
    /// The seat to decide (from 0), -1 at a chance event, -4 at the end.
    /// With `simultaneous`, -2 where a secret round starts
    /// (`is_simultaneous_node`): OpenSpiel's simultaneous player. Without,
    /// the round is played seat by seat, the lowest first.
    #[pyo3(signature = (simultaneous=false))]
    fn current_player(&self, simultaneous: bool) -> i64 {
        if simultaneous && self.round_seats().is_some() {
            return SIMULTANEOUS;
        }
        self.player()
    }

    /// Whether a secret round starts here: every seat in play is to decide
    /// without seeing the others' choices, so all decide at once
    /// (`apply_actions`), as at an OpenSpiel simultaneous node.
    fn is_simultaneous_node(&self) -> bool {
        self.round_seats().is_some()
    }

    fn is_terminal(&self) -> bool {
        self.state.is_terminal()
    }

    /// Whether the decision due is secret (its step is declared `secret`):
    /// the other seats will not learn it until the rules reveal it.
    fn decision_is_secret(&self) -> bool {
        self.g().decision_is_secret(&self.state)
    }

    fn is_chance_node(&self) -> bool {
        self.state.to_move() == ToMove::Chance
    }

    /// The legal actions of `player` (default: the one to move), sorted;
    /// at a chance event, the possible outcomes; none for anyone else. At a
    /// simultaneous node every seat of the round has its own (a seat out of
    /// play none).
    #[pyo3(signature = (player=None))]
    fn legal_actions<'py>(&mut self, py: Python<'py>, player: Option<i64>) -> PyResult<Bound<'py, PyList>> {
        let current = self.player();
        if current == TERMINAL {
            return Ok(PyList::empty(py));
        }
        if let Some(p) = player.filter(|&p| p != current) {
            return match self.round_seats() {
                Some(seats) if p >= 0 && (p as usize) < self.shared.players && seats & (1 << p) != 0 => {
                    let seat = p as Seat;
                    let legal = self.round_legal(seat)?;
                    PyList::new(py, self.numbered(&legal, seat)?)
                }
                _ => Ok(PyList::empty(py)),
            };
        }
        if current == CHANCE {
            return PyList::new(py, self.numbered_outcomes()?.into_iter().map(|(a, _)| a));
        }
        self.list_legal()?;
        if self.numbers.is_none() {
            self.numbers = Some(self.numbered(&self.legal, current as Seat)?);
        }
        // Straight from the kept numbers into the list: no copy between.
        PyList::new(py, self.numbers.as_deref().unwrap_or_default())
    }

    /// The outcomes of the pending chance event with their probabilities,
    /// sorted by outcome.
    fn chance_outcomes(&self) -> PyResult<Vec<(u64, f64)>> {
        self.numbered_outcomes()
    }

    /// Applies a decision or a chance outcome (by number). A bad one raises
    /// and leaves the state as it was. At a simultaneous node it is the
    /// decision of the lowest seat of the round (the round played seat by
    /// seat); `apply_actions` takes all at once.
    fn apply_action(&mut self, action: u64) -> PyResult<()> {
        match self.state.to_move() {
            ToMove::Terminal => Err(error("the game is over: no action applies")),
            ToMove::Chance => {
                let o = self
                    .shared
                    .enc
                    .decode_outcome(action, self.drawing_from())
                    .ok_or_else(|| error(format!("{action} is no chance outcome of this game")))?;
                self.all_or_nothing(|shared, s| match s.history.is_kept() {
                    true => shared.game.apply_outcome_scratch(s, o).map_err(|e| e.to_string()),
                    false => shared.game.apply_outcome(s, o).map_err(|e| e.to_string()),
                })?;
                self.legal_listed = false;
                Ok(())
            }
            ToMove::Decision(seat) => {
                let a = self
                    .shared
                    .enc
                    .decode_action(action, seat)
                    .ok_or_else(|| error(format!("{action} is no action of this game")))?;
                self.list_legal()?;
                let (legal, decisions) = (std::mem::take(&mut self.legal), self.decisions);
                let r = self.all_or_nothing(|shared, s| Self::decide(shared, s, &legal, decisions, a));
                self.legal = legal;
                r?;
                self.decisions += 1;
                self.legal_listed = false;
                Ok(())
            }
        }
    }

    /// At a simultaneous node, every seat's decision at once: `actions[p]`
    /// is seat p's (-1, OpenSpiel's invalid action, for a seat out of play,
    /// which does not decide). The engine applies them in seat order; if
    /// one is illegal nothing is applied.
    fn apply_actions(&mut self, actions: Vec<i64>) -> PyResult<()> {
        let Some(seats) = self.round_seats() else {
            return Err(error(
                "apply_actions: no secret round starts here (is_simultaneous_node() is false): use apply_action",
            ));
        };
        let players = self.shared.players;
        if actions.len() != players {
            return Err(error(format!(
                "apply_actions: {} actions for {players} players (one per seat, -1 for a seat out of play)",
                actions.len()
            )));
        }
        let mut s = self.state.clone();
        let mut decisions = self.decisions;
        let mut legal = Vec::new();
        for (seat, &n) in actions.iter().enumerate() {
            if seats & (1 << seat) == 0 {
                if n != INVALID_ACTION {
                    return Err(error(format!(
                        "apply_actions: P{} is out of play and does not decide in this round: its action is -1, not {n}",
                        seat + 1
                    )));
                }
                continue;
            }
            match s.to_move() {
                ToMove::Decision(d) if d == seat => {}
                _ => return Err(self.interrupted(&s, seat)),
            }
            let a = u64::try_from(n)
                .ok()
                .and_then(|n| self.shared.enc.decode_action(n, seat))
                .ok_or_else(|| error(format!("apply_actions: P{}: {n} is no action of this game", seat + 1)))?;
            self.shared
                .game
                .legal_actions_into(&mut s, &mut legal)
                .map_err(|e| error(e.to_string()))?;
            Self::decide(&self.shared, &mut s, &legal, decisions, a)
                .map_err(|e| error(format!("apply_actions: P{}: {e}", seat + 1)))?;
            decisions += 1;
        }
        self.state = s;
        self.decisions = decisions;
        self.legal_listed = false;
        Ok(())
    }

    /// `action_to_string(action)` for the one to move, or
    /// `action_to_string(player, action)` as OpenSpiel calls it.
    #[pyo3(signature = (a, b=None))]
    fn action_to_string(&self, a: i64, b: Option<i64>) -> PyResult<String> {
        let (player, action) = match b {
            Some(action) => (a, action),
            None => (self.player(), a),
        };
        if action < 0 {
            return Err(error(format!("{action}: actions are numbered from 0")));
        }
        self.text_of(player, action as u64)
    }

    /// The number of an action's text (of the one to move), or of a chance
    /// outcome's text at a chance event.
    fn string_to_action(&self, text: &str) -> PyResult<u64> {
        let enc = &self.shared.enc;
        if self.state.to_move() == ToMove::Chance {
            let o = self
                .g()
                .parse_outcome(&self.state, text)
                .map_err(|e| error(e.to_string()))?;
            return enc.outcome(o).map_err(error);
        }
        let a = self
            .g()
            .parse_action(text)
            .ok_or_else(|| error(format!("'{text}' is no action of this variant's notation")))?;
        let seat = match self.state.to_move() {
            ToMove::Decision(s) => Some(s),
            _ => None,
        };
        enc.action(&a, seat, || text.to_string()).map_err(error)
    }

    /// At the end: each seat's score when the variant declares
    /// `[scores]`, else 1 for the winner and -1 for the others (0 for all
    /// in a draw); 0 for all before the end.
    fn returns(&self) -> Vec<f64> {
        self.g().returns(&self.state)
    }

    /// `returns()[player]`, as OpenSpiel's `player_return`.
    fn player_return(&self, player: i64) -> PyResult<f64> {
        let seat = self.seat(player)?;
        Ok(self.g().returns(&self.state)[seat])
    }

    /// What `player` sees now: the variant's picture of the state for that
    /// seat (secret cards of others hidden).
    fn observation_string(&self, player: i64) -> PyResult<String> {
        let seat = self.seat(player)?;
        self.g()
            .render(&self.state, Some(seat))
            .map_err(|e| error(e.to_string()))
    }

    /// What `player` sees now as numbers, flat (`observation_tensor_shape`).
    fn observation_tensor(&self, player: i64) -> PyResult<Vec<f64>> {
        let seat = self.seat(player)?;
        self.shared
            .observation
            .numbers(self.g(), &self.state, seat)
            .map_err(error)
    }

    /// Everything `player` has seen as numbers, flat
    /// (`information_state_tensor_shape`).
    fn information_state_tensor(&self, player: i64) -> PyResult<Vec<f64>> {
        let seat = self.seat(player)?;
        self.shared
            .information
            .numbers(self.g(), &self.state, seat)
            .map_err(error)
    }

    /// Everything `player` has seen: every decision and chance outcome so
    /// far, with what is secret from that seat and not yet revealed written
    /// as `?`: a card dealt to another seat, another seat's decision in a
    /// secret step. Two states give the same string exactly when that seat
    /// cannot tell them apart.
    fn information_state_string(&self, player: i64) -> PyResult<String> {
        let seat = self.seat(player)?;
        let core = &self.state.core;
        let hidden = |at: usize| {
            core.secrets
                .iter()
                .any(|s| s.at as usize == at && s.seen_by != seat && !s.revealed)
                || core
                    .secret_rolls
                    .iter()
                    .any(|r| r.at as usize == at && r.seen_by != seat && !r.revealed)
                || core
                    .secret_decisions
                    .iter()
                    .any(|d| d.at as usize == at && d.seat != seat && !d.revealed)
        };
        let mut out = format!("P{}", seat + 1);
        for (at, step) in self.state.history.to_vec().into_iter().enumerate() {
            out.push('\n');
            let text = match step {
                _ if hidden(at) => "?".to_string(),
                Step::Decision(a) => self.g().action_text(&a),
                Step::Chance(o) => self.g().outcome_text(o),
            };
            if matches!(step, Step::Chance(_)) {
                out.push_str("chance ");
            }
            out.push_str(&text);
        }
        Ok(out)
    }

    /// The state's summary as JSON text, seen by `player` (default: all).
    #[pyo3(signature = (player=None))]
    fn summary_json(&self, player: Option<i64>) -> PyResult<String> {
        let viewer = player.map(|p| self.seat(p)).transpose()?;
        let v = self
            .g()
            .summary(&self.state, viewer)
            .map_err(|e| error(e.to_string()))?;
        Ok(v.to_string())
    }

    /// The variant's picture of the state, seen by `player` (default: all).
    #[pyo3(signature = (player=None))]
    fn render(&self, player: Option<i64>) -> PyResult<String> {
        let viewer = player.map(|p| self.seat(p)).transpose()?;
        self.g().render(&self.state, viewer).map_err(|e| error(e.to_string()))
    }

    /// The variant's own estimate of the state for `player`.
    fn evaluate(&self, player: i64) -> PyResult<f64> {
        let seat = self.seat(player)?;
        self.g().evaluate(&self.state, seat).map_err(|e| error(e.to_string()))
    }

    /// The variant's labels of a finished game.
    fn labels(&self) -> PyResult<Vec<(String, String)>> {
        self.g().labels(&self.state).map_err(|e| error(e.to_string()))
    }

    fn clone(&self) -> PyState {
        PyState {
            shared: self.shared.clone(),
            state: self.state.clone(),
            decisions: self.decisions,
            legal: self.legal.clone(),
            numbers: self.numbers.clone(),
            legal_listed: self.legal_listed,
        }
    }

    fn __copy__(&self) -> PyState {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyState {
        self.clone()
    }

    /// The state as JSON text, for `Game.deserialize_state`.
    fn serialize(&self) -> PyResult<String> {
        self.g().save_state(&self.state).map_err(|e| error(e.to_string()))
    }

    /// Every decision and chance outcome so far, as numbers.
    fn history(&self) -> PyResult<Vec<u64>> {
        let enc = &self.shared.enc;
        self.state
            .history
            .to_vec()
            .into_iter()
            .map(|s| match s {
                Step::Decision(a) => enc.action(&a, None, || self.g().action_text(&a)),
                Step::Chance(o) => enc.outcome(o),
            })
            .collect::<Result<_, _>>()
            .map_err(error)
    }

    /// The game so far as a Rulesmith record (`rulesmith replay` reads it).
    fn record(&self) -> PyResult<String> {
        let g = self.g();
        let fail = |e: rulesmith_core::GameError| error(e.to_string());
        // The history does not say who decided: replay it to know.
        let mut s = g.new_game(self.shared.players).map_err(fail)?;
        let mut record = Record::default();
        for step in self.state.history.to_vec() {
            match step {
                Step::Decision(a) => {
                    let ToMove::Decision(seat) = s.to_move() else {
                        return Err(error("the history does not replay"));
                    };
                    record.decision(seat, g.action_text(&a));
                    g.apply_trusted(&mut s, a).map_err(fail)?;
                }
                Step::Chance(o) => {
                    record.chance(g.outcome_text(o));
                    g.apply_outcome(&mut s, o).map_err(fail)?;
                }
            }
        }
        let mut header = vec![
            format!("{} - played from Python", g.variant().name),
            format!("players: {}", self.shared.players),
        ];
        header.extend(self.shared.sets.iter().map(|s| format!("set: {s}")));
        Ok(record.to_text(&header))
    }

    /// Decisions taken so far.
    fn move_number(&self) -> u64 {
        self.decisions
    }

    /// The number of the action a Rulesmith bot (`random`, `greedy`,
    /// `mcts`, `mcts:N`) picks for the one to move; the bot sees only what
    /// that seat may see. The GIL is released meanwhile.
    #[pyo3(signature = (spec, seed=0))]
    fn bot_action(&self, py: Python<'_>, spec: &str, seed: u64) -> PyResult<u64> {
        if !matches!(self.state.to_move(), ToMove::Decision(_)) {
            return Err(error("a bot decides only when a seat is to move"));
        }
        let b = bot::from_spec(spec, seed).map_err(error)?;
        let w = Unsent((self.g(), &self.state, b));
        let a = py
            .detach(move || {
                let w = w;
                let (g, s, mut b) = w.0;
                let legal = g.legal_actions(s).map_err(|e| e.to_string())?;
                let i = b.choose(g, s, &legal).map_err(|e| e.to_string())?;
                Ok::<_, String>(legal[i])
            })
            .map_err(error)?;
        let seat = match self.state.to_move() {
            ToMove::Decision(s) => Some(s),
            _ => None,
        };
        self.shared
            .enc
            .action(&a, seat, || self.g().action_text(&a))
            .map_err(error)
    }

    /// A state `player` cannot tell from this one: the cards dealt
    /// secretly to other seats (and not revealed) redealt at random from
    /// what that seat cannot place, the game replayed (for IS-MCTS).
    fn resample(&self, player: i64, seed: u64) -> PyResult<PyState> {
        let seat = self.seat(player)?;
        let mut rng = rulesmith_core::rng::seeded(seed);
        let state = self
            .g()
            .determinize(&self.state, Some(seat), &mut rng)
            .map_err(|e| error(e.to_string()))?;
        Ok(PyState::new(self.shared.clone(), state))
    }

    fn __str__(&self) -> PyResult<String> {
        self.render(None)
    }
}
