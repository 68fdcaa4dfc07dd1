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

use js_sys::{Array, Promise};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

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
) -> JsValue {
    make_activation_js(&cap(), runtime, child_id, incarnation, name, message_id, result, disposed, agent)
}

pub fn make_turn(runtime: u32, turn: JsValue, agent: JsValue, incarnation: f64, turn_id: f64) -> JsValue {
    make_turn_js(&cap(), runtime, turn, agent, incarnation, turn_id)
}

pub fn make_tools(runtime: u32, agent: &JsValue, specs: &Array) -> JsValue {
    make_tools_js(&cap(), runtime, agent, specs)
}

pub fn make_disposer(op: &str, runtime: u32, token: f64) -> JsValue {
    make_disposer_js(&cap(), op, runtime, token)
}
