//! The `rulesmith` command as a user runs it: outputs and exit codes.

mod common;

use common::{root, rulesmith};
use std::process::{Command, Output};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const EXAMPLE: &str = "tests/records/sirius-basic/worked-example.record";

#[test]
fn check_accepts_every_shipped_variant() {
    for v in [
        "sirius-basic",
        "sirius-lifeboats",
        "sirius-multiplayer",
        "sirius-advanced",
        "sirius-custom-cards",
    ] {
        let o = rulesmith(&["check", &format!("variants/{v}")]);
        assert!(o.status.success(), "{v}: {}", stderr(&o));
        assert!(stdout(&o).starts_with("ok: "), "{v}: {}", stdout(&o));
    }
}

#[test]
fn replay_prints_the_section_8_summary() {
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["status"], "ongoing");
    assert_eq!(v["to_move"], "P2");
    assert_eq!(v["vessels"][0]["power"]["bow"], 5);
    assert_eq!(v["vessels"][1]["power"]["port"], 3);
}

#[test]
fn replay_legal_lists_the_next_decision_without_seat() {
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE, "--legal"]);
    assert!(o.status.success());
    let lines: Vec<String> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(&lines[..4], &["stay", "rotate cw", "rotate 180", "rotate ccw"]);
    assert!(lines.iter().all(|l| !l.starts_with('P')));
}

#[test]
fn illegal_line_exits_1_naming_record_line_and_legal_choices() {
    let o = rulesmith(&[
        "replay",
        "variants/sirius-basic",
        "tests/records/sirius-basic/illegal-repair-at-full-power.record",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("illegal-repair-at-full-power.record:15:"), "{e}");
    assert!(e.contains("repair starboard") && e.contains("legal: repair bow"), "{e}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(rulesmith(&["replay"]).status.code(), Some(2));
    assert_eq!(rulesmith(&["frobnicate"]).status.code(), Some(2));
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE, "--players", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE, "--set", "max_power"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn set_overrides_parameters_and_rejects_bad_values() {
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE, "--set", "max_power=99"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("max_power") && stderr(&o).contains("1..=12"),
        "{}",
        stderr(&o)
    );
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE, "--set", "no_such=1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown parameter 'no_such'"), "{}", stderr(&o));
    // With more weapons allowed, the legal fire choices grow: the override is live.
    let o = rulesmith(&[
        "replay",
        "variants/sirius-basic",
        "tests/records/sirius-basic/worked-example.record",
        "--set",
        "max_weapons=6",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn view_shows_a_seat_its_own_secret_card_only() {
    let rec = root().join("target/cli-view.record");
    std::fs::write(
        &rec,
        "chance bronze\nchance violet\nchance 6\nchance 6\nchance 1\nchance 1\n",
    )
    .unwrap();
    let rec = rec.to_string_lossy().into_owned();
    let summary = |view: Option<&str>| {
        let mut args = vec!["replay", "variants/sirius-lifeboats", rec.as_str()];
        if let Some(v) = view {
            args.extend(["--view", v]);
        }
        let o = rulesmith(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let p1 = summary(Some("P1"));
    assert_eq!(p1["vessels"][0]["lifeboat"], "bronze");
    assert!(p1["vessels"][1].get("lifeboat").is_none());
    let p2 = summary(Some("P2"));
    assert_eq!(p2["vessels"][1]["lifeboat"], "violet");
    assert!(p2["vessels"][0].get("lifeboat").is_none());
    let all = summary(None);
    assert!(all["vessels"][0].get("lifeboat").is_none() && all["vessels"][1].get("lifeboat").is_none());
    assert!(!stdout(&rulesmith(&["replay", "variants/sirius-lifeboats", rec.as_str()])).contains("violet"));
}

#[test]
fn play_against_a_bot_reads_moves_and_writes_the_record() {
    use std::io::Write;
    let out = root().join("target/cli-play.record");
    let _ = std::fs::remove_file(&out);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(["play", "variants/sirius-basic", "--seed", "3", "--record"])
        .arg(&out)
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Choose by number, by text, ask for help, then stop.
    child.stdin.take().unwrap().write_all(b"help\n1\ndone\nquit\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("seed 3") && text.contains("P1 to decide"), "{text}");
    let record = std::fs::read_to_string(&out).unwrap();
    // The record replays: what play wrote is a valid game record.
    let r = rulesmith(&["replay", "variants/sirius-basic", &out.to_string_lossy()]);
    assert!(r.status.success(), "{}\n{record}", stderr(&r));
    assert!(record.lines().any(|l| l.starts_with("P1 ")), "{record}");
}

#[test]
fn rules_that_roll_forever_fail_quickly_instead_of_hanging() {
    // The failing game's record goes to a scratch folder, not the repository.
    let dir = std::env::temp_dir().join(format!("rulesmith-cli-endless-chance-{}", std::process::id()));
    let failures = dir.to_str().unwrap();
    let start = std::time::Instant::now();
    let o = rulesmith(&["check", "tests/fuzz-variants/endless-chance", "--failures", failures]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("re-roll forever"), "{}", stderr(&o));
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let o = rulesmith(&[
        "simulate",
        "tests/fuzz-variants/endless-chance",
        "--games",
        "2",
        "--failures",
        failures,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn closed_output_pipes_end_quietly_instead_of_panicking() {
    // `rulesmith fuzz ... 2>&1 | head` closes both pipes early: the run
    // goes on and ends with its own exit code, never Rust's panic code 101.
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .args(["fuzz", "variants/sirius-basic", "--games", "60", "--jobs", "1"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    drop(child.stderr.take());
    assert_eq!(child.wait().expect("exits").code(), Some(0));
}
