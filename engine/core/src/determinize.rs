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
//! chance event, or one hidden decision, form a group.
//!
//! A world is drawn at random, then repaired where it stops fitting (its
//! *misfit*), one group at a time, every other group keeping its draws:
//! the groups before the misfit are drawn afresh in turn, the latest
//! first, and a draw that moves the misfit later is kept (one that fails
//! at the same step is kept too, so the world keeps moving; one that fails
//! earlier is dropped). Long games hold many hidden groups, and the one a
//! misfit comes from may lie far back (a container sealed empty on the
//! first turn, which a public action many secret draws later
//! contradicts), so the first pass gives each group [`QUICK_TRIES`] draws
//! only, and a seat's own hidden decisions come first when a decision of
//! that seat misfits. The group the misfit lies in gets [`RANDOM_TRIES`]
//! random draws, then its combinations one by one (so that a world is
//! found even when few draws fit; only for groups of a few thousand
//! combinations, as a hand of many cards has too many to go through), and
//! is drawn afresh rather than kept while earlier groups are repaired. A
//! second pass gives every group all those draws; when no single group
//! mends the misfit, a new world is drawn, while the work budget lasts.
//!
//! Keeping the other groups' draws is what makes a far culprit cheap to
//! find: redrawing every later group as well would bring back misfits that
//! were already mended, and the search would start over each time. Draws
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
    /// A die rolled in secret for another seat, not revealed.
    HiddenRoll,
}

/// The hidden groups of a history: group `k` is steps `at[k]..=end[k]`.
struct Groups {
    at: Vec<usize>,
    end: Vec<usize>,
    /// The group each step of a group belongs to.
    of_step: Vec<Option<usize>>,
}

/// The world being searched for: the draws of its hidden steps so far, and
/// the state before each group as far as the world has been replayed.
struct World {
    draws: Vec<Option<Step>>,
    before: Vec<Option<State>>,
}

/// One replay of a world with a group drawn afresh: where it stopped
/// fitting (the history's length when it fits), the state at the end when
/// it fits, and what it drew and passed through, kept only if the search
/// takes this replay.
struct Trial {
    misfit: usize,
    fitted: Option<State>,
    /// The world's state at the misfit when a known decision was not
    /// legal there.
    stuck: Option<State>,
    draws: Vec<(usize, Step)>,
    before: Vec<(usize, State)>,
}

/// How a group's hidden steps are chosen.
#[derive(Clone, Copy)]
enum Draw {
    /// As the world already has them, where they can still be drawn there;
    /// the others at random.
    Keep,
    /// At random, as a world is drawn.
    Random,
    /// Combination `k` of every card kind (or legal action) at each hidden
    /// step: a world that fits is found even when random draws rarely fit
    /// (a redealt card the rules would have shown at once, say).
    Systematic(u64),
}

/// No world fits within the work budget.
struct NoFit;

/// Random draws of a group before trying its combinations one by one (in
/// the first pass for the group the misfit lies in, in the second for
/// every group).
const RANDOM_TRIES: u32 = 64;

/// Combinations of a group tried one by one, at most: enough for a few
/// hidden cards or a decision; a hand of many cards has too many to go
/// through, and spending the work budget on them would leave none for
/// fresh worlds.
const SYSTEMATIC_LIMIT: u64 = 4096;

