//! A corpus of malformed inputs, each with the diagnostic a designer should
//! see:
//!
//! - `tests/corpus/variants/CASE/`: a variant folder that must fail to load
//!   (`Variant::load`, then `rulesmith_rhai::interpreted`). Beside it, `CASE.expect` holds one
//!   expected diagnostic per line, `FILE:LINE: TEXT`: a diagnostic in FILE
//!   (relative to the case folder) on LINE (0: the file as a whole) whose
//!   message contains TEXT. Every line must match a diagnostic. A first
//!   line `exactly` means there must be no other diagnostic either (a real
//!   problem reported alone, without its consequences).
//! - `tests/corpus/records/CASE.record`: a game record whose replay must fail.
//!   Beside it, `CASE.expect` holds `LINE: TEXT` lines: the failure is on that
//!   record line and its message contains TEXT. The header may say
//!   `# variant: NAME` (a folder of `variants/`; default sirius-basic) and
//!   `# players: N` (default: the variant's).
//!
//! No case may panic: each runs under `catch_unwind`.

use rulesmith_core::{record, Diagnostic, Variant};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const DEFAULT_VARIANT: &str = "sirius-basic";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus(kind: &str) -> PathBuf {
    root().join("tests/corpus").join(kind)
}

/// The entries of a corpus folder, sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn header_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("# {key}:");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .map(str::trim)
}

/// Runs `f`, turning a panic into an error naming it.
fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        format!("PANICKED: {message}")
    })
}

/// The non-empty lines of an `.expect` file.
fn expect_lines(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let lines: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if lines.is_empty() {
        return Err(format!("{} expects nothing", path.display()));
    }
    Ok(lines)
}

// ----- variants -------------------------------------------------------------

/// One line of a variant case's `.expect`: `FILE:LINE: TEXT`.
struct Expected {
    file: PathBuf,
    line: usize,
    text: String,
}

fn parse_expected(line: &str) -> Result<Expected, String> {
    let mut parts = line.splitn(3, ':');
    let (Some(file), Some(number), Some(text)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("bad expectation '{line}' (expected FILE:LINE: TEXT)"));
    };
    Ok(Expected {
        file: PathBuf::from(file.trim()),
        line: number
            .trim()
            .parse()
            .map_err(|_| format!("bad line number in '{line}'"))?,
        text: text.trim().to_string(),
    })
}

/// A diagnostic as `FILE:LINE:COLUMN: message`, FILE relative to `dir`.
fn show(d: &Diagnostic, dir: &Path) -> String {
    let file = d.file.strip_prefix(dir).unwrap_or(&d.file);
    format!("{}:{}:{}: {}", file.display(), d.line, d.column, d.message)
}

/// Loads the variant in `dir` and compiles it: every problem found.
fn load_diagnostics(dir: &Path) -> Vec<Diagnostic> {
    match Variant::load(dir).and_then(rulesmith_rhai::interpreted) {
        Ok(_) => Vec::new(),
        Err(e) => e.diagnostics,
    }
}

/// True when `message` holds a name of `raw.rs` (`Raw` and a capital).
fn rust_name(message: &str) -> bool {
    message
        .match_indices("Raw")
        .any(|(i, _)| message[i + 3..].starts_with(|c: char| c.is_ascii_uppercase()))
}

fn check_variant_case(dir: &Path) -> Result<(), String> {
    let mut lines = expect_lines(&dir.with_extension("expect"))?;
    let exactly = lines.first().is_some_and(|l| l == "exactly");
    if exactly {
        lines.remove(0);
    }
    let expected = lines.iter().map(|l| parse_expected(l)).collect::<Result<Vec<_>, _>>()?;
    let diags = no_panic(|| load_diagnostics(dir))?;
    if diags.is_empty() {
        return Err("the variant loaded without error".into());
    }
    // No Rust type name may reach a designer ("expected struct RawPlayers").
    if let Some(d) = diags
        .iter()
        .find(|d| d.message.contains("struct ") || rust_name(&d.message))
    {
        return Err(format!("  a Rust type name leaks: {}", show(d, dir)));
    }
    if exactly && diags.len() != expected.len() {
        let actual: Vec<String> = diags.iter().map(|d| format!("  actual   {}", show(d, dir))).collect();
        return Err(format!(
            "  expected exactly {} diagnostic(s), got {}\n{}",
            expected.len(),
            diags.len(),
            actual.join("\n")
        ));
    }
    let missing: Vec<String> = expected
        .iter()
        .filter(|x| {
            !diags.iter().any(|d| {
                d.file.strip_prefix(dir).is_ok_and(|f| f == x.file) && d.line == x.line && d.message.contains(&x.text)
            })
        })
        .map(|x| format!("  expected {}:{}: {}", x.file.display(), x.line, x.text))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let actual: Vec<String> = diags.iter().map(|d| format!("  actual   {}", show(d, dir))).collect();
    Err(format!("{}\n{}", missing.join("\n"), actual.join("\n")))
}

