//! A runtime's one state value ([`State`]): who is resident, indexed by
//! creator and by tree; every member's live state ([`MemberState`]: its
//! lifecycle machine, log cursor, child names) in a slot of its own; the
//! trees' machines; the names reserved by starts in flight; the claims of
//! sessions being created or resumed; the hosts waiting for answers; what a
//! resume keeps. Each step borrows it once, never across an await. Also the
//! inspection calls invariant checks use.

use super::machine::Tree;
use super::member::{Kind, Member, MemberState};
use super::Runtime;
use crate::core::error::{Quoted, Result};
use crate::core::exec::Deferred;
use crate::core::hash::{HashMap, HashSet};
use std::rc::Rc;

#[derive(Default)]
pub(crate) struct State {
    /// Resident members by Session id; changed only through `insert_member`
    /// and `remove_member`, which keep `children` in step.
    pub members: HashMap<String, Rc<Member>>,
    /// Session ids of resident members by their `parent_id`: teardown and
    /// resume find a member's children without scanning every member (a
    /// drain of n members was n scans of n).
    children: HashMap<String, HashSet<String>>,
    /// Session ids of resident members by their tree root (the root's own
    /// included): quiet checks, drains and name lookups read one tree, not
    /// every tree a runtime hosts.
    by_root: HashMap<String, HashSet<String>>,
    pub trees: HashMap<String, Tree>,
    /// Names reserved by starts in flight, per parent.
    pub reservations: HashMap<String, HashSet<String>>,
    /// Sessions being created or resumed (guards duplicate ids and double resume).
    pub materializing: Claims,
    /// Host waits for the turn that consumes a message: message id -> (root, answer).
    pub answers: HashMap<String, (String, Deferred<Result<crate::SubagentResult>>)>,
    /// Resident external runs by their start's `run_token`; kept in step by
    /// `insert_member` and `remove_member`.
    pub(super) runs: HashMap<u64, RunEntry>,
    /// What a resume needs, kept (`kept.rs`): rows, log summaries, default-name floors.
    pub kept: super::kept::Kept,
    /// Every member's live state, from its creation until its last handle
    /// is dropped (resident or not).
    lives: Lives,
    /// What a member whose state is gone reads and writes (never kept).
    gone: MemberState,
}

/// Members' live states in slots: a member keeps its slot from its creation
/// until its last handle is dropped, then the slot is reused.
#[derive(Default)]
struct Lives {
    slots: Vec<Option<MemberState>>,
    free: Vec<usize>,
}

impl Lives {
    fn get(&self, slot: usize) -> Option<&MemberState> {
        self.slots.get(slot)?.as_ref()
    }

    fn get_mut(&mut self, slot: usize) -> Option<&mut MemberState> {
        self.slots.get_mut(slot)?.as_mut()
    }

    fn insert(&mut self, state: MemberState) -> usize {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(state);
                slot
            }
            None => {
                self.slots.push(Some(state));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, slot: usize) {
        if let Some(state) = self.slots.get_mut(slot).filter(|s| s.is_some()) {
            *state = None;
            self.free.push(slot);
        }
    }
}

/// An external run's live output: whose it is, and its open tool calls
/// (the run's own call id -> the runtime's `callId` and the tool's name).
pub(crate) struct RunEntry {
    pub id: String,
    pub calls: HashMap<String, (u64, String)>,
}

/// Open tool calls one run may hold: a run that never ends its calls holds no more.
pub(super) const MAX_OPEN_RUN_CALLS: usize = 1024;

impl State {
    /// A member's live state (a gone one for a member this state never held).
    #[inline(never)] // called at every step of every member: one copy, not one per caller
    pub fn of(&self, member: &Member) -> &MemberState {
        self.lives.get(member.slot).unwrap_or(&self.gone)
    }

    #[inline(never)]
    pub fn of_mut(&mut self, member: &Member) -> &mut MemberState {
        match self.lives.get_mut(member.slot) {
            Some(state) => state,
            None => {
                // Fresh each time: what is written to it is dropped.
                self.gone = MemberState::gone();
                &mut self.gone
            }
        }
    }

