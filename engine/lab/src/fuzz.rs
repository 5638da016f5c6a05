//! Rules fuzzing: random playouts that check every invariant after every
//! step, and shrink a failing game to a minimal record.
//!
//! A game is driven by a [`Tape`]: one index per decision (into the legal
//! actions) and one per chance event (into its outcomes, smallest first).
//! proptest generates tapes and, on a failure, shrinks them: entries are
//! removed (fewer decisions, fewer turns) and lowered toward 0 (the first
//! legal action, the smallest die). Past its end a tape takes the first
//! legal action, and chance outcomes derived from the position alone, so
//! the same tape always plays the same game and a cut tape a simpler one.
//!
//! Besides the variant's declared invariants, every variant gets the
//! engine's own checks, in the spirit of OpenSpiel's random simulation test
//! (see [`GenericCheck`]).

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::record::{self, Record};
use rulesmith_core::rng;
use rulesmith_core::state::{State, ToMove};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

/// What drives one fuzzed game.
#[derive(Clone, Debug, Default)]
pub struct Tape {
    pub decisions: Vec<Index>,
    pub chance: Vec<Index>,
}

impl Tape {
    /// The decision at `pos`: past the tape's end, the first legal action,
    /// so that cutting a tape short simplifies the game.
    fn decision(&self, pos: usize, len: usize) -> usize {
        self.decisions.get(pos).map_or(0, |i| i.index(len))
    }

    /// The chance outcome at `pos`: past the tape's end, a fixed
    /// pseudo-random one (always the smallest would never break a tie).
    fn chance(&self, pos: usize, len: usize) -> usize {
        match self.chance.get(pos) {
            Some(i) => i.index(len),
            None => (rng::derive(0xC4A_4CE, pos as u64) % len as u64) as usize,
        }
    }
}

/// Limits and switches of a fuzzing run.
#[derive(Clone, Debug)]
pub struct Options {
    pub players: usize,
    /// A game that has not ended after this many decisions is a finding.
    pub max_decisions: usize,
    /// The heavier generic checks run at every `deep_every`-th decision
    /// (`usize::MAX`: never).
    pub deep_every: usize,
    /// Stop (as a pass) after this many decisions: while shrinking, a
    /// candidate that runs far past the original break will not reproduce it.
    pub stop_after: Option<usize>,
    /// Replay the record at the end of each game (the record-replays check).
    pub replay_check: bool,
    /// Check only this invariant (shrinking a break of it); None: all.
    pub only_invariant: Option<String>,
    /// Check legal action texts (unique, parse back) at every decision.
    pub text_checks: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            players: 2,
            max_decisions: 20_000,
            deep_every: 8,
            stop_after: None,
            replay_check: true,
            only_invariant: None,
            text_checks: true,
        }
    }
}

/// The engine's own checks, run for every variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GenericCheck {
    /// Legal action texts are unique and parse back to the same action.
    UniqueTexts,
    /// Listing the legal actions twice gives the same list.
    DeterministicOrder,
    /// The seat to move is in play.
    SeatInPlay,
    /// Every legal action applies without error.
    EveryActionApplies,
    /// A clone equals the original.
    CloneEquals,
    /// A state saved (serde) and loaded plays on identically.
    SerdeRoundTrip,
    /// Resampling what the seat to move cannot see (others' secret cards
    /// and secret decisions) changes neither its view (summary and board)
    /// nor its legal actions.
    NoViewLeak,
    /// Replaying the game's record reproduces the state.
    RecordReplays,
    /// Listing the legal actions leaves the state unchanged.
    LegalIsPure,
}

