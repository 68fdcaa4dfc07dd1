//! Deterministic simulation (issue 7), a development tool built only with the
//! `sim` feature (the tests and `make sim`): random workloads over several trees
//! against a store, providers and an agent host that delay, fail and hang at
//! random, with restarts of the runtime over the same store. The store also
//! answers late (an append acknowledged after later calls saw it), wrongly (a
//! commit reported as a failure) and stale (a read's snapshot handed back
//! after later appends), and external runs answer after their disposal. The same seed
//! replays the same run: one [`rng::Rng`] decides everything and the
//! [`crate::core::exec::LocalExecutor`] runs tasks in FIFO order.
//!
//! A seed runs one to `max_epochs` runtimes ("epochs") over one store. Each
//! epoch opens the roots, runs a workload of concurrent operations (each
//! checked against the codes the rules allow; some walked away from mid-way,
//! their caller's future dropped, which must leave nothing half-done), and
//! ends in one of three ways:
//! a crash (the runtime and every task in flight are dropped mid-work), a
//! quiesce (all work joined, then dropped) or a drain (every tree drained
//! and closed). The last epoch always drains. After each epoch the store is
//! checked; after a drain, the runtime too; after a restart, the listing is
//! compared with the one before. The invariants:
//!
//! - sibling names are unique in every catalog, every catalog decodes, and
//!   every continuable entry's session has a log;
//! - no reservation is left once all work has settled, and a child then
//!   stays resident only while parked by an interrupt or creating others
//!   (an idle member with nothing pending settles); `names_of` agrees with
//!   the store;
//! - every `subagent/start` pairs with at most one `subagent/end`, and after
//!   a drain with exactly one; a held activation's `result` settles after its
//!   end, and the end's stop reason is the result's (`error` when the result
//!   is a capture failure or dispose reported `ACTIVATION_TEARDOWN_FAILED`);
//! - every accepted message id is durable in its target's log, consumed by at
//!   most one recorded turn (`turn/end`'s `consumed`) and only after the host
//!   was handed it, or still pending for a member that is listed;
//! - every external run is disposed and finished once its tree drained;
//! - after a restart every member has the same full name and path (the
//!   listing equals the one before, and each path resolves to the same id);
//!   a session's turns always carry the same full name and creator name;
//! - a message never reaches another tree, an unauthorized interrupt or a
//!   dead handle is refused with `UNAUTHORIZED`, invalid and duplicate names
//!   are refused, and every other outcome is one the rules allow at the
//!   moment the operation was issued;
//! - every team task `task_create` reported is on its tree's board once,
//!   under the id it was reported with;
//! - a member held by `reopen` stays resident until released (unless
//!   disposed, drained or closed meanwhile); `wait_for_quiescence` returns
//!   only when nothing in the tree runs; after every tree closed, every
//!   `ask` has an answer, and an answer that is a result names a recorded
//!   turn that consumed the message;
//! - budgets (`budgets.rs`): every subtree total the runtime rolls up equals
//!   the sum of its members' own totals read from their whole logs, and no
//!   budget is exceeded past the excess its tree's hosts reported beyond
//!   their turns' allowances (turns, a lost one included, and spawns not at
//!   all), whatever the faults, crashes and raises in between;
//! - no panic (the caller wraps [`run_seed`] in `catch_unwind`), and no
//!   deadlock (a phase whose work can no longer run is reported).
//!
//! Replay one seed with its trace:
//! `cargo run --profile bench --example sim -- --seed N --verbose`.

mod budgets;
mod ctx;
mod driver;
mod host;
mod providers;
pub mod rng;
mod store;

pub use ctx::Rates;

use crate::core::error::ErrorCode;
use crate::core::event;
use crate::core::json::Value;
use crate::core::result::StopReason;
use crate::core::store::ReadQuery;
use crate::RuntimeOptions;
use ctx::Ctx;
use driver::Epoch;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// What one seed runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Operations issued per runtime.
    pub ops_per_epoch: u32,
    /// Runtimes per seed at most (restarts + 1).
    pub max_epochs: u32,
    /// Root trees.
    pub roots: usize,
    /// Print every operation and outcome to stderr.
    pub verbose: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { ops_per_epoch: 40, max_epochs: 3, roots: 3, verbose: false }
    }
}

