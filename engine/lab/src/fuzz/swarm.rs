//! Swarm testing (Groce et al.): each game draws its own weights over the
//! variant's action kinds, and forbids some kinds outright, instead of
//! choosing uniformly among the legal actions. One game favours one kind of
//! action, another never takes a second kind, a third mostly takes a
//! third: paths that a uniform walk almost never takes (the same costly
//! action many times over, then a rare one) come up in a few of them.

use super::play::{Choice, Chooser};
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::{Action, Outcome};
use std::collections::HashSet;

/// Chance that a game forbids a given action kind.
const FORBID_ONE_IN: u32 = 4;
/// Weights are drawn from 1..=WEIGHT_RANGE.
const WEIGHT_RANGE: u32 = 16;

/// Makes one game's choices: first a prefix of a kept game (by action
/// text, so it means the same moves), then weighted random ones.
pub struct Swarm<'p> {
    rng: GameRng,
    /// Weight of each action kind (0: forbidden, unless nothing else is legal).
    weights: Vec<u32>,
    prefix: &'p [Choice],
    at: usize,
    /// Pairs of action kinds taken one after the other: coverage features.
    pub pairs: HashSet<(u16, u16)>,
    last: Option<u16>,
}

impl<'p> Swarm<'p> {
    /// A game with fresh weights drawn from `rng`, starting with `prefix`.
    pub fn new(mut rng: GameRng, kinds: usize, prefix: &'p [Choice]) -> Swarm<'p> {
        let weights = (0..kinds)
            .map(|_| {
                if rng::below(&mut rng, FORBID_ONE_IN) == 0 {
                    0
                } else {
                    1 + rng::below(&mut rng, WEIGHT_RANGE)
                }
            })
            .collect();
        Swarm {
            rng,
            weights,
            prefix,
            at: 0,
            pairs: HashSet::new(),
            last: None,
        }
    }

    /// The next choice of the prefix, if it is one of this kind.
    fn next_kept(&mut self, decision: bool) -> Option<&'p Choice> {
        let c = self.prefix.get(self.at)?;
        if matches!(c, Choice::Decision { .. }) == decision {
            self.at += 1;
            Some(c)
        } else {
            // The game went another way than the kept one: play on freely.
            self.at = self.prefix.len();
            None
        }
    }

    fn weighted(&mut self, legal: &[Action]) -> usize {
        // A kind's weight is shared among its actions, so that a kind with
        // many actions (forty places to move to) does not crowd out the rest.
        let mut per_kind: Vec<(u16, u32)> = Vec::new();
        for a in legal {
            match per_kind.iter_mut().find(|(k, _)| *k == a.kind) {
                Some((_, n)) => *n += 1,
                None => per_kind.push((a.kind, 1)),
            }
        }
        let weight = |k: u16| self.weights.get(k as usize).copied().unwrap_or(1);
        let total: u32 = per_kind.iter().map(|(k, _)| weight(*k)).sum();
        let kind = if total == 0 {
            // Every legal kind is forbidden: the game must go on.
            per_kind[rng::below(&mut self.rng, per_kind.len() as u32) as usize].0
        } else {
            let mut pick = rng::below(&mut self.rng, total);
            let mut chosen = per_kind[0].0;
            for (k, _) in &per_kind {
                if pick < weight(*k) {
                    chosen = *k;
                    break;
                }
                pick -= weight(*k);
            }
            chosen
        };
        let count = per_kind.iter().find(|(k, _)| *k == kind).map_or(1, |(_, n)| *n);
        let nth = rng::below(&mut self.rng, count) as usize;
        legal
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kind == kind)
            .nth(nth)
            .map_or(0, |(i, _)| i)
    }
}

impl Chooser for Swarm<'_> {
    fn decide(&mut self, game: &Game, legal: &[Action]) -> Option<usize> {
        let kept = self.next_kept(true).and_then(|c| match c {
            Choice::Decision { text, .. } => {
                let a = game.parse_action(text)?;
                legal.iter().position(|l| *l == a)
            }
            Choice::Chance { .. } => None,
        });
        let index = match kept {
            Some(i) => i,
            None => {
                self.at = self.prefix.len();
                self.weighted(legal)
            }
        };
        let kind = legal[index].kind;
        if let Some(last) = self.last.replace(kind) {
            self.pairs.insert((last, kind));
        }
        Some(index)
    }

    fn chance(&mut self, outcomes: &[(Outcome, f64)]) -> usize {
        if let Some(Choice::Chance { index, .. }) = self.next_kept(false) {
            if *index < outcomes.len() {
                return *index;
            }
        }
        // By probability (a deck's outcomes weigh by the copies left).
        let mut x: f64 = rng::below(&mut self.rng, 1 << 30) as f64 / (1u64 << 30) as f64;
        for (i, (_, p)) in outcomes.iter().enumerate() {
            if x < *p {
                return i;
            }
            x -= p;
        }
        outcomes.len() - 1
    }
}
