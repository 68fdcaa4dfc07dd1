//! Stores across the boundary.
//!
//! - [`JsStore`] adapts any JS object with `append`/`read` (and optional
//!   `readMany`/`flush`) to the core [`Store`]. Each method is called through
//!   a `catch` import and its result settled into a fresh native Promise, so
//!   plain values, Promises, rejections, synchronous throws and missing
//!   methods all come back as values, never as a trap.
//! - [`WasmMemoryStore`] is the exported `MemoryStore` class over the core one.

use super::convert::{
    count_arg, damaged_event, describe, event_from_js, event_type, events_to_js, id_arg, is_objectish, option,
    options_arg, set, strings_arg, EventBudget,
};
use super::error::{from_thrown, invalid, settle, to_js};
use super::signal::Link;
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::SessionEvent;
use crate::core::exec::LocalBoxFuture;
use crate::core::limits::MAX_READ_BYTES;
use crate::core::name::quote_truncated;
use crate::core::signal::Signal;
use crate::core::store::{MemoryStore, ReadQuery, ReadResult, Store};
use js_sys::{Array, Function, Object, Promise, Reflect};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    /// Any object with the store methods (duck-typed).
    #[wasm_bindgen(typescript_type = "SessionStore")]
    pub type StoreObject;
    #[wasm_bindgen(method, catch)]
    fn append(this: &StoreObject, session: &str, events: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn read(this: &StoreObject, session: &str, options: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = readMany)]
    fn read_many(this: &StoreObject, sessions: &JsValue, options: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn flush(this: &StoreObject, session: &str) -> std::result::Result<JsValue, JsValue>;
}

/// Awaits a callback's outcome, whatever it returned or threw.
async fn settled(outcome: std::result::Result<JsValue, JsValue>) -> std::result::Result<JsValue, JsValue> {
    JsFuture::from(settle(&outcome?)).await
}

fn quote(session: &str) -> String {
    quote_truncated(session, 100)
}

