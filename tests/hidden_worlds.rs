//! Worlds drawn for a seat in games where play reveals what the others
//! hold: a trick-taking game with 7-card hands and must-follow-suit, and a
//! deck-builder with private draw piles (`tests/bots/`). Every world must
//! agree with everything the seat has seen, and one must be found at every
//! decision of bots' games; a bot that finds none moves anyway.

mod common;

use common::{root, rulesmith};
use rulesmith_core::record::Record;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::{Game, State, ToMove, Variant};
use rulesmith_lab::bot::{from_spec, Bot};

fn test_game(name: &str, sets: &[(&str, &str)]) -> Game {
    let mut v = Variant::load(root().join("tests/bots").join(name)).unwrap_or_else(|e| panic!("{e}"));
    for (k, x) in sets {
        v.set(k, x).unwrap();
    }
    rulesmith_rhai::interpreted(v).unwrap_or_else(|e| panic!("{e}"))
}

/// What `seat` sees of a state: its summary, its picture, who is to move,
/// and its legal actions when it decides.
fn view(g: &Game, s: &State, seat: usize) -> (serde_json::Value, String, ToMove, Vec<String>) {
    let legal = if s.to_move() == ToMove::Decision(seat) {
        g.legal_actions(s).unwrap().iter().map(|a| g.action_text(a)).collect()
    } else {
        Vec::new()
    };
    (
        g.summary(s, Some(seat)).unwrap(),
        g.render(s, Some(seat)).unwrap(),
        s.to_move(),
        legal,
    )
}

/// Plays `games` games between `bots` (seats in turn); at every decision a
/// world is drawn for the seat to move, which must exist and look to that
/// seat exactly as the true state does. Returns the decisions checked.
fn bots_find_a_world_at_every_decision(g: &Game, players: usize, bots: &[&str], games: u64) -> usize {
    let mut checked = 0;
    for game_no in 0..games {
        let mut bots: Vec<Box<dyn Bot>> = (0..players)
            .map(|p| from_spec(bots[p % bots.len()], game_no * 10 + p as u64).unwrap())
            .collect();
        let mut chance: GameRng = rng::seeded(1000 + game_no);
        let mut worlds: GameRng = rng::seeded(2000 + game_no);
        let mut s = g.new_game(players).unwrap();
        loop {
            match s.to_move() {
                ToMove::Terminal => break,
                ToMove::Chance => {
                    let o = g.sample_outcome(&s, &mut chance).unwrap();
                    g.apply_outcome(&mut s, o).unwrap();
                }
                ToMove::Decision(seat) => {
                    if s.core.hides_from(Some(seat)) {
                        let world = g
                            .determinize(&s, Some(seat), &mut worlds)
                            .unwrap_or_else(|e| panic!("game {game_no}, P{}: {e}", seat + 1));
                        assert_eq!(view(g, &world, seat), view(g, &s, seat), "game {game_no}");
                        checked += 1;
                    }
                    let legal = g.legal_actions(&s).unwrap();
                    let i = bots[seat].choose(g, &s, &legal).unwrap();
                    g.apply_action(&mut s, legal[i]).unwrap();
                }
            }
        }
        // The bots' own worlds (drawn with their own generators) fitted too.
        for (seat, bot) in bots.iter().enumerate() {
            assert_eq!(
                bot.loose_decisions(),
                0,
                "game {game_no}, P{}'s {}",
                seat + 1,
                bot.name()
            );
        }
    }
    checked
}

#[test]
fn oh_hell_greedy_bots_always_find_a_world_that_looks_the_same() {
    let g = test_game("oh-hell", &[("hands", "1")]);
    assert!(bots_find_a_world_at_every_decision(&g, 3, &["greedy"], 8) > 150);
    assert!(bots_find_a_world_at_every_decision(&g, 4, &["greedy"], 3) > 75);
}

#[test]
fn oh_hell_mcts_bots_always_find_a_world_that_looks_the_same() {
    let g = test_game("oh-hell", &[("hands", "1")]);
    assert!(bots_find_a_world_at_every_decision(&g, 3, &["mcts:30", "greedy"], 3) > 60);
}

