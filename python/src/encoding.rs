//! Actions and chance outcomes as stable integers, the way OpenSpiel and
//! PettingZoo number them.
//!
//! A decision's number is its place in a fixed enumeration of the
//! variant's whole action space: the action kinds in declaration order,
//! each kind owning a block of numbers, and inside a block the values
//! written as a mixed-radix number (first slot most significant). A slot's
//! radix is what it can hold:
//!
//! - an enumeration: its words; a `seat`: the players;
//! - a number with a declared range (`{col:int 0..6}`): the range, its
//!   lowest value numbered 0;
//! - a range relative to an earlier slot (`{to_rank:int rank-1..rank+1}`):
//!   its width (3), the value minus the earlier value's, less the low end;
//! - a seat's word (`{ by_seat = ["x", "o"] }`): nothing, as the deciding
//!   seat is known wherever a number is read or written (radix 1);
//! - an `int` without a range: `value_bound` values (`0..value_bound`), and
//!   a `signed` one `2 * value_bound - 1` (`-(value_bound-1)..value_bound`),
//!   where `value_bound` is the `load_game` option, else the variant's
//!   `[variant] value_bound`, else 32.
//!
//! So `rotate {rot}` with `rot = ["cw","180","ccw"]` owns three numbers,
//! `cw` first, and tic-tac-toe's `{mark}({r:int 0..2},{c:int 0..2})` nine,
//! `3 * r + c`. The numbering depends only on the variant's notation (with
//! its parameters in force), the player count and `value_bound`: the same
//! on every run, machine and engine.
//!
//! A chance outcome's number: the cards of every deck (decks in
//! declaration order, cards in deck-file order) first, then die faces
//! `1..=F` (face `f` is `cards + f - 1`), where `F` is the largest die the
//! scripts roll (`roll(n, 6, ..)` or `roll(n, param("sides"), ..)`), none
//! when they roll none, and `value_bound` when a roll computes its faces.
//! A card drawn from a pile (`[piles]`) is numbered as its deck's card:
//! the pile's places hold that deck's cards and add no numbers.

use rulesmith_core::lint::{dice, Dice};
use rulesmith_core::notation::{Relative, SlotType};
use rulesmith_core::state::{Action, Outcome, Seat, MAX_ARGS};
use rulesmith_core::Variant;

/// `value_bound` when neither the caller nor the variant gives one.
pub const DEFAULT_VALUE_BOUND: u32 = 32;

/// The numbering of one variant's actions and outcomes for one player count.
pub struct Encoding {
    /// Per action kind: its first number and its slots' radices.
    kinds: Vec<Kind>,
    actions: u64,
    /// Per place of cards (as in `Variant::decks`: the decks, then the
    /// places of the piles), the deck whose cards it holds (itself for a
    /// deck) and that deck's first outcome number.
    holds: Vec<(usize, u64)>,
    cards: u64,
    /// Die faces numbered after the cards: `1..=faces`.
    faces: u32,
    pub value_bound: u32,
}

struct Kind {
    offset: u64,
    radices: Vec<u64>,
    /// Per slot, what is added to a value to make its digit.
    shifts: Vec<i64>,
    /// Per slot, whether it holds the deciding seat (a seat's word): no
    /// digit of its own.
    deciding_seat: Vec<bool>,
    /// Per slot, its range relative to an earlier slot, if so: its digit
    /// is counted from the earlier value plus the range's low end.
    relative: Vec<Option<Relative>>,
    size: u64,
}

