//! What a resume needs, kept so that a message, a spawn and a resume cost the
//! same at the 10,000th as at the first (issue 15).
//!
//! Without it, every message to a member that settled between messages
//! re-reads its whole log, and every default name scans all of a parent's
//! names. This module keeps, per runtime:
//!
//! - **logs**: what residency needs from a log's first `len` events (the
//!   catalog's names, the directory, the start marker, pending input, the
//!   last turn). Logs are append-only (the store contract), so a later load
//!   reads only from `len - 1` on (`fromSeq`) and folds in the events past
//!   `len`; the one event of overlap must read back as the summary saw it.
//! - **default-name floors**: per creator, a number below which every
//!   `agent-N` is committed, and a hint below which (from the floor) every
//!   one is committed or reserved, so the first free default name is found
//!   without scanning the creator's names or its starts in flight.
//!
//! Summaries are kept for logs a resume (or root open) read, not for children
//! just spawned: most are never resumed, and a summary holds the pending
//! input (a spawn's prompt). A child's first resume reads its whole log.
//!
//! Everything here is a cache, never an authority: a session missing from it
//! (never seen, or evicted) takes the full path. At most [`MAX_KEPT`]
//! sessions are kept, the least recently used dropped first, so a
//! runtime's memory stays bounded over any number of spawns and messages.
//!
//! A summary is stale when the log no longer continues it: shorter than
//! `len`, gone, or another event at `len - 1` (a store replaced or restored
//! under the runtime). The tail read finds that and the load falls back to a
//! full read (a second read, only then). Events another writer appended past
//! `len` (another runtime over the same store) are no staleness: the tail
//! folds them in like our own.
//!
//! The fold gives the state a full read gives, but for one case no correct
//! writer produces: a message re-appended with the id of one that a turn
//! before `len` consumed counts as pending again (a full read drops it).
//!
//! - **rows**: a resumed member's listing row and its creators' rows, so the
//!   next cold resume of it reads no catalog. A member with no kept rows is
//!   found by walking up from its log through the creators the start markers
//!   name, each link checked against the creator's catalog (one read per
//!   member on the way, not a listing of the tree). Rows never change once
//!   listed: catalogs are append-only and a child's entry is written once. A
//!   stale log summary (below) drops every kept row: the store is not the one
//!   they were listed from.

