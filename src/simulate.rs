//! `rulesmith simulate` and `rulesmith compare`: many games between bots,
//! summarized for a designer.
//!
//! Game `i` is seeded from `--seed` and `i`, and results are counted in
//! game order into a [`Tally`] (counts and integer sums), so every figure
//! is the same whatever `--jobs` is. Games are played in chunks and
//! streamed into the tally, the rows file and the records folder, so
//! memory does not grow with `--games`.
//!
//! `--shard i/n` plays only the games the whole run would play at the
//! indices of shard `i` (a contiguous block) and prints the shard's tally;
//! `rulesmith merge` (merge.rs) adds the shards up and prints exactly what
//! the whole run prints. The games of both sides of `compare` with one
//! index are always in the same shard.

use crate::common::{load_game, players, report_failure, BoundArgs, FailedGame, VariantArgs};
use crate::report::{LabelExamples, RecordLinks};
use crate::rows::{Columns, Rows};
use crate::Failure;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use rulesmith_core::{rng, Variant};
use rulesmith_lab::rating::SkillDepth;
use rulesmith_lab::sim::{self, GameResult, Paired, Rate, Sprt, Summary, Tally, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Options shared by `simulate` and `compare`.
#[derive(clap::Args, Clone)]
pub struct RunArgs {
    /// Number of games.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub games: u64,
    /// Number of players (default: the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    /// Bot of each seat, comma-separated (random, greedy, mcts, mcts:N,
    /// mcts:Nms); the list repeats over the seats. Default: random.
    #[arg(long, value_delimiter = ',', default_value = "random")]
    pub bots: Vec<String>,
    /// Rotate the bots one seat per game, so that no bot keeps a seat's
    /// advantage.
    #[arg(long)]
    pub rotate: bool,
    /// Seed of the whole run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores). The result does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write one row per game to FILE: JSON Lines (.jsonl) or Parquet
    /// (.parquet), by its extension (columns: docs/simulation.md).
    #[arg(long, value_name = "FILE")]
    pub rows: Option<PathBuf>,
    /// Play only shard I of N (1-based): the games the whole run plays at
    /// those indices. Prints a JSON tally for `rulesmith merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub bounds: BoundArgs,
}

/// `--shard I/N`: shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let bad = || format!("'{text}': expected I/N, shard I of N, with 1 <= I <= N (e.g. 3/8)");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (index, count) = (
        i.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if index == 0 || count == 0 || index > count {
        return Err(bad());
    }
    Ok(Shard { index, count })
}

impl Shard {
    /// The indices of this shard's games out of `games`: a contiguous block,
    /// the blocks of shards 1..=N covering 0..games in order.
    pub fn range(&self, games: u64) -> std::ops::Range<u64> {
        let at = |k: u64| (k as u128 * games as u128 / self.count as u128) as u64;
        at(self.index - 1)..at(self.index)
    }
}

/// Games played in parallel between two foldings into the tallies: enough
/// to keep every core busy, few enough that memory stays flat.
const CHUNK: u64 = 4096;

#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Write every game's record into this folder.
    #[arg(long, value_name = "DIR")]
    pub records: Option<PathBuf>,
    /// Write a self-contained HTML report with charts.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub common: VariantArgs,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The first variant.
    pub variant_a: PathBuf,
    /// The second variant (may be the same folder, with --set-b).
    pub variant_b: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Override a parameter of both variants; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Override a parameter of the first variant only; repeatable.
    #[arg(long = "set-a", value_name = "KEY=VALUE")]
    pub set_a: Vec<String>,
    /// Override a parameter of the second variant only; repeatable.
    #[arg(long = "set-b", value_name = "KEY=VALUE")]
    pub set_b: Vec<String>,
    /// Sequential test: stop as soon as B - A on this figure is decided
    /// (P1, P2..., draws, first, turns, decisions, bot:NAME or a counter);
    /// --games is then the most games played.
    #[arg(long, value_name = "METRIC", requires = "sprt_delta", conflicts_with = "shard")]
    pub sprt: Option<String>,
    /// The smallest difference that matters, in the figure's unit (0.05:
    /// five points of a win rate; 1: one turn per game).
    #[arg(long, value_name = "D", requires = "sprt")]
    pub sprt_delta: Option<f64>,
    /// --sprt's chance of calling a difference that is not there.
    #[arg(long, default_value_t = 0.05, value_name = "P", requires = "sprt")]
    pub alpha: f64,
    /// --sprt's chance of missing a difference of --sprt-delta.
    #[arg(long, default_value_t = 0.05, value_name = "P", requires = "sprt")]
    pub beta: f64,
    /// Also play a ladder of these bots (comma-separated, e.g.
    /// random,greedy,mcts) under both rule sets and report how the change
    /// moves the skill depth (see `rulesmith ladder`).
    #[arg(long, value_delimiter = ',', value_name = "BOTS", conflicts_with = "shard")]
    pub skill: Vec<String>,
    /// Games per pair of bots of --skill's ladders.
    #[arg(long, default_value_t = 20, value_name = "N", requires = "skill",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub skill_games: u64,
}

/// Whether two variants share a variant file (`variant.toml`): one
/// extends the other, they extend a common parent, or they are one folder.
fn related(a: &Variant, b: &Variant) -> bool {
    let tomls = |v: &Variant| -> Vec<PathBuf> {
        v.files
            .iter()
            .filter(|f| f.path.extension().is_some_and(|e| e == "toml"))
            .map(|f| f.path.canonicalize().unwrap_or_else(|_| f.path.clone()))
            .collect()
    };
    let theirs = tomls(b);
    tomls(a).iter().any(|p| theirs.contains(p))
}

