//! What several commands share: loading a variant with `--set` overrides,
//! choosing the number of players, naming seats.

use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::{Diagnostic, Game, Variant};
use std::path::{Path, PathBuf};

/// Options every command that runs games takes.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct VariantArgs {
    /// Override a variant parameter (or `deck.NAME=FILE`); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A TOML file of parameter overrides (NAME = VALUE lines); --set wins
    /// over it.
    #[arg(long = "params", value_name = "FILE")]
    pub params: Option<std::path::PathBuf>,
}

/// One line of a parameter file: `KEY=VALUE` text, and where it was written.
pub struct ParamLine {
    pub set: String,
    /// The value's place in the file, for diagnostics.
    offset: usize,
}

/// A parameter file, read: its lines in file order.
pub struct ParamsFile {
    pub path: std::path::PathBuf,
    pub text: String,
    pub lines: Vec<ParamLine>,
}

impl ParamsFile {
    /// A diagnostic at `offset` of the file: `FILE:LINE:COLUMN: message`
    /// with the line quoted, like a variant's.
    fn error(&self, offset: usize, message: String) -> Failure {
        Failure::input(format!(
            "error: {}",
            Diagnostic::new(&self.path, message).at_offset(&self.text, offset)
        ))
    }
}

/// Reads a parameter file (`NAME = VALUE` lines).
pub fn params_file(path: &Path) -> Result<ParamsFile, Failure> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let mut file = ParamsFile {
        path: path.to_path_buf(),
        text,
        lines: Vec::new(),
    };
    type Spanned<T> = toml::Spanned<T>;
    let table: std::collections::BTreeMap<Spanned<String>, Spanned<toml::Value>> = match toml::from_str(&file.text) {
        Ok(t) => t,
        Err(e) => {
            let offset = e.span().map_or(0, |s| s.start);
            let message = e
                .message()
                .trim()
                .replace("expected a map", "expected NAME = VALUE lines");
            return Err(file.error(offset, message));
        }
    };
    let mut entries: Vec<_> = table.into_iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (k, v) in entries {
        let value = match v.get_ref() {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::String(s) => s.clone(),
            other => {
                return Err(file.error(
                    v.span().start,
                    format!(
                        "parameter '{}' must be a whole number, true/false or a string, not {}",
                        k.get_ref(),
                        other.type_str()
                    ),
                ))
            }
        };
        file.lines.push(ParamLine {
            set: format!("{}={value}", k.get_ref()),
            offset: v.span().start,
        });
    }
    Ok(file)
}

/// Loads, overrides and compiles a variant.
/// Every override, as `KEY=VALUE`: the parameter file's first, then
/// `--set` (which wins). Record headers list these, so a record replays the
/// game that was played.
pub fn all_sets(args: &VariantArgs) -> Result<Vec<String>, Failure> {
    let mut sets = match &args.params {
        Some(p) => params_file(p)?.lines.into_iter().map(|l| l.set).collect(),
        None => Vec::new(),
    };
    sets.extend(args.set.iter().cloned());
    Ok(sets)
}

/// Loads a variant and makes its game on the engine the command runs
/// (see `engine.rs`: this may build compiled rules, or run them in this
/// process's place).
pub fn load_game(path: &Path, args: &VariantArgs) -> Result<Game, Failure> {
    let variant = load_variant(path, args)?;
    let engine = crate::engine::prepare(&[&variant])?;
    crate::engine::game(variant, engine).map_err(Failure::input)
}

/// The variant at `path` with the command line's parameter overrides.
pub fn load_variant(path: &Path, args: &VariantArgs) -> Result<Variant, Failure> {
    let mut variant = Variant::load(path).map_err(|e| Failure::input(e.to_string()))?;
    // The parameter file first, each error at its line; then `--set`.
    if let Some(p) = &args.params {
        let file = params_file(p)?;
        for line in &file.lines {
            let (k, v) = line.set.split_once('=').expect("written as KEY=VALUE");
            variant.set(k, v).map_err(|e| file.error(line.offset, e))?;
        }
    }
    for s in args.set.iter() {
        let Some((k, v)) = s.split_once('=') else {
            return Err(Failure::usage(format!(
                "--set {s}: expected KEY=VALUE, e.g. --set max_power=8"
            )));
        };
        variant
            .set(k.trim(), v.trim())
            .map_err(|e| Failure::input(format!("{s}: {e}")))?;
    }
    Ok(variant)
}

/// The number of players: the given one, or the variant's default.
pub fn players(game: &Game, given: Option<usize>) -> Result<usize, Failure> {
    let p = game.variant().players;
    let n = given.unwrap_or(p.default);
    if n < p.min || n > p.max {
        return Err(Failure::usage(format!(
            "--players {n}: variant '{}' takes {} to {} players",
            game.variant().name,
            p.min,
            p.max
        )));
    }
    Ok(n)
}

