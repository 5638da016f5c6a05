//! [`Game`]: the small, stable core API every tool is built on, after
//! OpenSpiel's `State`: who moves, legal actions, apply, chance outcomes,
//! terminal status and returns, a player's view.
//!
//! A `Game` is a compiled variant: the Rhai engine with the variant's scripts
//! compiled once. It is cheap to query and not `Send` (Rhai values are not);
//! parallel tools build one per worker thread from a shared [`Variant`].

use crate::error::{Diagnostic, GameError, LoadError};
use crate::notation::normalize;
use crate::rng;
use crate::script::{self, Compiled, Ctx, FunctionProfile, Info, Limits};
use crate::state::{
    Action, ChanceSource, Core, History, Outcome, Seat, SecretDraw, State, Status, StatusCell, Step, ToMove,
};
use crate::variant::{Actor, FnRef, Variant};
use rhai::{CallFnOptions, Dynamic, Engine, FuncArgs, Map, Scope, INT};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// How many engine-driven transitions (step entries, turn ends) one action
/// may cause before the rule set is judged to loop.
const MAX_TRANSITIONS: usize = 10_000;

/// Whether an apply keeps a copy of the state to restore on error.
#[derive(Clone, Copy)]
enum Backup {
    Keep,
    None,
}

pub struct Game {
    variant: Arc<Variant>,
    info: Rc<Info>,
    engine: Engine,
    compiled: Compiled,
    ctx: Rc<RefCell<Ctx>>,
}

impl Game {
    /// Compiles `variant`'s scripts with the default sandbox limits.
    pub fn new(variant: impl Into<Arc<Variant>>) -> Result<Game, LoadError> {
        Game::with_limits(variant, Limits::default())
    }

    pub fn with_limits(variant: impl Into<Arc<Variant>>, limits: Limits) -> Result<Game, LoadError> {
        Game::build(variant.into(), limits, false)
    }

    /// A game that profiles its scripts from the start: per function, the
    /// calls, the time and Rhai's count of operations ([`Game::profile`]).
    /// Counting operations slows every script a little, so only a game
    /// built this way does it.
    pub fn profiled(variant: impl Into<Arc<Variant>>) -> Result<Game, LoadError> {
        let game = Game::build(variant.into(), Limits::default(), true)?;
        game.track_calls(true);
        Ok(game)
    }

    fn build(variant: Arc<Variant>, limits: Limits, count_operations: bool) -> Result<Game, LoadError> {
        let info = Rc::new(Info::new(variant.clone()));
        let ctx = Rc::new(RefCell::new(Ctx::default()));
        let engine = script::build_engine(&info, &ctx, limits, count_operations);
        let (compiled, cards) = match (
            script::compile(&engine, &variant),
            script::compile_cards(&engine, &variant),
        ) {
            (Ok(c), Ok(k)) => (c, k),
            (a, b) => {
                let diagnostics = a.err().into_iter().chain(b.err()).flatten().collect();
                return Err(LoadError::new(diagnostics));
            }
        };
        let _ = info
            .functions
            .set(compiled.signatures.iter().map(|(n, _)| n.clone()).collect());
        let _ = info.card_scripts.set(cards);
        let game = Game {
            variant,
            info,
            engine,
            compiled,
            ctx,
        };
        let problems = game.check_references();
        if problems.is_empty() {
            Ok(game)
        } else {
            Err(LoadError::new(problems))
        }
    }

    pub fn variant(&self) -> &Arc<Variant> {
        &self.variant
    }