#[test]
fn deck_builder_bots_always_find_a_world_that_looks_the_same() {
    // 16 turns: each seat's draw pile is made again from its discards
    // several times.
    let g = test_game("deck-builder", &[("max_turns", "16")]);
    assert!(bots_find_a_world_at_every_decision(&g, 2, &["greedy"], 3) > 40);
    assert!(bots_find_a_world_at_every_decision(&g, 2, &["mcts:30", "greedy"], 1) > 12);
}

/// Issue 33: a card dealt in secret and shuffled back may be the very card
/// drawn in the open later, so the worlds must sometimes deal it.
#[test]
fn a_card_shuffled_back_may_be_the_one_drawn_later() {
    let g = test_game("shuffled-back", &[]);
    let mut chance = rng::seeded(5);
    let mut s = g.new_game(2).unwrap();
    while s.to_move() != ToMove::Decision(1) {
        match s.to_move() {
            ToMove::Chance => {
                let o = g.sample_outcome(&s, &mut chance).unwrap();
                g.apply_outcome(&mut s, o).unwrap();
            }
            _ => {
                let legal = g.legal_actions(&s).unwrap();
                g.apply_action(&mut s, legal[0]).unwrap();
            }
        }
    }
    let shown = g.summary(&s, Some(0)).unwrap()["shown"].as_str().unwrap().to_string();
    let mut r = rng::seeded(9);
    let dealt_to_p2: std::collections::BTreeSet<String> = (0..100)
        .map(|_| {
            let w = g.determinize(&s, Some(0), &mut r).unwrap();
            let d = w.core.secrets.iter().find(|d| d.seen_by == 1).unwrap();
            g.variant().decks[0].cards[d.card as usize].id.clone()
        })
        .collect();
    assert!(
        dealt_to_p2.contains(&shown),
        "P2 may have held '{shown}' before it went back; worlds dealt only {dealt_to_p2:?}"
    );
    assert_eq!(dealt_to_p2.len(), 4, "every card may have been P2's: {dealt_to_p2:?}");
}

/// The state of a `no-world` game when P1 is to decide: P2 has told the
/// numbers of its three hidden cards.
fn no_world_state(g: &Game) -> (State, Record) {
    let mut chance = rng::seeded(3);
    let mut s = g.new_game(2).unwrap();
    let mut record = Record::default();
    loop {
        match s.to_move() {
            ToMove::Chance => {
                let o = g.sample_outcome(&s, &mut chance).unwrap();
                record.chance(g.outcome_text(o));
                g.apply_outcome(&mut s, o).unwrap();
            }
            ToMove::Decision(1) => {
                let legal = g.legal_actions(&s).unwrap();
                record.decision(1, g.action_text(&legal[0]));
                g.apply_action(&mut s, legal[0]).unwrap();
            }
            _ => return (s, record),
        }
    }
}

#[test]
fn a_bot_that_finds_no_world_moves_anyway_without_peeking() {
    let g = test_game("no-world", &[]);
    let (s, _) = no_world_state(&g);
    let mut r = rng::seeded(1);
    let err = g.determinize(&s, Some(0), &mut r).unwrap_err().to_string();
    assert!(
        err.contains("fits what P1 has seen") && err.contains("step 4 of 4") && err.contains("not legal"),
        "{err}"
    );
    // The bot's worlds: loose ones, P1 to decide, P2's hand drawn afresh.
    let drawn = rulesmith_lab::worlds::worlds(&g, &s, 0, &mut r, 8).unwrap();
    assert!(drawn.loose, "no world fits: the worlds are loose ones");
    let worlds = drawn.states;
    assert_eq!(worlds.len(), 8);
    let hand = |w: &State| w.core.secrets.iter().map(|d| d.card).collect::<Vec<_>>();
    for w in &worlds {
        assert_eq!(w.to_move(), ToMove::Decision(0));
        assert_eq!(g.summary(w, Some(0)).unwrap(), g.summary(&s, Some(0)).unwrap());
    }
    assert!(
        worlds.iter().any(|w| hand(w) != hand(&s)),
        "the loose worlds redraw P2's hand"
    );
    for spec in ["greedy", "mcts:20"] {
        let mut bot = from_spec(spec, 4).unwrap();
        let legal = g.legal_actions(&s).unwrap();
        assert!(bot.choose(&g, &s, &legal).unwrap() < legal.len());
    }
}

