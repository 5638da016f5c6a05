//! A listing as the rules wrote it: single actions and products in the
//! order they were added, and `add` refused outside a step's legal function,
//! also right after a listing left its quick path for single actions open.

mod common;

use common::scratch_game;
use rulesmith_core::Game;

/// One step whose legal function mixes `add` and `add_all`; the action
/// `pick` adds from its apply function, which only a legal function may.
fn listing_game() -> Game {
    scratch_game(
        "mixed",
        r#"[variant]
name = "listing"
title = "Singles and products in one listing"
players = { min = 2, max = 2, default = 2 }
scripts = ["rules.rhai"]

[actions.pass]
text = "pass"
apply = "do_pass"

[actions.pick]
text = "pick {n:int}"
apply = "do_pick"

[setup]
run = "setup"

[steps.play]
legal = "play_legal"

[turn]
steps = ["play"]
"#,
        "fn setup() { start_turns(0); }\n\
         fn play_legal() { add(\"pick\", 9); add_all(\"pick\", [[1, 2]]); add(\"pick\", 7); add(\"pass\"); }\n\
         fn do_pass() { end_turn(); }\n\
         fn do_pick(n) { add(\"pick\", n); }\n",
    )
}

#[test]
fn singles_and_products_are_listed_in_the_order_they_were_added() {
    let g = listing_game();
    let state = g.new_game(2).unwrap();
    let texts = g.texts(&g.legal_actions(&state).unwrap());
    assert_eq!(texts, ["pick 9", "pick 1", "pick 2", "pick 7", "pass"]);
}

#[test]
fn add_outside_a_legal_function_fails_even_right_after_a_listing() {
    let g = listing_game();
    let mut state = g.new_game(2).unwrap();
    // Listing leaves single actions open for quick appends; the apply
    // function's `add` must still be refused, and change nothing.
    let legal = g.legal_actions(&state).unwrap();
    let before = g.save_state(&state).unwrap();
    let pick = g.parse_action("pick 7").unwrap();
    assert!(legal.contains(&pick));
    let err = g.apply_action(&mut state, pick).unwrap_err().to_string();
    assert!(
        err.contains("add() may only be called from a step's legal function"),
        "{err}"
    );
    assert_eq!(g.save_state(&state).unwrap(), before, "a failed action changes nothing");
    // The game goes on.
    g.apply_action(&mut state, g.parse_action("pass").unwrap()).unwrap();
    assert_eq!(g.legal_actions(&state).unwrap().len(), 5);
}

#[test]
fn a_playout_step_refuses_add_in_the_chosen_action_too() {
    // A playout's step lists and applies in one go, with no reset between:
    // the listing's quick path must close before the action runs.
    let g = listing_game();
    let mut state = g.new_game(2).unwrap();
    let mut seen = None;
    let err = g
        .pick_and_apply_scratch(&mut state, |n| n - 2, |a, n| seen = Some((g.action_text(a), n)))
        .unwrap_err()
        .to_string();
    assert_eq!(seen, Some(("pick 7".to_string(), 5)));
    assert!(
        err.contains("add() may only be called from a step's legal function"),
        "{err}"
    );
}
