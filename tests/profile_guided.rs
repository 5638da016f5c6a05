//! `rulesmith compile VARIANT --pgo`: the profile-guided build's pipeline.
//!
//! A real profile-guided build compiles the rules three times and plays
//! hundreds of training games, too long for every test run, so these
//! tests run the pipeline against a stand-in `cargo` (and `llvm-profdata`,
//! `rustc`) that log what they are asked and make small scripts for
//! binaries; an "instrumented" one leaves a real raw profile
//! (`engine/compiler/testdata`). What is checked is Rulesmith's part: the
//! three steps in order, in the plain build's target directory with flags
//! for the generated crate alone (so the engine is not rebuilt), training
//! at every player count with the user's overrides, the profiles merged
//! by Rulesmith itself (an `llvm-profdata` only for what it cannot read)
//! and handed to the last build, the cache, and that every command then
//! runs the profile-guided binary. The speed itself is measured by hand
//! (docs/compiler.md, "Profile-guided builds"), and the merge is checked
//! against llvm-profdata's in `rulesmith-compiler`'s tests.
#![cfg(unix)]

mod common;

use common::root;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A folder with the stand-ins, their logs, and a build cache.
struct Bench {
    dir: PathBuf,
}

impl Bench {
    /// Stand-ins whose instrumented binaries leave a real raw profile.
    fn new(name: &str) -> Bench {
        let fixture = root().join("engine/compiler/testdata/a.profraw");
        Bench::leaving(name, &format!("cat '{}'", fixture.display()))
    }

