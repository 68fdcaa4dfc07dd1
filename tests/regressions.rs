//! Regression tests for core bugs the deterministic simulation found (issue 7).
//! Each is a plain scenario, independent of the simulation.
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::Ext;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::exec::{AsyncLock, Deferred, LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::ports::{
    Capabilities, ContinuableCreateRequest, ContinuableCreateSpec, Provider, Run, StartRequest, Turn, TurnOutcome,
};
use subagent_tree::runtime::{InterruptAuthority, RuntimeEvent, Scheduling};
use subagent_tree::store::{ReadQuery, ReadResult, Store};
use subagent_tree::testkit::{self, completed, FnHost};
use subagent_tree::{ActivationSpec, Agent, ErrorCode, MemoryStore, Result, Runtime, RuntimeOptions, Signal};

/// A memory store whose appends of one event type to one session, or full
/// (unfiltered) reads of one session, wait until their gate opens.
#[derive(Default)]
struct GatedStore {
    inner: MemoryStore,
    appends: RefCell<HashMap<(String, String), Deferred<()>>>,
    reads: RefCell<HashMap<String, Deferred<()>>>,
    /// Full reads of these sessions fail (after their gate).
    failing: RefCell<Vec<String>>,
    /// The next append of this event type to this session commits, then
    /// reports a failure (a timeout after the commit).
    lose_ack: RefCell<Vec<(String, String)>>,
}

impl GatedStore {
    fn gate_append(&self, session: &str, kind: &str) -> Deferred<()> {
        let gate = Deferred::new();
        self.appends.borrow_mut().insert((session.into(), kind.into()), gate.clone());
        gate
    }

    fn gate_full_read(&self, session: &str) -> Deferred<()> {
        let gate = Deferred::new();
        self.reads.borrow_mut().insert(session.into(), gate.clone());
        gate
    }
}

impl Store for GatedStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        let gates: Vec<Deferred<()>> = events
            .iter()
            .filter_map(|e| self.appends.borrow().get(&(session.to_owned(), e.kind.clone())).cloned())
            .collect();
        let lost = {
            let mut lose = self.lose_ack.borrow_mut();
            let at = lose.iter().position(|(s, k)| s == session && events.iter().any(|e| e.kind == *k));
            at.map(|i| lose.remove(i)).is_some()
        };
        Box::pin(async move {
            for gate in gates {
                gate.wait().await;
            }
            self.inner.append_now(session, events)?;
            if lost {
                return Err(subagent_tree::err!(PersistenceUnavailable, "the store timed out after the commit"));
            }
            Ok(())
        })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        let gate = if query.types.is_none() { self.reads.borrow().get(session).cloned() } else { None };
        Box::pin(async move {
            if let Some(gate) = gate {
                gate.wait().await;
            }
            if query.types.is_none() && self.failing.borrow().iter().any(|s| s == session) {
                return Err(subagent_tree::err!(PersistenceUnavailable, "the disk is gone"));
            }
            Ok(self.inner.read_now(session, query))
        })
    }
}

/// Per turn: the member's name and the texts of the input the host was handed.
type Seen = Rc<RefCell<Vec<(String, Vec<String>)>>>;

struct World {
    exec: LocalExecutor,
    store: Rc<GatedStore>,
    rt: Runtime,
    events: Rc<RefCell<Vec<RuntimeEvent>>>,
    /// Per member name: the texts of every turn input the host was handed.
    seen: Seen,
}

/// Turns of members named in `hold` wait until they are aborted.
fn world(hold: Rc<RefCell<Vec<String>>>) -> World {
    world_on(Rc::default(), hold, RuntimeOptions { max_depth: 3, capacity: 16, ..RuntimeOptions::default() })
}

