//! Legal actions in factored form.
//!
//! A step's legal function lists actions one at a time (`add`) or as every
//! combination of some domains (`add_all`). Most of a list usually comes
//! from `add_all`, and a random playout only ever needs *one* action of it.
//! So [`Legal`] keeps each `add_all` as a product of its domains, not as
//! its expansion: counting the actions is a multiplication, and the k-th
//! action is decoded from its index ([`Legal::get`]). Callers that need the
//! whole list expand it ([`Legal::expand_into`]), in exactly the order the
//! rules listed it.
//!
//! Both rule engines build a product the same way (start it, give each
//! domain's choices, finish it); checking it against the action's
//! template happens here, once per choice instead of once per combination.
//! When a choice does not fit, the product is expanded combination by
//! combination, so the error names the first offending combination, the
//! one the rules would have listed first.

use crate::notation::{within, Template};
use crate::state::{Action, MAX_ARGS};

/// The error of `add`/`add_all` outside a legal function.
pub(crate) const NOT_COLLECTING: &str = "add() may only be called from a step's legal function";

/// The most legal actions one listing may offer. A legal function that
/// lists more has a bug (a product over a huge domain, say); stopping it
/// with an error is better than running out of memory.
pub const MAX_LEGAL: usize = 1 << 24;

/// One stretch of the list: actions added one by one, or a product.
#[derive(Clone, Copy, Debug)]
enum Segment {
    /// `singles[start..end]`; the last segment's `end` is [`OPEN`] while
    /// actions are added to it (it ends where `singles` ends).
    Singles { start: u32, end: u32 },
    /// Every combination of the domains `domains[first..first + n]`.
    Product { kind: u16, first: u32, n: u8, count: usize },
}

/// The `end` of a stretch of single actions still growing.
const OPEN: u32 = u32::MAX;

/// One domain of a product: `count` choices of `width` numbers each,
/// back to back in `values` from `values_at`. A domain still being given,
/// or one whose choices differ in width, also has each choice's start in
/// `starts` from `starts_at` (the product's scratch; see `Legal::starts`).
#[derive(Clone, Copy, Debug)]
struct Domain {
    values_at: u32,
    count: u32,
    width: u32,
    starts_at: u32,
}

/// `Domain::starts_at` of a domain of one width: no starts.
const UNIFORM: u32 = u32::MAX;

/// The legal actions of one listing, in the rules' order.
#[derive(Clone, Debug, Default)]
pub struct Legal {
    segments: Vec<Segment>,
    singles: Vec<Action>,
    /// The numbers of every choice of every product, in order.
    values: Vec<i64>,
    /// Every product's domains, in order.
    domains: Vec<Domain>,
    /// Where each choice given one at a time starts in `values`, for the
    /// product being built only: a kept product's domains all have one
    /// width (a product whose choices differ in width cannot fit its
    /// template), so they need no starts.
    starts: Vec<u32>,
    /// Buffer lengths up to the last finished product (`values`,
    /// `domains`): a product being built lies beyond them and is dropped if
    /// it is not finished.
    kept: (usize, usize),
    /// How many actions the products hold; with `singles`' length, the
    /// list's (an `add` then only appends: no count to keep).
    in_products: usize,
    /// The last segment is single actions, still [`OPEN`]: an `add` only
    /// appends (no segment to look at), the hottest call of a listing.
    open: bool,
    /// How long `singles` may grow by [`Legal::push_quick`], with no check
    /// but its values': [`MAX_LEGAL`] less the products' actions while a
    /// listing adds to an open stretch of single actions (`open_quick`),
    /// 0 otherwise. Whatever ends the stretch or the listing sets it to 0.
    quick_until: usize,
}

impl Legal {
    /// Forgets every action (keeps the buffers).
    #[inline]
    pub fn clear(&mut self) {
        self.segments.clear();
        self.singles.clear();
        self.values.clear();
        self.domains.clear();
        self.starts.clear();
        self.kept = (0, 0);
        self.in_products = 0;
        self.open = false;
        self.quick_until = 0;
    }

