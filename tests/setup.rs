//! A game's setup depends only on the variant and the seat count, so a
//! `Game` runs it once per seat count and starts later games from a copy of
//! its result; it still runs it for every game when that run is wanted
//! (calls counted, a person watching).

mod common;

use common::{game, root};
use rulesmith_core::{rng, Game, Variant};
use rulesmith_lab::playout;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rulesmith-setup-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `benches/floor` with a setup that narrates.
fn narrating_floor() -> Game {
    let dir = scratch("narrating");
    std::fs::copy(root().join("benches/floor/variant.toml"), dir.join("variant.toml")).unwrap();
    std::fs::write(
        dir.join("rules.rhai"),
        "fn setup() { narrate(\"set up for \" + seats()); start_turns(0); }\n\
         fn play_legal() { add(\"pass\"); }\n\
         fn do_pass() { end_turn(); }\n",
    )
    .unwrap();
    rulesmith_rhai::interpreted(Variant::load(&dir).unwrap()).unwrap()
}

#[test]
fn later_games_start_where_a_fresh_setup_would() {
    let reused = game("sirius-multiplayer");
    for (i, players) in [3, 4, 3, 6, 4].into_iter().enumerate() {
        let mut state = reused.new_game(players).unwrap();
        let fresh = game("sirius-multiplayer");
        let expected = fresh.new_game(players).unwrap();
        assert_eq!(
            reused.save_state(&state).unwrap(),
            fresh.save_state(&expected).unwrap(),
            "game {i} ({players} players)"
        );
        // Playing the copy leaves the kept state as it was.
        let mut r = rng::seeded(i as u64);
        playout::random_playout(&reused, &mut state, &mut r, None, 200).unwrap();
        assert_ne!(reused.save_state(&state).unwrap(), fresh.save_state(&expected).unwrap());
    }
}

#[test]
fn setup_runs_for_every_game_while_calls_are_counted_or_watched() {
    let g = narrating_floor();
    g.track_calls(true);
    for _ in 0..3 {
        g.new_game(2).unwrap();
    }
    assert_eq!(g.calls().get("setup"), Some(&3), "{:?}", g.calls());
    g.track_calls(false);

    g.set_watched(true);
    g.new_game(2).unwrap();
    g.new_game(3).unwrap();
    g.new_game(2).unwrap();
    assert_eq!(g.take_narration(), ["set up for 2", "set up for 3", "set up for 2"]);
}

#[test]
fn a_new_game_into_a_played_state_is_the_new_game() {
    let g = game("sirius-multiplayer");
    let mut state = g.new_game(4).unwrap();
    let mut r = rng::seeded(3);
    playout::random_playout(&g, &mut state, &mut r, None, 200).unwrap();
    for players in [3, 4, 6] {
        g.new_game_into(players, &mut state).unwrap();
        let fresh = game("sirius-multiplayer");
        assert_eq!(
            g.save_state(&state).unwrap(),
            fresh.save_state(&fresh.new_game(players).unwrap()).unwrap(),
            "{players} players"
        );
    }
    // Refused seat counts leave the state as it was.
    let before = g.save_state(&state).unwrap();
    assert!(g.new_game_into(1, &mut state).is_err());
    assert!(g.new_game_into(7, &mut state).is_err());
    assert_eq!(g.save_state(&state).unwrap(), before);
}

/// A saved state names its variant: another variant's game refuses it
/// instead of loading data its scripts would misread.
#[test]
fn a_state_saved_by_one_variant_is_refused_by_another() {
    let basic = common::game("sirius-basic");
    let lifeboats = common::game("sirius-lifeboats");
    let state = basic.new_game(2).unwrap();
    let saved = basic.save_state(&state).unwrap();
    assert!(basic.load_state(&saved).unwrap().same_as(&state));
    let e = lifeboats.load_state(&saved).unwrap_err().to_string();
    assert!(
        e.contains("saved by a game of variant 'sirius-basic', not of 'sirius-lifeboats'"),
        "{e}"
    );
}

/// `add_all` takes ranges as domains (`range(a, b)`, `a..b`, `a..=b`), as
/// the numbers in them.
#[test]
fn add_all_takes_ranges_as_domains() {
    let g = common::scratch_game(
        "ranges",
        "[variant]\nname = \"ranges\"\nplayers = { min = 2, max = 2 }\nscripts = [\"rules.rhai\"]\n\
         [actions.take]\ntext = \"take {n:int}\"\napply = \"do_take\"\n\
         [setup]\nrun = \"setup\"\n[steps.play]\nlegal = \"play_legal\"\n[turn]\nsteps = [\"play\"]\n",
        "fn setup() { start_turns(0); }\n\
         fn play_legal() { let n = 2; add_all(\"take\", [range(0, n + 1)]); add_all(\"take\", [4..5]); add_all(\"take\", [6..=7]); }\n\
         fn do_take(n) { win(0); }\n",
    );
    let s = g.new_game(2).unwrap();
    let texts: Vec<String> = g.legal_actions(&s).unwrap().iter().map(|a| g.action_text(a)).collect();
    assert_eq!(texts, ["take 0", "take 1", "take 2", "take 4", "take 6", "take 7"]);
}