/// Draws of a group in the search's first pass, when the misfit lies after
/// it (see the module's documentation).
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

    /// A world for a bot that must move when no world fits (a
    /// [`Game::determinize`] error): what `viewer` cannot see is drawn
    /// afresh as there, and every step it saw is replayed as it happened
    /// even where the world's rules would not allow it (a decision taken
    /// though not legal there); a step the world cannot take at all is
    /// left out. Of [`LOOSE_TRIES`] such worlds, the first that needs no
    /// step left out and ends as the game does, else the one that leaves
    /// out fewest. It depends only on what the viewer knows, like a world
    /// that fits, but may contradict it: for moving anyway, never for
    /// anything a player is told.
    pub fn determinize_loose<R: rand::Rng + ?Sized>(
        &self,
        state: &State,
        viewer: Option<Seat>,
        rng: &mut R,
    ) -> Result<State, GameError> {
        if !state.core.hides_from(viewer) {
            return Ok(state.clone());
        }
        if !state.history.is_kept() {
            return Err(GameError::Rules(
                "cannot redeal a state that forgot its history (a throwaway playout state)".into(),
            ));
        }
        let told = self.ctx.borrow().narration.len();
        let steps = state.history.to_vec();
        let seen = hidden_steps(state, viewer, steps.len());
        let mut buf = Vec::new();
        let found = self.shapes(state, &steps, &mut buf).and_then(|(_, returns)| {
            let open = OpenDraws::new(&steps, &seen, returns);
            let end = shape(state);
            let mut best: Option<(usize, State)> = None;
            for _ in 0..LOOSE_TRIES {
                let (left_out, s) = self.loose_world(state.core.seats, &steps, &seen, &open, &mut buf, rng)?;
                let left_out = left_out + usize::from(shape(&s) != end);
                if left_out == 0 {
                    return Ok(s);
                }
                if best.as_ref().is_none_or(|(b, _)| left_out < *b) {
                    best = Some((left_out, s));
                }
            }
            Ok(best.expect("at least one try").1)
        });
        self.ctx.borrow_mut().narration.truncate(told);
        found
    }

    /// One loose world (see [`Game::determinize_loose`]) and how many steps
    /// it left out. Every step is all or nothing here.
    fn loose_world<R: rand::Rng + ?Sized>(
        &self,
        seats: usize,
        steps: &[Step],
        seen: &[Seen],
        open: &OpenDraws,
        buf: &mut Vec<Action>,
        rng: &mut R,
    ) -> Result<(usize, State), GameError> {
        let mut s = self.new_game(seats)?;
        let mut left_out = 0;
        for (i, &step) in steps.iter().enumerate() {
            let done = match (seen[i], step) {
                (Seen::HiddenCard, _) => match self.pick_card(&s, i, open, |_, _, _| false, rng) {
                    Some(o) => self.apply_outcome(&mut s, o).is_ok(),
                    None => false,
                },
                (Seen::HiddenDecision, _) => match self.pick_decision(&mut s, buf, rng) {
                    Some(a) => self.apply_trusted(&mut s, a).is_ok(),
                    None => false,
                },
                (Seen::HiddenRoll, _) => match pick_face(&s, rng) {
                    Some(o) => self.apply_outcome(&mut s, o).is_ok(),
                    None => false,
                },
                (Seen::Known, Step::Decision(a)) => {
                    matches!(s.to_move(), ToMove::Decision(_)) && self.apply_trusted(&mut s, a).is_ok()
                }
                (Seen::Known, Step::Chance(o)) => {
                    self.apply_outcome(&mut s, o).is_ok() || {
                        // A card the world dealt elsewhere: another from the
                        // pile, the step counted as left out.
                        if let Some(o) = self.sample_outcome(&s, rng) {
                            let _ = self.apply_outcome(&mut s, o);
                        }
                        false
                    }
                }
            };
            if !done {
                left_out += 1;
            }
        }
        Ok((left_out, s))
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
        let seen = hidden_steps(state, viewer, n);
        let no_fit = |furthest: &Option<(usize, String)>| {
            let mut text = format!(
                "no redeal of the hidden cards and decisions fits what {} has seen",
                viewer.map_or("a spectator".to_string(), |v| format!("P{}", v + 1))
            );
            if let Some((at, why)) = furthest {
                text += &format!(
                    " (the worlds tried fit the history furthest up to step {} of {n}: {why})",
                    at + 1
                );
            }
            GameError::Rules(text)
        };
        let mut buf = Vec::new();
        // What everyone saw of the true game at each step: who decided, and
        // which chance event (its source, size and progress) was pending.
        // A world must show the same, step by step.
        let (shapes, returns) = self.shapes(state, &steps, &mut buf)?;
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
        // the later ones in the pile (unless cards went back in between).
        let open_draws = OpenDraws::new(&steps, &seen, returns);
        let mut groups = Groups {
            at: Vec::new(),
            end: Vec::new(),
            of_step: vec![None; n],
        };
        let mut i = 0;
        while i < n {
            if seen[i] == Seen::Known {
                i += 1;
                continue;
            }
            let k = groups.at.len();
            groups.at.push(i);
            groups.end.push(group_end[i]);
            for g in &mut groups.of_step[i..=group_end[i]] {
                *g = Some(k);
            }
            i = group_end[i] + 1;
        }
        let end_shape = shape(state);
        let mut walk = Walk {
            steps: &steps,
            seen: &seen,
            shapes: &shapes,
            open: &open_draws,
            buf,
            work: 0,
            learned: Learned::new(),
            furthest: None,
        };
        let mut worlds = Vec::with_capacity(count);
        for _ in 0..count {
            walk.work = 0;
            let world = self.find_world(state.core.seats, &mut walk, &groups, &end_shape, rng);
            worlds.push(world.map_err(|NoFit| no_fit(&walk.furthest))?);
        }
        Ok(worlds)
    }

    /// One world that fits (see the module's documentation); `Err` when
    /// none does within the work budget.
    fn find_world<R: rand::Rng + ?Sized>(
        &self,
        seats: usize,
        walk: &mut Walk<'_>,
        groups: &Groups,
        end_shape: &Shape,
        rng: &mut R,
    ) -> Result<State, NoFit> {
        let n = walk.steps.len();
        let budget = 512 * n + 65_536;
        let mut world = World {
            draws: vec![None; n],
            before: vec![None; groups.at.len()],
        };
        // Each round starts from a world drawn at random, and repairs it.
        loop {
            world.draws.fill(None);
            world.before.fill(None);
            let start = self.new_game(seats).map_err(|_| NoFit)?;
            let first = self.replay_from(start, 0, None, None, walk, groups, &world.draws, end_shape, budget, rng)?;
            let mut misfit = first.misfit;
            let mut stuck = first.stuck.clone();
            if let Some(s) = first.fitted {
                return Ok(s);
            }
            if groups.at.first().is_none_or(|&at| at >= misfit) {
                // Nothing drawn before the misfit: no redeal can mend it.
                return Err(NoFit);
            }
            take(&mut world, first);
            // Repair the world one group at a time, the latest first, the
            // others keeping their draws: a draw that moves the misfit later
            // is kept, and the search goes on from the new misfit. A first
            // pass gives each group a few draws (the culprit is usually
            // found among many innocent groups), a second one all of them.
            'repair: loop {
                // First, cards exchanged between hidden draws: cheap, and
                // what mends a seat shown not to hold some cards.
                match self.exchange(walk, groups, &mut world, misfit, stuck.take(), end_shape, budget, rng)? {
                    Exchange::Fitted(s) => return Ok(s),
                    Exchange::Moved(m, st) => {
                        misfit = m;
                        stuck = st;
                        continue 'repair;
                    }
                    Exchange::Nothing => {}
                }
                // The group the misfit lies in, if its own draws may be at
                // fault: drawn afresh while earlier groups are repaired,
                // rather than kept.
                let fresh = groups
                    .of_step
                    .get(misfit)
                    .copied()
                    .flatten()
                    .filter(|&k| groups.at[k] < misfit);
                let order = suspects(walk, groups, misfit);
                for thorough in [false, true] {
                    for &k in &order {
                        let inside = misfit <= groups.end[k];
                        if thorough && inside {
                            // Given every draw in the first pass already.
                            continue;
                        }
                        let Some(before) = world.before[k].clone() else {
                            continue;
                        };
                        let (mut tries, mut next, mut combinations) = (0, 0, None);
                        loop {
                            let how = if !thorough && !inside && tries >= QUICK_TRIES {
                                break;
                            } else if tries < RANDOM_TRIES {
                                Draw::Random
                            } else {
                                let c = *combinations.get_or_insert_with(|| {
                                    self.combinations(&mut before.clone(), groups.at[k], groups.end[k], walk)
                                });
                                if next >= c.min(SYSTEMATIC_LIMIT) {
                                    break;
                                }
                                next += 1;
                                Draw::Systematic(next - 1)
                            };
                            tries += 1;
                            let trial = self.replay_from(
                                before.clone(),
                                groups.at[k],
                                Some((k, how)),
                                fresh,
                                walk,
                                groups,
                                &world.draws,
                                end_shape,
                                budget,
                                rng,
                            )?;
                            if let Some(s) = trial.fitted {
                                return Ok(s);
                            }
                            if trial.misfit > misfit {
                                misfit = trial.misfit;
                                stuck = trial.stuck.clone();
                                take(&mut world, trial);
                                continue 'repair;
                            }
                            if trial.misfit == misfit {
                                // Just as good: kept, so that the world
                                // keeps moving while the culprit is sought.
                                stuck = trial.stuck.clone();
                                take(&mut world, trial);
                            }
                        }
                    }
                }
                // No single group mends it: a new world.
                break;
            }
        }
    }

    /// Mends a misfit by exchanging cards between hidden draws (or with
    /// the cards nobody drew), every other draw kept; see the module's
    /// documentation. `Moved` when the world now fits further.
    ///
    /// When a seat's known decision was not legal in the world (`stuck`),
    /// the cards the world's legal list names (an action's words that are
    /// card ids of the hidden draw's deck) are what made the seat act
    /// otherwise: the seat was shown not to hold them. They are exchanged
    /// out of its hidden draws together, the names of each new listing
    /// added, and, once the world fits further, learned for those draws.
    /// Then single exchanges, the seat's own draws first, latest first.
    #[allow(clippy::too_many_arguments)]
    fn exchange<R: rand::Rng + ?Sized>(
        &self,
        walk: &mut Walk<'_>,
        groups: &Groups,
        world: &mut World,
        misfit: usize,
        stuck: Option<State>,
        end_shape: &Shape,
        budget: usize,
        rng: &mut R,
    ) -> Result<Exchange, NoFit> {
        // Every hidden card drawn so far: (step, deck, seat).
        let slots: Vec<(usize, usize, Seat)> = (0..walk.steps.len())
            .filter(|&i| walk.seen[i] == Seen::HiddenCard && world.draws[i].is_some())
            .filter_map(|i| match &walk.shapes[i].1 {
                Some((
                    ChanceSource::Deck {
                        deck,
                        visible_to: Some(seat),
                    },
                    _,
                    _,
                )) => Some((i, *deck, *seat)),
                _ => None,
            })
            .collect();
        if !slots.iter().any(|&(i, _, _)| i < misfit) {
            return Ok(Exchange::Nothing);
        }
        let decider = match walk.shapes.get(misfit).map(|s| s.0) {
            Some(ToMove::Decision(q)) => Some(q),
            _ => None,
        };
        // Named cards out of the deciding seat's latest hidden cards (what
        // it holds now: a hand dealt at once), together.
        if let (Some(q), Some(mut stuck)) = (decider, stuck) {
            let latest = slots
                .iter()
                .filter(|&&(i, _, seat)| seat == q && i < misfit)
                .map(|&(i, _, _)| groups.of_step[i])
                .next_back()
                .flatten();
            let mut named = std::collections::BTreeSet::new();
            let mut draws = world.draws.clone();
            for _ in 0..8 {
                self.names(&mut stuck, &mut walk.buf, &mut named);
                let culprits: Vec<(usize, usize)> = slots
                    .iter()
                    .filter(|&&(i, d, seat)| {
                        seat == q
                            && groups.of_step[i] == latest
                            && card_of(draws[i]).is_some_and(|c| named.contains(&(d, c)))
                    })
                    .map(|&(i, d, _)| (i, d))
                    .collect();
                if culprits.is_empty() {
                    break;
                }
                let mut from = misfit;
                for &(i, d) in &culprits {
                    let kinds = self.variant.decks[d].cards.len() as u16;
                    let k = groups.of_step[i].expect("a hidden step is in a group");
                    let pool = self.pool_before(world, groups, k, d, walk);
                    let fits = |c: u16| {
                        !named.contains(&(d, c))
                            && !walk.learned.contains(&(k, q, d, c))
                            && (pool.contains(&c)
                                || held_elsewhere(&draws, &slots, i, d, c, |t, seat| seat != q || t > misfit))
                    };
                    let choices: Vec<u16> = (0..kinds).filter(|&c| fits(c)).collect();
                    if choices.is_empty() {
                        continue;
                    }
                    let c = choices[rng::below(rng, choices.len() as u32) as usize];
                    // The named card goes to a draw of another seat, or
                    // back among the cards nobody drew.
                    from = from.min(put(&mut draws, &slots, i, d, c, |t, seat| seat != q || t > misfit));
                }
                let Some(trial) = self.retry(walk, groups, world, &draws, from, end_shape, budget, rng)? else {
                    break;
                };
                if let Some(s) = trial.fitted {
                    return Ok(Exchange::Fitted(s));
                }
                if trial.misfit > misfit {
                    for &(i, d) in &culprits {
                        let k = groups.of_step[i].expect("a hidden step is in a group");
                        for &(nd, c) in &named {
                            if nd == d {
                                walk.learned.insert((k, q, d, c));
                            }
                        }
                    }
                    return Ok(accept(world, draws, trial));
                }
                match trial.stuck {
                    Some(st) if trial.misfit == misfit => {
                        // The replay redraws a kept card that can no longer
                        // be drawn where it was: the world is what it drew.
                        for &(i, step) in &trial.draws {
                            draws[i] = Some(step);
                        }
                        stuck = st;
                    }
                    _ => break,
                }
            }
        }
        // Single exchanges.
        let mut order: Vec<(usize, usize, Seat)> = slots.iter().copied().filter(|&(i, _, _)| i < misfit).collect();
        order.reverse();
        order.sort_by_key(|&(_, _, seat)| Some(seat) != decider);
        let mut tries = 0;
        for &(i, d, seat) in &order {
            let kinds = self.variant.decks[d].cards.len() as u16;
            let k = groups.of_step[i].expect("a hidden step is in a group");
            let now = card_of(world.draws[i]);
            let pool = self.pool_before(world, groups, k, d, walk);
            let choices: Vec<u16> = (0..kinds)
                .filter(|&c| {
                    Some(c) != now
                        && !walk.learned.contains(&(k, seat, d, c))
                        && (pool.contains(&c) || held_elsewhere(&world.draws, &slots, i, d, c, |_, _| true))
                })
                .collect();
            for _ in 0..SINGLE_TRIES.min(choices.len()) {
                if tries >= EXCHANGE_TRIES {
                    return Ok(Exchange::Nothing);
                }
                tries += 1;
                let c = choices[rng::below(rng, choices.len() as u32) as usize];
                let mut draws = world.draws.clone();
                let from = put(&mut draws, &slots, i, d, c, |_, _| true);
                let Some(trial) = self.retry(walk, groups, world, &draws, from, end_shape, budget, rng)? else {
                    continue;
                };
                if let Some(s) = trial.fitted {
                    return Ok(Exchange::Fitted(s));
                }
                if trial.misfit > misfit {
                    return Ok(accept(world, draws, trial));
                }
            }
        }
        Ok(Exchange::Nothing)
    }

    /// The cards of `deck` a hidden draw of group `k` may take, as the world
    /// stands before that group (empty when it has not been replayed).
    fn pool_before(&self, world: &World, groups: &Groups, k: usize, deck: usize, walk: &Walk<'_>) -> Vec<u16> {
        world.before[k]
            .as_ref()
            .map_or_else(Vec::new, |s| self.pool(s, deck, groups.at[k], walk.open))
    }

    /// Replays the world with `draws` from the group of step `from` on
    /// (`None` when the world has no state before that group).
    #[allow(clippy::too_many_arguments)]
    fn retry<R: rand::Rng + ?Sized>(
        &self,
        walk: &mut Walk<'_>,
        groups: &Groups,
        world: &World,
        draws: &[Option<Step>],
        from: usize,
        end_shape: &Shape,
        budget: usize,
        rng: &mut R,
    ) -> Result<Option<Trial>, NoFit> {
        let Some(k) = groups.of_step.get(from).copied().flatten() else {
            return Ok(None);
        };
        let Some(before) = world.before[k].clone() else {
            return Ok(None);
        };
        self.replay_from(
            before,
            groups.at[k],
            None,
            None,
            walk,
            groups,
            draws,
            end_shape,
            budget,
            rng,
        )
        .map(Some)
    }

    /// Adds to `named` the cards the legal actions of `s` name: the words
    /// of their texts that are card ids, as (deck, card) of every deck that
    /// has such a card.
    fn names(&self, s: &mut State, buf: &mut Vec<Action>, named: &mut std::collections::BTreeSet<(usize, u16)>) {
        if self.legal_actions_into(s, buf).is_err() {
            return;
        }
        for a in buf.iter() {
            let text = self.action_text(a);
            for word in text.split_whitespace() {
                for (d, deck) in self.variant.decks.iter().enumerate() {
                    if let Some(c) = deck.card_index(word) {
                        named.insert((d, c as u16));
                    }
                }
            }
        }
    }

    /// Replays the history of `world` from step `at`, in state `s`: group
    /// `redraw.0` (starting at `at`) drawn as `redraw.1`, group `fresh` at
    /// random, every other group keeping its draws where it can; until the
    /// world stops fitting or the history ends.
    #[allow(clippy::too_many_arguments)]
    fn replay_from<R: rand::Rng + ?Sized>(
        &self,
        mut s: State,
        mut i: usize,
        redraw: Option<(usize, Draw)>,
        fresh: Option<usize>,
        walk: &mut Walk<'_>,
        groups: &Groups,
        draws: &[Option<Step>],
        end_shape: &Shape,
        budget: usize,
        rng: &mut R,
    ) -> Result<Trial, NoFit> {
        let n = walk.steps.len();
        let (shapes, steps) = (walk.shapes, walk.steps);
        let mut trial = Trial {
            misfit: n,
            fitted: None,
            stuck: None,
            draws: Vec::new(),
            before: Vec::new(),
        };
        loop {
            if walk.work > budget {
                return Err(NoFit);
            }
            if i == n {
                if shape(&s) == *end_shape {
                    trial.fitted = Some(s);
                } else {
                    walk.note(n, || format!("the world ends with {}", self.shape_text(&shape(&s))));
                }
                return Ok(trial);
            }
            if shape(&s) != walk.shapes[i] {
                walk.note(i, || {
                    format!(
                        "the world has {} where the game had {}",
                        self.shape_text(&shape(&s)),
                        self.shape_text(&shapes[i])
                    )
                });
                trial.misfit = i;
                return Ok(trial);
            }
            let Some(k) = groups.of_step[i] else {
                walk.work += 1;
                let fits = match walk.steps[i] {
                    Step::Decision(a) => {
                        if self.legal_actions_into(&mut s, &mut walk.buf).is_err() || !walk.buf.contains(&a) {
                            walk.note(i, || {
                                format!(
                                    "{} '{}' is not legal in the world",
                                    self.shape_text(&shapes[i]),
                                    self.action_text(&a)
                                )
                            });
                            // Kept: what the seat could do instead tells
                            // the repair which cards it cannot hold.
                            trial.misfit = i;
                            trial.stuck = Some(s);
                            return Ok(trial);
                        }
                        self.apply_scratch(&mut s, a).is_ok()
                    }
                    Step::Chance(o) => self.apply_outcome_scratch(&mut s, o).is_ok(),
                };
                if !fits {
                    walk.note(i, || format!("'{}' fails in the world", self.step_text(steps[i])));
                    trial.misfit = i;
                    return Ok(trial);
                }
                i += 1;
                continue;
            };
            let how = match redraw {
                Some((r, how)) if r == k => how,
                _ => {
                    trial.before.push((k, s.clone()));
                    if fresh == Some(k) {
                        Draw::Random
                    } else {
                        Draw::Keep
                    }
                }
            };
            if let Err(at) = self.redeal_group(&mut s, k, groups, walk, draws, how, &mut trial.draws, rng) {
                walk.note(at, || "no draw of the hidden cards or decision here fits".to_string());
                trial.misfit = at;
                return Ok(trial);
            }
            i = groups.end[k] + 1;
        }
    }

    /// The shape of the true game before each step of its history, and for
    /// each deck the steps after which its draw pile had grown (cards put
    /// back). Only the piles' sizes are read, which every seat sees.
    #[allow(clippy::type_complexity)]
    fn shapes(
        &self,
        state: &State,
        steps: &[Step],
        buf: &mut Vec<Action>,
    ) -> Result<(Vec<Shape>, Vec<Vec<usize>>), GameError> {
        let mut s = self.new_game(state.core.seats)?;
        let mut out = Vec::with_capacity(steps.len());
        let mut returns = vec![Vec::new(); s.core.decks.len()];
        for (i, &step) in steps.iter().enumerate() {
            out.push(shape(&s));
            let sizes: Vec<usize> = s.core.decks.iter().map(Vec::len).collect();
            self.replay_step(&mut s, step, buf)?;
            for (d, pile) in s.core.decks.iter().enumerate() {
                if pile.len() > sizes[d] {
                    returns[d].push(i);
                }
            }
        }
        Ok((out, returns))
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
                Seen::HiddenRoll => match &walk.shapes[i].1 {
                    Some((ChanceSource::Dice { sides, .. }, _, _)) => *sides as u64,
                    _ => 0,
                },
            };
            n = n.saturating_mul(choices);
        }
        n
    }

    /// Applies group `k` of the history, drawing its hidden steps `how`,
    /// and notes what it drew; `Err` with the step where the world stops
    /// fitting.
    // The step's index reads several parallel lists (shapes, seen, draws).
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    fn redeal_group<R: rand::Rng + ?Sized>(
        &self,
        s: &mut State,
        k: usize,
        groups: &Groups,
        walk: &mut Walk<'_>,
        draws: &[Option<Step>],
        how: Draw,
        drawn: &mut Vec<(usize, Step)>,
        rng: &mut R,
    ) -> Result<(), usize> {
        // In systematic draws, the combination's digit for each hidden step.
        let mut rest = match how {
            Draw::Systematic(k) => k,
            _ => 0,
        };
        let mut digit = |radix: usize| -> usize {
            let d = (rest % radix.max(1) as u64) as usize;
            rest /= radix.max(1) as u64;
            d
        };
        for i in groups.at[k]..=groups.end[k] {
            walk.work += 1;
            if shape(s) != walk.shapes[i] {
                return Err(i);
            }
            let kept = match how {
                Draw::Keep => draws[i],
                _ => None,
            };
            let step = match (walk.seen[i], how) {
                (Seen::Known, _) => {
                    if self.replay_step(s, walk.steps[i], &mut walk.buf).is_err() {
                        return Err(i);
                    }
                    continue;
                }
                (Seen::HiddenDecision, Draw::Systematic(_)) => {
                    if self.legal_actions_into(s, &mut walk.buf).is_err() {
                        return Err(i);
                    }
                    Step::Decision(walk.buf[digit(walk.buf.len())])
                }
                (Seen::HiddenDecision, _) => {
                    let Some(a) = self.pick_decision(s, &mut walk.buf, rng) else {
                        return Err(i);
                    };
                    match kept {
                        Some(Step::Decision(k)) if walk.buf.contains(&k) => Step::Decision(k),
                        _ => Step::Decision(a),
                    }
                }
                (Seen::HiddenCard, Draw::Systematic(_)) => {
                    let deck = match s.core.chance.as_ref().map(|p| &p.source) {
                        Some(ChanceSource::Deck { deck, .. }) => *deck,
                        _ => return Err(i),
                    };
                    let card = digit(self.variant.decks[deck].cards.len()) as u16;
                    if !self.pool(s, deck, i, walk.open).contains(&card) {
                        return Err(i);
                    }
                    Step::Chance(Outcome::Card {
                        deck: deck as u16,
                        card,
                    })
                }
                (Seen::HiddenRoll, Draw::Systematic(_)) => match s.core.chance.as_ref().map(|p| &p.source) {
                    Some(ChanceSource::Dice { sides, .. }) => {
                        Step::Chance(Outcome::Face(digit(*sides as usize) as u32 + 1))
                    }
                    _ => return Err(i),
                },
                (Seen::HiddenRoll, _) => match (kept, s.core.chance.as_ref().map(|p| &p.source)) {
                    (Some(Step::Chance(Outcome::Face(f))), Some(ChanceSource::Dice { sides, .. })) if f <= *sides => {
                        Step::Chance(Outcome::Face(f))
                    }
                    _ => match pick_face(s, rng) {
                        Some(o) => Step::Chance(o),
                        None => return Err(i),
                    },
                },
                (Seen::HiddenCard, _) => match kept {
                    Some(Step::Chance(Outcome::Card { deck, card }))
                        if self.in_pool_of(s, deck as usize, i, walk.open, card) =>
                    {
                        Step::Chance(Outcome::Card { deck, card })
                    }
                    _ => match self.pick_card(
                        s,
                        i,
                        walk.open,
                        |seat, d, c| walk.learned.contains(&(k, seat, d, c)),
                        rng,
                    ) {
                        Some(o) => Step::Chance(o),
                        None => return Err(i),
                    },
                },
            };
            let applied = match step {
                Step::Decision(a) => self.apply_scratch(s, a),
                Step::Chance(o) => self.apply_outcome_scratch(s, o),
            };
            if applied.is_err() {
                return Err(i);
            }
            drawn.push((i, step));
        }
        Ok(())
    }

    /// What a shape is, in words: who decides, or which chance event is
    /// pending.
    fn shape_text(&self, shape: &Shape) -> String {
        match (&shape.0, &shape.1) {
            (ToMove::Decision(seat), _) => format!("a decision of P{}", seat + 1),
            (ToMove::Terminal, _) => "the game over".to_string(),
            (ToMove::Chance, Some((ChanceSource::Dice { sides, visible_to }, needed, got))) => format!(
                "a roll of {needed} d{sides}{} ({got} rolled)",
                visible_to.map_or(String::new(), |v| format!(" seen by P{}", v + 1))
            ),
            (ToMove::Chance, Some((ChanceSource::Deck { deck, visible_to }, needed, got))) => format!(
                "a draw of {needed} from '{}'{} ({got} drawn)",
                self.variant.decks[*deck].name,
                visible_to.map_or(String::new(), |v| format!(" seen by P{}", v + 1))
            ),
            (ToMove::Chance, None) => "a chance event".to_string(),
        }
    }

    /// A step of a history as a record writes it.
    fn step_text(&self, step: Step) -> String {
        match step {
            Step::Decision(a) => self.action_text(&a),
            Step::Chance(o) => format!("chance {}", self.outcome_text(o)),
        }
    }

    /// Replays one known step of the history (false: it does not fit).
    fn replay_step(&self, s: &mut State, step: Step, buf: &mut Vec<Action>) -> Result<(), GameError> {
        match step {
            Step::Decision(a) => {
                self.legal_actions_into(s, buf)?;
                if !buf.contains(&a) {
                    return Err(GameError::Rules("the decision does not fit".into()));
                }
                Ok(self.apply_scratch(s, a)?)
            }
            Step::Chance(o) => Ok(self.apply_outcome_scratch(s, o)?),
        }
    }

    /// Whether `card` of `deck` can be drawn at hidden step `at`: the
    /// pending event draws from that deck, and it is in the pool.
    fn in_pool_of(&self, s: &State, deck: usize, at: usize, open: &OpenDraws, card: u16) -> bool {
        matches!(s.core.chance.as_ref().map(|p| &p.source), Some(ChanceSource::Deck { deck: d, visible_to: Some(_) }) if *d == deck)
            && self.pool(s, deck, at, open).contains(&card)
    }

    /// The cards a hidden draw at step `at` may take from `deck`: its pile
    /// less the cards the history later draws in the open from it before
    /// any card goes back into that pile (a card put back may be the one
    /// drawn here). If that leaves nothing, though the true card was
    /// there: the whole pile, and the replay checks the rest.
    fn pool(&self, s: &State, deck: usize, at: usize, open: &OpenDraws) -> Vec<u16> {
        let mut pool: Vec<u16> = s.core.decks[deck].clone();
        for c in open.later(deck, at) {
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
    /// the cards the history later draws in the open from that deck, and
    /// less those `avoid(seat, deck, card)` rules out for the seat it is
    /// dealt to (unless that rules out every card); each card weighted by
    /// its copies.
    fn pick_card<R: rand::Rng + ?Sized>(
        &self,
        s: &State,
        at: usize,
        open: &OpenDraws,
        avoid: impl Fn(Seat, usize, u16) -> bool,
        rng: &mut R,
    ) -> Option<Outcome> {
        let Some(ChanceSource::Deck {
            deck,
            visible_to: Some(seat),
        }) = s.core.chance.as_ref().map(|p| p.source.clone())
        else {
            return None;
        };
        let mut pool = self.pool(s, deck, at, open);
        if pool.is_empty() {
            return None;
        }
        let allowed: Vec<u16> = pool.iter().copied().filter(|&c| !avoid(seat, deck, c)).collect();
        if !allowed.is_empty() {
            pool = allowed;
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

/// The groups that may cause a misfit at step `misfit`, in the order the
/// search redraws them: the latest first, except that when a seat's known
/// decision misfits, that seat's own hidden decisions come first (a seat's
/// choices are what its later choices depend on most, as a sealed
/// container's contents decide what can later come out of it; in long
/// games they are few among many hidden cards).
fn suspects(walk: &Walk<'_>, groups: &Groups, misfit: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..groups.at.len()).rev().filter(|&k| groups.at[k] < misfit).collect();
    if let Some((ToMove::Decision(seat), _)) = walk.shapes.get(misfit) {
        let decides = |k: &usize| {
            (groups.at[*k]..=groups.end[*k])
                .any(|i| walk.seen[i] == Seen::HiddenDecision && walk.shapes[i].0 == ToMove::Decision(*seat))
        };
        order.sort_by_key(|k| !decides(k));
    }
    order
}

/// What each step of a history is to `viewer`: the cards dealt in secret
/// to others and others' secret decisions, not revealed, are hidden.
fn hidden_steps(state: &State, viewer: Option<Seat>, n: usize) -> Vec<Seen> {
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
    for r in state
        .core
        .secret_rolls
        .iter()
        .filter(|r| !r.revealed && Some(r.seen_by) != viewer)
    {
        if let Some(s) = seen.get_mut(r.at as usize) {
            *s = Seen::HiddenRoll;
        }
    }
    seen
}

/// A die rolled in secret, rolled afresh: a fair face of the pending roll.
fn pick_face<R: rand::Rng + ?Sized>(s: &State, rng: &mut R) -> Option<Outcome> {
    match s.core.chance.as_ref().map(|p| &p.source) {
        Some(ChanceSource::Dice { sides, .. }) => Some(Outcome::Face(rng::below(rng, *sides) + 1)),
        _ => None,
    }
}

/// What the exchanges of [`Game::exchange`] came to.
enum Exchange {
    Fitted(State),
    /// The world fits further: up to this misfit (and its stuck state).
    Moved(usize, Option<State>),
    Nothing,
}

/// (group, seat, deck, card): a card that seat's hidden draws in the
/// group were shown not to hold. A group may deal to several seats (a deal
/// round the table): what one seat cannot hold, another may.
type Learned = std::collections::BTreeSet<(usize, Seat, usize, u16)>;

/// Loose worlds drawn by [`Game::determinize_loose`] before it takes the
/// best.
const LOOSE_TRIES: usize = 16;

/// Exchanges tried one card at a time, per draw and in all, for one misfit.
const SINGLE_TRIES: usize = 4;
const EXCHANGE_TRIES: usize = 96;

/// The card a draw took.
fn card_of(step: Option<Step>) -> Option<u16> {
    match step {
        Some(Step::Chance(Outcome::Card { card, .. })) => Some(card),
        _ => None,
    }
}

/// Puts card `c` of deck `d` into hidden draw `i`; a draw that holds `c`
/// (one `partner` allows, by step and seat) takes draw `i`'s card in
/// exchange, else `c` comes from the cards nobody drew (the replay checks
/// that it is there). Returns the earliest step changed.
fn put(
    draws: &mut [Option<Step>],
    slots: &[(usize, usize, Seat)],
    i: usize,
    d: usize,
    c: u16,
    partner: impl Fn(usize, Seat) -> bool,
) -> usize {
    let old = draws[i];
    let holder = slots
        .iter()
        .find(|&&(t, td, seat)| t != i && td == d && card_of(draws[t]) == Some(c) && partner(t, seat))
        .map(|&(t, _, _)| t);
    draws[i] = Some(Step::Chance(Outcome::Card {
        deck: d as u16,
        card: c,
    }));
    match holder {
        Some(t) => {
            draws[t] = old;
            t.min(i)
        }
        None => i,
    }
}

/// Whether a hidden draw other than `i` (one `partner` allows) holds card
/// `c` of deck `d`: an exchange with it keeps the world's cards.
fn held_elsewhere(
    draws: &[Option<Step>],
    slots: &[(usize, usize, Seat)],
    i: usize,
    d: usize,
    c: u16,
    partner: impl Fn(usize, Seat) -> bool,
) -> bool {
    slots
        .iter()
        .any(|&(t, td, seat)| t != i && td == d && card_of(draws[t]) == Some(c) && partner(t, seat))
}

/// Takes an exchange the search keeps: its draws, then what the replay
/// drew and passed through.
fn accept(world: &mut World, draws: Vec<Option<Step>>, trial: Trial) -> Exchange {
    world.draws = draws;
    let (misfit, stuck) = (trial.misfit, trial.stuck.clone());
    take(world, trial);
    Exchange::Moved(misfit, stuck)
}

/// Takes a replay's draws and states into the world.
fn take(world: &mut World, trial: Trial) {
    for (i, step) in trial.draws {
        world.draws[i] = Some(step);
    }
    for (k, s) in trial.before {
        world.before[k] = Some(s);
    }
}

/// The cards the history draws in the open (by position: step, deck,
/// card), and for each deck the steps after which its pile had grown.
struct OpenDraws {
    draws: Vec<(usize, u16, u16)>,
    returns: Vec<Vec<usize>>,
}

impl OpenDraws {
    fn new(steps: &[Step], seen: &[Seen], returns: Vec<Vec<usize>>) -> OpenDraws {
        OpenDraws {
            draws: steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| match (s, seen[i]) {
                    (Step::Chance(Outcome::Card { deck, card }), Seen::Known) => Some((i, *deck, *card)),
                    _ => None,
                })
                .collect(),
            returns,
        }
    }

    /// The cards drawn in the open from `deck` after step `at` and before
    /// any card goes back into its pile: a hidden draw at `at` cannot have
    /// taken them.
    fn later(&self, deck: usize, at: usize) -> impl Iterator<Item = u16> + '_ {
        let back = self.returns[deck]
            .iter()
            .find(|&&r| r >= at)
            .copied()
            .unwrap_or(usize::MAX);
        self.draws
            .iter()
            .filter(move |&&(i, d, _)| i > at && i <= back && d as usize == deck)
            .map(|&(_, _, c)| c)
    }
}

/// What the replay of a redeal walks over, and the work it has done.
struct Walk<'a> {
    steps: &'a [Step],
    seen: &'a [Seen],
    shapes: &'a [Shape],
    open: &'a OpenDraws,
    buf: Vec<Action>,
    work: usize,
    /// What the search learned about the true history (see `exchange`):
    /// kept for every world of one redeal, and no hidden card is drawn
    /// against it, so that a fact found once is not sought again.
    learned: Learned,
    /// The furthest step where a world stopped fitting, and why (what a
    /// failure reports).
    furthest: Option<(usize, String)>,
}

impl Walk<'_> {
    /// Notes that a world stopped fitting at step `at`, if no world tried
    /// went further.
    fn note(&mut self, at: usize, why: impl FnOnce() -> String) {
        if self.furthest.as_ref().is_none_or(|(f, _)| at > *f) {
            self.furthest = Some((at, why()));
        }
    }
}
