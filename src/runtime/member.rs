//! A resident tree member, its inbox, and the live handle that is its authority.

pub(crate) use super::machine::Phase;
use super::machine::{Lane, Life};
pub use super::message::{InboxMessage, MessageMeta, MessageSource, Scheduling};
use super::run::Run;
use super::Inner;
use crate::core::exec::{AsyncLock, Deferred};
use crate::core::hash::HashSet;
use crate::core::result::SubagentResult;
use crate::core::signal::Signal;
use crate::core::trace::TraceContext;
use std::fmt;
use std::rc::{Rc, Weak};

/// Who a settled child's result goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The direct creator is notified (the model-facing tools use this).
    Parent,
    /// Only the activation's `result` carries it; no notice.
    Caller,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Parent => "parent",
            Delivery::Caller => "caller",
        }
    }
}

pub(crate) enum Kind {
    Root,
    Local,
    /// An external run: its handle, the signal its provider watches, and its result once known.
    External {
        run: Rc<dyn Run>,
        signal: Signal,
        result: Deferred<crate::Result<SubagentResult>>,
        /// The start request's `run_token`: what the run emits is this member's.
        token: u64,
    },
}

/// An activation's settlement machinery.
pub(crate) struct Settlement {
    pub delivery: Delivery,
    pub result: Deferred<crate::Result<SubagentResult>>,
    pub disposed: Deferred<crate::Result<()>>,
    pub closed: Deferred<()>,
}

impl Settlement {
    pub fn new(delivery: Delivery) -> Rc<Settlement> {
        Rc::new(Settlement { delivery, result: Deferred::new(), disposed: Deferred::new(), closed: Deferred::new() })
    }
}

/// A member resident in this runtime: the root or a live child.
pub(crate) struct Member {
    pub id: String,
    /// Distinguishes this residency from earlier and later ones of the same session.
    pub incarnation: u64,
    pub root_id: String,
    pub parent_id: Option<String>,
    /// Creation ancestry from the root down to the direct creator.
    pub ancestors: Vec<String>,
    pub depth: u32,
    /// `lead`, the path from the root, or the Session id.
    pub full_name: String,
    pub parent_name: Option<String>,
    /// The path from the root when every member on the way is named (`""` for the root).
    pub path: Option<String>,
    pub label: String,
    pub provider: String,
    pub cwd: String,
    pub kind: Kind,
    pub settlement: Option<Rc<Settlement>>,
    /// The lock that orders its appends (its log cursor is in its [`MemberState`]).
    pub append_lock: AsyncLock,
    /// Its preset (a local child's: the one `spawn` named, else its creator's), as its log records it.
    pub agent_preset: Option<String>,
    /// Its effective agent options, as its log records them (every turn gets them).
    pub agent_options: Option<crate::core::agent_options::AgentOptions>,
    /// The runtime whose state holds this member's [`MemberState`], and its
    /// slot there: a handle reads it without a `Runtime` of its own.
    pub runtime: Weak<Inner>,
    pub slot: usize,
}

/// One member's live state for one residency: its lifecycle machine, its log
/// cursor, the names committed in its catalog, its trace context and the
/// link to its resident creator. The runtime's state owns it (in the
/// member's slot) from the member's creation until the member's last handle is
/// dropped: a root appends before it is registered, and a handle reads its
/// phase after teardown.
pub(crate) struct MemberState {
    pub life: Life,
    /// Next `seq` of its log.
    pub next_seq: u64,
    /// A write whose outcome the store never told (it failed, and reading
    /// back failed too): the log may be longer than `next_seq`.
    pub log_unsure: bool,
    /// Names committed in its catalog.
    pub child_names: HashSet<String>,
    /// The resident creator whose `live_children` counts this member.
    pub parent_link: Option<Weak<Member>>,
    /// Its trace context, as its log keeps it (see [`crate::core::trace`]).
    pub trace: Option<TraceContext>,
}

impl MemberState {
    pub fn new(life: Life, next_seq: u64, trace: Option<TraceContext>) -> MemberState {
        MemberState { life, next_seq, log_unsure: false, child_names: HashSet::default(), parent_link: None, trace }
    }

    /// What a member whose runtime is gone reads: gone, with nothing pending.
    #[inline(never)]
    pub fn gone() -> MemberState {
        let mut life = Life::new(None);
        life.left();
        MemberState::new(life, 0, None)
    }
}

