//! A small JSON value: event payloads are open data, and the core must read
//! them strictly without pulling a JSON library (and its float formatting)
//! into the wasm build. Numbers are `f64`, as in JS; objects keep key order.

use crate::core::error::Quoted;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::fmt;

mod parse;
pub use parse::{parse, set_number_parser};

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// The largest integer a JS number holds exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `a + b`, stopping at `MAX_SAFE_INTEGER`: a count or total never reaches JS
/// as an imprecise number. A total at 2^53 - 1 reads "at least this much".
pub fn safe_sum(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(MAX_SAFE_INTEGER as u64)
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative safe integer, as JS would store a timestamp or count.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Number(n) if n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER => Some(n as u64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// Builds an object from `(key, value)` pairs, skipping `None`s.
    pub fn object<I, K>(entries: I) -> Value
    where
        I: IntoIterator<Item = (K, Option<Value>)>,
        K: Into<String>,
    {
        Value::Object(entries.into_iter().filter_map(|(k, v)| v.map(|v| (k.into(), v))).collect())
    }

    /// A short description of the value's type, for error sentences.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Number(n as f64)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => s.serialize_f64(*n),
            Value::String(v) => s.serialize_str(v),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n as f64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::Number(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!("duplicate key {key}", key = Quoted(&key))));
            }
            entries.push((key, value));
        }
        Ok(Value::Object(entries))
    }
}

type NumberFormatter = fn(f64) -> String;

thread_local! {
    static NUMBER_TEXT: std::cell::Cell<Option<NumberFormatter>> = const { std::cell::Cell::new(None) };
}

/// Sets how non-integer numbers are written as text. The wasm bridge hands
/// in JS's `String(n)` so core's float formatting (about 20 KB) stays out of
/// the wasm; natively Rust's shortest round-trip formatting is the default.
pub fn set_number_formatter(format: NumberFormatter) {
    NUMBER_TEXT.with(|f| f.set(Some(format)));
}

/// A finite number as JSON text: integers by hand, others through the formatter.
pub fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e18 {
        return (n as i64).to_string();
    }
    match NUMBER_TEXT.with(|f| f.get()) {
        Some(format) => format(n),
        None => default_number_text(n),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn default_number_text(n: f64) -> String {
    n.to_string()
}

/// Without the bridge's formatter (never the case in the package): integers
/// only, so no float formatting is linked into the wasm.
#[cfg(target_arch = "wasm32")]
fn default_number_text(n: f64) -> String {
    (n.round() as i64).to_string()
}

impl Value {
    /// Compact JSON text (for model-visible text; not a general serializer).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out);
        out
    }

    /// Appends this value's JSON text to `out`; `false` when the text cannot
    /// say it exactly (a non-finite number or `-0`), so the caller takes
    /// another way.
    pub fn write_exact_json(&self, out: &mut String) -> bool {
        write_json(self, out)
    }
}

/// Writes `v`; whether every number was written exactly.
fn write_json(v: &Value, out: &mut String) -> bool {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if n.is_finite() && !(*n == 0.0 && n.is_sign_negative()) => out.push_str(&number_text(*n)),
        Value::Number(n) => {
            out.push_str(if n.is_finite() { "0" } else { "null" });
            return false;
        }
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            let mut exact = true;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                exact &= write_json(item, out);
            }
            out.push(']');
            return exact;
        }
        Value::Object(entries) => {
            let mut exact = true;
            out.push('{');
            for (i, (k, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                exact &= write_json(item, out);
            }
            out.push('}');
            return exact;
        }
    }
    true
}

/// A string as JSON text.
pub fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut run = 0;
    for (i, b) in s.bytes().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.push_str(&s[run..i]);
        run = i + 1;
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => out.push_str(&format!("\\u{:04x}", b)),
        }
    }
    out.push_str(&s[run..]);
    out.push('"');
}
