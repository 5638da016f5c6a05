//! Bisection: the search for one whole-number parameter whose figure
//! moves one way as the parameter grows (a head start, a starting hand
//! size), towards one `PATH = V` target.
//!
//! When the figure is monotone, the answer is one of the two values on
//! either side of where it crosses the goal, so most of the range needs
//! no more than its side of the goal, and a value far from the answer
//! shows its side in a few games (its figure is far from the goal). The
//! search measures both ends until their sides are known (a sequential
//! test: more games until the figure is [`ELIMINATE_Z`] standard errors
//! from the goal), then probes the middle of the bracket in the same way
//! and keeps the half where the sides differ, until two or three
//! neighbours are left (a probe too near the goal to tell its side ends
//! the halving: its neighbours' sides are tested instead). Those are
//! settled by the midpoints of neighbouring values (is the mean of their
//! figures above or below the goal?), reusing the games their probes
//! played: every probe plays games `0..n`, the same seeds as everyone
//! else's. The value both midpoints share plays deepest; its neighbours
//! play only as deep as the paired difference needs (`Probes::share`).
//!
//! Monotonicity is checked, not assumed: after every probe, each pair of
//! values measured is compared on the games they share (a paired
//! difference, as in the race); a pair that moves the wrong way plays
//! more games until it is clear, and one that moves the wrong way by
//! more than [`ELIMINATE_Z`] standard errors ends the bisection. So does a
//! goal that both ends are on the same side of, or an end too near the
//! goal to tell its side. The search then races every value, keeping the
//! games already played.

use super::search::{jackknife_se, race, Arm, Play, Settings, ELIMINATE_Z, FIRST_ROUND};
use super::space::Space;
use super::target::{Goal, Target};
use super::TuneError;

/// Games of a midpoint's two values before it may decide: with fewer, a
/// jackknife block holds a game or two, and a lucky start between two
/// close values would pick the answer.
pub const MIDPOINT_FLOOR: u64 = 4 * FIRST_ROUND;
/// The fewest games a neighbour of the deepest value in the final
/// bracket plays, as a share of that value's (see `Probes::share`).
pub const MIN_SHARE: f64 = 0.25;

/// Fewer values than this are raced: a race gives them all a first round
/// for about what a bisection spends finding its bracket.
pub const MIN_VALUES: u64 = 8;
/// A probe may spend up to this share of the budget (1 / it) on finding
/// its side; one still undecided is near the goal, and its bracket is
/// raced.
pub const PROBE_SHARE: u64 = 8;

/// Whether a bisection can search `space` for `targets`: `Ok`, or what it
/// needs.
pub fn applies(space: &Space, targets: &[Target]) -> Result<(), String> {
    let [dim] = &space.dims[..] else {
        return Err(format!("one parameter, not {}", space.dims.len()));
    };
    let values: Option<Vec<i64>> = dim.values.iter().map(|v| v.parse().ok()).collect();
    match values {
        Some(v) if v.windows(2).all(|w| w[0] < w[1]) => {}
        _ => return Err(format!("whole-number values of '{}' in increasing order", dim.name)),
    }
    match targets {
        [t] if matches!(t.goal, Goal::Equal(_)) => Ok(()),
        [_] => Err("a target of the form PATH = V".into()),
        _ => Err(format!("one target, not {}", targets.len())),
    }
}

/// What a bisection leaves: every value's arm (the final race's marked
/// alive), the games played, whether the race ended with one left, and
/// how it went.
pub(super) struct Bisected {
    pub arms: Vec<Arm>,
    pub games: u64,
    pub decided: bool,
    /// It found the figure not monotone (or could not tell) and raced
    /// every value instead.
    pub fell_back: bool,
    pub note: String,
}

/// The run's state: what is spent and what each probe found.
struct Probes<'p, 'a> {
    space: &'p Space,
    targets: &'p [Target],
    s: &'p Settings,
    play: &'p mut Play<'a>,
    progress: &'p mut dyn FnMut(String),
    goal: f64,
    arms: Vec<Arm>,
    spent: u64,
    cap: u64,
    /// One line per probe: its value, side and games.
    path: Vec<String>,
}

