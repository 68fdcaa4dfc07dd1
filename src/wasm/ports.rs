//! The runtime's ports over JS objects: the agent host, providers and their
//! runs, the clock and the id source. Each callback is called
//! through a `catch` import and settled into a native Promise, so values,
//! Promises, rejections, synchronous throws and missing methods all come back
//! as results; malformed answers become clear errors, never traps.

use super::convert::{
    bounded_string, describe, events_from_js, get, id_arg, is_objectish, set, set_own, value_to_js, value_within,
    Budget, EventBudget, MAX_STRING_ARG,
};
use super::error::{from_thrown, invalid, settle};
use super::handles::{agent_to_js, make_turn, member_ref, quiet};
use super::registry::limits_of;
use super::store::js_signal;
use super::values::message_to_js;
use crate::core::error::{ErrorCode, Quoted, Result};
use crate::core::exec::LocalBoxFuture;
use crate::core::json::Value;
use crate::core::result::SubagentResult;
use crate::core::usage::Usage;
use crate::runtime::ports::{
    AgentHost, Capabilities, Clock, ContinuableCreateRequest, ContinuableCreateSpec, IdKind, IdSource, Provider, Run,
    StartRequest, Turn, TurnOutcome,
};
use js_sys::{Array, Function, Object, Promise};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Calls `obj[method](...args)` with every failure as a value.
fn call_method(obj: &JsValue, method: &str, args: &[JsValue]) -> std::result::Result<JsValue, JsValue> {
    let f = js_sys::Reflect::get(obj, &JsValue::from_str(method))?;
    let f: Function = f.dyn_into().map_err(|v| {
        JsValue::from(js_sys::TypeError::new(&format!("{method} is not a function ({})", describe(&v))))
    })?;
    f.apply(obj, &args.iter().collect::<Array>())
}

/// Awaits whatever a callback returned (value, Promise or throw).
async fn settled(outcome: std::result::Result<JsValue, JsValue>) -> std::result::Result<JsValue, JsValue> {
    JsFuture::from(settle(&outcome?)).await
}

fn has_method(obj: &JsValue, method: &str) -> bool {
    js_sys::Reflect::get(obj, &JsValue::from_str(method)).map(|f| f.is_function()).unwrap_or(false)
}

fn optional_string(obj: &JsValue, key: &str, what: &str) -> Result<Option<String>> {
    let v = get(obj, key, what)?;
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    bounded_string(&v, MAX_STRING_ARG as usize, "the string argument limit", false)
        .map_err(|r| r.error(&format!("{what}.{key}")))?
        .map(Some)
        .ok_or_else(|| invalid(format!("{what}.{key} must be a string, not {}", describe(&v))))
}

// ---- agent host ------------------------------------------------------------

/// The JS agent host: `{ runTurn(turn), release?(sessionId) }`.
pub struct JsHost {
    obj: JsValue,
    runtime: u32,
    /// `host.inputModalities` includes `image` (the default: text and image).
    images: bool,
}

impl JsHost {
    pub fn new(obj: JsValue, runtime: u32) -> Result<JsHost> {
        if !is_objectish(&obj) || !has_method(&obj, "runTurn") {
            return Err(invalid(format!("host must be an object with a runTurn(turn) method, not {}", describe(&obj))));
        }
        let modalities = get(&obj, "inputModalities", "host")?;
        let images = if modalities.is_undefined() || modalities.is_null() {
            true
        } else {
            let list = super::convert::strings_arg(&modalities, "host.inputModalities")?;
            if let Some(other) = list.iter().find(|m| *m != "text" && *m != "image") {
                return Err(invalid(format!(
                    "host.inputModalities may hold \"text\" and \"image\", not {}",
                    crate::core::name::quote_truncated(other, 40)
                )));
            }
            if !list.iter().any(|m| m == "text") {
                return Err(invalid("host.inputModalities must include \"text\"".into()));
            }
            list.iter().any(|m| m == "image")
        };
        Ok(JsHost { obj, runtime, images })
    }
}

