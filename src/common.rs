//! What several commands share: loading a variant with `--set` overrides,
//! choosing the number of players, naming seats.

use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::{Game, Variant};
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

/// The overrides of a parameter file, as `KEY=VALUE` texts.
pub fn params_file(path: &Path) -> Result<Vec<String>, Failure> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let line = e.span().map_or(0, |s| text[..s.start].matches('\n').count() + 1);
        Failure::input(format!("{}:{line}: {}", path.display(), e.message().trim()))
    })?;
    let mut out = Vec::new();
    for (k, v) in table {
        let value = match v {
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::String(s) => s,
            other => {
                let line = text
                    .lines()
                    .position(|l| l.trim_start().starts_with(&k))
                    .map_or(0, |i| i + 1);
                return Err(Failure::input(format!(
                    "{}:{line}: parameter '{k}' must be a whole number, true/false or a string, not {}",
                    path.display(),
                    other.type_str()
                )));
            }
        };
        out.push(format!("{k}={value}"));
    }
    Ok(out)
}

/// Loads, overrides and compiles a variant.
/// Every override, as `KEY=VALUE`: the parameter file's first, then
/// `--set` (which wins). Record headers list these, so a record replays the
/// game that was played.
pub fn all_sets(args: &VariantArgs) -> Result<Vec<String>, Failure> {
    let mut sets = match &args.params {
        Some(p) => params_file(p)?,
        None => Vec::new(),
    };
    sets.extend(args.set.iter().cloned());
    Ok(sets)
}

pub fn load_game(path: &Path, args: &VariantArgs) -> Result<Game, Failure> {
    rulesmith_rhai::interpreted(load_variant(path, args)?).map_err(|e| Failure::input(e.to_string()))
}

/// The variant at `path` with the command line's parameter overrides.
pub fn load_variant(path: &Path, args: &VariantArgs) -> Result<Variant, Failure> {
    let mut variant = Variant::load(path).map_err(|e| Failure::input(e.to_string()))?;
    for s in all_sets(args)?.iter() {
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