/// What one seed did and found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub seed: u64,
    pub epochs: u32,
    pub ops: BTreeMap<&'static str, u64>,
    pub faults: BTreeMap<&'static str, u64>,
    pub violations: Vec<String>,
    /// A hash of every session log at the end: equal for equal runs.
    pub digest: u64,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    Crash,
    Quiesce,
    Drain,
}

/// Runs one seed to the end and reports; never panics on a violation (it
/// records it), so a panic is always a bug of the code under test.
pub fn run_seed(seed: u64, config: &Config) -> Report {
    let pre = rng::Rng::new(seed ^ 0xC0FF_EE00);
    let intensity = [0.0, 0.5, 1.0, 1.0, 2.0][pre.below(5) as usize];
    let max_depth = pre.range(1, 3) as u32;
    let capacity = pre.range(2, 8) as usize;
    let epochs = pre.range(1, config.max_epochs.max(1) as u64) as u32;
    let ctx = Rc::new(Ctx::new(seed, Rates::scaled(intensity), config.roots, max_depth, config.verbose));
    ctx.note(|| format!("intensity {intensity}, max depth {max_depth}, capacity {capacity}, {epochs} epoch(s)"));
    let options = RuntimeOptions { max_depth, capacity, default_cwd: "/work".into(), ..RuntimeOptions::default() };
    let mut before = None;
    for index in 0..epochs {
        let ending = if index + 1 == epochs {
            Ending::Drain
        } else {
            [Ending::Crash, Ending::Quiesce, Ending::Drain][ctx.rng.weighted(&[50, 20, 30])]
        };
        before = Some(run_epoch(&ctx, index, &options, config.ops_per_epoch, ending, before));
        ctx.ops.bump(match ending {
            Ending::Crash => "restart.crash",
            Ending::Quiesce => "restart.quiesce",
            Ending::Drain => "restart.drain",
        });
    }
    let report = Report {
        seed,
        epochs,
        ops: ctx.ops.snapshot(),
        faults: ctx.faults.snapshot(),
        violations: ctx.violations.borrow().clone(),
        digest: digest(&ctx),
    };
    report
}

fn digest(ctx: &Ctx) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for session in ctx.inner.sessions() {
        session.hash(&mut h);
        for e in ctx.inner.read_now(&session, &ReadQuery::default()).unwrap_or_default() {
            (e.seq, &e.kind, e.payload.to_json()).hash(&mut h);
        }
    }
    ctx.violations.borrow().len().hash(&mut h);
    h.finish()
}

type Snapshot = BTreeMap<String, Vec<crate::Row>>;

/// One runtime's life; returns the listing at its end (for the next one to match).
fn run_epoch(
    ctx: &Rc<Ctx>,
    index: u32,
    options: &RuntimeOptions,
    ops: u32,
    ending: Ending,
    before: Option<Snapshot>,
) -> Snapshot {
    ctx.epoch.set(index);
    *ctx.lifecycle.borrow_mut() = Default::default();
    ctx.interrupted.borrow_mut().clear();
    ctx.runs.borrow_mut().clear();
    ctx.quiet.set(false);
    ctx.hangs.set(false); // until the workload, whose healer ends partitions
    let (epoch, exec) = Epoch::new(ctx, index, options);
    let run = |phase: &str, fut: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>| {
        if exec.run_until(fut).is_none() {
            ctx.violation(format!(
                "the {phase} phase stalled: nothing can run (a deadlock); operations in flight {:?}, resident {:?}, reservations {}",
                epoch.running.borrow(),
                epoch.rt.resident().iter().map(|id| (id.clone(), epoch.rt.describe(id))).collect::<Vec<_>>(),
                epoch.rt.reservation_count()
            ));
            false
        } else {
            true
        }
    };
    let mut alive = run("open", Box::pin(epoch.clone().open_roots()));
    if let (true, Some(before)) = (alive, before) {
        alive = run("compare", Box::pin(epoch.clone().compare(before)));
    }
    alive = alive && run("workload", Box::pin(epoch.clone().workload(ops)));

    if alive && ending != Ending::Crash {
        // No new hangs; the ones in progress end.
        ctx.hangs.set(false);
        ctx.heal();
        alive = run("join", Box::pin(epoch.clone().wait_ops()));
        exec.run_idle();
        alive = alive && run("settle", Box::pin(epoch.clone().settle()));
        exec.run_idle();
        if alive && epoch.rt.reservation_count() != 0 {
            ctx.violation(format!("{} name reservation(s) left after all work settled", epoch.rt.reservation_count()));
        }
        if let Some(e) = epoch.rt.children_index_error() {
            ctx.violation(format!("children index: {e}"));
        }
        if alive {
            check_idle(ctx, &epoch);
            check_activations(ctx, &epoch, &exec, false);
        }
        if alive && ending == Ending::Drain {
            alive = run("finish", Box::pin(epoch.clone().finish()));
            exec.run_idle();
            if alive {
                check_drained(ctx, &epoch, &exec);
            }
        }
    }
    check_store(ctx);
    budgets::check(ctx);
    let snapshot = ctx.model().rows;
    epoch.clear();
    drop(exec);
    snapshot
}

