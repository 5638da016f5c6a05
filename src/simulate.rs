//! `rulesmith simulate` and `rulesmith compare`: many games between bots,
//! summarized for a designer.
//!
//! Game `i` is seeded from `--seed` and `i`, and results are gathered in
//! game order before any arithmetic, so every figure is the same whatever
//! `--jobs` is.

use crate::common::{load_game, players, report_failure, BoundArgs, FailedGame, VariantArgs};
use crate::Failure;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use rulesmith_core::{rng, Variant};
use rulesmith_lab::sim::{self, GameResult, Rate, Summary};
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
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
    #[command(flatten)]
    pub bounds: BoundArgs,
}

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
                params: None,
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

    fn play_all(&self, run: &RunArgs, keep_records: bool, label: &str) -> Result<Vec<GameResult>, Failure> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(run.jobs.unwrap_or(0) as usize)
            .build()
            .map_err(|e| Failure::usage(format!("--jobs: {e}")))?;
        let bar = (!run.json && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(run.games);
            b.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} games {msg} [{elapsed_precise}]").expect("valid"),
            );
            b.set_message(label.to_string());
            b
        });
        let max = run.bounds.max_decisions;
        let results: Vec<Result<GameResult, Failed>> = pool.install(|| {
            (0..run.games)
                .into_par_iter()
                .map_init(
                    || crate::engine::game(self.variant.clone(), crate::engine::current()),
                    |game, i| {
                        let game = game.as_ref().map_err(|e| Failed::Load(e.clone()))?;
                        let seed = rng::derive(run.seed, i);
                        let bots = self.seat_bots(i, run.rotate);
                        let r = sim::play_game(game, &bots, i, seed, keep_records, max).map_err(|f| {
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
                        if let Some(b) = &bar {
                            b.inc(1);
                        }
                        r
                    },
                )
                .collect()
        });
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        // The first failing game, in game order: the same whatever --jobs is.
        results.into_iter().collect::<Result<Vec<_>, _>>().map_err(|f| match f {
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
                        command: if label.is_empty() { "simulate" } else { "compare" },
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
        })
    }

    fn summary(&self, results: &[GameResult]) -> Summary {
        Summary::of(results, self.players, &self.variant.stats)
    }
}

