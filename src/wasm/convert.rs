//! Conversions between JS values and core types.
//!
//! Input from JS is untrusted: it may be a Proxy, have throwing getters, be
//! cyclic or absurdly deep. Every read of a JS value here therefore goes
//! through an import declared with `catch` (or a check that cannot throw),
//! so a JS exception never unwinds through WebAssembly frames, and nesting is
//! bounded so the small wasm stack cannot overflow. (serde-wasm-bindgen's
//! deserializer reads with non-catching imports, which is why it is not used
//! for input.) Output objects are built fresh, with optional fields absent.

use super::error::invalid;
use crate::core::catalog::CatalogEntry;
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::json::{Value, MAX_SAFE_INTEGER};
use crate::core::limits::{MAX_ID_BYTES, MAX_NESTING, MAX_READ_BYTES};
use crate::core::listing::{FullName, PathStack, Row};
use crate::core::name::AgentRef;
use js_sys::{Array, JsString, Object, Reflect};
use std::fmt;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Deepest nesting accepted in JS data (payloads, options).
pub const MAX_DEPTH: usize = MAX_NESTING;
/// Longest plain string argument (labels, provider and tool names, references),
/// in UTF-16 code units; content, ids and directories have their own limits.
pub const MAX_STRING_ARG: u32 = 1 << 20;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(value: &JsValue) -> std::result::Result<bool, JsValue>;
    /// A genuine array copy of an array(-like): reading it afterwards cannot throw.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(value: &JsValue) -> std::result::Result<Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(value: &JsValue) -> std::result::Result<Array, JsValue>;
    /// `String(n)`: JS formats non-integers, so core's float formatting
    /// (about 20 KB) stays out of the wasm. Cannot throw for a number.
    #[wasm_bindgen(js_name = String)]
    pub(crate) fn number_text(n: f64) -> String;
    /// `Number(text)` for JSON number text (see [`crate::core::json::set_number_parser`]).
    #[wasm_bindgen(js_name = Number)]
    fn number_of(text: &str) -> f64;
}

/// A non-integer JSON number through JS, so Rust's float parsing stays out of the wasm.
pub(crate) fn number_value(text: &str) -> Option<f64> {
    Some(number_of(text)).filter(|n| n.is_finite())
}

#[wasm_bindgen(module = "/src/wasm/js/error.js")]
extern "C" {
    /// Whether a JS string is well-formed UTF-16 (no lone surrogate). Never
    /// throws; `catch` gives it a shim, so `settle` stays this snippet's one
    /// direct import (a second makes bundlers warn "Duplicate key").
    #[wasm_bindgen(js_name = isWellFormed, catch)]
    fn is_well_formed_js(value: &JsString) -> Result<bool, JsValue>;
}

fn is_well_formed(value: &JsString) -> bool {
    is_well_formed_js(value).unwrap_or(false)
}

/// Why JS data was refused: a code and the rest of a sentence that starts
/// with the value's name (`.a[2] is a function, which is not JSON data`).
#[derive(Debug)]
pub struct Refused {
    pub code: ErrorCode,
    pub fragment: String,
}

impl Refused {
    fn shape(fragment: String) -> Refused {
        Refused { code: ErrorCode::InvalidArgument, fragment }
    }

    /// The error for the value named `what`.
    pub fn error(self, what: &str) -> SubagentError {
        SubagentError::new(self.code, format!("{what}{}", self.fragment))
    }

    /// As [`Refused::error`], but a shape error takes `code` (a limit stays `LIMIT_EXCEEDED`).
    pub fn error_as(self, code: ErrorCode, what: &str) -> SubagentError {
        let code = if self.code == ErrorCode::LimitExceeded { self.code } else { code };
        SubagentError::new(code, format!("{what}{}", self.fragment))
    }

    fn prefixed(self, segment: String) -> Refused {
        Refused { code: self.code, fragment: segment + &self.fragment }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fragment)
    }
}

/// How much JS data one conversion may copy into the heap, measured as
/// [`crate::core::limits::json_size`] counts it, and the limit that sets it.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub bytes: usize,
    /// The limit's name for the sentence (`promptBytes`, ...).
    pub limit: &'static str,
    /// Refuse strings that are not well-formed UTF-16 (ids, stored data);
    /// otherwise a lone surrogate becomes U+FFFD.
    pub strict: bool,
}

