//! Action notation: templates declared by the variant, such as
//! `"lock {part} {seat}.{tpart}"`, that turn compact [`Action`]s into
//! canonical text and back.
//!
//! A template is a sequence of literal text and typed slots. A slot's type is
//! an enumeration declared by the variant (its values are written as words,
//! stored as indices), a seat's word (an enumeration with one word per seat,
//! such as `x` and `o`: the value is the deciding seat), `int` (a
//! non-negative number without leading zeros), `signed` (a number that may
//! be negative, such as a hex board's axial coordinate `-2`) or `seat`
//! (written `P1`, `P2`, ..., stored 0-based).
//!
//! A number may declare its range after its type, both ends included:
//! `{col:int 0..6}`, `{q:signed -3..3}`, `{bid:int 0..coins}` (an end may
//! name a whole-number parameter). Values outside it are neither listed nor
//! parsed, and the Python bridge numbers only the values within it. A range
//! may also be relative to an earlier slot, named by its label: in
//! `{from:file}{rank:int 1..8}{to:file from-1..from+1}{to_rank:int
//! rank-1..rank+1}` the target is at most one file and one rank away (a
//! relative range is the one kind an enumeration takes).
//!
//! Two slots may touch (`{mark}{col:int 0..6}` writes `x3`) when the text
//! of the first shows where it ends: a fixed-width number (a range whose
//! ends have as many digits), an enumeration none of whose words begins
//! another, or a number followed by a slot whose text cannot begin with a
//! digit. Any other pair could be read two ways and is refused at load.

use crate::state::{Action, MAX_ARGS};
use std::fmt::Write;

/// The type of one slot in a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotType {
    Enum {
        name: String,
        values: Vec<String>,
    },
    /// One word per seat (`x` for P1, `o` for P2): the value is the seat
    /// that decides, written as its word.
    SeatWord {
        name: String,
        words: Vec<String>,
    },
    Int,
    /// A whole number that may be negative: `-3`, `0`, `12`.
    Signed,
    Seat,
}

/// One slot of a template: its type, and for a number the range declared
/// in the text (`{col:int 0..6}`), both ends included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub ty: SlotType,
    /// The values that may ever fit (for a relative range, every value
    /// the range can reach, within the type's).
    pub range: Option<(i64, i64)>,
    /// A range relative to an earlier slot's value.
    pub relative: Option<Relative>,
}

/// A range relative to an earlier slot (`{to_rank:int rank-1..rank+1}`):
/// the value lies within `value of slot + low ..= value of slot + high`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relative {
    /// The earlier slot's index among the template's slots.
    pub slot: usize,
    pub low: i64,
    pub high: i64,
}

impl Slot {
    /// The `(lowest, highest)` value that fits: actions hold 32-bit values.
    pub fn bounds(&self) -> (i64, i64) {
        if let Some(r) = self.range {
            return r;
        }
        match &self.ty {
            SlotType::Enum { values, .. } => (0, values.len() as i64 - 1),
            SlotType::SeatWord { words, .. } => (0, words.len() as i64 - 1),
            SlotType::Int | SlotType::Seat => (0, i32::MAX as i64),
            SlotType::Signed => (-(i32::MAX as i64), i32::MAX as i64),
        }
    }

    /// The range that fits now, after the earlier slots' `values`.
    fn fits_after(&self, values: &[i32]) -> (i64, i64) {
        let (lo, hi) = self.bounds();
        match self.relative {
            Some(r) => {
                let base = values.get(r.slot).copied().unwrap_or(0) as i64;
                ((base + r.low).max(lo), (base + r.high).min(hi))
            }
            None => (lo, hi),
        }
    }

