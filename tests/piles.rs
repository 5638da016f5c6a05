//! Decks as draw piles: copies (`count`), draws of several cards in one
//! event, cards shuffled back in, and chance that weighs cards by copies.

mod common;

use common::game;
use rulesmith_core::state::{ChanceSource, Outcome};
use rulesmith_core::{Ctx, Game, State};

/// The state after setup, and a context holding its core, to call the
/// natives' semantics directly.
fn start(g: &Game) -> (State, Ctx) {
    let state = g.new_game(2).unwrap();
    let cx = Ctx::with_core(state.core.clone());
    (state, cx)
}

#[test]
fn a_deck_holds_every_copy_and_chance_weighs_cards_by_copies() {
    let g = game("battlefield-space");
    let red = g.variant().deck_index("red").unwrap();
    let deck = &g.variant().decks[red];
    assert_eq!(deck.cards.len(), 18, "18 kinds of card");
    assert_eq!(deck.full_pile().len(), 72, "72 cards");
    let state = g.new_game(2).unwrap();
    // The first draw is P1's three forming cards, from the full red deck.
    let p = state.core.chance.as_ref().unwrap();
    assert_eq!(p.needed, 3);
    assert!(matches!(p.source, ChanceSource::Deck { deck, visible_to: None } if deck == red));
    let outcomes = g.chance_outcomes(&state);
    assert_eq!(outcomes.len(), 18, "each card once");
    let total: f64 = outcomes.iter().map(|(_, p)| p).sum();
    assert!((total - 1.0).abs() < 1e-9);
    let fighter = deck.card_index("feyla-fighter").unwrap() as u16;
    let weight = outcomes
        .iter()
        .find(|(o, _)| {
            *o == Outcome::Card {
                deck: red as u16,
                card: fighter,
            }
        })
        .unwrap()
        .1;
    let copies = deck.cards[fighter as usize].count as f64;
    assert!(copies > 1.0, "the test needs a card with copies");
    assert!((weight - copies / 72.0).abs() < 1e-9, "{copies} copies of 72: {weight}");
}

#[test]
fn draws_of_several_cards_are_bounded_by_the_pile() {
    let g = game("battlefield-space");
    let v = g.variant();
    let red = v.deck_index("red").unwrap();
    let (_, mut cx) = start(&g);
    cx.core.chance = None;
    let left = cx.core.decks[red].len() as i64;
    let e = cx.draw(red, left + 1, None, "drawn", v).unwrap_err();
    assert!(e.contains(&format!("{left} left")), "{e}");
    let e = cx.draw(red, 0, None, "drawn", v).unwrap_err();
    assert!(e.contains("cannot draw 0"), "{e}");
    cx.draw(red, left, Some(1), "drawn", v).unwrap();
    let p = cx.core.chance.as_ref().unwrap();
    assert_eq!(
        (p.needed as i64, &p.source),
        (
            left,
            &ChanceSource::Deck {
                deck: red,
                visible_to: Some(1)
            }
        )
    );
}

#[test]
fn cards_shuffled_back_never_exceed_their_copies() {
    let g = game("battlefield-space");
    let v = g.variant();
    let red = v.deck_index("red").unwrap();
    let dreadnought = v.decks[red].card_index("varnok-dreadnought").unwrap() as u16;
    let (_, mut cx) = start(&g);
    // All three copies are in the pile: a fourth is refused, and nothing moves.
    let before = cx.core.decks[red].clone();
    let e = cx.shuffle_into(red, &[dreadnought], v).unwrap_err();
    assert!(e.contains("every copy of 'varnok-dreadnought' (3)"), "{e}");
    // Take one out (as a draw would), and it may go back, once.
    let at = cx.core.decks[red].iter().position(|&c| c == dreadnought).unwrap();
    cx.core.decks[red].remove(at);
    cx.shuffle_into(red, &[dreadnought], v).unwrap();
    assert_eq!(cx.core.decks[red].len(), before.len());
    assert!(cx.shuffle_into(red, &[dreadnought], v).is_err());
}

#[test]
fn revealing_a_card_reveals_its_latest_secret_copy_only() {
    let g = game("battlefield-space");
    let red = g.variant().deck_index("red").unwrap() as u16;
    let (_, mut cx) = start(&g);
    for (seat, at) in [(0, 1), (1, 2), (0, 3)] {
        cx.core.secrets.push(rulesmith_core::state::SecretDraw {
            deck: red,
            card: 0,
            seen_by: seat,
            revealed: false,
            at,
        });
    }
    cx.reveal(red as usize, 0);
    let revealed: Vec<bool> = cx.core.secrets.iter().map(|s| s.revealed).collect();
    assert_eq!(revealed, [false, false, true]);
    cx.reveal_secrets(1).unwrap();
    let revealed: Vec<bool> = cx.core.secrets.iter().map(|s| s.revealed).collect();
    assert_eq!(revealed, [false, true, true]);
    assert!(cx.core.hides_from(Some(1)), "P1's first card is still hidden from P2");
    cx.reveal_secrets(-1).unwrap();
    assert!(!cx.core.hides_from(None));
    assert!(cx.reveal_secrets(2).is_err(), "no seat P3");
}
