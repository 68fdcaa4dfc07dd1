//! Turns, natural settlement, disposal, drain and tree work: the driver of
//! [`Life`](super::machine::Life), which decides; this file does the I/O.
//!
//! A member runs a turn whenever it is live, not parked, and has input. It
//! settles naturally when idle with nothing pending and no owned children
//! (child-first), and no host holds it.
//! Settlement (natural, dispose or drain) tears down first, then notifies a
//! live direct creator (parent delivery only), leaves residency, emits
//! `subagent/end`, and only then settles the activation's `result`. Until it
//! leaves, a message to the member waits for the settlement and then resumes
//! it, so one session's `subagent/start` and `subagent/end` never interleave.

use super::machine::{Step, Tree, Wait};
use super::member::{Kind, Member, MessageSource, Phase};
use super::{Agent, RunEndInfo, Runtime, RuntimeEvent};
use crate::core::budget::Gate;
use crate::core::catalog::Mode;
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event;
use crate::core::exec::Deferred;
use crate::core::json::Value;
use crate::core::result::{final_output, text_block, StopReason, SubagentResult};
use crate::core::signal::Signal;
use crate::runtime::ports::{Turn, TurnOutcome};
use std::rc::Rc;

impl Runtime {
    /// Drives the member's next move ([`Life::next`]): runs a turn, begins
    /// settlement, or does nothing.
    pub(crate) fn kick(&self, member: &Rc<Member>) {
        let starting = self.0.state.borrow().reservations.get(&member.id).is_some_and(|r| !r.is_empty());
        let gate = self.budget_gate(member);
        let step = member.write(|s| s.life.next(member.lane(), starting, &gate, || self.token()));
        let plan = match step {
            Step::Run(plan) => plan,
            Step::Exhausted => {
                if let Gate::Spent(spent) = gate {
                    self.exhaust(member, spent);
                }
                return;
            }
            Step::Settle => return self.close(member, false),
            Step::Idle => {
                if gate == Gate::Wait {
                    // The next end of a reserved turn kicks the members that wait;
                    // meanwhile a turn waiting for a quiet tree may find it quiet now.
                    self.with_tree(&member.root_id, Tree::wait_for_room);
                    self.wake_quiet_waiter(&member.root_id);
                }
                return;
            }
        };
        // Reserved in the same synchronous step the gate opened in.
        let budget = match gate {
            Gate::Open(allowance) => {
                let chain = super::budget::chain_of(member);
                self.with_tree(&member.root_id, |t| t.reserve_turn(plan.id, &chain, &allowance));
                Some(allowance)
            }
            _ => None,
        };
        let turn = Turn {
            session_id: member.id.clone(),
            root_id: member.root_id.clone(),
            name: member.full_name.clone(),
            parent_name: member.parent_name.clone(),
            input: plan.input,
            steer: super::SteerInbox(Rc::downgrade(member), plan.id),
            cwd: member.current_cwd(),
            signal: plan.signal.clone(),
            output_schema: plan.schema.as_ref().map(|s| s.source().clone()),
            first: plan.first,
            agent: Agent(member.clone()),
            context: crate::runtime::text::identity_context(&member.full_name, member.parent_name.as_deref()),
            // Only a parent-delivery child's report goes to its creator by itself.
            guidance: match (&member.parent_name, plan.first, member.delivery()) {
                (Some(parent), true, super::Delivery::Parent) => Some(crate::runtime::text::return_guidance(parent)),
                _ => None,
            },
            tool_calls_per_reply: self.0.options.limits.tool_calls_per_reply,
            budget,
            agent_options: member.agent_options.clone(),
            agent_preset: member.agent_preset.clone(),
        };
        self.emit(turn_event(member, None));
        let (runtime, member) = (self.clone(), member.clone());
        self.spawn(Box::pin(async move { runtime.run_turn(member, turn, plan.id, plan.signal, plan.schema).await }));
    }

