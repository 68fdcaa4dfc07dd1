//! The exported `SubagentRuntime` class: the core runtime over JS ports.
//!
//! Agent handles, activations, turns and tools are built by `js/runtime.js`;
//! their callables route through one dispatcher closure installed once, and
//! handles are keys `(runtime, Session id, incarnation)` kept in a private
//! WeakMap there, so a plain object with the same fields is no handle at all.

use super::convert::{
    bounded_string, cwd_arg, describe, get, id_arg, is_objectish, options_arg, set, string_arg, value_from_js,
    value_to_js, value_within, Budget,
};
use super::error::{invalid, to_js};
use super::future_to_promise;
use super::native::{native_store, NativeStore};
use super::ports::{flush_listener, JsClock, JsHost, JsIds, JsProvider};
use super::signal::Link;
use super::store::JsStore;
use crate::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::hash::HashMap;
use crate::json::{Value, MAX_SAFE_INTEGER};
use crate::limits::{Limits, MAX_TREE_DEPTH};
use crate::ports::Provider;
use crate::result::SubagentResult;
use crate::runtime::{
    ActivationSpec, Agent, Delivery, Held, InboxMessage, InterruptAuthority, LiveRow, MessageSource, Recovery, Runtime,
    RuntimeEvent, RuntimeOptions, Scheduling, WeakRuntime,
};
use crate::store::Store;
use js_sys::{Array, Function, Object, Promise};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::handles::{agent_key, make_activation, make_agent, make_disposer, make_tools};
pub use super::handles::{make_turn, quiet};

type JsResult<T> = std::result::Result<T, JsValue>;

thread_local! {
    static RUNTIMES: RefCell<HashMap<u32, WeakRuntime>> = RefCell::new(HashMap::default());
    static NEXT_RUNTIME: Cell<u32> = const { Cell::new(1) };
    static DISPATCHER: Cell<bool> = const { Cell::new(false) };
    /// Host holds from `reopen`, until their `release()`: (runtime, token) -> hold.
    static HOLDS: RefCell<HashMap<(u32, u64), Held>> = RefCell::new(HashMap::default());
    static NEXT_HOLD: Cell<u64> = const { Cell::new(1) };
}

fn runtime_by_id(id: u32) -> Result<Runtime> {
    RUNTIMES.with(|r| r.borrow().get(&id).and_then(WeakRuntime::upgrade)).ok_or_else(|| {
        crate::err!(
            Unauthorized,
            "the SubagentRuntime this handle or tool belongs to was freed; keep the runtime referenced while its handles and tools are in use"
        )
    })
}

/// The limits of a runtime (the defaults once it is freed).
pub fn limits_of(id: u32) -> Limits {
    runtime_by_id(id).map(|rt| rt.options().limits).unwrap_or_default()
}

/// Installs the one dispatcher closure all JS-side callables route through
/// (see `handles`: this also takes the handle module's capability).
pub(crate) fn ensure_dispatcher() {
    if DISPATCHER.with(|d| d.replace(true)) {
        return;
    }
    let closure = Closure::<dyn Fn(String, Array) -> JsResult<JsValue>>::new(|op: String, args: Array| {
        dispatch(&op, &args).map_err(to_js)
    });
    super::handles::install(closure.as_ref());
    // One closure for the module's lifetime.
    closure.forget();
}

fn dispatch(op: &str, args: &Array) -> Result<JsValue> {
    let arg = |i: u32| args.get(i);
    let rt_id = arg(0).as_f64().unwrap_or(0.0) as u32;
    let rt = runtime_by_id(rt_id)?;
    let key = |i: u32| (arg(i).as_string().unwrap_or_default(), arg(i + 1).as_f64().unwrap_or(-1.0) as u64);
    match op {
        "isLive" => {
            let (id, inc) = key(1);
            Ok(JsValue::from_bool(rt.handle(&id, inc).is_some_and(|a| a.is_live())))
        }
        "dispose" => {
            let (id, inc) = key(1);
            rt.dispose_member(&id, inc);
            Ok(JsValue::UNDEFINED)
        }
        "takeSteered" => {
            let (id, inc) = key(1);
            let turn = arg(3).as_f64().unwrap_or(-1.0) as u64;
            let taken = rt.handle(&id, inc).map(|a| rt.take_steered(&a, turn)).unwrap_or_default();
            Ok(taken.iter().map(message_to_js).collect::<Array>().into())
        }
        "waitForInput" => {
            let (id, inc) = key(1);
            let turn = arg(3).as_f64().unwrap_or(-1.0) as u64;
            let (steer, agent) = (arg(4).is_truthy(), rt.handle(&id, inc));
            Ok(future_to_promise(async move {
                let end = match agent {
                    Some(a) => rt.wait_for_input(&a, turn, steer).await,
                    None => crate::runtime::WaitEnd::Ended,
                };
                Ok(JsValue::from(end as u8))
            })
            .into())
        }
        "toolsFor" => tools_for(&rt, rt_id, &arg(1)),
        "callTool" => Ok(call_tool(&rt, rt_id, &arg(1), &arg(2), &arg(3), &arg(4)).into()),
        "unsubscribe" => {
            rt.unsubscribe(arg(1).as_f64().unwrap_or(0.0) as u64);
            Ok(JsValue::UNDEFINED)
        }
        "unregister" => {
            rt.unregister_provider(arg(1).as_f64().unwrap_or(0.0) as u64);
            Ok(JsValue::UNDEFINED)
        }
        "release" => {
            let token = arg(1).as_f64().unwrap_or(0.0) as u64;
            HOLDS.with(|h| h.borrow_mut().remove(&(rt_id, token)));
            Ok(JsValue::UNDEFINED)
        }
        "removeFlush" => {
            rt.remove_flush_listener(arg(1).as_f64().unwrap_or(0.0) as u64);
            Ok(JsValue::UNDEFINED)
        }
        other => Err(invalid(format!("unknown runtime operation {other}", other = Quoted(other)))),
    }
}

