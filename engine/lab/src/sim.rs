//! Simulation: whole games between bots, and what designers want to know
//! about many of them (win rates with confidence intervals, first-player
//! advantage, decisiveness, game length, the variant's own counters), in
//! the spirit of Ludii's balance metrics.
//!
//! Aggregation takes results in game order and is plain arithmetic, so a
//! summary depends only on the games, never on how they were spread over
//! threads.

use crate::bot;
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::record::Record;
use rulesmith_core::rng;
use rulesmith_core::state::{Seat, Status, ToMove};
use serde::Serialize;
use std::collections::BTreeMap;

/// One finished game.
#[derive(Clone, Debug, Serialize)]
pub struct GameResult {
    /// Position in the run; its seed is derived from it.
    pub index: u64,
    pub seed: u64,
    pub winner: Option<Seat>,
    pub turns: u32,
    pub decisions: u64,
    /// The seat that played turn 1.
    pub first: Option<Seat>,
    /// The bot of each seat.
    pub bots: Vec<String>,
    /// The variant's declared counters, by name.
    pub stats: Vec<(String, i64)>,
    /// The variant's labels of the finished game.
    pub labels: Vec<(String, String)>,
    /// The cards dealt secretly to a seat during the game (a hidden role,
    /// say), as card ids: what "the games a card appeared in" counts.
    pub cards: Vec<String>,
    #[serde(skip)]
    pub record: Option<Record>,
}

/// Decisions a game may take before it counts as one that does not end,
/// unless told otherwise (`--max-decisions`): the same bound as fuzzing's.
pub const MAX_DECISIONS: u64 = 20_000;

/// The error of a game still running after `max` decisions.
pub fn endless_game(max: u64, turn: u32) -> GameError {
    GameError::Rules(format!(
        "the game did not end within {max} decisions (turn {turn}): do the rules ever end it? \
         (--max-decisions N allows longer games)"
    ))
}

/// A game that failed: what went wrong, and the record of the game up to
/// there (when one was kept).
#[derive(Debug)]
pub struct GameFailure {
    /// Boxed: a `Result` carrying it stays small on the hot path.
    pub error: Box<GameError>,
    pub record: Option<Record>,
}

impl std::fmt::Display for GameFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)
    }
}

/// Plays one game: seat `s` is played by the bot `bots[s]`; chance comes
/// from `seed`, each bot's own choices from seeds derived from it. A game
/// still running after `max_decisions` decisions is an error: rules that
/// never end a game must not make a simulation run forever.
pub fn play_game(
    game: &Game,
    bots: &[String],
    index: u64,
    seed: u64,
    keep_record: bool,
    max_decisions: u64,
) -> Result<GameResult, GameFailure> {
    let mut record = keep_record.then(Record::default);
    match play_into(game, bots, index, seed, &mut record, max_decisions) {
        Ok(mut r) => {
            r.record = record;
            Ok(r)
        }
        Err(error) => Err(GameFailure {
            error: Box::new(error),
            record,
        }),
    }
}

