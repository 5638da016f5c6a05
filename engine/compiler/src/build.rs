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

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Where a set of rule sets is built: a name of their names, stable
/// across edits of their scripts.
fn slot(names: &[&str]) -> String {
    let mut h = crate::Fnv::default();
    std::hash::Hasher::write(&mut h, names.join("+").as_bytes());
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
    let mut h = crate::Fnv::default();
    std::hash::Hasher::write(&mut h, fps.join("+").as_bytes());
    let h = std::hash::Hasher::finish(&h);
    format!("{h:016x}")
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

    /// The cached binary for these fingerprints, if built already.
    pub fn cached(&self, fingerprints: &[&str]) -> Option<PathBuf> {
        let bin = self.bin_path(&key(fingerprints));
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

    /// Builds (or finds) the binary with `units` registered. `progress`
    /// hears one line before a build starts.
    pub fn binary(&self, units: &[Unit<'_>], progress: &mut dyn FnMut(&str)) -> Result<PathBuf, BuildError> {
        let fps: Vec<&str> = units.iter().map(|u| u.fingerprint).collect();
        let key = key(&fps);
        let bin = self.bin_path(&key);
        if bin.is_file() {
            return Ok(bin);
        }
        Builder::toolchain()?;
        let io = |what: &str, p: &Path, e: std::io::Error| BuildError::Io(format!("{what} {}: {e}", p.display()));
        // Units in a fixed order (by name, then contents), so that a rule
        // set keeps its module from one build of this slot to the next.
        let mut units: Vec<&Unit<'_>> = units.iter().collect();
        units.sort_by(|a, b| (a.name, a.fingerprint).cmp(&(b.name, b.fingerprint)));
        let slot = slot(&units.iter().map(|u| u.name).collect::<Vec<_>>());
        let dir = self.cache.join("crates").join(&slot);
        let src = dir.join("src");
        std::fs::create_dir_all(&src).map_err(|e| io("cannot create", &src, e))?;
        let name = format!("rulesmith-compiled-{slot}");
        let ws = self.workspace.display().to_string().replace('\\', "/");
        // `panic = "abort"`: nothing in the command catches a panic (a
        // panic is a bug, reported and fatal either way), and without
        // unwinding paths the rules run about 1% fewer instructions
        // (docs/compiler.md).
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nrulesmith = {{ path = \"{ws}\" }}\nrulesmith-runtime = {{ path = \"{ws}/engine/runtime\" }}\n\n\
             # A workspace of its own: not a member of the project's.\n[workspace]\n\n\
             [profile.release]\ndebug = 0\nincremental = true\npanic = \"abort\"\n"
        );
        write(&dir.join("Cargo.toml"), &manifest)?;
        // The project's lock file: the same dependency versions as rulesmith.
        if let Ok(lock) = std::fs::read_to_string(self.workspace.join("Cargo.lock")) {
            let path = dir.join("Cargo.lock");
            if !path.exists() {
                write(&path, &lock)?;
            }
        }
        let mut sources: Vec<(PathBuf, &str)> = Vec::new();
        let mut main = String::from("// Generated by rulesmith-compiler.\n");
        let mut regs = Vec::new();
        for (i, u) in units.iter().enumerate() {
            let m = format!("rules_{i}_{}", ident(u.name));
            sources.push((src.join(format!("{m}.rs")), u.rust));
            main.push_str(&format!("mod {m};\n"));
            regs.push(format!("rulesmith_runtime::Registration::of::<{m}::Generated>()"));
        }
        main.push_str(&format!(
            "\n#[global_allocator]\nstatic ALLOCATOR: rulesmith::Allocator = rulesmith::Allocator;\n\nfn main() -> std::process::ExitCode {{\n    rulesmith::main_with(vec![{}])\n}}\n",
            regs.join(", ")
        ));
        sources.push((src.join("main.rs"), &main));
        // Another process may build other scripts of the same names at the
        // same time, in the same folder. A build counts only if, once its
        // binary is copied aside, the sources still are ours: then that
        // binary was built from them (cargo builds one at a time, and every
        // build writes its sources before it starts).
        let first = !self.cache.join("target").join("release").exists();
        progress(&if first {
            "compiling the rules (first build: the engine is built too, a few minutes; later builds take seconds)"
                .into()
        } else {
            "compiling the rules".to_string()
        });
        for _attempt in 0..4 {
            for (path, text) in &sources {
                write(path, text)?;
            }
            let built = self.build_once(&dir, &name, &key);
            let ours = sources
                .iter()
                .all(|(path, text)| std::fs::read_to_string(path).is_ok_and(|t| t == *text));
            let tmp = match built {
                Ok(tmp) if ours => tmp,
                Ok(tmp) => {
                    let _ = std::fs::remove_file(&tmp);
                    continue;
                }
                Err(BuildError::Cargo { .. }) if !ours => continue,
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
            std::fs::rename(&tmp, &bin).map_err(|e| io("cannot move", &tmp, e))?;
            return Ok(bin);
        }
        Err(BuildError::Io(format!(
            "other builds kept changing the sources in {} while these rules were built; try again",
            dir.display()
        )))
    }

    /// Runs cargo on the crate in `dir` and copies its binary next to the
    /// cached ones, under a temporary name (returned).
    fn build_once(&self, dir: &Path, name: &str, key: &str) -> Result<PathBuf, BuildError> {
        let io = |what: &str, p: &Path, e: std::io::Error| BuildError::Io(format!("{what} {}: {e}", p.display()));
        let log = dir.join("build.log");
        let target = self.cache.join("target");
        let mut cmd = Command::new("cargo");
        cmd.args(["build", "--release", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target)
            .current_dir(dir);
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
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        let bins = self.cache.join("bin");
        std::fs::create_dir_all(&bins).map_err(|e| io("cannot create", &bins, e))?;
        // Copied aside, then renamed into place: a binary in `bin/` is
        // always whole.
        let tmp = bins.join(format!(".{key}.{}", std::process::id()));
        std::fs::copy(&built, &tmp).map_err(|e| io("cannot copy", &built, e))?;
        Ok(tmp)
    }
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
}
