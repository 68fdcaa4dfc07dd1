//! The package's own `MemoryStore`, used natively.
//!
//! When the store handed to a runtime or a listing call (full build) is a live
//! `MemoryStore` of this module whose store methods are still the package's
//! own, [`NativeStore`] reaches the core store directly instead of converting
//! every event Rust -> JS -> Rust through its JS methods. The store object is
//! recognised by `js/store.js` (a private WeakMap filled by the exported
//! class's constructor, see there) and its key looked up in [`STORES`].
//! Anything else goes through [`JsStore`] as before, except objects that carry
//! `MemoryStore`'s methods without being a store this module made (copies,
//! Proxies, forged objects): the glue's receiver brand
//! (`scripts/brand-classes.mjs`) would make every call throw, so they are
//! refused at once.
//!
//! A native store keeps every rule the JS path keeps: the same errors (a
//! store error passes through as the JS `MemoryStore` would have thrown it)
//! and the read limits `parse_read` applies (each payload within the reader's
//! `eventPayloadBytes`, one read within [`MAX_READ_BYTES`]). Whether a store is
//! native is decided once, when the runtime is built or the listing starts (as
//! `readMany`'s presence is): a method replaced later is not seen by it.
//!
//! [`JsStore`]: super::store::JsStore

use super::convert::is_objectish;
use super::error::{invalid, settle, to_js, Passthrough};
use crate::core::error::{ErrorCode, HostCause, Quoted, Result, SubagentError};
use crate::core::event::SessionEvent;
use crate::core::exec::LocalBoxFuture;
use crate::core::limits::{json_size, MAX_READ_BYTES};
use crate::core::name::quote_truncated;
use crate::core::store::{MemoryStore, ReadQuery, ReadResult, Store};
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/wasm/js/store.js")]
extern "C" {
    /// A fresh key, filed with the object the exported class is constructing.
    fn born() -> f64;
    // `catch` keeps `born` the snippet's only direct import (see build-pkg.sh).
    #[wasm_bindgen(js_name = storeKey, catch)]
    fn store_key(value: &JsValue) -> std::result::Result<JsValue, JsValue>;
}

thread_local! {
    /// Every live `MemoryStore` by key (a short list: a Vec is smaller code than a map).
    /// Keys are never reused, so a stale key finds nothing.
    static STORES: RefCell<Vec<(f64, Weak<MemoryStore>)>> = const { RefCell::new(Vec::new()) };
}

/// Files a new store; its key goes back to [`unregister`] when the store is dropped.
pub fn register(store: &Rc<MemoryStore>) -> f64 {
    let key = born();
    STORES.with(|s| s.borrow_mut().push((key, Rc::downgrade(store))));
    key
}

pub fn unregister(key: f64) {
    STORES.with(|s| s.borrow_mut().retain(|(k, _)| *k != key));
}

/// A store error as the JS path reports it: `context` for the core, the
/// error itself (as the JS `MemoryStore` would have thrown it) for JS callers.
fn passthrough(context: String, e: SubagentError) -> SubagentError {
    SubagentError::new(e.code, context).with_cause(HostCause(Rc::new(Passthrough(to_js(e)))))
}

/// The JS path's timing: its answers arrive through `settle` of a settled
/// Promise (three microtasks), so concurrent turns interleave exactly as before.
async fn tick() {
    let _ = JsFuture::from(settle(&js_sys::Promise::resolve(&JsValue::UNDEFINED))).await;
}

fn quote(session: &str) -> String {
    quote_truncated(session, 100)
}

/// The core store behind a live package `MemoryStore`.
pub struct NativeStore {
    inner: Weak<MemoryStore>,
    /// Keeps the JS object (whose finalizer would free the store) alive.
    _js: JsValue,
    payload_bytes: usize,
}

/// The native store for `value` when it is a live, unmodified `MemoryStore`
/// of this module; `None` for a store to use through its JS methods; an
/// `INVALID_ARGUMENT` error when those would only throw (not its store).
/// `payload_bytes` is the largest event payload a read may answer.
pub fn native_store(value: &JsValue, what: &str, payload_bytes: usize) -> Result<Option<NativeStore>> {
    if !is_objectish(value) {
        return Ok(None);
    }
    let key = match store_key(value) {
        Ok(key) if key.is_undefined() => return Ok(None),
        Ok(key) => key.as_f64().unwrap_or(0.0),
        Err(_) => 0.0,
    };
    if key <= 0.0 {
        return Err(invalid(format!(
            "{what} has MemoryStore's methods but is not a MemoryStore (a copy, a Proxy or a forged object): those methods accept only the store itself; pass the store, or an object whose methods call it"
        )));
    }
    let inner = STORES.with(|s| s.borrow().iter().find(|(k, _)| *k == key).map(|(_, w)| w.clone()));
    // None: a freed store, or another module instance's (safe through its methods).
    Ok(inner.map(|inner| NativeStore { inner, _js: value.clone(), payload_bytes }))
}

