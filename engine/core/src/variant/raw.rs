//! What a designer typed: one TOML file, deserialized as-is, with spans.
//!
//! Nothing here is resolved or checked beyond TOML types; `mod.rs` does the
//! second phase (extends, references, ranges).

use indexmap::IndexMap;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub variant: Option<RawHeader>,
    #[serde(default)]
    pub params: IndexMap<Spanned<String>, RawParam>,
    #[serde(default)]
    pub notation: IndexMap<Spanned<String>, RawEnum>,
    #[serde(default)]
    pub actions: IndexMap<Spanned<String>, RawAction>,
    #[serde(default)]
    pub steps: IndexMap<Spanned<String>, RawStep>,
    pub turn: Option<RawTurn>,
    pub setup: Option<RawSetup>,
    pub end: Option<RawEnd>,
    pub output: Option<RawOutput>,
    #[serde(default)]
    pub decks: IndexMap<Spanned<String>, RawDeckRef>,
    /// `[card_schemas.NAME]`: card fields several decks share (a deck
    /// names one with `schema = "NAME"`).
    /// `[piles.NAME]`: named piles of a deck's cards, per seat or shared.
    #[serde(default)]
    pub piles: IndexMap<Spanned<String>, RawPile>,
    #[serde(default)]
    pub card_schemas: IndexMap<Spanned<String>, IndexMap<Spanned<String>, RawField>>,
    #[serde(default)]
    pub stats: IndexMap<Spanned<String>, String>,
    #[serde(default)]
    pub invariants: IndexMap<Spanned<String>, RawInvariant>,
    pub scores: Option<RawScores>,
}

/// `[scores]`: each seat's numeric result (points, chips) and its range.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScores {
    pub min: Spanned<i64>,
    pub max: Spanned<i64>,
    /// `"zero"`, `"constant"` (with `total`) or `"general"` (the default).
    pub sum: Option<Spanned<String>>,
    pub total: Option<Spanned<i64>>,
    pub doc: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHeader {
    pub name: Option<String>,
    pub title: Option<String>,
    pub extends: Option<Spanned<String>>,
    #[serde(default)]
    pub scripts: Vec<Spanned<String>>,
    pub players: Option<Spanned<RawPlayers>>,
    /// How many values the Python bridge numbers for an `int` slot with no
    /// declared range (and die faces when the scripts' dice are not all
    /// literal): 32 unless given.
    pub value_bound: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPlayers {
    pub min: usize,
    pub max: usize,
    pub default: Option<usize>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    pub value: Option<Spanned<toml::Value>>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub doc: Option<String>,
}

/// A `[notation]` enumeration: a list of words, or a table whose words
/// are some fixed ones followed by the card ids of decks.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawEnum {
    Words(Vec<String>),
    Derived(RawDerivedEnum),
    BySeat(RawSeatEnum),
}

/// `{ by_seat = ["x", "o"] }`: a word per seat, P1's first; a slot of it
/// holds the deciding seat, written as its word (`x3`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSeatEnum {
    pub by_seat: Vec<String>,
}

/// `{ words = ["-"], decks = ["red", "blue"] }`: the words, then every card
/// id of the decks (each once, in file order).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDerivedEnum {
    #[serde(default)]
    pub words: Vec<String>,
    #[serde(default)]
    pub decks: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAction {
    pub text: Spanned<String>,
    pub apply: Spanned<String>,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    pub legal: Spanned<String>,
    /// `"active"` (the seat whose turn it is) or `"script"` (the scripts
    /// name the deciding seat with `set_actor`).
    pub actor: Option<Spanned<String>>,
    pub enter: Option<Spanned<String>>,
    /// Decisions taken in this step are hidden from the other seats until
    /// the rules reveal them.
    pub secret: Option<bool>,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTurn {
    pub steps: Option<Spanned<Vec<Spanned<String>>>>,
    pub on_start: Option<Spanned<String>>,
    pub on_end: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSetup {
    pub run: Spanned<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEnd {
    pub last_standing: Option<bool>,
    /// A parameter name: the number of the turn whose end is a draw.
    pub max_turns: Option<Spanned<String>>,
    /// The most decisions any game takes (OpenSpiel's `max_game_length`);
    /// a longer game is an error of the rules.
    pub max_decisions: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    pub summary: Option<Spanned<String>>,
    /// `fn NAME(seat)`: how good the state is for `seat` (a number); what
    /// the greedy and MCTS bots look ahead with.
    pub evaluate: Option<Spanned<String>>,
    /// How many points of `evaluate` make a clear advantage: the MCTS bot
    /// squashes values with `tanh(value / evaluate_scale)` (10 if unset).
    pub evaluate_scale: Option<Spanned<f64>>,
    /// Whether `evaluate(s, 1) == -evaluate(s, 0)` in two-player games (true
    /// if unset): then the MCTS bot calls it once per state, else per seat.
    pub evaluate_zero_sum: Option<bool>,
    /// Moves (turns, or rounds) the MCTS bot's rollouts play before
    /// `evaluate` scores them (1 if unset): where the evaluation is meant
    /// to be read.
    pub evaluate_depth: Option<Spanned<i64>>,
    /// `fn NAME()`: labels of a finished game (a map of label -> text), which
    /// `rulesmith simulate` counts, e.g. what the winner won with.
    pub labels: Option<Spanned<String>>,
    pub render: Option<Spanned<String>>,
    /// Where a seat's observation tensor lies in its summary, and its shape.
    pub observation_tensor: Option<Spanned<RawTensor>>,
    /// The same for its information-state tensor (everything it has seen).
    pub information_tensor: Option<Spanned<RawTensor>>,
    pub key_order: Option<Vec<String>>,
    /// Text that explains the board's signs, which `rulesmith play` prints
    /// at the start and on `help`.
    pub legend: Option<String>,
}

/// `{ key = "planes", shape = [3, 3, 3] }`: the numbers of the summary's
/// field `key` (nested arrays flattened in order), as a tensor of `shape`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTensor {
    pub key: String,
    pub shape: Vec<i64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeckRef {
    /// Required when a deck is first declared; an extending variant may
    /// give only a new file, or only more fields or hooks.
    pub file: Option<Spanned<String>>,
    /// A `[card_schemas]` table whose fields the cards have, before the
    /// deck's own `fields` (which add to them or replace them by name).
    pub schema: Option<Spanned<String>>,
    #[serde(default)]
    pub fields: IndexMap<Spanned<String>, RawField>,
    /// Hook functions a card script may define, with their arity.
    #[serde(default)]
    pub hooks: BTreeMap<String, usize>,
}

/// `[piles.hand] deck = "cards", per_seat = true, visible = "owner"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPile {
    pub deck: Spanned<String>,
    /// One pile per seat (the default), or one on the table.
    pub per_seat: Option<bool>,
    /// Who sees the cards: "owner", "everyone" or "nobody".
    pub visible: Spanned<String>,
    /// The pile whose cards are shuffled in when a draw finds this one
    /// short (a discard pile made into a new draw pile).
    pub refill: Option<Spanned<String>>,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    #[serde(default)]
    pub optional: bool,
    pub doc: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInvariant {
    /// A script function of no argument (called with the state as `this`)
    /// that returns `true` when the invariant holds, or a message otherwise.
    pub check: Spanned<String>,
    pub doc: Option<String>,
}

/// A deck file: a list of cards, each a table of the deck's fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeckFile {
    #[serde(default)]
    pub cards: Vec<Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
}