/// [`world`] over an existing store (a restart) with these options.
fn world_on(store: Rc<GatedStore>, hold: Rc<RefCell<Vec<String>>>, options: RuntimeOptions) -> World {
    let exec = LocalExecutor::new();
    let seen: Seen = Rc::default();
    let sink = seen.clone();
    let host = FnHost::new(move |turn: Turn| {
        let texts = turn.input.iter().map(|m| subagent_tree::result::content_text(&m.content)).collect();
        sink.borrow_mut().push((turn.name.clone(), texts));
        let held = hold.borrow().contains(&turn.name);
        Box::pin(async move {
            if held {
                turn.signal.aborted().await;
                return Ok(TurnOutcome { stop_reason: "aborted".into(), ..TurnOutcome::default() });
            }
            Ok(completed(&format!("done by {}", turn.name)))
        })
    });
    let rt = testkit::runtime(store.clone(), Rc::new(host), &exec, "a", options);
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    rt.subscribe(None, Rc::new(move |e: &RuntimeEvent| sink.borrow_mut().push(e.clone())));
    World { exec, store, rt, events, seen }
}

impl World {
    fn run<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> T {
        self.exec.run_until(fut).expect("the future stalled")
    }

    fn root(&self) -> Agent {
        let rt = self.rt.clone();
        self.run(async move { rt.open_root(Some("root".into()), Some("/w".into())).await.unwrap() })
    }

    fn start(&self, parent: &Agent, name: &str) -> subagent_tree::Activation {
        let (rt, spec) = (self.rt.clone(), ActivationSpec::new("spawn", parent, "task", "do it").named(name));
        self.run(async move { rt.start_activation(spec).await.unwrap() })
    }

