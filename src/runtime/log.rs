//! A member's log: appends in order with read-back of a write whose outcome
//! the store did not tell, what landed anyway taken in, and what residency
//! reads from a log ([`LoadedLog`]: pending input, lost turns, parked and
//! spent stops).

use super::member::{InboxMessage, Member};
use super::message;
use super::{Agent, Runtime};
use crate::core::agent_options::AgentOptions;
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashSet;
use crate::core::json::Value;
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use crate::core::trace::TraceContext;

pub(crate) fn persistence(session: &str, e: SubagentError) -> SubagentError {
    if e.code == ErrorCode::PersistenceUnavailable || e.code == ErrorCode::Cancelled {
        return e;
    }
    let cause = e.cause.clone();
    let mut out = crate::err!(
        PersistenceUnavailable,
        "writing session {} failed: {}",
        crate::core::name::quote_truncated(session, 80),
        e.message
    );
    out.cause = cause;
    out
}

/// A lost turn to record (`recovery.rs`): its input ids, and whether that input runs again.
pub(crate) struct LostTurn {
    pub input: Vec<String>,
    pub rerun: bool,
}

/// What residency needs from a log.
pub(crate) struct LoadedLog {
    pub len: u64,
    pub child_names: HashSet<String>,
    pub cwd: Option<String>,
    pub start: Option<Value>,
    /// Accepted messages no recorded turn consumed: the member still owns them.
    pub pending: Vec<InboxMessage>,
    /// A turn that started and never ended: the ids of its input.
    pub lost_turn: Option<Vec<String>>,
    /// The last recorded turn was stopped (`aborted`): pending input is parked
    /// until a waking send, as the interrupt left it.
    pub parked: bool,
    /// The member has run a turn (see [`ran_a_turn`]): its next is not its `first`.
    pub ran: bool,
    /// The last recorded turn end is `budget-exhausted`: pending input is
    /// parked while a budget on its chain stays spent.
    pub exhausted: bool,
    /// The budgets a root's log records for its tree (empty for other logs).
    pub budgets: crate::core::budget::Budgets,
    /// How many turns in a row ended as lost and kept their input to run again.
    pub rerun_streak: u32,
    /// The trace context the log keeps (see [`crate::core::trace`]).
    pub trace: Option<TraceContext>,
    /// The member's agent options, as its own events last set them.
    pub agent_options: Option<AgentOptions>,
}

impl LoadedLog {
    pub(super) fn from_events(id: &str, events: &[SessionEvent]) -> Result<LoadedLog> {
        for (i, e) in events.iter().enumerate() {
            if e.seq != i as u64 {
                return Err(crate::err!(
                    NotResumable,
                    "session {id} has a broken log: event {i} carries seq {}",
                    e.seq,
                    id = Quoted(id)
                ));
            }
        }
        if let Some(e) = events.iter().find(|e| refuses_load(e)) {
            return Err(crate::err!(
                NotResumable,
                "session {id} cannot be opened: its {} (event {}) is damaged in the store: {}",
                e.kind,
                e.seq,
                event::damaged(e).unwrap_or_default(),
                id = Quoted(id)
            ));
        }
        let inherited = event::inherited_event_count(events);
        let start = events
            .iter()
            .rev()
            .find(|e| e.kind == event::SESSION_START && e.seq == inherited)
            .map(|e| e.payload.clone());
        let cwd = events.iter().rev().filter(|e| e.seq >= inherited).find_map(|e| match e.kind.as_str() {
            event::CWD => e.payload.get("cwd").and_then(Value::as_str).map(str::to_owned),
            event::SESSION_START => e.payload.get("cwd").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        });
        Ok(LoadedLog {
            len: events.len() as u64,
            child_names: taken_names(&crate::core::catalog::project_each(events, inherited)),
            cwd,
            start,
            pending: message::pending_messages(events),
            lost_turn: lost_turn(events, inherited),
            parked: parked(events, inherited),
            ran: ran_a_turn(events.iter().filter(|e| e.seq >= inherited)),
            exhausted: last_stop(events, inherited) == Some(crate::core::result::StopReason::BudgetExhausted.as_str()),
            budgets: {
                let mut budgets = crate::core::budget::Budgets::default();
                crate::core::budget::fold(&mut budgets, events.iter().filter(|e| e.seq >= inherited));
                budgets
            },
            rerun_streak: rerun_streak(0, events.iter().filter(|e| e.seq >= inherited)),
            trace: TraceContext::of_events(events.iter(), inherited),
            agent_options: agent_options_of(events.iter().filter(|e| e.seq >= inherited)).flatten(),
        })
    }
}

/// What these (own) events last set of the member's agent options: its
/// `session/start`'s or an `agent/options` event's (`Some(None)` clears them);
/// `None` when none of them says. An entry that does not read is skipped (the
/// options were checked when they were written).
pub(crate) fn agent_options_of<'a>(own: impl Iterator<Item = &'a SessionEvent>) -> Option<Option<AgentOptions>> {
    let mut last = None;
    for e in own {
        if e.kind == event::SESSION_START || e.kind == event::AGENT_OPTIONS {
            last = Some(e.payload.get("agentOptions").and_then(|v| AgentOptions::from_value(v, "agentOptions").ok()));
        }
    }
    last
}

