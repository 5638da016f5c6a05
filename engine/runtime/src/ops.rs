//! Rhai's semantics for the operations compiled code performs: checked
//! integer arithmetic (overflow is an error, `/` and `%` truncate), indexing
//! (negative indices count from the end), strings, arrays, and every
//! operation on dynamic values.

use crate::value::{Str, Text, ToValue, Value};
use crate::Fail;

pub type R<T> = Result<T, Fail>;

#[cold]
#[inline(never)]
fn overflow(what: &str, a: i64, b: i64) -> Fail {
    Fail::new(format!("Arithmetic overflow: {what}({a}, {b})"))
}

#[inline]
pub fn add(a: i64, b: i64) -> R<i64> {
    a.checked_add(b).ok_or_else(|| overflow("+", a, b))
}

#[inline]
pub fn sub(a: i64, b: i64) -> R<i64> {
    a.checked_sub(b).ok_or_else(|| overflow("-", a, b))
}

#[inline]
pub fn mul(a: i64, b: i64) -> R<i64> {
    a.checked_mul(b).ok_or_else(|| overflow("*", a, b))
}

#[inline]
pub fn div(a: i64, b: i64) -> R<i64> {
    if b == 0 {
        return Err(Fail::new(format!("Division by zero: {a} / {b}")));
    }
    a.checked_div(b).ok_or_else(|| overflow("/", a, b))
}

#[inline]
pub fn rem(a: i64, b: i64) -> R<i64> {
    if b == 0 {
        return Err(Fail::new(format!("Division by zero: {a} % {b}")));
    }
    a.checked_rem(b).ok_or_else(|| overflow("%", a, b))
}

pub fn pow(a: i64, b: i64) -> R<i64> {
    if b < 0 {
        return Err(Fail::new(format!("Negative power: {a} ** {b}")));
    }
    u32::try_from(b)
        .ok()
        .and_then(|e| a.checked_pow(e))
        .ok_or_else(|| overflow("**", a, b))
}

#[inline]
pub fn neg(a: i64) -> R<i64> {
    a.checked_neg().ok_or_else(|| overflow("-", 0, a))
}

pub fn neg_abs(a: i64) -> R<i64> {
    a.checked_abs().ok_or_else(|| overflow("abs", a, 0))
}

pub fn shl(a: i64, b: i64) -> R<i64> {
    u32::try_from(b)
        .ok()
        .and_then(|s| a.checked_shl(s))
        .ok_or_else(|| overflow("<<", a, b))
}

pub fn shr(a: i64, b: i64) -> R<i64> {
    u32::try_from(b)
        .ok()
        .and_then(|s| a.checked_shr(s))
        .ok_or_else(|| overflow(">>", a, b))
}

/// The position of index `i` in a list of `len`: negative counts from the end.
#[inline]
fn position(len: usize, i: i64) -> R<usize> {
    let p = if i < 0 { len as i64 + i } else { i };
    if p < 0 || p >= len as i64 {
        return Err(out_of_bounds(len, i));
    }
    Ok(p as usize)
}

#[cold]
#[inline(never)]
fn out_of_bounds(len: usize, i: i64) -> Fail {
    Fail::new(format!("Array index {i} out of bounds: 0 to {}", len as i64 - 1))
}

#[cold]
#[inline(never)]
fn property_not_found(key: &str) -> Fail {
    Fail::new(format!("Property not found: {key}"))
}

#[inline]
pub fn get<T>(v: &[T], i: i64) -> R<&T> {
    let p = position(v.len(), i)?;
    Ok(&v[p])
}

#[inline]
pub fn get_mut<T>(v: &mut [T], i: i64) -> R<&mut T> {
    let p = position(v.len(), i)?;
    Ok(&mut v[p])
}

/// A map property that may be absent (Rhai fails on reading a missing one).
#[inline]
pub fn opt<'a, T>(o: &'a Option<T>, key: &str) -> R<&'a T> {
    o.as_ref().ok_or_else(|| property_not_found(key))
}

#[inline]
pub fn opt_mut<'a, T>(o: &'a mut Option<T>, key: &str) -> R<&'a mut T> {
    o.as_mut().ok_or_else(|| property_not_found(key))
}

pub fn fail_ref<'a>(message: &str) -> R<&'a Value> {
    Err(Fail::new(message.to_string()))
}

// ----- strings ---------------------------------------------------------------

