//! `SubagentRuntime`: live subagent trees over a store (seeds 003, 000, 004).
//!
//! The runtime keeps the resident members of each tree, admits and starts
//! children through providers, delivers messages, interrupts, settles and
//! drains. Everything durable goes through the [`Store`]; everything shown
//! (names, paths, trees) is derived from the logs, so a new runtime over the
//! same store rebuilds it. Authority is the exact live [`Agent`] handle.
//!
//! | file | owns |
//! |---|---|
//! | `machine.rs` | one member's lifecycle: a sans-I/O state machine (its table of states and transitions) |
//! | `message.rs` | an accepted message: its source and scheduling |
//! | `member.rs` | a resident member, its inbox, the `Agent` handle |
//! | `start.rs` | `start_activation`: admission order, names at admission, publication |
//! | `deliver.rs` | `send_message`, `prompt`, `ask`, `reopen`, `interrupt`, cold resume |
//! | `lifecycle.rs` | the driver of turns and settlement: teardown, drain, tree work, quiescence |
//! | `budget.rs` | budgets of an open tree: the ledger read from the logs at open, turns gated and counted, `set_budget` |
//! | `recovery.rs` | lost turns (`turn/start` with no end) and open-time recovery |
//! | `kept.rs` | what a resume needs: its rows (kept, or found walking up its creators), log summaries, default-name floors |
//! | `ports.rs` | what hosts implement: the agent host, providers and runs, clock, ids |
//! | `providers.rs` | the built-in `spawn` and `fork` providers |
//! | `text.rs` | the model-visible text the runtime writes (input framing, notices, guidance) |
//! | `stream.rs` | the events as a pull stream for a consumer at its own pace (deltas coalesce while it lags) |
//! | `tools.rs`, `team.rs` | the model-facing tools, and the team task board they keep |
//!
//! The rest of this file is the runtime's I/O around those machines: the
//! store, providers, host and listeners. A member outside residency is
//! cold: only its log holds it, and a message, `reopen` or open-time
//! recovery makes it resident again (resuming: claimed, a slot reserved,
//! its log read). A start is admitted (name and slot reserved) until its
//! catalog entry commits or its startup fails.
//!
//! Background work (turns, teardowns, recoveries) runs as the runtime's own
//! tasks, driven by the [`Driver`] that [`Runtime::new`] returns. So do the
//! parts of an operation that claim something across a wait (a start after
//! its admission, an acceptance's write, a resume's read, an open): once
//! begun they run to their end, whether or not the caller still awaits them.
//! A caller stops an operation with its [`Signal`], never by dropping its
//! future, which is how JS promises behave too; a tool call is also stopped
//! with the turn it was made in. Nothing therefore needs a drop guard to
//! stay consistent, and a resume hands its member over [`Held`], so even an
//! answer nobody takes moves the member on when it is dropped.

mod budget;
mod deliver;
mod kept;
mod lifecycle;
mod machine;
mod member;
mod message;
pub mod ports;
pub mod presets;
pub mod providers;
pub mod recovery;
mod start;
pub mod stream;
pub mod team;
pub mod text;
pub mod tools;

pub use budget::BudgetState;
pub use deliver::{source_value, Held, InterruptReceipt};

pub use lifecycle::WaitEnd;
pub use member::{Agent, Delivery, InboxMessage, MessageMeta, MessageSource, Scheduling, SteerInbox};
pub use recovery::LOST_TURN;
pub use start::{Activation, ActivationSpec};

use crate::core::agent_options::AgentOptions;
use crate::core::delta::{Part, RunPart};
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::exec::{Deferred, Driver, LocalBoxFuture, Tasks};
use crate::core::hash::{HashMap, HashSet};
use crate::core::json::Value;
use crate::core::listing::{self, Row};
use crate::core::name::LEAD;
use crate::core::signal::Signal;
use crate::core::store::{ReadQuery, Store};
use crate::core::trace::TraceContext;
use crate::core::usage::{self, Rollup, Totals};
use crate::runtime::ports::{AgentHost, Clock, IdKind, IdSource, Provider};
use machine::Tree;
use member::{Kind, Member, Phase};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

/// Runtime options.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Deepest allowed child depth (the root is 0, its children 1).
    pub max_depth: u32,
    /// Live children per root tree (the root takes no slot).
    pub capacity: usize,
    /// The effective directory of roots opened without one.
    pub default_cwd: String,
    /// Register the built-in `spawn` and `fork` providers.
    pub builtin_providers: bool,
    /// What opening a root does about work a stopped host left behind.
    pub recovery: Recovery,
    /// Size limits on labels, prompts, messages and payloads (`crate::core::limits`).
    pub limits: crate::core::limits::Limits,
    /// Children's `cwd` stays inside the root's directory (`crate::core::path::confine`).
    pub confine_cwd: bool,
    /// The presets `spawn` may name (see [`presets`]).
    pub presets: presets::Presets,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            max_depth: 1,
            capacity: 8,
            default_cwd: "/".into(),
            builtin_providers: true,
            recovery: Recovery::Report,
            limits: Default::default(),
            confine_cwd: true,
            presets: Default::default(),
        }
    }
}

/// Crash recovery: what happens to a turn that started and never ended (the
/// host stopped mid-turn), and to input no turn consumed, when a tree reopens.
/// A lost turn is always recorded as ended (`error`, with a diagnostic) when
/// its member becomes resident again; nothing accepted is dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// Opening a root resumes every member with a lost turn or pending input;
    /// a lost turn's input counts as answered (by the failure), so a member
    /// with nothing else pending settles and its creator is told.
    #[default]
    Report,
    /// As `Report`, but a lost turn's input stays pending and runs again (the
    /// root's too).
    Rerun,
    /// Opening a root reads no member log; members recover when next resumed.
    Off,
}

