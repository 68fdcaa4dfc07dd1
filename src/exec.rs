//! A tiny single-threaded executor for native callers (tests, benchmarks, the
//! simulation). The core itself never picks an executor: it only returns
//! futures and, where it must run work in the background, asks the host's
//! [`Spawn`] port. In wasm the bridge spawns onto the JS microtask queue.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Runs background work for the core.
pub trait Spawn {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>);
}

type Task = Rc<RefCell<Option<LocalBoxFuture<'static, ()>>>>;

struct Flag {
    woken: AtomicBool,
    id: usize,
    queue: Arc<Mutex<VecDeque<usize>>>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, Ordering::SeqCst) {
            if let Ok(mut q) = self.queue.lock() {
                q.push_back(self.id);
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
    ready: Arc<Mutex<VecDeque<usize>>>,
}

#[derive(Default)]
struct ExecState {
    tasks: Vec<Option<(Task, Arc<Flag>)>>,
    pending: Vec<LocalBoxFuture<'static, ()>>,
}

impl Spawn for LocalExecutor {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.inner.borrow_mut().pending.push(task);
    }
}

impl LocalExecutor {
    pub fn new() -> Self {
        Self::default()
    }

    fn admit_pending(&self) {
        let pending = std::mem::take(&mut self.inner.borrow_mut().pending);
        for fut in pending {
            let mut state = self.inner.borrow_mut();
            let id = state.tasks.len();
            let flag = Arc::new(Flag { woken: AtomicBool::new(true), id, queue: self.ready.clone() });
            state.tasks.push(Some((Rc::new(RefCell::new(Some(fut))), flag)));
            drop(state);
            if let Ok(mut q) = self.ready.lock() {
                q.push_back(id);
            }
        }
    }

    /// Polls ready tasks until none is ready. Returns whether any ran.
    pub fn run_ready(&self) -> bool {
        let mut ran = false;
        loop {
            self.admit_pending();
            let next = self.ready.lock().ok().and_then(|mut q| q.pop_front());
            let Some(id) = next else { return ran };
            let entry = self.inner.borrow().tasks.get(id).cloned().flatten();
            let Some((task, flag)) = entry else { continue };
            flag.woken.store(false, Ordering::SeqCst);
            let waker = Waker::from(flag.clone());
            let mut cx = Context::from_waker(&waker);
            let fut = task.borrow_mut().take();
            if let Some(mut fut) = fut {
                ran = true;
                match fut.as_mut().poll(&mut cx) {
                    Poll::Ready(()) => self.inner.borrow_mut().tasks[id] = None,
                    Poll::Pending => *task.borrow_mut() = Some(fut),
                }
            }
        }
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