/// Checks every file and folder a run will write, before it plays.
fn check_outputs(run: &RunArgs, report: Option<&Path>, records: Option<&Path>) -> Result<(), Failure> {
    if let Some(p) = &run.rows {
        crate::common::writable_file("--rows", p)?;
    }
    if let Some(p) = report {
        crate::common::writable_file("--report", p)?;
    }
    if let Some(d) = records {
        crate::common::writable_folder("--records", d)?;
    }
    if let Some(d) = &run.bounds.failures {
        if d.exists() && !d.is_dir() {
            return Err(Failure::usage(format!(
                "--failures {}: is a file, expected a folder",
                d.display()
            )));
        }
    }
    Ok(())
}

/// A loaded variant and the seats' bots, ready to play many games.
struct Plan {
    path: PathBuf,
    variant: Arc<Variant>,
    players: usize,
    bots: Vec<String>,
    sets: Vec<String>,
}

/// Why a game of a run could not be played.
enum Failed {
    /// The rules could not be compiled on a worker.
    Load(String),
    Game {
        index: u64,
        seed: u64,
        bots: Vec<String>,
        message: String,
        record: rulesmith_core::record::Record,
    },
}

impl Plan {
    fn new(path: &Path, sets: Vec<String>, run: &RunArgs) -> Result<Plan, Failure> {
        let game = load_game(
            path,
            &VariantArgs {
                set: sets.clone(),
                ..VariantArgs::default()
            },
        )?;
        let n = players(&game, run.players)?;
        for b in &run.bots {
            rulesmith_lab::bot::from_spec(b, 0).map_err(Failure::usage)?;
        }
        if run.bots.is_empty() {
            return Err(Failure::usage("--bots needs at least one bot"));
        }
        Ok(Plan {
            path: path.to_path_buf(),
            variant: game.variant().clone(),
            players: n,
            bots: run.bots.clone(),
            sets,
        })
    }

    /// The bot of each seat in game `i`.
    fn seat_bots(&self, i: u64, rotate: bool) -> Vec<String> {
        let shift = if rotate { i as usize } else { 0 };
        (0..self.players)
            .map(|s| self.bots[(s + shift) % self.bots.len()].clone())
            .collect()
    }

    /// Plays the games at `indices` on `pool`, their results in game order;
    /// the first failing game (in game order) is the error.
    fn play_chunk(
        &self,
        pool: &rayon::ThreadPool,
        run: &RunArgs,
        indices: std::ops::Range<u64>,
        keep_records: bool,
        command: &str,
        progress: &Progress,
    ) -> Result<Vec<GameResult>, Failure> {
        let max = run.bounds.max_decisions_for(&self.variant);
        let results: Vec<Result<GameResult, Failed>> = pool.install(|| {
            indices
                .into_par_iter()
                .map_init(
                    // Each thread's game, and the state its games are
                    // played in (one game lends its allocations to the next).
                    || {
                        (
                            crate::engine::game(self.variant.clone(), crate::engine::current()),
                            None,
                        )
                    },
                    |(game, scratch), i| {
                        let game = game.as_ref().map_err(|e| Failed::Load(e.clone()))?;
                        let seed = rng::derive(run.seed, i);
                        let bots = self.seat_bots(i, run.rotate);
                        let r = sim::play_game_in(game, &bots, i, seed, keep_records, max, scratch).map_err(|f| {
                            // The record of the failing game: played again
                            // with one kept, when this run kept none.
                            let record = f.record.or_else(|| {
                                sim::play_game(game, &bots, i, seed, true, max)
                                    .err()
                                    .and_then(|g| g.record)
                            });
                            Failed::Game {
                                index: i,
                                seed,
                                bots,
                                message: f.error.to_string(),
                                record: record.unwrap_or_default(),
                            }
                        });
                        progress.inc();
                        r
                    },
                )
                .collect()
        });
        // The first failing game, in game order: the same whatever --jobs is.
        // Unwrapped into a list made at its final size (collecting the
        // `Result`s would grow it by doubling, fresh pages every chunk).
        let mut played = Vec::with_capacity(results.len());
        for r in results {
            played.push(r.map_err(|f| self.failure(f, run, command))?);
        }
        Ok(played)
    }

    /// The error of a game that failed (its record written where
    /// `--failures` says) or of a game that could not load.
    fn failure(&self, f: Failed, run: &RunArgs, command: &str) -> Failure {
        match f {
            Failed::Load(e) => Failure::input(e),
            Failed::Game {
                index,
                seed,
                bots,
                message,
                record,
            } => {
                let where_ = report_failure(
                    run.bounds.failures.as_deref(),
                    &FailedGame {
                        command,
                        variant_path: &self.path,
                        variant_name: &self.variant.name,
                        players: self.players,
                        seed,
                        sets: &self.sets,
                        about: vec![
                            format!(
                                "{} - game {} of a simulation, seed {seed}",
                                self.variant.name,
                                index + 1
                            ),
                            format!("bots: {}", bots.join(", ")),
                        ],
                        record: &record,
                    },
                );
                Failure::input(format!(
                    "{}: game {} (seed {seed}, bots {}) fails: {message}\n{where_}",
                    self.path.display(),
                    index + 1,
                    bots.join(",")
                ))
            }
        }
    }

