//! `rulesmith view`: the replay page, tested in a real headless browser.
//!
//! Chromium must be installed (`tests/run` installs it): these tests fail,
//! they never skip, when it is missing.

mod common;

use common::{root, rulesmith};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const EXAMPLE: &str = "tests/records/sirius-basic/worked-example.record";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("view-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the viewer page of `record` into `dir/game.html`.
fn view(variant: &str, record: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("game.html");
    let o = rulesmith(&["view", variant, record.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "rulesmith view failed: {}", stderr(&o));
    out
}

/// Runs headless Chromium on `url` with a fresh profile in `dir`.
fn chromium(dir: &Path, extra: &[&str], url: &str) -> Output {
    let profile = dir.join("chromium-profile");
    let _ = std::fs::remove_dir_all(&profile);
    let profile_arg = format!("--user-data-dir={}", profile.display());
    let mut args = vec![
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        &profile_arg,
        "--virtual-time-budget=5000",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    match std::process::Command::new("chromium").args(&args).output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run chromium ({e}): run tests/run, which installs it with apt-get"),
    }
}

/// What the page's `#selftest` hook reported.
fn selftest(dir: &Path, page: &Path) -> Value {
    selftest_in(dir, page, "1200,900")
}

/// What the page's `#selftest` hook reported in a window of `size`
/// ("WIDTH,HEIGHT" pixels).
fn selftest_in(dir: &Path, page: &Path, size: &str) -> Value {
    let window = format!("--window-size={size}");
    let o = chromium(
        dir,
        &["--dump-dom", &window],
        &format!("file://{}#selftest", page.display()),
    );
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"selftest\">")
        .unwrap_or_else(|| panic!("no #selftest in the dumped DOM:\n{dom}\n{}", stderr(&o)))
        + "<pre id=\"selftest\">".len();
    let end = start + dom[start..].find("</pre>").expect("#selftest is closed");
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("#selftest is not JSON ({e}): {text:?}"))
}

