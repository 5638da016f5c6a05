//! Building compiled rules into a binary, cached.
//!
//! The generated Rust of one or more rule sets becomes a small crate whose
//! `main` is the `rulesmith` command itself with those rule sets registered
//! (`rulesmith::main_with`). Cargo builds it in release mode against the
//! workspace's own crates, in one target directory shared by every build, so
//! the first build compiles the dependencies once (minutes) and every later
//! one compiles only the generated crate (seconds). Binaries are kept under
//! a key made of the rule sets' fingerprints: a second run starts at once.
//!
//! The generated crate's folder, package and module names are keyed by the
//! rule sets' *names*, not their contents: after a script edit the same
//! crate is rebuilt, and cargo's incremental compilation redoes only the
//! functions that changed. Two builds of one name at once are told apart
//! by checking the sources after the build (see [`Builder::binary`]).
//!
//! A binary of its own, not a library loaded into the running process:
//! Rust has no stable ABI for passing `Box<dyn Rules>` across a dynamic
//! library, and loading one needs `unsafe`; a separate process costs one
//! `exec` per command (see docs/ARCHITECTURE.md, "Compiled rules").
//!
//! [`Builder::optimized`] builds the same rules a second way, with
//! profile-guided optimization: an instrumented build plays the rules
//! (the caller says how), its raw profiles are merged into the indexed
//! one rustc reads (by [`crate::profdata`], so that no `llvm-profdata` is
//! needed; one is tried only for a format that module does not read), and
//! a third build lays out and inlines the code by that profile. Only the
//! generated crate is built with those flags (`cargo rustc -- FLAGS`):
//! the engine crates are the plain build's, in the same target directory,
//! so the whole takes seconds. The binary is kept beside the plain one;
//! while it matches the scripts, it is the one used.

use crate::profdata;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates that only write `--rows` files (see the manifest below).
const ROWS_CRATES: [&str; 8] = [
    "parquet",
    "arrow-array",
    "arrow-buffer",
    "arrow-cmp",
    "arrow-data",
    "arrow-ipc",
    "arrow-schema",
    "arrow-select",
];

/// Where builds happen and what they build against.
pub struct Builder {
    /// The Rulesmith workspace (the root with `Cargo.toml`, `engine/`).
    pub workspace: PathBuf,
    /// The cache: `crates/`, `target/`, `bin/`.
    pub cache: PathBuf,
    /// Which build of Rulesmith asks: a binary built for another one holds
    /// another version of the command, so it is not reused.
    pub stamp: String,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("no Rust toolchain: `cargo` could not be run ({0})")]
    NoToolchain(String),
    #[error(
        "the profiles of rustc's LLVM {llvm} could not be merged: {builtin}; \
         an llvm-profdata of that LLVM or a little older would do it \
         (`rustup component add llvm-tools`, or a Debian package such as llvm-19): {tried}"
    )]
    NoProfdata {
        llvm: String,
        builtin: String,
        tried: String,
    },
    #[error("the training games of the profile-guided build failed: {0}")]
    Training(String),
    #[error("building the compiled rules failed; cargo's output is in {}:\n{tail}", log.display())]
    Cargo { log: PathBuf, tail: String },
    #[error("{0}")]
    Io(String),
}

/// One rule set to build in: its fingerprint, its generated Rust, and its
/// name (the variant's), which keys where it is built.
pub struct Unit<'a> {
    pub name: &'a str,
    pub fingerprint: &'a str,
    pub rust: &'a str,
}

/// The cache's one target directory, shared by every build and flavour.
const TARGET: &str = "target";