impl NativeStore {
    fn live(&self, method: &str, what: impl FnOnce() -> String) -> Result<Rc<MemoryStore>> {
        self.inner.upgrade().ok_or_else(|| {
            SubagentError::new(
                ErrorCode::PersistenceUnavailable,
                format!("{method} failed for {}: the MemoryStore was freed", what()),
            )
        })
    }

    /// `parse_read`'s limits: each payload within `payload_bytes`, the read within [`MAX_READ_BYTES`].
    fn within(&self, events: Vec<SessionEvent>, method: &str, session: &str) -> ReadResult {
        let mut total = MAX_READ_BYTES;
        for (i, event) in events.iter().enumerate() {
            let cap = self.payload_bytes.min(total);
            let size = json_size(&event.payload);
            if size > cap {
                let detail = if total < self.payload_bytes {
                    format!(" would take the batch over the limit of {MAX_READ_BYTES} bytes per store read")
                } else {
                    format!(".payload is larger, over the limit eventPayloadBytes ({cap} bytes)")
                };
                return Err(SubagentError::new(
                    ErrorCode::LimitExceeded,
                    format!(
                        "{method} returned an event for session {} that is too large: event [{i}]{detail}",
                        quote(session)
                    ),
                ));
            }
            total = total.saturating_sub(size + event.kind.len() + crate::core::limits::EVENT_OVERHEAD_BYTES);
        }
        Ok(Some(events))
    }

    /// The runtime's durability listener for this store (its `flush` takes part, as on the JS path).
    #[cfg(feature = "runtime")]
    pub fn flush_listener(&self) -> crate::runtime::FlushListener {
        let inner = self.inner.clone();
        Rc::new(move |session: &str| -> LocalBoxFuture<'static, Result<()>> {
            let failed = (inner.strong_count() == 0).then(|| {
                SubagentError::new(
                    ErrorCode::PersistenceUnavailable,
                    format!(
                        "a flush listener failed for {session}: the MemoryStore was freed",
                        session = Quoted(session)
                    ),
                )
            });
            Box::pin(async move {
                tick().await;
                failed.map_or(Ok(()), Err)
            })
        })
    }
}

impl NativeStore {
    fn append_now(&self, session: &str, events: Vec<SessionEvent>) -> Result<()> {
        let what = || format!("session {}", quote(session));
        let store = self.live("store.append", what)?;
        store.append_now(session, events).map_err(|e| passthrough(format!("store.append failed for {}", what()), e))
    }

    /// One read or a batch of them (`method` names which, for the sentences).
    fn read_now(&self, sessions: &[String], query: &ReadQuery, method: &str) -> Result<Vec<ReadResult>> {
        let what = || match sessions {
            [one] => format!("session {}", quote(one)),
            _ => format!("{} sessions", sessions.len()),
        };
        let store = self.live(method, what)?;
        query.signal.check().map_err(|e| passthrough(format!("{method} failed for {}", what()), e))?;
        Ok(sessions
            .iter()
            .map(|id| match store.read_now(id, query) {
                Some(events) => self.within(events, method, id),
                None => Ok(None),
            })
            .collect())
    }
}

// Each answer is computed when first polled (when the JS path would call the
// method) and handed back after [`tick`]. `flush` keeps the default (`false`, as the
// JS path answers): the core calls only the runtime's flush listeners, see
// [`NativeStore::flush_listener`].
impl Store for NativeStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let done = self.append_now(session, events);
            tick().await;
            done
        })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async move {
            let one = self.read_now(&[session.to_owned()], query, "store.read");
            tick().await;
            one.and_then(|mut all| all.pop().unwrap_or(Ok(None)))
        })
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        Some(Box::pin(async move {
            let all = self.read_now(sessions, query, "store.readMany");
            tick().await;
            all
        }))
    }
}