impl GenericCheck {
    pub const ALL: [GenericCheck; 9] = [
        GenericCheck::UniqueTexts,
        GenericCheck::DeterministicOrder,
        GenericCheck::SeatInPlay,
        GenericCheck::EveryActionApplies,
        GenericCheck::CloneEquals,
        GenericCheck::SerdeRoundTrip,
        GenericCheck::NoViewLeak,
        GenericCheck::RecordReplays,
        GenericCheck::LegalIsPure,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GenericCheck::UniqueTexts => "unique-action-texts",
            GenericCheck::DeterministicOrder => "deterministic-order",
            GenericCheck::SeatInPlay => "seat-to-move-in-play",
            GenericCheck::EveryActionApplies => "every-action-applies",
            GenericCheck::CloneEquals => "clone-equals-original",
            GenericCheck::SerdeRoundTrip => "save-load-plays-on",
            GenericCheck::NoViewLeak => "no-view-leak",
            GenericCheck::RecordReplays => "record-replays",
            GenericCheck::LegalIsPure => "legal-listing-changes-nothing",
        }
    }
}

/// What kind of break a finding is; shrinking keeps the kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A declared invariant does not hold.
    Invariant(String),
    /// One of the engine's generic checks failed.
    Check(GenericCheck),
    /// A script failed (the message names its file and line).
    Script,
    /// The rule set broke an engine contract (e.g. no legal action).
    Rules,
    /// The game did not end within the bound.
    NoEnd,
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindingKind::Invariant(n) => write!(f, "invariant '{n}'"),
            FindingKind::Check(c) => write!(f, "engine check '{}'", c.name()),
            FindingKind::Script => write!(f, "script error"),
            FindingKind::Rules => write!(f, "rule set error"),
            FindingKind::NoEnd => write!(f, "game without end"),
        }
    }
}

/// A rule-set inconsistency, with the game that shows it.
#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    /// The game up to and including the step where it broke.
    pub record: Record,
    /// Decisions played when it broke.
    pub decisions: usize,
    pub turn: u32,
    /// The step in which it broke.
    pub step: String,
}

/// What the fuzzing reached, to show a designer what it did not.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    /// Decisions taken in each step, by step name.
    pub steps: BTreeMap<String, u64>,
    /// Actions applied, by action name.
    pub actions: BTreeMap<String, u64>,
    /// Cards dealt, by `deck/card`.
    pub cards: BTreeMap<String, u64>,
    /// Checks evaluated, by invariant name.
    pub invariants: BTreeMap<String, u64>,
    /// Script functions called by the engine and card hooks run.
    pub functions: BTreeMap<String, u64>,
}

impl Coverage {
    /// Zero counts for everything the variant has, so that what was never
    /// reached shows up.
    pub fn for_game(game: &Game) -> Coverage {
        let v = game.variant();
        let zero = |names: Vec<String>| names.into_iter().map(|n| (n, 0)).collect();
        Coverage {
            steps: zero(v.steps.iter().map(|s| s.name.clone()).collect()),
            actions: zero(v.actions.iter().map(|a| a.template.name.clone()).collect()),
            cards: zero(
                v.decks
                    .iter()
                    .flat_map(|d| d.cards.iter().map(move |c| format!("{}/{}", d.name, c.id)))
                    .collect(),
            ),
            invariants: zero(v.invariants.iter().map(|i| i.name.clone()).collect()),
            functions: zero(game.known_functions()),
        }
    }

    pub fn merge(&mut self, other: &Coverage) {
        for (mine, theirs) in [
            (&mut self.steps, &other.steps),
            (&mut self.actions, &other.actions),
            (&mut self.cards, &other.cards),
            (&mut self.invariants, &other.invariants),
            (&mut self.functions, &other.functions),
        ] {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        }
    }

    /// Names never reached, per category.
    pub fn never(&self) -> Vec<(&'static str, Vec<String>)> {
        let zero = |m: &BTreeMap<String, u64>| m.iter().filter(|(_, v)| **v == 0).map(|(k, _)| k.clone()).collect();
        vec![
            ("steps", zero(&self.steps)),
            ("actions", zero(&self.actions)),
            ("cards", zero(&self.cards)),
            ("invariants", zero(&self.invariants)),
            ("script functions", zero(&self.functions)),
        ]
    }
}

