//! What the natives mean: [`Ctx`], the record a rule call acts on, with one
//! method per native function holding its semantics and its error
//! messages, and [`Names`], which resolves the names scripts use.
//!
//! Both rule engines call these: the interpreter's natives are thin
//! wrappers (resolve the names, call the method, turn the message into a
//! Rhai error), and compiled rules call them directly. Methods take
//! resolved indices and return plain messages; the engine that called them
//! adds the file, function and line.

use crate::legal::{AsGiven, Legal, NOT_COLLECTING};
use crate::state::{Action, ChanceSource, Core, MemoGroup, PendingChance, Seat, Status, MAX_ARGS};
use crate::variant::Variant;
use std::borrow::Cow;
use std::collections::HashMap;

/// Where cards lie, as scripts name it: a deck (its draw pile) or a
/// declared pile (`Names::place`; the natives that move cards between
/// places are in `piles.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Deck(usize),
    Pile(usize),
}

/// What a rule call may read and change. While a rule runs, the engine's
/// [`Core`] is moved into it; requests that need more rule calls
/// (entering a step, ending a turn, starting the turns) are queued here
/// and carried out by the game once the call returns.
#[derive(Default, Debug)]
pub struct Ctx {
    pub core: Box<Core>,
    /// Legal actions collected by `add` and `add_all`.
    pub legal: Legal,
    /// True while a step's legal function runs: only then may it `add`
    /// (set through [`Ctx::set_collecting`], which keeps `legal`'s quick
    /// path closed outside a listing).
    pub(crate) collecting: bool,
    /// Queued: enter this step.
    pub enter: Option<usize>,
    /// Queued: end the current turn.
    pub end_turn: bool,
    /// The seat the rules gave the next turn (`end_turn_to`); none: the
    /// next seat in play round the table.
    pub next_seat: Option<Seat>,
    /// Queued: start the turn cycle with this seat active (`Some(None)`:
    /// rounds, with no active seat).
    pub start_turns: Option<Option<Seat>>,
    /// True when a person watches the game (`Game::set_watched`): only
    /// then are `narrate` lines kept and does `show_moves` answer true.
    pub watched: bool,
    /// Lines told by `narrate` since the game's last `take_narration`.
    pub narration: Vec<String>,
    /// Board labels given by `mark` during a render: (label, action text).
    pub marks: Vec<(String, String)>,
    /// The groups of legal actions `recall` did not find, being listed:
    /// key, where the group began in `legal`, and its stamp.
    pub recalling: Vec<(i64, usize, Vec<i64>)>,
    /// A seat was put out since the game last looked for a last seat
    /// standing: the only way `Core::out` changes, so the look (a pass
    /// over the seats after every call) is only needed then. Left set by a
    /// call whose changes were thrown away, it costs one needless look.
    pub eliminated: bool,
}

impl Ctx {
    /// A context holding `core`, outside any listing: to call the natives'
    /// semantics directly.
    pub fn with_core(core: Box<Core>) -> Ctx {
        Ctx { core, ..Ctx::default() }
    }

    #[inline]
    fn seat(&self, seat: i64) -> Result<Seat, String> {
        if seat < 0 || seat as usize >= self.core.seats {
            return Err(self.no_seat(seat));
        }
        Ok(seat as usize)
    }

    #[cold]
    fn no_seat(&self, seat: i64) -> String {
        format!("seat {seat} does not exist (seats are 0..{})", self.core.seats)
    }

    fn request(&mut self, p: PendingChance) -> Result<(), String> {
        if self.core.chance.is_some() {
            return Err("a chance event is already pending: request the next one from its continuation".into());
        }
        self.core.chance = Some(p);
        Ok(())
    }

    // ----- queries -------------------------------------------------------

    #[inline]
    pub fn seats(&self) -> i64 {
        self.core.seats as i64
    }

    /// The seat whose turn it is; -1 before the turns start.
    #[inline]
    pub fn active(&self) -> i64 {
        self.core.active.map_or(-1, |s| s as i64)
    }

    /// The seat whose decision is next; -1 for none.
    #[inline]
    pub fn actor(&self) -> i64 {
        self.core.actor.map_or(-1, |s| s as i64)
    }

    #[inline]
    pub fn turn(&self) -> i64 {
        self.core.turn as i64
    }

    #[inline]
    pub fn in_play(&self) -> i64 {
        self.core.in_play() as i64
    }