impl Default for MemberState {
    fn default() -> MemberState {
        MemberState::gone()
    }
}

impl Drop for Member {
    /// Its state goes with its last handle (later, if the state is borrowed now).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.forget_member(self.slot);
        }
    }
}

impl Member {
    /// Reads its state (for one synchronous step: never across an await).
    pub fn read<T>(&self, f: impl FnOnce(&MemberState) -> T) -> T {
        match self.runtime.upgrade() {
            Some(runtime) => f(runtime.state.borrow().of(self)),
            None => f(&MemberState::gone()),
        }
    }

    /// Changes its state (for one synchronous step: never across an await).
    pub fn write<T>(&self, f: impl FnOnce(&mut MemberState) -> T) -> T {
        match self.runtime.upgrade() {
            Some(runtime) => f(runtime.state.borrow_mut().of_mut(self)),
            None => f(&mut MemberState::gone()),
        }
    }

    /// Its resident creator, while it counts this member among its live children.
    pub fn creator(&self) -> Option<Rc<Member>> {
        self.read(|s| s.parent_link.as_ref().and_then(Weak::upgrade))
    }

    /// Its effective directory: where a turn last moved it, else where it started
    /// (`cwd`, which stays the root's boundary for a tree's directories).
    pub fn current_cwd(&self) -> String {
        self.read(|s| s.life.cwd().unwrap_or(&self.cwd).to_owned())
    }

    pub fn is_root(&self) -> bool {
        matches!(self.kind, Kind::Root)
    }

    pub fn is_external(&self) -> bool {
        matches!(self.kind, Kind::External { .. })
    }

    /// Who this member's result goes to (the root has no creator: `Caller`).
    pub fn delivery(&self) -> Delivery {
        self.settlement.as_ref().map_or(Delivery::Caller, |s| s.delivery)
    }

    pub fn phase(&self) -> Phase {
        self.read(|s| s.life.phase())
    }

    /// Where this member runs in the lifecycle machine.
    pub fn lane(&self) -> Lane {
        match self.kind {
            Kind::Root => Lane::Root,
            Kind::Local => Lane::Local,
            Kind::External { .. } => Lane::External,
        }
    }

    /// Doing work now: a turn or run in flight, or input that will start one.
    pub fn is_busy(&self) -> bool {
        self.read(|s| s.life.is_busy(self.lane()))
    }
}

/// A live member handle. Holding the exact handle is the only authority the
/// runtime accepts; Session ids and names never authorize anything, and a
/// handle whose member left residency is dead.
#[derive(Clone)]
pub struct Agent(pub(crate) Rc<Member>);

impl Agent {
    pub fn session_id(&self) -> &str {
        &self.0.id
    }

    /// The full name: `lead`, a path such as `reviewer/checker`, or the Session id.
    pub fn name(&self) -> &str {
        &self.0.full_name
    }

    pub fn root_id(&self) -> &str {
        &self.0.root_id
    }

    /// The path from the root (`""` for the root), when every member on the way is named.
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    pub fn parent_id(&self) -> Option<&str> {
        self.0.parent_id.as_deref()
    }

    pub fn depth(&self) -> u32 {
        self.0.depth
    }

    /// This residency's number: a handle is the pair (Session id, incarnation).
    pub fn incarnation(&self) -> u64 {
        self.0.incarnation
    }

    /// Whether the member is still resident and live.
    pub fn is_live(&self) -> bool {
        self.0.phase() == Phase::Live
    }

    pub fn same(&self, other: &Agent) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Agent({} {})", self.0.full_name, self.0.id)
    }
}

/// Steered messages of one running turn; the host takes them at each step.
/// It is bound to its turn: a host that ignored an abort and kept running
/// cannot take messages meant for the member's next turn.
#[derive(Clone)]
pub struct SteerInbox(pub(crate) Weak<Member>, pub(crate) u64);

impl SteerInbox {
    /// This turn's id (for bridges that hand the inbox out as a key).
    pub fn turn_id(&self) -> u64 {
        self.1
    }

    /// Removes and returns the steered messages that arrived since the last take.
    pub fn take(&self) -> Vec<InboxMessage> {
        let Some(member) = self.0.upgrade() else { return Vec::new() };
        member.write(|s| s.life.take_steered(self.1))
    }
}