    /// Every function the variant's data names must exist with its arity.
    fn check_references(&self) -> Vec<Diagnostic> {
        let v = &self.variant;
        let mut wanted: Vec<(&FnRef, usize, &str)> = Vec::new();
        for s in &v.steps {
            wanted.push((&s.legal, 0, "a step's legal function"));
            if let Some(e) = &s.enter {
                wanted.push((e, 0, "a step's enter function"));
            }
        }
        for a in &v.actions {
            wanted.push((
                &a.apply,
                a.template.arity(),
                "an action's apply function (one argument per value in its text)",
            ));
        }
        for (f, what) in [
            (&v.on_turn_start, "the turn start hook"),
            (&v.on_turn_end, "the turn end hook"),
            (&v.setup, "the setup function"),
        ] {
            if let Some(f) = f {
                wanted.push((f, 0, what));
            }
        }
        for (f, what) in [
            (&v.summary, "the summary function (viewer seat, -1 for all)"),
            (&v.render, "the render function (viewer seat, -1 for all)"),
            (
                &v.evaluate,
                "the evaluate function (seat): a number, higher is better for that seat",
            ),
        ] {
            if let Some(f) = f {
                wanted.push((f, 1, what));
            }
        }
        for i in &v.invariants {
            wanted.push((&i.check, 0, "an invariant check"));
        }
        if let Some(f) = &v.labels {
            wanted.push((f, 0, "the labels function (no argument; returns a map)"));
        }
        let mut out = Vec::new();
        for (f, arity, what) in wanted {
            if !self.compiled.signatures.contains(&(f.name.clone(), arity)) {
                let found: Vec<String> = self
                    .compiled
                    .signatures
                    .iter()
                    .filter(|(n, _)| *n == f.name)
                    .map(|(n, a)| format!("{n}/{a}"))
                    .collect();
                let hint = if found.is_empty() {
                    String::new()
                } else {
                    format!(" (found {})", found.join(", "))
                };
                out.push(v.diagnostic(
                    &f.loc,
                    format!(
                        "no script function '{}' taking {arity} argument(s) for {what}{hint}",
                        f.name
                    ),
                ));
            }
        }
        out
    }

    // ----- the core API -------------------------------------------------

    /// A new game for `players` seats, run up to the first decision or chance.
    pub fn new_game(&self, players: usize) -> Result<State, GameError> {
        let p = self.variant.players;
        if players < p.min || players > p.max {
            return Err(GameError::Players {
                seats: players,
                min: p.min,
                max: p.max,
            });
        }
        let core = Core {
            seats: players,
            out: vec![false; players],
            active: None,
            actor: None,
            step: None,
            turn: 0,
            status: StatusCell(Status::Ongoing),
            chance: None,
            decks: self
                .variant
                .decks
                .iter()
                .map(|d| (0..d.cards.len() as u16).collect())
                .collect(),
            stats: vec![0; self.variant.stats.len()],
            secrets: Vec::new(),
        };
        let mut state = State {
            core,
            data: Dynamic::from_map(Map::new()),
            history: History::default(),
        };
        self.reset_ctx();
        let setup = self.variant.setup.as_ref().map(|f| f.name.clone()).unwrap_or_default();
        self.run(&mut state, &setup, ())?;
        self.settle(&mut state)?;
        Ok(state)
    }

    /// The legal actions of the seat to move, in the rule set's order.
    pub fn legal_actions(&self, state: &State) -> Result<Vec<Action>, GameError> {
        let mut scratch = state.clone();
        let mut out = Vec::new();
        self.legal_actions_into(&mut scratch, &mut out)?;
        Ok(out)
    }

    /// [`Game::legal_actions`] without copying: the state is lent to the
    /// scripts (hence `&mut`) and comes back unchanged.
    pub fn legal_actions_into(&self, state: &mut State, out: &mut Vec<Action>) -> Result<(), GameError> {
        out.clear();
        let seat = match state.to_move() {
            ToMove::Decision(s) => s,
            ToMove::Chance => {
                return Err(GameError::ChanceDue {
                    expected: self.chance_expectation(state),
                })
            }
            ToMove::Terminal => return Err(GameError::GameOver),
        };
        let Some(step) = state.core.step.map(|i| &self.variant.steps[i]) else {
            return Err(GameError::Rules(format!(
                "P{} is to decide, but the scripts entered no step (call enter_step)",
                seat + 1
            )));
        };
        {
            let mut c = self.ctx.borrow_mut();
            c.collecting = true;
            std::mem::swap(&mut c.legal, out);
        }
        let result = self.call(state, &step.legal.name, ());
        let mut c = self.ctx.borrow_mut();
        c.collecting = false;
        std::mem::swap(&mut c.legal, out);
        c.enter = None;
        c.end_turn = false;
        c.start_turns = None;
        drop(c);
        result.map(drop)?;
        if out.is_empty() {
            return Err(GameError::Rules(format!(
                "step '{}' offers P{} no legal action",
                step.name,
                seat + 1
            )));
        }
        Ok(())
    }