    async fn run_turn(
        self,
        member: Rc<Member>,
        turn: Turn,
        id: u64,
        signal: Signal,
        schema: Option<Rc<crate::core::schema::OutputSchema>>,
    ) {
        // The turn's start is on record before the host sees it, so a host that
        // dies mid-turn leaves a start with no end, which the next open reports.
        // Best effort: a store that refuses it does not stop the turn.
        let ids: Vec<Value> = turn.input.iter().map(|m| Value::from(m.id.as_str())).collect();
        let start = Value::object([("input", Some(Value::Array(ids)))]);
        let _ = self.append(&member, vec![(event::TURN_START.to_owned(), start)]).await;
        let outcome = if signal.is_aborted() {
            // Stopped before the host was handed the turn: its input was never
            // delivered, so it goes back to the inbox, pending (and durable as such).
            member.write(|s| s.life.turn_unseen(id, turn.input));
            Err(SubagentError::cancelled())
        } else {
            // A host that ignores the abort cannot hold the member: the turn ends as aborted.
            signal.guard(self.0.host.run_turn(turn)).await
        };
        let result = capture(outcome, &signal, schema.as_deref());
        let consumed = member.read(|s| s.life.consumed(id));
        let mut ended = turn_event(&member, Some(&result));
        let recorded =
            self.append(&member, vec![(event::TURN_END.to_owned(), turn_end_payload(&result, &consumed))]).await;
        let captured = result.structured.is_some();
        let result_usage = result.usage;
        let record = recorded.as_ref().ok().copied();
        let last = recorded.map(|_| result);
        let (done, parked) =
            member.write(|s| (s.life.turn_ended(id, last.clone(), captured), s.life.has_parked_input()));
        self.answer(&consumed, &last);
        if let Some(done) = done {
            done.set(());
        }
        if let RuntimeEvent::Turn { parked: p, .. } = &mut ended {
            *p = parked;
        }
        // Counted as the logs count it: a turn that consumed input or reported
        // usage, or whose end did not land (its open start is counted as a lost turn).
        let counted = !consumed.is_empty() || result_usage.is_some() || record.is_none();
        self.turn_spent(&member, id, &crate::core::usage::turn_spent(result_usage.as_ref(), counted), record);
        self.emit(ended);
        self.tree_changed(&member.root_id);
        self.kick(&member);
    }

    /// A member whose budget is spent takes no further turn ([`Step::Exhausted`]):
    /// its stop is recorded (`budget-exhausted`, nothing consumed, so its
    /// input stays pending in the log and parked there across a restart),
    /// hosts waiting for an answer get that result, and a local member then
    /// settles, its creator told it ran out of budget.
    ///
    /// [`Step::Exhausted`]: super::machine::Step::Exhausted
    pub(crate) fn exhaust(&self, member: &Rc<Member>, spent: crate::core::budget::Exhausted) {
        let diagnostic = spent.error(&self.owner_name(member, &spent.owner), "it takes no further turn").message;
        let (runtime, member) = (self.clone(), member.clone());
        member.write(|s| s.life.begin_record());
        self.spawn(Box::pin(async move {
            let mut result = SubagentResult::new(StopReason::BudgetExhausted).with_diagnostic(diagnostic);
            let payload = turn_end_payload(&result, &[]);
            let _ = runtime.append(&member, vec![(event::TURN_END.to_owned(), payload)]).await;
            // Its closing message is the last output it gave, if any.
            let waiting = member.write(|s| s.life.exhausted_recorded(&mut result, !member.is_root()));
            runtime.answer(&waiting, &Ok(result.clone()));
            let mut ended = turn_event(&member, Some(&result));
            if let RuntimeEvent::Turn { parked, .. } = &mut ended {
                *parked = true;
            }
            runtime.emit(ended);
            runtime.tree_changed(&member.root_id);
            runtime.kick(&member);
        }));
    }

    /// Hands each message's waiting host the result of the turn that consumed it.
    pub(crate) fn answer(&self, consumed: &[String], result: &Result<SubagentResult>) {
        let waiting: Vec<_> = {
            let mut st = self.0.state.borrow_mut();
            consumed.iter().filter_map(|id| st.answers.remove(id)).collect()
        };
        for (_, answer) in waiting {
            answer.set(result.clone());
        }
    }

    /// Begins settlement once; `abort` stops in-flight work (dispose, drain).
    pub(crate) fn close(&self, member: &Rc<Member>, abort: bool) {
        let Some(settlement) = member.settlement.clone() else { return };
        let Some(turn) = member.write(|s| s.life.close()) else { return };
        let signal = match &member.kind {
            Kind::External { signal, .. } => Some(signal.clone()),
            _ => turn,
        };
        if abort {
            if let Some(signal) = signal {
                signal.abort();
            }
        }
        let (runtime, member) = (self.clone(), member.clone());
        self.spawn(Box::pin(async move { runtime.teardown(member, settlement, abort).await }));
    }

