//! Native benchmarks of the core (`cargo bench`; `harness = false`, no criterion).
//!
//! Each case runs a warm-up, then N timed runs; the figure is the median run,
//! reported as ns/op and ops/s, where an "op" is stated per case.
//!
//! Cases: name validation (valid, invalid, mixed); catalog projection of
//! 100,000 events (`catalog::project`); listing an 11,110-member tree (fan-out
//! 10, depth 4: 10 + 100 + 1,000 + 10,000) from `MemoryStore` with and without
//! `read_many`, with the store round trips counted; resolving a depth-4 path.

use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};
use subagent_tree::catalog::{self, CatalogEntry, Mode};
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::exec::block_on;
use subagent_tree::json::Value;
use subagent_tree::name::{is_valid_name, AgentName};
use subagent_tree::{list_descendants, resolve_name, MemoryStore, Signal};

/// Times `f` (which performs `ops` operations per call): `warmup` untimed
/// calls, then `runs` timed calls; prints and returns the median run.
fn bench(label: &str, op: &str, ops: u64, warmup: usize, runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..warmup {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    let median = times[runs / 2];
    let ns_per_op = median.as_nanos() as f64 / ops as f64;
    println!(
        "{label:<66} {:>12.1} ns/{op:<8} {:>14} {op}s/s   (median of {runs}: {:.3} ms/run, min {:.3}, max {:.3})",
        ns_per_op,
        group(1e9 / ns_per_op),
        ms(median),
        ms(times[0]),
        ms(times[runs - 1]),
    );
    median
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
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

fn names() -> (Vec<String>, Vec<String>) {
    let mut valid = Vec::new();
    let mut invalid = Vec::new();
    for i in 0..500 {
        valid.push(format!("agent-{i}"));
        valid.push(["reviewer", "checker", "a", "test-writer-2", "x9"][i % 5].to_owned());
        valid.push(format!("a{}", "b".repeat(i % 31))); // up to 32 chars
    }
    for i in 0..500 {
        invalid.push(["lead", "Reviewer", "", "9lives", "-dash", "under_score", "sp ace", "é"][i % 8].to_owned());
        invalid.push(format!("0b7e2a4c-1d2f-4e5a-9b8c-{:012x}", i)); // UUIDs
        invalid.push(format!("a{}", "b".repeat(32 + i % 8))); // too long
    }
    (valid, invalid)
}

fn catalog_event(seq: u64, i: u64) -> SessionEvent {
    let id = format!("child-{i:08}");
    let obj = |pairs: Vec<(&str, Value)>| Value::object(pairs.into_iter().map(|(k, v)| (k, Some(v))));
    let payload = match i % 4 {
        0 => obj(vec![
            ("version", 0u64.into()),
            ("childId", id.into()),
            ("childCreatedAt", (1_700_000_000_000 + i).into()),
            ("mode", "continuable".into()),
            ("label", "review the diff".into()),
        ]),
        1 => obj(vec![
            ("version", 1u64.into()),
            ("childId", id.into()),
            ("childCreatedAt", (1_700_000_000_000 + i).into()),
            ("mode", "unknown".into()),
        ]),
        2 => obj(vec![
            ("version", 2u64.into()),
            ("childId", id.into()),
            ("childCreatedAt", (1_700_000_000_000 + i).into()),
            ("mode", "external".into()),
            ("label", "codex run".into()),
        ]),
        _ => obj(vec![
            ("version", 3u64.into()),
            ("childId", id.into()),
            ("childCreatedAt", (1_700_000_000_000 + i).into()),
            ("mode", "continuable".into()),
            ("label", "check the tests".into()),
            ("name", format!("agent-{}", i % 1000 + 1).into()),
        ]),
    };
    SessionEvent::new(seq, event::CATALOG, payload)
}

/// Fan-out 10, depth 4: 10 + 100 + 1,000 + 10,000 = 11,110 members, each with
/// its own session (so the leaves' empty catalogs are read too).
fn tree(batch: bool) -> (MemoryStore, u64, String) {
    let store = if batch { MemoryStore::new() } else { MemoryStore::without_batch() };
    let start = |seq| {
        SessionEvent::new(seq, event::SESSION_START, Value::object([("inheritedEventCount", Some(Value::from(0u64)))]))
    };
    let mut members = 0u64;
    let mut level = vec!["root".to_owned()];
    store.append_now("root", vec![start(0)]).unwrap();
    for _depth in 1..=4 {
        let mut next = Vec::with_capacity(level.len() * 10);
        for parent in &level {
            let mut events = Vec::with_capacity(10);
            for i in 0..10u64 {
                let id = format!("{parent}.{i}");
                let entry = CatalogEntry {
                    id: id.clone(),
                    created_at: 1_700_000_000_000 + members,
                    mode: Mode::Continuable,
                    label: Some("task".into()),
                    name: Some(AgentName::parse(&format!("agent-{}", i + 1)).unwrap()),
                };
                events.push(SessionEvent::new(1 + i, event::CATALOG, entry.to_payload()));
                store.append_now(&id, vec![start(0)]).unwrap();
                next.push(id);
                members += 1;
            }
            store.append_now(parent, events).unwrap();
        }
        level = next;
    }
    let deepest = level.last().cloned().unwrap();
    store.reset_stats();
    (store, members, deepest)
}

fn main() {
    // `cargo bench -- <filter>` passes extra args; `--bench` is always there.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let on = |case: &str| filter.as_deref().is_none_or(|f| case.contains(f));
    println!("subagent-tree native benchmarks (median of N timed runs after warm-up)\n");

    if on("names") {
        let (valid, invalid) = names();
        let mixed: Vec<&String> = valid.iter().zip(&invalid).flat_map(|(a, b)| [a, b]).collect();
        let count = |set: &[&String]| set.iter().filter(|n| is_valid_name(black_box(n.as_str()))).count();
        let valid_refs: Vec<&String> = valid.iter().collect();
        let invalid_refs: Vec<&String> = invalid.iter().collect();
        assert_eq!(count(&valid_refs), valid.len());
        assert_eq!(count(&invalid_refs), 0);
        bench("names: is_valid_name, valid (1,500 names)", "name", valid.len() as u64, 200, 301, || {
            black_box(count(&valid_refs));
        });
        bench("names: is_valid_name, invalid (1,500 names)", "name", invalid.len() as u64, 200, 301, || {
            black_box(count(&invalid_refs));
        });
        bench("names: is_valid_name, mixed 50/50 (3,000 names)", "name", mixed.len() as u64, 200, 301, || {
            black_box(count(&mixed));
        });
        bench("names: AgentName::parse, mixed (errors built)", "name", mixed.len() as u64, 50, 101, || {
            for n in &mixed {
                let _ = black_box(AgentName::parse(black_box(n.as_str())));
            }
        });
        println!();
    }

    if on("team") {
        // A board of 3,000 creates (one model reply's worth before the tool-call bound), each
        // followed by an update: the fold every task tool runs.
        let events: Vec<SessionEvent> = (0..3000u64)
            .flat_map(|i| {
                let create = subagent_tree::team::TaskChange {
                    create: true,
                    title: Some(format!("task {i}")),
                    by: "lead".into(),
                    ..Default::default()
                };
                let update = subagent_tree::team::TaskChange {
                    task_id: format!("task-{}", i + 1),
                    status: Some("completed".into()),
                    by: "lead".into(),
                    ..Default::default()
                };
                [
                    SessionEvent::new(2 * i, subagent_tree::team::TASK_EVENT, create.to_payload()),
                    SessionEvent::new(2 * i + 1, subagent_tree::team::TASK_EVENT, update.to_payload()),
                ]
            })
            .collect();
        assert_eq!(subagent_tree::team::fold(&events).len(), 3000);
        bench("team: fold a board of 3,000 tasks (3,000 creates + 3,000 updates)", "event", 6000, 3, 21, || {
            black_box(subagent_tree::team::fold(black_box(&events)));
        });
        println!();
    }

    if on("catalog") {
        const N: u64 = 100_000;
        let events: Vec<SessionEvent> = (0..N).map(|i| catalog_event(i, i)).collect();
        assert_eq!(catalog::project(&events, 0).unwrap().len(), N as usize);
        bench("catalog: project 100,000 catalog events (v0-v3 mix)", "event", N, 3, 21, || {
            black_box(catalog::project(black_box(&events), 0).unwrap());
        });
        // Half noise: other event types are skipped by type.
        let mixed: Vec<SessionEvent> = (0..N)
            .map(|i| if i % 2 == 0 { catalog_event(i, i) } else { SessionEvent::new(i, "message/user", Value::Null) })
            .collect();
        bench("catalog: project 100,000 events, 50% catalog", "event", N, 3, 21, || {
            black_box(catalog::project(black_box(&mixed), 0).unwrap());
        });
        println!();
    }

    if on("listing") || on("resolve") {
        for (label, batch) in [("with read_many", true), ("without read_many", false)] {
            let (store, members, deepest) = tree(batch);
            let store = Rc::new(store);
            assert_eq!(members, 11_110);
            let list = |store: &Rc<MemoryStore>| {
                let s = store.clone();
                block_on(async move { list_descendants(&*s, "root", &Signal::never()).await.unwrap() })
            };
            let rows = list(&store);
            assert_eq!(rows.len(), 11_110);
            let stats = store.stats();
            let trips = stats.reads + stats.read_manys;
            if on("listing") {
                bench(
                    &format!("listing: 11,110 members (fan-out 10, depth 4), {label}"),
                    "member",
                    members,
                    2,
                    15,
                    || {
                        black_box(list(&store));
                    },
                );
                println!(
                    "{:<66} {trips} store round trips per listing ({} read, {} read_many)",
                    "", stats.reads, stats.read_manys
                );
            }
            if on("resolve") && batch {
                let path = "agent-10/agent-10/agent-10/agent-10";
                let s = store.clone();
                let id = block_on(async move { resolve_name(&*s, "root", path, &Signal::never()).await.unwrap() });
                assert_eq!(id, deepest);
                store.reset_stats();
                bench("resolve: a depth-4 path in the 11,110-member tree", "resolve", 1, 100, 1001, || {
                    let s = store.clone();
                    black_box(block_on(async move { resolve_name(&*s, "root", path, &Signal::never()).await }))
                        .unwrap();
                });
                println!(
                    "{:<66} {} reads per resolve (only the catalogs along the path)",
                    "",
                    store.stats().reads / 1101
                );
            }
        }
    }
}