    /// Whether the slot's text ends by itself, whatever follows it: every
    /// value has the same number of digits, or no word begins another.
    fn delimits_itself(&self) -> bool {
        match (&self.ty, self.range) {
            (SlotType::Enum { values: w, .. } | SlotType::SeatWord { words: w, .. }, _) => w
                .iter()
                .enumerate()
                .all(|(i, a)| w.iter().enumerate().all(|(j, b)| i == j || !b.starts_with(a.as_str()))),
            (SlotType::Int | SlotType::Signed, Some((lo, hi))) => lo >= 0 && digits(lo) == digits(hi),
            _ => false,
        }
    }

    /// Whether the slot's text ends in a digit (numbers and seats).
    fn ends_in_digit(&self) -> bool {
        matches!(self.ty, SlotType::Int | SlotType::Signed | SlotType::Seat)
    }

    /// Whether some value's text may begin with a digit, which a number
    /// before it would read as its own.
    fn may_begin_with_digit(&self) -> bool {
        match &self.ty {
            SlotType::Enum { values: w, .. } | SlotType::SeatWord { words: w, .. } => {
                w.iter().any(|x| x.starts_with(|c: char| c.is_ascii_digit()))
            }
            SlotType::Seat => false,
            SlotType::Int | SlotType::Signed => true,
        }
    }
}

/// How many characters `n` takes written out (its sign included).
fn digits(n: i64) -> usize {
    n.to_string().len()
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Lit(String),
    Slot(Slot),
}

/// One action template, compiled once at load.
#[derive(Clone, Debug)]
pub struct Template {
    pub name: String,
    pub text: String,
    parts: Vec<Part>,
    /// Per slot, the range of values that fit: checked for every legal
    /// action added, so worked out once.
    bounds: Vec<(i64, i64)>,
    /// The slots with a relative range, with it (checked after `bounds`).
    relatives: Vec<(usize, Relative)>,
}

/// Whether each of `values` lies within the `(lowest, highest)` bounds
/// beside it (values beyond the bounds' length are not looked at).
#[inline]
pub fn within(values: &[i64], bounds: &[(i64, i64)]) -> bool {
    values.iter().zip(bounds).all(|(v, (lo, hi))| (*lo..=*hi).contains(v))
}

impl Template {
    /// Compiles `text`; `lookup` resolves a slot's type name to its type.
    pub fn compile(name: &str, text: &str, lookup: impl Fn(&str) -> Option<SlotType>) -> Result<Template, String> {
        Template::compile_with(name, text, lookup, |_| None)
    }