    /// Applies a decision of the seat to move, after checking it is legal.
    /// On any error the state is left exactly as it was.
    pub fn apply_action(&self, state: &mut State, action: Action) -> Result<(), GameError> {
        let legal = self.legal_actions(state)?;
        if !legal.contains(&action) {
            return Err(GameError::Illegal {
                text: self.action_text(&action),
                legal: self.texts(&legal),
            });
        }
        self.apply_trusted(state, action)
    }

    /// Applies an action known to be legal (taken from `legal_actions` on
    /// this very state), skipping the check. Still all or nothing.
    pub fn apply_trusted(&self, state: &mut State, action: Action) -> Result<(), GameError> {
        self.apply_decision(state, action, Backup::Keep)
    }

    /// [`Game::apply_trusted`] for a state the caller throws away if this
    /// fails: playouts, simulations and bots' look-ahead. No backup is
    /// taken (copying the whole state costs a tenth of a random playout),
    /// so after an error the state is half-changed and must not be used.
    pub fn apply_scratch(&self, state: &mut State, action: Action) -> Result<(), GameError> {
        self.apply_decision(state, action, Backup::None)
    }

    fn apply_decision(&self, state: &mut State, action: Action, backup: Backup) -> Result<(), GameError> {
        let def = self
            .variant
            .actions
            .get(action.kind as usize)
            .ok_or_else(|| GameError::Rules(format!("no action kind {}", action.kind)))?;
        let values = action.values();
        self.transaction(state, backup, |g, s| {
            s.history.push(Step::Decision(action));
            // Rhai takes arguments by value; the common arities are spelled
            // out so that no argument vector is allocated per decision.
            let name = &def.apply.name;
            let v = |i: usize| values[i] as INT;
            match values.len() {
                0 => g.run(s, name, ())?,
                1 => g.run(s, name, (v(0),))?,
                2 => g.run(s, name, (v(0), v(1)))?,
                3 => g.run(s, name, (v(0), v(1), v(2)))?,
                4 => g.run(s, name, (v(0), v(1), v(2), v(3)))?,
                _ => g.run(
                    s,
                    name,
                    values.iter().map(|&x| Dynamic::from_int(x as INT)).collect::<Vec<_>>(),
                )?,
            }
            g.settle(s)
        })
    }

    /// The possible outcomes of the pending chance event, with probabilities.
    pub fn chance_outcomes(&self, state: &State) -> Vec<(Outcome, f64)> {
        let Some(p) = &state.core.chance else {
            return Vec::new();
        };
        match p.source {
            ChanceSource::Dice { sides } => (1..=sides).map(|f| (Outcome::Face(f), 1.0 / sides as f64)).collect(),
            ChanceSource::Deck { deck, .. } => {
                let left = &state.core.decks[deck];
                left.iter()
                    .map(|&c| {
                        (
                            Outcome::Card {
                                deck: deck as u16,
                                card: c,
                            },
                            1.0 / left.len() as f64,
                        )
                    })
                    .collect()
            }
        }
    }

    /// Draws the next chance outcome from `rng`.
    pub fn sample_outcome<R: rand::Rng + ?Sized>(&self, state: &State, rng: &mut R) -> Option<Outcome> {
        let p = state.core.chance.as_ref()?;
        Some(match p.source {
            ChanceSource::Dice { sides } => Outcome::Face(rng::below(rng, sides) + 1),
            ChanceSource::Deck { deck, .. } => {
                let left = &state.core.decks[deck];
                Outcome::Card {
                    deck: deck as u16,
                    card: left[rng::below(rng, left.len() as u32) as usize],
                }
            }
        })
    }

    /// Feeds one chance outcome; once the event is complete, the rule set's
    /// continuation runs. All or nothing.
    pub fn apply_outcome(&self, state: &mut State, outcome: Outcome) -> Result<(), GameError> {
        self.feed_outcome(state, outcome, Backup::Keep)
    }

    /// [`Game::apply_outcome`] for a state the caller throws away if this
    /// fails (see [`Game::apply_scratch`]).
    pub fn apply_outcome_scratch(&self, state: &mut State, outcome: Outcome) -> Result<(), GameError> {
        self.feed_outcome(state, outcome, Backup::None)
    }

