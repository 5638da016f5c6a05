//! Loading a variant: a folder of TOML files and Rhai scripts.
//!
//! Two phases, as in ripgrep's argument handling: `raw` holds what the
//! designer typed, file by file; this module resolves `extends` chains,
//! merges the files (the extending variant overrides by name), checks every
//! reference and range, and produces a [`Variant`]: plain, validated data
//! that a [`crate::Game`] compiles into a runnable rule set.
//!
//! Every problem found is collected with its file and line, so a designer
//! sees them all at once.

mod raw;
mod supers;

use crate::error::{Diagnostic, LoadError};
use crate::notation::{SlotType, Template};
use indexmap::IndexMap;
use raw::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The name of the main file of a variant folder.
pub const VARIANT_FILE: &str = "variant.toml";

/// A file read while loading, kept for diagnostics.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// Texts that stand in for files on disk while loading, by path (as the
/// loader spells it: absolute paths for a variant loaded from an absolute
/// path): an editor's unsaved buffers, for the language server.
pub type Overlay = HashMap<PathBuf, String>;

/// A place in one of the variant's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: usize,
    pub span: Range<usize>,
}

/// A reference to a script function, with where it was written.
#[derive(Clone, Debug)]
pub struct FnRef {
    pub name: String,
    pub loc: Loc,
}

/// A parameter value. Parameters are the numbers (and switches) a designer
/// tunes: they live in data and can be overridden with `--set`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "a whole number",
            Value::Bool(_) => "true or false",
            Value::Str(_) => "a string",
        }
    }

    fn from_toml(v: &toml::Value) -> Option<Value> {
        match v {
            toml::Value::Integer(i) => Some(Value::Int(*i)),
            toml::Value::Boolean(b) => Some(Value::Bool(*b)),
            toml::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub value: Value,
    /// Where the value was written (the key's place if it was inherited).
    pub value_loc: Loc,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub doc: String,
    pub loc: Loc,
}

impl Param {
    fn check(&self, v: &Value) -> Result<(), String> {
        if let (Value::Int(_), Value::Str(text)) = (&self.value, v) {
            let digits = text.trim().trim_start_matches(['-', '+']);
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "parameter '{}': {} is too large for a whole number (they go from {} to {})",
                    self.name,
                    text.trim(),
                    i64::MIN,
                    i64::MAX
                ));
            }
        }
        if std::mem::discriminant(v) != std::mem::discriminant(&self.value) {
            return Err(format!(
                "parameter '{}' takes {}, not {v}",
                self.name,
                self.value.kind()
            ));
        }
        if let Value::Int(i) = v {
            let (lo, hi) = (self.min.unwrap_or(i64::MIN), self.max.unwrap_or(i64::MAX));
            if *i < lo || *i > hi {
                return Err(format!(
                    "parameter '{}' must be within {}..={}, not {i}",
                    self.name,
                    self.min.map_or("".into(), |m| m.to_string()),
                    self.max.map_or("".into(), |m| m.to_string())
                ));
            }
        }
        Ok(())
    }
}

/// Who decides in a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// The seat whose turn it is.
    Active,
    /// The seat the scripts name with `set_actor`.
    Script,
    /// Every seat in play, once each, in seat order: a round (see
    /// `Core::round`).
    Every,
}

#[derive(Clone, Debug)]
pub struct StepDef {
    pub name: String,
    pub legal: FnRef,
    pub actor: Actor,
    pub enter: Option<FnRef>,
    /// Decisions taken in this step are hidden from the other seats until
    /// the rules reveal them.
    pub secret: bool,
    pub doc: String,
}

#[derive(Clone, Debug)]
pub struct ActionDef {
    pub template: Template,
    pub apply: FnRef,
    pub doc: String,
}

#[derive(Clone, Debug)]
pub struct Invariant {
    pub name: String,
    pub check: FnRef,
    pub doc: String,
}

/// The declared type of a card field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    Int {
        min: Option<i64>,
        max: Option<i64>,
    },
    Bool,
    Str,
    /// A field whose declared type was not understood (already reported):
    /// accepts anything, so that one typo does not flag every card.
    Unchecked,
}

#[derive(Clone, Debug)]
pub struct FieldDef {
    pub name: String,
    pub ty: FieldType,
    pub optional: bool,
    pub doc: String,
}

/// One card of a deck: data, optionally with a script of its own.
#[derive(Clone, Debug)]
pub struct Card {
    pub id: String,
    pub fields: BTreeMap<String, Value>,
    /// Index into [`Variant::files`] of the card's script, if any.
    pub script: Option<usize>,
    /// How many copies of the card the deck holds (`count`, default 1).
    pub count: u32,
}

#[derive(Clone, Debug)]
pub struct Deck {
    pub name: String,
    pub file: PathBuf,
    pub fields: Vec<FieldDef>,
    pub hooks: BTreeMap<String, usize>,
    pub cards: Vec<Card>,
    /// For the place of a declared pile (one per seat, or the table's):
    /// the pile, in [`Variant::piles`]. Such a place holds cards of the
    /// pile's deck (these are a copy of its cards), starts empty, and is
    /// no deck scripts can name.
    pub pile: Option<usize>,
}

/// Who sees the cards of a pile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// Only the seat the pile belongs to (a hand).
    Owner,
    /// Every seat (a trick, a supply, cards in play).
    Everyone,
    /// No seat (a draw pile): only how many cards it holds.
    Nobody,
}

/// `[piles.NAME]`: a named pile of a deck's cards, per seat or shared.
/// Each pile has places in [`Variant::decks`] (one per seat up to the
/// most players, or one): cards move between places, a draw takes cards
/// from a place at random, and the engine shows and hides them by
/// `visible`.
#[derive(Clone, Debug)]
pub struct Pile {
    pub name: String,
    /// The deck whose cards the pile holds.
    pub deck: usize,
    pub per_seat: bool,
    pub visible: Visibility,
    /// The pile shuffled in when a draw finds this one short.
    pub refill: Option<usize>,
    /// Its first place in [`Variant::decks`] (seat `s`'s: `first + s`).
    pub first: usize,
    pub doc: String,
}

/// A tensor the variant lays out in its summary: the numbers of field `key`
/// (nested arrays flattened in order, true as 1), `shape` as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub key: String,
    pub shape: Vec<usize>,
}

/// The most numbers a declared tensor may hold.
pub const MAX_TENSOR: usize = 1 << 24;

/// `[output] evaluate_scale` when a variant gives none.
pub const DEFAULT_EVALUATE_SCALE: f64 = 10.0;

impl Deck {
    pub fn card_index(&self, id: &str) -> Option<usize> {
        self.cards.iter().position(|c| c.id == id)
    }

    /// [`Deck::card_index`], or the message both rule engines give for a
    /// card id the deck does not hold.
    pub fn find(&self, id: &str) -> Result<usize, String> {
        self.card_index(id).ok_or_else(|| self.no_card(id))
    }

    /// The message for a card id this deck does not hold.
    #[cold]
    pub fn no_card(&self, id: &str) -> String {
        format!("deck '{}' has no card '{id}'", self.name)
    }

    /// The deck as dealt at the start: every card's index, once per copy,
    /// in file order.
    pub fn full_pile(&self) -> Vec<u16> {
        self.cards
            .iter()
            .enumerate()
            .flat_map(|(i, c)| std::iter::repeat_n(i as u16, c.count as usize))
            .collect()
    }
}

/// The most copies of one card a deck file may give (`count`).
pub const MAX_COPIES: i64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Players {
    pub min: usize,
    pub max: usize,
    pub default: usize,
}

/// `[scores]`: each seat ends with a number (points, chips) within
/// `min..=max`, and the scores of a game add up as `sum` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scores {
    pub min: i64,
    pub max: i64,
    pub sum: ScoreSum,
    pub doc: String,
}

/// How the seats' scores of one game add up (OpenSpiel's utility kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreSum {
    /// To 0: what one seat wins, the others lose (chips).
    Zero,
    /// To this total (points shared out).
    Constant(i64),
    /// To anything.
    General,
}

