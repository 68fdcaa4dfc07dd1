//! Listing and resolution in the lite build: the core's [`Lister`] and
//! [`Resolver`] driven from `js/lite/drive.js` instead of by the core's async
//! drivers, so the lite wasm holds no futures, no executor glue and no
//! per-call closure (the async listing and its glue were about a third of
//! the lite wasm). A [`Job`] validates its arguments, calls the store, reads
//! each settled answer and words every error, exactly as the full build's
//! [`super::store::JsStore`] path does; the JS loop only awaits, keeps up to
//! [`MAX_CONCURRENT_READS`] reads in flight for a store without `readMany`,
//! and stops waiting once the caller's signal aborts.

use super::error::{settle, to_js};
use super::signal::Link;
use super::store::JsStore;
use crate::core::error::{Result, SubagentError};
use crate::core::listing::{Lister, Resolver, MAX_CONCURRENT_READS};
use crate::core::store::{ReadQuery, ReadResult};
use crate::core::turns::TreeLister;
use js_sys::{Array, Function, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/js/lite/drive.js")]
extern "C" {
    /// Runs `job` to its end: its result, or its error.
    fn drive(job: Job) -> Promise;
}

enum Machine {
    List(Lister),
    Tree(TreeLister),
    Resolve(Resolver),
}

/// One listing or resolution in flight, owned by the JS loop that drives it.
#[wasm_bindgen(skip_typescript)]
pub struct Job {
    machine: Machine,
    store: JsStore,
    link: Link,
    query: ReadQuery,
}

/// `listDescendants` of the lite build (validated as the full build's).
pub fn list(store: JsStore, root: &str, link: Link) -> Promise {
    let lister = Lister::new(root);
    let query = ReadQuery { signal: link.signal().clone(), ..lister.query().clone() };
    drive(Job { machine: Machine::List(lister), store, link, query })
}

/// `listTree` of the lite build.
pub fn tree(store: JsStore, root: &str, link: Link) -> Promise {
    let lister = TreeLister::new(root);
    let query = ReadQuery { signal: link.signal().clone(), ..lister.query().clone() };
    drive(Job { machine: Machine::Tree(lister), store, link, query })
}

/// `resolveName` of the lite build, for a full name (the caller answers `lead` and Session ids).
pub fn resolve(store: JsStore, root: &str, text: &str, link: Link) -> Promise {
    let resolver = Resolver::new(root, text);
    let query = ReadQuery { signal: link.signal().clone(), ..resolver.query().clone() };
    drive(Job { machine: Machine::Resolve(resolver), store, link, query })
}

#[wasm_bindgen]
impl Job {
    /// The sessions to read now, in the order `answer` takes them (empty once done).
    pub fn wants(&self) -> Vec<String> {
        match &self.machine {
            Machine::List(lister) => lister.wants().to_vec(),
            Machine::Tree(lister) => lister.wants().to_vec(),
            Machine::Resolve(resolver) => resolver.wants().to_vec(),
        }
    }

    /// Whether this level is read with one `readMany` (below the root, when the store has it).
    pub fn batch(&self) -> bool {
        let level = match &self.machine {
            Machine::List(lister) => !lister.at_root(),
            Machine::Tree(lister) => !lister.at_root(),
            Machine::Resolve(resolver) => resolver.batch(),
        };
        level && self.store.has_read_many()
    }

    /// Reads in flight at once without `readMany`.
    #[wasm_bindgen(js_name = maxReads)]
    pub fn max_reads(&self) -> usize {
        MAX_CONCURRENT_READS
    }

    /// Calls `read` for the `i`th wanted session: a promise settled as the store's call settles.
    pub fn read(&self, i: usize) -> Promise {
        let session = match &self.machine {
            Machine::List(lister) => lister.wants().get(i),
            Machine::Tree(lister) => lister.wants().get(i),
            Machine::Resolve(resolver) => resolver.wants().get(i),
        };
        match session {
            Some(session) => settled(self.store.start_read(session, &self.query)),
            None => Promise::resolve(&JsValue::NULL),
        }
    }

    /// Calls `readMany` for every wanted session.
    #[wasm_bindgen(js_name = readMany)]
    pub fn read_many(&self) -> Promise {
        settled(self.store.start_read_many(&self.wants(), &self.query))
    }

    /// The settled calls, in the order of `wants` (one for a `readMany`):
    /// `fulfilled[i]` is 1 when the `i`th fulfilled, `values[i]` its value or reason.
    pub fn answer(&mut self, fulfilled: &[u8], values: Array) -> std::result::Result<(), JsValue> {
        let wants = self.wants();
        let outcome = |i: usize| {
            let value = values.get(i as u32);
            if fulfilled.get(i) == Some(&1) {
                Ok(value)
            } else {
                Err(value)
            }
        };
        let reads: Result<Vec<ReadResult>> = if self.batch() {
            self.store.finish_read_many(&wants, &self.query, outcome(0))
        } else {
            Ok(wants.iter().enumerate().map(|(i, id)| self.store.finish_read(id, &self.query, outcome(i))).collect())
        };
        let answered = match &mut self.machine {
            Machine::List(lister) => lister.answer(reads),
            Machine::Tree(lister) => lister.answer(reads),
            Machine::Resolve(resolver) => resolver.answer(reads),
        };
        answered.map_err(|e| self.link.error(e))
    }

    /// The listing's rows, or the resolved Session id (once `wants` is empty).
    pub fn result(&self) -> std::result::Result<JsValue, JsValue> {
        match &self.machine {
            Machine::List(lister) => super::fast::rows_to_js(&lister.rows()),
            Machine::Tree(lister) => super::convert::tree_to_js(lister.root(), &lister.listing()),
            Machine::Resolve(resolver) => Ok(resolver.resolved().map_or(JsValue::UNDEFINED, JsValue::from_str)),
        }
    }

    /// Adds `listener` for the caller's signal's `abort`; `false` when the call has no signal.
    pub fn listen(&self, listener: &Function) -> std::result::Result<bool, JsValue> {
        self.link.listen(listener).map_err(to_js)
    }

    /// Removes the listener `listen` added (a signal that refuses keeps it: it only wakes a finished loop).
    pub fn unlisten(&self, listener: &Function) {
        self.link.unlisten(listener);
    }

    /// The call's `CANCELLED` error (with the signal's `reason` as `cause`), once its signal aborted.
    pub fn cancelled(&self) -> JsValue {
        self.link.signal().abort();
        self.link.error(SubagentError::cancelled())
    }
}

/// A native promise settled as a store call settled (a synchronous throw rejects it).
fn settled(outcome: std::result::Result<JsValue, JsValue>) -> Promise {
    match outcome {
        Ok(value) => settle(&value),
        Err(thrown) => Promise::reject(&thrown),
    }
}
