//! The runtime of compiled rule sets: what the Rust that
//! `rulesmith-compiler` generates calls, prebuilt once so that a generated
//! crate is only its own functions.
//!
//! - [`value`]: strings, the dynamic [`Value`] where inference found no
//!   single type, and conversions;
//! - [`ops`]: Rhai's semantics (checked arithmetic, indexing, strings,
//!   arrays, dynamic operations) and the generic natives;
//! - [`Rt`]: what one rule call may touch: the engine's [`Ctx`], the
//!   variant's run-time data (parameters, cards), fuel and call depth;
//! - [`CompiledRules`] (what generated code implements) and [`Compiled`],
//!   the adapter that makes it a [`rulesmith_core::Rules`] for the engine.

pub mod ops;
pub mod value;

use rulesmith_core::legal::{self, AsGiven, Given};
use rulesmith_core::rules::{Data, Entry, FunctionProfile, Limits, NativeData, Reply, Rules};
use rulesmith_core::state::Outcome;
use rulesmith_core::variant::{self, Variant};
use rulesmith_core::{Ctx, Frame, ScriptError};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use value::{FromValue, Str, ToValue, Value};

/// Everything generated code names.
pub mod prelude {
    pub use crate::ops::*;
    pub use crate::value::{take_field, FromValue, Str, ToValue, Value, ValueMap};
    pub use crate::Few;
    pub use crate::{At, CardData, CompiledRules, Domain, Fail, Outcomes, Place, Query, Rt};
    pub use rulesmith_core::board;
}

/// What a function returns when it always returns a few items written
/// out (`[[a, b]]`, `[[a, b], [c, d]]`) and every caller loops over the
/// result: kept inline, no allocation per call (see the compiler's
/// `few_returns`).
///
/// Only made and looped over: an array and a length (a general inline
/// vector's checks for spilling to the heap cost more than they save here).
#[derive(Clone, Debug)]
pub struct Few<T> {
    items: [T; FEW],
    len: usize,
}

/// The most items a [`Few`] holds (the compiler's limit too).
pub const FEW: usize = 4;

impl<T: Default> Few<T> {
    /// The items given, in order; at most [`FEW`] (the compiler makes sure).
    #[inline]
    pub fn of<const N: usize>(given: [T; N]) -> Few<T> {
        debug_assert!(N <= FEW, "a Few holds at most {FEW} items");
        let mut items: [T; FEW] = Default::default();
        for (slot, x) in items.iter_mut().zip(given) {
            *slot = x;
        }
        Few { items, len: N.min(FEW) }
    }
}

impl<T> IntoIterator for Few<T> {
    type Item = T;
    type IntoIter = std::iter::Take<std::array::IntoIter<T, FEW>>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter().take(self.len)
    }
}

/// A place in the scripts: file index, function, line, column.
pub type Place = (u16, &'static str, u32, u32);

/// A failure inside compiled rules: a message, where the innermost script
/// function that failed was (set by the first `.at`), and the calls that
/// led there, innermost first (added by `.called_at` on the way out).
///
/// Boxed: every fallible operation of generated code returns `R<T>`, so the
/// failure's size is the size of every result (an unboxed `Fail` made each
/// index, field read and checked add return 80 bytes through memory).
#[derive(Clone, Debug)]
pub struct Fail(Box<FailInfo>);

/// What a [`Fail`] holds.
#[derive(Clone, Debug)]
pub struct FailInfo {
    pub message: String,
    pub at: Option<Place>,
    pub calls: Vec<Place>,
}

impl Fail {
    /// Failures are the cold path of every operation: kept out of line, so
    /// that the checks in generated code stay small enough to inline.
    #[cold]
    #[inline(never)]
    pub fn new(message: impl Into<String>) -> Fail {
        Fail(Box::new(FailInfo {
            message: message.into(),
            at: None,
            calls: Vec::new(),
        }))
    }

    pub fn into_info(self) -> FailInfo {
        *self.0
    }

    pub fn into_message(self) -> String {
        self.0.message
    }
}

impl std::ops::Deref for Fail {
    type Target = FailInfo;
    fn deref(&self) -> &FailInfo {
        &self.0
    }
}

impl std::ops::DerefMut for Fail {
    fn deref_mut(&mut self) -> &mut FailInfo {
        &mut self.0
    }
}

/// Locates a failure at a place of the script (file index, function, line,
/// column), unless an inner function already did.
pub trait At<T> {
    fn at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail>;
    /// The result of a call to a script function (or card hook) written at
    /// this place: a failure in it gets the call added to its chain.
    fn called_at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail>;
}

impl<T> At<T> for Result<T, Fail> {
    // Every fallible operation of generated code goes through these: the
    // success path must inline to nothing, the failure path stays out of line.
    #[inline(always)]
    fn at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail> {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(locate(e, (file, function, line, col))),
        }
    }

    #[inline(always)]
    fn called_at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail> {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(add_call(e, (file, function, line, col))),
        }
    }
}

#[cold]
#[inline(never)]
fn locate(mut e: Fail, place: Place) -> Fail {
    if e.at.is_none() {
        e.at = Some(place);
    }
    e
}

#[cold]
#[inline(never)]
fn add_call(mut e: Fail, place: Place) -> Fail {
    match e.at {
        None => e.at = Some(place),
        Some(_) => e.calls.push(place),
    }
    e
}

impl<T> At<T> for Result<T, String> {
    #[inline]
    fn at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail> {
        self.map_err(Fail::new).at(file, function, line, col)
    }

    #[inline]
    fn called_at(self, file: u16, function: &'static str, line: u32, col: u32) -> Result<T, Fail> {
        self.map_err(Fail::new).called_at(file, function, line, col)
    }
}

