//! Native benchmarks of the live runtime (issue 3; `cargo bench --bench runtime`,
//! `harness = false`). Every case drives a real [`Runtime`] on the core's
//! local executor with a benchmark agent host; figures are medians of timed
//! runs after warm-up, with setup and teardown outside the timing.
//!
//! Cases (filter with `cargo bench --bench runtime -- <case>`):
//! - `writes`: store appends per spawn, counted per session (the child's log
//!   and the parent's catalog fact), for `spawn` and `fork`.
//! - `spawn`: 1,000 children of one root (turns held open), sequential with
//!   default and explicit names, and concurrent; and 1,000 children that each
//!   run one turn and settle, notifying the root.
//! - `message`: `send_message` to an idle member until the host's `run_turn`
//!   is called (and until the send resolves).
//! - `memory`: live heap bytes per resident member (a counting global
//!   allocator in this binary), with a store that keeps nothing and with
//!   `MemoryStore`.
//! - `restart`: a 10,000-member tree built through the runtime, then a fresh
//!   runtime over the same store: open the root and list; resume one deep
//!   member by a message (by Session id, and by full name through the
//!   `send_message` tool).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hint::black_box;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use subagent_tree::event::SessionEvent;
use subagent_tree::exec::{Deferred, LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::ports::{AgentHost, Turn, TurnOutcome};
use subagent_tree::store::ReadResult;
use subagent_tree::testkit::{self, completed};
use subagent_tree::{ActivationSpec, Agent, MemoryStore, ReadQuery, Result, Runtime, RuntimeOptions, Signal, Store};

// ---- a counting global allocator -------------------------------------------------

/// Counts live heap bytes and allocations of this process.
struct Counting;

static LIVE: AtomicI64 = AtomicI64::new(0);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live_bytes() -> i64 {
    LIVE.load(Ordering::Relaxed)
}

// ---- timing helpers -----------------------------------------------------------------

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// 1234567.8 -> "1,234,568".
fn group(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn sorted(mut xs: Vec<Duration>) -> Vec<Duration> {
    xs.sort();
    xs
}

fn pct(xs: &[Duration], p: f64) -> Duration {
    xs[((xs.len() - 1) as f64 * p).round() as usize]
}

/// Times `run(setup())` `runs` times after `warmup` untimed calls; setup and
/// the drop of what `run` returns are not timed. Prints the median per op.
fn bench<S, T>(
    label: &str,
    op: &str,
    ops: u64,
    warmup: usize,
    runs: usize,
    mut setup: impl FnMut() -> S,
    mut run: impl FnMut(S) -> T,
) -> Duration {
    for _ in 0..warmup {
        let s = setup();
        drop(run(s));
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let s = setup();
        let start = Instant::now();
        let out = run(s);
        times.push(start.elapsed());
        drop(out);
    }
    let times = sorted(times);
    let median = times[runs / 2];
    let ns_per_op = median.as_nanos() as f64 / ops as f64;
    println!(
        "{label:<72} {:>10.3} ms/run {:>10.2} µs/{op:<7} {:>10}/s   (median of {runs}; min {:.3}, max {:.3} ms)",
        ms(median),
        ns_per_op / 1e3,
        group(1e9 / ns_per_op),
        ms(times[0]),
        ms(times[runs - 1]),
    );
    median
}

// ---- ports ------------------------------------------------------------------------------

/// The benchmark host: turns of members whose full name is held (or of every
/// child, with `hold_children`) stay open until aborted; others complete at
/// once with one message. Records when each turn started.
#[derive(Default)]
struct HostState {
    hold_children: Cell<bool>,
    /// Turns of these members wait for their gate (or an abort).
    gates: RefCell<HashMap<String, Deferred<()>>>,
    started: RefCell<Vec<(String, Instant)>>,
    turns: Cell<u64>,
}

#[derive(Clone, Default)]
struct BenchHost(Rc<HostState>);

impl BenchHost {
    fn holding_children() -> BenchHost {
        let h = BenchHost::default();
        h.0.hold_children.set(true);
        h
    }

    fn hold(&self, name: &str) {
        self.0.gates.borrow_mut().insert(name.to_owned(), Deferred::new());
    }

    fn open(&self, name: &str) {
        if let Some(gate) = self.0.gates.borrow_mut().remove(name) {
            gate.set(());
        }
    }

    fn last_start_of(&self, name: &str) -> Option<Instant> {
        self.0.started.borrow().iter().rev().find(|(n, _)| n == name).map(|(_, t)| *t)
    }
}

impl AgentHost for BenchHost {
    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        let state = self.0.clone();
        state.turns.set(state.turns.get() + 1);
        let gate = state.gates.borrow().get(&turn.name).cloned();
        let gate = gate.or_else(|| (state.hold_children.get() && turn.parent_name.is_some()).then(Deferred::new));
        if !state.hold_children.get() || gate.is_none() {
            // Recording every start of 10,000 held turns is not what is measured.
            state.started.borrow_mut().push((turn.name.clone(), Instant::now()));
        }
        Box::pin(async move {
            if let Some(gate) = gate {
                let opened = turn
                    .signal
                    .guard(async move {
                        gate.wait().await;
                        Ok(())
                    })
                    .await;
                if opened.is_err() {
                    return Ok(TurnOutcome { stop_reason: "aborted".into(), ..TurnOutcome::default() });
                }
            }
            Ok(completed("done"))
        })
    }
}

/// Per session: (append calls, events appended, event kinds).
#[derive(Clone, Default)]
struct Appends(u64, u64, Vec<String>);

/// A store that records appends per session and delegates to a `MemoryStore`.
struct CountingStore {
    inner: Rc<MemoryStore>,
    /// Appends recorded since the last `take`, per session.
    appends: RefCell<HashMap<String, Appends>>,
}

impl CountingStore {
    fn new(inner: Rc<MemoryStore>) -> CountingStore {
        CountingStore { inner, appends: RefCell::default() }
    }

    fn take(&self) -> HashMap<String, Appends> {
        std::mem::take(&mut *self.appends.borrow_mut())
    }
}

impl Store for CountingStore {
    fn append<'a>(&'a self, session: &'a str, events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        {
            let mut map = self.appends.borrow_mut();
            let entry = map.entry(session.to_owned()).or_default();
            entry.0 += 1;
            entry.1 += events.len() as u64;
            entry.2.extend(events.iter().map(|e| e.kind.clone()));
        }
        self.inner.append(session, events)
    }

    fn read<'a>(&'a self, session: &'a str, query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        self.inner.read(session, query)
    }

    fn read_many<'a>(
        &'a self,
        sessions: &'a [String],
        query: &'a ReadQuery,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<ReadResult>>>> {
        self.inner.read_many(sessions, query)
    }
}