impl Budget {
    pub const fn new(bytes: usize, limit: &'static str) -> Budget {
        Budget { bytes, limit, strict: true }
    }

    /// The same budget, converting lone surrogates to U+FFFD instead of refusing them.
    pub const fn lenient(self) -> Budget {
        Budget { strict: false, ..self }
    }

    fn over(&self, detail: String) -> Refused {
        Refused {
            code: ErrorCode::LimitExceeded,
            fragment: format!(" {detail}, over the limit {} ({} bytes)", self.limit, self.bytes),
        }
    }
}

/// What a conversion has left to spend.
struct Meter {
    budget: Budget,
    left: usize,
}

impl Meter {
    fn new(budget: Budget) -> Meter {
        Meter { budget, left: budget.bytes }
    }

    fn spend(&mut self, bytes: usize) -> std::result::Result<(), Refused> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(self.budget.over("is larger".into())),
        }?;
        Self::heap(bytes)
    }

    /// Whether a copy of `bytes` fits the module's heap limit (`heapBytes`).
    fn heap(bytes: usize) -> std::result::Result<(), Refused> {
        use crate::core::heap;
        if heap::fits(bytes) {
            return Ok(());
        }
        Err(Refused { code: ErrorCode::LimitExceeded, fragment: format!(" {}", heap::over(bytes)) })
    }
}

/// A short description of a JS value for an error sentence ("42", "null", "an object", `"text"`).
pub fn describe(value: &JsValue) -> String {
    if value.is_undefined() {
        "undefined".into()
    } else if value.is_null() {
        "null".into()
    } else if let Some(b) = value.as_bool() {
        b.to_string()
    } else if let Some(n) = value.as_f64() {
        format_number(n)
    } else if value.is_string() {
        let s: &JsString = value.unchecked_ref();
        let len = s.length();
        if len > 64 {
            let head: String = s.slice(0, 64).into();
            format!("{}… ({len} characters)", Quoted(&head))
        } else {
            Quoted(&String::from(s)).to_string()
        }
    } else if value.is_function() {
        "a function".into()
    } else if value.is_bigint() {
        "a bigint".into()
    } else if value.is_symbol() {
        "a symbol".into()
    } else if is_array(value).unwrap_or(false) {
        "an array".into()
    } else {
        "an object".into()
    }
}

fn format_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if n.fract() == 0.0 && n.abs() < 9.0e18 {
        (n as i64).to_string()
    } else {
        number_text(n)
    }
}

/// Whether a value is an object or a function (something with properties).
pub fn is_objectish(value: &JsValue) -> bool {
    value.is_object() || value.is_function()
}

/// Reads one property; a throwing getter or Proxy trap becomes `INVALID_ARGUMENT`.
pub fn get(target: &JsValue, key: &str, what: &str) -> Result<JsValue> {
    Reflect::get(target, &JsValue::from_str(key))
        .map_err(|e| invalid(format!("{what}.{key} could not be read ({})", super::error::describe_thrown(&e))))
}

/// A JS string copied into the heap only when it fits `max_bytes` of UTF-8:
/// its length (UTF-16 code units, each at least one UTF-8 byte) is checked
/// before anything is copied. `strict` refuses a lone surrogate, which a
/// plain conversion would silently turn into U+FFFD.
fn bounded(s: &JsString, max_bytes: usize, strict: bool) -> std::result::Result<String, BoundFailure> {
    let units = s.length() as usize;
    if units > max_bytes {
        return Err(BoundFailure::TooLong { units });
    }
    let text = String::from(s);
    if text.len() > max_bytes {
        return Err(BoundFailure::TooLong { units });
    }
    if strict && text.contains('\u{FFFD}') && !is_well_formed(s) {
        return Err(BoundFailure::IllFormed);
    }
    Ok(text)
}

enum BoundFailure {
    TooLong { units: usize },
    IllFormed,
}

const ILL_FORMED: &str = " is not well-formed Unicode (it holds a lone surrogate)";

