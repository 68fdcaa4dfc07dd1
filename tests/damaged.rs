//! Damaged events (issue 49, point 3): a store that cannot hand over one
//! event whole (in JS, a lone surrogate or a throwing getter) costs that
//! event's own entry, never the tree. `Damaging` answers as the wasm bridge
//! does: a read that asks for damaged events gets the event with the bad
//! field left out and `$damaged` saying why; any other read fails whole.
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::TestHost;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::exec::{LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::runtime::Scheduling;
use subagent_tree::store::{ReadResult, Store};
use subagent_tree::testkit;
use subagent_tree::{
    ActivationSpec, Agent, ErrorCode, MemoryStore, ReadQuery, Result, Row, Runtime, RuntimeOptions, Signal,
    SubagentError,
};

/// A store over a `MemoryStore` whose events named in `damage` (session,
/// seq, field) read as damaged.
struct Damaging {
    inner: Rc<MemoryStore>,
    damage: RefCell<Vec<(String, u64, &'static str)>>,
}

impl Damaging {
    fn new(inner: Rc<MemoryStore>) -> Rc<Damaging> {
        Rc::new(Damaging { inner, damage: RefCell::default() })
    }

    /// Damages the field `field` of the first event of type `kind` in `session` matching `pick`.
    fn damage(&self, session: &str, kind: &str, field: &'static str, pick: impl Fn(&SessionEvent) -> bool) -> u64 {
        let log = self.inner.read_now(session, &ReadQuery::default()).unwrap_or_default();
        let e = log.iter().find(|e| e.kind == kind && pick(e)).unwrap_or_else(|| panic!("no {kind} in {session}"));
        self.damage.borrow_mut().push((session.to_owned(), e.seq, field));
        e.seq
    }
}

impl Store for Damaging {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move { self.inner.append_now(session, events) })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async move {
            let Some(mut events) = self.inner.read_now(session, query) else { return Ok(None) };
            for e in &mut events {
                let damage = self.damage.borrow();
                let Some((_, _, field)) = damage.iter().find(|(s, seq, _)| s == session && *seq == e.seq) else {
                    continue;
                };
                let why = format!("payload.{field} is not well-formed Unicode (it holds a lone surrogate)");
                if !query.damaged {
                    return Err(SubagentError::new(ErrorCode::CorruptCatalog, format!("a malformed event: {why}")));
                }
                let mut fields: Vec<(String, Value)> =
                    e.payload.as_object().unwrap_or_default().iter().filter(|(k, _)| k != field).cloned().collect();
                fields.push((event::DAMAGED.to_owned(), Value::from(why.as_str())));
                e.payload = Value::Object(fields);
            }
            Ok(Some(events))
        })
    }
}

struct Setup {
    exec: LocalExecutor,
    host: TestHost,
    rt: Runtime,
}

impl Setup {
    fn over(store: Rc<dyn Store>, prefix: &str) -> Setup {
        let exec = LocalExecutor::new();
        let host = TestHost::default();
        let options = RuntimeOptions { max_depth: 4, capacity: 16, ..RuntimeOptions::default() };
        let rt = testkit::runtime(store, Rc::new(host.clone()), &exec, prefix, options);
        Setup { exec, host, rt }
    }

    fn run<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> T {
        self.exec.run_until(fut).expect("the future stalled")
    }

    fn open(&self) -> Result<Agent> {
        let rt = self.rt.clone();
        let root = self.run(async move { rt.open_root(Some("root".into()), Some("/work".into())).await });
        self.exec.run_idle();
        root
    }

    fn spawn(&self, parent: &Agent, name: &str) -> Result<String> {
        let spec = ActivationSpec::new("spawn", parent, &format!("task {name}"), "please do it").named(name);
        let rt = self.rt.clone();
        let started = self.run(async move { rt.start_activation(spec).await });
        self.exec.run_idle();
        started.map(|a| a.child_id.clone())
    }