/// Totals of the games a run played.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub games: u64,
    pub decisions: u64,
    pub wins: u64,
    pub draws: u64,
}

impl Totals {
    pub fn add(&mut self, o: &Totals) {
        self.games += o.games;
        self.decisions += o.decisions;
        self.wins += o.wins;
        self.draws += o.draws;
    }
}

/// Plays one game from `tape`, checking everything; the first break found is
/// returned as a [`Finding`].
pub fn play_checked(game: &Game, opts: &Options, tape: &Tape, cov: &mut Coverage) -> Result<Totals, Box<Finding>> {
    let mut g = Checked {
        game,
        opts,
        record: Record::default(),
        decisions: 0,
        turn: 0,
        step: String::new(),
    };
    let mut state = game.new_game(opts.players).map_err(|e| g.broke_with(e))?;
    g.invariants(&state, cov)?;
    let (mut di, mut ci, mut chance_steps) = (0usize, 0usize, 0usize);
    loop {
        g.turn = state.core.turn;
        g.step = game.step_name(&state).to_string();
        match state.to_move() {
            ToMove::Terminal => break,
            ToMove::Chance => {
                chance_steps += 1;
                if chance_steps > opts.max_decisions.saturating_mul(10).max(10_000) {
                    return Err(g.finding(
                        FindingKind::NoEnd,
                        format!("{chance_steps} chance outcomes without end"),
                    ));
                }
                let outcomes = game.chance_outcomes(&state);
                let (o, _) = outcomes[tape.chance(ci, outcomes.len())];
                ci += 1;
                let text = game.outcome_text(o);
                if let rulesmith_core::state::Outcome::Card { deck, .. } = o {
                    let d = &game.variant().decks[deck as usize];
                    *cov.cards.entry(format!("{}/{}", d.name, text)).or_default() += 1;
                }
                g.record.chance(text);
                game.apply_outcome(&mut state, o).map_err(|e| g.broke_with(e))?;
            }
            ToMove::Decision(seat) => {
                if opts.stop_after.is_some_and(|n| g.decisions >= n) {
                    return Ok(Totals::default());
                }
                if g.decisions >= opts.max_decisions {
                    return Err(g.finding(
                        FindingKind::NoEnd,
                        format!(
                            "the game has not ended after {} decisions (turn {})",
                            g.decisions, state.core.turn
                        ),
                    ));
                }
                if state.core.out[seat] {
                    return Err(g.check(
                        GenericCheck::SeatInPlay,
                        format!("P{} is to move but is out of play", seat + 1),
                    ));
                }
                let legal = game.legal_actions(&state).map_err(|e| g.broke_with(e))?;
                if opts.text_checks {
                    g.legal_texts(&legal)?;
                }
                if opts.deep_every != usize::MAX && g.decisions % opts.deep_every.max(1) == 0 {
                    g.deep(&state, &legal, seat)?;
                }
                let a = legal[tape.decision(di, legal.len())];
                di += 1;
                *cov.steps.entry(g.step.clone()).or_default() += 1;
                let name = &game.variant().actions[a.kind as usize].template.name;
                *cov.actions.entry(name.clone()).or_default() += 1;
                g.record.decision(seat, game.action_text(&a));
                game.apply_trusted(&mut state, a).map_err(|e| g.broke_with(e))?;
                g.decisions += 1;
            }
        }
        // Inside an event of several outcomes (three dice, three cards) the
        // rules have seen none of them yet: the cards drawn so far are in
        // transit, so the invariants wait for the event's end.
        if state.core.chance.as_ref().is_none_or(|p| p.got.is_empty()) {
            g.invariants(&state, cov)?;
        }
    }
    // The whole game again from its record.
    if opts.replay_check {
        let text = g.record.to_text(&[]);
        match record::replay(game, opts.players, &text, Path::new("fuzz")) {
            Ok(s) if s.same_as(&state) => {}
            Ok(_) => {
                return Err(g.check(
                    GenericCheck::RecordReplays,
                    "replaying the record gives another state".into(),
                ))
            }
            Err(e) => return Err(g.check(GenericCheck::RecordReplays, format!("the record does not replay: {e}"))),
        }
    }
    let won = matches!(state.status(), rulesmith_core::state::Status::Won(_));
    Ok(Totals {
        games: 1,
        decisions: g.decisions as u64,
        wins: won as u64,
        draws: !won as u64,
    })
}

