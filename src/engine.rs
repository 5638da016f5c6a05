//! Which engine runs the rules: the Rhai interpreter (the reference) or
//! the rules compiled to Rust (`rulesmith-compiler`).
//!
//! Compiled rules live in a binary of their own: this same command with
//! the rule sets registered (`main_with`). When a command wants compiled
//! rules that this process does not hold, [`prepare`] builds that binary
//! (or finds it in the cache) and runs it in this process's place with the
//! same arguments, so the user sees one command either way.

use crate::Failure;
use rulesmith_compiler::build::{BuildError, Builder, Unit};
use rulesmith_core::{Game, Variant};
use rulesmith_runtime::Registration;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// `--engine`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineChoice {
    /// Rules compiled to Rust: tens of times faster; the first use builds them.
    Compiled,
    /// The Rhai interpreter: the reference, starts at once.
    Interpreted,
}

/// What a command runs when `--engine` is not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    Interpreted,
    /// Compiled when a Rust toolchain is present (built on first use).
    Compiled,
    /// Compiled only when already built: no wait for an interactive command.
    CompiledIfCached,
}

/// The engine a command runs, once decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Interpreted,
    Compiled,
}

static REGISTRY: OnceLock<Vec<Registration>> = OnceLock::new();
/// The user's `--engine` and the running command's preference.
static CHOICE: OnceLock<(Option<EngineChoice>, Preference)> = OnceLock::new();
/// The engine decided by [`prepare`].
static CURRENT: OnceLock<Engine> = OnceLock::new();

/// Records `--engine` and what the command prefers without it.
pub fn choose(choice: Option<EngineChoice>, preference: Preference) {
    let _ = CHOICE.set((choice, preference));
}

/// The engine [`prepare`] decided (interpreted before it ran).
pub fn current() -> Engine {
    CURRENT.get().copied().unwrap_or(Engine::Interpreted)
}

/// Whether this binary is a profile-guided build (`compile --pgo`).
static PROFILE_GUIDED: OnceLock<bool> = OnceLock::new();

/// Called by a compiled binary's `main`: whether it was built
/// profile-guided.
pub fn built_profile_guided(yes: bool) {
    let _ = PROFILE_GUIDED.set(yes);
}

/// True in a profile-guided build of compiled rules.
pub fn profile_guided() -> bool {
    PROFILE_GUIDED.get() == Some(&true)
}

/// Set in the environment of a compiled binary run in a command's place.
const CHILD: &str = "RULESMITH_COMPILED_BINARY";

pub fn register(compiled: Vec<Registration>) {
    let _ = REGISTRY.set(compiled);
}

fn registered(fingerprint: &str) -> Option<&'static Registration> {
    REGISTRY.get()?.iter().find(|r| r.fingerprint == fingerprint)
}

/// Where compiled rules are built and kept: `RULESMITH_CACHE`, else the
/// workspace's `target/rulesmith-compiled`.
pub fn builder() -> Builder {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cache = std::env::var_os("RULESMITH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target").join("rulesmith-compiled"));
    // The running build of rulesmith, by its executable's size and time.
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            format!("{:x}{:x}", m.len(), t.map_or(0, |d| d.as_secs()))
        })
        .unwrap_or_default();
    Builder {
        workspace,
        cache,
        stamp,
    }
}

/// The generated Rust of a variant's scripts.
pub fn compile(variant: &Variant) -> Result<rulesmith_compiler::Output, Failure> {
    let facts = rulesmith_compiler::from_variant::facts(variant);
    rulesmith_compiler::compile(&facts).map_err(|e| {
        Failure::input(format!(
            "{e}\n(the compiler cannot translate this; run with --engine interpreted)"
        ))
    })
}

fn notice(text: &str) {
    let _ = writeln!(std::io::stderr(), "rulesmith: {text}");
}

/// Decides the engine for a command on `variants`. When compiled rules are
/// wanted and this process lacks them, builds them and runs the compiled
/// binary in this process's place (this function then does not return).
pub fn prepare(variants: &[&Variant]) -> Result<Engine, Failure> {
    if let Some(&e) = CURRENT.get() {
        return Ok(e);
    }
    let e = decide(variants)?;
    let _ = CURRENT.set(e);
    Ok(e)
}

/// [`prepare`] with compiled rules required, whatever the flags say (what
/// `rulesmith compile --verify` checks).
pub fn prepare_compiled(variants: &[&Variant]) -> Result<Engine, Failure> {
    let e = decide_as(Some(EngineChoice::Compiled), Preference::Compiled, variants)?;
    let _ = CURRENT.set(e);
    Ok(e)
}

