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
use rulesmith_core::state::{Seat, State, Status, ToMove};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One finished game.
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// Each seat's final score, when the variant declares `[scores]`
    /// (empty otherwise).
    pub scores: Vec<i64>,
    /// Decisions at which a bot found no world that fits what its seat
    /// had seen, and decided on loose ones (see `worlds`).
    pub loose_decisions: u64,
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
    play_game_in(game, bots, index, seed, keep_record, max_decisions, &mut None)
}

/// [`play_game`] in `scratch`, whose allocations the previous game's state
/// lends this one (a loop of games keeps one scratch for all of them).
pub fn play_game_in(
    game: &Game,
    bots: &[String],
    index: u64,
    seed: u64,
    keep_record: bool,
    max_decisions: u64,
    scratch: &mut Option<State>,
) -> Result<GameResult, GameFailure> {
    let mut record = keep_record.then(Record::default);
    match play_into(game, bots, index, seed, &mut record, max_decisions, scratch) {
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
    scratch: &mut Option<State>,
) -> Result<GameResult, GameError> {
    let players = bots.len();
    let mut players_bots = Vec::with_capacity(players);
    for (s, spec) in bots.iter().enumerate() {
        players_bots.push(bot::from_spec(spec, rng::derive(seed, 1 + s as u64)).map_err(GameError::Rules)?);
    }
    let mut chance = rng::seeded(seed);
    let state = crate::playout::new_game_in(game, players, scratch)?;
    // Bots that pick uniformly never look back, and no record is kept:
    // the game needs no history (as a random playout keeps none).
    if record.is_none() && players_bots.iter_mut().all(|b| b.uniform().is_some()) {
        state.forget_history();
    }
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
                    .sample_outcome(state, &mut chance)
                    .expect("a chance node has outcomes");
                if let Some(r) = record.as_mut() {
                    r.chance(game.outcome_text(o));
                }
                game.apply_outcome_scratch(state, o)?;
            }
            ToMove::Decision(seat) => {
                if decisions >= max_decisions {
                    return Err(endless_game(max_decisions, state.core.turn));
                }
                if let Some(r) = players_bots[seat].uniform() {
                    // A uniform pick needs no list: the action is decoded
                    // from its index, the one `choose` would have picked.
                    game.pick_and_apply_scratch(
                        state,
                        |n| rng::below(r, n as u32) as usize,
                        |a, _| {
                            if let Some(r) = record.as_mut() {
                                r.decision(seat, game.action_text(a));
                            }
                        },
                    )?;
                    decisions += 1;
                    continue;
                }
                game.legal_actions_into(state, &mut legal)?;
                let i = players_bots[seat].choose(game, state, &legal)?;
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
                game.apply_scratch(state, a)?;
                decisions += 1;
            }
        }
    }
    let winner = match state.status() {
        Status::Won(w) => Some(w),
        _ => None,
    };
    if let (Some(r), Some(text)) = (record.as_mut(), game.scores_text(state)) {
        r.note(text);
    }
    let stats = game
        .variant()
        .stats
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), state.core.stats.get(i).copied().unwrap_or(0)))
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
        labels: game.labels(state)?,
        cards,
        scores: state.core.scores.clone(),
        loose_decisions: players_bots.iter().map(|b| b.loose_decisions()).sum(),
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

