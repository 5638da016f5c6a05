//! Bots and simulation: legal play, no peeking, determinism, statistics
//! that add up, and the simulate/compare commands.

mod common;

use common::{game, root, rulesmith};
use rulesmith_core::{record, rng, Game, State, ToMove};
use rulesmith_lab::bot::{self, Bot};
use std::path::Path;
use std::process::Output;

fn json_without_timing(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_object_mut().unwrap().remove("seconds");
    v
}

/// Plays whole games with `spec` bots in every seat, applying each choice
/// through the checked path: an illegal choice would fail the test.
fn bots_play_legally(g: &Game, players: usize, spec: &str, games: u64) {
    for seed in 0..games {
        let mut bots: Vec<Box<dyn Bot>> = (0..players)
            .map(|s| bot::from_spec(spec, seed * 10 + s as u64).unwrap())
            .collect();
        let mut chance = rng::seeded(seed);
        let mut s = g.new_game(players).unwrap();
        let mut decisions = 0;
        while !s.is_terminal() && decisions < 2000 {
            match s.to_move() {
                ToMove::Chance => {
                    let o = g.sample_outcome(&s, &mut chance).unwrap();
                    g.apply_outcome(&mut s, o).unwrap();
                }
                ToMove::Decision(p) => {
                    let legal = g.legal_actions(&s).unwrap();
                    let i = bots[p].choose(g, &s, &legal).unwrap();
                    assert!(i < legal.len(), "{spec} chose {i} of {}", legal.len());
                    g.apply_action(&mut s, legal[i])
                        .unwrap_or_else(|e| panic!("{spec} chose an illegal action: {e}"));
                    decisions += 1;
                }
                ToMove::Terminal => {}
            }
        }
    }
}

#[test]
fn every_bot_plays_only_legal_actions() {
    let lifeboats = game("sirius-lifeboats");
    let multi = game("sirius-multiplayer");
    for spec in ["random", "greedy", "mcts:8"] {
        bots_play_legally(&lifeboats, 2, spec, 2);
        bots_play_legally(&multi, 3, spec, 1);
    }
}

/// Replays a lifeboat record where P2 was dealt `p2_card`.
fn dealt(g: &Game, p2_card: &str) -> State {
    let text = format!("chance bronze\nchance {p2_card}\nchance 6\nchance 6\nchance 1\nchance 1\n");
    record::replay(g, 2, &text, Path::new("t")).unwrap()
}

#[test]
fn search_bots_decide_from_their_view_only() {
    let g = game("sirius-lifeboats");
    // P1 cannot tell these apart: only P2's secret card differs.
    let (a, b) = (dealt(&g, "violet"), dealt(&g, "gold"));
    assert_eq!(g.summary(&a, Some(0)).unwrap(), g.summary(&b, Some(0)).unwrap());
    assert!(!a.same_as(&b), "the true states differ");
    let legal = g.legal_actions(&a).unwrap();
    assert_eq!(legal, g.legal_actions(&b).unwrap());
    for spec in ["greedy", "mcts:30"] {
        let choose = |s: &State| bot::from_spec(spec, 42).unwrap().choose(&g, s, &legal).unwrap();
        assert_eq!(
            choose(&a),
            choose(&b),
            "{spec} decided differently on states its seat cannot tell apart"
        );
    }
}

/// With two seats the MCTS bot takes `evaluate` to be zero-sum (one call
/// a state) unless the variant says otherwise: then each seat follows its
/// own value. Both seats of this game like "right", P2 more than P1.
#[test]
fn mcts_follows_each_seats_own_value_when_evaluate_is_not_zero_sum() {
    let pick = |variant: &str| {
        let v = rulesmith_core::Variant::load(root().join("tests/bots").join(variant)).unwrap();
        let g = rulesmith_rhai::interpreted(v).unwrap();
        let s = record::replay(&g, 2, "P1 pass\n", Path::new("t")).unwrap();
        assert_eq!(s.to_move(), ToMove::Decision(1));
        let legal = g.legal_actions(&s).unwrap();
        (0..4)
            .map(|seed| {
                let k = bot::from_spec("mcts:20", seed).unwrap().choose(&g, &s, &legal).unwrap();
                g.action_text(&legal[k])
            })
            .collect::<Vec<_>>()
    };
    // Zero-sum assumed: P2 reads P1's liking for "right" as its own loss.
    assert_eq!(pick("zero-sum-assumed"), vec!["pick left"; 4]);
    assert_eq!(pick("not-zero-sum"), vec!["pick right"; 4]);
}

#[test]
fn mcts_beats_random() {
    let o = rulesmith(&[
        "simulate",
        "variants/sirius-basic",
        "--games",
        "4",
        "--bots",
        "mcts:40,random",
        "--rotate",
        "--seed",
        "3",
        "--json",
    ]);
    let v = json_without_timing(&o);
    let bots = v["summary"]["bots"].as_array().unwrap();
    let mcts = bots.iter().find(|b| b["bot"] == "mcts:40").unwrap();
    assert!(mcts["wins"]["count"].as_u64().unwrap() >= 3, "{mcts}");
}

