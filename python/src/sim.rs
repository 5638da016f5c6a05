//! Simulations from Python: the games of one shard of a run, counted into
//! a tally (the same JSON as `rulesmith simulate --shard i/n` prints, so
//! `rulesmith merge` reads it too), and the merge of the shards into the
//! summary `rulesmith simulate --json` prints. Game `i` of a run is seeded
//! with `rng::derive(seed, i)`, so shards played anywhere add up to the
//! run played in one process. The GIL is released while games play.

use crate::game::load_variant;
use crate::{engine_game, error, Unsent};
use pyo3::prelude::*;
use rayon::prelude::*;
use rulesmith_core::rng;
use rulesmith_lab::sim::{self, GameResult, Summary, Tally};
use serde_json::{json, Value};
use std::sync::Arc;

/// Games played in parallel between two foldings into the tally.
const CHUNK: u64 = 4096;

/// The games of shard `shard_index` of `shard_count` (1-based; a
/// contiguous block of the run's `games`), as the shard's JSON tally.
#[pyfunction]
#[pyo3(signature = (variant, games, shard_index=1, shard_count=1, players=None, bots=vec!["random".to_string()], rotate=false, seed=1, sets=Vec::new(), engine="interpreted", max_decisions=20_000, jobs=None))]
#[allow(clippy::too_many_arguments)]
pub fn simulate_shard(
    py: Python<'_>,
    variant: &str,
    games: u64,
    shard_index: u64,
    shard_count: u64,
    players: Option<usize>,
    bots: Vec<String>,
    rotate: bool,
    seed: u64,
    sets: Vec<String>,
    engine: &str,
    max_decisions: u64,
    jobs: Option<usize>,
) -> PyResult<String> {
    if shard_count == 0 || shard_index == 0 || shard_index > shard_count {
        return Err(error(format!(
            "shard {shard_index} of {shard_count}: expected 1 <= shard_index <= shard_count"
        )));
    }
    if games == 0 {
        return Err(error("games must be at least 1"));
    }
    if jobs == Some(0) {
        // As `rulesmith simulate --jobs 0`: no thread would play.
        return Err(error("jobs must be at least 1 (None: every core)"));
    }
    if bots.is_empty() {
        return Err(error("bots needs at least one bot"));
    }
    for b in &bots {
        rulesmith_lab::bot::from_spec(b, 0).map_err(error)?;
    }
    let v = Arc::new(load_variant(variant, &sets)?);
    // Checks the engine and the rules once, with a Python error.
    drop(engine_game(v.clone(), engine)?);
    let n = players.unwrap_or(v.players.default);
    if n < v.players.min || n > v.players.max {
        return Err(error(format!(
            "{variant}: {n} players; this variant is played by {} to {}",
            v.players.min, v.players.max
        )));
    }
    let at = |k: u64| (k as u128 * games as u128 / shard_count as u128) as u64;
    let range = at(shard_index - 1)..at(shard_index);
    let seat_bots = |i: u64| -> Vec<String> {
        let shift = if rotate { i as usize } else { 0 };
        (0..n).map(|s| bots[(s + shift) % bots.len()].clone()).collect()
    };
    let engine_name = engine.to_string();
    let variant_arc = v.clone();
    let tally = py.detach(move || -> Result<Tally, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            // Never more threads than games.
            .num_threads(
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                    .min((range.end - range.start).max(1) as usize),
            )
            .build()
            .map_err(|e| e.to_string())?;
        let mut tally = Tally::new(n, variant_arc.stats.len());
        let mut lo = range.start;
        while lo < range.end {
            let hi = (lo + CHUNK).min(range.end);
            let results: Vec<Result<GameResult, String>> = pool.install(|| {
                (lo..hi)
                    .into_par_iter()
                    .map_init(
                        || {
                            engine_game(variant_arc.clone(), &engine_name)
                                .map(Unsent)
                                .map_err(|e| e.to_string())
                        },
                        |game, i| {
                            let game = &game.as_ref().map_err(|e| e.clone())?.0;
                            let s = rng::derive(seed, i);
                            let b = seat_bots(i);
                            sim::play_game(game, &b, i, s, false, max_decisions).map_err(|f| {
                                format!("game {} (seed {s}, bots {}) fails: {}", i + 1, b.join(","), f.error)
                            })
                        },
                    )
                    .collect()
            });
            for r in results {
                tally.add(&r?);
            }
            lo = hi;
        }
        Ok(tally)
    });
    let tally = tally.map_err(|e| error(format!("{variant}: {e}")))?;
    let part = json!({
        "simulate_shard": {
            "shard": { "index": shard_index, "count": shard_count },
            "run": {
                "variant": variant,
                "players": n,
                "bots": bots,
                "rotate": rotate,
                "seed": seed,
                "set": sets,
                "games": games,
            },
            "title": v.title,
            "counters": v.stats,
            "tally": tally,
        }
    });
    Ok(part.to_string())
}

/// The shards of one run (their JSON tallies, in any order) added up: the
/// JSON `rulesmith simulate --json` prints for the whole run.
#[pyfunction]
pub fn merge(parts: Vec<String>) -> PyResult<String> {
    let mut first: Option<(Value, Value)> = None;
    let mut total: Option<Tally> = None;
    let mut seen: Vec<u64> = Vec::new();
    let mut count = 0;
    for (k, text) in parts.iter().enumerate() {
        let v: Value = serde_json::from_str(text).map_err(|e| error(format!("part {}: {e}", k + 1)))?;
        let p = &v["simulate_shard"];
        let tally: Tally = serde_json::from_value(p["tally"].clone())
            .map_err(|e| error(format!("part {}: not a simulation shard: {e}", k + 1)))?;
        let (run, counters) = (p["run"].clone(), p["counters"].clone());
        match &first {
            None => first = Some((run, counters)),
            Some((r, c)) if *r == run && *c == counters => {}
            Some(_) => return Err(error(format!("part {}: a shard of another run", k + 1))),
        }
        let (i, n) = (p["shard"]["index"].as_u64(), p["shard"]["count"].as_u64());
        let (Some(i), Some(n)) = (i, n) else {
            return Err(error(format!("part {}: no shard index", k + 1)));
        };
        if seen.contains(&i) {
            return Err(error(format!("shard {i} is given twice")));
        }
        seen.push(i);
        count = n;
        match &mut total {
            None => total = Some(tally),
            Some(t) => t.merge(&tally).map_err(error)?,
        }
    }
    let (Some((run, counters)), Some(total)) = (first, total) else {
        return Err(error("no shard to merge"));
    };
    if seen.len() as u64 != count {
        return Err(error(format!(
            "{} of {count} shards given: every shard is needed",
            seen.len()
        )));
    }
    let docs: Vec<(String, String)> = serde_json::from_value(counters).map_err(|e| error(e.to_string()))?;
    let summary = Summary::of_tally(&total, &docs);
    let out = json!({
        "variant": run["variant"],
        "players": run["players"],
        "bots": run["bots"],
        "rotate": run["rotate"],
        "seed": run["seed"],
        "set": run["set"],
        "summary": summary,
    });
    Ok(out.to_string())
}
