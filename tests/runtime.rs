//! The live runtime, one test per behaviour of seeds 003/000/004 (issue 3).
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::{text, Ext, Harness};
use std::cell::Cell;
use std::rc::Rc;
use subagent_tree::catalog;
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::exec::LocalBoxFuture;
use subagent_tree::json::Value;
use subagent_tree::ports::{
    Capabilities, ContinuableCreateRequest, ContinuableCreateSpec, Provider, Run, StartRequest, TurnOutcome,
};
use subagent_tree::runtime::{Delivery, InterruptAuthority, MessageSource, Recovery, RuntimeEvent, Scheduling};
use subagent_tree::store::ReadQuery;
use subagent_tree::testkit::completed;
use subagent_tree::{ActivationSpec, Agent, ErrorCode, Mode, Result, Row, RuntimeOptions, Signal};

fn spec(parent: &Agent, name: Option<&str>) -> ActivationSpec {
    let s = ActivationSpec::new("spawn", parent, "a task", "please do it");
    match name {
        Some(n) => s.named(n),
        None => s,
    }
}

fn catalog_of(h: &Harness, id: &str) -> Vec<subagent_tree::CatalogEntry> {
    let events = h.store.read_now(id, &ReadQuery::default()).unwrap_or_default();
    catalog::project_log(&events).unwrap()
}

fn start(h: &Harness, s: ActivationSpec) -> Result<subagent_tree::Activation> {
    let rt = h.rt.clone();
    h.run(async move { rt.start_activation(s).await })
}

#[test]
fn a_named_child_runs_settles_and_notifies_its_creator() {
    let h = Harness::wide();
    let root = h.root();
    let before = h.store.stats().appends;
    let a = start(&h, spec(&root, Some("reviewer"))).unwrap();
    assert_eq!(a.name, "reviewer");
    assert!(a.message_id.is_some());
    let result = h.run(a.result()).unwrap();
    assert_eq!(result.stop_reason, "completed");
    assert_eq!(text(&result.output), "done by reviewer");

    // One catalog fact in the parent's log, v3 with the name, written once.
    let root_log = h.store.read_now("root", &ReadQuery::default()).unwrap();
    let facts: Vec<&SessionEvent> = root_log.iter().filter(|e| e.kind == event::CATALOG).collect();
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].payload.get("version").and_then(Value::as_u64), Some(3));
    assert_eq!(facts[0].payload.get("name").and_then(Value::as_str), Some("reviewer"));
    // Writes for the spawn itself: the child's new log and the one catalog fact.
    let writes = h.store.stats().appends - before;
    assert!(writes >= 2, "child log + catalog fact, then turn records: {writes}");

    // The creator got a subagent-settled notice naming the child by full name, and ran a turn on it.
    h.settle();
    let lead_turns = h.host.turns_of("lead");
    assert_eq!(lead_turns.len(), 1);
    match &lead_turns[0].sources[0] {
        MessageSource::SubagentSettled { sender_name, stop_reason, summary, .. } => {
            assert_eq!(sender_name, "reviewer");
            assert_eq!(stop_reason, "completed");
            assert_eq!(summary, "Subagent reviewer finished.");
        }
        other => panic!("expected a settlement notice, got {other:?}"),
    }
    assert!(lead_turns[0].input[0].contains("done by reviewer"));
    assert_eq!(h.starts(), ["reviewer"]);
    assert_eq!(h.ends(), [("reviewer".to_owned(), "completed".to_owned())]);
    assert!(!h.rt.resident().contains(&a.child_id));
}

#[test]
fn check_order_is_documented_and_the_provider_is_untouched_on_refusal() {
    let h = Harness::new(RuntimeOptions { capacity: 1, ..RuntimeOptions::default() });
    let root = h.root();
    let touched = Rc::new(Cell::new(0));
    h.rt.register_provider(Rc::new(Ext { touched: touched.clone(), caps: Capabilities::default(), ..Ext::default() }))
        .unwrap();

    let code = |s: ActivationSpec| start(&h, s).err().map(|e| e.code);
    let mut s = spec(&root, None);
    s.provider = "nope".into();
    assert_eq!(code(s), Some(ErrorCode::NoProvider));
    let mut s = spec(&root, None);
    s.provider = "ext".into();
    s.child_id = Some("reserved".into());
    assert_eq!(code(s), Some(ErrorCode::UnsupportedCapability));
    let mut s = spec(&root, None);
    s.max_depth = Some(-1.0);
    assert_eq!(code(s), Some(ErrorCode::InvalidArgument));
    let mut s = spec(&root, None);
    s.max_depth = Some(1.5);
    assert_eq!(code(s), Some(ErrorCode::InvalidArgument));
    for which in 0..4 {
        let mut s = spec(&root, None);
        s.provider = "ext".into();
        match which {
            0 => s.agent_options = Some(Value::Null),
            1 => s.agent_preset = Some("p".into()),
            2 => s.output_schema = Some(Value::object([("type", Some(Value::from("object")))])),
            _ => s.max_depth = Some(1.0),
        }
        assert_eq!(code(s), Some(ErrorCode::UnsupportedCapability), "capability {which}");
    }
    // fork inherits context, so it cannot take an independent preset.
    let mut s = spec(&root, None);
    s.provider = "fork".into();
    s.agent_preset = Some("p".into());
    assert_eq!(code(s), Some(ErrorCode::UnsupportedCapability));
    let mut s = spec(&root, Some("Bad Name"));
    s.provider = "ext".into();
    assert_eq!(code(s), Some(ErrorCode::InvalidName));
    assert_eq!(code(spec(&root, Some("lead"))), Some(ErrorCode::InvalidName));
    assert_eq!(touched.get(), 0, "no refusal touched the provider");

    // Depth: the default maxDepth is 1, so a grandchild is refused.
    let h2 = Harness::new(RuntimeOptions::default());
    let root2 = h2.root();
    h2.host.hold("a");
    let a = start(&h2, spec(&root2, Some("a"))).unwrap();
    let err = start(&h2, spec(&a.agent().unwrap(), None)).unwrap_err();
    assert_eq!(err.code, ErrorCode::DepthExceeded);
    let mut s = spec(&root2, None);
    s.max_depth = Some(0.0);
    assert_eq!(start(&h2, s).unwrap_err().code, ErrorCode::DepthExceeded);

    // Capacity 1: the root takes no slot, the first child does.
    h.host.hold("one");
    let _one = start(&h, spec(&root, Some("one"))).unwrap();
    assert_eq!(code(spec(&root, Some("two"))), Some(ErrorCode::ActivationLimitReached));
}

#[test]
fn a_dead_or_foreign_parent_is_refused() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("a");
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    let child = a.agent().unwrap();
    h.host.open("a");
    h.run(a.result()).unwrap();
    assert!(!child.is_live());
    assert_eq!(start(&h, spec(&child, None)).unwrap_err().code, ErrorCode::Unauthorized);
    // A handle from another runtime is not a live member here.
    let other = Harness::wide();
    let foreign = other.root();
    assert_eq!(start(&h, spec(&foreign, None)).unwrap_err().code, ErrorCode::Unauthorized);
}

#[test]
fn names_at_admission_reserve_synchronously() {
    let h = Harness::wide();
    let root = h.root();
    for n in ["x", "y"] {
        h.host.hold(n);
    }
    // Two concurrent starts asking for the same name: exactly one wins.
    let (rt1, rt2) = (h.rt.clone(), h.rt.clone());
    let (s1, s2) = (spec(&root, Some("reviewer")), spec(&root, Some("reviewer")));
    let both = h.run(async move {
        let f1 = rt1.start_activation(s1);
        let f2 = rt2.start_activation(s2);
        (f1.await.map(|a| a.name), f2.await.map(|a| a.name))
    });
    let wins = [&both.0, &both.1].iter().filter(|r| r.is_ok()).count();
    assert_eq!(wins, 1, "{both:?}");
    let loser = if both.0.is_err() { &both.0 } else { &both.1 };
    assert_eq!(loser.as_ref().unwrap_err().code, ErrorCode::DuplicateName);

    // Ten concurrent default starts get ten distinct names, counting reservations.
    let rt = h.rt.clone();
    let root2 = root.clone();
    let names = h.run(async move {
        let starts: Vec<_> = (0..10).map(|_| rt.start_activation(spec(&root2, None))).collect();
        let mut names = Vec::new();
        for s in starts {
            names.push(s.await.unwrap().name);
        }
        names
    });
    let expected: Vec<String> = (1..=10).map(|n| format!("agent-{n}")).collect();
    assert_eq!(names, expected);
    h.settle();
    assert_eq!(h.rt.reservation_count(), 0);
    // A committed name stays taken after its member settled.
    assert_eq!(start(&h, spec(&root, Some("agent-3"))).unwrap_err().code, ErrorCode::DuplicateName);
}

#[test]
fn a_failed_start_releases_its_name_and_slot() {
    let h = Harness::new(RuntimeOptions { capacity: 1, max_depth: 2, ..RuntimeOptions::default() });
    let root = h.root();
    let fail = Rc::new(Cell::new(true));
    h.rt.register_provider(Rc::new(Prep { fail: fail.clone() })).unwrap();
    let mut s = spec(&root, Some("reviewer"));
    s.provider = "prep".into();
    assert_eq!(start(&h, s).unwrap_err().code, ErrorCode::PersistenceUnavailable);
    assert_eq!(h.rt.reservation_count(), 0);
    assert!(catalog_of(&h, "root").is_empty(), "no catalog fact for a failed start");
    fail.set(false);
    let mut s = spec(&root, Some("reviewer"));
    s.provider = "prep".into();
    assert_eq!(start(&h, s).unwrap().name, "reviewer");
}

/// A default-named start that fails gives its number back, even after later
/// picks moved past it: the creator's kept hint moves back to it.
#[test]
fn a_failed_default_start_gives_its_number_back() {
    let h = Harness::wide();
    let root = h.root();
    let fail = Rc::new(Cell::new(true));
    h.rt.register_provider(Rc::new(Prep { fail: fail.clone() })).unwrap();
    let failing = || {
        let mut s = spec(&root, None);
        s.provider = "prep".into();
        s
    };
    assert_eq!(start(&h, spec(&root, None)).unwrap().name, "agent-1");
    assert_eq!(start(&h, failing()).unwrap_err().code, ErrorCode::PersistenceUnavailable);
    assert_eq!(start(&h, spec(&root, None)).unwrap().name, "agent-2");

    // Concurrently: every other start fails while the rest hold their names.
    let results = Rc::new(std::cell::RefCell::new(Vec::new()));
    for i in 0..8 {
        let (rt, out) = (h.rt.clone(), results.clone());
        let s = if i % 2 == 1 { failing() } else { spec(&root, None) };
        h.exec.spawn(Box::pin(async move {
            let r = rt.start_activation(s).await.map(|a| a.name);
            out.borrow_mut().push(r);
        }));
    }
    h.settle();
    let mut taken: Vec<String> = vec!["agent-1".into(), "agent-2".into()];
    for r in results.borrow().iter() {
        match r {
            Ok(name) => taken.push(name.clone()),
            Err(e) => assert_eq!(e.code, ErrorCode::PersistenceUnavailable),
        }
    }
    assert_eq!(taken.len(), 6, "{:?}", results.borrow());
    let distinct: std::collections::BTreeSet<&String> = taken.iter().collect();
    assert_eq!(distinct.len(), taken.len(), "names are distinct: {taken:?}");
    assert_eq!(h.rt.reservation_count(), 0);
    // The next default name is the first free one over everything committed.
    let next = start(&h, spec(&root, None)).unwrap().name;
    assert_eq!(next, subagent_tree::name::default_name(&taken).as_str(), "{taken:?}");
}