impl AgentHost for JsHost {
    fn takes_images(&self) -> bool {
        self.images
    }

    fn run_turn(&self, turn: Turn) -> LocalBoxFuture<'static, Result<TurnOutcome>> {
        let (obj, runtime) = (self.obj.clone(), self.runtime);
        let turn_js = turn_to_js(self.runtime, &turn);
        Box::pin(async move {
            let value = settled(call_method(&obj, "runTurn", &[turn_js])).await.map_err(|e| {
                from_thrown(
                    ErrorCode::PersistenceUnavailable,
                    format!("host.runTurn failed for {}", member_ref(&turn.name, &turn.session_id)),
                    e,
                )
            })?;
            outcome_from_js(&value, host_budget(runtime))
        })
    }

    fn release(&self, session_id: &str) -> LocalBoxFuture<'static, Result<()>> {
        let obj = self.obj.clone();
        let id = session_id.to_owned();
        Box::pin(async move {
            if !has_method(&obj, "release") {
                return Ok(());
            }
            settled(call_method(&obj, "release", &[JsValue::from_str(&id)])).await.map(|_| ()).map_err(|e| {
                from_thrown(
                    ErrorCode::ActivationTeardownFailed,
                    format!("host.release failed for Session {}", crate::core::name::quote_truncated(&id, 80)),
                    e,
                )
            })
        })
    }
}

fn turn_to_js(runtime: u32, turn: &Turn) -> JsValue {
    let obj = Object::new();
    set(&obj, "sessionId", &JsValue::from_str(&turn.session_id));
    set(&obj, "rootId", &JsValue::from_str(&turn.root_id));
    set(&obj, "name", &JsValue::from_str(&turn.name));
    if let Some(parent) = &turn.parent_name {
        set(&obj, "parentName", &JsValue::from_str(parent));
    }
    set(&obj, "cwd", &JsValue::from_str(&turn.cwd));
    set(&obj, "first", &JsValue::from_bool(turn.first));
    set(&obj, "signal", &js_signal(&turn.signal));
    set(&obj, "input", &turn.input.iter().map(message_to_js).collect::<Array>());
    set(&obj, "inputText", &turn.input_text().iter().map(|t| JsValue::from_str(t)).collect::<Array>());
    set(&obj, "context", &JsValue::from_str(&turn.context));
    if let Some(guidance) = &turn.guidance {
        set(&obj, "guidance", &JsValue::from_str(guidance));
    }
    if let Some(schema) = &turn.output_schema {
        set(&obj, "outputSchema", &value_to_js(schema));
    }
    set(&obj, "toolCallsPerReply", &JsValue::from_f64(turn.tool_calls_per_reply as f64));
    if let Some(preset) = &turn.agent_preset {
        set(&obj, "agentPreset", &JsValue::from_str(preset));
    }
    if let Some(options) = &turn.agent_options {
        set(&obj, "agentOptions", &Object::freeze(&value_to_js(&options.to_value()).into()).into());
    }
    if let Some(budget) = &turn.budget {
        set(&obj, "budget", &value_to_js(&budget.to_value()));
    }
    let agent = agent_to_js(runtime, &turn.agent);
    make_turn(runtime, obj.into(), agent, turn.agent.incarnation() as f64, turn.steer.turn_id() as f64)
}

/// What a host's outcome or a run's result may hold: one event payload
/// (`eventPayloadBytes`), lone surrogates made U+FFFD (model text is not an id).
fn host_budget(runtime: u32) -> Budget {
    Budget::new(limits_of(runtime).event_payload_bytes, "eventPayloadBytes").lenient()
}

/// JS data a host answered, within its budget; `what` starts the sentence ("host.runTurn returned").
fn host_value(value: &JsValue, budget: Budget, what: &str) -> Result<Value> {
    value_within(value, budget).map_err(|e| match e.code {
        ErrorCode::LimitExceeded => e.error(&format!("{what} a value that")),
        _ => invalid(format!("{what} a value that is not JSON data (it{e})")),
    })
}

