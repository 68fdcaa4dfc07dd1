//! Kept log summaries (issue 15, src/runtime/kept.rs): a resume through a kept
//! summary takes exactly what a full read takes, a stale summary is found and
//! a full read taken instead, and what a runtime keeps stays bounded.
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::TestHost;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use subagent_tree::event::SessionEvent;
use subagent_tree::exec::{LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::runtime::{InterruptAuthority, Scheduling};
use subagent_tree::store::{ReadResult, Store};
use subagent_tree::testkit;
use subagent_tree::{ActivationSpec, Agent, MemoryStore, ReadQuery, Result, Runtime, RuntimeOptions, Signal};

/// A store over a `MemoryStore` that can be swapped for another (a store
/// replaced or restored under a running runtime), recording each read's `fromSeq`.
struct SwapStore {
    inner: RefCell<Rc<MemoryStore>>,
    reads: RefCell<Vec<(String, u64)>>,
}

impl SwapStore {
    fn new(inner: Rc<MemoryStore>) -> Rc<SwapStore> {
        Rc::new(SwapStore { inner: RefCell::new(inner), reads: RefCell::default() })
    }

    fn inner(&self) -> Rc<MemoryStore> {
        self.inner.borrow().clone()
    }

    /// The `fromSeq` of every read of `id` since the last call.
    fn reads_of(&self, id: &str) -> Vec<u64> {
        let reads = std::mem::take(&mut *self.reads.borrow_mut());
        reads.into_iter().filter(|(s, _)| s == id).map(|(_, f)| f).collect()
    }
}

impl Store for SwapStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        let inner = self.inner();
        Box::pin(async move { inner.append_now(session, events) })
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        self.reads.borrow_mut().push((session.to_owned(), query.from_seq));
        let inner = self.inner();
        Box::pin(async move { Ok(inner.read_now(session, query)) })
    }
}

struct Setup {
    exec: LocalExecutor,
    store: Rc<SwapStore>,
    host: TestHost,
    rt: Runtime,
}

fn options() -> RuntimeOptions {
    RuntimeOptions { max_depth: 4, capacity: 64, ..RuntimeOptions::default() }
}

impl Setup {
    fn over(store: Rc<SwapStore>, prefix: &str) -> Setup {
        let exec = LocalExecutor::new();
        let host = TestHost::default();
        let rt = testkit::runtime(store.clone(), Rc::new(host.clone()), &exec, prefix, options());
        Setup { exec, store, host, rt }
    }

    fn run<T: 'static>(&self, fut: impl Future<Output = T> + 'static) -> T {
        self.exec.run_until(fut).expect("the future stalled")
    }

    fn root(&self) -> Agent {
        let rt = self.rt.clone();
        self.run(async move { rt.open_root(Some("root".into()), Some("/work".into())).await.unwrap() })
    }

    fn spawn(&self, parent: &Agent, name: Option<&str>) -> String {
        let spec = ActivationSpec::new("spawn", parent, "a task", "please do it");
        let spec = match name {
            Some(n) => spec.named(n),
            None => spec,
        };
        let rt = self.rt.clone();
        let a = self.run(async move { rt.start_activation(spec).await }).unwrap();
        a.child_id.clone()
    }

    fn send(&self, from: &Agent, to: &str, text: &str) {
        let (rt, from, to, text) = (self.rt.clone(), from.clone(), to.to_owned(), text.to_owned());
        self.run(async move { rt.send_message(&from, &to, Value::from(text.as_str()), &Signal::never()).await })
            .unwrap();
    }

    fn queue(&self, from: &Agent, to: &str, text: &str) {
        let (rt, from, to, text) = (self.rt.clone(), from.clone(), to.to_owned(), text.to_owned());
        self.run(async move {
            rt.prompt(&from, &to, Value::from(text.as_str()), Scheduling::Queue, &Signal::never()).await
        })
        .unwrap();
    }

    fn state(&self, id: &str) -> String {
        let (rt, id) = (self.rt.clone(), id.to_owned());
        self.run(async move { rt.resume_state(&id).await.unwrap() })
    }
}

/// What a full read gives: a fresh runtime over the same store keeps nothing yet.
fn full_read_state(store: &Rc<SwapStore>, id: &str) -> String {
    let fresh = Setup::over(SwapStore::new(store.inner()), "fresh");
    fresh.state(id)
}

