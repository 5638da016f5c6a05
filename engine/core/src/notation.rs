//! Action notation: templates declared by the variant, such as
//! `"lock {part} {seat}.{tpart}"`, that turn compact [`Action`]s into
//! canonical text and back.
//!
//! A template is a sequence of literal text and typed slots. A slot's type is
//! an enumeration declared by the variant (its values are written as words,
//! stored as indices), `int` (a non-negative number without leading zeros),
//! `signed` (a number that may be negative, such as a hex board's axial
//! coordinate `-2`) or `seat` (written `P1`, `P2`, ..., stored 0-based).

use crate::state::{Action, MAX_ARGS};
use std::fmt::Write;

/// The type of one slot in a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotType {
    Enum {
        name: String,
        values: Vec<String>,
    },
    Int,
    /// A whole number that may be negative: `-3`, `0`, `12`.
    Signed,
    Seat,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Lit(String),
    Slot(SlotType),
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
        let normalized = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if normalized.is_empty() {
            return Err("an action's text cannot be empty".into());
        }
        let mut parts = Vec::new();
        let mut rest = normalized.as_str();
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let close = rest
                        .find('}')
                        .ok_or_else(|| format!("unclosed '{{' in action text {text:?}"))?;
                    let inner = &rest[1..close];
                    // `{name:type}` documents the value; only the type counts.
                    let ty = inner.rsplit(':').next().unwrap_or(inner).trim();
                    let slot = lookup(ty).ok_or_else(|| {
                        format!("unknown value type '{ty}' in action text {text:?} (expected int, signed, seat or one of the variant's [notation] enumerations)")
                    })?;
                    if let Some(Part::Slot(_)) = parts.last() {
                        return Err(format!(
                            "two values without text between them in {text:?}: they could not be told apart"
                        ));
                    }
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
                Part::Slot(slot) => Some(range(slot)),
                Part::Lit(_) => None,
            })
            .collect();
        Ok(Template {
            name: name.to_string(),
            text: normalized,
            parts,
            bounds,
        })
    }

    /// Number of values the template carries.
    #[inline]
    pub fn arity(&self) -> usize {
        self.bounds.len()
    }

    /// The slot types, in order.
    pub fn slots(&self) -> impl Iterator<Item = &SlotType> {
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
        if values.len() == self.bounds.len() && within(values, &self.bounds) {
            return Ok(());
        }
        self.explain_values(values)
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
        for (slot, &v) in self.slots().zip(values) {
            let (lo, hi) = range(slot);
            if !(lo..=hi).contains(&v) {
                return Err(format!(
                    "value {v} does not fit {} in action '{}'",
                    describe(slot),
                    self.name
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
                    match slot {
                        SlotType::Enum { values, .. } => {
                            out.push_str(values.get(v as usize).map(String::as_str).unwrap_or("?"))
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

/// The values a slot takes: actions hold 32-bit values.
fn range(slot: &SlotType) -> (i64, i64) {
    match slot {
        SlotType::Enum { values, .. } => (0, values.len() as i64 - 1),
        SlotType::Int | SlotType::Seat => (0, i32::MAX as i64),
        SlotType::Signed => (-(i32::MAX as i64), i32::MAX as i64),
    }
}

fn describe(slot: &SlotType) -> String {
    match slot {
        SlotType::Enum { name, values } => format!("{name} (0..{})", values.len()),
        SlotType::Int => "a number".into(),
        SlotType::Signed => "a signed number".into(),
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
        Part::Slot(SlotType::Enum { values: words, .. }) => {
            let first = text.as_bytes().first();
            for (i, w) in words.iter().enumerate() {
                if !w.is_empty() && w.as_bytes().first() != first {
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
        Part::Slot(SlotType::Int) => match_number(text, rest, values, 0),
        // A minus sign, then a number that is not 0 (no "-0"), or a number.
        Part::Slot(SlotType::Signed) => {
            if let Some(t) = text.strip_prefix('-') {
                let before = values.len();
                if match_number(t, rest, values, 0) && values[before] != 0 {
                    values[before] = -values[before];
                    return true;
                }
                values.truncate(before);
                false
            } else {
                match_number(text, rest, values, 0)
            }
        }
        Part::Slot(SlotType::Seat) => match text.strip_prefix('P') {
            Some(t) => match_number(t, rest, values, 1),
            None => false,
        },
    }
}

/// Matches a canonical number (no sign, no leading zero) minus `offset`.
fn match_number(text: &str, rest: &[Part], values: &mut Values, offset: i64) -> bool {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    // Try the longest number first, then shorter ones (backtracking).
    for len in (1..=digits.min(9)).rev() {
        let (num, t) = text.split_at(len);
        if len > 1 && num.starts_with('0') {
            continue;
        }
        let Ok(n) = num.parse::<i64>() else { continue };
        if n - offset < 0 {
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
        match name {
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
            .contains("told apart"));
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
}
