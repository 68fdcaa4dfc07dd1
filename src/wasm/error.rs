//! SubagentError <-> JS `Error` mapping.
//!
//! Every failure crosses the boundary as an instance of the `SubagentError`
//! class from `js/error.js` (a real `Error` subclass with `name` and `code`).
//! Two kinds of host causes ride on a core error:
//! - [`JsCause`]: a JS value a store threw or rejected with, attached as `cause`;
//! - [`Passthrough`]: a `SubagentError` a store threw itself, rethrown unchanged.

use crate::core::error::{ErrorCode, HostCause, SubagentError};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/js/error.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeError)]
    fn make_error(code: &str, message: &str, has_cause: bool, cause: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = codeOf)]
    fn code_of(value: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = describeThrown)]
    fn describe_thrown_js(value: &JsValue) -> String;
    /// A fresh native Promise settled by the value; never throws.
    pub fn settle(value: &JsValue) -> js_sys::Promise;
}

/// A JS value kept as an error's `cause`.
pub struct JsCause(pub JsValue);

/// A JS `SubagentError` thrown by host code, rethrown as is.
pub struct Passthrough(pub JsValue);

/// The JS error for a core error.
pub fn to_js(err: SubagentError) -> JsValue {
    let cause = err.cause.as_ref().map(|c| c.0.clone());
    if let Some(cause) = &cause {
        if let Some(Passthrough(original)) = cause.downcast_ref::<Passthrough>() {
            return original.clone();
        }
        if let Some(JsCause(value)) = cause.downcast_ref::<JsCause>() {
            return make_error(err.code.as_str(), &err.message, true, value);
        }
    }
    make_error(err.code.as_str(), &err.message, false, &JsValue::UNDEFINED)
}

/// The core error for a JS value thrown by host code: a JS `SubagentError`
/// keeps its code and passes through unchanged; anything else becomes
/// `code` with `message` and the value as `cause`.
pub fn from_thrown(code: ErrorCode, message: String, thrown: JsValue) -> SubagentError {
    // The reason stays in the message (a turn's diagnostic is made of it), a coded error's too.
    let detail = describe_thrown(&thrown);
    if let Some(text) = code_of(&thrown) {
        let own = ErrorCode::ALL.iter().copied().find(|c| c.as_str() == text).unwrap_or(code);
        return SubagentError::new(own, format!("{message}: {detail}"))
            .with_cause(HostCause(Rc::new(Passthrough(thrown))));
    }
    SubagentError::new(code, format!("{message}: {detail}")).with_cause(HostCause(Rc::new(JsCause(thrown))))
}

/// A short, safe description of a thrown JS value (at most 200 bytes).
pub fn describe_thrown(thrown: &JsValue) -> String {
    truncate(&describe_thrown_js(thrown), 200)
}

/// Attaches `cause` to an error that has none yet (the abort reason of a cancelled call).
pub fn with_js_cause(err: SubagentError, cause: JsValue) -> SubagentError {
    if err.cause.is_some() {
        return err;
    }
    err.with_cause(HostCause(Rc::new(JsCause(cause))))
}

/// An `INVALID_ARGUMENT` error.
pub fn invalid(message: String) -> SubagentError {
    SubagentError::new(ErrorCode::InvalidArgument, message)
}

/// `text` cut to at most `max` bytes on a character boundary.
pub fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", text.get(..cut).unwrap_or_default())
}