/// Once every tree's work is joined, a child stays resident only while it is
/// parked by an interrupt or has resident children: an idle member with
/// nothing pending settles.
fn check_idle(ctx: &Ctx, epoch: &Rc<Epoch>) {
    let resident = epoch.rt.resident();
    for id in &resident {
        if ctx.roots.contains(id) {
            continue;
        }
        let Some(agent) = epoch.rt.agent(id) else {
            ctx.violation(format!("{id} is resident but not live after all work settled"));
            continue;
        };
        let names = epoch.rt.names_of(&agent).ok().map(|n| (n.self_name, n.parent));
        let model = ctx.model();
        let expected = model.full_name(id).map(|name| {
            let parent = model.child(id).and_then(|c| model.full_name(&c.parent_id));
            (name, parent)
        });
        if names != expected {
            ctx.violation(format!("names_of {id} says {names:?}; the store says {expected:?}"));
        }
        if epoch.rt.is_running(id) {
            ctx.violation(format!("{} is still running after its tree's work was joined", agent.name()));
        }
        let parent_of_resident =
            resident.iter().any(|c| epoch.rt.agent(c).is_some_and(|c| c.parent_id() == Some(id.as_str())));
        if !parent_of_resident && !ctx.interrupted.borrow().contains(id) {
            ctx.violation(format!(
                "{} ({id}) stays resident, idle, never interrupted and with no live children ({})",
                agent.name(),
                epoch.rt.describe(id).unwrap_or_default()
            ));
        }
    }
}

/// Held activations that settled: `result` and `subagent/end` agree.
fn check_activations(ctx: &Ctx, epoch: &Rc<Epoch>, exec: &crate::core::exec::LocalExecutor, all: bool) {
    let held: Vec<Rc<driver::Held>> = epoch.held.borrow().clone();
    for held in held {
        let result = held.result.borrow().clone();
        let Some(result) = result else {
            if all {
                ctx.violation(format!("the result of {} ({}) never settled", held.act.name, held.act.child_id));
            }
            continue;
        };
        // Settled: dispose only reports what teardown did.
        let disposed = exec.run_until(held.act.dispose());
        let key = (held.act.child_id.clone(), held.k);
        let end = ctx.lifecycle.borrow().ends.get(&key).cloned();
        let Some((stop, _)) = end else {
            ctx.violation(format!("{} settled without a subagent/end", held.act.name));
            continue;
        };
        let expected = match (&disposed, &result) {
            (Some(Err(e)), _) if e.code == ErrorCode::ActivationTeardownFailed => StopReason::Error,
            (Some(Err(e)), _) => {
                ctx.violation(format!("dispose of the settled {} failed with {}: {e}", held.act.name, e.code));
                continue;
            }
            (None, _) => {
                ctx.violation(format!("dispose of the settled {} did not resolve", held.act.name));
                continue;
            }
            (Some(Ok(())), Ok(r)) => r.stop_reason.clone(),
            (Some(Ok(())), Err(_)) => StopReason::Error,
        };
        if stop != expected {
            ctx.violation(format!(
                "{} ended with subagent/end {stop:?} but its result/dispose say {expected:?} ({result:?})",
                held.act.name
            ));
        }
    }
}

