//! Cancellation: the core's AbortSignal.
//!
//! A [`Signal`] is a shared flag plus wakers. The bridge links it to a JS
//! `AbortSignal` (and keeps that object as the signal's host value, so a JS
//! store receives the caller's own signal); native callers abort it directly.

use crate::core::error::{Result, SubagentError};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    aborted: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
    callbacks: RefCell<Vec<Box<dyn FnOnce()>>>,
    host: RefCell<Option<Rc<dyn Any>>>,
}

/// A cancellation signal; clones share one state.
#[derive(Clone, Default)]
pub struct Signal(Rc<State>);

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signal(aborted: {})", self.is_aborted())
    }
}

impl Signal {
    pub fn new() -> Signal {
        Signal::default()
    }

    /// A signal that never aborts (for callers that did not pass one).
    pub fn never() -> Signal {
        Signal::default()
    }

    pub fn is_aborted(&self) -> bool {
        self.0.aborted.get()
    }

    /// Aborts once; later calls do nothing. Wakes every waiter and runs callbacks.
    pub fn abort(&self) {
        if self.0.aborted.replace(true) {
            return;
        }
        let wakers = std::mem::take(&mut *self.0.wakers.borrow_mut());
        wakers.into_iter().for_each(Waker::wake);
        let callbacks = std::mem::take(&mut *self.0.callbacks.borrow_mut());
        callbacks.into_iter().for_each(|f| f());
    }

    /// Runs `f` when the signal aborts (at once if it already has).
    pub fn on_abort(&self, f: impl FnOnce() + 'static) {
        if self.is_aborted() {
            f();
        } else {
            self.0.callbacks.borrow_mut().push(Box::new(f));
        }
    }

    /// A signal that aborts when `self` does, and can also abort alone.
    pub fn child(&self) -> Signal {
        let child = Signal::new();
        let weak = Rc::downgrade(&child.0);
        self.on_abort(move || {
            if let Some(state) = weak.upgrade() {
                Signal(state).abort();
            }
        });
        child
    }

    /// A reference that does not keep the signal (or its callbacks) alive.
    pub fn downgrade(&self) -> WeakSignal {
        WeakSignal(Rc::downgrade(&self.0))
    }

    /// `Err(CANCELLED)` once aborted.
    pub fn check(&self) -> Result<()> {
        if self.is_aborted() {
            Err(SubagentError::cancelled())
        } else {
            Ok(())
        }
    }

    /// Resolves when the signal aborts.
    pub fn aborted(&self) -> Aborted {
        Aborted(self.clone())
    }

    /// Runs `fut` until it finishes or the signal aborts, whichever is first.
    /// A store or provider that never settles cannot hold a cancelled caller.
    pub async fn guard<T>(&self, fut: impl Future<Output = Result<T>>) -> Result<T> {
        self.check()?;
        let out = Race { fut: Box::pin(fut), signal: self.clone() }.await;
        self.check()?;
        out
    }

    /// The host object this signal mirrors (for the bridge: a JS AbortSignal).
    pub fn host(&self) -> Option<Rc<dyn Any>> {
        self.0.host.borrow().clone()
    }

    pub fn set_host(&self, host: Rc<dyn Any>) {
        *self.0.host.borrow_mut() = Some(host);
    }

    /// Whether two signals share one state.
    pub fn same(&self, other: &Signal) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

pub struct WeakSignal(std::rc::Weak<State>);

impl WeakSignal {
    pub fn upgrade(&self) -> Option<Signal> {
        self.0.upgrade().map(Signal)
    }
}

pub struct Aborted(Signal);

impl Future for Aborted {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_aborted() {
            Poll::Ready(())
        } else {
            let mut wakers = self.0 .0.wakers.borrow_mut();
            if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
            Poll::Pending
        }
    }
}

struct Race<'a, T> {
    fut: Pin<Box<dyn Future<Output = Result<T>> + 'a>>,
    signal: Signal,
}

impl<T> Future for Race<'_, T> {
    type Output = Result<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        if let Poll::Ready(out) = self.fut.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        let mut aborted = self.signal.aborted();
        match Pin::new(&mut aborted).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(SubagentError::cancelled())),
            Poll::Pending => Poll::Pending,
        }
    }
}