pub fn push_text(out: &mut String, v: &impl Text) {
    v.push_text(out)
}

pub fn to_text(v: &impl Text) -> Str {
    let mut s = String::new();
    v.push_text(&mut s);
    Str::from(s)
}

// ----- data size limits ----------------------------------------------------
//
// The sandbox's size limits (`Limits::max_string_size` and friends), checked
// where compiled code makes a string, an array or a map grow: without them a
// runaway script (`loop { s += s; }`) would exhaust memory long before its
// fuel ran out. The rules object sets them for its thread before each call
// (`set_data_limits`); the messages are the interpreter's.

thread_local! {
    static DATA_LIMITS: std::cell::Cell<(usize, usize, usize)> =
        const { std::cell::Cell::new((usize::MAX, usize::MAX, usize::MAX)) };
}

/// The size limits of strings (bytes), arrays (items) and maps (keys) for
/// the compiled code this thread runs next.
#[inline]
pub fn set_data_limits(string: usize, array: usize, map: usize) {
    DATA_LIMITS.with(|l| l.set((string, array, map)));
}

#[inline]
pub fn string_fits(bytes: usize) -> R<()> {
    let max = DATA_LIMITS.with(|l| l.get().0);
    if bytes > max {
        return Err(Fail::new(format!("a string grew past the limit of {max} bytes")));
    }
    Ok(())
}

#[inline]
pub fn array_fits(items: usize) -> R<()> {
    let max = DATA_LIMITS.with(|l| l.get().1);
    if items > max {
        return Err(Fail::new(format!("an array grew past the limit of {max} items")));
    }
    Ok(())
}

#[inline]
pub fn map_fits(keys: usize) -> R<()> {
    let max = DATA_LIMITS.with(|l| l.get().2);
    if keys > max {
        return Err(Fail::new(format!("a map grew past the limit of {max} keys")));
    }
    Ok(())
}

/// An interpolated string, once built.
pub fn text(s: String) -> R<Str> {
    string_fits(s.len())?;
    Ok(Str::from(s))
}

/// `a + b` where one side is a string.
pub fn cat(a: &impl Text, b: &impl Text) -> R<Str> {
    if let (Some(a), Some(b)) = (a.as_string(), b.as_string()) {
        return join(a, b);
    }
    let mut s = String::new();
    a.push_text(&mut s);
    b.push_text(&mut s);
    text(s)
}

/// Two strings joined (`s += "x"` in a script): one allocation, not a
/// growing `String` then a copy of it into the shared string; none when a
/// side is empty.
fn join(a: &Str, b: &Str) -> R<Str> {
    let (x, y) = (a.as_str(), b.as_str());
    let n = x.len() + y.len();
    string_fits(n)?;
    if y.is_empty() {
        return Ok(a.clone());
    }
    if x.is_empty() {
        return Ok(b.clone());
    }
    let mut buf = [0u8; 64];
    if n <= buf.len() {
        buf[..x.len()].copy_from_slice(x.as_bytes());
        buf[x.len()..n].copy_from_slice(y.as_bytes());
        // Always valid (two strings end to end); checked all the same.
        if let Ok(s) = std::str::from_utf8(&buf[..n]) {
            return Ok(Str::Rc(s.into()));
        }
    }
    let mut s = String::with_capacity(n);
    s.push_str(x);
    s.push_str(y);
    Ok(Str::from(s))
}

/// `push`: one more item, within the size limit.
pub fn arr_push<T>(v: &mut Vec<T>, x: T) -> R<()> {
    array_fits(v.len() + 1)?;
    v.push(x);
    Ok(())
}

pub fn str_len(s: &Str) -> i64 {
    s.as_str().chars().count() as i64
}

pub fn str_is_empty(s: &Str) -> bool {
    s.as_str().is_empty()
}

pub fn str_contains(s: &Str, part: &impl Text) -> bool {
    let mut p = String::new();
    part.push_text(&mut p);
    s.as_str().contains(&p)
}

pub fn str_index(s: &Str, i: i64) -> R<Str> {
    let chars: Vec<char> = s.as_str().chars().collect();
    let p = position(chars.len(), i)?;
    Ok(Str::from(chars[p].to_string()))
}

// ----- arrays ----------------------------------------------------------------

pub fn arr_len<T>(v: &[T]) -> i64 {
    v.len() as i64
}