/// How one build is compiled. Whatever the flavour, the engine crates are
/// built the same way (the plain build's), so they are built once: only
/// the generated crate gets a flavour's flag.
#[derive(Clone, Copy)]
enum Flavor<'a> {
    /// An ordinary release build.
    Plain,
    /// Instrumented to count what runs (`-Cprofile-generate`), writing
    /// into this folder unless `LLVM_PROFILE_FILE` says otherwise.
    Instrumented(&'a Path),
    /// Optimized by the merged profile at this path (`-Cprofile-use`).
    ProfileUse(&'a Path),
}

impl Flavor<'_> {
    /// What the flavour is called in file names.
    fn label(self) -> &'static str {
        match self {
            Flavor::Plain => "plain",
            Flavor::Instrumented(_) => "pgo-train",
            Flavor::ProfileUse(_) => "pgo",
        }
    }

    /// The generated crate's own flags (`cargo rustc -- FLAGS`); none for
    /// a plain build.
    ///
    /// A profile-guided build compiles the generated crate as one codegen
    /// unit, so that the profile's inlining reaches across the rules'
    /// modules (measured 1.04x faster on random playouts, docs/compiler.md;
    /// the crate is compiled whole either way, its flags being new). The plain
    /// build keeps incremental compilation's many units, which an edit
    /// rebuilds one by one. Both profile flavours split the crate alike:
    /// a profile names a module's private functions by their unit.
    fn crate_flags(self) -> Vec<String> {
        let one_unit = "-Ccodegen-units=1".to_string();
        match self {
            Flavor::Plain => Vec::new(),
            Flavor::Instrumented(dir) => vec![format!("-Cprofile-generate={}", dir.display()), one_unit],
            Flavor::ProfileUse(profile) => vec![format!("-Cprofile-use={}", profile.display()), one_unit],
        }
    }
}

/// Where a set of rule sets is built: a name of their names, stable
/// across edits of their scripts.
fn slot(names: &[&str]) -> String {
    hex_hash(names.join("+").as_bytes())
}

/// A short hash of `bytes` in hex, stable across machines.
fn hex_hash(bytes: &[u8]) -> String {
    let mut h = crate::Fnv::default();
    std::hash::Hasher::write(&mut h, bytes);
    format!("{:016x}", std::hash::Hasher::finish(&h))
}

