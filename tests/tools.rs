//! Model-facing tools and text (issue 4): golden schemas and texts, and an
//! end-to-end run where scripted "models" build and drive a named tree only
//! through the tools.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::json;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use subagent_tree::exec::{LocalBoxFuture, LocalExecutor};
use subagent_tree::json::Value;
use subagent_tree::ports::{AgentHost, Turn, TurnOutcome};
use subagent_tree::testkit::{self, completed};
use subagent_tree::tools::ToolResult;
use subagent_tree::{MemoryStore, Result, RuntimeOptions, Signal};

fn v(j: serde_json::Value) -> Value {
    serde_json::from_value(j).unwrap()
}

fn j(v: &Value) -> serde_json::Value {
    serde_json::from_str(&v.to_json()).unwrap()
}

/// One scripted tool call and what the model saw back.
#[derive(Clone, Debug)]
struct Seen {
    agent: String,
    tool: String,
    result: ToolResult,
}

/// Per member (full name), per turn: the tool calls its "model" makes.
type Plan = HashMap<String, Vec<Vec<(String, serde_json::Value)>>>;

type Prompt = (String, Vec<String>, String);

#[derive(Default)]
struct ModelHost {
    plan: Rc<RefCell<Plan>>,
    seen: Rc<RefCell<Vec<Seen>>>,
    /// (member, rendered input, identity context) per turn.
    prompts: Rc<RefCell<Vec<Prompt>>>,
}

#[derive(Clone)]
struct Shared(Rc<ModelHost>);

impl AgentHost for Shared {
    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        let calls = {
            let mut plan = self.0.plan.borrow_mut();
            plan.get_mut(&turn.name).and_then(|turns| (!turns.is_empty()).then(|| turns.remove(0))).unwrap_or_default()
        };
        let (seen, prompts) = (self.0.seen.clone(), self.0.prompts.clone());
        Box::pin(async move {
            prompts.borrow_mut().push((turn.name.clone(), turn.input_text(), turn.context.clone()));
            let rt_tools = turn.agent.clone();
            for (tool, input) in calls {
                let toolset = runtime_of(&turn).tools_for(&rt_tools).unwrap();
                let result = toolset.call(&tool, &v(input), &Signal::never()).await;
                seen.borrow_mut().push(Seen { agent: turn.name.clone(), tool, result });
            }
            Ok(completed(&format!("{} reporting", turn.name)))
        })
    }
}

thread_local! {
    static RUNTIME: RefCell<Option<subagent_tree::Runtime>> = const { RefCell::new(None) };
}

fn runtime_of(_turn: &Turn) -> subagent_tree::Runtime {
    RUNTIME.with(|r| r.borrow().clone().unwrap())
}

