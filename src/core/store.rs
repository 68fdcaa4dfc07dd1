//! Storage: the session logs everything else is derived from.
//!
//! The core talks to storage only through [`Store`]. Hosts supply their own
//! (the wasm bridge adapts any JS object with `append`/`read`/`readMany?`);
//! [`MemoryStore`] is the embedded default and the reference for the rules
//! every store keeps: appends continue the log at its length, reads return
//! `None` for a session that does not exist, and `types`/`from_seq` filter.

use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::SessionEvent;
use crate::core::exec::LocalBoxFuture;
use crate::core::hash::HashMap;
use crate::core::signal::Signal;
use std::cell::{Cell, RefCell};

/// What a read asks for.
#[derive(Clone, Debug, Default)]
pub struct ReadQuery {
    /// Only these event types (all when `None`).
    pub types: Option<Vec<String>>,
    /// Only events with `seq >= from_seq`.
    pub from_seq: u64,
    /// The caller's cancellation, forwarded to the store.
    pub signal: Signal,
    /// Whether an event whose data does not read comes back damaged (see
    /// [`crate::core::event::DAMAGED`]) instead of failing the whole read.
    /// Only readers that give such an event an answer of its own ask.
    pub damaged: bool,
}

impl ReadQuery {
    pub fn types(types: &[&str], signal: &Signal) -> ReadQuery {
        ReadQuery {
            types: Some(types.iter().map(|t| t.to_string()).collect()),
            from_seq: 0,
            signal: signal.clone(),
            damaged: false,
        }
    }

    /// Whether `event` passes this query's filters (stores may ignore them; readers re-check).
    pub fn matches(&self, event: &SessionEvent) -> bool {
        event.seq >= self.from_seq && self.types.as_ref().is_none_or(|t| t.contains(&event.kind))
    }
}

/// One session's read: its events, or `None` when it does not exist.
pub type ReadResult = Result<Option<Vec<SessionEvent>>>;

/// Session log storage. Futures are not `Send`: the core is single-threaded, like JS.
pub trait Store {
    /// Appends events that carry their `seq`; durable once resolved.
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>>;

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult>;

    /// A batch read, one result per id in order; `None` when the store has none.
    fn read_many<'a>(
        &'a self,
        _sessions: &'a [String],
        _query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        None
    }

    /// The durability barrier: `true` when a persistence listener took part.
    fn flush<'a>(&'a self, _session: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async { Ok(false) })
    }
}

/// Reads in flight at once for a store without `read_many` (a listing level,
/// a recovery batch): enough to sit at the round-trip floor for wide levels,
/// few enough that a host store is not flooded.
pub const MAX_CONCURRENT_READS: usize = 64;

/// One `read` per id with up to [`MAX_CONCURRENT_READS`] in
/// flight, issued in order; each finished read makes room for the next. The
/// results keep the ids' order. Rejects only on cancellation.
pub async fn read_each(
    store: &dyn Store,
    ids: &[String],
    query: &ReadQuery,
    signal: &Signal,
) -> Result<Vec<ReadResult>> {
    use std::future::poll_fn;
    use std::task::Poll;
    let mut results: Vec<Option<ReadResult>> = ids.iter().map(|_| None).collect();
    let mut pending: Vec<(usize, LocalBoxFuture<'_, ReadResult>)> = Vec::new();
    let mut issued = 0;
    poll_fn(|cx| loop {
        while pending.len() < MAX_CONCURRENT_READS && issued < ids.len() {
            let read: LocalBoxFuture<'_, ReadResult> = Box::pin(signal.guard(store.read(&ids[issued], query)));
            pending.push((issued, read));
            issued += 1;
        }
        let before = pending.len();
        pending.retain_mut(|(i, read)| match read.as_mut().poll(cx) {
            Poll::Ready(result) => {
                results[*i] = Some(result);
                false
            }
            Poll::Pending => true,
        });
        if signal.is_aborted() || (pending.is_empty() && issued == ids.len()) {
            return Poll::Ready(());
        }
        if pending.len() == before {
            return Poll::Pending;
        }
    })
    .await;
    signal.check()?;
    Ok(results.into_iter().map(|r| r.unwrap_or_else(|| Err(crate::SubagentError::cancelled()))).collect())
}

/// Call counts, for tests and benchmarks that count round trips.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub appends: u64,
    pub reads: u64,
    pub read_manys: u64,
}

