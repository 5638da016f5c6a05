//! Differential play: the same random games on two engines (the Rhai
//! interpreter, the oracle, and compiled rules), compared step by step.
//!
//! Both games are driven by one generator: at every decision the legal
//! lists must be the same texts in the same order, and the index drawn
//! picks the same action in both; chance outcomes are drawn once and fed to
//! both. Summaries (every seat's view), renders, invariant results,
//! evaluations and counters are compared along the way, and the records,
//! labels and returns at the end. The first difference is reported with the
//! record of the game up to it, so it replays on either engine.

use crate::playout::chance_bound;
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::record::Record;
use rulesmith_core::rng;
use rulesmith_core::state::{State, ToMove};

/// Where two engines first disagreed.
#[derive(Debug)]
pub struct Divergence {
    pub seed: u64,
    pub what: String,
    /// The game up to the difference.
    pub record: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "engines differ (seed {}): {}\nrecord up to there:\n{}",
            self.seed, self.what, self.record
        )
    }
}

/// What the compared games covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    pub games: u64,
    pub decisions: u64,
    pub chance: u64,
}

/// Plays `games` random games of `players` seats on both `oracle` and
/// `other`, game `i` seeded `rng::derive(seed, i)`; views and checks are
/// compared every `check_every` decisions and at the end.
pub fn compare(
    oracle: &Game,
    other: &Game,
    players: usize,
    seed: u64,
    games: u64,
    max_decisions: u64,
    check_every: u64,
) -> Result<Compared, Divergence> {
    let mut total = Compared::default();
    for i in 0..games {
        let game_seed = rng::derive(seed, i);
        let c = one_game(oracle, other, players, game_seed, max_decisions, check_every.max(1))?;
        total.games += 1;
        total.decisions += c.decisions;
        total.chance += c.chance;
    }
    Ok(total)
}

