//! Piles: named places of a deck's cards (`[piles]` in variant.toml), one
//! per seat (draw pile, hand, discard) or one on the table (a supply, the
//! trick), that cards move between.
//!
//! Each place of a pile is an entry of `Core::decks` after the decks
//! themselves (see `variant::Pile`), so a draw from a pile is an ordinary
//! chance event of the engine, and determinizing, records and the leak
//! checks need nothing new: a card drawn into a pile only its owner sees
//! is a secret draw seen by that seat, and a card moved from a hidden
//! place into a pile everyone sees is revealed. Who sees what follows from
//! the declared `visible`, without the designer writing it.

use crate::ctx::{Ctx, Place};
use crate::state::{ChanceSource, PendingChance, Seat};
use crate::variant::{Variant, Visibility};

/// Who sees the cards at a place of `Core::decks`: a deck's draw pile is
/// seen by nobody; a pile's place by its declared `visible` (and for a
/// pile per seat, the seat it belongs to).
pub fn visibility(variant: &Variant, place: usize) -> (Visibility, Option<Seat>) {
    match variant.decks[place].pile {
        None => (Visibility::Nobody, None),
        Some(p) => {
            let pile = &variant.piles[p];
            let owner = pile.per_seat.then(|| place - pile.first);
            (pile.visible, owner)
        }
    }
}

impl Ctx {
    /// The entry of `Core::decks` of `place` for `seat`: a deck, a pile on
    /// the table (any seat), or seat `seat`'s place of a pile per seat.
    pub fn place_index(&self, place: Place, seat: i64, variant: &Variant, native: &str) -> Result<usize, String> {
        match place {
            Place::Deck(d) => Ok(d),
            Place::Pile(p) => {
                let pile = &variant.piles[p];
                if !pile.per_seat {
                    return Ok(pile.first);
                }
                if seat < 0 || seat as usize >= self.core.seats {
                    return Err(format!(
                        "{native}: pile '{}' is one per seat, and seat {seat} does not exist (seats are 0..{})",
                        pile.name, self.core.seats
                    ));
                }
                Ok(pile.first + seat as usize)
            }
        }
    }

    /// `pile(name, seat)`: the cards at a place (card indices of its deck),
    /// in the order they came.
    pub fn pile_cards(&self, place: usize) -> &[u16] {
        &self.core.decks[place]
    }

    /// `move_card(id, from, to, seat)`: one copy of card `card` (an index
    /// of the places' deck) from place `from` to place `to`. A card that
    /// comes into sight of every seat (a pile everyone sees, from one they
    /// do not) is revealed.
    pub fn move_card(&mut self, card: u16, from: usize, to: usize, variant: &Variant) -> Result<(), String> {
        self.same_deck("move_card", from, to, variant)?;
        let Some(k) = self.core.decks[from].iter().rposition(|&c| c == card) else {
            let deck = &variant.decks[variant.deck_of_place(from)];
            return Err(format!(
                "move_card('{}', '{}', '{}', ..): there is no '{}' there ({} card(s) are)",
                deck.cards[card as usize].id,
                variant.decks[from].name,
                variant.decks[to].name,
                deck.cards[card as usize].id,
                self.core.decks[from].len()
            ));
        };
        self.core.decks[from].remove(k);
        self.core.decks[to].push(card);
        self.came_into_view(card, from, to, variant);
        Ok(())
    }

    /// `move_all(from, to, seat)`: every card of place `from` to place
    /// `to`, in order.
    pub fn move_all(&mut self, from: usize, to: usize, variant: &Variant) -> Result<(), String> {
        self.same_deck("move_all", from, to, variant)?;
        if from == to {
            return Ok(());
        }
        let cards = std::mem::take(&mut self.core.decks[from]);
        for &c in &cards {
            self.came_into_view(c, from, to, variant);
        }
        self.core.decks[to].extend(cards);
        Ok(())
    }