    fn counters(&self) -> usize {
        self.variant.stats.len()
    }
}

/// The thread pool of `--jobs` for `games` games: never more threads than
/// games (`--jobs 100000` for 5 games starts 5).
fn pool(run: &RunArgs, games: u64) -> Result<rayon::ThreadPool, Failure> {
    crate::common::pool(run.jobs, games)
}

/// Progress of a run over `games` games: a bar on a terminal; otherwise
/// (a pipe, a log file) a plain line on standard error after the first 10
/// seconds and every minute after, so that a long run is never silent;
/// nothing with --json.
struct Progress {
    bar: Option<ProgressBar>,
    plain: Option<Plain>,
}

/// The plain lines of [`Progress`].
struct Plain {
    command: &'static str,
    total: u64,
    done: AtomicU64,
    start: Instant,
    /// Milliseconds since `start` at which the next line is due.
    next_ms: AtomicU64,
}

const FIRST_LINE_MS: u64 = 10_000;
const LINE_EVERY_MS: u64 = 60_000;

impl Progress {
    fn new(run: &RunArgs, games: u64, command: &'static str) -> Progress {
        if run.json {
            return Progress { bar: None, plain: None };
        }
        if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(games);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} games {msg} [{elapsed_precise}]").expect("valid"),
            );
            return Progress {
                bar: Some(b),
                plain: None,
            };
        }
        Progress {
            bar: None,
            plain: Some(Plain {
                command,
                total: games,
                done: AtomicU64::new(0),
                start: Instant::now(),
                next_ms: AtomicU64::new(FIRST_LINE_MS),
            }),
        }
    }

    /// One more game played (called from the worker threads).
    fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        if let Some(p) = &self.plain {
            let done = p.done.fetch_add(1, Ordering::Relaxed) + 1;
            let ms = p.start.elapsed().as_millis() as u64;
            let due = p.next_ms.load(Ordering::Relaxed);
            // One thread wins the line that is due.
            if ms >= due
                && p.next_ms
                    .compare_exchange(due, ms + LINE_EVERY_MS, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                let seconds = ms as f64 / 1000.0;
                let left = (p.total.saturating_sub(done)) as f64 * seconds / done as f64;
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "{}: {done}/{} games in {seconds:.0}s, about {} left",
                    p.command,
                    p.total,
                    crate::common::duration_text(left)
                );
            }
        }
    }

    fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// The chunks of `range`, in order, of `size` games.
fn chunks(range: std::ops::Range<u64>, size: u64) -> impl Iterator<Item = std::ops::Range<u64>> {
    range
        .clone()
        .step_by(size as usize)
        .map(move |lo| lo..(lo + size).min(range.end))
}

/// What identifies a simulation: the fields of its JSON besides the
/// summary. The shards of one run carry equal ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimulateRun {
    pub variant: String,
    pub players: usize,
    pub bots: Vec<String>,
    pub rotate: bool,
    pub seed: u64,
    pub set: Vec<String>,
    /// Games of the whole run.
    pub games: u64,
}

/// What `simulate --shard` prints: one shard's games, counted.
#[derive(Debug, Serialize, Deserialize)]
pub struct SimulateShard {
    pub shard: Shard,
    pub run: SimulateRun,
    pub title: String,
    /// The variant's counters: name and doc.
    pub counters: Vec<(String, String)>,
    pub tally: Tally,
}

/// Plays the games at `range` and counts them, writing each game's row
/// and record as it comes. With records, also the first games of every
/// label value (for the report's links).
fn simulate_games(
    plan: &Plan,
    run: &RunArgs,
    range: std::ops::Range<u64>,
    records: Option<&Path>,
) -> Result<(Tally, LabelExamples), Failure> {
    let mut examples = LabelExamples::new();
    let pool = pool(run, range.end - range.start)?;
    let progress = Progress::new(run, range.end - range.start, "simulate");
    let mut tally = Tally::new(plan.players, plan.counters());
    let mut rows = match &run.rows {
        Some(p) => Some(Rows::create(p, Columns::of(&[&plan.variant]))?),
        None => None,
    };
    if let Some(dir) = records {
        std::fs::create_dir_all(dir).map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    }
    for chunk in chunks(range, CHUNK) {
        let results = plan.play_chunk(&pool, run, chunk, records.is_some(), "simulate", &progress)?;
        for r in &results {
            tally.add(r);
            if let Some(rows) = rows.as_mut() {
                rows.write(r, &plan.variant, None)?;
            }
            if let Some(dir) = records {
                write_record(dir, plan, run.games, r)?;
                keep_example(&mut examples, run.games, r);
            }
        }
    }
    progress.finish();
    rows.map_or(Ok(()), Rows::finish)?;
    Ok((tally, examples))
}

/// Notes game `r` among the first games of each of its label values.
fn keep_example(examples: &mut LabelExamples, games: u64, r: &GameResult) {
    for (label, value) in &r.labels {
        let kept = examples
            .entry(label.clone())
            .or_default()
            .entry(value.clone())
            .or_default();
        kept.push((r.index + 1, record_file_name(games, r.index)));
        kept.sort();
        kept.truncate(crate::report::EXAMPLES);
    }
}

