//! The workload driver: one runtime's life ("epoch") over the shared store,
//! with random operations spawned concurrently, each checked against what
//! the rules allow at the moment it was issued.

use super::ctx::{text, Accepted, CreatedTask, Ctx, Model};
use super::host::{check_sent, choose_name, schema, SimHost};
use super::providers::{SimExt, SimLocal, SimSpawner, EXTERNAL, LOCAL};
use super::store::FaultStore;
use crate::core::error::{ErrorCode, Result};
use crate::core::exec::{Deferred, LocalBoxFuture, LocalExecutor};
use crate::core::json::Value;
use crate::core::name::{is_valid_name, AgentRef};
use crate::core::result::SubagentResult;
use crate::core::signal::Signal;
use crate::runtime::tools::{INTERRUPT_AGENT, SEND_MESSAGE, TASK_CREATE};
use crate::runtime::{Activation, ActivationSpec, Agent, Delivery, InterruptAuthority, RuntimeEvent, Scheduling};
use crate::testkit::{ManualClock, SeqIds};
use crate::{Runtime, RuntimeOptions};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;

use ErrorCode as C;

/// A Session id nobody has. It never reads as a full name (it starts with a
/// digit), so it is an absent target, not a name that names nobody.
const GHOST: &str = "0-ghost-session";

/// Errors a start may meet through no fault of the rules.
const START_ALLOWED: &[ErrorCode] = &[
    C::ActivationLimitReached,
    C::Draining,
    C::DuplicateName,
    C::DuplicateChild,
    C::PersistenceUnavailable,
    C::Cancelled,
    C::ContinuationUnavailable,
    C::ParentUnavailable,
    C::InvalidArgument,
];
/// Errors a message to a member of the sender's own tree may meet.
const SEND_ALLOWED: &[ErrorCode] = &[
    C::NotContinuable,
    C::InputClosed,
    C::NotResumable,
    C::ActivationLimitReached,
    C::Draining,
    C::PersistenceUnavailable,
    C::Cancelled,
    C::Unauthorized,
    C::ParentUnavailable,
];
/// Errors a message outside the sender's tree may meet: never success.
const FOREIGN_ALLOWED: &[ErrorCode] =
    &[C::Unauthorized, C::PersistenceUnavailable, C::Cancelled, C::Draining, C::ParentUnavailable];
/// What a reference that takes names (prompt, reopen) meets for a text shaped
/// like a name that names no member, a foreign Session id of that shape included.
const FOREIGN_NAME_ALLOWED: &[ErrorCode] =
    &[C::UnknownAgent, C::PersistenceUnavailable, C::Cancelled, C::Draining, C::ParentUnavailable];

/// One activation the driver holds, and what became of it.
pub struct Held {
    pub act: Activation,
    /// Which `subagent/start` of its id (in this runtime) it is.
    pub k: u32,
    pub result: RefCell<Option<Result<SubagentResult>>>,
}

/// A message sent with `ask`, and the answer it got.
pub struct Ask {
    pub target: String,
    pub id: String,
    pub answer: RefCell<Option<Result<SubagentResult>>>,
}

pub struct Epoch {
    pub ctx: Rc<Ctx>,
    pub rt: Runtime,
    pub spawner: SimSpawner,
    pub host: Rc<SimHost>,
    pub roots: RefCell<BTreeMap<String, Agent>>,
    pub held: RefCell<Vec<Rc<Held>>>,
    pub asks: RefCell<Vec<Rc<Ask>>>,
    /// Bumped when a dispose, drain or close begins: a hold across one may end early.
    closings: Cell<u64>,
    /// Every log's length when the last root closed (nothing may grow after).
    pub closed_lengths: RefCell<Option<Vec<(String, u64)>>>,
    stale: RefCell<Vec<Agent>>,
    signals: RefCell<Vec<Signal>>,
    inflight: Cell<usize>,
    /// Operations in flight, by number (for a stall's report).
    pub running: RefCell<BTreeMap<u64, &'static str>>,
    idle: RefCell<Deferred<()>>,
    counter: Cell<u64>,
}

/// A settled member's notice is in its creator's log when the creator was
/// online (resident, taking input, its tree not draining) as it ended.
fn check_notice(ctx: &Ctx, rt: &Runtime, end: &crate::runtime::RunEndInfo) {
    let info = &end.info;
    let (child, parent) = (info.id.as_str(), info.parent_session_id.as_str());
    // A residency that ran no turn and was let go has nothing new to report.
    let reportable = ctx.reportable.borrow().contains(child);
    // Caller delivery as its log records it: a start reported failed may have published (sim seed 5899).
    let caller =
        ctx.caller_delivery.borrow().contains(child) || ctx.logged_delivery(child).as_deref() == Some("caller");
    if end.error.is_some() || caller || !reportable {
        return;
    }
    if rt.agent(parent).is_none() || rt.is_draining(&info.root_session_id) || rt.is_input_closed(parent) {
        return;
    }
    let expected = {
        let mut notices = ctx.notices.borrow_mut();
        let n = notices.entry(child.to_owned()).or_default();
        *n += 1;
        *n
    };
    let found = ctx.notices_in_log(parent, child);
    if found < expected {
        ctx.violation(format!(
            "{} ({child}) ended while its creator {parent} was online, but the creator's log holds {found} of its {expected} notice(s)",
            info.name
        ));
    }
}

/// A member settles after its children: none is live when it ends.
fn check_children_first(ctx: &Ctx, rt: &Runtime, end: &crate::runtime::RunEndInfo) {
    for id in rt.resident() {
        if let Some(child) = rt.agent(&id) {
            if child.parent_id() == Some(end.info.id.as_str()) {
                ctx.violation(format!(
                    "{} ({}) ended while its child {} is live",
                    end.info.name,
                    end.info.id,
                    child.name()
                ));
            }
        }
    }
}

/// The trace context every epoch's trace source gives a member: derived from
/// its Session id, so any later epoch knows what its log must have kept.
fn sim_trace(session_id: &str) -> String {
    let fnv = |seed: u64| {
        session_id.bytes().fold(seed, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3)) | 1
        // never all zero
    };
    format!("00-{:016x}{:016x}-{:016x}-01", fnv(0xcbf2_9ce4_8422_2325), fnv(7), fnv(11))
}

/// A local member's starts and turns carry the trace context its creation
/// kept in its log, through crashes, restarts and kept summaries.
fn check_trace(ctx: &Ctx, id: &str, what: &str, trace: Option<&crate::core::trace::TraceContext>) {
    let expected = sim_trace(id);
    if trace.map(|t| t.traceparent.as_str()) != Some(expected.as_str()) {
        ctx.violation(format!("{what} of {id} carries trace {trace:?}, not the {expected} its log keeps"));
    }
    ctx.ops.bump("event.trace_checked");
}

