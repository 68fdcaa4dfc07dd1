//! The lifecycle of live members (issue 10): child-first settlement,
//! interrupts that settle, host holds from `reopen`, names as user-facing
//! targets, quiescence, answers to prompts, crash recovery, and the seeds'
//! smaller rules (parent-handle authority, caller delivery, external notices).

mod runtime_support;

use runtime_support::{text, Harness};
use std::rc::Rc;
use subagent_tree::event;
use subagent_tree::json::Value;
use subagent_tree::runtime::{Delivery, InterruptAuthority, Recovery, Scheduling};
use subagent_tree::store::ReadQuery;
use subagent_tree::{Activation, ActivationSpec, Agent, ErrorCode, MemoryStore, RuntimeOptions, Signal};

fn options() -> RuntimeOptions {
    RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() }
}

fn start(h: &Harness, parent: &Agent, name: &str) -> Activation {
    let (rt, spec) =
        (h.rt.clone(), ActivationSpec::new("spawn", parent, "task", &format!("work of {name}")).named(name));
    h.run(async move { rt.start_activation(spec).await.unwrap() })
}

fn prompt(h: &Harness, root: &Agent, target: &str, body: &str) -> subagent_tree::Result<String> {
    let (rt, root, target, body) = (h.rt.clone(), root.clone(), target.to_owned(), body.to_owned());
    h.run(async move { rt.prompt(&root, &target, Value::from(body), Scheduling::Queue, &Signal::never()).await })
}

fn notices_to(h: &Harness, name: &str) -> Vec<String> {
    h.host.turns_of(name).iter().flat_map(|t| t.input.clone()).filter(|i| i.starts_with("Subagent ")).collect()
}

#[test]
fn a_member_resumed_while_its_child_works_owns_it_and_settles_after_it() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    h.host.hold("reviewer");
    let reviewer = start(&h, &root, "reviewer");
    let checker = start(&h, &reviewer.agent().unwrap(), "checker");
    h.host.open("reviewer");
    h.settle();
    assert!(h.rt.resident().is_empty() || h.rt.resident() == ["root"], "both settled: {:?}", h.rt.resident());
    // The child is resumed alone first and holds its turn open; then its cold creator is resumed.
    h.host.hold("reviewer/checker");
    prompt(&h, &root, "reviewer/checker", "check again").unwrap();
    h.settle();
    prompt(&h, &root, "reviewer", "review again").unwrap();
    h.settle();
    assert!(h.rt.is_resident(&reviewer.child_id), "reviewer owns a working child: it cannot settle");
    h.host.open("reviewer/checker");
    h.settle();
    assert!(!h.rt.is_resident(&checker.child_id) && !h.rt.is_resident(&reviewer.child_id));
    let notices = notices_to(&h, "reviewer");
    assert!(notices.iter().any(|n| n.starts_with("Subagent reviewer/checker finished.")), "{notices:?}");
    let ends: Vec<String> = h.ends().into_iter().map(|(name, _)| name).collect();
    let (c, r) = (ends.iter().rposition(|n| n == "reviewer/checker"), ends.iter().rposition(|n| n == "reviewer"));
    assert!(c < r, "child-first: {ends:?}");
}

#[test]
fn an_interrupt_settles_a_member_with_nothing_parked_and_says_whether_it_stopped_a_turn() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    h.host.hold("worker");
    let worker = start(&h, &root, "worker");
    h.settle();
    let receipt = h.rt.interrupt("worker", InterruptAuthority::Tree(&root)).unwrap();
    assert!(receipt.signalled, "a running turn was signalled");
    let again = h.rt.interrupt(&worker.child_id, InterruptAuthority::User).unwrap();
    assert!(!again.signalled, "the same turn is not signalled twice");
    h.settle();
    let result = h.run(worker.result()).unwrap();
    assert_eq!(result.stop_reason, "aborted");
    assert!(!h.rt.is_resident(&worker.child_id));
    assert!(notices_to(&h, "lead").iter().any(|n| n.starts_with("Subagent worker was stopped")));
    // A cold or absent target: an accepted no-op that claims nothing.
    assert!(!h.rt.interrupt("worker", InterruptAuthority::Tree(&root)).unwrap().signalled);
    assert!(!h.rt.interrupt("nobody", InterruptAuthority::User).unwrap().signalled);
    assert_eq!(h.rt.interrupt("lead", InterruptAuthority::User).unwrap_err().code, ErrorCode::InvalidArgument);
}

