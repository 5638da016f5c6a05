//! What several commands share: loading a variant with `--set` overrides,
//! choosing the number of players, naming seats.

use crate::Failure;
use rulesmith_core::{Game, Variant};
use std::path::Path;

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
    let base = record.parent().unwrap_or(Path::new(""));
    let mut common = args.clone();
    common.set = record::header_values(&text, "set")
        .into_iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if k.trim().starts_with("deck.") => format!("{}={}", k.trim(), base.join(v.trim()).display()),
            _ => s.to_string(),
        })
        .chain(args.set.iter().cloned())
        .collect();
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
