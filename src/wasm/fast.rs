//! The one-crossing fast path. Reading JS data property by property costs
//! several imports per value (most of the time of a projection or listing);
//! here it crosses as one JSON string written by `js/json.js`, and results
//! go back as one string for `JSON.parse`.
//!
//! Every reader answers `None` where the exact reader in `super::convert`
//! must decide: the JS writer gave up (a trap, a function, NaN, too deep, an
//! undefined property), the text holds a lone surrogate, or the exact
//! measure is over the budget. The caller then runs the exact reader, which
//! accepts or refuses with its own sentence, so the two paths agree on what
//! they accept and error text never depends on the path taken.

use crate::core::catalog::CatalogEntry;
use crate::core::event::SessionEvent;
use crate::core::json::{parse, write_json_string, Value};
use crate::core::limits::{json_size, MAX_EVENT_TYPE_BYTES, MAX_NESTING as MAX_DEPTH, MAX_READ_BYTES};
use crate::core::listing::{PathStack, Row};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/js/json.js")]
extern "C" {
    #[wasm_bindgen(js_name = valueJson, catch)]
    fn value_json(value: &JsValue, depth: u32, budget: f64) -> Result<Option<Vec<u8>>, JsValue>;
    #[wasm_bindgen(js_name = eventsJson, catch)]
    fn events_json(list: &JsValue, types: &JsValue, depth: u32, budget: f64) -> Result<Option<Vec<u8>>, JsValue>;
    #[wasm_bindgen(js_name = eventListsJson, catch)]
    fn event_lists_json(lists: &JsValue, types: &JsValue, depth: u32, budget: f64) -> Result<Option<Vec<u8>>, JsValue>;
    #[wasm_bindgen(js_name = fromJson, catch)]
    fn from_json(text: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = rowsFromJson, catch)]
    fn rows_from_json(text: &str, bases: &[i32]) -> Result<JsValue, JsValue>;
}

/// A budget that leaves the parse within the heap's room: a value measured
/// as one byte takes a 16-byte `Value` (and its array's spare capacity);
/// past it the exact reader meters each copy against the room.
fn within_heap(bytes: usize) -> usize {
    bytes.min(crate::core::heap::room() / 32)
}

/// An object or array of at most `max_bytes` as [`json_size`] measures it
/// (primitives are cheaper read directly).
pub fn value(value: &JsValue, max_bytes: usize) -> Option<Value> {
    if !value.is_object() {
        return None;
    }
    let bytes = value_json(value, MAX_DEPTH as u32, within_heap(max_bytes) as f64).ok()??;
    let parsed = parse(std::str::from_utf8(&bytes).ok()?, MAX_DEPTH)?;
    (json_size(&parsed) <= max_bytes).then_some(parsed)
}

/// A list of events, skipping those whose type is not in `types` (a JS
/// array of strings, or undefined), each payload within `payload_bytes` and
/// all within [`MAX_READ_BYTES`], measured as `convert::event_from_js` measures them.
pub fn events(list: &JsValue, types: &JsValue, payload_bytes: usize) -> Option<Vec<SessionEvent>> {
    // Parsed whole before it is measured: a list longer than any call may hold is the exact reader's to refuse.
    let len = js_sys::Reflect::get(list, &JsValue::from_str("length")).ok()?.as_f64()?;
    if len > (MAX_READ_BYTES / crate::core::limits::EVENT_OVERHEAD_BYTES) as f64 {
        return None;
    }
    let bytes = events_json(list, types, MAX_DEPTH as u32, within_heap(MAX_READ_BYTES) as f64).ok()??;
    // Each payload sits two levels down: `[[seq, type, payload], ...]`.
    events_of(parse(std::str::from_utf8(&bytes).ok()?, MAX_DEPTH + 2)?, payload_bytes)
}

/// A `readMany` answer: per session, as [`events`] reads one, or `None`
/// (`null`/`undefined`: no such session).
pub fn event_lists(lists: &JsValue, types: &JsValue, payload_bytes: usize) -> Option<Vec<Option<Vec<SessionEvent>>>> {
    let bytes = event_lists_json(lists, types, MAX_DEPTH as u32, within_heap(MAX_READ_BYTES) as f64).ok()??;
    let Value::Array(items) = parse(std::str::from_utf8(&bytes).ok()?, MAX_DEPTH + 3)? else { return None };
    items
        .into_iter()
        .map(|item| match item {
            Value::Null => Some(None),
            list => events_of(list, payload_bytes).map(Some),
        })
        .collect()
}