/// A store that keeps nothing (appends succeed, every session is absent): the
/// runtime's own memory without the logs.
struct DiscardStore;

impl Store for DiscardStore {
    fn append<'a>(&'a self, _session: &'a str, _events: Vec<SessionEvent>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn read<'a>(&'a self, _session: &'a str, _query: &'a ReadQuery) -> LocalBoxFuture<'a, ReadResult> {
        Box::pin(async { Ok(None) })
    }
}

// ---- a driven runtime ----------------------------------------------------------------------

struct Bench {
    exec: LocalExecutor,
    host: BenchHost,
    rt: Runtime,
}

impl Bench {
    fn new(store: Rc<dyn Store>, host: BenchHost, prefix: &str, options: RuntimeOptions) -> Bench {
        let exec = LocalExecutor::new();
        let rt = testkit::runtime(store, Rc::new(host.clone()), &exec, prefix, options);
        Bench { exec, host, rt }
    }

    fn run<T: 'static>(&self, fut: impl std::future::Future<Output = T> + 'static) -> T {
        self.exec.run_until(fut).expect("the benchmark stalled")
    }

    fn root(&self) -> Agent {
        let rt = self.rt.clone();
        self.run(async move { rt.open_root(Some("root".into()), Some("/work".into())).await.unwrap() })
    }

    fn start(&self, spec: ActivationSpec) -> subagent_tree::Activation {
        let rt = self.rt.clone();
        self.run(async move { rt.start_activation(spec).await.unwrap() })
    }

