//! The bridge's side of `js/runtime.js`, the module that mints agent handles.
//!
//! wasm-bindgen imports that module as a file of the package, so anything the
//! bridge imports from it is importable by page code too. Its minting and
//! lookup functions therefore take a capability: a private object the module
//! creates at load and hands out exactly once, to the first `installDispatcher`
//! call. The bridge makes that call from its start function, while the module
//! is instantiated and before any other code can hold a handle; code that
//! imports the file later gets nothing, and code that raced ahead of the
//! bridge leaves it unarmed, so no runtime can be built (it fails closed).
//! The wrappers below keep the plain signatures the rest of the bridge calls.

use super::convert::{describe, get};
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::runtime::{Agent, Runtime};
use js_sys::{Array, Promise};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/wasm/js/runtime.js")]
extern "C" {
    /// Installs the dispatcher; returns the capability on the first call only.
    #[wasm_bindgen(js_name = installDispatcher)]
    fn install_dispatcher(f: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = makeAgent)]
    #[allow(clippy::too_many_arguments)]
    fn make_agent_js(
        cap: &JsValue,
        runtime: u32,
        session_id: &str,
        incarnation: f64,
        name: &str,
        root_id: &str,
        parent_id: Option<String>,
        depth: u32,
    ) -> JsValue;
    // `catch` on agentKey and quiet (they never throw) gives them a JS shim:
    // wasm-bindgen 0.2.130 writes one `import * as` and one object key per
    // shim-free ("direct") import of a snippet, so a second direct import of
    // runtime.js makes bundlers warn `Duplicate key "./snippets/.../runtime.js"`.
    // installDispatcher stays the module's only direct import (build-pkg.sh checks).
    #[wasm_bindgen(js_name = agentKey, catch)]
    fn agent_key_js(cap: &JsValue, value: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = makeActivation)]
    #[allow(clippy::too_many_arguments)]
    fn make_activation_js(
        cap: &JsValue,
        runtime: u32,
        child_id: &str,
        incarnation: f64,
        name: &str,
        message_id: Option<String>,
        result: &Promise,
        disposed: &Promise,
        agent: &JsValue,
        budget: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = makeTurn)]
    fn make_turn_js(
        cap: &JsValue,
        runtime: u32,
        turn: JsValue,
        agent: JsValue,
        incarnation: f64,
        turn_id: f64,
    ) -> JsValue;
    #[wasm_bindgen(js_name = makeTools)]
    fn make_tools_js(cap: &JsValue, runtime: u32, agent: &JsValue, specs: &Array) -> JsValue;
    #[wasm_bindgen(js_name = makeRunEmitter)]
    fn make_run_emitter_js(cap: &JsValue, runtime: u32, token: f64) -> JsValue;
    #[wasm_bindgen(js_name = makeEventStream)]
    fn make_event_stream_js(cap: &JsValue, runtime: u32, id: f64, signal: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = makeDisposer)]
    fn make_disposer_js(cap: &JsValue, op: &str, runtime: u32, token: f64) -> JsValue;
    #[wasm_bindgen(js_name = quiet, catch)]
    fn quiet_js(promise: &Promise) -> Result<Promise, JsValue>;
}

/// Marks a promise's rejection handled and returns it.
pub fn quiet(promise: &Promise) -> Promise {
    quiet_js(promise).unwrap_or_else(|_| promise.clone())
}

thread_local! {
    static CAP: RefCell<Option<JsValue>> = const { RefCell::new(None) };
}

/// Installs `dispatcher` and keeps the capability; `false` when other code claimed it first.
pub fn install(dispatcher: &JsValue) -> bool {
    let cap = install_dispatcher(dispatcher);
    let armed = !cap.is_undefined();
    if armed {
        CAP.with(|c| *c.borrow_mut() = Some(cap));
    }
    armed
}

/// Whether the bridge holds the capability (no runtime is built without it).
pub fn armed() -> bool {
    CAP.with(|c| c.borrow().is_some())
}

fn cap() -> JsValue {
    CAP.with(|c| c.borrow().clone()).unwrap_or(JsValue::UNDEFINED)
}

#[allow(clippy::too_many_arguments)]
pub fn make_agent(
    runtime: u32,
    session_id: &str,
    incarnation: f64,
    name: &str,
    root_id: &str,
    parent_id: Option<String>,
    depth: u32,
) -> JsValue {
    make_agent_js(&cap(), runtime, session_id, incarnation, name, root_id, parent_id, depth)
}