/// `{ stopReason?, messages?, text?, structured?, diagnostic?, usage? }`.
fn outcome_from_js(value: &JsValue, budget: Budget) -> Result<TurnOutcome> {
    if value.is_undefined() || value.is_null() {
        return Ok(TurnOutcome::default());
    }
    let v = host_value(value, budget, "host.runTurn returned")?;
    outcome_from_value(value, &v).map_err(|m| invalid(format!("host.runTurn returned {m}")))
}

/// The outcome's fields; `Err` completes "host.runTurn returned …".
fn outcome_from_value(value: &JsValue, v: &Value) -> std::result::Result<TurnOutcome, String> {
    if v.as_object().is_none() {
        return Err(format!("{}; expected an object {{stopReason, messages, text, ...}}", describe(value)));
    }
    let text = |key: &str| -> std::result::Result<Option<String>, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("{key} as {}; it must be a string", other.kind())),
        }
    };
    let messages = match v.get("messages") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(other) => return Err(format!("messages as {}; it must be an array", other.kind())),
    };
    Ok(TurnOutcome {
        stop_reason: text("stopReason")?
            .map_or(crate::core::result::StopReason::Completed, crate::core::result::StopReason::from),
        messages,
        text: text("text")?,
        structured: v.get("structured").filter(|s| **s != Value::Null).cloned(),
        diagnostic: text("diagnostic")?,
        usage: usage_of(v)?,
    })
}

// ---- providers -----------------------------------------------------------------

/// A JS provider, its descriptive fields read once at registration.
pub struct JsProvider {
    obj: JsValue,
    runtime: u32,
    name: String,
    caps: Capabilities,
    inherits: bool,
    route: Option<(String, String)>,
    manages_depth: bool,
    prepares: bool,
    starts: bool,
}

impl JsProvider {
    pub fn new(obj: JsValue, runtime: u32) -> Result<JsProvider> {
        let what = "provider";
        if !is_objectish(&obj) {
            return Err(invalid(format!("provider must be an object, not {}", describe(&obj))));
        }
        let name = get(&obj, "name", what)?;
        let name = match bounded_string(&name, 64, "providerNameBytes", true) {
            Ok(Some(n)) if !n.is_empty() => n,
            _ => {
                return Err(invalid(format!(
                    "provider.name must be a non-empty string of at most 64 bytes, not {}",
                    describe(&name)
                )))
            }
        };
        let caps_js = get(&obj, "capabilities", what)?;
        let flag = |key: &str| -> Result<bool> {
            if caps_js.is_undefined() || caps_js.is_null() {
                return Ok(false);
            }
            Ok(get(&caps_js, key, "provider.capabilities")?.is_truthy())
        };
        let caps = Capabilities {
            agent_options: flag("agentOptions")?,
            agent_preset: flag("agentPreset")?,
            output_schema: flag("outputSchema")?,
            depth_limit: flag("depthLimit")?,
        };
        let inherits = get(&obj, "inheritsParentContext", what)?.is_truthy();
        let route_js = get(&obj, "agentRouteDefaults", what)?;
        let route = if is_objectish(&route_js) {
            let p = optional_string(&route_js, "provider", "provider.agentRouteDefaults")?.unwrap_or_default();
            let m = optional_string(&route_js, "model", "provider.agentRouteDefaults")?.unwrap_or_default();
            Some((p, m))
        } else {
            None
        };
        let depth = get(&obj, "depth", what)?;
        let manages_depth = match depth.as_string().as_deref() {
            _ if depth.is_undefined() || depth.is_null() => false,
            Some("provider-managed") => true,
            _ => {
                return Err(invalid(format!(
                    "provider.depth must be \"provider-managed\" or absent (the tree's limit), not {}",
                    describe(&depth)
                )))
            }
        };
        let prepares = has_method(&obj, "prepareContinuable");
        let starts = has_method(&obj, "start");
        Ok(JsProvider { obj, runtime, name, caps, inherits, route, manages_depth, prepares, starts })
    }
}

