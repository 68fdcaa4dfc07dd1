//! Executors for the core. A [`Runtime`](crate::runtime::Runtime) owns its
//! background work (turns, teardowns, recoveries, detached operations) as a
//! [`Tasks`] set, run only while its [`Driver`] is polled: the host drives one
//! future and the core asks it for nothing else (no spawn port). Natively the
//! driver runs on a [`LocalExecutor`] (tests, benchmarks, the simulation); in
//! wasm the bridge runs it on the JS microtask queue. Dropping the driver
//! drops every task it holds, which is how a simulated crash ends a runtime.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

type Task = Rc<RefCell<Option<LocalBoxFuture<'static, ()>>>>;

/// Tasks ready to poll, and who polls them (a driver's waker, when nested in
/// another executor).
#[derive(Default)]
struct Ready {
    queue: VecDeque<usize>,
    driver: Option<Waker>,
}

impl Ready {
    fn push(&mut self, id: usize) {
        self.queue.push_back(id);
        if let Some(w) = &self.driver {
            w.wake_by_ref();
        }
    }
}

struct Flag {
    woken: AtomicBool,
    id: usize,
    ready: Arc<Mutex<Ready>>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, Ordering::SeqCst) {
            if let Ok(mut r) = self.ready.lock() {
                r.push(self.id);
            }
        }
    }
}

/// A local executor: `spawn` queues tasks, `run_until` drives them all with
/// a main future until it completes. Deterministic: tasks run in FIFO wake
/// order, so the same program gives the same interleaving.
#[derive(Clone, Default)]
pub struct LocalExecutor {
    inner: Rc<RefCell<ExecState>>,
    ready: Arc<Mutex<Ready>>,
}

#[derive(Default)]
struct ExecState {
    tasks: Vec<Option<(Task, Arc<Flag>)>>,
    /// Slots of finished tasks, reused: a long-lived runtime runs millions
    /// of tasks in a bounded table. (A stale wake of a reused slot polls
    /// its new task once more, which futures allow.)
    free: Vec<usize>,
    pending: Vec<LocalBoxFuture<'static, ()>>,
    /// Tasks spawned and not yet finished.
    live: usize,
}

impl ExecState {
    fn slot(&mut self) -> usize {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.tasks.push(None);
                self.tasks.len() - 1
            }
        }
    }

    fn finished(&mut self, id: usize) {
        self.tasks[id] = None;
        self.free.push(id);
        self.live -= 1;
    }
}

impl LocalExecutor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `task`; it first runs at the next `run_ready`.
    pub fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        {
            let mut state = self.inner.borrow_mut();
            state.pending.push(task);
            state.live += 1;
        }
        self.wake_driver();
    }

    /// Wakes whoever polls this executor, when it is nested (a driver).
    fn wake_driver(&self) {
        if let Ok(r) = self.ready.lock() {
            if let Some(w) = &r.driver {
                w.wake_by_ref();
            }
        }
    }

    /// Runs `task` at once, in the caller's turn, up to its first wait; the
    /// rest runs as a task. An operation that does not wait (a store that
    /// answers at once) finishes here, as if called inline.
    pub fn spawn_now(&self, task: LocalBoxFuture<'static, ()>) {
        let id = {
            let mut state = self.inner.borrow_mut();
            state.live += 1;
            state.slot()
        };
        let flag = Arc::new(Flag { woken: AtomicBool::new(false), id, ready: self.ready.clone() });
        let waker = Waker::from(flag.clone());
        let mut task = task;
        let polled = task.as_mut().poll(&mut Context::from_waker(&waker));
        let mut state = self.inner.borrow_mut();
        match polled {
            Poll::Ready(()) => state.finished(id),
            // Woken meanwhile, the flag already queued its id: it runs in the round.
            Poll::Pending => state.tasks[id] = Some((Rc::new(RefCell::new(Some(task))), flag)),
        }
    }

    fn admit_pending(&self) {
        let pending = std::mem::take(&mut self.inner.borrow_mut().pending);
        for fut in pending {
            let mut state = self.inner.borrow_mut();
            let id = state.slot();
            let flag = Arc::new(Flag { woken: AtomicBool::new(true), id, ready: self.ready.clone() });
            state.tasks[id] = Some((Rc::new(RefCell::new(Some(fut))), flag));
            drop(state);
            if let Ok(mut r) = self.ready.lock() {
                r.queue.push_back(id);
            }
        }
    }

    /// Polls ready tasks until none is ready. Returns whether any ran.
    pub fn run_ready(&self) -> bool {
        let mut ran = false;
        while self.run_round() {
            ran = true;
        }
        ran
    }

    /// Polls the tasks ready now, not those they wake or spawn. Returns
    /// whether any ran.
    fn run_round(&self) -> bool {
        self.admit_pending();
        let round = self.ready.lock().map_or(0, |r| r.queue.len());
        let mut ran = false;
        for _ in 0..round {
            let next = self.ready.lock().ok().and_then(|mut r| r.queue.pop_front());
            let Some(id) = next else { break };
            let entry = self.inner.borrow().tasks.get(id).cloned().flatten();
            let Some((task, flag)) = entry else { continue };
            flag.woken.store(false, Ordering::SeqCst);
            let waker = Waker::from(flag.clone());
            let mut cx = Context::from_waker(&waker);
            let fut = task.borrow_mut().take();
            if let Some(mut fut) = fut {
                ran = true;
                match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(()) => {
                        self.inner.borrow_mut().finished(id);
                        drop(fut); // outside the borrow: a task's drop may spawn
                    }
                    Poll::Pending => *task.borrow_mut() = Some(fut),
                }
            }
        }
        ran
    }

    /// Whether a task is ready or newly spawned.
    fn has_ready(&self) -> bool {
        !self.inner.borrow().pending.is_empty() || self.ready.lock().is_ok_and(|r| !r.queue.is_empty())
    }

    /// Drives `fut` and every spawned task until `fut` completes. Returns
    /// `None` if everything stalls first (a deadlock, in a test).
    pub fn run_until<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> Option<T> {
        let out: Rc<RefCell<Option<T>>> = Rc::new(RefCell::new(None));
        let slot = out.clone();
        self.spawn(Box::pin(async move {
            let v = fut.await;
            *slot.borrow_mut() = Some(v);
        }));
        loop {
            let ran = self.run_ready();
            if let Some(v) = out.borrow_mut().take() {
                return Some(v);
            }
            if !ran {
                return None;
            }
        }
    }

    /// Runs until no task is ready.
    pub fn run_idle(&self) {
        while self.run_ready() {}
    }
}

