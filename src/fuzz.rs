//! `rulesmith fuzz VARIANT`: random playouts on all cores checking every
//! invariant after every step; a break is shrunk to a short record.
//!
//! Games run in fixed batches, each seeded from `--seed` and its index, so
//! the result is the same whatever `--jobs` is: the finding reported is the
//! one of the lowest failing batch, and totals count the batches up to it.

use crate::common::{load_game, players, VariantArgs};
use crate::Failure;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use rulesmith_core::variant::Value;
use rulesmith_core::{rng, Game, Variant};
use rulesmith_lab::fuzz::{self, Batch, Coverage, Options, Sweep, Totals};
use serde_json::json;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Games per batch: small enough to spread over cores, large enough that
/// a batch amortizes its start.
const BATCH: u64 = 8;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// Number of games to play.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    pub games: u64,
    /// Seed of the whole run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of players (default: the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    /// Worker threads (default: all cores). The result does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also vary every parameter the variant declares with a range.
    #[arg(long)]
    pub param_sweep: bool,
    /// Where to write the shrunk record of a finding.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Play only shard I of N (1-based): the batches of 8 games the whole
    /// run plays at those indices, with the same seeds.
    #[arg(long, value_name = "I/N", value_parser = crate::simulate::parse_shard)]
    pub shard: Option<crate::simulate::Shard>,
    /// Candidate games the shrinker may play for a finding.
    #[arg(long, default_value_t = 80_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub shrink_budget: u32,
    /// Seconds the shrinker may take for a finding (0: no bound; the shrunk
    /// record then depends only on the seed, never on the machine's speed).
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub shrink_seconds: u32,
    /// Also save the finding as a regression case in the variant's tests/
    /// folder (run them with `rulesmith test VARIANT`).
    #[arg(long)]
    pub save_case: bool,
    /// A game still running after this many decisions is a finding.
    /// Default: the variant's `[end] max_decisions` when it declares one,
    /// else 20000.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_decisions: Option<u32>,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(path) = &args.out {
        crate::common::writable_file("--out", path)?;
    }
    let base = load_game(&args.variant, &args.common)?;
    let n = players(&base, args.players)?;
    let variant: Arc<Variant> = base.variant().clone();
    let sweep = if args.param_sweep {
        fuzz::sweepable(&base)
    } else {
        Vec::new()
    };
    drop(base);
    let opts = Options {
        players: n,
        max_decisions: args
            .max_decisions
            .map(u64::from)
            .or(variant.max_decisions)
            .unwrap_or(rulesmith_lab::sim::MAX_DECISIONS) as usize,
        shrink_budget: args.shrink_budget as usize,
        shrink_seconds: (args.shrink_seconds > 0).then_some(args.shrink_seconds as f64),
        on_shrink: (!args.json).then_some(if std::io::stderr().is_terminal() {
            shrink_progress as fuzz::shrink::OnProgress
        } else {
            shrink_lines
        }),
        ..Options::default()
    };
    let batches = args.games.div_ceil(BATCH);
    let batch_range = args.shard.map_or(0..batches, |s| s.range(batches));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(crate::common::threads(args.jobs, batch_range.end - batch_range.start))
        .build()
        .map_err(|e| Failure::usage(format!("--jobs: {e}")))?;

    let progress = Progress::new(args.games, args.json);
    let lowest_failure = AtomicU64::new(u64::MAX);
    let start = Instant::now();
    let results: Vec<Option<Batch>> = pool.install(|| {
        batch_range
            .clone()
            .into_par_iter()
            .map_init(
                || Games::new(variant.clone()),
                |games, b| {
                    // Batches after a known failure cannot change the result.
                    if !args.param_sweep && b > lowest_failure.load(Ordering::Relaxed) {
                        return None;
                    }
                    let count = BATCH.min(args.games - b * BATCH) as u32;
                    let batch = fuzz::run_batch(&mut |p| games.get(p), &opts, &sweep, rng::derive(args.seed, b), count);
                    if batch.finding.is_some() {
                        lowest_failure.fetch_min(b, Ordering::Relaxed);
                    }
                    progress.add(&batch);
                    Some(batch)
                },
            )
            .collect()
    });
    progress.finish();
    let seconds = start.elapsed().as_secs_f64();

    // Totals up to and including the first failing batch: deterministic.
    let first_fail = results
        .iter()
        .position(|r| r.as_ref().is_some_and(|b| b.finding.is_some()));
    let counted = first_fail.map_or(results.len(), |i| if args.param_sweep { results.len() } else { i + 1 });
    let mut totals = Totals::default();
    let mut coverage =
        Coverage::for_game(&crate::engine::game(variant.clone(), crate::engine::current()).map_err(Failure::input)?);
    for b in results[..counted].iter().flatten() {
        totals.add(&b.totals);
        coverage.merge(&b.coverage);
    }
    let finding = first_fail
        .and_then(|i| results[i].as_ref())
        .and_then(|b| b.finding.clone());
    let search = first_fail
        .and_then(|i| results[i].as_ref())
        .and_then(|b| b.search.clone())
        .map(|s| Search {
            find_seconds: s.found_at.duration_since(start).as_secs_f64(),
            shrink_seconds: s.shrunk_at.duration_since(s.found_at).as_secs_f64(),
            stats: s,
        });
    let broken_params: Vec<&Vec<(String, i64)>> = results[..counted]
        .iter()
        .flatten()
        .filter_map(|b| b.finding.as_ref().map(|(_, p)| p))
        .collect();

    let mut report = Report {
        args: &args,
        variant: &variant,
        players: n,
        totals,
        seconds,
        coverage,
        sweep: &sweep,
        search,
        written: None,
        unwritten: None,
        case: None,
    };
    if let Some((f, params)) = &finding {
        let path = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}-finding.record", variant.name)));
        let header = report.header(f, params);
        let text = f.record.to_text(&header);
        match std::fs::write(&path, &text) {
            Ok(()) => report.written = Some(path),
            // The finding must not be lost: the record goes to the
            // terminal instead (standard error with --json, whose standard
            // output is one JSON object).
            Err(e) => {
                let why = format!("{}: cannot write the finding ({e}); its record follows", path.display());
                if args.json {
                    use std::io::Write as _;
                    let _ = writeln!(std::io::stderr(), "{why}:\n{text}");
                } else {
                    crate::outln!("{why}:\n{text}");
                }
                report.unwritten = Some(path);
            }
        }
        if args.save_case {
            let sets = report.sets(params);
            report.case =
                Some(crate::test_cmd::save_case(&args.variant, f, n, &sets, args.seed).map_err(Failure::input)?);
        }
    }
    if args.json {
        crate::outln!("{}", report.json(finding.as_ref(), &broken_params));
    } else {
        report.text(finding.as_ref(), &broken_params);
    }
    match finding {
        Some(_) => Err(Failure {
            message: String::new(),
            code: 1,
        }),
        None => Ok(()),
    }
}