impl Provider for JsProvider {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn capabilities(&self) -> Capabilities {
        self.caps
    }
    fn inherits_parent_context(&self) -> bool {
        self.inherits
    }
    fn agent_route_defaults(&self) -> Option<(String, String)> {
        self.route.clone()
    }
    fn manages_depth(&self) -> bool {
        self.manages_depth
    }
    fn prepares_continuable(&self) -> bool {
        self.prepares
    }
    fn starts_runs(&self) -> bool {
        self.starts
    }
    fn host_object(&self) -> Option<Rc<dyn std::any::Any>> {
        Some(Rc::new(self.obj.clone()))
    }

    fn prepare_continuable(
        &self,
        request: ContinuableCreateRequest,
    ) -> LocalBoxFuture<'static, Result<ContinuableCreateSpec>> {
        let req = Object::new();
        set(&req, "cwd", &JsValue::from_str(&request.cwd));
        set(&req, "sessionId", &JsValue::from_str(&request.session_id));
        set_own(&req, "parent", &agent_to_js(self.runtime, &request.parent));
        set(&req, "signal", &js_signal(&request.signal));
        let (obj, name, runtime) = (self.obj.clone(), self.name.clone(), self.runtime);
        Box::pin(async move {
            let value = settled(call_method(&obj, "prepareContinuable", &[req.into()])).await.map_err(|e| {
                from_thrown(
                    ErrorCode::ContinuationUnavailable,
                    format!("provider {name} prepareContinuable failed", name = Quoted(&name)),
                    e,
                )
            })?;
            if value.is_undefined() || value.is_null() {
                return Ok(ContinuableCreateSpec::default());
            }
            let seed = get(&value, "seed", "prepareContinuable result")?;
            if seed.is_undefined() || seed.is_null() {
                return Ok(ContinuableCreateSpec::default());
            }
            let seed =
                events_from_js(&seed, EventBudget { payload_bytes: host_budget(runtime).bytes }).map_err(|e| {
                    e.error_as(
                        ErrorCode::InvalidArgument,
                        &format!("provider {name} prepareContinuable returned a bad seed: seed", name = Quoted(&name)),
                    )
                })?;
            Ok(ContinuableCreateSpec { seed: Some(seed) })
        })
    }

    fn start(&self, request: StartRequest) -> LocalBoxFuture<'static, Result<Box<dyn Run>>> {
        let req = Object::new();
        set(&req, "cwd", &JsValue::from_str(&request.cwd));
        if let Some(p) = &request.agent_preset {
            set(&req, "agentPreset", &JsValue::from_str(p));
        }
        set(&req, "label", &JsValue::from_str(&request.label));
        set(&req, "prompt", &value_to_js(&request.prompt));
        set_own(&req, "parent", &agent_to_js(self.runtime, &request.parent));
        set(&req, "signal", &js_signal(&request.signal));
        if let Some(o) = &request.agent_options {
            set(&req, "agentOptions", &value_to_js(o));
        }
        if let Some(s) = &request.output_schema {
            set(&req, "outputSchema", &value_to_js(s));
        }
        if let Some(d) = request.max_depth {
            set(&req, "maxDepth", &JsValue::from_f64(d as f64));
        }
        set(&req, "emit", &super::handles::make_run_emitter(self.runtime, request.run_token));
        let (obj, name, runtime) = (self.obj.clone(), self.name.clone(), self.runtime);
        Box::pin(async move {
            let value = settled(call_method(&obj, "start", &[req.into()])).await.map_err(|e| {
                from_thrown(
                    ErrorCode::ContinuationUnavailable,
                    format!("provider {name} start failed", name = Quoted(&name)),
                    e,
                )
            })?;
            let run = JsRun::new(value, &name, host_budget(runtime))?;
            Ok(Box::new(run) as Box<dyn Run>)
        })
    }
}

