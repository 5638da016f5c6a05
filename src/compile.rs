//! `rulesmith compile VARIANT`: translate the scripts to Rust, build them
//! (cached), and say what stays dynamic.

use crate::common::{load_variant, VariantArgs};
use crate::engine::Engine;
use crate::{engine, Failure};
use rulesmith_compiler::build::Trainee;
use rulesmith_core::{record, Variant};
use rulesmith_lab::differential;

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder.
    pub variant: PathBuf,
    /// List every value the compiler left dynamic (slower), and why.
    #[arg(long)]
    pub explain: bool,
    /// Write the generated Rust to this file.
    #[arg(long, value_name = "FILE")]
    pub emit: Option<PathBuf>,
    /// Translate only: do not build.
    #[arg(long)]
    pub no_build: bool,
    /// Build with profile-guided optimization: an instrumented build plays
    /// training games, and the rules are rebuilt by what it measured
    /// (seconds; needs only the Rust toolchain). Every command then uses
    /// that build while the scripts are unchanged.
    #[arg(long, conflicts_with_all = ["no_build", "verify"])]
    pub pgo: bool,
    /// Check the compiled rules against the interpreter (the reference):
    /// this many random games per player count, compared step by step
    /// (legal lists, every seat's view, invariants, evaluations, records).
    /// At least 1 (0 games would compare nothing); it builds, so not with
    /// --no-build.
    #[arg(long, value_name = "GAMES", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "no_build")]
    pub verify: Option<u64>,
    /// With --verify: also replay every record in this folder on both
    /// engines and compare the states reached (repeatable).
    #[arg(long, value_name = "DIR", requires = "verify")]
    pub records: Vec<PathBuf>,
    /// With --verify: the seed of the random games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(path) = &args.emit {
        crate::common::writable_file("--emit", path)?;
    }
    let variant = load_variant(&args.variant, &args.common)?;
    if let Some(games) = args.verify {
        return verify(&args, variant, games);
    }
    let out = engine::compile(&variant)?;
    crate::outln!(
        "{}: {} functions translated, {} value(s) left dynamic{}",
        variant.name,
        out.functions,
        out.fallbacks.len(),
        if args.explain || out.fallbacks.is_empty() {
            ""
        } else {
            " (--explain lists them)"
        }
    );
    if args.explain {
        for f in &out.fallbacks {
            let place = if f.line > 0 {
                format!("{}:{} {}", f.file.display(), f.line, f.function)
            } else {
                f.file.display().to_string()
            };
            crate::outln!("  {place}: {} is dynamic: {}", f.what, f.why);
        }
    }
    if let Some(path) = &args.emit {
        std::fs::write(path, &out.rust)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
        crate::outln!("Rust written to {}", path.display());
    }
    if args.no_build {
        return Ok(());
    }
    let b = engine::builder();
    let start = std::time::Instant::now();
    let unit = rulesmith_compiler::build::Unit {
        name: &variant.name,
        fingerprint: &out.fingerprint,
        rust: &out.rust,
    };
    let mut progress = |line: &str| eprintln!("rulesmith: {line}");
    let fingerprints = [out.fingerprint.as_str()];
    // Whether it was there is asked before building it.
    let (cached, built, said_as) = if args.pgo {
        (
            b.cached_profile_guided(&fingerprints).is_some(),
            b.optimized(&[unit], &mut |t| train(t, &args, &variant), &mut progress),
            ("already built, profile-guided", "built profile-guided"),
        )
    } else {
        (
            b.cached(&fingerprints).is_some(),
            b.binary(&[unit], &mut progress),
            ("already built", "built"),
        )
    };
    let bin = built.map_err(|e| Failure::input(e.to_string()))?;
    if cached {
        crate::outln!("{}: {}", said_as.0, bin.display());
    } else {
        crate::outln!(
            "{} in {:.1} s: {}",
            said_as.1,
            start.elapsed().as_secs_f64(),
            bin.display()
        );
    }
    Ok(())
}