/// A string value of at most `max_bytes` UTF-8 bytes; `None` when it is not a string.
pub fn bounded_string(
    value: &JsValue,
    max_bytes: usize,
    limit: &str,
    strict: bool,
) -> std::result::Result<Option<String>, Refused> {
    if !value.is_string() {
        return Ok(None);
    }
    bounded(value.unchecked_ref(), max_bytes, strict).map(Some).map_err(|f| match f {
        BoundFailure::TooLong { units } => Refused {
            code: ErrorCode::LimitExceeded,
            fragment: format!(" is a string of {units} characters, over the limit {limit} ({max_bytes} bytes)"),
        },
        BoundFailure::IllFormed => Refused::shape(ILL_FORMED.into()),
    })
}

/// A string argument (at most [`MAX_STRING_ARG`] characters; lone surrogates become U+FFFD).
pub fn string_arg(value: &JsValue, what: &str) -> Result<String> {
    if !value.is_string() {
        return Err(invalid(format!("{what} must be a string, not {}", describe(value))));
    }
    let s: &JsString = value.unchecked_ref();
    let len = s.length();
    if len > MAX_STRING_ARG {
        return Err(SubagentError::new(
            ErrorCode::LimitExceeded,
            format!("{what} is {len} characters long; the limit is {MAX_STRING_ARG}"),
        ));
    }
    Ok(s.into())
}

/// A non-empty, well-formed string argument of at most [`MAX_ID_BYTES`] (a Session or message id).
pub fn id_arg(value: &JsValue, what: &str) -> Result<String> {
    if !value.is_string() {
        return Err(invalid(format!("{what} must be a string, not {}", describe(value))));
    }
    let id = bounded_string(value, MAX_ID_BYTES, "idBytes", true).map_err(|r| r.error(what))?.unwrap_or_default();
    if id.is_empty() {
        return Err(invalid(format!("{what} must be a non-empty string, not \"\"")));
    }
    Ok(id)
}

/// A directory argument: a string without NUL of at most `cwdBytes`.
pub fn cwd_arg(value: &JsValue, what: &str) -> Result<String> {
    if !value.is_string() {
        return Err(invalid(format!("{what} must be a string, not {}", describe(value))));
    }
    let max = crate::core::limits::MAX_CWD_BYTES;
    let path = bounded_string(value, max, "cwdBytes", true).map_err(|r| r.error(what))?.unwrap_or_default();
    crate::core::path::check_text(what, &path)?;
    Ok(path)
}

/// An options bag: `None` for `undefined`/`null`, an error for a non-object.
pub fn options_arg(value: &JsValue, what: &str) -> Result<Option<JsValue>> {
    if value.is_undefined() || value.is_null() {
        Ok(None)
    } else if is_objectish(value) {
        Ok(Some(value.clone()))
    } else {
        Err(invalid(format!("{what} must be an object, not {}", describe(value))))
    }
}

/// `INVALID_ARGUMENT` for an own key of `obj` that is not in `known`, naming
/// it and the closest known key: a misspelt option (`maxDeph`, `sessionID`)
/// would otherwise be dropped in silence and its default used instead.
pub fn known_keys(obj: &JsValue, known: &[&str], what: &str) -> Result<()> {
    let keys = js_sys::Reflect::own_keys(obj)
        .map_err(|e| invalid(format!("{what} could not be read ({})", super::error::describe_thrown(&e))))?;
    // Keys are distinct: of one more than there are known keys, one is unknown.
    for key in keys.iter().filter(|k| !k.is_symbol()).take(known.len() + 1) {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(crate::core::listing::unknown_key(what, "has no option", &key, known));
        }
    }
    Ok(())
}

/// An optional option: `None` when the options or the property are absent (undefined/null).
pub fn option(options: Option<&JsValue>, key: &str, what: &str) -> Result<Option<JsValue>> {
    let Some(options) = options else { return Ok(None) };
    let value = get(options, key, what)?;
    Ok(if value.is_undefined() || value.is_null() { None } else { Some(value) })
}