#[test]
fn cancellation_before_publication_rejects_and_writes_no_catalog_fact() {
    let h = Harness::wide();
    let root = h.root();
    let s = spec(&root, Some("late"));
    s.signal.abort();
    assert_eq!(start(&h, s).unwrap_err().code, ErrorCode::Cancelled);
    assert!(catalog_of(&h, "root").is_empty());
    assert_eq!(h.rt.reservation_count(), 0);
    assert_eq!(start(&h, spec(&root, Some("late"))).unwrap().name, "late");
}

#[test]
fn full_names_are_paths_and_names_of_reports_the_creator() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("reviewer");
    h.host.hold("reviewer/checker");
    let a = start(&h, spec(&root, Some("reviewer"))).unwrap();
    let b = start(&h, spec(&a.agent().unwrap(), Some("checker"))).unwrap();
    assert_eq!(b.name, "reviewer/checker");
    let names = h.rt.names_of(&b.agent().unwrap()).unwrap();
    assert_eq!((names.self_name.as_str(), names.parent.as_deref()), ("reviewer/checker", Some("reviewer")));
    let root_names = h.rt.names_of(&root).unwrap();
    assert_eq!((root_names.self_name.as_str(), root_names.parent), ("lead", None));
    assert!(h.rt.root_of(&b.agent().unwrap()).unwrap().same(&root));
    let rt = h.rt.clone();
    let caller = b.agent().unwrap();
    let resolved = h.run(async move {
        let s = Signal::never();
        (
            rt.resolve_name(&caller, "reviewer/checker", &s).await,
            rt.resolve_name(&caller, "lead", &s).await,
            rt.resolve_name(&caller, "nobody", &s).await.map_err(|e| e.code),
        )
    });
    assert_eq!(resolved.0.unwrap(), b.child_id);
    assert_eq!(resolved.1.unwrap(), "root");
    assert_eq!(resolved.2, Err(ErrorCode::UnknownAgent));
    // The second child's first turn sees its own full name and its creator's.
    let seen = &h.host.turns_of("reviewer/checker")[0];
    assert_eq!(seen.parent_name.as_deref(), Some("reviewer"));
    assert!(seen.first);
}

#[test]
fn cwd_resolves_against_the_parent_or_is_captured_at_admission() {
    let h = Harness::wide();
    let root = h.root();
    let mut s = spec(&root, Some("a"));
    s.cwd = Some("sub/../pkg".into());
    let a = start(&h, s).unwrap();
    let b = start(&h, spec(&root, Some("b"))).unwrap();
    h.settle();
    assert_eq!(h.host.turns_of("a")[0].cwd, "/work/pkg");
    assert_eq!(h.host.turns_of("b")[0].cwd, "/work");
    drop((a, b));
}

#[test]
fn dispose_is_idempotent_and_keeps_the_captured_result_when_teardown_fails() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("a");
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    h.settle();
    let (d1, d2) = (a.dispose(), a.dispose());
    h.run(async move {
        d1.await.unwrap();
        d2.await.unwrap();
    });
    let r = h.run(a.result()).unwrap();
    assert_eq!(r.stop_reason, "aborted");

    // A teardown failure rejects dispose() but the result keeps what the turn captured.
    h.host.script("b", |_| completed("b's answer"));
    h.host.hold("b");
    let b = start(&h, spec(&root, Some("b"))).unwrap();
    h.host.0.fail_release.borrow_mut().push(b.child_id.clone());
    h.settle();
    let b_agent = b.agent().unwrap();
    // Let the turn finish, then keep the member resident by interrupting (parks, no settle) — instead dispose right after the turn.
    h.host.open("b");
    h.settle();
    assert!(!b_agent.is_live(), "b settled naturally after its turn");
    let err = h.run(b.dispose()).unwrap_err();
    assert_eq!(err.code, ErrorCode::ActivationTeardownFailed);
    let r = h.run(b.result()).unwrap();
    assert_eq!(text(&r.output), "b's answer");
    assert!(h.ends().contains(&("b".to_owned(), "error".to_owned())));
}

#[test]
fn structured_capture_closes_input_and_mismatch_is_an_error() {
    let h = Harness::wide();
    let root = h.root();
    let schema = Value::object([
        ("type", Some(Value::from("object"))),
        ("properties", Some(Value::object([("ok", Some(Value::object([("type", Some(Value::from("boolean")))])))]))),
        ("required", Some(Value::Array(vec![Value::from("ok")]))),
    ]);
    h.host.script("good", |_| {
        let mut o = completed("ok");
        o.structured = Some(Value::object([("ok", Some(Value::Bool(true)))]));
        o
    });
    h.host.script("bad", |_| {
        let mut o = completed("ok");
        o.structured = Some(Value::object([("ok", Some(Value::from("yes")))]));
        o
    });
    let mut s = spec(&root, Some("good"));
    s.output_schema = Some(schema.clone());
    let good = start(&h, s).unwrap();
    let r = h.run(good.result()).unwrap();
    assert_eq!(r.structured, Some(Value::object([("ok", Some(Value::Bool(true)))])));
    let mut s = spec(&root, Some("bad"));
    s.output_schema = Some(schema.clone());
    let bad = start(&h, s).unwrap();
    let r = h.run(bad.result()).unwrap();
    assert_eq!(r.stop_reason, "error");
    assert!(r.diagnostic.unwrap().contains("/ok"));
    // An unsupported schema is refused at start.
    let mut s = spec(&root, Some("odd"));
    s.output_schema = Some(Value::object([("type", Some(Value::from("object"))), ("$ref", Some(Value::from("#")))]));
    assert_eq!(start(&h, s).unwrap_err().code, ErrorCode::UnsupportedCapability);
}

#[test]
fn input_closes_once_a_structured_result_is_captured() {
    let h = Harness::wide();
    let root = h.root();
    h.host.script("cap", |_| {
        let mut o = completed("ok");
        o.structured = Some(Value::Object(vec![]));
        o
    });
    h.host.hold("sib");
    let sib = start(&h, spec(&root, Some("sib"))).unwrap();
    // Keep `cap` resident after capture: it owns a live child? Simpler: steer before settlement by holding its turn.
    h.host.hold("cap");
    let mut s = spec(&root, Some("cap"));
    s.output_schema = Some(Value::object([("type", Some(Value::from("object")))]));
    let cap = start(&h, s).unwrap();
    h.settle();
    let cap_agent = cap.agent().unwrap();
    h.host.open("cap");
    h.settle();
    assert!(!cap_agent.is_live());
    let r = h.run(cap.result()).unwrap();
    assert_eq!(r.structured, Some(Value::Object(vec![])));
    drop(sib);
}

#[test]
fn messages_steer_running_members_and_wake_idle_ones() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("worker");
    let w = start(&h, spec(&root, Some("worker"))).unwrap();
    h.settle();
    let (rt, r2, id) = (h.rt.clone(), root.clone(), w.child_id.clone());
    let mid = h.run(async move { rt.send_message(&r2, &id, Value::from("also check tests"), &Signal::never()).await });
    assert!(mid.is_ok());
    h.host.open("worker");
    h.settle();
    let turns = h.host.turns_of("worker");
    assert_eq!(turns[0].steered, ["also check tests"], "the steered message reached the running turn at its next step");
    match &turns[0].sources[0] {
        MessageSource::User => {}
        other => panic!("the first prompt is the creator's task: {other:?}"),
    }
    // The steered message's source names the sender as an agent message.
    let log = h.store.read_now(&w.child_id, &ReadQuery::types(&[event::MESSAGE], &Signal::never())).unwrap();
    let src = log[1].payload.get("source").unwrap();
    assert_eq!(src.get("kind").and_then(Value::as_str), Some("agent-message"));
    assert_eq!(src.get("senderName").and_then(Value::as_str), Some("lead"));
}

#[test]
fn messages_across_trees_to_externals_and_after_cancel_are_refused() {
    let h = Harness::wide();
    let root = h.root();
    let rt = h.rt.clone();
    let other = h.run(async move { rt.open_root(Some("other".into()), None).await.unwrap() });
    h.host.hold("x");
    let x = start(&h, spec(&other, Some("x"))).unwrap();
    let (rt, r, id) = (h.rt.clone(), root.clone(), x.child_id.clone());
    let err = h.run(async move { rt.send_message(&r, &id, Value::from("hi"), &Signal::never()).await }).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unauthorized);
    // Cancellation before acceptance.
    let (rt, o, id) = (h.rt.clone(), other.clone(), x.child_id.clone());
    let s = Signal::new();
    s.abort();
    let err = h.run(async move { rt.send_message(&o, &id, Value::from("hi"), &s).await }).unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    // External targets take no follow-ups.
    h.rt.register_provider(Rc::new(Ext::default())).unwrap();
    let mut s = spec(&root, Some("ext"));
    s.provider = "ext".into();
    let e = start(&h, s).unwrap();
    let (rt, r, id) = (h.rt.clone(), root.clone(), e.child_id.clone());
    let err = h.run(async move { rt.send_message(&r, &id, Value::from("hi"), &Signal::never()).await }).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotContinuable);
    // A name or a Session id string is no authority: only handles send.
    let dead = x.agent().unwrap();
    h.run(x.dispose()).unwrap();
    let (rt, id) = (h.rt.clone(), "other".to_owned());
    let err = h.run(async move { rt.send_message(&dead, &id, Value::from("hi"), &Signal::never()).await }).unwrap_err();
    assert_eq!(err.code, ErrorCode::Unauthorized);
}

/// Issue 66, point 5: an interrupt by a full name that names nobody is
/// `UNKNOWN_AGENT` with the "did you mean" hint, as prompt and ask answer;
/// a name of a cold member, or an absent Session id, stays a no-op.
#[test]
fn interrupt_by_a_name_that_names_nobody_is_unknown_agent() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("reviewer");
    h.host.hold("reviewer/checker");
    let reviewer = start(&h, spec(&root, Some("reviewer"))).unwrap();
    start(&h, spec(&reviewer.agent().unwrap(), Some("checker"))).unwrap();
    start(&h, spec(&root, Some("writer"))).unwrap(); // finishes and settles: cold
    h.settle();
    let tree = || InterruptAuthority::Tree(&root);
    for (typo, hint) in
        [("reviewr", "did you mean `reviewer`?"), ("reviewer/checkr", "did you mean `reviewer/checker`?")]
    {
        let e = h.rt.interrupt(typo, tree()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownAgent, "{e}");
        assert!(e.message.contains(hint), "{e}");
    }
    let e = h.rt.interrupt("reviewr", InterruptAuthority::Ancestor(&root)).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnknownAgent, "{e}");
    assert!(!h.rt.interrupt("writer", tree()).unwrap().signalled, "a cold member: nothing to stop");
    assert!(!h.rt.interrupt("0-absent", tree()).unwrap().signalled, "an absent Session id: a no-op");
    assert!(h.rt.interrupt("reviewer/checker", tree()).unwrap().signalled);
}

/// Issue 66, point 5: text plainly meant as a full name gets the mended name
/// as a hint: names are lower case, and full names start below `lead`.
#[test]
fn a_misspelt_full_name_gets_a_hint() {
    let h = Harness::wide();
    let root = h.root();
    start(&h, spec(&root, Some("reviewer"))).unwrap();
    h.settle();
    for (text, hint) in [
        ("Reviewer", "names are lower case: did you mean `reviewer`?"),
        ("lead/reviewer", "full names start below lead: did you mean `reviewer`?"),
        ("Lead/Reviewer", "names are lower case: did you mean `reviewer`?"),
    ] {
        let (rt, r, t) = (h.rt.clone(), root.clone(), text.to_owned());
        let e = h
            .run(async move { rt.prompt(&r, &t, Value::from("hi"), Scheduling::Queue, &Signal::never()).await })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Unauthorized, "{e}");
        assert!(e.message.ends_with(hint), "{text}: {e}");
    }
    // A Session id gets no hint.
    let (rt, r) = (h.rt.clone(), root.clone());
    let e = h
        .run(async move { rt.prompt(&r, "0-absent", Value::from("hi"), Scheduling::Queue, &Signal::never()).await })
        .unwrap_err();
    assert_eq!(e.message, "\"0-absent\" is not a member of this tree");
}