    fn prompt(&self, from: &Agent, to: &str, text: &str) -> Result<()> {
        let (rt, from, to, text) = (self.rt.clone(), from.clone(), to.to_owned(), text.to_owned());
        let sent = self.run(async move {
            rt.prompt(&from, &to, Value::from(text.as_str()), Scheduling::Queue, &Signal::never()).await.map(drop)
        });
        self.exec.run_idle();
        sent
    }

    fn rows(&self) -> Vec<String> {
        let rt = self.rt.clone();
        let rows = self.run(async move { rt.list_descendants("root", &Signal::never()).await.unwrap() });
        rows.iter()
            .map(|r| match &r.row {
                Row::Child(c) => c.path_string().unwrap_or_else(|| c.id.clone()),
                Row::Diagnostic(d) => {
                    let at = d.entry.as_ref().map_or_else(String::new, |(seq, _)| format!("@{seq}"));
                    format!("{}!{}{at}", d.id, d.reason.as_str())
                }
            })
            .collect()
    }

    /// The input of every turn `name` ran.
    fn inputs(&self, name: &str) -> Vec<Vec<String>> {
        self.host.turns_of(name).into_iter().map(|t| t.input).collect()
    }
}

/// A tree written by one runtime: `lead` ran a turn on "first"; `alpha` and
/// `bravo` each ran their first turn, and `lead` one on each one's notice.
fn written() -> (Rc<MemoryStore>, String, String) {
    let logs = Rc::new(MemoryStore::new());
    let s = Setup::over(logs.clone(), "a");
    let root = s.open().unwrap();
    s.prompt(&root, "root", "first").unwrap();
    let alpha = s.spawn(&root, "alpha").unwrap();
    let bravo = s.spawn(&root, "bravo").unwrap();
    let inputs = s.inputs("lead");
    assert_eq!((inputs.len(), inputs[0].as_slice()), (3, &["first".to_owned()][..]));
    (logs, alpha, bravo)
}

fn catalog_of(id: &str) -> impl Fn(&SessionEvent) -> bool + '_ {
    move |e| e.payload.get("childId").and_then(Value::as_str) == Some(id)
}

#[test]
fn a_damaged_catalog_entry_and_message_cost_only_themselves() {
    let (logs, alpha, bravo) = written();
    let store = Damaging::new(logs);
    let seq = store.damage("root", event::CATALOG, "label", catalog_of(&alpha));
    store.damage("root", event::MESSAGE, "content", |_| true);

    // A restart: the root opens, lists and runs; nothing it had read runs again.
    let s = Setup::over(store.clone(), "b");
    let root = s.open().expect("the root opens over a damaged entry and message");
    assert_eq!(s.rows(), [format!("{alpha}!corrupt@{seq}"), "bravo".to_owned()]);
    assert!(s.host.turns_of("lead").is_empty(), "the consumed message is not delivered again");
    s.prompt(&root, "bravo", "again").unwrap();
    assert_eq!(s.inputs("bravo"), [["again"]], "a healthy sibling resumes by name");
    // The damaged entry is never a handle, and its name stays taken.
    assert_eq!(s.prompt(&root, "alpha", "hi").unwrap_err().code, ErrorCode::UnknownAgent);
    assert_eq!(s.prompt(&root, &alpha, "hi").unwrap_err().code, ErrorCode::NotResumable);
    assert_eq!(s.spawn(&root, "alpha").unwrap_err().code, ErrorCode::DuplicateName);
    // The root runs on (after bravo's new notice), and "first" never comes back.
    s.prompt(&root, "root", "second").unwrap();
    assert_eq!(s.inputs("lead").last().unwrap(), &["second"]);
    assert!(!s.inputs("lead").concat().iter().any(|i| i == "first" || i.contains("could not be read")));
    assert!(!bravo.is_empty());
}

