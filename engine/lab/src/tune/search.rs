//! The search: a race between candidates on shared game seeds, fed by an
//! NTBEA search when the space is too large to race every candidate.
//!
//! **The race.** Every candidate still in plays the same games (game `i`
//! has the same seed for all of them), in rounds half as large again as
//! the one before (so that the last round overshoots little). After
//! each round, each target's figure gets an interval, and so does the
//! loss (the weighted distance of the figures from their goals). A
//! candidate is dropped when it is surely further from the goals than the
//! leader (see [`surely_worse`]): its figures differ from the leader's by
//! more than [`ELIMINATE_Z`] standard errors of the *paired* difference,
//! in a direction that takes them away from the goal wherever in its own
//! interval the leader's figure is. What the shared seeds make common to two
//! candidates cancels in that difference, so near-equal candidates are
//! told apart with far fewer games than unpaired ones. The race ends when
//! one candidate is left or the budget is spent.
//!
//! **Intervals** come from a grouped jackknife: the games are dealt into
//! [`BLOCKS`] blocks by game index, and a figure is recomputed with each
//! block left out. This works for any figure of the summary (a rate, a
//! mean, a label's share, the loss itself) without knowing its formula,
//! and blocks are the same games for every candidate, so differences are
//! paired.
//!
//! **NTBEA** (N-tuple bandit evolutionary algorithm, as in TAG): when the
//! space has more candidates than a race can give a first round to, half
//! the budget goes to evaluating one candidate at a time on a few games;
//! a bandit model over each parameter alone, each pair, and the whole
//! candidate estimates every candidate's loss, and the next candidate is
//! the most promising (by upper confidence) of a neighbourhood of the
//! current one. Its best estimated candidates are then raced.
//!
//! **Bisection** (`super::bisect`) replaces both for one ordered
//! parameter and one `PATH = V` target; [`Method`] says which runs.

use super::bisect;
use super::space::{Candidate, Space};
use super::target::Target;
use super::TuneError;
use crate::sim::{GameResult, Summary, Tally};
use rulesmith_core::rng;
use std::collections::BTreeMap;

/// Blocks of the jackknife (games go to block `index % BLOCKS`).
pub const BLOCKS: usize = 16;
/// Games of a race's first round per candidate (then 1.5 times more each
/// round): one per
/// block, so that every block has a game.
pub const FIRST_ROUND: u64 = BLOCKS as u64;
/// Student's t for 95% intervals with `BLOCKS - 1` degrees of freedom.
pub const T95: f64 = 2.131;
/// Standard errors by which a candidate's loss must exceed the leader's
/// to be dropped: stricter than the 95% of the reported intervals,
/// because the race looks at every candidate after every round.
pub const ELIMINATE_Z: f64 = 2.576;
/// Games of one NTBEA evaluation.
pub const NTBEA_GAMES: u64 = 8;
/// Neighbours NTBEA considers before each evaluation.
pub const NEIGHBOURS: usize = 50;
/// Candidates NTBEA hands to the race.
pub const FINALISTS: usize = 8;
/// NTBEA's games are numbered from here, apart from the race's.
const NTBEA_FIRST_GAME: u64 = 1 << 40;

/// How a search runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The most games played, all candidates together.
    pub budget: u64,
    /// Seed of NTBEA's choices (the games' seeds are the caller's).
    pub seed: u64,
    /// The variant's counters (name, doc), for its summaries.
    pub counters: Vec<(String, String)>,
    pub players: usize,
    pub method: Method,
}

/// How the search spends its games (`--method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Bisection when it applies, else the race when every candidate can
    /// have a first round, else NTBEA.
    Auto,
    /// Every candidate raced on shared seeds.
    Race,
    /// A bisection on one ordered parameter's values (see [`bisect`]).
    Bisect,
    /// NTBEA proposes finalists, which are raced.
    Ntbea,
}

impl Method {
    /// Its name, as `--method` and `--json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Race => "race",
            Method::Bisect => "bisect",
            Method::Ntbea => "ntbea+race",
        }
    }
}