    fn drain(&self, root: &Agent) {
        let (rt, root) = (self.rt.clone(), root.clone());
        self.run(async move { rt.drain_descendants(&[root]).await.unwrap() });
        self.exec.run_idle();
    }
}

fn options(capacity: usize, max_depth: u32) -> RuntimeOptions {
    RuntimeOptions { capacity, max_depth, ..RuntimeOptions::default() }
}

fn spawn_spec(parent: &Agent, name: Option<String>) -> ActivationSpec {
    let mut spec = ActivationSpec::new("spawn", parent, "bench task", "please do it");
    spec.name = name;
    spec
}

// ---- cases ---------------------------------------------------------------------------------

fn case_writes() {
    println!("== store writes per spawn (store appends counted per session)");
    for provider in ["spawn", "fork"] {
        let memory = Rc::new(MemoryStore::new());
        let store = Rc::new(CountingStore::new(memory));
        let b = Bench::new(store.clone(), BenchHost::holding_children(), "w", options(200, 1));
        let root = b.root();
        // The root completes one turn first, so fork has a completed-turn prefix to seed.
        let (rt, r) = (b.rt.clone(), root.clone());
        b.run(async move {
            rt.prompt(&r, "root", Value::from("hello"), subagent_tree::runtime::Scheduling::Queue, &Signal::never())
                .await
        })
        .unwrap();
        b.exec.run_idle();
        store.take();
        const SPAWNS: usize = 100;
        let mut first = None;
        for i in 0..SPAWNS {
            let mut spec = spawn_spec(&root, Some(format!("w-{i}")));
            spec.provider = provider.into();
            let a = b.start(spec);
            let writes = store.take();
            let child = writes.get(&a.child_id).cloned().unwrap_or_default();
            let parent = writes.get("root").cloned().unwrap_or_default();
            let others: u64 = writes.iter().filter(|(k, _)| *k != "root" && **k != a.child_id).map(|(_, v)| v.0).sum();
            // One append creates the log; the first turn then records its start
            // (`turn/start`, the crash-recovery marker) before the host runs it.
            assert_eq!(child.0, 2, "{provider}: the child's log is written in one append, then turn/start");
            assert_eq!(child.2.last().map(String::as_str), Some("turn/start"), "{provider}: {:?}", child.2);
            assert_eq!(parent.0, 1, "{provider}: the parent gets exactly one append (the catalog fact)");
            assert_eq!(parent.2, ["subagent/catalog"], "{provider}: that append is the catalog fact alone");
            assert_eq!(others, 0, "{provider}: no other session is written");
            first.get_or_insert((child, parent));
        }
        let (child, parent) = first.unwrap();
        println!(
            "{:<72} {} appends per spawn: child log {} appends ({} events: {}), parent {} append ({} event: {}); other sessions 0 (checked on each of {SPAWNS} spawns)",
            format!("writes: {provider}"),
            child.0 + parent.0,
            child.0,
            child.1,
            child.2.join(", "),
            parent.0,
            parent.1,
            parent.2.join(", "),
        );
        b.drain(&root);
    }
    println!(
        "{:<72} (the child's first turn appends turn/end to its own log later; that is a turn, not the spawn)\n",
        ""
    );
}

