//! An agent host whose turns take random lengths, take steered messages at
//! each step, call the model-facing tools at random (delegation with
//! explicit, default, duplicate and invalid names; messages across branches
//! and trees; listing; interrupts) and stop for random reasons.

use super::ctx::{Accepted, Ctx};
use super::providers::random_stop;
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::exec::{yield_now, LocalBoxFuture};
use crate::core::json::Value;
use crate::core::name::is_valid_name;
use crate::core::result::StopReason;
use crate::runtime::ports::{AgentHost, Turn, TurnOutcome};
use crate::runtime::tools::{ToolResult, INTERRUPT_AGENT, LIST_AGENTS, SEND_MESSAGE};
use crate::runtime::{InboxMessage, Runtime, WaitEnd};
use std::cell::RefCell;
use std::rc::Rc;

/// The output schema the simulation asks for.
pub fn schema() -> Value {
    Value::object([
        ("type", Some(Value::from("object"))),
        ("properties", Some(Value::object([("ok", Some(Value::object([("type", Some(Value::from("boolean")))])))]))),
        ("required", Some(Value::Array(vec![Value::from("ok")]))),
    ])
}

pub struct SimHost {
    pub ctx: Rc<Ctx>,
    /// The runtime the tools run against; cleared when the runtime goes.
    pub rt: RefCell<Option<Runtime>>,
}

/// Names a delegation may ask for: valid ones that collide, and invalid ones.
pub const POOL: [&str; 7] = ["alpha", "beta", "gamma", "delta", "agent-1", "agent-2", "agent-3"];
pub const INVALID: [&str; 8] =
    ["Bad Name", "lead", "", "-x", "9lives", "UPPER", "a/b", "an-overly-long-name-over-32-chars"];

/// A requested name: `None` (default), a pool name, a duplicate of a
/// committed sibling, or an invalid one. Returns the name and whether it is a
/// known duplicate.
pub fn choose_name(ctx: &Ctx, parent_id: &str) -> (Option<String>, bool) {
    match ctx.rng.weighted(&[35, 30, 15, 15]) {
        0 => (None, false),
        1 => (Some(ctx.rng.pick(&POOL).unwrap_or(&"alpha").to_string()), false),
        2 => {
            let taken = ctx.committed_names(parent_id);
            match ctx.rng.pick(&taken) {
                Some(name) => (Some(name.clone()), true),
                None => (Some("alpha".into()), false),
            }
        }
        _ => (Some(ctx.rng.pick(&INVALID).unwrap_or(&"lead").to_string()), false),
    }
}

fn ids(messages: &[InboxMessage]) -> Vec<String> {
    messages.iter().map(|m| m.id.clone()).collect()
}

impl SimHost {
    fn record(ctx: &Ctx, turn: &Turn) {
        let names = (turn.name.clone(), turn.parent_name.clone());
        let previous = ctx.names.borrow_mut().insert(turn.session_id.clone(), names.clone());
        if let Some(previous) = previous {
            if previous != names {
                ctx.violation(format!("member {} changed names: {:?} then {:?}", turn.session_id, previous, names));
            }
        }
        ctx.seen.borrow_mut().entry(turn.session_id.clone()).or_default().extend(ids(&turn.input));
    }
}

