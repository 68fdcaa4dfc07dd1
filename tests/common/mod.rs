//! Shared fixtures for the native integration tests: a tree builder that
//! writes real `subagent/catalog` events (payload versions 0 to 3) into
//! session logs, and a wrapper store that counts, fails or stalls reads.

#![allow(dead_code)]

use serde_json::json;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::exec::{block_on, LocalBoxFuture};
use subagent_tree::json::Value;
use subagent_tree::store::{ReadResult, StoreStats};
use subagent_tree::{list_descendants, ErrorCode, MemoryStore, ReadQuery, Result, Row, Signal, Store, SubagentError};

/// A JSON literal as the crate's payload value.
pub fn value(j: serde_json::Value) -> Value {
    serde_json::from_value(j).expect("a JSON payload")
}

/// Version 0: one-shot or continuable, unnamed (continuable needs a label).
pub fn v0(id: &str, mode: &str) -> serde_json::Value {
    json!({"version": 0, "childId": id, "childCreatedAt": 1000, "mode": mode, "label": format!("task {id}")})
}

/// Version 1 with mode `unknown`: a historical child without a descriptor.
pub fn v1_unknown(id: &str) -> serde_json::Value {
    json!({"version": 1, "childId": id, "childCreatedAt": 1000, "mode": "unknown"})
}

/// Version 1 one-shot (unnamed, no label).
pub fn v1(id: &str, mode: &str) -> serde_json::Value {
    json!({"version": 1, "childId": id, "childCreatedAt": 1000, "mode": mode, "label": format!("task {id}")})
}

/// Version 2: an unnamed external execution.
pub fn v2_external(id: &str) -> serde_json::Value {
    json!({"version": 2, "childId": id, "childCreatedAt": 1000, "mode": "external"})
}

/// Version 3: a named entry of any v3 mode.
pub fn v3(id: &str, mode: &str, name: &str) -> serde_json::Value {
    json!({"version": 3, "childId": id, "childCreatedAt": 1000, "mode": mode, "label": format!("task {id}"), "name": name})
}

/// Session logs under construction. `add` appends a catalog event to the
/// parent's log and, for a non-external child, creates the child's session
/// (a `session/start` event) when it does not exist yet.
#[derive(Clone, Default)]
pub struct Tree {
    logs: BTreeMap<String, Vec<SessionEvent>>,
}

impl Tree {
    pub fn new() -> Tree {
        Tree::default()
    }

    /// Creates a session with its `session/start` event (no-op when it exists).
    pub fn session(&mut self, id: &str) -> &mut Tree {
        if !self.logs.contains_key(id) {
            self.push(id, event::SESSION_START, json!({"inheritedEventCount": 0}));
        }
        self
    }

    /// Appends one event of any type, continuing the session's seq.
    pub fn push(&mut self, session: &str, kind: &str, payload: serde_json::Value) -> &mut Tree {
        let log = self.logs.entry(session.to_owned()).or_default();
        let seq = log.len() as u64;
        log.push(SessionEvent::new(seq, kind, value(payload)));
        self
    }

    /// Appends `payload` as a catalog event of `parent` (creating the parent's
    /// session) and creates the child's session unless it is external.
    pub fn add(&mut self, parent: &str, payload: serde_json::Value) -> &mut Tree {
        self.session(parent);
        let child = payload["childId"].as_str().map(str::to_owned);
        let external = payload["mode"] == "external";
        self.push(parent, event::CATALOG, payload);
        if let (Some(child), false) = (child, external) {
            self.session(&child);
        }
        self
    }

    /// Appends a message event (noise the catalog must ignore).
    pub fn noise(&mut self, session: &str) -> &mut Tree {
        self.push(session, "message/user", json!({"content": [{"type": "text", "text": "hi"}]}))
    }

    /// Removes a session's log entirely (its catalog entry stays with the parent).
    pub fn drop_session(&mut self, id: &str) -> &mut Tree {
        self.logs.remove(id);
        self
    }