    /// [`Template::compile`], where `value_of` gives the whole-number
    /// parameters a declared range may name (`{bid:int 0..coins}`).
    pub fn compile_with(
        name: &str,
        text: &str,
        lookup: impl Fn(&str) -> Option<SlotType>,
        value_of: impl Fn(&str) -> Option<i64>,
    ) -> Result<Template, String> {
        let normalized = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if normalized.is_empty() {
            return Err("an action's text cannot be empty".into());
        }
        let mut parts = Vec::new();
        // Each slot's label (`{label:type}`), which a later range may name.
        let mut labels: Vec<(String, (i64, i64))> = Vec::new();
        let mut rest = normalized.as_str();
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest
                        .find('}')
                        .ok_or_else(|| format!("unclosed '{{' in action text {text:?}"))?;
                    let inner = &rest[1..close];
                    // `{name:type range}` documents the value; the type and
                    // the range count.
                    let spec = inner.rsplit(':').next().unwrap_or(inner).trim();
                    let (ty, range) = match spec.split_once(' ') {
                        Some((ty, range)) => (ty, Some(range.trim())),
                        None => (spec, None),
                    };
                    let ty = lookup(ty).ok_or_else(|| {
                        format!("unknown value type '{ty}' in action text {text:?} (expected int, signed, seat or one of the variant's [notation] enumerations)")
                    })?;
                    let label = inner.rsplit_once(':').map_or("", |(l, _)| l.trim());
                    let mut slot = Slot {
                        ty,
                        range: None,
                        relative: None,
                    };
                    if let Some(r) = range {
                        match parse_range(r, &slot.ty, &value_of, &labels, inner)? {
                            Declared::Fixed(lo, hi) => slot.range = Some((lo, hi)),
                            Declared::Relative(rel) => {
                                let (lo, hi) = slot.bounds();
                                let (base_lo, base_hi) = labels[rel.slot].1;
                                slot.range = Some(((base_lo + rel.low).max(lo), (base_hi + rel.high).min(hi)));
                                slot.relative = Some(rel);
                            }
                        }
                    }
                    if let Some(Part::Slot(before)) = parts.last() {
                        check_adjacent(before, &slot, text)?;
                    }
                    labels.push((label.to_string(), slot.bounds()));
                    parts.push(Part::Slot(slot));
                    rest = &rest[close + 1..];
                }
                Some(open) => {
                    parts.push(Part::Lit(rest[..open].to_string()));
                    rest = &rest[open..];
                }
                None => {
                    parts.push(Part::Lit(rest.to_string()));
                    rest = "";
                }
            }
        }
        let arity = parts.iter().filter(|p| matches!(p, Part::Slot(_))).count();
        if arity > MAX_ARGS {
            return Err(format!(
                "an action carries at most {MAX_ARGS} values, {text:?} has {arity}"
            ));
        }
        let bounds = parts
            .iter()
            .filter_map(|p| match p {
                Part::Slot(slot) => Some(slot.bounds()),
                Part::Lit(_) => None,
            })
            .collect();
        let relatives = parts
            .iter()
            .filter_map(|p| match p {
                Part::Slot(slot) => Some(slot.relative),
                Part::Lit(_) => None,
            })
            .enumerate()
            .filter_map(|(i, r)| Some((i, r?)))
            .collect();
        Ok(Template {
            name: name.to_string(),
            text: normalized,
            parts,
            bounds,
            relatives,
        })
    }

    /// Number of values the template carries.
    #[inline]
    pub fn arity(&self) -> usize {
        self.bounds.len()
    }

    /// The slots, in order.
    pub fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.parts.iter().filter_map(|p| match p {
            Part::Slot(t) => Some(t),
            Part::Lit(_) => None,
        })
    }

    /// The `(lowest, highest)` value of each slot, in order (what
    /// [`Template::check_values`] checks against).
    #[inline]
    pub fn bounds(&self) -> &[(i64, i64)] {
        &self.bounds
    }

    /// Checks that `values` fit the slots (enumeration indices in range,
    /// numbers and seats not negative, signed numbers within 32 bits).
    #[inline]
    pub fn check_values(&self, values: &[i64]) -> Result<(), String> {
        if values.len() == self.bounds.len() && within(values, &self.bounds) && self.relatives_hold(values) {
            return Ok(());
        }
        self.explain_values(values)
    }

    /// Whether the template has a slot whose range is relative to another:
    /// then a product of choices is checked combination by combination.
    #[inline]
    pub fn has_relative(&self) -> bool {
        !self.relatives.is_empty()
    }

    #[inline]
    fn relatives_hold(&self, values: &[i64]) -> bool {
        self.relatives.iter().all(|(i, r)| {
            let base = values[r.slot];
            (base + r.low..=base + r.high).contains(&values[*i])
        })
    }

    /// Why `values` do not fit (see [`Template::check_values`]).
    #[cold]
    fn explain_values(&self, values: &[i64]) -> Result<(), String> {
        if values.len() != self.arity() {
            return Err(format!(
                "action '{}' ({}) takes {} value(s), got {}",
                self.name,
                self.text,
                self.arity(),
                values.len()
            ));
        }
        let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        for (slot, &v) in self.slots().zip(values) {
            let (lo, hi) = slot.fits_after(&narrow);
            if !(lo..=hi).contains(&v) {
                return Err(format!(
                    "value {v} does not fit {} in action '{}' ({})",
                    describe(slot),
                    self.name,
                    self.text
                ));
            }
        }
        Ok(())
    }

    /// Writes the canonical text of an action of this template.
    pub fn write(&self, action: &Action, out: &mut String) {
        let mut values = action.values().iter();
        for part in &self.parts {
            match part {
                Part::Lit(s) => out.push_str(s),
                Part::Slot(slot) => {
                    let v = values.next().copied().unwrap_or(0);
                    match &slot.ty {
                        SlotType::Enum { values: words, .. } | SlotType::SeatWord { words, .. } => {
                            out.push_str(words.get(v as usize).map(String::as_str).unwrap_or("?"))
                        }
                        SlotType::Int | SlotType::Signed => {
                            let _ = write!(out, "{v}");
                        }
                        SlotType::Seat => {
                            let _ = write!(out, "P{}", v + 1);
                        }
                    }
                }
            }
        }
    }

    /// Parses normalized text (single spaces) against this template.
    pub fn parse(&self, kind: u16, text: &str) -> Option<Action> {
        let mut values = Values::new();
        match_parts(&self.parts, text, &mut values).then(|| Action::new(kind, &values))
    }
}

