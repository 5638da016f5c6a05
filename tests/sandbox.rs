//! Untrusted scripts: nothing can hang, crash or reach outside, and a
//! failing action leaves the game exactly as it was.

mod common;

use common::root;
use rulesmith_core::{record, Game, GameError, Variant};
use std::path::Path;
use std::time::{Duration, Instant};

/// A game where P2 holds bronze and is reduced to its lifeboat, and P1 is
/// about to lock on it: the lock runs bronze's hostile `on_locked` hook.
const BEFORE_LOCK: &str = "\
# set: start_power=1
chance emerald
chance bronze
chance 6
chance 6
chance 1
chance 1
P1 stay
P1 lock starboard P2.port
P1 done
P2 none
P1 fire 1 1
chance 1
P2 stay
P2 done
P1 stay
P1 lock starboard P2.port
P1 done
P2 none
P1 fire 1 1
P2 stay
P2 done
P1 stay
";

fn sandbox_game(case: &str) -> Result<Game, String> {
    let mut v = Variant::load(root().join("tests/sandbox").join(case)).map_err(|e| e.to_string())?;
    v.set("start_power", "1")?;
    rulesmith_rhai::interpreted(v).map_err(|e| e.to_string())
}

/// Replays to the lock, then locks: returns the error and how long it took,
/// after checking that the failed action changed nothing.
fn lock_on_hostile_card(case: &str) -> (GameError, Duration) {
    let g = sandbox_game(case).unwrap_or_else(|e| panic!("{case}: {e}"));
    let mut state = record::replay(&g, 2, BEFORE_LOCK, Path::new("t")).unwrap_or_else(|e| panic!("{case}: {e}"));
    let before = state.clone();
    let lock = g.parse_action("lock starboard P2.hull").unwrap();
    let start = Instant::now();
    let err = g
        .apply_action(&mut state, lock)
        .expect_err("the hostile hook must fail");
    let took = start.elapsed();
    assert!(state.same_as(&before), "{case}: a failed action left the game changed");
    // And the game goes on from there: another action still works.
    let done = g.parse_action("done").unwrap();
    g.apply_action(&mut state, done)
        .unwrap_or_else(|e| panic!("{case}: the game cannot go on: {e}"));
    (err, took)
}

#[test]
fn an_endless_loop_is_stopped_within_a_second_naming_script_and_line() {
    let (err, took) = lock_on_hostile_card("loop");
    let msg = err.to_string();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(
        msg.contains("card 'bronze'") && msg.contains("hostile.rhai:") && msg.contains("on_locked"),
        "{msg}"
    );
    assert!(msg.contains("ran too long"), "{msg}");
}

#[test]
fn runaway_recursion_is_stopped_not_a_stack_overflow() {
    let (err, took) = lock_on_hostile_card("recursion");
    let msg = err.to_string();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(msg.contains("nested calls") || msg.contains("ran too long"), "{msg}");
    assert!(msg.contains("hostile.rhai"), "{msg}");
}

#[test]
fn strings_cannot_grow_without_bound() {
    let (err, _) = lock_on_hostile_card("bigstring");
    let msg = err.to_string();
    assert!(
        msg.contains("hostile.rhai") && (msg.contains("too large") || msg.contains("Length")),
        "{msg}"
    );
}

#[test]
fn scripts_cannot_load_files_or_evaluate_strings() {
    // `eval` is no keyword a script may use: refused at load, with the line.
    let e = sandbox_game("eval").err().expect("eval is refused at load");
    assert!(e.contains("hostile.rhai:3"), "{e}");
    // `import` compiles but loads nothing: the card fails when it runs.
    let (err, _) = lock_on_hostile_card("import");
    let msg = err.to_string();
    assert!(
        msg.contains("hostile.rhai") && msg.to_lowercase().contains("module"),
        "{msg}"
    );
}

#[test]
fn an_error_in_a_helper_names_the_helper_and_the_calls_that_led_there() {
    let (err, _) = lock_on_hostile_card("nested");
    let msg = err.to_string();
    assert!(msg.contains("script error in helper() at"), "{msg}");
    assert!(msg.contains("hostile.rhai:10:"), "{msg}");
    // Backtrace style, outermost last.
    let from_hook = msg
        .find("called from fn on_locked at")
        .unwrap_or_else(|| panic!("{msg}"));
    assert!(msg[from_hook..].starts_with("called from fn on_locked at"), "{msg}");
    assert!(msg[from_hook..].contains("hostile.rhai:5:"), "{msg}");
}
