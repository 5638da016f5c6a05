//! Playing one checked game: every invariant after every step, the engine's
//! generic checks along the way, with the choices made by a [`Chooser`] (a
//! proptest [`Tape`], a swarm of weights, or a record being shrunk).

use super::coverage::Coverage;
use super::{Finding, FindingKind, GenericCheck, Options, Totals};
use proptest::sample::Index;
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::record::{self, Record};
use rulesmith_core::rng;
use rulesmith_core::state::{Action, History, Outcome, State, ToMove};
use std::path::Path;

/// One choice of a played game, in order: what a shrinker edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The action taken: its index in the legal list (of `of` actions) and
    /// its text.
    Decision {
        turn: u32,
        index: usize,
        of: usize,
        text: String,
    },
    /// The outcome dealt: its index among the `of` outcomes, smallest first.
    Chance { turn: u32, index: usize, of: usize },
}

impl Choice {
    pub fn turn(&self) -> u32 {
        match self {
            Choice::Decision { turn, .. } | Choice::Chance { turn, .. } => *turn,
        }
    }

    pub fn index(&self) -> usize {
        match self {
            Choice::Decision { index, .. } | Choice::Chance { index, .. } => *index,
        }
    }
}

/// Makes the choices of a checked game.
pub trait Chooser {
    /// The index of the legal action to take; None ends the game as a pass
    /// (the chooser has nothing more to play).
    fn decide(&mut self, game: &Game, legal: &[Action]) -> Option<usize>;
    /// The index of the chance outcome (they come with their probabilities).
    fn chance(&mut self, outcomes: &[(Outcome, f64)]) -> usize;
}

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

/// A [`Tape`] being played.
struct TapeChooser<'t> {
    tape: &'t Tape,
    di: usize,
    ci: usize,
}

impl Chooser for TapeChooser<'_> {
    fn decide(&mut self, _: &Game, legal: &[Action]) -> Option<usize> {
        self.di += 1;
        Some(self.tape.decision(self.di - 1, legal.len()))
    }

    fn chance(&mut self, outcomes: &[(Outcome, f64)]) -> usize {
        self.ci += 1;
        self.tape.chance(self.ci - 1, outcomes.len())
    }
}

/// Plays one game from `tape`, checking everything; the first break found is
/// returned as a [`Finding`].
pub fn play_checked(game: &Game, opts: &Options, tape: &Tape, cov: &mut Coverage) -> Result<Totals, Box<Finding>> {
    let mut chooser = TapeChooser { tape, di: 0, ci: 0 };
    play_with(game, opts, &mut chooser, cov).map(|p| p.totals)
}

/// The deep checks save and load the state at every SAVE_LOAD_EVERY-th of
/// them: with the default `deep_every` of 8, at decisions 8, 40, 72...
/// (not at decision 0: the opening position, much the same in every game).
const SAVE_LOAD_EVERY: usize = 4;

/// A game played to its end without a break.
#[derive(Clone, Debug, Default)]
pub struct Played {
    pub totals: Totals,
    /// Every choice made, in order.
    pub choices: Vec<Choice>,
}

/// Plays one game whose choices `chooser` makes, checking everything; the
/// first break found is returned as a [`Finding`]. The game's coverage is
/// added to `cov` however it ends.
pub fn play_with(
    game: &Game,
    opts: &Options,
    chooser: &mut dyn Chooser,
    cov: &mut Coverage,
) -> Result<Played, Box<Finding>> {
    let mut tally = Tally::new(game);
    let played = play_tallied(game, opts, chooser, cov, &mut tally);
    tally.add_to(game, cov);
    played
}

/// Coverage counts of one game by index, added to its [`Coverage`] by name
/// when it ends: a lookup by name in a map, several per step, cost more
/// than the step's own checks.
struct Tally {
    /// Decisions per step, by step index; the last entry is setup.
    steps: Vec<u64>,
    /// Actions applied, by action kind.
    actions: Vec<u64>,
    /// Times the invariants were evaluated (all of them each time).
    invariant_checks: u64,
}