/// The JS AbortSignal to hand a store: the caller's own, or (when the call
/// had none) a fresh controller's signal that aborts with the core signal.
pub(crate) fn js_signal(signal: &Signal) -> JsValue {
    if let Some(js) = signal.host().as_deref().and_then(|h| h.downcast_ref::<JsValue>()) {
        return js.clone();
    }
    let controller = Reflect::get(&js_sys::global(), &JsValue::from_str("AbortController"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .and_then(|ctor| Reflect::construct(&ctor, &Array::new()).ok());
    let Some(controller) = controller else { return JsValue::UNDEFINED };
    let js = Reflect::get(&controller, &JsValue::from_str("signal")).unwrap_or(JsValue::UNDEFINED);
    signal.set_host(Rc::new(js.clone()));
    signal.on_abort(move || {
        if let Some(abort) =
            Reflect::get(&controller, &JsValue::from_str("abort")).ok().and_then(|f| f.dyn_into::<Function>().ok())
        {
            let _ = abort.call0(&controller);
        }
    });
    js
}

fn read_options(query: &ReadQuery, with_from_seq: bool) -> JsValue {
    let options = Object::new();
    if let Some(types) = &query.types {
        let list: Array = types.iter().map(|t| JsValue::from_str(t)).collect();
        set(&options, "types", &list);
    }
    if with_from_seq {
        set(&options, "fromSeq", &JsValue::from_f64(query.from_seq as f64));
    }
    let signal = js_signal(&query.signal);
    if !signal.is_undefined() {
        set(&options, "signal", &signal);
    }
    options.into()
}

/// The query's event types as a JS array (undefined: every type).
fn types_js(query: &ReadQuery) -> JsValue {
    match &query.types {
        Some(types) => types.iter().map(|t| JsValue::from_str(t)).collect::<Array>().into(),
        None => JsValue::UNDEFINED,
    }
}

/// A store's answer for one session: `null`/`undefined` (no such session) or
/// an array of events. Events of types the query does not want are skipped
/// without decoding their payloads; a malformed wanted event is bad data.
fn parse_read(value: &JsValue, method: &str, session: &str, query: &ReadQuery, budget: EventBudget) -> ReadResult {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    if let Some(events) = super::fast::events(value, &types_js(query), budget.payload_bytes) {
        return Ok(Some(events));
    }
    let not_events = || {
        SubagentError::new(
            ErrorCode::PersistenceUnavailable,
            format!(
                "{method} returned {} for session {}; expected an array of events or null",
                describe(value),
                quote(session)
            ),
        )
    };
    let items = match super::convert::array_arg(value, method) {
        Ok(items) => items,
        Err(_) => return Err(not_events()),
    };
    let corrupt = |detail: String| {
        SubagentError::new(
            ErrorCode::CorruptCatalog,
            format!("{method} returned a malformed event for session {}: {detail}", quote(session)),
        )
    };
    let mut events = Vec::new();
    let mut total = MAX_READ_BYTES;
    for (i, item) in items.iter().enumerate() {
        if let Some(types) = &query.types {
            if let Some(kind) = event_type(&item) {
                if !types.contains(&kind) {
                    continue;
                }
            }
        }
        let event: SessionEvent = match event_from_js(&item, budget, &mut total) {
            Ok(event) => event,
            Err(e) if e.code == ErrorCode::LimitExceeded => {
                return Err(SubagentError::new(
                    e.code,
                    format!(
                        "{method} returned an event for session {} that is too large: event [{i}]{e}",
                        quote(session)
                    ),
                ))
            }
            Err(e) => {
                let why = e.to_string();
                match query.damaged.then(|| damaged_event(&item, budget, &mut total, why.trim_start_matches('.'))) {
                    Some(Some(event)) => event,
                    _ => return Err(corrupt(format!("event [{i}]{why}"))),
                }
            }
        };
        if events.try_reserve(1).is_err() {
            return Err(corrupt(format!("{} events are more than the heap holds", items.length())));
        }
        events.push(event);
    }
    Ok(Some(events))
}

/// A JS object used as a [`Store`].
pub struct JsStore {
    obj: StoreObject,
    has_read_many: bool,
    budget: EventBudget,
}

impl JsStore {
    /// Wraps `value`, which must be an object; whether it offers `readMany`
    /// is decided once, here.
    pub fn new(value: &JsValue, what: &str) -> Result<JsStore> {
        if !is_objectish(value) {
            return Err(invalid(format!(
                "{what} must be an object with append and read methods, not {}",
                describe(value)
            )));
        }
        let has_read_many = match Reflect::get(value, &JsValue::from_str("readMany")) {
            Ok(f) => f.is_function(),
            Err(e) => {
                return Err(from_thrown(
                    ErrorCode::PersistenceUnavailable,
                    "store.readMany could not be looked up".into(),
                    e,
                ))
            }
        };
        Ok(JsStore { obj: value.clone().unchecked_into(), has_read_many, budget: EventBudget::default() })
    }

    /// [`JsStore::new`] for a runtime's store, its shape checked at construction
    /// (`read` and `append`), where a listing's store fails at its first read
    /// (`PERSISTENCE_UNAVAILABLE`, as the lite entry's does).
    pub fn writable(value: &JsValue, what: &str) -> Result<JsStore> {
        let store = JsStore::new(value, what)?;
        require_method(value, "read", what)?;
        require_method(value, "append", what)?;
        Ok(store)
    }

    /// Calls `read` for one session: what it returned, or what it threw.
    pub fn start_read(&self, session: &str, query: &ReadQuery) -> std::result::Result<JsValue, JsValue> {
        self.obj.read(session, &read_options(query, true))
    }

    /// A `read`'s settled outcome, as the core takes it.
    pub fn finish_read(
        &self,
        session: &str,
        query: &ReadQuery,
        outcome: std::result::Result<JsValue, JsValue>,
    ) -> ReadResult {
        let value = outcome.map_err(|e| {
            from_thrown(
                ErrorCode::PersistenceUnavailable,
                format!("store.read failed for session {}", quote(session)),
                e,
            )
        })?;
        parse_read(&value, "store.read", session, query, self.budget)
    }

    /// Whether the store offers `readMany` (decided once, by [`JsStore::new`]).
    pub fn has_read_many(&self) -> bool {
        self.has_read_many
    }

    /// Calls `readMany` (the caller checked [`JsStore::has_read_many`]).
    pub fn start_read_many(&self, sessions: &[String], query: &ReadQuery) -> std::result::Result<JsValue, JsValue> {
        let ids: Array = sessions.iter().map(|s| JsValue::from_str(s)).collect();
        self.obj.read_many(&ids, &read_options(query, false))
    }

    /// A `readMany`'s settled outcome, as the core takes it: one read per session.
    pub fn finish_read_many(
        &self,
        sessions: &[String],
        query: &ReadQuery,
        outcome: std::result::Result<JsValue, JsValue>,
    ) -> Result<Vec<ReadResult>> {
        let what = || match sessions {
            [one] => format!("session {}", quote(one)),
            _ => format!("{} sessions", sessions.len()),
        };
        let value = outcome.map_err(|e| {
            from_thrown(ErrorCode::PersistenceUnavailable, format!("store.readMany failed for {}", what()), e)
        })?;
        let items = super::convert::array_arg(&value, "store.readMany").map_err(|_| {
            SubagentError::new(
                ErrorCode::PersistenceUnavailable,
                format!(
                    "store.readMany returned {} for {}; expected one result per session id",
                    describe(&value),
                    what()
                ),
            )
        })?;
        if let Some(lists) = super::fast::event_lists(&items, &types_js(query), self.budget.payload_bytes) {
            if lists.len() == items.length() as usize {
                return Ok(lists.into_iter().map(Ok).collect());
            }
        }
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let session = sessions.get(i).map(String::as_str).unwrap_or_default();
                if item.is_instance_of::<js_sys::Error>() {
                    Err(from_thrown(
                        ErrorCode::PersistenceUnavailable,
                        format!("store.readMany failed for session {}", quote(session)),
                        item,
                    ))
                } else {
                    parse_read(&item, "store.readMany", session, query, self.budget)
                }
            })
            .collect())
    }

    /// The same store reading payloads of up to `payload_bytes` each (`eventPayloadBytes`).
    pub fn with_payload_limit(mut self, payload_bytes: usize) -> JsStore {
        self.budget = EventBudget { payload_bytes };
        self
    }
}