/// Lifecycle events, scoped to a tree root.
#[derive(Clone, Debug, PartialEq)]
pub enum RuntimeEvent {
    /// `subagent/start`: a provider established a published child.
    Start(RunInfo),
    /// `subagent/end`: a published child settled.
    End(RunEndInfo),
    /// `subagent/provider-added`: the registered provider itself (seed 000).
    ProviderAdded(ProviderRef),
    /// `subagent/provider-removed`.
    ProviderRemoved(String),
    /// A catalog fact committed (for views that follow the tree live).
    Catalog { root_id: String, parent_id: String, entry: crate::CatalogEntry },
    /// A message was accepted (durable) into a member's inbox.
    /// `from`: the sender's full name (an agent's message or a settlement notice; `None` from a user or host).
    Message {
        root_id: String,
        session_id: String,
        name: String,
        message_id: String,
        kind: &'static str,
        from: Option<String>,
        /// The message's content, when something listens (a copy: bounded by `messageBytes`).
        content: Option<Value>,
    },
    /// A member's turn started (`stop_reason` is `None`) or ended; `output` is
    /// the ended turn's final text (the `output` its `turn/end` records), if any.
    /// `parked` (on end): interrupted, its unread input waits for a waking send.
    Turn {
        root_id: String,
        session_id: String,
        name: String,
        stop_reason: Option<crate::core::result::StopReason>,
        output: Option<String>,
        parked: bool,
        /// On end: what the turn reported spending.
        usage: Option<crate::core::usage::Usage>,
        /// On start: the member's trace context, as its log keeps it.
        trace: Option<TraceContext>,
    },
    /// A part a running turn streamed (`turn_id` names the turn). Never stored.
    Delta { root_id: String, session_id: String, name: String, turn_id: u64, part: Part },
    /// A member's model-facing tool call began (`end` is `None`, `input` its
    /// arguments) or ended. `call_id` pairs the two, and a child the call
    /// started names it in its `subagent/start` (tracers hang the child there).
    Tool {
        root_id: String,
        session_id: String,
        name: String,
        call_id: u64,
        tool: String,
        input: Option<Value>,
        end: Option<ToolEnd>,
    },
    /// The durability barrier as a member left residency failed: its last
    /// writes may not be durable (`error` says why; the member left anyway).
    FlushFailed { root_id: String, session_id: String, name: String, error: String },
}

/// How a tool call ended: its result's text, and the child a delegation started.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEnd {
    pub is_error: bool,
    /// A refusal's code (the content is a sentence for the model, which may repeat its input).
    pub code: Option<ErrorCode>,
    pub content: String,
    /// A delegation's new child: its Session id and full name.
    pub child: Option<(String, String)>,
}

/// What `openRoot` may set on a root, each written to its log when it differs from what it records.
#[derive(Clone, Debug, Default)]
pub struct RootSettings {
    /// The root's budget: its whole tree's.
    pub budget: Option<crate::core::budget::Budget>,
    /// The root's agent options, which its local children's merge over.
    pub agent_options: Option<AgentOptions>,
}

/// A registered provider in an event; equal only to the same registration.
#[derive(Clone)]
pub struct ProviderRef(pub Rc<dyn Provider>);

impl ProviderRef {
    pub fn name(&self) -> String {
        self.0.name()
    }
}

impl PartialEq for ProviderRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for ProviderRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Provider({:?})", self.0.name())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub provider: String,
    pub id: String,
    pub parent_session_id: String,
    pub root_session_id: String,
    pub name: String,
    pub label: String,
    pub mode: crate::Mode,
    /// Its own budget as the event happened (set and remaining), where it has
    /// one: a view shows a new member's budget without reading its tree's log.
    pub budget: Option<BudgetState>,
    /// On a first start by a delegation tool: that call's `call_id`.
    pub tool_call: Option<u64>,
    /// Its trace context, as its log keeps it.
    pub trace: Option<TraceContext>,
}

/// What the runtime asks a [`TraceSource`] for a member it creates (a child's
/// log, or a root whose log keeps no trace context yet).
#[derive(Debug)]
pub struct TraceRequest<'a> {
    pub session_id: &'a str,
    pub root_id: &'a str,
    /// The creator (`None` for a root).
    pub parent_id: Option<&'a str>,
    /// Its full name.
    pub name: &'a str,
    /// Its label and provider (empty for a root).
    pub label: &'a str,
    pub provider: &'a str,
    /// The delegation tool call that creates it, if one does.
    pub tool_call: Option<u64>,
}

/// Gives a member being created its trace context (a tracer's span for its
/// creation), kept in its log; `None` keeps none.
pub type TraceSource = Rc<dyn Fn(&TraceRequest) -> Option<TraceContext>>;

#[derive(Clone, Debug, PartialEq)]
pub struct RunEndInfo {
    pub info: RunInfo,
    /// The result's stop reason, or `error` when teardown failed.
    pub stop_reason: crate::core::result::StopReason,
    pub error: Option<String>,
}

type Listener = Rc<dyn Fn(&RuntimeEvent)>;
/// A durability listener: `(session id) -> participation result`.
pub type FlushListener = Rc<dyn Fn(&str) -> LocalBoxFuture<'static, Result<()>>>;

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
    runs: HashMap<u64, RunEntry>,
}