/// One domain of `add_all`.
pub enum Domain<'a> {
    One(i64),
    Ints(&'a [i64]),
    /// Each choice fills several values (e.g. a grid slot `[c, r]`), held
    /// as vectors or fixed-size arrays.
    Tuples(&'a dyn Tuples),
    /// The indices of the numbers at least the second: what the native
    /// `at_least` lists, given without the list.
    AtLeast(&'a [i64], i64),
    Dyn(&'a Value),
}

/// A list of choices of several values each: `Vec<Vec<i64>>`,
/// `Vec<[i64; 2]>`, `[[i64; 3]; 2]`...
pub trait Tuples {
    /// Gives every tuple to the product being built, as one choice each.
    fn give(&self, cx: &mut Ctx);

    /// The tuples' width and numbers, back to back, when they all have one
    /// width of at least 1.
    fn flat(&self) -> Option<(usize, &[i64])> {
        None
    }
}

// Tuples of one fixed width lie back to back in memory: the product takes
// them in one piece (no call per choice; listing is the playouts' hot path).
// Empty tuples have nothing to lie back to back: they go one by one.
impl<const N: usize> Tuples for Vec<[i64; N]> {
    fn give(&self, cx: &mut Ctx) {
        match N {
            0 => self.iter().for_each(|t| cx.product_choice(t)),
            _ => cx.product_choices(N, self.as_flattened()),
        }
    }

    fn flat(&self) -> Option<(usize, &[i64])> {
        (N > 0).then_some((N, self.as_flattened()))
    }
}

impl<const N: usize, const M: usize> Tuples for [[i64; N]; M] {
    fn give(&self, cx: &mut Ctx) {
        match N {
            0 => self.iter().for_each(|t| cx.product_choice(t)),
            _ => cx.product_choices(N, self.as_flattened()),
        }
    }

    fn flat(&self) -> Option<(usize, &[i64])> {
        (N > 0).then_some((N, self.as_flattened()))
    }
}

impl Tuples for Vec<Vec<i64>> {
    fn give(&self, cx: &mut Ctx) {
        self.iter().for_each(|t| cx.product_choice(t));
    }
}

impl<const M: usize> Tuples for [Vec<i64>; M] {
    fn give(&self, cx: &mut Ctx) {
        self.iter().for_each(|t| cx.product_choice(t));
    }
}

impl Domain<'_> {
    /// Gives the domain's choices to the product being built.
    fn choices(&self, cx: &mut Ctx) -> Result<(), String> {
        match self {
            Domain::One(x) => cx.product_choices(1, &[*x]),
            Domain::Ints(v) => cx.product_choices(1, v),
            Domain::Tuples(v) => v.give(cx),
            Domain::AtLeast(values, min) => at_least_pieces(values, *min, |piece| cx.product_choices(1, piece)),
            Domain::Dyn(Value::Int(x)) => cx.product_choice(&[*x]),
            Domain::Dyn(Value::Arr(a)) => {
                for alt in a {
                    match alt {
                        Value::Int(x) => cx.product_choice(&[*x]),
                        Value::Arr(inner) => {
                            cx.start_choice();
                            for v in inner {
                                match v {
                                    Value::Int(x) => cx.choice_value(*x),
                                    other => return Err(legal::not_a_number(other.type_name())),
                                }
                            }
                        }
                        other => return Err(legal::not_a_choice(other.type_name())),
                    }
                }
            }
            Domain::Dyn(other) => return Err(legal::not_a_domain(other.type_name())),
        }
        Ok(())
    }
}

/// A domain the core can take whole: numbers of one width, or `at_least`.
impl AsGiven for Domain<'_> {
    #[inline]
    fn as_given(&self) -> Option<Given<'_>> {
        Some(match self {
            Domain::One(x) => Given::Numbers(1, std::slice::from_ref(x)),
            Domain::Ints(v) => Given::Numbers(1, v),
            Domain::Tuples(t) => {
                let (width, numbers) = t.flat()?;
                Given::Numbers(width, numbers)
            }
            Domain::AtLeast(values, min) => Given::AtLeast(values, *min),
            Domain::Dyn(_) => return None,
        })
    }
}

/// The indices `at_least(values, min)` lists, handed to `each` in pieces
/// of a few on the stack (the product takes a piece in one call), the
/// last piece possibly empty.
fn at_least_pieces(values: &[i64], min: i64, mut each: impl FnMut(&[i64])) {
    let mut piece = [0i64; 8];
    let mut n = 0;
    for (i, &v) in values.iter().enumerate() {
        if v >= min {
            if n == piece.len() {
                each(&piece);
                n = 0;
            }
            piece[n] = i as i64;
            n += 1;
        }
    }
    each(&piece[..n]);
}

/// The outcomes a continuation receives.
pub struct Outcomes<'a> {
    outcomes: &'a [Outcome],
    /// Every deck's card ids ([`CardTables`]).
    ids: &'a [Vec<Str>],
}

impl Outcomes<'_> {
    pub fn faces(&self) -> Vec<i64> {
        self.outcomes
            .iter()
            .map(|o| match o {
                Outcome::Face(f) => *f as i64,
                Outcome::Card { card, .. } => *card as i64,
            })
            .collect()
    }

    pub fn cards(&self) -> Vec<Str> {
        self.outcomes
            .iter()
            .map(|o| match o {
                Outcome::Card { deck, card } => self.ids[*deck as usize][*card as usize].clone(),
                Outcome::Face(f) => Str::from(f.to_string()),
            })
            .collect()
    }
}

/// A card's data, as `card(deck, id)` gives it.
pub struct CardData<'a> {
    card: &'a variant::Card,
}

impl CardData<'_> {
    pub fn field(&self, key: &str) -> Value {
        if key == "id" {
            return Value::Str(Str::from(self.card.id.clone()));
        }
        match self.card.fields.get(key) {
            Some(variant::Value::Int(i)) => Value::Int(*i),
            Some(variant::Value::Bool(b)) => Value::Bool(*b),
            Some(variant::Value::Str(s)) => Value::Str(Str::from(s.clone())),
            None => Value::Unit,
        }
    }
}

