//! Determinizing: a state one seat cannot tell apart from the true one,
//! for bots that must not peek.
//!
//! What a seat has not seen is drawn afresh: every card dealt in secret to
//! another seat (and not revealed), and every secret decision of another
//! seat (not revealed). The game's history is replayed with those steps
//! replaced, so that everything they caused is recomputed by the rules.
//!
//! Replaying a redeal can contradict what the seat did see: a card that was
//! drawn in the open later, a card whose ability would have shown (a
//! redealt card that the rules would have revealed at once, asking for one
//! more card), a decision that later public steps do not fit. So the
//! replay checks, before every step, that the world looks as the true game
//! did to everyone: the same seat to decide, the same chance event pending
//! (its source, its size, the outcomes received). The hidden steps of one
//! chance event, or one hidden decision, form a group; where the world
//! stops fitting, the latest group is drawn afresh: at random
//! ([`RANDOM_TRIES`] times), then combination by combination (so that a
//! world is found even when few draws fit), then the group before it.
//!
//! Long games hold many hidden groups, and the one a misfit comes from may
//! lie far back (a secret decision early on, which a public action many
//! secret draws later contradicts). Searching every group in between would
//! take forever, so the search jumps back: when [`QUICK_TRIES`] draws of
//! a group all fail at the very same step, that group is taken to be
//! innocent of that misfit; it and every later group are left alone (not
//! redrawn on purpose) until an earlier group's draw makes the replay fail
//! elsewhere or fit. Draws
//! come from what the replayed game holds at that point, never from the
//! truth:
//!
//! - a hidden card: a card of its deck's draw pile at that point, less
//!   those the history later draws in the open from that deck (so each
//!   card is weighted by its copies);
//! - a hidden decision: one of the legal actions at that point, uniformly.
//!
//! The world found therefore depends only on what the seat knows and on
//! the generator. When no world fits within the work budget, that is an
//! error, never the true state.

use crate::error::GameError;
use crate::game::Game;
use crate::rng;
use crate::state::{Action, ChanceSource, Outcome, Seat, State, Step, ToMove};

/// What a step of the history is to the viewer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Known,
    /// A card dealt in secret to another seat, not revealed.
    HiddenCard,
    /// A secret decision of another seat, not revealed.
    HiddenDecision,
}

/// A group of hidden steps being redealt: steps `at..=end`, the state
/// before them, and how far the drawing got on this visit.
struct Point {
    at: usize,
    end: usize,
    before: State,
    /// Random draws so far.
    tries: u32,
    /// Then the systematic ones: the next combination to try, and how many
    /// there are.
    next: u64,
    combinations: u64,
    /// The step where the worlds drawn from here failed, while they all
    /// failed at the same one.
    failed_at: Option<usize>,
    /// Some of them failed elsewhere: this group may matter.
    varied: bool,
}

/// How a group's hidden steps are chosen.
#[derive(Clone, Copy)]
enum Draw {
    /// At random, as a world is drawn.
    Random,
    /// Combination `k` of every card kind (or legal action) at each hidden
    /// step: a world that fits is found even when random draws rarely fit
    /// (a redealt card the rules would have shown at once, say).
    Systematic(u64),
}

/// No world fits within the work budget.
struct NoFit;

/// Random draws of a group before trying its combinations one by one.
const RANDOM_TRIES: u32 = 64;

/// Draws of a group that all fail at the same later step before the search
/// jumps back past it (see the module's documentation).
const QUICK_TRIES: u32 = 12;

impl Game {
    /// A state that `viewer` cannot tell from `state`: every card dealt in
    /// secret to another seat and every secret decision of another seat,
    /// not yet revealed, is drawn afresh, and the game is replayed (see the
    /// module's documentation). `None` views as a spectator (every secret
    /// drawn afresh).
    ///
    /// Bots that must not peek (information-set search) decide on such
    /// states only. If no world fits what the viewer saw, this is an error,
    /// never the truth.
    pub fn determinize<R: rand::Rng + ?Sized>(
        &self,
        state: &State,
        viewer: Option<Seat>,
        rng: &mut R,
    ) -> Result<State, GameError> {
        let mut worlds = self.determinize_worlds(state, viewer, rng, 1)?;
        Ok(worlds.pop().expect("one world"))
    }

    /// `count` worlds drawn as [`Game::determinize`] draws one, in a row
    /// (what a bot that looks at several worlds needs: what is common to
    /// them is worked out once).
    pub fn determinize_worlds<R: rand::Rng + ?Sized>(
        &self,
        state: &State,
        viewer: Option<Seat>,
        rng: &mut R,
        count: usize,
    ) -> Result<Vec<State>, GameError> {
        if !state.core.hides_from(viewer) {
            return Ok(vec![state.clone(); count]);
        }
        // A replay tells nobody anything: its narration is dropped.
        let told = self.ctx.borrow().narration.len();
        let r = self.redeal(state, viewer, rng, count);
        self.ctx.borrow_mut().narration.truncate(told);
        r
    }