/// The live line while a finding shrinks (on a terminal).
fn shrink_progress(p: &fuzz::shrink::Progress) {
    use std::io::Write as _;
    let _ = write!(std::io::stderr(), "\r\x1b[2K{}", shrink_text(p));
}

/// A plain line while a finding shrinks (standard error is not a
/// terminal): at its start, at each shorter record, and every few seconds.
fn shrink_lines(p: &fuzz::shrink::Progress) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{}", shrink_text(p));
}

fn shrink_text(p: &fuzz::shrink::Progress) -> String {
    format!(
        "fuzz: shrinking a finding: {} -> {} record lines ({} candidate games tried; \
         --shrink-budget and --shrink-seconds bound it)",
        p.from, p.now, p.tried
    )
}

/// How the reported finding was found and shrunk, in seconds of this run.
struct Search {
    stats: fuzz::SearchStats,
    find_seconds: f64,
    shrink_seconds: f64,
}

/// One worker's games: the base game, and one per swept parameter set.
struct Games {
    variant: Arc<Variant>,
    cache: HashMap<Vec<(String, i64)>, Rc<Game>>,
}

impl Games {
    fn new(variant: Arc<Variant>) -> Self {
        Games {
            variant,
            cache: HashMap::new(),
        }
    }

    fn get(&mut self, params: &[(String, i64)]) -> Result<Rc<Game>, String> {
        if let Some(g) = self.cache.get(params) {
            return Ok(g.clone());
        }
        if self.cache.len() > 256 {
            self.cache.clear();
        }
        let v = fuzz::with_params(&self.variant, params)?;
        let g = Rc::new(crate::engine::game(v, crate::engine::current())?);
        self.cache.insert(params.to_vec(), g.clone());
        Ok(g)
    }
}