#[test]
fn interrupt_parks_pending_work_and_checks_authority() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("a");
    h.host.hold("a/b");
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    let b = start(&h, spec(&a.agent().unwrap(), Some("b"))).unwrap();
    h.host.hold("c");
    let c = start(&h, spec(&root, Some("c"))).unwrap();
    h.settle();
    let (a_agent, b_agent, c_agent) = (a.agent().unwrap(), b.agent().unwrap(), c.agent().unwrap());
    let code = |target: &str, auth: InterruptAuthority| h.rt.interrupt(target, auth).err().map(|e| e.code);
    assert_eq!(code(&b.child_id, InterruptAuthority::Ancestor(&b_agent)), Some(ErrorCode::Unauthorized), "self");
    assert_eq!(code(&b.child_id, InterruptAuthority::Ancestor(&c_agent)), Some(ErrorCode::Unauthorized), "cousin");
    assert_eq!(code(&a.child_id, InterruptAuthority::Ancestor(&b_agent)), Some(ErrorCode::Unauthorized), "descendant");
    assert_eq!(code("0-absent", InterruptAuthority::Ancestor(&a_agent)), None, "absent target: accepted no-op");
    // A queued message waits behind the running turn; the interrupt parks it.
    let (rt, r, id) = (h.rt.clone(), root.clone(), b.child_id.clone());
    h.run(async move { rt.prompt(&r, &id, Value::from("queued work"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    assert_eq!(code(&b.child_id, InterruptAuthority::Ancestor(&root)), None, "grand-ancestor");
    h.settle();
    assert!(b_agent.is_live(), "interrupt keeps the activation");
    assert_eq!(h.host.turns_of("a/b").len(), 1, "parked work does not start a turn");
    assert!(!h.rt.is_running(&b.child_id));
    // A waking send resumes the parked FIFO queue.
    h.host.open("a/b");
    let (rt, r, id) = (h.rt.clone(), root.clone(), b.child_id.clone());
    h.run(async move { rt.send_message(&r, &id, Value::from("wake up"), &Signal::never()).await }).unwrap();
    h.settle();
    let turns = h.host.turns_of("a/b");
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].input, ["queued work", "wake up"]);
    // The user may interrupt anyone.
    assert_eq!(code(&a.child_id, InterruptAuthority::User), None);
    drop(c);
}

#[test]
fn drain_stops_one_tree_child_first_and_closes_admission() {
    let h = Harness::wide();
    let root = h.root();
    let rt = h.rt.clone();
    let other = h.run(async move { rt.open_root(Some("other".into()), None).await.unwrap() });
    for n in ["a", "a/b", "z"] {
        h.host.hold(n);
    }
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    let b = start(&h, spec(&a.agent().unwrap(), Some("b"))).unwrap();
    let z = start(&h, spec(&other, Some("z"))).unwrap();
    h.settle();
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.drain_descendants(&[r]).await }).unwrap();
    let ends = h.ends();
    assert_eq!(ends, [("a/b".to_owned(), "aborted".to_owned()), ("a".to_owned(), "aborted".to_owned())]);
    assert_eq!(start(&h, spec(&root, None)).unwrap_err().code, ErrorCode::Draining);
    assert!(z.agent().unwrap().is_live(), "other trees stay live");
    assert!(start(&h, spec(&other, None)).is_ok());
    drop(b);
}

#[test]
fn a_restart_rebuilds_names_and_a_message_resumes_a_cold_member() {
    let store;
    let (a_id, b_id);
    {
        let h = Harness::wide();
        store = h.store.clone();
        let root = h.root();
        h.host.hold("reviewer");
        let a = start(&h, spec(&root, Some("reviewer"))).unwrap();
        let b = start(&h, spec(&a.agent().unwrap(), Some("checker"))).unwrap();
        h.host.open("reviewer");
        h.settle();
        assert!(h.rt.resident() == ["root"], "everything settled: {:?}", h.rt.resident());
        a_id = a.child_id.clone();
        b_id = b.child_id.clone();
    }
    let h = Harness::over(store, "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let root = h.root();
    let rt = h.rt.clone();
    let rows = h.run(async move { rt.list_descendants("root", &Signal::never()).await.unwrap() });
    let paths: Vec<Option<String>> = rows
        .iter()
        .map(|r| match &r.row {
            Row::Child(c) => c.path_string(),
            Row::Diagnostic(_) => None,
        })
        .collect();
    assert_eq!(paths, [Some("reviewer".to_owned()), Some("reviewer/checker".to_owned())]);
    assert!(rows.iter().all(|r| !r.live.running));
    // Messaging the cold grandchild resumes it under its full name; its creator stays offline.
    let (rt, r, id) = (h.rt.clone(), root.clone(), b_id.clone());
    h.run(async move { rt.send_message(&r, &id, Value::from("one more thing"), &Signal::never()).await }).unwrap();
    h.settle();
    let turns = h.host.turns_of("reviewer/checker");
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].input, ["one more thing"]);
    assert_eq!(turns[0].parent_name.as_deref(), Some("reviewer"));
    assert!(!turns[0].first);
    assert!(!h.rt.resident().contains(&a_id), "the creator was not restored");
}

#[test]
fn flush_reports_participation_and_the_first_failure() {
    let h = Harness::wide();
    let rt = h.rt.clone();
    assert!(!h.run(async move { rt.flush("s").await.unwrap() }));
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    for (i, fail) in [(1, false), (2, true), (3, true)] {
        let order = order.clone();
        h.rt.add_flush_listener(Rc::new(move |_s: &str| -> LocalBoxFuture<'static, Result<()>> {
            order.borrow_mut().push(i);
            Box::pin(async move {
                if fail {
                    Err(subagent_tree::err!(PersistenceUnavailable, "listener {i} failed"))
                } else {
                    Ok(())
                }
            })
        }));
    }
    let rt = h.rt.clone();
    let err = h.run(async move { rt.flush("s").await }).unwrap_err();
    assert_eq!(err.message, "listener 2 failed");
    assert_eq!(*order.borrow(), [1, 2, 3], "every listener ran");
}

#[test]
fn providers_register_once_and_leave_with_events() {
    let h = Harness::wide();
    assert_eq!(h.rt.provider_names(), ["spawn", "fork"]);
    let token = h.rt.register_provider(Rc::new(Ext::default())).unwrap();
    assert_eq!(h.rt.register_provider(Rc::new(Ext::default())).unwrap_err().code, ErrorCode::DuplicateProvider);
    assert_eq!(
        h.rt.register_provider(Rc::new(Ext { none: true, ..Ext::default() })).unwrap_err().code,
        ErrorCode::UnsupportedCapability
    );
    h.rt.unregister_provider(token);
    h.rt.unregister_provider(token);
    assert!(h.rt.get_provider("ext").is_none());
    let evs: Vec<RuntimeEvent> = h.events.borrow().clone();
    assert!(evs.iter().any(|e| matches!(e, RuntimeEvent::ProviderAdded(p) if p.name() == "ext")));
    assert_eq!(evs.iter().filter(|e| **e == RuntimeEvent::ProviderRemoved("ext".into())).count(), 1);
}

#[test]
fn external_runs_publish_settle_and_notify() {
    let h = Harness::wide();
    let root = h.root();
    h.rt.register_provider(Rc::new(Ext::default())).unwrap();
    let mut s = spec(&root, Some("codex"));
    s.provider = "ext".into();
    let e = start(&h, s).unwrap();
    assert!(e.message_id.is_none());
    let r = h.run(e.result()).unwrap();
    assert_eq!(text(&r.output), "external done");
    let entries = catalog_of(&h, "root");
    assert_eq!(entries[0].mode, Mode::External);
    assert_eq!(entries[0].name.as_ref().unwrap().as_str(), "codex");
    h.settle();
    assert_eq!(h.host.turns_of("lead").len(), 1, "the creator was notified");
    // Caller delivery: no catalog entry and no notice.
    let mut s = spec(&root, Some("quiet"));
    s.provider = "ext".into();
    s.delivery = Delivery::Caller;
    let q = start(&h, s).unwrap();
    h.run(q.result()).unwrap();
    h.settle();
    assert_eq!(catalog_of(&h, "root").len(), 1);
    assert_eq!(h.host.turns_of("lead").len(), 1);
}

#[test]
fn fork_seeds_the_completed_turn_prefix_and_its_catalog_ignores_the_parents() {
    let h = Harness::new(RuntimeOptions { max_depth: 2, capacity: 8, ..RuntimeOptions::default() });
    let root = h.root();
    let a = start(&h, spec(&root, Some("first"))).unwrap();
    h.run(a.result()).unwrap();
    h.settle(); // lead's notice turn completes: the root log has a completed turn
    let mut s = spec(&root, Some("forked"));
    s.provider = "fork".into();
    let f = start(&h, s).unwrap();
    h.settle();
    let log = h.store.read_now(&f.child_id, &ReadQuery::default()).unwrap();
    let inherited = event::inherited_event_count(&log);
    assert!(inherited > 0);
    assert!(
        log[..inherited as usize].iter().any(|e| e.kind == event::CATALOG),
        "the seed holds the parent's catalog fact"
    );
    assert!(catalog::project_log(&log).unwrap().is_empty(), "the fork's own catalog ignores it");
}

#[test]
fn wait_for_tree_work_joins_running_members() {
    let h = Harness::wide();
    let root = h.root();
    let rt = h.rt.clone();
    let r = root.clone();
    assert!(!h.run(async move { rt.wait_for_tree_work(&r).await.unwrap() }));
    h.host.hold("a");
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    let (rt, r, host) = (h.rt.clone(), root.clone(), h.host.clone());
    h.exec.spawn(Box::pin(async move {
        for _ in 0..3 {
            subagent_tree::exec::yield_now().await;
        }
        host.open("a");
    }));
    assert!(h.run(async move { rt.wait_for_tree_work(&r).await.unwrap() }));
    assert!(!h.rt.resident().contains(&a.child_id));
}

// ---- test providers ---------------------------------------------------------

/// A local provider whose preparation can be made to fail.
struct Prep {
    fail: Rc<Cell<bool>>,
}

impl Provider for Prep {
    fn name(&self) -> String {
        "prep".into()
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
        let fail = self.fail.get();
        Box::pin(async move {
            if fail {
                Err(subagent_tree::err!(PersistenceUnavailable, "disk full"))
            } else {
                Ok(ContinuableCreateSpec::default())
            }
        })
    }
    fn start(&self, _r: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        Box::pin(async { Err(subagent_tree::err!(UnsupportedCapability, "local only")) })
    }
}

#[test]
fn a_reopened_root_keeps_input_it_accepted_but_never_consumed() {
    let store;
    {
        let h = Harness::wide();
        store = h.store.clone();
        let root = h.root();
        h.host.hold("lead");
        let prompt = |text: &'static str| {
            let (rt, r) = (h.rt.clone(), root.clone());
            h.run(async move { rt.prompt(&r, "root", Value::from(text), Scheduling::Queue, &Signal::never()).await })
                .unwrap()
        };
        prompt("plan the release");
        h.settle();
        prompt("write the notes"); // queued behind the running turn
        h.settle();
        assert_eq!(h.host.turns_of("lead").len(), 1, "the turn started, then the process died");
    }
    let h = Harness::over(store, "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let root = h.root();
    h.settle();
    assert!(h.host.turns_of("lead").is_empty(), "opening a root runs no turn by itself");
    // The lost turn is on record as failed, its input answered by that failure.
    let ends = h.store.read_now("root", &ReadQuery::types(&[event::TURN_END], &Signal::never())).unwrap();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].payload.get("stopReason").and_then(Value::as_str), Some("error"));
    let diagnostic = ends[0].payload.get("diagnostic").and_then(Value::as_str).unwrap();
    assert!(diagnostic.contains("host stopped during this turn"), "{diagnostic}");
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "root", Value::from("and tag it"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    h.settle();
    let turns = h.host.turns_of("lead");
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].input, ["write the notes", "and tag it"], "the parked input comes first");
    // Once consumed, a second reopen has nothing to answer.
    let h2 = Harness::over(h.store.clone(), "c", RuntimeOptions::default());
    h2.root();
    h2.settle();
    assert!(h2.host.turns_of("lead").is_empty());
}

