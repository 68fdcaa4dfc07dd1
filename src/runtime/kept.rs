//! What a resume needs, kept so that a message, a spawn and a resume cost the
//! same at the 10,000th as at the first (issue 15).
//!
//! Without it, every message to a member that settled between messages
//! re-lists its whole tree and re-reads its whole log, and every default name
//! scans all of a parent's names. This module keeps, per runtime:
//!
//! - **logs**: what residency needs from a log's first `len` events (the
//!   catalog's names, the directory, the start marker, pending input, the
//!   last turn). Logs are append-only (the store contract), so a later load
//!   reads only the events from `len` on (`fromSeq`) and folds them in.
//! - **default-name floors**: per creator, a number below which every
//!   `agent-N` is committed, so the first free default name is found without
//!   scanning the creator's names.
//!
//! Everything here is a cache, never an authority: a member missing from it
//! (never seen, or dropped when a cache reached its bound) takes the full
//! path, and the tail read re-checks that the log still continues at `len`.
//! A kept load makes exactly the one read a full load makes.
//!
//! Not kept yet: listing rows. A cold resume still lists its tree to find the
//! member's row (cost linear in the tree's size, not in the member's log).

use super::member::InboxMessage;
use super::{LoadedLog, Runtime};
use crate::error::Result;
use crate::event::{self, SessionEvent};
use crate::json::Value;
use crate::store::ReadQuery;
use std::collections::{HashMap, HashSet};

/// Entries kept at most; past it the cache starts afresh (a floor lost costs one scan).
const MAX_LOGS: usize = 16_384;

#[derive(Default)]
pub(crate) struct Kept {
    /// Session id -> its log summary and, as a creator, its default-name floor
    /// (every `agent-N` with `N` below it is committed). One map: less wasm.
    logs: HashMap<String, Entry>,
}

#[derive(Default)]
struct Entry {
    log: Option<LogSummary>,
    floor: usize,
}

/// What residency needs from the first `len` events of a log.
#[derive(Clone)]
struct LogSummary {
    len: u64,
    inherited: u64,
    child_names: HashSet<String>,
    cwd: Option<String>,
    start: Option<Value>,
    pending: Vec<InboxMessage>,
    lost_turn: Option<Vec<String>>,
    parked: bool,
}

impl LogSummary {
    fn of(log: &LoadedLog, inherited: u64) -> LogSummary {
        LogSummary {
            len: log.len,
            inherited,
            child_names: log.child_names.clone(),
            cwd: log.cwd.clone(),
            start: log.start.clone(),
            pending: log.pending.clone(),
            lost_turn: log.lost_turn.clone(),
            parked: log.parked,
        }
    }

    fn loaded(&self) -> LoadedLog {
        LoadedLog {
            len: self.len,
            child_names: self.child_names.clone(),
            cwd: self.cwd.clone(),
            start: self.start.clone(),
            pending: self.pending.clone(),
            lost_turn: self.lost_turn.clone(),
            parked: self.parked,
        }
    }