/// A range as declared: fixed ends, or ends relative to an earlier slot.
enum Declared {
    Fixed(i64, i64),
    Relative(Relative),
}

/// One end of a range: a number, or an earlier slot's value plus a number.
enum End {
    Fixed(i64),
    After(usize, i64),
}

/// Reads a declared range `LO..HI` of slot `{inner}`, both ends included.
/// An end is a number, a whole-number parameter, or an earlier slot's
/// label plus or minus a number (`rank-1`); both ends of a relative range
/// name the same slot.
fn parse_range(
    text: &str,
    ty: &SlotType,
    value_of: &impl Fn(&str) -> Option<i64>,
    labels: &[(String, (i64, i64))],
    inner: &str,
) -> Result<Declared, String> {
    if matches!(ty, SlotType::Seat | SlotType::SeatWord { .. }) {
        return Err(format!(
            "{{{inner}}}: a seat takes no range (the players are its range)"
        ));
    }
    let shape = || format!("{{{inner}}}: expected a range LO..HI after the type, both ends included, such as 0..6");
    let (lo, hi) = text.split_once("..").ok_or_else(shape)?;
    let end = |e: &str| -> Result<End, String> {
        let e = e.trim();
        if e.is_empty() {
            return Err(shape());
        }
        if let Ok(n) = e.parse::<i64>() {
            return Ok(End::Fixed(n));
        }
        // `label`, `label+K`, `label-K` (an earlier slot's label wins over
        // a parameter of the same name), else a parameter.
        let (name, offset) = match e.find(['+', '-']) {
            Some(at) => (&e[..at], e[at..].trim_start_matches('+').parse::<i64>().ok()),
            None => (e, Some(0)),
        };
        let slot = labels.iter().position(|(l, _)| !l.is_empty() && l == name.trim());
        match (slot, offset, value_of(e)) {
            (Some(slot), Some(k), _) => Ok(End::After(slot, k)),
            (None, _, Some(n)) => Ok(End::Fixed(n)),
            _ => Err(format!(
                "{{{inner}}}: range end '{e}' is neither a whole number, a whole-number parameter, \
                 nor an earlier value's label plus or minus a number (rank-1)"
            )),
        }
    };
    let (lo, hi) = match (end(lo)?, end(hi)?) {
        (End::After(a, low), End::After(b, high)) if a == b => {
            if low > high {
                return Err(format!(
                    "{{{inner}}}: the range {text} holds no value (it must go upwards)"
                ));
            }
            return Ok(Declared::Relative(Relative { slot: a, low, high }));
        }
        (End::Fixed(lo), End::Fixed(hi)) => (lo, hi),
        _ => {
            return Err(format!(
                "{{{inner}}}: both ends of a range are fixed, or both relative to the same earlier value"
            ))
        }
    };
    if !matches!(ty, SlotType::Int | SlotType::Signed) {
        return Err(format!(
            "{{{inner}}}: only int and signed values take a fixed range (an enumeration's words are its range; \
             it may take one relative to an earlier value)"
        ));
    }
    let floor = match ty {
        SlotType::Int => 0,
        _ => -(i32::MAX as i64),
    };
    if lo > hi || lo < floor || hi > i32::MAX as i64 {
        let kind = if floor == 0 { "int" } else { "signed" };
        return Err(format!(
            "{{{inner}}}: the range {lo}..{hi} holds no {kind} value (it must go upwards, within {floor}..{})",
            i32::MAX
        ));
    }
    Ok(Declared::Fixed(lo, hi))
}