/// Plays games `games` of every candidate given; returns each candidate's
/// results, in game order.
pub type Play<'a> = dyn FnMut(&[Candidate], std::ops::Range<u64>) -> Result<Vec<Vec<GameResult>>, TuneError> + 'a;

/// A figure with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// A candidate as the search left it.
#[derive(Clone, Debug)]
pub struct Ranked {
    pub candidate: Candidate,
    /// `--set` texts.
    pub sets: Vec<String>,
    pub games: u64,
    /// Still in the race when it ended.
    pub alive: bool,
    pub loss: Estimate,
    /// Per target: its figure, and whether it meets the goal.
    pub figures: Vec<(Estimate, bool)>,
    pub summary: Summary,
}

/// How one target's figure moves with one parameter: its mean over the
/// candidates measured at each value.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Sensitivity {
    pub target: usize,
    pub param: usize,
    /// (value, mean figure, candidates measured with it).
    pub by_value: Vec<(String, f64, usize)>,
    /// Largest minus smallest of those means.
    pub spread: f64,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The candidates measured by the race or the bisection, best first:
    /// those still in by loss, then the dropped ones by loss.
    pub ranking: Vec<Ranked>,
    /// Games played in all.
    pub games: u64,
    /// Candidates in the space, and how many were measured.
    pub space: u64,
    pub measured: usize,
    /// Games NTBEA played (0 when every candidate was raced).
    pub ntbea_games: u64,
    /// Whether the race ended with one candidate left.
    pub decided: bool,
    pub sensitivity: Vec<Sensitivity>,
    /// The method that gave the answer (a bisection that found the
    /// figure not monotone ends as a race).
    pub method: Method,
    /// How a bisection went: its probes, or why it handed over to a race.
    pub note: Option<String>,
}

/// Games of one candidate. In a race and a bisection they are games
/// `0..n` in order, so that two arms can be compared on the games they
/// share; the jackknife deals them into blocks by game index.
#[derive(Clone, Debug)]
pub(super) struct Arm {
    pub(super) candidate: Candidate,
    results: Vec<GameResult>,
    pub(super) alive: bool,
}

/// An arm's figures: per target the whole-sample value and the value with
/// each block left out, and the same for the loss.
pub(super) struct Measured {
    pub(super) whole: Vec<f64>,
    pub(super) left_out: Vec<Vec<f64>>,
    pub(super) loss: f64,
    loss_left_out: Vec<f64>,
    summary: Summary,
}

impl Arm {
    pub(super) fn new(candidate: Candidate) -> Arm {
        Arm {
            candidate,
            results: Vec::new(),
            alive: true,
        }
    }

    pub(super) fn add(&mut self, results: &[GameResult]) {
        self.results.extend_from_slice(results);
    }

    pub(super) fn games(&self) -> u64 {
        self.results.len() as u64
    }

    /// The first `n` games (all of them when `n` is larger), dealt into
    /// the jackknife's blocks.
    fn blocks(&self, s: &Settings, n: u64) -> Vec<Tally> {
        let mut blocks = vec![Tally::new(s.players, s.counters.len()); BLOCKS];
        for r in self.results.iter().take(n as usize) {
            blocks[(r.index % BLOCKS as u64) as usize].add(r);
        }
        blocks
    }

    fn merged(blocks: &[Tally], s: &Settings, without: Option<usize>) -> Tally {
        let mut t = Tally::new(s.players, s.counters.len());
        for (k, b) in blocks.iter().enumerate() {
            if Some(k) != without {
                t.merge(b).expect("tallies of one variant");
            }
        }
        t
    }

    /// The figures of the first `n` games.
    pub(super) fn measure(&self, s: &Settings, targets: &[Target], n: u64) -> Result<Measured, TuneError> {
        let figures = |t: &Tally| -> Result<(Vec<f64>, f64, Summary), TuneError> {
            let summary = Summary::of_tally(t, &s.counters);
            let v = targets
                .iter()
                .map(|x| x.value(&summary))
                .collect::<Result<Vec<f64>, _>>()?;
            let loss = targets.iter().zip(&v).map(|(x, &f)| x.loss(f)).sum();
            Ok((v, loss, summary))
        };
        let blocks = self.blocks(s, n);
        let (whole, loss, summary) = figures(&Arm::merged(&blocks, s, None))?;
        let (mut left_out, mut loss_left_out) = (Vec::new(), Vec::new());
        for k in 0..BLOCKS {
            if blocks[k].games == 0 {
                continue;
            }
            let (v, l, _) = figures(&Arm::merged(&blocks, s, Some(k)))?;
            left_out.push(v);
            loss_left_out.push(l);
        }
        Ok(Measured {
            whole,
            left_out,
            loss,
            loss_left_out,
            summary,
        })
    }
}