fn case_spawn() {
    println!("== spawn 1,000 children of one root (capacity 2,000)");
    const N: usize = 1_000;
    let setup = || {
        let b = Bench::new(Rc::new(MemoryStore::new()), BenchHost::holding_children(), "s", options(2 * N, 1));
        let root = b.root();
        (b, root)
    };
    bench("spawn: 1,000 children, sequential, default names (agent-N)", "child", N as u64, 1, 9, setup, |(b, root)| {
        let rt = b.rt.clone();
        let r = root.clone();
        b.run(async move {
            for _ in 0..N {
                black_box(rt.start_activation(spawn_spec(&r, None)).await.unwrap());
            }
        });
        assert_eq!(b.rt.resident().len(), N + 1);
        (b, root)
    });
    bench("spawn: 1,000 children, sequential, explicit names", "child", N as u64, 1, 9, setup, |(b, root)| {
        let rt = b.rt.clone();
        let r = root.clone();
        b.run(async move {
            for i in 0..N {
                black_box(rt.start_activation(spawn_spec(&r, Some(format!("worker-{i}")))).await.unwrap());
            }
        });
        (b, root)
    });
    bench(
        "spawn: 1,000 children, all started concurrently, default names",
        "child",
        N as u64,
        1,
        9,
        setup,
        |(b, root)| {
            let done = Rc::new(Cell::new(0usize));
            for _ in 0..N {
                let (rt, r, done) = (b.rt.clone(), root.clone(), done.clone());
                b.exec.spawn(Box::pin(async move {
                    rt.start_activation(spawn_spec(&r, None)).await.unwrap();
                    done.set(done.get() + 1);
                }));
            }
            b.exec.run_idle();
            assert_eq!(done.get(), N);
            (b, root)
        },
    );
    let setup_running = || {
        let b = Bench::new(Rc::new(MemoryStore::new()), BenchHost::default(), "s", options(2 * N, 1));
        let root = b.root();
        (b, root)
    };
    bench(
        "spawn: 1,000 children that each run a turn and settle (root notified)",
        "child",
        N as u64,
        1,
        9,
        setup_running,
        |(b, root)| {
            let rt = b.rt.clone();
            let r = root.clone();
            b.run(async move {
                for _ in 0..N {
                    rt.start_activation(spawn_spec(&r, None)).await.unwrap();
                }
            });
            b.exec.run_idle();
            assert_eq!(b.rt.resident().len(), 1, "every child settled");
            (b, root)
        },
    );
    println!();
}

fn case_message() {
    println!("== message delivery latency: send_message to an idle member until the host's run_turn is called");
    // lead -> worker (idle after its first turn) -> keeper (held: keeps worker resident).
    let b = Bench::new(Rc::new(MemoryStore::new()), BenchHost::default(), "m", options(8, 2));
    b.host.hold("worker");
    b.host.hold("worker/keeper");
    let root = b.root();
    let worker = b.start(spawn_spec(&root, Some("worker".into())));
    let worker_agent = worker.agent().unwrap();
    let keeper = b.start(spawn_spec(&worker_agent, Some("keeper".into())));
    b.host.open("worker");
    b.exec.run_idle();
    assert!(!b.rt.is_running(&worker.child_id), "worker is idle");
    let run_latency = |sender: &Agent, target: &str, target_name: &str, samples: usize| {
        let mut to_turn = Vec::with_capacity(samples);
        let mut to_accept = Vec::with_capacity(samples);
        for _ in 0..samples {
            let accepted: Rc<Cell<Option<Instant>>> = Rc::default();
            let (rt, s, t, acc) = (b.rt.clone(), sender.clone(), target.to_owned(), accepted.clone());
            let t0 = Instant::now();
            b.exec.spawn(Box::pin(async move {
                rt.send_message(&s, &t, Value::from("ping"), &Signal::never()).await.unwrap();
                acc.set(Some(Instant::now()));
            }));
            b.exec.run_idle();
            let started = b.host.last_start_of(target_name).expect("the turn started");
            assert!(started >= t0);
            to_turn.push(started - t0);
            to_accept.push(accepted.get().unwrap() - t0);
        }
        (sorted(to_turn), sorted(to_accept))
    };
    let report = |label: &str, (turn, accept): (Vec<Duration>, Vec<Duration>)| {
        println!(
            "{label:<72} to run_turn: median {:.2} µs, p90 {:.2}, p99 {:.2}, min {:.2} | send resolved: median {:.2} µs  ({} samples)",
            us(pct(&turn, 0.5)),
            us(pct(&turn, 0.9)),
            us(pct(&turn, 0.99)),
            us(turn[0]),
            us(pct(&accept, 0.5)),
            turn.len()
        );
    };
    run_latency(&root, &worker.child_id, "worker", 200); // warm-up
    report("message: lead -> idle child worker", run_latency(&root, &worker.child_id, "worker", 2_000));
    report(
        "message: worker/keeper (running) -> idle root lead",
        run_latency(&keeper.agent().unwrap(), "root", "lead", 2_000),
    );
    b.drain(&root);
    println!();
}