fn on_event(ctx: &Ctx, event: &RuntimeEvent) {
    match event {
        RuntimeEvent::Start(info) if info.mode != crate::Mode::External => {
            check_trace(ctx, &info.id, "subagent/start", info.trace.as_ref())
        }
        RuntimeEvent::Turn { session_id, stop_reason: None, trace, .. } => {
            check_trace(ctx, session_id, "a turn start", trace.as_ref())
        }
        _ => {}
    }
    let mut lc = ctx.lifecycle.borrow_mut();
    match event {
        RuntimeEvent::Turn { session_id, stop_reason: Some(stop), .. } => {
            ctx.reportable.borrow_mut().insert(session_id.clone());
            if *stop == crate::core::result::StopReason::BudgetExhausted {
                ctx.ops.bump("event.budget_exhausted");
            }
        }
        RuntimeEvent::Start(info) => {
            if info.mode == crate::Mode::External {
                ctx.reportable.borrow_mut().insert(info.id.clone());
            } else {
                ctx.reportable.borrow_mut().remove(&info.id);
            }
            let c = lc.counts.entry(info.id.clone()).or_default();
            if c.0 != c.1 {
                ctx.violation(format!("subagent/start for {} ({}) while it is already started", info.id, info.name));
            }
            c.0 += 1;
            ctx.ops.bump("event.subagent_start");
            ctx.note(|| format!("start {} {} ({})", info.provider, info.name, info.id));
        }
        RuntimeEvent::End(end) => {
            let id = end.info.id.clone();
            let c = lc.counts.entry(id.clone()).or_default();
            if c.1 + 1 != c.0 {
                ctx.violation(format!("subagent/end for {id} without a start to pair (starts {}, ends {})", c.0, c.1));
            }
            c.1 += 1;
            ctx.ops.bump("event.subagent_end");
            let k = c.1;
            if end.error.is_some() && end.stop_reason != crate::core::result::StopReason::Error {
                ctx.violation(format!("subagent/end for {id} reports an error with stop reason {}", end.stop_reason));
            }
            ctx.note(|| format!("end {} ({id}): {} {:?}", end.info.name, end.stop_reason, end.error));
            lc.ends.insert((id, k), (end.stop_reason.clone(), end.error.clone()));
        }
        _ => {}
    }
}

impl Epoch {
    /// A runtime over the shared store with this epoch's id prefix, and its executor.
    pub fn new(ctx: &Rc<Ctx>, index: u32, options: &RuntimeOptions) -> (Rc<Epoch>, LocalExecutor) {
        let exec = LocalExecutor::new();
        let spawner = SimSpawner::default();
        *spawner.0.borrow_mut() = Some(exec.clone());
        let host = Rc::new(SimHost { ctx: ctx.clone(), rt: RefCell::new(None) });
        let prefix = format!("{index}e-");
        let clock = ManualClock { now: Cell::new(1_700_000_000_000 + index as u64 * 1_000_000), ticking: true };
        let (rt, driver) = Runtime::new(
            Rc::new(FaultStore::new(ctx.clone())),
            host.clone(),
            Rc::new(clock),
            Rc::new(SeqIds::new(&prefix)),
            options.clone(),
        );
        // A crash drops this executor, the driver with it, and so every task of the runtime.
        exec.spawn(Box::pin(driver));
        let registered = rt.register_provider(Rc::new(SimLocal { ctx: ctx.clone() })).and_then(|_| {
            rt.register_provider(Rc::new(SimExt {
                ctx: ctx.clone(),
                spawner: spawner.clone(),
                prefix: prefix.clone(),
                next: Cell::new(0),
            }))
        });
        if let Err(e) = registered {
            ctx.violation(format!("registering the simulated providers failed: {e}"));
        }
        rt.set_trace_source(Some(Rc::new(|r: &crate::runtime::TraceRequest| {
            crate::core::trace::TraceContext::new(&sim_trace(r.session_id), None).ok()
        })));
        let (sink, weak) = (ctx.clone(), rt.downgrade());
        rt.subscribe(
            None,
            Rc::new(move |e: &RuntimeEvent| {
                on_event(&sink, e);
                if let (RuntimeEvent::End(end), Some(rt)) = (e, weak.upgrade()) {
                    check_notice(&sink, &rt, end);
                    check_children_first(&sink, &rt, end);
                }
            }),
        );
        *host.rt.borrow_mut() = Some(rt.clone());
        let epoch = Rc::new(Epoch {
            ctx: ctx.clone(),
            rt,
            spawner,
            host,
            roots: RefCell::default(),
            held: RefCell::default(),
            asks: RefCell::default(),
            closings: Cell::new(0),
            closed_lengths: RefCell::default(),
            stale: RefCell::default(),
            signals: RefCell::default(),
            inflight: Cell::new(0),
            running: RefCell::default(),
            idle: RefCell::default(),
            counter: Cell::new(0),
        });
        (epoch, exec)
    }

    /// Breaks every reference cycle through this runtime (host, tasks, handles).
    pub fn clear(&self) {
        *self.host.rt.borrow_mut() = None;
        self.held.borrow_mut().clear();
        self.asks.borrow_mut().clear();
        self.stale.borrow_mut().clear();
        self.roots.borrow_mut().clear();
        self.signals.borrow_mut().clear();
        let exec = self.spawner.0.borrow_mut().take();
        drop(exec);
    }

    fn next(&self) -> u64 {
        self.counter.set(self.counter.get() + 1);
        self.counter.get()
    }

    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.spawner.spawn(Box::pin(task) as LocalBoxFuture<'static, ()>);
    }

    fn spawn_op(self: &Rc<Self>, kind: &'static str, task: impl Future<Output = ()> + 'static) {
        self.ctx.ops.bump(kind);
        self.inflight.set(self.inflight.get() + 1);
        let number = self.next();
        self.running.borrow_mut().insert(number, kind);
        self.ctx.note(|| format!("op {number}: {kind}"));
        let me = self.clone();
        self.spawn(async move {
            task.await;
            me.running.borrow_mut().remove(&number);
            me.ctx.note(|| format!("op {number} ({kind}) done"));
            me.inflight.set(me.inflight.get() - 1);
            if me.inflight.get() == 0 {
                let idle = std::mem::take(&mut *me.idle.borrow_mut());
                idle.set(());
            }
        });
    }

    /// Resolves once no operation is in flight.
    pub async fn wait_ops(self: Rc<Self>) {
        while self.inflight.get() > 0 {
            let idle = self.idle.borrow().clone();
            idle.wait().await;
        }
    }

    fn new_signal(&self) -> Signal {
        let signal = Signal::new();
        let mut signals = self.signals.borrow_mut();
        if signals.len() >= 48 {
            signals.remove(0);
        }
        signals.push(signal.clone());
        signal
    }

    fn remember(&self, agent: &Agent) {
        let mut stale = self.stale.borrow_mut();
        if !stale.iter().any(|a| a.same(agent)) {
            if stale.len() >= 32 {
                stale.remove(0);
            }
            stale.push(agent.clone());
        }
    }

    fn live_agents(&self) -> Vec<Agent> {
        self.rt.resident().iter().filter_map(|id| self.rt.agent(id)).collect()
    }

