//! Property tests over random legal playouts of every shipped variant:
//! they never fail, always end, and replay from their own record to the
//! same state. `RULESMITH_PROPTEST_CASES=N` runs more cases.

mod common;

use common::{cases, driven_playout, game, runner};
use proptest::prelude::*;
use proptest::sample::Index;
use rulesmith_core::{record, Variant};
use std::path::Path;

/// Random games end well before this many decisions (the quiet-turn and
/// max_turns draws bound them).
const DECISION_BOUND: usize = 100_000;

fn playouts_end_and_replay(variant: &str, players: usize, default_cases: u32) {
    playouts_of_game_end_and_replay(&game(variant), variant, players, default_cases);
}

fn playouts_of_game_end_and_replay(g: &rulesmith_core::Game, variant: &str, players: usize, default_cases: u32) {
    let mut runner = runner(cases(default_cases));
    let strategy = (any::<u64>(), proptest::collection::vec(any::<Index>(), 0..300));
    runner
        .run(&strategy, |(seed, choices)| {
            let (state, rec) = driven_playout(g, players, seed, &choices, DECISION_BOUND)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(
                state.is_terminal(),
                "the game did not end within {DECISION_BOUND} decisions"
            );
            let text = rec.to_text(&[]);
            let replayed = record::replay(g, players, &text, Path::new("playout"))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(replayed.same_as(&state), "replaying the record gives another state");
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{variant} with {players} players: {e}"));
}

#[test]
fn sirius_basic_playouts_end_and_replay() {
    playouts_end_and_replay("sirius-basic", 2, 48);
}

#[test]
fn sirius_lifeboats_playouts_end_and_replay() {
    playouts_end_and_replay("sirius-lifeboats", 2, 32);
}

#[test]
fn sirius_multiplayer_playouts_end_and_replay_for_every_player_count() {
    for players in 3..=6 {
        playouts_end_and_replay("sirius-multiplayer", players, 8);
    }
}

#[test]
fn sirius_advanced_playouts_end_and_replay_for_every_player_count() {
    for players in 2..=6 {
        playouts_end_and_replay("sirius-advanced", players, 8);
    }
}

#[test]
fn space_war_playouts_end_and_replay() {
    playouts_end_and_replay("space-war", 2, 12);
}

#[test]
fn space_war_on_the_hex_board_playouts_end_and_replay() {
    let mut v = Variant::load(common::root().join("variants/space-war")).unwrap();
    v.set("hex", "true").unwrap();
    let g = rulesmith_rhai::interpreted(v).unwrap();
    playouts_of_game_end_and_replay(&g, "space-war (hex)", 2, 6);
}

/// Space War's orders listed through the turn memo (a test variant) are
/// the orders the shipped variant lists from scratch: random games list
/// on the state itself, as playouts do (so that the memo fills up), and
/// every list is the same on both.
#[test]
fn space_war_lists_the_same_orders_with_and_without_the_memo() {
    use rulesmith_core::{rng, ToMove};
    let plain = game("space-war");
    let memo =
        rulesmith_rhai::interpreted(Variant::load(common::root().join("tests/fuzz-variants/space-war-memo")).unwrap())
            .unwrap();
    let mut kept = 0;
    for seed in 0..cases(4) as u64 {
        let mut r = rng::seeded(seed);
        let (mut a, mut b) = (plain.new_game(2).unwrap(), memo.new_game(2).unwrap());
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        while let ToMove::Decision(_) = a.to_move() {
            plain.legal_actions_into(&mut a, &mut la).unwrap();
            memo.legal_actions_into(&mut b, &mut lb).unwrap();
            assert_eq!(plain.texts(&la), memo.texts(&lb), "seed {seed}");
            kept += b.core.memo.len();
            let pick = la[rng::below(&mut r, la.len() as u32) as usize];
            plain.apply_trusted(&mut a, pick).unwrap();
            memo.apply_trusted(&mut b, pick).unwrap();
        }
        assert!(a.same_as(&b), "seed {seed}");
    }
    assert!(kept > 0, "the memo kept groups of orders");
}

#[test]
fn battlefield_space_playouts_end_and_replay() {
    playouts_end_and_replay("battlefield-space", 2, 12);
}

#[test]
fn battleship_galaxies_playouts_end_and_replay() {
    playouts_end_and_replay("battleship-galaxies", 2, 6);
}

#[test]
fn battlefield_space_with_other_columns_and_fleets_ends_and_replays() {
    // Every column count the parameter allows, and the fleets swapped.
    let base = Variant::load(common::root().join("variants/battlefield-space")).unwrap_or_else(|e| panic!("{e}"));
    for (key, value) in [
        ("columns", "1"),
        ("columns", "2"),
        ("columns", "4"),
        ("columns", "5"),
        ("p1_fleet", "blue"),
    ] {
        let mut v = base.clone();
        v.set(key, value).unwrap_or_else(|e| panic!("{e}"));
        let g = rulesmith_rhai::interpreted(v).unwrap_or_else(|e| panic!("{e}"));
        for seed in 0..3 {
            let (state, rec) =
                driven_playout(&g, 2, seed, &[], DECISION_BOUND).unwrap_or_else(|e| panic!("{key}={value}: {e}"));
            assert!(state.is_terminal(), "{key}={value}: the game did not end");
            let replayed =
                record::replay(&g, 2, &rec.to_text(&[]), Path::new("playout")).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                replayed.same_as(&state),
                "{key}={value}: the record replays to another state"
            );
        }
    }
}

#[test]
fn same_seed_and_choices_give_the_same_game() {
    let g = game("sirius-basic");
    let choices: Vec<Index> = Vec::new();
    let (a, ra) = driven_playout(&g, 2, 99, &choices, DECISION_BOUND).unwrap();
    let (b, rb) = driven_playout(&g, 2, 99, &choices, DECISION_BOUND).unwrap();
    assert_eq!(ra, rb);
    assert!(a.same_as(&b));
    let (_, rc) = driven_playout(&g, 2, 100, &choices, DECISION_BOUND).unwrap();
    assert_ne!(ra, rc, "another seed should give another game");
}

/// The sizes of Battlefield: Space's legal lists over random games, for
/// the record: cargo test --release --test properties legal_list_sizes -- --ignored --nocapture
#[test]
#[ignore = "prints figures, not a check"]
fn battlefield_space_legal_list_sizes() {
    use rulesmith_core::rng;
    use rulesmith_core::ToMove;
    let g = game("battlefield-space");
    let (mut n, mut total, mut max) = (0usize, 0usize, 0usize);
    for seed in 0..200 {
        let mut r = rng::seeded(seed);
        let mut s = g.new_game(2).unwrap();
        while !s.is_terminal() {
            match s.to_move() {
                ToMove::Chance => {
                    let o = g.sample_outcome(&s, &mut r).unwrap();
                    g.apply_outcome_scratch(&mut s, o).unwrap();
                }
                _ => {
                    let legal = g.legal_actions(&s).unwrap();
                    (n, total, max) = (n + 1, total + legal.len(), max.max(legal.len()));
                    let a = legal[rng::below(&mut r, legal.len() as u32) as usize];
                    g.apply_scratch(&mut s, a).unwrap();
                }
            }
        }
    }
    eprintln!(
        "{n} decisions in 200 random games: legal list mean {:.2}, max {max}",
        total as f64 / n as f64
    );
}