/// `streak` carried over these (own) events: each turn end that recorded a
/// lost turn whose input stays pending (a rerun) adds one; any other end
/// starts the count again.
pub(crate) fn rerun_streak<'a>(mut streak: u32, own: impl Iterator<Item = &'a SessionEvent>) -> u32 {
    for e in own.filter(|e| e.kind == event::TURN_END) {
        let unknown = e.payload.get("usageUnknown").and_then(Value::as_bool) == Some(true);
        let consumed = e.payload.get("consumed").and_then(Value::as_array).is_some_and(|ids| !ids.is_empty());
        streak = if unknown && !consumed { streak.saturating_add(1) } else { 0 };
    }
    streak
}

/// Whether a damaged event (see [`event::DAMAGED`]) keeps its session from
/// opening: without its start marker the member's creator and inherited prefix
/// are unknown, without a directory change where it runs, without a budget
/// record what it may spend. Any other damaged event costs only itself: a
/// catalog entry is skipped (its name, when that read, stays taken), a message
/// is input that says it could not be read, a turn end consumed what came before it.
fn refuses_load(e: &SessionEvent) -> bool {
    matches!(e.kind.as_str(), event::SESSION_START | event::CWD | event::BUDGET) && event::damaged(e).is_some()
}

/// The names a catalog takes among its children: every entry's that reads,
/// a damaged one's too (a new child never reuses a name an entry may hold).
pub(crate) fn taken_names(entries: &[crate::core::catalog::Projected]) -> crate::core::hash::HashSet<String> {
    entries
        .iter()
        .filter_map(|e| match e {
            Ok(entry) => entry.name.as_ref(),
            Err(damaged) => damaged.name.as_ref(),
        })
        .map(|n| n.as_str().to_owned())
        .collect()
}

/// The input ids of the last own turn that started and never ended.
pub(crate) fn lost_turn(events: &[SessionEvent], inherited: u64) -> Option<Vec<String>> {
    let last = events
        .iter()
        .rev()
        .take_while(|e| e.seq >= inherited)
        .find(|e| e.kind == event::TURN_START || e.kind == event::TURN_END)?;
    (last.kind == event::TURN_START).then(|| {
        let ids = last.payload.get("input").and_then(Value::as_array).unwrap_or_default();
        ids.iter().filter_map(Value::as_str).map(str::to_owned).collect()
    })
}

/// Whether any of these (own) events records a turn whose host was handed
/// input: a `turn/end` that consumed some. A turn stopped before its host saw
/// it, or a lost turn kept to run again, consumed none. Read from the log, so
/// a member reopened after a restart (a root too) is not on its `first` turn.
pub(crate) fn ran_a_turn<'a>(mut own: impl Iterator<Item = &'a SessionEvent>) -> bool {
    own.any(|e| {
        e.kind == event::TURN_END
            && e.payload.get("consumed").and_then(Value::as_array).is_some_and(|ids| !ids.is_empty())
    })
}

/// Whether the last own turn ended `aborted` (an interrupt, disposal or
/// drain) or `budget-exhausted`: its pending input waits.
pub(crate) fn parked(events: &[SessionEvent], inherited: u64) -> bool {
    use crate::core::result::StopReason;
    matches!(
        last_stop(events, inherited).map(StopReason::from),
        Some(StopReason::Aborted | StopReason::BudgetExhausted)
    )
}

/// The stop reason of the last own turn event, when that is an end.
pub(crate) fn last_stop(events: &[SessionEvent], inherited: u64) -> Option<&str> {
    let last = events
        .iter()
        .rev()
        .take_while(|e| e.seq >= inherited)
        .find(|e| e.kind == event::TURN_START || e.kind == event::TURN_END)?;
    (last.kind == event::TURN_END).then(|| last.payload.get("stopReason").and_then(Value::as_str)).flatten()
}

impl Runtime {
    /// A session's log (of `types`, all when `None`; `None` when the store
    /// holds no such session), read through the runtime's store: what an
    /// adapter replays without being handed the store. It writes nothing.
    pub async fn read_log(
        &self,
        session_id: &str,
        types: Option<Vec<String>>,
        signal: &Signal,
    ) -> Result<Option<Vec<SessionEvent>>> {
        let query = ReadQuery { types, signal: signal.clone(), ..ReadQuery::default() };
        self.0.store.read(session_id, &query).await.map_err(|e| persistence(session_id, e))
    }