/// The largest score magnitude `[scores]` may declare: sums of scores over
/// millions of games stay exact in 64 bits.
pub const MAX_SCORE: i64 = 1_000_000_000;

/// A loaded, validated variant: everything a game needs, as plain data.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub title: String,
    /// Folder of the variant that was loaded (the last of an `extends` chain).
    pub dir: PathBuf,
    /// Every file read: variant files, scripts, decks, card scripts.
    pub files: Vec<SourceFile>,
    pub players: Players,
    /// Script files, in load order (a parent's before its child's).
    pub scripts: Vec<usize>,
    pub params: Vec<Param>,
    pub enums: BTreeMap<String, Vec<String>>,
    /// The enumerations that give a word per seat (`{ by_seat = [..] }`).
    pub seat_words: BTreeSet<String>,
    /// `[variant] value_bound`: how many values the Python bridge numbers
    /// for an `int` slot without a declared range.
    pub value_bound: Option<u32>,
    /// `[end] max_decisions`: the most decisions any game takes.
    pub max_decisions: Option<u64>,
    pub actions: Vec<ActionDef>,
    pub steps: Vec<StepDef>,
    pub turn_steps: Vec<usize>,
    pub on_turn_start: Option<FnRef>,
    pub on_turn_end: Option<FnRef>,
    pub setup: Option<FnRef>,
    pub last_standing: bool,
    pub max_turns: Option<String>,
    pub summary: Option<FnRef>,
    pub evaluate: Option<FnRef>,
    /// `[output] evaluate_scale`: the MCTS bot squashes `evaluate` with
    /// `tanh(value / evaluate_scale)`, so this is how many points make a
    /// clear advantage (10 by default).
    pub evaluate_scale: f64,
    /// `[output] evaluate_zero_sum`: in a two-player game, whether
    /// `evaluate(s, 1) == -evaluate(s, 0)` (true by default), which lets the
    /// MCTS bot call it once per state; false: once per seat.
    pub evaluate_zero_sum: bool,
    /// `[output] evaluate_depth`: moves (turns, or rounds) the MCTS bot's
    /// rollouts play before `evaluate` scores them (1 unless given).
    pub evaluate_depth: u32,
    pub labels: Option<FnRef>,
    pub render: Option<FnRef>,
    /// `[output] observation_tensor`: where a seat's observation tensor
    /// lies in its summary (None: every number of the summary).
    pub observation_tensor: Option<Tensor>,
    /// `[output] information_tensor`: the same for the information state.
    pub information_tensor: Option<Tensor>,
    pub key_order: Vec<String>,
    /// `[output] legend`: what the board's signs mean, for `rulesmith play`.
    pub legend: Option<String>,
    /// The decks, then the places of the piles (see [`Pile`]).
    pub decks: Vec<Deck>,
    /// `[piles]`, in declaration order.
    pub piles: Vec<Pile>,
    /// Counters the scripts may bump, with their descriptions.
    pub stats: Vec<(String, String)>,
    pub invariants: Vec<Invariant>,
    /// `[scores]`: numeric results per seat; none: win / lose / draw.
    pub scores: Option<Scores>,
    deck_sources: Vec<DeckSource>,
    /// Enumerations made of decks' card ids, rebuilt when a deck changes.
    derived_enums: Vec<DerivedEnum>,
}

/// A `[notation]` enumeration whose words come from decks.
#[derive(Clone, Debug)]
struct DerivedEnum {
    name: String,
    words: Vec<String>,
    decks: Vec<String>,
}

impl DerivedEnum {
    /// Its words: the fixed ones, then each deck's card ids (each once).
    fn words(&self, decks: &[Deck]) -> Vec<String> {
        let mut out = self.words.clone();
        for name in &self.decks {
            for d in decks.iter().filter(|d| &d.name == name) {
                for c in &d.cards {
                    if !out.contains(&c.id) {
                        out.push(c.id.clone());
                    }
                }
            }
        }
        out
    }
}

/// How a deck was declared, kept so that `--set deck.NAME=FILE` can reload it.
#[derive(Clone, Debug)]
struct DeckSource {
    name: String,
    fields: Vec<FieldDef>,
    hooks: BTreeMap<String, usize>,
}

impl Variant {
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn int_param(&self, name: &str) -> Option<i64> {
        match self.param(name)?.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn step_index(&self, name: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.name == name)
    }

    pub fn action_index(&self, name: &str) -> Option<usize> {
        self.actions.iter().position(|a| a.template.name == name)
    }

    /// A deck scripts may name (not a pile's place).
    pub fn deck_index(&self, name: &str) -> Option<usize> {
        self.decks.iter().position(|d| d.name == name && d.pile.is_none())
    }

    pub fn pile_index(&self, name: &str) -> Option<usize> {
        self.piles.iter().position(|p| p.name == name)
    }

    /// The deck whose cards place `place` of [`Variant::decks`] holds: the
    /// deck itself, or a pile's deck.
    pub fn deck_of_place(&self, place: usize) -> usize {
        match self.decks[place].pile {
            Some(p) => self.piles[p].deck,
            None => place,
        }
    }

    /// Applies a `--set KEY=VALUE` override: a parameter, or
    /// `deck.NAME=FILE` to play with another deck file.
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), String> {
        if let Some(deck) = key.strip_prefix("deck.") {
            return self.set_deck(deck, Path::new(text));
        }
        let Some(i) = self.params.iter().position(|p| p.name == key) else {
            let known: Vec<_> = self.params.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "unknown parameter '{key}'; this variant has: {}",
                known.join(", ")
            ));
        };
        let value = parse_value_text(text, &self.params[i].value);
        self.params[i].check(&value)?;
        let old = std::mem::replace(&mut self.params[i].value, value);
        // A declared range may name the parameter (`{bid:int 0..coins}`).
        if let Err(e) = self.recompile_templates() {
            self.params[i].value = old;
            return Err(format!("{key}={text}: {e}"));
        }
        Ok(())
    }

    fn set_deck(&mut self, name: &str, file: &Path) -> Result<(), String> {
        let Some(i) = self.decks.iter().position(|d| d.name == name && d.pile.is_none()) else {
            let known: Vec<_> = self
                .decks
                .iter()
                .filter(|d| d.pile.is_none())
                .map(|d| d.name.as_str())
                .collect();
            return Err(format!("unknown deck '{name}'; this variant has: {}", known.join(", ")));
        };
        let src = self.deck_sources[i].clone();
        let mut loader = Loader {
            files: std::mem::take(&mut self.files),
            ..Loader::default()
        };
        let deck = loader.load_deck(&src.name, file, src.fields, src.hooks);
        self.files = loader.files;
        match deck {
            Some(d) if loader.diags.is_empty() => {
                // The places of its piles hold the same cards.
                for place in self.decks.iter_mut() {
                    if place.pile.is_some_and(|p| self.piles[p].deck == i) {
                        place.cards = d.cards.clone();
                    }
                }
                self.decks[i] = d;
                self.rebuild_derived_enums()
            }
            _ => Err(LoadError::new(loader.diags).to_string()),
        }
    }

    /// After a deck changed: the enumerations made of card ids get the new
    /// ids, and the action templates that use them are compiled again.
    fn rebuild_derived_enums(&mut self) -> Result<(), String> {
        if self.derived_enums.is_empty() {
            return Ok(());
        }
        for e in &self.derived_enums {
            let words = e.words(&self.decks);
            check_words(&e.name, &words)?;
            self.enums.insert(e.name.clone(), words);
        }
        self.recompile_templates()
    }

    /// Compiles the action templates again, after an enumeration or a
    /// parameter a declared range names changed. All or nothing.
    fn recompile_templates(&mut self) -> Result<(), String> {
        let (enums, seat_words, params) = (&self.enums, &self.seat_words, &self.params);
        let templates = self
            .actions
            .iter()
            .map(|a| {
                let t = &a.template;
                Template::compile_with(
                    &t.name,
                    &t.text,
                    |ty| slot_type(enums, seat_words, ty),
                    |p| int_value(params.iter().find(|x| x.name == p).map(|x| &x.value)),
                )
                .map_err(|e| format!("action '{}': {e}", t.name))
            })
            .collect::<Result<Vec<_>, String>>()?;
        for (a, t) in self.actions.iter_mut().zip(templates) {
            a.template = t;
        }
        Ok(())
    }

    /// A diagnostic at a place in one of the variant's files.
    pub fn diagnostic(&self, loc: &Loc, message: impl Into<String>) -> Diagnostic {
        let f = &self.files[loc.file];
        Diagnostic::new(&f.path, message).at_offset(&f.text, loc.span.start)
    }
}