/// A game under check: what a finding needs to say where it broke.
struct Checked<'a> {
    game: &'a Game,
    opts: &'a Options,
    record: Record,
    decisions: usize,
    turn: u32,
    step: String,
}

impl Checked<'_> {
    fn finding(&self, kind: FindingKind, message: String) -> Box<Finding> {
        Box::new(Finding {
            kind,
            message,
            record: self.record.clone(),
            decisions: self.decisions,
            turn: self.turn,
            step: self.step.clone(),
        })
    }

    fn check(&self, c: GenericCheck, message: String) -> Box<Finding> {
        self.finding(FindingKind::Check(c), message)
    }

    fn broke_with(&self, e: GameError) -> Box<Finding> {
        let kind = match e {
            GameError::Script(_) => FindingKind::Script,
            _ => FindingKind::Rules,
        };
        self.finding(kind, e.to_string())
    }

    fn invariants(&self, state: &State, cov: &mut Coverage) -> Result<(), Box<Finding>> {
        for inv in &self.game.variant().invariants {
            *cov.invariants.entry(inv.name.clone()).or_default() += 1;
        }
        let broken = match &self.opts.only_invariant {
            Some(name) => self.game.broken_invariant(state, name),
            None => self.game.broken_invariants(state),
        }
        .map_err(|e| self.broke_with(e))?;
        match broken.into_iter().next() {
            Some((name, message)) => Err(self.finding(FindingKind::Invariant(name), message)),
            None => Ok(()),
        }
    }

    fn legal_texts(&self, legal: &[rulesmith_core::state::Action]) -> Result<(), Box<Finding>> {
        let mut seen = std::collections::HashSet::with_capacity(legal.len());
        for a in legal {
            let text = self.game.action_text(a);
            if self.game.parse_action(&text) != Some(*a) {
                return Err(self.check(
                    GenericCheck::UniqueTexts,
                    format!("'{text}' does not parse back to itself"),
                ));
            }
            if !seen.insert(text.clone()) {
                return Err(self.check(GenericCheck::UniqueTexts, format!("'{text}' is listed twice")));
            }
        }
        Ok(())
    }

    /// The heavier checks, run at some decisions only.
    fn deep(&self, state: &State, legal: &[rulesmith_core::state::Action], seat: usize) -> Result<(), Box<Finding>> {
        let game = self.game;
        if game.legal_actions(state).map_err(|e| self.broke_with(e))? != legal {
            return Err(self.check(
                GenericCheck::DeterministicOrder,
                "a second listing of the legal actions differs".into(),
            ));
        }
        let mut copy = state.clone();
        if !copy.same_as(state) {
            return Err(self.check(GenericCheck::CloneEquals, "a clone differs from its original".into()));
        }
        // The fast path lends the state itself to the legal function.
        let mut listed = Vec::new();
        game.legal_actions_into(&mut copy, &mut listed)
            .map_err(|e| self.broke_with(e))?;
        if !copy.same_as(state) {
            return Err(self.check(
                GenericCheck::LegalIsPure,
                format!("step '{}': listing the legal actions changed the state", self.step),
            ));
        }
        // Up to SAMPLE actions per check, at a stride whose offset rotates
        // with the decision count, so that long lists are covered over time.
        const SAMPLE: usize = 24;
        let stride = legal.len().div_ceil(SAMPLE).max(1);
        for a in legal
            .iter()
            .skip(self.decisions / self.opts.deep_every.max(1) % stride)
            .step_by(stride)
        {
            let mut s = state.clone();
            if let Err(e) = game.apply_trusted(&mut s, *a) {
                let msg = format!("legal action '{}' fails: {e}", game.action_text(a));
                return Err(match e {
                    GameError::Script(_) => self.finding(FindingKind::Script, msg),
                    _ => self.check(GenericCheck::EveryActionApplies, msg),
                });
            }
        }
        // Save, load, and play on a few steps identically.
        let saved = game
            .save_state(state)
            .map_err(|e| self.check(GenericCheck::SerdeRoundTrip, format!("cannot save: {e}")))?;
        let loaded: State = game
            .load_state(&saved)
            .map_err(|e| self.check(GenericCheck::SerdeRoundTrip, format!("cannot load: {e}")))?;
        if !loaded.same_as(state) {
            return Err(self.check(
                GenericCheck::SerdeRoundTrip,
                "a loaded state differs from the saved one".into(),
            ));
        }
        let (mut a, mut b) = (state.clone(), loaded);
        let (mut ra, mut rb) = (rng::seeded(self.decisions as u64), rng::seeded(self.decisions as u64));
        let on = |g: &Game, s: &mut State, r: &mut rng::GameRng| {
            crate::playout::random_playout(g, s, r, None, 4).map(|_| ())
        };
        if on(game, &mut a, &mut ra).is_ok() && on(game, &mut b, &mut rb).is_ok() && !a.same_as(&b) {
            return Err(self.check(
                GenericCheck::SerdeRoundTrip,
                "a loaded state plays on differently".into(),
            ));
        }
        // Resample what the seat to move cannot see: a replay of the whole
        // game, so less often than the other checks.
        if self.decisions % (self.opts.deep_every.max(1) * 8) != 0 || !state.core.hides_from(Some(seat)) {
            return Ok(());
        }
        let mut r = rng::seeded(self.decisions as u64 ^ 0x5EED);
        let other = game
            .determinize(state, Some(seat), &mut r)
            .map_err(|e| self.broke_with(e))?;
        let what = "when what it cannot see (others' secret cards and decisions) is drawn afresh";
        let view = |s: &State| game.summary(s, Some(seat)).ok();
        if view(&other) != view(state) {
            return Err(self.check(GenericCheck::NoViewLeak, format!("P{}'s view changes {what}", seat + 1)));
        }
        let board = |s: &State| game.render(s, Some(seat)).ok();
        if board(&other) != board(state) {
            return Err(self.check(
                GenericCheck::NoViewLeak,
                format!("P{}'s board changes {what}", seat + 1),
            ));
        }
        if game.legal_actions(&other).ok().as_deref() != Some(legal) {
            return Err(self.check(
                GenericCheck::NoViewLeak,
                format!("P{}'s legal actions change {what}", seat + 1),
            ));
        }
        Ok(())
    }
}