pub fn simulate(args: SimulateArgs) -> Result<(), Failure> {
    let plan = Plan::new(&args.variant, crate::common::all_sets(&args.common)?, &args.run)?;
    let start = Instant::now();
    let results = plan.play_all(&args.run, args.records.is_some(), "")?;
    let seconds = start.elapsed().as_secs_f64();
    let summary = plan.summary(&results);
    if let Some(dir) = &args.records {
        write_records(dir, &plan, &args.run, &results)?;
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    if let Some(path) = &args.report {
        let html = crate::report::html(&crate::report::ReportInput {
            title: &plan.variant.title,
            variant: &args.variant.display().to_string(),
            command: &command,
            sets: &plan.sets,
            summary: &summary,
        });
        std::fs::write(path, html)
            .map_err(|e| Failure::input(format!("{}: cannot write report: {e}", path.display())))?;
    }
    if args.run.json {
        let j = json!({
            "variant": args.variant.display().to_string(),
            "players": plan.players,
            "bots": args.run.bots,
            "rotate": args.run.rotate,
            "seed": args.run.seed,
            "set": plan.sets,
            "seconds": seconds,
            "summary": summary,
        });
        crate::outln!("{j}");
    } else {
        crate::outln!(
            "{} - {} games, {} players, bots {}{}, seed {} ({seconds:.1}s)",
            plan.variant.title,
            summary.games,
            plan.players,
            plan.bots.join(","),
            if args.run.rotate { " (rotating)" } else { "" },
            args.run.seed
        );
        crate::outln!("parameters: {}", sets_text(&plan.sets));
        print_summary(&summary);
        if let Some(p) = &args.report {
            crate::outln!("\nreport written to {}", p.display());
        }
        if let Some(d) = &args.records {
            crate::outln!("records written to {}", d.display());
        }
    }
    Ok(())
}

fn write_records(dir: &Path, plan: &Plan, run: &RunArgs, results: &[GameResult]) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    let width = results.len().to_string().len().max(4);
    for r in results {
        let Some(record) = &r.record else { continue };
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
        let _ = run;
        let path = dir.join(format!("game-{:0width$}.record", r.index + 1));
        std::fs::write(&path, record.to_text(&header))
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// The parameter overrides in force, as a designer would type them.
pub fn sets_text(sets: &[String]) -> String {
    if sets.is_empty() {
        "the variant's own (no --set or --params)".to_string()
    } else {
        sets.iter().map(|s| format!("--set {s}")).collect::<Vec<_>>().join(" ")
    }
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
    crate::outln!("\ndraws          {} ({} games)", rate(&s.draws), s.draws.count);
    crate::outln!("decisiveness   {}", pct(s.decisiveness));
    if s.first_player.of == 0 {
        // Rounds (start_turns(-1)): no seat plays first.
        crate::outln!("first player   - (no game had an active seat in its first turn)");
    } else {
        crate::outln!(
            "first player   {} (fair share {}, advantage {:+.1} points)",
            rate(&s.first_player),
            pct(1.0 / s.players as f64),
            100.0 * s.first_player_advantage
        );
    }
    crate::outln!("balance        {:.2} (1 = every seat wins equally often)", s.balance);
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

pub fn compare(args: CompareArgs) -> Result<(), Failure> {
    let sets_a: Vec<String> = args.set.iter().chain(&args.set_a).cloned().collect();
    let sets_b: Vec<String> = args.set.iter().chain(&args.set_b).cloned().collect();
    // Both rule sets on one engine, decided (and built) together.
    let load = |path: &Path, set: &[String]| {
        let v = VariantArgs {
            set: set.to_vec(),
            params: None,
        };
        crate::common::load_variant(path, &v)
    };
    let (va, vb) = (load(&args.variant_a, &sets_a)?, load(&args.variant_b, &sets_b)?);
    crate::engine::prepare(&[&va, &vb])?;
    let a = Plan::new(&args.variant_a, sets_a.clone(), &args.run)?;
    let b = Plan::new(&args.variant_b, sets_b.clone(), &args.run)?;
    if a.players != b.players {
        return Err(Failure::usage(
            "both variants must be played with the same number of players (--players)",
        ));
    }
    // The same seeds on both sides: differences come from the rules.
    let ra = a.play_all(&args.run, false, "A")?;
    let rb = b.play_all(&args.run, false, "B")?;
    let (sa, sb) = (a.summary(&ra), b.summary(&rb));
    let rows = comparison_rows(&sa, &sb, &ra, &rb);
    if args.run.json {
        let j = json!({
            "a": { "variant": args.variant_a.display().to_string(), "set": sets_a, "summary": sa },
            "b": { "variant": args.variant_b.display().to_string(), "set": sets_b, "summary": sb },
            "games": args.run.games,
            "seed": args.run.seed,
            "bots": args.run.bots,
            "differences": rows.iter().map(|r| json!({
                "metric": r.metric, "a": r.a, "b": r.b, "difference": r.b - r.a, "p": r.p, "significant": r.p < 0.05,
            })).collect::<Vec<_>>(),
        });
        crate::outln!("{j}");
        return Ok(());
    }
    let side = |p: &Path, sets: &[String]| {
        if sets.is_empty() {
            p.display().to_string()
        } else {
            format!("{} --set {}", p.display(), sets.join(" --set "))
        }
    };
    crate::outln!("A: {}", side(&args.variant_a, &sets_a));
    crate::outln!("B: {}", side(&args.variant_b, &sets_b));
    crate::outln!(
        "{} games each, {} players, bots {}, the same seeds on both sides (seed {})\n",
        args.run.games,
        a.players,
        args.run.bots.join(","),
        args.run.seed
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
    Ok(())
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
/// p-value of a paired test over the games of the same seed (`ra[i]` and
/// `rb[i]` share one), on one score per game.
fn comparison_rows(sa: &Summary, sb: &Summary, ra: &[GameResult], rb: &[GameResult]) -> Vec<Row> {
    let pairs: Vec<(&GameResult, &GameResult)> = ra.iter().zip(rb).collect();
    // The p-value of a per-game score over the pairs where it applies.
    let paired = |score: &dyn Fn(&GameResult) -> Option<f64>| {
        let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().filter_map(|(x, y)| Some((score(x)?, score(y)?))).unzip();
        sim::p_paired(&a, &b)
    };
    let flag = |yes: bool| if yes { 1.0 } else { 0.0 };
    let mut rows = Vec::new();
    let mut row = |metric: String, a: f64, b: f64, p: f64, percent: bool| {
        rows.push(Row {
            metric,
            a,
            b,
            p,
            percent,
        })
    };
    for (s, (x, y)) in sa.seats.iter().zip(&sb.seats).enumerate() {
        let p = paired(&|r| Some(flag(r.winner == Some(s))));
        row(format!("{} wins", x.seat), x.wins.rate, y.wins.rate, p, true);
    }
    for x in &sa.bots {
        if let Some(y) = sb.bots.iter().find(|y| y.bot == x.bot) {
            // The share of the bot's seats that won, in games where it plays.
            let share = |r: &GameResult| {
                let seats = r.bots.iter().filter(|b| **b == x.bot).count();
                let won = r.winner.is_some_and(|w| r.bots.get(w) == Some(&x.bot));
                (seats > 0).then(|| flag(won) / seats as f64)
            };
            row(
                format!("bot {} wins", x.bot),
                x.wins.rate,
                y.wins.rate,
                paired(&share),
                true,
            );
        }
    }
    let p = paired(&|r| Some(flag(r.winner.is_none())));
    row("draws".into(), sa.draws.rate, sb.draws.rate, p, true);
    // Among games with a first player and a winner on both sides.
    let first = |r: &GameResult| r.first.zip(r.winner).map(|(f, w)| flag(f == w));
    row(
        "first player wins".into(),
        sa.first_player.rate,
        sb.first_player.rate,
        paired(&first),
        true,
    );
    let p = paired(&|r| Some(r.turns as f64));
    row("turns (mean)".into(), sa.turns.mean, sb.turns.mean, p, false);
    let p = paired(&|r| Some(r.decisions as f64));
    row(
        "decisions (mean)".into(),
        sa.decisions.mean,
        sb.decisions.mean,
        p,
        false,
    );
    for (i, c) in sa.counters.iter().enumerate() {
        if let Some(d) = sb.counters.get(i).filter(|d| d.name == c.name) {
            let p = paired(&|r| Some(r.stats.get(i).map_or(0.0, |(_, v)| *v as f64)));
            row(format!("{} per game", c.name), c.per_game, d.per_game, p, false);
        }
    }
    rows
}