    fn feed_outcome(&self, state: &mut State, outcome: Outcome, backup: Backup) -> Result<(), GameError> {
        self.check_outcome(state, outcome)?;
        self.transaction(state, backup, |g, s| {
            s.history.push(Step::Chance(outcome));
            let p = s.core.chance.as_mut().expect("checked above");
            p.got.push(outcome);
            if let (
                Outcome::Card { deck, card },
                ChanceSource::Deck {
                    visible_to: Some(seen_by),
                    ..
                },
            ) = (outcome, &p.source)
            {
                s.core.secrets.push(SecretDraw {
                    deck,
                    card,
                    seen_by: *seen_by,
                    revealed: false,
                });
            }
            if let Outcome::Card { deck, card } = outcome {
                let left = &mut s.core.decks[deck as usize];
                if let Some(i) = left.iter().position(|&c| c == card) {
                    left.remove(i);
                }
            }
            if p.got.len() < p.needed as usize {
                return Ok(());
            }
            let p = s.core.chance.take().expect("checked above");
            let values: rhai::Array = p.got.iter().map(|o| g.outcome_value(*o)).collect();
            g.run(s, &p.then, (values,))?;
            g.settle(s)
        })
    }

    /// Payoffs, 1 for the winner and -1 for the others; 0 for all otherwise.
    pub fn returns(&self, state: &State) -> Vec<f64> {
        state.returns()
    }

    // ----- hidden information ---------------------------------------------

    /// A state that `viewer` cannot tell from `state`: every card dealt in
    /// secret to another seat and not yet revealed is replaced by one drawn
    /// at random from the cards `viewer` cannot place, and the game is
    /// replayed. `None` views as a spectator (every secret resampled).
    ///
    /// Bots that must not peek (information-set search) decide on such
    /// states only. If a resampled world makes a past action illegal, another
    /// is drawn; after a few failures this is an error, never the truth.
    pub fn determinize<R: rand::Rng + ?Sized>(
        &self,
        state: &State,
        viewer: Option<Seat>,
        rng: &mut R,
    ) -> Result<State, GameError> {
        let hidden: Vec<usize> = (0..state.core.secrets.len())
            .filter(|&i| {
                let s = &state.core.secrets[i];
                !s.revealed && Some(s.seen_by) != viewer
            })
            .collect();
        if hidden.is_empty() {
            return Ok(state.clone());
        }
        for _attempt in 0..8 {
            // The cards the viewer cannot place: the hidden ones and the
            // undealt ones, per deck.
            let mut swap: Vec<(usize, u16)> = Vec::with_capacity(hidden.len());
            let mut pools: Vec<Vec<u16>> = state.core.decks.clone();
            for &i in &hidden {
                let s = &state.core.secrets[i];
                pools[s.deck as usize].push(s.card);
            }
            // In a fixed order, so that the world drawn depends on what the
            // viewer knows and on the generator only, never on the truth.
            for p in &mut pools {
                p.sort_unstable();
            }
            for &i in &hidden {
                let pool = &mut pools[state.core.secrets[i].deck as usize];
                let k = rng::below(rng, pool.len() as u32) as usize;
                swap.push((i, pool.swap_remove(k)));
            }
            if let Ok(s) = self.replay_with(state, &swap) {
                return Ok(s);
            }
        }
        // Never fall back to the truth: that would leak what is hidden.
        Err(GameError::Rules(format!(
            "no redeal of the hidden cards fits what {} has seen (8 tries)",
            viewer.map_or("a spectator".to_string(), |v| format!("P{}", v + 1))
        )))
    }

    /// Replays `state`'s history with secret draw `i` giving card `c` for
    /// every `(i, c)` in `swap`.
    fn replay_with(&self, state: &State, swap: &[(usize, u16)]) -> Result<State, GameError> {
        let mut s = self.new_game(state.core.seats)?;
        let mut secret_index = 0;
        for step in state.history.to_vec() {
            match step {
                Step::Decision(a) => self.apply_action(&mut s, a)?,
                Step::Chance(mut o) => {
                    if let Some(ChanceSource::Deck {
                        visible_to: Some(_), ..
                    }) = s.core.chance.as_ref().map(|p| &p.source)
                    {
                        if let (Some(&(_, card)), Outcome::Card { deck, .. }) =
                            (swap.iter().find(|(i, _)| *i == secret_index), o)
                        {
                            o = Outcome::Card { deck, card };
                        }
                        secret_index += 1;
                    }
                    self.apply_outcome(&mut s, o)?;
                }
            }
        }
        Ok(s)
    }

    // ----- notation ------------------------------------------------------

