//! The search bot on small games of its own with no `evaluate`: forced
//! wins found, losses blocked, reproducible choices, bot specs checked;
//! and `rulesmith ladder`'s ratings, sharding and reports.

mod common;

use common::{root, rulesmith};
use rulesmith_core::{rng, Game, State, ToMove, Variant};
use rulesmith_lab::bot::{self, Bot, MctsBot, MctsConfig};

fn test_game(name: &str) -> Game {
    let path = root().join("tests").join("bots").join(name);
    rulesmith_rhai::interpreted(Variant::load(path).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"))
}

/// The state after `moves` (action texts) from a new two-player game.
fn position(g: &Game, moves: &[&str]) -> State {
    let mut s = g.new_game(2).unwrap();
    for m in moves {
        let a = g.parse_action(m).unwrap_or_else(|| panic!("'{m}' is no action"));
        g.apply_action(&mut s, a).unwrap();
    }
    s
}

/// The action text `spec` plays in `s`.
fn choice(g: &Game, s: &State, spec: &str, seed: u64) -> String {
    let legal = g.legal_actions(s).unwrap();
    let i = bot::from_spec(spec, seed).unwrap().choose(g, s, &legal).unwrap();
    g.action_text(&legal[i])
}

#[test]
fn mcts_without_evaluate_takes_a_win_in_one_and_blocks_a_loss_in_one() {
    let g = test_game("tic-tac-toe");
    assert!(g.variant().evaluate.is_none(), "the point: no evaluate to lean on");
    for seed in 0..5 {
        // X on 1 and 2, O on 4 and 5: X wins at 3 (and loses at 6 if not).
        let win = position(&g, &["mark 1", "mark 4", "mark 2", "mark 5"]);
        assert_eq!(choice(&g, &win, "mcts:300", seed), "mark 3", "seed {seed}");
        // X on 1 and 5: O must take 9.
        let block = position(&g, &["mark 1", "mark 2", "mark 5"]);
        assert_eq!(choice(&g, &block, "mcts:300", seed), "mark 9", "seed {seed}");
    }
}

#[test]
fn mcts_finds_a_forced_win_three_plies_deep() {
    // P1 holds columns 3 and 4 of the bottom row, P2 the cells above
    // them. Dropping in 2 or 5 makes an open three that P2 can block at
    // one end only; any other move lets P2 take one of those cells.
    let g = test_game("connect-four");
    let s = position(&g, &["drop 3", "drop 3", "drop 4", "drop 4"]);
    for seed in 0..4 {
        let c = choice(&g, &s, "mcts:2000", seed);
        assert!(c == "drop 2" || c == "drop 5", "seed {seed}: {c}");
    }
}

#[test]
fn mcts_never_loses_tic_tac_toe_to_random_play() {
    let g = test_game("tic-tac-toe");
    for game in 0..16u64 {
        let mcts_seat = (game % 2) as usize;
        let mut bots: Vec<Box<dyn Bot>> = vec![
            bot::from_spec("random", rng::derive(game, 1)).unwrap(),
            bot::from_spec("mcts:400", rng::derive(game, 2)).unwrap(),
        ];
        if mcts_seat == 0 {
            bots.swap(0, 1);
        }
        let mut s = g.new_game(2).unwrap();
        while let ToMove::Decision(p) = s.to_move() {
            let legal = g.legal_actions(&s).unwrap();
            let i = bots[p].choose(&g, &s, &legal).unwrap();
            g.apply_action(&mut s, legal[i]).unwrap();
        }
        assert!(
            s.returns()[mcts_seat] >= 0.0,
            "game {game}: mcts (P{}) lost",
            mcts_seat + 1
        );
    }
}

#[test]
fn the_search_proves_forced_wins_and_losses_and_plays_them_exactly() {
    let g = test_game("tic-tac-toe");
    let proven = |s: &State, budget: u32, seed: u64| {
        let legal = g.legal_actions(s).unwrap();
        let config = MctsConfig {
            budget: bot::Budget::Playouts(budget),
            ..MctsConfig::default()
        };
        let mut search = MctsBot::with_config(seed, config, "mcts".into());
        search.root_statistics(&g, s, &legal).unwrap();
        let texts: Vec<String> = legal.iter().map(|a| g.action_text(a)).collect();
        (texts, search.proven_winners())
    };
    // X (P1) on 1, 5 and 7 threatens 3 and 4 at once: whatever O (P2)
    // plays, X wins next. Every O action is proven lost.
    let fork = position(&g, &["mark 1", "mark 2", "mark 5", "mark 9", "mark 7"]);
    for seed in 0..3 {
        let (texts, winners) = proven(&fork, 2000, seed);
        assert_eq!(winners, vec![Some(0); texts.len()], "seed {seed}: {texts:?}");
    }
    // X to move wins at 3: proven, and taken even on a tiny budget.
    let win = position(&g, &["mark 1", "mark 4", "mark 2", "mark 5"]);
    let (texts, winners) = proven(&win, 100, 1);
    let at3 = texts.iter().position(|t| t == "mark 3").unwrap();
    assert_eq!(winners[at3], Some(0), "{texts:?} {winners:?}");
    for seed in 0..10 {
        assert_eq!(choice(&g, &win, "mcts:20", seed), "mark 3", "seed {seed}");
    }
}

#[test]
fn a_search_without_chance_or_hidden_cards_lists_each_nodes_actions_once() {
    // Every visit to a tree node on a path with no chance and one world
    // finds the same state, so its actions come from the tree after the
    // first visit. Without that, each iteration lists actions before every
    // decision it applies but the root's: listings = applies - iterations.
    let path = root().join("tests").join("bots").join("tic-tac-toe");
    let g = rulesmith_rhai::interpreted_profiled(Variant::load(path).unwrap()).unwrap();
    let s = g.new_game(2).unwrap();
    let legal = g.legal_actions(&s).unwrap();
    let before = g.profile();
    let calls = |p: &std::collections::BTreeMap<String, rulesmith_core::rules::FunctionProfile>, f: &str| {
        p.get(f).map_or(0, |x| x.calls)
    };
    let iterations = 600;
    let mut config = MctsConfig::default();
    config.set("reuse", "off").unwrap();
    config.budget = bot::Budget::Playouts(iterations);
    let mut search = MctsBot::with_config(3, config, "mcts".into());
    let stats = search.root_statistics(&g, &s, &legal).unwrap();
    assert_eq!(
        stats.iter().map(|x| x.0).sum::<f64>(),
        iterations as f64,
        "every iteration scored"
    );
    let after = g.profile();
    let listings = calls(&after, "play_legal") - calls(&before, "play_legal");
    let applies = calls(&after, "do_mark") - calls(&before, "do_mark");
    assert!(
        applies - listings > 2 * iterations as u64,
        "{listings} listings for {applies} applies in {iterations} iterations: the tree's lists went unused"
    );
}

#[test]
fn a_decision_is_reproducible_from_its_seed_and_split_trees_agree_in_strength() {
    let g = test_game("connect-four");
    let s = position(&g, &["drop 4", "drop 4", "drop 3"]);
    let legal = g.legal_actions(&s).unwrap();
    let stats = |spec: &str, seed: u64| {
        let parts: Vec<&str> = spec.split(':').skip(1).collect();
        let config = MctsConfig::parse(&parts).unwrap();
        MctsBot::with_config(seed, config, spec.into())
            .root_statistics(&g, &s, &legal)
            .unwrap()
    };
    assert_eq!(stats("mcts:500", 9), stats("mcts:500", 9));
    assert_ne!(stats("mcts:500", 9), stats("mcts:500", 10), "the seed matters");
    // Four trees of 125 iterations: the same total, reproducible too.
    let split = stats("mcts:500:trees=4", 9);
    assert_eq!(split, stats("mcts:500:trees=4", 9));
    // The same trees on two threads (each with a game of its own, the
    // position sent as saved JSON): the same statistics, bit for bit.
    assert_eq!(split, stats("mcts:500:trees=4:threads=2", 9));
    let visits: f64 = split.iter().map(|x| x.0).sum();
    assert_eq!(visits, 500.0);
    // P2 must block at 2 or 5 (P1 threatens an open three).
    let best = (0..legal.len())
        .max_by(|&a, &b| split[a].0.total_cmp(&split[b].0))
        .unwrap();
    let text = g.action_text(&legal[best]);
    assert!(text == "drop 2" || text == "drop 5", "{text}");
}

/// A turn of several decisions: the second decision of a turn goes on
/// from the subtree the first search grew under the action it chose (so
/// it starts with visits of its own), over the die rolled between them;
/// after the other seat's turn the search starts afresh; `reuse=off`
/// always does. Either way the choices are reproducible from the seed.
#[test]
fn the_second_decision_of_a_turn_grows_the_tree_the_first_one_grew() {
    let g = test_game("two-picks");
    let play = |spec: &str, seed: u64| -> (Vec<f64>, Vec<String>) {
        let parts: Vec<&str> = spec.split(':').skip(1).collect();
        let mut bot = MctsBot::with_config(seed, MctsConfig::parse(&parts).unwrap(), spec.into());
        let mut dice = rng::seeded(seed);
        let mut s = g.new_game(2).unwrap();
        let (mut seen, mut moves) = (Vec::new(), Vec::new());
        while !s.is_terminal() && moves.len() < 12 {
            match s.to_move() {
                ToMove::Chance => {
                    let outcome = g.sample_outcome(&s, &mut dice).unwrap();
                    g.apply_outcome(&mut s, outcome).unwrap();
                }
                ToMove::Decision(_) => {
                    let legal = g.legal_actions(&s).unwrap();
                    let i = bot.choose(&g, &s, &legal).unwrap();
                    seen.push(bot.last_root_visits());
                    moves.push(g.action_text(&legal[i]));
                    g.apply_action(&mut s, legal[i]).unwrap();
                }
                ToMove::Terminal => break,
            }
        }
        (seen, moves)
    };
    let (kept, moves) = play("mcts:200", 4);
    assert!(moves.len() >= 6, "{moves:?}");
    // Decisions alternate: the first of a turn (fresh: 200), the second
    // (200 more on top of what the first grew under its choice).
    for (k, v) in kept.iter().enumerate() {
        if k % 2 == 0 {
            assert_eq!(*v, 200.0, "decision {k}: a turn's first starts afresh: {kept:?}");
        } else {
            assert!(*v > 200.0, "decision {k}: a turn's second goes on: {kept:?}");
        }
    }
    let (fresh, _) = play("mcts:200:reuse=off", 4);
    assert!(fresh.iter().all(|&v| v == 200.0), "{fresh:?}");
    assert_eq!(play("mcts:200", 4), (kept, moves), "reproducible from the seed");
}

/// Progressive widening: at a node with more than six actions, the search
/// ranks them by `evaluate` one decision ahead and considers only the best
/// few (2, plus the square root of the node's visits), so with a small
/// budget the columns the evaluation ranks low are never tried; without
/// widening every column is tried once before any twice.
#[test]
fn widening_spends_a_small_budget_on_the_actions_evaluate_ranks_best() {
    let g = test_game("connect-four-ranked");
    let s = position(&g, &[]);
    let legal = g.legal_actions(&s).unwrap();
    assert_eq!(legal.len(), 7);
    let visited = |spec: &str| -> Vec<String> {
        let parts: Vec<&str> = spec.split(':').skip(1).collect();
        let config = MctsConfig::parse(&parts).unwrap();
        let stats = MctsBot::with_config(3, config, spec.into())
            .root_statistics(&g, &s, &legal)
            .unwrap();
        let mut tried: Vec<String> = (0..legal.len())
            .filter(|&i| stats[i].0 > 0.0)
            .map(|i| g.action_text(&legal[i]))
            .collect();
        tried.sort();
        tried
    };
    // 8 iterations: at most 2 + sqrt(7) = 4 columns, the middle ones
    // (the evaluation's ranking: 4, then 3 and 5, then 2 and 6).
    let widened = visited("mcts:8");
    assert!(widened.len() <= 4, "{widened:?}");
    for edge in ["drop 1", "drop 7"] {
        assert!(!widened.contains(&edge.to_string()), "{edge} tried: {widened:?}");
    }
    assert!(widened.contains(&"drop 4".to_string()), "{widened:?}");
    assert_eq!(visited("mcts:8:widen=off").len(), 7);
    // The plain game has no evaluate: nothing to rank by, no widening.
    let plain = test_game("connect-four");
    let stats = MctsBot::with_config(3, MctsConfig::parse(&["8"]).unwrap(), "mcts:8".into())
        .root_statistics(&plain, &position(&plain, &[]), &legal)
        .unwrap();
    assert_eq!(stats.iter().filter(|x| x.0 > 0.0).count(), 7);
}

/// `rollout=greedy` plays rollouts by `evaluate` among a few drawn
/// actions: its statistics are its own (not random rollouts'), and
/// reproducible from the seed.
#[test]
fn greedy_rollouts_are_their_own_policy_and_reproducible() {
    let g = test_game("connect-four-ranked");
    let s = position(&g, &["drop 4", "drop 3"]);
    let legal = g.legal_actions(&s).unwrap();
    let stats = |spec: &str| {
        let parts: Vec<&str> = spec.split(':').skip(1).collect();
        MctsBot::with_config(5, MctsConfig::parse(&parts).unwrap(), spec.into())
            .root_statistics(&g, &s, &legal)
            .unwrap()
    };
    let greedy = stats("mcts:40:rollout=greedy:depth=end");
    assert_eq!(greedy, stats("mcts:40:rollout=greedy:depth=end"));
    assert_ne!(greedy, stats("mcts:40:rollout=random:depth=end"));
}

/// `peek=on` is the analysis bot that searches the true state: in Kuhn
/// poker, P2 holding the queen and facing a bet calls a jack and folds to
/// a king. The fair search cannot tell the two deals apart (P1's card is
/// hidden from P2): it decides the same in both.
#[test]
fn the_peeking_search_sees_hidden_cards_and_the_fair_one_does_not() {
    let path = root().join("tests").join("openspiel").join("kuhn-poker");
    let g = rulesmith_rhai::interpreted(Variant::load(path).unwrap()).unwrap();
    let facing_a_bet = |p1: &str| {
        let mut s = g.new_game(2).unwrap();
        for card in [p1, "Q"] {
            let o = g.parse_outcome(&s, card).unwrap();
            g.apply_outcome(&mut s, o).unwrap();
        }
        g.apply_action(&mut s, g.parse_action("bet").unwrap()).unwrap();
        s
    };
    let (jack, king) = (facing_a_bet("J"), facing_a_bet("K"));
    assert_eq!(choice(&g, &jack, "mcts:300:peek=on", 1), "bet", "call the jack");
    assert_eq!(choice(&g, &king, "mcts:300:peek=on", 1), "pass", "fold to the king");
    for seed in 0..4 {
        assert_eq!(
            choice(&g, &jack, "mcts:300", seed),
            choice(&g, &king, "mcts:300", seed),
            "seed {seed}: the fair search told the deals apart"
        );
    }
}

/// In a round of simultaneous secret bids, greedy judges its bid by how
/// the round ends, the other seat's bid drawn at random: it bids 3 (the
/// evaluation says nothing before the reveal, so judged on the
/// half-committed round every bid would look the same, and it would pick
/// one at random).
#[test]
fn greedy_judges_a_secret_commitment_by_how_the_round_ends() {
    let g = test_game("high-bid");
    let s = g.new_game(2).unwrap();
    let threes = (0..10)
        .filter(|&seed| choice(&g, &s, "greedy", seed) == "bid 3")
        .count();
    assert!(threes >= 8, "bid 3 chosen {threes} times of 10");
}

#[test]
fn bot_specs_are_checked_with_a_reason() {
    for (spec, want) in [
        ("mcts:0", "expected a budget"),
        (
            "mcts:10:rollout=greedyish",
            "rollout=greedyish: expected random, greedy or none",
        ),
        ("mcts:10:depth=-1", "depth=-1"),
        ("mcts:10:c=abc", "c=abc"),
        ("mcts:10:worlds=0", "worlds=0"),
        ("mcts:10:threads=0", "threads=0"),
        ("mcts:10:widen=maybe", "widen=maybe: expected auto, on or off"),
        ("mcts:10:reuse=yes", "reuse=yes: expected on or off"),
        ("mcts:10:peek=1", "peek=1: expected on or off"),
        ("mcts:10:colour=red", "unknown option 'colour'"),
        ("mcts:10:20", "the budget is given once"),
        ("greedy:5", "greedy takes no budget"),
        ("smart", "unknown bot 'smart'"),
    ] {
        let e = bot::from_spec(spec, 0)
            .err()
            .unwrap_or_else(|| panic!("{spec} was accepted"));
        assert!(e.contains(want), "{spec}: {e}");
    }
    for spec in [
        "mcts",
        "mcts:50",
        "mcts:20ms",
        "mcts:rollout=none",
        "mcts:100:depth=end:c=1.4:worlds=4:trees=2:threads=2",
        "mcts:100:widen=off",
        "mcts:100:rollout=greedy:reuse=off:peek=on",
    ] {
        assert!(bot::from_spec(spec, 0).is_ok(), "{spec}");
    }
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_ladder_rates_the_search_above_random_the_same_on_any_threads_and_shards() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "ladder",
            "tests/bots/tic-tac-toe",
            "--engine",
            "interpreted",
            "--bots",
            "random,mcts:150",
            "--games",
            "12",
            "--json",
        ];
        a.extend_from_slice(extra);
        rulesmith(&a)
    };
    let one = json(&args(&["--jobs", "1"]));
    let two = json(&args(&["--jobs", "2"]));
    assert_eq!(one, two, "the ratings do not depend on --jobs");
    let r = &one["ratings"];
    assert_eq!(r[0]["name"], "random");
    assert_eq!(r[0]["elo"], 0.0);
    assert!(r[1]["elo"].as_f64().unwrap() > 150.0, "{r}");
    assert!(r[1]["score"].as_f64().unwrap() > 0.75, "{r}");
    assert_eq!(one["pairs"][0]["games"], 12.0);
    assert_eq!(one["skill_depth"]["strongest"], "mcts:150");

    // Two shards merged: exactly the whole ladder.
    let dir = std::env::temp_dir().join(format!("rulesmith-ladder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for i in 1..=2 {
        let o = args(&["--shard", &format!("{i}/2")]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let f = dir.join(format!("part{i}.json"));
        std::fs::write(&f, &o.stdout).unwrap();
        files.push(f.display().to_string());
    }
    let report = dir.join("ladder.html");
    let report_arg = report.display().to_string();
    let merged = json(&rulesmith(&[
        "merge",
        &files[0],
        &files[1],
        "--json",
        "--report",
        &report_arg,
    ]));
    assert_eq!(merged, one);
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("<svg") && html.contains("mcts:150") && html.contains("skill depth"),
        "{html}"
    );
    // A shard missing: said, not silently merged.
    let o = rulesmith(&["merge", &files[0]]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard 2/2 is missing"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ladder_refuses_what_it_cannot_rate() {
    for (args, want) in [
        (vec!["--bots", "random"], "at least two bots"),
        (vec!["--bots", "random,random"], "listed twice"),
        (vec!["--bots", "random,mcts:zero"], "bot 'mcts:zero'"),
        (
            vec!["--bots", "random,greedy", "--report", "no/such/dir/l.html"],
            "does not exist",
        ),
    ] {
        let mut a = vec!["ladder", "tests/bots/tic-tac-toe", "--engine", "interpreted"];
        a.extend(args.iter());
        let o = rulesmith(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{a:?}: {e}");
    }
    let o = rulesmith(&[
        "ladder",
        "variants/sirius-multiplayer",
        "--engine",
        "interpreted",
        "--bots",
        "random,greedy",
    ]);
    // sirius-multiplayer takes 3 to 6 players: no head-to-head games.
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("two players a game"));
}