/// Whether slot `b` may follow slot `a` with no text between them: the
/// text must show where `a` ends (see the module's documentation).
fn check_adjacent(a: &Slot, b: &Slot, text: &str) -> Result<(), String> {
    if a.delimits_itself() || (a.ends_in_digit() && !b.may_begin_with_digit()) {
        return Ok(());
    }
    Err(format!(
        "{} and {} touch with no text between them in {text:?}, and the first one's text does not show where it ends: \
         put text between them, give the number a range whose ends have as many digits ({{n:int 1..8}}), \
         or use an enumeration none of whose words begins another",
        describe(a),
        describe(b)
    ))
}

fn describe(slot: &Slot) -> String {
    let range = slot.range.map_or(String::new(), |(lo, hi)| format!(" {lo}..{hi}"));
    match &slot.ty {
        SlotType::Enum { name, values } => format!("{name} (0..{})", values.len()),
        SlotType::SeatWord { name, words } => format!("{name} ({})", words.join(", ")),
        SlotType::Int => format!("a number{range}"),
        SlotType::Signed => format!("a signed number{range}"),
        SlotType::Seat => "a seat".into(),
    }
}

/// Backtracking match of template parts against text; pushes slot values.
fn match_parts(parts: &[Part], text: &str, values: &mut Values) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    match first {
        // The first byte is compared inline: most texts differ there, and
        // a call to compare whole strings costs more than the rest.
        Part::Lit(lit) => {
            text.as_bytes().first() == lit.as_bytes().first()
                && text
                    .strip_prefix(lit.as_str())
                    .is_some_and(|t| match_parts(rest, t, values))
        }
        Part::Slot(
            slot @ Slot {
                ty: SlotType::Enum { values: words, .. } | SlotType::SeatWord { words, .. },
                ..
            },
        ) => {
            let first = text.as_bytes().first();
            let (lo, hi) = slot.fits_after(values);
            for (i, w) in words.iter().enumerate() {
                if (!w.is_empty() && w.as_bytes().first() != first) || !(lo..=hi).contains(&(i as i64)) {
                    continue;
                }
                if let Some(t) = text.strip_prefix(w.as_str()) {
                    values.push(i as i32);
                    if match_parts(rest, t, values) {
                        return true;
                    }
                    values.pop();
                }
            }
            false
        }
        Part::Slot(slot @ Slot { ty: SlotType::Int, .. }) => {
            let range = slot.fits_after(values);
            match_number(text, rest, values, 0, Some(range))
        }
        // A minus sign, then a number that is not 0 (no "-0"), or a number.
        Part::Slot(
            slot @ Slot {
                ty: SlotType::Signed, ..
            },
        ) => match (text.strip_prefix('-'), Some(slot.fits_after(values))) {
            // The number after the sign is the value's size: within the
            // range mirrored.
            (Some(t), range) => {
                let before = values.len();
                if match_number(t, rest, values, 0, range.map(|(lo, hi)| (-hi, -lo))) && values[before] != 0 {
                    values[before] = -values[before];
                    return true;
                }
                values.truncate(before);
                false
            }
            (None, range) => match_number(text, rest, values, 0, range),
        },
        Part::Slot(Slot { ty: SlotType::Seat, .. }) => match text.strip_prefix('P') {
            Some(t) => match_number(t, rest, values, 1, None),
            None => false,
        },
    }
}