    /// A live member's handle, or now and then a remembered one that may be dead.
    fn pick_agent(&self) -> Option<Agent> {
        let ctx = &self.ctx;
        if ctx.rng.chance(0.12) {
            if let Some(a) = ctx.rng.pick(&self.stale.borrow()).cloned() {
                return Some(a);
            }
        }
        let agent = ctx.rng.pick(&self.live_agents()).cloned();
        if let Some(a) = &agent {
            self.remember(a);
        }
        agent
    }

    fn pick_root(&self) -> Option<Agent> {
        let roots: Vec<Agent> = self.roots.borrow().values().cloned().collect();
        self.ctx.rng.pick(&roots).cloned()
    }

    fn live(&self, agent: &Agent) -> bool {
        self.rt.names_of(agent).is_ok()
    }

    fn expect_code<T: std::fmt::Debug>(&self, what: &str, got: &Result<T>, code: ErrorCode) {
        match got {
            Err(e) if e.code == code => {}
            other => self.ctx.violation(format!("{what}: expected {code}, got {other:?}")),
        }
    }

    fn expect_allowed<T: std::fmt::Debug>(&self, what: &str, got: &Result<T>, allowed: &[ErrorCode], ok: bool) {
        if matches!(got, Err(e) if e.code == C::BudgetExhausted) {
            self.ctx.ops.bump("refused.budget_exhausted");
        }
        match got {
            Ok(_) if ok => {}
            Err(e) if allowed.contains(&e.code) => {}
            other => self.ctx.violation(format!("{what}: unexpected outcome {other:?}")),
        }
    }

    // ---- roots --------------------------------------------------------------

    /// Opens (or reopens) a root, retrying store failures.
    async fn open(self: &Rc<Self>, root: &str) -> Option<Agent> {
        for attempt in 0..20 {
            if attempt == 10 {
                self.ctx.quiet.set(true); // a long outage ends
            }
            // A root's budget is decided at its first open and given again at each.
            let budget = *self
                .ctx
                .root_budgets
                .borrow_mut()
                .entry(root.to_owned())
                .or_insert_with(|| self.ctx.rng.chance(0.4).then(|| super::budgets::random(&self.ctx)));
            if budget.is_some() {
                self.ctx.budgeted.borrow_mut().insert(root.to_owned());
            }
            let settings = crate::runtime::RootSettings { budget, agent_options: None };
            match self.rt.open_root_with(Some(root.to_owned()), Some("/work".into()), settings).await {
                Ok(agent) => {
                    self.ctx.quiet.set(false);
                    self.roots.borrow_mut().insert(root.to_owned(), agent.clone());
                    return Some(agent);
                }
                Err(e) if matches!(e.code, C::PersistenceUnavailable | C::DuplicateChild) => {
                    if e.code == C::DuplicateChild {
                        self.ctx.quiet.set(false);
                        return None; // someone else has it open
                    }
                }
                Err(e) => {
                    self.ctx.violation(format!("opening root {root} failed: {e} ({})", e.code));
                    self.ctx.quiet.set(false);
                    return None;
                }
            }
        }
        self.ctx.quiet.set(false);
        self.ctx.violation(format!("root {root} could not be opened in a quiet store"));
        None
    }

    pub async fn open_roots(self: Rc<Self>) {
        for root in self.ctx.roots.clone() {
            self.open(&root).await;
        }
    }

    /// After a restart: the same members under the same names and paths.
    pub async fn compare(self: Rc<Self>, before: BTreeMap<String, Vec<crate::Row>>) {
        let ctx = self.ctx.clone();
        ctx.quiet.set(true);
        for (root, rows) in before {
            match self.rt.list_descendants(&root, &Signal::never()).await {
                Ok(now) => {
                    // Open-time recovery may already have run members, which may have
                    // created children: the rows from before must all be there, in order.
                    let fresh = format!("{}e-", ctx.epoch.get());
                    let mut now: Vec<crate::Row> =
                        now.into_iter().map(|r| r.row).filter(|r| !r.id().starts_with(&fresh)).collect();
                    for (row, old) in now.iter_mut().zip(&rows) {
                        if let (crate::Row::Child(row), crate::Row::Child(old)) = (row, old) {
                            if row.id == old.id && !old.has_children {
                                row.has_children = false;
                            }
                        }
                    }
                    if now != rows {
                        ctx.violation(format!(
                            "after the restart root {root} lists {} rows unlike the {} before: {:?} vs {:?}",
                            now.len(),
                            rows.len(),
                            now,
                            rows
                        ));
                    }
                }
                Err(e) => ctx.violation(format!("listing {root} after the restart failed: {e}")),
            }
            let handle = self.roots.borrow().get(&root).cloned();
            let Some(handle) = handle else { continue };
            let model = Model { rows: BTreeMap::from([(root.clone(), rows)]) };
            for (id, path) in model.paths(&root) {
                match self.rt.resolve_name(&handle, &path, &Signal::never()).await {
                    Ok(found) if found == id => {}
                    other => ctx.violation(format!("after the restart {path:?} resolves to {other:?}, not {id}")),
                }
            }
        }
        ctx.quiet.set(false);
    }

    // ---- the workload -------------------------------------------------------

    pub async fn workload(self: Rc<Self>, ops: u32) {
        self.ctx.hangs.set(true);
        let stop = Rc::new(Cell::new(false));
        {
            // Partitions end now and then.
            let (ctx, stop) = (self.ctx.clone(), stop.clone());
            self.spawn(async move {
                while !stop.get() {
                    ctx.delay(ctx.rng.range(10, 120)).await;
                    ctx.heal();
                }
            });
        }
        for _ in 0..ops {
            self.random_op();
            self.ctx.delay(self.ctx.rng.below(6)).await;
        }
        stop.set(true);
    }

    fn random_op(self: &Rc<Self>) {
        const WEIGHTS: [u32; 20] = [22, 8, 14, 6, 8, 4, 6, 6, 2, 2, 2, 4, 4, 2, 5, 4, 4, 2, 4, 3];
        let me = self.clone();
        match self.ctx.rng.weighted(&WEIGHTS) {
            0 => self.spawn_op("start.native", me.op_start()),
            1 => self.spawn_op("start.tool", me.op_start_tool()),
            2 => self.spawn_op("send.native", me.op_send()),
            3 => self.spawn_op("send.tool", me.op_send_tool()),
            4 => self.spawn_op("prompt", me.op_prompt()),
            5 => self.spawn_op("interrupt.user", me.op_interrupt_user()),
            6 => self.spawn_op("interrupt.ancestor", me.op_interrupt_ancestor()),
            7 => self.spawn_op("dispose", me.op_dispose()),
            8 => self.spawn_op("drain", me.op_drain()),
            9 => self.spawn_op("reopen", me.op_reopen()),
            10 => self.spawn_op("wait_for_tree_work", me.op_wait()),
            11 => self.spawn_op("resolve", me.op_resolve()),
            12 => self.spawn_op("cancel", me.op_cancel()),
            13 => self.spawn_op("stale_handle", me.op_stale()),
            14 => self.spawn_op("task", me.op_task()),
            15 => self.spawn_op("hold", me.op_hold()),
            16 => self.spawn_op("ask", me.op_ask()),
            17 => self.spawn_op("quiesce", me.op_quiesce()),
            18 => self.spawn_op("abandon", me.op_abandon()),
            _ => self.spawn_op("set_budget", me.op_set_budget()),
        }
    }