    /// Makes `child` an ordinary fork of `parent`: the parent's whole log as an
    /// inherited prefix, then `session/start {inheritedEventCount: k}` at seq k.
    pub fn fork(&mut self, parent: &str, child: &str) -> &mut Tree {
        let prefix = self.logs.get(parent).cloned().unwrap_or_default();
        let k = prefix.len() as u64;
        self.logs.insert(child.to_owned(), prefix);
        self.push(child, event::SESSION_START, json!({"inheritedEventCount": k}))
    }

    pub fn log(&self, id: &str) -> &[SessionEvent] {
        self.logs.get(id).map_or(&[], Vec::as_slice)
    }

    pub fn session_ids(&self) -> Vec<String> {
        self.logs.keys().cloned().collect()
    }

    /// A store holding exactly these logs; `batch` selects `MemoryStore::new()`
    /// (with `read_many`) or `MemoryStore::without_batch()`.
    pub fn store(&self, batch: bool) -> MemoryStore {
        let store = if batch { MemoryStore::new() } else { MemoryStore::without_batch() };
        for (id, events) in &self.logs {
            store.append_now(id, events.clone()).expect("a contiguous log");
        }
        store.reset_stats();
        store
    }
}

/// The two read strategies every listing test runs under.
pub const STRATEGIES: [(&str, bool); 2] = [("readMany", true), ("read", false)];

/// One store call, as the wrapper saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    Read(String),
    ReadMany(Vec<String>),
}

/// Wraps a `MemoryStore`: records every call, and can fail or stall the read
/// of chosen sessions (inside a batch too), or fail a whole batch.
pub struct TestStore {
    pub inner: MemoryStore,
    pub calls: RefCell<Vec<Call>>,
    pub fail: RefCell<HashSet<String>>,
    pub fail_code: ErrorCode,
    pub stall: RefCell<HashSet<String>>,
    pub fail_batches: bool,
}

impl TestStore {
    pub fn new(inner: MemoryStore) -> TestStore {
        TestStore {
            inner,
            calls: RefCell::default(),
            fail: RefCell::default(),
            fail_code: ErrorCode::PersistenceUnavailable,
            stall: RefCell::default(),
            fail_batches: false,
        }
    }

    pub fn failing(mut self, ids: &[&str]) -> TestStore {
        self.fail = RefCell::new(ids.iter().map(|s| s.to_string()).collect());
        self
    }

    pub fn failing_with(mut self, code: ErrorCode, ids: &[&str]) -> TestStore {
        self.fail_code = code;
        self.failing(ids)
    }

    pub fn stalling(self, ids: &[&str]) -> TestStore {
        *self.stall.borrow_mut() = ids.iter().map(|s| s.to_string()).collect();
        self
    }

    pub fn failing_batches(mut self) -> TestStore {
        self.fail_batches = true;
        self
    }

    fn failure(&self, id: &str) -> SubagentError {
        SubagentError::new(self.fail_code, format!("disk error reading {id}"))
    }

    /// How many times each session's log was read, singly or in a batch.
    pub fn reads_per_session(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for call in self.calls.borrow().iter() {
            match call {
                Call::Read(id) => *counts.entry(id.clone()).or_default() += 1,
                Call::ReadMany(ids) => ids.iter().for_each(|id| *counts.entry(id.clone()).or_default() += 1),
            }
        }
        counts
    }

    pub fn round_trips(&self) -> usize {
        self.calls.borrow().len()
    }

    pub fn stats(&self) -> StoreStats {
        self.inner.stats()
    }
}

impl Store for TestStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        self.inner.append(session, events)
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        self.calls.borrow_mut().push(Call::Read(session.to_owned()));
        if self.stall.borrow().contains(session) {
            return Box::pin(std::future::pending());
        }
        if self.fail.borrow().contains(session) {
            let err = self.failure(session);
            return Box::pin(async move { Err(err) });
        }
        self.inner.read(session, query)
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        let batch = self.inner.read_many(sessions, query)?;
        self.calls.borrow_mut().push(Call::ReadMany(sessions.to_vec()));
        if sessions.iter().any(|id| self.stall.borrow().contains(id)) {
            return Some(Box::pin(std::future::pending()));
        }
        if self.fail_batches {
            let err = self.failure("a batch");
            return Some(Box::pin(async move { Err(err) }));
        }
        Some(Box::pin(async move {
            let mut results = batch.await?;
            for (id, result) in sessions.iter().zip(results.iter_mut()) {
                if self.fail.borrow().contains(id) {
                    *result = Err(self.failure(id));
                }
            }
            Ok(results)
        }))
    }
}

