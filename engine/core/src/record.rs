//! Game records: the text form of a game, one entry per line.
//!
//! `Pk ACTION` is a decision of seat k (1-based) in the variant's notation;
//! `chance X` is a chance outcome (a die face, a card id). `#` starts a
//! comment; blank lines are ignored. Replaying a record drives a [`Game`]
//! through exactly those entries and stops at the first line that does not
//! fit, naming it.

use crate::error::{clip, GameError, RecordError};
use crate::game::Game;
use crate::state::{Outcome, Seat, State, ToMove};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One entry of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Decision { seat: Seat, action: String },
    Chance(String),
}

/// An entry with the record line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the record text.
    pub number: usize,
    /// The line as written, comment removed and trimmed.
    pub text: String,
    pub entry: Entry,
}

/// A record being written or read: entries in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub entries: Vec<Entry>,
    /// Comment lines to write, each after the first `n` entries: what
    /// `rulesmith play` narrated. Replay ignores them.
    pub notes: Vec<(usize, String)>,
}

impl Record {
    pub fn decision(&mut self, seat: Seat, action: impl Into<String>) {
        self.entries.push(Entry::Decision {
            seat,
            action: action.into(),
        });
    }

    pub fn chance(&mut self, outcome: impl Into<String>) {
        self.entries.push(Entry::Chance(outcome.into()));
    }

    /// A comment line after the entries so far (written `# text`).
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push((self.entries.len(), text.into()));
    }

    /// The record as text, optionally headed by comment lines.
    pub fn to_text(&self, header: &[String]) -> String {
        let mut s = String::new();
        for h in header {
            let _ = writeln!(s, "# {h}");
        }
        let mut notes = self.notes.iter().peekable();
        for (i, e) in self.entries.iter().enumerate() {
            while let Some((_, n)) = notes.next_if(|(at, _)| *at <= i) {
                comment(&mut s, n);
            }
            let _ = match e {
                Entry::Decision { seat, action } => writeln!(s, "P{} {action}", seat + 1),
                Entry::Chance(x) => writeln!(s, "chance {x}"),
            };
        }
        for (_, n) in notes {
            comment(&mut s, n);
        }
        s
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Writes `text` as comment lines, one `# ` per line of it.
fn comment(s: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(s, "# {line}");
    }
}

/// The values of `# KEY: VALUE` comment lines, in order: how a record
/// remembers the game it belongs to (`# players: 3`, `# set: max_power=8`).
pub fn header_values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix('#'))
        .filter_map(|l| l.trim_start().strip_prefix(key))
        .filter_map(|l| l.strip_prefix(':'))
        .map(str::trim)
        .collect()
}

/// Splits record text into entries; syntax only, no rules.
pub fn parse(text: &str, file: &Path) -> Result<Vec<Line>, RecordError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if let Some(line) = parse_line(i + 1, raw, file)? {
            out.push(line);
        }
    }
    Ok(out)
}

/// Reads one record line (`number` is 1-based); `None` for a blank or
/// comment-only line.
pub fn parse_line(number: usize, raw: &str, file: &Path) -> Result<Option<Line>, RecordError> {
    let content = raw.split('#').next().unwrap_or("").trim();
    if content.is_empty() {
        return Ok(None);
    }
    let err = |message: String| RecordError {
        file: file.to_path_buf(),
        line: number,
        text: content.to_string(),
        message,
        cause: None,
    };
    let mut tokens = content.split_whitespace();
    let first = tokens.next().unwrap_or("");
    let entry = if first == "chance" {
        let rest: Vec<&str> = tokens.collect();
        match rest.as_slice() {
            [x] => Entry::Chance((*x).to_string()),
            [] => {
                return Err(err(format!(
                    "'{}': a chance line needs an outcome, e.g. 'chance 4'",
                    clip(content)
                )))
            }
            _ => {
                return Err(err(format!(
                    "'{}': a chance line holds exactly one outcome",
                    clip(content)
                )))
            }
        }
    } else if let Some(seat) = parse_seat(first) {
        let action = tokens.collect::<Vec<_>>().join(" ");
        if action.is_empty() {
            return Err(err(format!(
                "'{}': a decision line needs an action after the seat",
                clip(content)
            )));
        }
        Entry::Decision { seat, action }
    } else {
        return Err(err(format!(
            "'{}': expected 'Pk ACTION' (a seat such as P1, then an action) or 'chance OUTCOME'",
            clip(content)
        )));
    };
    Ok(Some(Line {
        number,
        text: content.to_string(),
        entry,
    }))
}

fn parse_seat(token: &str) -> Option<Seat> {
    let digits = token.strip_prefix('P')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok().filter(|&k| k >= 1).map(|k| k - 1)
}