/// A JS handle for a core agent.
pub fn agent_to_js(runtime: u32, agent: &Agent) -> JsValue {
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
fn agent_from_js(rt: &Runtime, rt_id: u32, value: &JsValue, role: &str, code: ErrorCode) -> Result<Agent> {
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
                    crate::name::quote_truncated(&id, 80)
                )
            } else {
                format!(
                    "take a live one with runtime.reopen(root, {}) (held until release()), or use turn.agent in its next turn",
                    crate::name::quote_truncated(&name, 80)
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
pub fn member_ref(name: &str, id: &str) -> String {
    let session = crate::name::quote_truncated(id, 80);
    if name == id {
        format!("Session {session}")
    } else {
        format!("agent {} (Session {session})", crate::name::quote_truncated(name, 200))
    }
}

/// `{id, source, content, delivery, text}` for a host.
pub fn message_to_js(m: &InboxMessage) -> JsValue {
    let obj = Object::new();
    set(&obj, "id", &JsValue::from_str(&m.id));
    let source = Object::new();
    match &m.source {
        MessageSource::User => set(&source, "kind", &"user".into()),
        MessageSource::AgentMessage { sender_session_id, sender_name } => {
            set(&source, "kind", &"agent-message".into());
            set(&source, "form", &"relay".into());
            set(&source, "senderSessionId", &JsValue::from_str(sender_session_id));
            set(&source, "senderName", &JsValue::from_str(sender_name));
        }
        MessageSource::SubagentSettled {
            sender_session_id,
            sender_name,
            summary,
            stop_reason,
            structured,
            diagnostic,
        } => {
            set(&source, "kind", &"subagent-settled".into());
            set(&source, "form", &"notice".into());
            set(&source, "summary", &JsValue::from_str(summary));
            set(&source, "stopReason", &JsValue::from_str(stop_reason));
            set(&source, "senderSessionId", &JsValue::from_str(sender_session_id));
            set(&source, "senderName", &JsValue::from_str(sender_name));
            if let Some(s) = structured {
                set(&source, "structured", &value_to_js(s));
            }
            if let Some(d) = diagnostic {
                set(&source, "diagnostic", &JsValue::from_str(d));
            }
        }
    }
    set(&obj, "source", &source);
    set(&obj, "content", &value_to_js(&m.content));
    set(&obj, "delivery", &(if m.scheduling == Scheduling::Steer { "steer" } else { "queue" }).into());
    set(&obj, "text", &JsValue::from_str(&crate::text::render_input(m)));
    obj.into()
}

fn result_to_js(r: &SubagentResult) -> JsValue {
    let obj = Object::new();
    set(&obj, "output", &value_to_js(&r.output));
    set(&obj, "stopReason", &JsValue::from_str(&r.stop_reason));
    if let Some(s) = &r.structured {
        set(&obj, "structured", &value_to_js(s));
    }
    if let Some(d) = &r.diagnostic {
        set(&obj, "diagnostic", &JsValue::from_str(d));
    }
    obj.into()
}

fn live_row_to_js(rows: &mut super::convert::RowsToJs, row: &LiveRow) -> JsValue {
    let obj = rows.row(&row.row);
    let _ = js_sys::Reflect::set(&obj, &"activity".into(), &(if row.running { "running" } else { "inactive" }).into());
    if let Some(rest) = row.rest {
        let state = if rest == crate::runtime::Rest::Parked { "parked" } else { "idle" };
        let _ = js_sys::Reflect::set(&obj, &"state".into(), &state.into());
    }
    obj
}

fn event_to_js(event: &RuntimeEvent) -> (&'static str, JsValue) {
    let info_obj = |i: &crate::runtime::RunInfo| {
        let obj = Object::new();
        set(&obj, "provider", &JsValue::from_str(&i.provider));
        set(&obj, "id", &JsValue::from_str(&i.id));
        set(&obj, "parentSessionId", &JsValue::from_str(&i.parent_session_id));
        set(&obj, "rootSessionId", &JsValue::from_str(&i.root_session_id));
        set(&obj, "name", &JsValue::from_str(&i.name));
        set(&obj, "label", &JsValue::from_str(&i.label));
        set(&obj, "mode", &JsValue::from_str(i.mode.as_str()));
        obj
    };
    match event {
        RuntimeEvent::Start(i) => ("subagent/start", info_obj(i).into()),
        RuntimeEvent::End(e) => {
            let obj = info_obj(&e.info);
            set(&obj, "stopReason", &JsValue::from_str(&e.stop_reason));
            if let Some(err) = &e.error {
                set(&obj, "error", &JsValue::from_str(err));
            }
            ("subagent/end", obj.into())
        }
        RuntimeEvent::Catalog { root_id, parent_id, entry } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "parentSessionId", &JsValue::from_str(parent_id));
            set(&obj, "entry", &super::convert::entry_to_js(entry));
            ("subagent/catalog", obj.into())
        }
        RuntimeEvent::Message { root_id, session_id, name, message_id, kind } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "messageId", &JsValue::from_str(message_id));
            set(&obj, "kind", &JsValue::from_str(kind));
            ("subagent/message", obj.into())
        }
        RuntimeEvent::Turn { root_id, session_id, name, stop_reason, output, parked } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "phase", &JsValue::from_str(if stop_reason.is_some() { "end" } else { "start" }));
            if let Some(reason) = stop_reason {
                set(&obj, "stopReason", &JsValue::from_str(reason));
            }
            if let Some(text) = output {
                set(&obj, "output", &JsValue::from_str(text));
            }
            if *parked {
                set(&obj, "parked", &JsValue::TRUE);
            }
            ("subagent/turn", obj.into())
        }
        RuntimeEvent::ProviderAdded(provider) => ("subagent/provider-added", provider_to_js(&provider.0)),
        RuntimeEvent::ProviderRemoved(name) => ("subagent/provider-removed", JsValue::from_str(name)),
    }
}