/// `to` (a folder) as a link from the folder of the file `from`: relative
/// when both can be resolved, so that the two can be moved together.
fn link_from(from: &Path, to: &Path) -> String {
    let base = from
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (Ok(base), Ok(to_abs)) = (base.canonicalize(), to.canonicalize()) else {
        return to.display().to_string().replace('\\', "/");
    };
    let common = base
        .components()
        .zip(to_abs.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = base.components().skip(common).map(|_| "..".to_string()).collect();
    parts.extend(
        to_abs
            .components()
            .skip(common)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// The file a game's record is written to in a records folder: its number,
/// zero-padded to the width of the run's game count (at least 4).
fn record_file_name(games: u64, index: u64) -> String {
    let width = games.to_string().len().max(4);
    format!("game-{:0width$}.record", index + 1)
}

/// Prints a simulation's result: the JSON object (the same bytes for a
/// run and for its merged shards) or the text.
pub fn print_simulation(run: &SimulateRun, title: &str, summary: &Summary, json: bool, seconds: Option<f64>) {
    if json {
        let j = json!({
            "variant": run.variant,
            "players": run.players,
            "bots": run.bots,
            "rotate": run.rotate,
            "seed": run.seed,
            "set": run.set,
            "summary": summary,
        });
        crate::outln!("{j}");
        return;
    }
    crate::outln!(
        "{title} - {} games, {} players, bots {}{}, seed {}{}",
        summary.games,
        run.players,
        run.bots.join(","),
        if run.rotate { " (rotating)" } else { "" },
        run.seed,
        seconds.map_or(String::new(), |s| format!(" ({s:.1}s)"))
    );
    crate::outln!("parameters: {}", sets_text(&run.set));
    print_summary(summary);
}

/// Writes the self-contained HTML report of a simulation (linking the game
/// records, when they were written).
pub fn write_report(
    path: &Path,
    run: &SimulateRun,
    title: &str,
    summary: &Summary,
    records: Option<&RecordLinks>,
) -> Result<(), Failure> {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let html = crate::report::html(&crate::report::ReportInput {
        title,
        variant: &run.variant,
        command: &command,
        sets: &run.set,
        summary,
        records,
    });
    std::fs::write(path, html).map_err(|e| Failure::input(format!("{}: cannot write report: {e}", path.display())))
}

pub fn simulate(args: SimulateArgs) -> Result<(), Failure> {
    check_outputs(&args.run, args.report.as_deref(), args.records.as_deref())?;
    let plan = Plan::new(&args.variant, crate::common::all_sets(&args.common)?, &args.run)?;
    if args.run.shard.is_some() && args.report.is_some() {
        return Err(Failure::usage(
            "--report needs every game: give it to `rulesmith merge` with the shards' files",
        ));
    }
    let run = SimulateRun {
        variant: args.variant.display().to_string(),
        players: plan.players,
        bots: args.run.bots.clone(),
        rotate: args.run.rotate,
        seed: args.run.seed,
        set: plan.sets.clone(),
        games: args.run.games,
    };
    let range = args.run.shard.map_or(0..args.run.games, |s| s.range(args.run.games));
    let start = Instant::now();
    let (tally, examples) = simulate_games(&plan, &args.run, range, args.records.as_deref())?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(shard) = args.run.shard {
        let part = SimulateShard {
            shard,
            run,
            title: plan.variant.title.clone(),
            counters: plan.variant.stats.clone(),
            tally,
        };
        crate::outln!("{}", json!({ "simulate_shard": part }));
        return Ok(());
    }
    let summary = Summary::of_tally(&tally, &plan.variant.stats);
    if let Some(path) = &args.report {
        let links = args.records.as_deref().map(|dir| RecordLinks {
            href: link_from(path, dir),
            examples,
        });
        write_report(path, &run, &plan.variant.title, &summary, links.as_ref())?;
    }
    print_simulation(&run, &plan.variant.title, &summary, args.run.json, Some(seconds));
    if !args.run.json {
        if let Some(p) = &args.report {
            crate::outln!("\nreport written to {}", p.display());
        }
        if let Some(d) = &args.records {
            crate::outln!("records written to {}", d.display());
        }
        if let Some(r) = &args.run.rows {
            crate::outln!("rows written to {}", r.display());
        }
    }
    Ok(())
}

fn write_record(dir: &Path, plan: &Plan, games: u64, r: &GameResult) -> Result<(), Failure> {
    let Some(record) = &r.record else { return Ok(()) };
    let mut header = vec![
        format!(
            "{} - game {} of a simulation, seed {}",
            plan.variant.name,
            r.index + 1,
            r.seed
        ),
        format!("bots: {}", r.bots.join(", ")),
        format!("players: {}", plan.players),
    ];
    header.extend(plan.sets.iter().map(|s| format!("set: {s}")));
    let path = dir.join(record_file_name(games, r.index));
    std::fs::write(&path, record.to_text(&header)).map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

/// The parameter overrides in force, as a designer would type them.
pub fn sets_text(sets: &[String]) -> String {
    if sets.is_empty() {
        "the variant's own (no --set or --params)".to_string()
    } else {
        sets.iter().map(|s| format!("--set {s}")).collect::<Vec<_>>().join(" ")
    }
}

/// Why a summary has no first-player figure: it counts decided games
/// only, and either none was decided, or in none of them did a seat play
/// turn 1 alone (rounds: `start_turns(-1)`).
pub fn no_first_player_figure(s: &Summary) -> &'static str {
    if s.draws.count == s.games {
        "no game was decided: the figure counts decided games only"
    } else {
        "no decided game had an active seat in its first turn"
    }
}

/// What a summary says of the decisions its bots took on loose worlds
/// (none when every decision found a world that fits what its seat saw):
/// the same words in `simulate`, `compare` and the report.
pub fn loose_worlds_text(s: &Summary) -> Option<String> {
    (s.loose_decisions > 0).then(|| {
        format!(
            "{} decision(s) in {} game(s): a bot found no world that fits what its seat had seen, and decided on loose ones",
            s.loose_decisions, s.loose_worlds.count
        )
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn rate(r: &Rate) -> String {
    format!("{:>6} [{}, {}]", pct(r.rate), pct(r.low), pct(r.high))
}

fn print_summary(s: &Summary) {
    crate::outln!(
        "\n{:<10} {:>6} {:>6} {:>6}   win rate [95% CI]",
        "seat",
        "wins",
        "draws",
        "losses"
    );
    for seat in &s.seats {
        crate::outln!(
            "{:<10} {:>6} {:>6} {:>6}   {}",
            seat.seat,
            seat.wins.count,
            seat.draws,
            seat.losses,
            rate(&seat.wins)
        );
    }
    crate::outln!("\n{:<10} {:>6} {:>6}   win rate [95% CI]", "bot", "seats", "wins");
    for b in &s.bots {
        crate::outln!("{:<10} {:>6} {:>6}   {}", b.bot, b.wins.of, b.wins.count, rate(&b.wins));
    }
    print_scores(s);
    crate::outln!("\ndraws          {} ({} games)", rate(&s.draws), s.draws.count);
    crate::outln!("decisiveness   {}", pct(s.decisiveness));
    if s.first_player.of == 0 {
        crate::outln!("first player   - ({})", no_first_player_figure(s));
    } else {
        crate::outln!(
            "first player   {} (fair share {}, advantage {:+.1} points)",
            rate(&s.first_player),
            pct(1.0 / s.players as f64),
            100.0 * s.first_player_advantage
        );
    }
    crate::outln!("balance        {:.2} (1 = every seat wins equally often)", s.balance);
    if let Some(text) = loose_worlds_text(s) {
        crate::outln!("no world       {text} (docs/simulation.md)");
    }
    for (name, d) in [("turns", &s.turns), ("decisions", &s.decisions)] {
        crate::outln!(
            "{name:<14} mean {:.1}, median {:.0}, sd {:.1}, 10%-90% {:.0}-{:.0}, range {:.0}-{:.0}",
            d.mean,
            d.median,
            d.stdev,
            d.p10,
            d.p90,
            d.min,
            d.max
        );
    }
    if !s.counters.is_empty() {
        crate::outln!("\ncounters (per game, and share of games where they happened):");
        for c in &s.counters {
            crate::outln!(
                "  {:<28} {:>7.2}  {:>6}  {}",
                c.name,
                c.per_game,
                pct(c.games as f64 / s.games.max(1) as f64),
                c.doc
            );
        }
    }
    for (label, values) in &s.labels {
        let list: Vec<String> = values.iter().map(|(v, n)| format!("{v} {n}")).collect();
        crate::outln!("{label}: {}", list.join(", "));
    }
    if !s.card_labels.is_empty() {
        crate::outln!(
            "\n{:<20} {:<12} {:>6} {:>6}   rate [95% CI]",
            "label",
            "card",
            "games",
            "named"
        );
        for c in &s.card_labels {
            crate::outln!(
                "{:<20} {:<12} {:>6} {:>6}   {}",
                c.label,
                c.card,
                c.wins.of,
                c.wins.count,
                rate(&c.wins)
            );
        }
    }
}

/// The variant's `[scores]`: mean score per seat and per bot with its 95%
/// interval, and the margin of victory (nothing without scores).
fn print_scores(s: &Summary) {
    if s.scores.is_empty() {
        return;
    }
    crate::outln!(
        "\n{:<10} {:>6}   mean score [95% CI]          sd   range",
        "score",
        "games"
    );
    for x in s.scores.iter().chain(&s.bot_scores) {
        crate::outln!(
            "{:<10} {:>6}   {:>+8.2} [{:+.2}, {:+.2}]   {:>6.2}   {}..{}",
            x.who,
            x.games,
            x.mean,
            x.low,
            x.high,
            x.stdev,
            x.min,
            x.max
        );
    }
    if let Some(m) = &s.margins {
        crate::outln!(
            "margin         mean {:.2}, median {:.0}, 10%-90% {:.0}-{:.0}, range {:.0}-{:.0} (best score minus second best)",
            m.mean,
            m.median,
            m.p10,
            m.p90,
            m.min,
            m.max
        );
        let most = m.histogram.iter().map(|h| h.2).max().unwrap_or(1).max(1);
        for (low, high, n) in &m.histogram {
            if *n == 0 {
                continue;
            }
            let label = if high - low <= 1.0 {
                format!("{low:.0}")
            } else {
                format!("{low:.0}-{:.0}", high - 1.0)
            };
            let bar = "#".repeat(((40 * n).div_ceil(most)) as usize);
            crate::outln!("  {label:>9} {n:>7}  {bar}");
        }
    }
}

/// A figure compared game by game: what is scored in each game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Score {
    /// Whether this seat won.
    Seat(usize),
    /// The share of this bot's seats that won, in games it plays.
    Bot(String),
    Draw,
    /// Whether the first player won, in games with both.
    First,
    Turns,
    Decisions,
    /// The counter at this index (the same name on both sides).
    Counter(usize),
    /// This seat's final score (when both sides declare `[scores]`).
    Points(usize),
}

/// One paired figure and its sums so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub score: Score,
    pub paired: Paired,
}

/// The paired figures of a comparison, in the order they are printed.
fn figures(players: usize, bots: &[String], a: &Variant, b: &Variant) -> Vec<Figure> {
    let mut names: Vec<String> = bots.to_vec();
    names.sort();
    names.dedup();
    let mut scores: Vec<Score> = (0..players).map(Score::Seat).collect();
    scores.extend(names.into_iter().map(Score::Bot));
    if a.scores.is_some() && b.scores.is_some() {
        scores.extend((0..players).map(Score::Points));
    }
    scores.extend([Score::Draw, Score::First, Score::Turns, Score::Decisions]);
    for (i, (name, _)) in a.stats.iter().enumerate() {
        if b.stats.get(i).is_some_and(|(n, _)| n == name) {
            scores.push(Score::Counter(i));
        }
    }
    scores
        .into_iter()
        .map(|score| Figure {
            score,
            paired: Paired::default(),
        })
        .collect()
}

/// Scores are whole numbers: every per-game score times this (the least
/// common multiple of 1..=players), so a bot's share of 1/3 is exact.
fn scale(players: usize) -> i64 {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    (1..=players as i64).fold(1, |l, k| l / gcd(l, k) * k)
}

impl Score {
    /// This game's score, times `scale`; none where it does not apply.
    fn of(&self, r: &GameResult, scale: i64) -> Option<i64> {
        let flag = |yes: bool| if yes { scale } else { 0 };
        match self {
            Score::Seat(s) => Some(flag(r.winner == Some(*s))),
            Score::Bot(name) => {
                let seats = r.bots.iter().filter(|b| *b == name).count() as i64;
                let won = r.winner.is_some_and(|w| r.bots.get(w) == Some(name));
                (seats > 0).then(|| flag(won) / seats)
            }
            Score::Draw => Some(flag(r.winner.is_none())),
            Score::First => r.first.zip(r.winner).map(|(f, w)| flag(f == w)),
            Score::Turns => Some(r.turns as i64 * scale),
            Score::Decisions => Some(r.decisions as i64 * scale),
            Score::Counter(i) => Some(r.stats.get(*i).map_or(0, |(_, v)| *v) * scale),
            Score::Points(s) => r.scores.get(*s).map(|v| v * scale),
        }
    }

    /// The name `--sprt` takes.
    fn key(&self, counters: &[(String, String)]) -> String {
        match self {
            Score::Seat(s) => format!("P{}", s + 1),
            Score::Bot(b) => format!("bot:{b}"),
            Score::Draw => "draws".into(),
            Score::First => "first".into(),
            Score::Turns => "turns".into(),
            Score::Decisions => "decisions".into(),
            Score::Counter(i) => counters.get(*i).map_or("?".into(), |c| c.0.clone()),
            Score::Points(s) => format!("score:P{}", s + 1),
        }
    }
}

/// What identifies a comparison; the shards of one carry equal ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRun {
    pub variant_a: String,
    pub set_a: Vec<String>,
    pub variant_b: String,
    pub set_b: Vec<String>,
    pub players: usize,
    pub bots: Vec<String>,
    pub rotate: bool,
    pub seed: u64,
    pub games: u64,
}

/// What `compare --shard` prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompareShard {
    pub shard: Shard,
    pub run: CompareRun,
    pub counters_a: Vec<(String, String)>,
    pub counters_b: Vec<(String, String)>,
    pub tally_a: Tally,
    pub tally_b: Tally,
    pub figures: Vec<Figure>,
}

/// How a sequential test ended.
pub struct SprtOutcome {
    pub key: String,
    pub test: Sprt,
    pub verdict: Verdict,
    pub llr: (f64, f64),
}

pub fn compare(args: CompareArgs) -> Result<(), Failure> {
    check_outputs(&args.run, None, None)?;
    let sets_a: Vec<String> = args.set.iter().chain(&args.set_a).cloned().collect();
    let sets_b: Vec<String> = args.set.iter().chain(&args.set_b).cloned().collect();
    // Both rule sets on one engine, decided (and built) together.
    let load = |path: &Path, set: &[String]| {
        let v = VariantArgs {
            set: set.to_vec(),
            ..VariantArgs::default()
        };
        crate::common::load_variant(path, &v)
    };
    let (va, vb) = (load(&args.variant_a, &sets_a)?, load(&args.variant_b, &sets_b)?);
    if !related(&va, &vb) {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "warning: {} and {} share no variant file (neither extends the other, nor do they extend a common \
             parent): the differences are between two games, not a rule change",
            args.variant_a.display(),
            args.variant_b.display()
        );
    }
    crate::engine::prepare(&[&va, &vb])?;
    let a = Plan::new(&args.variant_a, sets_a.clone(), &args.run)?;
    let b = Plan::new(&args.variant_b, sets_b.clone(), &args.run)?;
    if a.players != b.players {
        return Err(Failure::usage(
            "both variants must be played with the same number of players (--players)",
        ));
    }
    let run = CompareRun {
        variant_a: args.variant_a.display().to_string(),
        set_a: sets_a,
        variant_b: args.variant_b.display().to_string(),
        set_b: sets_b,
        players: a.players,
        bots: args.run.bots.clone(),
        rotate: args.run.rotate,
        seed: args.run.seed,
        games: args.run.games,
    };
    let mut figs = figures(a.players, &args.run.bots, &a.variant, &b.variant);
    let sprt = match &args.sprt {
        None => None,
        Some(key) => {
            let i = figs
                .iter()
                .position(|f| f.score.key(&a.variant.stats) == *key)
                .ok_or_else(|| {
                    let keys: Vec<String> = figs.iter().map(|f| f.score.key(&a.variant.stats)).collect();
                    Failure::usage(format!("--sprt {key}: expected one of {}", keys.join(", ")))
                })?;
            let delta = args.sprt_delta.unwrap_or(0.0);
            if !(delta > 0.0 && delta.is_finite()) {
                return Err(Failure::usage("--sprt-delta must be a number above 0"));
            }
            for (name, p) in [("--alpha", args.alpha), ("--beta", args.beta)] {
                if !(p > 0.0 && p < 0.5) {
                    return Err(Failure::usage(format!("{name} must be between 0 and 0.5, not {p}")));
                }
            }
            let test = Sprt {
                delta: delta * scale(a.players) as f64,
                alpha: args.alpha,
                beta: args.beta,
            };
            Some((i, key.clone(), test))
        }
    };
    let range = args.run.shard.map_or(0..args.run.games, |s| s.range(args.run.games));
    let pool = pool(&args.run, range.end - range.start)?;
    // A sequential test stops early: play in small chunks then.
    let size = if sprt.is_some() {
        16 * pool.current_num_threads() as u64
    } else {
        CHUNK
    };
    let progress = Progress::new(&args.run, 2 * (range.end - range.start), "compare");
    let (mut ta, mut tb) = (Tally::new(a.players, a.counters()), Tally::new(b.players, b.counters()));
    let mut rows = match &args.run.rows {
        Some(p) => Some(Rows::create(p, Columns::of(&[&a.variant, &b.variant]))?),
        None => None,
    };
    let unit = scale(a.players);
    let mut verdict = Verdict::Open;
    'games: for chunk in chunks(range, size) {
        // The same seeds on both sides: differences come from the rules.
        let ra = a.play_chunk(&pool, &args.run, chunk.clone(), false, "compare", &progress)?;
        let rb = b.play_chunk(&pool, &args.run, chunk, false, "compare", &progress)?;
        for (x, y) in ra.iter().zip(&rb) {
            ta.add(x);
            tb.add(y);
            for f in &mut figs {
                if let (Some(sa), Some(sb)) = (f.score.of(x, unit), f.score.of(y, unit)) {
                    f.paired.add(sa, sb);
                }
            }
            if let Some(rows) = rows.as_mut() {
                rows.write(x, &a.variant, Some("A"))?;
                rows.write(y, &b.variant, Some("B"))?;
            }
            if let Some((i, _, test)) = &sprt {
                verdict = test.verdict(&figs[*i].paired);
                if verdict != Verdict::Open {
                    break 'games;
                }
            }
        }
    }
    progress.finish();
    rows.map_or(Ok(()), Rows::finish)?;
    if let Some(shard) = args.run.shard {
        let part = CompareShard {
            shard,
            run,
            counters_a: a.variant.stats.clone(),
            counters_b: b.variant.stats.clone(),
            tally_a: ta,
            tally_b: tb,
            figures: figs,
        };
        crate::outln!("{}", json!({ "compare_shard": part }));
        return Ok(());
    }
    let outcome = sprt.map(|(i, key, test)| SprtOutcome {
        llr: test.llr(&figs[i].paired),
        key,
        test,
        verdict,
    });
    let skill = if args.skill.is_empty() {
        None
    } else {
        let ladder = |variant: &str, set: &[String]| crate::ladder::LadderRun {
            variant: variant.to_string(),
            bots: args.skill.clone(),
            games_per_pair: args.skill_games,
            seed: args.run.seed,
            set: set.to_vec(),
        };
        let settings = crate::ladder::LadderArgs {
            games: args.skill_games,
            seed: args.run.seed,
            jobs: args.run.jobs,
            bounds: args.run.bounds.clone(),
        };
        Some(crate::ladder::compare_skill(
            (&a.variant, &ladder(&run.variant_a, &run.set_a)),
            (&b.variant, &ladder(&run.variant_b, &run.set_b)),
            &settings,
        )?)
    };
    print_comparison(
        &run,
        (&ta, &a.variant.stats),
        (&tb, &b.variant.stats),
        &figs,
        outcome.as_ref(),
        skill.as_ref(),
        args.run.json,
    );
    Ok(())
}