/// The training of a profile-guided build: what the commands that play
/// many games do, at every player count, on the instrumented binary.
/// Code a training run never reaches is laid out as cold, so each of
/// them is here: random playouts (`profile`), invariants after every step
/// (`fuzz`), and search (`simulate` with MCTS bots). It takes seconds.
fn train(trainee: &Trainee, args: &Args, variant: &Variant) -> Result<(), String> {
    let mut overrides: Vec<std::ffi::OsString> = Vec::new();
    for s in &args.common.set {
        overrides.push("--set".into());
        overrides.push(s.into());
    }
    if let Some(p) = &args.common.params {
        overrides.push("--params".into());
        overrides.push(p.into());
    }
    let p = variant.players;
    for n in p.min..=p.max {
        let runs: [&[&str]; 3] = [
            &["profile", "--games", "20000"],
            &["fuzz", "--games", "1000", "--jobs", "1"],
            // Few playouts a decision: with the default budget, a game of
            // six seats takes half a minute, and the search's own code is
            // the engine's, which the profile does not optimize.
            &["simulate", "--games", "1", "--bots", "mcts:20", "--jobs", "1"],
        ];
        for run in runs {
            let out = trainee
                .command()
                .args(&run[..1])
                .arg(&args.variant)
                .args(&run[1..])
                .args(["--players", &n.to_string(), "--engine", "compiled"])
                .args(&overrides)
                .output()
                .map_err(|e| format!("cannot run the instrumented build: {e}"))?;
            // A fuzz run that finds a broken invariant (exit 1) has still
            // played: its profile counts. Bad input would have stopped the
            // `profile` run before it; any other failure stops the build.
            let found_break = run[0] == "fuzz" && out.status.code() == Some(1);
            if !out.status.success() && !found_break {
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(format!(
                    "`rulesmith {} {} --players {n}` failed: {}",
                    run[0],
                    args.variant.display(),
                    err.trim()
                ));
            }
        }
    }
    Ok(())
}

/// One record to replay on both engines, with the variant it was played in.
struct RecordCase {
    path: PathBuf,
    text: String,
    players: Option<usize>,
    variant: Variant,
}

fn record_cases(args: &Args) -> Result<Vec<RecordCase>, Failure> {
    let mut out = Vec::new();
    for dir in &args.records {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "record"))
            .collect();
        files.sort();
        for path in files {
            let text =
                std::fs::read_to_string(&path).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
            let sets = crate::common::record_overrides(&text, &path, &args.common);
            let players = record::header_values(&text, "players")
                .first()
                .and_then(|p| p.trim().parse().ok());
            let variant = load_variant(&args.variant, &sets)?;
            out.push(RecordCase {
                path,
                text,
                players,
                variant,
            });
        }
    }
    Ok(out)
}

/// The compiled rules against the interpreter: random games and records.
fn verify(args: &Args, variant: Variant, games: u64) -> Result<(), Failure> {
    let cases = record_cases(args)?;
    let mut all: Vec<&Variant> = vec![&variant];
    all.extend(cases.iter().map(|c| &c.variant));
    engine::prepare_compiled(&all)?;
    let make = |v: &Variant, e| engine::game(v.clone(), e).map_err(Failure::input);
    let (oracle, compiled) = (make(&variant, Engine::Interpreted)?, make(&variant, Engine::Compiled)?);
    let p = variant.players;
    for n in p.min..=p.max {
        let c = differential::compare(&oracle, &compiled, n, args.seed, games, 5_000, 7)
            .map_err(|d| Failure::input(d.to_string()))?;
        crate::outln!(
            "{} players: {} games, {} decisions, {} chance outcomes: identical",
            n,
            c.games,
            c.decisions,
            c.chance
        );
    }
    let mut same = 0;
    for case in &cases {
        let (a, b) = (
            make(&case.variant, Engine::Interpreted)?,
            make(&case.variant, Engine::Compiled)?,
        );
        let n = case.players.unwrap_or(case.variant.players.default);
        let outcome = |g: &rulesmith_core::Game| -> String {
            match record::replay(g, n, &case.text, &case.path) {
                Ok(mut s) => {
                    let summary = g.summary(&s, None).map_or_else(|e| e.to_string(), |j| j.to_string());
                    let mut legal = Vec::new();
                    let listed = match s.to_move() {
                        rulesmith_core::ToMove::Decision(_) => g
                            .legal_actions_into(&mut s, &mut legal)
                            .map_or_else(|e| e.to_string(), |()| g.texts(&legal).join("; ")),
                        _ => String::new(),
                    };
                    format!("{summary}\n{listed}")
                }
                Err(e) => format!("error: {e}"),
            }
        };
        let (x, y) = (outcome(&a), outcome(&b));
        if x != y {
            return Err(Failure::input(format!(
                "{}: the engines differ\ninterpreted: {x}\ncompiled:    {y}",
                case.path.display()
            )));
        }
        same += 1;
    }
    if !cases.is_empty() {
        crate::outln!("{same} records replayed identically");
    }
    Ok(())
}
