//! `rulesmith tune`: searches a variant's parameters for the values that
//! meet a designer's targets (the search is `rulesmith_lab::tune`; this
//! file reads the flags, plays the games on `--jobs` threads and prints the
//! answer). Game `i` of every candidate has the seed `derive(--seed, i)`,
//! as game `i` of `simulate --seed` has, and results come back in game
//! order, so the answer depends on the seed and the budget only. With
//! `--shard`, each call plays this shard's block of the games and swaps
//! results with the other shards through `--shard-dir` (`tune/shard.rs`).

mod shard;

use crate::common::{load_variant, BoundArgs, VariantArgs};
use crate::simulate::Shard;
use crate::Failure;
use rayon::prelude::*;
use rulesmith_core::{rng, Game, Variant};
use rulesmith_lab::sim::{self, GameResult};
use rulesmith_lab::tune::{self, Candidate, Method, Outcome, Space, Target, TuneError};
use serde_json::json;
use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// A parameter to search: NAME (its declared min..max, or false/true),
    /// NAME=LO..HI (narrowed), or NAME=V1,V2,... (these values); repeatable.
    #[arg(long = "param", id = "tuned", value_name = "NAME[=LO..HI]", required = true)]
    pub tuned: Vec<String>,
    /// What the figures should be: PATH = V (within its interval), PATH in
    /// LO..HI, PATH < V or PATH > V, optionally @WEIGHT; PATH is a figure
    /// of `simulate --json`'s summary (first_player_advantage, turns.mean,
    /// draws.rate, seats.0.wins.rate...) or label:NAME=VALUE; repeatable.
    #[arg(long = "target", value_name = "EXPR", required = true)]
    pub targets: Vec<String>,
    /// The most games played, all candidates together.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// Bot of each seat, comma-separated (the list repeats over the seats).
    #[arg(long, value_delimiter = ',', default_value = "greedy")]
    pub bots: Vec<String>,
    /// Number of players (default: the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    /// Seed of the run: of the games (as simulate's) and of the search.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores). The answer does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How to search: auto (bisect when it applies, else race, else
    /// NTBEA), race (every candidate), bisect (one whole-number parameter
    /// and one PATH = V target), ntbea (NTBEA, then a race of its best).
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Play only shard I of N (1-based) of every round's games; the shards
    /// of one run meet in --shard-dir and all print the same answer.
    #[arg(long, value_name = "I/N", value_parser = crate::simulate::parse_shard, requires = "shard_dir")]
    pub shard: Option<Shard>,
    /// The folder the shards of a run share (a network folder across
    /// machines): each writes its games there and reads the others'.
    #[arg(long, value_name = "DIR", requires = "shard")]
    pub shard_dir: Option<PathBuf>,
    /// Seconds a shard waits for another's games before giving up.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub shard_timeout: u64,
    /// Also write a self-contained HTML report with the sensitivity charts.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub bounds: BoundArgs,
    /// Fixed overrides (not searched), as simulate takes them.
    #[command(flatten)]
    pub common: VariantArgs,
}

/// `--method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    Auto,
    Race,
    Bisect,
    Ntbea,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        match m {
            MethodArg::Auto => Method::Auto,
            MethodArg::Race => Method::Race,
            MethodArg::Bisect => Method::Bisect,
            MethodArg::Ntbea => Method::Ntbea,
        }
    }
}

/// Candidates shown after the best.
const RUNNERS_UP: usize = 5;