/// A non-negative safe integer.
pub fn count_arg(value: &JsValue, what: &str) -> Result<u64> {
    match value.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER => Ok(n as u64),
        _ => Err(invalid(format!("{what} must be an integer >= 0, not {}", describe(value)))),
    }
}

/// The elements of an array argument, copied into a genuine array.
pub fn array_arg(value: &JsValue, what: &str) -> Result<Array> {
    match is_array(value) {
        Ok(true) => array_from(value)
            .map_err(|e| invalid(format!("{what} could not be read ({})", super::error::describe_thrown(&e)))),
        Ok(false) => Err(invalid(format!("{what} must be an array, not {}", describe(value)))),
        Err(e) => Err(invalid(format!("{what} could not be inspected ({})", super::error::describe_thrown(&e)))),
    }
}

/// An array of strings (ids among them: well-formed, each at most [`MAX_STRING_ARG`] characters).
pub fn strings_arg(value: &JsValue, what: &str) -> Result<Vec<String>> {
    let items = array_arg(value, what)?;
    let mut out = Vec::new();
    out.try_reserve(items.length() as usize)
        .map_err(|_| SubagentError::new(ErrorCode::LimitExceeded, format!("{what} has too many items to hold")))?;
    let mut budget = Meter::new(Budget::new(MAX_READ_BYTES, "storeReadBytes"));
    for (i, item) in items.iter().enumerate() {
        let what = format!("{what}[{i}]");
        if !item.is_string() {
            return Err(invalid(format!("{what} must be a string, not {}", describe(&item))));
        }
        let s = bounded_string(&item, MAX_STRING_ARG as usize, "the string argument limit", true)
            .map_err(|r| r.error(&what))?
            .unwrap_or_default();
        budget.spend(s.len() + 1).map_err(|r| r.error(&what))?;
        out.push(s);
    }
    Ok(out)
}

/// The default budget of JS data with no more specific limit (options, schemas, payloads).
pub fn default_budget() -> Budget {
    Budget::new(crate::core::limits::Limits::default().event_payload_bytes, "eventPayloadBytes")
}

/// JS data to a JSON value within the default budget (strict Unicode).
pub fn value_from_js(value: &JsValue) -> std::result::Result<Value, Refused> {
    value_within(value, default_budget())
}

/// JS data to a JSON value, copying at most `budget` into the heap.
pub fn value_within(value: &JsValue, budget: Budget) -> std::result::Result<Value, Refused> {
    if let Some(value) = super::fast::value(value, budget.bytes) {
        return Ok(value);
    }
    from_js(value, 0, &mut Meter::new(budget))
}

fn from_js(value: &JsValue, depth: usize, meter: &mut Meter) -> std::result::Result<Value, Refused> {
    meter.spend(1)?;
    if value.is_null() || value.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = value.as_f64() {
        return Ok(Value::Number(n));
    }
    if value.is_string() {
        let s = string_within(value.unchecked_ref(), meter)?;
        return Ok(Value::String(s));
    }
    if value.is_function() || value.is_bigint() || value.is_symbol() {
        return Err(Refused::shape(format!(" is {}, which is not JSON data", describe(value))));
    }
    if depth >= MAX_DEPTH {
        return Err(Refused::shape(format!(" is nested more than {MAX_DEPTH} levels deep (or is cyclic)")));
    }
    let unreadable = |e: JsValue| Refused::shape(format!(" could not be read ({})", super::error::describe_thrown(&e)));
    if is_array(value).map_err(unreadable)? {
        let items = array_from(value).map_err(unreadable)?;
        let len = items.length() as usize;
        if len > meter.left {
            return Err(meter.budget.over(format!("is an array of {len} items")));
        }
        Meter::heap(len.saturating_mul(std::mem::size_of::<Value>()))?;
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| meter.budget.over(format!("is an array of {len} items")))?;
        for (i, item) in items.iter().enumerate() {
            out.push(from_js(&item, depth + 1, meter).map_err(|e| prepend(depth, format!("[{i}]"), e))?);
        }
        return Ok(Value::Array(out));
    }
    let keys = object_keys(value).map_err(unreadable)?;
    let len = keys.length() as usize;
    if len > meter.left {
        return Err(meter.budget.over(format!("is an object of {len} keys")));
    }
    Meter::heap(len.saturating_mul(std::mem::size_of::<(String, Value)>()))?;
    let mut entries = Vec::new();
    entries.try_reserve_exact(len).map_err(|_| meter.budget.over(format!("is an object of {len} keys")))?;
    for key in keys.iter() {
        // Object.keys gives strings; a key is measured like any string.
        let name = match key.dyn_ref::<JsString>().filter(|_| key.is_string()) {
            Some(k) => string_within(k, meter).map_err(|e| e.prefixed(" has a key that".into()))?,
            None => String::new(),
        };
        let item =
            Reflect::get(value, &key).map_err(|e| prepend(depth, format!(".{}", short_key(&name)), unreadable(e)))?;
        if item.is_undefined() {
            continue; // as in JSON: an undefined property is absent
        }
        let item = from_js(&item, depth + 1, meter).map_err(|e| prepend(depth, format!(".{}", short_key(&name)), e))?;
        entries.push((name, item));
    }
    Ok(Value::Object(entries))
}

