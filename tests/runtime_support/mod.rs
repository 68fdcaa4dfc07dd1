//! A harness for runtime tests: a store, a scripted host whose turns can be
//! held open, and helpers to drive the local executor.

#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;
use subagent_tree::exec::{Deferred, LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::ports::{
    AgentHost, Capabilities, ContinuableCreateRequest, ContinuableCreateSpec, Provider, Run, StartRequest, Turn,
    TurnOutcome,
};
use subagent_tree::result::content_text;
use subagent_tree::runtime::{InboxMessage, MessageSource, RuntimeEvent};
use subagent_tree::testkit;
use subagent_tree::{Agent, MemoryStore, Result, Runtime, RuntimeOptions, SubagentResult};

/// What the host saw of one turn.
#[derive(Clone, Debug)]
pub struct SeenTurn {
    pub name: String,
    pub session_id: String,
    pub parent_name: Option<String>,
    pub input: Vec<String>,
    pub sources: Vec<MessageSource>,
    pub steered: Vec<String>,
    pub first: bool,
    pub cwd: String,
    pub guidance: Option<String>,
    pub budget: Option<subagent_tree::core::budget::Allowance>,
    pub agent_options: Option<subagent_tree::core::agent_options::AgentOptions>,
    pub turn_id: u64,
}

type Script = Rc<dyn Fn(&Turn) -> TurnOutcome>;

#[derive(Default)]
pub struct HostState {
    pub turns: RefCell<Vec<SeenTurn>>,
    /// Turns of these members wait until the gate opens (or the turn is aborted).
    pub gates: RefCell<HashMap<String, Deferred<()>>>,
    /// Per-member outcome scripts (by full name); default completes with "done by NAME".
    pub scripts: RefCell<HashMap<String, Script>>,
    pub released: RefCell<Vec<String>>,
    pub fail_release: RefCell<Vec<String>>,
    /// Its models take text only (no images).
    pub text_only: Cell<bool>,
}

#[derive(Clone, Default)]
pub struct TestHost(pub Rc<HostState>);

impl TestHost {
    pub fn hold(&self, name: &str) -> Deferred<()> {
        let gate = Deferred::new();
        self.0.gates.borrow_mut().insert(name.to_owned(), gate.clone());
        gate
    }

    pub fn open(&self, name: &str) {
        if let Some(gate) = self.0.gates.borrow_mut().remove(name) {
            gate.set(());
        }
    }

    pub fn script(&self, name: &str, f: impl Fn(&Turn) -> TurnOutcome + 'static) {
        self.0.scripts.borrow_mut().insert(name.to_owned(), Rc::new(f));
    }

    pub fn turns_of(&self, name: &str) -> Vec<SeenTurn> {
        self.0.turns.borrow().iter().filter(|t| t.name == name).cloned().collect()
    }
}

fn texts(messages: &[InboxMessage]) -> Vec<String> {
    messages.iter().map(|m| content_text(&m.content)).collect()
}

impl AgentHost for TestHost {
    fn takes_images(&self) -> bool {
        !self.0.text_only.get()
    }

    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        let state = self.0.clone();
        Box::pin(async move {
            let index = state.turns.borrow().len();
            state.turns.borrow_mut().push(SeenTurn {
                name: turn.name.clone(),
                session_id: turn.session_id.clone(),
                parent_name: turn.parent_name.clone(),
                input: texts(&turn.input),
                sources: turn.input.iter().map(|m| m.source.clone()).collect(),
                steered: Vec::new(),
                first: turn.first,
                cwd: turn.cwd.clone(),
                guidance: turn.guidance.clone(),
                budget: turn.budget,
                agent_options: turn.agent_options.clone(),
                turn_id: turn.steer.turn_id(),
            });
            let gate = state.gates.borrow().get(&turn.name).cloned();
            if let Some(gate) = gate {
                let aborted = turn.signal.clone();
                let opened = turn
                    .signal
                    .guard(async move {
                        gate.wait().await;
                        Ok(())
                    })
                    .await;
                // A step boundary: steered messages arrive here.
                let steered = texts(&turn.steer.take());
                state.turns.borrow_mut()[index].steered = steered;
                if opened.is_err() || aborted.is_aborted() {
                    return Ok(TurnOutcome { stop_reason: "aborted".into(), ..TurnOutcome::default() });
                }
            }
            let script = state.scripts.borrow().get(&turn.name).cloned();
            Ok(match script {
                Some(script) => script(&turn),
                None => testkit::completed(&format!("done by {}", turn.name)),
            })
        })
    }

    fn release(&self, session_id: &str) -> LocalBoxFuture<'static, Result<()>> {
        self.0.released.borrow_mut().push(session_id.to_owned());
        let fail = self.0.fail_release.borrow().iter().any(|id| id == session_id);
        Box::pin(async move {
            if fail {
                Err(subagent_tree::err!(PersistenceUnavailable, "host release failed"))
            } else {
                Ok(())
            }
        })
    }
}

pub struct Harness {
    pub exec: LocalExecutor,
    pub store: Rc<MemoryStore>,
    pub host: TestHost,
    pub rt: Runtime,
    pub events: Rc<RefCell<Vec<RuntimeEvent>>>,
}

