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

/// `check`'s smoke games check the invariants: a check without its final
/// `true` fails at once, with the record of the game written under
/// `--failures`.
#[test]
fn check_runs_the_invariants_in_its_smoke_games() {
    let (o, dir) = check_with_failures_in("tests/fuzz-variants/no-final-true", "check-invariants");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("invariant 'forgot_true' does not hold after 0 decision(s)"),
        "{err}"
    );
    assert!(err.contains("the check returned (), not true or a message"), "{err}");
    assert!(dir.join("check-failure-no-final-true-0.record").exists(), "{err}");
}

/// `rulesmith check VARIANT --failures DIR`, DIR a fresh folder
/// `target/cli-tests/NAME` (returned).
fn check_with_failures_in(variant: &str, name: &str) -> (Output, std::path::PathBuf) {
    let dir = root().join("target").join("cli-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let o = rulesmith(&["check", variant, "--failures", &dir.display().to_string()]);
    (o, dir)
}

/// `check` commits every secret decision of its smoke games in several
/// ways: a secret bid that shows in the other seat's summary before the
/// reveal fails, naming the step, the seats and two bids told apart; the
/// secret rounds that keep their bids hidden pass.
#[test]
fn check_finds_a_secret_bid_that_shows_before_the_reveal() {
    let (o, _) = check_with_failures_in("tests/fuzz-variants/leaky-bid", "check-secret-leak");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("step 'bid' is secret, but P2's summary shows what P1 decided in it before it is revealed"),
        "{err}"
    );
    assert!(err.contains("'bid 1' and 'bid 2' look different to P2"), "{err}");
    for v in [
        "tests/openspiel/oshi-zumo",
        "tests/bots/high-bid",
        "variants/battlefield-space",
        "variants/battleship-galaxies",
    ] {
        let o = rulesmith(&["check", v]);
        assert!(o.status.success(), "{v}: {}", stderr(&o));
    }
}