fn play_into(
    game: &Game,
    bots: &[String],
    index: u64,
    seed: u64,
    record: &mut Option<Record>,
    max_decisions: u64,
) -> Result<GameResult, GameError> {
    let players = bots.len();
    let mut players_bots = Vec::with_capacity(players);
    for (s, spec) in bots.iter().enumerate() {
        players_bots.push(bot::from_spec(spec, rng::derive(seed, 1 + s as u64)).map_err(GameError::Rules)?);
    }
    let mut chance = rng::seeded(seed);
    let mut state = game.new_game(players)?;
    let mut first = None;
    let mut decisions = 0u64;
    let mut chance_drawn = 0u64;
    let mut legal = Vec::new();
    loop {
        if first.is_none() && state.core.turn == 1 {
            first = state.core.active;
        }
        match state.to_move() {
            ToMove::Terminal => break,
            ToMove::Chance => {
                chance_drawn += 1;
                if chance_drawn > crate::playout::chance_bound(decisions) {
                    return Err(crate::playout::endless_chance(chance_drawn));
                }
                let o = game
                    .sample_outcome(&state, &mut chance)
                    .expect("a chance node has outcomes");
                if let Some(r) = record.as_mut() {
                    r.chance(game.outcome_text(o));
                }
                game.apply_outcome_scratch(&mut state, o)?;
            }
            ToMove::Decision(seat) => {
                if decisions >= max_decisions {
                    return Err(endless_game(max_decisions, state.core.turn));
                }
                game.legal_actions_into(&mut state, &mut legal)?;
                let i = players_bots[seat].choose(game, &state, &legal)?;
                let a = *legal.get(i).ok_or_else(|| {
                    GameError::Rules(format!(
                        "bot {} chose action {i} of {}",
                        players_bots[seat].name(),
                        legal.len()
                    ))
                })?;
                if let Some(r) = record.as_mut() {
                    r.decision(seat, game.action_text(&a));
                }
                game.apply_scratch(&mut state, a)?;
                decisions += 1;
            }
        }
    }
    let winner = match state.status() {
        Status::Won(w) => Some(w),
        _ => None,
    };
    let stats = game
        .variant()
        .stats
        .iter()
        .map(|(n, _)| (n.clone(), game.stat(&state, n).unwrap_or(0)))
        .collect();
    let variant = game.variant();
    let mut cards: Vec<String> = state
        .core
        .secrets
        .iter()
        .filter_map(|d| variant.decks.get(d.deck as usize)?.cards.get(d.card as usize))
        .map(|c| c.id.clone())
        .collect();
    cards.sort();
    cards.dedup();
    Ok(GameResult {
        index,
        seed,
        winner,
        turns: state.core.turn,
        decisions,
        first,
        bots: players_bots.iter().map(|b| b.name().to_string()).collect(),
        stats,
        labels: game.labels(&state)?,
        cards,
        record: None,
    })
}

/// A proportion with its 95% Wilson score interval.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Rate {
    pub count: u64,
    pub of: u64,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

impl Rate {
    pub fn new(count: u64, of: u64) -> Rate {
        if of == 0 {
            return Rate {
                count,
                of,
                rate: 0.0,
                low: 0.0,
                high: 1.0,
            };
        }
        let (n, p, z) = (of as f64, count as f64 / of as f64, 1.959_963_984_540_054);
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
        Rate {
            count,
            of,
            rate: p,
            low: (centre - half).max(0.0),
            high: (centre + half).min(1.0),
        }
    }
}

/// The spread of a quantity over games.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Distribution {
    pub mean: f64,
    pub median: f64,
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
    pub p10: f64,
    pub p90: f64,
    /// Equal-width bins: (low, high, games).
    pub histogram: Vec<(f64, f64, u64)>,
}