impl AgentHost for SimHost {
    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        let ctx = self.ctx.clone();
        let rt = self.rt.borrow().clone();
        Box::pin(async move {
            SimHost::record(&ctx, &turn);
            ctx.note(|| format!("turn of {} ({}) takes {:?}", turn.name, turn.session_id, ids(&turn.input)));
            let steps = ctx.rng.below(4);
            for _ in 0..steps {
                for _ in 0..ctx.rng.below(6) {
                    if turn.signal.is_aborted() {
                        break;
                    }
                    yield_now().await;
                }
                if turn.signal.is_aborted() {
                    break;
                }
                let steered = turn.steer.take();
                if !steered.is_empty() {
                    ctx.seen.borrow_mut().entry(turn.session_id.clone()).or_default().extend(ids(&steered));
                }
                if let Some(rt) = &rt {
                    if ctx.rng.chance(ctx.rates.tool_call) {
                        call_tool(&ctx, rt, &turn).await;
                    }
                    if ctx.rng.chance(ctx.rates.tool_call / 3.0) {
                        wait_for_input(&ctx, rt, &turn, ctx.rng.chance(0.5)).await;
                    }
                }
            }
            if turn.signal.is_aborted() {
                // Both an aborted stop and a failure after abort capture as `aborted`.
                return if ctx.rng.chance(0.5) {
                    Ok(TurnOutcome { stop_reason: StopReason::Aborted, ..TurnOutcome::default() })
                } else {
                    Err(SubagentError::new(ErrorCode::Cancelled, "sim: the model call was aborted"))
                };
            }
            if ctx.fault(ctx.rates.host_error, "host.error") {
                return Err(SubagentError::new(ErrorCode::PersistenceUnavailable, "sim: the model backend failed"));
            }
            let reason = random_stop(&ctx);
            let mut outcome = crate::testkit::completed(&format!("{} says {reason}", turn.name));
            outcome.stop_reason = reason.clone();
            outcome.usage = Some(super::budgets::usage(&ctx, &turn));
            if turn.output_schema.is_some() {
                outcome.structured = match ctx.rng.weighted(&[70, 15, 15]) {
                    0 => Some(Value::object([("ok", Some(Value::Bool(true)))])),
                    1 => Some(Value::object([("ok", Some(Value::from("yes")))])),
                    _ => None,
                };
            }
            Ok(outcome)
        })
    }

    fn release(&self, session_id: &str) -> LocalBoxFuture<'static, Result<()>> {
        let fail = self.ctx.fault(self.ctx.rates.host_release_fail, "host.release_fail");
        let id = session_id.to_owned();
        Box::pin(async move {
            if fail {
                Err(SubagentError::new(ErrorCode::PersistenceUnavailable, format!("sim: releasing {id} failed")))
            } else {
                Ok(())
            }
        })
    }
}

fn obj(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::object(entries)
}

/// One tool call of a turn's "model", with the checks its result allows.
async fn call_tool(ctx: &Rc<Ctx>, rt: &Runtime, turn: &Turn) {
    let tools = match rt.tools_for(&turn.agent) {
        Ok(tools) => tools,
        Err(e) => {
            // The member may be closing while its turn winds down.
            if e.code != ErrorCode::Unauthorized {
                ctx.violation(format!("tools_for a turn's own agent failed with {}: {e}", e.code));
            }
            return;
        }
    };
    let delegates: Vec<String> = tools
        .specs()
        .iter()
        .map(|s| s.name.clone())
        .filter(|n| n.ends_with("_agent") && n != INTERRUPT_AGENT)
        .collect();
    let model = ctx.model();
    let signal = turn.signal.clone();
    match ctx.rng.weighted(&[35, 35, 15, 15]) {
        0 if !delegates.is_empty() => {
            ctx.ops.bump("host.tool.delegate");
            let tool = ctx.rng.pick(&delegates).cloned().unwrap_or_default();
            let (name, duplicate) = choose_name(ctx, &turn.session_id);
            let budget = ctx.rng.chance(0.2).then(|| super::budgets::random(ctx));
            if budget.is_some() {
                ctx.budgeted.borrow_mut().insert(turn.root_id.clone());
            }
            let input = obj(vec![
                ("description", Some(Value::from("a sub-task"))),
                ("prompt", Some(Value::from(format!("work for {}", turn.name)))),
                ("name", name.clone().map(Value::from)),
                ("budget", budget.as_ref().map(crate::core::budget::Budget::to_value)),
            ]);
            let result = tools.call(&tool, &input, &signal).await;
            let invalid = name.as_deref().is_some_and(|n| !is_valid_name(n));
            if !result.is_error {
                ctx.ops.bump("ok.host.tool.delegate");
            }
            if (invalid || duplicate) && !result.is_error {
                ctx.violation(format!(
                    "{tool} with name {name:?} (duplicate: {duplicate}) was accepted: {}",
                    result.content
                ));
            }
            ctx.note(|| format!("{} calls {tool} {name:?}: {}", turn.name, result.content));
        }
        1 => {
            ctx.ops.bump("host.tool.send_message");
            let own = model.root_of(&turn.session_id).map(str::to_owned);
            let Some(own) = own else { return };
            let foreign: Vec<String> =
                model.rows.keys().filter(|r| **r != own).flat_map(|r| model.members(r)).collect();
            let paths = model.paths(&own);
            let (reference, expect_foreign) = match ctx.rng.weighted(&[45, 25, 20, 10]) {
                0 if !paths.is_empty() => (ctx.rng.pick(&paths).map(|(_, p)| p.clone()).unwrap_or_default(), false),
                1 => (ctx.rng.pick(&model.members(&own)).cloned().unwrap_or_default(), false),
                2 if !foreign.is_empty() => (ctx.rng.pick(&foreign).cloned().unwrap_or_default(), true),
                _ => ("lead".to_owned(), false),
            };
            let input = obj(vec![
                ("agent", Some(Value::from(reference.as_str()))),
                ("message", Some(Value::from(format!("note from {}", turn.name)))),
            ]);
            let result = tools.call(SEND_MESSAGE, &input, &signal).await;
            check_sent(ctx, &model, &own, &reference, expect_foreign, &result, "tool:turn");
        }
        2 => {
            ctx.ops.bump("host.tool.list_agents");
            let scope = if ctx.rng.chance(0.5) { "children" } else { "descendants" };
            let result = tools.call(LIST_AGENTS, &obj(vec![("scope", Some(Value::from(scope)))]), &signal).await;
            if result.is_error && !result.content.contains("sim:") && !result.content.contains("cancelled") {
                ctx.violation(format!("list_agents failed without a fault: {}", result.content));
            }
        }
        _ => {
            ctx.ops.bump("host.tool.interrupt_agent");
            let own = model.root_of(&turn.session_id).map(str::to_owned);
            let Some(own) = own else { return };
            let Some(target) = ctx.rng.pick(&model.members(&own)).cloned() else { return };
            let input = obj(vec![("agent", Some(Value::from(target.as_str())))]);
            ctx.interrupted.borrow_mut().insert(target.clone());
            let result = tools.call(INTERRUPT_AGENT, &input, &signal).await;
            if target == turn.session_id && !result.is_error {
                ctx.violation(format!("{} interrupted itself through the tool", turn.name));
            }
        }
    }
}

