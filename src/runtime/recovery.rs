//! Crash recovery: what a tree reopened after its host stopped does about
//! the work that host left behind.
//!
//! A turn writes `turn/start` (with its input ids) before the host runs it and
//! `turn/end` after, so a log whose last turn event is a start holds a turn the
//! host never finished. Whenever such a member becomes resident again (the
//! root at open, a child at resume) that turn is recorded as ended, `error`
//! with a diagnostic, exactly once. Under [`Recovery::Report`] its input counts
//! as answered by that failure; under [`Recovery::Rerun`] it stays pending and
//! runs again. Opening a root also resumes, in the background, every member
//! with a lost turn or pending input, parents before children, so accepted
//! work is answered or reported without waiting for someone to message it.

use super::machine::Adopted;
use super::member::{InboxMessage, Member};
use super::{LostTurn, Recovery, Runtime};
use crate::core::catalog::Mode;
use crate::core::event;
use crate::core::json::Value;
use crate::core::listing::Row;
use crate::core::result::{StopReason, SubagentResult};
use crate::core::signal::Signal;
use crate::core::store::ReadQuery;
use std::rc::Rc;

/// How many times in a row [`Recovery::Rerun`] runs a lost turn's input
/// again: a turn lost that often (one that kills its host) is then recorded
/// as failed, its input answered by the failure and its creator told.
pub const MAX_RERUNS: u32 = 3;

/// The diagnostic of a turn the host never finished.
pub const LOST_TURN: &str =
    "the host stopped during this turn (its process ended or crashed); the turn was recorded as failed when the session reopened";

/// How many member logs one recovery batch reads (one `read_many` round trip
/// each, of the message and turn events only): a 10,000-member tree costs
/// about ten round trips at open.
const BATCH: usize = 1024;

impl Runtime {
    /// Takes a loaded log's pending input into a new resident member. Returns
    /// the lost turn's input ids, which the caller records with
    /// [`Runtime::record_lost_turn`] before the member runs. `ran`: the log
    /// records a turn its host was handed, so the next turn is not `first`;
    /// `(parked, spent)`: an interrupt parked that input, and a budget on its
    /// chain is still spent (its last stop said so).
    pub(crate) fn adopt_log(
        &self,
        member: &Member,
        mut pending: Vec<InboxMessage>,
        lost_turn: Option<Vec<String>>,
        mut ran: bool,
        (parked, spent): (bool, bool),
        rerun_streak: u32,
    ) -> Option<LostTurn> {
        // A turn lost MAX_RERUNS times in a row (it kills its host, say) is not run again.
        let rerun = self.0.options.recovery == Recovery::Rerun && rerun_streak < MAX_RERUNS;
        let mut last = None;
        if let Some(ids) = &lost_turn {
            if !rerun {
                pending.retain(|m| !ids.contains(&m.id));
                last = Some(lost_result());
                // Its record consumes that input: the host was handed it.
                ran |= !ids.is_empty();
            }
        }
        member.write(|s| s.life.adopt(member.lane(), Adopted { pending, parked, spent, ran, last }));
        lost_turn.map(|input| LostTurn { input, rerun })
    }

    /// Writes the `turn/end` a lost turn never got (callers are the
    /// runtime's own tasks: an open or a resume, which run to their end).
    /// Until the record lands the member does not settle and its tree is not
    /// quiet (it counts as a write in flight).
    pub(crate) async fn record_lost_turn(&self, member: &Rc<Member>, lost: LostTurn) {
        let consumed = if lost.rerun { Vec::new() } else { lost.input };
        let mut payload = super::lifecycle::turn_end_payload(&lost_result(), &consumed);
        // What the lost turn spent is unknown: totals that include it are not complete.
        if let Value::Object(fields) = &mut payload {
            fields.push(("usageUnknown".to_owned(), Value::Bool(true)));
        }
        member.write(|s| s.life.begin_record());
        // A store that refuses leaves the start unmatched: the next open tries again.
        let _ = self.append(member, vec![(event::TURN_END.to_owned(), payload)]).await;
        self.emit(super::lifecycle::turn_event(member, Some(&lost_result())));
        member.write(|s| s.life.write_ended(None, 0));
        self.tree_changed(&member.root_id);
    }