#[test]
fn a_resume_through_a_kept_summary_takes_what_a_full_read_takes() {
    let s = Setup::over(SwapStore::new(Rc::new(MemoryStore::new())), "a");
    let root = s.root();
    let worker = s.spawn(&root, Some("worker"));
    s.exec.run_idle();
    let mut tail_reads = 0;
    for i in 0..30 {
        match i % 6 {
            // A held turn: the log shows a turn that started and has not ended.
            2 => {
                let gate = s.host.hold("worker");
                s.send(&root, &worker, &format!("message {i}"));
                s.exec.run_idle();
                s.queue(&root, &worker, &format!("queued {i}"));
                assert_eq!(s.state(&worker), full_read_state(&s.store, &worker), "mid-turn, step {i}");
                // Interrupted: the queued message stays pending, parked.
                s.rt.interrupt(&worker, InterruptAuthority::User).unwrap();
                s.exec.run_idle();
                drop(gate);
                s.host.open("worker");
            }
            // More children under the root (its catalog grows) and under the worker's name space.
            4 => {
                s.spawn(&root, None);
                s.spawn(&root, Some(&format!("helper-{i}")));
                s.exec.run_idle();
            }
            _ => {
                s.send(&root, &worker, &format!("message {i}"));
                s.exec.run_idle();
            }
        }
        s.store.reads_of(&worker);
        let kept = s.state(&worker);
        let reads = s.store.reads_of(&worker);
        assert_eq!(reads.len(), 1, "one read, step {i}: {reads:?}");
        tail_reads += usize::from(reads[0] > 0);
        assert_eq!(kept, full_read_state(&s.store, &worker), "worker, step {i}");
        assert_eq!(s.state("root"), full_read_state(&s.store, "root"), "root, step {i}");
    }
    assert_eq!(tail_reads, 30, "every load after the first read only the tail");
    // The worker's turns saw every message once, in order, as without summaries.
    let inputs: Vec<Vec<String>> = s.host.turns_of("worker").into_iter().map(|t| t.input).collect();
    assert_eq!(inputs.iter().flatten().filter(|m| m.starts_with("queued")).count(), 5, "{inputs:?}");
}

#[test]
fn events_another_runtime_appended_are_folded_in() {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let a = Setup::over(store.clone(), "a");
    let root = a.root();
    let worker = a.spawn(&root, Some("worker"));
    a.exec.run_idle();
    a.send(&root, &worker, "from a");
    a.exec.run_idle();
    a.state(&worker);
    let seen = store.inner().len(&worker);

    // Another runtime over the same store messages the worker and spawns under it.
    {
        let b = Setup::over(SwapStore::new(store.inner()), "b");
        let b_root = b.root();
        b.send(&b_root, &worker, "from b");
        b.exec.run_idle();
        assert_eq!(b.host.turns_of("worker").len(), 1);
    }
    assert!(store.inner().len(&worker) > seen, "b appended to the worker's log");
    store.reads_of(&worker);
    assert_eq!(a.state(&worker), full_read_state(&store, &worker));
    assert_eq!(store.reads_of(&worker), [seen - 1], "one tail read from the last event a saw");
    // And the next message from a continues the log where b left it.
    a.send(&root, &worker, "from a again");
    a.exec.run_idle();
    let turns = a.host.turns_of("worker");
    assert_eq!(turns.last().unwrap().input, ["from a again"]);
    assert_eq!(a.state(&worker), full_read_state(&store, &worker));
}

/// A copy of `from` where `id`'s log is rebuilt by `f`.
fn replaced(from: &MemoryStore, id: &str, f: impl Fn(Vec<SessionEvent>) -> Vec<SessionEvent>) -> Rc<MemoryStore> {
    let to = Rc::new(MemoryStore::new());
    for s in from.sessions() {
        let events = from.read_now(&s, &ReadQuery::default()).unwrap();
        let events = if s == id { f(events) } else { events };
        to.append_now(&s, events).unwrap();
    }
    to
}

