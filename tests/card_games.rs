//! Card-game structure: piles the engine keeps and shows by their declared
//! visibility, cards moved and drawn between them (with a refill), a deal
//! round the table, turns the rules hand to a seat, and card schemas that
//! decks share.

mod common;

use common::scratch_variant;

use rulesmith_core::{Game, State, ToMove, Variant};

const VARIANT: &str = r#"
[variant]
name = "piles"
players = { min = 2, max = 3, default = 3 }
scripts = ["rules.rhai"]

[notation]
card = { words = ["-"], decks = ["cards"] }

[actions.play]
text = "play {card}"
apply = "do_play"

[steps.play]
legal = "play_legal"

[setup]
run = "setup"

[turn]
steps = ["play"]

[card_schemas.suited]
suit = { type = "int", min = 0, max = 3 }

[decks.cards]
file = "cards.toml"
schema = "suited"

[piles.hand]
deck = "cards"
visible = "owner"

[piles.table]
deck = "cards"
per_seat = false
visible = "everyone"

[piles.stock]
deck = "cards"
visible = "nobody"
refill = "spent"

[piles.spent]
deck = "cards"
visible = "owner"
"#;

const RULES: &str = r#"
fn setup() {
    this.dealt = [];
    deal("cards", 2, 2, "hand", "dealt");
}
fn dealt(cards) {
    this.dealt = cards;
    start_turns(0);
}
fn play_legal() {
    for id in pile("hand", active()) {
        add("play", card_ids("cards").index_of(id) + 1);
    }
}
// The card goes to the table; the seat after the next one has the next turn.
fn do_play(v) {
    let me = active();
    move_card(words("card")[v], "hand", "table", me);
    if pile_size("table", -1) >= 6 {
        win(0);
        return;
    }
    end_turn_to((me + 2) % seats());
}
"#;

fn cards_toml() -> String {
    let mut out = String::new();
    for suit in 0..4 {
        for rank in 0..3 {
            out += &format!("[[cards]]\nid = \"c{suit}{rank}\"\nsuit = {suit}\n\n");
        }
    }
    out
}