/// Progress: a bar on a terminal, a few plain lines otherwise, nothing for
/// --json.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    games: AtomicU64,
    decisions: AtomicU64,
    findings: AtomicUsize,
    lines: AtomicU64,
    start: Instant,
    /// Milliseconds since `start` when a plain line is due even if the
    /// games have not reached the next tenth (a huge --games).
    next_ms: AtomicU64,
    quiet: bool,
}

impl Progress {
    fn new(total: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} games {msg} [{elapsed_precise}]")
                    .expect("valid template"),
            );
            b
        });
        Progress {
            bar,
            total,
            games: AtomicU64::new(0),
            decisions: AtomicU64::new(0),
            findings: AtomicUsize::new(0),
            lines: AtomicU64::new(0),
            start: Instant::now(),
            next_ms: AtomicU64::new(10_000),
            quiet,
        }
    }

    fn add(&self, b: &Batch) {
        let games = self.games.fetch_add(b.totals.games, Ordering::Relaxed) + b.totals.games;
        let decisions = self.decisions.fetch_add(b.totals.decisions, Ordering::Relaxed) + b.totals.decisions;
        let findings =
            self.findings.fetch_add(b.finding.is_some() as usize, Ordering::Relaxed) + b.finding.is_some() as usize;
        let rate = decisions as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
        let msg = format!("{rate:.0} decisions/s, {findings} finding(s)");
        if let Some(bar) = &self.bar {
            bar.set_position(games.min(self.total));
            bar.set_message(msg);
        } else if !self.quiet {
            // About ten plain lines per run, and one a minute at least
            // (the first after 10 s).
            let step = (self.total / 10).max(1);
            let line = games / step;
            let ms = self.start.elapsed().as_millis() as u64;
            let due = self.next_ms.load(Ordering::Relaxed);
            let timely = ms >= due
                && self
                    .next_ms
                    .compare_exchange(due, ms + 60_000, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok();
            if self.lines.fetch_max(line, Ordering::Relaxed) < line || timely {
                // Like `outln!`: a closed pipe must not abort the run.
                use std::io::Write as _;
                let _ = writeln!(std::io::stderr(), "fuzz: {games}/{} games, {msg}", self.total);
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
            // Clears the shrinking line too (see shrink_progress).
            use std::io::Write as _;
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

struct Report<'a> {
    args: &'a Args,
    variant: &'a Variant,
    players: usize,
    totals: Totals,
    seconds: f64,
    coverage: Coverage,
    sweep: &'a [Sweep],
    search: Option<Search>,
    written: Option<PathBuf>,
    /// The regression case saved (--save-case).
    case: Option<PathBuf>,
    /// Where the finding could not be written (its record was printed).
    unwritten: Option<PathBuf>,
}

impl Report<'_> {
    /// The `--set` overrides that reproduce a game: the user's, then the
    /// swept values (booleans written as true/false).
    fn sets(&self, params: &[(String, i64)]) -> Vec<String> {
        let mut sets: Vec<String> = crate::common::all_sets(&self.args.common).unwrap_or_default();
        for (k, v) in params {
            let is_bool = matches!(self.variant.param(k).map(|p| &p.value), Some(Value::Bool(_)));
            sets.push(if is_bool {
                format!("{k}={}", *v != 0)
            } else {
                format!("{k}={v}")
            });
        }
        sets
    }

    fn command(&self, params: &[(String, i64)]) -> String {
        let mut c = format!(
            "rulesmith replay {} {} --players {} --check",
            self.args.variant.display(),
            self.written.as_deref().unwrap_or(Path::new("FINDING.record")).display(),
            self.players
        );
        for s in self.sets(params) {
            c.push_str(&format!(" --set {s}"));
        }
        c
    }

    fn header(&self, f: &fuzz::Finding, params: &[(String, i64)]) -> Vec<String> {
        let mut h = vec![
            format!("rulesmith fuzz finding: {}", f.kind),
            format!("  {}", f.message),
            format!("variant {}, fuzz seed {}", self.args.variant.display(), self.args.seed),
            format!("players: {}", self.players),
        ];
        for s in self.sets(params) {
            h.push(format!("set: {s}"));
        }
        h
    }

    fn text(&self, finding: Option<&(fuzz::Finding, Vec<(String, i64)>)>, broken: &[&Vec<(String, i64)>]) {
        let t = &self.totals;
        crate::outln!(
            "fuzzed {} ({} players): {} games, {} decisions in {:.1}s ({:.0} decisions/s, shrinking included); {} won, {} drawn",
            self.args.variant.display(),
            self.players,
            t.games,
            t.decisions,
            self.seconds,
            t.decisions as f64 / self.seconds.max(1e-9),
            t.wins,
            t.draws
        );
        match finding {
            None => crate::outln!("no finding: every invariant and engine check held."),
            Some((f, params)) => {
                let lines = f.record.len();
                crate::outln!("\nFINDING: {} - {}", f.kind, f.message);
                crate::outln!(
                    "  at decision {}, turn {}, step '{}' (line {} of the record file)",
                    f.decisions,
                    f.turn,
                    f.step,
                    self.header(f, params).len() + lines
                );
                if let Some(s) = &self.search {
                    crate::outln!(
                        "  found after {:.1}s and {} decisions ({} games); shrunk from {} to {lines} lines in {:.1}s ({} games tried{})",
                        s.find_seconds,
                        t.decisions,
                        t.games,
                        s.stats.found_lines,
                        s.shrink_seconds,
                        s.stats.shrink_tried,
                        if s.stats.fixed_point { ", a fixed point" } else { ", budget spent" }
                    );
                }
                if let Some(p) = &self.written {
                    crate::outln!("  shrunk record ({lines} lines) written to {}", p.display());
                }
                if let Some(p) = &self.case {
                    crate::outln!(
                        "  saved as a regression case: {} (run: rulesmith test {})",
                        p.display(),
                        self.args.variant.display()
                    );
                }
                if let Some(p) = &self.unwritten {
                    crate::outln!(
                        "  the shrunk record ({lines} lines) could not be written to {}: it is printed above; save it to a file to replay it",
                        p.display()
                    );
                }
                crate::outln!("  replay it: {}", self.command(params));
                if !self.sweep.is_empty() {
                    crate::outln!("  {} of the swept batches broke; their parameter values:", broken.len());
                    for p in broken.iter().take(10) {
                        let s: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        crate::outln!("    {}", s.join(" "));
                    }
                }
            }
        }
        crate::outln!("\ncoverage (never reached):");
        for (what, names) in self.coverage.never() {
            let list = if names.is_empty() {
                "-".to_string()
            } else {
                names.join(", ")
            };
            crate::outln!("  {what:17} {list}");
        }
    }

    fn json(
        &self,
        finding: Option<&(fuzz::Finding, Vec<(String, i64)>)>,
        broken: &[&Vec<(String, i64)>],
    ) -> serde_json::Value {
        let t = &self.totals;
        let never: serde_json::Map<String, serde_json::Value> = self
            .coverage
            .never()
            .into_iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        json!({
            "variant": self.args.variant.display().to_string(),
            "players": self.players,
            "seed": self.args.seed,
            "games": t.games,
            "decisions": t.decisions,
            "wins": t.wins,
            "draws": t.draws,
            "seconds": self.seconds,
            "decisions_per_second": t.decisions as f64 / self.seconds.max(1e-9),
            "finding": finding.map(|(f, params)| json!({
                "kind": f.kind.to_string(),
                "message": f.message,
                "decisions": f.decisions,
                "turn": f.turn,
                "step": f.step,
                "record_lines": f.record.len(),
                "found_lines": self.search.as_ref().map(|s| s.stats.found_lines),
                "find_seconds": self.search.as_ref().map(|s| s.find_seconds),
                "shrink_seconds": self.search.as_ref().map(|s| s.shrink_seconds),
                "shrink_tried": self.search.as_ref().map(|s| s.stats.shrink_tried),
                "fixed_point": self.search.as_ref().map(|s| s.stats.fixed_point),
                "case_file": self.case.as_ref().map(|p| p.display().to_string()),
                "record_file": self.written.as_ref().map(|p| p.display().to_string()),
                "replay": self.command(params),
                "params": params.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })),
            "broken_parameter_sets": broken.iter().filter(|p| !p.is_empty()).map(|p| p.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>()).collect::<Vec<_>>(),
            "coverage": {
                "never": never,
                "steps": self.coverage.steps,
                "actions": self.coverage.actions,
                "cards": self.coverage.cards,
                "invariants": self.coverage.invariants,
                "functions": self.coverage.functions,
            },
        })
    }
}