/// The mean and the sample variance of whole numbers given as (value, how
/// many times): the sum exact in integers, so the mean does not depend on
/// how the games were split. 0 for no values; the variance 0 for one.
fn mean_and_variance(counts: impl Iterator<Item = (i128, u64)> + Clone) -> (f64, f64) {
    let (total, sum) = counts
        .clone()
        .fold((0u64, 0i128), |(t, s), (v, c)| (t + c, s + v * c as i128));
    if total == 0 {
        return (0.0, 0.0);
    }
    let n = total as f64;
    let mean = sum as f64 / n;
    let var = if total > 1 {
        counts.map(|(v, c)| c as f64 * (v as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

impl Distribution {
    /// The distribution of whole numbers given as value -> how many times
    /// (a [`Tally`]'s turns or decisions): exact quantiles from counts, so
    /// the figures do not depend on how the games were split.
    pub fn of_counts(counts: &BTreeMap<u64, u64>) -> Distribution {
        let total: u64 = counts.values().sum();
        let (Some((&min, _)), Some((&max, _))) = (counts.first_key_value(), counts.last_key_value()) else {
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
        };
        let n = total as f64;
        let (mean, var) = mean_and_variance(counts.iter().map(|(&v, &c)| (v as i128, c)));
        // The value at 0-based position `i` of the sorted values.
        let at = |i: u64| {
            let mut seen = 0;
            for (&v, &c) in counts {
                seen += c;
                if i < seen {
                    return v as f64;
                }
            }
            max as f64
        };
        let q = |f: f64| {
            let pos = f * (n - 1.0);
            let (lo, hi) = (pos.floor(), pos.ceil());
            let (a, b) = (at(lo as u64), at(hi as u64));
            a + (b - a) * (pos - lo)
        };
        let (min, max) = (min as f64, max as f64);
        let bins = 20usize;
        let width = ((max - min) / bins as f64).max(1.0).ceil();
        let mut histogram: Vec<(f64, f64, u64)> = (0..bins)
            .map(|i| (min + i as f64 * width, min + (i + 1) as f64 * width, 0))
            .take_while(|(lo, _, _)| *lo <= max)
            .collect();
        for (&v, &c) in counts {
            let i = (((v as f64 - min) / width) as usize).min(histogram.len() - 1);
            histogram[i].2 += c;
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

/// A mean score (of a seat, or of a bot over its seats) with its 95%
/// confidence interval (normal approximation: the mean's standard error
/// times 1.96), and the spread of the scores.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreStats {
    /// `P1`, or a bot's name.
    pub who: String,
    pub games: u64,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub stdev: f64,
    pub min: i64,
    pub max: i64,
}

impl ScoreStats {
    /// The figures of scores given as score -> how many times: exact
    /// whatever the split of the games (the counts add up).
    pub fn of_counts(who: &str, counts: &BTreeMap<i64, u64>) -> ScoreStats {
        let games: u64 = counts.values().sum();
        let n = games as f64;
        let (mean, var) = mean_and_variance(counts.iter().map(|(&v, &c)| (v as i128, c)));
        let half = if games > 0 {
            1.959_963_984_540_054 * (var / n).sqrt()
        } else {
            0.0
        };
        ScoreStats {
            who: who.to_string(),
            games,
            mean,
            low: mean - half,
            high: mean + half,
            stdev: var.sqrt(),
            min: counts.first_key_value().map_or(0, |(v, _)| *v),
            max: counts.last_key_value().map_or(0, |(v, _)| *v),
        }
    }
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
    /// Per bot and seat together ("greedy as P1"): a bot's strength and a
    /// seat's advantage, not mixed up when seats rotate.
    pub bot_seats: Vec<BotStats>,
    pub draws: Rate,
    /// 1 - draw rate: how often the rules produce a winner.
    pub decisiveness: f64,
    /// Wins of the seat that played turn 1, among games that had a winner.
    pub first_player: Rate,
    /// First-player win rate (decided games) minus the fair share
    /// 1/players; 0 when no game with a first player was decided.
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
    /// With `[scores]`: each seat's mean score (empty without).
    pub scores: Vec<ScoreStats>,
    /// With `[scores]`: each bot's mean score over the seats it played.
    pub bot_scores: Vec<ScoreStats>,
    /// With `[scores]`: the margin of victory, the best score minus the
    /// second best, per game (none without scores or with one seat).
    pub margins: Option<Distribution>,
    /// Games in which a bot found no world that fits what its seat had
    /// seen at some decision, and decided on loose worlds (see `worlds`);
    /// and how many such decisions there were in all. Both 0 when the
    /// bots always found one (or nothing was hidden).
    pub loose_worlds: Rate,
    pub loose_decisions: u64,
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
fn card_labels(dealt: &BTreeMap<String, u64>, labels: &BTreeMap<String, BTreeMap<String, u64>>) -> Vec<CardLabel> {
    let mut out = Vec::new();
    for (label, values) in labels {
        if !values.keys().any(|v| dealt.contains_key(v.as_str())) {
            continue;
        }
        for (card, games) in dealt {
            let named = values.get(card).copied().unwrap_or(0);
            out.push(CardLabel {
                label: label.clone(),
                card: card.clone(),
                wins: Rate::new(named, *games),
            });
        }
    }
    out
}

/// One more `key` in `map`, allocating the key only the first time.
fn count(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_string(), 1);
        }
    }
}

/// Everything a [`Summary`] needs from many games, kept as counts and
/// integer sums: the tallies of disjoint sets of games add up ([`Tally::merge`])
/// to the tally of all of them, exactly, in any order. This is what
/// `simulate` streams its games into (memory does not grow with the number
/// of games) and what `simulate --shard` writes for `rulesmith merge`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Tally {
    pub games: u64,
    pub players: usize,
    /// Games won by each seat.
    pub seat_wins: Vec<u64>,
    pub draws: u64,
    /// Per bot: seat-games played and won.
    pub bots: BTreeMap<String, (u64, u64)>,
    /// Per bot and seat together ("greedy as P1"): games played and won
    /// (absent from tallies written before it was kept).
    #[serde(default)]
    pub bot_seats: BTreeMap<String, (u64, u64)>,
    /// Decided games (a winner) with a first player, and how many of them
    /// the first player won: draws are left out, so that many draws do not
    /// read as a first-move disadvantage.
    pub first_games: u64,
    pub first_wins: u64,
    /// Games per number of turns, and per number of decisions.
    pub turns: BTreeMap<u64, u64>,
    pub decisions: BTreeMap<u64, u64>,
    /// Per declared counter: its total and the games where it was not zero.
    pub counters: Vec<(i64, u64)>,
    /// Per label, games per value.
    pub labels: BTreeMap<String, BTreeMap<String, u64>>,
    /// Games each secretly dealt card appeared in.
    pub dealt: BTreeMap<String, u64>,
    /// With `[scores]`, per seat: games per final score (empty without).
    #[serde(default)]
    pub scores: Vec<BTreeMap<i64, u64>>,
    /// With `[scores]`, per bot: seat-games per final score.
    #[serde(default)]
    pub bot_scores: BTreeMap<String, BTreeMap<i64, u64>>,
    /// With `[scores]`: games per margin of victory (the best score minus
    /// the second best).
    #[serde(default)]
    pub margins: BTreeMap<u64, u64>,
    /// Games in which a bot decided on loose worlds, and such decisions.
    #[serde(default)]
    pub loose_games: u64,
    #[serde(default)]
    pub loose_decisions: u64,
}

impl Tally {
    /// An empty tally for games of `players` seats and `counters` declared counters.
    pub fn new(players: usize, counters: usize) -> Tally {
        Tally {
            players,
            seat_wins: vec![0; players],
            counters: vec![(0, 0); counters],
            ..Tally::default()
        }
    }

    /// Counts one game.
    pub fn add(&mut self, r: &GameResult) {
        self.games += 1;
        match r.winner {
            Some(w) => {
                if let Some(n) = self.seat_wins.get_mut(w) {
                    *n += 1;
                }
            }
            None => self.draws += 1,
        }
        for (s, b) in r.bots.iter().enumerate() {
            let won = (r.winner == Some(s)) as u64;
            // Looked up before inserting: a key is allocated once per run,
            // not once per game.
            match self.bots.get_mut(b) {
                Some(e) => {
                    e.0 += 1;
                    e.1 += won;
                }
                None => {
                    self.bots.insert(b.clone(), (1, won));
                }
            }
            let bot_seats = &mut self.bot_seats;
            with_bot_at_seat(b, s, |key| match bot_seats.get_mut(key) {
                Some(e) => {
                    e.0 += 1;
                    e.1 += won;
                }
                None => {
                    bot_seats.insert(key.to_string(), (1, won));
                }
            });
        }
        if r.first.is_some() && r.winner.is_some() {
            self.first_games += 1;
            self.first_wins += (r.first == r.winner) as u64;
        }
        *self.turns.entry(r.turns as u64).or_default() += 1;
        *self.decisions.entry(r.decisions).or_default() += 1;
        for (i, c) in self.counters.iter_mut().enumerate() {
            let v = r.stats.get(i).map_or(0, |(_, v)| *v);
            c.0 += v;
            c.1 += (v != 0) as u64;
        }
        for (k, v) in &r.labels {
            if !self.labels.contains_key(k) {
                self.labels.insert(k.clone(), BTreeMap::new());
            }
            count(self.labels.get_mut(k).expect("inserted"), v);
        }
        for c in &r.cards {
            count(&mut self.dealt, c);
        }
        self.add_scores(r);
        self.loose_games += u64::from(r.loose_decisions > 0);
        self.loose_decisions += r.loose_decisions;
    }

    /// Counts one game's scores (nothing when the variant has none).
    fn add_scores(&mut self, r: &GameResult) {
        if r.scores.is_empty() {
            return;
        }
        if self.scores.len() < r.scores.len() {
            self.scores.resize(r.scores.len(), BTreeMap::new());
        }
        for (s, &v) in r.scores.iter().enumerate() {
            *self.scores[s].entry(v).or_default() += 1;
            if let Some(b) = r.bots.get(s) {
                if !self.bot_scores.contains_key(b) {
                    self.bot_scores.insert(b.clone(), BTreeMap::new());
                }
                *self.bot_scores.get_mut(b).expect("inserted").entry(v).or_default() += 1;
            }
        }
        if r.scores.len() > 1 {
            let mut sorted = r.scores.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            *self.margins.entry(sorted[0].abs_diff(sorted[1])).or_default() += 1;
        }
    }

    /// Adds the games of `other` (played with the same players and counters).
    pub fn merge(&mut self, other: &Tally) -> Result<(), String> {
        if other.players != self.players || other.counters.len() != self.counters.len() {
            return Err(format!(
                "tallies of different games: {} players and {} counters against {} and {}",
                self.players,
                self.counters.len(),
                other.players,
                other.counters.len()
            ));
        }
        self.games += other.games;
        for (a, b) in self.seat_wins.iter_mut().zip(&other.seat_wins) {
            *a += b;
        }
        self.draws += other.draws;
        for (mine, theirs) in [(&mut self.bots, &other.bots), (&mut self.bot_seats, &other.bot_seats)] {
            for (k, (n, w)) in theirs {
                let e = mine.entry(k.clone()).or_default();
                e.0 += n;
                e.1 += w;
            }
        }
        self.first_games += other.first_games;
        self.first_wins += other.first_wins;
        for (mine, theirs) in [(&mut self.turns, &other.turns), (&mut self.decisions, &other.decisions)] {
            for (k, n) in theirs {
                *mine.entry(*k).or_default() += n;
            }
        }
        for (a, b) in self.counters.iter_mut().zip(&other.counters) {
            a.0 += b.0;
            a.1 += b.1;
        }
        for (k, values) in &other.labels {
            let mine = self.labels.entry(k.clone()).or_default();
            for (v, n) in values {
                *mine.entry(v.clone()).or_default() += n;
            }
        }
        for (c, n) in &other.dealt {
            *self.dealt.entry(c.clone()).or_default() += n;
        }
        if self.scores.len() < other.scores.len() {
            self.scores.resize(other.scores.len(), BTreeMap::new());
        }
        for (mine, theirs) in self.scores.iter_mut().zip(&other.scores) {
            for (v, n) in theirs {
                *mine.entry(*v).or_default() += n;
            }
        }
        for (b, values) in &other.bot_scores {
            let mine = self.bot_scores.entry(b.clone()).or_default();
            for (v, n) in values {
                *mine.entry(*v).or_default() += n;
            }
        }
        for (m, n) in &other.margins {
            *self.margins.entry(*m).or_default() += n;
        }
        self.loose_games += other.loose_games;
        self.loose_decisions += other.loose_decisions;
        Ok(())
    }
}

/// The key of a bot playing a seat in [`Tally::bot_seats`]: "greedy as P1".
fn bot_at_seat(bot: &str, seat: usize) -> String {
    format!("{bot} as P{}", seat + 1)
}

/// `f` of [`bot_at_seat`]'s key, written on the stack when it fits: the
/// tally looks a key up once per seat and game, and allocating it each
/// time was a visible part of what `simulate` adds to a random game.
fn with_bot_at_seat<R>(bot: &str, seat: usize, f: impl FnOnce(&str) -> R) -> R {
    use std::io::Write;
    let mut buf = [0u8; 96];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    if write!(cursor, "{bot} as P{}", seat + 1).is_ok() {
        let n = cursor.position() as usize;
        if let Ok(key) = std::str::from_utf8(&buf[..n]) {
            return f(key);
        }
    }
    f(&bot_at_seat(bot, seat))
}

/// Win rates of the bots (or bots at seats) counted in `played`.
fn bot_stats(played: &BTreeMap<String, (u64, u64)>) -> Vec<BotStats> {
    played
        .iter()
        .map(|(bot, &(n, w))| BotStats {
            bot: bot.clone(),
            wins: Rate::new(w, n),
        })
        .collect()
}

impl Summary {
    /// The summary of `results` (see [`Summary::of_tally`]).
    pub fn of(results: &[GameResult], players: usize, docs: &[(String, String)]) -> Summary {
        let mut t = Tally::new(players, docs.len());
        for r in results {
            t.add(r);
        }
        Summary::of_tally(&t, docs)
    }

    /// The figures of a tally; `docs` names and documents its counters.
    pub fn of_tally(t: &Tally, docs: &[(String, String)]) -> Summary {
        let games = t.games;
        let players = t.players;
        let seats = t
            .seat_wins
            .iter()
            .enumerate()
            .map(|(s, &wins)| SeatStats {
                seat: format!("P{}", s + 1),
                wins: Rate::new(wins, games),
                draws: t.draws,
                losses: games - wins - t.draws,
            })
            .collect::<Vec<_>>();
        let first_player = Rate::new(t.first_wins, t.first_games);
        let rates: Vec<f64> = seats.iter().map(|s| s.wins.rate).collect();
        let spread = rates.iter().cloned().fold(f64::MIN, f64::max) - rates.iter().cloned().fold(f64::MAX, f64::min);
        let counters = docs
            .iter()
            .zip(&t.counters)
            .map(|((name, doc), &(total, nonzero))| CounterStats {
                name: name.clone(),
                doc: doc.clone(),
                total,
                per_game: if games > 0 { total as f64 / games as f64 } else { 0.0 },
                games: nonzero,
            })
            .collect();
        Summary {
            games,
            players,
            seats,
            bots: bot_stats(&t.bots),
            bot_seats: bot_stats(&t.bot_seats),
            draws: Rate::new(t.draws, games),
            decisiveness: if games > 0 {
                1.0 - t.draws as f64 / games as f64
            } else {
                0.0
            },
            first_player,
            first_player_advantage: if first_player.of > 0 {
                first_player.rate - 1.0 / players as f64
            } else {
                0.0
            },
            balance: if games > 0 { 1.0 - spread.max(0.0) } else { 0.0 },
            turns: Distribution::of_counts(&t.turns),
            decisions: Distribution::of_counts(&t.decisions),
            counters,
            card_labels: card_labels(&t.dealt, &t.labels),
            labels: t.labels.clone(),
            scores: t
                .scores
                .iter()
                .enumerate()
                .map(|(s, c)| ScoreStats::of_counts(&format!("P{}", s + 1), c))
                .collect(),
            bot_scores: t.bot_scores.iter().map(|(b, c)| ScoreStats::of_counts(b, c)).collect(),
            margins: (!t.margins.is_empty()).then(|| Distribution::of_counts(&t.margins)),
            loose_worlds: Rate::new(t.loose_games, t.games),
            loose_decisions: t.loose_decisions,
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

/// Paired per-game scores of two sides, as integer sums: game `i` of one
/// side and game `i` of the other share a seed, and what counts is the
/// per-game difference `b - a`. Integer sums add up exactly, so a
/// comparison split into shards merges into the very same figures.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Paired {
    pub n: u64,
    /// Sum of the differences, and of their squares.
    pub sum: i128,
    pub sum_sq: i128,
}

impl Paired {
    /// Counts one pair of scores.
    pub fn add(&mut self, a: i64, b: i64) {
        let d = b as i128 - a as i128;
        self.n += 1;
        self.sum += d;
        self.sum_sq += d * d;
    }

    pub fn merge(&mut self, other: &Paired) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// Mean difference.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Sample variance of the differences.
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as i128;
        // n * sum_sq - sum^2 is exact and never negative.
        (n * self.sum_sq - self.sum * self.sum) as f64 / (n * (n - 1)) as f64
    }

    /// Two-sided p-value that the scores differ: a paired z-test on the
    /// differences (on 0/1 scores such as "P1 won" it is McNemar's test
    /// without continuity correction). What the shared seed makes common
    /// to both games cancels out, so a rule change shows with fewer games
    /// than an unpaired test needs; when the games share nothing, it is no
    /// worse. The normal approximation is meant for the hundreds of games a
    /// comparison plays.
    pub fn p(&self) -> f64 {
        if self.n < 2 {
            return 1.0;
        }
        let n = self.n as i128;
        let spread = n * self.sum_sq - self.sum * self.sum;
        if spread == 0 {
            return if self.sum == 0 { 1.0 } else { 0.0 };
        }
        // mean / standard error = sum * sqrt(n - 1) / sqrt(spread)
        let z = self.sum as f64 * ((n - 1) as f64).sqrt() / (spread as f64).sqrt();
        2.0 * (1.0 - normal_cdf(z.abs()))
    }
}

/// Wald's sequential probability ratio test on paired differences, as
/// chess engines decide changes (fishtest): after each pair of games, stop
/// as soon as the evidence says either "the sides differ by `delta` or
/// more" or "they do not differ by as much as `delta`", at error rates
/// `alpha` (calling a difference that is not there, two-sided) and `beta`
/// (missing one of size `delta`).
///
/// Two one-sided tests of mean 0 against `+delta` and against `-delta`,
/// each at `alpha / 2`, with the differences taken as normal and their
/// variance estimated from the pairs so far (the generalized SPRT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub delta: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// What a sequential test says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not decided yet: play on.
    Open,
    /// Side B's score is higher (`Higher`) or lower by `delta` or more.
    Higher,
    Lower,
    /// No difference as large as `delta`.
    Same,
}

impl Sprt {
    /// Pairs played before any decision: the variance estimate needs some.
    pub const MIN_PAIRS: u64 = 30;

    /// Log-likelihood ratios of `+delta` and `-delta` against no difference.
    pub fn llr(&self, p: &Paired) -> (f64, f64) {
        let var = p.variance();
        if var <= 0.0 {
            // Every pair differed by the same amount: certainty either way.
            let m = p.mean();
            let inf = |x: bool| if x { f64::INFINITY } else { f64::NEG_INFINITY };
            return (inf(m >= self.delta / 2.0), inf(m <= -self.delta / 2.0));
        }
        let (n, s, d) = (p.n as f64, p.sum as f64, self.delta);
        let up = (d * s - n * d * d / 2.0) / var;
        let down = (-d * s - n * d * d / 2.0) / var;
        (up, down)
    }

    /// Wald's bounds: below the first, accept no difference; above the
    /// second, accept the difference.
    pub fn bounds(&self) -> (f64, f64) {
        let a = self.alpha / 2.0;
        ((self.beta / (1.0 - a)).ln(), ((1.0 - self.beta) / a).ln())
    }

    pub fn verdict(&self, p: &Paired) -> Verdict {
        if p.n < Self::MIN_PAIRS {
            return Verdict::Open;
        }
        let (up, down) = self.llr(p);
        let (low, high) = self.bounds();
        if up >= high {
            Verdict::Higher
        } else if down >= high {
            Verdict::Lower
        } else if up <= low && down <= low {
            Verdict::Same
        } else {
            Verdict::Open
        }
    }
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

    fn counts(values: &[u64]) -> BTreeMap<u64, u64> {
        let mut m = BTreeMap::new();
        for v in values {
            *m.entry(*v).or_default() += 1;
        }
        m
    }

    #[test]
    fn distribution_quantiles_and_histogram_add_up() {
        let d = Distribution::of_counts(&counts(&[1, 2, 3, 4, 100]));
        assert_eq!(d.median, 3.0);
        assert_eq!(d.min, 1.0);
        assert_eq!(d.max, 100.0);
        assert_eq!(d.histogram.iter().map(|h| h.2).sum::<u64>(), 5);
        assert!((d.mean - 22.0).abs() < 1e-9);
        // Quantiles between two values are interpolated: 1 2 | 3 4.
        let even = Distribution::of_counts(&counts(&[4, 1, 3, 2]));
        assert_eq!(even.median, 2.5);
        assert!((even.p10 - 1.3).abs() < 1e-9, "{}", even.p10);
        assert!((even.stdev - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    fn result(i: u64, winner: Option<Seat>, turns: u32, bots: &[&str], card: &str) -> GameResult {
        GameResult {
            index: i,
            seed: i,
            winner,
            turns,
            decisions: 10 * turns as u64,
            first: Some((i % 2) as usize),
            bots: bots.iter().map(|b| b.to_string()).collect(),
            stats: vec![("hits".into(), (i % 3) as i64)],
            labels: vec![("winner_card".into(), card.into())],
            cards: vec![card.into()],
            scores: vec![],
            loose_decisions: i % 5 / 4,
            record: None,
        }
    }

    #[test]
    fn tallies_of_parts_merge_into_the_tally_of_the_whole() {
        let games: Vec<GameResult> = (0..23)
            .map(|i| {
                let w = [Some(0), Some(1), None][(i % 3) as usize];
                let card = ["x", "y", "z", "x"][(i % 4) as usize];
                result(i, w, 5 + (i * 7 % 11) as u32, &["random", "greedy"], card)
            })
            .collect();
        let tally = |rs: &[GameResult]| {
            let mut t = Tally::new(2, 1);
            rs.iter().for_each(|r| t.add(r));
            t
        };
        let whole = tally(&games);
        for parts in [1, 2, 7] {
            let mut merged = Tally::new(2, 1);
            for chunk in games.chunks(games.len().div_ceil(parts)) {
                merged.merge(&tally(chunk)).unwrap();
            }
            assert_eq!(merged, whole, "{parts} parts");
        }
        let docs = [("hits".to_string(), "".to_string())];
        let s = Summary::of_tally(&whole, &docs);
        assert_eq!(s.games, 23);
        assert_eq!(s.seats[0].wins.count + s.seats[1].wins.count + s.draws.count, 23);
        assert_eq!(s.counters[0].total, (0..23).map(|i| i % 3).sum::<i64>());
        assert_eq!(s.card_labels.iter().map(|c| c.wins.of).sum::<u64>(), 23);
        assert!(Tally::new(3, 1).merge(&whole).is_err(), "other players");
    }

    #[test]
    fn score_tallies_merge_exactly_and_give_means_intervals_and_margins() {
        // Chips of a zero-sum game: P1 wins 2, loses 1, wins 1, ... by game.
        let games: Vec<GameResult> = (0..40)
            .map(|i| {
                let p1 = [2, -1, 1, -2, 1][(i % 5) as usize];
                let mut r = result(i, Some(if p1 > 0 { 0 } else { 1 }), 3, &["mcts", "random"], "x");
                r.scores = vec![p1, -p1];
                r
            })
            .collect();
        let tally = |rs: &[GameResult]| {
            let mut t = Tally::new(2, 1);
            rs.iter().for_each(|r| t.add(r));
            t
        };
        let whole = tally(&games);
        let mut merged = Tally::new(2, 1);
        for chunk in games.chunks(7) {
            merged.merge(&tally(chunk)).unwrap();
        }
        assert_eq!(merged, whole);
        let s = Summary::of_tally(&whole, &[("hits".into(), "".into())]);
        // P1's mean is (2 - 1 + 1 - 2 + 1) / 5 = 0.2; P2's its negative.
        assert!((s.scores[0].mean - 0.2).abs() < 1e-12, "{:?}", s.scores[0]);
        assert!((s.scores[1].mean + 0.2).abs() < 1e-12);
        assert!(s.scores[0].low < 0.2 && s.scores[0].high > 0.2);
        assert_eq!((s.scores[0].min, s.scores[0].max), (-2, 2));
        let mcts = s.bot_scores.iter().find(|b| b.who == "mcts").unwrap();
        assert_eq!(mcts.games, 40);
        assert!((mcts.mean - 0.2).abs() < 1e-12);
        // Margins: |2 - -2| = 4 in 16 games, 2 in the other 24.
        let m = s.margins.unwrap();
        assert!((m.mean - (16.0 * 4.0 + 24.0 * 2.0) / 40.0).abs() < 1e-12, "{m:?}");
        assert_eq!((m.min, m.max), (2.0, 4.0));
        // Without scores, nothing about them.
        let plain = Summary::of(
            &games
                .iter()
                .cloned()
                .map(|mut r| {
                    r.scores.clear();
                    r
                })
                .collect::<Vec<_>>(),
            2,
            &[],
        );
        assert!(plain.scores.is_empty() && plain.bot_scores.is_empty() && plain.margins.is_none());
    }

    #[test]
    fn the_first_player_figure_counts_decided_games_only() {
        // Four games: the first player (P1 in even games) wins one, loses
        // one, and two are drawn.
        let games = [
            result(0, Some(0), 5, &["random", "random"], "x"),
            result(2, Some(1), 5, &["random", "random"], "x"),
            result(4, None, 5, &["random", "random"], "x"),
            result(6, None, 5, &["random", "random"], "x"),
        ];
        let s = Summary::of(&games, 2, &[]);
        assert_eq!((s.first_player.count, s.first_player.of), (1, 2));
        assert_eq!(s.first_player_advantage, 0.0);
        let draws = Summary::of(&games[2..], 2, &[]);
        assert_eq!(draws.first_player.of, 0, "no game was decided");
        assert_eq!(draws.first_player_advantage, 0.0, "not -50 points");
    }

    fn p_paired(a: &[i64], b: &[i64]) -> f64 {
        let mut p = Paired::default();
        a.iter().zip(b).for_each(|(x, y)| p.add(*x, *y));
        p.p()
    }

    #[test]
    fn the_paired_test_tells_noise_from_signal() {
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        // Game lengths that vary a lot from seed to seed; side B adds one
        // turn to every game, side C adds one turn to half of them.
        let a: Vec<i64> = (0..200).map(|i| i * 37 % 50).collect();
        let b: Vec<i64> = a.iter().map(|x| x + 1).collect();
        let c: Vec<i64> = a.iter().enumerate().map(|(i, x)| x + (i % 2) as i64).collect();
        assert_eq!(p_paired(&a, &a), 1.0);
        assert_eq!(p_paired(&a, &b), 0.0, "the same shift in every game");
        assert!(p_paired(&a, &c) < 0.001, "a small shift under large common noise");
        // Wins as 0/1: 10 games change hands one way and 12 the other.
        let x: Vec<i64> = (0..200).map(|i| (i < 100) as i64).collect();
        let y: Vec<i64> = (0..200).map(|i| (10..112).contains(&i) as i64).collect();
        let p = p_paired(&x, &y);
        assert!(p > 0.5 && p < 1.0, "{p}");
        // 30 games change hands, all the same way.
        let z: Vec<i64> = (0..200).map(|i| (i < 130) as i64).collect();
        assert!(p_paired(&x, &z) < 0.001);
        assert_eq!(p_paired(&x[..1], &z[..1]), 1.0, "one game says nothing");
    }

    #[test]
    fn the_sequential_test_stops_on_clear_evidence_and_not_before() {
        let sprt = Sprt {
            delta: 0.1,
            alpha: 0.05,
            beta: 0.05,
        };
        let mut p = Paired::default();
        // B wins every game A lost, from the first pair: decided quickly,
        // but never before MIN_PAIRS.
        let mut stop = None;
        for i in 0..1000u64 {
            p.add((i % 2) as i64, 1);
            if sprt.verdict(&p) != Verdict::Open {
                stop = Some((i + 1, sprt.verdict(&p)));
                break;
            }
        }
        let (n, v) = stop.unwrap();
        assert_eq!(v, Verdict::Higher);
        assert!((Sprt::MIN_PAIRS..100).contains(&n), "{n}");
        // The same scores on both sides, with noise: no difference.
        let mut same = Paired::default();
        let mut verdict = Verdict::Open;
        for i in 0..5000i64 {
            let x = (i * 7919 % 13 < 6) as i64;
            let y = (i * 104_729 % 17 < 8) as i64;
            same.add(x, y);
            verdict = sprt.verdict(&same);
            if verdict != Verdict::Open {
                break;
            }
        }
        assert_eq!(verdict, Verdict::Same, "{same:?}");
        let (low, high) = sprt.bounds();
        assert!(low < 0.0 && high > 0.0);
    }
}