/// A string inside JS data, charged to the meter before it is copied.
fn string_within(s: &JsString, meter: &mut Meter) -> std::result::Result<String, Refused> {
    Meter::heap(s.length() as usize)?;
    match bounded(s, meter.left, meter.budget.strict) {
        Ok(text) => {
            meter.spend(text.len())?;
            Ok(text)
        }
        Err(BoundFailure::TooLong { units }) => Err(meter.budget.over(format!("is a string of {units} characters"))),
        Err(BoundFailure::IllFormed) => Err(Refused::shape(ILL_FORMED.into())),
    }
}

/// Prefixes a path segment to an error fragment, eliding segments below the
/// eighth level so a deep or cyclic value gives a short sentence.
fn prepend(depth: usize, segment: String, refused: Refused) -> Refused {
    const SHOWN: usize = 8;
    if depth < SHOWN {
        refused.prefixed(segment)
    } else if refused.fragment.starts_with('…') {
        refused
    } else {
        refused.prefixed("…".into())
    }
}

fn short_key(key: &str) -> String {
    super::error::truncate(key, 40)
}

/// A JSON value to fresh JS data.
pub fn value_to_js(value: &Value) -> JsValue {
    match value {
        Value::Array(_) | Value::Object(_) => {
            super::fast::value_to_js(value).unwrap_or_else(|| value_to_js_each(value))
        }
        _ => value_to_js_each(value),
    }
}

/// [`value_to_js`] one property at a time (for numbers JSON cannot spell).
fn value_to_js_each(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(*n),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(value_to_js_each).collect::<Array>().into(),
        Value::Object(entries) => {
            let obj = Object::new();
            for (k, v) in entries {
                set(&obj, k, &value_to_js_each(v));
            }
            obj.into()
        }
    }
}

/// Sets an own data property on a fresh object (`__proto__` included).
pub fn set(obj: &Object, key: &str, value: &JsValue) {
    if key == "__proto__" {
        let desc = Object::new();
        let _ = Reflect::set(&desc, &"value".into(), value);
        for flag in ["writable", "enumerable", "configurable"] {
            let _ = Reflect::set(&desc, &flag.into(), &JsValue::TRUE);
        }
        let _ = Reflect::define_property(obj, &key.into(), &desc);
    } else {
        let _ = Reflect::set(obj, &JsValue::from_str(key), value);
    }
}

/// Defines an own data property, never calling a setter an `Object.prototype`
/// patch may have planted (used for values that carry authority, such as handles).
pub fn set_own(obj: &Object, key: &str, value: &JsValue) {
    // A descriptor without a prototype: no inherited `get`, `value` setter or the like.
    let desc = Object::create(JsValue::NULL.unchecked_ref());
    let _ = Reflect::set(&desc, &"value".into(), value);
    for flag in ["writable", "enumerable", "configurable"] {
        let _ = Reflect::set(&desc, &flag.into(), &JsValue::TRUE);
    }
    let _ = Reflect::define_property(obj, &key.into(), &desc);
}

fn set_opt(obj: &Object, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        set(obj, key, &JsValue::from_str(v));
    }
}