    /// Number of legal actions.
    #[inline]
    pub fn len(&self) -> usize {
        self.in_products + self.singles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Action number `k` (0-based, in the rules' order).
    ///
    /// # Panics
    /// If `k >= self.len()`.
    pub fn get(&self, mut k: usize) -> Action {
        for seg in &self.segments {
            match *seg {
                Segment::Singles { start, end } => {
                    let n = (self.end_of(end) - start) as usize;
                    if k < n {
                        return self.singles[start as usize + k];
                    }
                    k -= n;
                }
                Segment::Product { kind, first, n, count } => {
                    if k < count {
                        return self.decode(kind, first as usize, n as usize, k);
                    }
                    k -= count;
                }
            }
        }
        panic!("legal action {k} past the end of a list of {}", self.len())
    }

    /// Appends every action to `out`, in order.
    pub fn expand_into(&self, out: &mut Vec<Action>) {
        out.reserve(self.len());
        for seg in &self.segments {
            match *seg {
                Segment::Singles { start, end } => {
                    out.extend_from_slice(&self.singles[start as usize..self.end_of(end) as usize])
                }
                Segment::Product { kind, first, n, count } => {
                    self.expand_product(kind, first as usize, n as usize, count, out)
                }
            }
        }
    }

    /// Every combination of a product, in [`Legal::decode`]'s order, by
    /// counting through the domains' choices (the last one fastest) rather
    /// than decoding each combination from its number: the fuzzer lists
    /// every legal action at every decision.
    fn expand_product(&self, kind: u16, first: usize, n: usize, count: usize, out: &mut Vec<Action>) {
        let mut sizes = [0usize; MAX_ARGS];
        for (d, size) in sizes[..n].iter_mut().enumerate() {
            *size = self.choices(first + d);
        }
        let mut index = [0usize; MAX_ARGS];
        for _ in 0..count {
            out.push(self.combination(kind, first, &index[..n]));
            for d in (0..n).rev() {
                index[d] += 1;
                if index[d] < sizes[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }

    /// The actions from number `start` on, in order (a turn memo's group:
    /// what a listing added after `start`).
    pub fn tail_from(&self, start: usize) -> Vec<Action> {
        let mut out = Vec::with_capacity(self.len().saturating_sub(start));
        let mut skip = start;
        for seg in &self.segments {
            let n = match *seg {
                Segment::Singles { start, end } => (self.end_of(end) - start) as usize,
                Segment::Product { count, .. } => count,
            };
            if skip >= n {
                skip -= n;
                continue;
            }
            match *seg {
                Segment::Singles { start, end } => {
                    out.extend_from_slice(&self.singles[start as usize + skip..self.end_of(end) as usize])
                }
                Segment::Product {
                    kind,
                    first,
                    n: domains,
                    count,
                } => out.extend((skip..count).map(|k| self.decode(kind, first as usize, domains as usize, k))),
            }
            skip = 0;
        }
        out
    }

    /// The whole list.
    pub fn to_vec(&self) -> Vec<Action> {
        let mut v = Vec::new();
        self.expand_into(&mut v);
        v
    }

    /// A stretch of single actions' end, [`OPEN`] read.
    #[inline]
    fn end_of(&self, end: u32) -> u32 {
        if end == OPEN {
            self.singles.len() as u32
        } else {
            end
        }
    }

    #[inline]
    fn choices(&self, domain: usize) -> usize {
        self.domains[domain].count as usize
    }

    #[inline]
    fn choice(&self, domain: usize, k: usize) -> &[i64] {
        let d = self.domains[domain];
        let (from, to) = if d.starts_at == UNIFORM {
            let from = d.values_at as usize + k * d.width as usize;
            (from, from + d.width as usize)
        } else {
            let c = d.starts_at as usize + k;
            (self.starts[c] as usize, self.starts[c + 1] as usize)
        };
        &self.values[from..to]
    }

    /// Combination `k` of a product: the last domain varies fastest.
    fn decode(&self, kind: u16, first: usize, n: usize, mut k: usize) -> Action {
        let mut index = [0usize; MAX_ARGS];
        for d in (0..n).rev() {
            let m = self.choices(first + d);
            index[d] = k % m;
            k /= m;
        }
        self.combination(kind, first, &index[..n])
    }

    /// The action made of choice `index[d]` of each domain `first + d`.
    #[inline]
    fn combination(&self, kind: u16, first: usize, index: &[usize]) -> Action {
        let mut args = [0i32; MAX_ARGS];
        let mut len = 0;
        for (d, &i) in index.iter().enumerate() {
            for &v in self.choice(first + d, i) {
                args[len] = v as i32;
                len += 1;
            }
        }
        Action {
            kind,
            len: len as u8,
            args,
        }
    }

    // ----- building ----------------------------------------------------------

    /// Adds one action (its values already checked).
    #[inline]
    pub(crate) fn push(&mut self, action: Action) -> Result<(), String> {
        if self.len() >= MAX_LEGAL {
            self.room_for(1)?;
        }
        self.open_singles();
        // One `push`, not a one-element `extend_from_slice`: this is the
        // hottest call of a listing, and the slice copy is a `memcpy` call.
        self.singles.push(action);
        Ok(())
    }

    /// Adds one action (its values already checked) if the quick path is
    /// open ([`Legal::open_quick`]): true when added, false (nothing
    /// changed) when the caller must take the checked path.
    #[inline(always)]
    pub(crate) fn push_quick(&mut self, action: Action) -> bool {
        if self.singles.len() < self.quick_until {
            self.singles.push(action);
            return true;
        }
        false
    }

    /// Opens the quick path for the single actions that follow one just
    /// added by the checked path during a listing.
    pub(crate) fn open_quick(&mut self) {
        if self.open {
            self.quick_until = MAX_LEGAL - self.in_products;
        }
    }

    /// A listing starts: its first single actions take the quick path too
    /// (an open stretch that stays empty is harmless).
    pub(crate) fn start_listing(&mut self) {
        self.open_singles();
        self.open_quick();
    }

    /// Closes the quick path: the listing is over.
    pub(crate) fn close_quick(&mut self) {
        self.quick_until = 0;
    }

    /// Adds actions listed before (their values already checked).
    pub(crate) fn push_all(&mut self, actions: &[Action]) -> Result<(), String> {
        self.room_for(actions.len())?;
        if !actions.is_empty() {
            self.open_singles();
            self.singles.extend_from_slice(actions);
        }
        Ok(())
    }

    /// Makes the last segment an open stretch of single actions.
    #[inline]
    fn open_singles(&mut self) {
        if !self.open {
            self.segments.push(Segment::Singles {
                start: self.singles.len() as u32,
                end: OPEN,
            });
            self.open = true;
        }
    }

    /// Ends the open stretch of single actions, if any, before another
    /// segment.
    #[inline]
    fn close_singles(&mut self) {
        self.quick_until = 0;
        if std::mem::take(&mut self.open) {
            let end = self.singles.len() as u32;
            if let Some(Segment::Singles { end: e, .. }) = self.segments.last_mut() {
                *e = end;
            }
        }
    }

    /// Counts `by` more actions in products, within [`MAX_LEGAL`].
    #[inline]
    fn grow(&mut self, by: usize) -> Result<(), String> {
        self.room_for(by)?;
        self.in_products += by;
        Ok(())
    }

    /// Whether `by` more actions keep the list within [`MAX_LEGAL`].
    #[inline]
    fn room_for(&self, by: usize) -> Result<(), String> {
        match self.len().checked_add(by) {
            Some(n) if n <= MAX_LEGAL => Ok(()),
            _ => Err(format!(
                "more than {MAX_LEGAL} legal actions in one listing: does an add_all combine huge domains?"
            )),
        }
    }

    /// Starts a product (dropping one that was started and not finished).
    #[inline]
    pub(crate) fn start_product(&mut self) {
        let (v, d) = self.kept;
        self.values.truncate(v);
        self.domains.truncate(d);
        self.starts.clear();
    }

    /// Starts the next domain of the product being built.
    #[inline]
    pub(crate) fn start_domain(&mut self) {
        self.close_domain();
        self.domains.push(Domain {
            values_at: self.values.len() as u32,
            count: 0,
            width: 0,
            starts_at: UNIFORM,
        });
    }

    /// Adds a choice of numbers to the current domain (more may follow
    /// with [`Legal::push_value`]).
    #[inline]
    pub(crate) fn push_choice(&mut self, numbers: &[i64]) {
        let at = self.values.len() as u32;
        let d = self.current_with_starts();
        d.count += 1;
        self.starts.push(at);
        // Choices are one or two numbers: pushed one by one, inline.
        for &n in numbers {
            self.values.push(n);
        }
    }

    /// Adds choices of `width` numbers each, given back to back, to the
    /// current domain. `width` is at least 1: choices of no numbers cannot
    /// be counted from their numbers (give them with `push_choice`), and a
    /// width of 0 adds nothing.
    #[inline]
    pub(crate) fn push_choices(&mut self, width: usize, numbers: &[i64]) {
        debug_assert!(width > 0, "choices of no numbers go one by one");
        let Some(n) = numbers.len().checked_div(width) else {
            return;
        };
        let d = self.domains.last_mut().expect("a domain was started");
        if d.starts_at == UNIFORM && (d.count == 0 || d.width as usize == width) {
            d.width = width as u32;
            d.count += n as u32;
            self.values.extend_from_slice(&numbers[..n * width]);
            return;
        }
        self.push_choices_one_by_one(width, &numbers[..n * width]);
    }

    /// [`Legal::push_choices`] into a domain that already has choices of
    /// another width, or given one by one: never for compiled rules, which
    /// give a domain in one piece.
    #[cold]
    fn push_choices_one_by_one(&mut self, width: usize, numbers: &[i64]) {
        for choice in numbers.chunks_exact(width) {
            self.push_choice(choice);
        }
    }

    /// Appends a number to the last choice started.
    pub(crate) fn push_value(&mut self, v: i64) {
        self.values.push(v);
    }

    /// The current domain, its choices so far given starts (they are
    /// about to be joined by a choice whose width is not known yet).
    fn current_with_starts(&mut self) -> &mut Domain {
        let d = self.domains.last_mut().expect("a domain was started");
        if d.starts_at == UNIFORM {
            d.starts_at = self.starts.len() as u32;
            let (at, width) = (d.values_at, d.width);
            self.starts.extend((0..d.count).map(|k| at + k * width));
        }
        self.domains.last_mut().expect("a domain was started")
    }

    /// Ends the current domain, if any: its choices given one at a time
    /// get their end mark, and lose their starts when they all have one
    /// width (the usual case). A kept product's domains, and domains
    /// given in bulk, have no starts: nothing to do.
    #[inline]
    fn close_domain(&mut self) {
        if self.domains.last().is_some_and(|d| d.starts_at != UNIFORM) {
            self.close_domain_with_starts();
        }
    }

    fn close_domain_with_starts(&mut self) {
        let d = self.domains.last_mut().expect("checked by the caller");
        let at = d.starts_at as usize;
        self.starts.push(self.values.len() as u32);
        let starts = &self.starts[at..];
        let width = starts.get(1).map_or(0, |&s1| s1 - starts[0]);
        if starts.windows(2).all(|w| w[1] - w[0] == width) {
            d.width = width;
            d.starts_at = UNIFORM;
            self.starts.truncate(at);
        }
    }

    /// Finishes the product being built as action kind `kind` whose
    /// template is `template`: adds its combinations, or returns the error
    /// of the first one that does not fit. Outside a legal function
    /// (`collecting` false) a product of no combinations is harmless and
    /// any other is [`NOT_COLLECTING`].
    pub(crate) fn finish_product(&mut self, kind: u16, template: &Template, collecting: bool) -> Result<(), String> {
        self.close_domain();
        let first = self.kept.1;
        let n = self.domains.len() - first;
        let kept = self.commit(kind, template, first, n, collecting);
        if matches!(kept, Ok(true)) {
            self.kept = (self.values.len(), self.domains.len());
        } else {
            self.start_product();
        }
        kept.map(drop)
    }

    /// Adds a product given whole (see [`Given`]): the one-call path of
    /// compiled rules, which hold every domain before the product starts.
    /// Returns `None`, having changed nothing, when the product needs the
    /// step-by-step path (a number that may not fit its slot, a width of
    /// 0, too many actions); building it step by step then gives the same
    /// list or error.
    pub(crate) fn add_product(
        &mut self,
        kind: u16,
        template: &Template,
        collecting: bool,
        domains: &[impl AsGiven],
    ) -> Option<Result<(), String>> {
        // A relative range ties slots together: checked combination by
        // combination, on the step-by-step path.
        if domains.len() > MAX_ARGS || template.has_relative() {
            return None;
        }
        // Each domain is read once: its numbers are checked as they are
        // kept, past the last finished product, where an unfinished one
        // (a failed `add_all` elsewhere) is dropped first. Any way out but
        // a kept product drops them again, so nothing else changes.
        self.start_product();
        let first = self.domains.len();
        let Some((count, slot, fits)) = self.keep_domains(template.bounds(), domains) else {
            self.start_product();
            return None;
        };
        // As `commit`: an empty product is harmless anywhere.
        if count == 0 {
            self.start_product();
            return Some(Ok(()));
        }
        if !collecting {
            self.start_product();
            return Some(Err(NOT_COLLECTING.into()));
        }
        if !fits || slot != template.arity() || self.len().saturating_add(count) > MAX_LEGAL {
            self.start_product();
            return None;
        }
        // Within MAX_LEGAL, checked above.
        self.in_products += count;
        self.close_singles();
        self.segments.push(Segment::Product {
            kind,
            first: first as u32,
            n: domains.len() as u8,
            count,
        });
        self.kept = (self.values.len(), self.domains.len());
        Some(Ok(()))
    }

    /// Keeps each domain of a product given whole after the kept buffers:
    /// the product's count, the slots its domains fill, and whether every
    /// number fits its slot. `None` (leaving them for the caller to drop)
    /// when a domain cannot be given whole or has no slot to fill.
    fn keep_domains(&mut self, bounds: &[(i64, i64)], domains: &[impl AsGiven]) -> Option<(usize, usize, bool)> {
        let mut count = 1usize;
        let mut slot = 0;
        let mut fits = true;
        for d in domains {
            let values_at = self.values.len();
            let (n, width) = match d.as_given()? {
                Given::Numbers(width, numbers) => {
                    let n = choices_of(width, numbers.len())?;
                    let numbers = &numbers[..n * width];
                    fits &= all_within(numbers, bounds.get(slot..slot + width)?);
                    self.values.extend_from_slice(numbers);
                    (n, width)
                }
                Given::AtLeast(values, min) => {
                    for (i, &v) in values.iter().enumerate() {
                        if v >= min {
                            self.values.push(i as i64);
                        }
                    }
                    // Increasing indices: the first and last bound them all.
                    let kept = &self.values[values_at..];
                    let &(lo, hi) = bounds.get(slot)?;
                    if let (Some(&low), Some(&high)) = (kept.first(), kept.last()) {
                        fits &= lo <= low && high <= hi;
                    }
                    (kept.len(), 1)
                }
            };
            slot += width;
            count = count.saturating_mul(n);
            self.domains.push(Domain {
                values_at: values_at as u32,
                count: n as u32,
                width: width as u32,
                starts_at: UNIFORM,
            });
        }
        Some((count, slot, fits))
    }

    /// Adds the product's combinations; true when they are kept in
    /// factored form (false: none, or added one by one).
    fn commit(
        &mut self,
        kind: u16,
        template: &Template,
        first: usize,
        n: usize,
        collecting: bool,
    ) -> Result<bool, String> {
        let mut count = 1usize;
        for d in &self.domains[first..] {
            count = count.saturating_mul(d.count as usize);
        }
        if count == 0 {
            return Ok(false);
        }
        if !collecting {
            return Err(NOT_COLLECTING.into());
        }
        if self.len().saturating_add(count) > MAX_LEGAL {
            return self.grow(count).map(|()| false);
        }
        if n <= MAX_ARGS && self.fits(template, first) {
            self.grow(count)?;
            self.close_singles();
            self.segments.push(Segment::Product {
                kind,
                first: first as u32,
                n: n as u8,
                count,
            });
            return Ok(true);
        }
        self.expand_checked(kind, template, first, n).map(|()| false)
    }

    /// True when every combination fits the template: each domain's
    /// choices have one width, the widths add up to the template's arity,
    /// and every number fits the slot it fills. Runs once per `add_all`
    /// of every listing.
    fn fits(&self, template: &Template, first: usize) -> bool {
        if template.has_relative() {
            return false;
        }
        let bounds = template.bounds();
        let mut slot = 0;
        for d in &self.domains[first..] {
            let width = d.width as usize;
            if d.starts_at != UNIFORM {
                return false;
            }
            let Some(slots) = bounds.get(slot..slot + width) else {
                return false;
            };
            let at = d.values_at as usize;
            let numbers = &self.values[at..at + d.count as usize * width];
            if !all_within(numbers, slots) {
                return false;
            }
            slot += width;
        }
        slot == template.arity()
    }

    /// Adds every combination one by one, each checked: the slow path,
    /// taken only when some combination may not fit.
    fn expand_checked(&mut self, kind: u16, template: &Template, first: usize, n: usize) -> Result<(), String> {
        let mut index = vec![0usize; n];
        let mut actions = Vec::new();
        let mut numbers = Vec::with_capacity(MAX_ARGS + 1);
        loop {
            numbers.clear();
            for (d, &k) in index.iter().enumerate() {
                numbers.extend_from_slice(self.choice(first + d, k));
            }
            template.check_values(&numbers)?;
            let values: Vec<i32> = numbers.iter().map(|&v| v as i32).collect();
            actions.push(Action::new(kind, &values));
            // Odometer: advance the last domain first.
            let mut pos = n;
            loop {
                if pos == 0 {
                    for a in actions {
                        self.push(a)?;
                    }
                    return Ok(());
                }
                pos -= 1;
                index[pos] += 1;
                if index[pos] < self.choices(first + pos) {
                    break;
                }
                index[pos] = 0;
            }
        }
    }
}

/// One domain of a product given whole ([`Legal::add_product`]).
#[derive(Clone, Copy, Debug)]
pub enum Given<'a> {
    /// Choices of `width` numbers each, back to back (a last, partial one
    /// is left out, as `push_choices` does).
    Numbers(usize, &'a [i64]),
    /// The indices of the values at least `min`: what `at_least` lists.
    AtLeast(&'a [i64], i64),
}

/// A domain as [`Legal::add_product`] reads it: [`Given`], or `None` when it
/// cannot be given whole. The compiled rules' own domains implement it, so
/// that each is read in place as the product is built (no list of `Given`
/// made first).
pub trait AsGiven {
    fn as_given(&self) -> Option<Given<'_>>;
}

impl AsGiven for Given<'_> {
    #[inline]
    fn as_given(&self) -> Option<Given<'_>> {
        Some(*self)
    }
}

/// How many choices of `width` numbers `len` numbers hold; `None` for a
/// width of 0. The usual widths, 1 and 2, need no division.
#[inline]
fn choices_of(width: usize, len: usize) -> Option<usize> {
    match width {
        0 => None,
        1 => Some(len),
        2 => Some(len / 2),
        w => Some(len / w),
    }
}

/// Whether every choice of `slots.len()` numbers in `numbers` (back to
/// back) fits the slots' bounds: [`within`] per choice, with the common
/// widths (a number, a pair) unrolled. This is the hot part of checking a
/// product: it reads every number of every domain.
fn all_within(numbers: &[i64], slots: &[(i64, i64)]) -> bool {
    // One unsigned comparison per bound: `v - lo` wraps to a huge number
    // below `lo`. Only for bounds that are not empty.
    let span = |(lo, hi): (i64, i64)| (lo <= hi).then(|| (lo, hi.wrapping_sub(lo) as u64));
    let fits = |v: i64, (lo, span): (i64, u64)| v.wrapping_sub(lo) as u64 <= span;
    match *slots {
        [] => true,
        [a] => match span(a) {
            Some(a) => numbers.iter().all(|&v| fits(v, a)),
            None => numbers.is_empty(),
        },
        [a, b] => match (span(a), span(b)) {
            (Some(a), Some(b)) => numbers.chunks_exact(2).all(|c| fits(c[0], a) & fits(c[1], b)),
            _ => numbers.is_empty(),
        },
        _ => numbers.chunks_exact(slots.len()).all(|c| within(c, slots)),
    }
}

/// Messages of `add_all` domains that are not numbers (both engines
/// read domains from their own values, and say the same).
pub fn not_a_domain(found: &str) -> String {
    format!("add_all: a domain must be a number, an array or a range (0..n, range(0, n)), found {found}")
}

pub fn not_a_choice(found: &str) -> String {
    format!("add_all: a choice must be a number or an array of numbers, found {found}")
}

pub fn not_a_number(found: &str) -> String {
    format!("add_all: expected numbers, found {found}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::SlotType;

    fn template(text: &str) -> Template {
        Template::compile("t", text, |t| match t {
            "side" => Some(SlotType::Enum {
                name: "side".into(),
                values: vec!["a".into(), "b".into(), "c".into()],
            }),
            "int" => Some(SlotType::Int),
            _ => None,
        })
        .unwrap()
    }

    fn product(legal: &mut Legal, kind: u16, t: &Template, domains: &[&[&[i64]]]) -> Result<(), String> {
        legal.start_product();
        for d in domains {
            legal.start_domain();
            for c in *d {
                legal.push_choice(c);
            }
        }
        legal.finish_product(kind, t, true)
    }

    #[test]
    fn a_listing_stops_at_max_legal_actions_however_they_were_added() {
        let t = template("go {int} {int}");
        // 4096 x 4095 actions in one product, then singles up to the limit.
        let wide: Vec<[i64; 1]> = (0..4096).map(|i| [i]).collect();
        let wide: Vec<&[i64]> = wide.iter().map(|c| &c[..]).collect();
        let mut legal = Legal::default();
        product(&mut legal, 0, &t, &[&wide, &wide[..4095]]).unwrap();
        for i in 0..4096 {
            legal.push(Action::new(1, &[i, 0])).unwrap();
        }
        assert_eq!(legal.len(), MAX_LEGAL);
        let err = legal.push(Action::new(1, &[0, 0])).unwrap_err();
        assert!(err.contains("legal actions in one listing"), "{err}");
        assert_eq!(legal.len(), MAX_LEGAL, "the refused action is not kept");
        // A product past the limit is refused too, and nothing of it kept.
        let err = product(&mut legal, 2, &t, &[&wide[..1], &wide[..1]]).unwrap_err();
        assert!(err.contains("legal actions in one listing"), "{err}");
        assert_eq!(legal.len(), MAX_LEGAL);
        // Cleared, the same listing fits again.
        legal.clear();
        assert!(legal.is_empty());
        legal.push(Action::new(1, &[0, 0])).unwrap();
        assert_eq!(legal.len(), 1);
    }

    #[test]
    fn products_list_every_combination_in_order_between_singles() {
        let t = template("go {side} {int} {int}");
        let mut legal = Legal::default();
        legal.push(Action::new(0, &[2, 9, 9])).unwrap();
        product(&mut legal, 1, &t, &[&[&[0], &[1]], &[&[5, 6], &[7, 8]]]).unwrap();
        legal.push(Action::new(2, &[1, 1, 1])).unwrap();
        product(&mut legal, 3, &t, &[&[&[2]], &[&[3]], &[&[4], &[5], &[6]]]).unwrap();
        let want = vec![
            Action::new(0, &[2, 9, 9]),
            Action::new(1, &[0, 5, 6]),
            Action::new(1, &[0, 7, 8]),
            Action::new(1, &[1, 5, 6]),
            Action::new(1, &[1, 7, 8]),
            Action::new(2, &[1, 1, 1]),
            Action::new(3, &[2, 3, 4]),
            Action::new(3, &[2, 3, 5]),
            Action::new(3, &[2, 3, 6]),
        ];
        assert_eq!(legal.len(), want.len());
        assert_eq!(legal.to_vec(), want);
        for (k, a) in want.iter().enumerate() {
            assert_eq!(legal.get(k), *a, "action {k}");
        }
    }

    #[test]
    fn a_tail_read_and_pushed_again_is_the_same_actions() {
        let t = template("go {side} {int}");
        let mut legal = Legal::default();
        legal.push(Action::new(0, &[2, 9])).unwrap();
        product(&mut legal, 1, &t, &[&[&[0], &[1]], &[&[5], &[7], &[8]]]).unwrap();
        legal.push(Action::new(2, &[1, 1])).unwrap();
        let all = legal.to_vec();
        for start in 0..=all.len() {
            assert_eq!(legal.tail_from(start), all[start..], "from {start}");
        }
        // Tails starting inside the product, pushed onto another list.
        let mut other = Legal::default();
        other.push(Action::new(2, &[0, 0])).unwrap();
        other.push_all(&legal.tail_from(3)).unwrap();
        other.push_all(&[]).unwrap();
        assert_eq!(other.len(), 1 + all.len() - 3);
        assert_eq!(other.to_vec()[1..], all[3..]);
        assert_eq!(other.get(other.len() - 1), Action::new(2, &[1, 1]));
    }

    #[test]
    fn an_empty_domain_adds_nothing() {
        let t = template("go {side} {int}");
        let mut legal = Legal::default();
        product(&mut legal, 0, &t, &[&[&[0], &[1]], &[]]).unwrap();
        assert!(legal.is_empty());
        product(&mut legal, 0, &t, &[&[&[0]], &[&[4]]]).unwrap();
        assert_eq!(legal.to_vec(), vec![Action::new(0, &[0, 4])]);
    }

    #[test]
    fn a_bad_choice_names_the_first_combination_that_does_not_fit() {
        let t = template("go {side} {int}");
        let mut legal = Legal::default();
        let e = product(&mut legal, 0, &t, &[&[&[0], &[3]], &[&[1], &[-2]]]).unwrap_err();
        // (0, 1) fits; (0, -2) is the first that does not.
        assert!(e.contains("-2"), "{e}");
        assert!(legal.is_empty());
        // A failed product leaves nothing behind for the next one.
        product(&mut legal, 0, &t, &[&[&[1]], &[&[2]]]).unwrap();
        assert_eq!(legal.to_vec(), vec![Action::new(0, &[1, 2])]);
    }

    #[test]
    fn choices_of_mixed_widths_are_an_error_and_one_width_lists_them_all() {
        let t = template("go {side} {int}");
        let mut legal = Legal::default();
        product(&mut legal, 0, &t, &[&[&[0, 1], &[2]], &[&[], &[7]]]).unwrap_err();
        let mut legal = Legal::default();
        product(&mut legal, 0, &t, &[&[&[0, 1], &[2, 3]]]).unwrap();
        assert_eq!(legal.to_vec(), vec![Action::new(0, &[0, 1]), Action::new(0, &[2, 3])]);
    }

    /// A product whose domains come in bulk (`push_choices`, width given).
    fn bulk_product(legal: &mut Legal, kind: u16, t: &Template, domains: &[(usize, &[i64])]) -> Result<(), String> {
        legal.start_product();
        for (width, numbers) in domains {
            legal.start_domain();
            legal.push_choices(*width, numbers);
        }
        legal.finish_product(kind, t, true)
    }

    #[test]
    fn choices_in_bulk_list_and_fail_as_choices_one_by_one() {
        let t = template("go {side} {int} {int}");
        let (mut bulk, mut single) = (Legal::default(), Legal::default());
        bulk_product(&mut bulk, 1, &t, &[(1, &[0, 2]), (2, &[5, 6, 7, 8, 9, 10])]).unwrap();
        product(&mut single, 1, &t, &[&[&[0], &[2]], &[&[5, 6], &[7, 8], &[9, 10]]]).unwrap();
        assert_eq!(bulk.len(), 6);
        assert_eq!(bulk.to_vec(), single.to_vec());
        // A number that does not fit is the same error either way.
        let (mut bulk, mut single) = (Legal::default(), Legal::default());
        let e1 = bulk_product(&mut bulk, 1, &t, &[(1, &[0, 3]), (2, &[5, 6])]).unwrap_err();
        let e2 = product(&mut single, 1, &t, &[&[&[0], &[3]], &[&[5, 6]]]).unwrap_err();
        assert_eq!(e1, e2);
        // One domain one by one in a product otherwise in bulk: the widths
        // are still checked, and the next product starts afresh.
        let mut legal = Legal::default();
        legal.start_product();
        legal.start_domain();
        legal.push_choices(1, &[0, 1]);
        legal.start_domain();
        legal.push_choice(&[4, 4]);
        legal.push_choice(&[4]);
        assert!(legal.finish_product(1, &t, true).is_err());
        bulk_product(&mut legal, 1, &t, &[(1, &[2]), (2, &[1, 1])]).unwrap();
        assert_eq!(legal.to_vec(), vec![Action::new(1, &[2, 1, 1])]);
    }

    #[test]
    fn too_many_actions_is_an_error() {
        let t = template("go {int} {int}");
        let big: Vec<Vec<i64>> = (0..5000).map(|i| vec![i]).collect();
        let refs: Vec<&[i64]> = big.iter().map(|v| v.as_slice()).collect();
        let mut legal = Legal::default();
        let e = product(&mut legal, 0, &t, &[&refs, &refs]).unwrap_err();
        assert!(e.contains("more than"), "{e}");
    }

    #[test]
    fn the_unrolled_bound_check_agrees_with_the_plain_one() {
        let edges = [i64::MIN, i64::MIN + 1, -3, -1, 0, 1, 2, 5, i64::MAX - 1, i64::MAX];
        let bounds = [
            (0, 2),
            (-1, 1),
            (0, i64::MAX),
            (i64::MIN, i64::MAX),
            (3, 2),
            (5, 5),
            (i64::MIN, 0),
        ];
        for &a in &bounds {
            for &b in &bounds {
                for width in 1..=3 {
                    let slots = &[a, b, (0, 3)][..width];
                    // Every choice of `width` edge values, alone and after a fitting one.
                    for (i, &x) in edges.iter().enumerate() {
                        let y = edges[(i * 7 + 3) % edges.len()];
                        let one: Vec<i64> = [x, y, x].into_iter().take(width).collect();
                        let fit: Vec<i64> = slots.iter().map(|s| s.0).collect();
                        for numbers in [one.clone(), [fit.clone(), one].concat(), fit] {
                            let plain = numbers.chunks_exact(width).all(|c| within(c, slots));
                            assert_eq!(all_within(&numbers, slots), plain, "{numbers:?} in {slots:?}");
                        }
                    }
                }
            }
        }
    }

    use proptest::prelude::*;

    /// A domain given whole, as the compiled rules give it.
    #[derive(Clone, Debug)]
    enum Whole {
        Numbers(usize, Vec<i64>),
        AtLeast(Vec<i64>, i64),
        /// Numbers the whole path declines (as compiled rules' dynamic
        /// values): only the step-by-step path takes them.
        Declined(Vec<i64>),
    }

    impl AsGiven for Whole {
        fn as_given(&self) -> Option<Given<'_>> {
            match self {
                Whole::Numbers(w, v) => Some(Given::Numbers(*w, v)),
                Whole::AtLeast(v, m) => Some(Given::AtLeast(v, *m)),
                Whole::Declined(_) => None,
            }
        }
    }

    fn whole() -> impl Strategy<Value = Whole> {
        prop_oneof![
            (1usize..=3, prop::collection::vec(-1i64..4, 0..7)).prop_map(|(w, v)| Whole::Numbers(w, v)),
            (prop::collection::vec(-1i64..3, 0..6), 0i64..2).prop_map(|(v, m)| Whole::AtLeast(v, m)),
            prop::collection::vec(-1i64..4, 0..4).prop_map(Whole::Declined),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// A product given whole lists what the step-by-step path lists,
        /// or fails as it does; when the whole path declines, it has
        /// changed nothing.
        #[test]
        fn a_product_given_whole_matches_the_step_by_step_path(
            domains in prop::collection::vec(whole(), 0..4),
            extra_slot in any::<bool>(),
            collecting in prop::sample::select(vec![true, true, true, false]),
            unfinished in any::<bool>(),
        ) {
            let width: usize = domains.iter().map(|d| match d { Whole::Numbers(w, _) => *w, _ => 1 }).sum();
            let slots = (width + extra_slot as usize).min(MAX_ARGS);
            let text: String = std::iter::once("go").chain(std::iter::repeat_n(" {side}", slots)).collect();
            let t = template(&text);
            let start = |legal: &mut Legal| {
                legal.push(Action::new(0, &[])).unwrap();
                if unfinished {
                    legal.start_product();
                    legal.start_domain();
                    legal.push_choice(&[9]);
                }
            };
            let (mut whole_path, mut steps) = (Legal::default(), Legal::default());
            start(&mut whole_path);
            start(&mut steps);
            let step_by_step = |legal: &mut Legal| {
                legal.start_product();
                for d in &domains {
                    legal.start_domain();
                    match d {
                        Whole::Numbers(w, v) => legal.push_choices(*w, v),
                        Whole::AtLeast(v, m) => legal.push_choices(1, &crate::natives::at_least(v, *m)),
                        Whole::Declined(v) => legal.push_choices(1, v),
                    }
                }
                legal.finish_product(2, &t, collecting)
            };
            let before = whole_path.to_vec();
            let want = step_by_step(&mut steps);
            let got = match whole_path.add_product(2, &t, collecting, &domains) {
                Some(r) => r,
                None => {
                    prop_assert_eq!(whole_path.to_vec(), before);
                    step_by_step(&mut whole_path)
                }
            };
            prop_assert_eq!(&got, &want);
            for legal in [&mut whole_path, &mut steps] {
                legal.push(Action::new(1, &[])).unwrap();
            }
            prop_assert_eq!(whole_path.len(), steps.len());
            let all = steps.to_vec();
            prop_assert_eq!(whole_path.to_vec(), all.clone());
            for (k, a) in all.iter().enumerate() {
                prop_assert_eq!(whole_path.get(k), *a);
            }
        }
    }

    #[test]
    fn singles_around_products_and_failed_products_keep_their_order() {
        let t = template("go {side} {int}");
        let mut legal = Legal::default();
        legal.push(Action::new(0, &[0, 1])).unwrap();
        // A product that fails leaves the open stretch of singles open.
        product(&mut legal, 1, &t, &[&[&[7]], &[&[1]]]).unwrap_err();
        legal.push(Action::new(0, &[0, 2])).unwrap();
        product(&mut legal, 1, &t, &[&[&[1], &[2]], &[&[5]]]).unwrap();
        legal.push_all(&[]).unwrap();
        legal.push(Action::new(0, &[0, 3])).unwrap();
        let want = vec![
            Action::new(0, &[0, 1]),
            Action::new(0, &[0, 2]),
            Action::new(1, &[1, 5]),
            Action::new(1, &[2, 5]),
            Action::new(0, &[0, 3]),
        ];
        assert_eq!(legal.to_vec(), want);
        assert_eq!(legal.segments.len(), 3, "{:?}", legal.segments);
        for (k, a) in want.iter().enumerate() {
            assert_eq!(legal.get(k), *a);
            assert_eq!(legal.tail_from(k), want[k..]);
        }
    }
}