    /// Registers a started activation and follows its result.
    fn hold(self: &Rc<Self>, act: Activation) {
        let k = {
            let lc = self.ctx.lifecycle.borrow();
            match lc.counts.get(&act.child_id) {
                Some(&(starts, ends)) if starts == ends + 1 => Some(starts),
                other => {
                    self.ctx.violation(format!(
                        "start_activation returned {} ({}) without a matching subagent/start: {other:?}",
                        act.name, act.child_id
                    ));
                    None
                }
            }
        };
        let Some(k) = k else { return };
        let held = Rc::new(Held { act, k, result: RefCell::new(None) });
        self.held.borrow_mut().push(held.clone());
        let ctx = self.ctx.clone();
        self.spawn(async move {
            let result = held.act.result().await;
            let key = (held.act.child_id.clone(), held.k);
            if !ctx.lifecycle.borrow().ends.contains_key(&key) {
                ctx.violation(format!("the result of {} settled before its subagent/end", held.act.name));
            }
            *held.result.borrow_mut() = Some(result);
        });
    }

    /// The full name a new child of `parent_name` gets for `leaf`.
    fn expected_name(parent_name: &str, leaf: &str) -> String {
        if parent_name == crate::core::name::LEAD {
            leaf.to_owned()
        } else {
            format!("{parent_name}/{leaf}")
        }
    }

    /// After a successful start: the name, and the single catalog fact.
    fn check_started(
        &self,
        parent: &Agent,
        parent_name: &str,
        requested: Option<&str>,
        id: &str,
        name: &str,
        listed: bool,
    ) {
        let ctx = &self.ctx;
        let leaf = name.rsplit('/').next().unwrap_or(name);
        let leaf_ok = match requested {
            Some(n) => leaf == n,
            None => leaf.strip_prefix("agent-").is_some_and(|n| n.parse::<u32>().is_ok()),
        };
        if !leaf_ok || name != Self::expected_name(parent_name, leaf) {
            ctx.violation(format!("a child of {parent_name} asked for {requested:?} and was named {name:?}"));
        }
        let events = ctx.inner.read_now(parent.session_id(), &Default::default()).unwrap_or_default();
        let entries = crate::core::catalog::project_log(&events).unwrap_or_default();
        let facts = entries.iter().filter(|e| e.id == id).count();
        let expected = usize::from(listed);
        if facts != expected {
            ctx.violation(format!("{name} ({id}) has {facts} catalog facts in its parent's log, not {expected}"));
        }
    }

    async fn op_start(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(parent) = self.pick_agent() else { return };
        let provider = ["spawn", "fork", LOCAL, EXTERNAL, "nope"][ctx.rng.weighted(&[35, 10, 25, 25, 5])];
        let (name, duplicate) = choose_name(&ctx, parent.session_id());
        let n = self.next();
        let mut spec = ActivationSpec::new(provider, &parent, &format!("task {n}"), &format!("do task {n}"));
        spec.name = name.clone();
        spec.delivery = if ctx.rng.chance(0.15) { Delivery::Caller } else { Delivery::Parent };
        let want_schema = ctx.rng.chance(0.2);
        if want_schema {
            spec.output_schema = Some(schema());
        }
        if ctx.rng.chance(0.05) {
            spec.child_id = Some(if ctx.rng.chance(0.5) {
                ctx.rng.pick(&ctx.inner.sessions()).cloned().unwrap_or_default()
            } else {
                format!("{}cid-{n}", ctx.epoch.get())
            });
        }
        if ctx.rng.chance(0.1) {
            spec.cwd = Some("sub".into());
        }
        if provider != EXTERNAL && ctx.rng.chance(0.15) {
            spec.budget = Some(super::budgets::random(&ctx));
            ctx.budgeted.borrow_mut().insert(parent.root_id().to_owned());
        }
        spec.signal = self.new_signal();
        let pre_aborted = ctx.rng.chance(0.03);
        if pre_aborted {
            spec.signal.abort();
        }
        let is_ext = provider == EXTERNAL;
        let spec_delivery_caller = spec.delivery == Delivery::Caller;
        let listed = !(is_ext && spec.delivery == Delivery::Caller);
        let parent_name = self.rt.names_of(&parent).ok().map(|n| n.self_name);
        let expect = if provider == "nope" {
            Some(C::NoProvider)
        } else if is_ext && (spec.child_id.is_some() || want_schema) {
            Some(C::UnsupportedCapability)
        } else if name.as_deref().is_some_and(|n| !is_valid_name(n)) {
            Some(C::InvalidName)
        } else if parent_name.is_none() {
            Some(C::Unauthorized)
        } else if parent.depth() + 1 > ctx.max_depth {
            Some(C::DepthExceeded)
        } else {
            None
        };
        let what = format!("start {provider} {name:?} under {} (#{n})", parent.name());
        ctx.note(|| format!("begin {what}"));
        let result = self.rt.start_activation(spec).await;
        ctx.note(|| format!("{what}: {:?}", result.as_ref().map(|a| &a.name)));
        match (expect, &result) {
            (Some(code), _) => self.expect_code(&what, &result, code),
            (None, Ok(_)) if duplicate || pre_aborted => {
                ctx.violation(format!("{what}: accepted though duplicate={duplicate} pre_aborted={pre_aborted}"))
            }
            // A name whose earlier write has an unknown outcome is checked against the
            // parent's log first; a store that cannot read it refuses the start.
            (None, _) if duplicate => self.expect_allowed(
                &what,
                &result,
                &ctx.allowed(
                    parent.root_id(),
                    &[C::DuplicateName, C::ActivationLimitReached, C::Draining, C::PersistenceUnavailable],
                ),
                false,
            ),
            (None, _) => self.expect_allowed(&what, &result, &ctx.allowed(parent.root_id(), START_ALLOWED), true),
        }
        if let (Ok(act), Some(parent_name)) = (result, parent_name) {
            if spec_delivery_caller {
                ctx.caller_delivery.borrow_mut().insert(act.child_id.clone());
            }
            self.check_started(&parent, &parent_name, name.as_deref(), &act.child_id, &act.name, listed);
            ctx.ops.bump("ok.start.native");
            self.hold(act);
        }
    }

