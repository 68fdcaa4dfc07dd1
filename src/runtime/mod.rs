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
//! | `machine.rs` | one member's lifecycle and one tree's admission: sans-I/O state machines (their tables of states and transitions) |
//! | `registry.rs` | the one state value: resident members (indexed by creator and tree), every member's live state, the trees, reservations, claims and answers |
//! | `roots.rs` | opening a root from its log and closing it |
//! | `log.rs` | appends to a member's log (read back when the store does not tell), and what residency reads from a log |
//! | `views.rs` | names resolved in a tree, listings with live state, usage roll-ups |
//! | `events.rs` | lifecycle events and their listeners, flush listeners, the trace source |
//! | `message.rs` | an accepted message: its source and scheduling, and how its log keeps it |
//! | `member.rs` | a resident member, its inbox, the `Agent` handle |
//! | `start.rs` | `start_activation`: admission order, names at admission, publication |
//! | `deliver.rs` | `send_message`, `prompt`, `ask`, `reopen`, `interrupt`, cold resume |
//! | `lifecycle.rs` | the driver of turns and settlement: teardown, drain, tree work, quiescence |
//! | `budget.rs` | budgets of an open tree: the ledger read from the logs at open, turns gated and counted, `set_budget` |
//! | `recovery.rs` | lost turns (`turn/start` with no end) and open-time recovery |
//! | `kept.rs` | what a resume needs: its rows (kept, or found walking up its creators), log summaries, default-name floors |
//! | `ports.rs`, `run.rs` | what hosts implement: the agent host, providers, clock, ids; an external run's handle |
//! | `providers.rs` | the built-in `spawn` and `fork` providers |
//! | `text.rs` | the model-visible text the runtime writes (input framing, notices, guidance) |
//! | `stream.rs` | the events as a pull stream for a consumer at its own pace (deltas coalesce while it lags) |
//! | `tools.rs`, `team.rs` | the model-facing tools, and the team task board they keep |
//!
//! This file holds the [`Runtime`] itself: its options, the providers it
//! registers, handles and lookups, and the tasks it runs. A member outside residency is
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
mod events;
mod kept;
mod lifecycle;
mod log;
mod machine;
mod member;
mod message;
pub mod ports;
pub mod presets;
pub mod providers;
pub mod recovery;
mod registry;
mod roots;
mod run;
mod start;
pub mod stream;
pub mod team;
pub mod text;
pub mod tools;
mod views;

pub use budget::BudgetState;
pub use deliver::{Held, InterruptReceipt};
pub use events::{FlushListener, RunEndInfo, RunInfo, RuntimeEvent, ToolEnd, TraceRequest, TraceSource};
pub use message::{source_value, InboxMessage, MessageMeta, MessageSource, Scheduling};

use events::Listener;
pub use lifecycle::WaitEnd;
pub(crate) use log::{persistence, LoadedLog, LostTurn};
pub use member::{Agent, Delivery, SteerInbox};
pub use recovery::LOST_TURN;
pub(crate) use registry::State;
use registry::MAX_OPEN_RUN_CALLS;
pub use start::{Activation, ActivationSpec};
pub use views::{Live, LiveRow, MemberNames, Rest};

use crate::core::agent_options::AgentOptions;
use crate::core::delta::{Part, RunPart};
use crate::core::error::{Quoted, Result, SubagentError};
use crate::core::event;
use crate::core::exec::{Driver, LocalBoxFuture, Tasks};
use crate::core::json::Value;
use crate::core::listing::{self, Row};
use crate::core::signal::Signal;
use crate::core::store::Store;
use crate::runtime::ports::{AgentHost, Clock, IdKind, IdSource, Provider};
use machine::Tree;
use member::{Member, Phase};
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