/// What a designer writes where serde would name one of `raw.rs`'s structs
/// ("expected struct RawPlayers"): the Rust names never reach a message.
const STRUCT_EXAMPLES: &[(&str, &str)] = &[
    ("RawFile", "[variant] name = \"...\" (a variant file is a TOML table)"),
    (
        "RawHeader",
        "[variant] with name = \"...\", players = { min = 2, max = 4 }, scripts = [\"rules.rhai\"]",
    ),
    ("RawPlayers", "players = { min = 2, max = 4 }"),
    (
        "RawTensor",
        "observation_tensor = { key = \"planes\", shape = [3, 3, 3] }",
    ),
    ("RawSeatEnum", "[notation] mark = { by_seat = [\"x\", \"o\"] }"),
    (
        "RawParam",
        "[params.goal] with value = 6 (and optionally min, max, doc)",
    ),
    (
        "RawAction",
        "[actions.take] with text = \"take {n:int}\" and apply = \"do_take\"",
    ),
    (
        "RawStep",
        "[steps.main] with legal = \"main_legal\" (and optionally enter, actor, doc)",
    ),
    (
        "RawTurn",
        "[turn] with steps = [\"main\"] (and optionally on_start, on_end)",
    ),
    ("RawSetup", "[setup] with run = \"setup\""),
    (
        "RawEnd",
        "[end] with last_standing = true or max_turns = \"a_parameter\"",
    ),
    (
        "RawOutput",
        "[output] with summary = \"summary\" (or evaluate, labels, render, key_order)",
    ),
    (
        "RawDeckRef",
        "[decks.cards] with file = \"cards.toml\" (and optionally schema, fields, hooks)",
    ),
    (
        "RawPile",
        "[piles.hand] with deck = \"cards\" and visible = \"owner\" (and optionally per_seat, refill, doc)",
    ),
    (
        "RawField",
        "[decks.NAME.fields] hull = { type = \"int\", min = 1, max = 6 }",
    ),
    (
        "RawScores",
        "[scores] with min = -2, max = 2 (and optionally sum = \"zero\", total, doc)",
    ),
    (
        "RawInvariant",
        "[invariants.power_in_range] with check = \"power_in_range\"",
    ),
    (
        "RawDerivedEnum",
        "[notation] card = { words = [\"-\"], decks = [\"red\", \"blue\"] }",
    ),
    (
        "RawDeckFile",
        "[[cards]] id = \"...\" (a deck file is a list of [[cards]] tables)",
    ),
];

/// A TOML error in a designer's words: types as a designer names them, and
/// the key the error is about.
fn toml_message(e: &toml::de::Error, text: &str) -> String {
    let mut m = e.message().trim().to_string();
    for rust in ["i64", "u64", "usize", "u32", "i32", "u16", "u8"] {
        m = m.replace(&format!("expected {rust}"), "expected a whole number");
    }
    m = m
        .replace(
            "data did not match any variant of untagged enum RawEnum",
            "expected an array of words, a table { words = [...], decks = [...] }, or { by_seat = [...] }",
        )
        .replace("expected a sequence", "expected an array [...]")
        .replace("expected a map", "expected a table");
    for (rust, example) in STRUCT_EXAMPLES {
        m = m.replace(
            &format!("expected struct {rust}"),
            &format!("expected a table, e.g. {example}"),
        );
    }
    if m.starts_with("invalid type") {
        if let Some(span) = e.span() {
            let line_start = text[..span.start.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
            let line = &text[line_start..span.start.min(text.len())];
            if let Some((key, _)) = line.rsplit_once('=') {
                let key = key.rsplit(['{', ',']).next().unwrap_or(key).trim();
                if !key.is_empty() {
                    m = format!("`{key}`: {m}");
                }
            }
        }
    }
    m
}

/// Replaces the line holding byte `offset` with spaces (keeping every
/// offset valid). False if there was nothing left to blank.
fn blank_line(text: &mut String, offset: usize) -> bool {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    if text[start..end].trim().is_empty() {
        return false;
    }
    let blank: String = text[start..end]
        .chars()
        .flat_map(|c| std::iter::repeat_n(' ', c.len_utf8()))
        .collect();
    text.replace_range(start..end, &blank);
    true
}

/// Reads `--set` text as the same kind of value as `like`.
fn parse_value_text(text: &str, like: &Value) -> Value {
    match like {
        Value::Int(_) => text
            .trim()
            .parse()
            .map(Value::Int)
            .unwrap_or_else(|_| Value::Str(text.into())),
        Value::Bool(_) => match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Str(text.into()),
        },
        Value::Str(_) => Value::Str(text.into()),
    }
}

/// A deck declaration merged over an `extends` chain; every part keeps the
/// file it came from, for diagnostics.
struct MergedDeck {
    decl: (usize, Spanned<String>),
    file: Option<(usize, Spanned<String>)>,
    schema: Option<(usize, Spanned<String>)>,
    fields: IndexMap<String, (usize, Spanned<String>, RawField)>,
    hooks: BTreeMap<String, usize>,
}

/// One file of an `extends` chain, parsed.
struct Parsed {
    file: usize,
    raw: RawFile,
}

/// What reading a variant's files gave, before the checks that look into
/// its scripts (names they use, their syntax: `crate::loading`).
pub(crate) enum Read {
    /// Every file read, merged and checked as data without a problem.
    Built(Box<Variant>),
    /// Problems, with the files read and which of them are scripts (so
    /// that the scripts' syntax errors can be reported in the same run).
    Broken {
        diags: Vec<Diagnostic>,
        files: Vec<SourceFile>,
        scripts: Vec<usize>,
        /// The `extends` chain stopped short (a loop, a missing or
        /// unreadable variant): what the merge would miss is only a
        /// consequence, so the diagnostics say what stopped it, alone.
        chain_broken: bool,
    },
}

/// Reads the variant in folder `path` (or the variant file `path`): its
/// `extends` chain, merged and checked as data.
pub(crate) fn read(path: &Path, overlay: std::sync::Arc<Overlay>) -> Read {
    let file = if path.is_dir() {
        path.join(VARIANT_FILE)
    } else {
        path.to_path_buf()
    };
    let mut loader = Loader {
        overlay,
        ..Loader::default()
    };
    let chain = loader.read_chain(&file);
    if loader.broken_chain {
        return Read::Broken {
            diags: loader.diags,
            files: loader.files,
            scripts: loader.script_files,
            chain_broken: true,
        };
    }
    match loader.build(chain, file.parent().unwrap_or(Path::new("."))) {
        Some(v) if loader.diags.is_empty() => Read::Built(Box::new(v)),
        v => Read::Broken {
            diags: loader.diags,
            files: v.map_or(loader.files, |v| v.files),
            scripts: loader.script_files,
            chain_broken: false,
        },
    }
}

#[derive(Default)]
struct Loader {
    files: Vec<SourceFile>,
    diags: Vec<Diagnostic>,
    /// Script files read, as indices into `files`.
    script_files: Vec<usize>,
    /// An `extends` chain that could not be followed to its root.
    broken_chain: bool,
    /// Texts read instead of the files on disk (empty but for an editor).
    overlay: std::sync::Arc<Overlay>,
}