fn one_game(
    a: &Game,
    b: &Game,
    players: usize,
    seed: u64,
    max_decisions: u64,
    check_every: u64,
) -> Result<Compared, Divergence> {
    let mut record = Record::default();
    let header = [format!("players: {players}")];
    let diverged = |what: String, record: &Record| Divergence {
        seed,
        what,
        record: record.to_text(&header),
    };
    let both = |ra: Result<State, GameError>, rb: Result<State, GameError>, record: &Record| match (ra, rb) {
        (Ok(x), Ok(y)) => Ok((x, y)),
        (Err(x), Err(y)) if x.to_string() == y.to_string() => Err(None),
        (x, y) => Err(Some(diverged(
            format!("new game: {:?} vs {:?}", x.map(drop), y.map(drop)),
            record,
        ))),
    };
    let (mut sa, mut sb) = match both(a.new_game(players), b.new_game(players), &record) {
        Ok(pair) => pair,
        Err(None) => return Ok(Compared::default()),
        Err(Some(d)) => return Err(d),
    };
    let mut r = rng::seeded(seed);
    let mut counts = Compared::default();
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    // Scratch copies, refilled at every check from states some steps on:
    // `clone_from` reuses their stale vectors, as search and rollback do.
    let (mut ca, mut cb) = (sa.clone(), sb.clone());
    loop {
        if counts.decisions % check_every == 0 || sa.is_terminal() {
            views(a, b, &sa, &sb).map_err(|w| diverged(w, &record))?;
            ca.clone_from(&sa);
            cb.clone_from(&sb);
            if !ca.same_as(&sa) || !cb.same_as(&sb) {
                return Err(diverged(
                    "a state copied into a used one differs from its original".into(),
                    &record,
                ));
            }
        }
        match (sa.to_move(), sb.to_move()) {
            (ToMove::Terminal, ToMove::Terminal) => break,
            (ToMove::Decision(x), ToMove::Decision(y)) if x == y => {
                if counts.decisions >= max_decisions {
                    break;
                }
                let ra = a.legal_actions_into(&mut sa, &mut la);
                let rb = b.legal_actions_into(&mut sb, &mut lb);
                match (ra, rb) {
                    (Ok(()), Ok(())) => {}
                    (Err(x), Err(y)) if x.to_string() == y.to_string() => break,
                    (x, y) => return Err(diverged(format!("legal actions: {x:?} vs {y:?}"), &record)),
                }
                let (ta, tb) = (a.texts(&la), b.texts(&lb));
                if ta != tb {
                    return Err(diverged(
                        format!("legal actions of P{}:\n  {ta:?}\nvs\n  {tb:?}", x + 1),
                        &record,
                    ));
                }
                let k = rng::below(&mut r, la.len() as u32) as usize;
                record.decision(x, ta[k].clone());
                let ra = a.apply_trusted(&mut sa, la[k]);
                let rb = b.apply_trusted(&mut sb, lb[k]);
                match (ra, rb) {
                    (Ok(()), Ok(())) => {}
                    (Err(x), Err(y)) if x.to_string() == y.to_string() => break,
                    (x, y) => return Err(diverged(format!("applying {}: {x:?} vs {y:?}", ta[k]), &record)),
                }
                counts.decisions += 1;
            }
            (ToMove::Chance, ToMove::Chance) => {
                if counts.chance > chance_bound(counts.decisions) {
                    break;
                }
                let (oa, ob) = (a.chance_outcomes(&sa), b.chance_outcomes(&sb));
                if oa != ob {
                    return Err(diverged(format!("chance outcomes: {oa:?} vs {ob:?}"), &record));
                }
                let Some(o) = a.sample_outcome(&sa, &mut r) else { break };
                record.chance(a.outcome_text(o));
                let ra = a.apply_outcome(&mut sa, o);
                let rb = b.apply_outcome(&mut sb, o);
                match (ra, rb) {
                    (Ok(()), Ok(())) => {}
                    (Err(x), Err(y)) if x.to_string() == y.to_string() => break,
                    (x, y) => return Err(diverged(format!("outcome {o:?}: {x:?} vs {y:?}"), &record)),
                }
                counts.chance += 1;
            }
            (x, y) => return Err(diverged(format!("who moves: {x:?} vs {y:?}"), &record)),
        }
    }
    if a.returns(&sa) != b.returns(&sb) {
        return Err(diverged("returns differ".into(), &record));
    }
    if sa.is_terminal() {
        let (x, y) = (
            a.labels(&sa).map_err(|e| e.to_string()),
            b.labels(&sb).map_err(|e| e.to_string()),
        );
        if x != y {
            return Err(diverged(format!("labels: {x:?} vs {y:?}"), &record));
        }
    }
    if sa.history != sb.history {
        return Err(diverged("histories differ".into(), &record));
    }
    Ok(counts)
}

/// Every view, check and counter of the two states.
fn views(a: &Game, b: &Game, sa: &State, sb: &State) -> Result<(), String> {
    let seats = sa.core.seats;
    let viewers = std::iter::once(None).chain((0..seats).map(Some));
    for v in viewers {
        let (x, y) = (
            a.summary(sa, v).map_err(|e| e.to_string()),
            b.summary(sb, v).map_err(|e| e.to_string()),
        );
        if x != y {
            return Err(format!("summary for {v:?}:\n  {x:?}\nvs\n  {y:?}"));
        }
        let (x, y) = (
            a.render(sa, v).map_err(|e| e.to_string()),
            b.render(sb, v).map_err(|e| e.to_string()),
        );
        if x != y {
            return Err(format!("render for {v:?}:\n{x:?}\nvs\n{y:?}"));
        }
    }
    for s in 0..seats {
        let (x, y) = (
            a.evaluate(sa, s).map_err(|e| e.to_string()),
            b.evaluate(sb, s).map_err(|e| e.to_string()),
        );
        if x != y {
            return Err(format!("evaluate for P{}: {x:?} vs {y:?}", s + 1));
        }
    }
    let (x, y) = (
        a.broken_invariants(sa).map_err(|e| e.to_string()),
        b.broken_invariants(sb).map_err(|e| e.to_string()),
    );
    if x != y {
        return Err(format!("invariants: {x:?} vs {y:?}"));
    }
    if sa.core != sb.core {
        return Err(format!("engine state:\n  {:?}\nvs\n  {:?}", sa.core, sb.core));
    }
    Ok(())
}