/// `{seq, type, payload}`.
pub fn event_to_js(event: &SessionEvent) -> JsValue {
    let obj = Object::new();
    set(&obj, "seq", &JsValue::from_f64(event.seq as f64));
    set(&obj, "type", &JsValue::from_str(&event.kind));
    set(&obj, "payload", &value_to_js_each(&event.payload));
    obj.into()
}

pub fn events_to_js(events: &[SessionEvent]) -> JsValue {
    super::fast::events_to_js(events).unwrap_or_else(|| events.iter().map(event_to_js).collect::<Array>().into())
}

/// What one batch of events from JS may hold: each payload within
/// `payload_bytes` (`eventPayloadBytes`), all of them within [`MAX_READ_BYTES`].
#[derive(Clone, Copy, Debug)]
pub struct EventBudget {
    pub payload_bytes: usize,
}

impl Default for EventBudget {
    /// Without a runtime's limits: any event a runtime could have written.
    fn default() -> Self {
        EventBudget { payload_bytes: crate::core::limits::MAX_STORED_EVENT_BYTES }
    }
}

pub use crate::core::limits::MAX_EVENT_TYPE_BYTES;

/// An event's `type` read without copying more than [`MAX_EVENT_TYPE_BYTES`]; `None` when absent or not a string.
pub fn event_type(value: &JsValue) -> Option<String> {
    let kind = Reflect::get(value, &JsValue::from_str("type")).ok()?;
    bounded_string(&kind, MAX_EVENT_TYPE_BYTES, "eventTypeBytes", true).ok().flatten()
}

fn event_field(value: &JsValue, key: &str) -> std::result::Result<JsValue, Refused> {
    Reflect::get(value, &JsValue::from_str(key))
        .map_err(|e| Refused::shape(format!(".{key} could not be read ({})", super::error::describe_thrown(&e))))
}

/// An event's `seq` and `type`.
fn event_head(value: &JsValue) -> std::result::Result<(u64, String), Refused> {
    let seq = event_field(value, "seq")?;
    let seq = match seq.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER => n as u64,
        _ => return Err(Refused::shape(format!(".seq must be an integer >= 0, not {}", describe(&seq)))),
    };
    let kind = event_field(value, "type")?;
    let Some(kind) =
        bounded_string(&kind, MAX_EVENT_TYPE_BYTES, "eventTypeBytes", true).map_err(|r| r.prefixed(".type".into()))?
    else {
        return Err(Refused::shape(format!(".type must be a string, not {}", describe(&kind))));
    };
    Ok((seq, kind))
}

/// What is left of an event [`event_from_js`] refused for its payload's data
/// (not its size): its `seq` and `type`, and a payload of the top-level fields
/// that read on their own plus [`event::DAMAGED`] saying `why` (see
/// [`event::damaged`]). `None` when the `seq` or `type` cannot be read, which
/// leaves nothing to place the event by.
pub fn damaged_event(value: &JsValue, budget: EventBudget, total: &mut usize, why: &str) -> Option<SessionEvent> {
    let (seq, kind) = event_head(value).ok()?;
    // A payload that cannot even be got leaves no field, but the event keeps its place.
    let payload = event_field(value, "payload").unwrap_or(JsValue::UNDEFINED);
    let payload_budget = Budget::new(budget.payload_bytes.min(*total), "eventPayloadBytes");
    let mut meter = Meter::new(payload_budget);
    let mut fields = Vec::new();
    let keys = match is_array(&payload) {
        Ok(false) if is_objectish(&payload) => object_keys(&payload).ok(),
        _ => None,
    };
    for key in keys.iter().flat_map(Array::iter) {
        let Some(name) = key.dyn_ref::<JsString>().and_then(|k| string_within(k, &mut meter).ok()) else { continue };
        if name == event::DAMAGED {
            continue;
        }
        let Ok(item) = Reflect::get(&payload, &key) else { continue };
        if item.is_undefined() {
            continue;
        }
        let mut trial = Meter { budget: meter.budget, left: meter.left };
        if let Ok(item) = from_js(&item, 1, &mut trial) {
            meter.left = trial.left;
            fields.push((name, item));
        }
    }
    meter.spend(why.len()).ok()?;
    fields.push((event::DAMAGED.to_owned(), Value::from(why)));
    *total = total
        .saturating_sub(payload_budget.bytes - meter.left + kind.len() + crate::core::limits::EVENT_OVERHEAD_BYTES);
    Some(SessionEvent { seq, kind, payload: Value::Object(fields) })
}

