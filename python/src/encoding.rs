//! Actions and chance outcomes as stable integers, the way OpenSpiel and
//! PettingZoo number them.
//!
//! A decision's number is its place in a fixed enumeration of the
//! variant's whole action space: the action kinds in declaration order,
//! each kind owning a block of numbers, and inside a block the values
//! written as a mixed-radix number (first slot most significant). The radix
//! of a slot is the number of words of an enumeration slot, the number of
//! players of a `seat` slot, `value_bound` (a `load_game` option) of an
//! `int` slot, and `2 * value_bound - 1` of a signed slot, whose digit is
//! the value plus `value_bound - 1` (so `-(value_bound-1)..value_bound`). So `rotate {rot}` with `rot = ["cw","180","ccw"]` owns three
//! numbers, `cw` first. The numbering depends only on the variant's
//! notation, the player count and `value_bound`: the same on every run,
//! machine and engine.
//!
//! A chance outcome's number: the cards of every deck (decks in
//! declaration order, cards in deck-file order) first, then die faces
//! `1..=value_bound` (face `f` is `cards + f - 1`).

use rulesmith_core::notation::SlotType;
use rulesmith_core::state::{Action, Outcome};
use rulesmith_core::Variant;

/// The numbering of one variant's actions and outcomes for one player count.
pub struct Encoding {
    /// Per action kind: its first number and its slots' radices.
    kinds: Vec<Kind>,
    actions: u64,
    /// First outcome number of each deck's cards.
    decks: Vec<u64>,
    cards: u64,
    pub value_bound: u32,
}

struct Kind {
    offset: u64,
    radices: Vec<u64>,
    /// Per slot, what is added to a value to make its digit (non-zero
    /// only for signed slots).
    shifts: Vec<i64>,
    size: u64,
}

impl Encoding {
    pub fn new(variant: &Variant, players: usize, value_bound: u32) -> Result<Encoding, String> {
        if value_bound == 0 {
            return Err("value_bound must be at least 1".into());
        }
        let mut kinds = Vec::new();
        let mut offset = 0u64;
        for def in &variant.actions {
            let (radices, shifts): (Vec<u64>, Vec<i64>) = def
                .template
                .slots()
                .map(|s| match s {
                    SlotType::Enum { values, .. } => (values.len() as u64, 0),
                    SlotType::Seat => (players as u64, 0),
                    SlotType::Int => (value_bound as u64, 0),
                    SlotType::Signed => (2 * value_bound as u64 - 1, value_bound as i64 - 1),
                })
                .unzip();
            let size = radices
                .iter()
                .try_fold(1u64, |acc, r| acc.checked_mul(*r))
                .filter(|s| offset.checked_add(*s).is_some_and(|e| e <= i64::MAX as u64))
                .ok_or_else(|| {
                    format!(
                        "action '{}' has too many values to number with value_bound {value_bound}",
                        def.template.name
                    )
                })?;
            kinds.push(Kind {
                offset,
                radices,
                shifts,
                size,
            });
            offset += size;
        }
        let mut decks = Vec::new();
        let mut cards = 0u64;
        for d in &variant.decks {
            decks.push(cards);
            cards += d.cards.len() as u64;
        }
        Ok(Encoding {
            kinds,
            actions: offset,
            decks,
            cards,
            value_bound,
        })
    }

    /// How many action numbers there are (OpenSpiel's `num_distinct_actions`).
    pub fn num_actions(&self) -> u64 {
        self.actions
    }

    /// How many outcome numbers there are (`max_chance_outcomes`).
    pub fn num_outcomes(&self) -> u64 {
        self.cards + self.value_bound as u64
    }

    /// The number of an action; an error names the value that does not fit.
    pub fn action(&self, a: &Action, text: impl Fn() -> String) -> Result<u64, String> {
        let k = self
            .kinds
            .get(a.kind as usize)
            .ok_or_else(|| format!("no action kind {}", a.kind))?;
        let mut n = 0u64;
        for ((v, r), shift) in a.values().iter().zip(&k.radices).zip(&k.shifts) {
            let digit = *v as i64 + shift;
            if digit < 0 || digit as u64 >= *r {
                return Err(format!(
                    "action '{}' has the value {v}, outside the numbering ({}..{}); \
                     load the game with a larger value_bound",
                    text(),
                    -shift,
                    *r as i64 - shift
                ));
            }
            n = n * r + digit as u64;
        }
        Ok(k.offset + n)
    }

    /// The action with this number.
    pub fn decode_action(&self, n: u64) -> Option<Action> {
        let kind = self.kinds.partition_point(|k| k.offset + k.size <= n);
        let k = self.kinds.get(kind)?;
        let mut rest = n - k.offset;
        let mut values = vec![0i32; k.radices.len()];
        for ((slot, r), shift) in values.iter_mut().zip(&k.radices).zip(&k.shifts).rev() {
            *slot = ((rest % r) as i64 - shift) as i32;
            rest /= r;
        }
        Some(Action::new(kind as u16, &values))
    }

    pub fn outcome(&self, o: Outcome) -> Result<u64, String> {
        match o {
            Outcome::Card { deck, card } => Ok(self.decks[deck as usize] + card as u64),
            Outcome::Face(f) if f >= 1 && f <= self.value_bound => Ok(self.cards + f as u64 - 1),
            Outcome::Face(f) => Err(format!(
                "a die with face {f} is outside the numbering (1..={}); load the game with a larger value_bound",
                self.value_bound
            )),
        }
    }

    pub fn decode_outcome(&self, n: u64) -> Option<Outcome> {
        if n < self.cards {
            let deck = self.decks.partition_point(|&start| start <= n) - 1;
            return Some(Outcome::Card {
                deck: deck as u16,
                card: (n - self.decks[deck]) as u16,
            });
        }
        let f = n - self.cards + 1;
        (f <= self.value_bound as u64).then_some(Outcome::Face(f as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn signed_values_number_and_come_back() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let variant = Variant::load(root.join("variants/space-war")).expect("space-war loads");
        let kind = variant
            .actions
            .iter()
            .position(|a| a.template.name == "move")
            .expect("a move action") as u16;
        let e = Encoding::new(&variant, 2, 8).unwrap();
        let mut seen = std::collections::HashSet::new();
        for values in [[-7, 0, 7, -1], [0, 0, 0, 0], [7, 7, -7, -7], [3, -2, -5, 6]] {
            let a = Action::new(kind, &values);
            let n = e.action(&a, || "move".into()).unwrap();
            assert!(seen.insert(n), "two actions share number {n}");
            assert_eq!(e.decode_action(n), Some(a));
        }
        // Outside -(value_bound-1)..value_bound: an error, never a wrong number.
        let wide = Action::new(kind, &[8, 0, 0, 0]);
        assert!(e.action(&wide, || "move".into()).unwrap_err().contains("-7..8"));
    }
}