impl Distribution {
    pub fn of(values: &[f64]) -> Distribution {
        if values.is_empty() {
            return Distribution {
                mean: 0.0,
                median: 0.0,
                stdev: 0.0,
                min: 0.0,
                max: 0.0,
                p10: 0.0,
                p90: 0.0,
                histogram: vec![],
            };
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let q = |f: f64| {
            let pos = f * (n - 1.0);
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
        };
        let (min, max) = (v[0], v[v.len() - 1]);
        let bins = 20usize;
        let width = ((max - min) / bins as f64).max(1.0).ceil();
        let mut histogram: Vec<(f64, f64, u64)> = (0..bins)
            .map(|i| (min + i as f64 * width, min + (i + 1) as f64 * width, 0))
            .take_while(|(lo, _, _)| *lo <= max)
            .collect();
        for x in &v {
            let i = (((x - min) / width) as usize).min(histogram.len() - 1);
            histogram[i].2 += 1;
        }
        Distribution {
            mean,
            median: q(0.5),
            stdev: var.sqrt(),
            min,
            max,
            p10: q(0.1),
            p90: q(0.9),
            histogram,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeatStats {
    pub seat: String,
    pub wins: Rate,
    pub draws: u64,
    pub losses: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BotStats {
    pub bot: String,
    /// Seat-games this bot played, and how many it won.
    pub wins: Rate,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CounterStats {
    pub name: String,
    pub doc: String,
    pub total: i64,
    pub per_game: f64,
    /// Games where the counter was not zero.
    pub games: u64,
}

/// What many games say about a rule set.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub games: u64,
    pub players: usize,
    pub seats: Vec<SeatStats>,
    pub bots: Vec<BotStats>,
    pub draws: Rate,
    /// 1 - draw rate: how often the rules produce a winner.
    pub decisiveness: f64,
    /// Wins of the seat that played turn 1, among games that had a winner.
    pub first_player: Rate,
    /// First-player win rate (decided games) minus the fair share 1/players.
    pub first_player_advantage: f64,
    /// 1 minus the gap between the best and worst seat win rates.
    pub balance: f64,
    pub turns: Distribution,
    pub decisions: Distribution,
    pub counters: Vec<CounterStats>,
    /// Per label, how many games had each value.
    pub labels: BTreeMap<String, BTreeMap<String, u64>>,
    /// For labels whose value names a card (the winner's card, say):
    /// per card, the games it was dealt in and how often the label named it.
    pub card_labels: Vec<CardLabel>,
}

/// One card named by a label: `wins` counts the games whose label `label`
/// was `card`, out of the games the card was dealt in.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CardLabel {
    pub label: String,
    pub card: String,
    /// Games the card was dealt in, games the label named it, and the rate
    /// with its 95% interval.
    pub wins: Rate,
}

/// Per label whose values are cards dealt in the games, a row per card.
fn card_labels(results: &[GameResult], labels: &BTreeMap<String, BTreeMap<String, u64>>) -> Vec<CardLabel> {
    let mut dealt: BTreeMap<&str, u64> = BTreeMap::new();
    for r in results {
        for c in &r.cards {
            *dealt.entry(c.as_str()).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (label, values) in labels {
        if !values.keys().any(|v| dealt.contains_key(v.as_str())) {
            continue;
        }
        for (card, games) in &dealt {
            let named = values.get(*card).copied().unwrap_or(0);
            out.push(CardLabel {
                label: label.clone(),
                card: card.to_string(),
                wins: Rate::new(named, *games),
            });
        }
    }
    out
}

impl Summary {
    pub fn of(results: &[GameResult], players: usize, docs: &[(String, String)]) -> Summary {
        let games = results.len() as u64;
        let seats = (0..players)
            .map(|s| {
                let wins = results.iter().filter(|r| r.winner == Some(s)).count() as u64;
                let draws = results.iter().filter(|r| r.winner.is_none()).count() as u64;
                SeatStats {
                    seat: format!("P{}", s + 1),
                    wins: Rate::new(wins, games),
                    draws,
                    losses: games - wins - draws,
                }
            })
            .collect::<Vec<_>>();
        let mut per_bot: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for r in results {
            for (s, b) in r.bots.iter().enumerate() {
                let e = per_bot.entry(b.clone()).or_default();
                e.1 += 1;
                e.0 += (r.winner == Some(s)) as u64;
            }
        }
        let draws = results.iter().filter(|r| r.winner.is_none()).count() as u64;
        let first_wins = results
            .iter()
            .filter(|r| r.first.is_some() && r.first == r.winner)
            .count() as u64;
        let first_games = results.iter().filter(|r| r.first.is_some()).count() as u64;
        let first_player = Rate::new(first_wins, first_games);
        let rates: Vec<f64> = seats.iter().map(|s| s.wins.rate).collect();
        let spread = rates.iter().cloned().fold(f64::MIN, f64::max) - rates.iter().cloned().fold(f64::MAX, f64::min);
        let counters = docs
            .iter()
            .enumerate()
            .map(|(i, (name, doc))| {
                let values: Vec<i64> = results.iter().map(|r| r.stats.get(i).map_or(0, |(_, v)| *v)).collect();
                let total: i64 = values.iter().sum();
                CounterStats {
                    name: name.clone(),
                    doc: doc.clone(),
                    total,
                    per_game: if games > 0 { total as f64 / games as f64 } else { 0.0 },
                    games: values.iter().filter(|v| **v != 0).count() as u64,
                }
            })
            .collect();
        let mut labels: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for r in results {
            for (k, v) in &r.labels {
                *labels.entry(k.clone()).or_default().entry(v.clone()).or_default() += 1;
            }
        }
        Summary {
            games,
            players,
            seats,
            bots: per_bot
                .into_iter()
                .map(|(bot, (w, n))| BotStats {
                    bot,
                    wins: Rate::new(w, n),
                })
                .collect(),
            draws: Rate::new(draws, games),
            decisiveness: if games > 0 {
                1.0 - draws as f64 / games as f64
            } else {
                0.0
            },
            first_player,
            first_player_advantage: first_player.rate - 1.0 / players as f64,
            balance: if games > 0 { 1.0 - spread.max(0.0) } else { 0.0 },
            turns: Distribution::of(&results.iter().map(|r| r.turns as f64).collect::<Vec<_>>()),
            decisions: Distribution::of(&results.iter().map(|r| r.decisions as f64).collect::<Vec<_>>()),
            counters,
            card_labels: card_labels(results, &labels),
            labels,
        }
    }
}

/// Standard normal cumulative distribution (Abramowitz-Stegun 7.1.26,
/// error below 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs() / std::f64::consts::SQRT_2);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-(x * x) / 2.0).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Two-sided p-value that paired per-game scores differ. Game `i` of one
/// side and game `i` of the other share a seed, so the test looks at the
/// per-game differences `b[i] - a[i]` (a paired z-test; on 0/1 scores such
/// as "P1 won" it is McNemar's test without continuity correction). What
/// the shared seed makes common to both games cancels out, so a rule change
/// shows with fewer games than an unpaired test needs; when the games share
/// nothing, it is no worse. The normal approximation is meant for the
/// hundreds of games a comparison plays.
pub fn p_paired(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 1.0;
    }
    let diffs = || a.iter().zip(b).map(|(x, y)| y - x);
    let mean = diffs().sum::<f64>() / n as f64;
    let variance = diffs().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (variance / n as f64).sqrt();
    if se == 0.0 {
        return if mean == 0.0 { 1.0 } else { 0.0 };
    }
    2.0 * (1.0 - normal_cdf((mean / se).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_contains_the_rate_and_narrows_with_games() {
        let small = Rate::new(5, 10);
        let large = Rate::new(500, 1000);
        assert!(small.low < 0.5 && small.high > 0.5);
        assert!(large.high - large.low < small.high - small.low);
        // Known value: 50/100 -> about 0.404..0.596.
        let r = Rate::new(50, 100);
        assert!((r.low - 0.4038).abs() < 1e-3 && (r.high - 0.5962).abs() < 1e-3, "{r:?}");
        let zero = Rate::new(0, 20);
        assert_eq!(zero.low, 0.0);
        assert!(zero.high > 0.1 && zero.high < 0.2);
    }

    #[test]
    fn distribution_quantiles_and_histogram_add_up() {
        let d = Distribution::of(&[1.0, 2.0, 3.0, 4.0, 100.0]);
        assert_eq!(d.median, 3.0);
        assert_eq!(d.min, 1.0);
        assert_eq!(d.max, 100.0);
        assert_eq!(d.histogram.iter().map(|h| h.2).sum::<u64>(), 5);
        assert!((d.mean - 22.0).abs() < 1e-9);
    }

    #[test]
    fn the_paired_test_tells_noise_from_signal() {
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        // Game lengths that vary a lot from seed to seed; side B adds one
        // turn to every game, side C adds one turn to half of them.
        let a: Vec<f64> = (0..200).map(|i| (i * 37 % 50) as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 1.0).collect();
        let c: Vec<f64> = a.iter().enumerate().map(|(i, x)| x + (i % 2) as f64).collect();
        assert_eq!(p_paired(&a, &a), 1.0);
        assert_eq!(p_paired(&a, &b), 0.0, "the same shift in every game");
        assert!(p_paired(&a, &c) < 0.001, "a small shift under large common noise");
        // Wins as 0/1: 10 games change hands one way and 12 the other.
        let x: Vec<f64> = (0..200).map(|i| (i < 100) as u8 as f64).collect();
        let y: Vec<f64> = (0..200).map(|i| ((10..112).contains(&i)) as u8 as f64).collect();
        let p = p_paired(&x, &y);
        assert!(p > 0.5 && p < 1.0, "{p}");
        // 30 games change hands, all the same way.
        let z: Vec<f64> = (0..200).map(|i| (i < 130) as u8 as f64).collect();
        assert!(p_paired(&x, &z) < 0.001);
        assert_eq!(p_paired(&x[..1], &z[..1]), 1.0, "one game says nothing");
    }
}
