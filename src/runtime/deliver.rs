//! Messages, interruption and cold resume.
//!
//! A message is accepted once its `message/input` event is durable in the
//! target's log; the caller's cancellation owns the operation only until then.
//! Agents' messages are steered (fixed scheduling, decision record 004); a
//! user prompt may queue or steer. A target that is not resident is resumed
//! from its log under its tree root, rebuilding its full name from the
//! catalogs along its creation chain; its creators may stay offline.

use super::machine::{Life, Refusal, Tree};
use super::member::{
    self, InboxMessage, Kind, Member, MemberState, MessageMeta, MessageSource, Phase, Scheduling, Settlement,
};
use super::message::message_payload;
use super::{Agent, InterruptAuthority, Runtime, RuntimeEvent};
use crate::core::catalog::Mode;
use crate::core::error::{Quoted, Result, SubagentError};
use crate::core::event::{self};
use crate::core::exec::Deferred;
use crate::core::json::Value;
use crate::core::listing::Row;
use crate::core::name::{AgentRef, LEAD};
use crate::core::result::normalize_content;
use crate::core::result::SubagentResult;
use crate::core::signal::Signal;
use crate::runtime::ports::IdKind;
use std::cell::Cell;
use std::rc::Rc;

impl Runtime {
    /// Steers one agent-authored message to another member of the sender's tree.
    /// Returns the accepted message id.
    pub async fn send_message(
        &self,
        sender: &Agent,
        target_id: &str,
        content: Value,
        signal: &Signal,
    ) -> Result<String> {
        self.require_live(sender, "sender")?;
        let content = checked_content(&self.0.options.limits, content)?;
        if target_id == sender.session_id() {
            return Err(crate::err!(InvalidArgument, "{} cannot send a message to itself", Quoted(sender.name())));
        }
        let source = MessageSource::AgentMessage {
            sender_session_id: sender.session_id().to_owned(),
            sender_name: sender.name().to_owned(),
        };
        let meta = MessageMeta::default();
        self.deliver(Some(sender), &sender.0.root_id, target_id, source, content, Scheduling::Steer, meta, signal, None)
            .await
    }

