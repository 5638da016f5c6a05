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

/// The backtrace of a message: its `at FUNCTION (FILE:LINE:COLUMN)` lines,
/// innermost first, without the `at `.
fn backtrace(msg: &str) -> Vec<&str> {
    msg.lines().filter_map(|l| l.trim_start().strip_prefix("at ")).collect()
}

/// `frame` is `function`'s, at `place` (`FILE:LINE:`).
fn frame_is(frame: &str, function: &str, place: &str) -> bool {
    frame.starts_with(&format!("{function} (")) && frame.contains(place)
}

/// The hook's own calls, then the rule function that ran the hook.
fn ends_in_the_lock(msg: &str, frames: &[&str]) {
    let rules = frames.last().unwrap_or_else(|| panic!("no backtrace: {msg}"));
    assert!(frame_is(rules, "do_lock", "scripts/sirius/lock.rhai:47:"), "{msg}");
}

/// The message names `function` of the card's script, at `line`, called by
/// the hook (line 5), which the lock ran.
fn fails_in_a_helper_of_the_hook(msg: &str, function: &str, line: usize) {
    assert!(msg.starts_with(&format!("script error in {function}() at ")), "{msg}");
    let frames = backtrace(msg);
    assert_eq!(frames.len(), 3, "{msg}");
    assert!(
        frame_is(frames[0], function, &format!("cards/hostile.rhai:{line}:")),
        "{msg}"
    );
    assert!(frame_is(frames[1], "on_locked", "cards/hostile.rhai:5:"), "{msg}");
    ends_in_the_lock(msg, &frames);
}

#[test]
fn an_endless_loop_is_stopped_within_seconds_naming_the_innermost_function() {
    let (err, took) = lock_on_hostile_card("loop");
    let msg = err.to_string();
    // The step runs twice: once more in diagnostic mode, to find the calls
    // (about 0.2 s each in a release build). The bound says "stopped, not
    // hung": generous, since a loaded 2-core CI machine runs it slowly.
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(msg.contains("ran too long") && msg.contains("card 'bronze'"), "{msg}");
    // The innermost function, not the hook nor the rule that ran it.
    fails_in_a_helper_of_the_hook(&msg, "spin", 9);
}

#[test]
fn runaway_recursion_is_stopped_not_a_stack_overflow() {
    let (err, took) = lock_on_hostile_card("recursion");
    let msg = err.to_string();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(msg.contains("too many nested calls"), "{msg}");
    assert!(msg.starts_with("script error in deeper() at "), "{msg}");
    // The hook and 48 nested calls run; the 49th is refused, at its
    // definition. The backtrace counts the repeated frames instead of
    // listing them.
    let frames = backtrace(&msg);
    assert!(frame_is(frames[0], "deeper", "cards/hostile.rhai:6:1)"), "{msg}");
    assert!(
        frames[1..3]
            .iter()
            .all(|f| frame_is(f, "deeper", "cards/hostile.rhai:7:")),
        "{msg}"
    );
    assert!(msg.contains("... the same call 46 more times"), "{msg}");
    assert!(frame_is(frames[3], "on_locked", "cards/hostile.rhai:3:"), "{msg}");
    ends_in_the_lock(&msg, &frames);
    assert!(msg.lines().count() < 10, "{msg}");
}

#[test]
fn strings_cannot_grow_without_bound() {
    let (err, _) = lock_on_hostile_card("bigstring");
    let msg = err.to_string();
    assert!(msg.contains("a string grew past the limit of 65536 bytes"), "{msg}");
    fails_in_a_helper_of_the_hook(&msg, "widen", 9);
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
    assert!(msg.contains("card 'bronze': Array index"), "{msg}");
    // Backtrace style, innermost first.
    fails_in_a_helper_of_the_hook(&msg, "helper", 10);
}

/// The runaway variant with `fault` and `stage` set, under `limits`.
fn runaway(fault: u8, stage: u8, limits: rulesmith_core::Limits) -> Game {
    let mut v = Variant::load(root().join("tests/sandbox/runaway")).unwrap();
    v.set("fault", &fault.to_string()).unwrap();
    v.set("stage", &stage.to_string()).unwrap();
    rulesmith_rhai::interpreted_with_limits(v, limits).unwrap()
}

/// A designer function two files and three calls away from the engine runs
/// away: in setup, in an action (with and without a backup of the state),
/// in the legal list and in evaluate. Every message names it, its file and
/// line, and the calls that led there.
#[test]
fn a_runaway_designer_function_is_named_with_the_calls_that_led_to_it() {
    let small = rulesmith_core::Limits {
        max_array_size: 1000,
        ..Default::default()
    };
    // (fault, limits, what the message says, the function and its line)
    let cases = [
        (1, Default::default(), "ran too long", "count_up", 12),
        (2, Default::default(), "too many nested calls", "deeper", 15),
        (
            3,
            Default::default(),
            "a string grew past the limit of 65536 bytes",
            "widen",
            18,
        ),
        (4, small, "an array grew past the limit of 1000 items", "lengthen", 23),
    ];
    for (fault, limits, what, function, line) in cases {
        // (the entry point and the line of its call, the message)
        let mut messages = Vec::new();
        let e = runaway(fault, 0, limits).new_game(2).expect_err("setup fails");
        messages.push(("setup", 6, e.to_string()));
        let g = runaway(fault, 1, limits);
        let pass = g.parse_action("pass").unwrap();
        let mut state = g.new_game(2).unwrap();
        let before = state.clone();
        let e = g.apply_action(&mut state, pass).unwrap_err();
        assert!(
            state.same_as(&before),
            "fault {fault}: the failed action changed the game"
        );
        messages.push(("do_pass", 19, e.to_string()));
        let e = g.apply_scratch(&mut state, pass).unwrap_err();
        messages.push(("do_pass", 19, e.to_string()));
        let g = runaway(fault, 2, limits);
        let e = g.legal_actions(&g.new_game(2).unwrap()).unwrap_err();
        messages.push(("play_legal", 12, e.to_string()));
        let g = runaway(fault, 3, limits);
        let e = g.evaluate(&g.new_game(2).unwrap(), 0).unwrap_err();
        messages.push(("evaluate", 26, e.to_string()));
        for (entry, entry_line, msg) in messages {
            assert!(msg.contains(what), "fault {fault}: {msg}");
            assert!(msg.starts_with(&format!("script error in {function}() at ")), "{msg}");
            let first = msg.lines().next().unwrap();
            assert!(first.contains(&format!("runaway/helpers.rhai:{line}:")), "{msg}");
            let frames = backtrace(&msg);
            let n = frames.len();
            assert!(frame_is(frames[0], function, &format!("helpers.rhai:{line}:")), "{msg}");
            assert!(
                frame_is(frames[n - 2], "tidy_up", &format!("helpers.rhai:{}:", 4 + fault)),
                "{msg}"
            );
            let rules = format!("runaway/rules.rhai:{entry_line}:");
            assert!(frame_is(frames[n - 1], entry, &rules), "{msg}");
        }
    }
}