impl Harness {
    pub fn new(options: RuntimeOptions) -> Harness {
        Harness::over(Rc::new(MemoryStore::new()), "a", options)
    }

    /// A runtime over an existing store (a restart), with its own id prefix.
    pub fn over(store: Rc<MemoryStore>, prefix: &str, options: RuntimeOptions) -> Harness {
        let exec = LocalExecutor::new();
        let host = TestHost::default();
        let rt = testkit::runtime(store.clone(), Rc::new(host.clone()), &exec, prefix, options);
        let events = Rc::new(RefCell::new(Vec::new()));
        let sink = events.clone();
        rt.subscribe(None, Rc::new(move |e: &RuntimeEvent| sink.borrow_mut().push(e.clone())));
        Harness { exec, store, host, rt, events }
    }

    pub fn wide() -> Harness {
        Harness::new(RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() })
    }

    /// Runs `fut` and all background work it causes until it completes.
    pub fn run<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> T {
        self.exec.run_until(fut).expect("the future stalled")
    }

    /// Runs background work until nothing is ready.
    pub fn settle(&self) {
        self.exec.run_idle();
    }

    pub fn root(&self) -> Agent {
        let rt = self.rt.clone();
        self.run(async move { rt.open_root(Some("root".into()), Some("/work".into())).await.unwrap() })
    }

    pub fn starts(&self) -> Vec<String> {
        self.events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::Start(i) => Some(i.name.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn ends(&self) -> Vec<(String, String)> {
        self.events
            .borrow()
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::End(i) => Some((i.info.name.clone(), i.stop_reason.to_string())),
                _ => None,
            })
            .collect()
    }
}

pub fn text(v: &Value) -> String {
    content_text(v)
}

/// An external provider whose runs complete at once; counts its starts.
#[derive(Default)]
pub struct Ext {
    pub touched: Rc<Cell<u32>>,
    pub caps: Capabilities,
    /// Starts no runs at all (a provider registration must refuse it).
    pub none: bool,
}

impl Provider for Ext {
    fn name(&self) -> String {
        "ext".into()
    }
    fn capabilities(&self) -> Capabilities {
        self.caps
    }
    fn inherits_parent_context(&self) -> bool {
        false
    }
    fn prepares_continuable(&self) -> bool {
        false
    }
    fn starts_runs(&self) -> bool {
        !self.none
    }
    fn prepare_continuable(
        &self,
        _r: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        Box::pin(async { Ok(ContinuableCreateSpec::default()) })
    }
    fn start(&self, _r: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        self.touched.set(self.touched.get() + 1);
        let id = format!("ext-run-{}", self.touched.get());
        Box::pin(async move { Ok(Box::new(ExtRun(id)) as Box<dyn Run>) })
    }
}

pub struct ExtRun(String);

impl Run for ExtRun {
    fn id(&self) -> String {
        self.0.clone()
    }
    fn result(&self) -> LocalBoxFuture<'static, Result<SubagentResult>> {
        Box::pin(async {
            let mut r = SubagentResult::new("completed");
            r.output = Value::Array(vec![subagent_tree::result::text_block("external done")]);
            r.usage =
                Some(subagent_tree::core::usage::Usage { input_tokens: 7, output_tokens: 3, ..Default::default() });
            Ok(r)
        })
    }
    fn dispose(&self) -> LocalBoxFuture<'static, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}

/// An external provider whose runs work until their signal aborts (an
/// interrupt, a dispose), recording each start's `run_token`.
pub struct UntilAborted {
    pub name: String,
    pub tokens: Rc<RefCell<Vec<u64>>>,
    /// Declares its depth provider-managed.
    pub manages_depth: bool,
}

impl UntilAborted {
    pub fn named(name: &str) -> UntilAborted {
        UntilAborted { name: name.to_owned(), tokens: Rc::default(), manages_depth: false }
    }
}

impl Provider for UntilAborted {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn inherits_parent_context(&self) -> bool {
        false
    }
    fn prepares_continuable(&self) -> bool {
        false
    }
    fn starts_runs(&self) -> bool {
        true
    }
    fn manages_depth(&self) -> bool {
        self.manages_depth
    }
    fn prepare_continuable(
        &self,
        _r: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        Box::pin(async {
            Err(subagent_tree::SubagentError::new(subagent_tree::ErrorCode::UnsupportedCapability, "external only"))
        })
    }
    fn start(&self, r: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        self.tokens.borrow_mut().push(r.run_token);
        let id = format!("{}-{}", self.name, self.tokens.borrow().len());
        Box::pin(async move { Ok(Box::new(UntilAbortedRun(r.signal, id)) as Box<dyn Run>) })
    }
}

pub struct UntilAbortedRun(subagent_tree::Signal, String);

impl Run for UntilAbortedRun {
    fn id(&self) -> String {
        self.1.clone()
    }
    fn result(&self) -> LocalBoxFuture<'static, Result<SubagentResult>> {
        let signal = self.0.clone();
        Box::pin(async move {
            signal.aborted().await;
            Ok(SubagentResult::new("aborted"))
        })
    }
    fn dispose(&self) -> LocalBoxFuture<'static, Result<()>> {
        self.0.abort();
        Box::pin(async { Ok(()) })
    }
}