/// A numeric parameter swept within its declared range.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    pub min: i64,
    pub max: i64,
}

/// The parameters a variant declares with both bounds: what `--param-sweep`
/// varies. Booleans sweep over false/true.
pub fn sweepable(game: &Game) -> Vec<Sweep> {
    game.variant()
        .params
        .iter()
        .filter_map(|p| match (&p.value, p.min, p.max) {
            (rulesmith_core::variant::Value::Int(_), Some(min), Some(max)) => Some(Sweep {
                name: p.name.clone(),
                min,
                max,
            }),
            (rulesmith_core::variant::Value::Bool(_), _, _) => Some(Sweep {
                name: p.name.clone(),
                min: 0,
                max: 1,
            }),
            _ => None,
        })
        .collect()
}

/// Swept parameter values, by name.
pub type Params = [(String, i64)];

/// Gives the game to play for a set of swept parameter values.
pub type GameFor<'a> = dyn FnMut(&Params) -> Result<std::rc::Rc<Game>, String> + 'a;

/// Candidate games tried while shrinking one finding.
const SHRINK_BUDGET: usize = 2048;

/// `variant` with swept values applied (booleans as 0 and 1).
pub fn with_params(
    variant: &rulesmith_core::variant::Variant,
    params: &Params,
) -> Result<rulesmith_core::variant::Variant, String> {
    let mut v = variant.clone();
    for (k, value) in params {
        let text = match v.param(k).map(|p| &p.value) {
            Some(rulesmith_core::variant::Value::Bool(_)) => (*value != 0).to_string(),
            _ => value.to_string(),
        };
        v.set(k, &text)?;
    }
    Ok(v)
}

