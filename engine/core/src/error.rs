//! Errors, one type per layer, each carrying where the problem is.
//!
//! - [`LoadError`]: a variant, deck or script that cannot be loaded; a list of
//!   [`Diagnostic`]s so that a designer sees every problem at once.
//! - [`ScriptError`]: a script that failed while the game ran.
//! - [`GameError`]: a request the game cannot honour (an illegal action, a
//!   chance outcome where a decision is due, ...) or a rule-set failure.
//! - [`RecordError`]: a game record line that cannot be replayed.

use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// One problem at one place in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    /// 1-based; 0 when the problem concerns the file as a whole.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
    pub message: String,
    /// The offending source line, when known.
    pub source_line: Option<String>,
}

impl Diagnostic {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            line: 0,
            column: 0,
            message: message.into(),
            source_line: None,
        }
    }

    /// Places the diagnostic at a byte offset of `source`, quoting its line.
    pub fn at_offset(mut self, source: &str, offset: usize) -> Self {
        let offset = offset.min(source.len());
        let before = &source[..offset];
        self.line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        self.column = source[line_start..offset].chars().count() + 1;
        self.source_line = source[line_start..].lines().next().map(str::to_string);
        self
    }

    /// Places the diagnostic at a 1-based line and column of `source`.
    pub fn at_line(mut self, source: Option<&str>, line: usize, column: usize) -> Self {
        self.line = line;
        self.column = column;
        self.source_line = source
            .and_then(|s| s.lines().nth(line.saturating_sub(1)))
            .map(str::to_string);
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        write!(f, ": {}", self.message)?;
        if let Some(src) = &self.source_line {
            let gutter = self.line.to_string().len();
            write!(f, "\n{:gutter$} |\n{} | {}", "", self.line, clip(src))?;
            if self.column > 0 && self.column <= ECHO_LIMIT {
                let pad: String = src
                    .chars()
                    .take(self.column - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n{:gutter$} | {pad}^", "")?;
            }
        }
        Ok(())
    }
}

/// A variant that could not be loaded, with every problem found.
#[derive(Clone, Debug, Error)]
pub struct LoadError {
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadError {
    pub fn one(d: Diagnostic) -> Self {
        LoadError { diagnostics: vec![d] }
    }

    /// Every problem, in file order then line order, as a reader expects.
    pub fn new(mut diagnostics: Vec<Diagnostic>) -> Self {
        diagnostics.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        diagnostics.dedup();
        LoadError { diagnostics }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

/// A script that failed at run time: where (the innermost script function
/// that was running, its file, line and column), what, and the calls that
/// led there.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct ScriptError {
    pub file: PathBuf,
    /// The innermost script function that was running.
    pub function: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The script calls that led to `function`, innermost first: each is a
    /// calling function and the place in it of the call (a card hook's
    /// caller is the rule function that ran the hook). A boxed slice keeps
    /// `GameError`, returned on every path, small.
    pub calls: Box<[Frame]>,
    /// True when the rules stopped the script at a sandbox limit without
    /// keeping its calls: the place is then the entry function's. The
    /// interpreter's fast path keeps none for those limits; [`crate::Game`]
    /// runs the failing step once more with [`crate::Rules::diagnose`] on
    /// to recover them.
    pub calls_lost: bool,
}

/// One script function on the way to a failure, and where in it the
/// failure or the call that led to it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub function: String,
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}:{}:{})",
            self.function,
            self.file.display(),
            self.line,
            self.column
        )
    }
}

/// Frames of a runaway recursion beyond which a backtrace says how many
/// more there were instead of listing them.
const SAME_FRAMES_SHOWN: usize = 2;

impl ScriptError {
    /// A failure at one place, with no calls recorded before it.
    pub fn at(
        file: impl Into<PathBuf>,
        function: impl Into<String>,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> ScriptError {
        ScriptError {
            file: file.into(),
            function: function.into(),
            line,
            column,
            message: message.into(),
            calls: Box::default(),
            calls_lost: false,
        }
    }

    /// The whole chain, innermost first: the failing function, then its
    /// callers.
    pub fn frames(&self) -> impl Iterator<Item = Frame> + '_ {
        let here = Frame {
            function: self.function.clone(),
            file: self.file.clone(),
            line: self.line,
            column: self.column,
        };
        std::iter::once(here).chain(self.calls.iter().cloned())
    }
}

impl fmt::Display for ScriptError {
    /// The failure, then, when calls led there, a backtrace (innermost
    /// first, one `function (file:line:column)` a line; a recursion's
    /// repeated frames are counted, not listed).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "script error in {}() at {}:{}:{}: {}",
            self.function,
            self.file.display(),
            self.line,
            self.column,
            self.message
        )?;
        if self.calls_lost {
            write!(
                f,
                "\n  (somewhere in {}() or the functions it called: the calls were not recorded)",
                self.function
            )?;
        }
        if self.calls.is_empty() {
            return Ok(());
        }
        let frames: Vec<Frame> = self.frames().collect();
        let mut i = 0;
        while i < frames.len() {
            let same = frames[i..].iter().take_while(|g| **g == frames[i]).count();
            for _ in 0..same.min(SAME_FRAMES_SHOWN) {
                write!(f, "\n  at {}", frames[i])?;
            }
            if same > SAME_FRAMES_SHOWN {
                write!(f, "\n  ... the same call {} more times", same - SAME_FRAMES_SHOWN)?;
            }
            i += same;
        }
        Ok(())
    }
}