/// A run a JS provider returned: `{ id, result, dispose() }`.
pub struct JsRun {
    obj: JsValue,
    id: String,
    result: RefCell<Option<Promise>>,
    provider: String,
    budget: Budget,
}

impl JsRun {
    fn new(obj: JsValue, provider: &str, budget: Budget) -> Result<JsRun> {
        let bad = |detail: String| {
            invalid(format!(
                "provider {provider} start returned a malformed run: {detail}",
                provider = Quoted(provider)
            ))
        };
        if !is_objectish(&obj) {
            return Err(bad(format!("{} instead of {{id, result, dispose}}", describe(&obj))));
        }
        let id = get(&obj, "id", "run")?;
        let id = match id_arg(&id, "id") {
            Ok(id) => id,
            Err(e) if e.code == ErrorCode::LimitExceeded => return Err(e),
            Err(_) => return Err(bad(format!("id is {}, not a non-empty string", describe(&id)))),
        };
        if !has_method(&obj, "dispose") {
            return Err(bad("it has no dispose() method".into()));
        }
        let result = get(&obj, "result", "run")?;
        // The registry may never await it (dispose first); keep rejections handled.
        let promise = quiet(&settle(&result));
        Ok(JsRun { obj, id, result: RefCell::new(Some(promise)), provider: provider.to_owned(), budget })
    }
}

impl Run for JsRun {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn result(&self) -> LocalBoxFuture<'static, Result<SubagentResult>> {
        let promise = self.result.borrow_mut().take();
        let (provider, budget) = (self.provider.clone(), self.budget);
        Box::pin(async move {
            let Some(promise) = promise else {
                return Err(invalid(format!(
                    "the result of a {provider} run was already taken",
                    provider = Quoted(&provider)
                )));
            };
            let value = JsFuture::from(promise).await.map_err(|e| {
                from_thrown(
                    ErrorCode::ContinuationUnavailable,
                    format!("a {provider} run failed", provider = Quoted(&provider)),
                    e,
                )
            })?;
            result_from_js(&value, budget, &provider)
        })
    }

    fn dispose(&self) -> LocalBoxFuture<'static, Result<()>> {
        let (obj, provider) = (self.obj.clone(), self.provider.clone());
        Box::pin(async move {
            settled(call_method(&obj, "dispose", &[])).await.map(|_| ()).map_err(|e| {
                from_thrown(
                    ErrorCode::ActivationTeardownFailed,
                    format!("disposing a {provider} run failed", provider = Quoted(&provider)),
                    e,
                )
            })
        })
    }
}

/// `{ output, stopReason, structured?, diagnostic? }`.
fn result_from_js(value: &JsValue, budget: Budget, provider: &str) -> Result<SubagentResult> {
    let v = host_value(value, budget, &format!("a {provider} run resolved with", provider = Quoted(provider)))?;
    result_from_value(value, &v)
        .map_err(|m| invalid(format!("a {provider} run resolved with {m}", provider = Quoted(provider))))
}

/// The result's fields; `Err` completes "a run resolved with …".
fn result_from_value(value: &JsValue, v: &Value) -> std::result::Result<SubagentResult, String> {
    if v.as_object().is_none() {
        return Err(format!("{}; expected {{output, stopReason}}", describe(value)));
    }
    let stop_reason = match v.get("stopReason") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err("no stopReason string".into()),
    };
    let output = match v.get("output") {
        None | Some(Value::Null) => Value::Array(Vec::new()),
        Some(o) => crate::core::result::normalize_content(o.clone()).ok_or("an output that is not content blocks")?,
    };
    let diagnostic = match v.get("diagnostic") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(crate::core::result::cut_diagnostic(s.clone())),
        Some(_) => return Err("a diagnostic that is not a string".into()),
    };
    Ok(SubagentResult {
        output,
        structured: v.get("structured").filter(|s| **s != Value::Null).cloned(),
        diagnostic,
        stop_reason: stop_reason.into(),
        usage: usage_of(v)?,
        totals: None,
    })
}