fn case_memory() {
    println!("== memory per resident member (live heap bytes, counting allocator; turns held open)");
    const N: usize = 1_000;
    for (label, memory) in
        [("a store that keeps nothing (runtime only)", false), ("MemoryStore (runtime + logs)", true)]
    {
        let store: Rc<dyn Store> = if memory { Rc::new(MemoryStore::new()) } else { Rc::new(DiscardStore) };
        let b = Bench::new(store, BenchHost::holding_children(), "x", options(2 * N, 1));
        let root = b.root();
        let start = live_bytes();
        let mut retained = Vec::new();
        let mut first = None;
        // Two cycles of N resident members, each drained: the second shows what a cycle leaves behind.
        for cycle in 0..2 {
            let before = live_bytes();
            let allocs_before = ALLOCS.load(Ordering::Relaxed);
            let mut held = Vec::with_capacity(N);
            for i in 0..N {
                held.push(b.start(spawn_spec(&root, Some(format!("c{cycle}-worker-{i}")))));
            }
            b.exec.run_idle();
            assert_eq!(b.rt.resident().len(), N + 1);
            let after = live_bytes();
            let allocs = ALLOCS.load(Ordering::Relaxed) - allocs_before;
            first.get_or_insert(((after - before) as f64 / N as f64, allocs as f64 / N as f64));
            for a in held {
                drop(a.dispose());
            }
            b.exec.run_idle();
            assert_eq!(b.rt.resident().len(), 1);
            retained.push((live_bytes() - start) as f64 / N as f64);
        }
        let (per, allocs) = first.unwrap();
        println!(
            "{:<72} {:>6.0} bytes/member live ({:.0} KiB for {N}); {:.0} allocations/member while spawning; retained after disposal: {:+.0} B/member (1 cycle), {:+.0} (2 cycles)",
            format!("memory: {label}"),
            per,
            per * N as f64 / 1024.0,
            allocs,
            retained[0],
            retained[1],
        );
    }
    println!(
        "{:<72} (includes the host's held turn future and its Turn; what a disposed cycle retains is the root's committed child names, map capacity and executor task slots)\n",
        ""
    );
}

/// Fan-outs 10, 9, 10, 10: 10 + 90 + 900 + 9,000 = 10,000 members, depth 4.
const FANOUT: [usize; 4] = [10, 9, 10, 10];