impl Probes<'_, '_> {
    fn value(&self, i: usize) -> String {
        self.space.sets(&vec![i]).remove(0)
    }

    /// Which side of the goal value `i`'s figure is on (+1 above, -1
    /// below), playing more of its games until it is sure; `None` when
    /// its share of the budget (or the budget) runs out first.
    fn side(&mut self, i: usize) -> Result<Option<f64>, TuneError> {
        loop {
            let have = self.arms[i].games();
            let mut shown = String::new();
            if have > 0 {
                let m = self.arms[i].measure(self.s, self.targets, have)?;
                let off = m.whole[0] - self.goal;
                let se = jackknife_se(&m.left_out.iter().map(|v| v[0]).collect::<Vec<_>>());
                shown = format!("{:+.4}", m.whole[0]);
                if off != 0.0 && off.abs() > ELIMINATE_Z * se {
                    let side = off.signum();
                    let word = if side > 0.0 { "above" } else { "below" };
                    self.path
                        .push(format!("{} {word} the goal ({shown}, {have} games)", self.value(i)));
                    return Ok(Some(side));
                }
            }
            let want = if have == 0 { FIRST_ROUND } else { have + have / 2 };
            if !self.grow(i, want.min(self.cap))? {
                self.path.push(format!(
                    "{} too near the goal to tell ({shown}, {have} games)",
                    self.value(i)
                ));
                return Ok(None);
            }
        }
    }

    /// Plays value `i`'s games up to `to` (within the budget): whether it
    /// played any.
    fn grow(&mut self, i: usize, to: u64) -> Result<bool, TuneError> {
        let have = self.arms[i].games();
        let to = to.min(have + (self.s.budget - self.spent));
        if to <= have {
            return Ok(false);
        }
        let results = (self.play)(&[self.arms[i].candidate.clone()], have..to)?;
        self.arms[i].add(&results[0]);
        self.spent += to - have;
        let line = format!("bisect: {} to {to} games ({} games so far)", self.value(i), self.spent);
        (self.progress)(line);
        Ok(true)
    }