    pub fn is_out(&self, seat: i64) -> Result<bool, String> {
        Ok(self.core.out[self.seat(seat)?])
    }

    pub fn status(&self) -> &'static str {
        match self.core.status() {
            Status::Ongoing => "ongoing",
            Status::Won(_) => "won",
            Status::Draw => "draw",
        }
    }

    /// The winner; -1 for none.
    pub fn winner(&self) -> i64 {
        match self.core.status() {
            Status::Won(s) => s as i64,
            _ => -1,
        }
    }

    /// The current step; none during setup (scripts see "setup").
    pub fn step(&self) -> Option<usize> {
        self.core.step
    }

    /// Cards left in deck `deck`.
    pub fn deck_left(&self, deck: usize) -> i64 {
        self.core.decks[deck].len() as i64
    }

    // ----- flow ------------------------------------------------------------

    #[inline]
    pub fn enter_step(&mut self, step: usize) {
        self.enter = Some(step);
    }

    #[inline]
    pub fn end_turn(&mut self) -> Result<(), String> {
        if self.core.turn == 0 {
            return Err("end_turn() before start_turns(): there is no turn to end".into());
        }
        self.end_turn = true;
        self.next_seat = None;
        Ok(())
    }

    /// `end_turn_to(seat)`: ends the current turn, and `seat` has the next
    /// one (the trick's winner leads), instead of the next seat round the
    /// table. Each such hand-over is a turn of the turn counter.
    pub fn end_turn_to(&mut self, seat: i64) -> Result<(), String> {
        let s = self.seat(seat)?;
        if self.core.turn == 0 {
            return Err("end_turn_to() before start_turns(): there is no turn to end".into());
        }
        if self.core.active.is_none() {
            return Err(format!(
                "end_turn_to(P{}) in rounds: no seat is active, so no seat can be given the next turn (use end_turn())",
                s + 1
            ));
        }
        if self.core.out[s] {
            return Err(format!("end_turn_to(P{}): that seat is out of play", s + 1));
        }
        self.end_turn = true;
        self.next_seat = Some(s);
        Ok(())
    }

    /// Starts the turns with `seat` active; -1 starts rounds instead, in
    /// which no seat is active (turn numbers still count them).
    pub fn start_turns(&mut self, seat: i64) -> Result<(), String> {
        let s = if seat == -1 { None } else { Some(self.seat(seat)?) };
        if self.core.turn > 0 {
            return Err("start_turns() was already called".into());
        }
        self.start_turns = Some(s);
        Ok(())
    }

    #[inline]
    pub fn set_actor(&mut self, seat: i64) -> Result<(), String> {
        self.core.actor = Some(self.seat(seat)?);
        Ok(())
    }

    pub fn eliminate(&mut self, seat: i64) -> Result<(), String> {
        let s = self.seat(seat)?;
        self.core.out[s] = true;
        self.eliminated = true;
        Ok(())
    }

    pub fn win(&mut self, seat: i64) -> Result<(), String> {
        self.core.status.0 = Status::Won(self.seat(seat)?);
        Ok(())
    }

    pub fn draw_game(&mut self) {
        self.core.status.0 = Status::Draw;
    }

    // ----- scores ------------------------------------------------------------

    /// `set_score(seat, value)`: the seat's score, within the declared
    /// `[scores]` range.
    pub fn set_score(&mut self, seat: i64, value: i64, variant: &Variant) -> Result<(), String> {
        let s = self.scored_seat("set_score", seat, variant)?;
        self.put_score("set_score", s, value, variant)
    }

    /// `add_score(seat, delta)`: adds to the seat's score (the result
    /// within the declared range).
    pub fn add_score(&mut self, seat: i64, delta: i64, variant: &Variant) -> Result<(), String> {
        let s = self.scored_seat("add_score", seat, variant)?;
        let value = self.core.scores[s]
            .checked_add(delta)
            .ok_or_else(|| format!("add_score(P{}, {delta}): the score overflows", s + 1))?;
        self.put_score("add_score", s, value, variant)
    }

    /// `score(seat)`: the seat's score so far (0 until set).
    pub fn score(&self, seat: i64, variant: &Variant) -> Result<i64, String> {
        let s = self.scored_seat("score", seat, variant)?;
        Ok(self.core.scores[s])
    }

    fn scored_seat(&self, native: &str, seat: i64, variant: &Variant) -> Result<Seat, String> {
        if variant.scores.is_none() {
            return Err(format!(
                "{native}(): this variant declares no scores (add a [scores] table with min and max to its variant.toml)"
            ));
        }
        self.seat(seat)
    }

    fn put_score(&mut self, native: &str, seat: Seat, value: i64, variant: &Variant) -> Result<(), String> {
        let range = variant.scores.as_ref().expect("checked by scored_seat");
        if value < range.min || value > range.max {
            return Err(format!(
                "{native}: P{}'s score would be {value}, outside the declared [scores] range {}..={}",
                seat + 1,
                range.min,
                range.max
            ));
        }
        self.core.scores[seat] = value;
        Ok(())
    }

    /// Adds `delta` to statistic counter `index`.
    #[inline]
    pub fn stat(&mut self, index: usize, delta: i64) {
        self.core.stats[index] += delta;
    }

    // ----- legal actions ---------------------------------------------------

    /// A legal action of kind `kind`: its values are checked against the
    /// action's template, and only a step's legal function may add.
    #[inline(always)]
    pub fn add(&mut self, variant: &Variant, kind: u16, values: &[i64]) -> Result<(), String> {
        variant.actions[kind as usize].template.check_values(values)?;
        let mut args = [0i32; MAX_ARGS];
        for (a, v) in args.iter_mut().zip(values) {
            *a = *v as i32;
        }
        let action = Action {
            kind,
            len: values.len() as u8,
            args,
        };
        // After a listing's first `add`, the next ones append with no
        // other check (see `Legal::push_quick`): the hottest call there is.
        if self.legal.push_quick(action) {
            return Ok(());
        }
        self.add_checked(action)
    }

    /// [`Ctx::add`] off the quick path: a listing's first action after a
    /// product, or an `add` outside a listing (an error).
    #[inline(never)]
    fn add_checked(&mut self, action: Action) -> Result<(), String> {
        if !self.collecting {
            return Err(NOT_COLLECTING.into());
        }
        self.legal.push(action)?;
        self.legal.open_quick();
        Ok(())
    }

    /// Starts or ends a listing: only in one may `add` and `add_all` add.
    pub fn set_collecting(&mut self, on: bool) {
        self.collecting = on;
        if on {
            self.legal.start_listing();
        } else {
            self.legal.close_quick();
        }
    }

    /// Whether a script asked for something `settle` has not carried out
    /// yet (a step change, the end of the turn, the turns started, a seat
    /// put out).
    pub(crate) fn asks(&self) -> bool {
        self.enter.is_some() || self.end_turn || self.start_turns.is_some() || self.eliminated
    }

    /// `add_all`, in three parts so that each engine reads its own values
    /// without building an intermediate list: `start_product`, then per
    /// domain `product_domain` and its choices (`product_choice`, or
    /// `start_choice` and `choice_value`), then `finish_product`, which
    /// checks every combination against the action's template and adds
    /// them all (in factored form, see [`Legal`]).
    #[inline]
    pub fn start_product(&mut self) {
        self.legal.start_product();
    }

    #[inline]
    pub fn product_domain(&mut self) {
        self.legal.start_domain();
    }

    /// A choice of the current domain: one number, or several that fill
    /// consecutive slots (e.g. a grid slot `[c, r]`).
    #[inline]
    pub fn product_choice(&mut self, numbers: &[i64]) {
        self.legal.push_choice(numbers);
    }

    /// Choices of `width` (at least 1) numbers each, given back to back
    /// (`numbers` holds a whole number of them): a domain of single
    /// numbers, or of fixed-size tuples, in one piece.
    #[inline]
    pub fn product_choices(&mut self, width: usize, numbers: &[i64]) {
        self.legal.push_choices(width, numbers);
    }

    /// Starts a choice whose numbers follow one by one (`choice_value`).
    pub fn start_choice(&mut self) {
        self.legal.push_choice(&[]);
    }

    pub fn choice_value(&mut self, v: i64) {
        self.legal.push_value(v);
    }

    /// `add_all` in one call, every domain given whole; `None` (nothing
    /// changed) when the product must be built step by step instead (see
    /// [`Legal`]).
    #[inline]
    pub fn add_product(
        &mut self,
        variant: &Variant,
        kind: u16,
        domains: &[impl AsGiven],
    ) -> Option<Result<(), String>> {
        let template = &variant.actions[kind as usize].template;
        self.legal.add_product(kind, template, self.collecting, domains)
    }

    pub fn finish_product(&mut self, variant: &Variant, kind: u16) -> Result<(), String> {
        let template = &variant.actions[kind as usize].template;
        self.legal.finish_product(kind, template, self.collecting)
    }

    /// `recall(key, stamp)`: when this turn's listings of the current step
    /// remembered a group of legal actions under `key` with an equal
    /// `stamp` (the numbers the group's listing depends on), adds the
    /// group's actions again and returns how many; otherwise returns -1,
    /// and the actions added from here on are the group that
    /// `remember(key)` keeps under this stamp.
    pub fn recall(&mut self, key: i64, stamp: &[i64]) -> Result<i64, String> {
        let step = self.listing_step("recall")?;
        if let Some(g) = self.core.memo.get(step, key).filter(|g| g.stamp == stamp) {
            self.legal.push_all(&g.actions)?;
            return Ok(g.actions.len() as i64);
        }
        let start = self.legal.len();
        let open = (key, start, stamp.to_vec());
        match self.recalling.iter_mut().find(|(k, ..)| *k == key) {
            Some(o) => *o = open,
            None => self.recalling.push(open),
        }
        Ok(-1)
    }

    /// `remember(key)`: keeps the actions added since `recall(key, stamp)`
    /// returned -1, under that stamp, for this turn's later listings of
    /// the step.
    pub fn remember(&mut self, key: i64) -> Result<(), String> {
        let step = self.listing_step("remember")?;
        let Some(i) = self.recalling.iter().position(|(k, ..)| *k == key) else {
            return Err(format!(
                "remember({key}) without a recall({key}, ..) that returned -1 earlier in this listing"
            ));
        };
        let (_, start, stamp) = self.recalling.swap_remove(i);
        let actions = self.legal.tail_from(start).into();
        self.core.memo.put(step, key, MemoGroup { stamp, actions });
        Ok(())
    }

    fn listing_step(&self, native: &str) -> Result<usize, String> {
        match (self.collecting, self.core.step) {
            (true, Some(step)) => Ok(step),
            _ => Err(format!("{native}() may only be called from a step's legal function")),
        }
    }

    // ----- chance ----------------------------------------------------------

    /// Asks for `count` dice of `sides` faces; `then` receives them.
    pub fn roll(&mut self, count: i64, sides: i64, then: impl Into<Cow<'static, str>>) -> Result<(), String> {
        self.roll_seen(count, sides, None, then)
    }

    /// Asks for `count` dice of `sides` faces, seen only by `visible_to`
    /// when given (a secret roll, behind a screen), by everyone otherwise.
    pub fn roll_seen(
        &mut self,
        count: i64,
        sides: i64,
        visible_to: Option<i64>,
        then: impl Into<Cow<'static, str>>,
    ) -> Result<(), String> {
        let native = if visible_to.is_some() { "roll_secret" } else { "roll" };
        let seat_arg = visible_to.map_or(String::new(), |s| format!("{s}, "));
        if !(1..=1000).contains(&count) || !(1..=1_000_000).contains(&sides) {
            return Err(format!(
                "{native}({seat_arg}{count}, {sides}, ..): need 1..=1000 dice of 1..=1000000 faces"
            ));
        }
        let visible_to = match visible_to {
            Some(seat) => Some(self.seat(seat)?),
            None => None,
        };
        self.request(PendingChance {
            source: ChanceSource::Dice {
                sides: sides as u32,
                visible_to,
            },
            needed: count as u32,
            got: smallvec::SmallVec::new(),
            then: then.into(),
            deal: None,
            into: None,
            refill: None,
        })
    }

    /// Asks for `count` cards from deck `deck`'s draw pile, in one event,
    /// seen only by `visible_to` when given (a secret draw), by everyone
    /// otherwise; `then` receives them, in the order drawn.
    pub fn draw(
        &mut self,
        deck: usize,
        count: i64,
        visible_to: Option<i64>,
        then: impl Into<Cow<'static, str>>,
        variant: &Variant,
    ) -> Result<(), String> {
        let visible_to = match visible_to {
            Some(seat) => Some(self.seat(seat)?),
            None => None,
        };
        let left = self.core.decks[deck].len() as i64;
        if left == 0 {
            return Err(format!("deck '{}' is empty", variant.decks[deck].name));
        }
        if count < 1 || count > left {
            return Err(format!(
                "cannot draw {count} card(s) from deck '{}': {left} left (draw 1..={left})",
                variant.decks[deck].name
            ));
        }
        self.request(PendingChance {
            source: ChanceSource::Deck { deck, visible_to },
            needed: count as u32,
            got: smallvec::SmallVec::new(),
            then: then.into(),
            deal: None,
            into: None,
            refill: None,
        })
    }

    /// `deal(deck, count, dealer, [pile,] then)`: `count` cards to every
    /// seat in play from `deck` (a deck, or a pile on the table: a place
    /// in `Core::decks`), one at a time round the table starting with the
    /// seat left of `dealer` (the next in play), each seen only by the
    /// seat it goes to; with `into` (a pile per seat that its owner sees),
    /// each card lands in that seat's pile. One chance event; `then` gets
    /// the cards seat by seat (see
    /// [`PendingChance::outcomes_for_continuation`]).
    pub fn deal(
        &mut self,
        deck: usize,
        count: i64,
        dealer: i64,
        into: Option<usize>,
        then: impl Into<Cow<'static, str>>,
        variant: &Variant,
    ) -> Result<(), String> {
        let dealer = self.seat(dealer)?;
        let name = &variant.decks[deck].name;
        let into = match into {
            None => None,
            Some(p) => {
                let pile = &variant.piles[p];
                if !pile.per_seat || pile.visible != crate::variant::Visibility::Owner {
                    return Err(format!(
                        "deal('{name}', {count}, .., '{}', ..): a deal goes into a pile per seat that its owner sees (visible = \"owner\"); move the cards on from there",
                        pile.name
                    ));
                }
                if pile.deck != variant.deck_of_place(deck) {
                    return Err(format!(
                        "deal('{name}', {count}, .., '{}', ..): that pile holds cards of deck '{}'",
                        pile.name, variant.decks[pile.deck].name
                    ));
                }
                Some(pile.first as u32)
            }
        };
        let Some(first) = crate::state::next_in_play(&self.core.out, dealer) else {
            return Err(format!("deal('{name}', {count}, ..): no seat is in play"));
        };
        let seats = self.core.in_play() as i64;
        let left = self.core.decks[deck].len() as i64;
        if count < 1 || count.saturating_mul(seats) > left {
            return Err(format!(
                "deal('{name}', {count}, ..): {seats} seat(s) in play need {} card(s), and {left} are left (deal 1..={} each)",
                count.saturating_mul(seats),
                left / seats
            ));
        }
        self.request(PendingChance {
            source: ChanceSource::Deck {
                deck,
                visible_to: Some(first),
            },
            needed: (count * seats) as u32,
            got: smallvec::SmallVec::new(),
            then: then.into(),
            deal: Some(first),
            into,
            refill: None,
        })
    }

    /// Puts cards back into deck `deck`'s draw pile (shuffled in: draws
    /// are uniform over what the pile holds). Each must be a copy that is
    /// out of the pile: the pile never holds more copies of a card than the
    /// deck file gives.
    pub fn shuffle_into(&mut self, deck: usize, cards: &[u16], variant: &Variant) -> Result<(), String> {
        let d = &variant.decks[deck];
        let pile = &mut self.core.decks[deck];
        for &c in cards {
            let card = &d.cards[c as usize];
            let in_pile = pile.iter().filter(|&&x| x == c).count() as u32;
            if in_pile >= card.count {
                return Err(format!(
                    "shuffle_into('{}', ..): every copy of '{}' ({}) is already in the draw pile",
                    d.name, card.id, card.count
                ));
            }
            pile.push(c);
        }
        Ok(())
    }

    // ----- telling a person what happens -------------------------------------

    /// Tells a watching person what just happened ("rolled 5 and 2: one
    /// hit"). Kept only when the game is watched and not while legal
    /// actions are listed; it never changes the game.
    pub fn narrate(&mut self, text: &str) {
        if self.watched && !self.collecting {
            self.narration.push(text.to_string());
        }
    }

    /// Whether a person watches, so that a render may draw hints such as
    /// the labels of the destinations the viewer may move to.
    pub fn show_moves(&self) -> bool {
        self.watched
    }

    /// In a render: the label `label` drawn on the board stands for the
    /// legal actions whose text contains `text` (e.g. "b" for
    /// "position 1,2"). Kept only when the game is watched.
    pub fn mark(&mut self, label: &str, text: &str) {
        if self.watched {
            self.marks.push((label.to_string(), text.to_string()));
        }
    }

    /// A card dealt in secret becomes known to all: the most recent secret
    /// draw of that card not yet revealed (a deck may hold copies).
    pub fn reveal(&mut self, deck: usize, card: u16) {
        if let Some(s) = self
            .core
            .secrets
            .iter_mut()
            .rev()
            .find(|s| s.deck as usize == deck && s.card == card && !s.revealed)
        {
            s.revealed = true;
        }
    }

    /// Everything `seat` kept secret (the cards dealt to it in secret, its
    /// secret decisions) becomes known to all; -1: every seat's.
    pub fn reveal_secrets(&mut self, seat: i64) -> Result<(), String> {
        let only = if seat == -1 { None } else { Some(self.seat(seat)?) };
        for s in self.core.secrets.iter_mut() {
            if only.is_none_or(|o| o == s.seen_by) {
                s.revealed = true;
            }
        }
        for r in self.core.secret_rolls.iter_mut() {
            if only.is_none_or(|o| o == r.seen_by) {
                r.revealed = true;
            }
        }
        for d in self.core.secret_decisions.iter_mut() {
            if only.is_none_or(|o| o == d.seat) {
                d.revealed = true;
            }
        }
        Ok(())
    }

    /// The id of the latest secret decision (inside the apply function of
    /// a `secret` step: the decision being applied), -1 if there is none.
    /// It is the decision's place in the history, so a replay of the same
    /// game gives the same id. Scripts keep it to reveal that decision
    /// alone later (`reveal_decision`).
    pub fn last_secret(&self) -> i64 {
        self.core.secret_decisions.last().map_or(-1, |d| d.at as i64)
    }

    /// One secret decision becomes known to all, the others of its seat
    /// staying hidden: the one whose id `last_secret` gave.
    pub fn reveal_decision(&mut self, id: i64) -> Result<(), String> {
        match self.core.secret_decisions.iter_mut().find(|d| d.at as i64 == id) {
            Some(d) => {
                d.revealed = true;
                Ok(())
            }
            None => Err(format!(
                "reveal_decision: no secret decision has id {id} (ids come from last_secret() in a secret step's apply function)"
            )),
        }
    }

    /// How many seats still have to decide in the current round of an
    /// `actor = "every"` step (0 outside one).
    pub fn round_left(&self) -> i64 {
        self.core.round.count_ones() as i64
    }
}

