//! [`Game`]: the small, stable core API every tool is built on, after
//! OpenSpiel's `State`: who moves, legal actions, apply, chance outcomes,
//! terminal status and returns, a player's view.
//!
//! A `Game` is a variant with its rules ready to run: the turn machinery
//! (settling, turns, steps, chance, transactions, determinizing, notation)
//! over a [`Rules`], the interpreted or the compiled scripts. It is cheap to
//! query and not `Send` (Rhai values are not); parallel tools build one per
//! worker thread from a shared [`Variant`].

use crate::ctx::Ctx;
use crate::error::{Diagnostic, GameError, LoadError};
use crate::notation::normalized;
use crate::rng;
use crate::rules::{Data, Entry, FunctionProfile, Reply, Rules};
use crate::state::{
    next_in_play, Action, ChanceSource, Core, History, Outcome, Seat, SecretDraw, SecretRoll, State, Status,
    StatusCell, Step, ToMove,
};
use crate::variant::{Actor, FnRef, ScoreSum, Variant};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasherDefault;
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

/// The error of the engine's inner steps (settling, entering steps,
/// turns, rule calls): a [`GameError`] behind one pointer, so that the
/// `Result` every layer of every step passes back fits a register
/// instead of being written to memory and read back at each `?` (the
/// error path is cold; the public API unboxes it).
type Fault = Box<GameError>;

/// What an inner step returns.
type Done = Result<(), Fault>;

/// A [`Fault`] made from any error of a lower layer, out of line.
#[cold]
#[inline(never)]
fn fault(e: impl Into<GameError>) -> Fault {
    Box::new(e.into())
}

pub struct Game {
    pub(crate) variant: Arc<Variant>,
    rules: Box<dyn Rules>,
    /// What a rule call acts on: the state's core is moved in for the call.
    pub(crate) ctx: RefCell<Ctx>,
    /// True while a failed step runs again in the rules' diagnostic mode
    /// ([`Game::with_calls`]): its own failures are not diagnosed again.
    diagnosing: std::cell::Cell<bool>,
    /// The rollback copy of the last transactional step, kept so that the
    /// next one copies into its vectors instead of allocating afresh.
    spare: RefCell<Option<State>>,
    /// Actions whose text is known to parse back to them ([`Game::check_texts`]):
    /// a text depends only on the variant, so each is checked once.
    round_trips: RefCell<HashSet<Action, BuildHasherDefault<ActionHasher>>>,
    /// The legal list sorted by [`Game::check_texts`], kept between calls.
    sorted_scratch: RefCell<Vec<Action>>,
    /// The `[end] max_turns` parameter's value, looked up once (the variant
    /// cannot change under a game; every turn's end reads it).
    max_turns: Option<i64>,
    /// The state right after setup, by seat count. Setup depends on nothing
    /// but the variant and the seat count (chance comes later, as chance
    /// events), so every later game of that size starts from a copy: a
    /// rule call (for Rhai, thousands of operations) becomes a copy.
    set_up: RefCell<Vec<Option<State>>>,
    /// Calls are being counted ([`Game::track_calls`]): setup then runs for
    /// every game, so that it is counted.
    tracking: std::cell::Cell<bool>,
}

/// A hasher for the set of checked actions: the fuzzer looks up every legal
/// action at every decision, and the keys are the engine's own small
/// integers, so a multiply-rotate mix (as rustc's FxHash) does where the
/// standard SipHash (built against chosen keys) would cost more than the
/// rest of the check.
#[derive(Default)]
pub struct ActionHasher(u64);