    /// Folds the events from `len` on (contiguous, checked by the caller) into the summary.
    fn fold(&mut self, tail: &[SessionEvent]) -> Result<()> {
        let own: Vec<&SessionEvent> = tail.iter().filter(|e| e.seq >= self.inherited).collect();
        for entry in crate::catalog::project(tail, self.inherited)? {
            if let Some(name) = entry.name {
                self.child_names.insert(name.into_string());
            }
        }
        if let Some(cwd) = own.iter().rev().find_map(|e| match e.kind.as_str() {
            event::CWD | event::SESSION_START => e.payload.get("cwd").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        }) {
            self.cwd = Some(cwd);
        }
        let consumed: HashSet<&str> = own
            .iter()
            .filter(|e| e.kind == event::TURN_END)
            .filter_map(|e| e.payload.get("consumed").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        self.pending.retain(|m| !consumed.contains(m.id.as_str()));
        self.pending.extend(
            own.iter()
                .filter(|e| e.kind == event::MESSAGE)
                .filter_map(|e| super::deliver::decode_message(&e.payload))
                .filter(|m| !consumed.contains(m.id.as_str())),
        );
        if own.iter().any(|e| e.kind == event::TURN_START || e.kind == event::TURN_END) {
            self.lost_turn = super::lost_turn(tail, self.inherited);
            self.parked = super::parked(tail, self.inherited);
        }
        self.len += tail.len() as u64;
        Ok(())
    }
}

impl Runtime {
    /// Reads what residency needs from a session's log: only the events a kept
    /// summary has not seen, else the whole log (and keeps the summary).
    pub(crate) async fn load_log_kept(&self, id: &str) -> Result<LoadedLog> {
        let summary = self.0.kept.borrow().logs.get(id).and_then(|e| e.log.clone());
        if let Some(mut summary) = summary {
            let query = ReadQuery { from_seq: summary.len, ..ReadQuery::default() };
            // One read, as a full load makes: what it returns decides, never a second read.
            let Some(events) = self.0.store.read(id, &query).await? else {
                return LoadedLog::from_events(id, &[]); // the session is gone: as a full load finds it
            };
            // Stores may ignore `fromSeq`: readers re-check it.
            let tail: Vec<SessionEvent> = events.into_iter().filter(|e| e.seq >= summary.len).collect();
            if let Some((i, e)) = tail.iter().enumerate().find(|(i, e)| e.seq != summary.len + *i as u64) {
                return Err(crate::err!(
                    NotResumable,
                    "session {id:?} has a broken log: event {} carries seq {}",
                    summary.len + i as u64,
                    e.seq
                ));
            }
            // A new start marker may move the inherited prefix: only a full read knows.
            if !tail.iter().any(|e| e.kind == event::SESSION_START) {
                summary.fold(&tail)?;
                let loaded = summary.loaded();
                self.keep_log(id, summary);
                return Ok(loaded);
            }
        }
        let events = self.0.store.read(id, &ReadQuery::default()).await?.unwrap_or_default();
        let loaded = LoadedLog::from_events(id, &events)?;
        self.keep_log(id, LogSummary::of(&loaded, event::inherited_event_count(&events)));
        Ok(loaded)
    }

    fn keep_log(&self, id: &str, summary: LogSummary) {
        self.entry(id, |e| e.log = Some(summary));
    }

    fn entry(&self, id: &str, f: impl FnOnce(&mut Entry)) {
        let mut kept = self.0.kept.borrow_mut();
        if kept.logs.len() >= MAX_LOGS && !kept.logs.contains_key(id) {
            kept.logs.clear();
        }
        f(kept.logs.entry(id.to_owned()).or_default());
    }

    /// Keeps the log summary of a child this runtime just published (its
    /// first resume then reads only what it wrote while resident).
    pub(crate) fn keep_published(
        &self,
        child_id: &str,
        log_len: u64,
        inherited: u64,
        cwd: &str,
        start: &Value,
        first: &InboxMessage,
    ) {
        let summary = LogSummary {
            len: log_len,
            inherited,
            child_names: HashSet::new(),
            cwd: Some(cwd.to_owned()),
            start: Some(start.clone()),
            pending: vec![first.clone()],
            lost_turn: None,
            parked: false,
        };
        self.keep_log(child_id, summary);
    }

    /// The first free default name among a creator's children: the first
    /// `agent-N` from the kept floor on that `taken` does not hold. The floor
    /// then moves past the names that are committed (`committed`).
    pub(crate) fn default_name_kept(
        &self,
        parent_id: &str,
        committed: impl Fn(&str) -> bool,
        taken: impl Fn(&str) -> bool,
    ) -> crate::name::AgentName {
        let floor = self.0.kept.borrow().logs.get(parent_id).map_or(1, |e| e.floor);
        let (floor, name) = crate::name::first_free_default(floor, committed, taken);
        self.entry(parent_id, |e| e.floor = floor);
        name
    }

    /// Forgets a creator's floor (a committed name was withdrawn).
    pub(crate) fn reset_default_floor(&self, parent_id: &str) {
        if let Some(e) = self.0.kept.borrow_mut().logs.get_mut(parent_id) {
            e.floor = 1;
        }
    }
}
