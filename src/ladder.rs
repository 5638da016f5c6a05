//! `rulesmith ladder`: a round robin between bots, fitted into ratings,
//! and the skill depth a designer reads off them.
//!
//! Every pair of bots plays `--games` games head to head, seats swapped
//! every game. Game `i` of the whole ladder is seeded from `--seed` and
//! `i`, and the scores are added in game order, so the ratings are the
//! same whatever `--jobs` is; `--shard i/n` plays one block of the games
//! and `rulesmith merge` adds the shards up.

use crate::common::{load_game, BoundArgs, VariantArgs};
use crate::simulate::{parse_shard, Shard};
use crate::Failure;
use rayon::prelude::*;
use rulesmith_core::{rng, Variant};
use rulesmith_lab::rating::{self, Rating, Results, SkillDepth};
use rulesmith_lab::sim;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// The bots, comma-separated, weakest first by habit: the first is the
    /// anchor (rating 0), normally `random`.
    #[arg(long, value_delimiter = ',', default_value = "random,greedy,mcts")]
    pub bots: Vec<String>,
    #[command(flatten)]
    pub ladder: LadderArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write a self-contained HTML page with the ratings chart.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Play only shard I of N (1-based); prints a JSON part for `rulesmith merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub common: VariantArgs,
}

/// Options shared by `ladder` and `compare --skill`.
#[derive(clap::Args, Clone)]
pub struct LadderArgs {
    /// Games per pair of bots (seats swapped every game).
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..))]
    pub games: u64,
    /// Seed of the whole ladder.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores). The result does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    #[command(flatten)]
    pub bounds: BoundArgs,
}

/// What identifies a ladder; the shards of one carry equal ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderRun {
    pub variant: String,
    pub bots: Vec<String>,
    pub games_per_pair: u64,
    pub seed: u64,
    pub set: Vec<String>,
}

/// What `ladder --shard` prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct LadderShard {
    pub shard: Shard,
    pub run: LadderRun,
    pub title: String,
    pub results: Results,
}

impl LadderRun {
    fn pairs(&self) -> Vec<(usize, usize)> {
        let n = self.bots.len();
        (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).collect()
    }

    fn total_games(&self) -> u64 {
        self.pairs().len() as u64 * self.games_per_pair
    }

    /// The two bots of game `i` in seat order, as indices into `bots`.
    fn seats(&self, i: u64) -> (usize, usize) {
        let (a, b) = self.pairs()[(i / self.games_per_pair) as usize];
        if (i % self.games_per_pair) % 2 == 0 {
            (a, b)
        } else {
            (b, a)
        }
    }
}

/// Checks the bots and the game before any game is played.
fn check(variant: &Variant, bots: &[String]) -> Result<(), Failure> {
    if bots.len() < 2 {
        return Err(Failure::usage("--bots: a ladder needs at least two bots"));
    }
    for (i, b) in bots.iter().enumerate() {
        rulesmith_lab::bot::from_spec(b, 0).map_err(Failure::usage)?;
        if bots[..i].contains(b) {
            return Err(Failure::usage(format!(
                "--bots: '{b}' is listed twice (each bot of a ladder is rated once)"
            )));
        }
    }
    let p = variant.players;
    if p.min > 2 || p.max < 2 {
        return Err(Failure::usage(format!(
            "ladder plays bots head to head, two players a game; variant '{}' takes {} to {} players",
            variant.name, p.min, p.max
        )));
    }
    Ok(())
}

/// Plays the ladder's games at `range` and adds up what each pair scored.
pub fn play(
    variant: &Arc<Variant>,
    run: &LadderRun,
    args: &LadderArgs,
    range: std::ops::Range<u64>,
) -> Result<Results, Failure> {
    let pool = crate::common::pool(args.jobs, range.end - range.start)?;
    let max = args.bounds.max_decisions_for(variant);
    let scored: Vec<Result<(usize, usize, f64), Failure>> = pool.install(|| {
        range
            .into_par_iter()
            .map_init(
                || crate::engine::game(variant.clone(), crate::engine::current()),
                |game, i| {
                    let game = game.as_ref().map_err(|e| Failure::input(e.clone()))?;
                    let (first, second) = run.seats(i);
                    let bots = vec![run.bots[first].clone(), run.bots[second].clone()];
                    let seed = rng::derive(run.seed, i);
                    let r = sim::play_game(game, &bots, i, seed, false, max).map_err(|f| {
                        Failure::input(format!(
                            "{}: ladder game {} (seed {seed}, bots {}) fails: {}",
                            run.variant,
                            i + 1,
                            bots.join(","),
                            f.error
                        ))
                    })?;
                    let first_scored = match r.winner {
                        Some(0) => 1.0,
                        Some(_) => 0.0,
                        None => 0.5,
                    };
                    Ok((first, second, first_scored))
                },
            )
            .collect()
    });
    let mut results = Results::new(run.bots.clone());
    for s in scored {
        let (a, b, x) = s?;
        results.add(a, b, x);
    }
    Ok(results)
}

pub fn run(args: Args) -> Result<(), Failure> {
    let sets = crate::common::all_sets(&args.common)?;
    let game = load_game(
        &args.variant,
        &VariantArgs {
            set: sets.clone(),
            ..VariantArgs::default()
        },
    )?;
    // The bots, and that the game takes two players.
    check(game.variant(), &args.bots)?;
    if let Some(p) = &args.report {
        crate::common::writable_file("--report", p)?;
    }
    if args.shard.is_some() && args.report.is_some() {
        return Err(Failure::usage(
            "--report needs every game: give it to `rulesmith merge` with the shards' files",
        ));
    }
    let run = LadderRun {
        variant: args.variant.display().to_string(),
        bots: args.bots.clone(),
        games_per_pair: args.ladder.games,
        seed: args.ladder.seed,
        set: sets,
    };
    let total = run.total_games();
    let range = args.shard.map_or(0..total, |s| s.range(total));
    if !args.json {
        eprintln!(
            "ladder: {} games ({} pairs x {}) on {}",
            range.end - range.start,
            run.pairs().len(),
            run.games_per_pair,
            game.variant().title
        );
    }
    let start = Instant::now();
    let results = play(game.variant(), &run, &args.ladder, range)?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(shard) = args.shard {
        let part = LadderShard {
            shard,
            run,
            title: game.variant().title.clone(),
            results,
        };
        crate::outln!("{}", json!({ "ladder_shard": part }));
        return Ok(());
    }
    finish(
        &run,
        &game.variant().title,
        &results,
        args.json,
        args.report.as_deref(),
        Some(seconds),
    )
}

/// Prints (and writes the report of) a complete ladder: a whole run or its
/// merged shards.
pub fn finish(
    run: &LadderRun,
    title: &str,
    results: &Results,
    as_json: bool,
    report: Option<&Path>,
    seconds: Option<f64>,
) -> Result<(), Failure> {
    let ratings = rating::fit(results);
    let depth = rating::skill_depth(&ratings);
    if let Some(path) = report {
        std::fs::write(path, html(run, title, results, &ratings, &depth))
            .map_err(|e| Failure::input(format!("{}: cannot write report: {e}", path.display())))?;
    }
    if as_json {
        crate::outln!("{}", to_json(run, results, &ratings, &depth));
        return Ok(());
    }
    crate::outln!(
        "{title} - ladder of {} bots, {} games a pair ({} games), seed {}{}",
        run.bots.len(),
        run.games_per_pair,
        run.total_games(),
        run.seed,
        seconds.map_or(String::new(), |s| format!(" ({s:.1}s)"))
    );
    crate::outln!("parameters: {}", crate::simulate::sets_text(&run.set));
    crate::outln!();
    let width = run.bots.iter().map(|b| b.len()).max().unwrap_or(4).max(4);
    crate::outln!(
        "  {:width$}  {:>6}  {:>8}  {:>6}  {:>6}",
        "bot",
        "Elo",
        "95%",
        "score",
        "games"
    );
    let mut order: Vec<&Rating> = ratings.iter().collect();
    order.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    for r in order {
        let margin = if r.name == ratings[0].name {
            "anchor".to_string()
        } else {
            format!("±{:.0}", r.margin)
        };
        crate::outln!(
            "  {:width$}  {:>6.0}  {:>8}  {:>5.1}%  {:>6}",
            r.name,
            r.elo,
            margin,
            100.0 * r.score,
            r.games
        );
    }
    crate::outln!();
    crate::outln!("{}", skill_sentence(&ratings[0].name, &depth));
    crate::outln!();
    crate::outln!("head to head (row's score against column, wins + draws/2):");
    for (a, b) in run.pairs() {
        let n = results.games[a][b];
        crate::outln!(
            "  {} vs {}: {:.1}-{:.1} ({:.1}%)",
            run.bots[a],
            run.bots[b],
            results.score[a][b],
            results.score[b][a],
            100.0 * results.score[a][b] / n.max(1.0)
        );
    }
    Ok(())
}

/// The skill depth in a sentence a designer can read.
pub fn skill_sentence(anchor: &str, d: &SkillDepth) -> String {
    format!(
        "skill depth: {} is {:.0} ± {:.0} Elo above {anchor}, {:.1} steps of {:.0} Elo \
         (one step: the stronger side scores 76%); {} level{} of play told apart",
        d.strongest,
        d.spread,
        d.margin,
        d.steps,
        rating::STEP,
        d.levels,
        if d.levels == 1 { "" } else { "s" }
    )
}

fn to_json(run: &LadderRun, results: &Results, ratings: &[Rating], depth: &SkillDepth) -> serde_json::Value {
    let pairs: Vec<_> = run
        .pairs()
        .into_iter()
        .map(|(a, b)| {
            json!({
                "a": run.bots[a], "b": run.bots[b],
                "games": results.games[a][b],
                "a_score": results.score[a][b],
                "b_score": results.score[b][a],
            })
        })
        .collect();
    json!({
        "variant": run.variant,
        "bots": run.bots,
        "games_per_pair": run.games_per_pair,
        "seed": run.seed,
        "set": run.set,
        "ratings": ratings,
        "skill_depth": depth,
        "pairs": pairs,
    })
}

/// A self-contained page: the ratings as bars with their intervals, the
/// skill depth, and the head-to-head table.
fn html(run: &LadderRun, title: &str, results: &Results, ratings: &[Rating], depth: &SkillDepth) -> String {
    use crate::report::esc;
    let mut order: Vec<&Rating> = ratings.iter().collect();
    order.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    let low = order.iter().map(|r| r.elo - r.margin).fold(0.0f64, f64::min);
    let high = order.iter().map(|r| r.elo + r.margin).fold(1.0f64, f64::max);
    let (lw, plot, row) = (160.0, 420.0, 26.0);
    let x = |v: f64| lw + (v - low) / (high - low) * plot;
    let h = row * order.len() as f64 + 20.0;
    let mut svg = format!(r#"<svg viewBox="0 0 640 {h}" width="640" height="{h}" role="img">"#);
    for (i, r) in order.iter().enumerate() {
        let y = 10.0 + i as f64 * row;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{:.1}" y="{y}" width="{:.1}" height="14" class="bar"/><line x1="{:.1}" x2="{:.1}" y1="{}" y2="{}" class="ci"/><text x="{:.1}" y="{}">{:.0}</text>"#,
            lw - 8.0,
            y + 11.0,
            esc(&r.name),
            x(0.0).min(x(r.elo)),
            (x(r.elo) - x(0.0)).abs(),
            x(r.elo - r.margin),
            x(r.elo + r.margin),
            y + 7.0,
            y + 7.0,
            x(r.elo + r.margin) + 6.0,
            y + 11.0,
            r.elo
        );
    }
    svg.push_str("</svg>");
    let mut table = String::from("<table><tr><th></th>");
    for b in &run.bots {
        let _ = write!(table, "<th>{}</th>", esc(b));
    }
    table.push_str("</tr>");
    for (a, name) in run.bots.iter().enumerate() {
        let _ = write!(table, "<tr><th>{}</th>", esc(name));
        for b in 0..run.bots.len() {
            if a == b || results.games[a][b] == 0.0 {
                table.push_str("<td></td>");
            } else {
                let _ = write!(
                    table,
                    "<td>{:.1}%</td>",
                    100.0 * results.score[a][b] / results.games[a][b]
                );
            }
        }
        table.push_str("</tr>");
    }
    table.push_str("</table>");
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} - Rulesmith ladder</title><style>{css}</style></head><body>\
         <h1>{t}: ladder</h1><p class=\"meta\">{bots} bots, {g} games a pair, seed {seed} &middot; parameters: {sets}</p>\
         <h2>Ratings (Elo, {anchor} = 0)</h2><p>Bars: fitted rating (Bradley-Terry); whiskers: 95% interval.</p>{svg}\
         <h2>Skill depth</h2><p>{sentence}</p>\
         <h2>Head to head</h2><p>The row bot's score against the column bot (wins + draws/2).</p>{table}\
         <p class=\"meta\">Variant {v} &middot; made by rulesmith {ver}</p></body></html>\n",
        t = esc(title),
        css = crate::report::CSS,
        bots = run.bots.len(),
        g = run.games_per_pair,
        seed = run.seed,
        sets = esc(&crate::simulate::sets_text(&run.set)),
        anchor = esc(&ratings[0].name),
        sentence = esc(&skill_sentence(&ratings[0].name, depth)),
        v = esc(&run.variant),
        ver = env!("CARGO_PKG_VERSION"),
    )
}

/// `compare --skill`: the ladder of both rule sets, and how the change
/// moves the skill depth.
pub fn compare_skill(
    a: (&Arc<Variant>, &LadderRun),
    b: (&Arc<Variant>, &LadderRun),
    args: &LadderArgs,
) -> Result<(SkillDepth, SkillDepth), Failure> {
    check(a.0, &a.1.bots)?;
    check(b.0, &b.1.bots)?;
    let ra = play(a.0, a.1, args, 0..a.1.total_games())?;
    let rb = play(b.0, b.1, args, 0..b.1.total_games())?;
    Ok((
        rating::skill_depth(&rating::fit(&ra)),
        rating::skill_depth(&rating::fit(&rb)),
    ))
}

/// What a change of skill depth means, in words.
pub fn skill_change(a: &SkillDepth, b: &SkillDepth) -> String {
    let diff = b.spread - a.spread;
    let noise = (a.margin.powi(2) + b.margin.powi(2)).sqrt();
    let verdict = if diff.abs() <= noise {
        "no clear change in how much skill matters".to_string()
    } else if diff < 0.0 {
        "B makes the game more luck-driven: skill matters less".to_string()
    } else {
        "B makes skill matter more".to_string()
    };
    format!(
        "skill depth: A {:.1} steps ({:.0} ± {:.0} Elo), B {:.1} steps ({:.0} ± {:.0} Elo); B - A {:+.0} Elo: {verdict}",
        a.steps, a.spread, a.margin, b.steps, b.spread, b.margin, diff
    )
}