pub fn arr_is_empty<T>(v: &[T]) -> bool {
    v.is_empty()
}

pub fn rec_len(v: &impl ToValue) -> i64 {
    match v.to_value() {
        Value::Map(m) => m.len() as i64,
        _ => 0,
    }
}

pub fn rec_is_empty(v: &impl ToValue) -> bool {
    rec_len(v) == 0
}

pub fn index_of<T: PartialEq>(v: &[T], x: &T) -> i64 {
    v.iter().position(|e| e == x).map_or(-1, |p| p as i64)
}

pub fn concat<T>(mut a: Vec<T>, b: Vec<T>) -> R<Vec<T>> {
    array_fits(a.len() + b.len())?;
    a.extend(b);
    Ok(a)
}

/// `shift()`: the first element. Rhai gives () for an empty array; the
/// compiled code needs a value of the element type, so it fails instead.
pub fn arr_shift<T>(v: &mut Vec<T>) -> R<T> {
    if v.is_empty() {
        return Err(Fail::new("shift() on an empty array"));
    }
    Ok(v.remove(0))
}

pub fn arr_pop<T>(v: &mut Vec<T>) -> R<T> {
    v.pop().ok_or_else(|| Fail::new("pop() on an empty array"))
}

pub fn arr_remove<T>(v: &mut Vec<T>, i: i64) -> R<T> {
    let p = position(v.len(), i)?;
    Ok(v.remove(p))
}

pub fn arr_insert<T>(v: &mut Vec<T>, i: i64, x: T) -> R<()> {
    array_fits(v.len() + 1)?;
    let p = if i < 0 {
        (v.len() as i64 + i).max(0) as usize
    } else {
        (i as usize).min(v.len())
    };
    v.insert(p, x);
    Ok(())
}

pub fn arr_truncate<T>(v: &mut Vec<T>, n: i64) {
    v.truncate(n.max(0) as usize);
}

/// `pad(n, x)`: copies of `x` added up to length `n`, within the size
/// limit; nothing when the array is already as long (or `n` is negative),
/// as in Rhai.
pub fn arr_pad<T: Clone>(v: &mut Vec<T>, n: i64, x: T) -> R<()> {
    let Ok(n) = usize::try_from(n) else {
        return Ok(());
    };
    if n > v.len() {
        array_fits(n)?;
        v.resize(n, x);
    }
    Ok(())
}