#[test]
fn an_interrupted_member_with_parked_input_waits_resident_for_a_waking_send() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    h.host.hold("worker");
    let worker = start(&h, &root, "worker");
    h.settle();
    let (rt, r, id) = (h.rt.clone(), root.clone(), worker.child_id.clone());
    // Queued behind the running turn, then the turn is interrupted: the message is parked.
    h.run(async move { rt.prompt(&r, &id, Value::from("later"), Scheduling::Queue, &Signal::never()).await }).unwrap();
    assert!(h.rt.interrupt(&worker.child_id, InterruptAuthority::User).unwrap().signalled);
    h.settle();
    assert!(h.rt.is_resident(&worker.child_id), "parked input keeps it resident");
    assert_eq!(h.host.turns_of("worker").len(), 1);
    h.host.open("worker");
    prompt(&h, &root, "worker", "wake up").unwrap();
    h.settle();
    let turns = h.host.turns_of("worker");
    assert_eq!(turns.last().unwrap().input, ["later", "wake up"], "the parked FIFO comes first");
    assert_eq!(h.run(worker.result()).unwrap().stop_reason, "completed");
}

#[test]
fn reopen_gives_a_held_live_handle_to_a_cold_member_without_a_message() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    let reviewer = start(&h, &root, "reviewer");
    h.settle();
    assert!(!h.rt.is_resident(&reviewer.child_id));
    let turns_before = h.host.turns_of("reviewer").len();
    let (rt, r) = (h.rt.clone(), root.clone());
    let held = h.run(async move { rt.reopen(&r, "reviewer", &Signal::never()).await.unwrap() });
    h.settle();
    let agent = held.agent();
    assert!(agent.is_live() && agent.name() == "reviewer");
    assert_eq!(h.host.turns_of("reviewer").len(), turns_before, "reopening ran no turn");
    // A host spawns under it with no model turn of its own.
    let checker = start(&h, &agent, "checker");
    assert_eq!(checker.name, "reviewer/checker");
    held.release();
    h.settle();
    assert!(!h.rt.is_resident(&checker.child_id), "the child finished");
    assert!(notices_to(&h, "reviewer").iter().any(|n| n.starts_with("Subagent reviewer/checker finished.")));
    h.settle();
    assert!(!h.rt.is_resident(&reviewer.child_id), "released and done: it settled again");
    // Refusals: unknown names, the root by name, external runs; a dead root handle.
    let (rt, r) = (h.rt.clone(), root.clone());
    let unknown = h.run(async move { rt.reopen(&r, "nobody/here", &Signal::never()).await.err().unwrap() });
    assert_eq!(unknown.code, ErrorCode::UnknownAgent);
    let (rt, r) = (h.rt.clone(), root.clone());
    let lead = h.run(async move { rt.reopen(&r, "lead", &Signal::never()).await.unwrap() });
    assert!(lead.agent().same(&root));
}

#[test]
fn quiescence_waits_for_the_root_turn_too_and_ask_returns_the_answering_turn() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    h.host.hold("lead");
    let (rt, r) = (h.rt.clone(), root.clone());
    let (id, answer) = h.run(async move {
        let (id, answer) = rt.ask(&r, "lead", Value::from("plan"), Scheduling::Queue, &Signal::never()).await.unwrap();
        (id, Box::pin(answer))
    });
    assert!(!id.is_empty());
    let (rt, r) = (h.rt.clone(), root.clone());
    let quiet = Rc::new(std::cell::Cell::new(false));
    let flag = quiet.clone();
    let exec = h.exec.clone();
    exec.spawn(Box::pin(async move {
        rt.wait_for_quiescence(&r, &Signal::never()).await.unwrap();
        flag.set(true);
    }));
    h.settle();
    assert!(!quiet.get(), "the root's turn is running: the tree is not quiet");
    h.host.open("lead");
    h.settle();
    assert!(quiet.get());
    let result = h.run(answer).unwrap();
    assert_eq!(text(&result.output), "done by lead");
}

#[test]
fn a_turn_lost_in_a_crash_is_reported_and_its_creator_told() {
    let store = Rc::new(MemoryStore::new());
    let worker_id;
    {
        let h = Harness::over(store.clone(), "a", options());
        let root = h.root();
        h.host.hold("worker");
        worker_id = start(&h, &root, "worker").child_id;
        h.settle();
        // The process dies here: the worker's turn started and never ended.
    }
    let h = Harness::over(store.clone(), "b", options());
    let _root = h.root();
    h.settle();
    let log = store.read_now(&worker_id, &ReadQuery::types(&[event::TURN_START, event::TURN_END], &Signal::never()));
    let kinds: Vec<String> = log.unwrap().iter().map(|e| e.kind.clone()).collect();
    assert_eq!(kinds, ["turn/start", "turn/end"], "the lost turn is on record, once");
    let notices = notices_to(&h, "lead");
    assert!(
        notices.iter().any(|n| n.starts_with("Subagent worker failed.") && n.contains("host stopped")),
        "{notices:?}"
    );
    assert!(h.host.turns_of("worker").is_empty(), "report mode does not run it again");
    assert!(!h.rt.is_resident(&worker_id));
    // A third open finds nothing left to recover.
    let h3 = Harness::over(store, "c", options());
    h3.root();
    h3.settle();
    assert!(h3.host.turns_of("lead").is_empty() && h3.host.turns_of("worker").is_empty());
}