    /// Stand-ins whose instrumented binaries leave what `make` prints as
    /// their raw profile.
    fn leaving(name: &str, make: &str) -> Bench {
        let dir = std::env::temp_dir().join(format!("rulesmith-pgo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        let d = dir.display();
        // What the stand-in cargo "builds": a script that logs how it was
        // run and, when told where, leaves a profile as an instrumented
        // binary does (LLVM_PROFILE_FILE with %p and %m filled in).
        executable(
            &dir.join("made-binary"),
            &format!(
                "#!/bin/sh\necho \"run $1 profile=${{LLVM_PROFILE_FILE:-none}} $* bin=$(basename \"$0\")\" >> '{d}/runs.log'\n\
                 if [ -n \"$LLVM_PROFILE_FILE\" ]; then\n  \
                 {make} > \"$(echo \"$LLVM_PROFILE_FILE\" | sed \"s/%p/$$/; s/%m/0/\")\"\nfi\n"
            ),
        );
        // cargo build|rustc --release --manifest-path M --target-dir T [-- FLAGS]
        executable(
            &dir.join("tools").join("cargo"),
            &format!(
                "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'cargo 1.0'; exit 0; fi\n\
                 sub=$1; m=$4; t=$6; flag=$8; shift 6; [ \"$1\" = -- ] && shift\nname=$(sed -n 's/^name = \"\\(.*\\)\"/\\1/p' \"$m\" | head -1)\n\
                 echo \"$sub $(basename \"$t\") flags=$* rustflags=$RUSTFLAGS guided=$RULESMITH_PROFILE_GUIDED\" >> '{d}/builds.log'\n\
                 case \"$flag\" in -Cprofile-use=*) p=${{flag#-Cprofile-use=}}; \
                 [ -f \"$p\" ] || {{ echo \"no profile $p\" >&2; exit 101; }};; esac\n\
                 mkdir -p \"$t/release\" && cp '{d}/made-binary' \"$t/release/$name\"\n"
            ),
        );
        // llvm-profdata merge -o OUT FILE...
        executable(
            &dir.join("tools").join("llvm-profdata"),
            &format!(
                "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'LLVM version 99'; exit 0; fi\n\
                 echo \"merge $(($# - 3)) file(s)\" >> '{d}/merges.log'\necho merged > \"$3\"\n"
            ),
        );
        Bench { dir }
    }

    /// Runs rulesmith with the stand-ins first on the `PATH`.
    fn run(&self, args: &[&str]) -> Output {
        self.run_with_profdata(args, &self.dir.join("tools").join("llvm-profdata"))
    }

    /// [`Bench::run`] with `RULESMITH_LLVM_PROFDATA` set to `profdata`.
    fn run_with_profdata(&self, args: &[&str], profdata: &Path) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.join("tools").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        std::process::Command::new(env!("CARGO_BIN_EXE_rulesmith"))
            .args(args)
            .current_dir(root())
            .env("PATH", path)
            .env("RULESMITH_CACHE", self.dir.join("cache"))
            .env("RULESMITH_LLVM_PROFDATA", profdata)
            .output()
            .expect("runs")
    }

    fn log(&self, name: &str) -> Vec<String> {
        lines(&self.dir.join(name))
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn a_profile_guided_build_trains_at_every_player_count_and_is_then_used() {
    let bench = Bench::new("pipeline");
    // A plain build first: the profile-guided one must win over it.
    let o = bench.run(&["compile", "variants/sirius-multiplayer"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let plain = bench.log("builds.log");
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(plain[0], "build target flags= rustflags= guided=", "{plain:?}");
    std::fs::remove_file(bench.dir.join("builds.log")).unwrap();
    let o = bench.run(&[
        "compile",
        "variants/sirius-multiplayer",
        "--pgo",
        "--set",
        "max_turns=40",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}\n{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("built profile-guided in"), "{out}");
    let e = stderr(&o);
    for step in ["1 of 3", "2 of 3", "3 of 3"] {
        assert!(e.contains(&format!("profile-guided build, {step}")), "{e}");
    }

    // Two builds: instrumented, then by the merged profile, both in the
    // plain build's target directory with a flag for the generated crate
    // alone (`cargo rustc -- FLAGS`), the engine's flags untouched.
    let builds = bench.log("builds.log");
    assert_eq!(builds.len(), 2, "{builds:?}");
    let merged = bench.dir.join("cache").join("pgo");
    let logged = |line: &str, flag: &str, end: &str| {
        let start = format!("rustc target flags=-C{flag}={}", merged.display());
        assert!(line.starts_with(&start) && line.ends_with(end), "{builds:?}");
    };
    let common = "-Ccodegen-units=1 rustflags=";
    logged(&builds[0], "profile-generate", &format!(" {common} guided="));
    logged(&builds[1], "profile-use", &format!(".profdata {common} guided=1"));

    // Training: profile, fuzz and MCTS games at each of 3-6 players, on
    // the compiled rules, with the user's overrides; one merge of them all.
    let runs = bench.log("runs.log");
    assert_eq!(runs.len(), 3 * 4, "{runs:?}");
    for n in 3..=6 {
        for command in ["profile", "fuzz", "simulate"] {
            let run = runs
                .iter()
                .find(|r| r.starts_with(&format!("run {command} ")) && r.contains(&format!("--players {n} ")))
                .unwrap_or_else(|| panic!("no {command} at {n} players: {runs:?}"));
            assert!(run.contains("--engine compiled --set max_turns=40"), "{run}");
            assert!(!run.contains("profile=none"), "{run}");
        }
    }
    assert!(runs.iter().any(|r| r.contains("--bots mcts:")), "{runs:?}");
    assert!(
        bench.log("merges.log").is_empty(),
        "merged by Rulesmith, not llvm-profdata"
    );
    // The raw profiles go once merged; the merged one stays, named by its
    // contents, and it is the one the last build was given.
    let kept: Vec<PathBuf> = std::fs::read_dir(&merged)
        .unwrap()
        .flatten()
        .flat_map(|key| std::fs::read_dir(key.path()).unwrap().flatten())
        .map(|f| f.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.len() == 16 + ".profdata".len() && name.ends_with(".profdata"),
        "{name}"
    );
    assert!(
        builds[1].contains(&format!("-Cprofile-use={} ", kept[0].display())),
        "{builds:?}"
    );
    let indexed = std::fs::read(&kept[0]).unwrap();
    assert_eq!(
        indexed[..8],
        0x8169_666f_7270_6cffu64.to_le_bytes(),
        "an indexed profile"
    );

    // Built once: asked again, nothing is rebuilt.
    let o = bench.run(&["compile", "variants/sirius-multiplayer", "--pgo"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("already built, profile-guided:"), "{}", stdout(&o));
    assert!(stdout(&o).trim_end().ends_with("-pgo"), "{}", stdout(&o));
    assert_eq!(bench.log("builds.log").len(), 2);

    // A command that plays many games runs the profile-guided binary in
    // its place, not a fresh plain build.
    let o = bench.run(&["simulate", "variants/sirius-multiplayer", "--games", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(bench.log("builds.log").len(), 2, "no plain build");
    let runs = bench.log("runs.log");
    let last = runs.last().unwrap();
    assert!(last.starts_with("run simulate profile=none"), "{runs:?}");
    assert!(last.ends_with("-pgo"), "the profile-guided binary ran: {last}");
}

#[test]
fn a_rustc_whose_profiles_nothing_reads_is_found_out_before_building() {
    let bench = Bench::new("newer-llvm");
    // A rustc of an LLVM whose raw profiles Rulesmith does not read, and
    // no llvm-profdata.
    executable(
        &bench.dir.join("tools").join("rustc"),
        "#!/bin/sh\nif [ \"$1\" = -vV ]; then echo 'rustc 9.0.0'; echo 'LLVM version: 99.0.0'; exit 0; fi\n\
         if [ \"$2\" = sysroot ]; then echo /no/such/sysroot; exit 0; fi\nexit 1\n",
    );
    let missing = bench.dir.join("no-such-llvm-profdata");
    let o = bench.run_with_profdata(&["compile", "variants/sirius-basic", "--pgo"], &missing);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(
        e.contains("the profiles of rustc's LLVM 99.0.0 could not be merged"),
        "{e}"
    );
    assert!(e.contains("Rulesmith reads the profiles of LLVM 19 to 22"), "{e}");
    assert!(e.contains("rustup component add llvm-tools"), "{e}");
    assert!(
        e.contains(&format!("RULESMITH_LLVM_PROFDATA={} does not run", missing.display())),
        "{e}"
    );
    assert!(bench.log("builds.log").is_empty(), "found before building");
}

#[test]
fn a_profile_rulesmith_cannot_read_is_merged_by_llvm_profdata() {
    let bench = Bench::leaving("fallback", "echo raw");
    let o = bench.run(&["compile", "variants/sirius-basic", "--pgo"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Training at two players: a profile, a fuzz and an MCTS run.
    assert_eq!(bench.log("merges.log"), vec!["merge 3 file(s)".to_string()]);
    assert_eq!(bench.log("builds.log").len(), 2);
}

#[test]
fn a_profile_nothing_can_read_stops_the_build_before_the_last_step() {
    let bench = Bench::leaving("unreadable", "echo raw");
    // A merge that refuses, as an llvm-profdata older than rustc's LLVM does.
    executable(
        &bench.dir.join("tools").join("llvm-profdata"),
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'LLVM version 1'; exit 0; fi\n\
         echo 'error: unsupported instrumentation profile format version' >&2\nexit 1\n",
    );
    let o = bench.run(&["compile", "variants/sirius-basic", "--pgo"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("not a raw LLVM profile"), "Rulesmith's reason: {e}");
    assert!(e.contains("none could read them"), "{e}");
    assert!(e.contains("unsupported instrumentation profile format version"), "{e}");
    let builds = bench.log("builds.log");
    assert_eq!(builds.len(), 1, "only the instrumented build: {builds:?}");
    let bins = std::fs::read_dir(bench.dir.join("cache").join("bin")).unwrap();
    assert!(
        bins.flatten()
            .all(|f| !f.file_name().to_string_lossy().ends_with("-pgo")),
        "no profile-guided binary is kept"
    );
}

#[test]
fn pgo_is_refused_with_flags_that_build_nothing_or_something_else() {
    for other in [["--no-build"].as_slice(), &["--verify", "3"]] {
        let mut args = vec!["compile", "variants/sirius-basic", "--pgo"];
        args.extend(other);
        let o = common::rulesmith(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
    }
}