    /// A live member's own log (of `types`, all when `None`), read through
    /// the runtime's store: what its host reads for the member's history, so
    /// a host is never handed the store (or another member's log) for it.
    pub async fn read_own_log(
        &self,
        agent: &Agent,
        types: Option<Vec<String>>,
        signal: &Signal,
    ) -> Result<Vec<SessionEvent>> {
        self.require_live(agent, "agent")?;
        Ok(self.read_log(agent.session_id(), types, signal).await?.unwrap_or_default())
    }

    /// Reads what residency needs from a session's log.
    pub(crate) async fn load_log(&self, id: &str) -> Result<LoadedLog> {
        self.load_log_kept(id).await
    }

    /// Appends events to a resident member's log, in order, assigning seqs.
    pub(crate) async fn append(&self, member: &Member, events: Vec<(String, Value)>) -> Result<u64> {
        self.append_if(member, events, |_| Ok(())).await
    }

    /// [`Runtime::append`], with `check` run once the log is known up to date
    /// and right before the write (a catalog entry re-checks its name there).
    ///
    /// A failed append may still have committed (a timeout after the commit),
    /// so the log is read back from the first new seq: our events there mean
    /// success; nothing there means failure; an unreadable log leaves the
    /// member's log unsure, and the next append first takes in what landed.
    pub(crate) async fn append_if(
        &self,
        member: &Member,
        events: Vec<(String, Value)>,
        check: impl FnOnce(&Member) -> Result<()>,
    ) -> Result<u64> {
        let _guard = member.append_lock.lock().await;
        if member.read(|s| s.log_unsure) {
            self.take_in_tail(member).await?;
        }
        check(member)?;
        let first = member.read(|s| s.next_seq);
        let events: Vec<SessionEvent> = events
            .into_iter()
            .enumerate()
            .map(|(i, (kind, payload))| SessionEvent::new(first + i as u64, kind, payload))
            .collect();
        let count = events.len() as u64;
        let Err(e) = self.0.store.append(&member.id, events.clone()).await else {
            member.write(|s| s.next_seq = first + count);
            return Ok(first);
        };
        if e.code == ErrorCode::AppendConflict {
            member.write(|s| s.log_unsure = true); // someone else wrote: take it in next time
            return Err(persistence(&member.id, e));
        }
        let query = ReadQuery { from_seq: first, ..ReadQuery::default() };
        match self.0.store.read(&member.id, &query).await {
            Ok(found) => {
                let found: Vec<SessionEvent> =
                    found.unwrap_or_default().into_iter().filter(|f| f.seq >= first).collect();
                let ours = found.len() >= events.len()
                    && found.iter().zip(&events).all(|(f, e)| f.kind == e.kind && f.payload == e.payload);
                if found.is_empty() {
                    Err(persistence(&member.id, e))
                } else if ours {
                    member.write(|s| s.next_seq = first + count);
                    self.take_in(member, &found[events.len()..]);
                    Ok(first)
                } else {
                    self.take_in(member, &found);
                    Err(persistence(&member.id, e))
                }
            }
            Err(_) => {
                member.write(|s| s.log_unsure = true);
                Err(persistence(&member.id, e))
            }
        }
    }

    /// Runs `check` on a member whose log is known: one left unsure is taken in first.
    pub(crate) async fn check_known(&self, member: &Member, check: impl FnOnce(&Member) -> Result<()>) -> Result<()> {
        let _guard = member.append_lock.lock().await;
        if member.read(|s| s.log_unsure) {
            self.take_in_tail(member).await?;
        }
        check(member)
    }

    /// Reads what landed past `next_seq` in an unsure log and takes it in.
    async fn take_in_tail(&self, member: &Member) -> Result<()> {
        let from = member.read(|s| s.next_seq);
        let query = ReadQuery { from_seq: from, ..ReadQuery::default() };
        let found = self.0.store.read(&member.id, &query).await.map_err(|e| persistence(&member.id, e))?;
        let found: Vec<SessionEvent> = found.unwrap_or_default().into_iter().filter(|f| f.seq >= from).collect();
        self.take_in(member, &found);
        member.write(|s| s.log_unsure = false);
        Ok(())
    }

    /// Events that landed though their writer was told they failed: the log
    /// moves past them, a catalog entry's name is taken, and a message is
    /// input (it is durable, so a cold resume would deliver it too).
    fn take_in(&self, member: &Member, found: &[SessionEvent]) {
        let Some(last) = found.last() else { return };
        let names = found
            .iter()
            .filter(|e| e.kind == event::CATALOG)
            .filter_map(|e| e.payload.get("name").and_then(Value::as_str).map(str::to_owned));
        let messages = message::pending_messages(found);
        let taken_in = !messages.is_empty();
        member.write(|s| {
            s.next_seq = s.next_seq.max(last.seq + 1);
            s.child_names.extend(names);
            // Durable already: taken in as accepted input.
            s.life.found_in_log(messages);
        });
        if !taken_in {
            return;
        }
        let resident =
            self.0.state.borrow().members.get(&member.id).filter(|m| m.incarnation == member.incarnation).cloned();
        if let Some(resident) = resident {
            self.kick(&resident);
        }
    }
}