fn case_restart() {
    println!("== 10,000-member cold restart (built through the runtime, fan-outs 10/9/10/10, depth 4)");
    let store = Rc::new(MemoryStore::new());
    let build = Bench::new(store.clone(), BenchHost::holding_children(), "b", options(10_000, 4));
    let root = build.root();
    let t0 = Instant::now();
    let mut level = vec![root.clone()];
    let mut members = 0;
    let mut deepest = None;
    for fanout in FANOUT {
        let mut next = Vec::with_capacity(level.len() * fanout);
        for parent in &level {
            for _ in 0..fanout {
                let a = build.start(spawn_spec(parent, None));
                deepest = Some((a.child_id.clone(), a.name.clone()));
                next.push(a.agent().unwrap());
                members += 1;
            }
        }
        level = next;
    }
    let built = t0.elapsed();
    assert_eq!(members, 10_000);
    build.exec.run_idle();
    let t1 = Instant::now();
    build.drain(&root);
    let drained = t1.elapsed();
    let (rt, r) = (build.rt.clone(), root.clone());
    build.run(async move { rt.close_root(&r).await.unwrap() });
    drop(level);
    drop(build);
    let (deep_id, deep_name) = deepest.unwrap();
    println!(
        "{:<72} built 10,000 resident members in {:.1} ms ({:.1} µs/member); drained child-first in {:.1} ms",
        "restart: setup",
        ms(built),
        us(built) / 10_000.0,
        ms(drained)
    );

    let fresh = || Bench::new(store.clone(), BenchHost::default(), "c", options(10_000, 4));
    store.reset_stats();
    bench("restart: fresh runtime, open root + list 10,000 members", "member", 10_000, 2, 15, fresh, |b| {
        let rt = b.rt.clone();
        let rows = b.run(async move {
            rt.open_root(Some("root".into()), None).await.unwrap();
            rt.list_descendants("root", &Signal::never()).await.unwrap()
        });
        assert_eq!(rows.len(), 10_000);
        b
    });
    let stats = store.stats();
    println!(
        "{:<72} {} store round trips per open + list ({} read, {} read_many)",
        "",
        (stats.reads + stats.read_manys) / 17,
        stats.reads / 17,
        stats.read_manys / 17
    );

    // The open-time recovery scan (it lists the tree and reads every member's
    // log) runs to its end first: these rows time the resume itself.
    let with_root = || {
        let b = fresh();
        let root = b.root();
        b.exec.run_idle();
        (b, root)
    };
    let resume = |(b, root): (Bench, Agent)| {
        let (rt, id) = (b.rt.clone(), deep_id.clone());
        store.reset_stats();
        let t0 = Instant::now();
        b.run(
            async move { rt.send_message(&root, &id, Value::from("one more thing"), &Signal::never()).await.unwrap() },
        );
        let accepted = t0.elapsed();
        b.exec.run_idle();
        let started = b.host.last_start_of(&deep_name).expect("the deep member's turn started");
        (b, accepted, started - t0, store.stats())
    };
    for _ in 0..2 {
        resume(with_root());
    }
    let mut to_turn = Vec::new();
    let mut to_accept = Vec::new();
    let mut stats = subagent_tree::store::StoreStats::default();
    const RUNS: usize = 15;
    for _ in 0..RUNS {
        let (b, accepted, turn, run) = resume(with_root());
        assert_eq!(b.rt.agent(&deep_id).map(|a| a.depth()), None, "it settled after its turn");
        to_accept.push(accepted);
        to_turn.push(turn);
        (stats.reads, stats.read_manys) = (stats.reads + run.reads, stats.read_manys + run.read_manys);
    }
    let (to_turn, to_accept) = (sorted(to_turn), sorted(to_accept));
    println!(
        "{:<72} to run_turn: median {:.3} ms (min {:.3}, max {:.3}); send resolved: median {:.3} ms; {} store round trips ({} read, {} read_many)",
        format!("restart: resume {deep_name} (depth 4) by Session id, after open-time recovery"),
        ms(pct(&to_turn, 0.5)),
        ms(to_turn[0]),
        ms(to_turn[RUNS - 1]),
        ms(pct(&to_accept, 0.5)),
        (stats.reads + stats.read_manys) / RUNS as u64,
        stats.reads / RUNS as u64,
        stats.read_manys / RUNS as u64,
    );

    let by_tool = |(b, root): (Bench, Agent)| {
        let tools = b.rt.tools_for(&root).unwrap();
        let input = Value::object([
            ("agent", Some(Value::from(deep_name.as_str()))),
            ("message", Some(Value::from("one more thing"))),
        ]);
        let t0 = Instant::now();
        let result =
            b.run(async move { tools.call(subagent_tree::tools::SEND_MESSAGE, &input, &Signal::never()).await });
        assert!(!result.is_error, "{}", result.content);
        b.exec.run_idle();
        let started = b.host.last_start_of(&deep_name).expect("resumed");
        started - t0
    };
    let times = sorted((0..RUNS).map(|_| by_tool(with_root())).collect());
    println!(
        "{:<72} to run_turn: median {:.3} ms (min {:.3}, max {:.3})",
        "restart: resume it by full name via the send_message tool (resolve + send)",
        ms(pct(&times, 0.5)),
        ms(times[0]),
        ms(times[RUNS - 1]),
    );
    println!();
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let on = |case: &str| filter.as_deref().is_none_or(|f| case.contains(f));
    println!("subagent-tree native runtime benchmarks (local executor, MemoryStore unless stated)\n");
    if on("writes") {
        case_writes();
    }
    if on("spawn") {
        case_spawn();
    }
    if on("message") {
        case_message();
    }
    if on("memory") {
        case_memory();
    }
    if on("restart") {
        case_restart();
    }
}
