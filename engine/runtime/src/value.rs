//! Values of compiled rules: [`Str`], the dynamic [`Value`] that stands in
//! where inference found no single type, and the conversions between typed
//! values and dynamic ones.

use crate::Fail;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// An immutable string. Literals cost nothing to copy; built strings are
/// shared. Compares by content, as Rhai's strings do.
#[derive(Clone)]
pub enum Str {
    Lit(&'static str),
    Rc(Rc<str>),
}

impl Str {
    #[inline]
    pub const fn lit(s: &'static str) -> Str {
        Str::Lit(s)
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            Str::Lit(s) => s,
            Str::Rc(s) => s,
        }
    }
}

impl Default for Str {
    fn default() -> Self {
        Str::Lit("")
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::Rc(s.into())
    }
}

impl From<&'static str> for Str {
    fn from(s: &'static str) -> Str {
        Str::Lit(s)
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        let (a, b) = (self.as_str(), other.as_str());
        std::ptr::eq(a, b) || a == b
    }
}

impl Eq for Str {}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub type ValueMap = BTreeMap<Str, Value>;

/// A value whose type is known only at run time.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Unit,
    Int(i64),
    Bool(bool),
    Str(Str),
    Arr(Vec<Value>),
    Map(ValueMap),
}

impl Value {
    /// Rhai's name of the type (`type_of`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Unit => "()",
            Value::Int(_) => "i64",
            Value::Bool(_) => "bool",
            Value::Str(_) => "string",
            Value::Arr(_) => "array",
            Value::Map(_) => "map",
        }
    }

    pub fn into_map(self) -> Result<ValueMap, Fail> {
        match self {
            Value::Map(m) => Ok(m),
            other => Err(Fail::new(format!("expected a map, found {}", other.type_name()))),
        }
    }

    pub fn has_key(&self, key: &Str) -> bool {
        matches!(self, Value::Map(m) if m.contains_key(key))
    }

    /// The value as JSON, as the interpreter serializes Rhai values.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Unit => serde_json::Value::Null,
            Value::Int(i) => (*i).into(),
            Value::Bool(b) => (*b).into(),
            Value::Str(s) => s.as_str().into(),
            Value::Arr(a) => serde_json::Value::Array(a.iter().map(Value::to_json).collect()),
            Value::Map(m) => {
                serde_json::Value::Object(m.iter().map(|(k, v)| (k.as_str().to_string(), v.to_json())).collect())
            }
        }
    }

    pub fn from_json(v: &serde_json::Value) -> Result<Value, Fail> {
        Ok(match v {
            serde_json::Value::Null => Value::Unit,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Int(
                n.as_i64()
                    .ok_or_else(|| Fail::new(format!("{n} is not a whole number")))?,
            ),
            serde_json::Value::String(s) => Value::Str(Str::from(s.clone())),
            serde_json::Value::Array(a) => Value::Arr(a.iter().map(Value::from_json).collect::<Result<_, _>>()?),
            serde_json::Value::Object(m) => Value::Map(
                m.iter()
                    .map(|(k, v)| Ok((Str::from(k.clone()), Value::from_json(v)?)))
                    .collect::<Result<_, Fail>>()?,
            ),
        })
    }
}

/// Rhai's `to_string`: the text a value prints as.
pub trait Text {
    fn push_text(&self, out: &mut String);
    /// The value itself when it is a string: `cat` joins two strings
    /// without formatting either.
    fn as_string(&self) -> Option<&Str> {
        None
    }
}

impl Text for i64 {
    fn push_text(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = write!(out, "{self}");
    }
}

