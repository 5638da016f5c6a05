//! Scores and payoffs (`[scores]`, `set_score`): what `returns` gives,
//! the checks of the declared range and sum, what the bots maximize; and
//! secret dice (`roll_secret`): hidden from the other seats, rolled afresh
//! when they determinize, public once revealed.

mod common;

use common::{root, scratch_game, scratch_variant};
use rulesmith_core::record;
use rulesmith_core::state::{Outcome, Status, ToMove};
use rulesmith_core::{rng, Game, Variant};
use std::path::Path;

fn port(name: &str) -> Game {
    let v = Variant::load(root().join("tests/openspiel").join(name)).unwrap_or_else(|e| panic!("{e}"));
    rulesmith_rhai::interpreted(v).unwrap_or_else(|e| panic!("{e}"))
}

fn replay(game: &Game, text: &str) -> rulesmith_core::State {
    record::replay(game, 2, text, Path::new("test.record")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn kuhn_poker_returns_the_chips_won_and_lost() {
    let g = port("kuhn-poker");
    // Bet and call: the king takes 2 chips from the jack.
    let s = replay(&g, "chance J\nchance K\nP1 bet\nP2 bet\n");
    assert_eq!(s.status(), Status::Won(1));
    assert_eq!(g.returns(&s), vec![-2.0, 2.0]);
    assert_eq!(g.unit_returns(&s), vec![-1.0, 1.0], "scaled from -2..=2");
    assert_eq!(g.scores_text(&s).as_deref(), Some("scores: P1 -2, P2 2"));
    // A fold costs the ante only, whatever the cards.
    let s = replay(&g, "chance K\nchance J\nP1 pass\nP2 bet\nP1 pass\n");
    assert_eq!(g.returns(&s), vec![-1.0, 1.0]);
    // Two passes: the higher card takes the antes.
    let s = replay(&g, "chance K\nchance Q\nP1 pass\nP2 pass\n");
    assert_eq!(g.returns(&s), vec![1.0, -1.0]);
    assert_eq!(g.unit_returns(&s), vec![0.5, -0.5]);
    // Before the end, nobody has anything yet.
    let s = replay(&g, "chance K\nchance Q\nP1 bet\n");
    assert_eq!(g.returns(&s), vec![0.0, 0.0]);
    assert_eq!(g.scores_text(&s), None);
}

const BET_TOML: &str = r#"
[variant]
name = "bet"
players = { min = 2, max = 2 }
scripts = ["rules.rhai"]

[actions.safe]
text = "safe"
apply = "do_safe"

[actions.gamble]
text = "gamble"
apply = "do_gamble"

[steps.choose]
legal = "choose_legal"

[setup]
run = "setup"

[turn]
steps = ["choose"]
"#;

const SCORES: &str = "\n[scores]\nmin = -10\nmax = 10\nsum = \"zero\"\n";

/// P1 chooses between a sure win by 1 point and a coin flip that wins 10
/// or loses 1: the gamble wins less often but scores more on average.
/// `ends` is how the game ends with P1's score `p1`.
fn bet_rules(ends: &str) -> String {
    format!(
        r#"
fn setup() {{ start_turns(0); }}
fn choose_legal() {{ add("safe"); add("gamble"); }}
fn do_safe() {{ this.ends(1); }}
fn do_gamble() {{ roll(1, 2, "flipped"); }}
fn flipped(d) {{ if d[0] == 1 {{ this.ends(10) }} else {{ this.ends(-1) }} }}
fn ends(p1) {{ {ends} }}
"#
    )
}

const ENDS_SCORED: &str = "set_score(0, p1); set_score(1, -p1); if p1 > 0 { win(0) } else { win(1) }";
const ENDS_WON: &str = "if p1 > 0 { win(0) } else { win(1) }";

fn first_choice(game: &Game, spec: &str, seed: u64) -> String {
    let state = game.new_game(2).unwrap();
    let legal = game.legal_actions(&state).unwrap();
    let mut bot = rulesmith_lab::bot::from_spec(spec, seed).unwrap();
    let i = bot.choose(game, &state, &legal).unwrap();
    game.action_text(&legal[i])
}

#[test]
fn the_bots_maximize_the_expected_score_when_scores_are_declared() {
    let scored = scratch_game("bet-scored", &format!("{BET_TOML}{SCORES}"), &bet_rules(ENDS_SCORED));
    let won = scratch_game("bet-won", BET_TOML, &bet_rules(ENDS_WON));
    for seed in 0..3 {
        // Scored: the gamble is worth 4.5 points against 1.
        assert_eq!(first_choice(&scored, "mcts:400", seed), "gamble", "seed {seed}");
        // Win / lose only: the sure win is worth more than a coin flip.
        assert_eq!(first_choice(&won, "mcts:400", seed), "safe", "seed {seed}");
    }
}

#[test]
fn a_score_outside_the_range_or_without_scores_is_a_clear_error() {
    let g = scratch_game(
        "bet-range",
        &format!("{BET_TOML}{SCORES}"),
        &bet_rules("set_score(0, p1 * 2); set_score(1, -p1 * 2); win(0)"),
    );
    let mut s = g.new_game(2).unwrap();
    let gamble = g.parse_action("gamble").unwrap();
    g.apply_action(&mut s, gamble).unwrap();
    let before = s.clone();
    let e = g.apply_outcome(&mut s, Outcome::Face(1)).unwrap_err().to_string();
    assert!(
        e.contains("P1's score would be 20, outside the declared [scores] range -10..=10"),
        "{e}"
    );
    assert!(s.same_as(&before), "a failed outcome changes nothing");

    let g = scratch_game("bet-unscored", BET_TOML, &bet_rules(ENDS_SCORED));
    let mut s = g.new_game(2).unwrap();
    let e = g
        .apply_action(&mut s, g.parse_action("safe").unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("set_score(): this variant declares no scores"), "{e}");
}

#[test]
fn a_zero_sum_game_must_end_with_scores_that_add_up_to_zero() {
    let g = scratch_game(
        "bet-sum",
        &format!("{BET_TOML}{SCORES}"),
        &bet_rules("set_score(0, p1); win(0)"),
    );
    let mut s = g.new_game(2).unwrap();
    let e = g
        .apply_action(&mut s, g.parse_action("safe").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ended with scores P1 1, P2 0 summing to 1, but [scores] declares sum = \"zero\""),
        "{e}"
    );
    assert_eq!(s.to_move(), ToMove::Decision(0), "the game did not end");
    // A constant sum is checked the same way.
    let constant = "\n[scores]\nmin = 0\nmax = 10\nsum = \"constant\"\ntotal = 10\n";
    let g = scratch_game(
        "bet-constant",
        &format!("{BET_TOML}{constant}"),
        &bet_rules("set_score(0, 5 + p1 / 2); set_score(1, 5 - p1 / 2); win(0)"),
    );
    let mut s = g.new_game(2).unwrap();
    g.apply_action(&mut s, g.parse_action("gamble").unwrap()).unwrap();
    g.apply_outcome(&mut s, Outcome::Face(1)).unwrap();
    assert_eq!(g.returns(&s), vec![10.0, 0.0]);
}

#[test]
fn a_bad_scores_table_names_the_line_and_what_was_expected() {
    let cases = [
        ("min = 2\nmax = 2\n", "[scores] max (2) must be above min (2)"),
        (
            "min = 1\nmax = 5\nsum = \"zero\"\n",
            "sum = \"zero\" needs a range that holds 0, not 1..=5",
        ),
        (
            "min = 0\nmax = 5\nsum = \"constant\"\n",
            "sum = \"constant\" needs total = N",
        ),
        ("min = 0\nmax = 5\nsum = \"even\"\n", "unknown sum 'even'"),
        ("min = 0\nmax = 5\ntotal = 3\n", "total is only for sum = \"constant\""),
        ("min = 0\nmax = 5000000000\n", "a score bound must lie within"),
        ("min = 0\n", "missing field `max`"),
    ];
    for (table, expected) in cases {
        let toml = format!("{BET_TOML}\n[scores]\n{table}");
        let rules = bet_rules(ENDS_SCORED);
        let dir = scratch_variant("bad-scores", &[("variant.toml", &toml), ("rules.rhai", &rules)]);
        let e = Variant::load(&dir).expect_err(table).to_string();
        assert!(e.contains(expected), "{table}: {e}");
        assert!(e.contains("variant.toml:"), "names the file and line: {e}");
    }
}

const SCREEN_TOML: &str = r#"
[variant]
name = "screen"
players = { min = 2, max = 2 }
scripts = ["rules.rhai"]

[actions.call]
text = "call {face:int}"
apply = "do_call"

[steps.guess]
legal = "guess_legal"
actor = "script"
enter = "guess_enter"

[setup]
run = "setup"

[turn]
steps = ["guess"]

[output]
summary = "summary"
"#;

/// P1 rolls a die behind a screen, P2 calls a face, then the screen is
/// lifted: a right call wins for P2.
const SCREEN_RULES: &str = r#"
fn setup() { this.die = 0; this.lifted = false; roll_secret(0, 1, 6, "rolled"); }
fn rolled(d) { this.die = d[0]; start_turns(0); }
fn guess_enter() { set_actor(1); }
fn guess_legal() { for f in 1..=6 { add("call", f); } }
fn do_call(f) { reveal_secrets(0); this.lifted = true; if f == this.die { win(1) } else { win(0) } }
fn summary(viewer) { if viewer == 0 || viewer == -1 || this.lifted { #{ die: this.die } } else { #{ die: "?" } } }
"#;

#[test]
fn a_secret_roll_is_hidden_from_the_others_and_rolled_afresh_for_them() {
    let g = scratch_game("screen", SCREEN_TOML, SCREEN_RULES);
    let s = replay(&g, "chance 4\n");
    assert_eq!(s.to_move(), ToMove::Decision(1));
    assert!(s.core.hides_from(Some(1)) && !s.core.hides_from(Some(0)));
    assert!(s.core.hides_from(None), "a spectator does not see it either");
    let mut faces = std::collections::BTreeSet::new();
    let mut r = rng::seeded(7);
    for _ in 0..60 {
        let world = g.determinize(&s, Some(1), &mut r).unwrap();
        assert_eq!(g.summary(&world, Some(1)).unwrap(), g.summary(&s, Some(1)).unwrap());
        assert_eq!(world.to_move(), ToMove::Decision(1));
        let rules_die = g.summary(&world, None).unwrap()["die"].as_i64().unwrap();
        faces.insert(rules_die);
    }
    assert_eq!(faces.len(), 6, "every face comes up in P2's worlds: {faces:?}");
    // The seat that rolled keeps its face.
    for _ in 0..10 {
        let world = g.determinize(&s, Some(0), &mut r).unwrap();
        assert!(world.same_as(&s));
    }
    // Once revealed, nothing is hidden any more; the record replays.
    let s = replay(&g, "chance 4\nP2 call 4\n");
    assert_eq!(s.status(), Status::Won(1));
    assert!(!s.core.hides_from(Some(1)));
    // The pending roll tells who sees it.
    let start = g.new_game(2).unwrap();
    let source = &start.core.chance.as_ref().unwrap().source;
    assert_eq!(source.seen_by(), Some(0));
    assert_eq!(g.chance_outcomes(&start).len(), 6);
}

#[test]
fn roll_secret_names_a_seat_that_exists() {
    let g = scratch_game(
        "screen-bad",
        SCREEN_TOML,
        &SCREEN_RULES.replace("roll_secret(0,", "roll_secret(5,"),
    );
    let e = g.new_game(2).unwrap_err().to_string();
    assert!(e.contains("seat 5 does not exist"), "{e}");
}

fn fuzz(game: Game, seed: u64, games: u32) -> rulesmith_lab::fuzz::Batch {
    let g = std::rc::Rc::new(game);
    let mut game_for = |_: &[(String, i64)]| Ok(g.clone());
    let opts = rulesmith_lab::fuzz::Options {
        shrink_budget: 300,
        ..rulesmith_lab::fuzz::Options::default()
    };
    rulesmith_lab::fuzz::run_batch(&mut game_for, &opts, &[], seed, games)
}

#[test]
fn the_fuzzer_finds_a_secret_roll_the_views_show_and_passes_a_hidden_one() {
    use rulesmith_lab::fuzz::{FindingKind, GenericCheck};
    let leaky = scratch_game(
        "screen-leaky",
        SCREEN_TOML,
        &SCREEN_RULES.replace("if viewer == 0 || viewer == -1 || this.lifted", "if true"),
    );
    let (f, _) = fuzz(leaky, 1, 64).finding.expect("the die shown to P2 is found");
    assert_eq!(f.kind, FindingKind::Check(GenericCheck::NoViewLeak), "{}", f.message);
    assert!(f.message.contains("P2's view changes"), "{}", f.message);
    assert!(f.message.contains("secret cards, dice and decisions"), "{}", f.message);
    let hidden = scratch_game("screen-hidden", SCREEN_TOML, SCREEN_RULES);
    assert!(fuzz(hidden, 1, 64).finding.is_none());
    let batch = fuzz(port("liars-dice"), 2, 200);
    assert!(batch.finding.is_none(), "{:?}", batch.finding.map(|f| f.0.message));
    let batch = fuzz(port("kuhn-poker"), 3, 200);
    assert!(batch.finding.is_none(), "{:?}", batch.finding.map(|f| f.0.message));
}
