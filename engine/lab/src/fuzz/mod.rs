//! Rules fuzzing: checked games that look for a broken invariant or engine
//! contract, and shrink a broken game to a short record that shows it.
//!
//! - [`play`]: one checked game, every invariant after every step, the
//!   engine's generic checks along the way (in the spirit of OpenSpiel's
//!   random simulation test, see [`GenericCheck`]);
//! - [`swarm`]: each game draws its own weights over the action kinds;
//! - [`coverage`]: what the games reached, and the features that guide the
//!   search;
//! - [`search`]: a batch of games, fresh swarm games and mutations of kept
//!   ones (those that reached new coverage);
//! - [`shrink`]: the game-level shrinker (turns, blocks, chance, actions).

pub mod coverage;
pub mod play;
pub mod search;
pub mod shrink;
pub mod swarm;

pub use coverage::{Coverage, Features};
pub use play::{play_checked, play_with, Choice, Chooser, Played, Tape};
pub use search::run_batch;

use rulesmith_core::game::Game;
use rulesmith_core::record::Record;
use std::time::Instant;

/// Limits and switches of a fuzzing run.
#[derive(Clone, Debug)]
pub struct Options {
    pub players: usize,
    /// A game that has not ended after this many decisions is a finding.
    pub max_decisions: usize,
    /// The heavier generic checks run at every `deep_every`-th decision
    /// (`usize::MAX`: never).
    pub deep_every: usize,
    /// Stop (as a pass) after this many decisions: while shrinking, a
    /// candidate that runs far past the original break will not reproduce it.
    pub stop_after: Option<usize>,
    /// Replay the record at the end of each game (the record-replays
    /// check); [`run_batch`] keeps it for one game in four.
    pub replay_check: bool,
    /// Check only this invariant (shrinking a break of it); None: all.
    pub only_invariant: Option<String>,
    /// Check legal action texts (unique, parse back) at every decision.
    pub text_checks: bool,
    /// Candidate games the shrinker may play for one finding.
    pub shrink_budget: usize,
    /// Seconds the search for other breaks and the shrinker may take for
    /// one finding (None: no bound by time, the result depends only on the
    /// seed).
    pub shrink_seconds: Option<f64>,
    /// Told of each improvement while shrinking (a progress line).
    pub on_shrink: Option<shrink::OnProgress>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            players: 2,
            max_decisions: 20_000,
            deep_every: 8,
            stop_after: None,
            replay_check: true,
            only_invariant: None,
            text_checks: true,
            shrink_budget: 80_000,
            shrink_seconds: None,
            on_shrink: None,
        }
    }
}

/// The engine's own checks, run for every variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GenericCheck {
    /// Legal action texts are unique and parse back to the same action.
    UniqueTexts,
    /// Listing the legal actions twice gives the same list.
    DeterministicOrder,
    /// The seat to move is in play.
    SeatInPlay,
    /// Every legal action applies without error.
    EveryActionApplies,
    /// A clone equals the original.
    CloneEquals,
    /// A state saved (serde) and loaded plays on identically.
    SerdeRoundTrip,
    /// Resampling what the seat to move cannot see (others' secret cards
    /// and secret decisions) changes neither its view (summary and board)
    /// nor its legal actions.
    NoViewLeak,
    /// Replaying the game's record reproduces the state.
    RecordReplays,
    /// Listing the legal actions leaves the state unchanged.
    LegalIsPure,
    /// Legal actions recalled from the turn's memo (`recall`) are those a
    /// listing from scratch gives.
    MemoIsTransparent,
}

impl GenericCheck {
    pub const ALL: [GenericCheck; 10] = [
        GenericCheck::UniqueTexts,
        GenericCheck::DeterministicOrder,
        GenericCheck::SeatInPlay,
        GenericCheck::EveryActionApplies,
        GenericCheck::CloneEquals,
        GenericCheck::SerdeRoundTrip,
        GenericCheck::NoViewLeak,
        GenericCheck::RecordReplays,
        GenericCheck::LegalIsPure,
        GenericCheck::MemoIsTransparent,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GenericCheck::UniqueTexts => "unique-action-texts",
            GenericCheck::DeterministicOrder => "deterministic-order",
            GenericCheck::SeatInPlay => "seat-to-move-in-play",
            GenericCheck::EveryActionApplies => "every-action-applies",
            GenericCheck::CloneEquals => "clone-equals-original",
            GenericCheck::SerdeRoundTrip => "save-load-plays-on",
            GenericCheck::NoViewLeak => "no-view-leak",
            GenericCheck::RecordReplays => "record-replays",
            GenericCheck::LegalIsPure => "legal-listing-changes-nothing",
            GenericCheck::MemoIsTransparent => "memo-is-transparent",
        }
    }
}