#[test]
fn malformed_variants_fail_with_the_expected_diagnostics() {
    let cases: Vec<PathBuf> = entries(&corpus("variants"))
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    assert!(!cases.is_empty(), "no variant cases found");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|dir| check_variant_case(dir).err().map(|e| format!("{}:\n{e}", name(dir))))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} variant cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    eprintln!("{} variant cases passed", cases.len());
}

// ----- records --------------------------------------------------------------

fn check_record_case(path: &Path) -> Result<(), String> {
    let expected = expect_lines(&path.with_extension("expect"))?
        .iter()
        .map(|l| {
            let (number, text) = l
                .split_once(':')
                .ok_or(format!("bad expectation '{l}' (expected LINE: TEXT)"))?;
            let number: usize = number.trim().parse().map_err(|_| format!("bad line number in '{l}'"))?;
            Ok((number, text.trim().to_string()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let variant = header_value(&text, "variant").unwrap_or(DEFAULT_VARIANT);
    let game = Variant::load(root().join("variants").join(variant))
        .and_then(rulesmith_rhai::interpreted)
        .map_err(|e| format!("variant '{variant}' does not load: {e}"))?;
    let players = match header_value(&text, "players") {
        Some(p) => p.parse().map_err(|_| format!("bad '# players: {p}'"))?,
        None => game.variant().players.default,
    };
    let err = match no_panic(|| record::replay(&game, players, &text, path))? {
        Ok(_) => return Err("the record replayed without error".into()),
        Err(e) => e,
    };
    let missing: Vec<String> = expected
        .iter()
        .filter(|(line, needle)| err.line != *line || !err.message.contains(needle.as_str()))
        .map(|(line, needle)| format!("  expected {line}: {needle}"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n  actual   {}: {}",
            missing.join("\n"),
            err.line,
            err.message
        ))
    }
}

#[test]
fn malformed_records_fail_on_the_expected_line() {
    let cases: Vec<PathBuf> = entries(&corpus("records"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "record"))
        .collect();
    assert!(!cases.is_empty(), "no record cases found");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|path| check_record_case(path).err().map(|e| format!("{}:\n{e}", name(path))))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} record cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
    eprintln!("{} record cases passed", cases.len());
}

// ----- the corpus itself ------------------------------------------------------

/// Problems pairing cases with `.expect` files in one corpus folder; a case
/// is a folder (`case_ext` None) or a file with that extension.
fn pairing_problems(dir: &Path, case_ext: Option<&str>) -> Vec<String> {
    let all = entries(dir);
    let is_case = |p: &Path| match case_ext {
        None => p.is_dir(),
        Some(ext) => p.is_file() && p.extension().is_some_and(|e| e == ext),
    };
    let is_expect = |p: &Path| p.is_file() && p.extension().is_some_and(|e| e == "expect");
    let mut problems = Vec::new();
    for p in &all {
        let shown = p.strip_prefix(root()).unwrap_or(p).display().to_string();
        if is_case(p) {
            if !p.with_extension("expect").is_file() {
                problems.push(format!("{shown}: no .expect beside it"));
            }
        } else if is_expect(p) {
            let case = match case_ext {
                None => p.with_extension(""),
                Some(ext) => p.with_extension(ext),
            };
            if !is_case(&case) {
                problems.push(format!("{shown}: no case for it"));
            }
        } else {
            problems.push(format!("{shown}: neither a case nor an .expect"));
        }
    }
    problems
}

#[test]
fn every_expectation_has_a_case_and_every_case_an_expectation() {
    let mut problems = pairing_problems(&corpus("variants"), None);
    problems.extend(pairing_problems(&corpus("records"), Some("record")));
    assert!(problems.is_empty(), "corpus problems:\n{}", problems.join("\n"));
}