/// The test rule set with `rules` as its script, in a folder of its own.
fn game_with(rules: &str) -> Game {
    let cards = cards_toml();
    let dir = scratch_variant(
        "piles",
        &[("variant.toml", VARIANT), ("rules.rhai", rules), ("cards.toml", &cards)],
    );
    rulesmith_rhai::interpreted(Variant::load(&dir).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

fn piles_game() -> Game {
    game_with(RULES)
}

/// Deals the first cards of the deck in order: P1 gets the 1st and 4th
/// dealt, P2 the 2nd and 5th, P3 the 3rd and 6th (P3 deals).
fn dealt_game(g: &Game) -> State {
    let mut s = g.new_game(3).unwrap();
    for id in ["c00", "c10", "c20", "c01", "c11", "c21"] {
        assert_eq!(s.to_move(), ToMove::Chance);
        let o = g.parse_outcome(&s, id).unwrap();
        g.apply_outcome(&mut s, o).unwrap();
    }
    s
}

#[test]
fn a_deal_goes_round_the_table_one_card_at_a_time_into_hands_only_their_owners_see() {
    let g = piles_game();
    let s = dealt_game(&g);
    // Seat by seat for the continuation, each seat's in the order dealt.
    let summary = g.summary(&s, Some(0)).unwrap();
    assert_eq!(summary["piles"]["hand"], serde_json::json!([["c00", "c01"], 2, 2]));
    assert_eq!(summary["piles"]["table"], serde_json::json!([]));
    assert_eq!(summary["piles"]["stock"], serde_json::json!([0, 0, 0]));
    assert_eq!(
        g.summary(&s, Some(1)).unwrap()["piles"]["hand"],
        serde_json::json!([2, ["c10", "c11"], 2])
    );
    assert_eq!(
        g.summary(&s, None).unwrap()["piles"]["hand"],
        serde_json::json!([2, 2, 2])
    );
    // Each card is a secret of the seat it went to.
    let seen: Vec<usize> = s.core.secrets.iter().map(|d| d.seen_by).collect();
    assert_eq!(seen, vec![0, 1, 2, 0, 1, 2]);
    assert!(s.core.hides_from(Some(0)));
}

#[test]
fn a_card_moved_to_a_pile_everyone_sees_is_revealed_and_the_named_seat_moves_next() {
    let g = piles_game();
    let mut s = dealt_game(&g);
    assert_eq!(s.to_move(), ToMove::Decision(0));
    assert_eq!(s.core.turn, 1);
    let play = g.parse_action("play c01").unwrap();
    g.apply_action(&mut s, play).unwrap();
    // end_turn_to(2): P3 has turn 2, not P2.
    assert_eq!(s.to_move(), ToMove::Decision(2));
    assert_eq!(s.core.turn, 2);
    let revealed: Vec<&str> = s
        .core
        .secrets
        .iter()
        .filter(|d| d.revealed)
        .map(|d| g.variant().decks[d.deck as usize].cards[d.card as usize].id.as_str())
        .collect();
    assert_eq!(revealed, vec!["c01"]);
    assert_eq!(
        g.summary(&s, Some(1)).unwrap()["piles"]["table"],
        serde_json::json!(["c01"])
    );
    // P2's worlds keep the card on the table and redeal only the hidden ones.
    let mut r = rulesmith_core::rng::seeded(3);
    for _ in 0..20 {
        let w = g.determinize(&s, Some(1), &mut r).unwrap();
        assert_eq!(g.summary(&w, Some(1)).unwrap(), g.summary(&s, Some(1)).unwrap());
        assert_eq!(w.core.decks[g.variant().piles[1].first].len(), 1);
    }
}

#[test]
fn a_short_draw_pile_is_drawn_out_then_refilled_from_its_refill_pile() {
    let g = game_with(&RULES.replace(
        "deal(\"cards\", 2, 2, \"hand\", \"dealt\");",
        "for id in [\"c00\", \"c01\"] { move_card(id, \"cards\", \"stock\", 0); }
             for id in [\"c10\", \"c11\", \"c12\"] { move_card(id, \"cards\", \"spent\", 0); }
             draw_from(\"stock\", 0, 4, \"hand\");
             start_turns(0);",
    ));
    let mut s = g.new_game(2).unwrap();
    // One event of 4 cards, all seen by P1: the two left first, then the
    // three spent ones become the stock and two more come from there.
    let p = s.core.chance.as_ref().expect("a draw is pending");
    assert_eq!(p.needed, 4);
    for (id, choices) in [("c01", 2), ("c00", 1), ("c12", 3), ("c10", 2)] {
        assert_eq!(g.chance_outcomes(&s).len(), choices, "before {id}");
        let o = g.parse_outcome(&s, id).unwrap();
        g.apply_outcome(&mut s, o).unwrap();
    }
    let view = g.summary(&s, Some(0)).unwrap();
    assert_eq!(
        view["piles"]["hand"][0],
        serde_json::json!(["c01", "c00", "c12", "c10"])
    );
    assert_eq!(view["piles"]["stock"], serde_json::json!([1, 0]));
    assert_eq!(view["piles"]["spent"][0], serde_json::json!([]));
    assert_eq!(view["piles"]["hand"][1], serde_json::json!(0));
    assert_eq!(s.core.secrets.iter().filter(|d| d.seen_by == 0).count(), 4);
}

#[test]
fn pile_natives_refuse_what_cannot_be_done_with_a_message_that_says_why() {
    let cases = [
        ("move_card(\"c00\", \"table\", \"hand\", 0);", "there is no 'c00' there"),
        (
            "move_card(\"c00\", \"cards\", \"hand\", -1);",
            "pile 'hand' is one per seat, and seat -1 does not exist",
        ),
        ("draw_from(\"cards\", 0, 1, \"stock\");", "nobody sees pile 'stock.P1'"),
        (
            "deal(\"cards\", 5, 0, \"table\", \"dealt\");",
            "a deal goes into a pile per seat",
        ),
        (
            "deal(\"cards\", 5, 0, \"hand\", \"dealt\");",
            "3 seat(s) in play need 15 card(s), and 12 are left",
        ),
    ];
    for (call, message) in cases {
        let rules = RULES.replace("deal(\"cards\", 2, 2, \"hand\", \"dealt\");", call);
        let g = game_with(&rules);
        let e = g.new_game(3).unwrap_err().to_string();
        assert!(e.contains(message), "{call}: {e}");
        assert!(e.contains("rules.rhai"), "{call}: names the file: {e}");
    }
}

#[test]
fn a_pile_the_scripts_name_and_the_variant_lacks_is_refused_when_it_loads() {
    let rules = RULES.replace(
        "deal(\"cards\", 2, 2, \"hand\", \"dealt\");",
        "move_card(\"c00\", \"cards\", \"hands\", 0);",
    );
    let dir = scratch_variant(
        "piles-typo",
        &[
            ("variant.toml", VARIANT),
            ("rules.rhai", &rules),
            ("cards.toml", &cards_toml()),
        ],
    );
    let e = Variant::load(&dir).unwrap_err().to_string();
    assert!(e.contains("move_card(.., \"hands\"): no deck or pile 'hands'"), "{e}");
    assert!(e.contains("rules.rhai:"), "names the file and line: {e}");
}

#[test]
fn end_turn_to_is_refused_for_a_seat_out_of_play() {
    let rules = RULES
        .replace("start_turns(0);", "start_turns(0); eliminate(2);")
        .replace("end_turn_to((me + 2) % seats());", "end_turn_to(2);");
    let g = game_with(&rules);
    let mut s = g.new_game(3).unwrap();
    while s.to_move() == ToMove::Chance {
        let o = g.chance_outcomes(&s)[0].0;
        g.apply_outcome(&mut s, o).unwrap();
    }
    let before = g.save_state(&s).unwrap();
    let a = g.legal_actions(&s).unwrap()[0];
    let e = g.apply_action(&mut s, a).unwrap_err().to_string();
    assert!(e.contains("end_turn_to(P3): that seat is out of play"), "{e}");
    assert_eq!(g.save_state(&s).unwrap(), before, "a refused action changes nothing");
}

/// The Oh Hell test variant counts turns as players do: one per bid and one
/// per card played, and the trick's winner has the turn after the trick.
#[test]
fn oh_hell_counts_a_turn_per_bid_and_per_card_and_the_trick_winner_leads() {
    let mut v = Variant::load(common::root().join("tests/bots/oh-hell")).unwrap();
    v.set("hands", "1").unwrap();
    let g = rulesmith_rhai::interpreted(v).unwrap();
    let mut rng = rulesmith_core::rng::seeded(7);
    let mut s = g.new_game(3).unwrap();
    let (mut decisions, mut tricks_checked) = (0, 0);
    while !s.is_terminal() {
        match s.to_move() {
            ToMove::Chance => {
                let o = g.sample_outcome(&s, &mut rng).unwrap();
                g.apply_outcome(&mut s, o).unwrap();
            }
            ToMove::Decision(seat) => {
                decisions += 1;
                assert_eq!(s.core.turn, decisions, "one decision per turn");
                assert_eq!(s.core.active, Some(seat));
                let taken = |s: &State| g.summary(s, None).unwrap()["taken"].clone();
                let before = taken(&s);
                let legal = g.legal_actions(&s).unwrap();
                let a = legal[rulesmith_core::rng::below(&mut rng, legal.len() as u32) as usize];
                g.apply_action(&mut s, a).unwrap();
                let after = taken(&s);
                if before != after && !s.is_terminal() {
                    // A trick was won: its winner plays next.
                    let winner = (0..3).find(|&k| after[k] != before[k]).unwrap();
                    assert_eq!(s.to_move(), ToMove::Decision(winner));
                    tricks_checked += 1;
                }
            }
            ToMove::Terminal => {}
        }
    }
    assert_eq!(decisions, 3 + 21, "3 bids and 7 tricks of 3 cards");
    assert_eq!(tricks_checked, 6, "every trick but the last hands the lead on");
}