    /// The first free default name among `parent`'s children, from its kept
    /// floor and hint (flat in the number of children it has had and of its
    /// starts in flight): one its catalog committed or a start reserved is taken.
    pub fn default_name(&mut self, parent: &Member) -> crate::core::name::AgentName {
        let State { lives, kept, reservations, gone, .. } = self;
        let committed = &lives.get(parent.slot).unwrap_or(gone).child_names;
        let reserved = reservations.get(&parent.id);
        kept.default_name(
            &parent.id,
            |n| committed.contains(n),
            |n| committed.contains(n) || reserved.is_some_and(|r| r.contains(n)),
        )
    }

    /// The resident external run of start token `token`.
    pub fn run_member(&self, token: u64) -> Option<&Rc<Member>> {
        self.runs.get(&token).and_then(|entry| self.members.get(&entry.id))
    }

    /// Takes the first wait in `root_id`'s line whose member still waits
    /// with that ticket (the others are dropped as they are reached), and
    /// returns its wake.
    pub fn wake_first_in_line(&mut self, root_id: &str) -> Option<Deferred<()>> {
        let State { trees, members, lives, .. } = self;
        let tree = trees.get_mut(root_id)?;
        loop {
            let (id, ticket) = tree.next_in_line()?;
            let Some(m) = members.get(&id) else { continue };
            let Some(state) = lives.get_mut(m.slot) else { continue };
            if let Some(wake) = state.life.wake_for_quiet(ticket) {
                return Some(wake);
            }
        }
    }

    /// Whether a resident member of `root_id`'s tree is `at_work`: the one
    /// found last time first (it is likely still at work), else any, kept as
    /// the tree's next hint.
    pub fn any_at_work(&mut self, root_id: &str, at_work: &dyn Fn(&Member, &MemberState) -> bool) -> bool {
        let State { trees, members, lives, by_root, gone, .. } = self;
        let Some(tree) = trees.get_mut(root_id) else { return false };
        let works = |m: &Member| at_work(m, lives.get(m.slot).unwrap_or(gone));
        let hinted = tree.working_hint().and_then(|id| members.get(id));
        if hinted.is_some_and(|m| m.root_id == root_id && works(m)) {
            return true;
        }
        let found = by_root.get(root_id).into_iter().flatten().filter_map(|id| members.get(id)).find(|m| works(m));
        tree.remember_working(found.map(|m| m.id.clone()));
        found.is_some()
    }

    /// A member's last handle was dropped: its state goes (its slot is free).
    pub fn forget(&mut self, slot: usize) {
        self.lives.remove(slot);
    }

    /// Makes `member` the resident member of its Session id.
    pub fn insert_member(&mut self, member: Rc<Member>) {
        if let Some(parent) = &member.parent_id {
            self.children.entry(parent.clone()).or_default().insert(member.id.clone());
        }
        self.by_root.entry(member.root_id.clone()).or_default().insert(member.id.clone());
        if let Kind::External { token, .. } = &member.kind {
            self.runs.insert(*token, RunEntry { id: member.id.clone(), calls: HashMap::default() });
        }
        self.members.insert(member.id.clone(), member);
    }

    /// Removes `member` from residency, if it is still the resident one.
    pub fn remove_member(&mut self, member: &Rc<Member>) {
        if !self.members.get(&member.id).is_some_and(|m| Rc::ptr_eq(m, member)) {
            return;
        }
        self.members.remove(&member.id);
        if let Kind::External { token, .. } = &member.kind {
            self.runs.remove(token);
        }
        if let Some(parent) = &member.parent_id {
            unindex(&mut self.children, parent, &member.id);
        }
        unindex(&mut self.by_root, &member.root_id, &member.id);
    }

    /// The resident members whose `parent_id` is `parent`.
    pub fn children_of<'a>(&'a self, parent: &str) -> impl Iterator<Item = &'a Rc<Member>> + 'a {
        self.children.get(parent).into_iter().flatten().filter_map(|id| self.members.get(id))
    }

    /// The resident members of `root_id`'s tree, the root included.
    pub fn tree_members<'a>(&'a self, root_id: &str) -> impl Iterator<Item = &'a Rc<Member>> + 'a {
        self.by_root.get(root_id).into_iter().flatten().filter_map(|id| self.members.get(id))
    }
}