/// A Rust identifier made of a name: letters, digits and `_`, lower case.
fn ident(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The cache key of a set of rule sets.
pub fn key(fingerprints: &[&str]) -> String {
    let mut fps: Vec<&str> = fingerprints.to_vec();
    fps.sort_unstable();
    fps.dedup();
    if fps.len() == 1 {
        return fps[0].to_string();
    }
    // Short, and stable across machines.
    hex_hash(fps.join("+").as_bytes())
}

impl Builder {
    /// True when `cargo` runs.
    pub fn toolchain() -> Result<(), BuildError> {
        match Command::new("cargo").arg("--version").output() {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(BuildError::NoToolchain(
                String::from_utf8_lossy(&o.stderr).trim().to_string(),
            )),
            Err(e) => Err(BuildError::NoToolchain(e.to_string())),
        }
    }

    /// True when this rustc's profiles can be merged (see
    /// [`mergeable`]).
    pub fn can_profile() -> bool {
        mergeable().is_ok()
    }

    /// The cached binary for these fingerprints, if built already: the
    /// profile-guided one when there is one.
    pub fn cached(&self, fingerprints: &[&str]) -> Option<PathBuf> {
        let key = key(fingerprints);
        [self.pgo_bin_path(&key), self.bin_path(&key)]
            .into_iter()
            .find(|bin| bin.is_file())
    }

    /// The profile-guided binary for these fingerprints, if built already.
    pub fn cached_profile_guided(&self, fingerprints: &[&str]) -> Option<PathBuf> {
        let bin = self.pgo_bin_path(&key(fingerprints));
        bin.is_file().then_some(bin)
    }

    /// The log of an earlier build of these fingerprints that failed, if
    /// any: the generated Rust did not compile (a compiler bug, since the
    /// scripts passed the interpreter's checks), so it is not retried
    /// until the scripts or Rulesmith change.
    pub fn failed(&self, fingerprints: &[&str]) -> Option<PathBuf> {
        let marker = self.failure_marker(&key(fingerprints));
        std::fs::read_to_string(marker).ok().map(PathBuf::from)
    }

    fn failure_marker(&self, key: &str) -> PathBuf {
        self.cache
            .join("bin")
            .join(format!("rulesmith-{key}-{}.failed", self.stamp))
    }

    fn bin_path(&self, key: &str) -> PathBuf {
        self.cache.join("bin").join(format!(
            "rulesmith-{key}-{}{}",
            self.stamp,
            std::env::consts::EXE_SUFFIX
        ))
    }

    fn pgo_bin_path(&self, key: &str) -> PathBuf {
        self.cache.join("bin").join(format!(
            "rulesmith-{key}-{}-pgo{}",
            self.stamp,
            std::env::consts::EXE_SUFFIX
        ))
    }

    /// Builds (or finds) the binary with `units` registered. `progress`
    /// hears one line before a build starts.
    pub fn binary(&self, units: &[Unit<'_>], progress: &mut dyn FnMut(&str)) -> Result<PathBuf, BuildError> {
        let fps: Vec<&str> = units.iter().map(|u| u.fingerprint).collect();
        if let Some(bin) = self.cached(&fps) {
            return Ok(bin);
        }
        let key = key(&fps);
        Builder::toolchain()?;
        let crate_ = self.write_crate(units)?;
        progress(&if self.first_build() {
            "compiling the rules (first build: the engine is built too, a few minutes; later builds take seconds)"
                .into()
        } else {
            "compiling the rules".to_string()
        });
        let tmp = match self.build_checked(&crate_, &key, Flavor::Plain) {
            Ok(tmp) => tmp,
            Err(e) => {
                if let BuildError::Cargo { log, .. } = &e {
                    let marker = self.failure_marker(&key);
                    let _ = std::fs::create_dir_all(self.cache.join("bin"));
                    let _ = std::fs::write(marker, log.display().to_string());
                }
                return Err(e);
            }
        };
        // Binaries of older builds of Rulesmith for the same rules go.
        let older = format!("rulesmith-{key}-");
        if let Ok(entries) = std::fs::read_dir(self.cache.join("bin")) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(&older) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let bin = self.bin_path(&key);
        std::fs::rename(&tmp, &bin).map_err(|e| io_error("cannot move", &tmp, e))?;
        Ok(bin)
    }

    /// True before the engine crates were ever built in this cache.
    fn first_build(&self) -> bool {
        !self.cache.join(TARGET).join("release").exists()
    }

    /// Builds (or finds) the profile-guided binary of `units`: an
    /// instrumented build, then `train` runs it (it plays the rules the
    /// way the user's commands will, and every run leaves a profile),
    /// then [`merge_profiles`] merges the profiles and a last build uses
    /// them. The plain binary is not needed and not touched.
    ///
    /// Only the rules are built by the profile, not the engine: the
    /// engine crates are shared with the plain build, so nothing but the
    /// generated crate is compiled (seconds, not minutes), and nearly all
    /// of the gain is there (the rules, and the engine's generic code
    /// they instantiate: docs/compiler.md, "Profile-guided builds").
    pub fn optimized(
        &self,
        units: &[Unit<'_>],
        train: &mut dyn FnMut(&Trainee) -> Result<(), String>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<PathBuf, BuildError> {
        let fps: Vec<&str> = units.iter().map(|u| u.fingerprint).collect();
        let key = key(&fps);
        let bin = self.pgo_bin_path(&key);
        if bin.is_file() {
            return Ok(bin);
        }
        Builder::toolchain()?;
        // Known before building, not after.
        mergeable()?;
        let crate_ = self.write_crate(units)?;
        let profiles = self.cache.join("pgo").join(&key);
        let _ = std::fs::remove_dir_all(&profiles);
        std::fs::create_dir_all(&profiles).map_err(|e| io_error("cannot create", &profiles, e))?;
        // Left by older versions of Rulesmith, whose profile-guided builds
        // rebuilt the engine in target directories of their own (and its
        // instrumented build scripts left profiles in `pgo/default`).
        for old in ["target-pgo-train", "target-pgo", "pgo/default"] {
            let _ = std::fs::remove_dir_all(self.cache.join(old));
        }

        progress(if self.first_build() {
            "profile-guided build, 1 of 3: the rules, instrumented (the first build: the engine too, a few minutes)"
        } else {
            "profile-guided build, 1 of 3: the rules, instrumented"
        });
        let instrumented = self.build_checked(&crate_, &key, Flavor::Instrumented(&profiles))?;
        progress("profile-guided build, 2 of 3: training games, to measure where time goes");
        let trainee = Trainee {
            binary: instrumented,
            // Every process the training starts writes its own file here.
            profiles: profiles.join("%p-%m.profraw"),
        };
        let trained = train(&trainee);
        let _ = std::fs::remove_file(&trainee.binary);
        trained.map_err(BuildError::Training)?;
        let merged = merge_profiles(&profiles)?;

        progress("profile-guided build, 3 of 3: the rules, optimized by the profile");
        let tmp = self.build_checked(&crate_, &key, Flavor::ProfileUse(&merged))?;
        std::fs::rename(&tmp, &bin).map_err(|e| io_error("cannot move", &tmp, e))?;
        Ok(bin)
    }

    /// Writes the generated crate of `units` (all but its sources, which
    /// [`Builder::build_checked`] writes before every build).
    fn write_crate(&self, units: &[Unit<'_>]) -> Result<GeneratedCrate, BuildError> {
        // Units in a fixed order (by name, then contents), so that a rule
        // set keeps its module from one build of this slot to the next.
        let mut units: Vec<&Unit<'_>> = units.iter().collect();
        units.sort_by(|a, b| (a.name, a.fingerprint).cmp(&(b.name, b.fingerprint)));
        let slot = slot(&units.iter().map(|u| u.name).collect::<Vec<_>>());
        let dir = self.cache.join("crates").join(&slot);
        let src = dir.join("src");
        std::fs::create_dir_all(&src).map_err(|e| io_error("cannot create", &src, e))?;
        let name = format!("rulesmith-compiled-{slot}");
        let ws = self.workspace.display().to_string().replace('\\', "/");
        // `panic = "abort"`: nothing in the command catches a panic (a
        // panic is a bug, reported and fatal either way), and without
        // unwinding paths the rules run about 1% fewer instructions
        // (docs/compiler.md).
        // Arrow and Parquet only write `--rows` files: built at opt-level 1,
        // as the project's own release profile does (Cargo.toml says why),
        // they take a fraction of the engine's first build.
        let rows: String = ROWS_CRATES
            .iter()
            .map(|c| format!("[profile.release.package.{c}]\nopt-level = 1\n"))
            .collect();
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nrulesmith = {{ path = \"{ws}\" }}\nrulesmith-runtime = {{ path = \"{ws}/engine/runtime\" }}\n\n\
             # A workspace of its own: not a member of the project's.\n[workspace]\n\n\
             [profile.release]\ndebug = 0\nincremental = true\npanic = \"abort\"\n{rows}"
        );
        write(&dir.join("Cargo.toml"), &manifest)?;
        // The project's lock file: the same dependency versions as rulesmith.
        if let Ok(lock) = std::fs::read_to_string(self.workspace.join("Cargo.lock")) {
            let path = dir.join("Cargo.lock");
            if !path.exists() {
                write(&path, &lock)?;
            }
        }
        let mut sources: Vec<(PathBuf, String)> = Vec::new();
        let mut main = String::from("// Generated by rulesmith-compiler.\n");
        let mut regs = Vec::new();
        for (i, u) in units.iter().enumerate() {
            let m = format!("rules_{i}_{}", ident(u.name));
            sources.push((src.join(format!("{m}.rs")), u.rust.to_string()));
            main.push_str(&format!("mod {m};\n"));
            regs.push(format!("rulesmith_runtime::Registration::of::<{m}::Generated>()"));
        }
        // The profile-guided build sets RULESMITH_PROFILE_GUIDED for cargo
        // (`build_once`), so that the binary can say which build it is.
        main.push_str(&format!(
            "\n#[global_allocator]\nstatic ALLOCATOR: rulesmith::Allocator = rulesmith::Allocator;\n\n\
             fn main() -> std::process::ExitCode {{\n    \
             rulesmith::built_profile_guided(option_env!(\"RULESMITH_PROFILE_GUIDED\").is_some());\n    \
             rulesmith::main_with(vec![{}])\n}}\n",
            regs.join(", ")
        ));
        sources.push((src.join("main.rs"), main));
        Ok(GeneratedCrate { dir, name, sources })
    }

    /// Builds `crate_` as `flavor` and returns its binary, copied aside
    /// under a temporary name.
    ///
    /// Another process may build other scripts of the same names at the
    /// same time, in the same folder. A build counts only if, once its
    /// binary is copied aside, the sources still are ours: then that
    /// binary was built from them (cargo builds one at a time, and every
    /// build writes its sources before it starts).
    fn build_checked(&self, crate_: &GeneratedCrate, key: &str, flavor: Flavor<'_>) -> Result<PathBuf, BuildError> {
        for _attempt in 0..4 {
            for (path, text) in &crate_.sources {
                write(path, text)?;
            }
            let built = self.build_once(crate_, key, flavor);
            let ours = crate_
                .sources
                .iter()
                .all(|(path, text)| std::fs::read_to_string(path).is_ok_and(|t| t == *text));
            match built {
                Ok(tmp) if ours => return Ok(tmp),
                Ok(tmp) => {
                    let _ = std::fs::remove_file(&tmp);
                }
                Err(BuildError::Cargo { .. }) if !ours => {}
                Err(e) => return Err(e),
            }
        }
        Err(BuildError::Io(format!(
            "other builds kept changing the sources in {} while these rules were built; try again",
            crate_.dir.display()
        )))
    }

    /// Runs cargo on `crate_` and copies its binary next to the cached
    /// ones, under a temporary name (returned).
    fn build_once(&self, crate_: &GeneratedCrate, key: &str, flavor: Flavor<'_>) -> Result<PathBuf, BuildError> {
        let dir = &crate_.dir;
        let log = dir.join(match flavor {
            Flavor::Plain => "build.log".to_string(),
            other => format!("build-{}.log", other.label()),
        });
        let target = self.cache.join(TARGET);
        let mut cmd = Command::new("cargo");
        // `cargo rustc` passes the flags after `--` to the generated crate
        // alone: the engine crates stay the plain build's, with the same
        // symbol names, which is also what lets a profile taken from the
        // instrumented binary match the optimized one.
        let flags = flavor.crate_flags();
        cmd.arg(if flags.is_empty() { "build" } else { "rustc" })
            .args(["--release", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .current_dir(dir);
        if !flags.is_empty() {
            cmd.arg("--").args(flags);
        }
        // A cargo that runs us (cargo run, cargo test) must not steer the
        // nested build: its jobserver and target settings are its own.
        for var in [
            "CARGO_MAKEFLAGS",
            "MAKEFLAGS",
            "MFLAGS",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET_DIR",
        ] {
            cmd.env_remove(var);
        }
        // The binary says which build it is (`option_env!` in main.rs).
        match flavor {
            Flavor::ProfileUse(_) => cmd.env("RULESMITH_PROFILE_GUIDED", "1"),
            _ => cmd.env_remove("RULESMITH_PROFILE_GUIDED"),
        };
        let out = cmd.output().map_err(|e| BuildError::NoToolchain(e.to_string()))?;
        let _ = std::fs::write(&log, [&out.stdout[..], &out.stderr[..]].concat());
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(25)..].join("\n");
            return Err(BuildError::Cargo { log, tail });
        }
        let built = target
            .join("release")
            .join(format!("{}{}", crate_.name, std::env::consts::EXE_SUFFIX));
        let bins = self.cache.join("bin");
        std::fs::create_dir_all(&bins).map_err(|e| io_error("cannot create", &bins, e))?;
        // Copied aside, then renamed into place: a binary in `bin/` is
        // always whole.
        let tmp = bins.join(format!(".{key}.{}.{}", flavor.label(), std::process::id()));
        std::fs::copy(&built, &tmp).map_err(|e| io_error("cannot copy", &built, e))?;
        Ok(tmp)
    }
}

/// The instrumented binary of a profile-guided build, to train.
pub struct Trainee {
    binary: PathBuf,
    /// `LLVM_PROFILE_FILE`: where each run writes what it measured.
    profiles: PathBuf,
}

impl Trainee {
    /// A command that runs the instrumented binary (arguments to add).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.env("LLVM_PROFILE_FILE", &self.profiles);
        cmd
    }
}

/// The generated crate of a set of rule sets: its folder, its package
/// name, and its sources with their text.
struct GeneratedCrate {
    dir: PathBuf,
    name: String,
    sources: Vec<(PathBuf, String)>,
}

fn io_error(what: &str, p: &Path, e: std::io::Error) -> BuildError {
    BuildError::Io(format!("{what} {}: {e}", p.display()))
}

/// The LLVM version of the `rustc` that builds, as it reports it.
fn rustc_llvm() -> String {
    Command::new("rustc")
        .arg("-vV")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("LLVM version: ").map(str::to_string))
        })
        .unwrap_or_else(|| "of your rustc".to_string())
}

/// Whether this rustc's profiles can be merged: its LLVM writes the raw
/// format [`crate::profdata`] reads, or an `llvm-profdata` runs (whether
/// that one reads them shows only when it merges them).
fn mergeable() -> Result<(), BuildError> {
    let llvm = rustc_llvm();
    if profdata::reads_llvm(&llvm) {
        return Ok(());
    }
    profdata_tools().map(drop).map_err(|tried| BuildError::NoProfdata {
        builtin: format!("Rulesmith reads the profiles of LLVM {}", profdata::LLVM_READ),
        llvm,
        tried,
    })
}

/// The `llvm-profdata` programs that run, best first, for the profiles
/// [`crate::profdata`] does not read (a newer LLVM's):
/// `RULESMITH_LLVM_PROFDATA` alone when it is set; else rustup's
/// `llvm-tools` (made for this very rustc), then versioned ones on the
/// `PATH`, newest first, then a plain `llvm-profdata`. Which of them reads
/// this rustc's profiles shows only when they merge
/// ([`merge_profiles`] tries each). The error says what was looked for.
fn profdata_tools() -> Result<Vec<PathBuf>, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    let explicit = std::env::var_os("RULESMITH_LLVM_PROFDATA");
    if let Some(p) = &explicit {
        candidates.push(PathBuf::from(p));
    } else {
        if let Ok(o) = Command::new("rustc").args(["--print", "sysroot"]).output() {
            let sysroot = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            if let Ok(hosts) = std::fs::read_dir(sysroot.join("lib").join("rustlib")) {
                for h in hosts.flatten() {
                    candidates.push(h.path().join("bin").join("llvm-profdata"));
                }
            }
        }
        for v in (14..=40).rev() {
            candidates.push(PathBuf::from(format!("llvm-profdata-{v}")));
        }
        candidates.push(PathBuf::from("llvm-profdata"));
    }
    let runs = |p: &PathBuf| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found: Vec<PathBuf> = candidates.iter().filter(|p| runs(p)).cloned().collect();
    if found.is_empty() {
        return Err(match &explicit {
            Some(p) => format!("RULESMITH_LLVM_PROFDATA={} does not run", PathBuf::from(p).display()),
            None => "none was found (looked in rustup's llvm-tools and for llvm-profdata[-N] on the PATH)".into(),
        });
    }
    Ok(found)
}

/// Merges the `.profraw` files in `dir` into an indexed profile, a file
/// of `dir` named by its contents, returned: by [`crate::profdata`], or
/// else by the first `llvm-profdata` that can read them (an older LLVM
/// refuses a newer format).
///
/// Named by its contents because the generated crate is built
/// incrementally, and rustc's incremental cache notices a changed
/// `-Cprofile-use` path, not a changed file behind the same path.
fn merge_profiles(dir: &Path) -> Result<PathBuf, BuildError> {
    let mut raw: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_error("cannot read", dir, e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "profraw"))
        .collect();
    raw.sort();
    if raw.is_empty() {
        return Err(BuildError::Training(format!(
            "the training games left no profile in {}",
            dir.display()
        )));
    }
    let out = dir.join("merged.profdata");
    builtin_merge(&raw, &out).or_else(|builtin| {
        tools_merge(&raw, &out).map_err(|tried| BuildError::NoProfdata {
            llvm: rustc_llvm(),
            builtin,
            tried,
        })
    })?;
    // The raw profiles are large (megabytes per run) and merged now; the
    // merged one stays beside the binary.
    for r in &raw {
        let _ = std::fs::remove_file(r);
    }
    let bytes = std::fs::read(&out).map_err(|e| io_error("cannot read", &out, e))?;
    let named = dir.join(format!("{}.profdata", hex_hash(&bytes)));
    std::fs::rename(&out, &named).map_err(|e| io_error("cannot move", &out, e))?;
    Ok(named)
}

