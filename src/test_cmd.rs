//! `rulesmith test VARIANT`: replays the variant's scenario records (its
//! regression cases) and checks each against what it expects. A designer's
//! own scenario tests, runnable without Rust.
//!
//! Layout (docs/fuzzing.md, "Regression cases"): `VARIANT/tests/NAME.record`
//! with, beside it, one or more of
//! - `NAME.json`: the summary expected at the end (JSON values compared);
//! - `NAME.legal`: the legal actions expected next, one per line, in order;
//! - `NAME.error`: the replay must fail; line 1 is the record line number,
//!   every further line a text the message must contain;
//! - `NAME.holds`: invariants that must hold after every line of the
//!   record, one name per line (`*`: every invariant). `rulesmith fuzz
//!   --save-case` writes these.
//!
//! A file `VARIANT/tests/include` lists more folders of records (one path a
//! line, relative to it), so that a variant can use records kept elsewhere.
//! A record's `# players:` and `# set:` headers say how its game is set up.

use crate::common::{record_game, VariantArgs};
use crate::Failure;
use rulesmith_core::record;
use rulesmith_core::{Game, ToMove};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// Run only the cases whose file name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    #[command(flatten)]
    pub common: VariantArgs,
}

/// The variant's folder, whether given as a folder or its variant.toml.
fn variant_dir(variant: &Path) -> PathBuf {
    if variant.is_file() {
        variant.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        variant.to_path_buf()
    }
}

/// Every record of the variant's tests folder and the folders it includes.
pub fn cases(variant: &Path) -> Result<Vec<PathBuf>, Failure> {
    let dir = variant_dir(variant).join("tests");
    if !dir.is_dir() {
        return Err(Failure::input(format!(
            "{}: no tests folder (regression cases are NAME.record files in it, see docs/fuzzing.md)",
            dir.display()
        )));
    }
    let mut folders = vec![dir.clone()];
    let include = dir.join("include");
    if let Ok(text) = std::fs::read_to_string(&include) {
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let folder = dir.join(line);
            if !folder.is_dir() {
                return Err(Failure::input(format!(
                    "{}:{}: '{line}' is not a folder (expected a folder of records, relative to this file)",
                    include.display(),
                    i + 1
                )));
            }
            folders.push(folder);
        }
    }
    let mut out = Vec::new();
    for folder in folders {
        let entries = std::fs::read_dir(&folder)
            .map_err(|e| Failure::input(format!("{}: cannot read: {e}", folder.display())))?;
        let mut records: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "record"))
            .collect();
        records.sort();
        out.extend(records);
    }
    Ok(out)
}

pub fn run(args: Args) -> Result<(), Failure> {
    let all = cases(&args.variant)?;
    let chosen: Vec<&PathBuf> = all
        .iter()
        .filter(|p| {
            args.only
                .as_deref()
                .is_none_or(|o| p.file_name().is_some_and(|n| n.to_string_lossy().contains(o)))
        })
        .collect();
    if chosen.is_empty() {
        return Err(Failure::input(format!(
            "{}: no regression case to run",
            variant_dir(&args.variant).join("tests").display()
        )));
    }
    let mut failed = 0;
    for path in &chosen {
        match check_case(&args.variant, path, &args.common) {
            Ok(what) => crate::outln!("ok    {} ({what})", path.display()),
            Err(why) => {
                failed += 1;
                crate::outln!("FAIL  {}\n      {}", path.display(), why.replace('\n', "\n      "));
            }
        }
    }
    crate::outln!(
        "{} cases, {} passed, {failed} failed",
        chosen.len(),
        chosen.len() - failed
    );
    if failed > 0 {
        return Err(Failure {
            message: String::new(),
            code: 1,
        });
    }
    Ok(())
}

/// Checks one case; says what it checked, or why it fails.
pub(crate) fn check_case(variant: &Path, path: &Path, common: &VariantArgs) -> Result<String, String> {
    let rg = record_game(variant, path, None, common).map_err(|f| f.message)?;
    let (game, players, text) = (&rg.game, rg.players, &rg.text);
    let sibling = |ext: &str| std::fs::read_to_string(path.with_extension(ext)).ok();
    if ["error", "json", "legal", "holds"].iter().all(|e| sibling(e).is_none()) {
        return Err(format!(
            "no expectation beside the record (add {} .json, .legal, .error or .holds)",
            path.with_extension("").display()
        ));
    }
    let result = record::replay(game, players, text, path);
    let mut checked: Vec<String> = Vec::new();
    if let Some(expected) = sibling("error") {
        checked.push("error".to_string());
        let Err(err) = &result else {
            return Err("the replay succeeded, but the .error file expects it to fail".into());
        };
        let mut lines = expected.lines();
        let line: usize = lines
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or("the .error file must start with a record line number")?;
        if err.line != line {
            return Err(format!(
                "the error is on line {} (expected line {line}): {err}",
                err.line
            ));
        }
        let message = err.to_string();
        for needle in lines.map(str::trim).filter(|l| !l.is_empty()) {
            if !message.contains(needle) {
                return Err(format!("the error message lacks '{needle}': {message}"));
            }
        }
    } else if let (Err(e), None) = (&result, sibling("holds")) {
        return Err(format!("the replay failed: {e}"));
    }
    if let Some(expected) = sibling("json") {
        checked.push("summary".to_string());
        let state = result.as_ref().map_err(|e| format!("the replay failed: {e}"))?;
        let want: serde_json::Value = serde_json::from_str(&expected)
            .map_err(|e| format!("{}: not JSON: {e}", path.with_extension("json").display()))?;
        let got = game.summary(state, None).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!("the summary differs.\n  expected: {want}\n  got:      {got}"));
        }
    }
    if let Some(expected) = sibling("legal") {
        checked.push("legal set".to_string());
        let state = result.as_ref().map_err(|e| format!("the replay failed: {e}"))?;
        let got = match state.to_move() {
            ToMove::Decision(_) => game.texts(&game.legal_actions(state).map_err(|e| e.to_string())?),
            _ => Vec::new(),
        };
        let want: Vec<String> = expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        if got != want {
            return Err(format!(
                "the legal actions differ.\n  expected: {want:?}\n  got:      {got:?}"
            ));
        }
    }
    if let Some(expected) = sibling("holds") {
        let names: Vec<&str> = expected.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        match holds_throughout(game, players, text, path, &names)? {
            None => checked.push("invariants".to_string()),
            Some(line) => checked.push(format!("invariants, up to line {line}, which the rules now refuse")),
        }
    }
    Ok(checked.join(", "))
}