/// The jackknife's standard error of a statistic from its leave-one-out
/// values.
pub(super) fn jackknife_se(left_out: &[f64]) -> f64 {
    let k = left_out.len() as f64;
    if k < 2.0 {
        return f64::INFINITY;
    }
    let mean = left_out.iter().sum::<f64>() / k;
    ((k - 1.0) / k * left_out.iter().map(|x| (x - mean).powi(2)).sum::<f64>()).sqrt()
}

fn estimate(value: f64, se: f64) -> Estimate {
    Estimate {
        value,
        low: value - T95 * se,
        high: value + T95 * se,
    }
}

/// Searches `space` for the candidate whose figures come closest to
/// `targets`, playing games with `play`; `progress` hears a line per round.
pub fn search(
    space: &Space,
    targets: &[Target],
    settings: &Settings,
    play: &mut Play<'_>,
    progress: &mut dyn FnMut(String),
) -> Result<Outcome, TuneError> {
    let size = space.size();
    // One game first, so that a target naming no figure is refused before
    // the search spends its budget (not counted: the race replays it).
    let probe = play(&[space.nth(0)], 0..1)?;
    let mut tally = Tally::new(settings.players, settings.counters.len());
    probe[0].iter().for_each(|g| tally.add(g));
    let summary = Summary::of_tally(&tally, &settings.counters);
    for t in targets {
        t.value(&summary)?;
    }
    // Every candidate raced when a first round for all of them fits in a
    // quarter of the budget; otherwise NTBEA proposes the finalists. One
    // ordered parameter and one `= V` target: a bisection on its order.
    let enumerate = size.saturating_mul(FIRST_ROUND) <= settings.budget / 4;
    let ordered = bisect::applies(space, targets);
    let method = match settings.method {
        Method::Auto if ordered.is_ok() && size >= bisect::MIN_VALUES => Method::Bisect,
        Method::Auto if enumerate => Method::Race,
        Method::Auto => Method::Ntbea,
        Method::Bisect => {
            ordered.map_err(|why| TuneError::Method {
                method: "bisect".into(),
                why,
            })?;
            Method::Bisect
        }
        m => m,
    };
    let mut measured: BTreeMap<Candidate, Arm> = BTreeMap::new();
    let mut ntbea_games = 0;
    let (arms, games, decided, method, note) = match method {
        Method::Bisect => {
            let b = bisect::bisect(space, targets, settings, play, progress)?;
            let method = if b.fell_back { Method::Race } else { Method::Bisect };
            (b.arms, b.games, b.decided, method, Some(b.note))
        }
        _ => {
            let arms: Vec<Arm> = if method == Method::Race {
                (0..size).map(|i| Arm::new(space.nth(i))).collect()
            } else {
                let needed = FINALISTS as u64 * FIRST_ROUND * 4;
                if settings.budget < needed {
                    return Err(TuneError::Budget {
                        budget: settings.budget,
                        needed,
                        why: format!("NTBEA races its {FINALISTS} best candidates after searching"),
                    });
                }
                let (finalists, played) = ntbea(space, targets, settings, play, progress, &mut measured)?;
                ntbea_games = played;
                finalists.into_iter().map(Arm::new).collect()
            };
            if arms.len() as u64 * FIRST_ROUND > settings.budget - ntbea_games {
                return Err(TuneError::Budget {
                    budget: settings.budget,
                    needed: arms.len() as u64 * FIRST_ROUND + ntbea_games,
                    why: format!(
                        "a first round of {FIRST_ROUND} games for each of {} candidates",
                        arms.len()
                    ),
                });
            }
            let (arms, race_games, decided) =
                race(arms, targets, settings, settings.budget - ntbea_games, play, progress)?;
            (arms, ntbea_games + race_games, decided, method, None)
        }
    };
    let mut ranking = Vec::new();
    // Candidates that never played (a bisection's bracket when its budget
    // ran out) have no figures to rank.
    for a in arms.iter().filter(|a| a.games() > 0) {
        let m = a.measure(settings, targets, a.games())?;
        let se: Vec<f64> = (0..targets.len())
            .map(|t| jackknife_se(&m.left_out.iter().map(|v| v[t]).collect::<Vec<_>>()))
            .collect();
        let figures = targets
            .iter()
            .enumerate()
            .map(|(t, x)| {
                let e = estimate(m.whole[t], se[t]);
                (e, x.met(e.value, e.low, e.high))
            })
            .collect();
        ranking.push(Ranked {
            candidate: a.candidate.clone(),
            sets: space.sets(&a.candidate),
            games: a.games(),
            alive: a.alive,
            loss: estimate(m.loss, jackknife_se(&m.loss_left_out)),
            figures,
            summary: m.summary,
        });
    }
    ranking.sort_by(|x, y| {
        y.alive
            .cmp(&x.alive)
            .then(x.loss.value.total_cmp(&y.loss.value))
            .then(x.candidate.cmp(&y.candidate))
    });
    for a in arms.into_iter().filter(|a| a.games() > 0) {
        match measured.get_mut(&a.candidate) {
            Some(m) => m.add(&a.results),
            None => {
                measured.insert(a.candidate.clone(), a);
            }
        }
    }
    let sensitivity = sensitivity(space, targets, settings, &measured)?;
    Ok(Outcome {
        ranking,
        games,
        space: size,
        measured: measured.len(),
        ntbea_games,
        decided,
        sensitivity,
        method,
        note,
    })
}