const EVENT_TYPES: &[&str] = &[
    "subagent/start",
    "subagent/end",
    "subagent/catalog",
    "subagent/message",
    "subagent/turn",
    "subagent/provider-added",
    "subagent/provider-removed",
];

/// A provider as JS sees it: the registered object, or a frozen description of a built-in one.
fn provider_to_js(provider: &Rc<dyn Provider>) -> JsValue {
    if let Some(obj) = provider.host_object().and_then(|h| h.downcast_ref::<JsValue>().cloned()) {
        return obj;
    }
    let caps = provider.capabilities();
    let c = Object::new();
    set(&c, "agentOptions", &caps.agent_options.into());
    set(&c, "agentPreset", &caps.agent_preset.into());
    set(&c, "outputSchema", &caps.output_schema.into());
    set(&c, "depthLimit", &caps.depth_limit.into());
    let obj = Object::new();
    set(&obj, "name", &JsValue::from_str(&provider.name()));
    set(&obj, "capabilities", &Object::freeze(&c));
    set(&obj, "inheritsParentContext", &provider.inherits_parent_context().into());
    set(&obj, "builtin", &JsValue::TRUE);
    Object::freeze(&obj).into()
}

/// `options` as `{ signal }`, or (deprecated until the next minor release) the AbortSignal itself.
fn link_signal_or_options(value: Option<JsValue>, what: &str) -> Result<Link> {
    let Some(value) = value.filter(|v| !v.is_undefined() && !v.is_null()) else { return Ok(Link::none()) };
    let is_signal =
        is_objectish(&value) && get(&value, "aborted", what).map(|a| a.as_bool().is_some()).unwrap_or(false);
    if is_signal {
        let options = Object::new();
        set(&options, "signal", &value);
        Link::from_options(Some(&options.into()), what, true)
    } else {
        let options = options_arg(&value, what)?;
        Link::from_options(options.as_ref(), what, true)
    }
}

fn reject(e: SubagentError) -> Promise {
    Promise::reject(&to_js(e))
}

/// Content (a prompt or a message), copied only within its byte limit; the
/// core checks the limits again, with the block count, where it enters.
fn content_arg(value: &JsValue, what: &str, bytes: usize, limit: &'static str) -> Result<Value> {
    let v = value_within(value, Budget::new(bytes, limit).lenient()).map_err(|e| e.error(what))?;
    crate::result::normalize_content(v).ok_or_else(|| {
        invalid(format!("{what} must be a string or an array of content blocks with a type, not {}", describe(value)))
    })
}

fn opt_string(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        string_arg(&v, &format!("{what}.{key}")).map(Some)
    }
}

fn opt_id(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        id_arg(&v, &format!("{what}.{key}")).map(Some)
    }
}

fn opt_cwd(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        cwd_arg(&v, &format!("{what}.{key}")).map(Some)
    }
}

/// `options.limits`: `{ promptBytes?, messageBytes?, ... }` over the defaults.
fn limits_arg(value: &JsValue) -> Result<Limits> {
    let mut limits = Limits::default();
    let Some(obj) = options_arg(value, "options.limits")? else { return Ok(limits) };
    for spec in crate::limits::CONFIGURABLE {
        let v = get(&obj, spec.key, "options.limits")?;
        if v.is_undefined() {
            continue;
        }
        match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&n) => limits.set(spec.key, n as usize)?,
            _ => {
                return Err(invalid(format!(
                    "options.limits.{} must be an integer from {} to {}, not {}",
                    spec.key,
                    spec.min,
                    spec.max,
                    describe(&v)
                )))
            }
        }
    }
    Ok(limits)
}

fn opt_json(obj: &JsValue, key: &str, what: &str) -> Result<Option<Value>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    value_from_js(&v).map(Some).map_err(|e| e.error(&format!("{what}.{key}")))
}

fn tools_for(rt: &Runtime, rt_id: u32, agent_js: &JsValue) -> Result<JsValue> {
    let agent = agent_from_js(rt, rt_id, agent_js, "agent", ErrorCode::Unauthorized)?;
    let tools = rt.tools_for(&agent)?;
    let specs: Array = tools
        .specs()
        .iter()
        .map(|t| {
            let obj = Object::new();
            set(&obj, "name", &JsValue::from_str(&t.name));
            set(&obj, "description", &JsValue::from_str(&t.description));
            set(&obj, "inputSchema", &value_to_js(&t.input_schema));
            JsValue::from(obj)
        })
        .collect();
    Ok(make_tools(rt_id, agent_js, &specs))
}