#[test]
fn a_steer_inbox_takes_only_for_its_own_turn() {
    use subagent_tree::exec::LocalExecutor;
    use subagent_tree::ports::{AgentHost, Turn, TurnOutcome};
    use subagent_tree::runtime::SteerInbox;
    // A host whose turns never finish by themselves, and which keeps each turn's steer inbox.
    #[derive(Clone, Default)]
    struct Keeper(Rc<std::cell::RefCell<Vec<SteerInbox>>>);
    impl AgentHost for Keeper {
        fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
            if turn.name == "w" {
                self.0.borrow_mut().push(turn.steer.clone());
            }
            Box::pin(std::future::pending())
        }
    }
    let exec = LocalExecutor::new();
    let keeper = Keeper::default();
    let rt = subagent_tree::testkit::runtime(
        Rc::new(subagent_tree::MemoryStore::new()),
        Rc::new(keeper.clone()),
        &exec,
        "k",
        RuntimeOptions::default(),
    );
    let r = rt.clone();
    let (root, child) = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            let child = r.start_activation(spec(&root, Some("w"))).await.unwrap();
            (root, child)
        })
        .unwrap();
    exec.run_idle();
    // Turn 1 is abandoned by an interrupt (its host future never notices); `w` settles with
    // nothing parked, and a waking send resumes it for turn 2.
    rt.interrupt(&child.child_id, InterruptAuthority::Ancestor(&root)).unwrap();
    let send = |text: &'static str| {
        let (r, root, id) = (rt.clone(), root.clone(), child.child_id.clone());
        exec.run_until(async move { r.send_message(&root, &id, Value::from(text), &Signal::never()).await.unwrap() });
        exec.run_idle();
    };
    send("wake up");
    send("steered into turn 2");
    let inboxes = keeper.0.borrow().clone();
    assert_eq!(inboxes.len(), 2);
    assert!(inboxes[0].take().is_empty(), "the abandoned turn takes nothing");
    let taken: Vec<String> =
        inboxes[1].take().iter().map(|m| subagent_tree::result::content_text(&m.content)).collect();
    assert_eq!(taken, ["steered into turn 2"]);
}

#[test]
fn message_and_turn_events_follow_every_member_the_root_included() {
    let h = Harness::wide();
    let root = h.root();
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    h.run(a.result()).unwrap();
    h.settle();
    let seen: Vec<String> = h
        .events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Start(i) => Some(format!("start {}", i.name)),
            RuntimeEvent::End(e) => Some(format!("end {} {}", e.info.name, e.stop_reason)),
            RuntimeEvent::Message { name, kind, .. } => Some(format!("message {name} {kind}")),
            RuntimeEvent::Turn { name, stop_reason: None, .. } => Some(format!("turn {name}")),
            RuntimeEvent::Turn { name, stop_reason: Some(r), .. } => Some(format!("turn-end {name} {r}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            "start a",
            "message a user",
            "turn a",
            "turn-end a completed",
            "message lead subagent-settled",
            "turn lead",
            "end a completed",
            "turn-end lead completed",
        ]
    );
}

#[test]
fn a_turn_end_event_carries_the_output_text_its_turn_end_records() {
    let h = Harness::wide();
    let root = h.root();
    h.host.script("b", |_| subagent_tree::ports::TurnOutcome { stop_reason: "completed".into(), ..Default::default() });
    let a = start(&h, spec(&root, Some("a"))).unwrap();
    let b = start(&h, spec(&root, Some("b"))).unwrap();
    h.run(a.result()).unwrap();
    h.run(b.result()).unwrap();
    h.settle();
    let turns: Vec<(String, Option<String>, Option<String>)> = h
        .events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Turn { name, stop_reason, output, .. } if name != "lead" => {
                Some((name.clone(), stop_reason.as_ref().map(ToString::to_string), output.clone()))
            }
            _ => None,
        })
        .collect();
    let of = |n: &str| turns.iter().filter(|t| t.0 == n).cloned().collect::<Vec<_>>();
    // The start carries no output; the end carries the text `turn/end` records.
    assert_eq!(of("a"), [("a".into(), None, None), ("a".into(), Some("completed".into()), Some("done by a".into()))]);
    let recorded = h.store.read_now(&a.child_id, &Default::default()).expect("a's log");
    let end = recorded.iter().rev().find(|e| e.kind == "turn/end").expect("a turn/end");
    assert_eq!(subagent_tree::result::content_text(end.payload.get("output").unwrap()), "done by a");
    // A turn that produced no text has no output.
    assert_eq!(of("b"), [("b".into(), None, None), ("b".into(), Some("completed".into()), None)]);
}

/// The element shows `parked` from this flag, not from counting messages: a
/// turn's end says whether an interrupt left unread input waiting.
#[test]
fn an_interrupted_turn_end_says_whether_it_left_input_parked() {
    let h = Harness::wide();
    let root = h.root();
    h.host.hold("p");
    h.host.hold("q");
    let p = start(&h, spec(&root, Some("p"))).unwrap();
    let q = start(&h, spec(&root, Some("q"))).unwrap();
    h.settle();
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "p", Value::from("more"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    for id in [&p.child_id, &q.child_id] {
        assert!(h.rt.interrupt(id, InterruptAuthority::User).unwrap().signalled);
    }
    h.settle();
    let parked = |who: &str| {
        h.events.borrow().iter().rev().find_map(|e| match e {
            RuntimeEvent::Turn { name, stop_reason: Some(_), parked, .. } if name == who => Some(*parked),
            _ => None,
        })
    };
    assert_eq!(parked("p"), Some(true), "its queued message waits for a waking send");
    assert_eq!(parked("q"), Some(false), "nothing unread: it settles");
    assert!(h.rt.is_resident(&p.child_id) && !h.rt.is_resident(&q.child_id));
    // A listing says the same, for views that were not following the events.
    let rt = h.rt.clone();
    let rows = h.run(async move { rt.list_descendants("root", &Signal::never()).await }).unwrap();
    let rest = |id: &str| rows.iter().find(|r| r.row.id() == id).map(|r| (r.live.running, r.live.rest));
    assert_eq!(rest(&p.child_id), Some((false, Some(subagent_tree::runtime::Rest::Parked))));
    assert_eq!(rest(&q.child_id), Some((false, None)), "settled: not resident");
}

#[test]
fn a_turn_waiting_for_input_ends_when_the_rest_of_the_tree_is_quiet_or_on_an_interrupt() {
    use std::cell::RefCell;
    use subagent_tree::exec::LocalExecutor;
    use subagent_tree::ports::{AgentHost, Turn, TurnOutcome};
    use subagent_tree::runtime::{WaitEnd, WeakRuntime};
    // `w` waits in each turn (turn 1 for a steer, turn 2 for an interrupt only) and keeps why it
    // stopped; `h`'s turn never ends, so while it runs the tree is not quiet.
    #[derive(Clone, Default)]
    struct Waiter(Rc<RefCell<Option<WeakRuntime>>>, Rc<RefCell<Vec<WaitEnd>>>);
    impl AgentHost for Waiter {
        fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
            let (rt, ends) = (self.0.borrow().as_ref().and_then(WeakRuntime::upgrade), self.1.clone());
            Box::pin(async move {
                match (turn.name.as_str(), rt) {
                    ("h", _) => std::future::pending().await,
                    ("w", Some(rt)) => {
                        let steer = ends.borrow().is_empty();
                        let end = rt.wait_for_input(&turn.agent, turn.steer.turn_id(), steer).await;
                        ends.borrow_mut().push(end);
                    }
                    _ => {}
                }
                Ok(TurnOutcome::default())
            })
        }
    }
    let exec = LocalExecutor::new();
    let host = Waiter::default();
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let rt = subagent_tree::testkit::runtime(store, Rc::new(host.clone()), &exec, "q", RuntimeOptions::default());
    *host.0.borrow_mut() = Some(rt.downgrade());
    let r = rt.clone();
    let (root, w) = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            let w = r.start_activation(spec(&root, Some("w"))).await.unwrap();
            (root, w)
        })
        .unwrap();
    exec.run_idle();
    assert_eq!(*host.1.borrow(), [WaitEnd::Quiet], "nothing else can steer w: the wait ends, no timer");
    // With `h` working the tree is not quiet: w's second wait lasts until the interrupt.
    let (r, parent) = (rt.clone(), root.clone());
    exec.run_until(async move { r.start_activation(spec(&parent, Some("h"))).await.unwrap() }).unwrap();
    let (r, parent, id) = (rt.clone(), root.clone(), w.child_id.clone());
    exec.run_until(async move { r.send_message(&parent, &id, Value::from("again"), &Signal::never()).await.unwrap() });
    exec.run_idle();
    assert_eq!(*host.1.borrow(), [WaitEnd::Quiet], "w still waits while h works");
    assert!(rt.interrupt(&w.child_id, InterruptAuthority::Ancestor(&root)).unwrap().signalled);
    exec.run_idle();
    assert_eq!(*host.1.borrow(), [WaitEnd::Quiet, WaitEnd::Aborted]);
}

#[test]
fn waiting_turns_go_on_one_at_a_time_longest_waiting_first_and_a_steer_wakes_its_own_at_once() {
    use std::cell::RefCell;
    use subagent_tree::exec::LocalExecutor;
    use subagent_tree::ports::{AgentHost, Turn, TurnOutcome};
    use subagent_tree::runtime::{WaitEnd, WeakRuntime};
    // `h` works until interrupted; `s` waits for a steer; the others for an interrupt only.
    type Ends = Rc<RefCell<Vec<(String, WaitEnd)>>>;
    #[derive(Clone, Default)]
    struct Waiters(Rc<RefCell<Option<WeakRuntime>>>, Ends);
    impl AgentHost for Waiters {
        fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
            let (rt, ends) = (self.0.borrow().as_ref().and_then(WeakRuntime::upgrade), self.1.clone());
            Box::pin(async move {
                match (turn.name.as_str(), rt) {
                    ("h", _) => {
                        let _ = turn.signal.guard(std::future::pending::<Result<()>>()).await;
                    }
                    ("lead", _) | (_, None) => {}
                    (name, Some(rt)) => {
                        let end = rt.wait_for_input(&turn.agent, turn.steer.turn_id(), name == "s").await;
                        ends.borrow_mut().push((name.to_owned(), end));
                    }
                }
                Ok(TurnOutcome::default())
            })
        }
    }
    let exec = LocalExecutor::new();
    let host = Waiters::default();
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let options = RuntimeOptions { capacity: 16, ..RuntimeOptions::default() };
    let rt = subagent_tree::testkit::runtime(store, Rc::new(host.clone()), &exec, "q", options);
    *host.0.borrow_mut() = Some(rt.downgrade());
    let start = |name: &'static str| {
        let r = rt.clone();
        let root = rt.agent("root").unwrap();
        let a = exec.run_until(async move { r.start_activation(spec(&root, Some(name))).await.unwrap() }).unwrap();
        exec.run_idle();
        a.child_id.clone()
    };
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let h = {
        let (r, parent) = (rt.clone(), root.clone());
        exec.run_until(async move { r.start_activation(spec(&parent, Some("h"))).await.unwrap() }).unwrap()
    };
    let ids: Vec<String> = ["a", "s", "b", "c"].into_iter().map(start).collect();
    assert!(host.1.borrow().is_empty(), "h works: nobody's wait ends");
    // A steered message reaches its waiting turn while the tree works.
    let (r, parent) = (rt.clone(), root.clone());
    let s = ids[1].clone();
    exec.run_until(async move {
        r.prompt(&parent, &s, Value::from("go"), subagent_tree::runtime::Scheduling::Steer, &Signal::never())
            .await
            .unwrap()
    });
    exec.run_idle();
    assert_eq!(*host.1.borrow(), [("s".to_owned(), WaitEnd::Steered)]);
    // Once h stops, the tree is quiet for the waiters: they go on one at a
    // time, in the order they began waiting (s's next turn, on the message it
    // did not take, began its wait last).
    assert!(rt.interrupt(&h.child_id, InterruptAuthority::Ancestor(&root)).unwrap().signalled);
    exec.run_idle();
    let ends: Vec<String> = host.1.borrow().iter().map(|(n, e)| format!("{n}:{e:?}")).collect();
    assert_eq!(ends, ["s:Steered", "a:Quiet", "b:Quiet", "c:Quiet", "s:Quiet"]);
}