    /// The canonical text of an action, without the seat.
    pub fn action_text(&self, action: &Action) -> String {
        let mut s = String::new();
        match self.variant.actions.get(action.kind as usize) {
            Some(def) => def.template.write(action, &mut s),
            None => s.push('?'),
        }
        s
    }

    pub fn texts(&self, actions: &[Action]) -> Vec<String> {
        actions.iter().map(|a| self.action_text(a)).collect()
    }

    /// Parses canonical action text (tokens may be separated by any space).
    pub fn parse_action(&self, text: &str) -> Option<Action> {
        let norm = normalize(text);
        self.variant
            .actions
            .iter()
            .enumerate()
            .find_map(|(i, def)| def.template.parse(i as u16, &norm))
    }

    /// The text of a chance outcome, as written in records.
    pub fn outcome_text(&self, outcome: Outcome) -> String {
        match outcome {
            Outcome::Face(f) => f.to_string(),
            Outcome::Card { deck, card } => self.variant.decks[deck as usize].cards[card as usize].id.clone(),
        }
    }

    /// Parses an outcome of the pending chance event.
    pub fn parse_outcome(&self, state: &State, text: &str) -> Result<Outcome, GameError> {
        let Some(p) = &state.core.chance else {
            return Err(GameError::NoChanceDue {
                expected: self.decision_expectation(state),
            });
        };
        let bad = |expected: String| GameError::BadOutcome {
            text: text.to_string(),
            expected,
        };
        match p.source {
            ChanceSource::Dice { sides } => {
                let ok = !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
                match text.parse::<u32>() {
                    Ok(f) if ok && (1..=sides).contains(&f) => Ok(Outcome::Face(f)),
                    _ => Err(bad(format!("a die face 1..={sides}"))),
                }
            }
            ChanceSource::Deck { deck, .. } => {
                let d = &self.variant.decks[deck];
                match d.card_index(text) {
                    Some(c) if state.core.decks[deck].contains(&(c as u16)) => Ok(Outcome::Card {
                        deck: deck as u16,
                        card: c as u16,
                    }),
                    Some(_) => Err(bad(format!(
                        "a card still in deck '{}' ('{text}' was already dealt)",
                        d.name
                    ))),
                    None => {
                        let left: Vec<&str> = state.core.decks[deck]
                            .iter()
                            .map(|&c| d.cards[c as usize].id.as_str())
                            .collect();
                        Err(bad(format!("a card of deck '{}': {}", d.name, left.join(", "))))
                    }
                }
            }
        }
    }

    /// What the pending chance event still needs, in words.
    pub fn chance_expectation(&self, state: &State) -> String {
        match &state.core.chance {
            None => "nothing".into(),
            Some(p) => {
                let left = p.needed as usize - p.got.len();
                match p.source {
                    ChanceSource::Dice { sides } => format!("{left} more die roll(s), 1..={sides}"),
                    ChanceSource::Deck { deck, .. } => {
                        format!("a card from deck '{}'", self.variant.decks[deck].name)
                    }
                }
            }
        }
    }

    /// Who decides next, in words.
    pub fn decision_expectation(&self, state: &State) -> String {
        match state.to_move() {
            ToMove::Decision(s) => format!("P{} decides next ({})", s + 1, self.step_name(state)),
            ToMove::Chance => format!("a chance outcome is due: {}", self.chance_expectation(state)),
            ToMove::Terminal => "the game is over".into(),
        }
    }

    /// The name of the current step.
    pub fn step_name(&self, state: &State) -> &str {
        state.core.step.map_or("setup", |i| &self.variant.steps[i].name)
    }

    // ----- views and output ---------------------------------------------

    /// The state summary as JSON: `status`, `winner`, `to_move`, then what
    /// the rule set's summary function returns for `viewer` (None: all).
    pub fn summary(&self, state: &State, viewer: Option<Seat>) -> Result<serde_json::Value, GameError> {
        use serde_json::{json, Value};
        let (status, winner) = match state.status() {
            Status::Ongoing => ("ongoing", Value::Null),
            Status::Won(s) => ("won", json!(format!("P{}", s + 1))),
            Status::Draw => ("draw", Value::Null),
        };
        let to_move = match state.to_move() {
            ToMove::Decision(s) => json!(format!("P{}", s + 1)),
            _ => Value::Null,
        };
        let mut obj = serde_json::Map::new();
        obj.insert("status".into(), json!(status));
        obj.insert("winner".into(), winner);
        obj.insert("to_move".into(), to_move);
        if let Some(f) = &self.variant.summary {
            let data = self.call_readonly(state, &f.name, (viewer.map_or(-1, |v| v as INT),))?;
            let value =
                serde_json::to_value(&data).map_err(|e| GameError::Rules(format!("summary is not plain data: {e}")))?;
            match value {
                Value::Object(m) => obj.extend(m),
                Value::Null => {}
                other => {
                    return Err(GameError::Rules(format!(
                        "summary must return an object map, not {other}"
                    )))
                }
            }
        }
        Ok(order_keys(Value::Object(obj), &self.variant.key_order))
    }

