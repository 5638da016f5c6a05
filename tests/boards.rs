//! Boards that explain themselves: what the shipped variants' render and
//! narration show a person at the terminal (`rulesmith play`) and in the
//! viewer (issue 34, point 10).

mod common;

use common::{game, root};
use rulesmith_core::record::replay;
use rulesmith_core::{Game, State, Variant};
use rulesmith_lab::fuzz;
use std::path::Path;

/// `variant` with parameters set, for the interpreter.
fn game_with(variant: &str, params: &[(&str, i64)]) -> Game {
    let base = Variant::load(root().join("variants").join(variant)).unwrap_or_else(|e| panic!("{e}"));
    let params: Vec<(String, i64)> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    rulesmith_rhai::interpreted(fuzz::with_params(&base, &params).unwrap()).unwrap_or_else(|e| panic!("{e}"))
}

/// The state after the record lines `text` (no header lines needed).
fn after(game: &Game, text: &str) -> State {
    replay(game, 2, text, Path::new("inline.record")).unwrap_or_else(|e| panic!("{e}"))
}

/// The lines of a record file of `tests/records/`, comments and headers
/// dropped.
fn record_lines(path: &str) -> String {
    std::fs::read_to_string(root().join("tests/records").join(path))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The first `n` lines of a record file (comments dropped).
fn first_lines(path: &str, n: usize) -> String {
    record_lines(path).lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// Every place in `board` where a capital P is followed by a digit, with
/// the character after the digits.
fn p_digit_tokens(board: &str) -> Vec<(String, Option<char>)> {
    let chars: Vec<char> = board.chars().collect();
    let mut out = Vec::new();
    for i in 0..chars.len() {
        if chars[i] == 'P' && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            let mut j = i + 1;
            while chars.get(j).is_some_and(|c| c.is_ascii_digit()) {
                j += 1;
            }
            out.push((chars[i..j].iter().collect(), chars.get(j).copied()));
        }
    }
    out
}

#[test]
fn sirius_side_powers_never_read_as_a_seat_name() {
    let g = game("sirius-basic");
    let s = after(&g, &first_lines("sirius-basic/worked-example.record", 4));
    let board = g.render(&s, Some(0)).unwrap();
    // Every "P<digits>" on the board is a seat's tag: '*' (its turn) or
    // the arrow of its bow follows it, never a space as after a power.
    let tokens = p_digit_tokens(&board);
    assert!(!tokens.is_empty(), "{board}");
    for (token, next) in &tokens {
        assert!(
            matches!(next, Some('*' | '^' | '>' | 'v' | '<')),
            "'{token}' followed by {next:?} reads as a seat name:\n{board}"
        );
    }
    assert!(board.contains("p:6") && board.contains("b:6"), "{board}");
    // The move board (the other layout: slots with letters, when watched).
    g.set_watched(true);
    let moving = g.render(&s, Some(0)).unwrap();
    g.set_watched(false);
    assert!(moving.contains("(a)"), "not the move board:\n{moving}");
    for (token, next) in p_digit_tokens(&moving) {
        assert!(
            matches!(next, Some('*' | '^' | '>' | 'v' | '<')),
            "'{token}' in:\n{moving}"
        );
    }
}

#[test]
fn sirius_says_what_comes_before_the_ships_are_placed() {
    let g = game("sirius-basic");
    let s = g.new_game(2).unwrap();
    let board = g.render(&s, None).unwrap();
    assert!(board.contains("No vessel is on the board yet"), "{board:?}");
    let g = game("sirius-lifeboats");
    let board = g.render(&g.new_game(2).unwrap(), None).unwrap();
    assert!(board.contains("secret lifeboat card"), "{board:?}");
}

#[test]
fn galaxies_marks_a_medium_ships_front_as_the_legend_says() {
    let g = game("battleship-galaxies");
    let legend = g.variant().legend.clone().unwrap();
    assert!(legend.contains("M2>"), "{legend}");
    // Sentinel, a medium ship: front on 6,0, back to the south-east.
    let s = after(&g, &first_lines("battleship-galaxies/hold-launch-next-turn.record", 8));
    let board = g.render(&s, Some(0)).unwrap();
    // Sentinel is the ISN's third ship: M3.
    let rows: Vec<&str> = board.lines().filter(|l| l.starts_with("r ")).collect();
    assert_eq!(board.matches("M3>").count(), 1, "{board}");
    assert!(rows[0].contains("M3>"), "the front is on row 0:\n{board}");
    assert!(
        rows[1].contains("M3 ") && !rows[1].contains("M3>"),
        "the back on row 1:\n{board}"
    );
}

#[test]
fn galaxies_sealing_a_hold_counts_its_places() {
    let g = game("battleship-galaxies");
    // Everest launched, its first place loaded with Blue Hawk.
    let s = after(&g, &first_lines("battleship-galaxies/hold-launch-next-turn.record", 3));
    let mine = g.render(&s, Some(0)).unwrap();
    assert!(
        mine.contains("Sealing the hold of everest: place 2 of 4 (3 left)"),
        "{mine}"
    );
    assert!(mine.contains("loaded so far: blue-hawk"), "{mine}");
    let theirs = g.render(&s, Some(1)).unwrap();
    assert!(theirs.contains("place 2 of 4"), "{theirs}");
    assert!(
        !theirs.contains("loaded so far") && !theirs.contains("room left"),
        "{theirs}"
    );
}

#[test]
fn space_war_setup_says_which_piece_goes_where() {
    let g = game("space-war");
    let s = g.new_game(2).unwrap();
    assert!(g.render(&s, None).unwrap().contains("red (P2) picks the side"));
    let s = after(&g, "P2 side south\n");
    let board = g.render(&s, None).unwrap();
    assert!(
        board.contains("Setup: blue (P1) places its station, on its row B") && board.contains("18 pieces left"),
        "{board}"
    );
    let s = after(&g, "P2 side south\nP1 place 5,1\nP2 place 6,10\nP1 place 2,0\n");
    let board = g.render(&s, None).unwrap();
    assert!(
        board.contains("Setup: red (P2) places fighter 1 of 8, on its row A"),
        "{board}"
    );
}

#[test]
fn space_war_letters_the_destinations_in_play() {
    let g = game_with("space-war", &[("standard_deploy", 1)]);
    let s = g.new_game(2).unwrap();
    assert!(
        !g.render(&s, Some(0)).unwrap().contains("(a)"),
        "letters only when watched"
    );
    g.set_watched(true);
    let (board, marks) = g.render_marked(&s, Some(0)).unwrap();
    g.set_watched(false);
    assert!(board.contains("(a)"), "{board}");
    // The north-west corner, where the fighter on 2,0 may go, comes first.
    assert_eq!(marks[0], ("a".to_string(), "to 0,0".to_string()), "{marks:?}");
    assert!(marks.len() > 20, "{marks:?}");
    // Every label stands for at least one legal action.
    let legal: Vec<String> = g.legal_actions(&s).unwrap().iter().map(|a| g.action_text(a)).collect();
    for (label, words) in &marks {
        assert!(
            legal.iter().any(|t| t.ends_with(words.as_str())),
            "{label}: {words} in {legal:?}"
        );
    }
    // Not for the seat that is not deciding.
    g.set_watched(true);
    let (_, theirs) = g.render_marked(&s, Some(1)).unwrap();
    g.set_watched(false);
    assert!(theirs.is_empty(), "{theirs:?}");
}

#[test]
fn space_war_lists_lasers_left_by_piece() {
    let g = game_with("space-war", &[("standard_deploy", 1)]);
    let s = after(&g, "P1 move 2,0 to 2,2\n");
    let board = g.render(&s, None).unwrap();
    assert!(
        board.contains("Lasers not fired yet: the station at (5,1), 2 lasers; fighters at (2,2), (3,0), (4,0)"),
        "{board}"
    );
    assert!(board.contains(" and (9,0), 1 each."), "{board}");
}

#[test]
fn space_war_hex_rows_give_q_at_both_ends() {
    let g = game_with("space-war", &[("hex", 1), ("standard_deploy", 1)]);
    let s = g.new_game(2).unwrap();
    let board = g.render(&s, None).unwrap();
    // The first row, r = -7, runs from q = 0 to q = 7; the middle one from
    // -7 to 7.
    let first = board.lines().nth(1).unwrap();
    assert!(first.starts_with(" -7   0") && first.ends_with("  7"), "{first:?}");
    let middle = board.lines().nth(8).unwrap();
    assert!(middle.starts_with("  0  -7") && middle.ends_with("  7"), "{middle:?}");
    // The last q of every row stands in one column.
    let ends: Vec<usize> = board.lines().skip(1).take(15).map(str::len).collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{ends:?}\n{board}");
}

#[test]
fn battlefield_tells_the_battle_after_the_turn_up_by_card_id() {
    // One battle (the records' `# set: max_battles=1`).
    let g = game_with("battlefield-space", &[("max_battles", 1)]);
    g.set_watched(true);
    after(
        &g,
        &record_lines("battlefield-space/battle-columns-won-and-lost.record"),
    );
    let told = g.take_narration();
    let text = told.join("\n");
    assert!(text.contains("the battle, every card face up"), "{text}");
    assert!(
        text.contains(
            "column 1: P1 varnok-gunship 5 + varnok-dreadnought 7 = 12  against  P2 navy-destroyer 4 + navy-battleship 6 = 10"
        ),
        "{text}"
    );
    assert!(text.contains("P1 turns up rim-scout in column 3"), "{text}");
    // Names as the board writes them: ids, never the cards' long names.
    assert!(!text.contains("Varnok") && !text.contains("Rim Militia"), "{text}");

    // A modifier's effect, column by column.
    after(&g, &record_lines("battlefield-space/modifier-minefield.record"));
    let text = g.take_narration().join("\n");
    assert!(text.contains("minefield (#5) takes effect"), "{text}");
    assert!(text.contains(" -> "), "no total changed:\n{text}");
}