#[test]
fn simulation_results_do_not_depend_on_the_number_of_jobs() {
    let run = |jobs: &str| {
        json_without_timing(&rulesmith(&[
            "simulate",
            "variants/sirius-lifeboats",
            "--games",
            "40",
            "--bots",
            "random,greedy",
            "--seed",
            "9",
            "--jobs",
            jobs,
            "--json",
        ]))
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn statistics_add_up() {
    let v = json_without_timing(&rulesmith(&[
        "simulate",
        "variants/sirius-advanced",
        "--players",
        "3",
        "--games",
        "30",
        "--seed",
        "4",
        "--json",
    ]));
    let s = &v["summary"];
    let games = s["games"].as_u64().unwrap();
    assert_eq!(games, 30);
    let seat_wins: u64 = s["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["wins"]["count"].as_u64().unwrap())
        .sum();
    let draws = s["draws"]["count"].as_u64().unwrap();
    assert_eq!(seat_wins + draws, games, "every game is won by one seat or drawn");
    for seat in s["seats"].as_array().unwrap() {
        let (w, d, l) = (
            seat["wins"]["count"].as_u64().unwrap(),
            seat["draws"].as_u64().unwrap(),
            seat["losses"].as_u64().unwrap(),
        );
        assert_eq!(w + d + l, games);
    }
    let bot_games: u64 = s["bots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["wins"]["of"].as_u64().unwrap())
        .sum();
    assert_eq!(bot_games, games * 3, "each game counts once per seat");
    let hist: u64 = s["turns"]["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[2].as_u64().unwrap())
        .sum();
    assert_eq!(hist, games);
    let results: u64 = s["labels"]["result"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(results, games);
    let decisiveness = s["decisiveness"].as_f64().unwrap();
    assert!((decisiveness - (1.0 - draws as f64 / games as f64)).abs() < 1e-9);
    // Ships destroyed: every win needs the others' ships gone.
    let destroyed = s["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ships_destroyed")
        .unwrap();
    assert!(destroyed["total"].as_i64().unwrap() >= 2 * seat_wins as i64);
}

#[test]
fn simulate_writes_replayable_records_and_a_self_contained_report() {
    let dir = root().join("target/sim-records");
    let _ = std::fs::remove_dir_all(&dir);
    let report = root().join("target/sim-report.html");
    let o = rulesmith(&[
        "simulate",
        "variants/sirius-lifeboats",
        "--games",
        "6",
        "--records",
        &dir.to_string_lossy(),
        "--report",
        &report.to_string_lossy(),
        "--set",
        "max_turns=300",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 6);
    for f in &files {
        // The header carries players and --set: replay needs nothing more.
        let r = rulesmith(&["replay", "variants/sirius-lifeboats", &f.to_string_lossy()]);
        assert!(
            r.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_ne!(v["status"], "ongoing", "a simulated game ends");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg") && html.contains("Win rate per seat"));
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("<script"),
        "self-contained"
    );
    // Bot and seat together; what a label's bars are a share of.
    assert!(
        html.contains("Win rate per bot and seat") && html.contains("random as P2"),
        "{html}"
    );
    assert!(html.contains("Bars: the share of all 6 games"), "{html}");
    // Links to the records, relative to the report (they sit side by side),
    // each to a record that exists.
    assert!(html.contains("href=\"sim-records/\""), "{html}");
    let links: Vec<&str> = html
        .split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .filter(|h| h.ends_with(".record"))
        .collect();
    assert!(!links.is_empty(), "no record linked: {html}");
    for link in links {
        assert!(report.parent().unwrap().join(link).is_file(), "{link} is not a record");
    }
}

#[test]
fn compare_flags_a_rule_change_as_significant() {
    let o = rulesmith(&[
        "compare",
        "variants/sirius-basic",
        "variants/sirius-basic",
        "--set-b",
        "start_power=2",
        "--games",
        "120",
        "--json",
    ]);
    let v = json_without_timing(&o);
    let rows = v["differences"].as_array().unwrap();
    let turns = rows.iter().find(|r| r["metric"] == "turns (mean)").unwrap();
    assert_eq!(turns["significant"], true, "weaker ships make shorter games: {turns}");
    assert!(turns["b"].as_f64().unwrap() < turns["a"].as_f64().unwrap());
    // The same variant against itself differs in nothing.
    let same = json_without_timing(&rulesmith(&[
        "compare",
        "variants/sirius-basic",
        "variants/sirius-basic",
        "--games",
        "40",
        "--json",
    ]));
    assert!(same["differences"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["significant"] == false && r["p"].as_f64().unwrap() > 0.999));
}