/// Replays record `text` (read from `file`) in a new game of `players`
/// seats; returns the state reached.
pub fn replay(game: &Game, players: usize, text: &str, file: &Path) -> Result<State, RecordError> {
    let mut state = game.new_game(players).map_err(|e| RecordError {
        file: file.to_path_buf(),
        line: 1,
        text: String::new(),
        message: format!("cannot start the game: {e}"),
        cause: Some(Box::new(e)),
    })?;
    // Line by line: the first line that does not fit is the one reported,
    // whether its fault is syntax or rules.
    let mut last: Option<Line> = None;
    for (i, raw) in text.lines().enumerate() {
        if let Some(line) = parse_line(i + 1, raw, file)? {
            apply_line(game, &mut state, &line, file)?;
            last = Some(line);
        }
    }
    if state.to_move() == ToMove::Chance {
        return Err(RecordError {
            file: file.to_path_buf(),
            line: last.as_ref().map_or(1, |l| l.number),
            text: last.map(|l| l.text).unwrap_or_default(),
            message: format!(
                "the record ends while chance outcomes are still needed: {}",
                game.chance_expectation(&state)
            ),
            cause: None,
        });
    }
    Ok(state)
}

/// Applies one record line, or says why it does not fit.
pub fn apply_line(game: &Game, state: &mut State, line: &Line, file: &Path) -> Result<(), RecordError> {
    let fail = |message: String, cause: Option<GameError>| RecordError {
        file: PathBuf::from(file),
        line: line.number,
        text: line.text.clone(),
        message: format!("'{}': {message}", clip(&line.text)),
        cause: cause.map(Box::new),
    };
    match (&line.entry, state.to_move()) {
        (_, ToMove::Terminal) => Err(fail(
            "the game is already over; nothing may follow".into(),
            Some(GameError::GameOver),
        )),
        (Entry::Chance(x), ToMove::Chance) => {
            let outcome: Outcome = game.parse_outcome(state, x).map_err(|e| fail(e.to_string(), Some(e)))?;
            game.apply_outcome(state, outcome)
                .map_err(|e| fail(e.to_string(), Some(e)))
        }
        (Entry::Chance(_), ToMove::Decision(_)) => Err(fail(
            format!("no chance outcome is due here: {}", game.decision_expectation(state)),
            None,
        )),
        (Entry::Decision { .. }, ToMove::Chance) => Err(fail(
            format!("a chance line is due here: {}", game.chance_expectation(state)),
            None,
        )),
        (Entry::Decision { seat, action }, ToMove::Decision(to_move)) => {
            if *seat >= state.core.seats {
                return Err(fail(
                    format!(
                        "there is no seat P{} in a game of {} players",
                        seat + 1,
                        state.core.seats
                    ),
                    None,
                ));
            }
            if *seat != to_move {
                return Err(fail(
                    format!(
                        "it is not P{}'s decision: {}",
                        seat + 1,
                        game.decision_expectation(state)
                    ),
                    None,
                ));
            }
            let legal = game.legal_actions(state).map_err(|e| fail(e.to_string(), Some(e)))?;
            let Some(a) = game.parse_action(action) else {
                let e = GameError::Unparsable {
                    text: action.clone(),
                    legal: game.texts(&legal),
                };
                return Err(fail(e.to_string(), Some(e)));
            };
            if !legal.contains(&a) {
                let e = GameError::Illegal {
                    text: game.action_text(&a),
                    legal: game.texts(&legal),
                };
                return Err(fail(e.to_string(), Some(e)));
            }
            game.apply_trusted(state, a).map_err(|e| fail(e.to_string(), Some(e)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_blank_lines_and_spacing() {
        let text = "# header\n\nchance 5 # a die\nP2   take  red P1.left\n";
        let lines = parse(text, Path::new("r")).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].number, 3);
        assert_eq!(lines[0].entry, Entry::Chance("5".into()));
        assert_eq!(
            lines[1].entry,
            Entry::Decision {
                seat: 1,
                action: "take red P1.left".into()
            }
        );
    }

    #[test]
    fn rejects_malformed_lines_with_their_number() {
        for (text, needle) in [
            ("chance\n", "needs an outcome"),
            ("chance 1 2\n", "exactly one outcome"),
            ("P0 stay\n", "expected 'Pk ACTION'"),
            ("\nP1\n", "needs an action"),
            ("hello\n", "expected 'Pk ACTION'"),
        ] {
            let e = parse(text, Path::new("r.txt")).unwrap_err();
            assert!(e.message.contains(needle), "{text:?}: {}", e.message);
            assert_eq!(e.line, text.lines().position(|l| !l.is_empty()).unwrap() + 1);
        }
    }

    #[test]
    fn writes_what_it_reads() {
        let mut r = Record::default();
        r.chance("3");
        r.decision(0, "stay");
        let text = r.to_text(&["seed 1".into()]);
        assert_eq!(text, "# seed 1\nchance 3\nP1 stay\n");
        let back: Vec<Entry> = parse(&text, Path::new("r"))
            .unwrap()
            .into_iter()
            .map(|l| l.entry)
            .collect();
        assert_eq!(back, r.entries);
    }

    #[test]
    fn notes_are_comments_that_replay_skips() {
        let mut r = Record::default();
        r.chance("3");
        r.note("rolled 3");
        r.decision(0, "stay");
        r.note("P1 stays");
        let text = r.to_text(&[]);
        assert_eq!(text, "chance 3\n# rolled 3\nP1 stay\n# P1 stays\n");
        let back: Vec<Entry> = parse(&text, Path::new("r"))
            .unwrap()
            .into_iter()
            .map(|l| l.entry)
            .collect();
        assert_eq!(back, r.entries);
    }
}