impl Encoding {
    /// `value_bound`: the caller's, else the variant's, else 32.
    pub fn new(variant: &Variant, players: usize, value_bound: Option<u32>) -> Result<Encoding, String> {
        let value_bound = value_bound.or(variant.value_bound).unwrap_or(DEFAULT_VALUE_BOUND);
        if value_bound == 0 {
            return Err("value_bound must be at least 1".into());
        }
        let mut kinds = Vec::new();
        let mut offset = 0u64;
        for def in &variant.actions {
            let mut radices = Vec::new();
            let mut shifts = Vec::new();
            let mut deciding_seat = Vec::new();
            let mut relative = Vec::new();
            for slot in def.template.slots() {
                let (radix, shift) = match (&slot.ty, slot.range, slot.relative) {
                    (_, _, Some(r)) => ((r.high - r.low + 1) as u64, 0),
                    (SlotType::Int | SlotType::Signed, Some((lo, hi)), None) => ((hi - lo + 1) as u64, -lo),
                    (SlotType::Enum { values, .. }, ..) => (values.len() as u64, 0),
                    (SlotType::SeatWord { .. }, ..) => (1, 0),
                    (SlotType::Seat, ..) => (players as u64, 0),
                    (SlotType::Int, None, None) => (value_bound as u64, 0),
                    (SlotType::Signed, None, None) => (2 * value_bound as u64 - 1, value_bound as i64 - 1),
                };
                radices.push(radix);
                shifts.push(shift);
                deciding_seat.push(matches!(slot.ty, SlotType::SeatWord { .. }));
                relative.push(slot.relative);
            }
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
                deciding_seat,
                relative,
                size,
            });
            offset += size;
        }
        // The decks first, then every pile place on its deck's numbers.
        let mut holds = Vec::with_capacity(variant.decks.len());
        let mut cards = 0u64;
        for (i, d) in variant.decks.iter().enumerate() {
            if d.pile.is_none() {
                holds.push((i, cards));
                cards += d.cards.len() as u64;
            } else {
                holds.push((i, 0));
            }
        }
        for (i, d) in variant.decks.iter().enumerate() {
            if let Some(pile) = d.pile {
                let deck = variant.piles[pile].deck;
                holds[i] = (deck, holds[deck].1);
            }
        }
        let faces = match dice(variant) {
            Dice::None => 0,
            Dice::Largest(n) => n,
            Dice::Unknown => value_bound,
        };
        Ok(Encoding {
            kinds,
            actions: offset,
            holds,
            cards,
            faces,
            value_bound,
        })
    }

    /// How many action numbers there are (OpenSpiel's `num_distinct_actions`).
    pub fn num_actions(&self) -> u64 {
        self.actions
    }

    /// How many outcome numbers there are (`max_chance_outcomes`).
    pub fn num_outcomes(&self) -> u64 {
        self.cards + self.faces as u64
    }

    /// The number of an action; an error names the value that does not
    /// fit. With `seat` (the seat deciding), a seat's word must be its word.
    pub fn action(&self, a: &Action, seat: Option<Seat>, text: impl Fn() -> String) -> Result<u64, String> {
        let k = self
            .kinds
            .get(a.kind as usize)
            .ok_or_else(|| format!("no action kind {}", a.kind))?;
        let mut n = 0u64;
        let values = a.values();
        for (i, v) in values.iter().enumerate() {
            let (r, mut shift) = (k.radices[i], k.shifts[i]);
            if let Some(rel) = k.relative[i] {
                shift = -(values.get(rel.slot).copied().unwrap_or(0) as i64 + rel.low);
            }
            if k.deciding_seat[i] {
                if let Some(seat) = seat.filter(|s| *s as i32 != *v) {
                    return Err(format!(
                        "action '{}' writes the word of P{}, but P{} decides: a seat's word holds the deciding seat",
                        text(),
                        v + 1,
                        seat + 1
                    ));
                }
                continue;
            }
            let digit = *v as i64 + shift;
            if digit < 0 || digit as u64 >= r {
                return Err(format!(
                    "action '{}' has the value {v}, outside the numbering ({}..{}); \
                     declare the slot's range in its text ({{n:int LO..HI}}) or load the game with a larger value_bound",
                    text(),
                    -shift,
                    r as i64 - shift
                ));
            }
            n = n * r + digit as u64;
        }
        Ok(k.offset + n)
    }

    /// The action with this number, decided by `seat` (what a seat's word
    /// holds).
    pub fn decode_action(&self, n: u64, seat: Seat) -> Option<Action> {
        let kind = self.kinds.partition_point(|k| k.offset + k.size <= n);
        let k = self.kinds.get(kind)?;
        let slots = k.radices.len();
        if slots > MAX_ARGS {
            return None;
        }
        // On the stack: this runs at every `apply_action`.
        let mut rest = n - k.offset;
        let mut digits = [0i64; MAX_ARGS];
        for i in (0..slots).rev() {
            let r = k.radices[i];
            digits[i] = (rest % r) as i64;
            rest /= r;
        }
        // First slot first: a relative slot's earlier value is known.
        let mut values = [0i32; MAX_ARGS];
        for i in 0..slots {
            values[i] = match k.relative[i] {
                _ if k.deciding_seat[i] => seat as i32,
                Some(rel) => (values[rel.slot] as i64 + rel.low + digits[i]) as i32,
                None => (digits[i] - k.shifts[i]) as i32,
            };
        }
        Some(Action::new(kind as u16, &values[..slots]))
    }

    pub fn outcome(&self, o: Outcome) -> Result<u64, String> {
        match o {
            Outcome::Card { deck, card } => Ok(self.holds[deck as usize].1 + card as u64),
            Outcome::Face(f) if f >= 1 && f <= self.faces => Ok(self.cards + f as u64 - 1),
            Outcome::Face(f) => Err(format!(
                "a die with face {f} is outside the numbering (1..={}): write the roll's faces as a number \
                 or param(\"NAME\") in the scripts, or load the game with a larger value_bound",
                self.faces
            )),
        }
    }

    /// The outcome with this number. `drawing_from` is the place cards
    /// are being drawn from (a deck, or a pile's place): a card of the
    /// deck it holds is that place's card.
    pub fn decode_outcome(&self, n: u64, drawing_from: Option<usize>) -> Option<Outcome> {
        if n < self.cards {
            // The last deck (not a pile's place) whose numbers start at or before n.
            let (deck, first) = self
                .holds
                .iter()
                .enumerate()
                .filter(|&(i, &(deck, first))| i == deck && first <= n)
                .map(|(_, &held)| held)
                .next_back()?;
            let place = drawing_from
                .filter(|&p| self.holds.get(p).is_some_and(|&(d, _)| d == deck))
                .unwrap_or(deck);
            return Some(Outcome::Card {
                deck: place as u16,
                card: (n - first) as u16,
            });
        }
        let f = n - self.cards + 1;
        (f <= self.faces as u64).then_some(Outcome::Face(f as u32))
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
        let e = Encoding::new(&variant, 2, Some(8)).unwrap();
        let mut seen = std::collections::HashSet::new();
        for values in [[-7, 0, 7, -1], [0, 0, 0, 0], [7, 7, -7, -7], [3, -2, -5, 6]] {
            let a = Action::new(kind, &values);
            let n = e.action(&a, None, || "move".into()).unwrap();
            assert!(seen.insert(n), "two actions share number {n}");
            assert_eq!(e.decode_action(n, 0), Some(a));
        }
        // Outside -(value_bound-1)..value_bound: an error, never a wrong number.
        let wide = Action::new(kind, &[8, 0, 0, 0]);
        assert!(e.action(&wide, None, || "move".into()).unwrap_err().contains("-7..8"));
    }
}