/// Matches a canonical number (no sign, no leading zero) minus `offset`,
/// within `range` when one is declared.
fn match_number(text: &str, rest: &[Part], values: &mut Values, offset: i64, range: Option<(i64, i64)>) -> bool {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    // Try the longest number first, then shorter ones (backtracking).
    for len in (1..=digits.min(9)).rev() {
        let (num, t) = text.split_at(len);
        if len > 1 && num.starts_with('0') {
            continue;
        }
        let Ok(n) = num.parse::<i64>() else { continue };
        if n - offset < 0 || range.is_some_and(|(lo, hi)| !(lo..=hi).contains(&(n - offset))) {
            continue;
        }
        values.push((n - offset) as i32);
        if match_parts(rest, t, values) {
            return true;
        }
        values.pop();
    }
    false
}

/// Joins whitespace-separated tokens with single spaces.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// [`normalize`], borrowing `text` when it is normalized already (as
/// every text the engine writes is): parsing those allocates nothing.
pub fn normalized(text: &str) -> std::borrow::Cow<'_, str> {
    // One pass over the bytes: clean is ASCII words separated by single
    // spaces (other text takes the general path).
    let mut after_space = true;
    let mut clean = true;
    for &c in text.as_bytes() {
        if c == b' ' {
            clean &= !after_space;
            after_space = true;
        } else {
            clean &= c.is_ascii() && !c.is_ascii_whitespace() && c != 0x0b;
            after_space = false;
        }
    }
    clean &= !after_space || text.is_empty();
    match clean {
        true => std::borrow::Cow::Borrowed(text),
        false => std::borrow::Cow::Owned(normalize(text)),
    }
}