/// Typed card records, kept per rule set: `card(deck, id)` used to build
/// its record from the deck's data at every call (the id found by
/// comparing strings, each field looked up by name and converted), which
/// was over a third of a card game's playout. A deck's data cannot
/// change under a rule set, so each card is built once, when first looked
/// up (a card whose data does not fit the inferred record fails then, as
/// before, and is not kept).
#[derive(Default)]
pub struct CardTables {
    decks: RefCell<Vec<Option<std::rc::Rc<dyn std::any::Any>>>>,
    /// The name tables, for names computed at run time (`Rt::action_index`).
    names: std::cell::OnceCell<rulesmith_core::ctx::Names>,
    /// Every deck's card ids as shared strings, by card index: a card a
    /// continuation receives, or `card_ids`, is a count added to one of
    /// these, not a new string (two allocations per card before).
    ids: std::cell::OnceCell<Vec<Vec<Str>>>,
}

impl CardTables {
    fn ids(&self, variant: &Variant) -> &[Vec<Str>] {
        self.ids.get_or_init(|| {
            variant
                .decks
                .iter()
                .map(|d| d.cards.iter().map(|c| Str::from(c.id.clone())).collect())
                .collect()
        })
    }
}

/// One deck's table: its ids sorted for lookup, and the records built so far.
struct CardTable<T> {
    ids: Vec<(Box<str>, u32)>,
    records: RefCell<Vec<Option<T>>>,
}

/// What one rule call may touch.
pub struct Rt<'a> {
    pub cx: &'a mut Ctx,
    pub variant: &'a Variant,
    cards: &'a CardTables,
    fuel: u64,
    max_depth: u32,
    counts: Option<&'a RefCell<Counts>>,
}

#[derive(Default)]
struct Counts {
    functions: Vec<u64>,
}

/// `profile`'s call count, out of line: the calls of ordinary runs skip it.
#[cold]
#[inline(never)]
fn count_call(counts: &RefCell<Counts>, function: usize) {
    let mut c = counts.borrow_mut();
    if c.functions.len() <= function {
        c.functions.resize(function + 1, 0);
    }
    c.functions[function] += 1;
}