    /// `UNSUPPORTED_CAPABILITY` for content with an image when the host's
    /// models take none (its `inputModalities`): refused before anything is written.
    pub(crate) fn check_modalities(&self, content: &Value, whom: &str) -> Result<()> {
        let image = content
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("image")));
        if image && !self.0.host.takes_images() {
            return Err(crate::err!(
                UnsupportedCapability,
                "the input for {} has an image, and this runtime's host takes text only (its inputModalities)",
                Quoted(whom)
            ));
        }
        Ok(())
    }

    /// Finds (or resumes) the target and accepts the message; a target that
    /// began settling in between is resumed again.
    #[allow(clippy::too_many_arguments)]
    async fn deliver(
        &self,
        sender: Option<&Agent>,
        root_id: &str,
        target_id: &str,
        source: MessageSource,
        content: Value,
        scheduling: Scheduling,
        meta: MessageMeta,
        signal: &Signal,
        answer: Option<&Answer>,
    ) -> Result<String> {
        loop {
            // Held until the message is accepted or refused: a resumed member
            // settles again (on release) if it never got it.
            let held = self.target_for(root_id, target_id, signal).await?;
            // Admission re-validates the sender.
            let accepted = match sender.map(|s| self.require_live(s, "sender")).transpose() {
                Ok(_) => {
                    let (source, content, meta) = (source.clone(), content.clone(), meta.clone());
                    self.accept(&held.member, source, content, scheduling, meta, signal, answer).await
                }
                Err(e) => Err(e),
            };
            match accepted {
                Err(e) if e.code == crate::ErrorCode::ActivationClosing => continue,
                other => return other,
            }
        }
    }

    /// Delivers a user-authored message to the root or a continuable member of
    /// the root's tree (the host operation behind a browser's prompt box).
    /// `target` is `lead`, a full name or a Session id.
    pub async fn prompt(
        &self,
        root: &Agent,
        target: &str,
        content: Value,
        scheduling: Scheduling,
        signal: &Signal,
    ) -> Result<String> {
        self.prompt_meta(root, target, content, scheduling, MessageMeta::default(), signal).await
    }

    /// [`Runtime::prompt`] with the request's identity and time zone kept on the message.
    pub async fn prompt_meta(
        &self,
        root: &Agent,
        target: &str,
        content: Value,
        scheduling: Scheduling,
        meta: MessageMeta,
        signal: &Signal,
    ) -> Result<String> {
        self.prompt_with(root, target, content, scheduling, meta, signal, None).await
    }

    /// [`Runtime::prompt`], plus the result of the turn that consumes the
    /// message (the turn that answers it, steered in or queued).
    pub async fn ask(
        &self,
        root: &Agent,
        target: &str,
        content: Value,
        scheduling: Scheduling,
        signal: &Signal,
    ) -> Result<(String, impl std::future::Future<Output = Result<SubagentResult>> + 'static)> {
        self.ask_meta(root, target, content, scheduling, MessageMeta::default(), signal).await
    }

    /// [`Runtime::ask`] with the request's identity and time zone kept on the message.
    pub async fn ask_meta(
        &self,
        root: &Agent,
        target: &str,
        content: Value,
        scheduling: Scheduling,
        meta: MessageMeta,
        signal: &Signal,
    ) -> Result<(String, impl std::future::Future<Output = Result<SubagentResult>> + 'static)> {
        let answer = Answer::new();
        let id = self.prompt_with(root, target, content, scheduling, meta, signal, Some(&answer)).await?;
        Ok((id, answer.wait()))
    }

    #[allow(clippy::too_many_arguments)]
    async fn prompt_with(
        &self,
        root: &Agent,
        target: &str,
        content: Value,
        scheduling: Scheduling,
        meta: MessageMeta,
        signal: &Signal,
        answer: Option<&Answer>,
    ) -> Result<String> {
        self.require_root(root)?;
        let content = checked_content(&self.0.options.limits, content)?;
        let target_id = self.resolve_in_tree(&root.0.root_id, target, signal).await?;
        if target_id == root.session_id() {
            return self.accept(&root.0, MessageSource::User, content, scheduling, meta, signal, answer).await;
        }
        let source = MessageSource::User;
        self.deliver(None, &root.0.root_id, &target_id, source, content, scheduling, meta, signal, answer).await
    }

    /// The live handle of any continuable member of the root's tree, under the
    /// root's authority: a cold member is resumed from its log without a
    /// message. The member stays resident while the returned [`Held`] lives,
    /// so a host can spawn under it or message as it; then it settles as usual.
    pub async fn reopen(&self, root: &Agent, target: &str, signal: &Signal) -> Result<Held> {
        self.require_root(root)?;
        let target_id = self.resolve_in_tree(&root.0.root_id, target, signal).await?;
        let held = if target_id == root.session_id() {
            self.hold(root.0.clone())
        } else {
            self.target_for(&root.0.root_id, &target_id, signal).await?
        };
        let member = &held.member;
        // A drain in progress stops every member, held or not: no hold is promised (sim seed 8438).
        let draining = self.0.state.borrow().trees.get(&root.0.root_id).is_some_and(Tree::is_draining);
        if draining && !member.is_root() {
            return Err(crate::err!(Draining, "this tree is draining and holds no members"));
        }
        // Disposal is child-first: a member under a creator being disposed is ending (sim seed 13663).
        let mut creator = member.creator();
        while let Some(c) = creator {
            if c.phase() == Phase::Closing && !c.is_root() {
                return Err(crate::err!(
                    ActivationClosing,
                    "{} is being disposed with its creator",
                    Quoted(&member.full_name)
                ));
            }
            creator = c.creator();
        }
        Ok(held)
    }

    /// `UNKNOWN_AGENT` (with the closest names) unless the full name `text`
    /// names a member of `root_id`'s tree, resident or cold, without a read:
    /// down the residents along it, each creator's catalog names its children;
    /// below a cold member the rest of the name is taken as known.
    fn known_name(&self, root_id: &str, text: &str) -> Result<()> {
        // A resident's Session id that happens to read as a name is that member.
        if self.resident_by_name(root_id, text).is_some() || self.0.state.borrow().members.contains_key(text) {
            return Ok(());
        }
        let st = self.0.state.borrow();
        let Some(mut creator) = st.members.get(root_id).cloned() else { return Ok(()) };
        let mut path = String::new();
        for segment in text.split('/') {
            let names = &st.of(&creator).child_names;
            if !names.contains(segment) {
                let mut names: Vec<String> = names.iter().map(|n| crate::core::name::join(&path, n)).collect();
                names.insert(0, LEAD.to_owned());
                return Err(crate::core::listing::unknown_agent_with(text, &names));
            }
            path = crate::core::name::join(&path, segment);
            let next = st.tree_members(root_id).find(|m| m.path.as_deref() == Some(path.as_str())).cloned();
            match next {
                Some(next) => creator = next,
                None => return Ok(()),
            }
        }
        Ok(())
    }

    /// The Session id of the resident member `text` names in `root_id`'s tree.
    pub(crate) fn resident_by_name(&self, root_id: &str, text: &str) -> Option<String> {
        match AgentRef::parse(text) {
            AgentRef::Lead => Some(root_id.to_owned()),
            AgentRef::Session(_) => None,
            AgentRef::Path(_) => self
                .0
                .state
                .borrow()
                .tree_members(root_id)
                // An external run for its caller keeps no catalog entry: its name is not committed.
                .find(|m| {
                    m.path.as_deref() == Some(text)
                        && m.phase() == Phase::Live
                        && !(m.is_external() && m.delivery() == super::Delivery::Caller)
                })
                .map(|m| m.id.clone()),
        }
    }

    /// Interrupts one member's current execution. Fire-and-return: the cancel
    /// signal is issued before this returns. Pending inbox work is parked until
    /// a waking send; the activation and its descendants stay; a member left
    /// with nothing parked settles as `aborted` once idle. An absent (or cold)
    /// target is an accepted no-op. Under an ancestor or a tree root, `target`
    /// may be a full name of a resident member of that tree.
    pub fn interrupt(&self, target: &str, authority: InterruptAuthority<'_>) -> Result<InterruptReceipt> {
        let tree = match &authority {
            InterruptAuthority::User => None,
            InterruptAuthority::Tree(root) => {
                self.require_root(root)?;
                Some(root.0.root_id.clone())
            }
            InterruptAuthority::Ancestor(agent) => {
                self.require_live(agent, "interrupting agent")?;
                Some(agent.0.root_id.clone())
            }
        };
        // A full name under a tree names a member (as for prompt and ask), or nobody: a typo is not a no-op.
        if let Some(root_id) = &tree {
            if matches!(AgentRef::parse(target), AgentRef::Path(_)) {
                self.known_name(root_id, target)?;
            }
        }
        // Authority before state: a full name says whose descendant it is, so a
        // non-ancestor is refused alike whether the member runs, idles or is cold.
        if let (InterruptAuthority::Ancestor(agent), AgentRef::Path(_) | AgentRef::Lead) =
            (&authority, AgentRef::parse(target))
        {
            // (A member from a log that predates names has no full name to compare.)
            let named = !matches!(AgentRef::parse(agent.name()), AgentRef::Session(_));
            if named && target == agent.name() {
                return Err(cannot_interrupt_itself(agent));
            }
            if named && !is_below(agent.name(), target) {
                return Err(not_an_ancestor(agent, target));
            }
        }
        // A name of a resident member of the tree, else the text is a Session id
        // (a cold member is not running, so a name that finds no resident is a no-op).
        let target_id = match (&tree, AgentRef::parse(target)) {
            (_, AgentRef::Session(id)) => id,
            (Some(root_id), _) => self.resident_by_name(root_id, target).unwrap_or_else(|| target.to_owned()),
            (None, AgentRef::Lead) => {
                return Err(crate::err!(
                    InvalidArgument,
                    "\"lead\" is a full name, which needs a tree: interrupt under {{kind: 'user', root}} or an ancestor"
                ))
            }
            (None, _) => target.to_owned(),
        };
        let target = self.0.state.borrow().members.get(&target_id).cloned();
        let Some(target) = target.filter(|t| t.phase() == Phase::Live) else {
            return Ok(InterruptReceipt { signalled: false });
        };
        if let Some(root_id) = &tree {
            if *root_id != target.root_id {
                // Refused without naming the target: another tree's names are not the caller's to learn.
                return Err(crate::core::listing::not_a_member(&target_id));
            }
        }
        if let InterruptAuthority::Ancestor(agent) = authority {
            if agent.session_id() == target_id {
                return Err(cannot_interrupt_itself(agent));
            }
            if !target.ancestors.iter().any(|a| a == agent.session_id()) {
                return Err(not_an_ancestor(agent, &target.full_name));
            }
        }
        let run_signal = match &target.kind {
            Kind::External { signal, .. } => Some(signal),
            _ => None,
        };
        let signal = target.write(|s| s.life.interrupt(run_signal));
        let signalled = signal.is_some_and(|s| {
            let fresh = !s.is_aborted();
            s.abort();
            fresh
        });
        // An idle member with nothing parked (held, or waiting on children) settles when it can.
        self.kick(&target);
        self.tree_changed(&target.root_id);
        Ok(InterruptReceipt { signalled })
    }

    /// The resident target in `root_id`'s tree, resuming it when cold, held
    /// so that it cannot settle before the caller acts on it.
    async fn target_for(&self, root_id: &str, target_id: &str, signal: &Signal) -> Result<Held> {
        loop {
            signal.check()?;
            let resident = self.0.state.borrow().members.get(target_id).cloned();
            let Some(target) = resident else {
                // It may have closed while its lost turn was recorded: then look again.
                if let Some(member) = self.resume_again(root_id, target_id, signal).await? {
                    return Ok(member);
                }
                continue;
            };
            if target.root_id != root_id {
                return Err(crate::core::listing::not_a_member(target_id));
            }
            match target.phase() {
                Phase::Live if target.is_external() => {
                    return Err(crate::err!(
                        NotContinuable,
                        "{} is an external execution and takes no further messages",
                        Quoted(&target.full_name)
                    ))
                }
                Phase::Live => return Ok(self.hold(target)),
                // Settling now: wait, then resume it from its log.
                Phase::Closing => {
                    // Only a root closes without a settlement: as a root not open, never waited on.
                    let Some(closed) = target.settlement.as_ref().map(|s| s.closed.clone()) else {
                        return Err(crate::err!(
                            ParentUnavailable,
                            "the tree root {root_id} is closing",
                            root_id = Quoted(root_id)
                        ));
                    };
                    signal
                        .guard(async {
                            closed.wait().await;
                            Ok(())
                        })
                        .await?;
                }
                // Left residency after this lookup began: resume it afresh.
                Phase::Gone => {
                    let stuck = self.0.state.borrow().members.get(target_id).is_some_and(|m| Rc::ptr_eq(m, &target));
                    if stuck {
                        // Never expected (leaving removes it first); refused rather than spun on.
                        return Err(crate::err!(
                            ActivationClosing,
                            "{} is leaving residency",
                            Quoted(&target.full_name)
                        ));
                    }
                    if let Some(member) = self.resume_again(root_id, target_id, signal).await? {
                        return Ok(member);
                    }
                }
            }
        }
    }

    /// A resume for [`Runtime::target_for`]: the live member, or `None` to
    /// look again (it closed meanwhile, or its creator was settling: then
    /// once that creator has left).
    async fn resume_again(&self, root_id: &str, target_id: &str, signal: &Signal) -> Result<Option<Held>> {
        match self.resume(root_id, target_id, signal).await {
            Ok(held) if held.member.phase() == Phase::Live => Ok(Some(held)),
            Ok(_) => Ok(None),
            Err(e) if e.code == crate::ErrorCode::ActivationClosing => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Durable acceptance into a resident member's inbox.
    #[allow(clippy::too_many_arguments)]
    async fn accept(
        &self,
        target: &Rc<Member>,
        source: MessageSource,
        content: Value,
        scheduling: Scheduling,
        meta: MessageMeta,
        signal: &Signal,
        answer: Option<&Answer>,
    ) -> Result<String> {
        signal.check()?;
        self.check_modalities(&content, &target.full_name)?;
        // A notice always lands (it is the runtime's own account); input waits for room.
        let notice = matches!(source, MessageSource::SubagentSettled { .. });
        if !notice {
            self.check_budget(target, false, || format!("{} takes no message", Quoted(&target.full_name)))?;
        }
        let bytes = crate::core::limits::json_size(&content);
        if !notice {
            self.check_queue_room(bytes)?;
        }
        let cap = (!notice).then_some(self.0.options.limits.member_queue_bytes);
        let began = target.write(|s| s.life.begin_write(bytes, cap));
        match began {
            Ok(()) => {}
            Err(Refusal::Full(held)) => {
                return Err(crate::err!(
                    LimitExceeded,
                    "{} holds {held} bytes of input its turns have not taken yet; a message of {bytes} bytes would pass limits.memberQueueBytes ({})",
                    Quoted(&target.full_name),
                    self.0.options.limits.member_queue_bytes
                ))
            }
            Err(Refusal::InputClosed) => {
                return Err(crate::err!(
                    InputClosed,
                    "{} captured its structured result and accepts no more input",
                    Quoted(&target.full_name)
                ))
            }
            Err(Refusal::NotLive) => {
                return Err(crate::err!(ActivationClosing, "{} is shutting down", Quoted(&target.full_name)))
            }
        }
        let message = InboxMessage { id: self.new_id(IdKind::Message), source, content, scheduling, meta };
        // Registered before the write: the answering turn may end before this call returns.
        if let Some(answer) = answer {
            self.0.state.borrow_mut().answers.insert(message.id.clone(), (target.root_id.clone(), answer.0.clone()));
        }
        // The write and its bookkeeping are the runtime's own task: a write
        // begun always ends (the member may settle only after it has).
        let (rt, target) = (self.clone(), target.clone());
        self.detached(async move { rt.write_accepted(&target, message, bytes).await }).await
    }

    /// Whether the runtime's members may hold `bytes` more of queued input
    /// (`queueBytes`): the heap holds every member's queue.
    fn check_queue_room(&self, bytes: usize) -> Result<()> {
        let held: usize = self.0.state.borrow().members.values().map(|m| m.read(|s| s.life.queued())).sum();
        let cap = self.0.options.limits.queue_bytes;
        if held.saturating_add(bytes) > cap {
            return Err(crate::err!(
                LimitExceeded,
                "this runtime's members hold {held} bytes of input their turns have not taken yet; a message of {bytes} bytes would pass limits.queueBytes ({cap})"
            ));
        }
        Ok(())
    }

    async fn write_accepted(&self, target: &Rc<Member>, message: InboxMessage, reserved: usize) -> Result<String> {
        let written = self.append(target, vec![(event::MESSAGE.to_owned(), message_payload(&message))]).await;
        if written.is_err() {
            self.0.state.borrow_mut().answers.remove(&message.id);
        }
        let id = message.id.clone();
        let (kind, from) = match &message.source {
            MessageSource::User => ("user", None),
            MessageSource::AgentMessage { sender_name, .. } => ("agent-message", Some(sender_name.clone())),
            MessageSource::SubagentSettled { sender_name, .. } => ("subagent-settled", Some(sender_name.clone())),
        };
        let content = (written.is_ok() && self.listened()).then(|| message.content.clone());
        // A waking send resumes the parked FIFO. A message that no longer finds the
        // member live is durable in the log and is pending at the next resume.
        target.write(|s| s.life.write_ended(written.is_ok().then_some(message), reserved));
        if written.is_ok() {
            self.wake_own_waiter(target);
            self.emit(RuntimeEvent::Message {
                root_id: target.root_id.clone(),
                session_id: target.id.clone(),
                name: target.full_name.clone(),
                message_id: id.clone(),
                kind,
                from,
                content,
            });
        }
        self.kick(target);
        self.tree_changed(&target.root_id);
        written.map(|_| id)
    }

    /// The runtime's account of a settled child, delivered to its creator.
    pub(crate) async fn notify(&self, parent: &Rc<Member>, source: MessageSource, content: Value) {
        // A notice is runtime text, not a request: it queues for the creator's next turn.
        // A store that fails now and then does not lose it: a write is tried again
        // (acceptance reads back a write it was told failed, so a retry never doubles it).
        let signal = Signal::never();
        for _ in 0..NOTICE_ATTEMPTS {
            let meta = MessageMeta::default();
            match self.accept(parent, source.clone(), content.clone(), Scheduling::Queue, meta, &signal, None).await {
                Err(e) if e.code == crate::ErrorCode::PersistenceUnavailable => continue,
                // Input closed (a captured result) or closing: nobody to tell.
                _ => return,
            }
        }
    }

    /// Cold resume: rebuilds a member from its log under its tree root.
    async fn resume(&self, root_id: &str, target_id: &str, signal: &Signal) -> Result<Held> {
        self.check_tree_open(root_id)?;
        let rows = self.resume_rows(root_id, target_id, signal).await?;
        let Some(index) = rows.iter().position(|r| r.id() == target_id) else {
            return Err(crate::core::listing::not_a_member(target_id));
        };
        // A child outlives no creator that is settling: it is resumed once that one has left.
        if let Some(closed) = self.creator_closing(rows[index].parent_id()) {
            signal
                .guard(async {
                    closed.wait().await;
                    Ok(())
                })
                .await?;
        }
        self.resume_row(root_id, &rows, index, signal).await
    }

    /// Makes the member of `rows[index]` resident from its log (its creators
    /// may stay cold), or returns the residency a concurrent resume made.
    pub(crate) async fn resume_row(&self, root_id: &str, rows: &[Row], index: usize, signal: &Signal) -> Result<Held> {
        let target_id = rows[index].id();
        let row = match &rows[index] {
            Row::Child(child) => child.clone(),
            Row::Diagnostic(d) => {
                return Err(crate::err!(
                    NotResumable,
                    "{target_id} cannot be resumed: its catalog entry is {}",
                    d.reason.as_str(),
                    target_id = Quoted(target_id)
                ))
            }
        };
        match row.mode {
            Mode::Continuable => {}
            Mode::External => {
                return Err(crate::err!(
                    NotContinuable,
                    "{target_id} is an external execution and takes no further messages",
                    target_id = Quoted(target_id)
                ))
            }
            _ => {
                return Err(crate::err!(
                    NotResumable,
                    "{target_id} is a {} child and cannot be resumed",
                    row.mode.as_str(),
                    target_id = Quoted(target_id)
                ))
            }
        }
        // Admission for the resume, synchronously; a concurrent resume wins or we do.
        let in_flight = {
            let mut st = self.0.state.borrow_mut();
            if let Some(existing) = st.members.get(target_id) {
                let existing = existing.clone();
                drop(st);
                return Ok(self.hold(existing));
            }
            match st.materializing.released(target_id) {
                Some(released) => Some(released),
                None => {
                    let tree = st
                        .trees
                        .get_mut(root_id)
                        .ok_or_else(|| crate::err!(ParentUnavailable, "the tree root is not open"))?;
                    if tree.is_draining() {
                        return Err(crate::err!(Draining, "this tree is draining and resumes no members"));
                    }
                    if tree.full(self.0.options.capacity) {
                        return Err(crate::err!(
                            ActivationLimitReached,
                            "cannot resume {}: this tree already has {} live children, its capacity",
                            Quoted(row.path_string().as_deref().unwrap_or(target_id)),
                            self.0.options.capacity
                        ));
                    }
                    tree.reserve();
                    st.materializing.insert(target_id.to_owned());
                    None
                }
            }
        };
        if let Some(released) = in_flight {
            // Someone else is resuming (or creating) it: wait for that claim to end, then look again.
            signal
                .guard(async {
                    released.wait().await;
                    Ok(())
                })
                .await?;
            return Box::pin(self.target_for(root_id, target_id, signal)).await;
        }
        // From here the resume is the runtime's own task: begun, it ends by
        // giving the claim and the reserved slot back or making them live.
        let lineage = lineage(root_id, &rows[..index], &row);
        let (rt, root_id, target_id) = (self.clone(), root_id.to_owned(), target_id.to_owned());
        self.detached(async move { rt.load_resumed(&root_id, &target_id, row, lineage).await }).await
    }

    async fn load_resumed(
        &self,
        root_id: &str,
        target_id: &str,
        row: crate::core::listing::ChildRow,
        lineage: Lineage,
    ) -> Result<Held> {
        let loaded = self.load_log(target_id).await;
        let resumed = loaded.and_then(|log| self.materialize(root_id, &row, lineage, log));
        {
            let mut st = self.0.state.borrow_mut();
            st.materializing.remove(target_id);
            if let Some(tree) = st.trees.get_mut(root_id) {
                tree.unreserve(resumed.is_ok());
            }
        }
        // A drain waiting for this resume's reserved slot must look again.
        self.tree_changed(root_id);
        let (member, lost) = resumed?;
        // Held for the caller from here: one that went away meanwhile leaves
        // the hold unclaimed, and its release moves the member on.
        let held = self.hold(member.clone());
        // Started before anything awaits: a drain may close it during the record below.
        self.emit(RuntimeEvent::Start(self.run_info(&member, Mode::Continuable)));
        if let Some(lost) = lost {
            self.record_lost_turn(&member, lost).await;
        }
        // With nothing pending (or only parked input), the caller's message is what wakes it.
        let runnable = member.read(|s| s.life.has_input_to_run());
        if runnable {
            self.kick(&member);
        }
        Ok(held)
    }

    /// The `closed` of a resident creator that is settling now.
    fn creator_closing(&self, parent_id: &str) -> Option<Deferred<()>> {
        let st = self.0.state.borrow();
        let parent = st.members.get(parent_id).filter(|p| p.phase() == Phase::Closing)?;
        parent.settlement.as_ref().map(|s| s.closed.clone())
    }

    fn check_tree_open(&self, root_id: &str) -> Result<()> {
        match self.0.state.borrow().trees.get(root_id) {
            Some(t) if t.is_draining() => Err(crate::err!(Draining, "this tree is draining and resumes no members")),
            Some(_) => Ok(()),
            None => {
                Err(crate::err!(ParentUnavailable, "the tree root {root_id} is not open", root_id = Quoted(root_id)))
            }
        }
    }

    fn materialize(
        &self,
        root_id: &str,
        row: &crate::core::listing::ChildRow,
        lineage: Lineage,
        log: super::LoadedLog,
    ) -> Result<(Rc<Member>, Option<super::LostTurn>)> {
        if self.creator_closing(&row.parent_id).is_some() {
            // It would outlive a creator that is settling now: resumed once that one has left.
            return Err(crate::err!(ActivationClosing, "the creator of {} is settling", Quoted(&row.id)));
        }
        let Lineage { ancestors, parent_name } = lineage;
        let start = log.start.clone().unwrap_or_default();
        let delivery = match start.get("delivery").and_then(Value::as_str) {
            Some("caller") => member::Delivery::Caller,
            _ => member::Delivery::Parent,
        };
        let text = |key: &str| start.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut state = MemberState::new(Life::new(None), log.len, log.trace.clone());
        state.child_names = log.child_names;
        let member = Member {
            id: row.id.clone(),
            incarnation: self.token(),
            root_id: root_id.to_owned(),
            parent_id: Some(row.parent_id.clone()),
            ancestors,
            depth: row.depth,
            full_name: row.path_string().unwrap_or_else(|| row.id.clone()),
            parent_name: Some(parent_name),
            path: row.path_string(),
            label: row.label.clone().or_else(|| text("label")).unwrap_or_default(),
            provider: text("provider").unwrap_or_default(),
            cwd: log.cwd.clone().unwrap_or_else(|| self.0.options.default_cwd.clone()),
            kind: Kind::Local,
            // Resumed members settle like any other, with no holder awaiting the result.
            settlement: Some(Settlement::new(delivery)),
            append_lock: Default::default(),
            agent_preset: text("agentPreset"),
            agent_options: log.agent_options.clone(),
            runtime: Rc::downgrade(&self.0),
            slot: 0, // given by new_member
        };
        // A later cold resume does not inherit the output schema.
        let member = self.new_member(member, state);
        // Stopped by a spent budget: parked while a budget on its chain stays spent.
        let spent = log.exhausted && matches!(self.budget_gate(&member), crate::core::budget::Gate::Spent(_));
        let parked = log.parked && (spent || !log.exhausted);
        let lost = self.adopt_log(&member, log.pending, log.lost_turn, log.ran, (parked, spent), log.rerun_streak);
        let mut st = self.0.state.borrow_mut();
        let st = &mut *st;
        let parent = st.members.get(&row.parent_id).filter(|p| st.of(p).life.phase() == Phase::Live).cloned();
        if let Some(parent) = parent {
            st.of_mut(&parent).life.child_joined();
            st.of_mut(&member).parent_link = Some(Rc::downgrade(&parent));
        }
        // Children resumed while this member was cold are its own again: it
        // cannot settle before them, and their notices reach it (child-first).
        let children: Vec<Rc<Member>> = st.children_of(&row.id).cloned().collect();
        for child in children {
            let creator = st.of(&child).parent_link.as_ref().and_then(std::rc::Weak::upgrade);
            let orphan = creator.is_none_or(|p| st.of(&p).life.phase() == Phase::Gone)
                && st.of(&child).life.phase() != Phase::Gone;
            if orphan {
                st.of_mut(&child).parent_link = Some(Rc::downgrade(&member));
                st.of_mut(&member).life.child_joined();
            }
        }
        st.insert_member(member.clone());
        Ok((member, lost))
    }
}

/// A resumed member's creation ancestry (root first) and its creator's name,
/// from the listing rows above its own.
struct Lineage {
    ancestors: Vec<String>,
    parent_name: String,
}

fn lineage(root_id: &str, above: &[Row], row: &crate::core::listing::ChildRow) -> Lineage {
    let mut ancestors = Vec::new();
    let mut parent = row.parent_id.clone();
    while parent != root_id {
        ancestors.push(parent.clone());
        match above.iter().rev().find(|r| r.id() == parent) {
            Some(r) => parent = r.parent_id().to_owned(),
            None => break,
        }
    }
    ancestors.push(root_id.to_owned());
    ancestors.reverse();
    let parent_name = if row.parent_id == root_id {
        LEAD.to_owned()
    } else {
        above
            .iter()
            .rev()
            .find_map(|r| match r {
                Row::Child(c) if c.id == row.parent_id => Some(c.path_string().unwrap_or_else(|| c.id.clone())),
                _ => None,
            })
            .unwrap_or_else(|| row.parent_id.clone())
    };
    Lineage { ancestors, parent_name }
}

fn checked_content(limits: &crate::core::limits::Limits, content: Value) -> Result<Value> {
    let content = normalize_content(content).ok_or_else(|| {
        crate::err!(InvalidArgument, "message content must be a string or an array of content blocks with a type")
    })?;
    limits.check_message(&content).map(|()| content)
}

/// Writes of one settlement notice before it is given up (each one a store call).
const NOTICE_ATTEMPTS: usize = 8;

/// Where the result of the turn that answers a message goes.
pub(crate) struct Answer(pub(crate) Deferred<Result<SubagentResult>>);

impl Answer {
    fn new() -> Answer {
        Answer(Deferred::new())
    }

    fn wait(&self) -> impl std::future::Future<Output = Result<SubagentResult>> + 'static {
        self.0.wait()
    }
}