    async fn teardown(self, member: Rc<Member>, settlement: Rc<super::member::Settlement>, abort: bool) {
        let turn_done = member.read(|s| s.life.turn_done());
        if let Some(done) = turn_done {
            done.wait().await;
        }
        // Child-first: a member disposed with children of its own closes them
        // (and theirs) before it releases. A natural settlement has none.
        self.close_owned(&member, abort).await;
        // Nothing of this residency writes once it has left (a drained tree may
        // be reopened at once): acceptances and a lost turn's record land first.
        while member.read(|s| s.life.writing()) {
            let changed = self.0.state.borrow().trees.get(&member.root_id).map(Tree::changed);
            match changed {
                Some(changed) => changed.wait().await,
                None => break,
            }
        }
        let released = match &member.kind {
            Kind::External { run, result, .. } => {
                let released = run.dispose().await;
                // Disposal reaches the run's quiescence and a quiescent run has a
                // result (the seeds' `SubagentRun` contract). Wait for it, however
                // late it lands: a run whose result never settles keeps its own
                // teardown (and a drain of its tree) waiting, by contract.
                let r = result.wait().await;
                self.record_run_usage(&member, &r).await;
                member.write(|s| s.life.run_ended(r));
                released
            }
            _ => self.0.host.release(&member.id).await,
        };
        // Best-effort durability barrier: the member leaves either way, and a
        // failure is reported (its last writes may not be durable), never dropped.
        if let Err(e) = self.flush(&member.id).await {
            self.emit(RuntimeEvent::FlushFailed {
                root_id: member.root_id.clone(),
                session_id: member.id.clone(),
                name: member.full_name.clone(),
                error: e.message,
            });
        }

        // The member stays resident (closing) until its notice is accepted, so a
        // message meanwhile waits for `closed` instead of resuming a second
        // residency whose `subagent/start` would precede this one's end.
        let creator = member.creator().filter(|p| p.phase() == Phase::Live);
        let last = member.write(|s| s.life.take_last());
        // A member reopened (or resumed) and let go without running a turn has
        // nothing new to report: its creator is not told again.
        let quiet = last.is_none() && !abort;
        let result = last.unwrap_or_else(|| Ok(SubagentResult::new(StopReason::Aborted)));
        let draining = quiet || self.0.state.borrow().trees.get(&member.root_id).is_some_and(Tree::is_draining);
        if let (Some(parent), Ok(r), super::Delivery::Parent, false) =
            (&creator, &result, settlement.delivery, draining)
        {
            let follow_up = if member.is_external() {
                crate::runtime::text::FollowUp::External
            } else {
                crate::runtime::text::FollowUp::Continuable
            };
            let source = MessageSource::SubagentSettled {
                sender_session_id: member.id.clone(),
                sender_name: member.full_name.clone(),
                summary: crate::runtime::text::settled_summary(&member.full_name, &r.stop_reason),
                stop_reason: r.stop_reason.clone(),
                structured: r.structured.clone(),
                diagnostic: r.diagnostic.clone(),
            };
            let content =
                Value::Array(vec![text_block(&crate::runtime::text::settled_notice(&member.full_name, r, follow_up))]);
            self.notify(parent, source, content).await;
        }
        let parent = self.leave(&member);
        let mode = if member.is_external() { Mode::External } else { Mode::Continuable };
        let failure = released.err().map(|e| {
            let mut err =
                crate::err!(ActivationTeardownFailed, "releasing {} failed: {}", Quoted(&member.full_name), e.message);
            err.cause = e.cause;
            err
        });
        self.emit(RuntimeEvent::End(RunEndInfo {
            info: self.run_info(&member, mode),
            stop_reason: match (&failure, &result) {
                (Some(_), _) | (None, Err(_)) => StopReason::Error,
                (None, Ok(r)) => r.stop_reason.clone(),
            },
            error: failure
                .as_ref()
                .map(|e| e.message.clone())
                .or_else(|| result.as_ref().err().map(|e| e.message.clone())),
        }));
        settlement.result.set(result);
        settlement.disposed.set(failure.map_or(Ok(()), Err));
        settlement.closed.set(());
        self.tree_changed(&member.root_id);
        if let Some(parent) = parent {
            self.kick(&parent);
        }
    }