#[test]
fn a_damaged_pending_message_is_input_that_says_it_could_not_be_read() {
    let (logs, _, _) = written();
    // A message accepted but not yet answered when the first runtime stopped.
    let prefix = logs.read_now("root", &ReadQuery::default()).unwrap();
    let accepted = prefix.iter().find(|e| e.kind == event::MESSAGE).unwrap();
    let mut payload = accepted.payload.as_object().unwrap().to_vec();
    for (k, v) in &mut payload {
        if k == "messageId" {
            *v = Value::from("m-pending");
        }
    }
    logs.append_now("root", vec![SessionEvent::new(prefix.len() as u64, event::MESSAGE, Value::Object(payload))])
        .unwrap();
    let store = Damaging::new(logs.clone());
    store.damage("root", event::MESSAGE, "content", |e| e.payload.get("messageId") == Some(&Value::from("m-pending")));

    // The root's next turn answers it, told that it could not be read.
    let s = Setup::over(store.clone(), "b");
    let root = s.open().unwrap();
    s.prompt(&root, "root", "next").unwrap();
    let inputs = s.inputs("lead");
    assert_eq!(inputs.len(), 1, "{inputs:?}");
    assert_eq!(inputs[0].len(), 2, "{inputs:?}");
    assert!(inputs[0][0].contains("could not be read from the session store"), "{:?}", inputs[0]);
    assert!(inputs[0][0].contains("payload.content is not well-formed Unicode"), "{:?}", inputs[0]);
    assert_eq!(inputs[0][1], "next");

    // It was consumed like any other: a third runtime never delivers it again.
    let s = Setup::over(store, "c");
    let root = s.open().unwrap();
    s.prompt(&root, "root", "last").unwrap();
    assert_eq!(s.inputs("lead"), [["last"]]);
}

#[test]
fn a_damaged_turn_end_never_delivers_its_input_twice() {
    let (logs, _, bravo) = written();
    let store = Damaging::new(logs);
    store.damage(&bravo, event::TURN_END, "consumed", |_| true);
    store.damage("root", event::TURN_END, "consumed", |_| true);
    let s = Setup::over(store, "b");
    let root = s.open().unwrap();
    assert!(s.host.turns_of("lead").is_empty() && s.host.turns_of("bravo").is_empty());
    s.prompt(&root, "root", "two").unwrap();
    assert_eq!(s.inputs("lead"), [["two"]]);
    s.prompt(&root, "bravo", "two").unwrap();
    assert_eq!(s.inputs("bravo"), [["two"]]);
}

#[test]
fn a_damaged_start_refuses_only_its_member() {
    let (logs, alpha, _) = written();
    let store = Damaging::new(logs);
    store.damage(&alpha, event::SESSION_START, "parentId", |_| true);
    let s = Setup::over(store.clone(), "b");
    let root = s.open().unwrap();
    assert_eq!(s.rows(), [format!("{alpha}!corrupt"), "bravo".to_owned()]);
    let err = s.prompt(&root, "alpha", "hi").unwrap_err();
    assert_eq!(err.code, ErrorCode::NotResumable, "{err}");
    s.prompt(&root, "bravo", "still here").unwrap();
    assert_eq!(s.inputs("bravo"), [["still here"]]);

    // A damaged budget record in the root's log: what the tree may spend is
    // unknown, so the root does not open (never as unlimited), and says why.
    let len = store.inner.read_now("root", &ReadQuery::default()).unwrap().len() as u64;
    let budget = Value::object([("sessionId", Some(Value::from("root"))), ("budget", Some(Value::Null))]);
    store.inner.append_now("root", vec![SessionEvent::new(len, event::BUDGET, budget)]).unwrap();
    store.damage("root", event::BUDGET, "budget", |_| true);
    let s = Setup::over(store, "c");
    let err = s.open().unwrap_err();
    assert_eq!(err.code, ErrorCode::NotResumable, "{err}");
    let expected = format!("its subagent/budget (event {len}) is damaged in the store: payload.budget");
    assert!(err.message.contains(&expected), "{err}");
}