#[test]
fn rerun_recovery_runs_a_lost_turn_again_and_pending_input_is_resumed_at_open() {
    let store = Rc::new(MemoryStore::new());
    {
        let h = Harness::over(store.clone(), "a", options());
        let root = h.root();
        h.host.hold("worker");
        start(&h, &root, "worker");
        h.settle();
        prompt(&h, &root, "worker", "and this too").unwrap(); // queued behind the lost turn
    }
    let h = Harness::over(store, "b", RuntimeOptions { recovery: Recovery::Rerun, ..options() });
    h.root();
    h.settle();
    let turns = h.host.turns_of("worker");
    assert_eq!(turns.len(), 1, "resumed at open, with no message");
    assert_eq!(turns[0].input, ["work of worker", "and this too"], "nothing accepted is lost");
}

#[test]
fn dead_or_forged_parents_are_unauthorized_and_caller_delivery_gets_no_return_guidance() {
    let h = Harness::over(Rc::new(MemoryStore::new()), "a", options());
    let root = h.root();
    h.host.hold("done");
    let done = start(&h, &root, "done");
    let dead = done.agent().unwrap();
    h.host.open("done");
    h.settle();
    let (rt, spec) = (h.rt.clone(), ActivationSpec::new("spawn", &dead, "x", "y"));
    let refused = h.run(async move { rt.start_activation(spec).await.err().unwrap() });
    assert_eq!(refused.code, ErrorCode::Unauthorized);
    assert!(refused.message.contains("\"done\""), "{}", refused.message);
    let mut spec = ActivationSpec::new("spawn", &root, "quiet", "work quietly").named("quiet");
    spec.delivery = Delivery::Caller;
    let rt = h.rt.clone();
    let quiet = h.run(async move { rt.start_activation(spec).await.unwrap() });
    h.settle();
    let seen = h.host.turns_of("quiet");
    assert_eq!(seen[0].guidance, None, "nothing is delivered to its creator, so no guidance says so");
    assert!(h.host.turns_of("done")[0].guidance.is_some(), "parent delivery gets it");
    assert_eq!(h.run(quiet.result()).unwrap().stop_reason, "completed");
    assert!(notices_to(&h, "lead").iter().all(|n| !n.contains("quiet")), "caller delivery sends no notice");
}

/// `recovery: Rerun` is bounded (issue 49, point 4): a turn that kills its
/// host every time runs again at most `MAX_RERUNS` times in a row; the open
/// after that records it as failed, its input answered by the failure, and
/// its creator is told.
#[test]
fn rerun_recovery_gives_up_on_a_turn_lost_max_reruns_times_in_a_row() {
    use subagent_tree::runtime::recovery::MAX_RERUNS;
    let store = Rc::new(MemoryStore::new());
    {
        let h = Harness::over(store.clone(), "a", options());
        let root = h.root();
        h.host.hold("worker");
        start(&h, &root, "worker");
        h.settle();
    } // the host dies mid-turn
    let rerun = || RuntimeOptions { recovery: Recovery::Rerun, ..options() };
    for life in 0..MAX_RERUNS {
        let h = Harness::over(store.clone(), &format!("r{life}"), rerun());
        h.host.hold("worker"); // and dies in it again
        h.root();
        h.settle();
        assert_eq!(h.host.turns_of("worker").len(), 1, "life {life}: the lost turn runs again");
    }
    let h = Harness::over(store.clone(), "last", rerun());
    h.root();
    h.settle();
    assert!(h.host.turns_of("worker").is_empty(), "lost {MAX_RERUNS} times in a row: not run again");
    let notices = notices_to(&h, "lead");
    assert!(
        notices.iter().any(|n| n.starts_with("Subagent worker failed.") && n.contains("host stopped")),
        "{notices:?}"
    );
    // Nothing is left to recover.
    let again = Harness::over(store, "after", rerun());
    again.root();
    again.settle();
    assert!(again.host.turns_of("worker").is_empty());
}