/// One event from JS. `Err` is a sentence fragment after the event's name.
pub fn event_from_js(
    value: &JsValue,
    budget: EventBudget,
    total: &mut usize,
) -> std::result::Result<SessionEvent, Refused> {
    if !is_objectish(value) {
        return Err(Refused::shape(format!(" must be an object {{seq, type, payload}}, not {}", describe(value))));
    }
    let (seq, kind) = event_head(value)?;
    let payload_budget = Budget::new(budget.payload_bytes.min(*total), "eventPayloadBytes");
    let mut meter = Meter::new(payload_budget);
    let payload = from_js(&event_field(value, "payload")?, 0, &mut meter).map_err(|e| {
        if *total < budget.payload_bytes && e.code == ErrorCode::LimitExceeded {
            Refused {
                code: ErrorCode::LimitExceeded,
                fragment: format!(" would take the batch over the limit of {MAX_READ_BYTES} bytes per store read"),
            }
        } else {
            e.prefixed(".payload".into())
        }
    })?;
    *total = total
        .saturating_sub(payload_budget.bytes - meter.left + kind.len() + crate::core::limits::EVENT_OVERHEAD_BYTES);
    Ok(SessionEvent { seq, kind, payload })
}

/// An array of events. `Err` is a sentence fragment after the array's name.
pub fn events_from_js(value: &JsValue, budget: EventBudget) -> std::result::Result<Vec<SessionEvent>, Refused> {
    use crate::core::limits::EVENT_OVERHEAD_BYTES;
    if let Some(events) = super::fast::events(value, &JsValue::UNDEFINED, budget.payload_bytes) {
        if events.len() <= MAX_READ_BYTES / EVENT_OVERHEAD_BYTES {
            return Ok(events);
        }
    }
    let unreadable = |e: JsValue| Refused::shape(format!(" could not be read ({})", super::error::describe_thrown(&e)));
    if !is_array(value).map_err(unreadable)? {
        return Err(Refused::shape(format!(" must be an array of events, not {}", describe(value))));
    }
    let items = array_from(value).map_err(unreadable)?;
    let mut total = MAX_READ_BYTES;
    let len = items.length() as usize;
    let mut out = Vec::new();
    // Each event costs its overhead in memory however small it is.
    if len > total / EVENT_OVERHEAD_BYTES || out.try_reserve_exact(len).is_err() {
        return Err(Refused {
            code: ErrorCode::LimitExceeded,
            fragment: format!(" holds {len} events, over the limit of {MAX_READ_BYTES} bytes per store read"),
        });
    }
    for (i, item) in items.iter().enumerate() {
        out.push(event_from_js(&item, budget, &mut total).map_err(|e| e.prefixed(format!("[{i}]")))?);
    }
    Ok(out)
}

/// `{id, createdAt, mode, label?, name?}`.
pub fn entry_to_js(entry: &CatalogEntry) -> JsValue {
    let obj = Object::new();
    set(&obj, "id", &JsValue::from_str(&entry.id));
    set(&obj, "createdAt", &JsValue::from_f64(entry.created_at as f64));
    set(&obj, "mode", &JsValue::from_str(entry.mode.as_str()));
    set_opt(&obj, "label", entry.label.as_deref());
    set_opt(&obj, "name", entry.name.as_ref().map(|n| n.as_str()));
    obj.into()
}

/// Rows to JS objects one at a time, for the runtime's live rows (which add
/// fields to each; see [`PathStack`]: a row's `path` is its parent's JS
/// string plus `/name`).
#[derive(Default)]
pub struct RowsToJs {
    paths: PathStack<JsString>,
}