/// `first` is read from the log: a reopened root that ran turns is past its
/// first, one that never ran is not (issue 41).
#[test]
fn a_reopened_root_is_first_only_when_its_log_holds_no_turn() {
    let prompt = |h: &Harness, root: &Agent, text: &'static str| {
        let (rt, r) = (h.rt.clone(), root.clone());
        h.run(async move { rt.prompt(&r, "lead", Value::from(text), Scheduling::Queue, &Signal::never()).await })
            .unwrap();
        h.settle();
    };
    let ran = Harness::wide();
    let root = ran.root();
    prompt(&ran, &root, "plan the release");
    assert!(ran.host.turns_of("lead")[0].first);
    let never = Harness::wide();
    never.root();
    for (store, was_run) in [(ran.store.clone(), true), (never.store.clone(), false)] {
        let h = Harness::over(store, "b", RuntimeOptions::default());
        let root = h.root();
        prompt(&h, &root, "and now?");
        prompt(&h, &root, "and then?");
        let firsts: Vec<bool> = h.host.turns_of("lead").iter().map(|t| t.first).collect();
        assert_eq!(firsts, [!was_run, false], "a root that ran: {was_run}");
    }
}

/// A cold member whose only turn was lost and is run again never finished a
/// turn: the rerun is its first (with its return guidance). Reported instead,
/// the lost turn consumed its input: the next turn is not first.
#[test]
fn a_resumed_child_is_first_until_a_turn_of_it_consumed_input() {
    for (recovery, first) in [(Recovery::Rerun, true), (Recovery::Report, false)] {
        let store;
        let id;
        {
            let h = Harness::wide();
            store = h.store.clone();
            let root = h.root();
            h.host.hold("w");
            id = start(&h, spec(&root, Some("w"))).unwrap().child_id.clone();
            h.settle();
            assert_eq!(h.host.turns_of("w").len(), 1, "the turn started, then the process died");
        }
        let h = Harness::over(store, "b", RuntimeOptions { recovery, ..RuntimeOptions::default() });
        let root = h.root();
        h.settle();
        let (rt, r) = (h.rt.clone(), root.clone());
        h.run(async move { rt.send_message(&r, &id, Value::from("go on"), &Signal::never()).await }).unwrap();
        h.settle();
        let turns = h.host.turns_of("w");
        assert_eq!(turns[0].first, first, "{recovery:?}");
        assert_eq!(turns[0].guidance.is_some(), first, "{recovery:?}");
        assert!(turns[1..].iter().all(|t| !t.first), "{recovery:?}");
    }
}