/// What a function given to `filter`, `some`, `all`, `index_of` or `find`
/// answered, as Rhai reads it: `true` keeps, anything else does not.
pub fn callback_true(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// What a comparison function given to `sort` answered, as Rhai reads it:
/// a number's sign, `true` for "before" and `false` for "after"; anything
/// else (or a failure) leaves the two as they are.
pub fn callback_order(v: Option<Value>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match v {
        Some(Value::Int(i)) => i.cmp(&0),
        Some(Value::Bool(true)) => Ordering::Less,
        Some(Value::Bool(false)) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// `sort(|a, b| ..)`: a stable merge sort by the script's comparison, as
/// Rhai's (std's stable sort) orders: for a comparison that is an order,
/// every stable sort gives the same result. Unlike std's, it never panics
/// on a comparison that is not an order (compiled rules abort on a panic).
pub fn sort_by_script<T: Clone, F: FnMut(&T, &T) -> std::cmp::Ordering>(v: &mut [T], cmp: &mut F) {
    if v.len() <= 1 {
        return;
    }
    let mid = v.len() / 2;
    sort_by_script(&mut v[..mid], cmp);
    sort_by_script(&mut v[mid..], cmp);
    let left = v[..mid].to_vec();
    let right = v[mid..].to_vec();
    let (mut i, mut j) = (0, 0);
    for slot in v.iter_mut() {
        // Equal elements: the left one first (stable).
        let take_right = i == left.len() || (j < right.len() && cmp(&right[j], &left[i]) == std::cmp::Ordering::Less);
        if take_right {
            *slot = right[j].clone();
            j += 1;
        } else {
            *slot = left[i].clone();
            i += 1;
        }
    }
}

/// Element types `sort()` orders, as Rhai does: numbers, strings and
/// booleans; an array of dynamic values only when all are of one of those
/// kinds (with Rhai's messages otherwise).
pub trait Sort: Sized {
    fn sort_all(v: &mut [Self]) -> R<()>;
}

impl Sort for i64 {
    fn sort_all(v: &mut [Self]) -> R<()> {
        v.sort_unstable();
        Ok(())
    }
}

impl Sort for bool {
    fn sort_all(v: &mut [Self]) -> R<()> {
        v.sort_unstable();
        Ok(())
    }
}

impl Sort for Str {
    fn sort_all(v: &mut [Self]) -> R<()> {
        v.sort();
        Ok(())
    }
}

impl<T> Sort for Vec<T> {
    fn sort_all(v: &mut [Self]) -> R<()> {
        if v.len() <= 1 {
            return Ok(());
        }
        Err(Fail::new("Function not found: elements of array cannot be sorted"))
    }
}

impl<T, const N: usize> Sort for [T; N] {
    fn sort_all(v: &mut [Self]) -> R<()> {
        if v.len() <= 1 {
            return Ok(());
        }
        Err(Fail::new("Function not found: elements of array cannot be sorted"))
    }
}

impl Sort for Value {
    fn sort_all(v: &mut [Self]) -> R<()> {
        if v.len() <= 1 {
            return Ok(());
        }
        let kind = std::mem::discriminant(&v[0]);
        if v.iter().any(|x| std::mem::discriminant(x) != kind) {
            return Err(Fail::new(
                "Function not found: elements of different types cannot be sorted",
            ));
        }
        match &v[0] {
            Value::Int(_) | Value::Str(_) | Value::Bool(_) => {
                v.sort_by(|a, b| match (a, b) {
                    (Value::Int(x), Value::Int(y)) => x.cmp(y),
                    (Value::Str(x), Value::Str(y)) => x.cmp(y),
                    (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
                    _ => std::cmp::Ordering::Equal,
                });
                Ok(())
            }
            Value::Unit => Ok(()),
            other => Err(Fail::new(format!(
                "Function not found: elements of {} cannot be sorted",
                other.type_name()
            ))),
        }
    }
}

pub fn arr_sort<T: Sort>(v: &mut [T]) -> R<()> {
    T::sort_all(v)
}

// ----- dynamic values ----------------------------------------------------------

/// The binary operators of the scripts (the compiler's too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl Op {
    /// The operator written `s` in a script.
    pub fn from_syntax(s: &str) -> Option<Op> {
        Some(match s {
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" => Op::Div,
            "%" => Op::Rem,
            "**" => Op::Pow,
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "&" => Op::BitAnd,
            "|" => Op::BitOr,
            "^" => Op::BitXor,
            "<<" => Op::Shl,
            ">>" => Op::Shr,
            _ => return None,
        })
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// How a script writes the operator.
    pub fn syntax(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Pow => "**",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::BitAnd => "&",
            Op::BitOr => "|",
            Op::BitXor => "^",
            Op::Shl => "<<",
            Op::Shr => ">>",
        }
    }
}

pub fn truthy(v: Value) -> R<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(Fail::new(format!(
            "a condition must be true or false, not {}",
            other.type_name()
        ))),
    }
}

/// The elements a `for` loop over a dynamic value visits.
pub fn viter(v: Value) -> R<Vec<Value>> {
    match v {
        Value::Arr(items) => Ok(items),
        other => Err(Fail::new(format!(
            "a for loop needs an array, not {}",
            other.type_name()
        ))),
    }
}

pub fn vneg(v: Value) -> R<Value> {
    match v {
        Value::Int(i) => Ok(Value::Int(neg(i)?)),
        other => Err(Fail::new(format!("cannot negate {}", other.type_name()))),
    }
}

pub fn vcompare(op: Op, a: &Value, b: &Value) -> R<bool> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match op {
        Op::Eq => Ok(a == b),
        Op::Ne => Ok(a != b),
        _ => {
            let Some(o) = ord else {
                return Err(Fail::new(format!(
                    "Function not found: {} ({}, {})",
                    op.syntax(),
                    a.type_name(),
                    b.type_name()
                )));
            };
            Ok(match op {
                Op::Lt => o == Ordering::Less,
                Op::Le => o != Ordering::Greater,
                Op::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            })
        }
    }
}

