//! Opening and closing a tree's root: a root opens from its log (created
//! when new), its pending input waits parked and a lost turn is recorded, its
//! budgets' ledger is read, and the open-time recovery starts; closing drains
//! its tree, stops its own turn, and hands its log over with nothing in flight.

use super::kept;
use super::machine::{Life, Tree};
use super::member::MemberState;
use super::member::{Kind, Member};
use super::ports::IdKind;
use super::{Agent, LostTurn, Recovery, RootSettings, Runtime, TraceRequest};
use crate::core::error::{Quoted, Result};
use crate::core::event;
use crate::core::exec::Deferred;
use crate::core::json::Value;
use crate::core::name::LEAD;
use crate::core::signal::Signal;
use std::rc::Rc;

impl Runtime {
    /// Opens (or creates) a root session and returns its live `lead` handle.
    pub async fn open_root(&self, session_id: Option<String>, cwd: Option<String>) -> Result<Agent> {
        self.open_root_with(session_id, cwd, RootSettings::default()).await
    }

    /// [`Runtime::open_root`] with the root's settings: a budget (its whole
    /// tree's) or agent options that differ from what its log records are
    /// written there before anything runs.
    pub async fn open_root_with(
        &self,
        session_id: Option<String>,
        cwd: Option<String>,
        settings: RootSettings,
    ) -> Result<Agent> {
        let id = session_id.unwrap_or_else(|| self.new_id(IdKind::Session));
        if id.is_empty() {
            return Err(crate::err!(InvalidArgument, "a root Session id must be a non-empty string"));
        }
        let resident = self.0.state.borrow().members.get(&id).cloned();
        if let Some(child) = resident.filter(|m| !m.is_root()) {
            return Err(kept::not_a_root(&id, Some(&child.full_name)));
        }
        self.claim_materializing(&id)?;
        // The rest is the runtime's own task: begun, an open ends with the
        // claim given back and the root open (or refused), never half-open.
        let rt = self.clone();
        self.detached(async move {
            let opened = rt.open_claimed(id.clone(), cwd, settings).await;
            rt.0.state.borrow_mut().materializing.remove(&id);
            let (member, ledger, lost) = opened?;
            rt.open_loaded(member, ledger, lost).await
        })
        .await
    }

    /// The claimed root's log read, its budgets' ledger, and a budget that
    /// changed written: the member to make resident.
    async fn open_claimed(
        &self,
        id: String,
        cwd: Option<String>,
        settings: RootSettings,
    ) -> Result<(Rc<Member>, crate::core::budget::Ledger, Option<LostTurn>)> {
        let RootSettings { budget, agent_options } = settings;
        let mut log = self.load_log(&id).await?;
        // A child's log is its creator's to write: opened as a root it would be
        // a second `lead` with no parent, writing turns into another member's
        // history. Refused before anything is written.
        if let Some(creator) = log.start.as_ref().and_then(|s| s.get("parentId")).and_then(Value::as_str) {
            let name = log.start.as_ref().and_then(|s| s.get("name")).and_then(Value::as_str).map(str::to_owned);
            return Err(self.refuse_child_as_root(&id, creator, name).await);
        }
        let mut budgets = std::mem::take(&mut log.budgets);
        let changed = budget.filter(|b| budgets.get(&id) != Some(b));
        if let Some(b) = budget {
            budgets.insert(id.clone(), b);
        }
        let ledger = self.ledger_from_logs(&id, &budgets, &Signal::never()).await?;
        let cwd = cwd.or(log.cwd).unwrap_or_else(|| self.0.options.default_cwd.clone());
        let mut state = MemberState::new(Life::new(None), log.len, log.trace.clone());
        state.child_names = log.child_names;
        let member = Member {
            id: id.clone(),
            incarnation: self.token(),
            root_id: id.clone(),
            parent_id: None,
            ancestors: Vec::new(),
            depth: 0,
            full_name: LEAD.into(),
            parent_name: None,
            path: Some(String::new()),
            label: String::new(),
            provider: String::new(),
            cwd: crate::core::path::normalize(&cwd),
            kind: Kind::Root,
            settlement: None,
            append_lock: Default::default(),
            agent_preset: None,
            agent_options: agent_options.clone().or(log.agent_options.clone()),
            runtime: Rc::downgrade(&self.0),
            slot: 0, // given by new_member
        };
        let member = self.new_member(member, state);
        // New options are the log's before the root runs a turn with them.
        if let Some(options) = agent_options.filter(|o| log.agent_options.as_ref() != Some(o)) {
            let payload = Value::object([("agentOptions", Some(options.to_value()))]);
            self.append(&member, vec![(event::AGENT_OPTIONS.to_owned(), payload)]).await?;
        }
        if let Some(b) = changed {
            let payload = crate::core::budget::event_payload(&id, Some(&b));
            self.append(&member, vec![(event::BUDGET.to_owned(), payload)]).await?;
        }
        if member.read(|s| s.trace.is_none()) {
            let request = TraceRequest {
                session_id: &id,
                root_id: &id,
                parent_id: None,
                name: LEAD,
                label: "",
                provider: "",
                tool_call: None,
            };
            if let Some(trace) = self.trace_for(&request) {
                self.append(&member, vec![(event::TRACE.to_owned(), trace.to_payload())]).await?;
                member.write(|s| s.trace = Some(trace));
            }
        }
        // Input accepted before a restart and never consumed is still the root's:
        // it waits, parked as after an interrupt, and the next message to the
        // root delivers it first. Opening a root runs no turn by itself, unless
        // the host asked for lost turns to run again.
        let rerun = self.0.options.recovery == Recovery::Rerun;
        // Stopped by a spent budget that is still spent: its next move with input records that stop again.
        let spent = log.exhausted && ledger.exhausted(&[id.as_str()], false).is_some();
        let lost = self.adopt_log(&member, log.pending, log.lost_turn, log.ran, (!rerun, spent), log.rerun_streak);
        Ok((member, ledger, lost))
    }