/// One mistake, one answer (issue 41): a mistyped name is `UNKNOWN_AGENT`
/// with the same "did you mean" hint from every entry that takes a name, and
/// nothing is written; a Session id outside the tree stays `UNAUTHORIZED`; a
/// member's Session id shaped like a name still reaches it.
#[test]
fn a_mistyped_name_gets_one_answer_everywhere_and_writes_nothing() {
    use subagent_tree::tools::SEND_MESSAGE;
    let h = Harness::wide();
    let root = h.root();
    let writer = start(&h, spec(&root, Some("writer"))).unwrap();
    h.settle();
    let hint = "no agent named \"writr\" exists in this tree; did you mean `writer`?";
    let lengths = |h: &Harness| -> Vec<usize> {
        ["root", writer.child_id.as_str()]
            .iter()
            .map(|id| h.store.read_now(id, &ReadQuery::default()).map_or(0, |e| e.len()))
            .collect()
    };
    for resident in [false, true] {
        let held = resident.then(|| {
            let (rt, r, id) = (h.rt.clone(), root.clone(), writer.child_id.clone());
            h.run(async move { rt.reopen(&r, &id, &Signal::never()).await.unwrap() })
        });
        let before = lengths(&h);
        let (rt, r) = (h.rt.clone(), root.clone());
        let answers = h.run(async move {
            let s = Signal::never();
            let text = || Value::from("hello");
            vec![
                rt.prompt(&r, "writr", text(), Scheduling::Queue, &s).await.map(|_| ()),
                rt.ask(&r, "writr", text(), Scheduling::Queue, &s).await.map(|_| ()),
                rt.reopen(&r, "writr", &s).await.map(|_| ()),
                rt.resolve_name(&r, "writr", &s).await.map(|_| ()),
                subagent_tree::listing::resolve_name(&*rt.store(), "root", "writr", &s).await.map(|_| ()),
            ]
        });
        for (i, answer) in answers.into_iter().enumerate() {
            let e = answer.unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::UnknownAgent, hint), "entry {i}, resident {resident}");
        }
        let tools = h.rt.tools_for(&root).unwrap();
        let input = Value::object([("agent", Some(Value::from("writr"))), ("message", Some(Value::from("hi")))]);
        let result = h.run(async move { tools.call(SEND_MESSAGE, &input, &Signal::never()).await });
        assert!(result.is_error && result.content.contains(hint), "{}", result.content);
        assert_eq!(lengths(&h), before, "nothing written");
        drop(held);
        h.settle();
    }
    // A Session id outside the tree is no name: UNAUTHORIZED, as before.
    let (rt, r) = (h.rt.clone(), root.clone());
    let foreign = "0b7e3f5a-1c2d-4e5f-8a9b-0c1d2e3f4a5b-not-here";
    let e = h
        .run(async move { rt.prompt(&r, foreign, Value::from("x"), Scheduling::Queue, &Signal::never()).await })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Unauthorized, "{e}");
    // The writer's Session id (`as-1` here) has a name's shape and still reaches it, cold.
    assert!(subagent_tree::name::is_valid_name(&writer.child_id));
    let (rt, r, id) = (h.rt.clone(), root.clone(), writer.child_id.clone());
    h.run(async move { rt.prompt(&r, &id, Value::from("by id"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    let (rt, id) = (h.rt.clone(), writer.child_id.clone());
    let found =
        h.run(async move { subagent_tree::listing::resolve_name(&*rt.store(), "root", &id, &Signal::never()).await });
    assert_eq!(found.unwrap(), writer.child_id);
}

/// What a tree spends (issue 44): each turn's usage in its `turn/end` and its
/// `subagent/turn` event, an external run's in its creator's log, rolled up
/// per member and subtree by `usage`, in listing rows and in activation
/// results; a new runtime over the same store reports the same totals.
#[test]
fn usage_is_recorded_with_each_turn_and_rolled_up_per_subtree() {
    use subagent_tree::core::usage::Usage;
    let spend = |input: u64, output: u64| Usage { input_tokens: input, output_tokens: output, ..Usage::default() };
    let h = Harness::wide();
    h.rt.register_provider(Rc::new(Ext::default())).unwrap();
    for (name, input, output) in [("lead", 100, 20), ("reviewer", 40, 8), ("reviewer/checker", 10, 5)] {
        h.host.script(name, move |_| TurnOutcome { usage: Some(spend(input, output)), ..completed(name) });
    }
    let root = h.root();
    h.host.hold("reviewer"); // live while its children start
    let reviewer = start(&h, spec(&root, Some("reviewer"))).unwrap();
    let checker = start(&h, spec(&reviewer.agent().unwrap(), Some("checker"))).unwrap();
    let run =
        start(&h, ActivationSpec::new("ext", &reviewer.agent().unwrap(), "CI", "run the tests").named("ci")).unwrap();
    h.settle();
    h.host.open("reviewer");
    h.settle();
    // The checker's activation result carries its own and subtree totals.
    let r = h.run(checker.result()).unwrap();
    let totals = r.totals.unwrap();
    assert_eq!((totals.own.usage, totals.own.turns, totals.subtree.usage), (spend(10, 5), 1, spend(10, 5)));
    let ran = h.run(run.result()).unwrap();
    assert_eq!(ran.totals.unwrap().own.usage, spend(7, 3), "an external run's own usage is what it reported");
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "lead", Value::from("go"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    h.settle();
    // Durable: in each turn/end; the external run's in its creator's log.
    let ends = h.store.read_now(&checker.child_id, &ReadQuery::types(&[event::TURN_END], &Signal::never())).unwrap();
    assert_eq!(
        ends[0].payload.get("usage").map(Value::to_json).as_deref(),
        Some(r#"{"inputTokens":10,"outputTokens":5}"#)
    );
    let recorded =
        h.store.read_now(&reviewer.child_id, &ReadQuery::types(&[event::SUBAGENT_USAGE], &Signal::never())).unwrap();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].payload.get("childId").and_then(Value::as_str), Some(run.child_id.as_str()));
    // Turn events carry the turn's usage.
    let turn_usage: Vec<(String, Option<Usage>)> = h
        .events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Turn { name, stop_reason: Some(_), usage, .. } => Some((name.clone(), *usage)),
            _ => None,
        })
        .collect();
    assert!(turn_usage.contains(&("reviewer/checker".to_owned(), Some(spend(10, 5)))), "{turn_usage:?}");
    let report = |h: &Harness, root: &Agent, target: Option<&'static str>| {
        let (rt, r) = (h.rt.clone(), root.clone());
        h.run(async move { rt.usage(&r, target, &Signal::never()).await })
    };
    let all = report(&h, &root, None).unwrap();
    // lead: its first turn and the one for the reviewer's notice; reviewer: its
    // own and the one for its children's notices.
    assert_eq!((all.own.usage, all.own.turns), (spend(200, 40), 2));
    assert_eq!((all.subtree.usage, all.subtree.turns, all.subtree.complete), (spend(297, 64), 5, true));
    let sub = report(&h, &root, Some("reviewer")).unwrap();
    assert_eq!((sub.own.usage, sub.subtree.usage), (spend(80, 16), spend(97, 24)));
    assert_eq!(report(&h, &root, Some("reviewer/ci")).unwrap().own.usage, spend(7, 3));
    assert_eq!(report(&h, &root, Some("nobody")).unwrap_err().code, ErrorCode::UnknownAgent);
    // Listing rows carry the same totals.
    let rt = h.rt.clone();
    let rows = h.run(async move { rt.list_descendants("root", &Signal::never()).await.unwrap() });
    let by_path: Vec<(Option<String>, u64, u64)> = rows
        .iter()
        .map(|r| match &r.row {
            Row::Child(c) => (c.path_string(), r.live.usage.own.usage.tokens(), r.live.usage.subtree.usage.tokens()),
            Row::Diagnostic(_) => (None, 0, 0),
        })
        .collect();
    assert_eq!(
        by_path,
        [
            (Some("reviewer".to_owned()), 96, 121),
            (Some("reviewer/checker".to_owned()), 15, 15),
            (Some("reviewer/ci".to_owned()), 10, 10),
        ]
    );
    // A new runtime over the same store reports the same totals, cold members included.
    let again =
        Harness::over(h.store.clone(), "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let root2 = again.root();
    assert_eq!(report(&again, &root2, None).unwrap(), all);
}

/// A turn the host never finished has unknown usage: totals that include it
/// are not complete, and the rest is still summed (issue 44).
#[test]
fn a_lost_turn_makes_usage_incomplete() {
    use subagent_tree::core::usage::Usage;
    let store;
    {
        let h = Harness::wide();
        store = h.store.clone();
        h.host.script("lead", |_| TurnOutcome {
            usage: Some(Usage { input_tokens: 9, output_tokens: 1, ..Usage::default() }),
            ..completed("lead")
        });
        let root = h.root();
        let (rt, r) = (h.rt.clone(), root.clone());
        h.run(async move { rt.prompt(&r, "lead", Value::from("one"), Scheduling::Queue, &Signal::never()).await })
            .unwrap();
        h.settle();
        h.host.hold("w");
        start(&h, spec(&root, Some("w"))).unwrap();
        h.settle(); // w's turn started; then the process died
    }
    let h = Harness::over(store, "b", RuntimeOptions { recovery: Recovery::Off, ..RuntimeOptions::default() });
    let root = h.root();
    let (rt, r) = (h.rt.clone(), root.clone());
    let totals = h.run(async move { rt.usage(&r, None, &Signal::never()).await }).unwrap();
    assert_eq!((totals.subtree.usage.tokens(), totals.own.complete, totals.subtree.complete), (10, true, false));
    // Recorded as lost when it becomes resident again: still unknown.
    let h2 = Harness::over(h.store.clone(), "c", RuntimeOptions::default());
    let root = h2.root();
    h2.settle();
    let ends = h2.store.read_now("as-1", &ReadQuery::types(&[event::TURN_END], &Signal::never())).unwrap();
    assert_eq!(ends.last().and_then(|e| e.payload.get("usageUnknown")).and_then(Value::as_bool), Some(true));
    let (rt, r) = (h2.rt.clone(), root.clone());
    let totals = h2.run(async move { rt.usage(&r, Some("w"), &Signal::never()).await }).unwrap();
    assert_eq!((totals.own.turns, totals.own.complete), (1, false));
}

/// Streamed parts (issue 45): a running turn's parts reach listeners as
/// `Delta` events in order, scoped by tree; a part for a turn that ended is
/// ignored, even while the member's next turn runs; nothing is stored.
#[test]
fn a_running_turn_streams_parts_and_a_late_part_is_ignored() {
    use std::cell::RefCell;
    use subagent_tree::core::delta::{Part, PartKind};
    use subagent_tree::exec::{Deferred, LocalExecutor};
    use subagent_tree::ports::AgentHost;
    // A host whose turns wait for a gate, and which keeps each turn's handle and id.
    type Kept = Vec<(Agent, u64, Deferred<()>)>;
    #[derive(Clone, Default)]
    struct Streaming(Rc<RefCell<Kept>>);
    impl AgentHost for Streaming {
        fn run_turn(&self, turn: subagent_tree::ports::Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
            let gate = Deferred::new();
            self.0.borrow_mut().push((turn.agent.clone(), turn.steer.turn_id(), gate.clone()));
            Box::pin(async move {
                gate.wait().await;
                Ok(completed("done"))
            })
        }
    }
    let exec = LocalExecutor::new();
    let host = Streaming::default();
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let rt =
        subagent_tree::testkit::runtime(store.clone(), Rc::new(host.clone()), &exec, "d", RuntimeOptions::default());
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    rt.subscribe(
        Some("root".into()),
        Rc::new(move |e: &RuntimeEvent| {
            if let RuntimeEvent::Delta { name, turn_id, part, .. } = e {
                sink.borrow_mut().push((name.clone(), *turn_id, part.text.clone()));
            }
        }),
    );
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let other = {
        let r = rt.clone();
        exec.run_until(async move { r.open_root(Some("other".into()), None).await.unwrap() }).unwrap()
    };
    let prompt = |root: &Agent| {
        let (r, a) = (rt.clone(), root.clone());
        exec.run_until(
            async move { r.prompt(&a, "lead", Value::from("go"), Scheduling::Queue, &Signal::never()).await },
        )
        .unwrap()
        .unwrap();
        exec.run_idle();
    };
    prompt(&root);
    prompt(&other);
    let part = |text: &str| Part { kind: PartKind::TextDelta, text: text.into() };
    let (first_agent, first_turn, first_gate) = host.0.borrow()[0].clone();
    let (other_agent, other_turn, _) = host.0.borrow()[1].clone();
    assert!(rt.emit_part(&first_agent, first_turn, part("Hel")));
    assert!(rt.emit_part(&first_agent, first_turn, part("lo")));
    assert!(rt.emit_part(&other_agent, other_turn, part("not this tree")), "emitted, to the other tree's listeners");
    first_gate.set(());
    exec.run_idle();
    prompt(&root); // the next turn runs
    let (_, next_turn, _) = host.0.borrow()[2].clone();
    assert_ne!(next_turn, first_turn);
    assert!(!rt.emit_part(&first_agent, first_turn, part("late")), "the ended turn's part is ignored");
    assert!(rt.emit_part(&first_agent, next_turn, part("again")));
    assert_eq!(
        *seen.borrow(),
        [
            ("lead".to_owned(), first_turn, "Hel".to_owned()),
            ("lead".into(), first_turn, "lo".into()),
            ("lead".into(), next_turn, "again".into())
        ]
    );
    let stored = store.read_now("root", &ReadQuery::default()).unwrap();
    assert!(stored.iter().all(|e| !e.payload.to_json().contains("Hel")), "deltas are never stored");
}

/// A tree as it is after a restart (issue 51): each member's last turn (how it
/// stopped, its latest output) read from the logs by `list_tree`, the root's
/// too; and from the store alone, a turn still open shows as open.
#[test]
fn a_tree_lists_each_members_last_turn_after_a_restart() {
    use subagent_tree::core::turns::{list_tree, Turns};
    let h = Harness::wide();
    let root = h.root();
    h.host.script("reviewer", |_| completed("reviewed: ship it"));
    h.host.hold("worker");
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "lead", Value::from("go"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    let reviewer = start(&h, spec(&root, Some("reviewer"))).unwrap();
    let worker = start(&h, spec(&root, Some("worker"))).unwrap();
    h.settle();
    // From the store alone, while worker's turn runs: open, nothing ended yet.
    let store = h.store.clone();
    let listing = h.run(async move { list_tree(&store, "root", &Signal::never()).await }).unwrap();
    let turns_of = |id: &str| listing.rows.iter().position(|r| r.id() == id).and_then(|i| listing.turns[i].clone());
    assert_eq!(turns_of(&worker.child_id), Some(Turns { open: true, stop_reason: None, output: None, preset: None }));
    assert_eq!(
        turns_of(&reviewer.child_id),
        Some(Turns {
            open: false,
            stop_reason: Some("completed".into()),
            output: Some("reviewed: ship it".into()),
            preset: None
        })
    );
    h.rt.interrupt(&worker.child_id, InterruptAuthority::Ancestor(&root)).unwrap();
    h.settle();
    // A new runtime over the same store: nothing resident, the logs still say how each stopped.
    let again =
        Harness::over(h.store.clone(), "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let _root2 = again.root();
    let rt = again.rt.clone();
    let (root_live, rows) = again.run(async move { rt.list_tree("root", &Signal::never()).await }).unwrap();
    assert_eq!(root_live.turns.stop_reason.as_deref(), Some("completed"));
    assert!(root_live.turns.output.is_some(), "the root's latest output");
    let last = |id: &str| {
        let row = rows.iter().find(|r| r.row.id() == id).unwrap();
        (row.live.running, row.live.turns.stop_reason.clone(), row.live.turns.output.clone())
    };
    assert_eq!(last(&reviewer.child_id), (false, Some("completed".into()), Some("reviewed: ship it".into())));
    assert_eq!(last(&worker.child_id), (false, Some("aborted".into()), None));
}

#[test]
fn a_members_trace_context_is_kept_in_its_log_and_carried_after_a_restart() {
    use std::cell::RefCell;
    use subagent_tree::core::trace::TraceContext;
    use subagent_tree::runtime::TraceSource;
    // A source that hands each member a context of its own and records who asked.
    let source = |asked: Rc<RefCell<Vec<String>>>| -> TraceSource {
        Rc::new(move |r| {
            asked.borrow_mut().push(format!("{} parent={:?}", r.name, r.parent_id.is_some()));
            let n = asked.borrow().len();
            Some(TraceContext::new(&format!("00-{:032x}-{:016x}-01", 7, n), None).unwrap())
        })
    };
    let trace_of = |n: usize| format!("00-{:032x}-{:016x}-01", 7, n);
    let store;
    let asked = Rc::new(RefCell::new(Vec::new()));
    {
        let h = Harness::wide();
        store = h.store.clone();
        h.rt.set_trace_source(Some(source(asked.clone())));
        let root = h.root();
        let starts = Rc::new(RefCell::new(Vec::new()));
        let sink = starts.clone();
        h.rt.subscribe(
            None,
            Rc::new(move |e: &RuntimeEvent| {
                if let RuntimeEvent::Start(i) = e {
                    sink.borrow_mut().push((i.name.clone(), i.trace.clone().map(|t| t.traceparent)));
                }
            }),
        );
        start(&h, spec(&root, Some("reviewer"))).unwrap();
        h.settle();
        assert_eq!(*asked.borrow(), ["lead parent=false", "reviewer parent=true"]);
        assert_eq!(*starts.borrow(), [("reviewer".to_owned(), Some(trace_of(2)))]);
    }
    // A new runtime: the logs already keep both contexts, so nobody is asked; turns carry them.
    let h = Harness::over(store, "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let asked_again = Rc::new(RefCell::new(Vec::new()));
    h.rt.set_trace_source(Some(source(asked_again.clone())));
    let root = h.root();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let sink = seen.clone();
    h.rt.subscribe(
        None,
        Rc::new(move |e: &RuntimeEvent| match e {
            RuntimeEvent::Start(i) => {
                sink.borrow_mut().push(format!("start {} {:?}", i.name, i.trace.as_ref().map(|t| &t.traceparent)))
            }
            RuntimeEvent::Turn { name, stop_reason: None, trace, .. } => {
                sink.borrow_mut().push(format!("turn {name} {:?}", trace.as_ref().map(|t| &t.traceparent)))
            }
            _ => {}
        }),
    );
    let (rt, r) = (h.rt.clone(), root.clone());
    let reviewer = h.run(async move { rt.resolve_name(&r, "reviewer", &Signal::never()).await }).unwrap();
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.send_message(&r, &reviewer, Value::from("again"), &Signal::never()).await }).unwrap();
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "lead", Value::from("go"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    h.settle();
    assert!(asked_again.borrow().is_empty(), "asked for {:?}", asked_again.borrow());
    let seen = seen.borrow().clone();
    assert!(seen.contains(&format!("start reviewer Some({:?})", trace_of(2))), "{seen:?}");
    assert!(seen.contains(&format!("turn reviewer Some({:?})", trace_of(2))), "{seen:?}");
    assert!(seen.contains(&format!("turn lead Some({:?})", trace_of(1))), "{seen:?}");
}

#[test]
fn queued_input_is_bounded_per_member_and_per_runtime_and_room_returns_when_a_turn_takes_it() {
    let limits = subagent_tree::core::limits::Limits {
        member_queue_bytes: 1 << 20,
        queue_bytes: (1 << 20) + (512 << 10),
        ..Default::default()
    };
    let h = Harness::new(RuntimeOptions { max_depth: 4, capacity: 32, limits, ..RuntimeOptions::default() });
    let root = h.root();
    h.host.hold("busy");
    h.host.hold("other");
    let busy = start(&h, spec(&root, Some("busy"))).unwrap();
    let other = start(&h, spec(&root, Some("other"))).unwrap();
    h.settle();
    let send = |id: &str, kib: usize| {
        let (rt, r, id) = (h.rt.clone(), root.clone(), id.to_owned());
        let text = Value::from("x".repeat(kib << 10));
        h.run(async move { rt.send_message(&r, &id, text, &Signal::never()).await })
    };
    // busy's turn runs: messages queue until its cap.
    let mut accepted = 0;
    let refused = loop {
        match send(&busy.child_id, 100) {
            Ok(_) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 20, "the queue was never bounded");
    };
    assert_eq!(accepted, 10, "ten messages of 100 KiB fit in 1 MiB");
    assert_eq!(refused.code, ErrorCode::LimitExceeded);
    assert!(refused.message.contains("limits.memberQueueBytes (1048576)"), "{}", refused.message);
    // The runtime's total: other may take 512 KiB more, not more.
    for _ in 0..4 {
        send(&other.child_id, 100).unwrap();
    }
    let total = send(&other.child_id, 200).unwrap_err();
    assert_eq!(total.code, ErrorCode::LimitExceeded);
    assert!(total.message.contains("limits.queueBytes"), "{}", total.message);
    // A refused message wrote nothing: busy's log holds the ten, plus its first prompt.
    let messages = |id: &str| {
        let (store, id) = (h.store.clone(), id.to_owned());
        h.run(async move {
            use subagent_tree::store::Store;
            store.read(&id, &ReadQuery::types(&[event::MESSAGE], &Signal::never())).await.unwrap().unwrap().len()
        })
    };
    assert_eq!(messages(&busy.child_id), 11);
    // busy's turn ends; the next turn takes the queue, and room returns.
    h.host.open("busy");
    h.settle();
    send(&busy.child_id, 100).unwrap();
    h.host.open("other");
    h.settle();
}

/// Issue 67: an external run streams text and its own tool calls through its
/// start's token, published as its child's `subagent/delta` and `subagent/tool`;
/// nothing of another run's, and nothing once the run has left.
#[test]
fn an_external_run_streams_text_and_tool_calls_as_its_childs() {
    use subagent_tree::core::delta::{Part, PartKind, RunPart};
    let h = Harness::wide();
    let streamer = runtime_support::UntilAborted::named("streamer");
    let tokens = streamer.tokens.clone();
    h.rt.register_provider(Rc::new(streamer)).unwrap();
    let root = h.root();
    let mut s = spec(&root, Some("coder"));
    s.provider = "streamer".into();
    let coder = start(&h, s).unwrap();
    let token = tokens.borrow()[0];
    let text = |t: &str| RunPart::Delta(Part { kind: PartKind::TextDelta, text: t.into() });
    assert!(h.rt.emit_run(token, text("Reading ")));
    let call = RunPart::ToolCall { key: "c1".into(), tool: "Read".into(), input: Some(Value::from("a.rs")) };
    assert!(h.rt.emit_run(token, call.clone()));
    assert!(!h.rt.emit_run(token, call), "a call id open twice is ignored");
    let end = RunPart::ToolResult { key: "c1".into(), output: "ok".into(), is_error: false };
    assert!(h.rt.emit_run(token, end.clone()));
    assert!(!h.rt.emit_run(token, end), "a result for no open call is ignored");
    assert!(!h.rt.emit_run(token + 1_000, text("forged")), "an unknown token names nobody");
    let seen: Vec<String> = h
        .events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Delta { name, turn_id, part, .. } => {
                Some(format!("{name} delta {} {}", *turn_id == token, part.text))
            }
            RuntimeEvent::Tool { name, tool, input, end, .. } => Some(match end {
                None => format!("{name} call {tool} {input:?}"),
                Some(end) => format!("{name} result {tool} {} {}", end.content, end.is_error),
            }),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        ["coder delta true Reading ", "coder call Read Some(String(\"a.rs\"))", "coder result Read ok false",]
    );
    // Gone: nothing more is published.
    h.rt.interrupt(&coder.child_id, InterruptAuthority::Tree(&root)).unwrap();
    h.settle();
    assert!(!h.rt.is_resident(&coder.child_id));
    assert!(!h.rt.emit_run(token, text("late")));
}

/// Issue 68, point 1 (seed 003: "in-process providers merge them over the
/// parent Agent's options when they create the child"; "records Session
/// authorization before the first model request"): a root's options from
/// openRoot, a child's merged over its creator's, recorded before its first
/// turn, given to every turn, and restored by a cold resume in a new runtime.
#[test]
fn agent_options_merge_over_the_creators_are_recorded_first_and_survive_a_restart() {
    use subagent_tree::core::agent_options::AgentOptions;
    use subagent_tree::runtime::RootSettings;
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let h =
        Harness::over(store.clone(), "a", RuntimeOptions { max_depth: 3, capacity: 8, ..RuntimeOptions::default() });
    let root_options =
        AgentOptions { provider: Some("openai".into()), model: Some("big".into()), ..Default::default() };
    let rt = h.rt.clone();
    let settings = RootSettings { agent_options: Some(root_options.clone()), budget: None };
    let root = h.run(async move { rt.open_root_with(Some("root".into()), None, settings).await.unwrap() });
    let mut s = spec(&root, Some("reviewer"));
    s.agent_options =
        Some(Value::object([("model", Some(Value::from("small"))), ("maxOutputTokens", Some(Value::from(500u64)))]));
    let reviewer = start(&h, s).unwrap();
    h.settle();
    let merged = AgentOptions {
        provider: Some("openai".into()),
        model: Some("small".into()),
        reasoning_effort: None,
        max_output_tokens: Some(500),
    };
    // Recorded in the child's session/start, before its first turn began.
    let log = h.store.read_now(&reviewer.child_id, &ReadQuery::default()).unwrap();
    let start_at = log.iter().position(|e| e.kind == event::SESSION_START).unwrap();
    let turn_at = log.iter().position(|e| e.kind == event::TURN_START).unwrap();
    assert!(start_at < turn_at);
    assert_eq!(log[start_at].payload.get("agentOptions"), Some(&merged.to_value()));
    // The root's in its own log, before any turn of it.
    let root_log = h.store.read_now("root", &ReadQuery::default()).unwrap();
    assert_eq!(root_log[0].kind, event::AGENT_OPTIONS);
    // Every turn sees them.
    assert_eq!(h.host.turns_of("reviewer")[0].agent_options.as_ref(), Some(&merged));
    // A grandchild with none of its own runs with its creator's.
    let rt = h.rt.clone();
    let held = h.run({
        let root = root.clone();
        async move { rt.reopen(&root, "reviewer", &Signal::never()).await.unwrap() }
    });
    let checker = start(&h, spec(&held.agent(), Some("checker"))).unwrap();
    drop(held);
    h.settle();
    assert_eq!(h.host.turns_of("reviewer/checker")[0].agent_options.as_ref(), Some(&merged));
    // A restart: a new runtime resumes reviewer cold, with the same options; the root reopens with its own.
    let again = Harness::over(store, "b", RuntimeOptions { max_depth: 3, capacity: 8, ..RuntimeOptions::default() });
    let root2 = again.root();
    let (rt, r) = (again.rt.clone(), root2.clone());
    again
        .run(async move { rt.prompt(&r, "reviewer", Value::from("once more"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    again.settle();
    assert_eq!(again.host.turns_of("reviewer")[0].agent_options.as_ref(), Some(&merged), "restored from its log");
    let (rt, r) = (again.rt.clone(), root2.clone());
    again
        .run(async move { rt.prompt(&r, "lead", Value::from("hi"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    again.settle();
    assert_eq!(again.host.turns_of("lead")[0].agent_options.as_ref(), Some(&root_options));
    assert!(!checker.child_id.is_empty());
    // Bad options are refused before anything starts.
    let mut bad = spec(&root, Some("bad"));
    bad.agent_options = Some(Value::object([("modle", Some(Value::from("x")))]));
    assert_eq!(start(&h, bad).unwrap_err().code, ErrorCode::InvalidArgument);
}

/// Issue 68, point 4 (seed 003: `resolveMaxDepth(configured?: number |
/// 'provider-managed')` "returns ... undefined when the provider owns depth
/// enforcement"): a provider that manages its depth starts external runs past
/// the tree's limit, and its tool says so; any other is held to the limit.
#[test]
fn a_provider_that_manages_depth_is_not_held_to_the_trees_limit() {
    let h = Harness::new(RuntimeOptions { max_depth: 1, capacity: 8, ..RuntimeOptions::default() });
    let mut managed = runtime_support::UntilAborted::named("deep");
    managed.manages_depth = true;
    h.rt.register_provider(Rc::new(managed)).unwrap();
    h.rt.register_provider(Rc::new(runtime_support::UntilAborted::named("shallow"))).unwrap();
    let root = h.root();
    h.host.hold("worker");
    let worker = start(&h, spec(&root, Some("worker"))).unwrap().agent().unwrap();
    let under = |provider: &str, name: &str| {
        let mut s = spec(&worker, Some(name));
        s.provider = provider.into();
        start(&h, s)
    };
    assert_eq!(under("shallow", "one").unwrap_err().code, ErrorCode::DepthExceeded);
    let deep = under("deep", "two").unwrap();
    assert_eq!(deep.name, "worker/two");
    let tools = h.rt.tools_for(&worker).unwrap();
    // At the limit, only the provider that manages its depth still offers its tool, and says why.
    let spec_of = |tool: &str| tools.specs().iter().find(|s| s.name == tool).map(|s| s.description.clone());
    assert!(spec_of("deep_agent").unwrap().contains("It manages its own depth"), "{:?}", spec_of("deep_agent"));
    assert_eq!(spec_of("shallow_agent"), None);
    assert_eq!(spec_of("spawn_agent"), None);
    let root_tools = h.rt.tools_for(&root).unwrap();
    let shallow = root_tools.specs().iter().find(|s| s.name == "shallow_agent").unwrap();
    assert!(!shallow.description.contains("manages its own depth"));
}

/// Issue 68, point 3 (seed 003: "Spawn alone supports an independent
/// agentPreset; omission and fork inherit the parent's active composition.
/// The child preset rules define explicit selection, event ordering, and
/// historical restoration."): spawn names a preset, omission and fork join
/// the creator's; it is recorded before the first turn, shapes the options
/// (under explicit ones) and the tools, and a cold resume restores it.
#[test]
fn presets_are_chosen_by_spawn_joined_by_omission_and_fork_recorded_and_restored() {
    use subagent_tree::core::agent_options::AgentOptions;
    use subagent_tree::runtime::presets::Preset;
    let mut presets = subagent_tree::runtime::presets::Presets::default();
    let reviewer_options =
        AgentOptions { model: Some("review-model".into()), max_output_tokens: Some(700), ..Default::default() };
    presets.insert(
        "reviewer".into(),
        Preset {
            description: Some("Reads code".into()),
            agent_options: Some(reviewer_options),
            only: None,
            except: vec!["spawn_agent".into()],
        },
    );
    let options = RuntimeOptions { max_depth: 3, capacity: 8, presets, ..RuntimeOptions::default() };
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let h = Harness::over(store.clone(), "a", options.clone());
    let root = h.root();
    h.host.hold("critic");
    let mut s = spec(&root, Some("critic"));
    s.agent_preset = Some("reviewer".into());
    s.agent_options = Some(Value::object([("model", Some(Value::from("own-model")))]));
    let critic = start(&h, s).unwrap();
    h.settle();
    let seen = &h.host.turns_of("critic")[0];
    let expected = AgentOptions { model: Some("own-model".into()), max_output_tokens: Some(700), ..Default::default() };
    assert_eq!(seen.agent_options.as_ref(), Some(&expected), "its own model over the preset's, the preset's cap");
    let log = h.store.read_now(&critic.child_id, &ReadQuery::default()).unwrap();
    let start_event = log.iter().find(|e| e.kind == event::SESSION_START).unwrap();
    assert_eq!(start_event.payload.get("agentPreset"), Some(&Value::from("reviewer")));
    // Its tools: the preset leaves spawn_agent out (fork_agent stays).
    let agent = critic.agent().unwrap();
    let names: Vec<String> = h.rt.tools_for(&agent).unwrap().specs().iter().map(|s| s.name.clone()).collect();
    assert!(!names.contains(&"spawn_agent".to_owned()) && names.contains(&"fork_agent".to_owned()), "{names:?}");
    // A child that names none, and a fork, join the creator's preset.
    let plain = start(&h, spec(&agent, Some("plain"))).unwrap();
    let mut f = spec(&agent, Some("forked"));
    f.provider = "fork".into();
    let forked = start(&h, f).unwrap();
    h.settle();
    for name in ["critic/plain", "critic/forked"] {
        let seen = &h.host.turns_of(name)[0];
        assert_eq!(seen.agent_options.as_ref().and_then(|o| o.model.as_deref()), Some("own-model"), "{name}");
    }
    for id in [&plain.child_id, &forked.child_id] {
        let log = h.store.read_now(id, &ReadQuery::default()).unwrap();
        let inherited = event::inherited_event_count(&log);
        let own = log.iter().find(|e| e.kind == event::SESSION_START && e.seq == inherited).unwrap();
        assert_eq!(own.payload.get("agentPreset"), Some(&Value::from("reviewer")));
    }
    // list_agents and the live listing show it.
    let tools = h.rt.tools_for(&root).unwrap();
    let scope = Value::object([("scope", Some(Value::from("descendants")))]);
    let text = h.run(async move { tools.call("list_agents", &scope, &Signal::never()).await });
    assert!(text.content.contains("preset reviewer"), "{}", text.content);
    let rt = h.rt.clone();
    let (_, rows) = h.run(async move { rt.list_tree("root", &Signal::never()).await.unwrap() });
    assert!(rows.iter().all(|r| r.live.turns.preset.as_deref() == Some("reviewer")), "every member runs with it");
    // An unknown preset is refused, naming the known ones; fork cannot name one.
    let mut bad = spec(&root, Some("bad"));
    bad.agent_preset = Some("writer".into());
    let e = start(&h, bad).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            ErrorCode::InvalidArgument,
            "agentPreset \"writer\" is not a preset of this runtime; the presets are reviewer"
        )
    );
    // The refusal held nothing: the name is free again (a leaked reservation would also hold a drain).
    start(&h, spec(&root, Some("bad"))).unwrap();
    let mut named_fork = spec(&root, Some("nf"));
    named_fork.provider = "fork".into();
    named_fork.agent_preset = Some("reviewer".into());
    assert_eq!(start(&h, named_fork).unwrap_err().code, ErrorCode::UnsupportedCapability);
    // A restart: the cold member runs with its preset again.
    h.host.open("critic");
    h.settle();
    let again = Harness::over(store, "b", options);
    let root2 = again.root();
    let (rt, r) = (again.rt.clone(), root2.clone());
    again.run(async move { rt.prompt(&r, "critic/plain", Value::from("again"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    again.settle();
    let turn = &again.host.turns_of("critic/plain")[0];
    assert_eq!(turn.agent_options.as_ref().and_then(|o| o.model.as_deref()), Some("own-model"));
    let held = again.run({
        let rt = again.rt.clone();
        async move { rt.reopen(&root2, "critic/plain", &Signal::never()).await.unwrap() }
    });
    let names: Vec<String> =
        again.rt.tools_for(&held.agent()).unwrap().specs().iter().map(|s| s.name.clone()).collect();
    assert!(!names.contains(&"spawn_agent".to_owned()), "restored preset narrows its tools: {names:?}");
}

/// Issue 69, point 1 (seed 003: "list_agents exposes the root and reachable
/// continuable descendants with running or inactive activity"): by default
/// the whole tree, whoever asks, the caller marked; the text stops after
/// MAX_TREE_LINES members with "and N more", the structured rows hold all.
#[test]
fn list_agents_shows_the_whole_tree_to_any_member() {
    use subagent_tree::tools::MAX_TREE_LINES;
    let h = Harness::new(subagent_tree::RuntimeOptions {
        max_depth: 2,
        capacity: 8,
        ..subagent_tree::RuntimeOptions::default()
    });
    let root = h.root();
    let start = |parent: &subagent_tree::Agent, name: &str| {
        let (rt, spec) =
            (h.rt.clone(), subagent_tree::ActivationSpec::new("spawn", parent, "task", "work").named(name));
        h.run(async move { rt.start_activation(spec).await.unwrap() })
    };
    h.host.hold("reviewer");
    h.host.hold("reviewer/checker");
    let reviewer = start(&root, "reviewer").agent().unwrap();
    let checker = start(&reviewer, "checker").agent().unwrap();
    start(&root, "writer");
    h.settle();
    let list = |agent: &subagent_tree::Agent| {
        let tools = h.rt.tools_for(agent).unwrap();
        h.run(async move { tools.call("list_agents", &Value::Object(Vec::new()), &Signal::never()).await })
    };
    let seen = list(&checker);
    assert_eq!(
        seen.content,
        [
            "The tree: 4 members (you are reviewer/checker; message any of them by full name; running = working now, inactive = idle or finished; neither says whether its task is done):",
            "- lead (root; inactive)",
            "  - reviewer (running: task)",
            "    - reviewer/checker (running: task) <- you",
            "  - writer (inactive: task)",
        ]
        .join("\n")
    );
    // Many members: the text is capped, the rows are not.
    for i in 0..MAX_TREE_LINES {
        start(&root, &format!("w{i}"));
    }
    h.settle();
    let big = list(&checker);
    let more = 4 + MAX_TREE_LINES - (MAX_TREE_LINES + 1);
    assert!(big.content.ends_with(&format!("\n... and {more} more")), "{}", big.content.lines().last().unwrap());
    let rows = big.structured.as_ref().and_then(|s| s.get("agents")).and_then(Value::as_array).unwrap();
    assert_eq!(rows.len(), 4 + MAX_TREE_LINES);
    assert_eq!(rows.iter().filter(|r| r.get("you") == Some(&Value::Bool(true))).count(), 1);
}

/// Issue 69, point 2 (seed 003: "relative paths resolve against the parent's
/// current effective directory … cold resume retains their logged directory
/// state"): a turn moves its member's directory (relative to the current one,
/// confined to the root's); it is logged as `session/cwd`, and later turns,
/// children started after it and a cold resume use it.
#[test]
fn a_turn_moves_its_members_directory_for_later_turns_children_and_a_resume() {
    let store = Rc::new(subagent_tree::MemoryStore::new());
    let options = RuntimeOptions { max_depth: 3, capacity: 8, ..RuntimeOptions::default() };
    let h = Harness::over(store.clone(), "a", options.clone());
    let root = h.root(); // at /work
    h.host.hold("reviewer");
    let reviewer = start(&h, spec(&root, Some("reviewer"))).unwrap();
    h.settle();
    let agent = reviewer.agent().unwrap();
    let turn_id = h.host.turns_of("reviewer")[0].turn_id; // its first turn, held open
    let set = |path: &str| {
        let (rt, agent, path) = (h.rt.clone(), agent.clone(), path.to_owned());
        h.run(async move { rt.set_cwd(&agent, turn_id, &path).await })
    };
    assert_eq!(set("src/core").unwrap(), "/work/src/core");
    assert_eq!(set("../runtime").unwrap(), "/work/src/runtime", "relative to the current one");
    assert_eq!(set("/etc").unwrap_err().code, ErrorCode::Unauthorized, "confined to the root's directory");
    let log = h.store.read_now(&reviewer.child_id, &ReadQuery::types(&[event::CWD], &Signal::never())).unwrap();
    assert_eq!(log.len(), 2, "each move is logged; the refusal wrote nothing");
    // A child started now starts there.
    let checker = start(&h, spec(&agent, Some("checker"))).unwrap();
    h.settle();
    assert_eq!(h.host.turns_of("reviewer/checker")[0].cwd, "/work/src/runtime");
    assert!(!checker.child_id.is_empty());
    // Its next turn, and after a restart a cold resume, run there.
    h.host.open("reviewer");
    h.settle();
    assert_eq!(set("x").unwrap_err().code, ErrorCode::ActivationClosing, "only during its running turn");
    let again = Harness::over(store, "b", options);
    let root2 = again.root();
    let (rt, r) = (again.rt.clone(), root2.clone());
    again
        .run(async move { rt.prompt(&r, "reviewer", Value::from("again"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    again.settle();
    assert_eq!(again.host.turns_of("reviewer")[0].cwd, "/work/src/runtime");
}

/// Issue 69, point 3 (seed 003: "the child's model must accept image
/// input"): with a host that takes text only, input with an image is refused
/// at admission (a prompt, a message, a start), nothing written; text passes.
#[test]
fn an_image_to_a_host_that_takes_text_only_is_refused_before_anything_is_written() {
    let h = Harness::wide();
    h.host.0.text_only.set(true);
    let root = h.root();
    let image = Value::Array(vec![
        Value::object([("type", Some(Value::from("text"))), ("text", Some(Value::from("look")))]),
        Value::object([
            ("type", Some(Value::from("image"))),
            ("data", Some(Value::from("aGk="))),
            ("mimeType", Some(Value::from("image/png"))),
        ]),
    ]);
    let before = h.store.len("root");
    let (rt, r, content) = (h.rt.clone(), root.clone(), image.clone());
    let e =
        h.run(async move { rt.prompt(&r, "lead", content, Scheduling::Queue, &Signal::never()).await }).unwrap_err();
    assert_eq!(e.code, ErrorCode::UnsupportedCapability, "{e}");
    let mut s = spec(&root, Some("viewer"));
    s.prompt = image;
    assert_eq!(start(&h, s).unwrap_err().code, ErrorCode::UnsupportedCapability);
    assert_eq!(h.store.len("root"), before, "nothing written");
    start(&h, spec(&root, Some("viewer"))).unwrap();
}

/// Issue 69, point 3 (seed 003: the prompt retains "the caller-minted request
/// identity and validated browser zone"): kept on the accepted message, in
/// its log, and read back with it.
#[test]
fn a_prompts_request_identity_and_time_zone_stay_with_the_message() {
    let h = Harness::wide();
    let root = h.root();
    let meta =
        subagent_tree::runtime::MessageMeta { request_id: Some("req-7".into()), time_zone: Some("Asia/Tokyo".into()) };
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(
        async move { rt.prompt_meta(&r, "lead", Value::from("hi"), Scheduling::Queue, meta, &Signal::never()).await },
    )
    .unwrap();
    h.settle();
    let log = h.store.read_now("root", &ReadQuery::types(&[event::MESSAGE], &Signal::never())).unwrap();
    assert_eq!(log[0].payload.get("requestId"), Some(&Value::from("req-7")));
    assert_eq!(log[0].payload.get("timeZone"), Some(&Value::from("Asia/Tokyo")));
    // A plain prompt carries neither.
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, "lead", Value::from("again"), Scheduling::Queue, &Signal::never()).await })
        .unwrap();
    let log = h.store.read_now("root", &ReadQuery::types(&[event::MESSAGE], &Signal::never())).unwrap();
    assert_eq!(log[1].payload.get("requestId"), None);
}
