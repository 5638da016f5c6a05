//! Hidden information: what a seat cannot see can be resampled without
//! changing what it sees or what it may do.

mod common;

use common::{cases, driven_playout, game, runner};
use proptest::prelude::*;
use proptest::sample::Index;
use rulesmith_core::rng;
use rulesmith_core::{Game, State, ToMove};

/// Plays `steps` decisions of a seeded game (chance included).
fn partial_game(g: &Game, players: usize, seed: u64, choices: &[Index]) -> State {
    driven_playout(g, players, seed, choices, choices.len()).unwrap().0
}

fn views_survive_resampling(variant: &str, players: usize, default_cases: u32) {
    let g = game(variant);
    let mut runner = runner(cases(default_cases));
    let strategy = (
        any::<u64>(),
        proptest::collection::vec(any::<Index>(), 0..120),
        any::<u64>(),
    );
    runner
        .run(&strategy, |(seed, choices, resample_seed)| {
            let state = partial_game(&g, players, seed, &choices);
            let mut r = rng::seeded(resample_seed);
            for viewer in 0..players {
                let other = g
                    .determinize(&state, Some(viewer), &mut r)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(
                    g.summary(&state, Some(viewer)).unwrap(),
                    g.summary(&other, Some(viewer)).unwrap()
                );
                prop_assert_eq!(state.to_move(), other.to_move());
                if state.to_move() == ToMove::Decision(viewer) {
                    prop_assert_eq!(g.legal_actions(&state).unwrap(), g.legal_actions(&other).unwrap());
                }
                // What the viewer saw dealt to itself never changes.
                let mine = |s: &State| {
                    s.core
                        .secrets
                        .iter()
                        .filter(|d| d.seen_by == viewer)
                        .map(|d| d.card)
                        .collect::<Vec<_>>()
                };
                prop_assert_eq!(mine(&state), mine(&other));
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{variant}: {e}"));
}

#[test]
fn resampling_hidden_cards_keeps_every_view_sirius_lifeboats() {
    views_survive_resampling("sirius-lifeboats", 2, 24);
}

#[test]
fn resampling_hidden_cards_keeps_every_view_sirius_advanced() {
    views_survive_resampling("sirius-advanced", 4, 8);
}

#[test]
fn resampling_really_changes_what_is_hidden() {
    let g = game("sirius-lifeboats");
    let state = partial_game(&g, 2, 5, &[]);
    let secret_of_p2 = |s: &State| s.core.secrets.iter().find(|d| d.seen_by == 1).map(|d| d.card);
    let mut r = rng::seeded(1);
    let seen: std::collections::BTreeSet<_> = (0..40)
        .map(|_| secret_of_p2(&g.determinize(&state, Some(0), &mut r).unwrap()))
        .collect();
    assert!(
        seen.len() > 3,
        "P2's hidden card should vary across samples, got {seen:?}"
    );
    // P2's own view never resamples P2's card.
    for _ in 0..10 {
        assert_eq!(
            secret_of_p2(&g.determinize(&state, Some(1), &mut r).unwrap()),
            secret_of_p2(&state)
        );
    }
}

#[test]
fn a_seat_sees_its_own_secret_lifeboat_and_not_the_others() {
    let g = game("sirius-lifeboats");
    let state = partial_game(&g, 2, 11, &[]);
    let own = |viewer: Option<usize>, seat: usize| {
        let s = g.summary(&state, viewer).unwrap();
        s["vessels"][seat].get("lifeboat").cloned()
    };
    assert!(own(Some(0), 0).is_some(), "P1 sees its own lifeboat card");
    assert!(own(Some(0), 1).is_none(), "P1 does not see P2's");
    assert!(own(Some(1), 1).is_some());
    assert!(
        own(None, 0).is_none() && own(None, 1).is_none(),
        "a spectator sees no secret card"
    );
}