/// A field assigned under a misspelt name (`this.cuont = ...`) is a
/// warning of `check`, at the line that writes it, naming the field meant.
#[test]
fn check_warns_of_a_field_written_that_no_script_reads() {
    let o = rulesmith(&["check", "tests/warnings/misspelt-field"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("rules.rhai:14:") && err.contains("this.cuont is assigned but no script reads it"),
        "{err}"
    );
    assert!(err.contains("did you mean this.count?"), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    for v in ["sirius-basic", "sirius-custom-cards", "battlefield-space"] {
        let o = rulesmith(&["check", &format!("variants/{v}")]);
        assert!(!stderr(&o).contains("warning:"), "{v}: {}", stderr(&o));
    }
}

/// A record's bad `# set:` line is reported at its file and line; a
/// record saved with a byte-order mark replays like one without.
#[test]
fn a_records_bad_set_line_is_reported_at_its_line_and_a_bom_is_ignored() {
    let dir = root().join("target").join("cli-tests").join("record-headers");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad-set.record");
    std::fs::write(&bad, "# a record\n# players: 2\n# set: max_power=banana\n").unwrap();
    let o = rulesmith(&["replay", "variants/sirius-basic", &bad.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bad-set.record:3: '# set: max_power=banana'"), "{err}");
    let bom = dir.join("bom.record");
    let example = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    std::fs::write(&bom, format!("\u{feff}{example}")).unwrap();
    let o = rulesmith(&["replay", "variants/sirius-basic", &bom.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // And a variant whose files start with one.
    let variant = dir.join("bom-variant");
    std::fs::create_dir_all(&variant).unwrap();
    for f in ["variant.toml", "rules.rhai"] {
        let text = std::fs::read_to_string(root().join("tests/warnings/misspelt-field").join(f)).unwrap();
        std::fs::write(variant.join(f), format!("\u{feff}{text}")).unwrap();
    }
    let o = rulesmith(&["check", &variant.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
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

/// A file under the system's temporary folder, unique to this test.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rulesmith-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_bad_players_header_is_the_records_fault_at_its_line() {
    let record = temp_file("players.record", "# a game\n# players: 9\nchance emerald\n");
    let o = rulesmith(&["replay", "variants/sirius-basic", record.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("players.record:2: '# players: 9'"), "{e}");
    assert!(!e.contains("--players"), "{e}");
}

#[test]
fn parameter_file_errors_name_file_line_and_column() {
    let params = temp_file("bad.params.toml", "# tuning\nstart_power = 99\n");
    let o = rulesmith(&["check", "variants/sirius-basic", "--params", params.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.params.toml:2:15: parameter 'start_power'"), "{e}");
    assert!(e.contains("2 | start_power = 99"), "{e}");
    let params = temp_file("typo.params.toml", "start_power = 4\nno_such = 1\n");
    let o = rulesmith(&["check", "variants/sirius-basic", "--params", params.to_str().unwrap()]);
    assert!(
        stderr(&o).contains("typo.params.toml:2:11: unknown parameter 'no_such'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_huge_record_line_is_not_echoed_whole() {
    let record = temp_file("huge.record", &format!("P1 {}\n", "x".repeat(10_000_000)));
    let o = rulesmith(&["replay", "variants/sirius-basic", record.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.len() < 2_000, "{} bytes of error", e.len());
    assert!(e.contains("xxx…"), "{e}");
}

/// `rulesmith play ARGS` with `input` piped to it: (exit ok, stdout).
fn play(args: &[&str], input: &str) -> (bool, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rulesmith"))
        .arg("play")
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    (o.status.success(), stdout(&o))
}

#[test]
fn play_explains_the_board_with_the_variant_legend_at_start_and_on_help() {
    let (ok, text) = play(&["variants/sirius-basic", "--seed", "3"], "help\nquit\n");
    assert!(ok, "{text}");
    assert_eq!(text.matches("b:6 = bow 6").count(), 2, "{text}");
    assert!(text.contains("* for the player whose turn it is"), "{text}");
}

#[test]
fn play_groups_many_actions_by_kind_so_board_and_choices_fit_24_lines() {
    // 95 legal maneuvers: kinds with counts, then a kind's actions, then a
    // unique prefix of an action's text.
    let (ok, text) = play(&["variants/sirius-basic", "--seed", "3"], "2\nback\nsta\nquit\n");
    assert!(ok, "{text}");
    assert!(
        text.contains("1) stay  2) rotate (3)  3) position (7)  4) rotate position (84)"),
        "{text}"
    );
    assert!(
        text.contains("1) rotate cw\n  2) rotate 180\n  3) rotate ccw"),
        "{text}"
    );
    let screen: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("Turn 1")).collect();
    let prompt = screen.iter().position(|l| l.starts_with("P1>")).unwrap();
    assert!(prompt < 24, "the first decision takes {prompt} lines:\n{text}");
    assert!(text.contains("Game record:") && text.contains("\nP1 stay\n"), "{text}");
}

#[test]
fn play_labels_the_slots_on_the_board_and_takes_a_letter_as_the_move() {
    let (ok, text) = play(&["variants/sirius-basic", "--seed", "3"], "g\nb\n1\nquit\n");
    assert!(ok, "{text}");
    assert!(
        text.contains("(a)") && text.contains("(g)") && !text.contains("(h)"),
        "{text}"
    );
    // A slot that a move with or without a turn reaches: play asks which.
    assert!(text.contains("13 ways to reach g (position 2,2)"), "{text}");
    assert!(text.contains("\nP1 position 0,2\n"), "{text}");
    // Outside play (no one watches) the board has no labels.
    let o = rulesmith(&["replay", "variants/sirius-basic", EXAMPLE]);
    assert!(!stdout(&o).contains("(a)"));
}

#[test]
fn play_narrates_dice_and_keeps_the_narration_as_comments_that_replay_skips() {
    let out = root().join("target/cli-play-narrated.record");
    let _ = std::fs::remove_file(&out);
    let (ok, text) = play(
        &[
            "variants/sirius-basic",
            "--seed",
            "3",
            "--record",
            &out.to_string_lossy(),
        ],
        "stay\n1\ndone\nfire 1 2\nquit\n",
    );
    assert!(ok, "{text}");
    let told = "P1 rolled 6 and 5 against P2.stern shield 6: one hit, stern 6 -> 5";
    assert!(text.contains(&format!("  {told}")), "{text}");
    assert!(
        text.contains("priority: P1 rolled 6+1, P2 rolled 3+3: P1 goes first"),
        "{text}"
    );
    assert!(
        !text.contains("chance: 6"),
        "narrated dice are not also shown bare:\n{text}"
    );
    let record = std::fs::read_to_string(&out).unwrap();
    assert!(record.contains(&format!("# {told}\n")), "{record}");
    let r = rulesmith(&["replay", "variants/sirius-basic", &out.to_string_lossy()]);
    assert!(r.status.success(), "{}\n{record}", stderr(&r));
}

#[test]
fn play_redraws_the_board_when_another_seat_placed_a_piece_and_says_which_is_next() {
    // Space War's setup: the seats place their pieces one by one, on one
    // step, so only the other seat's placement changes the board.
    // 'c' is a letter the board puts on the third free cell of row B.
    let (ok, text) = play(&["variants/space-war", "--seed", "1"], "c\nquit\n");
    assert!(ok, "{text}");
    assert!(text.contains("Setup: blue (P1) places its station"), "{text}");
    assert!(text.contains("(c)"), "{text}");
    assert!(text.contains("\nP1 place 2,1\n"), "{text}");
    assert_eq!(text.matches("Setup - P1 to deploy").count(), 2, "{text}");
    assert!(
        text.contains("Setup: blue (P1) places fighter 1 of 8, on its row A"),
        "{text}"
    );
}

#[test]
fn play_answers_a_refused_action_with_the_nearest_legal_ones() {
    // The fighter on 2,0 moves up to 4 squares: 2,6 is too far.
    let (ok, text) = play(
        &["variants/space-war", "--set", "standard_deploy=true", "--seed", "1"],
        "move 2,0 to 2,6\nfire 2,0 at 2,6\nquit\n",
    );
    assert!(ok, "{text}");
    assert!(text.contains("'move 2,0 to 2,6' is not legal now"), "{text}");
    assert!(text.contains("legal now instead: move 2,0 to "), "{text}");
    assert!(text.contains("move 2,0 to 2,4"), "{text}");
    assert!(text.contains("(no 'fire' action is legal now)"), "{text}");
}

#[test]
fn hotseat_play_clears_the_screen_between_seats_and_waits_for_the_next_player() {
    // Both seats commit their hands in secret: P1's hand must be off the
    // screen before P2 sits down.
    let (ok, text) = play(
        &["variants/battlefield-space", "--hotseat", "--seed", "2"],
        "1\n\nquit\n",
    );
    assert!(ok, "{text}");
    let clear = text
        .find("\x1b[2J")
        .unwrap_or_else(|| panic!("the screen is never cleared:\n{text}"));
    let (before, after) = text.split_at(clear);
    let p1_hand = before
        .lines()
        .find(|l| l.starts_with("Your hand: "))
        .unwrap_or_else(|| panic!("P1 never saw its hand:\n{text}"));
    assert!(after.contains("pass the terminal to P2, then press Enter"), "{after}");
    assert!(after.contains("P2 to decide"), "{after}");
    assert!(!after.contains(p1_hand), "P1's hand is still shown to P2:\n{after}");
}

#[test]
fn play_names_the_setup_instead_of_turn_0_when_ships_are_placed() {
    let (ok, text) = play(
        &[
            "variants/sirius-multiplayer",
            "--players",
            "3",
            "--seed",
            "4",
            "--seat",
            "2",
        ],
        "b\nquit\n",
    );
    assert!(ok, "{text}");
    assert!(text.contains("Setup - P2 to place"), "{text}");
    assert!(!text.contains("Turn 0"), "{text}");
    assert!(text.contains("Type a letter to place your ship there"), "{text}");
    assert!(text.contains("\nP2 place 0,1\n"), "{text}");
}