    /// `draw_from(from, seat, count, to)`: `count` cards drawn at random
    /// from place `from` into place `to` (a pile), as one chance event,
    /// seen by the seat that owns `to` when only its owner sees it, by
    /// everyone when everyone does. When `from` runs out and its pile
    /// declares `refill`, the refill pile (of `seat`) is shuffled into it
    /// and the rest drawn from there, within the same event (every card a
    /// chance outcome, so a card drawn last before the refill is a secret
    /// like any other); when cards run out, fewer are drawn. Nothing is
    /// pending when there is no card to draw.
    pub fn draw_from(
        &mut self,
        from: usize,
        seat: i64,
        count: i64,
        to: usize,
        variant: &Variant,
    ) -> Result<(), String> {
        let native = format!(
            "draw_from('{}', {seat}, {count}, '{}')",
            variant.decks[from].name, variant.decks[to].name
        );
        self.same_deck(&native, from, to, variant)?;
        if variant.decks[to].pile.is_none() {
            return Err(format!(
                "{native}: cards are drawn into a pile; to draw from a deck into the scripts' data, use draw()"
            ));
        }
        if count < 0 {
            return Err(format!("{native}: cannot draw a negative number of cards"));
        }
        let visible_to = match visibility(variant, to) {
            (Visibility::Everyone, _) => None,
            (Visibility::Owner, owner) => owner,
            (Visibility::Nobody, _) => {
                return Err(format!(
                    "{native}: nobody sees pile '{}', so nobody could know what was drawn into it; draw into a pile its owner or everyone sees",
                    variant.decks[to].name
                ))
            }
        };
        let refill = match variant.decks[from].pile.and_then(|p| variant.piles[p].refill) {
            Some(r) => Some(self.place_index(Place::Pile(r), seat, variant, &native)?),
            None => None,
        };
        let left = self.core.decks[from].len() as i64;
        let more = refill.map_or(0, |r| self.core.decks[r].len() as i64);
        let n = count.min(left + more);
        if n == 0 {
            return Ok(());
        }
        if self.core.chance.is_some() {
            return Err("a chance event is already pending: request the next one from its continuation".into());
        }
        // Refilled at once when empty; otherwise when it runs out (see
        // `Game::record_outcome`).
        let refill = refill.filter(|_| left < n);
        if left == 0 {
            if let Some(r) = refill {
                self.move_all(r, from, variant)?;
            }
        }
        self.core.chance = Some(PendingChance {
            source: ChanceSource::Deck { deck: from, visible_to },
            needed: n as u32,
            got: smallvec::SmallVec::new(),
            then: "".into(),
            deal: None,
            into: Some(to as u32),
            refill: refill.map(|r| r as u32),
        });
        Ok(())
    }

    fn same_deck(&self, native: &str, from: usize, to: usize, variant: &Variant) -> Result<(), String> {
        let (a, b) = (variant.deck_of_place(from), variant.deck_of_place(to));
        if a != b {
            return Err(format!(
                "{native}: '{}' holds cards of deck '{}' and '{}' of deck '{}': cards move only between places of one deck",
                variant.decks[from].name, variant.decks[a].name, variant.decks[to].name, variant.decks[b].name
            ));
        }
        Ok(())
    }

    /// A card moved from place `from` to place `to`: if everyone sees it
    /// now and not everyone did, the latest secret draw of that card not
    /// yet revealed (by the seat that owned `from`, for a pile per seat) is
    /// revealed.
    fn came_into_view(&mut self, card: u16, from: usize, to: usize, variant: &Variant) {
        let (seen_to, _) = visibility(variant, to);
        let (seen_from, owner) = visibility(variant, from);
        if seen_to != Visibility::Everyone || seen_from == Visibility::Everyone {
            return;
        }
        let deck = variant.deck_of_place(from);
        if let Some(s) = self.core.secrets.iter_mut().rev().find(|s| {
            !s.revealed
                && s.card == card
                && variant.deck_of_place(s.deck as usize) == deck
                && owner.is_none_or(|o| o == s.seen_by)
        }) {
            s.revealed = true;
        }
    }
}