    /// An external run has no log: what it reported spending goes to its
    /// creator's (`subagent/usage`), while the creator is still resident
    /// (it is: child-first, a creator waits for its runs). Best effort: a
    /// refused write leaves the run's usage out of the logs' totals.
    async fn record_run_usage(&self, member: &Rc<Member>, result: &Result<SubagentResult>) {
        let Ok(SubagentResult { usage: Some(usage), .. }) = result else { return };
        let spent = crate::core::usage::turn_spent(Some(usage), false);
        let Some(creator) = member.creator().filter(|c| c.phase() != Phase::Gone) else {
            // Spent all the same: its budgets count it, though no log records it.
            return self.add_spent(member, &spent, None);
        };
        let payload =
            Value::object([("childId", Some(Value::from(member.id.as_str()))), ("usage", Some(usage.to_value()))]);
        let recorded = self.append(&creator, vec![(event::SUBAGENT_USAGE.to_owned(), payload)]).await;
        self.add_spent(member, &spent, recorded.ok().map(|seq| (creator.id.as_str(), seq)));
    }

    /// Closes the resident children `member` owns, and waits until each has
    /// left and no start under it is still in flight.
    async fn close_owned(&self, member: &Rc<Member>, abort: bool) {
        loop {
            let owned: Vec<Rc<Member>> = {
                let st = self.0.state.borrow();
                let mine = |c: &&Rc<Member>| {
                    st.of(c)
                        .parent_link
                        .as_ref()
                        .and_then(std::rc::Weak::upgrade)
                        .is_some_and(|p| Rc::ptr_eq(&p, member))
                };
                let mut owned: Vec<Rc<Member>> = st.children_of(&member.id).filter(mine).cloned().collect();
                by_id(&mut owned); // the same program tears down the same way
                owned
            };
            if owned.is_empty() {
                // A start under it that passed its last check still publishes (its
                // child is then owned, and closed here): wait for those.
                let starting = self.0.state.borrow().reservations.get(&member.id).is_some_and(|r| !r.is_empty());
                let changed = self.0.state.borrow().trees.get(&member.root_id).map(Tree::changed);
                match (starting, changed) {
                    (true, Some(changed)) => {
                        changed.wait().await;
                        continue;
                    }
                    _ => return,
                }
            }
            for child in &owned {
                self.close(child, abort);
            }
            for child in &owned {
                if let Some(s) = &child.settlement {
                    s.closed.wait().await;
                }
            }
        }
    }

    /// Removes a member from residency; returns its live creator, whose child count drops.
    fn leave(&self, member: &Rc<Member>) -> Option<Rc<Member>> {
        member.write(|s| s.life.left());
        {
            let mut st = self.0.state.borrow_mut();
            st.remove_member(member);
            if let Some(tree) = st.trees.get_mut(&member.root_id) {
                tree.left();
            }
        }
        let parent = member.write(|s| s.parent_link.take()).and_then(|w| w.upgrade());
        if let Some(parent) = &parent {
            parent.write(|s| s.life.child_left());
        }
        parent.filter(|p| p.phase() == Phase::Live)
    }

    /// Follows an external run to its result, then settles it.
    pub(crate) fn watch_run(&self, member: &Rc<Member>) {
        let Kind::External { run, result, .. } = &member.kind else { return };
        let (runtime, member, run, slot) = (self.clone(), member.clone(), run.clone(), result.clone());
        self.spawn(Box::pin(async move {
            let outcome = run.result().await.map(|mut r| {
                r.diagnostic = r.diagnostic.map(crate::core::result::cut_diagnostic);
                r
            });
            slot.set(outcome.clone());
            if member.phase() == Phase::Live {
                member.write(|s| s.life.run_ended(outcome));
                runtime.close(&member, false);
            }
        }));
    }

    /// Closes admission for these trees and stops every member child-first,
    /// then awaits pending startups and cleanup. Other trees stay live. The
    /// cutoff lasts until the root closes.
    pub async fn drain_descendants(&self, roots: &[Agent]) -> Result<()> {
        for root in roots {
            self.require_root(root)?;
        }
        let ids: Vec<String> = roots.iter().map(|r| r.session_id().to_owned()).collect();
        self.drain_trees(&ids).await
    }