impl Rt<'_> {
    /// Entering a script function: one unit of fuel, and the depth limit
    /// (as Rhai's: the entry point is depth 0, and `max_depth` more may nest).
    #[inline(always)]
    pub fn call(&mut self, depth: u32, function: usize) -> Result<(), Fail> {
        if depth > self.max_depth {
            return Err(Fail::new("too many nested calls: runaway recursion?"));
        }
        if let Some(c) = self.counts {
            count_call(c, function);
        }
        self.tick()
    }

    /// One loop turn: one unit of fuel (the operation limit's stand-in).
    #[inline(always)]
    pub fn tick(&mut self) -> Result<(), Fail> {
        if self.fuel == 0 {
            return Err(Fail::new(
                "the script ran too long (operation limit reached): an endless loop or runaway recursion?",
            ));
        }
        self.fuel -= 1;
        Ok(())
    }

    // ----- queries ---------------------------------------------------------
    // The small ones inline into the generated code, which calls them in
    // nearly every rule function.

    #[inline]
    pub fn seats(&self) -> i64 {
        self.cx.seats()
    }
    #[inline]
    pub fn active(&self) -> i64 {
        self.cx.active()
    }
    #[inline]
    pub fn actor(&self) -> i64 {
        self.cx.actor()
    }
    #[inline]
    pub fn turn(&self) -> i64 {
        self.cx.turn()
    }
    #[inline]
    pub fn in_play(&self) -> i64 {
        self.cx.in_play()
    }
    pub fn winner(&self) -> i64 {
        self.cx.winner()
    }
    pub fn status(&self) -> Str {
        Str::lit(self.cx.status())
    }
    pub fn step(&self) -> Str {
        match self.cx.step() {
            Some(s) => Str::from(self.variant.steps[s].name.clone()),
            None => Str::lit("setup"),
        }
    }
    #[inline]
    pub fn is_out(&self, seat: i64) -> Result<bool, String> {
        self.cx.is_out(seat)
    }
    #[inline]
    pub fn param_int(&self, i: usize) -> i64 {
        match self.variant.params[i].value {
            variant::Value::Int(x) => x,
            _ => 0,
        }
    }
    #[inline]
    pub fn param_bool(&self, i: usize) -> bool {
        matches!(self.variant.params[i].value, variant::Value::Bool(true))
    }
    pub fn param_str(&self, i: usize) -> Str {
        match &self.variant.params[i].value {
            variant::Value::Str(s) => Str::from(s.clone()),
            _ => Str::default(),
        }
    }
    pub fn has_deck(&self, name: &Str) -> bool {
        self.variant.deck_index(name.as_str()).is_some()
    }
    /// The variant's name tables, the interpreter's own (`Names`): built
    /// once per rule set, on the first name computed at run time.
    fn names(&self) -> &rulesmith_core::ctx::Names {
        self.cards
            .names
            .get_or_init(|| rulesmith_core::ctx::Names::new(self.variant))
    }
    /// The index of the action named `name` (a name computed at run time).
    pub fn action_index(&self, name: &Str) -> Result<usize, String> {
        self.names().action(name.as_str()).map(usize::from)
    }
    /// The index of the step named `name` (a name computed at run time).
    pub fn step_index(&self, name: &Str) -> Result<usize, String> {
        self.names().step(name.as_str())
    }
    /// The index of the statistic named `name` (a name computed at run time).
    pub fn stat_index(&self, name: &Str) -> Result<usize, String> {
        self.names().stat(name.as_str())
    }
    /// `param(name)` with a name computed at run time: the value, of
    /// whatever type the parameter has.
    pub fn param_named(&self, name: &Str) -> Result<Value, String> {
        let i = self.names().param(name.as_str())?;
        Ok(match &self.variant.params[i].value {
            variant::Value::Int(x) => Value::Int(*x),
            variant::Value::Bool(b) => Value::Bool(*b),
            variant::Value::Str(s) => Value::Str(Str::from(s.clone())),
        })
    }
    /// The index of the deck named `name` (a name computed at run time).
    pub fn deck_index(&self, name: &Str) -> Result<usize, String> {
        self.variant.deck_index(name.as_str()).ok_or_else(|| {
            let known: Vec<&str> = self.variant.decks.iter().map(|d| d.name.as_str()).collect();
            format!("unknown deck '{name}' (declared decks: {})", known.join(", "))
        })
    }

    pub fn deck_left(&self, deck: usize) -> i64 {
        self.cx.deck_left(deck)
    }
    pub fn card_ids(&self, deck: usize) -> Vec<Str> {
        self.cards.ids(self.variant)[deck].clone()
    }
    /// `card(deck, id)` as the typed record `T` that `build` makes from a
    /// card's data (see [`CardTables`]).
    pub fn card_record<T: Clone + 'static>(
        &mut self,
        deck: usize,
        id: &Str,
        build: fn(CardData<'_>) -> Result<T, Fail>,
    ) -> Result<T, Fail> {
        let table = self.card_table::<T>(deck);
        let Ok(k) = table.ids.binary_search_by(|(x, _)| (**x).cmp(id.as_str())) else {
            return Err(Fail::new(self.variant.decks[deck].no_card(id.as_str())));
        };
        let index = table.ids[k].1 as usize;
        if let Some(r) = &table.records.borrow()[index] {
            return Ok(r.clone());
        }
        let record = build(CardData {
            card: &self.variant.decks[deck].cards[index],
        })?;
        table.records.borrow_mut()[index] = Some(record.clone());
        Ok(record)
    }

    fn card_table<T: 'static>(&self, deck: usize) -> std::rc::Rc<CardTable<T>> {
        let mut decks = self.cards.decks.borrow_mut();
        if decks.len() <= deck {
            decks.resize(deck + 1, None);
        }
        let any = decks[deck].get_or_insert_with(|| {
            let cards = &self.variant.decks[deck].cards;
            let mut ids: Vec<(Box<str>, u32)> = cards
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id.as_str().into(), i as u32))
                .collect();
            ids.sort();
            std::rc::Rc::new(CardTable::<T> {
                ids,
                records: RefCell::new((0..cards.len()).map(|_| None).collect()),
            })
        });
        any.clone()
            .downcast::<CardTable<T>>()
            .expect("one record type per deck in a rule set")
    }

    // ----- flow ------------------------------------------------------------

    #[inline]
    pub fn enter_step(&mut self, step: usize) {
        self.cx.enter_step(step)
    }
    #[inline]
    pub fn end_turn(&mut self) -> Result<(), String> {
        self.cx.end_turn()
    }
    pub fn end_turn_to(&mut self, seat: i64) -> Result<(), String> {
        self.cx.end_turn_to(seat)
    }
    pub fn start_turns(&mut self, seat: i64) -> Result<(), String> {
        self.cx.start_turns(seat)
    }
    #[inline]
    pub fn set_actor(&mut self, seat: i64) -> Result<(), String> {
        self.cx.set_actor(seat)
    }
    pub fn eliminate(&mut self, seat: i64) -> Result<(), String> {
        self.cx.eliminate(seat)
    }
    pub fn win(&mut self, seat: i64) -> Result<(), String> {
        self.cx.win(seat)
    }
    pub fn draw_game(&mut self) {
        self.cx.draw_game()
    }
    #[inline]
    pub fn stat(&mut self, index: usize, delta: i64) {
        self.cx.stat(index, delta)
    }
    pub fn set_score(&mut self, seat: i64, value: i64) -> Result<(), String> {
        self.cx.set_score(seat, value, self.variant)
    }
    pub fn add_score(&mut self, seat: i64, delta: i64) -> Result<(), String> {
        self.cx.add_score(seat, delta, self.variant)
    }
    pub fn score(&self, seat: i64) -> Result<i64, String> {
        self.cx.score(seat, self.variant)
    }
    pub fn print(&mut self, text: &Str) {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{text}");
    }

    // ----- legal actions ----------------------------------------------------

    // Always inlined into the generated legal functions: the hottest call
    // of a listing, and the call itself cost about as much as the work
    // (the measured playouts: 5% fewer instructions inlined).
    #[inline(always)]
    pub fn add(&mut self, kind: usize, values: &[i64]) -> Result<(), String> {
        self.cx.add(self.variant, kind as u16, values)
    }

    pub fn recall(&mut self, key: i64, stamp: &[i64]) -> Result<i64, String> {
        self.cx.recall(key, stamp)
    }

    pub fn remember(&mut self, key: i64) -> Result<(), String> {
        self.cx.remember(key)
    }

    /// Every combination of the domains, the first varying slowest, kept
    /// in factored form by the core (see `rulesmith_core::legal`).
    #[inline]
    pub fn add_all(&mut self, kind: usize, domains: &[Domain<'_>]) -> Result<(), String> {
        // In one call to the core when every domain is numbers, read in
        // place (see [`AsGiven`] for [`Domain`]): what nearly every
        // compiled `add_all` gives. Step by step otherwise (dynamic values,
        // tuples of no numbers, a product the core will not take whole).
        if let Some(done) = self.cx.add_product(self.variant, kind as u16, domains) {
            return done;
        }
        self.cx.start_product();
        for d in domains {
            self.cx.product_domain();
            d.choices(self.cx)?;
        }
        self.cx.finish_product(self.variant, kind as u16)
    }

    pub fn add_all_dyn(&mut self, kind: usize, domains: Value) -> Result<(), String> {
        match &domains {
            Value::Arr(a) => {
                let ds: Vec<Domain<'_>> = a.iter().map(Domain::Dyn).collect();
                self.add_all(kind, &ds)
            }
            other => Err(format!(
                "add_all: the domains must be an array, not {}",
                other.type_name()
            )),
        }
    }

    // ----- chance and cards ----------------------------------------------------

    /// `then` is a literal in generated code: the pending event borrows it.
    pub fn roll(&mut self, count: i64, sides: i64, then: &'static str) -> Result<(), String> {
        self.cx.roll(count, sides, then)
    }

    pub fn roll_secret(&mut self, seat: i64, count: i64, sides: i64, then: &'static str) -> Result<(), String> {
        self.cx.roll_seen(count, sides, Some(seat), then)
    }

    pub fn draw(&mut self, deck: usize, count: i64, visible_to: Option<i64>, then: &'static str) -> Result<(), String> {
        self.cx.draw(deck, count, visible_to, then, self.variant)
    }

    /// `deal(deck, count, dealer, [pile,] then)`; `deck` may name a pile
    /// on the table too, so both names are resolved here.
    pub fn deal(
        &mut self,
        deck: &Str,
        count: i64,
        dealer: i64,
        pile: Option<&Str>,
        then: &'static str,
    ) -> Result<(), String> {
        let from = self.place(deck, -1, "deal")?;
        let into = match pile {
            None => None,
            Some(name) => match self.names().place(name.as_str())? {
                rulesmith_core::Place::Pile(p) => Some(p),
                rulesmith_core::Place::Deck(_) => {
                    return Err(format!(
                        "deal(.., '{name}', ..): '{name}' is a deck; cards are dealt into a pile"
                    ))
                }
            },
        };
        self.cx.deal(from, count, dealer, into, then, self.variant)
    }

    // ----- piles -------------------------------------------------------------

    /// The place in the game's decks of deck or pile `name` for `seat`.
    fn place(&self, name: &Str, seat: i64, native: &str) -> Result<usize, String> {
        let place = self.names().place(name.as_str())?;
        self.cx.place_index(place, seat, self.variant, native)
    }

    pub fn pile(&self, name: &Str, seat: i64) -> Result<Vec<Str>, String> {
        let at = self.place(name, seat, "pile")?;
        let deck = &self.variant.decks[at];
        Ok(self
            .cx
            .pile_cards(at)
            .iter()
            .map(|&k| Str::from(deck.cards[k as usize].id.clone()))
            .collect())
    }

    pub fn pile_size(&self, name: &Str, seat: i64) -> Result<i64, String> {
        let at = self.place(name, seat, "pile_size")?;
        Ok(self.cx.pile_cards(at).len() as i64)
    }

    pub fn move_card(&mut self, id: &Str, from: &Str, to: &Str, seat: i64) -> Result<(), String> {
        let f = self.place(from, seat, "move_card")?;
        let t = self.place(to, seat, "move_card")?;
        let card = self.variant.decks[self.variant.deck_of_place(f)].find(id.as_str())? as u16;
        self.cx.move_card(card, f, t, self.variant)
    }

    pub fn move_all(&mut self, from: &Str, to: &Str, seat: i64) -> Result<(), String> {
        let f = self.place(from, seat, "move_all")?;
        let t = self.place(to, seat, "move_all")?;
        self.cx.move_all(f, t, self.variant)
    }

    pub fn draw_from(&mut self, from: &Str, seat: i64, count: i64, to: &Str) -> Result<(), String> {
        let f = self.place(from, seat, "draw_from")?;
        let t = self.place(to, seat, "draw_from")?;
        self.cx.draw_from(f, seat, count, t, self.variant)
    }

    pub fn shuffle_into(&mut self, deck: usize, ids: &[Str]) -> Result<(), String> {
        let mut cards = Vec::with_capacity(ids.len());
        for id in ids {
            cards.push(self.variant.decks[deck].find(id.as_str())? as u16);
        }
        self.cx.shuffle_into(deck, &cards, self.variant)
    }

    pub fn reveal_secrets(&mut self, seat: i64) -> Result<(), String> {
        self.cx.reveal_secrets(seat)
    }

    pub fn last_secret(&self) -> i64 {
        self.cx.last_secret()
    }

    pub fn reveal_decision(&mut self, id: i64) -> Result<(), String> {
        self.cx.reveal_decision(id)
    }

    pub fn round_left(&self) -> i64 {
        self.cx.round_left()
    }

    pub fn words(&self, name: &Str) -> Result<Vec<Str>, String> {
        Ok(rulesmith_core::ctx::words(self.variant, name.as_str())?
            .iter()
            .map(|w| Str::from(w.clone()))
            .collect())
    }

    pub fn reveal(&mut self, deck: usize, id: &Str) -> Result<(), String> {
        let card = self.variant.decks[deck].find(id.as_str())?;
        self.cx.reveal(deck, card as u16);
        Ok(())
    }

    /// A card id that is not in the deck is an error even when the card
    /// would have no hook.
    pub fn check_card(&self, deck: usize, id: &str) -> Result<(), Fail> {
        self.variant.decks[deck].find(id).map(drop).map_err(Fail::new)
    }

    /// Runs a card's hook, its failures prefixed with the card, as the
    /// interpreter does.
    pub fn hook_call<T>(
        &mut self,
        card: &str,
        hook: &str,
        f: impl FnOnce(&mut Self) -> Result<T, Fail>,
    ) -> Result<T, Fail> {
        // Counted as the card's function (see `function_names`).
        let _ = hook;
        f(self).map_err(|mut e| {
            e.message = format!("card '{card}': {}", e.message);
            e
        })
    }
}