/// An external run's live output: whose it is, and its open tool calls
/// (the run's own call id -> the runtime's `callId` and the tool's name).
pub(crate) struct RunEntry {
    pub id: String,
    pub calls: HashMap<String, (u64, String)>,
}

/// Open tool calls one run may hold: a run that never ends its calls holds no more.
const MAX_OPEN_RUN_CALLS: usize = 1024;

impl State {
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

pub(crate) struct Inner {
    pub store: Rc<dyn Store>,
    pub host: Rc<dyn AgentHost>,
    /// Background work, run by the [`Driver`] `new` returned.
    pub tasks: Tasks,
    pub clock: Rc<dyn Clock>,
    pub ids: Rc<dyn IdSource>,
    pub options: RuntimeOptions,
    pub state: RefCell<State>,
    pub providers: RefCell<Vec<(u64, Rc<dyn Provider>)>>,
    pub listeners: RefCell<Vec<(u64, Option<String>, Listener)>>,
    pub flush_listeners: RefCell<Vec<(u64, FlushListener)>>,
    pub next_token: Cell<u64>,
    /// What a resume needs, kept (`kept.rs`).
    pub kept: RefCell<kept::Kept>,
    /// Where new members get their trace context ([`Runtime::set_trace_source`]).
    pub trace_source: RefCell<Option<TraceSource>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.tasks.close();
    }
}

/// The runtime; clones share one state.
#[derive(Clone)]
pub struct Runtime(pub(crate) Rc<Inner>);

/// A runtime reference that does not keep it alive.
#[derive(Clone)]
pub struct WeakRuntime(std::rc::Weak<Inner>);

impl WeakRuntime {
    pub fn upgrade(&self) -> Option<Runtime> {
        self.0.upgrade().map(Runtime)
    }
}

/// Names of a live member and its direct creator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberNames {
    pub self_name: String,
    pub parent: Option<String>,
}

/// A listing row with live activity.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveRow {
    pub row: Row,
    pub live: Live,
}

/// What a live listing says of one member, the root's included.
#[derive(Clone, Debug, PartialEq)]
pub struct Live {
    /// `true` = `running`: resident and working; says nothing about task completion.
    pub running: bool,
    /// Resident and not running: `Idle` waits for input, `Parked` holds unread input an
    /// interrupt parked (`None` when running or not resident).
    pub rest: Option<Rest>,
    /// What the member and its subtree spent, read in the listing's own reads.
    pub usage: Rollup,
    /// The member's own budget, set and remaining, where it has one.
    pub budget: Option<BudgetState>,
    /// How its last turn stopped and its latest output, from its log (empty
    /// for a member without one: an external run, a diagnostic).
    pub turns: crate::core::turns::Turns,
}

/// How a resident member that is not running waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rest {
    Idle,
    Parked,
}