    /// [`Runtime::drain_descendants`] once authority is checked (a closing
    /// root is no longer live, yet its tree drains).
    pub(crate) async fn drain_trees(&self, roots: &[String]) -> Result<()> {
        for root in roots {
            if let Some(tree) = self.0.state.borrow_mut().trees.get_mut(root.as_str()) {
                tree.drain();
            }
        }
        let mut failures: Vec<SubagentError> = Vec::new();
        for root in roots {
            let root = root.as_str();
            loop {
                let mut members: Vec<Rc<Member>> =
                    self.0.state.borrow().tree_members(root).filter(|m| !m.is_root()).cloned().collect();
                let reserved = self.0.state.borrow().trees.get(root).map_or(0, Tree::reserved);
                if members.is_empty() && reserved == 0 {
                    break;
                }
                if members.is_empty() {
                    let changed = self.0.state.borrow().trees.get(root).map(Tree::changed);
                    if let Some(changed) = changed {
                        changed.wait().await;
                    }
                    continue;
                }
                // Child-first: the deepest members close first.
                let deepest = members.iter().map(|m| m.depth).max().unwrap_or(0);
                members.retain(|m| m.depth == deepest);
                // In a stable order, so the same program tears down the same way.
                by_id(&mut members);
                for m in &members {
                    self.close(m, true);
                }
                for m in &members {
                    if let Some(s) = &m.settlement {
                        if let Err(e) = s.disposed.wait().await {
                            failures.push(e);
                        }
                    }
                }
            }
        }
        match failures.len() {
            0 => Ok(()),
            n => {
                let detail: Vec<String> = failures.iter().map(|e| e.message.clone()).collect();
                let mut err = SubagentError::new(
                    ErrorCode::ActivationTeardownFailed,
                    format!("{n} member(s) failed to tear down while draining: {}", detail.join("; ")),
                );
                err.cause = failures.into_iter().find_map(|e| e.cause);
                Err(err)
            }
        }
    }

    /// Waits until the whole tree is quiet: no turn running (the root's
    /// included), no input that would start one, no start, resume, teardown,
    /// acceptance or open-time recovery in flight. Idle members with parked
    /// input are quiet. A closed tree is quiet.
    pub async fn wait_for_quiescence(&self, root: &Agent, signal: &Signal) -> Result<()> {
        self.require_root(root)?;
        while let Some(changed) = self.unquiet(root.session_id(), false) {
            signal
                .guard(async {
                    changed.wait().await;
                    Ok(())
                })
                .await?;
        }
        Ok(())
    }

    /// `None` when the tree is quiet (or closed), else what fires when its
    /// work changes. With `waiters`, a turn blocked in `wait_for_input`
    /// counts as quiet unless a steered message it waits for is pending.
    fn unquiet(&self, root_id: &str, waiters: bool) -> Option<Deferred<()>> {
        let mut st = self.0.state.borrow_mut();
        let tree = st.trees.get(root_id)?;
        let quiet = tree.reserved() == 0
            && !tree.is_recovering()
            && !st.any_at_work(root_id, &|m, s| {
                let s = &s.life;
                s.writing()
                    || match s.waits_for().filter(|_| waiters) {
                        Some(Wait::Interrupt) => false,
                        Some(Wait::Steer) => s.steer_pending(),
                        // Input waiting for budget room cannot act until a turn ends.
                        None if waiters && s.waits_for_budget() => false,
                        None => s.is_busy(m.lane()),
                    }
            });
        if quiet {
            None
        } else {
            st.trees.get(root_id).map(Tree::changed)
        }
    }

    /// Blocks turn `turn_id` of `agent` until a steered message waits to be
    /// taken (only when `steer`), the turn is signalled or over, or nothing
    /// else in its tree can act: every other member is idle or blocked here
    /// too (one blocked for steered input with a message pending is not).
    /// That last end is what a test host needs instead of a timeout: input
    /// that has not come by then can only come from the caller.
    ///
    /// The mark belongs to the turn: a wait ends by itself (every return
    /// clears it) or with its turn (`Life::turn_ended` clears it), so a host
    /// that stops polling the wait leaves nothing behind past its turn.
    pub async fn wait_for_input(&self, agent: &Agent, turn_id: u64, steer: bool) -> WaitEnd {
        let member = agent.0.clone();
        let signal = member.read(|s| s.life.turn_signal(Some(turn_id)));
        let Some(signal) = signal else { return WaitEnd::Ended };
        let ticket = self.with_tree(&member.root_id, Tree::mint_ticket).unwrap_or(0);
        member.write(|s| s.life.begin_wait(if steer { Wait::Steer } else { Wait::Interrupt }, ticket));
        let end = self.wait_in_line(&member, turn_id, steer, &signal, ticket).await;
        self.end_wait(&member, ticket);
        end
    }