impl Store for JsStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let outcome = self.obj.append(session, &events_to_js(&events));
            settled(outcome).await.map_err(|e| {
                from_thrown(
                    ErrorCode::PersistenceUnavailable,
                    format!("store.append failed for session {}", quote(session)),
                    e,
                )
            })?;
            Ok(())
        })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async move {
            let outcome = settled(self.start_read(session, query)).await;
            self.finish_read(session, query, outcome)
        })
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        if !self.has_read_many {
            return None;
        }
        Some(Box::pin(async move {
            let outcome = settled(self.start_read_many(sessions, query)).await;
            self.finish_read_many(sessions, query, outcome)
        }))
    }

    fn flush<'a>(&'a self, session: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let fail = |e| {
                from_thrown(
                    ErrorCode::PersistenceUnavailable,
                    format!("store.flush failed for session {}", quote(session)),
                    e,
                )
            };
            if !Reflect::get(&self.obj, &JsValue::from_str("flush")).map_err(fail)?.is_function() {
                return Ok(false);
            }
            let value = settled(self.obj.flush(session)).await.map_err(fail)?;
            Ok(value.as_bool() == Some(true))
        })
    }
}

/// The query of a `MemoryStore.read`/`readMany` call from JS.
fn query_from_options(options: Option<&JsValue>, with_from_seq: bool) -> Result<ReadQuery> {
    let types = option(options, "types", "options")?.map(|t| strings_arg(&t, "options.types")).transpose()?;
    let from_seq = if with_from_seq {
        option(options, "fromSeq", "options")?.map(|n| count_arg(&n, "options.fromSeq")).transpose()?.unwrap_or(0)
    } else {
        0
    };
    Ok(ReadQuery { types, from_seq, signal: Signal::new(), damaged: false })
}

/// A promise settled now by a synchronous outcome.
fn promise(outcome: Result<JsValue>) -> Promise {
    match outcome {
        Ok(value) => Promise::resolve(&value),
        Err(e) => Promise::reject(&to_js(e)),
    }
}

/// The embedded in-memory store. Appends must continue each log at its
/// length (`APPEND_CONFLICT` otherwise); reads return `null` for a session
/// that does not exist. Every method returns a Promise.
#[wasm_bindgen(js_name = MemoryStore)]
pub struct WasmMemoryStore {
    inner: Rc<MemoryStore>,
    /// Its key in the native registry (runtimes and listings use the core store directly).
    #[cfg(feature = "runtime")]
    key: f64,
}

#[cfg(feature = "runtime")]
impl Drop for WasmMemoryStore {
    fn drop(&mut self) {
        super::native::unregister(self.key);
    }
}

impl Default for WasmMemoryStore {
    fn default() -> Self {
        let inner = Rc::new(MemoryStore::new());
        WasmMemoryStore {
            #[cfg(feature = "runtime")]
            key: super::native::register(&inner),
            inner,
        }
    }
}

/// `options.maxBytes`: a whole number from 1 MiB to 2 GiB - 1 (default 256 MiB).
fn memory_store_max_bytes(options: &JsValue) -> Result<usize> {
    use crate::core::limits::{DEFAULT_MEMORY_STORE_BYTES, MAX_MEMORY_STORE_BYTES};
    let options = options_arg(options, "options")?;
    let Some(value) = super::convert::option(options.as_ref(), "maxBytes", "options")? else {
        return Ok(DEFAULT_MEMORY_STORE_BYTES);
    };
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && n >= (1u64 << 20) as f64 && n <= MAX_MEMORY_STORE_BYTES as f64 => Ok(n as usize),
        _ => Err(crate::err!(
            InvalidArgument,
            "options.maxBytes must be a whole number of bytes from {} to {MAX_MEMORY_STORE_BYTES}",
            1u64 << 20
        )),
    }
}