#[test]
fn a_stale_summary_is_found_and_a_full_read_taken_instead() {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let s = Setup::over(store.clone(), "a");
    let root = s.root();
    let worker = s.spawn(&root, Some("worker"));
    s.exec.run_idle();
    for i in 0..3 {
        s.send(&root, &worker, &format!("message {i}"));
        s.exec.run_idle();
    }
    s.state(&worker);
    let len = store.inner().len(&worker);
    let original = replaced(&store.inner(), &worker, |log| log);

    // The store is restored from an older copy: the worker's log is shorter.
    let older = replaced(&store.inner(), &worker, |mut log| {
        log.truncate(log.len() - 3);
        log
    });
    *store.inner.borrow_mut() = older;
    store.reads_of(&worker);
    assert_eq!(s.state(&worker), full_read_state(&store, &worker), "shorter log");
    assert_eq!(store.reads_of(&worker), [len - 1, 0], "the tail read found it stale, then a full read");

    // Same length, another last event (a log rewritten under the runtime).
    let len = store.inner().len(&worker);
    let rewritten = replaced(&store.inner(), &worker, |mut log| {
        let last = log.pop().unwrap();
        log.push(SessionEvent::new(last.seq, "test/other", Value::from("rewritten")));
        log
    });
    *store.inner.borrow_mut() = rewritten;
    assert_eq!(s.state(&worker), full_read_state(&store, &worker), "rewritten last event");
    assert_eq!(store.reads_of(&worker), [len - 1, 0]);

    // Gone altogether: as a full read finds it (an empty log).
    let without = Rc::new(MemoryStore::new());
    *store.inner.borrow_mut() = without;
    assert_eq!(s.state(&worker), full_read_state(&store, &worker), "gone");

    // Back to the log as it was: a message resumes the worker and its turn
    // writes where the log really ends (a stale length would conflict).
    *store.inner.borrow_mut() = original;
    store.reads_of("root");
    s.send(&root, &worker, "after the restore");
    s.exec.run_idle();
    assert!(!store.reads_of("root").is_empty(), "a stale summary dropped the kept rows: the tree is listed again");
    assert_eq!(s.host.turns_of("worker").last().unwrap().input, ["after the restore"]);
    assert_eq!(s.state(&worker), full_read_state(&store, &worker));
}

#[test]
fn what_a_runtime_keeps_stays_bounded() {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let s = Setup::over(store.clone(), "a");
    let root = s.root();
    let max = Runtime::MAX_KEPT;
    // Spawn/settle cycles under one root, well past the bound, each child's
    // log then read as a resume reads it (which keeps its summary).
    let mut peak = 0;
    let mut first = None;
    for _ in 0..max + max / 2 {
        let id = s.spawn(&root, None);
        s.exec.run_idle();
        s.state(&id);
        first.get_or_insert(id);
        peak = peak.max(s.rt.kept_sessions());
    }
    let first = first.unwrap();
    assert!(peak <= max, "kept {peak} > {max}");
    assert!(s.rt.kept_sessions() > max / 2, "eviction drops only a part");
    // Default names stayed dense with the root's floor kept (it is used on every spawn).
    let names: Vec<String> =
        s.host.0.turns.borrow().iter().map(|t| t.name.clone()).filter(|n| n.starts_with("agent-")).collect();
    assert_eq!(names.last().map(String::as_str), Some(format!("agent-{}", max + max / 2).as_str()));
    // An evicted summary only means a full read, and the first child still resumes.
    store.reads_of(&first);
    assert_eq!(s.state(&first), full_read_state(&store, &first));
    assert_eq!(store.reads_of(&first), [0], "evicted: one full read");
    s.send(&root, &first, "still there?");
    s.exec.run_idle();
    assert_eq!(s.host.turns_of("agent-1").last().unwrap().input, ["still there?"]);
    assert_eq!(s.state(&first), full_read_state(&store, &first));
}

#[test]
fn a_second_cold_resume_lists_nothing_and_keeps_the_full_name() {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let s = Setup::over(store.clone(), "a");
    let root = s.root();
    s.host.hold("reviewer");
    let reviewer = s.spawn(&root, Some("reviewer"));
    let reviewer_agent = s.rt.agent(&reviewer).unwrap();
    let checker = s.spawn(&reviewer_agent, Some("checker"));
    s.host.open("reviewer");
    s.exec.run_idle();
    assert_eq!(s.rt.resident(), ["root"], "everything settled");
    for i in 0..3 {
        store.reads_of("root");
        s.send(&root, &checker, &format!("again {i}"));
        s.exec.run_idle();
        let turn = s.host.turns_of("reviewer/checker").pop().unwrap();
        assert_eq!(turn.input, [format!("again {i}")]);
        assert_eq!(turn.parent_name.as_deref(), Some("reviewer"));
        // The first resume lists the tree (the root's catalog); the next ones take the kept rows.
        let root_reads = store.reads_of("root").len();
        assert_eq!(root_reads, usize::from(i == 0), "resume {i}: {root_reads} reads of the root");
        assert!(!s.rt.resident().contains(&reviewer), "the creator stays cold");
    }
    // A member of another root's tree is not taken for one of this tree.
    let (rt, id) = (s.rt.clone(), checker.clone());
    let other = s.run(async move { rt.open_root(Some("other".into()), None).await.unwrap() });
    let (rt, o) = (s.rt.clone(), other.clone());
    let refused = s.run(async move { rt.send_message(&o, &id, Value::from("x"), &Signal::never()).await });
    assert!(refused.is_err(), "outside the other root's tree");
}

