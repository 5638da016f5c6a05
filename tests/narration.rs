//! `narrate`: what the rules tell a watching player changes no game.

mod common;

use common::{game, root};
use rulesmith_core::record;

const EXAMPLE: &str = "tests/records/sirius-basic/worked-example.record";

#[test]
fn narration_is_kept_only_when_watched_and_changes_nothing() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let plain = game("sirius-basic");
    let unwatched = record::replay(&plain, 2, &text, EXAMPLE.as_ref()).unwrap();
    assert!(plain.take_narration().is_empty());

    let told = game("sirius-basic");
    told.set_watched(true);
    let watched = record::replay(&told, 2, &text, EXAMPLE.as_ref()).unwrap();
    let lines = told.take_narration();
    assert!(lines.iter().any(|l| l.starts_with("priority: ")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains(" rolled ") && l.contains(" shield ")),
        "{lines:?}"
    );
    assert!(told.take_narration().is_empty(), "taking empties the lines");
    assert_eq!(
        plain.save_state(&unwatched).unwrap(),
        told.save_state(&watched).unwrap(),
        "narration changed the game"
    );
    // Queries never narrate.
    told.legal_actions(&watched).unwrap();
    told.render(&watched, Some(0)).unwrap();
    told.summary(&watched, None).unwrap();
    assert!(told.take_narration().is_empty());
}