    /// A pair of measured values whose figures move against `falls` (the
    /// figure falls as the parameter grows) beyond doubt, said in words.
    /// A pair that moves the wrong way within the noise plays more of its
    /// games (up to a probe's share each) until it is clear either way:
    /// few games settle a probe's side, too few to see a turn.
    fn not_monotone(&mut self, falls: bool) -> Result<Option<String>, TuneError> {
        'again: loop {
            let probed: Vec<usize> = (0..self.arms.len())
                .filter(|&i| self.arms[i].games() >= FIRST_ROUND)
                .collect();
            for (k, &p) in probed.iter().enumerate() {
                for &q in &probed[k + 1..] {
                    let shared = self.arms[p].games().min(self.arms[q].games());
                    let a = self.arms[p].measure(self.s, self.targets, shared)?;
                    let b = self.arms[q].measure(self.s, self.targets, shared)?;
                    let d: Vec<f64> = b.left_out.iter().zip(&a.left_out).map(|(x, y)| x[0] - y[0]).collect();
                    let rise = b.whole[0] - a.whole[0];
                    let wrong = if falls { rise } else { -rise };
                    if wrong > ELIMINATE_Z * jackknife_se(&d) {
                        return Ok(Some(format!(
                            "{} is {:+.4} at {} and {:+.4} at {} on the same {shared} games: it does not {} as {} grows",
                            self.targets[0].figure,
                            a.whole[0],
                            self.value(p),
                            b.whole[0],
                            self.value(q),
                            if falls { "fall" } else { "rise" },
                            self.space.dims[0].name
                        )));
                    }
                    if wrong > 0.0 && shared < self.cap {
                        let to = (shared + shared / 2).min(self.cap);
                        let grew_p = self.grow(p, to)?;
                        let grew_q = self.grow(q, to)?;
                        if grew_p || grew_q {
                            continue 'again;
                        }
                    }
                }
            }
            return Ok(None);
        }
    }

    /// Where the mean of `k`'s and `k + 1`'s figures is: its distance
    /// from the goal, that distance's standard error, and the games of
    /// the value with fewer (on which the two are paired).
    ///
    /// The value with more games (the *deep* one) gives its figure on all
    /// of them; the other's is the deep one's plus their difference on the
    /// games they share, so the mean is `F_deep(all) + (F_other(shared) -
    /// F_deep(shared)) / 2`. On shared seeds that difference is precise
    /// on few games (most games end alike for neighbouring values), so
    /// the other value need not play as deep as the one it is compared
    /// with. Each block left out of all three pieces at once gives the
    /// jackknife's values, so the standard error counts their covariance.
    /// With equal games it is the plain mean of the two figures.
    fn midpoint(&self, k: usize) -> Result<(f64, f64, u64), TuneError> {
        let (p, q) = (k, k + 1);
        let (deep, other) = if self.arms[q].games() > self.arms[p].games() {
            (q, p)
        } else {
            (p, q)
        };
        let shared = self.arms[other].games();
        let all = self.arms[deep].measure(self.s, self.targets, self.arms[deep].games())?;
        let paired = self.arms[deep].measure(self.s, self.targets, shared)?;
        let o = self.arms[other].measure(self.s, self.targets, shared)?;
        let whole = all.whole[0] + (o.whole[0] - paired.whole[0]) / 2.0;
        let blocks = all.left_out.len();
        let se = if o.left_out.len() == blocks && paired.left_out.len() == blocks {
            let left_out: Vec<f64> = (0..blocks)
                .map(|b| all.left_out[b][0] + (o.left_out[b][0] - paired.left_out[b][0]) / 2.0)
                .collect();
            jackknife_se(&left_out)
        } else {
            f64::INFINITY
        };
        Ok((whole - self.goal, se, shared))
    }

    /// How deep neighbour `i` plays, as a share of the games of `hub` (the
    /// value the bracket's midpoints share). The mean of their figures
    /// has the variance `v_hub / n_hub + v_diff / n_i` (see
    /// [`Self::midpoint`]), least for a given number of games when `n_i /
    /// n_hub` is `sqrt(v_diff / v_hub)`; both per-game variances come from
    /// the jackknife on the games played. Neighbours whose games differ a
    /// lot (the share nears 1) play as deep as the hub, as a plain paired
    /// mean needs; never less than [`MIN_SHARE`], so that a difference
    /// seen on too few games (none of them ending differently, by luck)
    /// keeps being checked as the hub goes deeper.
    fn share(&self, hub: usize, i: usize) -> Result<f64, TuneError> {
        let deep = self.arms[hub].games();
        let shared = self.arms[i].games().min(deep);
        if shared < MIDPOINT_FLOOR {
            return Ok(1.0);
        }
        let all = self.arms[hub].measure(self.s, self.targets, deep)?;
        let paired = self.arms[hub].measure(self.s, self.targets, shared)?;
        let o = self.arms[i].measure(self.s, self.targets, shared)?;
        let hub_se = jackknife_se(&all.left_out.iter().map(|v| v[0]).collect::<Vec<_>>());
        let diff: Vec<f64> = o
            .left_out
            .iter()
            .zip(&paired.left_out)
            .map(|(x, y)| (x[0] - y[0]) / 2.0)
            .collect();
        let diff_se = jackknife_se(&diff);
        let ratio = (diff_se.powi(2) * shared as f64 / (hub_se.powi(2) * deep as f64)).sqrt();
        Ok(if ratio.is_finite() {
            ratio.clamp(MIN_SHARE, 1.0)
        } else {
            1.0
        })
    }

    /// The value of `a..=b` that plays deepest: the middle one, whose
    /// figure both of its midpoints use; of two, the one whose figure is
    /// nearer the goal (the likely answer), or the one with more games
    /// while either has fewer than a first round.
    fn hub(&self, a: usize, b: usize) -> Result<usize, TuneError> {
        if b - a >= 2 {
            return Ok((a + b) / 2);
        }
        let (ga, gb) = (self.arms[a].games(), self.arms[b].games());
        if ga < FIRST_ROUND || gb < FIRST_ROUND {
            return Ok(if gb > ga { b } else { a });
        }
        let off = |i: usize, n: u64| -> Result<f64, TuneError> {
            Ok((self.arms[i].measure(self.s, self.targets, n)?.whole[0] - self.goal).abs())
        };
        Ok(if off(b, gb)? < off(a, ga)? { b } else { a })
    }

    /// Picks the answer among `lo..=hi`, the values between the last two
    /// whose sides are known (`low`: the side of the low end's figure).
    /// With a monotone figure, `k + 1` is nearer the goal than `k` exactly
    /// when the mean of their figures is on the low end's side of the
    /// goal, so the answer is the first `k` whose midpoint with `k + 1` is
    /// on the other side. Every midpoint of the bracket is tested at once
    /// (see [`Self::midpoint`]; most games already played by the probes):
    /// each round the hub (see [`Self::hub`]) plays to `n` games, `n`
    /// growing by half each round, and its neighbours to their share of
    /// that ([`Self::share`]; values further off to `n`), until each
    /// midpoint is [`ELIMINATE_Z`] standard errors from the goal; each
    /// decided one shrinks the bracket, and a value outside it plays no
    /// more. When the budget runs out, the estimates decide. Only the
    /// answer is left marked alive.
    fn settle(mut self, lo: usize, hi: usize, low: f64) -> Result<Bisected, TuneError> {
        let (mut a, mut b) = (lo, hi);
        let mut n = FIRST_ROUND;
        let mut decided = true;
        while a < b {
            let hub = self.hub(a, b)?;
            // The hub's neighbours in the bracket play their share of its
            // games; values further off, as many as it.
            let mut share = vec![1.0; b + 1];
            for i in [hub.wrapping_sub(1), hub + 1] {
                if (a..=b).contains(&i) {
                    share[i] = self.share(hub, i)?;
                }
            }
            // Games value `i` plays when the hub plays `to`: a neighbour
            // its share (but as many as the hub up to a midpoint's floor).
            let depth = |i: usize, to: u64| -> u64 {
                let part = (share[i] * to as f64).ceil() as u64;
                to.min(MIDPOINT_FLOOR).max(part).min(to)
            };
            // The furthest the budget takes the bracket together, so that
            // no value plays games the others cannot pair.
            let cost = |to: u64| -> u64 { (a..=b).map(|i| depth(i, to).saturating_sub(self.arms[i].games())).sum() };
            let left = self.s.budget - self.spent;
            let (mut reach, mut top) = (0, n);
            while reach < top {
                let mid = top - (top - reach) / 2;
                if cost(mid) <= left {
                    reach = mid;
                } else {
                    top = mid - 1;
                }
            }
            let wanted: Vec<(usize, u64)> = (a..=b).map(|i| (i, depth(i, reach))).collect();
            for (i, to) in wanted {
                self.grow(i, to)?;
            }
            let short = reach < n;
            if short {
                // The budget is spent: the estimates on the games played.
                let mut answer = b;
                if (a..=b).any(|i| self.arms[i].games() == 0) {
                    // A value never played (the probes spent the budget):
                    // the nearest of those measured.
                    let mut nearest = (f64::INFINITY, a);
                    for i in (a..=b).filter(|&i| self.arms[i].games() > 0) {
                        let m = self.arms[i].measure(self.s, self.targets, self.arms[i].games())?;
                        if (m.whole[0] - self.goal).abs() < nearest.0 {
                            nearest = ((m.whole[0] - self.goal).abs(), i);
                        }
                    }
                    answer = nearest.1;
                } else {
                    for k in a..b {
                        if self.midpoint(k)?.0 * low <= 0.0 {
                            answer = k;
                            break;
                        }
                    }
                }
                (a, decided) = (answer, false);
                break;
            }
            let (mut next_a, mut next_b) = (a, b);
            for k in a..b {
                let (off, se, shared) = self.midpoint(k)?;
                if shared < MIDPOINT_FLOOR {
                    continue;
                }
                if off * low > ELIMINATE_Z * se {
                    next_a = next_a.max(k + 1);
                } else if off * low < -ELIMINATE_Z * se {
                    next_b = next_b.min(k);
                }
            }
            if next_a > next_b {
                let why = format!(
                    "the midpoints of {}..{} put the answer both above {} and below {}: not monotone",
                    self.value(a),
                    self.space.dims[0].values[b],
                    self.space.dims[0].values[next_b],
                    self.space.dims[0].values[next_a]
                );
                let last = self.arms.len() - 1;
                return self.finish(0, last, why);
            }
            (a, b) = (next_a, next_b);
            n += n / 2;
        }
        let note = format!(
            "bisection ({}), then the midpoints of {}..{} tested: {}",
            self.path.join("; "),
            self.value(lo),
            self.space.dims[0].values[hi],
            self.value(a)
        );
        let line = format!("bisect: {note}");
        (self.progress)(line);
        self.arms[a].alive = true;
        Ok(Bisected {
            arms: self.arms,
            games: self.spent,
            decided,
            fell_back: false,
            note,
        })
    }

    /// Races the values `lo..=hi` on the rest of the budget, after the
    /// bisection stopped (`why`).
    fn finish(mut self, lo: usize, hi: usize, why: String) -> Result<Bisected, TuneError> {
        for a in &mut self.arms[lo..=hi] {
            a.alive = true;
        }
        let note = format!("bisection stopped ({why}); every value raced");
        let line = format!("bisect: {note}");
        (self.progress)(line);
        let (arms, games, decided) = race(
            self.arms,
            self.targets,
            self.s,
            self.s.budget - self.spent,
            self.play,
            self.progress,
        )?;
        Ok(Bisected {
            arms,
            games: self.spent + games,
            decided,
            fell_back: true,
            note,
        })
    }
}