impl SwapStore {
    /// The sessions read since the last call, in order.
    fn sessions_read(&self) -> Vec<String> {
        std::mem::take(&mut *self.reads.borrow_mut()).into_iter().map(|(s, _)| s).collect()
    }

    /// The distinct sessions read since the last call, sorted.
    fn distinct_reads(&self) -> Vec<String> {
        let mut read = self.sessions_read();
        read.sort();
        read.dedup();
        read
    }
}

/// `ids`, sorted (to compare with `distinct_reads`).
fn sorted(ids: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    ids.sort();
    ids
}

/// A root with `wide` named children, each with `wide` named children of its own.
fn wide_tree(s: &Setup, root: &Agent, wide: usize) -> Vec<(String, Vec<String>)> {
    let mut tree = Vec::new();
    for i in 0..wide {
        s.host.hold(&format!("m{i}"));
        let id = s.spawn(root, Some(&format!("m{i}")));
        let agent = s.rt.agent(&id).unwrap();
        let kids = (0..wide).map(|j| s.spawn(&agent, Some(&format!("k{j}")))).collect();
        s.host.open(&format!("m{i}"));
        s.exec.run_idle();
        tree.push((id, kids));
    }
    assert_eq!(s.rt.resident(), ["root"], "everything settled");
    tree
}

/// Logs holding a [`wide_tree`], built by a runtime that is then dropped.
fn stored_wide_tree(wide: usize) -> (Rc<SwapStore>, Vec<(String, Vec<String>)>) {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let built = Setup::over(store.clone(), "a");
    let root = built.root();
    let tree = wide_tree(&built, &root, wide);
    (store, tree)
}

/// A fresh runtime (nothing kept) over `logs`, its root open and its
/// open-time recovery done.
fn restarted(logs: Rc<MemoryStore>) -> (Setup, Agent) {
    let s = Setup::over(SwapStore::new(logs), "b");
    let root = s.root();
    s.exec.run_idle();
    (s, root)
}

#[test]
fn a_cold_resume_reads_the_logs_on_its_way_up_not_the_tree() {
    let (store, tree) = stored_wide_tree(4);
    let (creator, kids) = &tree[2];

    // A fresh runtime (nothing kept) over the same logs.
    let (s, root) = restarted(store.inner());
    s.store.sessions_read();
    s.send(&root, &kids[1], "again");
    s.exec.run_idle();
    let turn = s.host.turns_of("m2/k1").pop().expect("resumed under its full name");
    assert_eq!((turn.input.as_slice(), turn.parent_name.as_deref()), (&["again".to_owned()][..], Some("m2")));
    assert_eq!(
        s.store.distinct_reads(),
        sorted(&[&kids[1], creator, "root"]),
        "only the member, its creator and the root are read"
    );

    // A sibling's walk stops at the creator, whose rows are kept now.
    s.send(&root, &kids[3], "you too");
    s.exec.run_idle();
    assert_eq!(s.host.turns_of("m2/k3").len(), 1);
    let read = s.store.sessions_read();
    assert!(!read.contains(&"root".to_owned()), "the root's catalog is not read again: {read:?}");
    assert!(!read.iter().any(|id| tree.iter().any(|(m, ks)| m != creator && (ks.contains(id) || m == id))));
}

