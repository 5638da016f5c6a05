//! Shrinking a broken game to a short record that still shows the break.
//!
//! The shrinker edits the game itself, the list of choices as the record
//! shows them, rather than a random tape. Its passes, after delta debugging
//! (Zeller) and Hypothesis's shrinker (MacIver):
//!
//! 1. remove whole turns, many at once first, then one at a time;
//! 2. remove blocks of choices, halving the block size down to one;
//! 3. re-deal chance outcomes, smallest first (larger ones too, when the
//!    break then comes sooner);
//! 4. replace an action by one listed earlier among the legal actions (or
//!    later, when the break then comes sooner).
//!
//! A candidate is played with the edited list: a decision takes its action
//! by text when it is legal and skips it otherwise, and a chance event that
//! has no outcome left in the list deals the smallest. A candidate is kept
//! when it breaks the same invariant with a message of the same shape (its
//! numbers aside) and its record is shorter, or as long and made of earlier
//! choices (shortlex order, so shrinking always ends). The passes repeat
//! until none changes anything: the result is a fixed point, from which no
//! single removal or simplification keeps the break (or the budget ran out).

use super::coverage::Coverage;
use super::play::{play_with, Choice, Chooser};
use super::swarm::Swarm;
use super::{Finding, FindingKind, GenericCheck, Options};
use rulesmith_core::game::Game;
use rulesmith_core::rng;
use rulesmith_core::state::{Action, Outcome};
use std::time::{Duration, Instant};

/// What a candidate asks for at one choice.
#[derive(Clone, Debug)]
enum Want {
    /// This action, if legal (else the entry is skipped).
    Text(String),
    /// The action at this index of the legal list.
    Index(usize),
    /// This chance outcome (the smallest if out of range).
    Chance(usize),
}

fn wants(choices: &[Choice]) -> Vec<Want> {
    choices
        .iter()
        .map(|c| match c {
            Choice::Decision { text, .. } => Want::Text(text.clone()),
            Choice::Chance { index, .. } => Want::Chance(*index),
        })
        .collect()
}

/// Plays a candidate list.
struct Replay<'w> {
    list: &'w [Want],
    at: usize,
    /// Chance events dealt without an entry of the list.
    unlisted: u64,
}

impl Chooser for Replay<'_> {
    fn decide(&mut self, game: &Game, legal: &[Action]) -> Option<usize> {
        while let Some(w) = self.list.get(self.at) {
            self.at += 1;
            match w {
                Want::Chance(_) => {}
                Want::Index(i) if *i < legal.len() => return Some(*i),
                Want::Index(_) => {}
                Want::Text(t) => {
                    if let Some(i) = game.parse_action(t).and_then(|a| legal.iter().position(|l| *l == a)) {
                        return Some(i);
                    }
                }
            }
        }
        None
    }

    fn chance(&mut self, outcomes: &[(Outcome, f64)]) -> usize {
        match self.list.get(self.at) {
            Some(Want::Chance(i)) => {
                self.at += 1;
                if *i < outcomes.len() {
                    *i
                } else {
                    0
                }
            }
            // Not the smallest outcome: always the smallest would never
            // break a tie (dice rolled again and again until one is higher).
            _ => {
                self.unlisted += 1;
                (rng::derive(0xC4A_4CE, self.unlisted) % outcomes.len() as u64) as usize
            }
        }
    }
}

/// The shape of a message: its words, numbers aside.
pub fn shape(message: &str) -> String {
    message.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// Where shrinking stands, for a progress line.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Record lines of the game found, and of the shortest so far.
    pub from: usize,
    pub now: usize,
    /// Candidate games played so far.
    pub tried: usize,
}

/// Called when shrinking starts, after each improvement, and every few
/// seconds in between (see [`REPORT_EVERY`]), so that a long shrink is
/// never silent.
pub type OnProgress = fn(&Progress);

/// The longest silence between two progress reports while shrinking.
pub const REPORT_EVERY: Duration = Duration::from_secs(5);

/// Options that reproduce a break of `kind` and nothing more: only the
/// checks that can show it, so candidates play fast.
pub fn focused(opts: &Options, kind: &FindingKind) -> Options {
    Options {
        deep_every: if matches!(kind, FindingKind::Check(_)) {
            opts.deep_every
        } else {
            usize::MAX
        },
        replay_check: *kind == FindingKind::Check(GenericCheck::RecordReplays),
        only_invariant: match kind {
            FindingKind::Invariant(name) => Some(name.clone()),
            _ => None,
        },
        text_checks: *kind == FindingKind::Check(GenericCheck::UniqueTexts),
        stop_after: None,
        ..opts.clone()
    }
}

