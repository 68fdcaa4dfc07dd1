//! The runtime's arguments from JS, validated: call options and signals,
//! content within its byte limit, optional fields, the runtime's limits.

use super::convert::{
    cwd_arg, describe, get, id_arg, is_objectish, options_arg, set, string_arg, value_from_js, value_within, Budget,
};
use super::error::{invalid, to_js};
use super::signal::Link;
use crate::core::error::{Result, SubagentError};
use crate::core::json::{Value, MAX_SAFE_INTEGER};
use crate::core::limits::Limits;
use js_sys::{Object, Promise};
use wasm_bindgen::prelude::*;

/// `options` as `{ signal }`, or (deprecated until the next minor release) the AbortSignal itself.
pub(super) fn link_signal_or_options(value: Option<JsValue>, what: &str) -> Result<Link> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else { return Ok(Link::none()) };
    let is_signal =
        is_objectish(&value) && get(&value, "aborted", what).map(|a| a.as_bool().is_some()).unwrap_or(false);
    if is_signal {
        let options = Object::new();
        set(&options, "signal", &value);
        Link::from_options(Some(&options.into()), what, true)
    } else {
        let options = options_arg(&value, what)?;
        Link::from_options(options.as_ref(), what, true)
    }
}

pub(super) fn reject(e: SubagentError) -> Promise {
    Promise::reject(&to_js(e))
}

/// Content (a prompt or a message), copied only within its byte limit; the
/// core checks the limits again, with the block count, where it enters.
pub(super) fn content_arg(value: &JsValue, what: &str, bytes: usize, limit: &'static str) -> Result<Value> {
    let v = value_within(value, Budget::new(bytes, limit).lenient()).map_err(|e| e.error(what))?;
    crate::core::result::normalize_content(v).ok_or_else(|| {
        invalid(format!("{what} must be a string or an array of content blocks with a type, not {}", describe(value)))
    })
}

pub(super) fn opt_string(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    opt_with(obj, key, what, string_arg)
}

pub(super) fn opt_id(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    opt_with(obj, key, what, id_arg)
}

pub(super) fn opt_cwd(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    opt_with(obj, key, what, cwd_arg)
}

/// `obj[key]` read by `parse` (named `what.key` in its errors); absent when undefined or null.
fn opt_with(
    obj: &JsValue,
    key: &str,
    what: &str,
    parse: fn(&JsValue, &str) -> Result<String>,
) -> Result<Option<String>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        parse(&v, &format!("{what}.{key}")).map(Some)
    }
}

/// The documented limits that are fixed: naming one in `options.limits` is
/// a mistake to report, not an option to drop silently.
const FIXED_LIMITS: &[(&str, &str)] = &[("idBytes", "256 bytes"), ("cwdBytes", "4 KiB")];

/// `options.limits`: `{ promptBytes?, messageBytes?, ... }` over the defaults.
/// A key that is not a configurable limit is `INVALID_ARGUMENT` (a fixed
/// limit says so; a typo lists the limits).
pub(super) fn limits_arg(value: &JsValue) -> Result<Limits> {
    let mut limits = Limits::default();
    let Some(obj) = options_arg(value, "options.limits")? else { return Ok(limits) };
    let keys = js_sys::Reflect::own_keys(&obj)
        .map_err(|e| invalid(format!("options.limits could not be read ({})", super::error::describe_thrown(&e))))?;
    let configurable = || crate::core::limits::CONFIGURABLE.iter().map(|s| s.key).collect::<Vec<_>>().join(", ");
    // Keys are distinct: of one more than there are limits, one is not a limit.
    for key in keys.iter().filter(|k| !k.is_symbol()).take(crate::core::limits::CONFIGURABLE.len() + 1) {
        let name = key.as_string().unwrap_or_default();
        if crate::core::limits::CONFIGURABLE.iter().any(|s| s.key == name) {
            continue;
        }
        let shown = crate::core::name::quote_truncated(&name, 40);
        return Err(invalid(match FIXED_LIMITS.iter().find(|(fixed, _)| *fixed == name) {
            Some((_, value)) => format!("options.limits.{name} is fixed at {value}: it cannot be set"),
            None => format!("options.limits has no limit named {shown}; the limits are {}", configurable()),
        }));
    }
    for spec in crate::core::limits::CONFIGURABLE {
        let v = get(&obj, spec.key, "options.limits")?;
        if v.is_undefined() {
            continue;
        }
        match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&n) => limits.set(spec.key, n as usize)?,
            _ => {
                return Err(invalid(format!(
                    "options.limits.{} must be an integer from {} to {}, not {}",
                    spec.key,
                    spec.min,
                    spec.max,
                    describe(&v)
                )))
            }
        }
    }
    Ok(limits)
}

/// An optional `budget` (`{ tokens?, turns?, spawns?, cost? }`), read strictly.
pub(super) fn opt_budget(obj: &JsValue, key: &str, what: &str) -> Result<Option<crate::core::budget::Budget>> {
    budget_arg(&get(obj, key, what)?, &format!("{what}.{key}"))
}

/// A budget argument: `undefined` or `null` is none.
pub(super) fn budget_arg(v: &JsValue, what: &str) -> Result<Option<crate::core::budget::Budget>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    if let Some(n) = v.as_f64().filter(|n| !n.is_finite()) {
        let n = crate::core::json::number_text(n);
        return Err(invalid(format!("{what} must be an object {{ tokens?, turns?, spawns?, cost? }}, not {n}")));
    }
    let value = value_from_js(v).map_err(|e| e.error(what))?;
    crate::core::budget::Budget::from_value(&value, what).map(Some)
}

pub(super) fn opt_json(obj: &JsValue, key: &str, what: &str) -> Result<Option<Value>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    value_from_js(&v).map(Some).map_err(|e| e.error(&format!("{what}.{key}")))
}

/// A log read's `{ types?, signal? }`: event types of 1 to `MAX_EVENT_TYPE_BYTES` bytes each.
pub(super) fn read_log_options(value: &JsValue) -> Result<(Option<Vec<String>>, Link)> {
    let what = "options";
    let options = options_arg(value, what)?;
    let types = match options.as_ref().map(|o| get(o, "types", what)).transpose()? {
        Some(t) if !t.is_undefined() && !t.is_null() => {
            let list = super::convert::array_arg(&t, "options.types")?;
            let mut types = Vec::new();
            for t in list.iter() {
                let t = string_arg(&t, "options.types[]")?;
                let max = crate::core::limits::MAX_EVENT_TYPE_BYTES;
                if t.is_empty() || t.len() > max {
                    return Err(super::error::invalid(format!("options.types[] must be event types of 1-{max} bytes")));
                }
                types.push(t);
            }
            Some(types)
        }
        _ => None,
    };
    Ok((types, Link::from_options(options.as_ref(), what, true)?))
}