fn unindex(index: &mut HashMap<String, HashSet<String>>, key: &str, id: &str) {
    if let Some(ids) = index.get_mut(key) {
        ids.remove(id);
        if ids.is_empty() {
            index.remove(key);
        }
    }
}

/// Claimed Session ids, each with the condition a second claimant waits on.
#[derive(Default)]
pub(crate) struct Claims(HashMap<String, Deferred<()>>);

impl Claims {
    /// Claims `id`; `false` when it is already claimed.
    pub fn insert(&mut self, id: String) -> bool {
        if self.0.contains_key(&id) {
            return false;
        }
        self.0.insert(id, Deferred::new());
        true
    }

    pub fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// Ends the claim and wakes whoever waits on it.
    pub fn remove(&mut self, id: &str) {
        if let Some(done) = self.0.remove(id) {
            done.set(());
        }
    }

    /// Fires when the current claim on `id` ends.
    pub fn released(&self, id: &str) -> Option<Deferred<()>> {
        self.0.get(id).cloned()
    }
}

impl Runtime {
    /// A new member with its live state: the state holds it from here, by
    /// incarnation (see [`MemberState`]). Members dropped while the state was
    /// borrowed leave theirs here.
    pub(crate) fn new_member(&self, member: Member, state: MemberState) -> Rc<Member> {
        let dropped = self.0.dropped.take();
        let mut st = self.0.state.borrow_mut();
        for slot in dropped {
            st.forget(slot);
        }
        let mut member = member;
        member.slot = st.lives.insert(state);
        Rc::new(member)
    }

    /// Whether the member is resident and working.
    pub fn is_running(&self, session_id: &str) -> bool {
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.is_busy())
    }

    /// Resident members' ids (for inspection and tests).
    pub fn resident(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.0.state.borrow().members.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// A resident member's lifecycle state in one line (for invariant reports;
    /// native only, so it costs the wasm nothing).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn describe(&self, session_id: &str) -> Option<String> {
        let st = self.0.state.borrow();
        let m = st.members.get(session_id)?;
        Some(format!(
            "{}, reservations {}",
            m.read(|s| s.life.describe()),
            st.reservations.get(session_id).map_or(0, |r| r.len())
        ))
    }

    /// Where the children or the root index disagrees with the resident
    /// members, if anywhere (for invariant checks): every resident member is
    /// indexed under its parent (if any) and its root, and every indexed id is resident.
    pub fn children_index_error(&self) -> Option<String> {
        let st = self.0.state.borrow();
        let indexed = |index: &HashMap<String, HashSet<String>>, key: &str, id: &str| {
            index.get(key).is_some_and(|ids| ids.contains(id))
        };
        for m in st.members.values() {
            if let Some(p) = m.parent_id.as_deref().filter(|p| !indexed(&st.children, p, &m.id)) {
                return Some(format!("resident {} is not indexed under its parent {p}", m.id));
            }
            if !indexed(&st.by_root, &m.root_id, &m.id) {
                return Some(format!("resident {} is not indexed under its root {}", m.id, m.root_id));
            }
        }
        let count = |index: &HashMap<String, HashSet<String>>| index.values().map(|ids| ids.len()).sum::<usize>();
        let with_parent = st.members.values().filter(|m| m.parent_id.is_some()).count();
        if count(&st.children) != with_parent {
            return Some(format!("{} indexed children, {with_parent} resident with a parent", count(&st.children)));
        }
        (count(&st.by_root) != st.members.len())
            .then(|| format!("{} indexed by root, {} resident", count(&st.by_root), st.members.len()))
    }

    /// Outstanding name reservations (for invariant checks).
    pub fn reservation_count(&self) -> usize {
        self.0.state.borrow().reservations.values().map(|r| r.len()).sum()
    }

    pub(crate) fn claim_materializing(&self, id: &str) -> Result<()> {
        let mut st = self.0.state.borrow_mut();
        if st.members.contains_key(id) || !st.materializing.insert(id.to_owned()) {
            return Err(crate::err!(DuplicateChild, "session {id} is already live or being opened", id = Quoted(id)));
        }
        Ok(())
    }
}