/// The values read while matching a text: a template has at most
/// [`MAX_ARGS`], so they stay on the stack.
type Values = smallvec::SmallVec<[i32; MAX_ARGS]>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_borrows_clean_text_and_cleans_the_rest() {
        assert!(matches!(normalized("move piece at P2"), std::borrow::Cow::Borrowed(_)));
        for messy in [
            " move piece",
            "move  piece",
            "move piece ",
            "move\tpiece",
            "move\npiece",
            "move\u{a0}piece",
            " ",
        ] {
            let n = normalized(messy);
            assert!(matches!(n, std::borrow::Cow::Owned(_)), "{messy:?}");
            assert_eq!(n, normalize(messy));
        }
    }

    fn lookup(name: &str) -> Option<SlotType> {
        let words = |w: &str| w.split(' ').map(String::from).collect::<Vec<_>>();
        match name {
            "file" => Some(SlotType::Enum {
                name: "file".into(),
                values: words("a b c d e f g h"),
            }),
            "mark" => Some(SlotType::SeatWord {
                name: "mark".into(),
                words: words("x o"),
            }),
            "int" => Some(SlotType::Int),
            "seat" => Some(SlotType::Seat),
            "signed" => Some(SlotType::Signed),
            "side" => Some(SlotType::Enum {
                name: "side".into(),
                values: vec!["n".into(), "e".into(), "ne".into()],
            }),
            _ => None,
        }
    }

    #[test]
    fn round_trips_text_with_every_slot_type() {
        let t = Template::compile("lock", "lock {side} {seat}.{side} at {c:int},{r:int}", lookup).unwrap();
        assert_eq!(t.arity(), 5);
        let a = t.parse(3, "lock ne P12.e at 10,0").unwrap();
        assert_eq!(a.kind, 3);
        assert_eq!(a.values(), &[2, 11, 1, 10, 0]);
        let mut s = String::new();
        t.write(&a, &mut s);
        assert_eq!(s, "lock ne P12.e at 10,0");
    }

    #[test]
    fn rejects_leading_zeros_seat_zero_and_trailing_text() {
        let t = Template::compile("fire", "fire {int} {int}", lookup).unwrap();
        assert!(t.parse(0, "fire 01 2").is_none());
        assert!(t.parse(0, "fire 1 2 3").is_none());
        assert!(t.parse(0, "fire 1 2").is_some());
        let s = Template::compile("react", "react {seat}", lookup).unwrap();
        assert!(s.parse(0, "react P0").is_none());
        assert_eq!(s.parse(0, "react P2").unwrap().values(), &[1]);
    }

    #[test]
    fn enum_prefixes_backtrack() {
        // "n" is a prefix of "ne": the matcher must try both.
        let t = Template::compile("x", "go {side}e", lookup).unwrap();
        assert_eq!(t.parse(0, "go nee").unwrap().values(), &[2]);
        assert_eq!(t.parse(0, "go ne").unwrap().values(), &[0]);
    }

    #[test]
    fn compile_errors_name_the_problem() {
        assert!(Template::compile("x", "go {nope}", lookup)
            .unwrap_err()
            .contains("unknown value type 'nope'"));
        assert!(Template::compile("x", "go {int}{int}", lookup)
            .unwrap_err()
            .contains("touch with no text between them"));
        assert!(Template::compile("x", "go {int", lookup)
            .unwrap_err()
            .contains("unclosed"));
    }

    #[test]
    fn signed_numbers_may_be_negative_but_never_minus_zero_or_plus() {
        let t = Template::compile("move", "move {q:signed},{r:signed} to {int}", lookup).unwrap();
        let a = t.parse(0, "move -3,12 to 4").unwrap();
        assert_eq!(a.values(), &[-3, 12, 4]);
        let mut s = String::new();
        t.write(&a, &mut s);
        assert_eq!(s, "move -3,12 to 4");
        for bad in [
            "move -0,1 to 4",
            "move +3,1 to 4",
            "move --3,1 to 4",
            "move -03,1 to 4",
            "move 3,1 to -4",
        ] {
            assert!(t.parse(0, bad).is_none(), "{bad}");
        }
        assert!(t.check_values(&[-3, 0, 4]).is_ok());
        assert!(t.check_values(&[0, 0, -4]).is_err());
        assert!(t.check_values(&[i32::MIN as i64, 0, 0]).is_err());
    }

    #[test]
    fn check_values_catches_out_of_range() {
        let t = Template::compile("x", "go {side} {int}", lookup).unwrap();
        assert!(t.check_values(&[2, 5]).is_ok());
        assert!(t.check_values(&[3, 5]).is_err());
        assert!(t.check_values(&[0, -1]).is_err());
        assert!(t.check_values(&[0]).is_err());
    }

    #[test]
    fn a_declared_range_bounds_listing_and_parsing() {
        let t = Template::compile("drop", "drop {col:int 0..6}", lookup).unwrap();
        assert_eq!(t.bounds(), &[(0, 6)]);
        assert_eq!(t.parse(0, "drop 6").unwrap().values(), &[6]);
        assert!(t.parse(0, "drop 7").is_none());
        assert!(t.check_values(&[7]).unwrap_err().contains("a number 0..6"));
        let s = Template::compile("move", "move {q:signed -3..3}", lookup).unwrap();
        assert_eq!(s.parse(0, "move -3").unwrap().values(), &[-3]);
        assert_eq!(s.parse(0, "move 3").unwrap().values(), &[3]);
        assert!(s.parse(0, "move -4").is_none());
        assert!(s.parse(0, "move 4").is_none());
        let up = Template::compile("move", "move {q:signed 2..5}", lookup).unwrap();
        assert!(up.parse(0, "move -3").is_none());
        assert!(up.parse(0, "move 1").is_none());
    }

    #[test]
    fn a_range_end_may_name_a_parameter() {
        let coins = |name: &str| (name == "coins").then_some(50);
        let t = Template::compile_with("bid", "bid {n:int 0..coins}", lookup, coins).unwrap();
        assert_eq!(t.bounds(), &[(0, 50)]);
        let e = Template::compile_with("bid", "bid {n:int 0..purse}", lookup, coins).unwrap_err();
        assert!(e.contains("range end 'purse' is neither a whole number"), "{e}");
    }

    #[test]
    fn bad_ranges_are_refused_with_the_reason() {
        for (text, says) in [
            ("go {side 0..2}", "only int and signed"),
            ("go {int 5..2}", "holds no int value"),
            ("go {int -1..2}", "holds no int value"),
            ("go {int 0-6}", "expected a range LO..HI"),
            ("go {int ..6}", "expected a range LO..HI"),
            ("go {int 0..3000000000}", "holds no int value"),
        ] {
            let e = Template::compile("x", text, lookup).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn adjacent_slots_that_delimit_themselves_round_trip() {
        let c4 = Template::compile("drop", "{mark}{col:int 0..6}", lookup).unwrap();
        let a = c4.parse(0, "o3").unwrap();
        assert_eq!(a.values(), &[1, 3]);
        let mut s = String::new();
        c4.write(&a, &mut s);
        assert_eq!(s, "o3");
        let bt = Template::compile("move", "{file}{r:int 1..8}{file}{r:int 1..8}", lookup).unwrap();
        let a = bt.parse(0, "a7b6").unwrap();
        assert_eq!(a.values(), &[0, 7, 1, 6]);
        let mut s = String::new();
        bt.write(&a, &mut s);
        assert_eq!(s, "a7b6");
        assert!(bt.parse(0, "a9b6").is_none());
        // A number then a slot that cannot begin with a digit.
        let n = Template::compile("x", "{int}{side}", lookup).unwrap();
        assert_eq!(n.parse(0, "12ne").unwrap().values(), &[12, 2]);
        let two = Template::compile("x", "{n:int 10..99}{int}", lookup).unwrap();
        assert_eq!(two.parse(0, "123").unwrap().values(), &[12, 3]);
        let seat = Template::compile("x", "{signed}{seat}", lookup).unwrap();
        assert_eq!(seat.parse(0, "-3P2").unwrap().values(), &[-3, 1]);
    }

    #[test]
    fn adjacent_slots_that_could_be_read_two_ways_are_refused() {
        for text in [
            "{int}{int}",
            "{n:int 0..10}{int}",
            "{side}{int}{int}",
            "{side}{side}",
            "{seat}{int}",
            "{q:signed -3..3}{int}",
        ] {
            let e = Template::compile("x", text, lookup).unwrap_err();
            assert!(e.contains("touch with no text between them"), "{text}: {e}");
        }
    }

    #[test]
    fn a_range_may_be_relative_to_an_earlier_value() {
        let t = Template::compile(
            "move",
            "{from:file}{rank:int 1..8}{to:file from-1..from+1}{to_rank:int rank-1..rank+1}",
            lookup,
        )
        .unwrap();
        assert!(t.has_relative());
        assert_eq!(t.parse(0, "a7b6").unwrap().values(), &[0, 7, 1, 6]);
        assert_eq!(t.parse(0, "h1h2").unwrap().values(), &[7, 1, 7, 2]);
        for far in ["a7c6", "a7a5", "d4d6", "h1f1"] {
            assert!(t.parse(0, far).is_none(), "{far}");
        }
        assert!(t.check_values(&[0, 7, 1, 6]).is_ok());
        let e = t.check_values(&[0, 7, 2, 6]).unwrap_err();
        assert!(e.contains("value 2 does not fit file"), "{e}");
        // Every value the range can reach, within the type's.
        assert_eq!(t.bounds()[2], (0, 7));
        assert_eq!(t.bounds()[3], (0, 9));
        for (text, says) in [
            ("{a:int}{b:int a-1..c}", "earlier value's label"),
            ("{a:int}, {b:int a-1..4}", "both relative to the same"),
            ("{a:int}, {b:int a+1..a-1}", "must go upwards"),
            ("{a:int}, {b:int b..b+1}", "earlier value's label"),
        ] {
            let e = Template::compile("x", text, lookup).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