impl ActionHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for ActionHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(n as u64);
    }

    fn write_u16(&mut self, n: u16) {
        self.add(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.add(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

/// Builds games like the one it came from ([`Game::forker`]); it may be
/// sent to, and used on, any thread.
#[derive(Clone)]
pub struct GameForker {
    variant: Arc<Variant>,
    rules: crate::rules::RulesMaker,
}

impl GameForker {
    pub fn game(&self) -> Result<Game, String> {
        let rules = (self.rules)()?;
        Game::from_rules_boxed(self.variant.clone(), rules).map_err(|e| e.to_string())
    }
}

/// How many times a failed step may run in diagnostic mode (see
/// [`Rules::diagnose`]).
const DIAGNOSTIC_RUNS: usize = 2;

impl Game {
    /// A game of `variant` played by `rules` (see `rulesmith_rhai::interpreted`):
    /// every function the variant's data names must exist with its arity.
    pub fn from_rules(variant: impl Into<Arc<Variant>>, rules: impl Rules + 'static) -> Result<Game, LoadError> {
        Game::from_rules_boxed(variant, Box::new(rules))
    }

    /// [`Game::from_rules`] for rules chosen at run time (an engine picked
    /// by a flag, compiled rules found in a registry).
    pub fn from_rules_boxed(variant: impl Into<Arc<Variant>>, rules: Box<dyn Rules>) -> Result<Game, LoadError> {
        let variant: Arc<Variant> = variant.into();
        let max_turns = variant.max_turns.as_deref().and_then(|p| variant.int_param(p));
        let game = Game {
            variant,
            rules,
            ctx: RefCell::new(Ctx::default()),
            diagnosing: std::cell::Cell::new(false),
            spare: RefCell::new(None),
            round_trips: RefCell::new(HashSet::default()),
            sorted_scratch: RefCell::new(Vec::new()),
            max_turns,
            set_up: RefCell::new(Vec::new()),
            tracking: std::cell::Cell::new(false),
        };
        let problems = game.check_references();
        if problems.is_empty() {
            Ok(game)
        } else {
            Err(LoadError::new(problems))
        }
    }

    /// Whether a person watches this game (`rulesmith play`): then the
    /// lines the rules `narrate` are kept for [`Game::take_narration`], and
    /// the `show_moves` native is true, so a render may label the moves.
    /// Off by default; it never changes what the rules decide.
    pub fn set_watched(&self, on: bool) {
        let mut c = self.ctx.borrow_mut();
        c.watched = on;
        c.narration.clear();
    }

    /// The lines the rules narrated (`narrate`) in the applies since the
    /// last call, oldest first: what a decision or a chance outcome did. A
    /// failed apply leaves none; queries (legal actions, summary, render)
    /// never narrate. Bots that look ahead on this `Game` narrate too, so
    /// take (and drop) the lines before the apply you want told.
    pub fn take_narration(&self) -> Vec<String> {
        std::mem::take(&mut self.ctx.borrow_mut().narration)
    }

    /// A recipe for more games like this one (the same variant and
    /// rules), to be built on other threads: a `Game` itself stays on the
    /// thread that made it. `None` when the rules cannot be rebuilt.
    pub fn forker(&self) -> Option<GameForker> {
        Some(GameForker {
            variant: self.variant.clone(),
            rules: self.rules.maker()?,
        })
    }

    /// The rules' engine, "interpreted" or "compiled".
    pub fn engine_name(&self) -> &'static str {
        self.rules.engine_name()
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
        let signatures: HashSet<(String, usize)> = self.rules.signatures().into_iter().collect();
        let mut out = Vec::new();
        for (f, arity, what) in wanted {
            if !signatures.contains(&(f.name.clone(), arity)) {
                let found: Vec<String> = signatures
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
        self.check_players(players)?;
        if let Some(state) = self.kept_setup(players).as_deref() {
            return Ok(state.clone());
        }
        self.set_up_game(players)
    }

    /// [`Game::new_game`] into `state`, reusing its allocations: what a
    /// loop of playouts calls between games. On an error `state` is left
    /// as it was.
    pub fn new_game_into(&self, players: usize, state: &mut State) -> Result<(), GameError> {
        self.check_players(players)?;
        match self.kept_setup(players).as_deref() {
            Some(kept) => state.clone_from(kept),
            None => *state = self.set_up_game(players)?,
        }
        Ok(())
    }

    fn check_players(&self, players: usize) -> Result<(), GameError> {
        let p = self.variant.players;
        if players < p.min || players > p.max {
            return Err(GameError::Players {
                seats: players,
                min: p.min,
                max: p.max,
            });
        }
        Ok(())
    }

    /// Whether a new game may start from the kept result of setup: not
    /// when a person watches (setup runs for what it narrates, and the
    /// rules may render differently then), nor while calls are counted.
    fn reuses_setup(&self) -> bool {
        !self.tracking.get() && !self.ctx.borrow().watched
    }

    /// The kept result of setup for `players` seats, if it may be used.
    fn kept_setup(&self, players: usize) -> Option<std::cell::Ref<'_, State>> {
        if !self.reuses_setup() {
            return None;
        }
        std::cell::Ref::filter_map(self.set_up.borrow(), |kept| kept.get(players)?.as_ref()).ok()
    }

    /// Runs setup on a blank game of `players` seats (checked), and keeps
    /// its result for later games when that is allowed.
    fn set_up_game(&self, players: usize) -> Result<State, GameError> {
        let set_up = |g: &Game, s: &mut State| {
            g.reset_ctx();
            g.run(s, Entry::Setup)?;
            g.settle(s)
        };
        let mut state = self.blank_state(players);
        let r = set_up(self, &mut state);
        // Only a failed setup needs the state before it, and that state is
        // made again rather than kept.
        self.with_calls(r, |g| Some(g.blank_state(players)), set_up)
            .map_err(|e| *e)?;
        if self.reuses_setup() {
            let mut kept = self.set_up.borrow_mut();
            if kept.len() <= players {
                kept.resize(players + 1, None);
            }
            kept[players] = Some(state.clone());
        }
        Ok(state)
    }

    /// The state of a game of `players` seats before its setup runs.
    fn blank_state(&self, players: usize) -> State {
        let core = Core {
            seats: players,
            out: vec![false; players],
            active: None,
            actor: None,
            step: None,
            turn: 0,
            status: StatusCell(Status::Ongoing),
            chance: None,
            // Every copy in its deck; the places of piles start empty.
            decks: self
                .variant
                .decks
                .iter()
                .map(|d| if d.pile.is_some() { Vec::new() } else { d.full_pile() })
                .collect(),
            stats: vec![0; self.variant.stats.len()],
            secrets: Vec::new(),
            secret_decisions: Vec::new(),
            round: 0,
            secret_rolls: Vec::new(),
            scores: if self.variant.scores.is_some() {
                vec![0; players]
            } else {
                Vec::new()
            },
            memo: Default::default(),
        };
        State {
            core: Box::new(core),
            data: self.rules.new_data(),
            history: History::default(),
        }
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
        let result = self.run_legal(state);
        let mut c = self.ctx.borrow_mut();
        if result.is_ok() {
            c.legal.expand_into(out);
        }
        c.legal.clear();
        result.map_err(|e| *e)
    }

    /// Lists the legal actions in factored form ([`crate::legal::Legal`]) and builds only
    /// the one `pick` chooses by its index, given how many there are: what
    /// random playouts and rollouts need. Returns that action and the count.
    ///
    /// # Panics
    /// If `pick` returns an index past the count.
    pub fn pick_legal(
        &self,
        state: &mut State,
        pick: impl FnOnce(usize) -> usize,
    ) -> Result<(Action, usize), GameError> {
        self.picked(state, pick).map_err(|e| *e)
    }

    /// [`Game::pick_legal`], its error boxed. The list stays in the
    /// context: the next listing, or any failed step, clears it first.
    #[inline]
    fn picked(&self, state: &mut State, pick: impl FnOnce(usize) -> usize) -> Result<(Action, usize), Fault> {
        self.run_legal(state)?;
        let c = self.ctx.borrow();
        let n = c.legal.len();
        Ok((c.legal.get(pick(n)), n))
    }

    /// [`Game::pick_legal`] then [`Game::apply_scratch`], in one step: the
    /// step of random playouts and rollouts. `chosen` learns the action
    /// and how many there were before the action is applied (so that a
    /// record holds the step that failed). Applying skips the
    /// transaction's checks and its reset of the rules' context: the
    /// listing has just left the context clean, the game not over and the
    /// action legal.
    pub fn pick_and_apply_scratch(
        &self,
        state: &mut State,
        pick: impl FnOnce(usize) -> usize,
        chosen: impl FnOnce(&Action, usize),
    ) -> Result<(), Box<GameError>> {
        let (action, n) = self.picked(state, pick)?;
        chosen(&action, n);
        self.attempt(state, None, |g, s| g.decide(s, action))
    }

    /// Runs the current step's legal function, leaving its listing in
    /// `ctx.legal` for the caller to take (the next listing clears it).
    fn run_legal(&self, state: &mut State) -> Done {
        let seat = match state.to_move() {
            ToMove::Decision(s) => s,
            ToMove::Chance => {
                return Err(fault(GameError::ChanceDue {
                    expected: self.chance_expectation(state),
                }))
            }
            ToMove::Terminal => return Err(fault(GameError::GameOver)),
        };
        let Some(index) = state.core.step else {
            return Err(fault(GameError::Rules(format!(
                "P{} is to decide, but the scripts entered no step (call enter_step)",
                seat + 1
            ))));
        };
        {
            // A script that failed halfway through an `add_all` elsewhere
            // may have left a product unfinished.
            let mut c = self.ctx.borrow_mut();
            c.legal.clear();
            c.set_collecting(true);
            c.recalling.clear();
        }
        let result = self.run(state, Entry::Legal { step: index });
        let mut c = self.ctx.borrow_mut();
        c.set_collecting(false);
        c.recalling.clear();
        c.enter = None;
        c.end_turn = false;
        c.start_turns = None;
        if result.is_err() {
            drop(c);
            // The failed call may have changed the state: run it again from
            // the state its history leads to.
            return self.with_calls(result.map(drop), |g| g.replayed(state, 0), |g, s| g.run_legal(s));
        }
        if c.legal.is_empty() {
            return Err(fault(GameError::Rules(format!(
                "step '{}' offers P{} no legal action",
                self.variant.steps[index].name,
                seat + 1
            ))));
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
        self.apply_decision(state, action, Backup::Keep).map_err(|e| *e)
    }

    /// [`Game::apply_trusted`] for a state the caller throws away if this
    /// fails: playouts, simulations and bots' look-ahead. No backup is
    /// taken (copying the whole state costs a tenth of a random playout),
    /// so after an error the state is half-changed and must not be used.
    ///
    /// The error is boxed, as in every `_scratch` step: these run at every
    /// step of a playout, and a boxed error passes back in a register
    /// (`?` unboxes it into a [`GameError`]).
    pub fn apply_scratch(&self, state: &mut State, action: Action) -> Result<(), Box<GameError>> {
        self.apply_decision(state, action, Backup::None)
    }

    fn apply_decision(&self, state: &mut State, action: Action, backup: Backup) -> Done {
        if self.variant.actions.get(action.kind as usize).is_none() {
            return Err(fault(GameError::Rules(format!("no action kind {}", action.kind))));
        }
        self.transaction(state, backup, |g, s| g.decide(s, action))
    }

    /// A decision's work: noted, kept in the history, applied by the
    /// rules, settled.
    fn decide(&self, state: &mut State, action: Action) -> Done {
        self.note_decision(state);
        state.history.push(Step::Decision(action));
        self.run(
            state,
            Entry::Apply {
                kind: action.kind,
                values: action.values(),
            },
        )?;
        self.settle(state)
    }

    /// The possible outcomes of the pending chance event, with probabilities.
    pub fn chance_outcomes(&self, state: &State) -> Vec<(Outcome, f64)> {
        let Some(p) = &state.core.chance else {
            return Vec::new();
        };
        match p.source {
            ChanceSource::Dice { sides, .. } => (1..=sides).map(|f| (Outcome::Face(f), 1.0 / sides as f64)).collect(),
            ChanceSource::Deck { deck, .. } => {
                // Each card once, weighted by its copies left, in card order:
                // the copies counted per card index in one pass (a deck's
                // indices are few; no sorted copy of the pile, which a
                // Python loop paid at every chance node).
                let left = &state.core.decks[deck];
                let top = left.iter().max().map_or(0, |&c| c as usize + 1);
                let mut copies = smallvec::SmallVec::<[u32; 64]>::from_elem(0, top);
                for &c in left {
                    copies[c as usize] += 1;
                }
                copies
                    .iter()
                    .enumerate()
                    .filter(|&(_, &n)| n > 0)
                    .map(|(c, &n)| {
                        (
                            Outcome::Card {
                                deck: deck as u16,
                                card: c as u16,
                            },
                            n as f64 / left.len() as f64,
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
            ChanceSource::Dice { sides, .. } => Outcome::Face(rng::below(rng, sides) + 1),
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
        self.feed_outcome(state, outcome, Backup::Keep).map_err(|e| *e)
    }

    /// [`Game::apply_outcome`] for a state the caller throws away if this
    /// fails (see [`Game::apply_scratch`]).
    pub fn apply_outcome_scratch(&self, state: &mut State, outcome: Outcome) -> Result<(), Box<GameError>> {
        self.feed_outcome(state, outcome, Backup::None)
    }

    fn feed_outcome(&self, state: &mut State, outcome: Outcome, backup: Backup) -> Done {
        self.check_outcome(state, outcome).map_err(fault)?;
        let p = state.core.chance.as_ref().expect("checked above");
        if p.got.len() + 1 < p.needed as usize && !state.is_terminal() {
            // Not the event's last outcome: no script runs, nothing can
            // fail, so there is nothing to undo (most dice of a roll).
            Game::record_outcome(state, outcome);
            return Ok(());
        }
        self.transaction(state, backup, |g, s| {
            Game::record_outcome(s, outcome);
            let p = s.core.chance.take().expect("checked above");
            // A draw into a pile may have no continuation: the cards are
            // where the rules wanted them.
            if !p.then.is_empty() {
                let outcomes = p.outcomes_for_continuation(&s.core.out);
                g.run(
                    s,
                    Entry::Resume {
                        then: &p.then,
                        outcomes: &outcomes,
                    },
                )?;
            }
            g.settle(s)
        })
    }

    /// Notes a checked chance outcome: in the history, in the pending
    /// event, and (a card) out of its deck, as a secret when only one seat
    /// sees it.
    #[inline]
    fn record_outcome(s: &mut State, outcome: Outcome) {
        s.history.push(Step::Chance(outcome));
        let p = s.core.chance.as_mut().expect("checked by the caller");
        p.got.push(outcome);
        match (outcome, &p.source) {
            (
                Outcome::Card { deck, card },
                ChanceSource::Deck {
                    visible_to: Some(seen_by),
                    ..
                },
            ) => s.core.secrets.push(SecretDraw {
                deck,
                card,
                seen_by: *seen_by,
                revealed: false,
                at: (s.history.len() - 1) as u32,
            }),
            (
                Outcome::Face(_),
                ChanceSource::Dice {
                    visible_to: Some(seen_by),
                    ..
                },
            ) => s.core.secret_rolls.push(SecretRoll {
                seen_by: *seen_by,
                at: (s.history.len() - 1) as u32,
                revealed: false,
            }),
            _ => {}
        }
        if let Outcome::Card { deck, card } = outcome {
            let left = &mut s.core.decks[deck as usize];
            if let Some(i) = left.iter().position(|&c| c == card) {
                left.remove(i);
            }
            // A pile run out mid-draw is made again from its refill pile.
            if let Some(r) = p.refill {
                if left.is_empty() && p.got.len() < p.needed as usize {
                    let cards = std::mem::take(&mut s.core.decks[r as usize]);
                    s.core.decks[deck as usize].extend(cards);
                }
            }
            // Drawn into a pile (`draw_from`, a deal into hands): the card
            // lies there now; a deal's is the seat's own place.
            if let Some(into) = p.into {
                let place = match (p.deal, &p.source) {
                    (
                        Some(_),
                        ChanceSource::Deck {
                            visible_to: Some(seat), ..
                        },
                    ) => into as usize + seat,
                    _ => into as usize,
                };
                s.core.decks[place].push(card);
            }
        }
        // A deal: the next card goes to the next seat in play.
        if p.deal.is_some() {
            if let ChanceSource::Deck {
                visible_to: Some(seat), ..
            } = &mut p.source
            {
                if let Some(next) = next_in_play(&s.core.out, *seat) {
                    *seat = next;
                }
            }
        }
    }

    /// Payoffs at the end of the game: the seats' scores when the variant
    /// declares `[scores]`, else 1 for the winner and -1 for the others (0
    /// for all in a draw); 0 for all before the end.
    pub fn returns(&self, state: &State) -> Vec<f64> {
        state.returns()
    }

    /// [`Game::returns`] scaled to -1..=1 by the declared `[scores]` range
    /// (the lowest score -1, the highest 1), written into `out`: what the
    /// bots back up, so that every variant's results weigh alike against
    /// its `evaluate`. Win / lose / draw results are already in that range.
    pub fn unit_returns_into(&self, state: &State, out: &mut Vec<f64>) {
        out.clear();
        match &self.variant.scores {
            Some(range) if state.is_terminal() && !state.core.scores.is_empty() => {
                let width = (range.max - range.min) as f64;
                out.extend(
                    state
                        .core
                        .scores
                        .iter()
                        .map(|&v| 2.0 * (v - range.min) as f64 / width - 1.0),
                );
            }
            _ => state.returns_into(out),
        }
    }

    /// The final scores in words (`scores: P1 2, P2 -2`), for the closing
    /// comment of a record; none before the end or without `[scores]`.
    pub fn scores_text(&self, state: &State) -> Option<String> {
        if !state.is_terminal() || state.core.scores.is_empty() {
            return None;
        }
        Some(format!("scores: {}", scores_listed(state)))
    }

    /// [`Game::unit_returns_into`] as a new list.
    pub fn unit_returns(&self, state: &State) -> Vec<f64> {
        let mut out = Vec::with_capacity(state.core.seats);
        self.unit_returns_into(state, &mut out);
        out
    }

    /// At the end of a game, the declared sum of the scores holds (zero-
    /// or constant-sum games); a broken one is the rules' error, at the
    /// step that ended the game.
    fn check_final_scores(&self, state: &State) -> Result<(), GameError> {
        let Some(range) = &self.variant.scores else {
            return Ok(());
        };
        let want = match range.sum {
            ScoreSum::Zero => 0,
            ScoreSum::Constant(total) => total,
            ScoreSum::General => return Ok(()),
        };
        let sum: i64 = state.core.scores.iter().sum();
        if sum == want {
            return Ok(());
        }
        Err(GameError::Rules(format!(
            "the game ended with scores {} summing to {sum}, but [scores] declares sum = \"{}\" ({want})",
            scores_listed(state),
            if range.sum == ScoreSum::Zero {
                "zero"
            } else {
                "constant"
            }
        )))
    }

    // ----- saving ----------------------------------------------------------

    /// The state as JSON text (`core`, `data`, `history`), the script data
    /// through [`crate::Data::to_json`].
    pub fn save_state(&self, state: &State) -> Result<String, GameError> {
        if !state.history.is_kept() {
            return Err(GameError::Rules("cannot save a state that forgot its history".into()));
        }
        #[derive(serde::Serialize)]
        struct Saved<'a> {
            /// The variant's name: a state loaded into another variant's
            /// game is refused (its data would mean something else there).
            variant: &'a str,
            core: &'a Core,
            data: serde_json::Value,
            history: &'a History,
        }
        let saved = Saved {
            variant: &self.variant.name,
            core: &state.core,
            data: state.data.to_json(),
            history: &state.history,
        };
        serde_json::to_string(&saved).map_err(|e| GameError::Rules(e.to_string()))
    }

    /// A state saved by [`Game::save_state`], its data read back by the rules.
    pub fn load_state(&self, text: &str) -> Result<State, GameError> {
        #[derive(serde::Deserialize)]
        struct Saved {
            /// Absent in states saved before it was written.
            #[serde(default)]
            variant: Option<String>,
            core: Core,
            data: serde_json::Value,
            history: History,
        }
        let saved: Saved = serde_json::from_str(text).map_err(|e| GameError::Rules(e.to_string()))?;
        if let Some(v) = saved.variant.as_deref().filter(|v| *v != self.variant.name) {
            return Err(GameError::Rules(format!(
                "this state was saved by a game of variant '{v}', not of '{}'",
                self.variant.name
            )));
        }
        if saved.core.seats == 0 || saved.core.stats.len() != self.variant.stats.len() {
            return Err(GameError::Rules(format!(
                "this state does not fit variant '{}' ({} seats, {} counters; the variant declares {})",
                self.variant.name,
                saved.core.seats,
                saved.core.stats.len(),
                self.variant.stats.len()
            )));
        }
        Ok(State {
            core: Box::new(saved.core),
            data: self.rules.data_from_json(saved.data).map_err(GameError::Rules)?,
            history: saved.history,
        })
    }

    // Hidden information (secret decisions, determinizing) and rounds are in
    // `hidden.rs` and `rounds.rs`.

    // ----- notation ------------------------------------------------------

    /// The canonical text of an action, without the seat.
    /// Checks the notation of a legal list, as the fuzzer does at every
    /// decision: every action's text parses back to that action, and no
    /// action is listed twice (then no two share a text either: a text
    /// parses to one action only). Each action's round trip is checked
    /// once per `Game`, so a long run pays for texts only while new
    /// actions appear.
    pub fn check_texts(&self, legal: &[Action]) -> Result<(), String> {
        let mut known = self.round_trips.borrow_mut();
        for a in legal {
            if known.contains(a) {
                continue;
            }
            let text = self.action_text(a);
            if self.parse_action(&text) != Some(*a) {
                return Err(format!("'{text}' does not parse back to itself"));
            }
            known.insert(*a);
        }
        let mut sorted = self.sorted_scratch.borrow_mut();
        sorted.clear();
        sorted.extend_from_slice(legal);
        sorted.sort_unstable_by_key(|a| (a.kind, a.len, a.args));
        match sorted.windows(2).find(|w| w[0] == w[1]) {
            Some(w) => Err(format!("'{}' is listed twice", self.action_text(&w[0]))),
            None => Ok(()),
        }
    }

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
        let norm = normalized(text);
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
            ChanceSource::Dice { sides, .. } => {
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
                        let mut left: Vec<u16> = state.core.decks[deck].clone();
                        left.sort_unstable();
                        left.dedup();
                        let left: Vec<&str> = left.iter().map(|&c| d.cards[c as usize].id.as_str()).collect();
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
                    ChanceSource::Dice { sides, .. } => format!("{left} more die roll(s), 1..={sides}"),
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
        if !self.variant.piles.is_empty() {
            obj.insert("piles".into(), self.piles_seen(state, viewer));
        }
        if self.variant.summary.is_some() {
            let viewer = viewer.map_or(-1, |v| v as i64);
            let value = match self.call_readonly(state, Entry::Summary { viewer })? {
                Reply::Json(v) => v,
                Reply::Unit => Value::Null,
                Reply::Bool(b) => json!(b),
                Reply::Int(i) => json!(i),
                Reply::Float(f) => json!(f),
                Reply::Text(t) => json!(t),
                Reply::Other(t) => return Err(GameError::Rules(format!("summary is not plain data: {t}"))),
            };
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

    /// The declared piles as `viewer` sees them (None: what every seat
    /// sees): the card ids of a pile it sees, in the order they came, else
    /// how many cards it holds; a pile per seat as one entry per seat.
    fn piles_seen(&self, state: &State, viewer: Option<Seat>) -> serde_json::Value {
        use crate::variant::Visibility;
        let v = &self.variant;
        let place = |index: usize| -> serde_json::Value {
            let (visible, owner) = crate::piles::visibility(v, index);
            let sees = match visible {
                Visibility::Everyone => true,
                Visibility::Owner => owner.is_some() && owner == viewer,
                Visibility::Nobody => false,
            };
            let cards = &state.core.decks[index];
            if sees {
                let deck = &v.decks[index];
                serde_json::json!(cards.iter().map(|&c| &deck.cards[c as usize].id).collect::<Vec<_>>())
            } else {
                serde_json::json!(cards.len())
            }
        };
        let mut out = serde_json::Map::new();
        for p in &v.piles {
            let value = if p.per_seat {
                serde_json::Value::Array((0..state.core.seats).map(|s| place(p.first + s)).collect())
            } else {
                place(p.first)
            };
            out.insert(p.name.clone(), value);
        }
        serde_json::Value::Object(out)
    }

    /// The rule set's picture of the state for `viewer` (None: all).
    pub fn render(&self, state: &State, viewer: Option<Seat>) -> Result<String, GameError> {
        self.render_marked(state, viewer).map(|(text, _)| text)
    }

    /// [`Game::render`] with the labels the render drew on the board, each
    /// with the action text it stands for (the `mark` native; only when the
    /// game is watched, see [`Game::set_watched`]).
    pub fn render_marked(
        &self,
        state: &State,
        viewer: Option<Seat>,
    ) -> Result<(String, Vec<(String, String)>), GameError> {
        self.ctx.borrow_mut().marks.clear();
        let text = self.render_text(state, viewer);
        let marks = std::mem::take(&mut self.ctx.borrow_mut().marks);
        Ok((text?, marks))
    }

    fn render_text(&self, state: &State, viewer: Option<Seat>) -> Result<String, GameError> {
        match &self.variant.render {
            Some(_) => {
                let viewer = viewer.map_or(-1, |v| v as i64);
                Ok(match self.call_readonly(state, Entry::Render { viewer })? {
                    Reply::Text(t) => t,
                    Reply::Unit => String::new(),
                    Reply::Bool(b) => b.to_string(),
                    Reply::Int(i) => i.to_string(),
                    Reply::Float(f) => f.to_string(),
                    Reply::Json(v) => v.to_string(),
                    Reply::Other(t) => t,
                })
            }
            None => Ok(self.summary(state, viewer)?.to_string()),
        }
    }

    /// How good `state` is for `seat`, by the variant's evaluate function
    /// (0 when it declares none).
    pub fn evaluate(&self, state: &State, seat: Seat) -> Result<f64, GameError> {
        let Some(f) = &self.variant.evaluate else {
            return Ok(0.0);
        };
        match self.call_readonly(state, Entry::Evaluate { seat: seat as i64 })? {
            Reply::Float(x) if x.is_finite() => Ok(x),
            Reply::Float(x) => Err(GameError::Rules(format!(
                "{}() returned {x} for P{}: an evaluation must be a finite number",
                f.name,
                seat + 1
            ))),
            Reply::Int(i) => Ok(i as f64),
            other => Err(GameError::Rules(format!(
                "{}() must return a number, not {}",
                f.name,
                other.type_name()
            ))),
        }
    }

    /// The labels of a finished game (e.g. the winner's card), by the
    /// variant's labels function; empty when it declares none.
    pub fn labels(&self, state: &State) -> Result<Vec<(String, String)>, GameError> {
        let Some(f) = &self.variant.labels else {
            return Ok(Vec::new());
        };
        match self.call_readonly(state, Entry::Labels)? {
            Reply::Json(serde_json::Value::Object(map)) => Ok(map
                .into_iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect()),
            _ => Err(GameError::Rules(format!(
                "{}() must return a map of label -> text",
                f.name
            ))),
        }
    }

    /// The checks of every declared invariant: `(name, message)` for each one
    /// that does not hold.
    pub fn broken_invariants(&self, state: &State) -> Result<Vec<(String, String)>, GameError> {
        let mut out = Vec::new();
        for (index, inv) in self.variant.invariants.iter().enumerate() {
            let r = self.call_readonly(state, Entry::Invariant { index })?;
            if let Some(broken) = Self::invariant_result(&inv.name, &inv.doc, &r) {
                out.push(broken);
            }
        }
        Ok(out)
    }

    /// [`Game::broken_invariants`] for the one invariant `name`.
    pub fn broken_invariant(&self, state: &State, name: &str) -> Result<Vec<(String, String)>, GameError> {
        let Some(index) = self.variant.invariants.iter().position(|i| i.name == name) else {
            return Ok(Vec::new());
        };
        let inv = &self.variant.invariants[index];
        let r = self.call_readonly(state, Entry::Invariant { index })?;
        Ok(Self::invariant_result(&inv.name, &inv.doc, &r).into_iter().collect())
    }

    /// Reads an invariant check's answer: true holds; false or a message is
    /// a break; anything else (a check that forgot to return) is a break too,
    /// so that a broken check cannot pass silently.
    fn invariant_result(name: &str, doc: &str, r: &Reply) -> Option<(String, String)> {
        match r {
            Reply::Bool(true) => None,
            Reply::Bool(false) => Some((name.to_string(), doc.to_string())),
            Reply::Text(message) => Some((name.to_string(), message.clone())),
            other => Some((
                name.to_string(),
                format!("the check returned {}, not true or a message", other.type_name()),
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
        self.tracking.set(on);
        self.rules.track_calls(on);
    }

    /// The calls since `track_calls(true)`, by function name (card hooks as
    /// `card ID: HOOK`).
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.profile().into_iter().map(|(name, p)| (name, p.calls)).collect()
    }

    /// What each function cost since `track_calls(true)` (or since
    /// the game was built to profile), by name as in [`Game::calls`].
    pub fn profile(&self) -> BTreeMap<String, FunctionProfile> {
        self.rules.profile()
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
        out.extend(self.rules.card_hook_names());
        out.sort();
        out.dedup();
        out
    }

    // ----- machinery -----------------------------------------------------

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
            (ChanceSource::Dice { sides, .. }, Outcome::Face(f)) => (1..=sides).contains(&f),
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
        c.set_collecting(false);
        c.enter = None;
        c.end_turn = false;
        c.next_seat = None;
        c.start_turns = None;
        c.legal.clear();
        c.recalling.clear();
    }

    /// Runs `f`; on error, restores the state (when a backup is kept) and
    /// forgets queued requests.
    fn transaction(&self, state: &mut State, backup: Backup, f: impl Fn(&Game, &mut State) -> Done) -> Done {
        if state.is_terminal() {
            return Err(fault(GameError::GameOver));
        }
        let saved = match backup {
            Backup::Keep => Some(match self.spare.borrow_mut().take() {
                Some(mut spare) => {
                    spare.clone_from(state);
                    spare
                }
                None => state.clone(),
            }),
            Backup::None => None,
        };
        self.reset_ctx();
        self.attempt(state, saved, f)
    }

    /// [`Game::transaction`] past its checks, on a clean context: runs
    /// `f`, and on error restores `saved` (when given) and forgets queued
    /// requests.
    #[inline]
    fn attempt(&self, state: &mut State, saved: Option<State>, f: impl Fn(&Game, &mut State) -> Done) -> Done {
        let told = self.ctx.borrow().narration.len();
        let r = f(self, state);
        if r.is_ok() {
            if let Some(saved) = saved {
                *self.spare.borrow_mut() = Some(saved);
            }
            return r;
        }
        self.failed(state, saved, told, r, f)
    }

    /// The error path of [`Game::attempt`], out of line.
    #[cold]
    #[inline(never)]
    fn failed(
        &self,
        state: &mut State,
        saved: Option<State>,
        told: usize,
        r: Done,
        f: impl Fn(&Game, &mut State) -> Done,
    ) -> Done {
        let restored = saved.is_some();
        if let Some(saved) = saved {
            *state = saved;
        }
        self.reset_ctx();
        self.ctx.borrow_mut().narration.truncate(told);
        // Without a backup, the state before is the one its history
        // led to, less the step `f` added.
        self.with_calls(
            r,
            |g| match restored {
                true => Some(state.clone()),
                false => g.replayed(state, 1),
            },
            f,
        )
    }

    /// When `first` is a script error whose calls were lost
    /// ([`crate::ScriptError::calls_lost`]), runs `again` on a copy of the
    /// state `before` gives (the state before the failed work; `None` when it
    /// cannot be had) with the rules in diagnostic mode, up to
    /// [`DIAGNOSTIC_RUNS`] times, and reports its error instead when it is
    /// the same failure with its calls. Games are deterministic, so the run
    /// fails the same way; whatever it changes is thrown away.
    fn with_calls<T>(
        &self,
        first: Result<T, Fault>,
        before: impl FnOnce(&Game) -> Option<State>,
        again: impl Fn(&Game, &mut State) -> Result<T, Fault>,
    ) -> Result<T, Fault> {
        let lost = matches!(first.as_ref().map_err(|e| &**e), Err(GameError::Script(e)) if e.calls_lost);
        if !lost || self.diagnosing.get() {
            return first;
        }
        self.diagnosing.set(true);
        let told = self.ctx.borrow().narration.len();
        let mut found = None;
        if let Some(before) = before(self) {
            for _ in 0..DIAGNOSTIC_RUNS {
                self.rules.diagnose(true);
                self.reset_ctx();
                let mut s = before.clone();
                match again(self, &mut s).map_err(|e| *e) {
                    Err(GameError::Script(e)) if !e.calls_lost => {
                        found = Some(e);
                        break;
                    }
                    // The rules learnt where to stop the next run.
                    Err(GameError::Script(_)) => continue,
                    _ => break,
                }
            }
            self.rules.diagnose(false);
        }
        self.reset_ctx();
        self.ctx.borrow_mut().narration.truncate(told);
        self.diagnosing.set(false);
        match (first, found) {
            (Err(e), Some(d)) if matches!(&*e, GameError::Script(e) if d.message == e.message) => {
                Err(fault(GameError::Script(d)))
            }
            (first, _) => first,
        }
    }

    /// The state `state`'s history leads to, less its last `less` steps, or
    /// `None` when it cannot be replayed (a throwaway playout's state keeps
    /// no history: see [`State::forget_history`]).
    fn replayed(&self, state: &State, less: usize) -> Option<State> {
        self.replay_history(state, state.history.len().saturating_sub(less))
            .ok()
    }

    /// The state after the first `steps` steps of `state`'s history, played
    /// again from a new game of as many seats (games are deterministic, so
    /// it is the state `state` was then). An error when the history was
    /// forgotten ([`State::forget_history`]) or a step fails.
    pub fn replay_history(&self, state: &State, steps: usize) -> Result<State, GameError> {
        if !state.history.is_kept() {
            return Err(GameError::Rules(
                "the state keeps no history to replay (a playout's state forgets it)".into(),
            ));
        }
        let mut s = self.new_game(state.core.seats)?;
        for step in state.history.to_vec().into_iter().take(steps) {
            match step {
                Step::Decision(a) => self.apply_scratch(&mut s, a)?,
                Step::Chance(o) => self.apply_outcome_scratch(&mut s, o)?,
            }
        }
        Ok(s)
    }

    /// Calls an entry point of the rules on the state.
    fn call(&self, state: &mut State, entry: Entry<'_>) -> Result<Reply, Fault> {
        self.lend(state, |cx, data| self.rules.call(entry, cx, data))
    }

    /// Calls an entry point for its effect on the state; no reply is built
    /// ([`Rules::act`]).
    fn run(&self, state: &mut State, entry: Entry<'_>) -> Done {
        self.lend(state, |cx, data| self.rules.act(entry, cx, data))
    }

    /// Runs `rules` with the state's core lent to the rules' natives (moved
    /// into the `Ctx`) and its script data.
    #[inline]
    fn lend<T, E>(&self, state: &mut State, rules: impl FnOnce(&mut Ctx, &mut Data) -> Result<T, E>) -> Result<T, Fault>
    where
        GameError: From<E>,
    {
        let mut cx = self.ctx.borrow_mut();
        // The core is lent by swapping boxes: no copy of it either way.
        std::mem::swap(&mut cx.core, &mut state.core);
        let result = rules(&mut cx, &mut state.data);
        std::mem::swap(&mut cx.core, &mut state.core);
        result.map_err(fault)
    }

    /// Calls an entry point on a copy: for queries that must not change
    /// the state (summary, render, invariants).
    fn call_readonly(&self, state: &State, entry: Entry<'_>) -> Result<Reply, GameError> {
        let told = self.ctx.borrow().narration.len();
        // Rules that know the query only reads their data get it lent; the
        // core is always a copy (a native called by mistake changes that).
        let lent = {
            let mut cx = self.ctx.borrow_mut();
            cx.core.clone_from(&state.core);
            self.rules.call_query(entry, &mut cx, &state.data)
        };
        let r = match lent {
            Some(r) => r.map_err(fault),
            None => self.call(&mut state.clone(), entry),
        };
        self.reset_ctx();
        self.ctx.borrow_mut().narration.truncate(told);
        self.with_calls(r, |_| Some(state.clone()), |g, s| g.call(s, entry))
            .map_err(|e| *e)
    }

    /// Carries out queued requests until the state waits for a decision or
    /// chance, or the game is over.
    fn settle(&self, state: &mut State) -> Done {
        let mut exhausted = true;
        for _ in 0..MAX_TRANSITIONS {
            // What the last rule call asked for, taken in one borrow (a
            // game that ends drops the rest: see `reset_ctx` below).
            let (eliminated, start, end_turn, enter) = {
                let mut c = self.ctx.borrow_mut();
                let c = &mut *c;
                (
                    std::mem::take(&mut c.eliminated),
                    c.start_turns.take(),
                    std::mem::take(&mut c.end_turn),
                    c.enter.take(),
                )
            };
            // Until a seat is put out, as many are in play as before.
            if self.variant.last_standing && eliminated && state.core.seats > 1 && !state.is_terminal() {
                let mut in_play = (0..state.core.seats).filter(|&s| !state.core.out[s]);
                match (in_play.next(), in_play.next()) {
                    (None, _) => state.core.status.0 = Status::Draw,
                    (Some(one), None) => state.core.status.0 = Status::Won(one),
                    _ => {}
                }
            }
            if state.is_terminal() {
                self.check_final_scores(state).map_err(fault)?;
                state.core.actor = None;
                state.core.chance = None;
                self.reset_ctx();
                return Ok(());
            }
            let asked = if let Some(seat) = start {
                state.core.active = seat;
                state.core.turn = 1;
                self.begin_turn(state)?
            } else if end_turn {
                self.end_turn(state)?
            } else if let Some(step) = enter {
                self.enter_step(state, step)?
            } else {
                false
            };
            // No script ran, so nothing new was asked for: the next turn of
            // the loop would find nothing (most transitions end here).
            if !asked {
                exhausted = false;
                break;
            }
        }
        self.round_actor(state);
        if !state.is_terminal() && state.core.chance.is_none() && state.core.actor.is_none() {
            return Err(fault(GameError::Rules(self.round_over_hint(state).unwrap_or_else(
                || {
                    format!(
                        "nobody is to move at step '{}': the scripts neither named a seat nor asked for chance",
                        self.step_name(state)
                    )
                },
            ))));
        }
        // Stopped by the limit with a change of step still asked for.
        if exhausted && (self.ctx.borrow().enter.is_some() || self.ctx.borrow().end_turn) {
            return Err(fault(GameError::Rules(format!(
                "more than {MAX_TRANSITIONS} step changes in one action: do the steps loop?"
            ))));
        }
        Ok(())
    }

    // The transitions `settle` carries out. Each returns whether a script
    // ran (or the game ended), so that `settle` looks for new requests
    // only then.

    fn begin_turn(&self, state: &mut State) -> Result<bool, Fault> {
        state.core.actor = None;
        // The memo keeps listings within a turn only.
        state.core.memo.clear();
        let first = self.variant.turn_steps[0];
        if self.variant.on_turn_start.is_none() && !self.ctx.borrow().asks() {
            // Nothing else to carry out first: enter the step at once.
            return self.enter_step(state, first);
        }
        // The turn's first step, after what a turn-end script asked for (a
        // seat put out may end the game first) and unless the turn-start
        // script enters another.
        self.ctx.borrow_mut().enter = Some(first);
        if self.variant.on_turn_start.is_some() {
            self.run(state, Entry::TurnStart)?;
        }
        Ok(true)
    }

    fn end_turn(&self, state: &mut State) -> Result<bool, Fault> {
        self.ctx.borrow_mut().enter = None;
        // A turn-end script's step changes are dropped; what else it asked
        // for (a seat put out, the turns started anew) is carried out next.
        let ran = self.variant.on_turn_end.is_some();
        if ran {
            self.run(state, Entry::TurnEnd)?;
            let mut c = self.ctx.borrow_mut();
            c.enter = None;
            c.end_turn = false;
        }
        if state.is_terminal() {
            return Ok(true);
        }
        if let Some(limit) = self.max_turns {
            if state.core.turn as i64 >= limit {
                state.core.status.0 = Status::Draw;
                return Ok(true);
            }
        }
        // The seat the rules named (`end_turn_to`), if it is still in play
        // (a turn-end script may have put it out since).
        let named = self.ctx.borrow_mut().next_seat.take();
        if let Some(seat) = named.filter(|&s| !state.core.out[s]) {
            state.core.active = Some(seat);
        } else if let Some(from) = state.core.active {
            // Rounds (no active seat) follow each other without passing a turn.
            let Some(next) = next_in_play(&state.core.out, from) else {
                state.core.status.0 = Status::Draw;
                return Ok(true);
            };
            state.core.active = Some(next);
        }
        state.core.turn += 1;
        // `|| ran` adds nothing `begin_turn` does not see pending, but
        // without it the compiler lays out `settle` worse (2% more
        // instructions on `benches/floor`, which has no turn-end script).
        Ok(self.begin_turn(state)? || ran)
    }

    #[inline(always)]
    fn enter_step(&self, state: &mut State, step: usize) -> Result<bool, Fault> {
        state.core.step = Some(step);
        let def = &self.variant.steps[step];
        match def.actor {
            Actor::Active => state.core.actor = state.core.active,
            Actor::Every => self.begin_round(state),
            Actor::Script => {}
        }
        if def.enter.is_none() {
            return Ok(false);
        }
        self.run(state, Entry::Enter { step })?;
        Ok(true)
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

/// Every seat's score, in words: `P1 2, P2 -2`.
fn scores_listed(state: &State) -> String {
    let each: Vec<String> = state
        .core
        .scores
        .iter()
        .enumerate()
        .map(|(s, v)| format!("P{} {v}", s + 1))
        .collect();
    each.join(", ")
}