fn call_tool(
    rt: &Runtime,
    rt_id: u32,
    agent_js: &JsValue,
    name: &JsValue,
    input: &JsValue,
    options: &JsValue,
) -> Promise {
    let prepared = (|| -> Result<_> {
        let agent = agent_from_js(rt, rt_id, agent_js, "agent", ErrorCode::Unauthorized)?;
        let tools = rt.tools_for(&agent)?;
        let name = string_arg(name, "tool name")?;
        let link = link_signal_or_options(Some(options.clone()), "options")?;
        Ok((tools, name, link))
    })();
    let (tools, name, link) = match prepared {
        Ok(p) => p,
        // Like bad input, bad options or a dead agent are a tool error, never a rejection.
        Err(e) => {
            let obj = Object::new();
            set(&obj, "content", &JsValue::from_str(&e.message));
            set(&obj, "isError", &JsValue::TRUE);
            return Promise::resolve(&JsValue::from(obj));
        }
    };
    // Bad input is a tool error the model can read, not an exception.
    let input = value_within(input, Budget::new(rt.options().limits.message_bytes, "messageBytes"));
    future_to_promise(async move {
        let result = match input {
            Ok(input) => tools.call(&name, &input, link.signal()).await,
            Err(e) => crate::tools::ToolResult { content: format!("the input{e}"), is_error: true, structured: None },
        };
        let obj = Object::new();
        set(&obj, "content", &JsValue::from_str(&result.content));
        set(&obj, "isError", &JsValue::from_bool(result.is_error));
        if let Some(s) = &result.structured {
            set(&obj, "structured", &value_to_js(s));
        }
        drop(link);
        Ok(obj.into())
    })
}

/// A live subagent runtime over a JS store and agent host.
#[wasm_bindgen(js_name = SubagentRuntime)]
pub struct JsRuntime {
    id: u32,
    rt: Runtime,
}

impl Drop for JsRuntime {
    fn drop(&mut self) {
        RUNTIMES.with(|r| r.borrow_mut().remove(&self.id));
    }
}

impl JsRuntime {
    fn agent(&self, value: &JsValue, role: &str) -> Result<Agent> {
        agent_from_js(&self.rt, self.id, value, role, ErrorCode::Unauthorized)
    }

    fn handle(&self, agent: &Agent) -> JsValue {
        agent_to_js(self.id, agent)
    }
}