#[test]
fn a_scripted_model_builds_and_drives_a_named_tree_through_the_tools() {
    let exec = LocalExecutor::new();
    let host = Rc::new(ModelHost::default());
    let store = Rc::new(MemoryStore::new());
    let rt = testkit::runtime(
        store,
        Rc::new(Shared(host.clone())),
        &exec,
        "t",
        RuntimeOptions { max_depth: 2, capacity: 16, ..RuntimeOptions::default() },
    );
    RUNTIME.with(|r| *r.borrow_mut() = Some(rt.clone()));
    let call = |tool: &str, input: serde_json::Value| (tool.to_owned(), input);
    {
        let mut plan = host.plan.borrow_mut();
        plan.insert(
            "lead".into(),
            vec![
                vec![
                    call(
                        "spawn_agent",
                        json!({"description":"Review the patch","prompt":"Review it.","name":"reviewer"}),
                    ),
                    call("spawn_agent", json!({"description":"Write docs","prompt":"Write docs.","name":"writer"})),
                    call("spawn_agent", json!({"description":"Dup","prompt":"x","name":"writer"})),
                    call("spawn_agent", json!({"description":"Bad","prompt":"x","name":"Writer!"})),
                ],
                vec![
                    call("list_agents", json!({"scope":"descendants"})),
                    call("interrupt_agent", json!({"agent":"reviewer/checker"})),
                    call("task_create", json!({"title":"Check links","owner":"reviewer/checker"})),
                    call("task_create", json!({"title":"Ship it","owner":"lead"})),
                    call("task_list", json!({"owner":"reviewer/checker"})),
                    call("send_message", json!({"agent":"reviewer/chekcer","message":"typo"})),
                ],
            ],
        );
        plan.insert(
            "reviewer".into(),
            vec![vec![call(
                "spawn_agent",
                json!({"description":"Check links","prompt":"Check links.","name":"checker"}),
            )]],
        );
        plan.insert(
            "reviewer/checker".into(),
            vec![vec![call("send_message", json!({"agent":"writer","message":"links in docs are broken"}))]],
        );
    }
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let (r, rootc) = (rt.clone(), root.clone());
    exec.run_until(async move {
        r.prompt(
            &rootc,
            "root",
            Value::from("Plan the release."),
            subagent_tree::runtime::Scheduling::Queue,
            &Signal::never(),
        )
        .await
        .unwrap()
    })
    .unwrap();
    exec.run_idle();
    let seen = host.seen.borrow().clone();
    let by = |agent: &str, tool: &str| -> Vec<ToolResult> {
        seen.iter().filter(|s| s.agent == agent && s.tool == tool).map(|s| s.result.clone()).collect()
    };

    // Delegation returns {kind, subagentId, name}; duplicates and bad names are errors that state the rule.
    let spawns = by("lead", "spawn_agent");
    let first = j(spawns[0].structured.as_ref().unwrap());
    assert_eq!(first["kind"], "activation");
    assert_eq!(first["name"], "reviewer");
    assert!(first["subagentId"].as_str().unwrap().starts_with("ts-"));
    assert!(spawns[2].is_error && spawns[2].content.contains("\"writer\" is already taken"), "{}", spawns[2].content);
    assert!(spawns[2].content.contains("omit name"));
    assert!(
        spawns[3].is_error && spawns[3].content.contains("must be 1-32 lower-case letters"),
        "{}",
        spawns[3].content
    );
    let nested = by("reviewer", "spawn_agent");
    assert_eq!(j(nested[0].structured.as_ref().unwrap())["name"], "reviewer/checker");

    // The cousin message arrived framed, naming the sender by full name.
    let sent = &by("reviewer/checker", "send_message")[0];
    assert!(!sent.is_error, "{}", sent.content);
    assert_eq!(sent.content, "Message delivered to writer.");
    let prompts = host.prompts.borrow();
    let writer_inputs: Vec<&String> = prompts.iter().filter(|p| p.0 == "writer").flat_map(|p| p.1.iter()).collect();
    assert!(
        writer_inputs.iter().any(|t| t.starts_with("Message from agent reviewer/checker (another agent in your tree")),
        "{writer_inputs:?}"
    );
    // Identity context and return guidance use full names.
    let checker_first = prompts.iter().find(|p| p.0 == "reviewer/checker").unwrap();
    assert_eq!(checker_first.2, "You are agent reviewer/checker in a subagent tree. Your creator is reviewer; the root agent is lead. Agents are addressed by full name (such as reviewer/checker).");
    assert!(checker_first.1.last().unwrap().contains("delivered to your creator reviewer automatically"));

    // Lead's second turn (after notices): list, interrupt, tasks.
    let listed = &by("lead", "list_agents")[0];
    let rows = j(listed.structured.as_ref().unwrap())["agents"].clone();
    let names: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["reviewer", "reviewer/checker", "writer"]);
    assert_eq!(rows[1]["parent"], "reviewer");
    assert_eq!(rows[1]["depth"], 2);
    assert!(rows.as_array().unwrap().iter().all(|r| r["status"] == "running" || r["status"] == "inactive"));
    assert!(listed.content.starts_with("3 descendants of lead"));
    assert!(listed.content.contains("\n  - reviewer/checker ("));
    let interrupted = &by("lead", "interrupt_agent")[0];
    assert!(!interrupted.is_error, "{}", interrupted.content);
    let created = by("lead", "task_create");
    assert_eq!(j(created[0].structured.as_ref().unwrap())["owner"], "reviewer/checker");
    assert_eq!(j(created[1].structured.as_ref().unwrap())["owner"], "lead");
    let listed_tasks = &by("lead", "task_list")[0];
    assert_eq!(listed_tasks.content, "1 task(s):\n- task-1 [open] Check links (owner reviewer/checker)");
    let typo = &by("lead", "send_message")[0];
    assert!(typo.is_error);
    assert!(typo.content.contains("did you mean `reviewer/checker`"), "{}", typo.content);
    // Storage keeps the owner's Session id, not its name.
    let log = rt.store();
    let events = exec
        .run_until(async move { log.read("root", &subagent_tree::ReadQuery::default()).await.unwrap().unwrap() })
        .unwrap();
    let task = events.iter().find(|e| e.kind == "team/task").unwrap();
    assert!(task.payload.get("ownerId").and_then(Value::as_str).unwrap().starts_with("ts-"));
}