/// What an interrupt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterruptReceipt {
    /// A running turn (or external run) was signalled to stop by this call.
    pub signalled: bool,
}

/// A host's hold on a reopened member: while it lives, the member stays
/// resident even when idle. Dropping it (or [`Held::release`]) lets the member
/// settle as usual.
pub struct Held {
    runtime: Runtime,
    member: Rc<Member>,
    released: Cell<bool>,
}

impl Runtime {
    /// Keeps `member` resident until the returned hold is released.
    pub(crate) fn hold(&self, member: Rc<Member>) -> Held {
        member.write(|s| s.life.hold());
        Held { runtime: self.clone(), member, released: Cell::new(false) }
    }
}

impl Held {
    /// The member's live handle (dead once the member leaves residency).
    pub fn agent(&self) -> Agent {
        Agent(self.member.clone())
    }

    /// Ends the hold; idempotent.
    pub fn release(&self) {
        if self.released.replace(true) {
            return;
        }
        self.member.write(|s| s.life.release());
        self.runtime.kick(&self.member);
        self.runtime.tree_changed(&self.member.root_id);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

/// Whether the full name `target` names a proper descendant of the member named `ancestor`.
pub(crate) fn is_below(ancestor: &str, target: &str) -> bool {
    if ancestor == LEAD {
        return target != LEAD;
    }
    target.strip_prefix(ancestor).is_some_and(|rest| rest.starts_with('/'))
}

/// An interrupt by a member of itself.
pub(crate) fn cannot_interrupt_itself(agent: &Agent) -> SubagentError {
    crate::err!(Unauthorized, "{} cannot interrupt itself", Quoted(agent.name()))
}

/// An interrupt by a member that is not among the target's creators.
pub(crate) fn not_an_ancestor(agent: &Agent, target: &str) -> SubagentError {
    crate::err!(
        Unauthorized,
        "{} is not an ancestor of {} and cannot interrupt it",
        Quoted(agent.name()),
        Quoted(target)
    )
}