/// The words of enumeration `name`, as `[notation]` declares them (or as
/// its decks give them).
pub fn words<'a>(variant: &'a Variant, name: &str) -> Result<&'a [String], String> {
    variant.enums.get(name).map(Vec::as_slice).ok_or_else(|| {
        let known: Vec<&str> = variant.enums.keys().map(String::as_str).collect();
        format!(
            "unknown enumeration '{name}' (declared in [notation]: {})",
            known.join(", ")
        )
    })
}

/// The names scripts use for actions, steps, decks, counters and
/// parameters, resolved to indices (once per variant), with the messages
/// for unknown ones.
#[derive(Debug, Clone)]
pub struct Names {
    actions: HashMap<String, u16>,
    steps: HashMap<String, usize>,
    decks: HashMap<String, usize>,
    piles: HashMap<String, usize>,
    stats: HashMap<String, usize>,
    params: HashMap<String, usize>,
    declared: Declared,
}

/// Every declared name in declaration order, for messages.
#[derive(Debug, Clone)]
struct Declared {
    actions: Vec<String>,
    steps: Vec<String>,
    decks: Vec<String>,
    piles: Vec<String>,
    stats: Vec<String>,
    params: Vec<String>,
}

impl Names {
    pub fn new(v: &Variant) -> Names {
        let declared = Declared {
            actions: v.actions.iter().map(|a| a.template.name.clone()).collect(),
            steps: v.steps.iter().map(|s| s.name.clone()).collect(),
            // A pile's places are no decks: scripts name the pile.
            decks: v
                .decks
                .iter()
                .filter(|d| d.pile.is_none())
                .map(|d| d.name.clone())
                .collect(),
            piles: v.piles.iter().map(|p| p.name.clone()).collect(),
            stats: v.stats.iter().map(|(n, _)| n.clone()).collect(),
            params: v.params.iter().map(|p| p.name.clone()).collect(),
        };
        fn index<T: TryFrom<usize>>(names: &[String]) -> HashMap<String, T>
        where
            T::Error: std::fmt::Debug,
        {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), T::try_from(i).expect("fits")))
                .collect()
        }
        Names {
            actions: index(&declared.actions),
            steps: index(&declared.steps),
            decks: index(&declared.decks),
            piles: index(&declared.piles),
            stats: index(&declared.stats),
            params: index(&declared.params),
            declared,
        }
    }

    pub fn action(&self, name: &str) -> Result<u16, String> {
        self.actions.get(name).copied().ok_or_else(|| {
            format!(
                "unknown action '{name}' (declared: {})",
                self.declared.actions.join(", ")
            )
        })
    }

    pub fn step(&self, name: &str) -> Result<usize, String> {
        self.steps
            .get(name)
            .copied()
            .ok_or_else(|| format!("unknown step '{name}' (declared: {})", self.declared.steps.join(", ")))
    }

    pub fn deck(&self, name: &str) -> Result<usize, String> {
        self.decks.get(name).copied().ok_or_else(|| {
            format!(
                "unknown deck '{name}' (declared decks: {})",
                self.declared.decks.join(", ")
            )
        })
    }

    /// Where cards lie: a deck (its draw pile) or a declared pile.
    pub fn place(&self, name: &str) -> Result<Place, String> {
        if let Some(&d) = self.decks.get(name) {
            return Ok(Place::Deck(d));
        }
        self.piles.get(name).map(|&p| Place::Pile(p)).ok_or_else(|| {
            format!(
                "no deck or pile '{name}' (declared decks: {}; piles: {})",
                self.declared.decks.join(", "),
                if self.declared.piles.is_empty() {
                    "none".to_string()
                } else {
                    self.declared.piles.join(", ")
                }
            )
        })
    }

    pub fn has_deck(&self, name: &str) -> bool {
        self.decks.contains_key(name)
    }

    pub fn stat(&self, name: &str) -> Result<usize, String> {
        self.stats.get(name).copied().ok_or_else(|| {
            format!(
                "unknown statistic '{name}' (declared in [stats]: {})",
                self.declared.stats.join(", ")
            )
        })
    }

    /// The index of parameter `name` in `Variant::params`.
    pub fn param(&self, name: &str) -> Result<usize, String> {
        self.params.get(name).copied().ok_or_else(|| {
            format!(
                "unknown parameter '{name}' (declared: {})",
                self.declared.params.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Ctx as a step's legal function sees it.
    fn listing(step: usize) -> Ctx {
        let mut c = Ctx {
            collecting: true,
            ..Ctx::default()
        };
        c.core.step = Some(step);
        c
    }

    #[test]
    fn recall_gives_back_a_remembered_group_only_under_an_equal_stamp() {
        let mut c = listing(0);
        assert_eq!(c.recall(7, &[1, 2]).unwrap(), -1);
        c.legal.push(Action::new(0, &[1])).unwrap();
        c.legal.push(Action::new(0, &[2])).unwrap();
        c.remember(7).unwrap();
        // A later listing of the same step.
        c.legal.clear();
        c.legal.push(Action::new(1, &[])).unwrap();
        assert_eq!(c.recall(7, &[1, 2]).unwrap(), 2);
        assert_eq!(
            c.legal.to_vec(),
            vec![Action::new(1, &[]), Action::new(0, &[1]), Action::new(0, &[2])]
        );
        assert_eq!(c.recall(7, &[1, 3]).unwrap(), -1, "another stamp");
        assert_eq!(c.recall(8, &[1, 2]).unwrap(), -1, "another key");
        // An empty group is remembered too: recall then says 0.
        c.remember(8).unwrap();
        assert_eq!(c.recall(8, &[1, 2]).unwrap(), 0);
        // Each step has its own groups.
        c.core.step = Some(1);
        assert_eq!(c.recall(7, &[1, 2]).unwrap(), -1);
    }

    #[test]
    fn the_memo_natives_belong_to_legal_functions() {
        let mut c = listing(0);
        let e = c.remember(3).unwrap_err();
        assert!(e.contains("remember(3) without a recall(3, ..)"), "{e}");
        c.set_collecting(false);
        let e = c.recall(3, &[]).unwrap_err();
        assert!(
            e.contains("recall() may only be called from a step's legal function"),
            "{e}"
        );
    }
}