/// An in-memory store. With `batch` off it offers no `read_many`, like a
/// minimal host store. It holds at most `max_bytes` (events measured by
/// [`crate::core::limits::stored_size`]): an append past it is refused
/// `LIMIT_EXCEEDED` and changes nothing, so a heap that never shrinks is not
/// filled by a store.
pub struct MemoryStore {
    logs: RefCell<HashMap<String, Vec<SessionEvent>>>,
    stats: Cell<StoreStats>,
    batch: bool,
    bytes: Cell<usize>,
    max_bytes: usize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore {
            logs: RefCell::default(),
            stats: Cell::default(),
            batch: false,
            bytes: Cell::new(0),
            max_bytes: crate::core::limits::DEFAULT_MEMORY_STORE_BYTES,
        }
    }
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore { batch: true, ..MemoryStore::default() }
    }

    /// A store that holds at most `max_bytes` (up to [`crate::core::limits::MAX_MEMORY_STORE_BYTES`]).
    pub fn with_max_bytes(max_bytes: usize) -> MemoryStore {
        MemoryStore {
            batch: true,
            max_bytes: max_bytes.min(crate::core::limits::MAX_MEMORY_STORE_BYTES),
            ..MemoryStore::default()
        }
    }

    /// A store without `read_many`.
    pub fn without_batch() -> MemoryStore {
        MemoryStore::default()
    }

    /// What the store holds now and may hold at most, in bytes.
    pub fn usage(&self) -> (usize, usize) {
        (self.bytes.get(), self.max_bytes)
    }

    pub fn stats(&self) -> StoreStats {
        self.stats.get()
    }

    pub fn reset_stats(&self) {
        self.stats.set(StoreStats::default());
    }

    /// Appends synchronously (the async trait method delegates here).
    pub fn append_now(&self, session: &str, events: Vec<SessionEvent>) -> Result<()> {
        let mut logs = self.logs.borrow_mut();
        let len = logs.get(session).map_or(0, Vec::len) as u64;
        for (i, event) in events.iter().enumerate() {
            let expected = len + i as u64;
            if event.seq != expected {
                return Err(SubagentError::new(
                    ErrorCode::AppendConflict,
                    format!(
                        "append to session {session} must continue at seq {expected}, not {}",
                        event.seq,
                        session = Quoted(session)
                    ),
                ));
            }
        }
        let added = events.iter().fold(0usize, |n, e| n.saturating_add(crate::core::limits::stored_size(e)));
        let held = self.bytes.get();
        if held.saturating_add(added) > self.max_bytes {
            return Err(SubagentError::new(
                ErrorCode::LimitExceeded,
                format!(
                    "this MemoryStore holds {held} bytes; appending {added} more to session {session} would pass its maxBytes ({})",
                    self.max_bytes,
                    session = Quoted(session)
                ),
            ));
        }
        self.bytes.set(held + added);
        let mut stats = self.stats.get();
        stats.appends += 1;
        self.stats.set(stats);
        logs.entry(session.to_owned()).or_default().extend(events);
        Ok(())
    }

    /// Reads synchronously (the async trait method delegates here).
    pub fn read_now(&self, session: &str, query: &ReadQuery) -> Option<Vec<SessionEvent>> {
        self.logs
            .borrow()
            .get(session)
            .map(|log| log.iter().skip(query.from_seq as usize).filter(|e| query.matches(e)).cloned().collect())
    }

    /// The length of a session's log (0 when it does not exist).
    pub fn len(&self, session: &str) -> u64 {
        self.logs.borrow().get(session).map_or(0, Vec::len) as u64
    }

    pub fn is_empty(&self) -> bool {
        self.logs.borrow().is_empty()
    }

    /// Every session id, sorted (for inspection).
    pub fn sessions(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.logs.borrow().keys().cloned().collect();
        ids.sort();
        ids
    }

    fn count(&self, f: impl FnOnce(&mut StoreStats)) {
        let mut stats = self.stats.get();
        f(&mut stats);
        self.stats.set(stats);
    }
}

impl Store for MemoryStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move { self.append_now(session, events) })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async move {
            self.count(|s| s.reads += 1);
            query.signal.check()?;
            Ok(self.read_now(session, query))
        })
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        if !self.batch {
            return None;
        }
        Some(Box::pin(async move {
            self.count(|s| s.read_manys += 1);
            query.signal.check()?;
            Ok(sessions.iter().map(|id| Ok(self.read_now(id, query))).collect())
        }))
    }

    fn flush<'a>(&'a self, _session: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        // Memory is as durable as it gets here, but no persistence listener took part.
        Box::pin(async { Ok(false) })
    }
}

impl<S: Store + ?Sized> Store for std::rc::Rc<S> {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        (**self).append(session, events)
    }
    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        (**self).read(session, query)
    }
    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        (**self).read_many(sessions, query)
    }
    fn flush<'a>(&'a self, session: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        (**self).flush(session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::json::Value;

    #[test]
    fn a_memory_store_refuses_an_append_past_its_bytes_and_keeps_what_it_had() {
        let store = MemoryStore::with_max_bytes(1000);
        let event = |seq, text: &str| SessionEvent::new(seq, "note", Value::from(text));
        store.append_now("s", vec![event(0, &"a".repeat(400))]).unwrap();
        let (held, max) = store.usage();
        let expected = std::mem::size_of::<Value>() + 400 + "note".len() + crate::core::limits::EVENT_OVERHEAD_BYTES;
        assert_eq!((held, max), (expected, 1000));
        let refused = store.append_now("s", vec![event(1, &"b".repeat(300)), event(2, &"c".repeat(300))]).unwrap_err();
        assert_eq!(refused.code, ErrorCode::LimitExceeded);
        assert!(refused.message.contains("would pass its maxBytes (1000)"), "{}", refused.message);
        assert_eq!(store.len("s"), 1, "the refused batch wrote nothing");
        assert_eq!(store.usage().0, held);
        store.append_now("s", vec![event(1, "small")]).unwrap();
        assert_eq!(store.len("s"), 2);
    }
}