impl Tally {
    fn new(game: &Game) -> Tally {
        let v = game.variant();
        Tally {
            steps: vec![0; v.steps.len() + 1],
            actions: vec![0; v.actions.len()],
            invariant_checks: 0,
        }
    }

    fn step(&mut self, step: Option<usize>) {
        let setup = self.steps.len() - 1;
        self.steps[step.unwrap_or(setup)] += 1;
    }

    fn add_to(&self, game: &Game, cov: &mut Coverage) {
        let v = game.variant();
        let setup = self.steps.len() - 1;
        for (i, n) in self.steps.iter().enumerate().filter(|(_, n)| **n > 0) {
            let name = if i == setup { "setup" } else { v.steps[i].name.as_str() };
            *cov.steps.entry(name.to_string()).or_default() += n;
        }
        for (kind, n) in self.actions.iter().enumerate().filter(|(_, n)| **n > 0) {
            *cov.actions.entry(v.actions[kind].template.name.clone()).or_default() += n;
        }
        if self.invariant_checks > 0 {
            for inv in &v.invariants {
                *cov.invariants.entry(inv.name.clone()).or_default() += self.invariant_checks;
            }
        }
    }
}

fn play_tallied(
    game: &Game,
    opts: &Options,
    chooser: &mut dyn Chooser,
    cov: &mut Coverage,
    tally: &mut Tally,
) -> Result<Played, Box<Finding>> {
    let mut g = Checked {
        game,
        opts,
        record: Record::default(),
        choices: Vec::new(),
        decisions: 0,
        turn: 0,
        step: String::new(),
    };
    let mut state = game.new_game(opts.players).map_err(|e| g.broke_with(e))?;
    g.invariants(&state, tally)?;
    let mut chance_steps = 0usize;
    let mut legal = Vec::new();
    // How many secrets (cards, dice, decisions) there were at the last
    // leak check.
    let mut secrets_checked = (0, 0, 0);
    // The step g.step names (None: setup).
    let mut step_index = state.core.step;
    g.step.push_str(game.step_name(&state));
    loop {
        g.turn = state.core.turn;
        if step_index != state.core.step {
            step_index = state.core.step;
            g.step.clear();
            g.step.push_str(game.step_name(&state));
        }
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
                let index = chooser.chance(&outcomes).min(outcomes.len() - 1);
                let (o, _) = outcomes[index];
                g.choices.push(Choice::Chance {
                    turn: g.turn,
                    index,
                    of: outcomes.len(),
                });
                let text = game.outcome_text(o);
                if let Outcome::Card { deck, .. } = o {
                    let v = game.variant();
                    let d = &v.decks[v.deck_of_place(deck as usize)];
                    count(&mut cov.cards, &format!("{}/{}", d.name, text));
                }
                g.record.chance(text);
                // Scratch: after an error the game ends with a finding, and
                // the state (half-changed) is never used again.
                game.apply_outcome_scratch(&mut state, o)
                    .map_err(|e| g.broke_with(*e))?;
            }
            ToMove::Decision(seat) => {
                if opts.stop_after.is_some_and(|n| g.decisions >= n) {
                    return Ok(Played::default());
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
                // Listed on the state itself, as playouts and bots do, so
                // that the turn's memo fills up as it does in their games.
                game.legal_actions_into(&mut state, &mut legal)
                    .map_err(|e| g.broke_with(e))?;
                if opts.text_checks {
                    g.legal_texts(&legal)?;
                }
                if opts.deep_every != usize::MAX {
                    if g.decisions % opts.deep_every.max(1) == 0 {
                        g.deep(&state, &legal, seat)?;
                    }
                    // The first decision after a secret (a card dealt or a
                    // die rolled in secret, a decision in a secret step) is where a leak
                    // shows: the second bidder of a secret round sees the
                    // first one's bid, or not. Checked every time, whatever
                    // the decision count; games without secrets pay two
                    // comparisons.
                    let secrets = (
                        state.core.secrets.len(),
                        state.core.secret_rolls.len(),
                        state.core.secret_decisions.len(),
                    );
                    if secrets != secrets_checked {
                        secrets_checked = secrets;
                        g.no_view_leak(&state, &legal, seat)?;
                    }
                }
                let Some(index) = chooser.decide(game, &legal) else {
                    // The chooser has no more to play: the game passes.
                    return Ok(Played::default());
                };
                let a = legal[index.min(legal.len() - 1)];
                tally.step(step_index);
                tally.actions[a.kind as usize] += 1;
                let text = game.action_text(&a);
                g.choices.push(Choice::Decision {
                    turn: g.turn,
                    index,
                    of: legal.len(),
                    text: text.clone(),
                });
                g.record.decision(seat, text);
                game.apply_scratch(&mut state, a).map_err(|e| g.broke_with(*e))?;
                g.decisions += 1;
            }
        }
        // Inside an event of several outcomes (three dice, three cards) the
        // rules have seen none of them yet: the cards drawn so far are in
        // transit, so the invariants wait for the event's end.
        if state.core.chance.as_ref().is_none_or(|p| p.got.is_empty()) {
            g.invariants(&state, tally)?;
        }
    }
    // Every step of the game saved and loaded (the deep checks save their
    // states without the history; this covers it, once per game).
    if opts.deep_every != usize::MAX {
        g.save_load(&state)?;
    }
    // The whole game again from its record.
    if opts.replay_check {
        let text = g.record.to_text(&[]);
        match record::replay(game, opts.players, &text, Path::new("fuzz")) {
            Ok(s) if s.same_as(&state) => {}
            Ok(_) => {
                // A legal function that writes to the state (checked at
                // every 8th decision only) is the usual cause: name it.
                g.impure_listing()?;
                return Err(g.check(
                    GenericCheck::RecordReplays,
                    "replaying the record gives another state".into(),
                ));
            }
            Err(e) => return Err(g.check(GenericCheck::RecordReplays, format!("the record does not replay: {e}"))),
        }
    }
    let won = matches!(state.status(), rulesmith_core::state::Status::Won(_));
    Ok(Played {
        totals: Totals {
            games: 1,
            decisions: g.decisions as u64,
            wins: won as u64,
            draws: !won as u64,
        },
        choices: g.choices,
    })
}