/// After every tree drained and closed: nothing resident, every start ended,
/// every held result settled, every external run disposed.
fn check_drained(ctx: &Ctx, epoch: &Rc<Epoch>, exec: &crate::core::exec::LocalExecutor) {
    let resident = epoch.rt.resident();
    if !resident.is_empty() {
        ctx.violation(format!("members still resident after every tree closed: {resident:?}"));
    }
    if epoch.rt.reservation_count() != 0 {
        ctx.violation(format!("{} reservation(s) left after every tree closed", epoch.rt.reservation_count()));
    }
    if let Some(e) = epoch.rt.children_index_error() {
        ctx.violation(format!("children index after every tree closed: {e}"));
    }
    let open: Vec<(String, (u32, u32))> =
        ctx.lifecycle.borrow().counts.iter().filter(|(_, (s, e))| s != e).map(|(id, c)| (id.clone(), *c)).collect();
    if !open.is_empty() {
        ctx.violation(format!("starts without an end after every tree closed: {open:?}"));
    }
    check_activations(ctx, epoch, exec, true);
    // A closed tree's log changes hands: nothing of this runtime writes after.
    let closed = epoch.closed_lengths.borrow().clone().unwrap_or_default();
    let now: BTreeMap<String, u64> = ctx.inner.sessions().into_iter().map(|s| (s.clone(), ctx.inner.len(&s))).collect();
    for (session, len) in &closed {
        if now.get(session) != Some(len) {
            ctx.violation(format!("{session} was written after every tree closed ({len} -> {:?})", now.get(session)));
        }
    }
    if now.len() != closed.len() {
        ctx.violation(format!("{} log(s) created after every tree closed", now.len() - closed.len()));
    }
    for ask in epoch.asks.borrow().iter() {
        match &*ask.answer.borrow() {
            None => {
                ctx.violation(format!("the ask {} to {} has no answer after every tree closed", ask.id, ask.target))
            }
            // A spent budget answers with its stop; the message stays pending in the log.
            Some(Ok(r)) if r.stop_reason == StopReason::BudgetExhausted => {}
            Some(Ok(_)) => {
                let log = ctx.inner.read_now(&ask.target, &ReadQuery::default()).unwrap_or_default();
                let consumed = log.iter().filter(|e| e.kind == event::TURN_END).any(|e| {
                    e.payload
                        .get("consumed")
                        .and_then(Value::as_array)
                        .is_some_and(|ids| ids.iter().any(|id| id.as_str() == Some(ask.id.as_str())))
                });
                if !consumed {
                    ctx.violation(format!(
                        "the ask {} to {} was answered, but no recorded turn consumed it",
                        ask.id, ask.target
                    ));
                }
            }
            Some(Err(_)) => {}
        }
    }
    for run in ctx.runs.borrow().iter() {
        if run.disposed.get() == 0 {
            ctx.violation(format!("external run {:?} was never disposed", run.id));
        }
        if !run.result.is_set() {
            ctx.violation(format!("external run {:?} never finished", run.id));
        }
    }
}

