//! One batch of fuzzed games: swarm games, guided by coverage.
//!
//! Each game draws its own swarm weights (see [`super::swarm`]). A game that
//! reaches a coverage feature no earlier game of the batch reached is kept;
//! after the first game, half the games start as a mutation of a kept one
//! (its choices up to a random cut, replayed by action text, then free
//! choices), as coverage-guided fuzzers grow their corpus. The first break
//! ends the batch and is shrunk (see [`super::shrink`]), together with a
//! few other games that break the same way (more starts, fewer local
//! minima); the shortest record wins.

use super::coverage::{Coverage, Features};
use super::play::{play_with, Choice};
use super::shrink;
use super::swarm::Swarm;
use super::{Batch, Finding, FindingKind, GameFor, Options, SearchStats, Sweep};
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use std::time::Instant;

/// Plays `games` fuzzed games seeded by `seed`; on a break, shrinks it.
///
/// `game_for` gives the game for a set of swept parameter values (the base
/// game when `sweep` is empty). The result depends only on the arguments,
/// never on threads or timing (the times in [`SearchStats`] aside).
pub fn run_batch(game_for: &mut GameFor<'_>, opts: &Options, sweep: &[Sweep], seed: u64, games: u32) -> Batch {
    let mut batch = Batch::default();
    let mut seen = Features::default();
    let mut kept: Vec<Vec<Choice>> = Vec::new();
    let unreplayed = Options {
        replay_check: false,
        ..opts.clone()
    };
    for i in 0..games {
        let mut r = rng::seeded(rng::derive(seed, i as u64));
        let params = draw_params(&mut r, sweep);
        // Parameters the variant itself refuses are no finding.
        let Ok(game) = game_for(&params) else { continue };
        let prefix = mutation_prefix(&mut r, &kept);
        let mut swarm = Swarm::new(r, game.variant().actions.len(), &prefix);
        let mut cov = Coverage::default();
        game.track_calls(true);
        let game_opts = if i % REPLAY_EVERY == 0 { opts } else { &unreplayed };
        let outcome = play_with(&game, game_opts, &mut swarm, &mut cov);
        for (name, n) in game.calls() {
            *cov.functions.entry(name).or_default() += n;
        }
        game.track_calls(false);
        batch.coverage.merge(&cov);
        match outcome {
            Ok(played) => {
                batch.totals.add(&played.totals);
                if seen.absorb(&Features::of(&cov, &swarm.pairs)) {
                    kept.push(played.choices);
                }
            }
            Err(found) => {
                let found_at = Instant::now();
                batch.totals.games += 1;
                batch.totals.decisions += found.decisions as u64;
                let found_lines = found.record.len();
                let deadline = opts
                    .shrink_seconds
                    .map(|s| found_at + std::time::Duration::from_secs_f64(s.max(0.0)));
                let (game, params, found) = simplest_params(game_for, opts, sweep, game, params, *found);
                // The other starts may take a quarter of the time.
                let search_until = opts
                    .shrink_seconds
                    .map(|s| found_at + std::time::Duration::from_secs_f64(s.max(0.0) / 4.0));
                let starts = more_breaks(&game, opts, &kept, found, seed, search_until);
                let n = starts.len() as u32;
                // Each start gets its share of the budget; the shortest wins.
                let share = opts.shrink_budget / starts.len();
                let mut shrunk: Option<shrink::Shrunk> = None;
                let mut tried = 0;
                for (k, start) in starts.into_iter().enumerate() {
                    // Each start also gets its share of the time left.
                    let until = deadline.map(|d| {
                        let now = Instant::now();
                        now + d.saturating_duration_since(now) / (n - k as u32)
                    });
                    let s = shrink::shrink(
                        &game,
                        opts,
                        start,
                        share,
                        rng::derive(seed, u64::MAX - k as u64),
                        opts.on_shrink,
                        until,
                    );
                    tried += s.tried;
                    if shrunk
                        .as_ref()
                        .is_none_or(|b| s.finding.record.len() < b.finding.record.len())
                    {
                        shrunk = Some(s);
                    }
                }
                let shrunk = shrunk.expect("at least the first break is shrunk");
                let finding = confirmed(&game, opts, shrunk.finding);
                batch.search = Some(SearchStats {
                    games: batch.totals.games,
                    decisions: batch.totals.decisions,
                    found_at,
                    shrunk_at: Instant::now(),
                    found_lines,
                    shrink_tried: tried,
                    fixed_point: shrunk.fixed_point,
                    kept: kept.len(),
                });
                batch.finding = Some((finding, params));
                break;
            }
        }
    }
    batch
}