/// A turn outcome's or run result's `usage`, validated (nothing is recorded from bad usage).
fn usage_of(v: &Value) -> std::result::Result<Option<Usage>, String> {
    match v.get("usage") {
        None | Some(Value::Null) => Ok(None),
        Some(u) => Usage::from_host(u, "usage").map(Some).map_err(|e| format!("an invalid usage: {}", e.message)),
    }
}

// ---- clock, ids ----------------------------------------------------------

/// `options.now()` or `Date.now()`.
pub struct JsClock(pub Option<Function>);

impl Clock for JsClock {
    fn now(&self) -> u64 {
        let n = self.0.as_ref().and_then(|f| f.call0(&JsValue::UNDEFINED).ok()).and_then(|v| v.as_f64());
        let n = n.unwrap_or_else(js_sys::Date::now);
        if n.is_finite() && n >= 0.0 {
            n as u64
        } else {
            0
        }
    }
}

/// `options.newId(kind)` or a random UUID (created only inside calls: workerd
/// forbids randomness at module top level).
pub struct JsIds(pub Option<Function>);

impl IdSource for JsIds {
    fn new_id(&self, kind: IdKind) -> String {
        let kind = match kind {
            IdKind::Session => "session",
            IdKind::Message => "message",
        };
        let custom = self.0.as_ref().and_then(|f| f.call1(&JsValue::UNDEFINED, &JsValue::from_str(kind)).ok());
        match custom.and_then(|v| id_arg(&v, "newId()").ok()) {
            Some(id) => id,
            None => uuid::Uuid::new_v4().to_string(),
        }
    }
}

/// A flush listener: a JS function `(sessionId) => void | Promise<void>`.
pub fn flush_listener(f: Function) -> crate::runtime::FlushListener {
    Rc::new(move |session: &str| -> LocalBoxFuture<'static, Result<()>> {
        let outcome = f.call1(&JsValue::UNDEFINED, &JsValue::from_str(session));
        let session = session.to_owned();
        Box::pin(async move {
            settled(outcome).await.map(|_| ()).map_err(|e| {
                from_thrown(
                    ErrorCode::PersistenceUnavailable,
                    format!("a flush listener failed for {session}", session = Quoted(&session)),
                    e,
                )
            })
        })
    })
}

/// A trace context source: a JS function `(member) => { traceparent,
/// tracestate? } | undefined`. One that throws or answers something that is
/// not a W3C trace context gives the member none: tracing never stops a start.
pub fn trace_source(f: Function) -> crate::runtime::TraceSource {
    Rc::new(move |request: &crate::runtime::TraceRequest| {
        let obj = Object::new();
        set(&obj, "sessionId", &JsValue::from_str(request.session_id));
        set(&obj, "rootSessionId", &JsValue::from_str(request.root_id));
        if let Some(parent) = request.parent_id {
            set(&obj, "parentSessionId", &JsValue::from_str(parent));
        }
        set(&obj, "name", &JsValue::from_str(request.name));
        if request.parent_id.is_some() {
            set(&obj, "label", &JsValue::from_str(request.label));
            set(&obj, "provider", &JsValue::from_str(request.provider));
        }
        if let Some(call) = request.tool_call {
            set(&obj, "toolCallId", &JsValue::from_f64(call as f64));
        }
        let answer = f.call1(&JsValue::UNDEFINED, &obj).ok()?;
        let text = |key: &str| js_sys::Reflect::get(&answer, &JsValue::from_str(key)).ok().and_then(|v| v.as_string());
        if !answer.is_object() {
            return None;
        }
        let state = text("tracestate");
        crate::core::trace::TraceContext::new(&text("traceparent")?, state.as_deref()).ok()
    })
}