/// The store's invariants: catalogs, names, messages.
fn check_store(ctx: &Ctx) {
    let model = ctx.model();
    // A torn first batch leaves a log no catalog lists: nothing may list,
    // resume or write to it afterwards (its start never published).
    for (session, &landed) in ctx.torn.borrow().iter() {
        if ctx.inner.len(session) != landed {
            ctx.violation(format!(
                "{session} was torn at {landed} events and later written to ({} now)",
                ctx.inner.len(session)
            ));
        }
        if model.child(session).is_some() {
            ctx.violation(format!("{session}, whose first batch tore, is listed"));
        }
    }
    let mut own_messages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut consumed_by: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    for session in ctx.inner.sessions() {
        if ctx.torn.borrow().contains_key(&session) {
            continue; // garbage no reader sees (checked above): a torn fork's prefix reads like its parent's log
        }
        let log = ctx.inner.read_now(&session, &ReadQuery::default()).unwrap_or_default();
        if log.iter().enumerate().any(|(i, e)| e.seq != i as u64) {
            ctx.violation(format!("session {session} has a broken log"));
        }
        match crate::core::catalog::project_log(&log) {
            Ok(entries) => {
                for entry in entries.iter().filter(|e| e.mode == crate::Mode::Continuable) {
                    if ctx.inner.len(&entry.id) == 0 {
                        ctx.violation(format!("{session} lists {} whose session has no log", entry.id));
                    }
                }
                let mut names = BTreeSet::new();
                for name in entries.iter().filter_map(|e| e.name.as_ref()) {
                    if !names.insert(name.as_str()) {
                        ctx.violation(format!("the catalog of {session} holds the name {name} twice"));
                    }
                }
            }
            Err(e) => ctx.violation(format!("the catalog of {session} does not decode: {e}")),
        }
        let inherited = event::inherited_event_count(&log);
        let own: Vec<_> = log.iter().filter(|e| e.seq >= inherited).collect();
        let ids: BTreeSet<String> = own
            .iter()
            .filter(|e| e.kind == event::MESSAGE)
            .filter_map(|e| e.payload.get("messageId").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let mut consumed: BTreeMap<String, u32> = BTreeMap::new();
        // Input a lost turn (a crash after `turn/start`) answered by failure may never have reached the host.
        let mut lost: BTreeSet<String> = BTreeSet::new();
        for e in own.iter().filter(|e| e.kind == event::TURN_END) {
            let recovered = e.payload.get("diagnostic").and_then(Value::as_str) == Some(crate::runtime::LOST_TURN);
            for id in e.payload.get("consumed").and_then(Value::as_array).unwrap_or_default() {
                if let Some(id) = id.as_str() {
                    *consumed.entry(id.to_owned()).or_default() += 1;
                    if recovered {
                        lost.insert(id.to_owned());
                    }
                }
            }
        }
        for (id, n) in &consumed {
            if *n > 1 {
                ctx.violation(format!("message {id} was consumed by {n} recorded turns of {session}"));
            }
            if !ids.contains(id) {
                ctx.violation(format!("a turn of {session} consumed {id}, which its log never accepted"));
            }
            let seen = ctx.seen.borrow().get(&session).is_some_and(|s| s.contains(id));
            if !seen && !lost.contains(id) {
                ctx.violation(format!("a turn of {session} recorded {id} as consumed, but the host never had it"));
            }
        }
        own_messages.insert(session.clone(), ids);
        consumed_by.insert(session, consumed);
    }
    for (session, seen) in ctx.seen.borrow().iter() {
        let ids = own_messages.get(session);
        for id in seen {
            if !ids.is_some_and(|ids| ids.contains(id)) {
                ctx.violation(format!("the host was handed {id} for {session}, which its log never accepted"));
            }
        }
    }
    for accepted in ctx.accepted.borrow().iter() {
        let durable = own_messages.get(&accepted.target).is_some_and(|ids| ids.contains(&accepted.id));
        if !durable {
            ctx.violation(format!(
                "message {} accepted for {} ({}) is not in its log",
                accepted.id, accepted.target, accepted.via
            ));
            continue;
        }
        let consumed = consumed_by.get(&accepted.target).is_some_and(|c| c.contains_key(&accepted.id));
        if !consumed && model.root_of(&accepted.target).is_none() {
            ctx.violation(format!(
                "message {} is pending for {}, which no tree lists as a member",
                accepted.id, accepted.target
            ));
        }
    }
    for task in ctx.tasks.borrow().iter() {
        let log = ctx.inner.read_now(&task.root, &ReadQuery::default()).unwrap_or_default();
        let board = crate::runtime::team::fold(&log);
        let same: Vec<&crate::runtime::team::Task> = board.iter().filter(|t| t.title == task.title).collect();
        if same.len() != 1 || same[0].id != task.id {
            let found: Vec<&str> = same.iter().map(|t| t.id.as_str()).collect();
            ctx.violation(format!(
                "task {:?} was reported created as {} in {}, but the board holds it as {found:?}",
                task.title, task.id, task.root
            ));
        }
    }
    for (session, (name, parent)) in ctx.names.borrow().iter() {
        let expected = model.full_name(session);
        let expected_parent = model.child(session).and_then(|c| model.full_name(&c.parent_id));
        if expected.as_ref() != Some(name) || expected_parent.as_ref() != parent.as_ref() {
            ctx.violation(format!(
                "{session} ran turns as {name:?} (creator {parent:?}); the store names it {expected:?} (creator {expected_parent:?})"
            ));
        }
    }
}