pub fn run(args: Args) -> Result<(), Failure> {
    let targets = args
        .targets
        .iter()
        .map(|t| Target::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    if let Some(p) = &args.report {
        crate::common::writable_file("--report", p)?;
    }
    let base = load_variant(&args.variant, &args.common)?;
    let space = Space::new(&base, &args.tuned).map_err(usage)?;
    if args.bots.is_empty() {
        return Err(Failure::usage("--bots needs at least one bot"));
    }
    for b in &args.bots {
        rulesmith_lab::bot::from_spec(b, 0).map_err(Failure::usage)?;
    }
    let engine = crate::engine::prepare(&[&base])?;
    let probe = crate::engine::game(base.clone(), engine).map_err(Failure::input)?;
    let players = crate::common::players(&probe, args.players)?;
    drop(probe);
    let fixed = crate::common::all_sets(&args.common)?;
    let base = Arc::new(base);
    let bots: Vec<String> = (0..players).map(|s| args.bots[s % args.bots.len()].clone()).collect();
    let max = args.bounds.max_decisions_for(&base);
    let pool = crate::common::pool(args.jobs, u64::MAX)?;
    let settings = tune::Settings {
        budget: args.budget,
        seed: args.seed,
        counters: base.stats.clone(),
        players,
        method: args.method.into(),
    };
    let mut meeting = match (args.shard, &args.shard_dir) {
        (Some(shard), Some(dir)) => {
            // Everything that decides the run's games and choices.
            let flags = format!(
                "{} {:?} {:?} {} {:?} {players} {} {:?} {:?} {:?}",
                base.name, args.tuned, args.targets, args.budget, bots, args.seed, args.method, fixed, max
            );
            let identity = shard::identity(&base, &flags);
            Some(shard::Meeting::new(shard, dir, args.shard_timeout, &identity)?)
        }
        _ => None,
    };
    let start = Instant::now();
    let mut play = |cands: &[Candidate], games: std::ops::Range<u64>| -> Result<Vec<Vec<GameResult>>, TuneError> {
        let variants = cands
            .iter()
            .map(|c| with_sets(&base, &space.sets(c)).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(TuneError::Play)?;
        let sets: Vec<Vec<String>> = cands.iter().map(|c| space.sets(c)).collect();
        // A shard plays its block of the games (as simulate's shards do),
        // then swaps results with the others through the shared folder.
        let call = meeting.as_mut().map_or(0, |m| m.next_call());
        let mine = match &meeting {
            Some(m) => {
                if let Some(done) = m.played_before(call, &sets, &games)? {
                    return m.gather(call, &sets, &games, done);
                }
                m.mine(&games)
            }
            None => games.clone(),
        };
        let work: Vec<(usize, u64)> = (0..cands.len())
            .flat_map(|k| mine.clone().map(move |i| (k, i)))
            .collect();
        let results: Vec<Result<GameResult, String>> = pool.install(|| {
            work.into_par_iter()
                .map_init(HashMap::<usize, Result<Game, String>>::new, |games, (k, i)| {
                    let game = games
                        .entry(k)
                        .or_insert_with(|| crate::engine::game(variants[k].clone(), engine))
                        .as_ref()
                        .map_err(|e| e.clone())?;
                    let seed = rng::derive(args.seed, i);
                    sim::play_game(game, &bots, i, seed, false, max).map_err(|f| {
                        format!(
                            "{}: game {} (seed {seed}) with --set {} fails: {f}\n(replay it: rulesmith simulate {} --set {} \
                             --bots {} --seed {} --games {})",
                            args.variant.display(),
                            i + 1,
                            space.sets(&cands[k]).join(" --set "),
                            args.variant.display(),
                            space.sets(&cands[k]).join(" --set "),
                            args.bots.join(","),
                            args.seed,
                            i + 1
                        )
                    })
                })
                .collect()
        });
        let mut out: Vec<Vec<GameResult>> = vec![Vec::new(); cands.len()];
        let per = mine.end - mine.start;
        for (n, r) in results.into_iter().enumerate() {
            out[n / per as usize].push(r.map_err(TuneError::Play)?);
        }
        match &meeting {
            Some(m) => {
                m.write(call, &sets, &games, &out)?;
                m.gather(call, &sets, &games, out)
            }
            None => Ok(out),
        }
    };
    let mut progress = |line: String| {
        let _ = writeln!(std::io::stderr(), "tune: {line}");
    };
    let outcome = tune::search(&space, &targets, &settings, &mut play, &mut progress).map_err(|e| match e {
        TuneError::Play(m) => Failure::input(m),
        TuneError::Budget { .. } => Failure::usage(e.to_string()),
        other => Failure::usage(other.to_string()),
    })?;
    let seconds = start.elapsed().as_secs_f64();
    // The last shard to finish removes the run's files; a run that failed
    // above keeps them, so that its restart replays nothing.
    if let Some(m) = &meeting {
        match m.finish() {
            Ok(0) => progress("shard done; the last shard to finish removes the run's files".into()),
            Ok(n) => progress(format!(
                "every shard done; removed the run's {n} files from --shard-dir"
            )),
            Err(e) => progress(format!("the answer stands, but {e}")),
        }
    }
    let report = Report {
        args: &args,
        space: &space,
        targets: &targets,
        fixed: &fixed,
        outcome: &outcome,
        players,
    };
    if let Some(p) = &args.report {
        std::fs::write(p, report_html(&report))
            .map_err(|e| Failure::input(format!("{}: cannot write report: {e}", p.display())))?;
    }
    if args.json {
        crate::outln!("{}", report.json());
    } else {
        report.text(seconds);
    }
    Ok(())
}

fn usage(e: TuneError) -> Failure {
    Failure::usage(e.to_string())
}

/// `base` with a candidate's overrides.
fn with_sets(base: &Variant, sets: &[String]) -> Result<Variant, String> {
    let mut v = base.clone();
    for s in sets {
        let (k, val) = s.split_once('=').expect("written as NAME=VALUE");
        v.set(k, val)?;
    }
    Ok(v)
}

/// What a run prints.
struct Report<'a> {
    args: &'a Args,
    space: &'a Space,
    targets: &'a [Target],
    /// The fixed `--set`/`--params` overrides.
    fixed: &'a [String],
    outcome: &'a Outcome,
    players: usize,
}

impl Report<'_> {
    /// `--set` flags of the fixed overrides and then `sets`.
    fn set_flags(&self, sets: &[String]) -> String {
        self.fixed.iter().chain(sets).map(|s| format!(" --set {s}")).collect()
    }

    fn common_flags(&self) -> String {
        let mut f = format!(" --bots {}", self.args.bots.join(","));
        if let Some(p) = self.args.players {
            f += &format!(" --players {p}");
        }
        f
    }

    /// The commands that confirm the answer: a simulation of the best
    /// values on fresh seeds, and a comparison of the variant's own values
    /// against them on shared seeds.
    fn confirm(&self) -> Vec<String> {
        let best = &self.outcome.ranking[0];
        let v = self.args.variant.display();
        let games = best.games.max(200);
        let mut out = vec![format!(
            "rulesmith simulate {v}{}{} --games {games} --seed {}",
            self.set_flags(&best.sets),
            self.common_flags(),
            self.args.seed.wrapping_add(1)
        )];
        let b: String = best.sets.iter().map(|s| format!(" --set-b {s}")).collect();
        let fixed: String = self.fixed.iter().map(|s| format!(" --set {s}")).collect();
        out.push(format!(
            "rulesmith compare {v} {v}{fixed}{b}{} --games {games} --seed {}",
            self.common_flags(),
            self.args.seed.wrapping_add(1)
        ));
        out
    }

    fn method(&self) -> String {
        let o = self.outcome;
        if let Some(note) = &o.note {
            note.clone()
        } else if o.ntbea_games == 0 {
            format!("every one of the {} candidates raced on shared seeds", o.space)
        } else {
            format!(
                "NTBEA over {} candidates ({} games, {} candidates measured), then its {} best raced on shared seeds",
                o.space,
                o.ntbea_games,
                o.measured,
                o.ranking.len()
            )
        }
    }

    fn json(&self) -> serde_json::Value {
        let o = self.outcome;
        let ranked = |r: &tune::Ranked| {
            json!({
                "set": r.sets,
                "games": r.games,
                "in_race": r.alive,
                "loss": r.loss,
                "figures": self.targets.iter().zip(&r.figures).map(|(t, (e, met))| json!({
                    "target": t.text, "path": t.figure, "value": e.value, "low": e.low, "high": e.high, "met": met,
                })).collect::<Vec<_>>(),
                "summary": r.summary,
            })
        };
        json!({
            "variant": self.args.variant.display().to_string(),
            "players": self.players,
            "bots": self.args.bots,
            "seed": self.args.seed,
            "budget": self.args.budget,
            "fixed": self.fixed,
            "params": self.space.dims.iter().map(|d| json!({"name": d.name, "values": d.values})).collect::<Vec<_>>(),
            "targets": self.targets.iter().map(|t| t.text.clone()).collect::<Vec<_>>(),
            "method": o.method.name(),
            "how": self.method(),
            "candidates": o.space,
            "measured": o.measured,
            "games": o.games,
            "ntbea_games": o.ntbea_games,
            "decided": o.decided,
            "meeting_every_target": o.ranking.iter().filter(|r| r.figures.iter().all(|(_, met)| *met)).count(),
            "best": ranked(&o.ranking[0]),
            "runners_up": o.ranking.iter().skip(1).take(RUNNERS_UP).map(ranked).collect::<Vec<_>>(),
            "sensitivity": o.sensitivity.iter().map(|s| json!({
                "target": self.targets[s.target].text,
                "param": self.space.dims[s.param].name,
                "spread": s.spread,
                "by_value": s.by_value.iter().map(|(v, m, n)| json!({"value": v, "mean": m, "candidates": n})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "confirm": self.confirm(),
        })
    }

    fn text(&self, seconds: f64) {
        let o = self.outcome;
        let params: Vec<String> = self
            .space
            .dims
            .iter()
            .map(|d| match (d.values.first(), d.values.last()) {
                (Some(a), Some(b)) if d.values.len() > 2 => format!("{} {a}..{b}", d.name),
                _ => format!("{} {}", d.name, d.values.join("|")),
            })
            .collect();
        crate::outln!(
            "tune {}: {} ({} candidates), bots {}, seed {}, budget {} games",
            self.args.variant.display(),
            params.join(", "),
            o.space,
            self.args.bots.join(","),
            self.args.seed,
            self.args.budget
        );
        crate::outln!("method: {}", self.method());
        crate::outln!(
            "played {} games in {seconds:.1}s; {}",
            o.games,
            if o.method == Method::Bisect {
                if o.decided {
                    "every comparison was decided".to_string()
                } else {
                    "the budget ran out before the last comparison was sure; its estimate decided".to_string()
                }
            } else if o.decided {
                "the race ended with one candidate left".to_string()
            } else {
                format!(
                    "the budget ran out with {} candidates still in the race",
                    o.ranking.iter().filter(|r| r.alive).count()
                )
            }
        );
        let meeting = o
            .ranking
            .iter()
            .filter(|r| r.figures.iter().all(|(_, met)| *met))
            .count();
        crate::outln!(
            "candidates meeting every target (by their intervals): {meeting} of the {} measured",
            o.ranking.len()
        );
        crate::outln!("\nbest:");
        self.candidate_text(&o.ranking[0], true);
        if o.ranking.len() > 1 {
            crate::outln!("\nrunners-up:");
            for r in o.ranking.iter().skip(1).take(RUNNERS_UP) {
                self.candidate_text(r, false);
            }
        }
        crate::outln!("\nsensitivity: each target's figure, averaged over the candidates measured at each value");
        for s in &o.sensitivity {
            let (lo, hi) = (s.by_value.first(), s.by_value.last());
            let ends = match (lo, hi) {
                (Some(l), Some(h)) => format!("{} at {} .. {} at {}", num(l.1), l.0, num(h.1), h.0),
                _ => "-".into(),
            };
            crate::outln!(
                "  {:<32} {:<20} spread {:<8} ({ends})",
                self.targets[s.target].figure,
                self.space.dims[s.param].name,
                num(s.spread)
            );
        }
        crate::outln!("\nconfirm it:");
        for c in self.confirm() {
            crate::outln!("  {c}");
        }
    }

    fn candidate_text(&self, r: &tune::Ranked, best: bool) {
        crate::outln!(
            "  {}  ({} games{}) loss {} [{}, {}]",
            r.sets
                .iter()
                .map(|s| format!("--set {s}"))
                .collect::<Vec<_>>()
                .join(" "),
            r.games,
            if r.alive { "" } else { ", dropped" },
            num(r.loss.value),
            num(r.loss.low),
            num(r.loss.high)
        );
        if best || self.targets.len() > 1 {
            for (t, (e, met)) in self.targets.iter().zip(&r.figures) {
                crate::outln!(
                    "    {:<40} {} [{}, {}]  {}",
                    t.text,
                    num(e.value),
                    num(e.low),
                    num(e.high),
                    if *met { "met" } else { "not met" }
                );
            }
        } else if let Some((e, met)) = r.figures.first() {
            crate::outln!(
                "    {} {} [{}, {}]  {}",
                self.targets[0].figure,
                num(e.value),
                num(e.low),
                num(e.high),
                if *met { "met" } else { "not met" }
            );
        }
    }
}

/// A figure for people: four significant decimals at most.
fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:+.4}")
    }
}

/// The HTML report of `tune --report`: the answer, the runners-up, and a
/// chart per target and parameter of the figure against the parameter's
/// values (inline SVG and CSS, as `simulate --report`'s, nothing fetched).
fn report_html(r: &Report<'_>) -> String {
    use crate::report::esc;
    use std::fmt::Write as _;
    let o = r.outcome;
    let mut body = format!(
        "<h1>Tuning {}</h1><p class=\"meta\"><code>{}</code></p><p class=\"meta\">{}; {} games played</p>",
        esc(&r.args.variant.display().to_string()),
        esc(&std::env::args().collect::<Vec<_>>().join(" ")),
        esc(&r.method()),
        o.games
    );
    body.push_str(
        "<h2>Best settings and runners-up</h2><table><tr><th>settings</th><th>games</th><th>loss [95% CI]</th>",
    );
    for t in r.targets {
        let _ = write!(body, "<th>{}</th>", esc(&t.text));
    }
    body.push_str("</tr>");
    for x in o.ranking.iter().take(RUNNERS_UP + 1) {
        let _ = write!(
            body,
            "<tr><td><code>{}</code></td><td>{}{}</td><td>{} [{}, {}]</td>",
            esc(&x.sets.join(" ")),
            x.games,
            if x.alive { "" } else { " (dropped)" },
            num(x.loss.value),
            num(x.loss.low),
            num(x.loss.high)
        );
        for (e, met) in &x.figures {
            let _ = write!(
                body,
                "<td>{} [{}, {}]{}</td>",
                num(e.value),
                num(e.low),
                num(e.high),
                if *met { " &#10003;" } else { "" }
            );
        }
        body.push_str("</tr>");
    }
    body.push_str("</table><h2>Confirm it</h2>");
    for c in r.confirm() {
        let _ = write!(body, "<p><code>{}</code></p>", esc(&c));
    }
    body.push_str(
        "<h2>Sensitivity</h2><p>Each target's figure, averaged over the candidates measured at each value of \
         a parameter; the dashed line (or band) is the goal, the vertical line the best value.</p>",
    );
    for s in &o.sensitivity {
        let target = &r.targets[s.target];
        let dim = &r.space.dims[s.param];
        let best = &dim.values[o.ranking[0].candidate[s.param]];
        let _ = write!(
            body,
            "<h3>{} against {}</h3>{}",
            esc(&target.figure),
            esc(&dim.name),
            sensitivity_chart(s, target, best)
        );
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Tuning - Rulesmith report</title><style>{}</style></head><body>{body}<p class=\"meta\">made by rulesmith {}</p></body></html>\n",
        crate::report::CSS,
        env!("CARGO_PKG_VERSION")
    )
}

/// A line of a figure's mean against a parameter's values, with the goal.
fn sensitivity_chart(s: &tune::Sensitivity, target: &Target, best: &str) -> String {
    use crate::report::esc;
    use rulesmith_lab::tune::target::Goal;
    use std::fmt::Write as _;
    let (w, h, left, bottom) = (640.0, 220.0, 60.0, 30.0);
    let goal: Vec<f64> = match target.goal {
        Goal::Equal(v) | Goal::Below(v) | Goal::Above(v) => vec![v],
        Goal::Within(lo, hi) => vec![lo, hi],
    };
    let values = s.by_value.iter().map(|v| v.1).chain(goal.iter().copied());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
    let span = (hi - lo).max(1e-9);
    let n = s.by_value.len().max(2) as f64 - 1.0;
    let x = |i: usize| left + (w - left - 20.0) * i as f64 / n;
    let y = |v: f64| 10.0 + (h - bottom - 10.0) * (hi - v) / span;
    let mut svg = format!(r#"<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">"#);
    if let [a, b] = goal[..] {
        let _ = write!(
            svg,
            r##"<rect x="{left}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#e4efe4"/>"##,
            y(b),
            w - left - 20.0,
            (y(a) - y(b)).max(1.0)
        );
    } else {
        let _ = write!(
            svg,
            r#"<line x1="{left}" x2="{0:.1}" y1="{1:.1}" y2="{1:.1}" class="ref"/>"#,
            w - 20.0,
            y(goal[0])
        );
    }
    for v in [lo, hi] {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" class="axis">{}</text>"#,
            left - 6.0,
            y(v) + 4.0,
            num(v)
        );
    }
    let points: Vec<String> = s
        .by_value
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(v.1)))
        .collect();
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#4a78b5" stroke-width="1.5"/>"##,
        points.join(" ")
    );
    let step = (s.by_value.len() / 12).max(1);
    for (i, v) in s.by_value.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" class="bar"/>"#,
            x(i),
            y(v.1)
        );
        if v.0 == best {
            let _ = write!(
                svg,
                r##"<line x1="{0:.1}" x2="{0:.1}" y1="10" y2="{1:.1}" stroke="#111"/>"##,
                x(i),
                h - bottom
            );
        }
        if i % step == 0 || v.0 == best {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="axis">{}</text>"#,
                x(i),
                h - bottom + 16.0,
                esc(&v.0)
            );
        }
    }
    svg.push_str("</svg>");
    svg
}