fn events_of(list: Value, payload_bytes: usize) -> Option<Vec<SessionEvent>> {
    let Value::Array(items) = list else { return None };
    let mut events = Vec::new();
    events.try_reserve_exact(items.len()).ok()?;
    let mut total = MAX_READ_BYTES;
    for item in items {
        let Value::Array(fields) = item else { return None };
        let [seq, Value::String(kind), payload]: [Value; 3] = fields.try_into().ok()? else { return None };
        let seq = seq.as_u64()?;
        let size = json_size(&payload);
        if kind.len() > MAX_EVENT_TYPE_BYTES || size > payload_bytes.min(total) {
            return None;
        }
        total = total.saturating_sub(size + kind.len() + crate::core::limits::EVENT_OVERHEAD_BYTES);
        events.push(SessionEvent { seq, kind, payload });
    }
    Some(events)
}

/// `[{seq, type, payload}, ...]`; `None` when a payload number has no exact
/// JSON text (NaN, an infinity, `-0`).
pub fn events_to_js(events: &[SessionEvent]) -> Option<JsValue> {
    let mut out = String::from("[");
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"seq\":");
        push_integer(&mut out, event.seq);
        out.push_str(",\"type\":");
        write_json_string(&event.kind, &mut out);
        out.push_str(",\"payload\":");
        if !event.payload.write_exact_json(&mut out) {
            return None;
        }
        out.push('}');
    }
    out.push(']');
    from_json(&out).ok()
}

/// Any value; `None` as for [`events_to_js`].
pub fn value_to_js(value: &Value) -> Option<JsValue> {
    let mut out = String::new();
    if !value.write_exact_json(&mut out) {
        return None;
    }
    from_json(&out).ok()
}

/// Decimal digits of `n` (no formatting machinery, which `to_string` brings per type).
fn push_integer(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| d as char));
}

fn field(out: &mut String, key: &str, value: &str) {
    out.push_str(",\"");
    out.push_str(key);
    out.push_str("\":");
    write_json_string(value, out);
}

/// `[{id, createdAt, mode, label?, name?}, ...]`. This text and the rows'
/// always parse (integers and strings only): what `JSON.parse` can throw is
/// an engine out of memory, which the caller rejects with.
pub fn entries_to_js(entries: &[CatalogEntry]) -> Result<JsValue, JsValue> {
    let mut out = String::from("[");
    for (i, entry) in entries.iter().enumerate() {
        out.push_str(if i > 0 { ",{\"id\":" } else { "{\"id\":" });
        write_json_string(&entry.id, &mut out);
        out.push_str(",\"createdAt\":");
        push_integer(&mut out, entry.created_at);
        field(&mut out, "mode", entry.mode.as_str());
        if let Some(label) = &entry.label {
            field(&mut out, "label", label);
        }
        if let Some(name) = &entry.name {
            field(&mut out, "name", name.as_str());
        }
        out.push('}');
    }
    out.push(']');
    from_json(&out)
}

/// Listing rows, shaped as `convert::RowsToJs` shapes the live ones; a row's
/// path is its base row's path plus its own name, joined in JS (see [`PathStack`]).
pub fn rows_to_js(rows: &[Row]) -> Result<JsValue, JsValue> {
    let mut out = String::from("[");
    let mut bases = Vec::with_capacity(rows.len());
    let mut paths = PathStack::<usize>::default();
    for (i, row) in rows.iter().enumerate() {
        out.push_str(if i > 0 { ",{\"kind\":" } else { "{\"kind\":" });
        let mut base = -1;
        match row {
            Row::Child(c) => {
                out.push_str("\"child\"");
                field(&mut out, "id", &c.id);
                field(&mut out, "parentId", &c.parent_id);
                out.push_str(",\"depth\":");
                push_integer(&mut out, c.depth.into());
                field(&mut out, "mode", c.mode.as_str());
                if let Some(label) = &c.label {
                    field(&mut out, "label", label);
                }
                if let Some(name) = &c.name {
                    field(&mut out, "name", name.as_str());
                }
                if let Some(path) = &c.path {
                    match paths.base(path) {
                        Some(&under) => {
                            base = under as i32;
                            field(&mut out, "path", path.name().as_str());
                        }
                        None => field(&mut out, "path", &path.to_string()),
                    }
                    paths.push(path, i);
                }
                out.push_str(if c.has_children { ",\"hasChildren\":true}" } else { ",\"hasChildren\":false}" });
            }
            Row::Diagnostic(d) => {
                out.push_str("\"diagnostic\"");
                field(&mut out, "id", &d.id);
                field(&mut out, "parentId", &d.parent_id);
                out.push_str(",\"depth\":");
                push_integer(&mut out, d.depth.into());
                field(&mut out, "reason", d.reason.as_str());
                if let Some((seq, detail)) = &d.entry {
                    out.push_str(",\"seq\":");
                    push_integer(&mut out, *seq);
                    field(&mut out, "detail", detail);
                }
                out.push('}');
            }
        }
        bases.push(base);
    }
    out.push(']');
    rows_from_json(&out, &bases)
}