/// Replays `text`, checking the named invariants (`*`: all) after every
/// line, as `rulesmith fuzz` does (not inside an event of several outcomes).
///
/// A saved finding usually ends with the move the bug allowed; once the
/// rules are fixed, that move is refused. So a line the rules refuse ends
/// the check, as a pass (every line before it held): its number is
/// returned, and the report shows it.
fn holds_throughout(
    game: &Game,
    players: usize,
    text: &str,
    path: &Path,
    names: &[&str],
) -> Result<Option<usize>, String> {
    let declared: Vec<&str> = game.variant().invariants.iter().map(|i| i.name.as_str()).collect();
    for n in names.iter().filter(|n| **n != "*") {
        if !declared.contains(n) {
            return Err(format!(
                "{}: '{n}' is not an invariant of this variant (it has: {})",
                path.with_extension("holds").display(),
                declared.join(", ")
            ));
        }
    }
    let check = |state: &rulesmith_core::State, at: &str| -> Result<(), String> {
        if state.core.chance.as_ref().is_some_and(|p| !p.got.is_empty()) {
            return Ok(());
        }
        let broken = if names.contains(&"*") {
            game.broken_invariants(state)
        } else {
            let mut all = Vec::new();
            for n in names {
                all.extend(game.broken_invariant(state, n).map_err(|e| e.to_string())?);
            }
            Ok(all)
        }
        .map_err(|e| e.to_string())?;
        match broken.first() {
            Some((name, message)) => Err(format!("{at}: invariant '{name}' does not hold: {message}")),
            None => Ok(()),
        }
    };
    let mut state = game.new_game(players).map_err(|e| e.to_string())?;
    check(&state, &format!("{}: at the start", path.display()))?;
    for (i, raw) in text.lines().enumerate() {
        if let Some(line) = record::parse_line(i + 1, raw, path).map_err(|e| e.to_string())? {
            if record::apply_line(game, &mut state, &line, path).is_err() {
                return Ok(Some(line.number));
            }
            check(&state, &format!("{}:{} '{}'", path.display(), line.number, line.text))?;
        }
    }
    Ok(None)
}

/// Saves a fuzz finding as a regression case of `variant`: its record, and
/// what must hold once the rules are fixed (the broken invariant; for other
/// findings, every invariant). Returns the record's path.
pub fn save_case(
    variant: &Path,
    f: &rulesmith_lab::fuzz::Finding,
    players: usize,
    sets: &[String],
    seed: u64,
) -> Result<PathBuf, String> {
    use rulesmith_lab::fuzz::FindingKind;
    let dir = variant_dir(variant).join("tests");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let what = match &f.kind {
        FindingKind::Invariant(name) => name.replace('_', "-"),
        FindingKind::Check(c) => c.name().to_string(),
        FindingKind::Script => "script-error".into(),
        FindingKind::Rules => "rule-set-error".into(),
        FindingKind::NoEnd => "no-end".into(),
    };
    let mut path = dir.join(format!("fuzz-{what}-seed{seed}.record"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("fuzz-{what}-seed{seed}-{n}.record"));
        n += 1;
    }
    let mut header = vec![
        format!("Found by rulesmith fuzz (seed {seed}): {}", f.kind),
        format!("  {}", f.message),
        "Expected once the rules are fixed: the .holds file beside this record.".to_string(),
        format!("players: {players}"),
    ];
    header.extend(sets.iter().map(|s| format!("set: {s}")));
    let holds = match &f.kind {
        FindingKind::Invariant(name) => format!("{name}\n"),
        _ => "*\n".to_string(),
    };
    std::fs::write(&path, f.record.to_text(&header)).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    let holds_path = path.with_extension("holds");
    std::fs::write(&holds_path, holds).map_err(|e| format!("{}: cannot write: {e}", holds_path.display()))?;
    Ok(path)
}