/// The entries of a record as the page writes them: comments removed,
/// tokens separated by one space.
fn entries(record: &str) -> Vec<String> {
    record
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// The frames embedded in a page.
fn embedded(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let open = "<script type=\"application/json\" id=\"data\">";
    let start = html.find(open).expect("embedded data") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

fn check_selftest(report: &Value, expected: &[String]) {
    let errors = report["errors"].as_array().expect("errors");
    assert!(errors.is_empty(), "script errors: {errors:?}");
    let n = expected.len();
    assert_eq!(report["steps"], n, "{report}");
    let action = |step: usize| {
        if step == 0 {
            String::new()
        } else {
            expected[step - 1].clone()
        }
    };
    let want: Vec<(&str, usize)> = vec![
        ("load", 0),
        ("forward", 1),
        ("forward", 2),
        ("forward", 3),
        ("back", 2),
        ("last", n),
        ("first", 0),
    ];
    let seen = report["seen"].as_array().expect("seen");
    // Then the first step the rules told of (see `told_and_legend_are_shown`).
    assert_eq!(seen.len(), want.len() + 1, "{report}");
    assert_eq!(seen[want.len()]["after"], "told", "{report}");
    for (got, (after, step)) in seen.iter().zip(want) {
        assert_eq!(got["after"], after, "{report}");
        assert_eq!(got["step"], step, "after {after}: {report}");
        assert_eq!(got["action"], action(step), "after {after}: {report}");
    }
}

#[test]
fn the_page_steps_through_the_worked_example_in_chromium() {
    let dir = scratch("worked");
    let page = view("variants/sirius-basic", Path::new(EXAMPLE), &dir);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing loaded from anywhere.
    for outside in ["<link", " src=", "http://", "https://", "@import", "url("] {
        assert!(!html.contains(outside), "the page refers outside itself: {outside}");
    }
    for id in ["step", "action", "board", "legal", "summary", "viewer", "selftest"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    let expected = entries(&std::fs::read_to_string(root().join(EXAMPLE)).unwrap());
    assert_eq!(expected.len(), 14);
    assert_eq!(expected.last().unwrap(), "P1 repair bow");
    check_selftest(&selftest(&dir, &page), &expected);

    // The page as a person sees it, opened at step 9.
    let png = dir.join("view.png");
    let shot = format!("--screenshot={}", png.display());
    let o = chromium(
        &dir,
        &[&shot, "--window-size=1200,900"],
        &format!("file://{}#step=9", page.display()),
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot ({e}): {}", stderr(&o)));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(bytes.len() > 10_000, "screenshot of {} bytes: blank?", bytes.len());
}

#[test]
fn text_is_shown_as_text_never_run() {
    // A record comment (shown as a note) that would break out of the
    // embedded JSON or inject markup if either were not escaped.
    let dir = scratch("escape");
    let hostile = "</script><script>window.viewerErrors.push('injected')</script><b>&amp;</b>";
    let text = format!(
        "# {hostile}\n{}",
        std::fs::read_to_string(root().join(EXAMPLE)).unwrap()
    );
    let record = dir.join("hostile.record");
    std::fs::write(&record, &text).unwrap();
    let page = view("variants/sirius-basic", &record, &dir);
    assert!(!std::fs::read_to_string(&page).unwrap().contains(hostile));
    check_selftest(&selftest(&dir, &page), &entries(&text));
    let notes = &embedded(&page)["notes"];
    assert_eq!(notes[0], hostile, "{notes}");
}

#[test]
fn seat_views_keep_secret_cards_secret() {
    let dir = scratch("secret");
    let record = root().join("tests/records/sirius-lifeboats/deal-secret-priority.record");
    let page = view("variants/sirius-lifeboats", &record, &dir);
    let data = embedded(&page);
    assert_eq!(data["players"], 2);
    let frames = data["frames"].as_array().unwrap();
    // The deal: violet to P1, gold to P2, each seen by its seat only.
    assert_eq!(frames[1]["action"], "chance violet");
    assert_eq!(frames[1]["secret_to"], 0);
    assert_eq!(frames[2]["action"], "chance gold");
    assert_eq!(frames[2]["secret_to"], 1);
    assert_eq!(frames[3]["secret_to"], Value::Null, "a die is public");
    let last = frames.last().unwrap();
    let views = last["views"].as_array().unwrap();
    assert_eq!(views.len(), 3, "referee, P1, P2");
    let (p1, p2) = (views[1]["summary"].to_string(), views[2]["summary"].to_string());
    assert!(p2.contains("gold") && !p2.contains("violet"), "{p2}");
    assert!(p1.contains("violet") && !p1.contains("gold"), "{p1}");
    assert_eq!(last["mover"], 1, "P2 has priority");
    assert!(!last["legal"].as_array().unwrap().is_empty());
}

#[test]
fn a_record_that_does_not_fit_is_located_and_nothing_is_written() {
    let dir = scratch("bad");
    let lines: Vec<&str> = include_str!("records/sirius-basic/worked-example.record")
        .lines()
        .collect();
    // Line 7 (after the comment, four dice and a rotation) is not an action.
    let text = format!("{}\nP1 jump\n", lines[..6].join("\n"));
    let record = dir.join("bad.record");
    std::fs::write(&record, text).unwrap();
    let out = dir.join("game.html");
    let o = rulesmith(&[
        "view",
        "variants/sirius-basic",
        record.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.record:7: 'P1 jump'"), "{e}");
    assert!(e.contains("not an action of this game"), "{e}");
    assert!(!out.exists(), "a page was written for a broken record");
}

#[test]
fn the_page_explains_itself_legend_dice_and_the_decision_box() {
    let dir = scratch("explains");
    let page = view("variants/sirius-basic", Path::new(EXAMPLE), &dir);
    let frames = embedded(&page)["frames"].as_array().unwrap().clone();
    let report = selftest(&dir, &page);
    let seen = report["seen"].as_array().expect("seen");
    for got in seen {
        let step = got["step"].as_u64().unwrap() as usize;
        // The decision box follows the step shown.
        assert_eq!(got["decision_box"], frames[step]["decision"].to_string(), "{got}");
        assert!(got["legend"].as_str().unwrap().contains("b:6 = bow 6"), "{got}");
    }
    // Step 0 says what comes before the ships are placed.
    assert!(
        seen[0]["board_text"]
            .as_str()
            .unwrap()
            .contains("No vessel is on the board yet"),
        "{}",
        seen[0]
    );
    // The four priority dice: told in words at the step of the fourth.
    let told = seen.last().unwrap();
    assert_eq!(told["step"], 4, "{told}");
    let lines = told["told"].as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("priority: P1 rolled 5+3")),
        "{told}"
    );
}

#[test]
fn a_wide_board_gets_the_room_it_needs() {
    // Battlefield: Space draws three columns of 22 characters: wider than
    // half of a 1200-pixel page.
    let dir = scratch("wide");
    let record = root().join("tests/records/battlefield-space/battle-columns-won-and-lost.record");
    let page = view("variants/battlefield-space", &record, &dir);
    let report = selftest_in(&dir, &page, "1200,900");
    let errors = report["errors"].as_array().expect("errors");
    assert!(errors.is_empty(), "script errors: {errors:?}");
    for got in report["seen"].as_array().unwrap() {
        assert_eq!(got["board_fits"], true, "the board scrolls: {got}");
    }
}