    async fn op_start_tool(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(agent) = self.pick_agent() else { return };
        let live = self.live(&agent);
        let tools = match self.rt.tools_for(&agent) {
            Ok(tools) => tools,
            Err(e) => {
                if live || e.code != C::Unauthorized {
                    ctx.violation(format!("tools_for {} (live: {live}) failed: {e} ({})", agent.name(), e.code));
                }
                return;
            }
        };
        let delegates: Vec<String> = tools
            .specs()
            .iter()
            .map(|s| s.name.clone())
            .filter(|n| n.ends_with("_agent") && n != INTERRUPT_AGENT)
            .collect();
        let deep = agent.depth() >= ctx.max_depth;
        if deep != delegates.is_empty() {
            ctx.violation(format!("{} at depth {} sees delegation tools {delegates:?}", agent.name(), agent.depth()));
        }
        let tool = ctx.rng.pick(&delegates).cloned().unwrap_or_else(|| "spawn_agent".into());
        let (name, duplicate) = choose_name(&ctx, agent.session_id());
        let n = self.next();
        let bad_input = ctx.rng.chance(0.05);
        let budget = (ctx.rng.chance(0.15) && !tool.starts_with(EXTERNAL)).then(|| super::budgets::random(&ctx));
        if budget.is_some() {
            ctx.budgeted.borrow_mut().insert(agent.root_id().to_owned());
        }
        let input = Value::object([
            ("description", Some(Value::from(format!("tool task {n}")))),
            ("prompt", Some(if bad_input { Value::Bool(true) } else { Value::from(format!("do tool task {n}")) })),
            ("name", name.clone().map(Value::from)),
            ("budget", budget.as_ref().map(crate::core::budget::Budget::to_value)),
        ]);
        let parent_name = self.rt.names_of(&agent).ok().map(|n| n.self_name);
        let signal = self.new_signal();
        let result = tools.call(&tool, &input, &signal).await;
        ctx.note(|| format!("{} calls {tool} {name:?}: {}", agent.name(), result.content));
        let invalid = name.as_deref().is_some_and(|n| !is_valid_name(n));
        if (invalid || duplicate || bad_input || deep || parent_name.is_none()) && !result.is_error {
            ctx.violation(format!(
                "{tool} by {} with {name:?} was accepted (invalid {invalid}, duplicate {duplicate}, bad input {bad_input}, deep {deep})",
                agent.name()
            ));
        }
        if !result.is_error {
            let get =
                |k: &str| result.structured.as_ref().and_then(|s| s.get(k)).and_then(Value::as_str).map(str::to_owned);
            match (get("subagentId"), get("name"), parent_name) {
                (Some(id), Some(full), Some(parent_name)) => {
                    ctx.ops.bump("ok.start.tool");
                    self.check_started(&agent, &parent_name, name.as_deref(), &id, &full, true)
                }
                other => ctx.violation(format!("{tool} succeeded with an incomplete result {other:?}")),
            }
        }
    }

    /// A target for a message from `own` tree: (id, whether it is outside).
    fn pick_target(&self, model: &Model, own: &str, sender: &str) -> (String, bool) {
        let ctx = &self.ctx;
        let foreign: Vec<String> =
            model.rows.keys().filter(|r| r.as_str() != own).flat_map(|r| model.members(r)).collect();
        match ctx.rng.weighted(&[70, 15, 5, 5]) {
            1 if !foreign.is_empty() => (ctx.rng.pick(&foreign).cloned().unwrap_or_default(), true),
            2 => (sender.to_owned(), false),
            3 => (GHOST.to_owned(), true),
            _ => (ctx.rng.pick(&model.members(own)).cloned().unwrap_or_else(|| own.to_owned()), false),
        }
    }

    async fn op_send(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(sender) = self.pick_agent() else { return };
        let model = ctx.model();
        let own = sender.root_id().to_owned();
        let (target, foreign) = self.pick_target(&model, &own, sender.session_id());
        let bad_content = ctx.rng.chance(0.03);
        let content = if bad_content { Value::Null } else { text(&format!("message {}", self.next())) };
        let live = self.live(&sender);
        let signal = self.new_signal();
        let what = format!("send_message {} -> {target}", sender.name());
        let result = self.rt.send_message(&sender, &target, content, &signal).await;
        ctx.note(|| format!("{what}: {result:?}"));
        if !live {
            self.expect_code(&what, &result, C::Unauthorized);
        } else if bad_content || target == sender.session_id() {
            self.expect_code(&what, &result, C::InvalidArgument);
        } else if foreign {
            self.expect_allowed(&what, &result, FOREIGN_ALLOWED, false);
        } else {
            self.expect_allowed(&what, &result, &ctx.allowed(&own, SEND_ALLOWED), true);
        }
        if let Ok(id) = result {
            if model.root_of(&target) != Some(own.as_str()) {
                ctx.violation(format!("{what}: accepted for a target outside the sender's tree {own}"));
            }
            ctx.ops.bump("ok.send.native");
            ctx.accepted.borrow_mut().push(Accepted { target, id, via: "send_message" });
        }
    }

    async fn op_send_tool(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(agent) = self.pick_agent() else { return };
        let Ok(tools) = self.rt.tools_for(&agent) else {
            if self.live(&agent) {
                ctx.violation(format!("tools_for the live {} failed", agent.name()));
            }
            return;
        };
        let model = ctx.model();
        let own = agent.root_id().to_owned();
        let paths = model.paths(&own);
        // A full name, a Session id (own tree, other tree, itself, unknown), a name nobody has, or `lead`.
        let (reference, foreign) = match ctx.rng.weighted(&[40, 40, 10, 10]) {
            0 if !paths.is_empty() => (ctx.rng.pick(&paths).map(|(_, p)| p.clone()).unwrap_or_default(), false),
            1 => self.pick_target(&model, &own, agent.session_id()),
            2 => ("nobody/here".to_owned(), true),
            _ => ("lead".to_owned(), false),
        };
        let input = Value::object([
            ("agent", Some(Value::from(reference.as_str()))),
            ("message", Some(Value::from(format!("tool message {}", self.next())))),
        ]);
        let signal = self.new_signal();
        let result = tools.call(SEND_MESSAGE, &input, &signal).await;
        ctx.note(|| format!("{} send_message tool -> {reference}: {}", agent.name(), result.content));
        check_sent(&ctx, &model, &own, &reference, foreign, &result, "tool:driver");
    }

    async fn op_prompt(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(mut root) = self.pick_root() else { return };
        let roll = ctx.rng.below(20);
        if roll == 0 {
            if let Some(a) = ctx.rng.pick(&self.stale.borrow()).cloned() {
                root = a; // perhaps dead, perhaps not a root
            }
        }
        let model = ctx.model();
        let own = root.root_id().to_owned();
        let (target, foreign) =
            if ctx.rng.chance(0.3) { (own.clone(), false) } else { self.pick_target(&model, &own, root.session_id()) };
        let scheduling = if ctx.rng.chance(0.5) { Scheduling::Queue } else { Scheduling::Steer };
        let live = self.live(&root);
        let is_root = root.parent_id().is_none();
        let signal = self.new_signal();
        let what = format!("prompt {} -> {target}", root.name());
        let content = text(&format!("user prompt {}", self.next()));
        let result = self.rt.prompt(&root, &target, content, scheduling, &signal).await;
        ctx.note(|| format!("{what}: {result:?}"));
        if !live {
            self.expect_code(&what, &result, C::Unauthorized);
        } else if !is_root {
            self.expect_code(&what, &result, C::InvalidArgument);
        } else if foreign {
            let name_shaped = matches!(AgentRef::parse(&target), AgentRef::Path(_));
            self.expect_allowed(
                &what,
                &result,
                if name_shaped { FOREIGN_NAME_ALLOWED } else { FOREIGN_ALLOWED },
                false,
            );
        } else {
            self.expect_allowed(&what, &result, &ctx.allowed(&own, SEND_ALLOWED), true);
        }
        if let Ok(id) = result {
            if model.root_of(&target) != Some(own.as_str()) {
                ctx.violation(format!("{what}: accepted for a target outside tree {own}"));
            }
            ctx.ops.bump("ok.prompt");
            ctx.accepted.borrow_mut().push(Accepted { target, id, via: "prompt" });
        }
    }