/// Lists `root` from `store` on a fresh executor with a signal that never aborts.
pub fn list<S: Store + 'static>(store: &Rc<S>, root: &str) -> Result<Vec<Row>> {
    let (store, root) = (store.clone(), root.to_owned());
    block_on(async move { list_descendants(&*store, &root, &Signal::never()).await })
}

/// Lists `root` under both read strategies, checks the rows are identical and
/// keep the listing invariants, and returns them.
pub fn list_both(tree: &Tree, root: &str) -> Vec<Row> {
    let mut results = Vec::new();
    for (label, batch) in STRATEGIES {
        let store = Rc::new(tree.store(batch));
        let rows = list(&store, root).unwrap_or_else(|e| panic!("{label}: listing {root} failed: {e}"));
        check_invariants(&rows, root, label);
        results.push((label, rows));
    }
    let (_, first) = &results[0];
    for (label, rows) in &results[1..] {
        assert_eq!(render(rows), render(first), "{label} rows differ from readMany rows");
        assert_eq!(rows, first, "{label} rows differ from readMany rows");
    }
    results.swap_remove(0).1
}

/// Invariants every listing keeps: ids unique, the root never listed, each row's
/// parent is the root or an earlier row one level up (pre-order), and
/// `has_children` exactly when a later row names the child as its parent.
pub fn check_invariants(rows: &[Row], root: &str, label: &str) {
    let mut seen: HashMap<&str, u32> = HashMap::from([(root, 0)]);
    for row in rows {
        let parent_depth = seen.get(row.parent_id()).copied();
        assert_eq!(
            parent_depth.map(|d| d + 1),
            Some(row.depth()),
            "{label}: row {} (depth {}) must follow its parent {}",
            row.id(),
            row.depth(),
            row.parent_id()
        );
        assert!(seen.insert(row.id(), row.depth()).is_none(), "{label}: id {} listed twice", row.id());
    }
    let parents: HashSet<&str> = rows.iter().map(Row::parent_id).collect();
    for row in rows {
        if let Row::Child(c) = row {
            assert_eq!(c.has_children, parents.contains(c.id.as_str()), "{label}: hasChildren of {}", c.id);
        }
    }
}

/// One line per row: `<indent>id mode name=… path=… +` for a child (`+` when it
/// has children), `<indent>id !reason` for a diagnostic. Indent is 2 per depth
/// level below 1, and every line names its parent.
pub fn render(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|row| {
            let indent = "  ".repeat(row.depth().saturating_sub(1) as usize);
            match row {
                Row::Child(c) => {
                    let mut line = format!("{indent}{} <{} {}", c.id, c.parent_id, c.mode.as_str());
                    if let Some(name) = &c.name {
                        line += &format!(" name={name}");
                    }
                    if let Some(path) = &c.path {
                        line += &format!(" path={path}");
                    }
                    if c.has_children {
                        line += " +";
                    }
                    line
                }
                Row::Diagnostic(d) => {
                    let at = d.entry.as_ref().map_or_else(String::new, |(seq, _)| format!("@{seq}"));
                    format!("{indent}{} <{} !{}{at}", d.id, d.parent_id, d.reason.as_str())
                }
            }
        })
        .collect()
}

/// Asserts the rendered rows, printing both sides on a mismatch.
#[track_caller]
pub fn assert_rows(rows: &[Row], expected: &[&str]) {
    let got = render(rows);
    assert_eq!(got, expected, "\n got:\n{}\n want:\n{}", got.join("\n"), expected.join("\n"));
}