#[test]
fn simulate_warns_once_when_no_world_fits_and_finishes_the_games() {
    let dir = root().join("tests/bots/no-world");
    let out = rulesmith(&[
        "simulate",
        dir.to_str().unwrap(),
        "--games",
        "3",
        "--bots",
        "greedy,greedy",
        "--engine",
        "interpreted",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("found no world").count(), 1, "{stderr}");
    assert!(stderr.contains("P1") && stderr.contains("step 'play'"), "{stderr}");
    // Said once, but counted every time: every game of this variant comes
    // to a decision no world fits, and the figures say so.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("no world"))
        .unwrap_or_else(|| panic!("no 'no world' line: {stdout}"));
    assert!(line.contains("decision(s) in 3 game(s)"), "{line}");
}

#[test]
fn compare_and_the_report_say_when_a_bot_decided_on_loose_worlds() {
    let dir = root().join("tests/bots/no-world");
    let dir = dir.to_str().unwrap();
    let base = ["--games", "2", "--bots", "greedy,greedy", "--engine", "interpreted"];
    let out = rulesmith(&[&["compare", dir, dir][..], &base].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for side in ["A", "B"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("no world ({side})")))
            .unwrap_or_else(|| panic!("no 'no world ({side})' line: {stdout}"));
        assert!(line.contains("in 2 game(s)"), "{line}");
    }
    let report = std::env::temp_dir().join(format!("rulesmith-no-world-{}.html", std::process::id()));
    let out = rulesmith(&[&["simulate", dir, "--report", report.to_str().unwrap()][..], &base].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    assert!(
        html.contains("<th>no world</th>"),
        "the report's key table names the loose decisions"
    );
}

#[test]
fn replay_determinize_says_where_no_world_fits() {
    let dir = root().join("tests/bots/no-world");
    let g = test_game("no-world", &[]);
    let (_, record) = no_world_state(&g);
    let record = record.to_text(&[]);
    let file = std::env::temp_dir().join(format!("rulesmith-no-world-{}.record", std::process::id()));
    std::fs::write(&file, record).unwrap();
    let run = |seat: &str| {
        rulesmith(&[
            "replay",
            dir.to_str().unwrap(),
            file.to_str().unwrap(),
            "--determinize",
            seat,
            "--seed",
            "7",
        ])
    };
    let p1 = run("P1");
    let stderr = String::from_utf8_lossy(&p1.stderr);
    assert_eq!(p1.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("step 4 of 4") && stderr.contains("'tell"), "{stderr}");
    // P2 sees its own hand: its world is the game itself.
    let p2 = run("P2");
    assert!(p2.status.success(), "{}", String::from_utf8_lossy(&p2.stderr));
    assert!(String::from_utf8_lossy(&p2.stdout).contains("a world fits what P2 has seen"));
    let _ = std::fs::remove_file(&file);
}

/// A position where P1 has shown, by not following suit twice, that its
/// hand holds neither diamonds nor clubs: P3's worlds must give P1 a hand
/// of hearts and spades only, out of a second deal whose cards went
/// round the table. The search once failed here one time in eleven: it
/// spent its whole budget going through the deal's combinations one by
/// one (too many to ever finish) instead of drawing new worlds, and it
/// looked for the cards to exchange in draws the replay had already
/// replaced.
#[test]
fn a_hand_that_showed_two_voids_is_found_every_time() {
    let g = test_game("oh-hell", &[]);
    let file = root().join("tests/hidden-worlds/oh-hell-second-hand-p1-void.record");
    let text = std::fs::read_to_string(&file).unwrap();
    let s = rulesmith_core::record::replay(&g, 3, &text, &file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.to_move(), ToMove::Decision(2));
    for seed in 0..40 {
        let world = g
            .determinize(&s, Some(2), &mut rng::seeded(seed))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(view(&g, &world, 2), view(&g, &s, 2), "seed {seed}");
    }
}