/// Membership holds both ways (issue 49): a member whose own start marker
/// names another creator than the catalog that lists it is foreign to that
/// catalog: never resumed, messaged or written, whatever the catalogs say.
#[test]
fn a_start_marker_that_names_another_creator_makes_the_member_foreign() {
    let (store, tree) = stored_wide_tree(2);
    let (target, liar) = (tree[0].1[0].clone(), tree[1].0.clone());
    // The member's start marker claims the other creator, whose catalog does not hold it.
    let forged = replaced(&store.inner(), &target, |mut events| {
        let start = events.iter_mut().find(|e| e.kind == "session/start").unwrap();
        if let Value::Object(fields) = &mut start.payload {
            let parent = fields.iter_mut().find(|(k, _)| k == "parentId").expect("a parentId");
            parent.1 = Value::from(liar.as_str());
        }
        events
    });
    let (s, root) = restarted(forged);
    let before = s.store.inner().read_now(&target, &subagent_tree::store::ReadQuery::default()).unwrap().len();
    let (rt, from, to) = (s.rt.clone(), root.clone(), target.clone());
    let sent = s.run(async move { rt.send_message(&from, &to, Value::from("who made you"), &Signal::never()).await });
    let e = sent.unwrap_err();
    assert!(matches!(e.code, subagent_tree::ErrorCode::NotResumable | subagent_tree::ErrorCode::Unauthorized), "{e:?}");
    s.exec.run_idle();
    assert!(s.host.turns_of("m0/k0").is_empty() && s.host.turns_of(&target).is_empty(), "no turn ran");
    let after = s.store.inner().read_now(&target, &subagent_tree::store::ReadQuery::default()).unwrap().len();
    assert_eq!(before, after, "nothing was written to its log");
    let rt = s.rt.clone();
    let listed = s.run(async move { rt.list_descendants("root", &Signal::never()).await.unwrap() });
    let row = listed.iter().find(|r| r.row.id() == target).expect("listed");
    assert!(
        matches!(&row.row, subagent_tree::Row::Diagnostic(d) if d.reason == subagent_tree::listing::DiagnosticReason::Foreign)
    );
}

#[test]
fn the_send_message_tool_reads_the_logs_on_the_way_to_its_target_not_the_tree() {
    let (store, tree) = stored_wide_tree(4);
    let (creator, kids) = &tree[1];

    let (s, root) = restarted(store.inner());
    s.store.sessions_read();
    let call = |agent: &str| {
        let tools = s.rt.tools_for(&root).unwrap();
        let input = Value::object([("agent", Some(Value::from(agent))), ("message", Some(Value::from("hello")))]);
        s.run(async move { tools.call(subagent_tree::tools::SEND_MESSAGE, &input, &Signal::never()).await })
    };
    let sent = call("m1/k2");
    assert!(!sent.is_error, "{}", sent.content);
    assert!(sent.content.contains("m1/k2"), "{}", sent.content);
    s.exec.run_idle();
    assert_eq!(s.host.turns_of("m1/k2").len(), 1);
    assert_eq!(
        s.store.distinct_reads(),
        sorted(&[&kids[2], creator, "root"]),
        "only the target, its creator and the root are read"
    );

    // A refusal still suggests the names close to the typo (that lists the tree).
    let typo = call("m1/k22");
    assert!(typo.is_error && typo.content.contains("did you mean `m1/k2`"), "{}", typo.content);
}

#[test]
fn a_fork_is_found_through_its_own_start_marker_not_the_inherited_one() {
    let store = SwapStore::new(Rc::new(MemoryStore::new()));
    let built = Setup::over(store.clone(), "a");
    let root = built.root();
    built.spawn(&root, Some("other")); // a listing would read it too
    built.host.hold("m0");
    let m0 = built.spawn(&root, Some("m0"));
    let m0_agent = built.rt.agent(&m0).unwrap();
    // m0 finishes a turn and stays resident (it owns a working child), so a
    // fork of it inherits that turn, m0's own start marker (creator: root) first.
    built.host.hold("m0/keep");
    built.spawn(&m0_agent, Some("keep"));
    built.host.open("m0");
    built.exec.run_idle();
    let spec = ActivationSpec::new("fork", &m0_agent, "a fork", "carry on").named("f");
    let rt = built.rt.clone();
    let f = built.run(async move { rt.start_activation(spec).await }).unwrap().child_id.clone();
    built.host.open("m0/keep");
    built.exec.run_idle();
    assert_eq!(built.rt.resident(), ["root"], "everything settled");
    let inherited = store.inner().read_now(&f, &ReadQuery::default()).unwrap();
    assert_eq!(inherited[0].kind, "session/start", "the fork's log starts with m0's start marker");

    let (s, root) = restarted(store.inner());
    s.store.sessions_read();
    s.send(&root, &f, "and then");
    s.exec.run_idle();
    let turn = s.host.turns_of("m0/f").pop().expect("resumed under its full name");
    assert_eq!(turn.parent_name.as_deref(), Some("m0"));
    assert_eq!(s.store.distinct_reads(), sorted(&[&f, &m0, "root"]), "only the logs on the fork's way up");
}