/// Counts one more `name` in a coverage map, allocating its key only the
/// first time (this runs several times per decision).
fn count(map: &mut std::collections::BTreeMap<String, u64>, name: &str) {
    match map.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            map.insert(name.to_string(), 1);
        }
    }
}

/// A game under check: what a finding needs to say where it broke.
struct Checked<'a> {
    game: &'a Game,
    opts: &'a Options,
    record: Record,
    choices: Vec<Choice>,
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
            choices: self.choices.clone(),
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

    fn invariants(&self, state: &State, tally: &mut Tally) -> Result<(), Box<Finding>> {
        tally.invariant_checks += 1;
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

    /// Plays the game's choices again, listing the legal actions on a copy
    /// at every decision: a listing that changes the state is the
    /// `legal-listing-changes-nothing` finding (at the decision where it
    /// first does). Run when the record does not replay to the same state.
    fn impure_listing(&self) -> Result<(), Box<Finding>> {
        let game = self.game;
        let Ok(mut state) = game.new_game(self.opts.players) else {
            return Ok(());
        };
        let mut legal = Vec::new();
        for c in &self.choices {
            match *c {
                Choice::Chance { index, .. } => {
                    let outcomes = game.chance_outcomes(&state);
                    let Some(&(o, _)) = outcomes.get(index) else {
                        return Ok(());
                    };
                    if game.apply_outcome(&mut state, o).is_err() {
                        return Ok(());
                    }
                }
                Choice::Decision { index, .. } => {
                    let before = state.clone();
                    if game.legal_actions_into(&mut state, &mut legal).is_err() {
                        return Ok(());
                    }
                    if !state.same_as(&before) {
                        let step = game.step_name(&before);
                        return Err(self.check(
                            GenericCheck::LegalIsPure,
                            format!("step '{step}': listing the legal actions changed the state"),
                        ));
                    }
                    let Some(&a) = legal.get(index) else { return Ok(()) };
                    if game.apply_action(&mut state, a).is_err() {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// `state` saved as JSON and loaded again, which must equal it.
    fn save_load(&self, state: &State) -> Result<State, Box<Finding>> {
        let game = self.game;
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
        Ok(loaded)
    }

    fn legal_texts(&self, legal: &[Action]) -> Result<(), Box<Finding>> {
        self.game
            .check_texts(legal)
            .map_err(|message| self.check(GenericCheck::UniqueTexts, message))
    }

    /// The heavier checks, run at some decisions only.
    fn deep(&self, state: &State, legal: &[Action], seat: usize) -> Result<(), Box<Finding>> {
        let game = self.game;
        if game.legal_actions(state).map_err(|e| self.broke_with(e))? != legal {
            return Err(self.check(
                GenericCheck::DeterministicOrder,
                "a second listing of the legal actions differs".into(),
            ));
        }
        if !state.core.memo.is_empty() {
            let mut fresh = state.clone();
            fresh.core.memo.clear();
            if game.legal_actions(&fresh).map_err(|e| self.broke_with(e))? != legal {
                return Err(self.check(
                    GenericCheck::MemoIsTransparent,
                    format!(
                        "step '{}': the legal actions recalled from the memo differ from a listing from scratch \
                         (a stamp given to recall/remember does not change when the group's actions do)",
                        self.step
                    ),
                ));
            }
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
        // One scratch state, copied into for each action (no allocation);
        // it is thrown away after an error, so it needs no backup.
        let mut s = copy;
        for a in legal
            .iter()
            .skip(self.decisions / self.opts.deep_every.max(1) % stride)
            .step_by(stride)
        {
            s.clone_from(state);
            if let Err(e) = game.apply_scratch(&mut s, *a) {
                let msg = format!("legal action '{}' fails: {e}", game.action_text(a));
                return Err(match *e {
                    GameError::Script(_) => self.finding(FindingKind::Script, msg),
                    _ => self.check(GenericCheck::EveryActionApplies, msg),
                });
            }
        }
        // Save, load, and play on a few steps identically: at every
        // SAVE_LOAD_EVERY-th deep check, and without the history, which
        // grows with the game (so saving it at every check would cost in
        // the square of the game's length). The whole history is saved and
        // loaded once, at the game's end (see `play_with`). Both copies
        // play on from the same (empty) history, so they must stay equal.
        let every = self.opts.deep_every.max(1);
        if self.decisions % (every * SAVE_LOAD_EVERY) == every {
            let now = State {
                core: state.core.clone(),
                data: state.data.clone(),
                history: History::default(),
            };
            let loaded = self.save_load(&now)?;
            let (mut a, mut b) = (now, loaded);
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
        }
        // Resample what the seat to move cannot see: a replay of the whole
        // game, so less often than the other checks (and at every decision
        // that follows a new secret, see `play_tallied`).
        if self.decisions % (self.opts.deep_every.max(1) * 8) != 0 {
            return Ok(());
        }
        self.no_view_leak(state, legal, seat)
    }

    /// Draws afresh what `seat` cannot see, which must change neither its
    /// view, nor its board, nor its legal actions.
    fn no_view_leak(&self, state: &State, legal: &[Action], seat: usize) -> Result<(), Box<Finding>> {
        let game = self.game;
        if !state.core.hides_from(Some(seat)) {
            return Ok(());
        }
        let mut r = rng::seeded(self.decisions as u64 ^ 0x5EED);
        let other = game
            .determinize(state, Some(seat), &mut r)
            .map_err(|e| self.broke_with(e))?;
        let what = "when what it cannot see (others' secret cards, dice and decisions) is drawn afresh";
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