pub fn varith(op: Op, a: Value, b: Value) -> R<Value> {
    Ok(match (op, a, b) {
        (Op::Add, Value::Str(x), y) => Value::Str(cat(&x, &y)?),
        (Op::Add, x, Value::Str(y)) => Value::Str(cat(&x, &y)?),
        (Op::Add, Value::Arr(x), Value::Arr(y)) => Value::Arr(concat(x, y)?),
        (op, Value::Int(x), Value::Int(y)) => Value::Int(match op {
            Op::Add => add(x, y)?,
            Op::Sub => sub(x, y)?,
            Op::Mul => mul(x, y)?,
            Op::Div => div(x, y)?,
            Op::Rem => rem(x, y)?,
            Op::Pow => pow(x, y)?,
            Op::BitAnd => x & y,
            Op::BitOr => x | y,
            Op::BitXor => x ^ y,
            Op::Shl => shl(x, y)?,
            Op::Shr => shr(x, y)?,
            _ => unreachable!("comparisons go to vcompare"),
        }),
        (op, x, y) => {
            return Err(Fail::new(format!(
                "Function not found: {} ({}, {})",
                op.syntax(),
                x.type_name(),
                y.type_name()
            )))
        }
    })
}

pub fn vin(needle: &Value, hay: &Value) -> R<bool> {
    match hay {
        Value::Arr(a) => Ok(a.contains(needle)),
        Value::Map(m) => match needle {
            Value::Str(k) => Ok(m.contains_key(k)),
            other => Err(Fail::new(format!(
                "a map's keys are strings, not {}",
                other.type_name()
            ))),
        },
        Value::Str(s) => Ok(str_contains(s, needle)),
        other => Err(Fail::new(format!(
            "'in' needs an array, a map or a string, not {}",
            other.type_name()
        ))),
    }
}

pub fn vfield<'a>(v: &'a Value, key: &str) -> R<&'a Value> {
    match v {
        Value::Map(m) => m
            .get(key)
            .ok_or_else(|| Fail::new(format!("Property not found: {key}"))),
        other => Err(Fail::new(format!("{} has no property '{key}'", other.type_name()))),
    }
}

pub fn vfield_mut<'a>(v: &'a mut Value, key: &str) -> R<&'a mut Value> {
    match v {
        Value::Map(m) => m
            .get_mut(key)
            .ok_or_else(|| Fail::new(format!("Property not found: {key}"))),
        other => Err(Fail::new(format!("{} has no property '{key}'", other.type_name()))),
    }
}

/// `map.key = value` on a dynamic map: adds the key when missing.
pub fn vset_field(v: &mut Value, key: &'static str, value: impl ToValue) -> R<()> {
    match v {
        Value::Map(m) => {
            let key = Str::lit(key);
            if !m.contains_key(&key) {
                map_fits(m.len() + 1)?;
            }
            m.insert(key, value.to_value());
            Ok(())
        }
        other => Err(Fail::new(format!("{} has no property '{key}'", other.type_name()))),
    }
}

pub fn vindex<'a>(v: &'a Value, i: &Value) -> R<&'a Value> {
    match (v, i) {
        (Value::Arr(a), Value::Int(i)) => get(a, *i),
        (Value::Map(m), Value::Str(k)) => m.get(k).ok_or_else(|| Fail::new(format!("Property not found: {k}"))),
        (v, i) => Err(Fail::new(format!(
            "cannot index {} by {}",
            v.type_name(),
            i.type_name()
        ))),
    }
}

pub fn vindex_mut<'a>(v: &'a mut Value, i: &Value) -> R<&'a mut Value> {
    match (v, i) {
        (Value::Arr(a), Value::Int(i)) => get_mut(a, *i),
        (Value::Map(m), Value::Str(k)) => {
            if !m.contains_key(k) {
                map_fits(m.len() + 1)?;
            }
            Ok(m.entry(k.clone()).or_default())
        }
        (v, i) => Err(Fail::new(format!(
            "cannot index {} by {}",
            v.type_name(),
            i.type_name()
        ))),
    }
}

