//! Deterministic ports for tests, benchmarks and simulations: sequential ids,
//! a manual clock, and an agent host driven by a closure.

use crate::core::error::Result;
use crate::core::exec::{LocalBoxFuture, LocalExecutor};
use crate::core::store::Store;
use crate::runtime::ports::{AgentHost, Clock, IdKind, IdSource, Turn, TurnOutcome};
use crate::runtime::{Runtime, RuntimeOptions};
use std::cell::Cell;
use std::rc::Rc;

/// Ids `{prefix}s-1`, `{prefix}s-2`, ... for sessions and `{prefix}m-1`, ... for
/// messages. Give each runtime over one store its own prefix.
#[derive(Default)]
pub struct SeqIds {
    prefix: String,
    sessions: Cell<u64>,
    messages: Cell<u64>,
}

impl SeqIds {
    pub fn new(prefix: &str) -> SeqIds {
        SeqIds { prefix: prefix.to_owned(), ..SeqIds::default() }
    }
}

impl IdSource for SeqIds {
    fn new_id(&self, kind: IdKind) -> String {
        let (counter, prefix) = match kind {
            IdKind::Session => (&self.sessions, "s"),
            IdKind::Message => (&self.messages, "m"),
        };
        counter.set(counter.get() + 1);
        format!("{}{prefix}-{}", self.prefix, counter.get())
    }
}

/// A clock that moves only when told (or by 1 ms per read, if `ticking`).
#[derive(Default)]
pub struct ManualClock {
    pub now: Cell<u64>,
    pub ticking: bool,
}

impl Clock for ManualClock {
    fn now(&self) -> u64 {
        if self.ticking {
            self.now.set(self.now.get() + 1);
        }
        self.now.get()
    }
}

type TurnFn = dyn Fn(Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>>;

/// An agent host whose turns are a closure.
pub struct FnHost(pub Rc<TurnFn>);

impl FnHost {
    pub fn new(f: impl Fn(Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> + 'static) -> FnHost {
        FnHost(Rc::new(f))
    }

    /// A host whose every turn completes at once with `reply`.
    pub fn replying(reply: &'static str) -> FnHost {
        FnHost::new(move |_turn| Box::pin(async move { Ok(completed(reply)) }))
    }
}

impl AgentHost for FnHost {
    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        (self.0)(turn)
    }
}

/// A completed outcome with one assistant message.
pub fn completed(text: &str) -> TurnOutcome {
    TurnOutcome {
        stop_reason: "completed".into(),
        messages: vec![crate::core::json::Value::Array(vec![crate::core::result::text_block(text)])],
        ..TurnOutcome::default()
    }
}

/// A runtime over `store` and `host` with deterministic ids (prefixed) and clock, driven by `exec`.
pub fn runtime(
    store: Rc<dyn Store>,
    host: Rc<dyn AgentHost>,
    exec: &LocalExecutor,
    id_prefix: &str,
    options: RuntimeOptions,
) -> Runtime {
    let clock = ManualClock { now: Cell::new(1_700_000_000_000), ticking: true };
    let (rt, driver) = Runtime::new(store, host, Rc::new(clock), Rc::new(SeqIds::new(id_prefix)), options);
    exec.spawn(Box::pin(driver));
    rt
}