/// The outcome of one batch of games.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub totals: Totals,
    pub coverage: Coverage,
    /// The shrunk finding, with the swept parameter values it used.
    pub finding: Option<(Finding, Vec<(String, i64)>)>,
}

/// Plays `games` fuzzed games seeded by `seed`; on a break, shrinks it.
///
/// `game_for` gives the game for a set of swept parameter values (the base
/// game when `sweep` is empty). The result depends only on the arguments,
/// never on threads or timing.
pub fn run_batch(game_for: &mut GameFor<'_>, opts: &Options, sweep: &[Sweep], seed: u64, games: u32) -> Batch {
    // proptest announces on stderr when its own shrink cap is hit; the cap
    // that matters is ours (SHRINK_BUDGET), past which candidates pass at once.
    let config = Config {
        cases: games,
        failure_persistence: None,
        max_shrink_iters: 100_000_000,
        ..Config::default()
    };
    let evaluations = std::cell::Cell::new(0usize);
    let mut seed_bytes = [0u8; 32];
    for (i, chunk) in seed_bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&rng::derive(seed, i as u64).to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let params: Vec<BoxedStrategy<i64>> = sweep.iter().map(|s| (s.min..=s.max).boxed()).collect();
    // Parameters first: proptest shrinks a tuple in order, and the smallest
    // breaking parameter values matter more than the shortest tape.
    let strategy = (
        params,
        proptest::collection::vec(any::<Index>(), 0..1500),
        proptest::collection::vec(any::<Index>(), 0..3000),
    );
    let batch = RefCell::new(Batch::default());
    // The kind of the first break and the decision it came at.
    let first: RefCell<Option<(FindingKind, usize)>> = RefCell::new(None);
    let games_cell = RefCell::new(game_for);
    let named = |values: &[i64]| -> Vec<(String, i64)> {
        sweep.iter().zip(values).map(|(s, v)| (s.name.clone(), *v)).collect()
    };
    let result = runner.run(&strategy, |(values, decisions, chance)| {
        let params = named(&values);
        let game = match (games_cell.borrow_mut())(&params) {
            Ok(g) => g,
            Err(e) => {
                // Parameters the variant itself refuses are no finding.
                let _ = e;
                return Ok(());
            }
        };
        let tape = Tape { decisions, chance };
        let shrinking = first.borrow().is_some();
        if shrinking {
            evaluations.set(evaluations.get() + 1);
            if evaluations.get() > SHRINK_BUDGET {
                return Ok(());
            }
        }
        let mut cov = Coverage::default();
        if !shrinking {
            game.track_calls(true);
        }
        // While shrinking, run only what can reproduce the first break, and
        // give up on candidates that run far past it.
        let shrink_opts = first.borrow().as_ref().map(|(kind, at)| Options {
            deep_every: if matches!(kind, FindingKind::Check(_)) {
                opts.deep_every
            } else {
                usize::MAX
            },
            replay_check: *kind == FindingKind::Check(GenericCheck::RecordReplays),
            stop_after: (*kind != FindingKind::NoEnd).then_some(at * 2 + 10),
            only_invariant: match kind {
                FindingKind::Invariant(name) => Some(name.clone()),
                _ => None,
            },
            text_checks: *kind == FindingKind::Check(GenericCheck::UniqueTexts),
            ..opts.clone()
        });
        let outcome = play_checked(&game, shrink_opts.as_ref().unwrap_or(opts), &tape, &mut cov);
        if !shrinking {
            let mut b = batch.borrow_mut();
            for (name, n) in game.calls() {
                *cov.functions.entry(name).or_default() += n;
            }
            game.track_calls(false);
            b.coverage.merge(&cov);
            if let Ok(t) = &outcome {
                b.totals.add(t);
            }
        }
        match outcome {
            Ok(_) => Ok(()),
            Err(f) => {
                let mut k = first.borrow_mut();
                match k.as_ref() {
                    Some((kind, _)) if *kind != f.kind => return Ok(()), // another break: keep shrinking the first
                    Some(_) => {}
                    None => {
                        *k = Some((f.kind.clone(), f.decisions));
                        let mut b = batch.borrow_mut();
                        b.totals.games += 1;
                        b.totals.decisions += f.decisions as u64;
                    }
                }
                Err(TestCaseError::fail(f.message.clone()))
            }
        }
    });
    let mut batch = batch.into_inner();
    // Polish the minimal tape, then play it once more, in full, for its finding.
    if let Err(TestError::Fail(_, (values, decisions, chance))) = result {
        let params = named(&values);
        let kind = first.borrow().as_ref().map(|(k, _)| k.clone());
        if let (Ok(game), Some(kind)) = ((games_cell.borrow_mut())(&params), kind.clone()) {
            let tape = polish(&game, opts, Tape { decisions, chance }, &kind);
            let full = Options {
                stop_after: None,
                ..opts.clone()
            };
            if let Err(f) = play_checked(&game, &full, &tape, &mut Coverage::default()) {
                if f.kind == kind {
                    batch.finding = Some((*f, params));
                }
            }
        }
    }
    batch
}