/// A built-in method on a dynamic value.
pub fn vmethod(v: &Value, name: &str, args: Vec<Value>) -> R<Value> {
    Ok(match (name, v, args.as_slice()) {
        ("len", Value::Arr(a), []) => Value::Int(a.len() as i64),
        ("len", Value::Map(m), []) => Value::Int(m.len() as i64),
        ("len", Value::Str(s), []) => Value::Int(str_len(s)),
        ("is_empty", Value::Arr(a), []) => Value::Bool(a.is_empty()),
        ("is_empty", Value::Map(m), []) => Value::Bool(m.is_empty()),
        ("is_empty", Value::Str(s), []) => Value::Bool(s.as_str().is_empty()),
        ("contains", hay, [needle]) => Value::Bool(vin(needle, hay)?),
        ("index_of", Value::Arr(a), [x]) => Value::Int(index_of(a, x)),
        ("to_string", v, []) => Value::Str(to_text(v)),
        ("type_of", v, []) => Value::Str(Str::lit(v.type_name())),
        ("sign", Value::Int(i), []) => Value::Int(i.signum()),
        ("abs", Value::Int(i), []) => Value::Int(neg_abs(*i)?),
        _ => {
            return Err(Fail::new(format!(
                "Function not found: {name} ({}{})",
                v.type_name(),
                args.iter().map(|a| format!(", {}", a.type_name())).collect::<String>()
            )))
        }
    })
}

/// A mutating built-in method on a dynamic value.
pub fn vmethod_mut(v: &mut Value, name: &str, args: Vec<Value>) -> R<Value> {
    let type_name = v.type_name();
    match (name, v, args) {
        ("push", Value::Arr(a), mut x) if x.len() == 1 => {
            arr_push(a, x.remove(0))?;
            Ok(Value::Unit)
        }
        ("shift", Value::Arr(a), x) if x.is_empty() => Ok(if a.is_empty() { Value::Unit } else { a.remove(0) }),
        ("pop", Value::Arr(a), x) if x.is_empty() => Ok(a.pop().unwrap_or_default()),
        ("clear", Value::Arr(a), x) if x.is_empty() => {
            a.clear();
            Ok(Value::Unit)
        }
        ("sort", Value::Arr(a), x) if x.is_empty() => {
            arr_sort(a)?;
            Ok(Value::Unit)
        }
        ("reverse", Value::Arr(a), x) if x.is_empty() => {
            a.reverse();
            Ok(Value::Unit)
        }
        ("truncate", Value::Arr(a), x) if x.len() == 1 => match &x[0] {
            Value::Int(n) => {
                arr_truncate(a, *n);
                Ok(Value::Unit)
            }
            other => Err(Fail::new(format!("truncate takes a length, not {}", other.type_name()))),
        },
        ("insert", Value::Arr(a), mut x) if x.len() == 2 => match x[0] {
            Value::Int(i) => {
                arr_insert(a, i, x.remove(1))?;
                Ok(Value::Unit)
            }
            ref other => Err(Fail::new(format!("insert takes an index, not {}", other.type_name()))),
        },
        ("pad", Value::Arr(a), mut x) if x.len() == 2 => match x[0] {
            Value::Int(n) => {
                arr_pad(a, n, x.remove(1))?;
                Ok(Value::Unit)
            }
            ref other => Err(Fail::new(format!("pad takes a length, not {}", other.type_name()))),
        },
        ("remove", Value::Arr(a), x) if x.len() == 1 => match &x[0] {
            Value::Int(i) => Ok(arr_remove(a, *i).unwrap_or_default()),
            other => Err(Fail::new(format!("remove takes an index, not {}", other.type_name()))),
        },
        (name, _, args) => Err(Fail::new(format!(
            "Function not found: {name} ({type_name}{})",
            args.iter().map(|a| format!(", {}", a.type_name())).collect::<String>()
        ))),
    }
}

// ----- generic natives -----------------------------------------------------------

pub fn distinct(v: &[i64]) -> i64 {
    rulesmith_core::natives::distinct(v)
}

pub fn at_least(v: &[i64], min: i64) -> Vec<i64> {
    rulesmith_core::natives::at_least(v, min)
}

// The grid natives' checks and messages are core's (shared with the
// interpreter); here only the shapes change: a slot is a `[column, row]`
// pair on the stack (one allocation for the whole list), a placement is
// `[columns, rows]`.

pub fn grid_slots(cols: &[i64], rows: &[i64], mover: i64) -> R<Vec<[i64; 2]>> {
    let mut out = Vec::with_capacity((2 * cols.len() + 1).pow(2));
    rulesmith_core::natives::for_each_grid_slot(cols, rows, mover, |c, r| out.push([c, r])).map_err(Fail::new)?;
    Ok(out)
}