#[wasm_bindgen(js_class = SubagentRuntime)]
impl JsRuntime {
    /// `new SubagentRuntime({ store, host, maxDepth?, capacity?, defaultCwd?, builtinProviders?, now?, newId? })`.
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "RuntimeInit")] options: JsValue) -> JsResult<JsRuntime> {
        Self::build(&options).map_err(to_js)
    }

    fn build(options: &JsValue) -> Result<JsRuntime> {
        let what = "options";
        if !is_objectish(options) {
            return Err(invalid(format!(
                "SubagentRuntime needs an options object {{store, host}}, not {}",
                describe(options)
            )));
        }
        ensure_dispatcher();
        if !super::handles::armed() {
            return Err(crate::err!(
                Unauthorized,
                "the agent-handle module was claimed by other code before subagent-tree loaded; no runtime can be built"
            ));
        }
        let id = NEXT_RUNTIME.with(|n| {
            let id = n.get();
            n.set(id + 1);
            id
        });
        let limits = limits_arg(&get(options, "limits", what)?)?;
        let store_js = get(options, "store", what)?;
        let native = native_store(&store_js, "options.store", limits.stored_event_bytes())?;
        let flush = native.as_ref().map(NativeStore::flush_listener);
        let store: Rc<dyn Store> = match native {
            Some(native) => Rc::new(native),
            None => Rc::new(JsStore::new(&store_js, "options.store")?.with_payload_limit(limits.stored_event_bytes())),
        };
        let host = Rc::new(JsHost::new(get(options, "host", what)?, id)?);
        let number = |key: &str, default: u32, min: u32, max: u32| -> Result<u32> {
            let v = get(options, key, what)?;
            if v.is_undefined() {
                return Ok(default);
            }
            match v.as_f64() {
                Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(n as u32),
                Some(n) if key == "maxDepth" && n.fract() == 0.0 && n > max as f64 => Err(SubagentError::new(
                    ErrorCode::LimitExceeded,
                    format!("options.{key} is {}; the limit {key} is {max}", describe(&v)),
                )),
                Some(_) => Err(invalid(format!(
                    "options.{key} must be an integer from {min} to {max}, not {n}",
                    n = describe(&v)
                ))),
                None => {
                    Err(invalid(format!("options.{key} must be an integer from {min} to {max}, not {}", describe(&v))))
                }
            }
        };
        let function = |key: &str| -> Result<Option<Function>> {
            let v = get(options, key, what)?;
            if v.is_undefined() || v.is_null() {
                return Ok(None);
            }
            v.dyn_into::<Function>()
                .map(Some)
                .map_err(|v| invalid(format!("options.{key} must be a function, not {}", describe(&v))))
        };
        let builtin = get(options, "builtinProviders", what)?;
        let runtime_options = RuntimeOptions {
            max_depth: number("maxDepth", 1, 0, MAX_TREE_DEPTH)?,
            capacity: number("capacity", 8, 0, 1_000_000)? as usize,
            default_cwd: opt_cwd(options, "defaultCwd", what)?.unwrap_or_else(|| "/".into()),
            builtin_providers: builtin.is_undefined() || builtin.is_truthy(),
            recovery: match opt_string(options, "recovery", what)?.as_deref() {
                None | Some("report") => Recovery::Report,
                Some("rerun") => Recovery::Rerun,
                Some("off") => Recovery::Off,
                Some(other) => {
                    return Err(invalid(format!(
                        "options.recovery must be \"report\", \"rerun\" or \"off\", not {}",
                        crate::name::quote_truncated(other, 80)
                    )))
                }
            },
            limits,
            confine_cwd: {
                let v = get(options, "confineCwd", what)?;
                match v.as_bool() {
                    Some(b) => b,
                    None if v.is_undefined() => true,
                    None => return Err(invalid(format!("options.confineCwd must be a boolean, not {}", describe(&v)))),
                }
            },
        };
        let (rt, driver) = Runtime::new(
            store.clone(),
            host,
            Rc::new(JsClock(function("now")?)),
            Rc::new(JsIds(function("newId")?)),
            runtime_options,
        );
        // The runtime's background work, on the microtask queue; it ends with the runtime.
        wasm_bindgen_futures::spawn_local(driver);
        // The store's own flush is the first durability listener, when it has one.
        if let Some(native) = flush {
            rt.add_flush_listener(native);
        } else if let Ok(flush) = get(&store_js, "flush", "options.store") {
            if let Ok(flush) = flush.dyn_into::<Function>() {
                let bound = flush.bind0(&store_js);
                rt.add_flush_listener(flush_listener(bound));
            }
        }
        RUNTIMES.with(|r| r.borrow_mut().insert(id, rt.downgrade()));
        Ok(JsRuntime { id, rt })
    }

    /// Opens (or creates) a root session: resolves with its live `lead` handle.
    #[wasm_bindgen(js_name = openRoot, unchecked_return_type = "Promise<Agent>")]
    pub fn open_root(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "OpenRootOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            let options = options_arg(&options.unwrap_or(JsValue::UNDEFINED), "options")?;
            let Some(options) = options else { return Ok((None, None)) };
            let id = get(&options, "sessionId", "options")?;
            let id = if id.is_undefined() || id.is_null() { None } else { Some(id_arg(&id, "options.sessionId")?) };
            Ok((id, opt_cwd(&options, "cwd", "options")?))
        })();
        let (session, cwd) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let (rt, id) = (self.rt.clone(), self.id);
        future_to_promise(async move {
            let root = rt.open_root(session, cwd).await.map_err(to_js)?;
            Ok(agent_to_js(id, &root))
        })
    }

    /// Drains the root's tree, then closes it: the handle dies.
    #[wasm_bindgen(js_name = closeRoot, unchecked_return_type = "Promise<void>")]
    pub fn close_root(&self, #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue) -> Promise {
        let root = match self.agent(&root, "root") {
            Ok(r) => r,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            rt.close_root(&root).await.map_err(to_js)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Starts a local or external child (see the README for the check order).
    /// (Typed in `js/types/runtime.d.ts`, with an overload for the built-in local providers.)
    #[wasm_bindgen(js_name = startActivation, skip_typescript)]
    pub fn start_activation(&self, #[wasm_bindgen(unchecked_param_type = "ActivationSpec")] spec: JsValue) -> Promise {
        let parsed = self.activation_spec(&spec);
        let (spec, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let (rt, id) = (self.rt.clone(), self.id);
        future_to_promise(async move {
            let activation = rt.start_activation(spec).await.map_err(|e| link.error(e))?;
            let result = activation.result();
            let result =
                quiet(&future_to_promise(async move { result.await.map(|r| result_to_js(&r)).map_err(to_js) }));
            let disposed = activation.teardown();
            let disposed =
                quiet(&future_to_promise(async move { disposed.await.map(|()| JsValue::UNDEFINED).map_err(to_js) }));
            let agent = activation.agent().map(|a| agent_to_js(id, &a)).unwrap_or(JsValue::UNDEFINED);
            Ok(make_activation(
                id,
                &activation.child_id,
                activation.incarnation() as f64,
                &activation.name,
                activation.message_id.clone(),
                &result,
                &disposed,
                &agent,
            ))
        })
    }

    fn activation_spec(&self, spec: &JsValue) -> Result<(ActivationSpec, Link)> {
        let what = "spec";
        if !is_objectish(spec) {
            return Err(invalid(format!("startActivation needs a spec object, not {}", describe(spec))));
        }
        // The built-in fresh-context provider unless another is named.
        let provider = match get(spec, "provider", what)? {
            v if v.is_undefined() => "spawn".to_owned(),
            v => string_arg(&v, "spec.provider")?,
        };
        let label = string_arg(&get(spec, "label", what)?, "spec.label")?;
        let parent_js = get(spec, "parent", what)?;
        let parent = self.agent(&parent_js, "parent")?;
        let max = self.rt.options().limits.prompt_bytes;
        let prompt = content_arg(&get(spec, "prompt", what)?, "spec.prompt", max, "promptBytes")?;
        let delivery = match opt_string(spec, "delivery", what)?.as_deref() {
            None | Some("parent") => Delivery::Parent,
            Some("caller") => Delivery::Caller,
            Some(other) => {
                return Err(invalid(format!(
                    "spec.delivery must be \"parent\" or \"caller\", not {}",
                    crate::name::quote_truncated(other, 80)
                )))
            }
        };
        let max_depth = get(spec, "maxDepth", what)?;
        let max_depth = if max_depth.is_undefined() || max_depth.is_null() {
            None
        } else {
            Some(
                max_depth
                    .as_f64()
                    .ok_or_else(|| invalid(format!("spec.maxDepth must be a number, not {}", describe(&max_depth))))?,
            )
        };
        let options = Object::new();
        set(&options, "signal", &get(spec, "signal", what)?);
        let link = Link::from_options(Some(&options.into()), "spec", true)?;
        let mut s = ActivationSpec::new(&provider, &parent, &label, "");
        s.prompt = prompt;
        s.name = opt_string(spec, "name", what)?;
        s.child_id = opt_id(spec, "childId", what)?;
        s.signal = link.signal().clone();
        s.delivery = delivery;
        s.cwd = opt_cwd(spec, "cwd", what)?;
        s.agent_preset = opt_string(spec, "agentPreset", what)?;
        s.agent_options = opt_json(spec, "agentOptions", what)?;
        s.output_schema = opt_json(spec, "outputSchema", what)?;
        s.max_depth = max_depth;
        Ok((s, link))
    }

    /// Steers an agent-authored message to another member of the sender's tree.
    #[wasm_bindgen(js_name = sendMessage, unchecked_return_type = "Promise<string>")]
    pub fn send_message(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] sender: JsValue,
        #[wasm_bindgen(js_name = targetId, unchecked_param_type = "string")] target_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | ContentBlock[]")] content: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            let sender = self.agent(&sender, "sender")?;
            let target = id_arg(&target_id, "targetId")?;
            let max = self.rt.options().limits.message_bytes;
            let content = content_arg(&content, "content", max, "messageBytes")?;
            let link = link_signal_or_options(options, "options")?;
            Ok((sender, target, content, link))
        })();
        let (sender, target, content, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let id = rt.send_message(&sender, &target, content, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(JsValue::from_str(&id))
        })
    }

    /// A user-authored message to the root or a continuable member of its
    /// tree; `target` is `lead`, a full name or a Session id.
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn prompt(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] target: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | ContentBlock[]")] content: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "PromptOptions")] options: Option<JsValue>,
    ) -> Promise {
        let (root, target, content, scheduling, link) = match self.prompt_args(&root, &target, &content, options) {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let id = rt.prompt(&root, &target, content, scheduling, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(JsValue::from_str(&id))
        })
    }

    /// `prompt`, resolving once the message is accepted with its id and the
    /// promise of the result of the turn that answers it.
    #[wasm_bindgen(unchecked_return_type = "Promise<AskReceipt>")]
    pub fn ask(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] target: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | ContentBlock[]")] content: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "PromptOptions")] options: Option<JsValue>,
    ) -> Promise {
        let (root, target, content, scheduling, link) = match self.prompt_args(&root, &target, &content, options) {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let (id, answer) =
                rt.ask(&root, &target, content, scheduling, link.signal()).await.map_err(|e| link.error(e))?;
            let answer =
                quiet(&future_to_promise(async move { answer.await.map(|r| result_to_js(&r)).map_err(to_js) }));
            let obj = Object::new();
            set(&obj, "messageId", &JsValue::from_str(&id));
            set(&obj, "answer", &answer);
            Ok(Object::freeze(&obj).into())
        })
    }

    fn prompt_args(
        &self,
        root: &JsValue,
        target: &JsValue,
        content: &JsValue,
        options: Option<JsValue>,
    ) -> Result<(Agent, String, Value, Scheduling, Link)> {
        let root = self.agent(root, "root")?;
        let target = id_arg(target, "target")?;
        let max = self.rt.options().limits.message_bytes;
        let content = content_arg(content, "content", max, "messageBytes")?;
        let options = options_arg(&options.unwrap_or(JsValue::UNDEFINED), "options")?;
        let scheduling =
            match options.as_ref().map(|o| opt_string(o, "delivery", "options")).transpose()?.flatten().as_deref() {
                None | Some("queue") => Scheduling::Queue,
                Some("steer") => Scheduling::Steer,
                Some(other) => {
                    return Err(invalid(format!(
                        "options.delivery must be \"queue\" or \"steer\", not {}",
                        crate::name::quote_truncated(other, 80)
                    )))
                }
            };
        let link = Link::from_options(options.as_ref(), "options", true)?;
        Ok((root, target, content, scheduling, link))
    }

    /// The live handle of any continuable member of the root's tree (a cold
    /// one is resumed without a message), held resident until `release()`.
    #[wasm_bindgen(unchecked_return_type = "Promise<HeldMember>")]
    pub fn reopen(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] target: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            Ok((self.agent(&root, "root")?, id_arg(&target, "target")?, link_signal_or_options(options, "options")?))
        })();
        let (root, target, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let (rt, id) = (self.rt.clone(), self.id);
        future_to_promise(async move {
            let held = rt.reopen(&root, &target, link.signal()).await.map_err(|e| link.error(e))?;
            let agent = agent_to_js(id, &held.agent());
            let token = NEXT_HOLD.with(|n| n.replace(n.get() + 1));
            HOLDS.with(|h| h.borrow_mut().insert((id, token), held));
            let obj = Object::new();
            set(&obj, "agent", &agent);
            set(&obj, "release", &make_disposer("release", id, token as f64));
            Ok(Object::freeze(&obj).into())
        })
    }

    /// Resolves once the whole tree is quiet, the root's own turns included.
    #[wasm_bindgen(js_name = waitForQuiescence, unchecked_return_type = "Promise<void>")]
    pub fn wait_for_quiescence(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed =
            (|| -> Result<_> { Ok((self.agent(&root, "root")?, link_signal_or_options(options, "options")?)) })();
        let (root, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            rt.wait_for_quiescence(&root, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Whether a member is resident now (information only: no handle, no authority).
    #[wasm_bindgen(js_name = isResident)]
    pub fn is_resident(
        &self,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
    ) -> bool {
        session_id.as_string().is_some_and(|id| self.rt.is_resident(&id))
    }

    /// Interrupts one member under `{kind:'user', root?}` or `{kind:'ancestor', agent}`.
    /// Fire-and-return: `{ signalled }` says whether a running turn was signalled.
    #[wasm_bindgen(unchecked_return_type = "InterruptReceipt")]
    pub fn interrupt(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] target: JsValue,
        #[wasm_bindgen(unchecked_param_type = "InterruptAuthority")] authority: JsValue,
    ) -> JsResult<JsValue> {
        let receipt = (|| -> Result<_> {
            let target = id_arg(&target, "target")?;
            if !is_objectish(&authority) {
                return Err(invalid(format!(
                    "authority must be {{kind:'user', root?}} or {{kind:'ancestor', agent}}, not {}",
                    describe(&authority)
                )));
            }
            let kind = bounded_string(&get(&authority, "kind", "authority")?, 16, "kind", false).ok().flatten();
            match kind.as_deref() {
                Some("user") => {
                    let root = get(&authority, "root", "authority")?;
                    if root.is_undefined() || root.is_null() {
                        self.rt.interrupt(&target, InterruptAuthority::User)
                    } else {
                        let root = self.agent(&root, "root")?;
                        self.rt.interrupt(&target, InterruptAuthority::Tree(&root))
                    }
                }
                Some("ancestor") => {
                    let agent = self.agent(&get(&authority, "agent", "authority")?, "interrupting agent")?;
                    self.rt.interrupt(&target, InterruptAuthority::Ancestor(&agent))
                }
                _ => Err(invalid("authority.kind must be \"user\" or \"ancestor\"".into())),
            }
        })()
        .map_err(to_js)?;
        let obj = Object::new();
        set(&obj, "signalled", &JsValue::from_bool(receipt.signalled));
        Ok(Object::freeze(&obj).into())
    }

    /// `{ self, parent? }`: the member's full name and its creator's.
    #[wasm_bindgen(js_name = namesOf, unchecked_return_type = "SubagentMemberNames")]
    pub fn names_of(&self, #[wasm_bindgen(unchecked_param_type = "Agent")] agent: JsValue) -> JsResult<JsValue> {
        let names = self.agent(&agent, "agent").and_then(|a| self.rt.names_of(&a)).map_err(to_js)?;
        let obj = Object::new();
        set(&obj, "self", &JsValue::from_str(&names.self_name));
        if let Some(p) = &names.parent {
            set(&obj, "parent", &JsValue::from_str(p));
        }
        Ok(obj.into())
    }

    /// The live root of the member's tree.
    #[wasm_bindgen(js_name = rootOf, unchecked_return_type = "Agent")]
    pub fn root_of(&self, #[wasm_bindgen(unchecked_param_type = "Agent")] agent: JsValue) -> JsResult<JsValue> {
        let root = self.agent(&agent, "agent").and_then(|a| self.rt.root_of(&a)).map_err(to_js)?;
        Ok(self.handle(&root))
    }

    /// Resolves `lead`, a full name or a Session id within the caller's tree. Grants no authority.
    #[wasm_bindgen(js_name = resolveName, unchecked_return_type = "Promise<string>")]
    pub fn resolve_name(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] caller: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            Ok((
                self.agent(&caller, "caller")?,
                string_arg(&text, "name")?,
                link_signal_or_options(options, "options")?,
            ))
        })();
        let (caller, text, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let id = rt.resolve_name(&caller, &text, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(JsValue::from_str(&id))
        })
    }

    /// The tree below `rootSessionId` in pre-order, each row with its live `activity`.
    #[wasm_bindgen(js_name = listDescendants, unchecked_return_type = "Promise<LiveRow[]>")]
    pub fn list_descendants(
        &self,
        #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            Ok((id_arg(&root_session_id, "rootSessionId")?, link_signal_or_options(options, "options")?))
        })();
        let (root, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let rows = rt.list_descendants(&root, link.signal()).await.map_err(|e| link.error(e))?;
            let mut out = super::convert::RowsToJs::default();
            Ok(rows.iter().map(|r| live_row_to_js(&mut out, r)).collect::<Array>().into())
        })
    }

    /// Closes admission for these trees and stops their members child-first.
    #[wasm_bindgen(js_name = drainDescendants, unchecked_return_type = "Promise<void>")]
    pub fn drain_descendants(&self, #[wasm_bindgen(unchecked_param_type = "Agent[]")] roots: JsValue) -> Promise {
        let parsed = (|| -> Result<Vec<Agent>> {
            let list = super::convert::array_arg(&roots, "roots")?;
            list.iter().map(|r| self.agent(&r, "root")).collect()
        })();
        let roots = match parsed {
            Ok(r) => r,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            rt.drain_descendants(&roots).await.map_err(to_js)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Waits while the root's tree works; resolves whether any work was joined.
    #[wasm_bindgen(js_name = waitForTreeWork, unchecked_return_type = "Promise<boolean>")]
    pub fn wait_for_tree_work(&self, #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue) -> Promise {
        let root = match self.agent(&root, "root") {
            Ok(r) => r,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move { Ok(JsValue::from_bool(rt.wait_for_tree_work(&root).await.map_err(to_js)?)) })
    }

    /// Registers a provider; returns the disposer that removes exactly this registration.
    #[wasm_bindgen(js_name = registerProvider, unchecked_return_type = "() => void")]
    pub fn register_provider(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SubagentProvider")] provider: JsValue,
    ) -> JsResult<JsValue> {
        let provider = JsProvider::new(provider, self.id).map_err(to_js)?;
        let token = self.rt.register_provider(Rc::new(provider)).map_err(to_js)?;
        Ok(make_disposer("unregister", self.id, token as f64))
    }

    /// The provider registered under `name` (built-ins as a descriptor), or undefined.
    #[wasm_bindgen(js_name = getProvider, unchecked_return_type = "SubagentProvider | undefined")]
    pub fn get_provider(&self, #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue) -> JsValue {
        let Ok(Some(name)) = bounded_string(&name, 64, "providerNameBytes", true) else { return JsValue::UNDEFINED };
        self.rt.get_provider(&name).map_or(JsValue::UNDEFINED, |p| provider_to_js(&p))
    }

    /// Subscribes to a lifecycle event, optionally of one tree root; returns the unsubscriber.
    /// (Typed per event in `js/types/runtime.d.ts`: `on<K extends RuntimeEventType>`.)
    #[wasm_bindgen(skip_typescript)]
    pub fn on(
        &self,
        #[wasm_bindgen(js_name = type, unchecked_param_type = "RuntimeEventType")] kind: JsValue,
        #[wasm_bindgen(unchecked_param_type = "(event: any) => void")] listener: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ root?: string }")] options: Option<JsValue>,
    ) -> JsResult<JsValue> {
        let parsed = (|| -> Result<_> {
            let kind = string_arg(&kind, "type")?;
            let Some(kind) = EVENT_TYPES.iter().find(|t| **t == kind) else {
                return Err(invalid(format!(
                    "event type {} must be one of {}",
                    crate::name::quote_truncated(&kind, 80),
                    EVENT_TYPES.join(", ")
                )));
            };
            let listener: Function = listener
                .dyn_into()
                .map_err(|v| invalid(format!("listener must be a function, not {}", describe(&v))))?;
            let options = options_arg(&options.unwrap_or(JsValue::UNDEFINED), "options")?;
            let root = match options {
                Some(o) => opt_string(&o, "root", "options")?,
                None => None,
            };
            Ok((*kind, listener, root))
        })();
        let (kind, listener, root) = parsed.map_err(to_js)?;
        let token = self.rt.subscribe(
            root,
            Rc::new(move |event: &RuntimeEvent| {
                let (t, payload) = event_to_js(event);
                if t == kind {
                    // A throwing listener must not break the runtime.
                    let _ = listener.call1(&JsValue::UNDEFINED, &payload);
                }
            }),
        );
        Ok(make_disposer("unsubscribe", self.id, token as f64))
    }

    /// The durability barrier: `true` when at least one listener took part.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn flush(
        &self,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
    ) -> Promise {
        let id = match id_arg(&session_id, "sessionId") {
            Ok(id) => id,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move { Ok(JsValue::from_bool(rt.flush(&id).await.map_err(to_js)?)) })
    }

    /// Adds a durability listener `(sessionId) => void | Promise<void>`; returns its remover.
    #[wasm_bindgen(js_name = addFlushListener, unchecked_return_type = "() => void")]
    pub fn add_flush_listener(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(sessionId: string) => unknown")] listener: JsValue,
    ) -> JsResult<JsValue> {
        let f: Function = listener
            .dyn_into()
            .map_err(|v| to_js(invalid(format!("a flush listener must be a function, not {}", describe(&v)))))?;
        let token = self.rt.add_flush_listener(flush_listener(f));
        Ok(make_disposer("removeFlush", self.id, token as f64))
    }

    /// The model-facing tools of a live member.
    #[wasm_bindgen(js_name = toolsFor, unchecked_return_type = "Tool[]")]
    pub fn tools_for(&self, #[wasm_bindgen(unchecked_param_type = "Agent")] agent: JsValue) -> JsResult<JsValue> {
        tools_for(&self.rt, self.id, &agent).map_err(to_js)
    }

    /// Names of the registered providers, in registration order.
    #[wasm_bindgen(js_name = providerNames, unchecked_return_type = "string[]")]
    pub fn provider_names(&self) -> Array {
        self.rt.provider_names().iter().map(|n| JsValue::from_str(n)).collect()
    }
}