    /// Makes an opened root resident with its tree (and its budgets' ledger).
    async fn open_loaded(
        &self,
        member: Rc<Member>,
        ledger: crate::core::budget::Ledger,
        lost: Option<LostTurn>,
    ) -> Result<Agent> {
        let id = member.id.clone();
        {
            let mut st = self.0.state.borrow_mut();
            if st.members.contains_key(&id) {
                return Err(crate::err!(
                    DuplicateChild,
                    "session {id} is already open in this runtime",
                    id = Quoted(&id)
                ));
            }
            st.insert_member(member.clone());
            st.trees.insert(id.clone(), Tree::new(ledger));
        }
        if let Some(lost) = lost {
            self.record_lost_turn(&member, lost).await;
        }
        self.recover_tree(&id);
        self.kick(&member);
        Ok(Agent(member))
    }

    /// Closes a root: its handle dies and the tree's drain cutoff ends. Live
    /// children are drained first, then the root's own running turn is
    /// stopped and its end recorded, so nothing of this residency writes to
    /// the log once this resolves (a reopened root is its only writer).
    pub async fn close_root(&self, root: &Agent) -> Result<()> {
        self.require_root(root)?;
        // From here no call takes the handle and no new turn starts.
        root.0.write(|s| s.life.close());
        let drained = self.drain_trees(&[root.session_id().to_owned()]).await;
        let turn = root.0.read(|s| s.life.turn_signal(None).zip(s.life.turn_done()));
        if let Some((signal, done)) = turn {
            signal.abort();
            done.wait().await;
        }
        // Writes in flight (an acceptance, a recovery record) finish before the log changes hands.
        drop(root.0.append_lock.lock().await);
        {
            let mut st = self.0.state.borrow_mut();
            if let Some(tree) = st.trees.remove(root.session_id()) {
                tree.close();
            }
            st.remove_member(&root.0);
        }
        root.0.write(|s| s.life.left());
        // Answers nobody can give now: their messages stay pending in the logs.
        let orphaned: Vec<Deferred<Result<crate::SubagentResult>>> = {
            let mut st = self.0.state.borrow_mut();
            let ids: Vec<String> =
                st.answers.iter().filter(|(_, (r, _))| r == root.session_id()).map(|(id, _)| id.clone()).collect();
            ids.iter().filter_map(|id| st.answers.remove(id)).map(|(_, d)| d).collect()
        };
        for answer in orphaned {
            answer.set(Err(crate::err!(
                ActivationClosing,
                "the tree closed before the message was answered; it stays pending in its log"
            )));
        }
        drained
    }
}
