//! `rulesmith merge FILES...`: the shards of one `simulate` or `compare`
//! run (`--shard i/n`, each printed as a JSON tally) added up, printed
//! exactly as the whole run prints (the JSON byte for byte).
//!
//! A shard holds counts and integer sums, never rates, so adding them is
//! exact: the merged tally is the tally of the whole run, whatever machine
//! played which shard.

use crate::simulate::{self, CompareShard, SimulateShard};
use crate::Failure;
use rulesmith_lab::sim::{Summary, Tally};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The shards' outputs (`simulate --shard i/n > FILE`), every shard of
    /// one run, in any order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write the HTML report of a merged simulation.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// One shard file, read (boxed: the two kinds differ much in size).
enum Part {
    Simulate(Box<SimulateShard>),
    Compare(Box<CompareShard>),
    Ladder(Box<crate::ladder::LadderShard>),
}

fn read(path: &Path) -> Result<Part, Failure> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    enum Any {
        #[serde(rename = "simulate_shard")]
        Simulate(Box<SimulateShard>),
        #[serde(rename = "compare_shard")]
        Compare(Box<CompareShard>),
        #[serde(rename = "ladder_shard")]
        Ladder(Box<crate::ladder::LadderShard>),
    }
    match serde_json::from_str::<Any>(text.trim()) {
        Ok(Any::Simulate(s)) => Ok(Part::Simulate(s)),
        Ok(Any::Compare(c)) => Ok(Part::Compare(c)),
        Ok(Any::Ladder(l)) => Ok(Part::Ladder(l)),
        Err(e) => Err(Failure::input(format!(
            "{}:{}:{}: not the output of `simulate --shard`, `compare --shard` or `ladder --shard`: {e}",
            path.display(),
            e.line(),
            e.column()
        ))),
    }
}

/// Checks that `shards` (index, count, file) are shards 1..=n of one run,
/// each once.
pub(crate) fn check_complete(shards: &[(u64, u64, &Path)]) -> Result<(), Failure> {
    let n = shards[0].1;
    for (_, count, file) in shards {
        if *count != n {
            return Err(Failure::input(format!(
                "{}: a shard of {count}, but {} is a shard of {n}",
                file.display(),
                shards[0].2.display()
            )));
        }
    }
    for i in 1..=n {
        let with: Vec<&Path> = shards.iter().filter(|s| s.0 == i).map(|s| s.2).collect();
        match with.len() {
            1 => {}
            0 => {
                return Err(Failure::input(format!(
                    "shard {i}/{n} is missing: give every shard's file"
                )))
            }
            _ => {
                return Err(Failure::input(format!(
                    "shard {i}/{n} is given twice: {}",
                    with.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
    }
    Ok(())
}

fn other_run(file: &Path, first: &Path) -> Failure {
    Failure::input(format!(
        "{}: a shard of another run than {} (variant, players, bots, seed, --set or --games differ)",
        file.display(),
        first.display()
    ))
}

fn add(total: &mut Tally, part: &Tally, file: &Path) -> Result<(), Failure> {
    total
        .merge(part)
        .map_err(|e| Failure::input(format!("{}: {e}", file.display())))
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(path) = &args.report {
        crate::common::writable_file("--report", path)?;
    }
    let parts: Vec<(Part, &Path)> = args
        .files
        .iter()
        .map(|f| read(f).map(|p| (p, f.as_path())))
        .collect::<Result<_, _>>()?;
    let first = parts[0].1;
    match &parts[0].0 {
        Part::Ladder(l0) => {
            let mut shards = Vec::new();
            let mut results = rulesmith_lab::rating::Results::new(l0.run.bots.clone());
            for (p, file) in &parts {
                let Part::Ladder(l) = p else {
                    return Err(other_run(file, first));
                };
                if l.run != l0.run {
                    return Err(other_run(file, first));
                }
                shards.push((l.shard.index, l.shard.count, *file));
                results.merge(&l.results);
            }
            check_complete(&shards)?;
            crate::ladder::finish(&l0.run, &l0.title, &results, args.json, args.report.as_deref(), None)
        }
        Part::Simulate(s0) => {
            let mut shards = Vec::new();
            let mut tally = Tally::new(s0.run.players, s0.counters.len());
            for (p, file) in &parts {
                let Part::Simulate(s) = p else {
                    return Err(other_run(file, first));
                };
                if s.run != s0.run || s.counters != s0.counters {
                    return Err(other_run(file, first));
                }
                shards.push((s.shard.index, s.shard.count, *file));
                add(&mut tally, &s.tally, file)?;
            }
            check_complete(&shards)?;
            let summary = Summary::of_tally(&tally, &s0.counters);
            if let Some(path) = &args.report {
                simulate::write_report(path, &s0.run, &s0.title, &summary, None)?;
            }
            simulate::print_simulation(&s0.run, &s0.title, &summary, args.json, None);
            Ok(())
        }
        Part::Compare(c0) => {
            if args.report.is_some() {
                return Err(Failure::usage("--report is for simulations, not comparisons"));
            }
            let mut shards = Vec::new();
            let mut ta = Tally::new(c0.run.players, c0.counters_a.len());
            let mut tb = Tally::new(c0.run.players, c0.counters_b.len());
            let mut figs = c0.figures.clone();
            for f in &mut figs {
                f.paired = Default::default();
            }
            for (p, file) in &parts {
                let Part::Compare(c) = p else {
                    return Err(other_run(file, first));
                };
                let same_figures =
                    c.figures.len() == figs.len() && c.figures.iter().zip(&figs).all(|(x, y)| x.score == y.score);
                if c.run != c0.run || c.counters_a != c0.counters_a || c.counters_b != c0.counters_b || !same_figures {
                    return Err(other_run(file, first));
                }
                shards.push((c.shard.index, c.shard.count, *file));
                add(&mut ta, &c.tally_a, file)?;
                add(&mut tb, &c.tally_b, file)?;
                for (f, g) in figs.iter_mut().zip(&c.figures) {
                    f.paired.merge(&g.paired);
                }
            }
            check_complete(&shards)?;
            simulate::print_comparison(
                &c0.run,
                (&ta, &c0.counters_a),
                (&tb, &c0.counters_b),
                &figs,
                None,
                None,
                args.json,
            );
            Ok(())
        }
    }
}