impl RowsToJs {
    fn path(&mut self, path: &FullName) -> JsString {
        let text = match self.paths.base(path) {
            Some(base) => base.concat(&JsValue::from_str(&format!("/{}", path.name()))),
            None => JsString::from(path.to_string()),
        };
        self.paths.push(path, text.clone());
        text
    }

    /// A child row or a diagnostic row.
    pub fn row(&mut self, row: &Row) -> JsValue {
        let obj = Object::new();
        match row {
            Row::Child(c) => {
                set(&obj, "kind", &"child".into());
                set(&obj, "id", &JsValue::from_str(&c.id));
                set(&obj, "parentId", &JsValue::from_str(&c.parent_id));
                set(&obj, "depth", &JsValue::from_f64(c.depth.into()));
                set(&obj, "mode", &JsValue::from_str(c.mode.as_str()));
                set_opt(&obj, "label", c.label.as_deref());
                set_opt(&obj, "name", c.name.as_ref().map(|n| n.as_str()));
                if let Some(path) = &c.path {
                    set(&obj, "path", &self.path(path));
                }
                set(&obj, "hasChildren", &JsValue::from_bool(c.has_children));
            }
            Row::Diagnostic(d) => {
                set(&obj, "kind", &"diagnostic".into());
                set(&obj, "id", &JsValue::from_str(&d.id));
                set(&obj, "parentId", &JsValue::from_str(&d.parent_id));
                set(&obj, "depth", &JsValue::from_f64(d.depth.into()));
                set(&obj, "reason", &JsValue::from_str(d.reason.as_str()));
                if let Some((seq, detail)) = &d.entry {
                    set(&obj, "seq", &JsValue::from_f64(*seq as f64));
                    set(&obj, "detail", &JsValue::from_str(detail));
                }
            }
        }
        obj.into()
    }
}

/// `{kind:'lead'} | {kind:'path', segments} | {kind:'session', id}`; a
/// session id is the caller's own string, unchanged.
pub fn agent_ref_to_js(parsed: &AgentRef, original: &JsValue) -> JsValue {
    let obj = Object::new();
    match parsed {
        AgentRef::Lead => set(&obj, "kind", &"lead".into()),
        AgentRef::Path(segments) => {
            set(&obj, "kind", &"path".into());
            let list: Array = segments.iter().map(|s| JsValue::from_str(s.as_str())).collect();
            set(&obj, "segments", &list);
        }
        AgentRef::Session(_) => {
            set(&obj, "kind", &"session".into());
            set(&obj, "id", original);
        }
    }
    obj.into()
}

/// Sets `lastTurn` (`{ stopReason?, output? }`, when the log records either)
/// and `preset` (when its start records one) on a row or member object.
pub fn set_last_turn(obj: &Object, turns: &crate::core::turns::Turns) {
    set_opt(obj, "preset", turns.preset.as_deref());
    if turns.stop_reason.is_none() && turns.output.is_none() {
        return;
    }
    let last = Object::new();
    set_opt(&last, "stopReason", turns.stop_reason.as_deref());
    set_opt(&last, "output", turns.output.as_deref());
    set(obj, "lastTurn", &last);
}

/// `listTree`'s answer: `{ root: { id, turnOpen, lastTurn? }, rows }`, each row
/// with a log read carrying `turnOpen` and `lastTurn` as the root does.
pub fn tree_to_js(root_id: &str, listing: &crate::core::turns::TreeListing) -> std::result::Result<JsValue, JsValue> {
    let out = super::fast::rows_to_js(&listing.rows)?;
    let array: &js_sys::Array = out.unchecked_ref();
    for (i, turns) in listing.turns.iter().enumerate() {
        if let Some(turns) = turns {
            let obj: Object = array.get(i as u32).unchecked_into();
            set(&obj, "turnOpen", &JsValue::from_bool(turns.open));
            set_last_turn(&obj, turns);
        }
    }
    let root = Object::new();
    set(&root, "id", &JsValue::from_str(root_id));
    set(&root, "turnOpen", &JsValue::from_bool(listing.root.open));
    set_last_turn(&root, &listing.root);
    let tree = Object::new();
    set(&tree, "root", &root);
    set(&tree, "rows", &out);
    Ok(tree.into())
}