/// Checks a `send_message` tool result: a foreign target is never reached,
/// and an accepted message is recorded against a member of the caller's tree.
pub fn check_sent(
    ctx: &Ctx,
    model: &super::ctx::Model,
    own_root: &str,
    reference: &str,
    expect_foreign: bool,
    result: &ToolResult,
    via: &'static str,
) {
    if result.is_error {
        return;
    }
    let target = result.structured.as_ref().and_then(|s| s.get("subagentId")).and_then(Value::as_str);
    let id = result.structured.as_ref().and_then(|s| s.get("messageId")).and_then(Value::as_str);
    let (Some(target), Some(id)) = (target, id) else {
        ctx.violation(format!("send_message to {reference:?} succeeded without ids: {:?}", result.structured));
        return;
    };
    if expect_foreign || model.root_of(target) != Some(own_root) {
        ctx.violation(format!(
            "send_message from tree {own_root} to {reference:?} reached {target}, outside the sender's tree"
        ));
    }
    ctx.ops.bump(if via == "tool:turn" { "ok.host.tool.send_message" } else { "ok.send.tool" });
    ctx.accepted.borrow_mut().push(Accepted { target: target.to_owned(), id: id.to_owned(), via });
}

/// A turn that blocks until input comes (a test host's step). Each way it
/// returns is checked against what it claims: a steered message to take, an
/// abort, or a tree with nothing left that could send one.
async fn wait_for_input(ctx: &Rc<Ctx>, rt: &Runtime, turn: &Turn, steer: bool) {
    let kind = if steer { "wait_for_input.steer" } else { "wait_for_input.interrupt" };
    ctx.ops.bump(kind);
    let end = rt.wait_for_input(&turn.agent, turn.steer.turn_id(), steer).await;
    ctx.note(|| format!("{} waited for input ({kind}): {end:?}", turn.name));
    let pending = if turn.signal.is_aborted() { Vec::new() } else { turn.steer.take() };
    if !pending.is_empty() {
        ctx.seen.borrow_mut().entry(turn.session_id.clone()).or_default().extend(ids(&pending));
    }
    let wrong = match end {
        WaitEnd::Steered if !steer => Some("steered, though it waited for an interrupt only"),
        WaitEnd::Steered if pending.is_empty() => Some("steered, with no steered message to take"),
        WaitEnd::Aborted if !turn.signal.is_aborted() => Some("aborted, with its turn's signal not aborted"),
        WaitEnd::Quiet if steer && !pending.is_empty() => Some("quiet, with a steered message pending"),
        // The host is still in the turn: its slot cannot have ended under it.
        WaitEnd::Ended => Some("ended, while the host was still in the turn"),
        _ => None,
    };
    if let Some(wrong) = wrong {
        ctx.violation(format!("wait_for_input of {} ({}) returned {wrong}", turn.name, turn.session_id));
    }
}