    /// Clears the mark and the place in line of the wait `ticket`, once.
    fn end_wait(&self, member: &Member, ticket: u64) {
        let Some(in_line) = member.write(|s| s.life.end_wait(ticket)) else { return };
        // Left the line without being woken for a quiet moment (steered, aborted).
        if in_line {
            if let Some(tree) = self.0.state.borrow_mut().trees.get_mut(&member.root_id) {
                tree.leave_line(ticket);
            }
        }
    }

    async fn wait_in_line(
        &self,
        member: &Rc<Member>,
        turn_id: u64,
        steer: bool,
        signal: &Signal,
        ticket: u64,
    ) -> WaitEnd {
        let current = || member.read(|s| s.life.turn_signal(Some(turn_id))).is_some();
        let root = member.root_id.as_str();
        // Checked here before anything else can run: if the tree is quiet
        // now that this turn waits too, this one goes on (as the others
        // would find once woken), and if it is not quiet for this one, it is
        // not quiet for any other waiter either, so none is woken.
        let mut first = true;
        loop {
            if !current() {
                return WaitEnd::Ended;
            }
            if signal.is_aborted() {
                return WaitEnd::Aborted;
            }
            if steer && member.read(|s| s.life.steer_pending()) {
                return WaitEnd::Steered;
            }
            if self.unquiet(root, true).is_none() {
                return WaitEnd::Quiet;
            }
            let wake = Deferred::new();
            // `None`: another wait of this turn took over its mark; this one is over.
            let Some(in_line) = member.write(|s| s.life.line_up(ticket, wake.clone())) else { return WaitEnd::Ended };
            if !in_line {
                // New in line at the back; woken for a quiet moment that passed: first again.
                self.with_tree(root, |t| t.line_up(&member.id, ticket, first));
            }
            first = false;
            let woken = signal.guard(async {
                wake.wait().await;
                Ok(())
            });
            if woken.await.is_err() {
                return WaitEnd::Aborted;
            }
        }
    }

    /// Wakes the turn that has waited longest in [`Runtime::wait_for_input`]
    /// when the tree is quiet for it (called on every tree change).
    pub(crate) fn wake_quiet_waiter(&self, root_id: &str) {
        let queued = self.0.state.borrow().trees.get(root_id).is_some_and(Tree::has_waiters);
        if !queued || self.unquiet(root_id, true).is_some() {
            return;
        }
        let wake = self.0.state.borrow_mut().wake_first_in_line(root_id);
        if let Some(wake) = wake {
            wake.set(());
        }
    }

    /// A message landed in `member`'s inbox: a turn of it blocked in
    /// [`Runtime::wait_for_input`] for a steer takes it, if it is one. Only
    /// then: woken for anything else, a waiter could find a quiet moment
    /// before the one in line ahead of it.
    pub(crate) fn wake_own_waiter(&self, member: &Member) {
        let wake = member.read(|s| s.life.steer_wake());
        if let Some(wake) = wake {
            wake.set(());
        }
    }

    /// Waits while members of the root's tree work (turns, runs, startups,
    /// teardown). Idle members with parked input do not count. Returns whether
    /// any work was joined; a non-root returns `false` at once.
    pub async fn wait_for_tree_work(&self, root: &Agent) -> Result<bool> {
        self.require_live(root, "root")?;
        if !root.0.is_root() {
            return Ok(false);
        }
        let mut joined = false;
        loop {
            let (busy, changed) = {
                let mut st = self.0.state.borrow_mut();
                let Some(tree) = st.trees.get(root.session_id()) else { return Ok(joined) };
                let (reserved, changed) = (tree.reserved(), tree.changed());
                let busy =
                    reserved > 0 || st.any_at_work(root.session_id(), &|m, s| !m.is_root() && s.life.is_busy(m.lane()));
                (busy, changed)
            };
            if !busy {
                return Ok(joined);
            }
            joined = true;
            changed.wait().await;
        }
    }
}

