//! Hidden information: what a seat cannot see (cards dealt to others in
//! secret, others' secret decisions) can be drawn afresh without changing
//! what it sees or what it may do, and bots decide on such worlds only.

mod common;

use common::{cases, driven_playout, game, runner};
use proptest::prelude::*;
use proptest::sample::Index;
use rulesmith_core::rng;
use rulesmith_core::{Game, State, ToMove};
use rulesmith_lab::bot::{Bot, Budget, GreedyBot, MctsBot};

/// Plays `steps` decisions of a seeded game (chance included).
fn partial_game(g: &Game, players: usize, seed: u64, choices: &[Index]) -> State {
    driven_playout(g, players, seed, choices, choices.len()).unwrap().0
}

/// `depth`: games stop after up to this many decisions (somewhere inside
/// the game, where something is hidden).
fn views_survive_resampling(variant: &str, players: usize, default_cases: u32, depth: usize) {
    let g = game(variant);
    let mut runner = runner(cases(default_cases));
    let strategy = (
        any::<u64>(),
        proptest::collection::vec(any::<Index>(), 0..depth),
        any::<u64>(),
    );
    runner
        .run(&strategy, |(seed, choices, resample_seed)| {
            let state = partial_game(&g, players, seed, &choices);
            let mut r = rng::seeded(resample_seed);
            for viewer in 0..players {
                let other = g
                    .determinize(&state, Some(viewer), &mut r)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(
                    g.summary(&state, Some(viewer)).unwrap(),
                    g.summary(&other, Some(viewer)).unwrap()
                );
                prop_assert_eq!(
                    g.render(&state, Some(viewer)).unwrap(),
                    g.render(&other, Some(viewer)).unwrap()
                );
                prop_assert_eq!(state.to_move(), other.to_move());
                if state.to_move() == ToMove::Decision(viewer) {
                    prop_assert_eq!(g.legal_actions(&state).unwrap(), g.legal_actions(&other).unwrap());
                }
                // What the viewer saw dealt to itself never changes.
                let mine = |s: &State| {
                    s.core
                        .secrets
                        .iter()
                        .filter(|d| d.seen_by == viewer)
                        .map(|d| d.card)
                        .collect::<Vec<_>>()
                };
                prop_assert_eq!(mine(&state), mine(&other));
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{variant}: {e}"));
}

#[test]
fn resampling_hidden_cards_keeps_every_view_sirius_lifeboats() {
    views_survive_resampling("sirius-lifeboats", 2, 24, 120);
}

#[test]
fn resampling_hidden_cards_keeps_every_view_sirius_advanced() {
    views_survive_resampling("sirius-advanced", 4, 8, 120);
}

#[test]
fn resampling_really_changes_what_is_hidden() {
    let g = game("sirius-lifeboats");
    let state = partial_game(&g, 2, 5, &[]);
    let secret_of_p2 = |s: &State| s.core.secrets.iter().find(|d| d.seen_by == 1).map(|d| d.card);
    let mut r = rng::seeded(1);
    let seen: std::collections::BTreeSet<_> = (0..40)
        .map(|_| secret_of_p2(&g.determinize(&state, Some(0), &mut r).unwrap()))
        .collect();
    assert!(
        seen.len() > 3,
        "P2's hidden card should vary across samples, got {seen:?}"
    );
    // P2's own view never resamples P2's card.
    for _ in 0..10 {
        assert_eq!(
            secret_of_p2(&g.determinize(&state, Some(1), &mut r).unwrap()),
            secret_of_p2(&state)
        );
    }
}

#[test]
fn a_seat_sees_its_own_secret_lifeboat_and_not_the_others() {
    let g = game("sirius-lifeboats");
    let state = partial_game(&g, 2, 11, &[]);
    let own = |viewer: Option<usize>, seat: usize| {
        let s = g.summary(&state, viewer).unwrap();
        s["vessels"][seat].get("lifeboat").cloned()
    };
    assert!(own(Some(0), 0).is_some(), "P1 sees its own lifeboat card");
    assert!(own(Some(0), 1).is_none(), "P1 does not see P2's");
    assert!(own(Some(1), 1).is_some());
    assert!(
        own(None, 0).is_none() && own(None, 1).is_none(),
        "a spectator sees no secret card"
    );
}

#[test]
fn resampling_hidden_cards_and_commitments_keeps_every_view_battlefield_space() {
    views_survive_resampling("battlefield-space", 2, 16, 30);
}

/// A Battlefield: Space game where P1 has committed its reinforcements in
/// secret and P2 is to commit: (the state before P1's commitment, P1's
/// legal commitments, the state after the first of them).
fn battlefield_after_p1_commits(g: &Game, seed: u64) -> (State, Vec<rulesmith_core::Action>, State) {
    let before = partial_game(g, 2, seed, &[]);
    assert_eq!(before.to_move(), ToMove::Decision(0), "P1 commits first");
    let legal = g.legal_actions(&before).unwrap();
    let mut after = before.clone();
    g.apply_action(&mut after, legal[0]).unwrap();
    assert_eq!(after.to_move(), ToMove::Decision(1), "then P2");
    (before, legal, after)
}

/// P1's commitment as P1 sees it in `s`: what it put face down where.
fn p1_commitment(g: &Game, s: &State) -> serde_json::Value {
    g.summary(s, Some(0)).unwrap()["fleets"][0]["committed"].clone()
}

#[test]
fn a_secret_commitment_is_drawn_afresh_for_the_other_seat_only() {
    let g = game("battlefield-space");
    let (_, _, state) = battlefield_after_p1_commits(&g, 3);
    let mut r = rng::seeded(2);
    let seen: std::collections::BTreeSet<String> = (0..30)
        .map(|_| p1_commitment(&g, &g.determinize(&state, Some(1), &mut r).unwrap()).to_string())
        .collect();
    assert!(
        seen.len() > 3,
        "P2's worlds should hold many commitments of P1, got {seen:?}"
    );
    // P1 knows its own.
    for _ in 0..10 {
        let world = g.determinize(&state, Some(0), &mut r).unwrap();
        assert_eq!(p1_commitment(&g, &world), p1_commitment(&g, &state));
    }
    // P2 does not see it: one number of face-down cards, whatever they are.
    assert_eq!(
        g.summary(&state, Some(1)).unwrap()["fleets"][0]["committed"],
        serde_json::json!(["?", "?", "?"])
    );
}

/// Whatever P1 committed, P2's bots see the same worlds and choose the
/// same: they cannot peek at the commitment.
#[test]
fn bots_cannot_see_a_secret_commitment() {
    let g = game("battlefield-space");
    let (before, p1_choices, _) = battlefield_after_p1_commits(&g, 8);
    assert!(p1_choices.len() > 1, "P1 needs a choice for this test");
    let mut worlds = Vec::new();
    let mut greedy = Vec::new();
    let mut mcts = Vec::new();
    for &a in &p1_choices {
        let mut s = before.clone();
        g.apply_action(&mut s, a).unwrap();
        worlds.push(g.determinize(&s, Some(1), &mut rng::seeded(7)).unwrap());
        let legal = g.legal_actions(&s).unwrap();
        let mut bot = GreedyBot::new(11);
        greedy.push(legal[bot.choose(&g, &s, &legal).unwrap()]);
        let mut bot = MctsBot::new(11, Budget::Playouts(40));
        mcts.push(legal[bot.choose(&g, &s, &legal).unwrap()]);
    }
    for w in &worlds[1..] {
        assert!(w.same_as(&worlds[0]), "P2's world depends on P1's secret commitment");
    }
    assert!(
        greedy.iter().all(|a| *a == greedy[0]),
        "P2's greedy choice depends on P1's secret commitment"
    );
    assert!(
        mcts.iter().all(|a| *a == mcts[0]),
        "P2's MCTS choice depends on P1's secret commitment"
    );
    // And the truth does differ between them.
    let commitments: std::collections::BTreeSet<String> = p1_choices.iter().map(|a| g.action_text(a)).collect();
    assert_eq!(commitments.len(), p1_choices.len());
}

/// The experiment behind the secret round: a greedy P2 that looks at the
/// true state (so sees P1's face-down cards and hand) against the greedy
/// bot, which decides on its own view, both facing the same random P1 over
/// the same seeds (paired games).
/// Run: cargo test --release --test hidden peeking -- --ignored --nocapture
#[test]
#[ignore = "an experiment that prints figures, not a check"]
fn peeking_at_the_commitment_pays_and_the_bots_cannot() {
    /// Greedy on the true state: what a bot that peeks would do.
    struct Peeking(rulesmith_core::rng::GameRng);
    impl Bot for Peeking {
        fn name(&self) -> &str {
            "peeking-greedy"
        }
        fn choose(
            &mut self,
            g: &Game,
            s: &State,
            legal: &[rulesmith_core::Action],
        ) -> Result<usize, rulesmith_core::GameError> {
            let ToMove::Decision(me) = s.to_move() else {
                return Ok(0);
            };
            let mut best = (f64::NEG_INFINITY, 0);
            for (i, &a) in legal.iter().enumerate() {
                let mut total = 0.0;
                for _ in 0..6 {
                    let mut t = s.clone();
                    g.apply_scratch(&mut t, a)?;
                    while t.to_move() == ToMove::Chance {
                        let o = g.sample_outcome(&t, &mut self.0).unwrap();
                        g.apply_outcome_scratch(&mut t, o)?;
                    }
                    total += if t.is_terminal() {
                        t.returns()[me] * 1000.0
                    } else {
                        g.evaluate(&t, me)?
                    };
                }
                if total > best.0 {
                    best = (total, i);
                }
            }
            Ok(best.1)
        }
    }
    let g = game("battlefield-space");
    let games: u64 = std::env::var("PEEK_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let mut score = [0.0f64; 2];
    let mut diffs = Vec::new();
    for seed in 0..games {
        let mut pair = [0.0; 2];
        for (k, peeks) in [false, true].into_iter().enumerate() {
            let mut chance = rng::seeded(seed);
            let mut p1 = rulesmith_lab::bot::RandomBot::new(rng::derive(seed, 1));
            let mut p2: Box<dyn Bot> = if peeks {
                Box::new(Peeking(rng::seeded(rng::derive(seed, 2))))
            } else {
                Box::new(GreedyBot::new(rng::derive(seed, 2)))
            };
            let mut s = g.new_game(2).unwrap();
            while !s.is_terminal() {
                match s.to_move() {
                    ToMove::Chance => {
                        let o = g.sample_outcome(&s, &mut chance).unwrap();
                        g.apply_outcome(&mut s, o).unwrap();
                    }
                    ToMove::Decision(seat) => {
                        let legal = g.legal_actions(&s).unwrap();
                        let i = if seat == 0 {
                            p1.choose(&g, &s, &legal)
                        } else {
                            p2.choose(&g, &s, &legal)
                        }
                        .unwrap();
                        g.apply_action(&mut s, legal[i]).unwrap();
                    }
                    ToMove::Terminal => {}
                }
            }
            // P2's points: 1 for a win, 0.5 for a draw.
            pair[k] = (s.returns()[1] + 1.0) / 2.0;
            score[k] += pair[k];
        }
        diffs.push(pair[1] - pair[0]);
    }
    let n = games as f64;
    let mean = diffs.iter().sum::<f64>() / n;
    let sd = (diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    eprintln!(
        "P2 greedy on its own view: {:.1}% of points; P2 greedy peeking at the true state: {:.1}%; \
         difference {:+.1} points per 100 games (paired, standard error {:.1})",
        100.0 * score[0] / n,
        100.0 * score[1] / n,
        100.0 * mean,
        100.0 * sd / n.sqrt()
    );
}

#[test]
fn resampling_hidden_holds_and_tactic_cards_keeps_every_view_battleship_galaxies() {
    views_survive_resampling("battleship-galaxies", 2, 4, 300);
}

/// Long random games of Battleship Galaxies (hundreds of secret tactic
/// draws and sealed holds, some revealed one decision at a time): every
/// seat's view determinizes all the way to the end. (Bot-steered games,
/// where holds sealed empty early used to defeat the search, are checked by
/// `galaxies_worlds_are_found_after_holds_sealed_empty`.)
#[test]
fn long_battleship_galaxies_games_determinize_to_the_end() {
    let g = game("battleship-galaxies");
    let mut positions = 0;
    for seed in 0..cases(3) as u64 {
        let mut r = rng::seeded(seed);
        let mut s = g.new_game(2).unwrap();
        let mut decisions = 0;
        loop {
            match s.to_move() {
                ToMove::Terminal => break,
                ToMove::Chance => {
                    let o = g.sample_outcome(&s, &mut r).unwrap();
                    g.apply_outcome(&mut s, o).unwrap();
                }
                ToMove::Decision(_) => {
                    if decisions % 40 == 0 {
                        for viewer in 0..2 {
                            g.determinize(&s, Some(viewer), &mut r)
                                .unwrap_or_else(|e| panic!("seed {seed}, decision {decisions}, P{}: {e}", viewer + 1));
                        }
                        positions += 1;
                    }
                    let legal = g.legal_actions(&s).unwrap();
                    let a = legal[rng::below(&mut r, legal.len() as u32) as usize];
                    g.apply_action(&mut s, a).unwrap();
                    decisions += 1;
                }
            }
        }
        assert!(decisions > 100, "seed {seed}: {decisions} decisions, not a long game");
    }
    assert!(positions > 20);
}

/// Battleship Galaxies reveals a hold's places one by one: once Blue Hawk
/// comes out of Everest's hold, the decision that loaded it is public
/// (`reveal_decision`) and the hold's other places stay secret, so P2's
/// worlds keep Blue Hawk's loading and still vary the rest of the hold.
#[test]
fn a_launched_cargo_ship_reveals_its_own_loading_only() {
    let g = game("battleship-galaxies");
    let dir = common::root().join("tests/records/battleship-galaxies");
    let text = std::fs::read_to_string(dir.join("hold-launch-next-turn.record")).unwrap();
    let state = rulesmith_core::record::replay(&g, 2, &text, &dir).unwrap();
    let p1: Vec<bool> = state
        .core
        .secret_decisions
        .iter()
        .filter(|d| d.seat == 0)
        .map(|d| d.revealed)
        .collect();
    // Everest's four places, then Sentinel's one: only the first is public.
    assert_eq!(p1, vec![true, false, false, false, false]);
    let holds = |s: &State| g.summary(s, Some(0)).unwrap()["players"][0]["holds"].to_string();
    let mut r = rng::seeded(3);
    let seen: std::collections::BTreeSet<String> = (0..30)
        .map(|_| holds(&g.determinize(&state, Some(1), &mut r).unwrap()))
        .collect();
    assert!(
        seen.len() > 1,
        "P2's worlds should vary what is left in the holds: {seen:?}"
    );
}

/// Issue 13: a Battleship Galaxies position where P2 had sealed hold places
/// with nothing in them and launched ships out of a hold and from behind
/// its screen, among secret tactic draws. The determinizing search used to
/// give up here ("no redeal ... fits what P1 has seen") after seconds of
/// work for generator seeds 2 and 6 (the first world of each run below),
/// stopping bot runs. Every world must fit: the same history except P2's
/// unrevealed secrets, the same view and legal actions for P1; and across
/// worlds P2's secrets really are drawn afresh.
#[test]
fn galaxies_worlds_are_found_after_holds_sealed_empty() {
    let g = game("battleship-galaxies");
    let path = common::root().join("tests/records/battleship-galaxies/determinize-holds-sealed-empty.record");
    let text = std::fs::read_to_string(&path).unwrap();
    let state = rulesmith_core::record::replay(&g, 2, &text, &path).unwrap();
    assert_eq!(state.to_move(), ToMove::Decision(0));
    let hidden: Vec<usize> = state
        .core
        .secrets
        .iter()
        .filter(|d| !d.revealed && d.seen_by != 0)
        .map(|d| d.at as usize)
        .chain(
            state
                .core
                .secret_decisions
                .iter()
                .filter(|d| !d.revealed && d.seat != 0)
                .map(|d| d.at as usize),
        )
        .collect();
    assert!(hidden.len() >= 5, "P2's sealed places and tactic draws: {hidden:?}");
    let truth = state.history.to_vec();
    let legal = g.legal_actions(&state).unwrap();
    let view = g.summary(&state, Some(0)).unwrap();
    let mut redrawn = 0;
    for seed in [2, 6] {
        // As the greedy bot asks: six worlds in a row.
        let worlds = g
            .determinize_worlds(&state, Some(0), &mut rng::seeded(seed), 6)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for w in worlds {
            let steps = w.history.to_vec();
            assert_eq!(steps.len(), truth.len());
            for (i, (a, b)) in truth.iter().zip(&steps).enumerate() {
                if hidden.contains(&i) {
                    redrawn += usize::from(a != b);
                } else {
                    assert_eq!(a, b, "seed {seed}: step {i} is not P2's secret, yet it changed");
                }
            }
            assert_eq!(g.summary(&w, Some(0)).unwrap(), view, "seed {seed}");
            assert_eq!(g.legal_actions(&w).unwrap(), legal, "seed {seed}");
        }
    }
    assert!(redrawn > 0, "no world differs from the truth in P2's secrets");
    // The same generator seed draws the same world.
    let again = |seed| g.determinize(&state, Some(0), &mut rng::seeded(seed)).unwrap();
    assert!(again(2).same_as(&again(2)));
}