/// `[runtimeId, sessionId, incarnation]` of a genuine handle, else undefined.
pub fn agent_key(value: &JsValue) -> JsValue {
    agent_key_js(&cap(), value).unwrap_or(JsValue::UNDEFINED)
}

#[allow(clippy::too_many_arguments)]
pub fn make_activation(
    runtime: u32,
    child_id: &str,
    incarnation: f64,
    name: &str,
    message_id: Option<String>,
    result: &Promise,
    disposed: &Promise,
    agent: &JsValue,
    budget: &JsValue,
) -> JsValue {
    make_activation_js(&cap(), runtime, child_id, incarnation, name, message_id, result, disposed, agent, budget)
}

pub fn make_turn(runtime: u32, turn: JsValue, agent: JsValue, incarnation: f64, turn_id: f64) -> JsValue {
    make_turn_js(&cap(), runtime, turn, agent, incarnation, turn_id)
}

/// `runtime.events()`'s async iterator over stream `id` (closed when `signal` aborts).
pub fn make_event_stream(runtime: u32, id: u64, signal: &JsValue) -> JsValue {
    make_event_stream_js(&cap(), runtime, id as f64, signal)
}

/// An external run's `emit(part)`, bound to its start's token.
pub fn make_run_emitter(runtime: u32, token: u64) -> JsValue {
    make_run_emitter_js(&cap(), runtime, token as f64)
}

pub fn make_tools(runtime: u32, agent: &JsValue, specs: &Array) -> JsValue {
    make_tools_js(&cap(), runtime, agent, specs)
}

pub fn make_disposer(op: &str, runtime: u32, token: f64) -> JsValue {
    make_disposer_js(&cap(), op, runtime, token)
}

/// A JS handle for a core agent.
pub(super) fn agent_to_js(runtime: u32, agent: &Agent) -> JsValue {
    make_agent(
        runtime,
        agent.session_id(),
        agent.incarnation() as f64,
        agent.name(),
        agent.root_id(),
        agent.parent_id().map(str::to_owned),
        agent.depth(),
    )
}

/// The live agent behind a JS handle; `code` says what a bad handle is.
pub(super) fn agent_from_js(rt: &Runtime, rt_id: u32, value: &JsValue, role: &str, code: ErrorCode) -> Result<Agent> {
    let key = agent_key(value);
    let refuse = |why: String| SubagentError::new(code, format!("the {role} {why}"));
    if key.is_undefined() {
        return Err(refuse(format!(
            "must be an Agent handle from a SubagentRuntime, not {}; pass the handle that openRoot(), \
             startActivation(...).agent or turn.agent gave you (a Session id or a copy of its fields is no handle)",
            describe(value)
        )));
    }
    let key: Array = key.unchecked_into();
    let id = key.get(1).as_string().unwrap_or_default();
    // A genuine handle: its frozen `name` field is the one the runtime gave it.
    let name = get(value, "name", role).ok().and_then(|n| n.as_string()).unwrap_or_else(|| id.clone());
    let who = member_ref(&name, &id);
    if key.get(0).as_f64() != Some(rt_id as f64) {
        return Err(refuse(format!(
            "handle of {who} belongs to another SubagentRuntime; use the handle this runtime gave you for that member"
        )));
    }
    let inc = key.get(2).as_f64().unwrap_or(-1.0) as u64;
    match rt.handle(&id, inc) {
        Some(agent) if agent.is_live() => Ok(agent),
        _ => {
            let next = if name == "lead" {
                format!(
                    "open the root again with openRoot({{ sessionId: {} }}) and use the handle it returns",
                    crate::core::name::quote_truncated(&id, 80)
                )
            } else {
                format!(
                    "take a live one with runtime.reopen(root, {}) (held until release()), or use turn.agent in its next turn",
                    crate::core::name::quote_truncated(&name, 80)
                )
            };
            Err(refuse(format!(
                "handle of {who} is dead: that member is no longer live (it settled, was disposed, or its root \
                 was closed or drained); {next}"
            )))
        }
    }
}

/// `agent "reviewer/checker" (Session "<id>")`, or `Session "<id>"` for a
/// member whose full name is its Session id.
pub(super) fn member_ref(name: &str, id: &str) -> String {
    let session = crate::core::name::quote_truncated(id, 80);
    if name == id {
        format!("Session {session}")
    } else {
        format!("agent {} (Session {session})", crate::core::name::quote_truncated(name, 200))
    }
}