    /// The rule set's picture of the state for `viewer` (None: all).
    pub fn render(&self, state: &State, viewer: Option<Seat>) -> Result<String, GameError> {
        match &self.variant.render {
            Some(f) => Ok(self
                .call_readonly(state, &f.name, (viewer.map_or(-1, |v| v as INT),))?
                .to_string()),
            None => Ok(self.summary(state, viewer)?.to_string()),
        }
    }

    /// How good `state` is for `seat`, by the variant's evaluate function
    /// (0 when it declares none).
    pub fn evaluate(&self, state: &State, seat: Seat) -> Result<f64, GameError> {
        let Some(f) = &self.variant.evaluate else {
            return Ok(0.0);
        };
        let v = self.call_readonly(state, &f.name, (seat as INT,))?;
        v.as_float()
            .or_else(|_| v.as_int().map(|i| i as f64))
            .map_err(|t| GameError::Rules(format!("{}() must return a number, not {t}", f.name)))
    }

    /// The labels of a finished game (e.g. the winner's card), by the
    /// variant's labels function; empty when it declares none.
    pub fn labels(&self, state: &State) -> Result<Vec<(String, String)>, GameError> {
        let Some(f) = &self.variant.labels else {
            return Ok(Vec::new());
        };
        let v = self.call_readonly(state, &f.name, ())?;
        let map = v
            .try_cast::<Map>()
            .ok_or_else(|| GameError::Rules(format!("{}() must return a map of label -> text", f.name)))?;
        Ok(map.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    /// The checks of every declared invariant: `(name, message)` for each one
    /// that does not hold.
    pub fn broken_invariants(&self, state: &State) -> Result<Vec<(String, String)>, GameError> {
        let mut out = Vec::new();
        for inv in &self.variant.invariants {
            let r = self.call_readonly(state, &inv.check.name, ())?;
            if let Some(broken) = Self::invariant_result(&inv.name, &inv.doc, &r) {
                out.push(broken);
            }
        }
        Ok(out)
    }

    /// [`Game::broken_invariants`] for the one invariant `name`.
    pub fn broken_invariant(&self, state: &State, name: &str) -> Result<Vec<(String, String)>, GameError> {
        let Some(inv) = self.variant.invariants.iter().find(|i| i.name == name) else {
            return Ok(Vec::new());
        };
        let r = self.call_readonly(state, &inv.check.name, ())?;
        Ok(Self::invariant_result(&inv.name, &inv.doc, &r).into_iter().collect())
    }

    /// Reads an invariant check's answer: true holds; false or a message is
    /// a break; anything else (a check that forgot to return) is a break too,
    /// so that a broken check cannot pass silently.
    fn invariant_result(name: &str, doc: &str, r: &Dynamic) -> Option<(String, String)> {
        match r.as_bool() {
            Ok(true) => None,
            Ok(false) => Some((name.to_string(), doc.to_string())),
            Err(_) if r.is_string() => Some((name.to_string(), r.to_string())),
            Err(t) => Some((
                name.to_string(),
                format!("the check returned {t}, not true or a message"),
            )),
        }
    }

    /// The value of a declared statistic counter.
    pub fn stat(&self, state: &State, name: &str) -> Option<i64> {
        let i = self.variant.stats.iter().position(|(n, _)| n == name)?;
        state.core.stats.get(i).copied()
    }

    /// Starts (or stops, forgetting the counts) profiling which script
    /// functions and card hooks run, and what they cost.
    pub fn track_calls(&self, on: bool) {
        *self.info.profile.borrow_mut() = on.then(Default::default);
    }

    /// The calls since `track_calls(true)`, by function name (card hooks as
    /// `card ID: HOOK`).
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.profile().into_iter().map(|(name, p)| (name, p.calls)).collect()
    }

    /// What each function cost since `track_calls(true)` (or since
    /// [`Game::profiled`] built the game), by name as in [`Game::calls`].
    pub fn profile(&self) -> BTreeMap<String, FunctionProfile> {
        self.info.profile.borrow().clone().unwrap_or_default()
    }

    /// Every function the engine may call for this variant, and every hook
    /// a card script defines: what coverage is measured against.
    pub fn known_functions(&self) -> Vec<String> {
        let v = &self.variant;
        let mut out: Vec<String> = Vec::new();
        out.extend(v.setup.iter().map(|f| f.name.clone()));
        for s in &v.steps {
            out.push(s.legal.name.clone());
            out.extend(s.enter.iter().map(|f| f.name.clone()));
        }
        out.extend(v.actions.iter().map(|a| a.apply.name.clone()));
        out.extend(v.on_turn_start.iter().chain(&v.on_turn_end).map(|f| f.name.clone()));
        out.extend(v.invariants.iter().map(|i| i.check.name.clone()));
        if let Some(cards) = self.info.card_scripts.get() {
            for (d, deck) in v.decks.iter().enumerate() {
                for (c, card) in deck.cards.iter().enumerate() {
                    if let Some(script) = &cards[d][c] {
                        for hook in script.fn_files.keys().filter(|h| deck.hooks.contains_key(*h)) {
                            out.push(format!("card {}: {hook}", card.id));
                        }
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    // ----- machinery -----------------------------------------------------

    fn outcome_value(&self, o: Outcome) -> Dynamic {
        match o {
            Outcome::Face(f) => Dynamic::from_int(f as INT),
            Outcome::Card { .. } => Dynamic::from(self.outcome_text(o)),
        }
    }

    fn check_outcome(&self, state: &State, outcome: Outcome) -> Result<(), GameError> {
        let Some(p) = &state.core.chance else {
            return Err(match state.to_move() {
                ToMove::Terminal => GameError::GameOver,
                _ => GameError::NoChanceDue {
                    expected: self.decision_expectation(state),
                },
            });
        };
        let ok = match (p.source.clone(), outcome) {
            (ChanceSource::Dice { sides }, Outcome::Face(f)) => (1..=sides).contains(&f),
            (ChanceSource::Deck { deck, .. }, Outcome::Card { deck: d, card }) => {
                deck == d as usize && state.core.decks[deck].contains(&card)
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(GameError::BadOutcome {
                text: self.outcome_text(outcome),
                expected: self.chance_expectation(state),
            })
        }
    }

    fn reset_ctx(&self) {
        let mut c = self.ctx.borrow_mut();
        c.collecting = false;
        c.enter = None;
        c.end_turn = false;
        c.start_turns = None;
        c.legal.clear();
    }

    /// Runs `f`; on error, restores the state (when a backup is kept) and
    /// forgets queued requests.
    fn transaction(
        &self,
        state: &mut State,
        backup: Backup,
        f: impl FnOnce(&Game, &mut State) -> Result<(), GameError>,
    ) -> Result<(), GameError> {
        if state.is_terminal() {
            return Err(GameError::GameOver);
        }
        let saved = match backup {
            Backup::Keep => Some(state.clone()),
            Backup::None => None,
        };
        self.reset_ctx();
        let r = f(self, state);
        if r.is_err() {
            if let Some(saved) = saved {
                *state = saved;
            }
            self.reset_ctx();
        }
        r
    }

    /// Calls a script function with the state's data as `this`.
    fn call(&self, state: &mut State, name: &str, args: impl FuncArgs) -> Result<Dynamic, GameError> {
        self.ctx.borrow_mut().core = std::mem::take(&mut state.core);
        let options = CallFnOptions::new()
            .eval_ast(false)
            .rewind_scope(true)
            .bind_this_ptr(&mut state.data);
        let result = self.info.measured(
            || name.to_string(),
            || {
                self.engine
                    .call_fn_with_options::<Dynamic>(options, &mut Scope::new(), &self.compiled.ast, name, args)
            },
        );
        state.core = std::mem::take(&mut self.ctx.borrow_mut().core);
        result.map_err(|e| script::script_error(&self.variant, &self.compiled.fn_files, name, *e).into())
    }

    /// Calls a script function for its effect on the state.
    fn run(&self, state: &mut State, name: &str, args: impl FuncArgs) -> Result<(), GameError> {
        self.call(state, name, args).map(drop)
    }

    /// Calls a script function on a copy: for queries that must not change
    /// the state (summary, render, invariants).
    fn call_readonly(&self, state: &State, name: &str, args: impl FuncArgs) -> Result<Dynamic, GameError> {
        let mut scratch = state.clone();
        let r = self.call(&mut scratch, name, args);
        self.reset_ctx();
        r
    }

    /// Carries out queued requests until the state waits for a decision or
    /// chance, or the game is over.
    fn settle(&self, state: &mut State) -> Result<(), GameError> {
        for _ in 0..MAX_TRANSITIONS {
            if self.variant.last_standing && state.core.seats > 1 && !state.is_terminal() {
                let mut in_play = (0..state.core.seats).filter(|&s| !state.core.out[s]);
                match (in_play.next(), in_play.next()) {
                    (None, _) => state.core.status.0 = Status::Draw,
                    (Some(one), None) => state.core.status.0 = Status::Won(one),
                    _ => {}
                }
            }
            if state.is_terminal() {
                state.core.actor = None;
                state.core.chance = None;
                self.reset_ctx();
                return Ok(());
            }
            let (start, end_turn, enter) = {
                let mut c = self.ctx.borrow_mut();
                (c.start_turns.take(), std::mem::take(&mut c.end_turn), c.enter.take())
            };
            if let Some(seat) = start {
                state.core.active = Some(seat);
                state.core.turn = 1;
                self.begin_turn(state)?;
            } else if end_turn {
                self.end_turn(state)?;
            } else if let Some(step) = enter {
                self.enter_step(state, step)?;
            } else {
                break;
            }
        }
        if !state.is_terminal() && state.core.chance.is_none() && state.core.actor.is_none() {
            return Err(GameError::Rules(format!(
                "nobody is to move at step '{}': the scripts neither named a seat nor asked for chance",
                self.step_name(state)
            )));
        }
        if self.ctx.borrow().enter.is_some() || self.ctx.borrow().end_turn {
            return Err(GameError::Rules(format!(
                "more than {MAX_TRANSITIONS} step changes in one action: do the steps loop?"
            )));
        }
        Ok(())
    }

    fn begin_turn(&self, state: &mut State) -> Result<(), GameError> {
        state.core.actor = None;
        self.ctx.borrow_mut().enter = Some(self.variant.turn_steps[0]);
        if let Some(f) = &self.variant.on_turn_start {
            self.run(state, &f.name, ())?;
        }
        Ok(())
    }

    fn end_turn(&self, state: &mut State) -> Result<(), GameError> {
        self.ctx.borrow_mut().enter = None;
        if let Some(f) = &self.variant.on_turn_end {
            self.run(state, &f.name, ())?;
            let mut c = self.ctx.borrow_mut();
            c.enter = None;
            c.end_turn = false;
        }
        if state.is_terminal() {
            return Ok(());
        }
        if let Some(limit) = self
            .variant
            .max_turns
            .as_deref()
            .and_then(|p| self.variant.int_param(p))
        {
            if state.core.turn as i64 >= limit {
                state.core.status.0 = Status::Draw;
                return Ok(());
            }
        }
        let n = state.core.seats;
        let from = state.core.active.unwrap_or(0);
        let next = (1..=n).map(|k| (from + k) % n).find(|&s| !state.core.out[s]);
        let Some(next) = next else {
            state.core.status.0 = Status::Draw;
            return Ok(());
        };
        state.core.active = Some(next);
        state.core.turn += 1;
        self.begin_turn(state)
    }

    fn enter_step(&self, state: &mut State, step: usize) -> Result<(), GameError> {
        state.core.step = Some(step);
        let def = &self.variant.steps[step];
        if def.actor == Actor::Active {
            state.core.actor = state.core.active;
        }
        if let Some(f) = &def.enter {
            self.run(state, &f.name, ())?;
        }
        Ok(())
    }
}

/// Orders object keys: those in `order` first, in that order, then the rest
/// as they came. Applies at every depth.
fn order_keys(v: serde_json::Value, order: &[String]) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().map(|(k, v)| (k, order_keys(v, order))).collect();
            entries.sort_by_key(|(k, _)| order.iter().position(|o| o == k).unwrap_or(usize::MAX));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|x| order_keys(x, order)).collect()),
        other => other,
    }
}