impl Loader {
    fn loc<T>(&self, file: usize, s: &Spanned<T>) -> Loc {
        Loc { file, span: s.span() }
    }

    fn error(&mut self, loc: &Loc, message: impl Into<String>) {
        let f = &self.files[loc.file];
        self.diags
            .push(Diagnostic::new(&f.path, message).at_offset(&f.text, loc.span.start));
    }

    fn read(&mut self, path: &Path) -> Option<usize> {
        let path = &clean(path);
        let text = match self.overlay.get(path) {
            Some(text) => Ok(text.clone()),
            None => std::fs::read_to_string(path),
        };
        match text {
            Ok(mut text) => {
                // A byte-order mark, which some editors on Windows write,
                // is no part of the text (TOML and Rhai would take it for
                // an invisible stray character).
                if text.starts_with('\u{feff}') {
                    text.drain(..'\u{feff}'.len_utf8());
                }
                self.files.push(SourceFile {
                    path: path.to_path_buf(),
                    text,
                });
                Some(self.files.len() - 1)
            }
            Err(e) => {
                self.diags.push(Diagnostic::new(path, format!("cannot read file: {e}")));
                None
            }
        }
    }

    /// Parses a TOML file into `T`. After an unknown key, the key's line is
    /// blanked and parsing resumes, so that every unknown key is reported;
    /// the partial result lets the later checks run too.
    fn parse_toml<T: serde::de::DeserializeOwned>(&mut self, file: usize) -> Option<T> {
        let original = self.files[file].text.clone();
        let mut text = original.clone();
        for _ in 0..64 {
            match toml::from_str::<T>(&text) {
                // After recovered errors the partial result still feeds the
                // later checks; the load fails on the diagnostics anyway.
                Ok(v) => return Some(v),
                Err(e) => {
                    let message = toml_message(&e, &original);
                    let d = Diagnostic::new(&self.files[file].path, message);
                    let Some(span) = e.span() else {
                        self.diags.push(d);
                        return None;
                    };
                    self.diags.push(d.at_offset(&original, span.start));
                    let recoverable = e.message().starts_with("unknown field");
                    if !recoverable || !blank_line(&mut text, span.start) {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Reads `file` and the files it extends, root first.
    fn read_chain(&mut self, file: &Path) -> Vec<Parsed> {
        let mut chain = Vec::new();
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut shown: Vec<PathBuf> = Vec::new();
        let mut next = Some((file.to_path_buf(), None::<Loc>));
        while let Some((path, from)) = next.take() {
            let path = clean(&path);
            let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
            if seen.contains(&canonical) {
                let cycle: Vec<String> = shown.iter().chain([&path]).map(|p| p.display().to_string()).collect();
                let loc = from.expect("a repeated file is always reached through extends");
                self.error(
                    &loc,
                    format!("variants extend each other in a loop: {}", cycle.join(" -> ")),
                );
                self.broken_chain = true;
                break;
            }
            seen.push(canonical);
            shown.push(path.clone());
            if path.is_file() && path.extension().is_none_or(|e| e != "toml") {
                if let Some(loc) = from {
                    self.error(
                        &loc,
                        format!(
                            "{} is not a variant: expected a folder holding variant.toml, or a .toml file",
                            path.display()
                        ),
                    );
                } else {
                    self.diags.push(Diagnostic::new(
                        &path,
                        "not a variant: expected a folder holding variant.toml, or a .toml file",
                    ));
                }
                self.broken_chain = true;
                break;
            }
            if !path.exists() {
                match from {
                    Some(loc) => self.error(
                        &loc,
                        format!("the variant this extends does not exist: {}", path.display()),
                    ),
                    None => self.diags.push(Diagnostic::new(
                        &path,
                        "no such variant (expected a folder holding variant.toml, or a .toml file)",
                    )),
                }
                self.broken_chain = true;
                break;
            }
            let Some(id) = self.read(&path) else {
                self.broken_chain = true;
                break;
            };
            let Some(raw) = self.parse_toml::<RawFile>(id) else {
                // Only a parent's broken TOML breaks the chain; the first
                // file's is reported with its scripts' errors as before.
                self.broken_chain |= !chain.is_empty();
                break;
            };
            if let Some(ext) = raw.variant.as_ref().and_then(|h| h.extends.as_ref()) {
                let base = path.parent().unwrap_or(Path::new("."));
                let mut target = base.join(ext.get_ref());
                if target.is_dir() {
                    target = target.join(VARIANT_FILE);
                }
                next = Some((
                    target,
                    Some(Loc {
                        file: id,
                        span: ext.span(),
                    }),
                ));
            }
            chain.push(Parsed { file: id, raw });
        }
        chain.reverse();
        chain
    }

    fn fn_ref(&self, file: usize, s: &Spanned<String>) -> FnRef {
        FnRef {
            name: s.get_ref().clone(),
            loc: self.loc(file, s),
        }
    }

    /// Merges the chain (root first; later files override by name) and checks it.
    fn build(&mut self, chain: Vec<Parsed>, dir: &Path) -> Option<Variant> {
        if chain.is_empty() {
            return None;
        }
        let mut name = String::new();
        let mut title = String::new();
        let mut players: Option<(Loc, RawPlayers)> = None;
        let mut value_bound: Option<(usize, Spanned<i64>)> = None;
        let mut max_decisions: Option<(usize, Spanned<i64>)> = None;
        let mut scripts = Vec::new();
        let mut params: IndexMap<String, Param> = IndexMap::new();
        let mut enums: IndexMap<String, (Loc, RawEnum)> = IndexMap::new();
        let mut actions: IndexMap<String, (usize, Spanned<String>, RawAction)> = IndexMap::new();
        let mut steps: IndexMap<String, (usize, Spanned<String>, RawStep)> = IndexMap::new();
        let mut turn_steps: Option<(usize, Spanned<Vec<Spanned<String>>>)> = None;
        let (mut on_start, mut on_end, mut setup) = (None, None, None);
        let mut last_standing = false;
        let mut max_turns: Option<(usize, Spanned<String>)> = None;
        let (mut summary, mut render, mut evaluate, mut labels) = (None, None, None, None);
        let mut evaluate_scale: Option<(usize, Spanned<f64>)> = None;
        let mut evaluate_zero_sum = true;
        let mut evaluate_depth: Option<(usize, Spanned<i64>)> = None;
        let mut observation_tensor: Option<(usize, Spanned<RawTensor>)> = None;
        let mut information_tensor: Option<(usize, Spanned<RawTensor>)> = None;
        let mut key_order = Vec::new();
        let mut legend = None;
        let mut decks: IndexMap<String, MergedDeck> = IndexMap::new();
        type SchemaFields = IndexMap<String, (usize, Spanned<String>, RawField)>;
        let mut card_schemas: IndexMap<String, SchemaFields> = IndexMap::new();
        let mut piles: IndexMap<String, (usize, Spanned<String>, raw::RawPile)> = IndexMap::new();
        let mut stats: IndexMap<String, String> = IndexMap::new();
        let mut invariants: IndexMap<String, Invariant> = IndexMap::new();
        let mut scores: Option<(usize, raw::RawScores)> = None;

        for Parsed { file, raw } in chain {
            let base = self.files[file]
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if let Some(h) = raw.variant {
                name = h.name.unwrap_or(name);
                title = h.title.unwrap_or(title);
                if let Some(p) = h.players {
                    players = Some((self.loc(file, &p), *p.get_ref()));
                }
                if let Some(b) = h.value_bound {
                    value_bound = Some((file, b));
                }
                for s in h.scripts {
                    let path = base.join(s.get_ref());
                    let loc = self.loc(file, &s);
                    if !path.is_file() {
                        self.error(&loc, format!("script file not found: {}", path.display()));
                    } else if let Some(id) = self.read(&path) {
                        scripts.push(id);
                        self.script_files.push(id);
                    }
                }
            }
            for (k, p) in raw.params {
                let loc = self.loc(file, &k);
                let key = k.into_inner();
                let value = match (&p.value, params.get(&key)) {
                    (Some(v), _) => match Value::from_toml(v.get_ref()) {
                        Some(val) => val,
                        None => {
                            let l = self.loc(file, v);
                            self.error(
                                &l,
                                format!("parameter '{key}' must be a whole number, true/false or a string"),
                            );
                            continue;
                        }
                    },
                    (None, Some(old)) => old.value.clone(),
                    (None, None) => {
                        self.error(&loc, format!("parameter '{key}' needs a value (e.g. value = 6)"));
                        continue;
                    }
                };
                let old = params.get(&key);
                let param = Param {
                    name: key.clone(),
                    value,
                    value_loc: match &p.value {
                        Some(v) => self.loc(file, v),
                        None => params.get(&key).map_or(loc.clone(), |o| o.value_loc.clone()),
                    },
                    min: p.min.or(old.and_then(|o| o.min)),
                    max: p.max.or(old.and_then(|o| o.max)),
                    doc: p.doc.or(old.map(|o| o.doc.clone())).unwrap_or_default(),
                    loc,
                };
                params.insert(key, param);
            }
            for (k, values) in raw.notation {
                let loc = self.loc(file, &k);
                enums.insert(k.into_inner(), (loc, values));
            }
            for (k, a) in raw.actions {
                actions.insert(k.get_ref().clone(), (file, k, a));
            }
            for (k, s) in raw.steps {
                steps.insert(k.get_ref().clone(), (file, k, s));
            }
            if let Some(t) = raw.turn {
                if let Some(s) = t.steps {
                    turn_steps = Some((file, s));
                }
                on_start = t.on_start.map(|f| self.fn_ref(file, &f)).or(on_start);
                on_end = t.on_end.map(|f| self.fn_ref(file, &f)).or(on_end);
            }
            if let Some(s) = raw.setup {
                setup = Some(self.fn_ref(file, &s.run));
            }
            if let Some(e) = raw.end {
                last_standing = e.last_standing.unwrap_or(last_standing);
                if let Some(m) = e.max_turns {
                    max_turns = Some((file, m));
                }
                if let Some(m) = e.max_decisions {
                    max_decisions = Some((file, m));
                }
            }
            if let Some(o) = raw.output {
                summary = o.summary.map(|f| self.fn_ref(file, &f)).or(summary);
                evaluate = o.evaluate.map(|f| self.fn_ref(file, &f)).or(evaluate);
                if let Some(k) = o.evaluate_scale {
                    evaluate_scale = Some((file, k));
                }
                evaluate_zero_sum = o.evaluate_zero_sum.unwrap_or(evaluate_zero_sum);
                if let Some(d) = o.evaluate_depth {
                    evaluate_depth = Some((file, d));
                }
                labels = o.labels.map(|f| self.fn_ref(file, &f)).or(labels);
                render = o.render.map(|f| self.fn_ref(file, &f)).or(render);
                if let Some(t) = o.observation_tensor {
                    observation_tensor = Some((file, t));
                }
                if let Some(t) = o.information_tensor {
                    information_tensor = Some((file, t));
                }
                key_order = o.key_order.unwrap_or(key_order);
                legend = o.legend.or(legend);
            }
            for (k, d) in raw.decks {
                // Field by field: a new file, more fields, more hooks.
                let name = k.get_ref().clone();
                let m = decks.entry(name).or_insert_with(|| MergedDeck {
                    decl: (file, k),
                    file: None,
                    schema: None,
                    fields: IndexMap::new(),
                    hooks: BTreeMap::new(),
                });
                if let Some(f) = d.file {
                    m.file = Some((file, f));
                }
                if let Some(s) = d.schema {
                    m.schema = Some((file, s));
                }
                for (fk, fv) in d.fields {
                    m.fields.insert(fk.get_ref().clone(), (file, fk, fv));
                }
                m.hooks.extend(d.hooks);
            }
            for (k, p) in raw.piles {
                // Replaced as a whole.
                piles.insert(k.get_ref().clone(), (file, k, p));
            }
            for (k, fields) in raw.card_schemas {
                // Field by field, as a deck's own fields.
                let m = card_schemas.entry(k.into_inner()).or_default();
                for (fk, fv) in fields {
                    m.insert(fk.get_ref().clone(), (file, fk, fv));
                }
            }
            if let Some(sc) = raw.scores {
                // Replaced as a whole: a range and its sum go together.
                scores = Some((file, sc));
            }
            for (k, doc) in raw.stats {
                stats.insert(k.into_inner(), doc);
            }
            for (k, inv) in raw.invariants {
                let check = self.fn_ref(file, &inv.check);
                let name = k.into_inner();
                invariants.insert(
                    name.clone(),
                    Invariant {
                        name,
                        check,
                        doc: inv.doc.unwrap_or_default(),
                    },
                );
            }
        }

        // `super_NAME` calls: rename what each override replaced.
        let supers = supers::resolve(&mut self.files, &scripts);
        self.diags.extend(supers);

        // Players.
        let players = match players {
            Some((loc, p)) => {
                let default = p.default.unwrap_or(p.min);
                if p.min < 1 || p.min > p.max || default < p.min || default > p.max {
                    self.error(
                        &loc,
                        format!(
                            "players must satisfy 1 <= min <= default <= max, got min {} default {default} max {}",
                            p.min, p.max
                        ),
                    );
                }
                if p.max > 64 {
                    self.error(&loc, "at most 64 players are supported");
                }
                Players {
                    min: p.min,
                    max: p.max,
                    default,
                }
            }
            None => {
                let first = 0;
                self.diags.push(Diagnostic::new(
                    &self.files[first].path,
                    "missing [variant] players = { min = .., max = .. }",
                ));
                Players {
                    min: 1,
                    max: 1,
                    default: 1,
                }
            }
        };

        // Parameters: each value within its own range; a range only for a
        // whole number (a quoted "30" is a string, and its bounds would
        // never be checked); and no range upside down.
        for p in params.values() {
            if (p.min.is_some() || p.max.is_some()) && !matches!(p.value, Value::Int(_)) {
                let loc = p.value_loc.clone();
                let hint = match &p.value {
                    Value::Str(s) if s.trim().parse::<i64>().is_ok() => {
                        format!(" (write value = {} without quotes)", s.trim())
                    }
                    _ => String::new(),
                };
                self.error(
                    &loc,
                    format!(
                        "parameter '{}' has min/max, so its value must be a whole number, not {}{hint}",
                        p.name,
                        p.value.kind()
                    ),
                );
                continue;
            }
            if let (Some(lo), Some(hi)) = (p.min, p.max) {
                if lo > hi {
                    let loc = p.loc.clone();
                    self.error(
                        &loc,
                        format!(
                            "parameter '{}': min {lo} is above max {hi} (no value can be within them)",
                            p.name
                        ),
                    );
                    continue;
                }
            }
            if let Err(e) = p.check(&p.value) {
                let loc = p.value_loc.clone();
                self.error(&loc, e);
            }
        }

        // Decks.
        let mut deck_list = Vec::new();
        let mut deck_sources = Vec::new();
        for (name, mut d) in decks {
            // A shared schema's fields first, then the deck's own.
            if let Some((file, schema)) = &d.schema {
                match card_schemas.get(schema.get_ref()) {
                    Some(shared) => {
                        let mut fields = shared.clone();
                        fields.extend(std::mem::take(&mut d.fields));
                        d.fields = fields;
                    }
                    None => {
                        let loc = self.loc(*file, schema);
                        let known: Vec<&str> = card_schemas.keys().map(String::as_str).collect();
                        self.error(
                            &loc,
                            format!(
                                "deck '{name}': no card schema '{}' (declared in [card_schemas]: {})",
                                schema.get_ref(),
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            ),
                        );
                    }
                }
            }
            let fields = self.field_defs(&d);
            let Some((file, deck_file)) = &d.file else {
                let loc = self.loc(d.decl.0, &d.decl.1);
                self.error(&loc, format!("deck '{name}' needs a file = \"...\""));
                continue;
            };
            let base = self.files[*file]
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let path = base.join(deck_file.get_ref());
            if !path.is_file() {
                let loc = self.loc(*file, deck_file);
                self.error(&loc, format!("deck file not found: {}", path.display()));
                continue;
            }
            deck_sources.push(DeckSource {
                name: name.clone(),
                fields: fields.clone(),
                hooks: d.hooks.clone(),
            });
            if let Some(deck) = self.load_deck(&name, &path, fields, d.hooks) {
                deck_list.push(deck);
            }
        }

        let pile_list = self.piles(piles, &mut deck_list, players.max);

        // Notation enumerations: word lists, or words made of decks' card ids.
        let mut derived_enums = Vec::new();
        let mut seat_words = BTreeSet::new();
        let mut word_lists: IndexMap<String, (Loc, Vec<String>)> = IndexMap::new();
        for (name, (loc, raw)) in enums {
            let words = match raw {
                RawEnum::Words(w) => w,
                RawEnum::BySeat(w) => {
                    if w.by_seat.len() < players.max {
                        self.error(
                            &loc,
                            format!(
                                "enumeration '{name}' gives a word per seat: it needs {} words (players go up to {}), not {}",
                                players.max,
                                players.max,
                                w.by_seat.len()
                            ),
                        );
                    }
                    seat_words.insert(name.clone());
                    w.by_seat
                }
                RawEnum::Derived(d) => {
                    for deck in &d.decks {
                        if !deck_sources.iter().any(|x: &DeckSource| &x.name == deck) {
                            let known: Vec<&str> = deck_sources.iter().map(|x| x.name.as_str()).collect();
                            self.error(
                                &loc,
                                format!(
                                    "enumeration '{name}': no deck '{deck}' (declared decks: {})",
                                    known.join(", ")
                                ),
                            );
                        }
                    }
                    let e = DerivedEnum {
                        name: name.clone(),
                        words: d.words,
                        decks: d.decks,
                    };
                    let words = e.words(&deck_list);
                    derived_enums.push(e);
                    words
                }
            };
            if let Err(e) = check_words(&name, &words) {
                self.error(&loc, e);
            }
            if name == "int" || name == "signed" || name == "seat" {
                self.error(
                    &loc,
                    format!("'{name}' is a built-in value type and cannot be redefined"),
                );
            }
            word_lists.insert(name, (loc, words));
        }
        let plain: BTreeMap<String, Vec<String>> =
            word_lists.iter().map(|(k, (_, v))| (k.clone(), v.clone())).collect();
        let lookup = |ty: &str| slot_type(&plain, &seat_words, ty);
        let value_of = |p: &str| int_value(params.get(p).map(|x| &x.value));

        // Actions.
        let mut action_defs = Vec::new();
        let mut texts: HashMap<String, String> = HashMap::new();
        for (name, (file, key, a)) in &actions {
            let loc = self.loc(*file, &a.text);
            match Template::compile_with(name, a.text.get_ref(), lookup, value_of) {
                Ok(t) => {
                    if let Some(other) = texts.insert(t.text.clone(), name.clone()) {
                        self.error(&loc, format!("actions '{other}' and '{name}' have the same text"));
                    }
                    action_defs.push(ActionDef {
                        template: t,
                        apply: self.fn_ref(*file, &a.apply),
                        doc: a.doc.clone().unwrap_or_default(),
                    });
                }
                Err(e) => self.error(&loc, e),
            }
            let _ = key;
        }
        if action_defs.len() > u16::MAX as usize {
            self.diags
                .push(Diagnostic::new(&self.files[0].path, "too many actions"));
        }

        // Steps.
        let mut step_defs = Vec::new();
        for (name, (file, key, s)) in &steps {
            if name == "setup" {
                // step() says "setup" before any step is entered.
                let loc = self.loc(*file, key);
                self.error(
                    &loc,
                    "a step may not be named 'setup': step() returns \"setup\" before any step is entered, \
                     so the two could not be told apart (name it 'place', 'deploy', ...)",
                );
            }
            let actor = match s.actor.as_ref().map(|a| (a.get_ref().as_str(), a)) {
                None | Some(("active", _)) => Actor::Active,
                Some(("script", _)) => Actor::Script,
                Some(("every", _)) => Actor::Every,
                Some((other, a)) => {
                    let loc = self.loc(*file, a);
                    self.error(
                        &loc,
                        format!("unknown actor '{other}' (expected \"active\", \"script\" or \"every\")"),
                    );
                    Actor::Active
                }
            };
            step_defs.push(StepDef {
                name: name.clone(),
                legal: self.fn_ref(*file, &s.legal),
                actor,
                enter: s.enter.as_ref().map(|e| self.fn_ref(*file, e)),
                secret: s.secret.unwrap_or(false),
                doc: s.doc.clone().unwrap_or_default(),
            });
        }
        let mut turn = Vec::new();
        match turn_steps {
            Some((file, list)) => {
                let list_loc = self.loc(file, &list);
                let list = list.into_inner();
                let empty = list.is_empty();
                for s in list {
                    match step_defs.iter().position(|d| &d.name == s.get_ref()) {
                        Some(i) => turn.push(i),
                        None => {
                            let loc = self.loc(file, &s);
                            let known: Vec<_> = step_defs.iter().map(|d| d.name.as_str()).collect();
                            self.error(
                                &loc,
                                format!("unknown step '{}' (declared steps: {})", s.get_ref(), known.join(", ")),
                            );
                        }
                    }
                }
                if empty {
                    self.error(&list_loc, "[turn] steps must name at least one step");
                }
            }
            None => self
                .diags
                .push(Diagnostic::new(&self.files[0].path, "missing [turn] steps = [...]")),
        }
        if setup.is_none() {
            self.diags.push(Diagnostic::new(
                &self.files[0].path,
                "missing [setup] run = \"...\": the script function that sets up a game",
            ));
        }

        let evaluate_scale = match evaluate_scale {
            Some((file, k)) => {
                let v = *k.get_ref();
                if !(v.is_finite() && v > 0.0) {
                    let loc = self.loc(file, &k);
                    self.error(&loc, format!("evaluate_scale must be a number above 0, not {v}"));
                }
                v
            }
            None => DEFAULT_EVALUATE_SCALE,
        };
        let evaluate_depth = match evaluate_depth {
            Some((file, d)) => {
                let v = *d.get_ref();
                if !(0..=100).contains(&v) {
                    let loc = self.loc(file, &d);
                    self.error(
                        &loc,
                        format!("evaluate_depth must be a whole number from 0 to 100, not {v}"),
                    );
                }
                v.clamp(0, 100) as u32
            }
            None => 1,
        };
        let value_bound = value_bound.and_then(|(file, b)| {
            let v = *b.get_ref();
            if !(1..=1_000_000).contains(&v) {
                let loc = self.loc(file, &b);
                self.error(
                    &loc,
                    format!("value_bound must be a whole number from 1 to 1000000, not {v}"),
                );
                return None;
            }
            Some(v as u32)
        });
        let max_decisions = max_decisions.and_then(|(file, m)| {
            let v = *m.get_ref();
            if v < 1 {
                let loc = self.loc(file, &m);
                self.error(&loc, format!("max_decisions must be a whole number above 0, not {v}"));
                return None;
            }
            Some(v as u64)
        });
        let observation_tensor = observation_tensor.and_then(|(file, t)| self.tensor(file, t));
        let information_tensor = information_tensor.and_then(|(file, t)| self.tensor(file, t));
        let scores = scores.map(|(file, sc)| self.scores(file, sc));
        let max_turns = match max_turns {
            Some((file, m)) => {
                if !matches!(params.get(m.get_ref()).map(|p| &p.value), Some(Value::Int(_))) {
                    let loc = self.loc(file, &m);
                    self.error(
                        &loc,
                        format!(
                            "max_turns must name a whole-number parameter; '{}' is not one",
                            m.get_ref()
                        ),
                    );
                }
                Some(m.into_inner())
            }
            None => None,
        };

        Some(Variant {
            name: if name.is_empty() {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            } else {
                name
            },
            title,
            dir: dir.to_path_buf(),
            files: std::mem::take(&mut self.files),
            players,
            scripts,
            params: params.into_values().collect(),
            enums: plain,
            seat_words,
            value_bound,
            max_decisions,
            actions: action_defs,
            steps: step_defs,
            turn_steps: turn,
            on_turn_start: on_start,
            on_turn_end: on_end,
            setup,
            last_standing,
            max_turns,
            summary,
            evaluate,
            evaluate_scale,
            evaluate_zero_sum,
            evaluate_depth,
            labels,
            render,
            observation_tensor,
            information_tensor,
            key_order,
            legend,
            decks: deck_list,
            piles: pile_list,
            stats: stats.into_iter().collect(),
            invariants: invariants.into_values().collect(),
            scores,
            deck_sources,
            derived_enums,
        })
    }

    /// A declared tensor layout, checked: a key, and a shape of whole
    /// numbers above 0 holding at most [`MAX_TENSOR`] numbers.
    fn tensor(&mut self, file: usize, t: Spanned<RawTensor>) -> Option<Tensor> {
        let loc = self.loc(file, &t);
        let t = t.into_inner();
        if t.key.trim().is_empty() {
            self.error(&loc, "a tensor's key must name a field of the summary");
            return None;
        }
        let size = t.shape.iter().try_fold(1usize, |n, &d| {
            usize::try_from(d)
                .ok()
                .filter(|d| *d >= 1)
                .and_then(|d| n.checked_mul(d))
        });
        match size {
            Some(n) if !t.shape.is_empty() && n <= MAX_TENSOR => Some(Tensor {
                key: t.key,
                shape: t.shape.iter().map(|&d| d as usize).collect(),
            }),
            _ => {
                self.error(
                    &loc,
                    format!(
                        "a tensor's shape must be a list of whole numbers above 0 (such as [3, 3, 3]) holding at most {MAX_TENSOR} numbers, not {:?}",
                        t.shape
                    ),
                );
                None
            }
        }
    }

    /// `[scores]` checked: a range (`min < max`, both within
    /// [`MAX_SCORE`]), a sum the range allows, and `total` exactly for a
    /// constant sum.
    fn scores(&mut self, file: usize, sc: raw::RawScores) -> Scores {
        let (min, max) = (*sc.min.get_ref(), *sc.max.get_ref());
        for (v, at) in [(min, &sc.min), (max, &sc.max)] {
            if v.abs() > MAX_SCORE {
                let loc = self.loc(file, at);
                self.error(
                    &loc,
                    format!("a score bound must lie within -{MAX_SCORE}..={MAX_SCORE}, not {v}"),
                );
            }
        }
        if min >= max {
            let loc = self.loc(file, &sc.max);
            self.error(&loc, format!("[scores] max ({max}) must be above min ({min})"));
        }
        let sum = match sc.sum.as_ref().map(|s| s.get_ref().as_str()) {
            None | Some("general") => ScoreSum::General,
            Some("zero") => {
                if min > 0 || max < 0 {
                    let loc = self.loc(file, sc.sum.as_ref().expect("given"));
                    self.error(
                        &loc,
                        format!("sum = \"zero\" needs a range that holds 0, not {min}..={max}"),
                    );
                }
                ScoreSum::Zero
            }
            Some("constant") => match &sc.total {
                Some(t) => ScoreSum::Constant(*t.get_ref()),
                None => {
                    let loc = self.loc(file, sc.sum.as_ref().expect("given"));
                    self.error(
                        &loc,
                        "sum = \"constant\" needs total = N: what every game's scores add up to",
                    );
                    ScoreSum::Constant(0)
                }
            },
            Some(other) => {
                let loc = self.loc(file, sc.sum.as_ref().expect("given"));
                self.error(
                    &loc,
                    format!("unknown sum '{other}' (expected \"zero\", \"constant\" or \"general\")"),
                );
                ScoreSum::General
            }
        };
        if let (Some(t), false) = (&sc.total, matches!(sum, ScoreSum::Constant(_))) {
            let loc = self.loc(file, t);
            self.error(&loc, "total is only for sum = \"constant\"");
        }
        Scores {
            min,
            max,
            sum,
            doc: sc.doc.unwrap_or_default(),
        }
    }

    /// The declared piles, checked, with their places appended to `decks`
    /// (one per seat up to `max_players`, or one for the table).
    fn piles(
        &mut self,
        piles: IndexMap<String, (usize, Spanned<String>, raw::RawPile)>,
        decks: &mut Vec<Deck>,
        max_players: usize,
    ) -> Vec<Pile> {
        let names: Vec<String> = piles.keys().cloned().collect();
        let mut out = Vec::new();
        let mut refills = Vec::new();
        for (name, (file, key, p)) in piles {
            let Some(deck) = decks
                .iter()
                .position(|d| d.pile.is_none() && d.name == *p.deck.get_ref())
            else {
                let loc = self.loc(file, &p.deck);
                let known: Vec<&str> = decks
                    .iter()
                    .filter(|d| d.pile.is_none())
                    .map(|d| d.name.as_str())
                    .collect();
                self.error(
                    &loc,
                    format!(
                        "pile '{name}': no deck '{}' (declared decks: {})",
                        p.deck.get_ref(),
                        known.join(", ")
                    ),
                );
                continue;
            };
            if decks.iter().any(|d| d.pile.is_none() && d.name == name) {
                let loc = self.loc(file, &key);
                self.error(
                    &loc,
                    format!("pile '{name}' has the name of a deck: scripts name both, so they must differ"),
                );
                continue;
            }
            let per_seat = p.per_seat.unwrap_or(true);
            let visible = match p.visible.get_ref().as_str() {
                "owner" if per_seat => Visibility::Owner,
                "owner" => {
                    let loc = self.loc(file, &p.visible);
                    self.error(
                        &loc,
                        format!("pile '{name}' is on the table (per_seat = false), so it has no owner to see it: visible = \"everyone\" or \"nobody\""),
                    );
                    continue;
                }
                "everyone" => Visibility::Everyone,
                "nobody" => Visibility::Nobody,
                other => {
                    let loc = self.loc(file, &p.visible);
                    self.error(
                        &loc,
                        format!("pile '{name}': visible = \"{other}\" is none of \"owner\", \"everyone\", \"nobody\""),
                    );
                    continue;
                }
            };
            let first = decks.len();
            let base = decks[deck].clone();
            let places = if per_seat { max_players } else { 1 };
            for s in 0..places {
                decks.push(Deck {
                    name: if per_seat {
                        format!("{name}.P{}", s + 1)
                    } else {
                        name.clone()
                    },
                    pile: Some(out.len()),
                    ..base.clone()
                });
            }
            refills.push(p.refill.map(|r| (file, r)));
            out.push(Pile {
                name,
                deck,
                per_seat,
                visible,
                refill: None,
                first,
                doc: p.doc.unwrap_or_default(),
            });
        }
        for (i, r) in refills.into_iter().enumerate() {
            let Some((file, r)) = r else { continue };
            match out.iter().position(|p| p.name == *r.get_ref()) {
                Some(j) if out[j].deck == out[i].deck && out[j].per_seat == out[i].per_seat && j != i => {
                    out[i].refill = Some(j)
                }
                Some(_) => {
                    let loc = self.loc(file, &r);
                    self.error(
                        &loc,
                        format!(
                            "pile '{}': refill = \"{}\" must be another pile of the same deck, per seat as this one is or not",
                            out[i].name,
                            r.get_ref()
                        ),
                    );
                }
                None => {
                    let loc = self.loc(file, &r);
                    self.error(
                        &loc,
                        format!(
                            "pile '{}': no pile '{}' to refill it from (declared piles: {})",
                            out[i].name,
                            r.get_ref(),
                            names.join(", ")
                        ),
                    );
                }
            }
        }
        out
    }

    fn field_defs(&mut self, d: &MergedDeck) -> Vec<FieldDef> {
        let mut out = Vec::new();
        for (file, k, f) in d.fields.values() {
            let file = *file;
            let ty = match f.kind.get_ref().as_str() {
                "int" => FieldType::Int { min: f.min, max: f.max },
                "bool" => FieldType::Bool,
                "string" => FieldType::Str,
                other => {
                    let loc = self.loc(file, &f.kind);
                    self.error(
                        &loc,
                        format!("unknown field type '{other}' (expected int, bool or string)"),
                    );
                    FieldType::Unchecked
                }
            };
            if matches!(k.get_ref().as_str(), "id" | "script" | "count") {
                let loc = self.loc(file, k);
                self.error(
                    &loc,
                    format!("'{}' is a built-in card key and cannot be declared", k.get_ref()),
                );
            }
            out.push(FieldDef {
                name: k.get_ref().clone(),
                ty,
                optional: f.optional,
                doc: f.doc.clone().unwrap_or_default(),
            });
        }
        out
    }

    /// Loads and checks a deck file against the deck's declared fields.
    fn load_deck(
        &mut self,
        name: &str,
        path: &Path,
        fields: Vec<FieldDef>,
        hooks: BTreeMap<String, usize>,
    ) -> Option<Deck> {
        let before = self.diags.len();
        let file = self.read(path)?;
        let raw: RawDeckFile = self.parse_toml(file)?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut cards: Vec<Card> = Vec::new();
        let mut ids_seen: Vec<(String, Loc)> = Vec::new();
        if raw.cards.is_empty() {
            self.diags
                .push(Diagnostic::new(path, "a deck needs at least one [[cards]] entry"));
        }
        for card in raw.cards {
            let card_loc = self.loc(file, &card);
            let table = card.into_inner();
            let mut id = None;
            let mut id_loc = card_loc.clone();
            let mut script = None;
            let mut count = 1u32;
            let mut values = BTreeMap::new();
            for (k, v) in &table {
                let loc = self.loc(file, v);
                match k.get_ref().as_str() {
                    "id" => match v.get_ref() {
                        toml::Value::String(s) if !s.is_empty() && !s.chars().any(char::is_whitespace) => {
                            id = Some(s.clone());
                            id_loc = loc.clone();
                        }
                        _ => self.error(&loc, "card id must be a non-empty string without spaces"),
                    },
                    "count" => match v.get_ref() {
                        toml::Value::Integer(n) if (1..=MAX_COPIES).contains(n) => count = *n as u32,
                        _ => self.error(
                            &loc,
                            format!("count must be a whole number within 1..={MAX_COPIES} (the copies of this card)"),
                        ),
                    },
                    "script" => match v.get_ref() {
                        toml::Value::String(s) => {
                            let p = base.join(s);
                            if p.is_file() {
                                script = self.read(&p);
                            } else {
                                self.error(&loc, format!("card script not found: {}", p.display()));
                            }
                        }
                        _ => self.error(&loc, "script must be a path (a string)"),
                    },
                    key => {
                        let Some(def) = fields.iter().find(|f| f.name == key) else {
                            let known: Vec<_> = ["id", "script", "count"]
                                .into_iter()
                                .chain(fields.iter().map(|f| f.name.as_str()))
                                .collect();
                            let kloc = self.loc(file, k);
                            self.error(
                                &kloc,
                                format!("unknown card key '{key}' (expected one of: {})", known.join(", ")),
                            );
                            continue;
                        };
                        match (&def.ty, v.get_ref()) {
                            (FieldType::Int { min, max }, toml::Value::Integer(i)) => {
                                if min.is_some_and(|m| *i < m) || max.is_some_and(|m| *i > m) {
                                    self.error(
                                        &loc,
                                        format!(
                                            "'{key}' must be within {}..={}, not {i}",
                                            min.map_or(String::new(), |m| m.to_string()),
                                            max.map_or(String::new(), |m| m.to_string())
                                        ),
                                    );
                                }
                                values.insert(key.to_string(), Value::Int(*i));
                            }
                            (FieldType::Bool, toml::Value::Boolean(b)) => {
                                values.insert(key.to_string(), Value::Bool(*b));
                            }
                            (FieldType::Str, toml::Value::String(s)) => {
                                values.insert(key.to_string(), Value::Str(s.clone()));
                            }
                            (FieldType::Unchecked, v) => {
                                if let Some(val) = Value::from_toml(v) {
                                    values.insert(key.to_string(), val);
                                }
                            }
                            (ty, _) => {
                                let want = match ty {
                                    FieldType::Int { .. } => "a whole number",
                                    FieldType::Bool => "true or false",
                                    FieldType::Str => "a string",
                                    FieldType::Unchecked => "anything",
                                };
                                self.error(&loc, format!("'{key}' must be {want}"));
                            }
                        }
                    }
                }
            }
            let Some(id) = id else {
                self.error(&card_loc, "card has no id");
                continue;
            };
            for f in &fields {
                if !f.optional && !table.keys().any(|k| k.get_ref() == &f.name) {
                    self.error(&card_loc, format!("card '{id}' is missing field '{}'", f.name));
                }
            }
            if let Some((_, first)) = ids_seen.iter().find(|(seen, _)| *seen == id) {
                let first_line = self.files[file].text[..first.span.start].matches('\n').count() + 1;
                self.error(
                    &id_loc,
                    format!("duplicate card id '{id}' (first used on line {first_line})"),
                );
                continue;
            }
            ids_seen.push((id.clone(), id_loc));
            cards.push(Card {
                id,
                fields: values,
                script,
                count,
            });
        }
        if self.diags.len() > before {
            return None;
        }
        Some(Deck {
            name: name.to_string(),
            file: path.to_path_buf(),
            fields,
            hooks,
            cards,
            pile: None,
        })
    }
}

/// The words of enumeration `name` are usable: at least one, each one
/// word, none twice.
fn check_words(name: &str, words: &[String]) -> Result<(), String> {
    if words.is_empty() {
        return Err(format!("enumeration '{name}' has no values"));
    }
    let mut seen = std::collections::HashSet::new();
    for v in words {
        if v.is_empty() || v.chars().any(char::is_whitespace) {
            return Err(format!("enumeration '{name}': value {v:?} must be one word"));
        }
        if !seen.insert(v) {
            return Err(format!("enumeration '{name}': value {v:?} appears twice"));
        }
    }
    Ok(())
}

/// A slot type name in an action text: `int`, `seat` or an enumeration.
fn slot_type(enums: &BTreeMap<String, Vec<String>>, seat_words: &BTreeSet<String>, ty: &str) -> Option<SlotType> {
    match ty {
        "int" => Some(SlotType::Int),
        "signed" => Some(SlotType::Signed),
        "seat" => Some(SlotType::Seat),
        other if seat_words.contains(other) => enums.get(other).map(|v| SlotType::SeatWord {
            name: other.to_string(),
            words: v.clone(),
        }),
        other => enums.get(other).map(|v| SlotType::Enum {
            name: other.to_string(),
            values: v.clone(),
        }),
    }
}

/// A parameter's value when it is a whole number (a range end may name one).
fn int_value(v: Option<&Value>) -> Option<i64> {
    match v {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Removes `.` and `dir/..` from a path, lexically, so that messages name
/// files the way a designer would (and the language server finds a
/// script by the path the loader gave it).
pub fn clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every struct a TOML value is read into has words for a designer.
    #[test]
    fn every_raw_struct_has_an_example() {
        for line in include_str!("raw.rs").lines() {
            if let Some(rest) = line.strip_prefix("pub struct ") {
                let name = rest.split_whitespace().next().unwrap_or("");
                assert!(STRUCT_EXAMPLES.iter().any(|(n, _)| *n == name), "{name} has no example");
            }
        }
    }
}