impl Text for bool {
    fn push_text(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

impl Text for Str {
    fn push_text(&self, out: &mut String) {
        out.push_str(self.as_str());
    }

    fn as_string(&self) -> Option<&Str> {
        Some(self)
    }
}

impl Text for () {
    fn push_text(&self, _out: &mut String) {}
}

impl<T: ToValue> Text for Vec<T> {
    fn push_text(&self, out: &mut String) {
        self.to_value().push_text(out)
    }
}

impl<T: ToValue, const N: usize> Text for [T; N] {
    fn push_text(&self, out: &mut String) {
        self.to_value().push_text(out)
    }
}

impl Text for Value {
    fn push_text(&self, out: &mut String) {
        match self {
            Value::Unit => {}
            Value::Int(i) => i.push_text(out),
            Value::Bool(b) => b.push_text(out),
            Value::Str(s) => out.push_str(s.as_str()),
            Value::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    debug_text(v, out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push_str("#{");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&format!("{:?}: ", k.as_str()));
                    debug_text(v, out);
                }
                out.push('}');
            }
        }
    }

    fn as_string(&self) -> Option<&Str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Inside arrays and maps, Rhai quotes strings.
fn debug_text(v: &Value, out: &mut String) {
    match v {
        Value::Str(s) => out.push_str(&format!("{:?}", s.as_str())),
        Value::Unit => out.push_str("()"),
        other => other.push_text(out),
    }
}

/// The text of a value, as an owned string.
pub fn to_string(v: &impl Text) -> String {
    let mut s = String::new();
    v.push_text(&mut s);
    s
}

/// Typed values to dynamic ones. Generated records implement it too.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

impl ToValue for i64 {
    fn to_value(&self) -> Value {
        Value::Int(*self)
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

impl ToValue for Str {
    fn to_value(&self) -> Value {
        Value::Str(self.clone())
    }
}

impl ToValue for () {
    fn to_value(&self) -> Value {
        Value::Unit
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl<T: ToValue> ToValue for Vec<T> {
    fn to_value(&self) -> Value {
        Value::Arr(self.iter().map(ToValue::to_value).collect())
    }
}

/// Arrays the compiler kept fixed-size are arrays like any other once
/// dynamic.
impl<T: ToValue, const N: usize> ToValue for [T; N] {
    fn to_value(&self) -> Value {
        Value::Arr(self.iter().map(ToValue::to_value).collect())
    }
}

/// Dynamic values to typed ones, checked.
pub trait FromValue: Sized {
    fn from_value(v: Value) -> Result<Self, Fail>;
}

fn mismatch(want: &str, v: &Value) -> Fail {
    Fail::new(format!("expected {want}, found {}", v.type_name()))
}

impl FromValue for i64 {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Int(i) => Ok(i),
            other => Err(mismatch("a number", &other)),
        }
    }
}

impl FromValue for bool {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Bool(b) => Ok(b),
            other => Err(mismatch("true or false", &other)),
        }
    }
}

impl FromValue for Str {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Str(s) => Ok(s),
            other => Err(mismatch("a string", &other)),
        }
    }
}

impl FromValue for () {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Unit => Ok(()),
            other => Err(mismatch("()", &other)),
        }
    }
}

impl FromValue for Value {
    fn from_value(v: Value) -> Result<Self, Fail> {
        Ok(v)
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Arr(a) => a.into_iter().map(T::from_value).collect(),
            other => Err(mismatch("an array", &other)),
        }
    }
}

/// A fixed-size array from a dynamic one of exactly that length.
impl<T: FromValue, const N: usize> FromValue for [T; N] {
    fn from_value(v: Value) -> Result<Self, Fail> {
        match v {
            Value::Arr(a) if a.len() == N => {
                let items: Vec<T> = a.into_iter().map(T::from_value).collect::<Result<_, _>>()?;
                Ok(items
                    .try_into()
                    .unwrap_or_else(|_| unreachable!("the length was checked")))
            }
            Value::Arr(a) => Err(Fail::new(format!("expected an array of {N} items, found {}", a.len()))),
            other => Err(mismatch("an array", &other)),
        }
    }
}

/// A field a record must have.
pub fn take_field(m: &mut ValueMap, key: &'static str) -> Result<Value, Fail> {
    m.remove(key)
        .ok_or_else(|| Fail::new(format!("property '{key}' is missing")))
}
