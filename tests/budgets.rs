//! Budgets per subtree (issue 46): set by the host or at a start, clamped to
//! the creators' remaining, durable in the root's log, enforced before each
//! turn and start, counted as the logs count usage.
#![cfg(not(target_arch = "wasm32"))]

mod runtime_support;

use runtime_support::{Harness, TestHost};

use subagent_tree::core::budget::{Allowance, Budget};
use subagent_tree::core::usage::Usage;
use subagent_tree::event;
use subagent_tree::json::Value;
use subagent_tree::ports::TurnOutcome;
use subagent_tree::runtime::{MessageSource, RootSettings, RuntimeEvent, Scheduling};
use subagent_tree::store::ReadQuery;
use subagent_tree::testkit::completed;
use subagent_tree::{ActivationSpec, Agent, ErrorCode, RuntimeOptions, Signal};

fn tokens(n: u64) -> Budget {
    Budget { tokens: Some(n), ..Budget::default() }
}

fn turns(n: u64) -> Budget {
    Budget { turns: Some(n), ..Budget::default() }
}

/// Every turn of `name` reports `input` + `output` tokens.
fn spends(host: &TestHost, name: &'static str, input: u64, output: u64) {
    host.script(name, move |_| TurnOutcome {
        usage: Some(Usage { input_tokens: input, output_tokens: output, ..Usage::default() }),
        ..completed(&format!("done by {name}"))
    });
}

fn open(h: &Harness, budget: Option<Budget>) -> Agent {
    let rt = h.rt.clone();
    h.run(async move {
        rt.open_root_with(Some("root".into()), Some("/work".into()), RootSettings { budget, agent_options: None })
            .await
            .unwrap()
    })
}

fn prompt(h: &Harness, root: &Agent, target: &'static str, text: &'static str) -> subagent_tree::Result<String> {
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.prompt(&r, target, Value::from(text), Scheduling::Queue, &Signal::never()).await })
}

fn set(
    h: &Harness,
    root: &Agent,
    target: &'static str,
    budget: Option<Budget>,
) -> subagent_tree::Result<Option<(Budget, Budget)>> {
    let (rt, r) = (h.rt.clone(), root.clone());
    h.run(async move { rt.set_budget(&r, target, budget, &Signal::never()).await })
        .map(|b| b.map(|b| (b.set, b.remaining)))
}

fn start(
    h: &Harness,
    parent: &Agent,
    name: &str,
    budget: Option<Budget>,
) -> subagent_tree::Result<subagent_tree::Activation> {
    let mut spec = ActivationSpec::new("spawn", parent, "a task", "please do it").named(name);
    spec.budget = budget;
    let rt = h.rt.clone();
    h.run(async move { rt.start_activation(spec).await })
}

fn stops(h: &Harness, name: &str) -> Vec<String> {
    h.events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::Turn { name: n, stop_reason: Some(s), .. } if n == name => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_spent_root_budget_stops_turns_refuses_messages_and_holds_across_a_restart() {
    let h = Harness::wide();
    spends(&h.host, "lead", 50, 10);
    let root = open(&h, Some(tokens(100)));
    prompt(&h, &root, "lead", "one").unwrap();
    h.settle();
    // The host was handed half the unreserved room, and overshot it by 10.
    assert_eq!(h.host.turns_of("lead")[0].budget, Some(Allowance { tokens: Some(50), cost: None, turns: None }));
    prompt(&h, &root, "lead", "two").unwrap();
    h.settle();
    assert_eq!(h.host.turns_of("lead")[1].budget.unwrap().tokens, Some(20));
    // 120 of 100 spent: no turn starts after, and input is refused, naming the budget.
    let refused = prompt(&h, &root, "lead", "three").unwrap_err();
    assert_eq!(refused.code, ErrorCode::BudgetExhausted);
    assert_eq!(refused.message, "\"lead\" takes no message: the budget of \"lead\" (tokens 100) is spent");
    assert_eq!(h.host.turns_of("lead").len(), 2);
    // Durable: the budget is in the root's log, and a new runtime over the store counts the same.
    let log = h.store.read_now("root", &ReadQuery::types(&[event::BUDGET], &Signal::never())).unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].payload.to_json(), r#"{"sessionId":"root","budget":{"tokens":100}}"#);
    let again =
        Harness::over(h.store.clone(), "b", RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() });
    let root2 = open(&again, None);
    assert_eq!(prompt(&again, &root2, "lead", "four").unwrap_err().code, ErrorCode::BudgetExhausted);
    // Raising it lets input run again; the same budget given at open is not written twice.
    assert_eq!(set(&again, &root2, "lead", Some(tokens(300))).unwrap(), Some((tokens(300), tokens(180))));
    spends(&again.host, "lead", 5, 5);
    prompt(&again, &root2, "lead", "five").unwrap();
    again.settle();
    assert_eq!(again.host.turns_of("lead").len(), 1);
    assert_eq!(again.host.turns_of("lead")[0].budget.unwrap().tokens, Some(90));
}

