//! The protocol between the engine's turn machinery ([`crate::Game`]) and a
//! rule set's scripts. The Rhai interpreter (`rulesmith-rhai`, the reference)
//! and compiled rules both implement [`Rules`], so everything built on
//! `Game` (records, bots, fuzzing, simulation) runs on either.
//!
//! The engine decides *when* a rule runs (settling, turns, steps, chance,
//! transactions); a `Rules` only answers *what* it does, acting on the
//! [`Ctx`] it is lent for the call and on the script [`Data`] (defined in
//! [`crate::data`], below the state that holds it).

use crate::ctx::Ctx;
use crate::error::ScriptError;
use crate::state::Outcome;

pub use crate::data::{Data, NativeData};
use std::collections::BTreeMap;

/// What a rule set's scripts are to the engine: entry points the turn
/// machinery calls.
pub trait Rules {
    /// "interpreted" or "compiled", for messages.
    fn engine_name(&self) -> &'static str;
    /// Every script function as (name, arity): [`crate::Game`] checks the
    /// TOML's references against it at load.
    fn signatures(&self) -> Vec<(String, usize)>;
    /// Empty script data for a new game (before setup runs).
    fn new_data(&self) -> Data;
    /// Runs one entry point. Natives act on `cx` (the core moved in, the
    /// legal list, queued requests).
    fn call(&self, entry: Entry<'_>, cx: &mut Ctx, data: &mut Data) -> Result<Reply, ScriptError>;
    /// Runs an entry point for its effect alone, its reply unused: the
    /// legal functions, applies, step entries, turn hooks and
    /// continuations that make up nearly every call of a game. Rules may
    /// skip building the reply; the default calls [`Rules::call`]. The
    /// error is boxed: this result passes back from every rule call, and
    /// boxed it fits a register.
    fn act(&self, entry: Entry<'_>, cx: &mut Ctx, data: &mut Data) -> Result<(), Box<ScriptError>> {
        self.call(entry, cx, data).map(drop).map_err(Box::new)
    }
    /// Runs a query entry point (summary, render, evaluate, labels, an
    /// invariant) on data it only reads, when the rules know that it
    /// cannot change the data: the game then need not copy the state
    /// first. `None` means "not known to be read-only": the game copies
    /// the state and uses [`Rules::call`].
    fn call_query(&self, _entry: Entry<'_>, _cx: &mut Ctx, _data: &Data) -> Option<Result<Reply, ScriptError>> {
        None
    }
    /// Script data from JSON (loading saved states); the way back is
    /// [`Data::to_json`].
    fn data_from_json(&self, v: serde_json::Value) -> Result<Data, String>;
    /// Starts (or stops, forgetting the counts) profiling script functions
    /// and card hooks.
    fn track_calls(&self, _on: bool) {}
    /// What each function and card hook cost since `track_calls(true)`.
    fn profile(&self) -> BTreeMap<String, FunctionProfile> {
        BTreeMap::new()
    }
    /// Every card hook a card script defines, as `card ID: HOOK`: part of
    /// what coverage is measured against.
    fn card_hook_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// Turns diagnostic mode on, before each run of a failed step, or off
    /// after the last. [`crate::Game`] runs a failed step again this way
    /// (up to twice) when its [`ScriptError::calls_lost`] is set; rules
    /// that never lose calls need not implement it. Rules may learn from a
    /// first run where to stop the second; turning the mode off forgets it.
    fn diagnose(&self, _on: bool) {}
    /// A recipe for more engines like this one (the same rules, the same
    /// limits), each to run on a thread of its own: a parallel search
    /// builds one per thread. `None` when these rules cannot be rebuilt.
    fn maker(&self) -> Option<RulesMaker> {
        None
    }
}

/// Builds a fresh [`Rules`] like the one it came from ([`Rules::maker`]);
/// it may be called on any thread.
pub type RulesMaker = std::sync::Arc<dyn Fn() -> Result<Box<dyn Rules>, String> + Send + Sync>;

/// An entry point of the rules, named by what the variant's data says it
/// is (the `Rules` knows which script function that is).
#[derive(Clone, Copy, Debug)]
pub enum Entry<'a> {
    /// `[setup] run`.
    Setup,
    /// Step `step`'s legal function: lists actions with `Ctx::add`.
    Legal { step: usize },
    /// Step `step`'s enter function.
    Enter { step: usize },
    /// Action kind `kind`'s apply function, with the action's values.
    Apply { kind: u16, values: &'a [i32] },
    /// `[turn] on_start`.
    TurnStart,
    /// `[turn] on_end`.
    TurnEnd,
    /// A chance continuation `then`, with the event's outcomes.
    Resume { then: &'a str, outcomes: &'a [Outcome] },
    /// The summary function; `viewer` is a seat, -1 for everyone.
    Summary { viewer: i64 },
    /// The render function; `viewer` is a seat, -1 for everyone.
    Render { viewer: i64 },
    /// The evaluate function for `seat`.
    Evaluate { seat: i64 },
    /// The labels function.
    Labels,
    /// The check of invariant number `index`.
    Invariant { index: usize },
}

/// What an entry point returned.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Unit,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// Summaries (an object, or null) and labels (an object of strings).
    Json(serde_json::Value),
    /// A value of no type the entry point expects: its type name, for the
    /// message that says so (for a summary, why it is not plain data).
    Other(String),
}

impl Reply {
    /// The script-side type name of the value, for messages.
    pub fn type_name(&self) -> &str {
        match self {
            Reply::Unit => "()",
            Reply::Bool(_) => "bool",
            Reply::Int(_) => "i64",
            Reply::Float(_) => "f64",
            Reply::Text(_) => "string",
            Reply::Json(serde_json::Value::Object(_)) => "map",
            Reply::Json(serde_json::Value::Array(_)) => "array",
            Reply::Json(_) => "value",
            Reply::Other(t) => t,
        }
    }
}

/// Limits that keep a runaway script from hanging or crashing the tool.
/// Every rule engine honours them.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_expr_depth: usize,
    pub max_string_size: usize,
    pub max_array_size: usize,
    pub max_map_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_operations: 2_000_000,
            max_call_levels: 48,
            max_expr_depth: 64,
            max_string_size: 1 << 16,
            max_array_size: 1 << 16,
            max_map_size: 1 << 12,
        }
    }
}

/// What the calls of one script function (or card hook) cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FunctionProfile {
    pub calls: u64,
    /// Wall-clock time inside the calls, card hooks they trigger included.
    pub nanos: u64,
    /// Operations (for the interpreter, Rhai's own count, the one
    /// `max_operations` limits), card hooks they trigger excluded. Zero
    /// unless the game counts operations (`rulesmith_rhai::interpreted_profiled`).
    pub operations: u64,
}