/// A runtime's own background work: a spawn handle that does not keep the
/// tasks alive (they live in the [`Driver`]; a task holds the runtime, so a
/// strong handle here would be a cycle).
#[derive(Clone)]
pub struct Tasks(Weak<DriverState>);

struct DriverState {
    exec: LocalExecutor,
    /// Set when the owner is gone: the driver ends once its last task has.
    closed: Cell<bool>,
}

/// Runs a runtime's background work while polled; see the module doc. It
/// ends once the runtime is dropped and its last task has finished.
#[must_use = "a runtime does no background work until its driver is polled"]
pub struct Driver(Rc<DriverState>);

/// A new task set and the driver that runs it.
pub fn tasks() -> (Tasks, Driver) {
    let state = Rc::new(DriverState { exec: LocalExecutor::new(), closed: Cell::new(false) });
    (Tasks(Rc::downgrade(&state)), Driver(state))
}

impl Tasks {
    /// Queues `task` for the driver; dropped unrun once the driver is gone.
    pub fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        if let Some(state) = self.0.upgrade() {
            state.exec.spawn(task);
        }
    }

    /// Runs `fut` to its end as a task of this set and resolves with its
    /// output. Dropping the returned future does not cancel `fut`: a begun
    /// operation finishes (its signal is how a caller stops it), so no
    /// operation can be left half-done by a caller that stopped waiting.
    pub fn detach<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> impl Future<Output = Option<T>> {
        let slot: Rc<OneShot<T>> = Rc::default();
        let filler = Filler(slot.clone());
        let task = Box::pin(async move {
            let v = fut.await;
            filler.0.put(v);
        });
        if let Some(state) = self.0.upgrade() {
            state.exec.spawn_now(task);
        }
        // The task may be dropped unfinished (the driver is gone): the slot
        // then has one holder left, this future, and answers `None`.
        std::future::poll_fn(move |cx| slot.poll(cx))
    }

    /// Tells the driver its owner is gone.
    pub fn close(&self) {
        if let Some(state) = self.0.upgrade() {
            state.closed.set(true);
            state.exec.wake_driver();
        }
    }
}