#[test]
fn a_child_budget_is_clamped_returned_and_its_member_settles_budget_exhausted() {
    let h = Harness::wide();
    let root = open(&h, Some(Budget { turns: Some(6), spawns: Some(5), ..Budget::default() }));
    h.host.hold("reviewer");
    let reviewer =
        start(&h, &root, "reviewer", Some(Budget { turns: Some(1), tokens: Some(500), spawns: Some(9), cost: None }))
            .unwrap();
    // Clamped to what the root has left (spawns 5 before this start counted).
    assert_eq!(reviewer.budget, Some(Budget { turns: Some(1), tokens: Some(500), spawns: Some(5), cost: None }));
    h.settle();
    // Accepted while its one turn runs; then the turn ends and the budget is spent.
    prompt(&h, &root, "reviewer", "and also this").unwrap();
    h.host.open("reviewer");
    h.settle();
    let result = h.run(reviewer.result()).unwrap();
    assert_eq!(result.stop_reason, "budget-exhausted");
    assert_eq!(
        result.diagnostic.as_deref(),
        Some("it takes no further turn: the budget of \"reviewer\" (turns 1) is spent")
    );
    assert_eq!(stops(&h, "reviewer"), ["completed", "budget-exhausted"]);
    // Its creator is told, and the unanswered input stays pending in its log.
    let notices: Vec<String> = h
        .host
        .turns_of("lead")
        .iter()
        .flat_map(|t| t.sources.clone())
        .filter_map(|s| match s {
            MessageSource::SubagentSettled { summary, .. } => Some(summary),
            _ => None,
        })
        .collect();
    assert_eq!(notices, ["Subagent reviewer ran out of budget before it finished."]);
    let log = h.store.read_now(&reviewer.child_id, &ReadQuery::default()).unwrap();
    let consumed: Vec<&str> = log
        .iter()
        .filter(|e| e.kind == event::TURN_END)
        .flat_map(|e| e.payload.get("consumed").and_then(Value::as_array).unwrap_or_default())
        .filter_map(Value::as_str)
        .collect();
    let pending = log
        .iter()
        .filter(|e| e.kind == event::MESSAGE)
        .filter(|e| !consumed.contains(&e.payload.get("messageId").and_then(Value::as_str).unwrap_or("")))
        .count();
    assert_eq!(pending, 1, "the second message was never consumed");
    assert_eq!(prompt(&h, &root, "reviewer", "more").unwrap_err().code, ErrorCode::BudgetExhausted);
    // Raising it resumes the member and runs what waited.
    assert_eq!(
        set(&h, &root, "reviewer", Some(turns(3))).unwrap().unwrap().1,
        Budget { turns: Some(2), ..Budget::default() }
    );
    h.settle();
    let seen = h.host.turns_of("reviewer");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].input, ["and also this"]);
}

#[test]
fn spawns_count_against_every_budget_on_the_chain_and_starts_beyond_are_refused() {
    let h = Harness::wide();
    let root = open(&h, Some(Budget { spawns: Some(2), ..Budget::default() }));
    h.host.hold("a");
    let a = start(&h, &root, "a", None).unwrap();
    start(&h, &a.agent().unwrap(), "b", None).unwrap();
    let refused = start(&h, &root, "c", None).unwrap_err();
    assert_eq!(refused.code, ErrorCode::BudgetExhausted);
    assert_eq!(refused.message, "\"lead\" cannot start a child: the budget of \"lead\" (spawns 2) is spent");
    let deep = start(&h, &a.agent().unwrap(), "d", None).unwrap_err();
    assert_eq!(deep.message, "\"a\" cannot start a child: the budget of \"lead\" (spawns 2) is spent");
    // A failed start gives its spawn back: a name taken is refused before any budget is counted.
    let rt = h.rt.clone();
    let rows = h.run(async move { rt.list_descendants("root", &Signal::never()).await.unwrap() });
    assert_eq!(rows.len(), 2);
}

#[test]
fn parallel_siblings_share_a_budget_and_a_spent_one_stops_them_all() {
    let h = Harness::wide();
    let root = open(&h, Some(tokens(1000)));
    for name in ["a", "b"] {
        h.host.hold(name);
    }
    spends(&h.host, "a", 300, 100);
    spends(&h.host, "b", 100, 100);
    let a = start(&h, &root, "a", None).unwrap();
    let b = start(&h, &root, "b", None).unwrap();
    h.settle();
    assert_eq!(h.host.turns_of("a")[0].budget.unwrap().tokens, Some(500));
    assert_eq!(h.host.turns_of("b")[0].budget.unwrap().tokens, Some(250), "not starved while the budget has room");
    h.host.open("a");
    h.host.open("b");
    h.settle();
    assert_eq!(h.run(a.result()).unwrap().stop_reason, "completed");
    assert_eq!(h.run(b.result()).unwrap().stop_reason, "completed");
    // lead ran on the notices: 1000 - 600 left; rows show the root's budget on its own, listed by `set_budget`.
    let left = set(&h, &root, "lead", Some(tokens(1000))).unwrap().unwrap().1;
    assert_eq!(left, tokens(400));
}