struct Shrinker<'g> {
    game: &'g Game,
    opts: Options,
    kind: FindingKind,
    shape: String,
    budget: usize,
    tried: usize,
    from: usize,
    best: Finding,
    on_progress: Option<OnProgress>,
    /// When shrinking must stop, if it is bounded by time.
    deadline: Option<Instant>,
    reported: Instant,
}

/// Shortlex order of played games: fewer choices, then earlier ones.
fn key(choices: &[Choice]) -> (usize, Vec<usize>) {
    (choices.len(), choices.iter().map(Choice::index).collect())
}

impl Shrinker<'_> {
    /// Plays `list`; keeps it when it breaks the same way and is smaller.
    fn attempt(&mut self, list: &[Want]) -> bool {
        if self.tried >= self.budget {
            return false;
        }
        self.tried += 1;
        if self.reported.elapsed() >= REPORT_EVERY {
            self.report();
        }
        let mut replay = Replay {
            list,
            at: 0,
            unlisted: 0,
        };
        let Err(f) = play_with(self.game, &self.opts, &mut replay, &mut Coverage::default()) else {
            return false;
        };
        if f.kind != self.kind || shape(&f.message) != self.shape || key(&f.choices) >= key(&self.best.choices) {
            return false;
        }
        self.best = *f;
        self.report();
        true
    }

    /// The passes, repeated until none changes anything (true) or the
    /// budget runs out (false).
    fn passes(&mut self) -> bool {
        loop {
            let mut changed = self.remove_turns();
            changed |= self.remove_blocks();
            changed |= self.redeal_chance();
            changed |= self.other_actions();
            if !changed {
                return !self.out_of_budget();
            }
            if self.out_of_budget() {
                return false;
            }
        }
    }

    fn report(&mut self) {
        self.reported = Instant::now();
        if let Some(report) = self.on_progress {
            report(&Progress {
                from: self.from,
                now: self.best.choices.len(),
                tried: self.tried,
            });
        }
    }

    fn out_of_budget(&self) -> bool {
        self.tried >= self.budget || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Removes runs of whole turns, the longest runs first.
    fn remove_turns(&mut self) -> bool {
        let mut changed = false;
        let mut run = turn_starts(&self.best.choices).len() / 2;
        while run >= 1 && !self.out_of_budget() {
            let mut t = 0;
            loop {
                let starts = turn_starts(&self.best.choices);
                if t + run > starts.len() {
                    break;
                }
                let from = starts[t];
                let to = starts.get(t + run).copied().unwrap_or(self.best.choices.len());
                let mut list = wants(&self.best.choices);
                list.drain(from..to);
                if self.attempt(&list) {
                    changed = true;
                } else {
                    t += 1;
                }
                if self.out_of_budget() {
                    break;
                }
            }
            run /= 2;
        }
        changed
    }

    /// Removes blocks of choices, halving the block size down to one.
    fn remove_blocks(&mut self) -> bool {
        let mut changed = false;
        let mut size = self.best.choices.len() / 2;
        while size >= 1 && !self.out_of_budget() {
            let mut start = 0;
            while start + size <= self.best.choices.len() && !self.out_of_budget() {
                let mut list = wants(&self.best.choices);
                list.drain(start..start + size);
                if self.attempt(&list) {
                    changed = true;
                } else {
                    start += 1;
                }
            }
            size /= 2;
        }
        changed
    }

    /// Re-deals each chance outcome: first the smaller ones (a simpler
    /// game as long), then the larger ones (kept only when the break then
    /// comes sooner: a die that changes the game where a low one did not).
    fn redeal_chance(&mut self) -> bool {
        let mut changed = false;
        let mut i = 0;
        while i < self.best.choices.len() && !self.out_of_budget() {
            if let Choice::Chance { index, of, .. } = self.best.choices[i] {
                for other in (0..of).filter(|o| *o != index) {
                    let mut list = wants(&self.best.choices);
                    list[i] = Want::Chance(other);
                    if self.attempt(&list) {
                        changed = true;
                        break;
                    }
                }
            }
            i += 1;
        }
        changed
    }

    /// Replaces each action by another legal one: first those listed
    /// before it, then (kept only when the break comes sooner) after it.
    fn other_actions(&mut self) -> bool {
        const TRIED_PER_ACTION: usize = 24;
        let mut changed = false;
        let mut i = 0;
        while i < self.best.choices.len() && !self.out_of_budget() {
            if let Choice::Decision { index, of, .. } = self.best.choices[i] {
                for other in (0..of).filter(|o| *o != index).take(TRIED_PER_ACTION) {
                    let mut list = wants(&self.best.choices);
                    list[i] = Want::Index(other);
                    if self.attempt(&list) {
                        changed = true;
                        break;
                    }
                }
            }
            i += 1;
        }
        changed
    }
}