/// A query entry point, for [`CompiledRules::query_ref`].
#[derive(Clone, Copy, Debug)]
pub enum Query {
    Summary(i64),
    Render(i64),
    Evaluate(i64),
    Labels,
    Invariant(usize),
}

impl Query {
    fn of(entry: &Entry<'_>) -> Option<Query> {
        Some(match *entry {
            Entry::Summary { viewer } => Query::Summary(viewer),
            Entry::Render { viewer } => Query::Render(viewer),
            Entry::Evaluate { seat } => Query::Evaluate(seat),
            Entry::Labels => Query::Labels,
            Entry::Invariant { index } => Query::Invariant(index),
            _ => return None,
        })
    }
}

/// What generated code implements: the rule set's entry points on its
/// typed data.
pub trait CompiledRules: 'static {
    type This: Default + Clone + PartialEq + ToValue + FromValue + std::fmt::Debug + 'static;
    /// The [`rulesmith_compiler`]-made key of the scripts this was built from.
    fn fingerprint(&self) -> &'static str;
    /// (name, arity) of every rule function.
    fn signatures(&self) -> &'static [(&'static str, usize)];
    /// Every generated function's name, by its index (card hooks as
    /// `card ID: HOOK`): what call counts are reported under.
    fn function_names(&self) -> &'static [&'static str];
    /// Runs query `q` on data it cannot change (the compiler knows which
    /// functions write `this`); `None` for a query that may write it.
    fn query_ref(&self, _q: Query, _this: &Self::This, _rt: &mut Rt) -> Option<Result<Value, Fail>> {
        None
    }
    fn setup(&self, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn turn_start(&self, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn turn_end(&self, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn legal(&self, step: usize, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn enter(&self, step: usize, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn apply(&self, kind: u16, values: &[i32], this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn resume(&self, then: &str, outcomes: Outcomes, this: &mut Self::This, rt: &mut Rt) -> Result<(), Fail>;
    fn summary(&self, this: &mut Self::This, rt: &mut Rt, seat: i64) -> Result<Value, Fail>;
    fn render(&self, this: &mut Self::This, rt: &mut Rt, seat: i64) -> Result<Value, Fail>;
    fn evaluate(&self, this: &mut Self::This, rt: &mut Rt, seat: i64) -> Result<Value, Fail>;
    fn labels(&self, this: &mut Self::This, rt: &mut Rt) -> Result<Value, Fail>;
    fn invariant(&self, index: usize, this: &mut Self::This, rt: &mut Rt) -> Result<Value, Fail>;
}

/// The script data of a compiled game: the generated `This` struct.
#[derive(Clone, Debug)]
struct Native<T>(T);

impl<T: Clone + PartialEq + ToValue + std::fmt::Debug + 'static> NativeData for Native<T> {
    fn clone_box(&self) -> Box<dyn NativeData> {
        Box::new(self.clone())
    }
    fn clone_onto(&self, target: &mut dyn NativeData) -> bool {
        match (target as &mut dyn std::any::Any).downcast_mut::<Native<T>>() {
            Some(t) => {
                t.0.clone_from(&self.0);
                true
            }
            None => false,
        }
    }
    fn same_as(&self, other: &dyn NativeData) -> bool {
        (other as &dyn std::any::Any)
            .downcast_ref::<Native<T>>()
            .is_some_and(|o| o.0 == self.0)
    }
    fn to_json(&self) -> serde_json::Value {
        self.0.to_value().to_json()
    }
}

/// Compiled rules as the engine's [`Rules`].
pub struct Compiled<C: CompiledRules> {
    rules: C,
    variant: Arc<Variant>,
    limits: Limits,
    counts: RefCell<Counts>,
    tracking: std::cell::Cell<bool>,
    cards: CardTables,
    /// How to build another of these (set when built by a [`Registration`]).
    remake: Option<MakeRules>,
}

impl<C: CompiledRules> Compiled<C> {
    pub fn new(rules: C, variant: Arc<Variant>, limits: Limits) -> Self {
        Compiled {
            rules,
            variant,
            limits,
            counts: RefCell::new(Counts::default()),
            tracking: std::cell::Cell::new(false),
            cards: CardTables::default(),
            remake: None,
        }
    }

    /// What generated code runs with during one call, on `cx`.
    /// The typed script data inside `data`.
    fn this_mut<'d>(&self, data: &'d mut Data) -> Result<&'d mut C::This, ScriptError> {
        let this = match data {
            Data::Native(n) => (&mut **n as &mut dyn std::any::Any).downcast_mut::<Native<C::This>>(),
            Data::Script(_) => None,
        };
        match this {
            Some(Native(this)) => Ok(this),
            None => Err(self.error(Fail::new("the game's data was not made by these compiled rules"), "?")),
        }
    }

    /// Runs an entry point that only acts (a query's reply is dropped):
    /// nearly every call of a playout, with no reply to convert.
    // Always: left to itself, the compiler kept this match out of line,
    // a call per rule call (1.3% of a playout's instructions).
    #[inline(always)]
    fn acted(&self, entry: Entry<'_>, this: &mut C::This, rt: &mut Rt<'_>) -> Result<(), Fail> {
        let r = &self.rules;
        match entry {
            Entry::Setup => r.setup(this, rt),
            Entry::Legal { step } => r.legal(step, this, rt),
            Entry::Enter { step } => r.enter(step, this, rt),
            Entry::Apply { kind, values } => r.apply(kind, values, this, rt),
            Entry::TurnStart => r.turn_start(this, rt),
            Entry::TurnEnd => r.turn_end(this, rt),
            Entry::Resume { then, outcomes } => {
                let o = Outcomes {
                    outcomes,
                    ids: self.cards.ids(&self.variant),
                };
                r.resume(then, o, this, rt)
            }
            Entry::Summary { viewer } => r.summary(this, rt, viewer).map(drop),
            Entry::Render { viewer } => r.render(this, rt, viewer).map(drop),
            Entry::Evaluate { seat } => r.evaluate(this, rt, seat).map(drop),
            Entry::Labels => r.labels(this, rt).map(drop),
            Entry::Invariant { index } => r.invariant(index, this, rt).map(drop),
        }
    }

    /// A failure of an entry point as the boxed error [`Rules::act`]
    /// returns, out of line.
    #[cold]
    #[inline(never)]
    fn boxed_error(&self, f: Fail) -> Box<ScriptError> {
        Box::new(self.error(f, "?"))
    }

    fn runtime<'a>(&'a self, cx: &'a mut Ctx) -> Rt<'a> {
        let l = &self.limits;
        ops::set_data_limits(l.max_string_size, l.max_array_size, l.max_map_size);
        Rt {
            cx,
            variant: &self.variant,
            cards: &self.cards,
            fuel: self.limits.max_operations,
            max_depth: self.limits.max_call_levels as u32,
            counts: self.tracking.get().then_some(&self.counts),
        }
    }

    /// An entry point's result as the protocol's reply.
    fn reply(&self, entry: &Entry<'_>, result: Result<Value, Fail>) -> Result<Reply, ScriptError> {
        match result {
            Ok(v) => Ok(reply_of(entry, v)),
            Err(f) => Err(self.error(f, "?")),
        }
    }

    fn error(&self, f: Fail, entry: &str) -> ScriptError {
        let frame = |(file, function, line, col): Place| Frame {
            file: self
                .variant
                .files
                .get(file as usize)
                .map_or_else(|| PathBuf::from("<script>"), |s| s.path.clone()),
            function: function.to_string(),
            line: line as usize,
            column: col as usize,
        };
        let f = f.into_info();
        let here = f.at.map(frame).unwrap_or_else(|| Frame {
            file: PathBuf::from("<script>"),
            function: entry.to_string(),
            line: 0,
            column: 0,
        });
        ScriptError {
            calls: f.calls.into_iter().map(frame).collect(),
            ..ScriptError::at(here.file, here.function, here.line, here.column, f.message)
        }
    }
}

fn reply_of(entry: &Entry<'_>, v: Value) -> Reply {
    match entry {
        Entry::Summary { .. } => Reply::Json(v.to_json()),
        Entry::Render { .. } => Reply::Text(value::to_string(&v)),
        Entry::Evaluate { .. } => match v {
            Value::Int(i) => Reply::Int(i),
            other => Reply::Other(other.type_name().into()),
        },
        Entry::Labels => match v {
            Value::Map(m) => Reply::Json(serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (k.as_str().to_string(), serde_json::Value::String(value::to_string(v))))
                    .collect(),
            )),
            _ => Reply::Other("not a map".into()),
        },
        Entry::Invariant { .. } => match v {
            Value::Bool(b) => Reply::Bool(b),
            Value::Str(s) => Reply::Text(s.as_str().to_string()),
            other => Reply::Other(other.type_name().into()),
        },
        _ => Reply::Unit,
    }
}