#[test]
fn input_waits_while_running_turns_hold_the_room_and_a_raised_budget_runs_it() {
    let h = Harness::wide();
    let root = open(&h, Some(turns(2)));
    h.host.hold("a");
    h.host.hold("b");
    let a = start(&h, &root, "a", None).unwrap();
    let b = start(&h, &root, "b", None).unwrap();
    h.settle();
    // Two running turns reserve both: the root's input is accepted and waits.
    prompt(&h, &root, "lead", "hello").unwrap();
    h.settle();
    assert!(h.host.turns_of("lead").is_empty());
    assert!(h.rt.is_running("root"), "waiting input keeps the tree at work");
    h.host.open("a");
    h.settle();
    assert!(h.host.turns_of("lead").is_empty(), "a's turn is spent, b's still reserved");
    h.host.open("b");
    h.settle();
    assert_eq!(
        (h.run(a.result()).unwrap().stop_reason, h.run(b.result()).unwrap().stop_reason),
        ("completed".into(), "completed".into())
    );
    assert_eq!(stops(&h, "lead"), ["budget-exhausted"]);
    assert!(!h.rt.is_running("root"), "parked by its budget, the tree is quiet");
    // Raised: the parked input (the prompt and both notices) runs in one turn.
    set(&h, &root, "lead", Some(turns(4))).unwrap();
    h.settle();
    let seen = h.host.turns_of("lead");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].input.len(), 3);
    assert_eq!(seen[0].budget.unwrap().turns, Some(2));
}

#[test]
fn a_model_sets_a_budget_with_spawn_agent_and_reads_what_is_left_in_list_agents() {
    let h = Harness::wide();
    spends(&h.host, "reviewer", 100, 20);
    let root = open(&h, Some(Budget { tokens: Some(1000), spawns: Some(3), ..Budget::default() }));
    let tools = h.rt.tools_for(&root).unwrap();
    let call = |input: &'static str| {
        let tools = h.rt.tools_for(&root).unwrap();
        h.run(async move {
            let input = subagent_tree::json::parse(input, 16).unwrap();
            tools.call("spawn_agent", &input, &Signal::never()).await
        })
    };
    let schema = tools.specs().iter().find(|s| s.name == "spawn_agent").unwrap().input_schema.to_json();
    assert!(schema.contains(r#""budget":{"type":"object""#), "{schema}");
    let started =
        call(r#"{"description":"review","prompt":"review it","name":"reviewer","budget":{"tokens":5000,"turns":4}}"#);
    assert!(!started.is_error, "{}", started.content);
    assert!(
        started.content.contains("Its budget (for it and every agent it starts): tokens 1000, turns 4."),
        "clamped to the root's remaining: {}",
        started.content
    );
    h.settle();
    let listed = h.run({
        let tools = h.rt.tools_for(&root).unwrap();
        async move { tools.call("list_agents", &Value::Object(Vec::new()), &Signal::never()).await }
    });
    assert!(
        listed.content.ends_with("\n- lead (root; inactive; 120 tokens) <- you\n  - reviewer (inactive: review; 120 tokens; budget left: tokens 880, turns 3)"),
        "{}",
        listed.content
    );
    // A bad budget is the model's to fix; a start beyond the budget is refused as a tool error.
    let bad = call(r#"{"description":"x","prompt":"y","budget":{"tokens":0}}"#);
    assert!(bad.is_error);
    assert_eq!(bad.content, "budget.tokens must be a positive integer of at most 2^53 - 1, not 0");
    call(r#"{"description":"x","prompt":"y"}"#);
    call(r#"{"description":"x","prompt":"y"}"#);
    let refused = call(r#"{"description":"x","prompt":"y"}"#);
    assert!(refused.is_error);
    assert_eq!(
        refused.content,
        "\"lead\" cannot start a child: the budget of \"lead\" (spawns 3) is spent. Finish with what you have: only the host can raise a budget."
    );
}

#[test]
fn input_a_spent_budget_parked_runs_after_a_restart_that_raised_it() {
    let h = Harness::wide();
    let root = open(&h, Some(turns(1)));
    h.host.hold("a");
    let a = start(&h, &root, "a", None).unwrap();
    h.settle();
    prompt(&h, &root, "a", "more").unwrap();
    h.host.open("a");
    h.settle();
    assert_eq!(h.run(a.result()).unwrap().stop_reason, "budget-exhausted");
    let options = || RuntimeOptions { max_depth: 4, capacity: 32, ..RuntimeOptions::default() };
    // A new runtime over the same budget: still spent, the input stays parked.
    let same = Harness::over(h.store.clone(), "b", options());
    let root2 = open(&same, Some(turns(1)));
    same.settle();
    assert!(same.host.turns_of("a").is_empty());
    let rt = same.rt.clone();
    same.run(async move { rt.close_root(&root2).await.unwrap() });
    // One that opens the root with a larger budget: open-time recovery runs what waited.
    let raised = Harness::over(h.store.clone(), "c", options());
    open(&raised, Some(turns(5)));
    raised.settle();
    let seen = raised.host.turns_of("a");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].input, ["more"]);
}