/// The record-replays check (a second play of the whole game, from its
/// record) runs at every REPLAY_EVERY-th game of a batch: games 0 and 4 of
/// the eight. The other checks run in every game.
const REPLAY_EVERY: u32 = 4;

/// Breaking games to shrink, each a different start: a shrunk record is a
/// local minimum of the game it started from, so a few starts give a better
/// chance of a short one.
const SHRINK_STARTS: usize = 4;
/// Extra games played to find the other starts.
const EXTRA_GAMES: u64 = 200;

/// The first break, and up to SHRINK_STARTS - 1 other games that break the
/// same way (same kind, same message shape), found by more swarm games
/// (fresh, or from the batch's kept games), played with only the checks
/// that can show that break; none after `deadline`.
fn more_breaks(
    game: &Game,
    opts: &Options,
    kept: &[Vec<Choice>],
    first: Finding,
    seed: u64,
    deadline: Option<Instant>,
) -> Vec<Finding> {
    let focused = shrink::focused(opts, &first.kind);
    let shape = shrink::shape(&first.message);
    // A game without end is not shrunk (see shrink::shrink): one start.
    let extra_games = if first.kind == FindingKind::NoEnd {
        0
    } else {
        EXTRA_GAMES
    };
    let mut starts = vec![first];
    for extra in 0..extra_games {
        if starts.len() >= SHRINK_STARTS || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let mut r = rng::seeded(rng::derive(seed ^ 0x5EC0_4D57, extra));
        let prefix = mutation_prefix(&mut r, kept);
        let mut swarm = Swarm::new(r, game.variant().actions.len(), &prefix);
        if let Err(f) = play_with(game, &focused, &mut swarm, &mut Coverage::default()) {
            if f.kind == starts[0].kind && shrink::shape(&f.message) == shape {
                starts.push(*f);
            }
        }
    }
    starts
}

/// Swept parameter values for one game, uniform in their ranges.
fn draw_params(r: &mut GameRng, sweep: &[Sweep]) -> Vec<(String, i64)> {
    sweep
        .iter()
        .map(|s| {
            let span = (s.max - s.min + 1).clamp(1, u32::MAX as i64) as u32;
            (s.name.clone(), s.min + rng::below(r, span) as i64)
        })
        .collect()
}

/// Moves each swept parameter to its minimum, then halfway there, while the
/// same game still breaks the same way: the smallest breaking values say
/// more than the game itself.
fn simplest_params(
    game_for: &mut GameFor<'_>,
    opts: &Options,
    sweep: &[Sweep],
    mut game: std::rc::Rc<Game>,
    mut params: Vec<(String, i64)>,
    mut found: Finding,
) -> (std::rc::Rc<Game>, Vec<(String, i64)>, Finding) {
    let focused = shrink::focused(opts, &found.kind);
    for (j, s) in sweep.iter().enumerate() {
        for _ in 0..8 {
            let now = params[j].1;
            if now == s.min {
                break;
            }
            let mut moved = false;
            for value in [s.min, s.min + (now - s.min) / 2] {
                if value == now {
                    continue;
                }
                let mut p = params.clone();
                p[j].1 = value;
                let Ok(g) = game_for(&p) else { continue };
                if let Err(f) = shrink::replay(&g, &focused, &found.choices) {
                    if f.kind == found.kind && shrink::shape(&f.message) == shrink::shape(&found.message) {
                        (game, params, found) = (g, p, *f);
                        moved = true;
                        break;
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }
    (game, params, found)
}

/// The shrunk game played once more with every check: what it shows first
/// is the finding (normally the same break).
fn confirmed(game: &Game, opts: &Options, shrunk: Finding) -> Finding {
    match shrink::replay(game, opts, &shrunk.choices) {
        Err(f) => *f,
        Ok(_) => shrunk,
    }
}

/// Half the time, a random cut of a random kept game (its choices up to a
/// random point), for the next game to start from; otherwise nothing.
fn mutation_prefix(r: &mut rng::GameRng, kept: &[Vec<Choice>]) -> Vec<Choice> {
    if kept.is_empty() || rng::below(r, 2) != 0 {
        return Vec::new();
    }
    let k = &kept[rng::below(r, kept.len() as u32) as usize];
    k[..rng::below(r, k.len() as u32 + 1) as usize].to_vec()
}