    /// `(start|end, name)` in emission order.
    fn lifecycle(&self) -> Vec<(&'static str, String)> {
        self.events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::Start(i) => Some(("start", i.name.clone())),
                RuntimeEvent::End(e) => Some(("end", e.info.name.clone())),
                _ => None,
            })
            .collect()
    }

    fn consumed_lists(&self, session: &str) -> Vec<Vec<String>> {
        let log = self.store.inner.read_now(session, &ReadQuery::types(&[event::TURN_END], &Signal::never()));
        log.unwrap_or_default()
            .iter()
            .map(|e| {
                e.payload
                    .get("consumed")
                    .and_then(Value::as_array)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .collect()
    }
}

/// Found by the simulation: a turn stopped (interrupt, dispose, drain) before
/// its task first ran recorded its input as consumed although the host was
/// never handed it, so the messages were lost. They now stay pending.
#[test]
fn a_turn_stopped_before_the_host_saw_it_leaves_its_input_pending() {
    let hold = Rc::new(RefCell::new(vec!["a".to_owned()]));
    let w = world(hold.clone());
    let root = w.root();
    let a = w.start(&root, "a");
    w.exec.run_idle();
    w.rt.interrupt(&a.child_id, InterruptAuthority::User).unwrap(); // turn 1 stops; nothing parked: `a` settles
    w.exec.run_idle();
    let turns_of_a = || w.seen.borrow().iter().filter(|(name, _)| name == "a").count();
    assert_eq!(turns_of_a(), 1);

    // A waking prompt starts turn 2, interrupted before its task ever runs.
    let (rt, r, id) = (w.rt.clone(), root.clone(), a.child_id.clone());
    let second = w.run(async move {
        let m = rt.prompt(&r, &id, Value::from("second"), Scheduling::Queue, &Signal::never()).await.unwrap();
        rt.interrupt(&id, InterruptAuthority::User).unwrap();
        m
    });
    w.exec.run_idle();
    assert_eq!(turns_of_a(), 1, "the host was never handed turn 2");
    assert!(!w.consumed_lists(&a.child_id).iter().flatten().any(|m| *m == second), "not consumed");

    // The next waking message delivers it.
    hold.borrow_mut().clear();
    let (rt, r, id) = (w.rt.clone(), root.clone(), a.child_id.clone());
    w.run(async move { rt.prompt(&r, &id, Value::from("third"), Scheduling::Queue, &Signal::never()).await.unwrap() });
    w.exec.run_idle();
    let seen = w.seen.borrow();
    let last = seen.iter().rev().find(|(name, _)| name == "a").unwrap();
    assert_eq!(last.1, ["second", "third"]);
    assert!(w.consumed_lists(&a.child_id).iter().flatten().any(|m| *m == second));
}

/// Found by the simulation: a settling member left residency before its
/// creator's notice was written, so a message in that window resumed it and
/// its `subagent/start` came before the previous `subagent/end`.
#[test]
fn a_message_during_the_settlement_notice_resumes_after_the_end() {
    let w = world(Rc::default());
    let root = w.root();
    let notice = w.store.gate_append("root", event::MESSAGE);
    let a = w.start(&root, "a"); // runs, settles, and blocks writing its notice to the root
    w.exec.run_idle();
    assert_eq!(w.lifecycle(), [("start", "a".to_owned())]);
    let (rt, r, id) = (w.rt.clone(), root.clone(), a.child_id.clone());
    let prompted = Rc::new(Cell::new(false));
    let done = prompted.clone();
    w.exec.spawn(Box::pin(async move {
        rt.prompt(&r, &id, Value::from("again"), Scheduling::Queue, &Signal::never()).await.unwrap();
        done.set(true);
    }));
    w.exec.run_idle();
    assert!(!prompted.get(), "the message waits for the settlement");
    notice.set(());
    w.exec.run_idle();
    assert!(prompted.get());
    let order = w.lifecycle();
    assert_eq!(order[..3], [("start", "a".to_owned()), ("end", "a".to_owned()), ("start", "a".to_owned())]);
}

/// Found by the simulation: a resume that ended (here: its log read failed)
/// while a drain waited for its reserved slot never woke the drain, which
/// then waited forever.
#[test]
fn a_drain_waiting_for_a_resume_finishes() {
    let w = world(Rc::default());
    let root = w.root();
    let a = w.start(&root, "a");
    w.exec.run_idle();
    assert!(!w.rt.resident().contains(&a.child_id), "settled and cold");
    let gate = w.store.gate_full_read(&a.child_id);
    let (rt, r, id) = (w.rt.clone(), root.clone(), a.child_id.clone());
    let refused = Rc::new(RefCell::new(None));
    let out = refused.clone();
    w.exec.spawn(Box::pin(async move {
        let r = rt.prompt(&r, &id, Value::from("again"), Scheduling::Queue, &Signal::never()).await;
        *out.borrow_mut() = Some(r.map_err(|e| e.code));
    }));
    w.exec.run_idle(); // the resume holds a reserved slot, reading the log
    let drained = Rc::new(Cell::new(false));
    let (rt, r, done) = (w.rt.clone(), root.clone(), drained.clone());
    w.exec.spawn(Box::pin(async move {
        rt.drain_descendants(&[r]).await.unwrap();
        done.set(true);
    }));
    w.exec.run_idle();
    assert!(!drained.get());
    w.store.failing.borrow_mut().push(a.child_id.clone());
    gate.set(());
    w.exec.run_idle();
    assert_eq!(*refused.borrow(), Some(Err(ErrorCode::PersistenceUnavailable)));
    assert!(drained.get(), "the drain saw the slot free again");
    assert_eq!(w.rt.resident(), ["root"]);
}

/// Found by the simulation: a message whose sender left while the target was
/// being resumed was refused, but the resumed target never settled again.
#[test]
fn a_member_resumed_for_a_refused_message_settles_again() {
    let w = world(Rc::new(RefCell::new(vec!["b".to_owned()])));
    let root = w.root();
    let a = w.start(&root, "a");
    let b = w.start(&root, "b"); // held in its turn: a live sender
    w.exec.run_idle();
    let gate = w.store.gate_full_read(&a.child_id);
    let (rt, sender, id) = (w.rt.clone(), b.agent().unwrap(), a.child_id.clone());
    let refused = Rc::new(RefCell::new(None));
    let out = refused.clone();
    w.exec.spawn(Box::pin(async move {
        let r = rt.send_message(&sender, &id, Value::from("hi"), &Signal::never()).await;
        *out.borrow_mut() = Some(r.map_err(|e| e.code));
    }));
    w.exec.run_idle(); // resuming `a`
    w.run(b.dispose()).unwrap(); // the sender leaves
    gate.set(());
    w.exec.run_idle();
    assert_eq!(*refused.borrow(), Some(Err(ErrorCode::Unauthorized)));
    assert!(!w.rt.resident().contains(&a.child_id), "the member resumed for nothing settled again");
}

/// Found by the simulation: same-depth members were torn down in hash-map
/// order, so one program drained differently from run to run.
#[test]
fn a_drain_stops_same_depth_members_in_a_stable_order() {
    let names = ["a", "b", "c", "d", "e", "f"];
    let w = world(Rc::new(RefCell::new(names.iter().map(|n| n.to_string()).collect())));
    let root = w.root();
    let ids: Vec<String> = names.iter().map(|n| w.start(&root, n).child_id).collect();
    w.exec.run_idle();
    let rt = w.rt.clone();
    w.run(async move { rt.drain_descendants(&[root]).await.unwrap() });
    let ends: Vec<String> = w.lifecycle().into_iter().filter(|(k, _)| *k == "end").map(|(_, n)| n).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    let by_id: Vec<String> =
        sorted.iter().map(|id| names[ids.iter().position(|i| i == id).unwrap()].to_owned()).collect();
    assert_eq!(ends, by_id);
}

/// A local provider whose preparation waits for a gate and ignores its signal.
struct Stuck(Deferred<()>);

impl Provider for Stuck {
    fn name(&self) -> String {
        "stuck".into()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn inherits_parent_context(&self) -> bool {
        false
    }
    fn prepares_continuable(&self) -> bool {
        true
    }
    fn starts_runs(&self) -> bool {
        false
    }
    fn prepare_continuable(
        &self,
        _r: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        let gate = self.0.clone();
        Box::pin(async move {
            gate.wait().await;
            Ok(ContinuableCreateSpec::default())
        })
    }
    fn start(&self, _r: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        Box::pin(async { Err(subagent_tree::err!(UnsupportedCapability, "local only")) })
    }
}

/// Found by the simulation: a turn's host future is dropped when the turn is
/// stopped; a tool call inside it that was starting a child leaked the
/// child's name reservation and capacity slot (and a queued append-lock
/// waiter, the lock), so a later drain waited forever. A begun start now
/// runs to its end whoever awaits it, and a tool call is stopped with the
/// turn it was made in: the start is cancelled and gives its name back.
#[test]
fn a_start_dropped_with_its_turn_releases_its_reservation() {
    let exec = LocalExecutor::new();
    let slot: Rc<RefCell<Option<Runtime>>> = Rc::default();
    let rt_of = slot.clone();
    let host = FnHost::new(move |turn: Turn| {
        let rt = rt_of.borrow().clone().unwrap();
        Box::pin(async move {
            let tools = rt.tools_for(&turn.agent).unwrap();
            let input = Value::object([
                ("description", Some(Value::from("stuck work"))),
                ("prompt", Some(Value::from("go"))),
                ("name", Some(Value::from("worker"))),
            ]);
            // A sloppy host: the tool call does not follow the turn's signal.
            tools.call("stuck_agent", &input, &Signal::never()).await;
            Ok(completed("delegated"))
        })
    });
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let rt = testkit::runtime(store, Rc::new(host), &exec, "a", RuntimeOptions::default());
    *slot.borrow_mut() = Some(rt.clone());
    rt.register_provider(Rc::new(Stuck(Deferred::new()))).unwrap();
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let (r, lead) = (rt.clone(), root.clone());
    exec.run_until(async move {
        r.prompt(&lead, "root", Value::from("delegate"), Scheduling::Queue, &Signal::never()).await
    })
    .unwrap()
    .unwrap();
    exec.run_idle();
    assert_eq!(rt.reservation_count(), 1, "the child's start waits in its provider");
    rt.interrupt("root", InterruptAuthority::User).unwrap(); // the turn, and its tool call, are dropped
    exec.run_idle();
    assert_eq!(rt.reservation_count(), 0);
    let r = rt.clone();
    assert!(exec.run_until(async move { r.drain_descendants(&[root]).await }).is_some(), "the drain finishes");
    *slot.borrow_mut() = None;
}

struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

fn poll<F: Future>(f: &mut Pin<Box<F>>) -> Poll<F::Output> {
    let waker = Waker::from(Arc::new(Noop));
    f.as_mut().poll(&mut Context::from_waker(&waker))
}

/// Part of the same bug: a dropped `lock()` waiter kept (or was handed and
/// then lost) the append lock, so that session's log could never be written again.
#[test]
fn a_dropped_lock_waiter_never_keeps_the_lock() {
    let lock = AsyncLock::default();
    let mut a = Box::pin(lock.lock());
    let Poll::Ready(held) = poll(&mut a) else { panic!("a free lock is taken at once") };
    let mut b = Box::pin(lock.lock());
    assert!(poll(&mut b).is_pending());
    let mut c = Box::pin(lock.lock());
    assert!(poll(&mut c).is_pending());
    drop(b); // a queued waiter leaves the queue
    drop(held);
    let Poll::Ready(held) = poll(&mut c) else { panic!("c is next") };
    let mut d = Box::pin(lock.lock());
    assert!(poll(&mut d).is_pending());
    drop(held); // handed to d ...
    drop(d); // ... which is dropped before it takes it
    let mut e = Box::pin(lock.lock());
    assert!(poll(&mut e).is_ready(), "the lock was passed on");
}

fn catalog_names(store: &GatedStore, session: &str) -> Vec<String> {
    let log = store.inner.read_now(session, &ReadQuery::default()).unwrap_or_default();
    subagent_tree::catalog::project_log(&log)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.name.map(|n| n.as_str().to_owned()))
        .collect()
}

fn try_start(w: &World, parent: &Agent, name: &str) -> Result<subagent_tree::Activation> {
    let (rt, spec) = (w.rt.clone(), ActivationSpec::new("spawn", parent, "task", "do it").named(name));
    w.run(async move { rt.start_activation(spec).await })
}

/// Found by the simulation (a store that commits, then reports a timeout): the
/// runtime took the write as failed and its next append to that log conflicted
/// forever. A failed append is now read back: its events there mean success.
#[test]
fn an_append_that_committed_but_reported_failure_counts_as_written() {
    let w = world(Rc::default());
    let root = w.root();
    w.store.lose_ack.borrow_mut().push(("root".into(), event::CATALOG.into()));
    let a = try_start(&w, &root, "a").expect("the catalog fact landed, so the start succeeded");
    assert_eq!(a.name, "a");
    assert_eq!(catalog_names(&w.store, "root"), ["a"]);
    w.exec.run_idle();
    // The log goes on at the right seq: the next spawn writes without a conflict.
    try_start(&w, &root, "b").unwrap();
    assert_eq!(catalog_names(&w.store, "root"), ["a", "b"]);
    assert_eq!(try_start(&w, &root, "a").unwrap_err().code, ErrorCode::DuplicateName);
}

/// Found by the simulation: when neither the write nor the read-back answers,
/// the outcome is unknown, the start fails, and its name was released; a
/// later spawn of the same name wrote a second catalog entry with it. The
/// next append to that log now first takes in what landed, and the name check
/// runs again right before the catalog write.
#[test]
fn a_catalog_write_of_unknown_outcome_keeps_its_name() {
    let w = world(Rc::default());
    let root = w.root();
    w.store.lose_ack.borrow_mut().push(("root".into(), event::CATALOG.into()));
    w.store.failing.borrow_mut().push("root".into());
    let err = try_start(&w, &root, "a").unwrap_err();
    assert_eq!(err.code, ErrorCode::PersistenceUnavailable);
    w.store.failing.borrow_mut().clear();
    assert_eq!(try_start(&w, &root, "a").unwrap_err().code, ErrorCode::DuplicateName);
    assert_eq!(catalog_names(&w.store, "root"), ["a"], "one entry per name");
    try_start(&w, &root, "b").unwrap();
    assert_eq!(catalog_names(&w.store, "root"), ["a", "b"]);
    let log = w.store.inner.read_now("root", &ReadQuery::default()).unwrap();
    assert!(log.iter().enumerate().all(|(i, e)| e.seq == i as u64), "the log stays contiguous");
}

/// Found by the simulation: `close_root` returned while the root's own turn
/// still ran, so the closed residency wrote its `turn/end` after a reopened
/// root had written to the same log (an append conflict, then input consumed
/// twice). Closing now stops the root's turn and waits for its end.
#[test]
fn closing_a_root_stops_its_turn_before_the_log_changes_hands() {
    let w = world(Rc::new(RefCell::new(vec!["lead".to_owned()])));
    let root = w.root();
    let (rt, r) = (w.rt.clone(), root.clone());
    w.run(
        async move { rt.prompt(&r, "lead", Value::from("think"), Scheduling::Queue, &Signal::never()).await.unwrap() },
    );
    w.exec.run_idle();
    assert!(w.rt.is_running("root"), "the root's turn is running");
    let (rt, r) = (w.rt.clone(), root.clone());
    w.run(async move { rt.close_root(&r).await.unwrap() });
    assert!(!w.rt.is_resident("root"));
    let log = w.store.inner.read_now("root", &ReadQuery::types(&[event::TURN_END], &Signal::never())).unwrap();
    assert_eq!(log.len(), 1, "the stopped turn's end is on record before close_root resolves");
    assert_eq!(log[0].payload.get("stopReason").and_then(Value::as_str), Some("aborted"));
    let len = w.store.inner.len("root");
    w.exec.run_idle();
    assert_eq!(w.store.inner.len("root"), len, "nothing of the closed residency writes afterwards");
    let reopened = w.root();
    assert!(w.rt.names_of(&reopened).is_ok());
}

/// Found by the simulation: disposing a member with a child of its own left
/// the child live under a creator that was gone, so the child's report reached
/// nobody. Disposal is child-first: the child ends before its creator.
#[test]
fn disposing_a_member_ends_its_own_children_first() {
    let w = world(Rc::new(RefCell::new(vec!["a".to_owned(), "a/b".to_owned()])));
    let root = w.root();
    let a = w.start(&root, "a");
    w.exec.run_idle();
    let a_agent = a.agent().expect("a is live");
    let b = w.start(&a_agent, "b");
    w.exec.run_idle();
    assert!(w.rt.is_running(&b.child_id));
    let dispose = a.dispose();
    w.run(async move { dispose.await.unwrap() });
    assert!(!w.rt.is_resident(&b.child_id), "the child left before its creator's dispose resolved");
    let ends: Vec<String> =
        w.lifecycle().into_iter().filter(|(kind, _)| *kind == "end").map(|(_, name)| name).collect();
    assert_eq!(ends, ["a/b", "a"]);
}

/// Found by the edge worker: a cold member reopened and released without a
/// turn settled again with an "aborted" notice that woke its creator.
#[test]
fn a_member_reopened_and_released_without_a_turn_tells_nobody() {
    let w = world(Rc::default());
    let root = w.root();
    let a = w.start(&root, "a");
    w.exec.run_idle();
    assert!(!w.rt.is_resident(&a.child_id), "a finished and settled");
    let notices = |w: &World| {
        let log = w.store.inner.read_now("root", &ReadQuery::types(&[event::MESSAGE], &Signal::never())).unwrap();
        log.len()
    };
    let before = notices(&w);
    let (rt, r) = (w.rt.clone(), root.clone());
    let held = w.run(async move { rt.reopen(&r, "a", &Signal::never()).await.unwrap() });
    assert!(w.rt.is_resident(&a.child_id));
    held.release();
    w.exec.run_idle();
    assert!(!w.rt.is_resident(&a.child_id), "released, it settles again");
    assert_eq!(notices(&w), before, "no second notice reached the creator");
}

/// Found by the simulation (seed 9321): a catalog write of unknown outcome
/// left the parent's log unsure, and a caller-delivery external start (which
/// writes no catalog entry, so nothing re-checked the name) took the name
/// the landed entry holds. Such a start takes the unsure log in first.
#[test]
fn a_start_that_writes_no_entry_still_sees_a_name_of_unknown_outcome() {
    let w = world(Rc::default());
    w.rt.register_provider(Rc::new(Ext::default())).unwrap();
    let root = w.root();
    w.store.lose_ack.borrow_mut().push(("root".into(), event::CATALOG.into()));
    w.store.failing.borrow_mut().push("root".into());
    assert_eq!(try_start(&w, &root, "a").unwrap_err().code, ErrorCode::PersistenceUnavailable);
    w.store.failing.borrow_mut().clear();
    let mut spec = ActivationSpec::new("ext", &root, "x", "do it").named("a");
    spec.delivery = subagent_tree::runtime::Delivery::Caller;
    let rt = w.rt.clone();
    let refused = w.run(async move { rt.start_activation(spec).await.map(|a| a.name) });
    assert_eq!(refused.unwrap_err().code, ErrorCode::DuplicateName);
    assert_eq!(catalog_names(&w.store, "root"), ["a"]);
}

/// A host that "died" mid-turn of child `a`, then a new runtime over the same
/// store with open-time recovery off (so only the test resumes `a`, whose log
/// holds a `turn/start` with no end).
fn restarted_after_a_lost_turn() -> (World, subagent_tree::Activation) {
    let crashed = world(Rc::new(RefCell::new(vec!["a".to_owned()])));
    let root = crashed.root();
    let a = crashed.start(&root, "a"); // its turn never ends
    crashed.exec.run_idle();
    let store = crashed.store.clone();
    drop(crashed);
    let recovery = subagent_tree::runtime::Recovery::Off;
    let options = RuntimeOptions { max_depth: 3, capacity: 16, recovery, ..RuntimeOptions::default() };
    (world_on(store, Rc::default(), options), a)
}

/// Found by the simulation (seed 34724): a resume dropped while it wrote a
/// lost turn's `turn/end` (a cancelled caller) dropped that write too, and
/// left the member resident and idle with nobody to settle it. A begun
/// resume now runs to its end as the runtime's own task and hands the member
/// over held; the hold nobody took is released, and the member settles once
/// its record lands.
#[test]
fn a_resume_dropped_while_it_records_a_lost_turn_still_settles() {
    let (w, a) = restarted_after_a_lost_turn();
    let root = w.root();
    let gate = w.store.gate_append(&a.child_id, event::TURN_END);
    let (rt, r) = (w.rt.clone(), root.clone());
    let mut reopen = Box::pin(async move { rt.reopen(&r, "a", &Signal::never()).await.map(|_| ()) });
    for _ in 0..8 {
        assert!(poll(&mut reopen).is_pending(), "the lost turn's record waits at the store");
        w.exec.run_idle();
    }
    assert!(w.rt.is_resident(&a.child_id), "resumed, recording its lost turn");
    drop(reopen); // the caller goes away mid-record
    w.exec.run_idle();
    assert!(w.rt.is_resident(&a.child_id), "it does not settle before its record lands");
    gate.set(());
    w.exec.run_idle();
    assert_eq!(w.consumed_lists(&a.child_id).len(), 1, "the lost turn is recorded once");
    assert!(!w.rt.is_resident(&a.child_id), "with nothing pending it settled");
    let log = w.store.inner.read_now("root", &ReadQuery::types(&[event::MESSAGE], &Signal::never())).unwrap();
    let told = log.iter().filter(|e| e.payload.to_json().contains("subagent-settled")).count();
    assert_eq!(told, 1, "its creator was told of the failed turn once");
}

/// Seen while testing the drain: a member drained while it recorded a lost
/// turn left residency, and `close_root` resolved, with that `turn/end`
/// still to be written, so the closed residency wrote to a log a reopened
/// tree may already own. Teardown now waits for writes in flight.
#[test]
fn a_drain_waits_for_a_write_in_flight_before_the_tree_is_handed_back() {
    let (w, a) = restarted_after_a_lost_turn();
    let root = w.root();
    let gate = w.store.gate_append(&a.child_id, event::TURN_END);
    let (rt, r) = (w.rt.clone(), root.clone());
    w.exec.spawn(Box::pin(async move {
        let _ = rt.reopen(&r, "a", &Signal::never()).await;
    }));
    w.exec.run_idle(); // resumed; its lost turn's record waits at the store
    assert!(w.rt.is_resident(&a.child_id));
    let closed = Rc::new(Cell::new(false));
    let (rt, r, done) = (w.rt.clone(), root.clone(), closed.clone());
    w.exec.spawn(Box::pin(async move {
        rt.close_root(&r).await.unwrap();
        done.set(true);
    }));
    w.exec.run_idle();
    assert!(!closed.get(), "close_root waits while the drained member's write is in flight");
    gate.set(());
    w.exec.run_idle();
    assert!(closed.get());
    assert_eq!(w.consumed_lists(&a.child_id).len(), 1, "the lost turn is on record");
    let len = w.store.inner.len(&a.child_id);
    w.exec.run_idle();
    assert_eq!(w.store.inner.len(&a.child_id), len, "nothing of the closed residency writes afterwards");
}
