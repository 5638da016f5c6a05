//! Settling after a rule call: the engine carries out what the scripts
//! asked for in order, and a step is entered only when nothing asked for
//! before it (a seat put out, the turns started anew) is still pending.

mod common;

use common::scratch_game;
use rulesmith_core::Game;

/// One step with an `enter` script that counts its entries; the turn-end
/// script puts the other seat out, which ends the game (`last_standing`)
/// before the next turn's step is entered.
fn turn_end_out_game() -> Game {
    scratch_game(
        "turn-end-out",
        r#"[variant]
name = "turn-end-out"
title = "A turn-end script that ends the game"
players = { min = 2, max = 2, default = 2 }
scripts = ["rules.rhai"]

[actions.pass]
text = "pass"
apply = "do_pass"

[setup]
run = "setup"

[steps.play]
legal = "play_legal"
enter = "play_enter"

[turn]
steps = ["play"]
on_end = "turn_end"

[end]
last_standing = true

[stats]
entered = "Times the play step was entered"
"#,
        "fn setup() { start_turns(0); }\n\
         fn play_enter() { stat(\"entered\", 1); }\n\
         fn play_legal() { add(\"pass\"); }\n\
         fn do_pass() { end_turn(); }\n\
         fn turn_end() { eliminate(1 - active()); }\n",
    )
}

#[test]
fn a_seat_put_out_at_the_end_of_a_turn_ends_the_game_before_the_next_step() {
    let g = turn_end_out_game();
    let mut state = g.new_game(2).unwrap();
    assert_eq!(g.stat(&state, "entered"), Some(1));
    g.apply_action(&mut state, g.parse_action("pass").unwrap()).unwrap();
    assert!(state.is_terminal());
    assert_eq!(g.returns(&state), vec![1.0, -1.0]);
    // The next turn's step was never entered: its script did not run.
    assert_eq!(g.stat(&state, "entered"), Some(1));
}