fn decide(variants: &[&Variant]) -> Result<Engine, Failure> {
    let (choice, default) = CHOICE.get().copied().unwrap_or((None, Preference::Interpreted));
    decide_as(choice, default, variants)
}

fn decide_as(choice: Option<EngineChoice>, default: Preference, variants: &[&Variant]) -> Result<Engine, Failure> {
    let explicit = match (choice, default) {
        (Some(EngineChoice::Interpreted), _) | (None, Preference::Interpreted) => return Ok(Engine::Interpreted),
        (Some(EngineChoice::Compiled), _) => true,
        (None, _) => false,
    };
    let outputs = match variants.iter().map(|v| compile(v)).collect::<Result<Vec<_>, _>>() {
        Ok(o) => o,
        Err(f) if explicit => return Err(f),
        Err(f) => {
            notice(&format!(
                "running interpreted rules: {}",
                f.message.lines().next().unwrap_or("")
            ));
            return Ok(Engine::Interpreted);
        }
    };
    if outputs.iter().all(|o| registered(&o.fingerprint).is_some()) {
        return Ok(Engine::Compiled);
    }
    if std::env::var_os(CHILD).is_some() {
        return Err(Failure::input(
            "this compiled binary does not hold these rules (were the scripts edited while it started?)",
        ));
    }
    let b = builder();
    let fps: Vec<&str> = outputs.iter().map(|o| o.fingerprint.as_str()).collect();
    if default == Preference::CompiledIfCached && !explicit && b.cached(&fps).is_none() {
        return Ok(Engine::Interpreted);
    }
    if let Err(e) = Builder::toolchain() {
        if explicit {
            return Err(Failure::input(format!("--engine compiled: {e}")));
        }
        notice(&format!("{e}; running interpreted rules (slower)"));
        return Ok(Engine::Interpreted);
    }
    let mut units: Vec<Unit<'_>> = variants
        .iter()
        .zip(&outputs)
        .map(|(v, o)| Unit {
            name: &v.name,
            fingerprint: &o.fingerprint,
            rust: &o.rust,
        })
        .collect();
    units.sort_by(|a, b| a.fingerprint.cmp(b.fingerprint));
    units.dedup_by(|a, b| a.fingerprint == b.fingerprint);
    // Generated Rust that does not build is a compiler bug: say so, and
    // unless compiled rules were asked for, play on the interpreter.
    if !explicit {
        if let Some(log) = b.failed(&fps) {
            notice(&format!(
                "the compiled rules failed to build before (a compiler bug; cargo's output is in {}); running interpreted rules",
                log.display()
            ));
            return Ok(Engine::Interpreted);
        }
    }
    let bin = match b.binary(&units, &mut |line| notice(line)) {
        Ok(bin) => bin,
        Err(e @ BuildError::Cargo { .. }) if !explicit => {
            notice(&format!(
                "{}; this is a bug of the compiler, not of your scripts: running interpreted rules",
                e.to_string().lines().next().unwrap_or("").trim_end_matches(':')
            ));
            return Ok(Engine::Interpreted);
        }
        Err(e) => return Err(Failure::input(e.to_string())),
    };
    Err(run_instead(bin))
}

/// Runs `bin` with this process's arguments in its place.
fn run_instead(bin: PathBuf) -> Failure {
    let mut cmd = std::process::Command::new(&bin);
    cmd.args(std::env::args_os().skip(1)).env(CHILD, "1");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let e = cmd.exec();
        Failure::input(format!("cannot run {}: {e}", bin.display()))
    }
    #[cfg(not(unix))]
    {
        match cmd.status() {
            Ok(s) => std::process::exit(s.code().unwrap_or(1)),
            Err(e) => Failure::input(format!("cannot run {}: {e}", bin.display())),
        }
    }
}

/// A game of `variant` on `engine` (decided by [`prepare`]).
pub fn game(variant: impl Into<Arc<Variant>>, engine: Engine) -> Result<Game, String> {
    let variant = variant.into();
    match engine {
        Engine::Interpreted => rulesmith_rhai::interpreted(variant).map_err(|e| e.to_string()),
        Engine::Compiled => {
            let fp = rulesmith_compiler::from_variant::facts(&variant).fingerprint();
            let reg = registered(&fp).ok_or("no compiled rules for this variant in this binary")?;
            let rules = (reg.make)(variant.clone(), rulesmith_core::Limits::default());
            Game::from_rules_boxed(variant, rules).map_err(|e| e.to_string())
        }
    }
}