/// Greedy passes after proptest's shrinking, which removes one tape entry at
/// a time and so shifts every later choice: cut each tape as early as the
/// break allows, then drop single entries, keeping a change only while the
/// same kind of break still happens.
fn polish(game: &Game, opts: &Options, mut tape: Tape, kind: &FindingKind) -> Tape {
    let quick = Options {
        deep_every: if matches!(kind, FindingKind::Check(_)) {
            opts.deep_every
        } else {
            usize::MAX
        },
        text_checks: *kind == FindingKind::Check(GenericCheck::UniqueTexts),
        replay_check: *kind == FindingKind::Check(GenericCheck::RecordReplays),
        only_invariant: match kind {
            FindingKind::Invariant(n) => Some(n.clone()),
            _ => None,
        },
        ..opts.clone()
    };
    let budget = std::cell::Cell::new(600usize);
    let breaks = |t: &Tape| -> Option<usize> {
        if budget.get() == 0 {
            return None;
        }
        budget.set(budget.get() - 1);
        match play_checked(game, &quick, t, &mut Coverage::default()) {
            Err(f) if f.kind == *kind => Some(f.record.len()),
            _ => None,
        }
    };
    let Some(mut best) = breaks(&tape) else { return tape };
    loop {
        let mut improved = false;
        // Shortest prefix of each tape that still breaks.
        for which in [0, 1] {
            let len = if which == 0 {
                tape.decisions.len()
            } else {
                tape.chance.len()
            };
            for k in 0..len {
                let mut t = tape.clone();
                if which == 0 {
                    t.decisions.truncate(k)
                } else {
                    t.chance.truncate(k)
                }
                if let Some(n) = breaks(&t).filter(|n| *n <= best) {
                    tape = t;
                    best = n;
                    improved = true;
                    break;
                }
            }
        }
        // Single entries that can go.
        let mut i = 0;
        while i < tape.decisions.len() {
            let mut t = tape.clone();
            t.decisions.remove(i);
            match breaks(&t).filter(|n| *n < best) {
                Some(n) => {
                    tape = t;
                    best = n;
                    improved = true;
                }
                None => i += 1,
            }
        }
        if !improved || budget.get() == 0 {
            return tape;
        }
    }
}