/// A runtime over a fresh MemoryStore whose host answers every turn with "ok".
fn replying_runtime(id_prefix: &str) -> (LocalExecutor, subagent_tree::Runtime) {
    let exec = LocalExecutor::new();
    let host = Rc::new(testkit::FnHost::replying("ok"));
    let rt = testkit::runtime(Rc::new(MemoryStore::new()), host, &exec, id_prefix, RuntimeOptions::default());
    (exec, rt)
}

#[test]
fn tool_schemas_are_golden() {
    let (exec, rt) = replying_runtime("g");
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let tools = rt.tools_for(&root).unwrap();
    let names: Vec<&str> = tools.specs().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "spawn_agent",
            "fork_agent",
            "send_message",
            "interrupt_agent",
            "list_agents",
            "task_create",
            "task_list",
            "task_update"
        ]
    );
    let spawn = &tools.specs()[0];
    assert_eq!(
        spawn.description,
        "Start a named subagent to work on a task in parallel. The new agent starts with a fresh context and does not see this conversation: put everything it needs in the prompt. It runs in parallel; its final report reaches you when it finishes, and you can message it later with send_message. Returns {kind, subagentId, name}."
    );
    assert!(tools.specs()[1].description.contains("starts with a copy of this conversation so far (a fork)"));
    assert_eq!(
        j(&spawn.input_schema),
        json!({
            "type":"object",
            "properties":{
                "description":{"type":"string","description":"A short label for the task (3-8 words), shown in agent listings."},
                "prompt":{"type":"string","description":"The task, with everything the agent needs to do it."},
                "name":{"type":"string","pattern":"^[a-z][a-z0-9-]{0,31}$","description":"Optional name, unique among your children: 1-32 lower-case letters, digits or hyphens starting with a letter, not \"lead\". Omit it to get the first free agent-N."},
                "cwd":{"type":"string","description":"Optional working directory; a relative path resolves against yours."},
                "model":{"type":"string","description":"Optional model for the new agent."},
                "preset":{"type":"string","description":"Optional preset id for the new agent."},
                "budget":{
                    "type":"object",
                    "description":"Optional limits on what the new agent and every agent it starts may spend together; lowered to what your own budget has left.",
                    "properties":{
                        "tokens":{"type":"integer","minimum":1,"description":"Input plus output tokens."},
                        "turns":{"type":"integer","minimum":1,"description":"Model turns."},
                        "spawns":{"type":"integer","minimum":1,"description":"Agents started below it."},
                        "cost":{"type":"integer","minimum":1,"description":"Cost, in the host's unit."}
                    },
                    "additionalProperties":false
                }
            },
            "required":["description","prompt"],
            "additionalProperties":false
        })
    );
    assert!(
        !j(&tools.specs()[1].input_schema)["properties"].as_object().unwrap().contains_key("preset"),
        "fork takes no preset"
    );
    assert_eq!(
        j(&tools.specs()[2].input_schema),
        json!({"type":"object","properties":{
            "agent":{"type":"string","description":"The agent's full name, such as \"reviewer/checker\" (\"lead\" is the root), or its Session id."},
            "message":{"type":"string","description":"What to tell the agent."}},
            "required":["agent","message"],"additionalProperties":false})
    );
    assert_eq!(
        j(&tools.specs()[4].input_schema)["properties"]["scope"]["enum"],
        json!(["tree", "children", "descendants"])
    );
}

#[test]
fn a_member_at_the_depth_limit_gets_no_delegation_tools() {
    let exec = LocalExecutor::new();
    // Turns never finish, so the child stays live.
    let host = testkit::FnHost::new(|_turn| Box::pin(std::future::pending()));
    let rt = testkit::runtime(Rc::new(MemoryStore::new()), Rc::new(host), &exec, "d", RuntimeOptions::default());
    let r = rt.clone();
    let child = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            r.start_activation(subagent_tree::ActivationSpec::new("spawn", &root, "t", "p")).await.unwrap()
        })
        .unwrap();
    let tools = rt.tools_for(&child.agent().unwrap()).unwrap();
    let names: Vec<&str> = tools.specs().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["send_message", "interrupt_agent", "list_agents", "task_create", "task_list", "task_update"]);
}