/// Parses a seat written `P3` or `3` into a 0-based index.
pub fn parse_seat(text: &str, players: usize) -> Result<usize, Failure> {
    let digits = text.strip_prefix('P').unwrap_or(text);
    match digits.parse::<usize>() {
        Ok(k) if (1..=players).contains(&k) => Ok(k - 1),
        _ => Err(Failure::usage(format!(
            "'{text}' is not a seat of this game (P1..P{players})"
        ))),
    }
}

/// The overrides a record was played with: its `# set:` headers (a deck
/// file relative to the record), then the command line's, which win.
pub fn record_overrides(text: &str, record: &Path, args: &VariantArgs) -> VariantArgs {
    let base = record.parent().unwrap_or(Path::new(""));
    let mut common = args.clone();
    common.set = rulesmith_core::record::header_values(text, "set")
        .into_iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if k.trim().starts_with("deck.") => format!("{}={}", k.trim(), base.join(v.trim()).display()),
            _ => s.to_string(),
        })
        .chain(args.set.iter().cloned())
        .collect();
    common
}

/// A game record read for replaying, and the game it belongs to.
pub struct RecordGame {
    /// The record's text.
    pub text: String,
    pub game: Game,
    pub players: usize,
    /// Every override in force, as `KEY=VALUE`: the parameter file's, the
    /// record's `# set:` headers, then `--set`.
    pub sets: Vec<String>,
}

/// Reads a record (`-` is standard input) and loads the game it was played
/// in: its `# set:` headers first (a deck relative to the record), then the
/// command line's overrides, which win; its `# players:` header unless
/// `players` is given. The same rules as `rulesmith replay`.
pub fn record_game(
    variant: &Path,
    record: &Path,
    players_given: Option<usize>,
    args: &VariantArgs,
) -> Result<RecordGame, Failure> {
    use rulesmith_core::record;
    let text = if record.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Failure::input(format!("cannot read standard input: {e}")))?
    } else {
        std::fs::read_to_string(record)
            .map_err(|e| Failure::input(format!("{}: cannot read record: {e}", record.display())))?
    };
    let common = record_overrides(&text, record, args);
    let game = load_game(variant, &common)?;
    let from_header = match record::header_values(&text, "players").first() {
        Some(p) => Some(
            p.parse::<usize>()
                .map_err(|_| Failure::input(format!("{}: '# players: {p}' is not a number", record.display())))?,
        ),
        None => None,
    };
    let players = players(&game, players_given.or(from_header))?;
    let sets = all_sets(&common)?;
    Ok(RecordGame {
        text,
        game,
        players,
        sets,
    })
}

/// How long a game may run, and where the record of a failing game goes:
/// the options of every command that plays games by itself.
#[derive(clap::Args, Clone, Debug)]
pub struct BoundArgs {
    /// A game still running after this many decisions is a problem (a rule
    /// set that never ends its games): reported, with its record written.
    #[arg(long, default_value_t = rulesmith_lab::sim::MAX_DECISIONS, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decisions: u64,
    /// Folder for the record of a failing game (default: the current one).
    #[arg(long = "failures", value_name = "DIR")]
    pub failures: Option<PathBuf>,
}

/// What went wrong in one game, for [`report_failure`].
pub struct FailedGame<'a> {
    /// The command, for the file name (`check`, `simulate`, ...).
    pub command: &'a str,
    pub variant_path: &'a Path,
    pub variant_name: &'a str,
    pub players: usize,
    pub seed: u64,
    /// The `--set` overrides in force, written into the record's header.
    pub sets: &'a [String],
    /// First header lines (what played the game).
    pub about: Vec<String>,
    pub record: &'a Record,
}

/// Writes the whole record of a failing game to
/// `DIR/<command>-failure-<variant>-<seed>.record` (DIR: `--failures`, or
/// the current folder), with the header `rulesmith replay` reads, and
/// returns the lines that say where it is and how to replay it. When the
/// file cannot be written the record is printed to standard output
/// instead, so that it is never lost, and the lines say why.
pub fn report_failure(dir: Option<&Path>, f: &FailedGame) -> String {
    let mut header = f.about.clone();
    header.push(format!("players: {}", f.players));
    header.extend(f.sets.iter().map(|s| format!("set: {s}")));
    let text = f.record.to_text(&header);
    let name = format!("{}-failure-{}-{}.record", f.command, f.variant_name, f.seed);
    let path = dir.map_or_else(|| PathBuf::from(&name), |d| d.join(&name));
    let written = dir
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, &text));
    match written {
        Ok(()) => format!(
            "the game's record ({} lines) is in {}\nreplay it: rulesmith replay {} {}",
            f.record.len(),
            path.display(),
            f.variant_path.display(),
            path.display()
        ),
        Err(e) => {
            crate::outln!("{text}");
            format!(
                "{}: cannot write the game's record ({e}); it is printed on standard output above",
                path.display()
            )
        }
    }
}