/// Merges the files `raw` into `out` with [`crate::profdata`]; the error
/// names the file it could not read.
fn builtin_merge(raw: &[PathBuf], out: &Path) -> Result<(), String> {
    let mut profile = profdata::Profile::default();
    for r in raw {
        let bytes = std::fs::read(r).map_err(|e| format!("cannot read {}: {e}", r.display()))?;
        profile.add_raw(&bytes).map_err(|e| format!("{}: {e}", r.display()))?;
    }
    std::fs::write(out, profile.to_indexed()).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// Merges the files `raw` into `out` with the first `llvm-profdata` that
/// can; the error says what was tried and why each refused.
fn tools_merge(raw: &[PathBuf], out: &Path) -> Result<(), String> {
    let mut refusals = Vec::new();
    for tool in profdata_tools()? {
        match Command::new(&tool).arg("merge").arg("-o").arg(out).args(raw).output() {
            Ok(o) if o.status.success() => return Ok(()),
            Ok(o) => {
                let why = String::from_utf8_lossy(&o.stderr);
                let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("failed").trim();
                refusals.push(format!("{}: {why}", tool.display()));
            }
            Err(e) => refusals.push(format!("{}: {e}", tool.display())),
        }
    }
    Err(format!("none could read them ({})", refusals.join("; ")))
}

/// Writes `text` to `path` whole (written aside, then renamed, so that a
/// build running meanwhile never reads half a file), unless it holds
/// `text` already: then its time stamp stays, for cargo.
fn write(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    let err = |e: std::io::Error| BuildError::Io(format!("cannot write {}: {e}", path.display()));
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&aside, text).map_err(err)?;
    std::fs::rename(&aside, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_depends_on_the_names_only_and_a_key_on_the_contents() {
        assert_eq!(slot(&["duel-basic"]), slot(&["duel-basic"]));
        assert_ne!(slot(&["duel-basic"]), slot(&["duel-advanced"]));
        assert_ne!(slot(&["a", "b"]), slot(&["a"]));
        assert_eq!(key(&["f1", "f2"]), key(&["f2", "f1"]));
        assert_ne!(key(&["f1"]), key(&["f2"]));
        assert_eq!(ident("duel-basic 2"), "duel_basic_2");
    }

    #[test]
    fn only_the_profile_guided_flavours_give_the_generated_crate_flags() {
        let (dir, profile) = (Path::new("raw"), Path::new("p.profdata"));
        assert!(Flavor::Plain.crate_flags().is_empty());
        assert_eq!(
            Flavor::Instrumented(dir).crate_flags(),
            ["-Cprofile-generate=raw", "-Ccodegen-units=1"]
        );
        assert_eq!(
            Flavor::ProfileUse(profile).crate_flags(),
            ["-Cprofile-use=p.profdata", "-Ccodegen-units=1"]
        );
        let labels = [
            Flavor::Plain.label(),
            Flavor::Instrumented(dir).label(),
            Flavor::ProfileUse(profile).label(),
        ];
        assert!(labels[0] != labels[1] && labels[1] != labels[2] && labels[0] != labels[2]);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rulesmith-build-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn training_that_left_no_profile_is_an_error_naming_the_folder() {
        let dir = scratch("empty");
        let e = merge_profiles(&dir).unwrap_err();
        assert!(matches!(e, BuildError::Training(_)), "{e}");
        assert!(e.to_string().contains(&dir.display().to_string()), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn raw_profiles_are_merged_into_one_named_by_its_contents_and_removed() {
        let dir = scratch("merge");
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut expected = profdata::Profile::default();
        for name in ["a.profraw", "b.profraw"] {
            let bytes = std::fs::read(testdata.join(name)).unwrap();
            expected.add_raw(&bytes).unwrap();
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let merged = merge_profiles(&dir).unwrap();
        let bytes = std::fs::read(&merged).unwrap();
        assert_eq!(bytes, expected.to_indexed());
        assert_eq!(merged, dir.join(format!("{}.profdata", hex_hash(&bytes))));
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
        assert_eq!(left, vec![merged], "the raw profiles are gone");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