/// What kind of break a finding is; shrinking keeps the kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A declared invariant does not hold.
    Invariant(String),
    /// One of the engine's generic checks failed.
    Check(GenericCheck),
    /// A script failed (the message names its file and line).
    Script,
    /// The rule set broke an engine contract (e.g. no legal action).
    Rules,
    /// The game did not end within the bound.
    NoEnd,
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindingKind::Invariant(n) => write!(f, "invariant '{n}'"),
            FindingKind::Check(c) => write!(f, "engine check '{}'", c.name()),
            FindingKind::Script => write!(f, "script error"),
            FindingKind::Rules => write!(f, "rule set error"),
            FindingKind::NoEnd => write!(f, "game without end"),
        }
    }
}

/// A rule-set inconsistency, with the game that shows it.
#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    /// The game up to and including the step where it broke.
    pub record: Record,
    /// Decisions played when it broke.
    pub decisions: usize,
    pub turn: u32,
    /// The step in which it broke.
    pub step: String,
    /// The choices of the game, in the order of the record.
    pub choices: Vec<Choice>,
}

/// Totals of the games a run played.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub games: u64,
    pub decisions: u64,
    pub wins: u64,
    pub draws: u64,
}

impl Totals {
    pub fn add(&mut self, o: &Totals) {
        self.games += o.games;
        self.decisions += o.decisions;
        self.wins += o.wins;
        self.draws += o.draws;
    }
}

/// A numeric parameter swept within its declared range.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    pub min: i64,
    pub max: i64,
}

/// The parameters a variant declares with both bounds: what `--param-sweep`
/// varies. Booleans sweep over false/true.
pub fn sweepable(game: &Game) -> Vec<Sweep> {
    game.variant()
        .params
        .iter()
        .filter_map(|p| match (&p.value, p.min, p.max) {
            (rulesmith_core::variant::Value::Int(_), Some(min), Some(max)) => Some(Sweep {
                name: p.name.clone(),
                min,
                max,
            }),
            (rulesmith_core::variant::Value::Bool(_), _, _) => Some(Sweep {
                name: p.name.clone(),
                min: 0,
                max: 1,
            }),
            _ => None,
        })
        .collect()
}

/// Swept parameter values, by name.
pub type Params = [(String, i64)];

/// Gives the game to play for a set of swept parameter values.
pub type GameFor<'a> = dyn FnMut(&Params) -> Result<std::rc::Rc<Game>, String> + 'a;

/// `variant` with swept values applied (booleans as 0 and 1).
pub fn with_params(
    variant: &rulesmith_core::variant::Variant,
    params: &Params,
) -> Result<rulesmith_core::variant::Variant, String> {
    let mut v = variant.clone();
    for (k, value) in params {
        let text = match v.param(k).map(|p| &p.value) {
            Some(rulesmith_core::variant::Value::Bool(_)) => (*value != 0).to_string(),
            _ => value.to_string(),
        };
        v.set(k, &text)?;
    }
    Ok(v)
}

/// The outcome of one batch of games.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub totals: Totals,
    pub coverage: Coverage,
    /// The shrunk finding, with the swept parameter values it used.
    pub finding: Option<(Finding, Vec<(String, i64)>)>,
    /// How the finding was found and shrunk.
    pub search: Option<SearchStats>,
}

/// How a batch's finding came about.
#[derive(Clone, Debug)]
pub struct SearchStats {
    /// Games of the batch played up to and including the one that broke.
    pub games: u64,
    /// Decisions of those games.
    pub decisions: u64,
    /// When the break was found, and when its shrinking ended.
    pub found_at: Instant,
    pub shrunk_at: Instant,
    /// Record lines of the game found, before shrinking.
    pub found_lines: usize,
    /// Candidate games the shrinker played.
    pub shrink_tried: usize,
    /// True when shrinking reached a fixed point (not the budget).
    pub fixed_point: bool,
    /// Games the batch kept for reaching new coverage.
    pub kept: usize,
}