    fn redeal<R: rand::Rng + ?Sized>(
        &self,
        state: &State,
        viewer: Option<Seat>,
        rng: &mut R,
        count: usize,
    ) -> Result<Vec<State>, GameError> {
        if !state.history.is_kept() {
            return Err(GameError::Rules(
                "cannot redeal a state that forgot its history (a throwaway playout state)".into(),
            ));
        }
        let steps = state.history.to_vec();
        let n = steps.len();
        let mut seen = vec![Seen::Known; n];
        for d in state
            .core
            .secrets
            .iter()
            .filter(|d| !d.revealed && Some(d.seen_by) != viewer)
        {
            if let Some(s) = seen.get_mut(d.at as usize) {
                *s = Seen::HiddenCard;
            }
        }
        for d in state
            .core
            .secret_decisions
            .iter()
            .filter(|d| !d.revealed && Some(d.seat) != viewer)
        {
            if let Some(s) = seen.get_mut(d.at as usize) {
                *s = Seen::HiddenDecision;
            }
        }
        let no_fit = || {
            GameError::Rules(format!(
                "no redeal of the hidden cards and decisions fits what {} has seen",
                viewer.map_or("a spectator".to_string(), |v| format!("P{}", v + 1))
            ))
        };
        let mut buf = Vec::new();
        // What everyone saw of the true game at each step: who decided, and
        // which chance event (its source, size and progress) was pending.
        // A world must show the same, step by step.
        let shapes = self.shapes(state, &steps, &mut buf)?;
        // A hidden card is redealt with the rest of its event's hidden
        // cards: a group ends with the event's last outcome.
        let mut group_end = vec![0; n];
        for i in (0..n).rev() {
            group_end[i] = match (&shapes[i].1, seen[i]) {
                (_, Seen::HiddenDecision) | (None, _) => i,
                (Some((_, needed, got)), _) if got + 1 >= *needed as usize => i,
                (Some(_), _) => group_end.get(i + 1).copied().unwrap_or(i),
            };
        }
        // Cards drawn in the open, by position: a redealt card must leave
        // the later ones in the pile.
        let open_draws: Vec<(usize, u16, u16)> = steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match (s, seen[i]) {
                (Step::Chance(Outcome::Card { deck, card }), Seen::Known) => Some((i, *deck, *card)),
                _ => None,
            })
            .collect();
        let end_shape = shape(state);
        let mut walk = Walk {
            steps: &steps,
            seen: &seen,
            shapes: &shapes,
            open_draws: &open_draws,
            buf,
            work: 0,
        };
        let mut worlds = Vec::with_capacity(count);
        for _ in 0..count {
            walk.work = 0;
            let world = self.find_world(state.core.seats, &mut walk, &group_end, &end_shape, rng);
            worlds.push(world.map_err(|NoFit| no_fit())?);
        }
        Ok(worlds)
    }

    /// One world that fits (see the module's documentation); `Err` when
    /// none does within the work budget.
    fn find_world<R: rand::Rng + ?Sized>(
        &self,
        seats: usize,
        walk: &mut Walk<'_>,
        group_end: &[usize],
        end_shape: &Shape,
        rng: &mut R,
    ) -> Result<State, NoFit> {
        let (steps, seen, shapes) = (walk.steps, walk.seen, walk.shapes);
        let n = steps.len();
        let budget = 512 * n + 65_536;
        let mut s = self.new_game(seats).map_err(|_| NoFit)?;
        let mut stack: Vec<Point> = Vec::new();
        let mut i = 0;
        // A misfit at step `.0` that no group from step `.1` on cures.
        let mut innocent_from: Option<(usize, usize)> = None;
        'replay: loop {
            // Forward as far as the world fits.
            let fits = loop {
                if walk.work > budget {
                    return Err(NoFit);
                }
                if i == n {
                    break shape(&s) == *end_shape;
                }
                if shape(&s) != shapes[i] {
                    break false;
                }
                if seen[i] == Seen::Known {
                    walk.work += 1;
                    if self.replay_step(&mut s, steps[i], &mut walk.buf).is_err() {
                        break false;
                    }
                    i += 1;
                    continue;
                }
                let end = group_end[i];
                let combinations = self.combinations(&mut s, i, end, walk);
                stack.push(Point {
                    at: i,
                    end,
                    before: s.clone(),
                    tries: 1,
                    next: 0,
                    combinations,
                    failed_at: None,
                    varied: false,
                });
                if !self.redeal_group(&mut s, i, end, walk, Draw::Random, rng) {
                    break false;
                }
                i = end + 1;
            };
            if fits {
                return Ok(s);
            }
            // The step where this world stopped fitting.
            let mut misfit = i;
            // Draw the latest group afresh: at random a few times, then
            // combination by combination; when none fits, the group before
            // it.
            loop {
                if walk.work > budget {
                    return Err(NoFit);
                }
                let Some(p) = stack.last_mut() else {
                    // Every group was drawn afresh or jumped over: start
                    // again from the first step, with new draws, while the
                    // budget lasts (the jumps are a guess, so this is
                    // where a wrong guess is mended).
                    s = self.new_game(seats).map_err(|_| NoFit)?;
                    i = 0;
                    innocent_from = None;
                    continue 'replay;
                };
                if let Some((step, from)) = innocent_from {
                    if step != misfit {
                        innocent_from = None;
                    } else if p.at >= from {
                        stack.pop();
                        continue;
                    }
                }
                match p.failed_at {
                    None => p.failed_at = Some(misfit),
                    Some(f) if f != misfit => p.varied = true,
                    Some(_) => {}
                }
                if !p.varied && p.tries >= QUICK_TRIES && p.failed_at.is_some_and(|f| f > p.end) {
                    innocent_from = Some((misfit, p.at));
                    stack.pop();
                    continue;
                }
                let how = if p.tries < RANDOM_TRIES {
                    p.tries += 1;
                    Draw::Random
                } else if p.next < p.combinations {
                    p.next += 1;
                    Draw::Systematic(p.next - 1)
                } else {
                    stack.pop();
                    continue;
                };
                s = p.before.clone();
                if self.redeal_group(&mut s, p.at, p.end, walk, how, rng) {
                    i = p.end + 1;
                    continue 'replay;
                }
                misfit = p.at;
            }
        }
    }

    /// The shape of the true game before each step of its history.
    fn shapes(&self, state: &State, steps: &[Step], buf: &mut Vec<Action>) -> Result<Vec<Shape>, GameError> {
        let mut s = self.new_game(state.core.seats)?;
        let mut out = Vec::with_capacity(steps.len());
        for &step in steps {
            out.push(shape(&s));
            self.replay_step(&mut s, step, buf)?;
        }
        Ok(out)
    }

    /// How many combinations a group's hidden steps have: the kinds of card
    /// of the deck at each hidden card, the legal actions at a hidden
    /// decision (a group holds one).
    fn combinations(&self, s: &mut State, from: usize, to: usize, walk: &Walk<'_>) -> u64 {
        let mut n: u64 = 1;
        for i in from..=to {
            let choices = match walk.seen[i] {
                Seen::Known => 1,
                Seen::HiddenDecision => {
                    let mut buf = Vec::new();
                    match self.legal_actions_into(s, &mut buf) {
                        Ok(()) => buf.len() as u64,
                        Err(_) => 0,
                    }
                }
                Seen::HiddenCard => match &walk.shapes[i].1 {
                    Some((ChanceSource::Deck { deck, .. }, _, _)) => self.variant.decks[*deck].cards.len() as u64,
                    _ => 0,
                },
            };
            n = n.saturating_mul(choices);
        }
        n
    }

    /// Applies steps `from..=to` of the history, drawing the hidden ones
    /// afresh (false: the world does not fit).
    fn redeal_group<R: rand::Rng + ?Sized>(
        &self,
        s: &mut State,
        from: usize,
        to: usize,
        walk: &mut Walk<'_>,
        how: Draw,
        rng: &mut R,
    ) -> bool {
        // In systematic draws, the combination's digit for each hidden step.
        let mut rest = match how {
            Draw::Systematic(k) => k,
            Draw::Random => 0,
        };
        let mut digit = |radix: usize| -> usize {
            let d = (rest % radix.max(1) as u64) as usize;
            rest /= radix.max(1) as u64;
            d
        };
        for i in from..=to {
            walk.work += 1;
            if shape(s) != walk.shapes[i] {
                return false;
            }
            let applied = match (walk.seen[i], how) {
                (Seen::Known, _) => self.replay_step(s, walk.steps[i], &mut walk.buf),
                (Seen::HiddenDecision, Draw::Random) => match self.pick_decision(s, &mut walk.buf, rng) {
                    Some(a) => self.apply_scratch(s, a),
                    None => return false,
                },
                (Seen::HiddenDecision, Draw::Systematic(_)) => {
                    if self.legal_actions_into(s, &mut walk.buf).is_err() {
                        return false;
                    }
                    let a = walk.buf[digit(walk.buf.len())];
                    self.apply_scratch(s, a)
                }
                (Seen::HiddenCard, Draw::Random) => match self.pick_card(s, i, walk.open_draws, rng) {
                    Some(o) => self.apply_outcome_scratch(s, o),
                    None => return false,
                },
                (Seen::HiddenCard, Draw::Systematic(_)) => {
                    let deck = match s.core.chance.as_ref().map(|p| &p.source) {
                        Some(ChanceSource::Deck { deck, .. }) => *deck,
                        _ => return false,
                    };
                    let card = digit(self.variant.decks[deck].cards.len()) as u16;
                    if !self.in_pool(s, i, walk.open_draws, card) {
                        return false;
                    }
                    let deck = deck as u16;
                    self.apply_outcome_scratch(s, Outcome::Card { deck, card })
                }
            };
            if applied.is_err() {
                return false;
            }
        }
        true
    }

    /// Replays one known step of the history (false: it does not fit).
    fn replay_step(&self, s: &mut State, step: Step, buf: &mut Vec<Action>) -> Result<(), GameError> {
        match step {
            Step::Decision(a) => {
                self.legal_actions_into(s, buf)?;
                if !buf.contains(&a) {
                    return Err(GameError::Rules("the decision does not fit".into()));
                }
                self.apply_scratch(s, a)
            }
            Step::Chance(o) => self.apply_outcome_scratch(s, o),
        }
    }

    /// Whether `card` can be drawn at hidden step `at` (see `pool`).
    fn in_pool(&self, s: &State, at: usize, open_draws: &[(usize, u16, u16)], card: u16) -> bool {
        let Some(ChanceSource::Deck { deck, .. }) = s.core.chance.as_ref().map(|p| &p.source) else {
            return false;
        };
        self.pool(s, *deck, at, open_draws).contains(&card)
    }

    /// The cards a hidden draw at step `at` may take from `deck`: its pile
    /// less the cards the history later draws in the open from it. When a
    /// pile is shuffled into again before those later draws (a discard pile
    /// made the new deck), that can leave nothing, though the true card was
    /// there: then the whole pile, and the replay checks the rest.
    fn pool(&self, s: &State, deck: usize, at: usize, open_draws: &[(usize, u16, u16)]) -> Vec<u16> {
        let mut pool: Vec<u16> = s.core.decks[deck].clone();
        for &(_, _, c) in open_draws.iter().filter(|(i, d, _)| *i > at && *d as usize == deck) {
            if let Some(k) = pool.iter().position(|&x| x == c) {
                pool.swap_remove(k);
            }
        }
        if pool.is_empty() {
            pool = s.core.decks[deck].clone();
        }
        pool
    }

    /// A hidden decision drawn afresh: one of the legal actions, uniformly.
    fn pick_decision<R: rand::Rng + ?Sized>(
        &self,
        s: &mut State,
        buf: &mut Vec<Action>,
        rng: &mut R,
    ) -> Option<Action> {
        if !matches!(s.to_move(), ToMove::Decision(_)) || self.legal_actions_into(s, buf).is_err() {
            return None;
        }
        Some(buf[rng::below(rng, buf.len() as u32) as usize])
    }

    /// A hidden card drawn afresh from its deck's pile at this point, less
    /// the cards the history later draws in the open from that deck; each
    /// card weighted by its copies.
    fn pick_card<R: rand::Rng + ?Sized>(
        &self,
        s: &State,
        at: usize,
        open_draws: &[(usize, u16, u16)],
        rng: &mut R,
    ) -> Option<Outcome> {
        let Some(ChanceSource::Deck {
            deck,
            visible_to: Some(_),
        }) = s.core.chance.as_ref().map(|p| p.source.clone())
        else {
            return None;
        };
        let mut pool = self.pool(s, deck, at, open_draws);
        if pool.is_empty() {
            return None;
        }
        // In card order, so that the pile's order (which depends on the
        // history) does not matter.
        pool.sort_unstable();
        let card = pool[rng::below(rng, pool.len() as u32) as usize];
        Some(Outcome::Card {
            deck: deck as u16,
            card,
        })
    }
}

/// Who is to move, and the pending chance event (source, size, outcomes
/// received): what every seat sees of a game at a point.
type Shape = (ToMove, Option<(ChanceSource, u32, usize)>);

fn shape(s: &State) -> Shape {
    (
        s.to_move(),
        s.core
            .chance
            .as_ref()
            .map(|p| (p.source.clone(), p.needed, p.got.len())),
    )
}

/// What the replay of a redeal walks over, and the work it has done.
struct Walk<'a> {
    steps: &'a [Step],
    seen: &'a [Seen],
    shapes: &'a [Shape],
    open_draws: &'a [(usize, u16, u16)],
    buf: Vec<Action>,
    work: usize,
}
