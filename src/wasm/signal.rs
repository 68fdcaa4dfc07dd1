//! JS `AbortSignal` <-> core [`Signal`].
//!
//! A call's `{ signal }` is linked to a fresh core signal for the duration of
//! the call: an `abort` listener aborts the core signal (which wakes any
//! guarded await, so a store that never settles cannot hold the call), and
//! the JS signal is kept as the core signal's host value so JS stores receive
//! the caller's own signal. The listener is removed when the call ends.

use super::convert::{describe, get, is_objectish, option};
use super::error::{invalid, to_js, with_js_cause};
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::signal::Signal;
use js_sys::{Function, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// One call's link between a JS AbortSignal (if any) and a core signal.
pub struct Link {
    signal: Signal,
    js: Option<JsValue>,
    /// The signal's `addEventListener` as validated (read once) and the
    /// signal's name in sentences (`options.signal`).
    add: Option<(Function, String)>,
    listener: Option<Closure<dyn FnMut()>>,
}

impl Link {
    /// A call without a JS signal.
    pub fn none() -> Link {
        Link { signal: Signal::new(), js: None, add: None, listener: None }
    }

    /// Links `options.signal` (absent, `undefined` or `null` mean none).
    /// With `listen` off the link only reports whether the signal had
    /// already aborted (for calls that finish synchronously, or that a JS
    /// loop drives: it adds its own listener with [`Link::listen`]).
    pub fn from_options(options: Option<&JsValue>, what: &str, listen: bool) -> Result<Link> {
        let Some(js) = option(options, "signal", what)? else { return Ok(Link::none()) };
        let name = format!("{what}.signal");
        let not_a_signal = || invalid(format!("{name} must be an AbortSignal, not {}", describe(&js)));
        if !is_objectish(&js) {
            return Err(not_a_signal());
        }
        let add = get(&js, "addEventListener", &name)?;
        let Some(add) = add.dyn_ref::<Function>().cloned() else { return Err(not_a_signal()) };
        let signal = Signal::new();
        signal.set_host(Rc::new(js.clone()));
        if get(&js, "aborted", &name)?.is_truthy() {
            signal.abort();
        }
        let mut link = Link { signal, js: Some(js), add: Some((add, name)), listener: None };
        if link.signal.is_aborted() || !listen {
            return Ok(link);
        }
        let core = link.signal.clone();
        let listener = Closure::<dyn FnMut()>::new(move || core.abort());
        if let Err(e) = link.add_listener(listener.as_ref()) {
            // The hostile signal may have kept the listener anyway: keep it callable.
            listener.forget();
            return Err(e);
        }
        link.listener = Some(listener);
        Ok(link)
    }

    fn add_listener(&self, listener: &JsValue) -> Result<()> {
        let (Some(js), Some((add, name))) = (&self.js, &self.add) else { return Ok(()) };
        add.call2(js, &JsValue::from_str("abort"), listener)
            .map(drop)
            .map_err(|e| invalid(format!("{name}.addEventListener failed ({})", super::error::describe_thrown(&e))))
    }

    /// Adds a JS `listener` for the signal's `abort`, for a call that a JS
    /// loop drives (the lite build's listings): `false` when the call has no signal.
    pub fn listen(&self, listener: &Function) -> Result<bool> {
        self.add_listener(listener)?;
        Ok(self.js.is_some())
    }

    pub fn signal(&self) -> &Signal {
        &self.signal
    }

    /// Removes a listener [`Link::listen`] added; `false` when the signal refused.
    pub fn unlisten(&self, listener: &JsValue) -> bool {
        let Some(js) = &self.js else { return true };
        Reflect::get(js, &JsValue::from_str("removeEventListener"))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .map(|remove| remove.call2(js, &JsValue::from_str("abort"), listener).is_ok())
            .unwrap_or(false)
    }

    /// `Err(CANCELLED)` (with the abort reason as `cause`) once aborted.
    pub fn check(&self) -> Result<()> {
        if self.signal.is_aborted() {
            Err(self.attach_reason(SubagentError::cancelled()))
        } else {
            Ok(())
        }
    }

    fn attach_reason(&self, err: SubagentError) -> SubagentError {
        match &self.js {
            Some(js) if err.code == ErrorCode::Cancelled && self.signal.is_aborted() => {
                let reason = Reflect::get(js, &JsValue::from_str("reason")).unwrap_or(JsValue::UNDEFINED);
                with_js_cause(err, reason)
            }
            _ => err,
        }
    }

    /// The JS error for a failure of this call: a cancellation caused by
    /// this call's signal carries `signal.reason` as `cause`.
    pub fn error(&self, err: SubagentError) -> JsValue {
        to_js(self.attach_reason(err))
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        let Some(listener) = self.listener.take() else { return };
        if !self.unlisten(listener.as_ref()) {
            // The signal still holds the listener: keep the closure alive so a
            // later abort calls a live function rather than throwing.
            listener.forget();
        }
    }
}