pub fn grid_place(cols: &[i64], rows: &[i64], mover: i64, col: i64, row: i64) -> R<[Vec<i64>; 2]> {
    let (c, r) = rulesmith_core::natives::grid_place(cols, rows, mover, col, row).map_err(Fail::new)?;
    Ok([c, r])
}

/// `grid_place` whose result replaces its own columns and rows (see the
/// compiler's `placed_in_place`): the vectors are updated in place.
pub fn grid_place_in(cols: &mut [i64], rows: &mut [i64], mover: i64, col: i64, row: i64) -> R<()> {
    rulesmith_core::natives::grid_place_in(cols, rows, mover, col, row).map_err(Fail::new)
}

pub fn grid_compact(cols: &[i64], rows: &[i64]) -> R<[Vec<i64>; 2]> {
    let (c, r) = rulesmith_core::natives::grid_compact(cols, rows).map_err(Fail::new)?;
    Ok([c, r])
}

/// A board native's `[x, y]` pairs (core's vectors) as fixed-size pairs.
pub fn fixed_pairs(pairs: Vec<Vec<i64>>) -> Vec<[i64; 2]> {
    pairs.into_iter().map(|p| [p[0], p[1]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_dynamic_values_follows_rhai() {
        let mut v = vec![Value::Int(3), Value::Int(-1), Value::Int(2)];
        arr_sort(&mut v).unwrap();
        assert_eq!(v, vec![Value::Int(-1), Value::Int(2), Value::Int(3)]);
        let mut mixed = vec![Value::Int(1), Value::Str(Str::lit("a"))];
        let e = arr_sort(&mut mixed).unwrap_err();
        assert!(e.message.contains("different types cannot be sorted"), "{}", e.message);
        let mut arrays = vec![vec![2i64], vec![1]];
        assert!(arr_sort(&mut arrays).unwrap_err().message.contains("elements of array"));
        // One element: nothing to compare, as in Rhai.
        let mut one = vec![vec![1i64]];
        assert!(arr_sort(&mut one).is_ok());
    }

    #[test]
    fn strings_arrays_and_maps_stop_at_their_size_limits() {
        set_data_limits(8, 3, 2);
        assert_eq!(cat(&Str::lit("abcd"), &Str::lit("efgh")).unwrap().as_str(), "abcdefgh");
        let e = cat(&Str::lit("abcd"), &Str::lit("efghi")).unwrap_err();
        assert_eq!(e.message, "a string grew past the limit of 8 bytes");
        let mut v = vec![1i64, 2, 3];
        assert!(arr_push(&mut v, 4).unwrap_err().message.contains("limit of 3 items"));
        assert!(arr_insert(&mut v, 0, 4).is_err());
        assert_eq!(v, vec![1, 2, 3], "a refused push changes nothing");
        assert!(concat(vec![1i64, 2], vec![3, 4]).is_err());
        let mut m = Value::Map(crate::value::ValueMap::new());
        vset_field(&mut m, "a", 1i64).unwrap();
        *vindex_mut(&mut m, &Value::Str(Str::lit("b"))).unwrap() = Value::Int(2);
        // An existing key is no growth; a third one is.
        vset_field(&mut m, "a", 3i64).unwrap();
        let e = vset_field(&mut m, "c", 1i64).unwrap_err();
        assert_eq!(e.message, "a map grew past the limit of 2 keys");
        assert!(varith(Op::Add, Value::Str(Str::lit("abcdefgh")), Value::Int(1)).is_err());
        set_data_limits(usize::MAX, usize::MAX, usize::MAX);
    }

    /// Two strings join without formatting: short, long, one side empty,
    /// a string inside a dynamic value; the same text as the general path.
    #[test]
    fn joining_two_strings_gives_the_text_of_both() {
        let long = "x".repeat(70);
        let cases = [
            ("ab", "cd"),
            ("", "p"),
            ("pb", ""),
            ("", ""),
            ("é", "ü"),
            (long.as_str(), "y"),
        ];
        for (a, b) in cases {
            let (sa, sb) = (Str::from(a.to_string()), Str::from(b.to_string()));
            let joined = cat(&sa, &sb).unwrap();
            assert_eq!(joined.as_str(), format!("{a}{b}"));
            let dynamic = cat(&Value::Str(sa.clone()), &sb).unwrap();
            assert_eq!(dynamic, joined);
        }
        // Not both strings: the general path, as before.
        assert_eq!(cat(&Str::lit("n"), &3i64).unwrap().as_str(), "n3");
        assert_eq!(cat(&Value::Int(1), &Str::lit("x")).unwrap().as_str(), "1x");
    }

    #[test]
    fn a_fixed_size_array_reads_prints_and_converts_as_a_vector_does() {
        use crate::value::{to_string, FromValue};
        let fixed = [Str::lit("first"), Str::lit("last")];
        let vector = vec![Str::lit("first"), Str::lit("last")];
        assert_eq!(to_string(&fixed), "[\"first\", \"last\"]");
        assert_eq!(to_string(&fixed), to_string(&vector));
        assert_eq!(fixed.to_value(), vector.to_value());
        // Rhai's indexing and messages on either.
        assert_eq!(get(&fixed, -1).unwrap().as_str(), "last");
        let (a, b) = (get(&fixed, 2).unwrap_err(), get(&vector, 2).unwrap_err());
        assert_eq!(a.message, "Array index 2 out of bounds: 0 to 1");
        assert_eq!(a.message, b.message);
        assert_eq!(index_of(&fixed, &Str::lit("last")), 1);
        assert_eq!(arr_len(&fixed), 2);
        // From a dynamic array: only one of the right length.
        let two = Value::Arr(vec![Value::Int(3), Value::Int(4)]);
        assert_eq!(<[i64; 2]>::from_value(two).unwrap(), [3, 4]);
        let e = <[i64; 2]>::from_value(Value::Arr(vec![Value::Int(3)])).unwrap_err();
        assert_eq!(e.message, "expected an array of 2 items, found 1");
        let mut pairs = [[2i64, 1], [1, 2]];
        assert!(arr_sort(&mut pairs).unwrap_err().message.contains("elements of array"));
    }

    #[test]
    fn grid_slots_are_fixed_size_pairs_of_the_shared_grid() {
        let (cols, rows) = ([0i64, 1], [0i64, 0]);
        let slots = grid_slots(&cols, &rows, 0).unwrap();
        let shared = rulesmith_core::natives::grid_slots(&cols, &rows, 0).unwrap();
        assert!(!slots.is_empty());
        assert_eq!(slots, shared.iter().map(|&(c, r)| [c, r]).collect::<Vec<_>>());
        let [c, r] = grid_compact(&cols, &rows).unwrap();
        assert_eq!((c.len(), r.len()), (2, 2));
        assert!(grid_slots(&cols, &rows[..1], 0).is_err());
        assert_eq!(fixed_pairs(vec![vec![1, 2], vec![3, 4]]), vec![[1, 2], [3, 4]]);
    }

    #[test]
    fn a_for_loop_over_a_dynamic_value_needs_an_array() {
        assert_eq!(viter(Value::Arr(vec![Value::Int(1)])).unwrap(), vec![Value::Int(1)]);
        assert!(viter(Value::Int(3))
            .unwrap_err()
            .message
            .contains("needs an array, not i64"));
    }

    #[test]
    fn pad_grows_to_the_length_asked_and_never_shrinks() {
        let mut v = vec![1];
        arr_pad(&mut v, 3, 0).unwrap();
        assert_eq!(v, [1, 0, 0]);
        arr_pad(&mut v, 2, 9).unwrap();
        arr_pad(&mut v, -1, 9).unwrap();
        assert_eq!(v, [1, 0, 0]);
    }

    #[test]
    fn a_script_sort_is_stable_and_survives_a_comparison_that_is_no_order() {
        let mut words = vec!["ccc", "a", "bb", "d", "ee"];
        sort_by_script(&mut words, &mut |a: &&str, b: &&str| a.len().cmp(&b.len()));
        assert_eq!(words, ["a", "d", "bb", "ee", "ccc"]);
        // "Always before": no order at all, and still no panic.
        let mut v: Vec<i64> = (0..50).rev().collect();
        sort_by_script(&mut v, &mut |_: &i64, _: &i64| std::cmp::Ordering::Less);
        assert_eq!(v.len(), 50);
        assert_eq!(callback_order(Some(Value::Bool(true))), std::cmp::Ordering::Less);
        assert_eq!(callback_order(Some(Value::Int(-4))), std::cmp::Ordering::Less);
        assert_eq!(callback_order(None), std::cmp::Ordering::Equal);
        assert!(callback_true(&Value::Bool(true)) && !callback_true(&Value::Int(1)));
    }
}