/// Why `Runtime::wait_for_input` returned (the bridge passes the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    Steered,
    Aborted,
    Quiet,
    Ended,
}

/// Turns a host outcome into the turn's result; never fails (a host error is
/// an `error` stop with its message as diagnostic).
fn capture(
    outcome: Result<TurnOutcome>,
    signal: &Signal,
    schema: Option<&crate::core::schema::OutputSchema>,
) -> SubagentResult {
    let o = match outcome {
        Ok(o) => o,
        Err(_) if signal.is_aborted() => return SubagentResult::new(StopReason::Aborted),
        Err(e) => {
            return SubagentResult::new(StopReason::Error)
                .with_diagnostic(format!("the agent host failed: {}", e.message))
        }
    };
    let mut result = SubagentResult {
        output: final_output(&o.messages, o.text.as_deref()),
        structured: None,
        diagnostic: o.diagnostic.map(crate::core::result::cut_diagnostic),
        stop_reason: match o.stop_reason {
            StopReason::Other(reason) if reason.is_empty() => StopReason::Completed,
            reason => reason,
        },
        usage: o.usage,
        totals: None,
    };
    if let (Some(schema), true) = (schema, result.stop_reason == StopReason::Completed) {
        match o.structured.as_ref().map(|v| schema.validate(v)) {
            Some(Ok(())) => result.structured = o.structured,
            Some(Err(why)) => {
                result.stop_reason = StopReason::Error;
                result.diagnostic = Some(crate::core::result::cut_diagnostic(format!(
                    "the structured result does not match the output schema: {why}"
                )));
            }
            None => {
                result.stop_reason = StopReason::Error;
                result.diagnostic =
                    Some("the turn finished without the structured result the output schema requires".into());
            }
        }
    }
    result
}

/// Members in id order (the same program tears down the same way). A small
/// heapsort shared by both callers instead of core's sorts (~1 KB gzip of wasm
/// each): the members come from the members map, so no two ids are equal and
/// any correct sort gives the stable sort's order.
fn by_id(members: &mut [Rc<Member>]) {
    heapsort_by_key(members, |m| m.id.as_str());
}

/// In-place heapsort (O(n log n), not stable) by a string key.
fn heapsort_by_key<T>(v: &mut [T], key: impl Fn(&T) -> &str) {
    let sift = |v: &mut [T], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && key(&v[child]) < key(&v[child + 1]) {
            child += 1;
        }
        if key(&v[root]) >= key(&v[child]) {
            break;
        }
        v.swap(root, child);
        root = child;
    };
    for start in (0..v.len() / 2).rev() {
        sift(v, start, v.len());
    }
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift(v, 0, end);
    }
}

/// `subagent/turn`: a member's turn started (no result) or ended with `end`
/// (its stop reason, and its output's text when there is any).
pub(crate) fn turn_event(member: &Member, end: Option<&SubagentResult>) -> RuntimeEvent {
    RuntimeEvent::Turn {
        root_id: member.root_id.clone(),
        session_id: member.id.clone(),
        name: member.full_name.clone(),
        stop_reason: end.map(|r| r.stop_reason.clone()),
        output: end.map(SubagentResult::output_text).filter(|text| !text.is_empty()),
        parked: false,
        usage: end.and_then(|r| r.usage),
        trace: if end.is_none() { member.read(|s| s.trace.clone()) } else { None },
    }
}

pub(crate) fn turn_end_payload(r: &SubagentResult, consumed: &[String]) -> Value {
    Value::object([
        ("stopReason", Some(Value::from(r.stop_reason.as_str()))),
        ("output", Some(r.output.clone())),
        ("structured", r.structured.clone()),
        ("diagnostic", r.diagnostic.as_deref().map(Value::from)),
        ("consumed", Some(Value::Array(consumed.iter().map(|id| Value::from(id.as_str())).collect()))),
        ("usage", r.usage.as_ref().map(crate::core::usage::Usage::to_value)),
    ])
}

#[cfg(test)]
mod tests {
    use super::heapsort_by_key;

    #[test]
    fn heapsort_sorts_like_sort() {
        let mut seed = 7u64;
        for len in 0..60 {
            let mut v: Vec<String> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    format!("k{}", (seed >> 33) % 40)
                })
                .collect();
            let mut expected = v.clone();
            expected.sort();
            heapsort_by_key(&mut v, String::as_str);
            assert_eq!(v, expected);
        }
    }
}