impl<C: CompiledRules> Rules for Compiled<C> {
    fn engine_name(&self) -> &'static str {
        "compiled"
    }

    fn maker(&self) -> Option<rulesmith_core::rules::RulesMaker> {
        let make = self.remake?;
        let (variant, limits) = (self.variant.clone(), self.limits);
        Some(Arc::new(move || Ok(make(variant.clone(), limits))))
    }

    fn signatures(&self) -> Vec<(String, usize)> {
        self.rules
            .signatures()
            .iter()
            .map(|(n, a)| (n.to_string(), *a))
            .collect()
    }

    fn new_data(&self) -> Data {
        Data::Native(Box::new(Native(C::This::default())))
    }

    fn call(&self, entry: Entry<'_>, cx: &mut Ctx, data: &mut Data) -> Result<Reply, ScriptError> {
        let this = self.this_mut(data)?;
        let mut rt = self.runtime(cx);
        let r = &self.rules;
        match entry {
            Entry::Summary { viewer } => self.reply(&entry, r.summary(this, &mut rt, viewer)),
            Entry::Render { viewer } => self.reply(&entry, r.render(this, &mut rt, viewer)),
            Entry::Evaluate { seat } => self.reply(&entry, r.evaluate(this, &mut rt, seat)),
            Entry::Labels => self.reply(&entry, r.labels(this, &mut rt)),
            Entry::Invariant { index } => self.reply(&entry, r.invariant(index, this, &mut rt)),
            // The entry points that only act reply `Unit`.
            _ => self
                .acted(entry, this, &mut rt)
                .map(|()| Reply::Unit)
                .map_err(|f| self.error(f, "?")),
        }
    }

    fn act(&self, entry: Entry<'_>, cx: &mut Ctx, data: &mut Data) -> Result<(), Box<ScriptError>> {
        let this = self.this_mut(data).map_err(Box::new)?;
        self.acted(entry, this, &mut self.runtime(cx))
            .map_err(|f| self.boxed_error(f))
    }

    fn call_query(&self, entry: Entry<'_>, cx: &mut Ctx, data: &Data) -> Option<Result<Reply, ScriptError>> {
        let q = Query::of(&entry)?;
        let Data::Native(n) = data else { return None };
        let Native(this) = (&**n as &dyn std::any::Any).downcast_ref::<Native<C::This>>()?;
        let result = self.rules.query_ref(q, this, &mut self.runtime(cx))?;
        Some(self.reply(&entry, result))
    }

    fn data_from_json(&self, v: serde_json::Value) -> Result<Data, String> {
        let value = Value::from_json(&v).map_err(Fail::into_message)?;
        let this = C::This::from_value(value).map_err(Fail::into_message)?;
        Ok(Data::Native(Box::new(Native(this))))
    }

    fn track_calls(&self, on: bool) {
        self.tracking.set(on);
        *self.counts.borrow_mut() = Counts::default();
    }

    fn profile(&self) -> BTreeMap<String, FunctionProfile> {
        let c = self.counts.borrow();
        let names = self.rules.function_names();
        let mut out = BTreeMap::new();
        for (i, &n) in c.functions.iter().enumerate() {
            if n > 0 {
                if let Some(name) = names.get(i) {
                    out.entry(name.to_string())
                        .or_insert_with(FunctionProfile::default)
                        .calls += n;
                }
            }
        }
        out
    }
}