use super::member::InboxMessage;
use super::{LoadedLog, Runtime};
use crate::core::agent_options::AgentOptions;
use crate::core::error::{Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::hash::{HashMap, HashSet};
use crate::core::json::Value;
use crate::core::listing::{ChildRow, Row};
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Sessions kept at most, in two generations of half as many: when the
/// newer one is full it becomes the older one and the older one is dropped;
/// a session used again moves to the newer one. So what was used recently
/// stays (a summary lost costs one full read, a floor lost one scan of names).
pub(crate) const MAX_KEPT: usize = 2_048;

#[derive(Default)]
pub(crate) struct Kept {
    /// Session id -> its log summary and, as a creator, its default-name floor
    /// (every `agent-N` with `N` below it is committed). One map: less wasm.
    now: HashMap<String, Entry>,
    /// The generation before `now`, dropped when `now` is full again.
    old: HashMap<String, Entry>,
}

#[derive(Default)]
struct Entry {
    log: Option<LogSummary>,
    floor: usize,
    /// Every `agent-N` from `floor` to below this is taken (committed or
    /// reserved): a burst of concurrent default-named starts scans nothing.
    hint: usize,
    /// The member's listing row under the root it was listed from (rows never
    /// change: catalogs are append-only; `has_children` is not used here).
    row: Option<(String, ChildRow)>,
}

impl Kept {
    /// The first free default name among a creator's children: the first
    /// `agent-N` from the kept floor on that `taken` does not hold. The floor
    /// then moves past the names that are committed (`committed`).
    pub(crate) fn default_name(
        &mut self,
        parent_id: &str,
        committed: impl Fn(&str) -> bool,
        taken: impl Fn(&str) -> bool,
    ) -> crate::core::name::AgentName {
        let entry = self.entry(parent_id);
        let (floor, n, name) = crate::core::name::first_free_default(entry.floor, entry.hint, committed, taken);
        entry.floor = floor;
        entry.hint = n + 1;
        name
    }

    /// The entry of `id` in the newer generation (moved there, or new).
    fn entry(&mut self, id: &str) -> &mut Entry {
        if !self.now.contains_key(id) {
            let e = self.old.remove(id).unwrap_or_default();
            if self.now.len() >= MAX_KEPT / 2 {
                self.old = std::mem::take(&mut self.now);
            }
            self.now.insert(id.to_owned(), e);
        }
        self.now.entry(id.to_owned()).or_default()
    }

    /// The kept row of `id` under `root`, if any (as used).
    fn row(&mut self, root: &str, id: &str) -> Option<ChildRow> {
        if !self.now.contains_key(id) && !self.old.contains_key(id) {
            return None;
        }
        self.entry(id).row.as_ref().filter(|(r, _)| r == root).map(|(_, row)| row.clone())
    }

    /// The kept summary of `id`, taken out (a load keeps it again once read).
    fn summary(&mut self, id: &str) -> Option<LogSummary> {
        if !self.now.contains_key(id) && !self.old.contains_key(id) {
            return None;
        }
        self.entry(id).log.take()
    }

    /// Forgets every kept row: a stale log means the store is not the one they were listed from.
    fn forget_rows(&mut self) {
        self.now.values_mut().chain(self.old.values_mut()).for_each(|e| e.row = None);
    }

    fn len(&self) -> usize {
        self.now.len() + self.old.len()
    }
}

/// A fingerprint of one event: the summary's last event must read back the same.
fn fingerprint(e: &SessionEvent) -> u64 {
    fn value(v: &Value, h: &mut DefaultHasher) {
        match v {
            Value::Null => h.write_u8(0),
            Value::Bool(b) => h.write_u8(1 + u8::from(*b)),
            Value::Number(n) => {
                h.write_u8(3);
                h.write_u64(n.to_bits());
            }
            Value::String(s) => {
                h.write_u8(4);
                s.hash(h);
            }
            Value::Array(items) => {
                h.write_u8(5);
                h.write_usize(items.len());
                items.iter().for_each(|i| value(i, h));
            }
            Value::Object(entries) => {
                h.write_u8(6);
                h.write_usize(entries.len());
                for (k, v) in entries {
                    k.hash(h);
                    value(v, h);
                }
            }
        }
    }
    let mut h = DefaultHasher::new();
    e.seq.hash(&mut h);
    e.kind.hash(&mut h);
    value(&e.payload, &mut h);
    h.finish()
}

/// What residency needs from the first `len` events of a log.
struct LogSummary {
    len: u64,
    /// [`fingerprint`] of the event at `len - 1` (none when `len` is 0).
    last: Option<u64>,
    inherited: u64,
    child_names: HashSet<String>,
    cwd: Option<String>,
    start: Option<Value>,
    pending: Vec<InboxMessage>,
    lost_turn: Option<Vec<String>>,
    parked: bool,
    ran: bool,
    exhausted: bool,
    budgets: crate::core::budget::Budgets,
    rerun_streak: u32,
    trace: Option<crate::core::trace::TraceContext>,
    agent_options: Option<AgentOptions>,
}

impl LogSummary {
    fn of(log: &LoadedLog, inherited: u64, last: Option<&SessionEvent>) -> LogSummary {
        LogSummary {
            len: log.len,
            last: last.map(fingerprint),
            inherited,
            child_names: log.child_names.clone(),
            cwd: log.cwd.clone(),
            start: log.start.clone(),
            pending: log.pending.clone(),
            lost_turn: log.lost_turn.clone(),
            parked: log.parked,
            ran: log.ran,
            exhausted: log.exhausted,
            budgets: log.budgets.clone(),
            rerun_streak: log.rerun_streak,
            trace: log.trace.clone(),
            agent_options: log.agent_options.clone(),
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
            ran: self.ran,
            exhausted: self.exhausted,
            budgets: self.budgets.clone(),
            rerun_streak: self.rerun_streak,
            trace: self.trace.clone(),
            agent_options: self.agent_options.clone(),
        }
    }

    /// Folds the events from `len` on (contiguous, checked by the caller) into the summary.
    fn fold(&mut self, tail: &[SessionEvent]) -> Result<()> {
        let own: Vec<&SessionEvent> = tail.iter().filter(|e| e.seq >= self.inherited).collect();
        self.child_names.extend(super::log::taken_names(&crate::core::catalog::project_each(tail, self.inherited)));
        if let Some(cwd) = own.iter().rev().find_map(|e| match e.kind.as_str() {
            event::CWD | event::SESSION_START => e.payload.get("cwd").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        }) {
            self.cwd = Some(cwd);
        }
        let consumed = super::message::consumed_ids(own.iter().copied());
        self.pending.retain(|m| !consumed.contains(m.id.as_str()));
        self.pending.extend(
            own.iter()
                .filter(|e| e.kind == event::MESSAGE)
                .filter_map(|e| super::message::decode_message(&e.payload))
                .filter(|m| !consumed.contains(m.id.as_str())),
        );
        if own.iter().any(|e| e.kind == event::TURN_START || e.kind == event::TURN_END) {
            self.lost_turn = super::log::lost_turn(tail, self.inherited);
            self.parked = super::log::parked(tail, self.inherited);
            self.exhausted = super::log::last_stop(tail, self.inherited)
                == Some(crate::core::result::StopReason::BudgetExhausted.as_str());
            self.ran |= super::log::ran_a_turn(own.iter().copied());
        }
        crate::core::budget::fold(&mut self.budgets, own.iter().copied());
        self.rerun_streak = super::log::rerun_streak(self.rerun_streak, own.iter().copied());
        if let Some(trace) = crate::core::trace::TraceContext::of_events(own.iter().copied(), self.inherited) {
            self.trace = Some(trace);
        }
        if let Some(options) = super::log::agent_options_of(own.iter().copied()) {
            self.agent_options = options;
        }
        self.len += tail.len() as u64;
        if let Some(e) = tail.last() {
            self.last = Some(fingerprint(e));
        }
        Ok(())
    }
}

impl Runtime {
    /// Reads what residency needs from a session's log: only the events a kept
    /// summary has not seen (and the one before, to check it), else the whole
    /// log (and keeps the summary).
    pub(crate) async fn load_log_kept(&self, id: &str) -> Result<LoadedLog> {
        let summary = self.0.state.borrow_mut().kept.summary(id);
        if let Some(summary) = summary {
            let query = ReadQuery { from_seq: summary.len.saturating_sub(1), damaged: true, ..ReadQuery::default() };
            let events = self.0.store.read(id, &query).await?;
            if let Some(loaded) = self.fold_tail(id, summary, events)? {
                return Ok(loaded);
            }
            // Stale: the store changed under us (or a new start marker), so
            // the next resumes list their trees again.
            self.0.state.borrow_mut().kept.forget_rows();
        }
        // Damaged events cost what `LoadedLog::from_events` says, not the whole log.
        let query = ReadQuery { damaged: true, ..ReadQuery::default() };
        let events = self.0.store.read(id, &query).await?.unwrap_or_default();
        let loaded = LoadedLog::from_events(id, &events)?;
        self.keep_log(id, LogSummary::of(&loaded, event::inherited_event_count(&events), events.last()));
        Ok(loaded)
    }

    /// The load from a kept summary and what a read from `len - 1` returned,
    /// or `None` when the summary is stale (or the tail holds a new start
    /// marker): then only a full read knows. Not async: less wasm.
    fn fold_tail(
        &self,
        id: &str,
        mut summary: LogSummary,
        read: Option<Vec<SessionEvent>>,
    ) -> Result<Option<LoadedLog>> {
        let from = summary.len.saturating_sub(1);
        let Some(events) = read else {
            return Ok(None); // the session is gone
        };
        // Stores may ignore `fromSeq`: readers re-check it.
        let mut tail: Vec<SessionEvent> = events.into_iter().filter(|e| e.seq >= from).collect();
        if let Some(last) = summary.last {
            // The log must still hold the event the summary saw last, unchanged.
            if tail.first().is_none_or(|e| e.seq != from || fingerprint(e) != last) {
                return Ok(None);
            }
            tail.remove(0);
        }
        if let Some((i, e)) = tail.iter().enumerate().find(|(i, e)| e.seq != summary.len + *i as u64) {
            return Err(crate::err!(
                NotResumable,
                "session {id} has a broken log: event {} carries seq {}",
                summary.len + i as u64,
                e.seq,
                id = Quoted(id)
            ));
        }
        // A new start marker may move the inherited prefix; a damaged event
        // (a turn end's list, say) is for a full read to weigh.
        if tail.iter().any(|e| e.kind == event::SESSION_START || event::damaged(e).is_some()) {
            return Ok(None);
        }
        summary.fold(&tail)?;
        let loaded = summary.loaded();
        self.keep_log(id, summary);
        Ok(Some(loaded))
    }

    /// The listing rows a cold resume of `target` under `root` needs: its
    /// creators' rows, then its own (the chain is kept). From kept rows when
    /// all of them are kept; else by walking up from the target through the
    /// creators the logs' start markers name, each link checked against its
    /// creator's catalog (one read per member on the way, stopping at a
    /// creator whose rows are kept: a resume in a tree of 10,000 reads 5 logs,
    /// not 10,000); else, when some link cannot be checked (no start marker, a
    /// catalog that does not hold the member, a read that fails), the whole
    /// listing, which also says why.
    pub(crate) async fn resume_rows(&self, root: &str, target: &str, signal: &Signal) -> Result<Vec<Row>> {
        if let Some(rows) = self.kept_chain(root, target) {
            return Ok(rows);
        }
        let rows = match self.walk_up(root, target, signal).await? {
            Some(rows) => rows,
            None => crate::core::listing::list_descendants(&*self.0.store, root, signal).await?,
        };
        if let Some(index) = rows.iter().position(|r| r.id() == target) {
            let mut st = self.0.state.borrow_mut();
            let kept = &mut st.kept;
            let mut parent = None;
            for row in rows[..=index].iter().rev() {
                if let Row::Child(c) = row {
                    if c.id == target || parent.as_deref() == Some(c.id.as_str()) {
                        parent = Some(c.parent_id.clone());
                        kept.entry(&c.id).row = Some((root.to_owned(), c.clone()));
                    }
                }
            }
        }
        Ok(rows)
    }

    /// The refusal to open `id`, a child of `creator`, as a root (see
    /// [`not_a_root`]), with its full name from the walk a cold resume takes:
    /// up the creators to a log that names none, then down their catalogs.
    /// When that walk cannot be checked, the member's own name stands in.
    pub(crate) async fn refuse_child_as_root(&self, id: &str, creator: &str, name: Option<String>) -> SubagentError {
        let signal = Signal::never();
        let mut on_way: HashSet<String> = HashSet::default();
        let mut top = Some(creator.to_owned());
        let mut root = None;
        // Each step is one read of a start marker and a catalog; a tree is at most MAX_TREE_DEPTH deep.
        for _ in 0..=crate::core::limits::MAX_TREE_DEPTH {
            let Some(next) = top.take().filter(|n| on_way.insert(n.clone())) else { break };
            match crate::core::listing::read_catalog_and_creator(&*self.0.store, &next, &signal).await {
                Ok(Some((_, Some(up)))) => top = Some(up),
                Ok(Some((_, None))) => {
                    root = Some(next);
                    break;
                }
                _ => break,
            }
        }
        let full = match &root {
            Some(root) => match self.walk_up(root, id, &signal).await {
                Ok(Some(rows)) => rows.last().and_then(|r| match r {
                    Row::Child(c) if c.id == id => c.path_string(),
                    _ => None,
                }),
                _ => None,
            },
            None => None,
        };
        not_a_root(id, full.or(name).as_deref())
    }

    /// The kept rows from `root` down to `id` (never empty, all children), when every one is kept.
    fn kept_chain(&self, root: &str, id: &str) -> Option<Vec<Row>> {
        let mut st = self.0.state.borrow_mut();
        let kept = &mut st.kept;
        let mut chain = Vec::new();
        let mut id = id.to_owned();
        while id != root {
            let Some(row) = kept.row(root, &id) else { break };
            id = row.parent_id.clone();
            chain.push(Row::Child(row));
        }
        (id == root && !chain.is_empty()).then(|| {
            chain.reverse();
            chain
        })
    }

    /// [`Runtime::resume_rows`]'s walk up the creators: `None` when some link
    /// cannot be checked (the caller then lists the tree).
    async fn walk_up(&self, root: &str, target: &str, signal: &Signal) -> Result<Option<Vec<Row>>> {
        // `ids`: the target, then its creators; `catalogs[i]`: the catalog holding `ids[i]`.
        let (mut ids, mut catalogs) = (Vec::new(), Vec::new());
        let mut on_way: HashSet<String> = HashSet::default();
        let mut next = Some(target.to_owned());
        let above = loop {
            // No start marker names a creator, or they name a cycle.
            let Some(id) = next.take().filter(|id| on_way.insert(id.clone())) else { return Ok(None) };
            // A failed or corrupt read is no error here: the listing says what it is.
            let (entries, creator) =
                match crate::core::listing::read_catalog_and_creator(&*self.0.store, &id, signal).await {
                    Ok(Some(found)) => found,
                    Err(_) if signal.is_aborted() => return Err(crate::SubagentError::cancelled()),
                    _ => return Ok(None),
                };
            if !ids.is_empty() {
                catalogs.push(entries);
                if id == root {
                    break None;
                }
                if let Some(chain) = self.kept_chain(root, &id) {
                    break Some(chain);
                }
            }
            ids.push(id);
            next = creator;
        };
        ids.reverse();
        catalogs.reverse();
        let mut rows = above.unwrap_or_default();
        let top = match rows.last() {
            Some(Row::Child(top)) => Some(top),
            _ => None,
        };
        let Some(below) = crate::core::listing::chain(root, top, &ids, &catalogs) else { return Ok(None) };
        rows.extend(below);
        Ok(Some(rows))
    }

    fn keep_log(&self, id: &str, summary: LogSummary) {
        self.0.state.borrow_mut().kept.entry(id).log = Some(summary);
    }

    /// At most this many sessions are kept (tests: the bound).
    #[doc(hidden)]
    pub const MAX_KEPT: usize = MAX_KEPT;

    /// How many sessions this runtime keeps a summary or floor for (tests: the bound).
    #[doc(hidden)]
    pub fn kept_sessions(&self) -> usize {
        self.0.state.borrow().kept.len()
    }

    /// What a resume would take from a session's log, as text, read as a
    /// resume reads it (through a kept summary, keeping what it read). Tests
    /// compare it with a fresh runtime's, i.e. a full read.
    #[doc(hidden)]
    pub async fn resume_state(&self, id: &str) -> Result<String> {
        let log = self.load_log_kept(id).await?;
        // Owned strings: the same sort instance as `Runtime::resident`.
        let mut names: Vec<String> = log.child_names.iter().cloned().collect();
        names.sort();
        Ok(format!(
            "len {} names {names:?} cwd {:?} start {:?} pending {:?} lost {:?} parked {}",
            log.len, log.cwd, log.start, log.pending, log.lost_turn, log.parked
        ))
    }

    /// Forgets a creator's floor and hint (a committed name was withdrawn).
    pub(crate) fn reset_default_floor(&self, parent_id: &str) {
        let mut st = self.0.state.borrow_mut();
        let kept = &mut st.kept;
        if let Some(e) = kept.now.get_mut(parent_id).or(kept.old.get_mut(parent_id)) {
            e.floor = 1;
            e.hint = 0;
        }
    }

    /// A reservation of `name` ended without a commit: a default name below
    /// the hint is free again, so the hint moves back to it.
    pub(crate) fn default_name_freed(&self, parent_id: &str, name: &str) {
        let Some(n) = crate::core::name::default_index(name) else { return };
        let mut st = self.0.state.borrow_mut();
        let kept = &mut st.kept;
        if let Some(e) = kept.now.get_mut(parent_id).or(kept.old.get_mut(parent_id)) {
            e.hint = e.hint.min(n);
        }
    }
}

/// A child's Session asked to open as a root: `UNAUTHORIZED`, saying how to
/// reach the member (its root, then its full name) without the root's Session
/// id, which is authority over the whole tree.
pub(crate) fn not_a_root(id: &str, full_name: Option<&str>) -> SubagentError {
    let (known, how) = match full_name {
        Some(full) => (format!(" (its full name is {})", Quoted(full)), format!("reopen(root, '{full}')")),
        None => (String::new(), "reopen(root, <its full name>)".to_owned()),
    };
    crate::err!(
        Unauthorized,
        "session {}{known} is a child, not a root, and never opens as one: open its tree's root with \
         openRoot({{ sessionId: <the root's id> }}) and reach the member with {how}",
        crate::core::name::quote_truncated(id, 80)
    )
}