/// A runtime: what it was made with, its state, and the host code it calls.
pub(crate) struct Inner {
    pub store: Rc<dyn Store>,
    pub host: Rc<dyn AgentHost>,
    /// Background work, run by the [`Driver`] `new` returned.
    pub tasks: Tasks,
    pub clock: Rc<dyn Clock>,
    pub ids: Rc<dyn IdSource>,
    pub options: RuntimeOptions,
    /// The live state of every tree this runtime hosts (`registry.rs`),
    /// borrowed for one synchronous step at a time, never across an await.
    pub state: RefCell<State>,
    /// The host code the runtime calls back (see [`Hooks`]).
    pub hooks: RefCell<Hooks>,
    /// Tokens (registrations, incarnations, turn and call ids): a counter.
    pub next_token: Cell<u64>,
    /// Slots of members dropped while the state was borrowed: their state
    /// goes at the next member's creation.
    pub dropped: Cell<Vec<usize>>,
}

impl Inner {
    /// A member's last handle was dropped: its state goes (later, when the
    /// state is borrowed now: a drop inside a step of the runtime).
    pub(crate) fn forget_member(&self, slot: usize) {
        match self.state.try_borrow_mut() {
            Ok(mut st) => st.forget(slot),
            Err(_) => {
                let mut dropped = self.dropped.take();
                dropped.push(slot);
                self.dropped.set(dropped);
            }
        }
    }
}

/// The host code a runtime calls: registered providers, event and flush
/// listeners, the trace source. Each is JS in the package, and each may call
/// back into the runtime, so it is called on a clone taken out of this one
/// place, with no borrow of it or of the state held.
#[derive(Default)]
pub(crate) struct Hooks {
    pub providers: Vec<(u64, Rc<dyn Provider>)>,
    pub listeners: Vec<(u64, Option<String>, Listener)>,
    pub flush_listeners: Vec<(u64, FlushListener)>,
    /// Where new members get their trace context ([`Runtime::set_trace_source`]).
    pub trace_source: Option<TraceSource>,
    /// The journal every event stream ([`stream::EventStream`]) reads: filled
    /// by its one listener, read by each stream through its own cursor.
    pub events: stream::Journal,
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
            state: Default::default(),
            hooks: Default::default(),
            next_token: Cell::new(1),
            dropped: Cell::default(),
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
        self.0.hooks.borrow_mut().providers.push((token, provider.clone()));
        self.emit(RuntimeEvent::ProviderAdded(ProviderRef(provider)));
        Ok(token)
    }

    /// Removes the registration `token` made; later calls do nothing. Accepted runs stay holder-owned.
    pub fn unregister_provider(&self, token: u64) {
        let removed = {
            let mut hooks = self.0.hooks.borrow_mut();
            let providers = &mut hooks.providers;
            let index = providers.iter().position(|(t, _)| *t == token);
            index.map(|i| providers.remove(i).1)
        };
        if let Some(provider) = removed {
            self.emit(RuntimeEvent::ProviderRemoved(provider.name()));
        }
    }

    pub fn get_provider(&self, name: &str) -> Option<Rc<dyn Provider>> {
        self.0.hooks.borrow().providers.iter().find(|(_, p)| p.name() == name).map(|(_, p)| p.clone())
    }

    pub fn provider_names(&self) -> Vec<String> {
        self.0.hooks.borrow().providers.iter().map(|(_, p)| p.name()).collect()
    }

    // ---- roots, names, lookup -------------------------------------------

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
        let current = member.read(|s| s.life.runs(turn_id));
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
            let Some(member) = st.run_member(token).filter(|m| st.of(m).life.phase() == Phase::Live).cloned() else {
                return false;
            };
            let Some(entry) = st.runs.get_mut(&token) else { return false };
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
        let current = member.read(|s| s.life.runs(turn_id));
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
        member.write(|s| s.life.moved(cwd.clone()));
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
        self.0.state.borrow().members.get(session_id).is_some_and(|m| m.read(|s| s.life.input_closed()))
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

    // ---- turns and the runtime's own tasks ---------------------------------

    /// The signal of `agent`'s running turn, if it is running one.
    pub(crate) fn turn_signal(&self, agent: &Agent) -> Option<Signal> {
        agent.0.read(|s| s.life.turn_signal(None))
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