impl Future for Driver {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let exec = &self.0.exec;
        // One round per poll: what the round wakes or spawns runs at the next
        // poll, after the host work the round woke (a caller awaiting an
        // operation's answer goes on before the turn that operation started),
        // so neither side starves the other. No wake reaches the driver during
        // its round; it wakes itself after, if anything is ready.
        let own = exec.ready.lock().ok().and_then(|mut r| r.driver.take());
        exec.run_round();
        if let Ok(mut r) = exec.ready.lock() {
            r.driver = match own {
                Some(w) if w.will_wake(cx.waker()) => Some(w),
                _ => Some(cx.waker().clone()),
            };
        }
        if self.0.closed.get() && exec.inner.borrow().live == 0 {
            return Poll::Ready(());
        }
        if exec.has_ready() {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// One value handed from a task to one waiter.
struct OneShot<T> {
    value: RefCell<Option<T>>,
    waker: RefCell<Option<Waker>>,
}

impl<T> Default for OneShot<T> {
    fn default() -> Self {
        OneShot { value: RefCell::new(None), waker: RefCell::new(None) }
    }
}

/// The task's end of a [`OneShot`]: wakes the waiter when the task ends,
/// finished or dropped.
struct Filler<T>(Rc<OneShot<T>>);

impl<T> Drop for Filler<T> {
    fn drop(&mut self) {
        let waker = self.0.waker.borrow_mut().take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> OneShot<T> {
    fn put(&self, v: T) {
        *self.value.borrow_mut() = Some(v);
    }

    fn poll(self: &Rc<Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(v) = self.value.borrow_mut().take() {
            return Poll::Ready(Some(v));
        }
        if Rc::strong_count(self) == 1 {
            return Poll::Ready(None);
        }
        *self.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Runs one future to completion on a fresh executor; panics on a stall
/// (for tests and benchmarks only).
pub fn block_on<T: 'static>(fut: impl Future<Output = T> + 'static) -> T {
    match LocalExecutor::new().run_until(fut) {
        Some(v) => v,
        None => panic!("block_on: the future stalled with no task ready"),
    }
}

/// Yields once to the executor, letting other tasks run.
pub async fn yield_now() {
    struct YieldNow(bool);
    impl Future for YieldNow {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
    YieldNow(false).await
}

/// A value set once and awaited by any number of waiters: the core's
/// equivalent of a settled Promise (activation results, dispose outcomes).
pub struct Deferred<T: Clone>(Rc<DeferredState<T>>);

struct DeferredState<T> {
    value: RefCell<Option<T>>,
    wakers: RefCell<Vec<Waker>>,
}

impl<T: Clone> Clone for Deferred<T> {
    fn clone(&self) -> Self {
        Deferred(self.0.clone())
    }
}

impl<T: Clone> Default for Deferred<T> {
    fn default() -> Self {
        Deferred(Rc::new(DeferredState { value: RefCell::new(None), wakers: RefCell::new(Vec::new()) }))
    }
}

impl<T: Clone> Deferred<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value once; returns false (and changes nothing) if already set.
    pub fn set(&self, value: T) -> bool {
        if self.0.value.borrow().is_some() {
            return false;
        }
        *self.0.value.borrow_mut() = Some(value);
        let wakers = std::mem::take(&mut *self.0.wakers.borrow_mut());
        wakers.into_iter().for_each(Waker::wake);
        true
    }

    pub fn get(&self) -> Option<T> {
        self.0.value.borrow().clone()
    }

    pub fn is_set(&self) -> bool {
        self.0.value.borrow().is_some()
    }

    /// Resolves with the value once set.
    pub fn wait(&self) -> impl Future<Output = T> + 'static
    where
        T: 'static,
    {
        let me = self.clone();
        std::future::poll_fn(move |cx| match me.get() {
            Some(v) => Poll::Ready(v),
            None => {
                me.0.wakers.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

/// A FIFO async lock: serializes appends to one session log.
#[derive(Clone, Default)]
pub struct AsyncLock(Rc<LockState>);

#[derive(Default)]
struct LockState {
    locked: std::cell::Cell<bool>,
    waiters: RefCell<VecDeque<Deferred<()>>>,
}

/// Held lock; releases on drop, handing over to the next waiter in order.
pub struct LockGuard(Rc<LockState>);

impl AsyncLock {
    /// Waits for the lock. Cancel-safe: a waiter dropped before it holds the
    /// lock leaves the queue, or passes the lock on if it was already its turn.
    pub async fn lock(&self) -> LockGuard {
        if self.0.locked.replace(true) {
            let turn = Deferred::new();
            self.0.waiters.borrow_mut().push_back(turn.clone());
            let mut waiting = Waiting { state: self.0.clone(), turn: turn.clone(), done: false };
            turn.wait().await;
            waiting.done = true;
        }
        LockGuard(self.0.clone())
    }
}

/// A queued `lock` call; see [`AsyncLock::lock`].
struct Waiting {
    state: Rc<LockState>,
    turn: Deferred<()>,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.done {
        } else if self.turn.is_set() {
            drop(LockGuard(self.state.clone())); // handed over, never taken: hand it on
        } else {
            self.state.waiters.borrow_mut().retain(|d| !Rc::ptr_eq(&d.0, &self.turn.0));
        }
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let next = self.0.waiters.borrow_mut().pop_front();
        match next {
            Some(next) => {
                next.set(()); // ownership passes on; `locked` stays true
            }
            None => self.0.locked.set(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn poll_once<T>(fut: &mut Pin<Box<dyn Future<Output = T>>>) -> Poll<T> {
        let waker = Waker::from(Arc::new(Noop));
        fut.as_mut().poll(&mut Context::from_waker(&waker))
    }

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }

    /// A driver on a host executor, as the runtime's host runs it.
    fn driven() -> (Tasks, LocalExecutor) {
        let (tasks, driver) = tasks();
        let host = LocalExecutor::new();
        host.spawn(Box::pin(driver));
        (tasks, host)
    }

    #[test]
    fn an_operation_that_does_not_wait_finishes_inline() {
        let (tasks, _host) = driven();
        let mut op: Pin<Box<dyn Future<Output = Option<u32>>>> = Box::pin(tasks.detach(async { 5 }));
        assert_eq!(poll_once(&mut op), Poll::Ready(Some(5)), "no executor ran");
    }

    #[test]
    fn a_detached_operation_runs_to_its_end_when_its_caller_drops_it() {
        let (tasks, host) = driven();
        let (gate, ended) = (Deferred::<()>::new(), Rc::new(Cell::new(false)));
        let (g, e) = (gate.clone(), ended.clone());
        let mut op: Pin<Box<dyn Future<Output = Option<()>>>> = Box::pin(tasks.detach(async move {
            g.wait().await;
            e.set(true);
        }));
        assert!(poll_once(&mut op).is_pending());
        drop(op);
        gate.set(());
        host.run_idle();
        assert!(ended.get(), "the operation went on without its caller");
    }

    #[test]
    fn an_answer_wakes_the_caller_before_the_work_it_started() {
        // An operation that spawns follow-up work: its caller goes on first, then the follow-up.
        let (tasks, host) = driven();
        let order = Rc::new(RefCell::new(Vec::new()));
        let gate = Deferred::<()>::new();
        let (t, o, g) = (tasks.clone(), order.clone(), gate.clone());
        let answer = tasks.detach(async move {
            g.wait().await;
            let o2 = o.clone();
            t.spawn(Box::pin(async move { o2.borrow_mut().push("follow-up") }));
            o.borrow_mut().push("operation");
        });
        let o = order.clone();
        host.spawn(Box::pin(async move {
            answer.await;
            o.borrow_mut().push("caller");
        }));
        host.run_idle();
        gate.set(());
        host.run_idle();
        assert_eq!(*order.borrow(), ["operation", "caller", "follow-up"]);
    }

    #[test]
    fn the_driver_ends_once_closed_and_its_last_task_has() {
        let (tasks, driver) = tasks();
        let mut driver: Pin<Box<dyn Future<Output = ()>>> = Box::pin(driver);
        let gate = Deferred::<()>::new();
        let g = gate.clone();
        tasks.spawn(Box::pin(async move { g.wait().await }));
        tasks.close();
        assert!(poll_once(&mut driver).is_pending(), "a task is still running");
        gate.set(());
        assert!(poll_once(&mut driver).is_ready());
    }

    #[test]
    fn finished_tasks_give_their_slots_back() {
        let (tasks, host) = driven();
        for _ in 0..1_000 {
            let gate = Deferred::<()>::new();
            let g = gate.clone();
            drop(tasks.detach(async move { g.wait().await }));
            gate.set(());
            host.run_idle();
        }
        let state = tasks.0.upgrade().unwrap();
        assert!(state.exec.inner.borrow().tasks.len() <= 2, "a bounded table, not one slot per task ever run");
        assert!(host.inner.borrow().tasks.len() <= 2);
    }

    #[test]
    fn a_dropped_driver_drops_its_tasks_and_answers_none() {
        let (tasks, host) = driven();
        let mut op: Pin<Box<dyn Future<Output = Option<()>>>> = Box::pin(tasks.detach(std::future::pending::<()>()));
        assert!(poll_once(&mut op).is_pending());
        drop(host); // the driver, and the task with it (a crash)
        assert_eq!(poll_once(&mut op), Poll::Ready(None));
        let mut late: Pin<Box<dyn Future<Output = Option<u32>>>> = Box::pin(tasks.detach(async { 1 }));
        assert_eq!(poll_once(&mut late), Poll::Ready(None), "work queued after it is dropped unrun");
    }
}