/// Where each turn's choices begin.
fn turn_starts(choices: &[Choice]) -> Vec<usize> {
    let mut starts = Vec::new();
    for (i, c) in choices.iter().enumerate() {
        if i == 0 || choices[i - 1].turn() != c.turn() {
            starts.push(i);
        }
    }
    starts
}

/// The outcome of shrinking.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub finding: Finding,
    /// Candidate games played.
    pub tried: usize,
    /// True when no pass could improve the record any more.
    pub fixed_point: bool,
}

/// Shrinks `found` on `game`, playing at most `budget` candidates, and
/// stopping at `deadline` if one is given (the result then depends on the
/// machine's speed, not only on the seed).
///
/// The passes end at a local minimum, which may still be far from the
/// shortest game (many small steps toward the break where a few large ones
/// would do).
/// So, while budget remains, the shrinker also plays new games from a cut of
/// its best one (the choices up to a random point, then swarm choices
/// seeded by `seed`, bounded by the best length); one that breaks the same
/// way in fewer lines is shrunk in turn, and kept if it ends shorter. This
/// stops when a tenth of the budget has brought no shorter record.
pub fn shrink(
    game: &Game,
    opts: &Options,
    found: Finding,
    budget: usize,
    seed: u64,
    on_progress: Option<OnProgress>,
    deadline: Option<Instant>,
) -> Shrunk {
    let kind = found.kind.clone();
    if kind == FindingKind::NoEnd {
        // Any shorter list ends (as a pass) before the bound: nothing to do.
        return Shrunk {
            finding: found,
            tried: 0,
            fixed_point: true,
        };
    }
    // A candidate that runs far past the break (dice that tie again and
    // again) is cut short: it ends as a game without end, another kind.
    let bounded = Options {
        max_decisions: opts.max_decisions.min(found.decisions * 2 + 50),
        ..focused(opts, &kind)
    };
    let mut s = Shrinker {
        game,
        opts: bounded,
        shape: shape(&found.message),
        kind,
        budget,
        tried: 0,
        from: found.choices.len(),
        best: found,
        on_progress,
        deadline,
        reported: Instant::now(),
    };
    s.report();
    let mut fixed_point = s.passes();
    let mut r = rng::seeded(seed);
    // New games stop once a tenth of the budget has brought no shorter
    // record. A break with no choice before it (right after setup) has no
    // cut to start from, and no shorter game.
    let mut last_gain = s.tried;
    while !s.out_of_budget() && !s.best.choices.is_empty() && s.tried - last_gain < budget / 10 {
        s.tried += 1;
        let cut = rng::below(&mut r, s.best.choices.len() as u32) as usize;
        let prefix = s.best.choices[..cut].to_vec();
        let mut swarm = Swarm::new(
            rng::seeded(rng::derive(seed, s.tried as u64)),
            game.variant().actions.len(),
            &prefix,
        );
        let shorter = Options {
            max_decisions: s.best.decisions,
            ..s.opts.clone()
        };
        let Err(f) = play_with(game, &shorter, &mut swarm, &mut Coverage::default()) else {
            continue;
        };
        if f.kind != s.kind || shape(&f.message) != s.shape || f.choices.len() >= s.best.choices.len() {
            continue;
        }
        // Shrink this one from scratch; keep it if it ends shorter.
        let before = std::mem::replace(&mut s.best, *f);
        let converged = s.passes();
        if s.best.choices.len() < before.choices.len() {
            fixed_point = converged;
            last_gain = s.tried;
            s.report();
        } else {
            s.best = before;
        }
    }
    Shrunk {
        finding: s.best,
        tried: s.tried,
        fixed_point,
    }
}

/// Plays the game of `choices` (by action text) with `opts`.
pub fn replay(game: &Game, opts: &Options, choices: &[Choice]) -> Result<super::play::Played, Box<Finding>> {
    let list = wants(choices);
    let mut r = Replay {
        list: &list,
        at: 0,
        unlisted: 0,
    };
    play_with(game, opts, &mut r, &mut Coverage::default())
}