#[wasm_bindgen(js_class = MemoryStore)]
impl WasmMemoryStore {
    /// `new MemoryStore({ maxBytes? })`: holds at most `maxBytes` (default
    /// 256 MiB, 1 MiB to 2 GiB); an append past it is refused `LIMIT_EXCEEDED`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<super::ts::MemoryStoreOptionsArg>) -> Result<WasmMemoryStore, JsValue> {
        let max_bytes = memory_store_max_bytes(&super::ts::opt(options)).map_err(to_js)?;
        let inner = Rc::new(MemoryStore::with_max_bytes(max_bytes));
        Ok(WasmMemoryStore {
            #[cfg(feature = "runtime")]
            key: super::native::register(&inner),
            inner,
        })
    }

    /// What the store holds now and may hold at most: `{ bytes, maxBytes }`.
    #[wasm_bindgen(unchecked_return_type = "{ bytes: number; maxBytes: number }")]
    pub fn usage(&self) -> JsValue {
        let (bytes, max) = self.inner.usage();
        let obj = js_sys::Object::new();
        set(&obj, "bytes", &JsValue::from_f64(bytes as f64));
        set(&obj, "maxBytes", &JsValue::from_f64(max as f64));
        obj.into()
    }

    /// Appends events that carry their `seq` (continuing the log at its length).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn append(
        &self,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "SessionEvent[]")] events: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        promise((|| {
            let id = id_arg(&session_id, "sessionId")?;
            // Copied only as far as the store has room for: a batch far over it is refused before it is held whole.
            let (held, max) = inner.usage();
            let room = max.saturating_sub(held);
            // Twice the room and a MiB: a conversion holds its text and its values for a while.
            let ceiling = room.saturating_mul(2).saturating_add(1 << 20);
            let (events, store_full) =
                crate::core::heap::within(ceiling, || super::convert::events_from_js(&events, Default::default()));
            let events = events.map_err(|e| {
                if !store_full {
                    return e.error("events");
                }
                SubagentError::new(
                    ErrorCode::LimitExceeded,
                    format!("this MemoryStore holds {held} bytes; the events to append to session {} take more than the {room} left of its maxBytes ({max})", Quoted(&id)),
                )
            })?;
            inner.append_now(&id, events)?;
            Ok(JsValue::UNDEFINED)
        })())
    }

    /// A session's events (filtered by `types` and `fromSeq`), or `null` when it does not exist.
    #[wasm_bindgen(unchecked_return_type = "Promise<SessionEvent[] | null>")]
    pub fn read(
        &self,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
        options: Option<super::ts::ReadOptionsArg>,
    ) -> Promise {
        let inner = self.inner.clone();
        promise((|| {
            let id = id_arg(&session_id, "sessionId")?;
            let options = options_arg(&super::ts::opt(options), "options")?;
            let link = Link::from_options(options.as_ref(), "options", false)?;
            let query = query_from_options(options.as_ref(), true)?;
            link.check()?;
            Ok(inner.read_now(&id, &query).map_or(JsValue::NULL, |events| events_to_js(&events)))
        })())
    }

    /// One result per id, in order: events, or `null` for a session that does not exist.
    #[wasm_bindgen(js_name = readMany, unchecked_return_type = "Promise<(SessionEvent[] | null)[]>")]
    pub fn read_many(
        &self,
        #[wasm_bindgen(js_name = sessionIds, unchecked_param_type = "string[]")] session_ids: JsValue,
        options: Option<super::ts::ReadManyOptionsArg>,
    ) -> Promise {
        let inner = self.inner.clone();
        promise((|| {
            let ids = strings_arg(&session_ids, "sessionIds")?;
            let options = options_arg(&super::ts::opt(options), "options")?;
            let link = Link::from_options(options.as_ref(), "options", false)?;
            let query = query_from_options(options.as_ref(), false)?;
            link.check()?;
            let results: Array = ids
                .iter()
                .map(|id| inner.read_now(id, &query).map_or(JsValue::NULL, |events| events_to_js(&events)))
                .collect();
            Ok(results.into())
        })())
    }

    /// The durability barrier: resolves `false` (no persistence listener takes part in memory).
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn flush(
        &self,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
    ) -> Promise {
        promise(id_arg(&session_id, "sessionId").map(|_| JsValue::FALSE))
    }
}

/// `INVALID_ARGUMENT` unless `store[method]` is a function: a store of the
/// wrong shape is refused where it is handed over, not at its first use.
fn require_method(store: &JsValue, method: &str, what: &str) -> Result<()> {
    let found = Reflect::get(store, &JsValue::from_str(method)).map_err(|e| {
        from_thrown(ErrorCode::PersistenceUnavailable, format!("{what}.{method} could not be looked up"), e)
    })?;
    if found.is_function() {
        return Ok(());
    }
    Err(invalid(format!(
        "{what}.{method} must be a function, not {}: a store has append(sessionId, events) and read(sessionId, options)",
        describe(&found)
    )))
}