#[test]
fn bad_tool_input_is_an_error_result_not_a_failure() {
    let (exec, rt) = replying_runtime("b");
    let r = rt.clone();
    let out = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            let tools = r.tools_for(&root).unwrap();
            let s = Signal::never();
            vec![
                tools.call("send_message", &Value::Null, &s).await,
                tools.call("send_message", &v(json!({"agent": 3, "message": "x"})), &s).await,
                tools.call("send_message", &v(json!({"agent": "nobody", "message": "x"})), &s).await,
                tools.call("list_agents", &v(json!({"scope": "everyone"})), &s).await,
                tools.call("no_such_tool", &v(json!({})), &s).await,
                tools.call("task_update", &v(json!({"task": "task-9"})), &s).await,
                tools.call("interrupt_agent", &v(json!({"agent": "lead"})), &s).await,
            ]
        })
        .unwrap();
    assert!(out.iter().all(|r| r.is_error), "{out:?}");
    assert_eq!(out[0].content, "send_message takes a JSON object of arguments, not null");
    assert_eq!(out[1].content, "agent must be a string, not a number");
    assert_eq!(out[2].content, "no agent named \"nobody\" exists in this tree");
    assert_eq!(out[5].content, "there is no task \"task-9\"; known tasks: none");
    assert_eq!(out[6].content, "\"lead\" cannot interrupt itself");
}

#[test]
fn refusals_quote_model_input_bounded() {
    let (exec, rt) = replying_runtime("q");
    let r = rt.clone();
    let huge = "x".repeat(1_000_000);
    let out = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            let tools = r.tools_for(&root).unwrap();
            let s = Signal::never();
            vec![
                tools.call(&huge, &v(json!({})), &s).await,
                tools.call("list_agents", &v(json!({ "scope": huge.clone() })), &s).await,
                tools.call("task_update", &v(json!({ "task": huge.clone() })), &s).await,
                tools.call("task_list", &v(json!({ "status": huge.clone() })), &s).await,
                tools.call("send_message", &v(json!({ "agent": huge.clone(), "message": "m" })), &s).await,
            ]
        })
        .unwrap();
    for r in out {
        assert!(r.is_error);
        assert!(r.content.len() < 400, "{} bytes", r.content.len());
    }
}

/// `list_agents` counts in English: one descendant, one child (issue 41).
#[test]
fn list_agents_headers_agree_in_number() {
    let (exec, rt) = replying_runtime("n");
    let r = rt.clone();
    let headers = exec
        .run_until(async move {
            let root = r.open_root(Some("root".into()), None).await.unwrap();
            let s = Signal::never();
            let spec = subagent_tree::ActivationSpec::new("spawn", &root, "Write", "write it").named("writer");
            drop(r.start_activation(spec).await.unwrap());
            let tools = r.tools_for(&root).unwrap();
            let mut headers = Vec::new();
            for scope in ["descendants", "children"] {
                let out = tools.call("list_agents", &v(json!({ "scope": scope })), &s).await;
                headers.push(out.content.lines().next().unwrap_or_default().split(" (").next().unwrap().to_owned());
            }
            headers
        })
        .unwrap();
    assert_eq!(headers, ["1 descendant of lead", "1 child of lead"]);
}