/// A request the game could not honour. The state is left as it was.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GameError {
    /// Boxed: every step returns a `Result<(), GameError>` through several
    /// layers, and an unboxed script error made it 120 bytes.
    #[error(transparent)]
    Script(Box<ScriptError>),
    #[error("'{}' is not legal now; legal: {}", clip(.text), list(.legal))]
    Illegal { text: String, legal: Vec<String> },
    #[error("'{}' is not an action of this game; expected one of: {}", clip(.text), list(.legal))]
    Unparsable { text: String, legal: Vec<String> },
    #[error("{seat} cannot act now: {expected}")]
    WrongSeat { seat: String, expected: String },
    #[error("a chance outcome is due ({expected}), not a decision")]
    ChanceDue { expected: String },
    #[error("no chance outcome is due now: {expected}")]
    NoChanceDue { expected: String },
    #[error("'{}' is not a possible outcome; expected {expected}", clip(.text))]
    BadOutcome { text: String, expected: String },
    #[error("the game is over")]
    GameOver,
    #[error("{seats} players cannot play this variant (it takes {min} to {max})")]
    Players { seats: usize, min: usize, max: usize },
    /// The rule set broke one of the engine's contracts (e.g. a step with no
    /// legal action). This is a bug in the variant, not in the input.
    #[error("rule set error: {0}")]
    Rules(String),
}

impl From<ScriptError> for GameError {
    // Out of line: the hot paths that convert (every rule call) only pass
    // the success through.
    #[cold]
    #[inline(never)]
    fn from(e: ScriptError) -> GameError {
        GameError::Script(Box::new(e))
    }
}

/// The boxed errors of the `_scratch` steps (`Game::apply_scratch`),
/// unboxed by `?`.
impl From<Box<GameError>> for GameError {
    #[cold]
    #[inline(never)]
    fn from(e: Box<GameError>) -> GameError {
        *e
    }
}

impl From<Box<ScriptError>> for GameError {
    #[cold]
    #[inline(never)]
    fn from(e: Box<ScriptError>) -> GameError {
        GameError::Script(e)
    }
}

/// How many characters of a designer's or player's text a message echoes.
pub const ECHO_LIMIT: usize = 200;

/// `text` as an error message echoes it: whole up to [`ECHO_LIMIT`]
/// characters, else cut there with an ellipsis (a 10 MB record line is not
/// printed back).
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(ECHO_LIMIT) {
        None => text.into(),
        Some((end, _)) => format!("{}…", &text[..end]).into(),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".into()
    } else {
        items.join(", ")
    }
}

/// A record line that could not be replayed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct RecordError {
    pub file: PathBuf,
    /// 1-based line of the record.
    pub line: usize,
    /// What the line said, as read.
    pub text: String,
    pub message: String,
    /// The underlying game error, when there is one.
    pub cause: Option<Box<GameError>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, line: usize) -> Frame {
        Frame {
            function: function.into(),
            file: "a.rhai".into(),
            line,
            column: 5,
        }
    }

    #[test]
    fn a_script_error_shows_its_calls_innermost_first_counting_repeats() {
        let mut e = ScriptError::at("a.rhai", "deeper", 7, 12, "too many nested calls");
        assert_eq!(
            e.to_string(),
            "script error in deeper() at a.rhai:7:12: too many nested calls"
        );
        let mut calls = vec![frame("deeper", 7); 5];
        calls.push(frame("start", 2));
        e.calls = calls.into();
        let shown = e.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "  at deeper (a.rhai:7:12)",
                "  at deeper (a.rhai:7:5)",
                "  at deeper (a.rhai:7:5)",
                "  ... the same call 3 more times",
                "  at start (a.rhai:2:5)",
            ]
        );
        e.calls_lost = true;
        e.calls = Box::default();
        assert!(e
            .to_string()
            .ends_with("\n  (somewhere in deeper() or the functions it called: the calls were not recorded)"));
    }

    #[test]
    fn long_texts_are_cut_with_an_ellipsis() {
        assert_eq!(clip("P1 pass"), "P1 pass");
        let long = "x".repeat(10_000_000);
        let cut = clip(&long);
        assert_eq!(cut.chars().count(), ECHO_LIMIT + 1);
        assert!(cut.ends_with('…'));
        let e = GameError::Unparsable {
            text: long,
            legal: vec!["pass".into()],
        };
        assert!(e.to_string().len() < 400);
    }
}