    fn interrupt_target(&self) -> Option<String> {
        let mut ids = self.rt.resident();
        ids.push(GHOST.into());
        self.ctx.rng.pick(&ids).cloned()
    }

    async fn op_interrupt_user(self: Rc<Self>) {
        let Some(target) = self.interrupt_target() else { return };
        self.ctx.interrupted.borrow_mut().insert(target.clone());
        let result = self.rt.interrupt(&target, InterruptAuthority::User);
        self.ctx.note(|| format!("user interrupts {target}: {result:?}"));
        if let Err(e) = result {
            self.ctx.violation(format!("a user interrupt of {target} was refused: {e}"));
        }
    }

    async fn op_interrupt_ancestor(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(agent) = self.pick_agent() else { return };
        let Some(target) = self.interrupt_target() else { return };
        let model = ctx.model();
        // What the rules say, decided at the instant of the call (it is synchronous):
        // `None` when either answer is right (an external run or a closing member,
        // which have no handle, or a member no catalog lists).
        let expect_ok = if !self.live(&agent) {
            Some(false)
        } else if !self.rt.resident().contains(&target) {
            Some(true) // an absent target is an accepted no-op
        } else if self.rt.agent(&target).is_none() || model.root_of(&target).is_none() {
            None
        } else if agent.session_id() == target {
            Some(false)
        } else {
            Some(
                model.ancestors(&target).iter().any(|a| a == agent.session_id())
                    && model.root_of(&target) == Some(agent.root_id()),
            )
        };
        self.ctx.interrupted.borrow_mut().insert(target.clone());
        let result = self.rt.interrupt(&target, InterruptAuthority::Ancestor(&agent));
        ctx.note(|| format!("{} interrupts {target}: {result:?}", agent.name()));
        let what = format!("interrupt of {target} by {} ({})", agent.name(), agent.session_id());
        match expect_ok {
            Some(true) => {
                if let Err(e) = result {
                    ctx.violation(format!("{what}: refused with {} though authorized", e.code));
                }
            }
            Some(false) => self.expect_code(&what, &result, C::Unauthorized),
            None => self.expect_allowed(&what, &result, &[C::Unauthorized], true),
        }
    }

    async fn op_dispose(self: Rc<Self>) {
        let held = self.ctx.rng.pick(&self.held.borrow()).cloned();
        let Some(held) = held else { return };
        self.closings.set(self.closings.get() + 1);
        if held.act.agent().is_some() {
            // Disposing the residency it started (not an ended one) forces a report.
            self.ctx.reportable.borrow_mut().insert(held.act.child_id.clone());
        }
        let result = held.act.dispose().await;
        self.ctx.note(|| format!("dispose {}: {result:?}", held.act.name));
        self.expect_allowed(&format!("dispose {}", held.act.name), &result, &[C::ActivationTeardownFailed], true);
    }

    async fn op_drain(self: Rc<Self>) {
        let Some(root) = self.pick_root() else { return };
        self.closings.set(self.closings.get() + 1);
        let live = self.live(&root);
        let result = self.rt.drain_descendants(std::slice::from_ref(&root)).await;
        self.ctx.note(|| format!("drain {}: {result:?}", root.session_id()));
        let what = format!("drain {}", root.session_id());
        if !live {
            self.expect_code(&what, &result, C::Unauthorized);
            return;
        }
        self.expect_allowed(&what, &result, &[C::ActivationTeardownFailed, C::Unauthorized], true);
        if result.is_ok() {
            for id in self.rt.resident() {
                if let Some(a) = self.rt.agent(&id) {
                    if a.root_id() == root.session_id() && a.parent_id().is_some() {
                        self.ctx.violation(format!("{} is still live after its tree drained", a.name()));
                    }
                }
            }
        }
    }

    async fn op_reopen(self: Rc<Self>) {
        let Some(root_id) = self.ctx.rng.pick(&self.ctx.roots).cloned() else { return };
        let handle = self.roots.borrow().get(&root_id).cloned();
        self.ctx.note(|| format!("reopen {root_id} (open: {})", handle.is_some()));
        if let Some(handle) = handle {
            self.remember(&handle);
            self.closings.set(self.closings.get() + 1);
            let live = self.live(&handle);
            let result = self.rt.close_root(&handle).await;
            self.ctx.note(|| format!("close root {root_id}: {result:?}"));
            let what = format!("close_root {root_id}");
            if live {
                self.expect_allowed(&what, &result, &[C::ActivationTeardownFailed, C::Unauthorized], true);
            } else {
                self.expect_code(&what, &result, C::Unauthorized);
            }
            if self.live(&handle) {
                if result.is_ok() {
                    self.ctx.violation(format!("root {root_id} is still live after close_root"));
                }
                return;
            }
            let mut roots = self.roots.borrow_mut();
            if roots.get(&root_id).is_some_and(|r| r.same(&handle)) {
                roots.remove(&root_id);
            }
        }
        if self.roots.borrow().contains_key(&root_id) {
            return; // a concurrent reopen won
        }
        self.open(&root_id).await;
    }

    async fn op_wait(self: Rc<Self>) {
        let Some(root) = self.pick_root() else { return };
        let result = self.rt.wait_for_tree_work(&root).await;
        self.expect_allowed(&format!("wait_for_tree_work {}", root.name()), &result, &[C::Unauthorized], true);
    }

    async fn op_resolve(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(caller) = self.pick_agent() else { return };
        let live = self.live(&caller);
        let model = ctx.model();
        let own = caller.root_id().to_owned();
        let own_paths = model.paths(&own);
        let foreign_paths: Vec<(String, String)> = model
            .rows
            .keys()
            .filter(|r| **r != own)
            .flat_map(|r| model.paths(r))
            .filter(|(_, p)| !own_paths.iter().any(|(_, q)| q == p))
            .collect();
        let faults = [C::PersistenceUnavailable, C::Cancelled];
        let signal = self.new_signal();
        if ctx.rng.chance(0.3) && !foreign_paths.is_empty() {
            // A path that exists only in another tree resolves to nobody here.
            let Some((id, path)) = ctx.rng.pick(&foreign_paths).cloned() else { return };
            let result = self.rt.resolve_name(&caller, &path, &signal).await;
            let what = format!("resolve {path:?} (only in another tree, {id}) from {}", caller.name());
            match &result {
                Err(e) if !live && e.code == C::Unauthorized => {}
                Err(e) if live && [C::UnknownAgent, C::PersistenceUnavailable, C::Cancelled].contains(&e.code) => {}
                // The name may have been taken in the caller's own tree meanwhile.
                Ok(found) if live && *found != id && ctx.model().root_of(found) == Some(own.as_str()) => {}
                other => ctx.violation(format!("{what}: unexpected outcome {other:?}")),
            }
        } else if let Some((id, path)) = ctx.rng.pick(&own_paths).cloned() {
            let result = self.rt.resolve_name(&caller, &path, &signal).await;
            let what = format!("resolve {path:?} from {}", caller.name());
            match &result {
                Ok(found) if *found == id && live => {}
                Err(e) if !live && e.code == C::Unauthorized => {}
                Err(e) if live && faults.contains(&e.code) => {}
                other => ctx.violation(format!("{what}: expected {id}, got {other:?}")),
            }
        }
        // The live listing agrees with the store on every path it shows.
        if let Ok(rows) = self.rt.list_descendants(&own, &signal).await {
            let model = ctx.model();
            for row in rows {
                if let crate::Row::Child(c) = &row.row {
                    let known = model.child(&c.id).map(|m| (&m.path, &m.parent_id));
                    if known.is_some_and(|k| k != (&c.path, &c.parent_id)) {
                        ctx.violation(format!(
                            "the live listing shows {} as {:?}, the store as {known:?}",
                            c.id, c.path
                        ));
                    }
                }
            }
        }
    }

