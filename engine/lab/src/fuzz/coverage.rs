//! What fuzzing reached: the [`Coverage`] report (steps, actions, cards,
//! invariants and script functions, with never-reached names shown), and the
//! [`Features`] of one game that coverage guidance compares across games.

use rulesmith_core::game::Game;
use std::collections::{BTreeMap, HashSet};

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
            // By deck: a card drawn from one of a pile's places counts for
            // the pile's deck.
            cards: zero(
                v.decks
                    .iter()
                    .filter(|d| d.pile.is_none())
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

/// The coverage features of one game, hashed: each step, action and card
/// reached, with its count rounded to a power of two (as AFL buckets edge
/// counts), and each pair of action kinds taken one after the other. A game
/// whose features include one never seen before reached somewhere new, and
/// is kept for mutation. Script functions are reported but do not guide:
/// how often each runs differs between the interpreter and compiled rules
/// (which answer some queries without a call), and the search must find
/// the same games on both engines.
#[derive(Clone, Debug, Default)]
pub struct Features {
    set: HashSet<u64>,
}

impl Features {
    /// The features of a game with coverage `cov` (its own counts only).
    pub fn of(cov: &Coverage, pairs: &HashSet<(u16, u16)>) -> Features {
        let mut set = HashSet::new();
        for (category, map) in [(1u64, &cov.steps), (2, &cov.actions), (3, &cov.cards)] {
            for (name, n) in map.iter().filter(|(_, n)| **n > 0) {
                set.insert(hash(&(category, name, bucket(*n))));
            }
        }
        for pair in pairs {
            set.insert(hash(&(5u64, pair)));
        }
        Features { set }
    }

    /// Adds `other`'s features; true when one of them was new.
    pub fn absorb(&mut self, other: &Features) -> bool {
        let before = self.set.len();
        self.set.extend(other.set.iter().copied());
        self.set.len() > before
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// A count's bucket: 1, 2, 3, then powers of two.
fn bucket(n: u64) -> u32 {
    if n <= 3 {
        n as u32
    } else {
        64 - n.leading_zeros() + 2
    }
}

/// A stable hash (the same on every run: the search must be reproducible).
fn hash<T: std::hash::Hash>(value: &T) -> u64 {
    use std::hash::Hasher as _;
    // DefaultHasher::new() has fixed keys, unlike RandomState.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}
