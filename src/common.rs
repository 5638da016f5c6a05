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
    /// Where each override that came from a record's `# set:` line was
    /// written (the override's text, the record, its line), so that a bad
    /// one is reported there.
    #[arg(skip)]
    pub set_lines: Vec<(String, PathBuf, usize)>,
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
    let text = without_bom(text);
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
        let from_record = args.set_lines.iter().find(|(text, ..)| text == s);
        let Some((k, v)) = s.split_once('=') else {
            return Err(match from_record {
                Some((_, file, line)) => Failure::input(format!(
                    "{}:{line}: '# set: {s}': expected KEY=VALUE, e.g. # set: max_power=8",
                    file.display()
                )),
                None => Failure::usage(format!("--set {s}: expected KEY=VALUE, e.g. --set max_power=8")),
            });
        };
        variant.set(k.trim(), v.trim()).map_err(|e| match from_record {
            Some((_, file, line)) => Failure::input(format!("{}:{line}: '# set: {s}': {e}", file.display())),
            None => Failure::input(format!("{s}: {e}")),
        })?;
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
    let from_record: Vec<(String, usize)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let v = rulesmith_core::record::header_values(l, "set");
            v.first().map(|s| {
                let set = match s.split_once('=') {
                    Some((k, v)) if k.trim().starts_with("deck.") => {
                        format!("{}={}", k.trim(), base.join(v.trim()).display())
                    }
                    _ => s.to_string(),
                };
                (set, i + 1)
            })
        })
        .collect();
    common.set_lines = from_record
        .iter()
        .map(|(s, line)| (s.clone(), record.to_path_buf(), *line))
        .collect();
    common.set = from_record
        .into_iter()
        .map(|(s, _)| s)
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
    let text = crate::common::without_bom(text);
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
    /// Default: the variant's `[end] max_decisions` when it declares one,
    /// else 20000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decisions: Option<u64>,
    /// Folder for the record of a failing game (default: the current one).
    #[arg(long = "failures", value_name = "DIR")]
    pub failures: Option<PathBuf>,
}

impl BoundArgs {
    /// The decision cap for games of `variant`: `--max-decisions`, else
    /// what the variant declares as its longest game, else the default.
    pub fn max_decisions_for(&self, variant: &Variant) -> u64 {
        self.max_decisions
            .or(variant.max_decisions)
            .unwrap_or(rulesmith_lab::sim::MAX_DECISIONS)
    }
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

/// Checks, before any work starts, that the file `path` given to `flag`
/// can be written: its folder exists and the file can be created or
/// replaced. A game, a run or a report must not be lost at the end for a
/// mistyped path. A file created by the check is removed again.
pub fn writable_file(flag: &str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {shown}: the folder {} does not exist (create it first)",
            folder.display()
        )));
    }
    if path.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {shown}: is a folder, expected a file name"
        )));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| Failure::usage(format!("{flag} {shown}: cannot write there ({e})")))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Checks, before any work starts, that the folder `path` given to `flag`
/// is a folder or can be made one, and makes it.
pub fn writable_folder(flag: &str, path: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(path).map_err(|e| {
        let why = if path.exists() && !path.is_dir() {
            "is a file, expected a folder".to_string()
        } else {
            format!("cannot make this folder ({e})")
        };
        Failure::usage(format!("{flag} {}: {why}", path.display()))
    })
}

/// Worker threads for `work` independent pieces: `--jobs` (default: every
/// core), but never more than there are pieces.
pub fn threads(jobs: Option<u32>, work: u64) -> usize {
    let wanted = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |j| j as usize,
    );
    wanted.min(work.max(1).min(usize::MAX as u64) as usize).max(1)
}

/// The thread pool of `--jobs` for `games` games: never more threads than
/// games (`--jobs 100000` for 5 games starts 5).
pub fn pool(jobs: Option<u32>, games: u64) -> Result<rayon::ThreadPool, Failure> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads(jobs, games))
        .build()
        .map_err(|e| Failure::usage(format!("--jobs: {e}")))
}

/// A duration for people: "40s", "12 min", "3.5 h", "2.1 days".
pub fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() {
        "an unknown time".into()
    } else if seconds < 90.0 {
        format!("{seconds:.0}s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86_400.0)
    }
}

/// `text` without a leading UTF-8 byte-order mark (which some editors
/// write): no part of a record or a parameter file.
pub fn without_bom(mut text: String) -> String {
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_never_outnumber_the_work() {
        assert_eq!(threads(Some(100_000), 5), 5);
        assert_eq!(threads(Some(2), 5), 2);
        assert_eq!(threads(Some(3), 0), 1);
        assert!(threads(None, 1_000_000) >= 1);
        assert_eq!(threads(None, 1), 1);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_text(40.0), "40s");
        assert_eq!(duration_text(720.0), "12 min");
        assert_eq!(duration_text(3.5 * 3600.0), "3.5 h");
        assert_eq!(duration_text(3.0 * 86_400.0), "3.0 days");
    }
}