/// A compiled rule set, as linked into a binary: builds the engine's
/// [`Rules`] for a variant whose scripts match the fingerprint.
pub struct Registration {
    pub fingerprint: &'static str,
    pub make: MakeRules,
}

/// Builds compiled rules for a variant under sandbox limits.
pub type MakeRules = fn(Arc<Variant>, Limits) -> Box<dyn Rules>;

impl Registration {
    pub fn of<C: CompiledRules + Default + 'static>() -> Registration {
        Registration {
            fingerprint: C::default().fingerprint(),
            make: make_compiled::<C>,
        }
    }
}

/// Compiled rules `C` that can make more of themselves ([`Rules::maker`]).
fn make_compiled<C: CompiledRules + Default + 'static>(variant: Arc<Variant>, limits: Limits) -> Box<dyn Rules> {
    let mut c = Compiled::new(C::default(), variant, limits);
    c.remake = Some(make_compiled::<C>);
    Box::new(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static BUILDS: AtomicUsize = AtomicUsize::new(0);

    /// A record of a card's force, counting how often it is built.
    fn force(c: CardData<'_>) -> Result<i64, Fail> {
        BUILDS.fetch_add(1, Ordering::SeqCst);
        i64::from_value(c.field("force"))
    }

    /// A record the data does not fit (a name is not a number).
    fn name_as_int(c: CardData<'_>) -> Result<i64, Fail> {
        i64::from_value(c.field("name"))
    }

    /// A plain field (one `setup` always sets) read back from saved data
    /// that lacks it: refused, naming the field (docs/compiler.md).
    #[test]
    fn a_missing_plain_field_is_refused_by_name() {
        let mut m = value::ValueMap::new();
        m.insert(Str::lit("hull"), Value::Int(3));
        assert_eq!(value::take_field(&mut m, "hull").unwrap(), Value::Int(3));
        let e = value::take_field(&mut m, "hull").unwrap_err();
        assert_eq!(e.into_message(), "property 'hull' is missing");
    }

    #[test]
    fn a_few_items_loop_in_order_and_only_those_given() {
        let pairs: Vec<[i64; 2]> = Few::of([[1, 2], [3, 4]]).into_iter().collect();
        assert_eq!(pairs, vec![[1, 2], [3, 4]]);
        let names: Vec<Str> = Few::of([Str::lit("a")]).into_iter().collect();
        assert_eq!(names, vec![Str::lit("a")]);
        assert_eq!(Few::<i64>::of([]).into_iter().count(), 0);
        assert_eq!(Few::of([1, 2, 3, 4]).into_iter().sum::<i64>(), 10);
    }

    #[test]
    fn at_least_in_pieces_lists_what_at_least_lists() {
        for len in 0..20 {
            // Every other value qualifies, then all, then none.
            for (min, values) in [
                (1, (0..len).map(|i| i % 2).collect::<Vec<i64>>()),
                (0, vec![0; len as usize]),
                (5, vec![1; len as usize]),
            ] {
                let mut got = Vec::new();
                at_least_pieces(&values, min, |p| got.extend_from_slice(p));
                assert_eq!(got, rulesmith_core::natives::at_least(&values, min), "{values:?} {min}");
            }
        }
    }

    /// Every operation of generated code returns `R<T>`: a failure must stay
    /// a pointer, so that results stay in registers (see [`Fail`]).
    #[test]
    fn a_result_of_generated_code_is_a_pointer_wide() {
        assert_eq!(std::mem::size_of::<Result<(), Fail>>(), std::mem::size_of::<usize>());
        assert_eq!(
            std::mem::size_of::<Result<&i64, Fail>>(),
            2 * std::mem::size_of::<usize>()
        );
        let e = Err::<(), Fail>(Fail::new("boom"))
            .at(1, "f", 2, 3)
            .called_at(4, "g", 5, 6);
        let info = e.unwrap_err().into_info();
        assert_eq!(
            (info.message.as_str(), info.at, info.calls),
            ("boom", Some((1, "f", 2, 3)), vec![(4, "g", 5, 6)])
        );
    }

    /// A variant of its own with one deck of three cards, written to a
    /// scratch folder.
    fn deck_variant() -> Variant {
        let dir = std::env::temp_dir().join(format!("rulesmith-card-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = [
            (
                "variant.toml",
                "[variant]\nname = \"cards\"\nplayers = { min = 2, max = 2 }\nscripts = [\"rules.rhai\"]\n\n\
                 [actions.pass]\ntext = \"pass\"\napply = \"do_pass\"\n\n[setup]\nrun = \"setup\"\n\n\
                 [steps.play]\nlegal = \"play_legal\"\n\n[turn]\nsteps = [\"play\"]\n\n\
                 [decks.tokens]\nfile = \"tokens.toml\"\n\n[decks.tokens.fields]\n\
                 name = { type = \"string\" }\nforce = { type = \"int\", min = 0, max = 9 }\n",
            ),
            (
                "tokens.toml",
                "[[cards]]\nid = \"small\"\nname = \"Small\"\nforce = 1\n\n\
                 [[cards]]\nid = \"large\"\nname = \"Large\"\nforce = 4\n\n\
                 [[cards]]\nid = \"medium\"\nname = \"Medium\"\nforce = 2\n",
            ),
            (
                "rules.rhai",
                "fn setup() { start_turns(0); }\nfn play_legal() { add(\"pass\"); }\nfn do_pass() { end_turn(); }\n",
            ),
        ];
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let variant = Variant::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&dir);
        variant
    }

    #[test]
    fn a_card_record_is_built_once_and_unknown_or_misfit_cards_fail_every_time() {
        let variant = deck_variant();
        let deck = 0;
        // Not the first card in the file: the ids are looked up, not counted.
        let (id, expected) = (Str::lit("large"), 4);
        let mut cx = Ctx::default();
        let cards = CardTables::default();
        let mut rt = Rt {
            cx: &mut cx,
            variant: &variant,
            cards: &cards,
            fuel: 1000,
            max_depth: 8,
            counts: None,
        };
        assert_eq!(rt.card_record(deck, &id, force).unwrap(), expected);
        assert_eq!(rt.card_record(deck, &id, force).unwrap(), expected);
        assert_eq!(BUILDS.load(Ordering::SeqCst), 1, "the second lookup reuses the record");
        let e = rt.card_record(deck, &Str::lit("no-such-card"), force).unwrap_err();
        assert_eq!(e.message, "deck 'tokens' has no card 'no-such-card'");
        // A misfit is an error at each lookup, never a record kept.
        let misfit = Str::lit("medium");
        let first = rt.card_record(deck, &misfit, name_as_int);
        let again = rt.card_record(deck, &misfit, name_as_int);
        assert!(first.is_err() && again.is_err(), "{first:?} {again:?}");
        assert_eq!(rt.card_record(deck, &id, force).unwrap(), expected);
    }
}