/// Prints a comparison: the JSON object (the same bytes for a run and for
/// its merged shards) or the text.
pub fn print_comparison(
    run: &CompareRun,
    (ta, docs_a): (&Tally, &[(String, String)]),
    (tb, docs_b): (&Tally, &[(String, String)]),
    figs: &[Figure],
    sprt: Option<&SprtOutcome>,
    skill: Option<&(SkillDepth, SkillDepth)>,
    json: bool,
) {
    let (sa, sb) = (Summary::of_tally(ta, docs_a), Summary::of_tally(tb, docs_b));
    let rows = comparison_rows(&sa, &sb, figs);
    let unit = scale(run.players) as f64;
    let sprt_json = sprt.map(|o| {
        let (low, high) = o.test.bounds();
        json!({
            "metric": o.key,
            "delta": o.test.delta / unit,
            "alpha": o.test.alpha,
            "beta": o.test.beta,
            "decision": match o.verdict {
                Verdict::Open => "undecided",
                Verdict::Higher => "B higher",
                Verdict::Lower => "B lower",
                Verdict::Same => "no difference",
            },
            "games": ta.games,
            "llr": [o.llr.0, o.llr.1],
            "bounds": [low, high],
        })
    });
    if json {
        let mut j = json!({
            "a": { "variant": run.variant_a, "set": run.set_a, "summary": sa },
            "b": { "variant": run.variant_b, "set": run.set_b, "summary": sb },
            "games": ta.games,
            "seed": run.seed,
            "bots": run.bots,
            "differences": rows.iter().map(|r| json!({
                "metric": r.metric, "a": r.a, "b": r.b, "difference": r.b - r.a, "p": r.p, "significant": r.p < 0.05,
            })).collect::<Vec<_>>(),
        });
        if let Some(s) = sprt_json {
            j["sprt"] = s;
        }
        if let Some((da, db)) = skill {
            j["skill_depth"] = json!({ "a": da, "b": db, "difference": db.spread - da.spread });
        }
        crate::outln!("{j}");
        return;
    }
    let side = |p: &str, sets: &[String]| {
        if sets.is_empty() {
            p.to_string()
        } else {
            format!("{p} --set {}", sets.join(" --set "))
        }
    };
    crate::outln!("A: {}", side(&run.variant_a, &run.set_a));
    crate::outln!("B: {}", side(&run.variant_b, &run.set_b));
    crate::outln!(
        "{} games each, {} players, bots {}, the same seeds on both sides (seed {})\n",
        ta.games,
        run.players,
        run.bots.join(","),
        run.seed
    );
    crate::outln!("{:<34} {:>10} {:>10} {:>10} {:>8}", "", "A", "B", "B - A", "p");
    for r in &rows {
        let fmt = |x: f64| if r.percent { pct(x) } else { format!("{x:.2}") };
        let diff = if r.percent {
            format!("{:+.1}", 100.0 * (r.b - r.a))
        } else {
            format!("{:+.2}", r.b - r.a)
        };
        crate::outln!(
            "{:<34} {:>10} {:>10} {:>10} {:>8.3}{}",
            r.metric,
            fmt(r.a),
            fmt(r.b),
            diff,
            r.p,
            if r.p < 0.05 { "  significant" } else { "" }
        );
    }
    crate::outln!("\nsignificant: p < 0.05 (two-sided, paired over the games of the same seed)");
    for (side, s) in [("A", &sa), ("B", &sb)] {
        if let Some(text) = loose_worlds_text(s) {
            crate::outln!("no world ({side})   {text} (docs/simulation.md)");
        }
    }
    if let Some(o) = sprt {
        let said = match o.verdict {
            Verdict::Open => format!("undecided after {} games (the most --games allows)", ta.games),
            Verdict::Higher => format!(
                "B is higher by {} or more, decided after {} games",
                o.test.delta / unit,
                ta.games
            ),
            Verdict::Lower => format!(
                "B is lower by {} or more, decided after {} games",
                o.test.delta / unit,
                ta.games
            ),
            Verdict::Same => format!(
                "no difference as large as {}, decided after {} games",
                o.test.delta / unit,
                ta.games
            ),
        };
        crate::outln!(
            "sequential test on {} (alpha {}, beta {}): {said}",
            o.key,
            o.test.alpha,
            o.test.beta
        );
    }
    if let Some((da, db)) = skill {
        crate::outln!("{}", crate::ladder::skill_change(da, db));
    }
}