/// The authority an interrupt is admitted under.
pub enum InterruptAuthority<'a> {
    /// A trusted host operation, by Session id.
    User,
    /// A trusted host operation within this root's tree (full names resolve there).
    Tree(&'a Agent),
    /// An exact live agent in the target's creation ancestry.
    Ancestor(&'a Agent),
}

impl Runtime {
    /// A runtime and the driver of its background work: the host polls the
    /// driver (spawns it once on its executor) and the runtime needs nothing
    /// else from it. The driver ends once every `Runtime` clone is gone and
    /// its last task has finished.
    pub fn new(
        store: Rc<dyn Store>,
        host: Rc<dyn AgentHost>,
        clock: Rc<dyn Clock>,
        ids: Rc<dyn IdSource>,
        options: RuntimeOptions,
    ) -> (Runtime, Driver) {
        let builtin = options.builtin_providers;
        let (tasks, driver) = crate::core::exec::tasks();
        let runtime = Runtime(Rc::new(Inner {
            store,
            host,
            tasks,
            clock,
            ids,
            options,
            state: RefCell::default(),
            providers: RefCell::default(),
            listeners: RefCell::default(),
            flush_listeners: RefCell::default(),
            next_token: Cell::new(1),
            kept: RefCell::default(),
            trace_source: RefCell::default(),
        }));
        if builtin {
            let store = runtime.0.store.clone();
            for provider in crate::runtime::providers::builtin(store) {
                // Fresh runtime: built-in names cannot clash.
                let _ = runtime.register_provider(provider);
            }
        }
        (runtime, driver)
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.0.options
    }

    pub fn store(&self) -> Rc<dyn Store> {
        self.0.store.clone()
    }

    /// Sets (or with `None` clears) where members created from now on get
    /// their trace context: a tracer's adapter parents their spans on it, and
    /// it is kept in their logs so a later runtime joins the same trace.
    pub fn set_trace_source(&self, source: Option<TraceSource>) {
        *self.0.trace_source.borrow_mut() = source;
    }

    /// What the trace source gives a member being created (out of any borrow:
    /// the source may call back into the runtime).
    pub(crate) fn trace_for(&self, request: &TraceRequest) -> Option<TraceContext> {
        let source = self.0.trace_source.borrow().clone()?;
        source(request)
    }

    /// Appends one event to a live member's log (in order with the runtime's own writes).
    pub async fn append_to(&self, agent: &Agent, kind: &str, payload: Value) -> Result<u64> {
        self.require_live(agent, "agent")?;
        self.append(&agent.0, vec![(kind.to_owned(), payload)]).await
    }

    pub(crate) fn token(&self) -> u64 {
        let t = self.0.next_token.get();
        self.0.next_token.set(t + 1);
        t
    }

    pub(crate) fn new_id(&self, kind: IdKind) -> String {
        self.0.ids.new_id(kind)
    }

    // ---- providers ------------------------------------------------------

    /// Registers a provider; returns the token that removes exactly this registration.
    pub fn register_provider(&self, provider: Rc<dyn Provider>) -> Result<u64> {
        let name = provider.name();
        if !provider.prepares_continuable() && !provider.starts_runs() {
            return Err(crate::err!(
                UnsupportedCapability,
                "provider {name} has neither prepareContinuable nor start, so it cannot run children",
                name = Quoted(&name)
            ));
        }
        if provider.manages_depth() && (provider.prepares_continuable() || !provider.starts_runs()) {
            return Err(crate::err!(
                InvalidArgument,
                "provider {name} declares its depth provider-managed, which only a provider of external runs may: the tree keeps its own children's depth",
                name = Quoted(&name)
            ));
        }
        // Seed 003: a route default "is detached immutable data and requires `agentOptions` support".
        if let Some((route_provider, model)) = provider.agent_route_defaults() {
            if !provider.capabilities().agent_options {
                return Err(crate::err!(
                    UnsupportedCapability,
                    "provider {name} has agentRouteDefaults but not the agentOptions capability they need",
                    name = Quoted(&name)
                ));
            }
            if route_provider.is_empty() || model.is_empty() {
                return Err(crate::err!(
                    InvalidArgument,
                    "provider {name}'s agentRouteDefaults must name a provider and a model (non-empty strings)",
                    name = Quoted(&name)
                ));
            }
        }
        if self.get_provider(&name).is_some() {
            return Err(crate::err!(
                DuplicateProvider,
                "a provider named {name} is already registered",
                name = Quoted(&name)
            ));
        }
        let token = self.token();
        self.0.providers.borrow_mut().push((token, provider.clone()));
        self.emit(RuntimeEvent::ProviderAdded(ProviderRef(provider)));
        Ok(token)
    }

    /// Removes the registration `token` made; later calls do nothing. Accepted runs stay holder-owned.
    pub fn unregister_provider(&self, token: u64) {
        let removed = {
            let mut providers = self.0.providers.borrow_mut();
            let index = providers.iter().position(|(t, _)| *t == token);
            index.map(|i| providers.remove(i).1)
        };
        if let Some(provider) = removed {
            self.emit(RuntimeEvent::ProviderRemoved(provider.name()));
        }
    }

    pub fn get_provider(&self, name: &str) -> Option<Rc<dyn Provider>> {
        self.0.providers.borrow().iter().find(|(_, p)| p.name() == name).map(|(_, p)| p.clone())
    }

    pub fn provider_names(&self) -> Vec<String> {
        self.0.providers.borrow().iter().map(|(_, p)| p.name()).collect()
    }

    // ---- events ---------------------------------------------------------

    /// Subscribes to lifecycle events, optionally only those of one tree root.
    pub fn subscribe(&self, root: Option<String>, listener: Listener) -> u64 {
        let token = self.token();
        self.0.listeners.borrow_mut().push((token, root, listener));
        token
    }

    pub fn unsubscribe(&self, token: u64) {
        self.0.listeners.borrow_mut().retain(|(t, _, _)| *t != token);
    }

    /// Calls listeners on a snapshot, with no runtime borrow held.
    /// Whether anything listens: an event that costs a copy is not built for nobody.
    pub(crate) fn listened(&self) -> bool {
        !self.0.listeners.borrow().is_empty()
    }

    pub(crate) fn emit(&self, event: RuntimeEvent) {
        let root = match &event {
            RuntimeEvent::Start(i) => Some(i.root_session_id.as_str()),
            RuntimeEvent::End(e) => Some(e.info.root_session_id.as_str()),
            RuntimeEvent::Catalog { root_id, .. }
            | RuntimeEvent::Message { root_id, .. }
            | RuntimeEvent::Turn { root_id, .. }
            | RuntimeEvent::Delta { root_id, .. }
            | RuntimeEvent::Tool { root_id, .. }
            | RuntimeEvent::FlushFailed { root_id, .. } => Some(root_id.as_str()),
            _ => None,
        };
        let listeners: Vec<Listener> = self
            .0
            .listeners
            .borrow()
            .iter()
            .filter(|(_, scope, _)| match (scope, root) {
                (None, _) => true,
                (Some(scope), Some(root)) => scope == root,
                (Some(_), None) => true,
            })
            .map(|(_, _, l)| l.clone())
            .collect();
        for listener in listeners {
            listener(&event);
        }
    }

    // ---- durability barrier (decision record 004) -------------------------

    pub fn add_flush_listener(&self, listener: FlushListener) -> u64 {
        let token = self.token();
        self.0.flush_listeners.borrow_mut().push((token, listener));
        token
    }

    pub fn remove_flush_listener(&self, token: u64) {
        self.0.flush_listeners.borrow_mut().retain(|(t, _)| *t != token);
    }

    /// `true` when at least one listener took part, `false` for none; after all
    /// settle, the first failure in registration order rejects.
    pub async fn flush(&self, session_id: &str) -> Result<bool> {
        let listeners: Vec<FlushListener> = self.0.flush_listeners.borrow().iter().map(|(_, l)| l.clone()).collect();
        if listeners.is_empty() {
            return Ok(false);
        }
        // Start every listener before awaiting any, so they run in parallel.
        let pending: Vec<_> = listeners.iter().map(|l| l(session_id)).collect();
        let mut first_failure = None;
        for fut in pending {
            if let Err(e) = fut.await {
                first_failure.get_or_insert(e);
            }
        }
        match first_failure {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    // ---- roots, names, lookup -------------------------------------------

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
        let member = Rc::new(Member {
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
            next_seq: Cell::new(log.len),
            append_lock: Default::default(),
            log_unsure: Cell::new(false),
            child_names: RefCell::new(log.child_names),
            parent_link: RefCell::default(),
            trace: RefCell::new(log.trace.clone()),
            agent_preset: None,
            agent_options: agent_options.clone().or(log.agent_options.clone()),
            state: RefCell::new(machine::Life::new(None)),
        });
        // New options are the log's before the root runs a turn with them.
        if let Some(options) = agent_options.filter(|o| log.agent_options.as_ref() != Some(o)) {
            let payload = Value::object([("agentOptions", Some(options.to_value()))]);
            self.append(&member, vec![(event::AGENT_OPTIONS.to_owned(), payload)]).await?;
        }
        if let Some(b) = changed {
            let payload = crate::core::budget::event_payload(&id, Some(&b));
            self.append(&member, vec![(event::BUDGET.to_owned(), payload)]).await?;
        }
        if member.trace.borrow().is_none() {
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
                *member.trace.borrow_mut() = Some(trace);
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
        root.0.state.borrow_mut().close();
        let drained = self.drain_trees(&[root.session_id().to_owned()]).await;
        let turn = {
            let life = root.0.state.borrow();
            life.turn_signal(None).zip(life.turn_done())
        };
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
        root.0.state.borrow_mut().left();
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

    /// `Ok` when `agent` is the exact live handle of a resident member.
    pub(crate) fn require_live(&self, agent: &Agent, role: &str) -> Result<()> {
        let st = self.0.state.borrow();
        let resident = st.members.get(agent.session_id()).is_some_and(|m| Rc::ptr_eq(m, &agent.0));
        if resident && agent.0.phase() == Phase::Live {
            Ok(())
        } else {
            Err(crate::err!(
                Unauthorized,
                "the {role} handle for {} is not a live member of this runtime",
                crate::core::name::quote_truncated(agent.name(), 80)
            ))
        }
    }

    pub(crate) fn require_root(&self, root: &Agent) -> Result<()> {
        self.require_live(root, "root")?;
        if root.0.is_root() {
            Ok(())
        } else {
            Err(crate::err!(InvalidArgument, "{} is not a tree root", Quoted(root.name())))
        }
    }

    /// The names of a live member and its direct creator.
    pub fn names_of(&self, agent: &Agent) -> Result<MemberNames> {
        self.require_live(agent, "agent")?;
        Ok(MemberNames { self_name: agent.0.full_name.clone(), parent: agent.0.parent_name.clone() })
    }

    /// The live root of the member's tree.
    pub fn root_of(&self, agent: &Agent) -> Result<Agent> {
        self.require_live(agent, "agent")?;
        let st = self.0.state.borrow();
        match st.members.get(&agent.0.root_id) {
            Some(root) if root.phase() == Phase::Live => Ok(Agent(root.clone())),
            _ => Err(crate::err!(ParentUnavailable, "the root of {} is not open", Quoted(agent.name()))),
        }
    }

    pub fn downgrade(&self) -> WeakRuntime {
        WeakRuntime(Rc::downgrade(&self.0))
    }

    /// The handle of residency `(session_id, incarnation)`, if it is still the
    /// resident one: for bridges that hand out handles as keys. An external
    /// run has no handle.
    pub fn handle(&self, session_id: &str, incarnation: u64) -> Option<Agent> {
        let st = self.0.state.borrow();
        let member = st.members.get(session_id).filter(|m| m.incarnation == incarnation && !m.is_external())?;
        Some(Agent(member.clone()))
    }

    /// Disposes residency `(session_id, incarnation)` if it is still resident
    /// (what `Activation::dispose` does, for bridges holding keys).
    pub fn dispose_member(&self, session_id: &str, incarnation: u64) {
        let member = self.0.state.borrow().members.get(session_id).filter(|m| m.incarnation == incarnation).cloned();
        if let Some(member) = member {
            self.close(&member, true);
        }
    }

    /// The steered messages that arrived for turn `turn_id` of `agent` since
    /// the last take (nothing once that turn has ended).
    pub fn take_steered(&self, agent: &Agent, turn_id: u64) -> Vec<InboxMessage> {
        SteerInbox(Rc::downgrade(&agent.0), turn_id).take()
    }

    /// Publishes a part turn `turn_id` of `agent` streamed (a `subagent/delta`
    /// event; nothing is written). `false` when that turn has ended: a part
    /// emitted late is ignored, even while the member's next turn runs.
    pub fn emit_part(&self, agent: &Agent, turn_id: u64, part: Part) -> bool {
        let member = &agent.0;
        let current = member.state.borrow().runs(turn_id);
        if current {
            self.emit(RuntimeEvent::Delta {
                root_id: member.root_id.clone(),
                session_id: member.id.clone(),
                name: member.full_name.clone(),
                turn_id,
                part,
            });
        }
        current
    }

    /// Publishes what external run `token` streams (its start request's
    /// `run_token`) as its member's: text as `subagent/delta` (the token as its
    /// `turnId`: a run has no turns), its tool calls as `subagent/tool`.
    /// `false` (ignored) before the run is the child and after it leaves; a
    /// result for a call never begun, or a call past the open-call bound, too.
    pub fn emit_run(&self, token: u64, part: RunPart) -> bool {
        let (member, call) = {
            let mut st = self.0.state.borrow_mut();
            let State { runs, members, .. } = &mut *st;
            let Some(entry) = runs.get_mut(&token) else { return false };
            let Some(member) = members.get(&entry.id).filter(|m| m.phase() == Phase::Live).cloned() else {
                return false;
            };
            let call = match &part {
                RunPart::Delta(_) => None,
                RunPart::ToolCall { key, tool, .. } => {
                    if entry.calls.len() >= MAX_OPEN_RUN_CALLS || entry.calls.contains_key(key) {
                        return false;
                    }
                    let id = self.token();
                    entry.calls.insert(key.clone(), (id, tool.clone()));
                    Some((id, tool.clone()))
                }
                RunPart::ToolResult { key, .. } => match entry.calls.remove(key) {
                    Some(id) => Some(id),
                    None => return false,
                },
            };
            (member, call)
        };
        let (root_id, session_id, name) = (member.root_id.clone(), member.id.clone(), member.full_name.clone());
        let (call_id, tool) = call.unwrap_or_default();
        self.emit(match part {
            RunPart::Delta(part) => RuntimeEvent::Delta { root_id, session_id, name, turn_id: token, part },
            RunPart::ToolCall { input, .. } => RuntimeEvent::Tool {
                root_id,
                session_id,
                name,
                call_id,
                tool,
                input: Some(input.unwrap_or(Value::Null)),
                end: None,
            },
            RunPart::ToolResult { output, is_error, .. } => RuntimeEvent::Tool {
                root_id,
                session_id,
                name,
                call_id,
                tool,
                input: None,
                end: Some(ToolEnd { is_error, code: None, content: output, child: None }),
            },
        });
        true
    }

    /// A directory in `member`'s tree: `requested` resolved against the
    /// member's current directory (omitted: that directory), confined to the
    /// tree root's own directory (see [`crate::core::path::confine`]).
    pub(crate) fn resolve_cwd(&self, member: &Member, requested: Option<&str>) -> Result<String> {
        let root_cwd = self.0.state.borrow().members.get(&member.root_id).map(|r| r.cwd.clone());
        crate::core::path::confine(
            root_cwd.as_deref().unwrap_or("/"),
            &member.current_cwd(),
            requested,
            self.0.options.confine_cwd,
        )
    }

    /// Moves member `agent`'s effective directory during its running turn
    /// `turn_id` (seed 003: "relative paths resolve against the parent's
    /// current effective directory … cold resume retains their logged
    /// directory state"): `path`, relative to the current one, confined to
    /// the tree's root directory like a start's `cwd`, is written to its log
    /// as `session/cwd`; later turns, children started after it and a cold
    /// resume use it. Returns the new absolute directory.
    pub async fn set_cwd(&self, agent: &Agent, turn_id: u64, path: &str) -> Result<String> {
        let member = &agent.0;
        let current = member.state.borrow().runs(turn_id);
        if !current {
            return Err(crate::err!(
                ActivationClosing,
                "{} can change its directory only during its running turn",
                Quoted(&member.full_name)
            ));
        }
        let cwd = self.resolve_cwd(member, Some(path))?;
        let payload = Value::object([("cwd", Some(Value::from(cwd.as_str())))]);
        self.append(member, vec![(event::CWD.to_owned(), payload)]).await?;
        member.state.borrow_mut().moved(cwd.clone());
        Ok(cwd)
    }

    /// The live handle of a resident member, for trusted native code (tests,
    /// the simulation). The JS bridge does not expose it: there, handles come
    /// only from `openRoot`, `startActivation` and `reopen` under the root.
    pub fn agent(&self, session_id: &str) -> Option<Agent> {
        self.0
            .state
            .borrow()
            .members
            .get(session_id)
            .filter(|m| m.phase() == Phase::Live && !m.is_external())
            .map(|m| Agent(m.clone()))
    }

    /// Whether a resident member captured its structured result and so takes no more input.
    pub fn is_input_closed(&self, session_id: &str) -> bool {
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.state.borrow().input_closed())
    }

    /// Whether a tree is draining (admitting no children; notices not sent).
    pub fn is_draining(&self, root_id: &str) -> bool {
        self.0.state.borrow().trees.get(root_id).is_some_and(Tree::is_draining)
    }

    /// Whether a member is resident now (information, not authority: handles
    /// come from `open_root`, `start_activation` and `reopen`).
    pub fn is_resident(&self, session_id: &str) -> bool {
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.phase() == Phase::Live)
    }

    /// [`Runtime::is_resident`] under a root's authority: only members of
    /// its tree answer `true`, so residency elsewhere is never published.
    pub fn is_resident_in(&self, root: &Agent, session_id: &str) -> Result<bool> {
        self.require_root(root)?;
        let st = self.0.state.borrow();
        Ok(st.members.get(session_id).is_some_and(|m| m.root_id == root.0.root_id && m.phase() == Phase::Live))
    }

    /// Resolves `lead`, a full name or a Session id within the caller's tree.
    /// Grants no authority.
    pub async fn resolve_name(&self, caller: &Agent, text: &str, signal: &Signal) -> Result<String> {
        self.require_live(caller, "caller")?;
        let root = caller.0.root_id.clone();
        self.resolve_in_tree(&root, text, signal).await
    }

    /// `lead`, a full name or a Session id, as a Session id of `root_id`'s
    /// tree: one resolution for every entry that takes a name (prompt, ask,
    /// reopen, the tools). Resident members answer from memory, a cold path
    /// reads the catalogs along it, and a mistake is the core's
    /// `UNKNOWN_AGENT` with its hint. A Session id shaped like a name that
    /// the listing did not show (a branch it could not read) is confirmed as
    /// a cold resume would find it before it is called unknown.
    pub(crate) async fn resolve_in_tree(&self, root_id: &str, text: &str, signal: &Signal) -> Result<String> {
        if let Some(id) = self.resident_by_name(root_id, text) {
            return Ok(id);
        }
        match listing::resolve_name(&*self.0.store, root_id, text, signal).await {
            Err(e) if e.code == crate::ErrorCode::UnknownAgent && !text.contains('/') => {
                match self.member_name(root_id, text, signal).await? {
                    Some(_) => Ok(text.to_owned()),
                    None => Err(e),
                }
            }
            other => other,
        }
    }

    /// The full name of member `id` of `root_id`'s tree (its Session id below
    /// an unnamed creator, or when its catalog entry is only a diagnostic), or
    /// `None` when it is no member. A resident member answers from memory; else
    /// found as a cold resume finds it (kept rows, the walk up its creators,
    /// the listing when the walk cannot be checked), and its rows are kept.
    pub(crate) async fn member_name(&self, root_id: &str, id: &str, signal: &Signal) -> Result<Option<String>> {
        let resident =
            self.0.state.borrow().members.get(id).filter(|m| m.root_id == root_id).map(|m| m.full_name.clone());
        if resident.is_some() {
            return Ok(resident);
        }
        let rows = self.resume_rows(root_id, id, signal).await?;
        Ok(rows.iter().find(|r| r.id() == id).map(|r| match r {
            Row::Child(c) => c.path_string().unwrap_or_else(|| c.id.clone()),
            Row::Diagnostic(d) => d.id.clone(),
        }))
    }

    /// The tree below `root_id` in pre-order, with live activity.
    pub async fn list_descendants(&self, root_id: &str, signal: &Signal) -> Result<Vec<LiveRow>> {
        Ok(self.list_tree(root_id, signal).await?.1)
    }

    /// The tree of `root_id`: the root's own live state, and every member
    /// below it in pre-order with its live state, in one listing's reads.
    pub async fn list_tree(&self, root_id: &str, signal: &Signal) -> Result<(Live, Vec<LiveRow>)> {
        let (rows, logs) = usage::list_with_usage(&*self.0.store, root_id, signal).await?;
        let (root_usage, usage) = usage::roll_up(root_id, &rows, &logs, |id| !self.turn_in_flight(id));
        let st = self.0.state.borrow();
        // Budgets: an open tree's ledger (the live view); else the root's log, when listed from a root.
        let ledger = st.members.get(root_id).and_then(|m| st.trees.get(&m.root_id)).map(Tree::ledger);
        let (root_budget, budgets) = match ledger {
            Some(ledger) => (
                ledger.budget_of(root_id).map(BudgetState::from),
                rows.iter().map(|r| ledger.budget_of(r.id()).map(BudgetState::from)).collect(),
            ),
            None => {
                let subtrees: Vec<Totals> = usage.iter().map(|u| u.subtree).collect();
                logs.get(root_id).map_or_else(
                    || (None, Vec::new()),
                    |l| budget::tree_budgets(&l.budgets, root_id, &rows, &root_usage.subtree, &subtrees),
                )
            }
        };
        let live = |id: &str, usage: Rollup, budget: Option<BudgetState>| {
            let member = st.members.get(id).filter(|m| m.phase() == Phase::Live && !m.is_external());
            let running = st.members.get(id).is_some_and(|m| m.is_busy());
            let rest = member.filter(|_| !running).map(|m| {
                if m.state.borrow().has_parked_input() {
                    Rest::Parked
                } else {
                    Rest::Idle
                }
            });
            let turns = logs.get(id).map(|l| l.turns.clone()).unwrap_or_default();
            Live { running, rest, usage, budget, turns }
        };
        let root = live(root_id, root_usage, root_budget);
        let mut budgets = budgets.into_iter();
        let rows = rows
            .into_iter()
            .zip(usage)
            .map(|(row, usage)| {
                let budget = budgets.next().flatten();
                // An external run has no log: the row's id may still name another log's entry.
                let external = matches!(&row, Row::Child(c) if c.mode == crate::core::catalog::Mode::External);
                let mut live = live(row.id(), usage, budget);
                if external || matches!(row, Row::Diagnostic(_)) {
                    live.turns = Default::default();
                }
                LiveRow { row, live }
            })
            .collect();
        Ok((root, rows))
    }

    /// What `target` (a full name, `lead` or a Session id of the root's tree;
    /// default the root) and its whole subtree spent, read from the logs: cold
    /// members included, so a new runtime over the same store reports the
    /// same totals. A turn that was lost, or a member that cannot be read,
    /// makes them incomplete.
    pub async fn usage(&self, root: &Agent, target: Option<&str>, signal: &Signal) -> Result<Rollup> {
        self.require_root(root)?;
        let root_id = root.session_id();
        let id = match target {
            None => root_id.to_owned(),
            Some(text) => self.resolve_in_tree(root_id, text, signal).await?,
        };
        if id == root_id {
            return self.rollup_of(&id, signal).await;
        }
        let rows = self.resume_rows(root_id, &id, signal).await?;
        match rows.iter().find(|r| r.id() == id) {
            None => Err(listing::not_a_member(&id)),
            // An external run has no log: its creator's records what it spent.
            Some(Row::Child(c)) if c.mode == crate::core::catalog::Mode::External => {
                let query = ReadQuery::types(usage::USAGE_TYPES, signal);
                let events = signal.guard(self.0.store.read(&c.parent_id, &query)).await?.unwrap_or_default();
                let mut own = Totals::default();
                for (child, spent) in usage::LogUsage::of(&events).externals {
                    if child == id {
                        own.usage.add(&spent);
                    }
                }
                Ok(Rollup { own, subtree: own })
            }
            Some(_) => self.rollup_of(&id, signal).await,
        }
    }

    /// A member's own and subtree totals, from its log and its descendants'.
    pub(crate) async fn rollup_of(&self, id: &str, signal: &Signal) -> Result<Rollup> {
        let (rows, logs) = usage::list_with_usage(&*self.0.store, id, signal).await?;
        Ok(usage::roll_up(id, &rows, &logs, |m| !self.turn_in_flight(m)).0)
    }

    /// Whether a resident member's turn is running (an open turn of anyone else was lost).
    fn turn_in_flight(&self, session_id: &str) -> bool {
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.state.borrow().in_turn())
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
            m.state.borrow().describe(),
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

    // ---- logs -------------------------------------------------------------

    pub(crate) fn claim_materializing(&self, id: &str) -> Result<()> {
        let mut st = self.0.state.borrow_mut();
        if st.members.contains_key(id) || !st.materializing.insert(id.to_owned()) {
            return Err(crate::err!(DuplicateChild, "session {id} is already live or being opened", id = Quoted(id)));
        }
        Ok(())
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
        if member.log_unsure.get() {
            self.take_in_tail(member).await?;
        }
        check(member)?;
        let first = member.next_seq.get();
        let events: Vec<SessionEvent> = events
            .into_iter()
            .enumerate()
            .map(|(i, (kind, payload))| SessionEvent::new(first + i as u64, kind, payload))
            .collect();
        let count = events.len() as u64;
        let Err(e) = self.0.store.append(&member.id, events.clone()).await else {
            member.next_seq.set(first + count);
            return Ok(first);
        };
        if e.code == ErrorCode::AppendConflict {
            member.log_unsure.set(true); // someone else wrote: take it in next time
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
                    member.next_seq.set(first + count);
                    self.take_in(member, &found[events.len()..]);
                    Ok(first)
                } else {
                    self.take_in(member, &found);
                    Err(persistence(&member.id, e))
                }
            }
            Err(_) => {
                member.log_unsure.set(true);
                Err(persistence(&member.id, e))
            }
        }
    }

    /// Runs `check` on a member whose log is known: one left unsure is taken in first.
    pub(crate) async fn check_known(&self, member: &Member, check: impl FnOnce(&Member) -> Result<()>) -> Result<()> {
        let _guard = member.append_lock.lock().await;
        if member.log_unsure.get() {
            self.take_in_tail(member).await?;
        }
        check(member)
    }

    /// Reads what landed past `next_seq` in an unsure log and takes it in.
    async fn take_in_tail(&self, member: &Member) -> Result<()> {
        let query = ReadQuery { from_seq: member.next_seq.get(), ..ReadQuery::default() };
        let found = self.0.store.read(&member.id, &query).await.map_err(|e| persistence(&member.id, e))?;
        let from = member.next_seq.get();
        let found: Vec<SessionEvent> = found.unwrap_or_default().into_iter().filter(|f| f.seq >= from).collect();
        self.take_in(member, &found);
        member.log_unsure.set(false);
        Ok(())
    }

    /// Events that landed though their writer was told they failed: the log
    /// moves past them, a catalog entry's name is taken, and a message is
    /// input (it is durable, so a cold resume would deliver it too).
    fn take_in(&self, member: &Member, found: &[SessionEvent]) {
        let Some(last) = found.last() else { return };
        member.next_seq.set(member.next_seq.get().max(last.seq + 1));
        for event in found {
            if event.kind == event::CATALOG {
                if let Some(name) = event.payload.get("name").and_then(Value::as_str) {
                    member.child_names.borrow_mut().insert(name.to_owned());
                }
            }
        }
        let messages = deliver::pending_messages(found);
        if messages.is_empty() {
            return;
        }
        member.state.borrow_mut().found_in_log(messages); // durable already: taken in as accepted input
        let resident =
            self.0.state.borrow().members.get(&member.id).filter(|m| m.incarnation == member.incarnation).cloned();
        if let Some(resident) = resident {
            self.kick(&resident);
        }
    }

    /// The signal of `agent`'s running turn, if it is running one.
    pub(crate) fn turn_signal(&self, agent: &Agent) -> Option<Signal> {
        agent.0.state.borrow().turn_signal(None)
    }

    pub(crate) fn now(&self) -> u64 {
        self.0.clock.now()
    }

    pub(crate) fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.0.tasks.spawn(task);
    }

    /// Runs `op` to its end as the runtime's own task, queued at once: a
    /// caller that drops the returned future (a turn aborted around a tool
    /// call) leaves nothing half-done. `Cancelled` once the driver is gone.
    pub(crate) fn detached<T: 'static>(
        &self,
        op: impl Future<Output = Result<T>> + 'static,
    ) -> impl Future<Output = Result<T>> + 'static {
        let out = self.0.tasks.detach(op);
        async move { out.await.unwrap_or_else(|| Err(SubagentError::cancelled())) }
    }

    /// Wakes `waitForTreeWork` callers of a tree.
    pub(crate) fn tree_changed(&self, root_id: &str) {
        let fired = {
            let mut st = self.0.state.borrow_mut();
            st.trees.get_mut(root_id).map(Tree::take_changed)
        };
        if let Some(d) = fired {
            d.set(());
        }
        self.wake_quiet_waiter(root_id);
    }
}

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
    fn from_events(id: &str, events: &[SessionEvent]) -> Result<LoadedLog> {
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
            pending: deliver::pending_messages(events),
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