    async fn op_cancel(self: Rc<Self>) {
        let signal = self.ctx.rng.pick(&self.signals.borrow()).cloned();
        if let Some(signal) = signal {
            if !signal.is_aborted() {
                self.ctx.faults.bump("driver.cancel");
            }
            signal.abort();
        }
    }

    /// Begins a start, a message or a reopen and walks away from it after a
    /// random number of steps: the caller's future is dropped mid-way. A
    /// begun operation runs to its end regardless, so the run's end finds
    /// no name, slot, claim or write it left behind (quiescence, settlement
    /// and the indexes are checked there).
    async fn op_abandon(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(agent) = self.pick_agent() else { return };
        let rt = self.rt.clone();
        let what = ctx.rng.below(3);
        let op: LocalBoxFuture<'static, ()> = match what {
            0 => {
                let n = self.next();
                let provider = [LOCAL, EXTERNAL, "spawn"][ctx.rng.below(3) as usize];
                let spec = ActivationSpec::new(provider, &agent, &format!("abandoned {n}"), "do it");
                Box::pin(async move {
                    if let Ok(act) = rt.start_activation(spec).await {
                        drop(act); // nobody awaits its result: it settles by itself
                    }
                })
            }
            1 => {
                let model = ctx.model();
                let (target, _) = self.pick_target(&model, agent.root_id(), agent.session_id());
                let content = text(&format!("abandoned message {}", self.next()));
                Box::pin(async move {
                    let _ = rt.send_message(&agent, &target, content, &Signal::never()).await;
                })
            }
            _ => {
                let Some(root) = self.pick_root() else { return };
                let model = ctx.model();
                let (target, _) = self.pick_target(&model, root.root_id(), root.session_id());
                Box::pin(async move {
                    drop(rt.reopen(&root, &target, &Signal::never()).await); // its hold, released
                })
            }
        };
        let steps = ctx.rng.below(4);
        let mut op = op;
        let mut left = steps;
        let finished = std::future::poll_fn(move |cx| {
            if op.as_mut().poll(cx).is_ready() {
                return std::task::Poll::Ready(true);
            }
            if left == 0 {
                return std::task::Poll::Ready(false); // dropped here, mid-way
            }
            left -= 1;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await;
        ctx.faults.bump(if finished { "driver.abandon_late" } else { "driver.abandon" });
    }

    /// A remembered handle used where authority is needed.
    async fn op_stale(self: Rc<Self>) {
        let agent = self.ctx.rng.pick(&self.stale.borrow()).cloned();
        let Some(agent) = agent else { return };
        if self.live(&agent) {
            return;
        }
        let what = format!("the dead handle of {}", agent.name());
        self.expect_code(&format!("{what}: names_of"), &self.rt.names_of(&agent).map(|_| ()), C::Unauthorized);
        self.expect_code(&format!("{what}: tools_for"), &self.rt.tools_for(&agent).map(|_| ()), C::Unauthorized);
        self.expect_code(&format!("{what}: root_of"), &self.rt.root_of(&agent).map(|_| ()), C::Unauthorized);
        let root = agent.root_id().to_owned();
        let sent = self.rt.send_message(&agent, &root, text("from the grave"), &Signal::never()).await;
        if agent.session_id() != root {
            self.expect_code(&format!("{what}: send_message"), &sent, C::Unauthorized);
        }
        let started = self.rt.start_activation(ActivationSpec::new("spawn", &agent, "x", "y")).await;
        self.expect_code(&format!("{what}: start_activation"), &started.map(|_| ()), C::Unauthorized);
    }

    /// A team task created by a member: each reported task is on its tree's
    /// board once, under the id it was reported with, even when creations
    /// race over a store that answers late.
    async fn op_task(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(agent) = self.pick_agent() else { return };
        let Ok(tools) = self.rt.tools_for(&agent) else { return };
        let title = format!("team task {}-{}", ctx.epoch.get(), self.next());
        let input = Value::object([("title", Some(Value::from(title.as_str())))]);
        let result = tools.call(TASK_CREATE, &input, &self.new_signal()).await;
        ctx.note(|| format!("{} task_create {title:?}: {}", agent.name(), result.content));
        if result.is_error {
            return;
        }
        match result.structured.as_ref().and_then(|s| s.get("id")).and_then(Value::as_str) {
            Some(id) => {
                ctx.ops.bump("ok.task");
                let root = agent.root_id().to_owned();
                ctx.tasks.borrow_mut().push(CreatedTask { root, id: id.to_owned(), title });
            }
            None => ctx.violation(format!("task_create {title:?} succeeded without an id: {:?}", result.structured)),
        }
    }

    /// A host reopens a member (cold ones resume without a message), keeps
    /// it while it is held, and may spawn under it.
    async fn op_hold(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(root) = self.pick_root() else { return };
        let model = ctx.model();
        let own = root.root_id().to_owned();
        let mut targets: Vec<String> = model.paths(&own).into_iter().map(|(_, p)| p).collect();
        targets.extend(model.members(&own));
        targets.push("lead".into());
        let Some(target) = ctx.rng.pick(&targets).cloned() else { return };
        let closings = self.closings.get();
        let live = self.live(&root);
        let result = self.rt.reopen(&root, &target, &self.new_signal()).await;
        let what = format!("reopen {target} in {own}");
        ctx.note(|| format!("{what}: {:?}", result.as_ref().map(|h| h.agent().name().to_owned())));
        if !live {
            self.expect_code(&what, &result.map(|_| ()), C::Unauthorized);
            return;
        }
        let allowed =
            [C::NotContinuable, C::NotResumable, C::UnknownAgent, C::ActivationLimitReached, C::ActivationClosing];
        let Ok(held) = result else {
            let allowed: Vec<ErrorCode> = SEND_ALLOWED.iter().chain(&allowed).copied().collect();
            self.expect_allowed(&what, &result.map(|_| ()), &allowed, false);
            return;
        };
        ctx.ops.bump("ok.hold");
        let agent = held.agent();
        if ctx.rng.chance(0.5) {
            let n = self.next();
            let spec = ActivationSpec::new("spawn", &agent, &format!("held task {n}"), &format!("do held task {n}"));
            let started = self.rt.start_activation(spec).await;
            ctx.note(|| format!("spawn under held {}: {:?}", agent.name(), started.as_ref().map(|a| &a.name)));
            match started {
                Ok(act) => self.hold(act),
                Err(e) if agent.depth() + 1 > ctx.max_depth && e.code == C::DepthExceeded => {}
                other => self.expect_allowed(
                    &format!("spawn under held {}", agent.name()),
                    &other.map(|_| ()),
                    &ctx.allowed(&own, START_ALLOWED),
                    true,
                ),
            }
        }
        ctx.delay(ctx.rng.range(0, 20)).await;
        // A store failure may end it anyway: a member whose log cannot be written ends in error.
        let failed = {
            let lc = ctx.lifecycle.borrow();
            let ends = lc.counts.get(agent.session_id()).map_or(0, |c| c.1);
            lc.ends.get(&(agent.session_id().to_owned(), ends)).is_some_and(|(_, error)| error.is_some())
        };
        if self.closings.get() == closings && !failed && !self.rt.is_resident(agent.session_id()) {
            ctx.violation(format!("{} ({}) left residency while held", agent.name(), agent.session_id()));
        }
        held.release();
    }

    /// A prompt whose answer is awaited: after every tree closes, each one
    /// has an answer, and an answer that is a result names a recorded turn.
    async fn op_ask(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(root) = self.pick_root() else { return };
        let model = ctx.model();
        let own = root.root_id().to_owned();
        let members = model.members(&own);
        let Some(target) = ctx.rng.pick(&members).cloned() else { return };
        let content = text(&format!("user question {}", self.next()));
        let scheduling = if ctx.rng.chance(0.5) { Scheduling::Queue } else { Scheduling::Steer };
        let live = self.live(&root);
        let asked = self.rt.ask(&root, &target, content, scheduling, &self.new_signal()).await;
        let what = format!("ask {} -> {target}", root.name());
        let (id, answer) = match asked {
            Ok(pair) => pair,
            Err(e) => {
                let got: Result<()> = Err(e);
                if live {
                    self.expect_allowed(&what, &got, &ctx.allowed(&own, SEND_ALLOWED), false);
                } else {
                    self.expect_code(&what, &got, C::Unauthorized);
                }
                return;
            }
        };
        ctx.ops.bump("ok.ask");
        ctx.accepted.borrow_mut().push(Accepted { target: target.clone(), id: id.clone(), via: "ask" });
        let ask = Rc::new(Ask { target, id, answer: RefCell::new(None) });
        self.asks.borrow_mut().push(ask.clone());
        self.spawn(async move {
            let answer = answer.await;
            ctx.note(|| format!("answer to {}: {:?}", ask.id, answer.as_ref().map(|r| &r.stop_reason)));
            *ask.answer.borrow_mut() = Some(answer);
        });
    }

    /// Raises a budget of a tree while its turns run (the proof's "raising
    /// lets parked input run"): a member that has one, by Session id.
    async fn op_set_budget(self: Rc<Self>) {
        let ctx = self.ctx.clone();
        let Some(root) = self.pick_root() else { return };
        let own = root.root_id().to_owned();
        let log = ctx
            .inner
            .read_now(&own, &crate::core::store::ReadQuery::types(&[crate::core::event::BUDGET], &Signal::never()));
        let mut budgets = crate::core::budget::Budgets::default();
        crate::core::budget::fold(&mut budgets, log.unwrap_or_default().iter());
        let owners: Vec<(String, crate::core::budget::Budget)> = budgets.into_iter().collect();
        let mut owners = owners;
        owners.sort_by(|a, b| a.0.cmp(&b.0));
        let Some((owner, old)) = ctx.rng.pick(&owners).cloned() else { return };
        let new = super::budgets::raised(&ctx, &old);
        let live = self.live(&root);
        let what = format!("set_budget {owner} in {own} to {new:?}");
        let result = self.rt.set_budget(&root, &owner, Some(new), &self.new_signal()).await;
        ctx.note(|| format!("{what}: {result:?}"));
        if !live {
            return self.expect_code(&what, &result, C::Unauthorized);
        }
        // Its creators' budgets may be spent, or its row unreadable through a faulty store.
        let allowed = [C::BudgetExhausted, C::PersistenceUnavailable, C::Cancelled, C::UnknownAgent, C::Unauthorized];
        self.expect_allowed(&what, &result, &allowed, true);
        if let Ok(Some(state)) = result {
            ctx.ops.bump("ok.set_budget");
            if crate::core::budget::Dimension::ALL.iter().any(|&d| state.set.get(d) > new.get(d)) {
                ctx.violation(format!("{what} set {:?}, above what was asked", state.set));
            }
        }
    }

    /// Waits for a tree to be quiet; when it says so, nothing in it runs.
    async fn op_quiesce(self: Rc<Self>) {
        let Some(root) = self.pick_root() else { return };
        let live = self.live(&root);
        let own = root.root_id().to_owned();
        let result = self.rt.wait_for_quiescence(&root, &self.new_signal()).await;
        let what = format!("wait_for_quiescence {own}");
        if !live {
            self.expect_code(&what, &result, C::Unauthorized);
            return;
        }
        self.expect_allowed(&what, &result, &[C::Cancelled, C::Unauthorized], true);
        if result.is_ok() && self.live(&root) {
            for id in self.rt.resident() {
                let in_tree = self.rt.agent(&id).is_some_and(|a| a.root_id() == own);
                if in_tree && self.rt.is_running(&id) {
                    self.ctx.violation(format!("{what} returned while {id} runs"));
                }
            }
        }
    }

    // ---- the end of the epoch -----------------------------------------------

    /// Joins every tree's work (reopening roots a drain or close left shut).
    pub async fn settle(self: Rc<Self>) {
        for root in self.ctx.roots.clone() {
            let handle = self.roots.borrow().get(&root).cloned();
            let handle = match handle {
                Some(h) if self.live(&h) => h,
                _ => {
                    self.roots.borrow_mut().remove(&root);
                    match self.open(&root).await {
                        Some(h) => h,
                        None => continue,
                    }
                }
            };
            if let Err(e) = self.rt.wait_for_tree_work(&handle).await {
                self.ctx.violation(format!("wait_for_tree_work {root} failed: {e}"));
            }
        }
    }

    /// Drains and closes every tree.
    pub async fn finish(self: Rc<Self>) {
        self.closings.set(self.closings.get() + 1);
        let roots: Vec<Agent> = self.roots.borrow().values().cloned().collect();
        for root in roots {
            let result = self.rt.close_root(&root).await;
            self.expect_allowed(
                &format!("final close_root {}", root.session_id()),
                &result,
                &[C::ActivationTeardownFailed],
                true,
            );
        }
        self.roots.borrow_mut().clear();
        let inner = &self.ctx.inner;
        *self.closed_lengths.borrow_mut() =
            Some(inner.sessions().into_iter().map(|s| (s.clone(), inner.len(&s))).collect());
    }
}