/// One line of a comparison.
pub struct Row {
    pub metric: String,
    pub a: f64,
    pub b: f64,
    pub p: f64,
    pub percent: bool,
}

/// The rows of a comparison: each figure of both summaries, with the
/// p-value of its paired test over the games of the same seed.
fn comparison_rows(sa: &Summary, sb: &Summary, figs: &[Figure]) -> Vec<Row> {
    let mut rows = Vec::new();
    for f in figs {
        let p = f.paired.p();
        let (metric, a, b, percent) = match &f.score {
            Score::Seat(s) => (
                format!("{} wins", sa.seats[*s].seat),
                sa.seats[*s].wins.rate,
                sb.seats[*s].wins.rate,
                true,
            ),
            Score::Bot(name) => {
                let rate = |s: &Summary| s.bots.iter().find(|x| x.bot == *name).map(|x| x.wins.rate);
                let (Some(a), Some(b)) = (rate(sa), rate(sb)) else {
                    continue;
                };
                (format!("bot {name} wins"), a, b, true)
            }
            Score::Draw => ("draws".into(), sa.draws.rate, sb.draws.rate, true),
            Score::First => (
                "first player wins".into(),
                sa.first_player.rate,
                sb.first_player.rate,
                true,
            ),
            Score::Turns => ("turns (mean)".into(), sa.turns.mean, sb.turns.mean, false),
            Score::Decisions => ("decisions (mean)".into(), sa.decisions.mean, sb.decisions.mean, false),
            Score::Counter(i) => {
                let (Some(c), Some(d)) = (sa.counters.get(*i), sb.counters.get(*i)) else {
                    continue;
                };
                (format!("{} per game", c.name), c.per_game, d.per_game, false)
            }
            Score::Points(s) => {
                let (Some(c), Some(d)) = (sa.scores.get(*s), sb.scores.get(*s)) else {
                    continue;
                };
                (format!("{} score (mean)", c.who), c.mean, d.mean, false)
            }
        };
        rows.push(Row {
            metric,
            a,
            b,
            p,
            percent,
        });
    }
    rows
}