/// `toolsFor(agent, { only, except })` (issue 48): a model gets only the chosen
/// tools, they still work, a tool left out is refused like an unknown one,
/// and a name that is no tool is an error, not a tool silently missing.
#[test]
fn a_member_s_tools_can_be_narrowed_and_the_chosen_ones_still_work() {
    use subagent_tree::runtime::tools::ToolChoice;
    let (exec, rt) = replying_runtime("c");
    let r = rt.clone();
    let root = exec.run_until(async move { r.open_root(Some("root".into()), None).await.unwrap() }).unwrap();
    let names = |choice: &ToolChoice| -> Vec<String> {
        rt.tools_for(&root).unwrap().select(choice).unwrap().specs().iter().map(|s| s.name.clone()).collect()
    };
    let only = ToolChoice { only: Some(vec!["spawn_agent".into(), "list_agents".into()]), except: vec![] };
    assert_eq!(names(&only), ["spawn_agent", "list_agents"]);
    let except = ToolChoice {
        only: None,
        except: vec!["fork_agent".into(), "task_create".into(), "task_list".into(), "task_update".into()],
    };
    assert_eq!(names(&except), ["spawn_agent", "send_message", "interrupt_agent", "list_agents"]);
    let typo = ToolChoice { only: Some(vec!["spawn_agnet".into()]), except: vec![] };
    let e = rt.tools_for(&root).unwrap().select(&typo).err().unwrap();
    assert_eq!(e.code, subagent_tree::ErrorCode::InvalidArgument);
    assert!(
        e.message.starts_with(
            "only names \"spawn_agnet\", which is not one of the tools: spawn_agent, fork_agent, send_message"
        ),
        "{}",
        e.message
    );
    let tools = rt.tools_for(&root).unwrap().select(&only).unwrap();
    let (call, refused) = exec
        .run_until(async move {
            let started = tools
                .call("spawn_agent", &v(json!({"description": "d", "prompt": "p", "name": "chosen"})), &Signal::never())
                .await;
            let refused =
                tools.call("send_message", &v(json!({"agent": "chosen", "message": "hi"})), &Signal::never()).await;
            (started, refused)
        })
        .unwrap();
    assert!(!call.is_error, "{}", call.content);
    assert!(refused.is_error);
    assert_eq!(refused.content, "there is no tool named \"send_message\"");
}

#[test]
fn each_tool_call_is_a_start_and_an_end_event_and_a_delegation_names_its_child() {
    use subagent_tree::runtime::RuntimeEvent;
    let exec = LocalExecutor::new();
    let host = Rc::new(ModelHost::default());
    let rt = testkit::runtime(
        Rc::new(MemoryStore::new()),
        Rc::new(Shared(host.clone())),
        &exec,
        "t",
        RuntimeOptions { max_depth: 2, ..RuntimeOptions::default() },
    );
    RUNTIME.with(|r| *r.borrow_mut() = Some(rt.clone()));
    host.plan.borrow_mut().insert(
        "lead".into(),
        vec![vec![
            ("spawn_agent".into(), json!({"description":"Review","prompt":"Review it.","name":"reviewer"})),
            ("send_message".into(), json!({"agent":"nobody","message":"hi"})),
        ]],
    );
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = events.clone();
    rt.subscribe(
        None,
        Rc::new(move |e: &RuntimeEvent| match e {
            RuntimeEvent::Tool { name, call_id, tool, input, end, .. } => sink.borrow_mut().push(format!(
                "{name} {tool} #{call_id} {}",
                match end {
                    None => format!("start {}", input.as_ref().map_or("-".into(), |i| i.to_json())),
                    Some(end) => format!(
                        "end error={} child={}",
                        end.is_error,
                        end.child.as_ref().map_or("-".into(), |(id, n)| format!("{n}:{}", id.starts_with("ts-")))
                    ),
                }
            )),
            RuntimeEvent::Start(i) => sink.borrow_mut().push(format!("start {} by #{:?}", i.name, i.tool_call)),
            _ => {}
        }),
    );
    let r = rt.clone();
    exec.run_until(async move {
        let root = r.open_root(Some("root".into()), None).await.unwrap();
        r.prompt(&root, "root", Value::from("Go."), subagent_tree::runtime::Scheduling::Queue, &Signal::never())
            .await
            .unwrap()
    })
    .unwrap();
    exec.run_idle();
    let seen = events.borrow().clone();
    let spawn = seen.iter().find_map(|e| e.strip_prefix("lead spawn_agent #")?.split(' ').next()).unwrap().to_owned();
    let send = seen.iter().find_map(|e| e.strip_prefix("lead send_message #")?.split(' ').next()).unwrap().to_owned();
    assert_ne!(spawn, send);
    assert_eq!(
        seen,
        vec![
            format!(
                "lead spawn_agent #{spawn} start {}",
                r#"{"description":"Review","name":"reviewer","prompt":"Review it."}"#
            ),
            format!("start reviewer by #Some({spawn})"),
            format!("lead spawn_agent #{spawn} end error=false child=reviewer:true"),
            format!("lead send_message #{send} start {}", r#"{"agent":"nobody","message":"hi"}"#),
            format!("lead send_message #{send} end error=true child=-"),
        ]
    );
}