/// Races `arms` within `budget` games: the arms at the end (dropped ones
/// marked), the games played, and whether one was left. Each round brings
/// every arm still in to the same games `0..n` (an arm that already has
/// them, from a bisection's probes, plays none) and compares them on those.
pub(super) fn race(
    mut arms: Vec<Arm>,
    targets: &[Target],
    s: &Settings,
    budget: u64,
    play: &mut Play<'_>,
    progress: &mut dyn FnMut(String),
) -> Result<(Vec<Arm>, u64, bool), TuneError> {
    let (mut next, mut spent, mut batch, mut round) = (0u64, 0u64, FIRST_ROUND, 0);
    loop {
        let alive: Vec<usize> = (0..arms.len()).filter(|&i| arms[i].alive).collect();
        if alive.len() <= 1 {
            return Ok((arms, spent, true));
        }
        let left = budget - spent;
        let cost = |to: u64| -> u64 { alive.iter().map(|&i| to.saturating_sub(arms[i].games())).sum() };
        // The furthest round end within the batch that the budget pays for.
        let (mut lo, mut hi) = (next, next + batch);
        while lo < hi {
            let mid = hi - (hi - lo) / 2;
            if cost(mid) <= left {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo == next {
            return Ok((arms, spent, false));
        }
        let to = lo;
        round += 1;
        spent += cost(to);
        // Arms with the same games so far play together.
        let mut from: Vec<u64> = alive.iter().map(|&i| arms[i].games()).filter(|&g| g < to).collect();
        from.sort_unstable();
        from.dedup();
        for f in from {
            let group: Vec<usize> = alive.iter().copied().filter(|&i| arms[i].games() == f).collect();
            let candidates: Vec<Candidate> = group.iter().map(|&i| arms[i].candidate.clone()).collect();
            let results = play(&candidates, f..to)?;
            for (&i, r) in group.iter().zip(&results) {
                arms[i].add(r);
            }
        }
        let n = to - next;
        next = to;
        batch += batch / 2;
        let measured = alive
            .iter()
            .map(|&i| arms[i].measure(s, targets, to))
            .collect::<Result<Vec<_>, _>>()?;
        let leader = (0..alive.len())
            .min_by(|&a, &b| measured[a].loss.total_cmp(&measured[b].loss))
            .expect("two or more alive");
        let lead = &measured[leader];
        for (k, m) in measured.iter().enumerate() {
            if k != leader && surely_worse(m, lead, targets) {
                arms[alive[k]].alive = false;
            }
        }
        let still = arms.iter().filter(|a| a.alive).count();
        progress(format!(
            "round {round}: {n} games each for {} candidates; {still} left, leader loss {:.4} ({} games so far)",
            alive.len(),
            lead.loss,
            spent
        ));
    }
}

/// Whether candidate `m` is surely further from the targets than the
/// leader: for each target, with the leader's figure within its interval,
/// `m`'s within its own, and their difference within the *paired*
/// interval of the difference (all at [`ELIMINATE_Z`]), the least the loss
/// can grow; dropped when the sum is above 0. Looking at the difference of losses
/// alone would not do: two candidates on either side of a goal of 0 differ
/// precisely (their games are paired) while which one is closer to 0 hangs
/// on where both are, which the pairing does not make precise.
pub(super) fn surely_worse(m: &Measured, lead: &Measured, targets: &[Target]) -> bool {
    if m.left_out.len() != lead.left_out.len() {
        return false;
    }
    let mut least = 0.0;
    for (t, target) in targets.iter().enumerate() {
        let b: Vec<f64> = lead.left_out.iter().map(|v| v[t]).collect();
        let a: Vec<f64> = m.left_out.iter().map(|v| v[t]).collect();
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let (se_b, se_a, se_d) = (jackknife_se(&b), jackknife_se(&a), jackknife_se(&d));
        if !(se_b.is_finite() && se_a.is_finite() && se_d.is_finite()) {
            return false;
        }
        let around = |v: f64, se: f64| (v - ELIMINATE_Z * se, v + ELIMINATE_Z * se);
        let (bv, av) = (lead.whole[t], m.whole[t]);
        least += target.least_loss_gain(around(bv, se_b), around(av, se_a), around(av - bv, se_d));
    }
    least > 0.0
}

/// NTBEA's statistics of one tuple of values: evaluations and their sum.
type Stats = BTreeMap<(usize, Vec<usize>), (u64, f64)>;

/// The tuples NTBEA models: each parameter alone, each pair, and (with
/// three or more parameters) all of them.
fn tuples(dims: usize) -> Vec<Vec<usize>> {
    let mut t: Vec<Vec<usize>> = (0..dims).map(|i| vec![i]).collect();
    for i in 0..dims {
        for j in i + 1..dims {
            t.push(vec![i, j]);
        }
    }
    if dims > 2 {
        t.push((0..dims).collect());
    }
    t
}

/// Runs NTBEA on half the budget: the finalists (best estimated first) and
/// the games played. Every evaluation's games are kept in `measured`.
fn ntbea(
    space: &Space,
    targets: &[Target],
    s: &Settings,
    play: &mut Play<'_>,
    progress: &mut dyn FnMut(String),
    measured: &mut BTreeMap<Candidate, Arm>,
) -> Result<(Vec<Candidate>, u64), TuneError> {
    let mut r = rng::seeded(rng::derive(s.seed, 0x7475_6e65));
    let dims = space.dims.len();
    let tuples = tuples(dims);
    let key = |t: usize, c: &Candidate| (t, tuples[t].iter().map(|&d| c[d]).collect::<Vec<_>>());
    let mut stats: Stats = BTreeMap::new();
    let evaluations = (s.budget / 2) / NTBEA_GAMES;
    let mut current: Candidate = space
        .dims
        .iter()
        .map(|d| rng::below(&mut r, d.values.len() as u32) as usize)
        .collect();
    let mut fitness: Vec<f64> = Vec::new();
    for e in 0..evaluations {
        let first = NTBEA_FIRST_GAME + e * NTBEA_GAMES;
        let results = play(std::slice::from_ref(&current), first..first + NTBEA_GAMES)?;
        let mut tally = Tally::new(s.players, s.counters.len());
        results[0].iter().for_each(|g| tally.add(g));
        let summary = Summary::of_tally(&tally, &s.counters);
        let mut loss = 0.0;
        for t in targets {
            loss += t.loss(t.value(&summary)?);
        }
        measured
            .entry(current.clone())
            .or_insert_with(|| Arm::new(current.clone()))
            .add(&results[0]);
        fitness.push(-loss);
        for t in 0..tuples.len() {
            let st = stats.entry(key(t, &current)).or_default();
            st.0 += 1;
            st.1 += -loss;
        }
        // Exploration in the fitness's own unit: its spread so far.
        let mean = fitness.iter().sum::<f64>() / fitness.len() as f64;
        let spread = (fitness.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / fitness.len() as f64)
            .sqrt()
            .max(1e-3);
        let total = (e + 1) as f64;
        let ucb = |c: &Candidate| {
            let mut v = 0.0;
            for t in 0..tuples.len() {
                let (n, sum) = stats.get(&key(t, c)).copied().unwrap_or((0, 0.0));
                let m = if n == 0 { mean } else { sum / n as f64 };
                v += m + spread * ((total + 1.0).ln() / (n as f64 + 0.5)).sqrt();
            }
            v / tuples.len() as f64
        };
        let mut best: Option<(f64, Candidate)> = None;
        for _ in 0..NEIGHBOURS {
            let mut c = current.clone();
            let forced = rng::below(&mut r, dims as u32) as usize;
            for (d, dim) in space.dims.iter().enumerate() {
                let n = dim.values.len() as u32;
                if n > 1 && (d == forced || rng::below(&mut r, dims as u32) == 0) {
                    // Another value of this parameter.
                    c[d] = (c[d] + 1 + rng::below(&mut r, n - 1) as usize) % n as usize;
                }
            }
            let u = ucb(&c);
            if best.as_ref().is_none_or(|(b, _)| u > *b) {
                best = Some((u, c));
            }
        }
        current = best.expect("neighbours").1;
        if (e + 1) % 50 == 0 || e + 1 == evaluations {
            progress(format!(
                "NTBEA: {} of {evaluations} evaluations ({} games), {} candidates seen",
                e + 1,
                (e + 1) * NTBEA_GAMES,
                measured.len()
            ));
        }
    }
    // The model's estimate of each candidate measured: the mean over its
    // tuples, without exploration.
    let mut ranked: Vec<(f64, &Candidate)> = measured
        .keys()
        .map(|c| {
            let v = (0..tuples.len())
                .filter_map(|t| stats.get(&key(t, c)).map(|(n, sum)| sum / *n as f64))
                .sum::<f64>()
                / tuples.len() as f64;
            (v, c)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let finalists = ranked.into_iter().take(FINALISTS).map(|(_, c)| c.clone()).collect();
    Ok((finalists, evaluations * NTBEA_GAMES))
}

/// Each target's figure against each parameter's values, over every
/// candidate measured.
fn sensitivity(
    space: &Space,
    targets: &[Target],
    s: &Settings,
    measured: &BTreeMap<Candidate, Arm>,
) -> Result<Vec<Sensitivity>, TuneError> {
    let mut figures: Vec<(&Candidate, Vec<f64>)> = Vec::new();
    for (c, arm) in measured {
        let summary = Summary::of_tally(&Arm::merged(&arm.blocks(s, u64::MAX), s, None), &s.counters);
        let v = targets
            .iter()
            .map(|t| t.value(&summary))
            .collect::<Result<Vec<_>, _>>()?;
        figures.push((c, v));
    }
    let mut out = Vec::new();
    for t in 0..targets.len() {
        for (p, dim) in space.dims.iter().enumerate() {
            let mut by_value = Vec::new();
            for (i, value) in dim.values.iter().enumerate() {
                let here: Vec<f64> = figures.iter().filter(|(c, _)| c[p] == i).map(|(_, v)| v[t]).collect();
                if !here.is_empty() {
                    by_value.push((value.clone(), here.iter().sum::<f64>() / here.len() as f64, here.len()));
                }
            }
            let (lo, hi) = by_value
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x.1), h.max(x.1)));
            out.push(Sensitivity {
                target: t,
                param: p,
                spread: if by_value.is_empty() { 0.0 } else { hi - lo },
                by_value,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::space::Dimension;

    /// A fake game: the first player wins when a number drawn from the
    /// game's seed, 0..100, is below `50 + edge(x)`.
    fn fake(
        space: &Space,
        edge: fn(i64) -> i64,
        cands: &[Candidate],
        games: std::ops::Range<u64>,
    ) -> Vec<Vec<GameResult>> {
        cands
            .iter()
            .map(|c| {
                let x: i64 = space.dims[0].values[c[0]].parse().unwrap();
                games
                    .clone()
                    .map(|i| {
                        let seed = rng::derive(7, i);
                        let u = rng::below(&mut rng::seeded(seed), 100) as i64;
                        GameResult {
                            index: i,
                            seed,
                            winner: Some(if u < 50 + edge(x) { 0 } else { 1 }),
                            turns: 10,
                            decisions: 10,
                            first: Some(0),
                            bots: vec!["random".into(), "random".into()],
                            stats: vec![],
                            labels: vec![],
                            cards: vec![],
                            scores: vec![],
                            loose_decisions: 0,
                            record: None,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Balanced at x = 6, falling by 4 points a step.
    fn falling(x: i64) -> i64 {
        4 * (6 - x)
    }

    fn space(values: i64) -> Space {
        Space {
            dims: vec![Dimension {
                name: "x".into(),
                values: (0..values).map(|v| v.to_string()).collect(),
            }],
        }
    }

    fn run_with(space: &Space, budget: u64, method: Method, edge: fn(i64) -> i64) -> Outcome {
        let targets = [Target::parse("first_player_advantage = 0").unwrap()];
        let settings = Settings {
            budget,
            seed: 3,
            counters: vec![],
            players: 2,
            method,
        };
        let mut play = |c: &[Candidate], g: std::ops::Range<u64>| Ok(fake(space, edge, c, g));
        search(space, &targets, &settings, &mut play, &mut |_| {}).unwrap()
    }

    fn run(space: &Space, budget: u64) -> Outcome {
        run_with(space, budget, Method::Auto, falling)
    }

    #[test]
    fn the_race_finds_the_balanced_value_within_its_budget() {
        let sp = space(25);
        let o = run_with(&sp, 20_000, Method::Race, falling);
        assert_eq!(o.method, Method::Race);
        assert_eq!(o.ranking[0].sets, vec!["x=6".to_string()], "{:?}", o.ranking[0]);
        assert!(o.games <= 20_000);
        assert_eq!(o.ntbea_games, 0, "25 candidates are raced");
        // Its figure is precise: most of the games went to it and its
        // neighbours (its true value is 0; a 95% interval may miss it).
        let (fpa, _) = o.ranking[0].figures[0];
        assert!(fpa.value.abs() < 0.02 && fpa.high - fpa.low < 0.05, "{fpa:?}");
        // Far values are dropped after the first rounds.
        let far = o.ranking.iter().find(|r| r.sets == ["x=24"]).unwrap();
        assert!(!far.alive && far.games <= 3 * FIRST_ROUND, "{}", far.games);
        // The figure falls with x: the sensitivity table says so.
        let sens = &o.sensitivity[0];
        assert!(sens.by_value[0].1 > sens.by_value[24].1 + 0.5, "{sens:?}");
    }

    #[test]
    fn bisection_finds_the_value_and_gives_it_more_of_the_budget_than_the_race() {
        let sp = space(50);
        let race = run_with(&sp, 20_000, Method::Race, falling);
        let bisect = run(&sp, 20_000);
        assert_eq!(bisect.method, Method::Bisect, "auto bisects one ordered parameter");
        assert_eq!(bisect.ranking[0].sets, ["x=6"], "{:?}", bisect.note);
        assert_eq!(race.ranking[0].sets, ["x=6"]);
        assert!(bisect.games <= 20_000);
        // The yardstick of docs/tuning.md: games played over what a sweep
        // at the answer's precision needs (50 values times its games).
        let ratio = |o: &Outcome| o.games as f64 / (50 * o.ranking[0].games) as f64;
        assert!(
            ratio(&bisect) < ratio(&race),
            "bisect {} ({} of {}), race {} ({} of {})",
            ratio(&bisect),
            bisect.ranking[0].games,
            bisect.games,
            ratio(&race),
            race.ranking[0].games,
            race.games
        );
        // Values far from the crossing were probed, never raced.
        assert!(bisect.ranking.iter().any(|r| r.sets == ["x=49"] && !r.alive));
        assert!(bisect.measured < 15, "{}", bisect.measured);
        // The answer plays deepest; its neighbours, paired with it on the
        // same games, only as deep as their difference from it needs.
        let games = |v: &str| bisect.ranking.iter().find(|r| r.sets == [v]).map_or(0, |r| r.games);
        let answer = games("x=6");
        assert!(
            games("x=5") < answer && games("x=7") < answer,
            "x=5: {}, x=6: {answer}, x=7: {}",
            games("x=5"),
            games("x=7")
        );
        let note = bisect.note.as_deref().unwrap();
        assert!(note.contains("x=49 below the goal"), "{note}");
        assert_eq!(
            run(&sp, 20_000).ranking[0].games,
            bisect.ranking[0].games,
            "reproducible"
        );
    }

    #[test]
    fn a_figure_that_is_not_monotone_sends_the_bisection_to_a_race() {
        // Above the goal at both ends of the first bracket's probes, but
        // far higher in the middle than at the low end: not monotone.
        fn zigzag(x: i64) -> i64 {
            match x {
                0..=3 => 10,
                4 => 0,
                5..=9 => 40,
                _ => -40,
            }
        }
        let sp = space(16);
        let o = run_with(&sp, 6_000, Method::Auto, zigzag);
        assert_eq!(o.method, Method::Race, "{:?}", o.note);
        let note = o.note.as_deref().unwrap();
        assert!(note.contains("does not fall as x grows"), "{note}");
        assert_eq!(o.ranking[0].sets, ["x=4"], "the race still finds the balance");
    }

    #[test]
    fn a_bisection_whose_budget_runs_out_early_still_answers_within_it() {
        let sp = space(50);
        for budget in [64, 100, 300] {
            let o = run_with(&sp, budget, Method::Bisect, falling);
            assert!(o.games <= budget, "{budget}: {}", o.games);
            assert!(!o.ranking.is_empty() && o.ranking[0].games > 0, "{budget}");
        }
    }

    #[test]
    fn bisect_is_refused_where_it_does_not_apply() {
        let sp = Space {
            dims: vec![space(4).dims[0].clone(), space(3).dims[0].clone()],
        };
        let targets = [Target::parse("first_player_advantage = 0").unwrap()];
        let settings = Settings {
            budget: 1000,
            seed: 3,
            counters: vec![],
            players: 2,
            method: Method::Bisect,
        };
        let mut play = |c: &[Candidate], g: std::ops::Range<u64>| Ok(fake(&sp, falling, c, g));
        let e = search(&sp, &targets, &settings, &mut play, &mut |_| {}).unwrap_err();
        assert!(
            e.to_string().contains("--method bisect: it needs one parameter, not 2"),
            "{e}"
        );
        let one = space(10);
        let band = [Target::parse("first_player_advantage in 0..0.1").unwrap()];
        assert_eq!(
            bisect::applies(&one, &band).unwrap_err(),
            "a target of the form PATH = V"
        );
        assert!(bisect::applies(&one, &targets).is_ok());
    }

    #[test]
    fn the_jackknife_gives_the_binomial_standard_error() {
        // 16 blocks of 0/1 values with mean 0.5: the jackknife's standard
        // error of the mean is the usual sqrt(p(1-p)/n)-like figure.
        let values: Vec<f64> = (0..16).map(|i| (i % 2) as f64).collect();
        let left_out: Vec<f64> = (0..16)
            .map(|k| (values.iter().sum::<f64>() - values[k]) / 15.0)
            .collect();
        let se = jackknife_se(&left_out);
        let sd = (values.iter().map(|v| (v - 0.5f64).powi(2)).sum::<f64>() / 15.0).sqrt();
        assert!((se - sd / 4.0).abs() < 1e-12, "{se} {sd}");
        assert_eq!(jackknife_se(&[1.0]), f64::INFINITY);
    }
}