/// Bisects the one parameter of `space` for the one `= V` target (see
/// [`applies`]), then races the bracket's values.
pub(super) fn bisect(
    space: &Space,
    targets: &[Target],
    s: &Settings,
    play: &mut Play<'_>,
    progress: &mut dyn FnMut(String),
) -> Result<Bisected, TuneError> {
    let Goal::Equal(goal) = targets[0].goal else {
        unreachable!("applies() lets only PATH = V through")
    };
    let needed = 4 * FIRST_ROUND;
    if s.budget < needed {
        return Err(TuneError::Budget {
            budget: s.budget,
            needed,
            why: "a bisection's first probes".into(),
        });
    }
    let n = space.dims[0].values.len();
    let mut arms: Vec<Arm> = (0..n).map(|i| Arm::new(vec![i])).collect();
    // Alive: in the final race. None is until the bracket is found.
    arms.iter_mut().for_each(|a| a.alive = false);
    let mut p = Probes {
        space,
        targets,
        s,
        play,
        progress,
        goal,
        arms,
        spent: 0,
        cap: (s.budget / PROBE_SHARE).max(FIRST_ROUND),
        path: Vec::new(),
    };
    let (low, high) = (p.side(0)?, p.side(n - 1)?);
    let low = match (low, high) {
        (Some(l), Some(h)) if l != h => l,
        (Some(_), Some(_)) => {
            let why = format!(
                "{} is on the same side of {goal} at both ends of the range",
                targets[0].figure
            );
            return p.finish(0, n - 1, why);
        }
        _ => {
            let why = "an end of the range is too near the goal to tell its side".to_string();
            return p.finish(0, n - 1, why);
        }
    };
    let falls = low > 0.0;
    let (mut lo, mut hi) = (0, n - 1);
    while hi - lo > 2 {
        if let Some(why) = p.not_monotone(falls)? {
            return p.finish(0, n - 1, why);
        }
        let mid = lo + (hi - lo) / 2;
        match p.side(mid)? {
            Some(side) if side == low => lo = mid,
            Some(_) => hi = mid,
            None => {
                // Near the goal: the answer is it or a neighbour, if the
                // neighbours' sides say so; otherwise the bracket is raced.
                let (below, above) = (mid - 1, mid + 1);
                let side_below = if below == lo { Some(low) } else { p.side(below)? };
                let side_above = if above == hi { Some(-low) } else { p.side(above)? };
                if side_below == Some(low) {
                    lo = below;
                }
                if side_above == Some(-low) {
                    hi = above;
                }
                break;
            }
        }
    }
    if let Some(why) = p.not_monotone(falls)? {
        return p.finish(0, n - 1, why);
    }
    p.settle(lo, hi, low)
}