    /// Starts the open-time scan of a root's tree (not under [`Recovery::Off`]).
    pub(crate) fn recover_tree(&self, root_id: &str) {
        if self.0.options.recovery == Recovery::Off {
            return;
        }
        match self.0.state.borrow_mut().trees.get_mut(root_id) {
            Some(tree) => tree.begin_recovery(),
            None => return,
        }
        let (runtime, root_id) = (self.clone(), root_id.to_owned());
        self.spawn(Box::pin(async move {
            runtime.scan(&root_id).await;
            if let Some(tree) = runtime.0.state.borrow_mut().trees.get_mut(&root_id) {
                tree.end_recovery();
            }
            runtime.tree_changed(&root_id);
        }));
    }

    /// Resumes, in pre-order, each cold continuable member whose log holds a
    /// lost turn or pending input. A failure leaves that member cold: its input
    /// stays in its log and the next message resumes it.
    async fn scan(&self, root_id: &str) {
        let never = Signal::never();
        let Ok(rows) = crate::core::listing::list_descendants(&*self.0.store, root_id, &never).await else { return };
        let candidates: Vec<usize> =
            (0..rows.len()).filter(|&i| matches!(&rows[i], Row::Child(c) if c.mode == Mode::Continuable)).collect();
        let query = ReadQuery {
            damaged: true,
            ..ReadQuery::types(&[event::SESSION_START, event::MESSAGE, event::TURN_START, event::TURN_END], &never)
        };
        for batch in candidates.chunks(BATCH) {
            let ids: Vec<String> = batch.iter().map(|&i| rows[i].id().to_owned()).collect();
            let logs = self.read_batch(&ids, &query).await;
            for (&index, events) in batch.iter().zip(logs) {
                if !self.tree_open(root_id) {
                    return;
                }
                let Some(events) = events else { continue };
                let inherited = event::inherited_event_count(&events);
                // Parked input waits for a waking send, across a restart too;
                // input a spent budget parked runs once its budgets have room.
                let stopped = super::log::last_stop(&events, inherited)
                    == Some(crate::core::result::StopReason::BudgetExhausted.as_str());
                let waits =
                    super::log::parked(&events, inherited) && !(stopped && self.has_room(root_id, &rows, index));
                let needs = super::log::lost_turn(&events, inherited).is_some()
                    || (!waits && !super::message::pending_messages(&events).is_empty());
                if needs && !self.0.state.borrow().members.contains_key(rows[index].id()) {
                    // Released at once: the release moves it on (runs its input or settles).
                    drop(self.resume_row(root_id, &rows, index, &never).await);
                }
            }
        }
    }

    /// One batch of filtered reads: `read_many` when the store has it. An
    /// unreadable log is `None` (listing already reported it).
    async fn read_batch(&self, ids: &[String], query: &ReadQuery) -> Vec<Option<Vec<crate::SessionEvent>>> {
        if let Some(batch) = self.0.store.read_many(ids, query) {
            if let Ok(results) = batch.await {
                if results.len() == ids.len() {
                    return results.into_iter().map(|r| r.ok().flatten()).collect();
                }
            }
        }
        match crate::core::store::read_each(&*self.0.store, ids, query, &query.signal).await {
            Ok(results) => results.into_iter().map(|r| r.ok().flatten()).collect(),
            Err(_) => ids.iter().map(|_| None).collect(),
        }
    }

    fn tree_open(&self, root_id: &str) -> bool {
        self.0.state.borrow().trees.get(root_id).is_some_and(|t| !t.is_draining())
    }
}

fn lost_result() -> SubagentResult {
    SubagentResult::new(StopReason::Error).with_diagnostic(LOST_TURN.to_owned())
}
