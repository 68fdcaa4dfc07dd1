//! The exported `SubagentRuntime` class: the core runtime over JS ports.
//!
//! Agent handles, activations, turns and tools are built by `js/runtime.js`;
//! their callables route through one dispatcher closure installed once, and
//! handles are keys `(runtime, Session id, incarnation)` kept in a private
//! WeakMap there, so a plain object with the same fields is no handle at all.

use super::args::{
    budget_arg, content_arg, limits_arg, link_signal_or_options, opt_budget, opt_cwd, opt_id, opt_json, opt_string,
    reject,
};
use super::convert::{
    bounded_string, count_arg, describe, get, id_arg, is_objectish, known_keys, options_arg, set, string_arg,
};
use super::error::{invalid, to_js};
use super::future_to_promise;
use super::handles::{agent_from_js, agent_to_js, make_activation, make_disposer, quiet};
use super::native::{native_store, NativeStore};
use super::ports::{flush_listener, JsClock, JsHost, JsIds, JsProvider};
use super::registry::{ensure_dispatcher, HOLDS, NEXT_HOLD, NEXT_RUNTIME, RUNTIMES, STREAMS};
use super::signal::Link;
use super::store::JsStore;
use super::tools::tools_for;
use super::values::{event_to_js, live_root_to_js, live_row_to_js, provider_to_js, result_to_js};
use crate::core::agent_options::AgentOptions;
use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::json::Value;
use crate::core::limits::MAX_STORED_EVENT_BYTES;
use crate::core::limits::MAX_TREE_DEPTH;
use crate::core::store::Store;
use crate::runtime::stream::{BUFFER_BYTES_RANGE, DEFAULT_BUFFER_BYTES, EVENT_TYPES};
use crate::runtime::{
    ActivationSpec, Agent, Delivery, InterruptAuthority, MessageMeta, Recovery, RootSettings, Runtime, RuntimeEvent,
    RuntimeOptions, Scheduling,
};
use js_sys::{Array, Function, Object, Promise};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

type JsResult<T> = std::result::Result<T, JsValue>;

/// A live subagent runtime over a JS store and agent host.
#[wasm_bindgen(js_name = SubagentRuntime)]
pub struct JsRuntime {
    id: u32,
    rt: Runtime,
}

impl Drop for JsRuntime {
    fn drop(&mut self) {
        RUNTIMES.with(|r| r.borrow_mut().remove(&self.id));
        // Its event streams end: a waiting `next()` answers done.
        let streams: Vec<_> = STREAMS.with(|s| {
            let mut s = s.borrow_mut();
            let ids: Vec<(u32, u64)> = s.keys().filter(|(rt, _)| *rt == self.id).copied().collect();
            ids.iter().filter_map(|k| s.remove(k)).collect()
        });
        for stream in streams {
            stream.close();
        }
    }
}

/// `new SubagentRuntime(options)`'s keys (`RuntimeInit`).
const RUNTIME_OPTIONS: &[&str] = &[
    "store",
    "host",
    "maxDepth",
    "capacity",
    "defaultCwd",
    "builtinProviders",
    "now",
    "newId",
    "recovery",
    "limits",
    "confineCwd",
    "presets",
];

/// `startActivation(spec)`'s keys (`ActivationSpec`).
const ACTIVATION_SPEC: &[&str] = &[
    "provider",
    "label",
    "prompt",
    "parent",
    "delivery",
    "name",
    "childId",
    "signal",
    "cwd",
    "agentPreset",
    "agentOptions",
    "outputSchema",
    "maxDepth",
    "budget",
];

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
        known_keys(options, RUNTIME_OPTIONS, what)?;
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
        // Reads honour what was durably written (by any runtime, under any limits), up to the hard cap.
        let native = native_store(&store_js, "options.store", MAX_STORED_EVENT_BYTES)?;
        let flush = native.as_ref().map(NativeStore::flush_listener);
        let store: Rc<dyn Store> = match native {
            Some(native) => Rc::new(native),
            None => Rc::new(JsStore::writable(&store_js, "options.store")?.with_payload_limit(MAX_STORED_EVENT_BYTES)),
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
                        crate::core::name::quote_truncated(other, 80)
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
            presets: match opt_json(options, "presets", what)? {
                Some(v) => {
                    crate::runtime::presets::from_value(&v, "options.presets", &crate::runtime::tools::check_tool_name)?
                }
                None => Default::default(),
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
            let Some(options) = options else { return Ok((None, None, RootSettings::default())) };
            known_keys(&options, &["sessionId", "cwd", "budget", "agentOptions"], "options")?;
            let id = get(&options, "sessionId", "options")?;
            let id = if id.is_undefined() || id.is_null() { None } else { Some(id_arg(&id, "options.sessionId")?) };
            let agent_options = opt_json(&options, "agentOptions", "options")?
                .map(|v| AgentOptions::from_value(&v, "options.agentOptions"))
                .transpose()?;
            let settings = RootSettings { budget: opt_budget(&options, "budget", "options")?, agent_options };
            Ok((id, opt_cwd(&options, "cwd", "options")?, settings))
        })();
        let (session, cwd, settings) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let (rt, id) = (self.rt.clone(), self.id);
        future_to_promise(async move {
            let root = rt.open_root_with(session, cwd, settings).await.map_err(to_js)?;
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
            let budget = activation.budget.map_or(JsValue::UNDEFINED, |b| super::convert::value_to_js(&b.to_value()));
            Ok(make_activation(
                id,
                &activation.child_id,
                activation.incarnation() as f64,
                &activation.name,
                activation.message_id.clone(),
                &result,
                &disposed,
                &agent,
                &budget,
            ))
        })
    }

    fn activation_spec(&self, spec: &JsValue) -> Result<(ActivationSpec, Link)> {
        let what = "spec";
        if !is_objectish(spec) {
            return Err(invalid(format!("startActivation needs a spec object, not {}", describe(spec))));
        }
        known_keys(spec, ACTIVATION_SPEC, what)?;
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
                    crate::core::name::quote_truncated(other, 80)
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
        s.budget = opt_budget(spec, "budget", what)?;
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
        let (root, target, content, scheduling, meta, link) = match self.prompt_args(&root, &target, &content, options)
        {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let id = rt
                .prompt_meta(&root, &target, content, scheduling, meta, link.signal())
                .await
                .map_err(|e| link.error(e))?;
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
        let (root, target, content, scheduling, meta, link) = match self.prompt_args(&root, &target, &content, options)
        {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let (id, answer) = rt
                .ask_meta(&root, &target, content, scheduling, meta, link.signal())
                .await
                .map_err(|e| link.error(e))?;
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
    ) -> Result<(Agent, String, Value, Scheduling, MessageMeta, Link)> {
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
                        crate::core::name::quote_truncated(other, 80)
                    )))
                }
            };
        let text = |key: &str| -> Result<Option<String>> {
            options.as_ref().map(|o| opt_string(o, key, "options")).transpose().map(Option::flatten)
        };
        let request_id = text("requestId")?;
        if let Some(id) = &request_id {
            if id.is_empty() || id.len() > 256 {
                return Err(invalid(format!("options.requestId must be 1-256 bytes, not {}", id.len())));
            }
        }
        let time_zone = text("timeZone")?;
        if let Some(zone) = &time_zone {
            check_time_zone(zone)?;
        }
        let link = Link::from_options(options.as_ref(), "options", true)?;
        Ok((root, target, content, scheduling, MessageMeta { request_id, time_zone }, link))
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

    /// Whether a member of the root's tree is resident now (information only:
    /// no handle, no authority; a member of another tree is never reported).
    #[wasm_bindgen(js_name = isResident)]
    pub fn is_resident(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")] session_id: JsValue,
    ) -> JsResult<bool> {
        let root = self.agent(&root, "root").map_err(to_js)?;
        let id = id_arg(&session_id, "sessionId").map_err(to_js)?;
        self.rt.is_resident_in(&root, &id).map_err(to_js)
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

    /// The tree of `rootSessionId`: its root and every member below it in
    /// pre-order, each with its live `activity`, usage, budget and `lastTurn`.
    #[wasm_bindgen(js_name = listTree, unchecked_return_type = "Promise<LiveTree>")]
    pub fn list_tree(
        &self,
        #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        self.listing(root_session_id, options, true)
    }

    /// The tree below `rootSessionId` in pre-order, each row with its live `activity`.
    #[wasm_bindgen(js_name = listDescendants, unchecked_return_type = "Promise<LiveRow[]>")]
    pub fn list_descendants(
        &self,
        #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        self.listing(root_session_id, options, false)
    }

    /// The runtime's events from now on as an async iterator of `{ type, event }`,
    /// of one tree (`root`, a Session id) and of some `types`; deltas coalesce
    /// while the consumer lags (see `runtime::stream`); `break`, `return()` or
    /// the signal unsubscribes. Every stream reads one journal through its own
    /// cursor (one copy of an event, bounded by the largest `bufferBytes`); a
    /// reader that lets more than its `bufferBytes` wait misses the oldest,
    /// told by a `subagent/gap` item `{ missed }`.
    #[wasm_bindgen(unchecked_return_type = "AsyncIterableIterator<RuntimeEventItem>")]
    pub fn events(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "EventsOptions")] options: Option<JsValue>,
    ) -> JsResult<JsValue> {
        let what = "options";
        let options = options.map(|o| options_arg(&o, what)).transpose().map_err(to_js)?.flatten();
        let parsed = (|| -> Result<_> {
            let Some(o) = &options else { return Ok((None, None, JsValue::UNDEFINED, DEFAULT_BUFFER_BYTES)) };
            let root = opt_id(o, "root", what)?;
            let buffer = match get(o, "bufferBytes", what)? {
                b if b.is_undefined() => DEFAULT_BUFFER_BYTES,
                b => {
                    let n = count_arg(&b, "options.bufferBytes")?;
                    let (lo, hi) = BUFFER_BYTES_RANGE;
                    if n < lo as u64 || n > hi as u64 {
                        return Err(invalid(format!("options.bufferBytes must be from {lo} to {hi}, not {n}")));
                    }
                    n as usize
                }
            };
            let types_js = get(o, "types", what)?;
            let types = if types_js.is_undefined() || types_js.is_null() {
                None
            } else {
                let list = super::convert::array_arg(&types_js, "options.types")?;
                let mut types = Vec::new();
                for t in list.iter() {
                    let t = string_arg(&t, "options.types[]")?;
                    if !EVENT_TYPES.contains(&t.as_str()) {
                        return Err(invalid(format!(
                            "options.types[] must be one of {}, not {}",
                            EVENT_TYPES.join(", "),
                            crate::core::name::quote_truncated(&t, 40)
                        )));
                    }
                    types.push(t);
                }
                Some(types)
            };
            // Validated here; the iterator listens for its abort.
            Link::from_options(Some(o), what, true)?;
            Ok((root, types, get(o, "signal", what)?, buffer))
        })();
        let (root, types, signal, buffer) = parsed.map_err(to_js)?;
        let id = NEXT_HOLD.with(|n| n.replace(n.get() + 1));
        let stream = std::rc::Rc::new(self.rt.events(root, types, buffer));
        STREAMS.with(|s| s.borrow_mut().insert((self.id, id), stream));
        Ok(super::handles::make_event_stream(self.id, id, &signal))
    }

    /// A session's log (`{ types?, signal? }`), read through the runtime's
    /// store; `null` for a session it does not hold. Read-only: what an
    /// adapter replays (ACP's `session/load`) without being handed the store.
    #[wasm_bindgen(js_name = readLog, unchecked_return_type = "Promise<SessionEvent[] | null>")]
    pub fn read_log(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] session_id: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadLogOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            let id = id_arg(&session_id, "sessionId")?;
            let (types, link) = super::args::read_log_options(&options.unwrap_or(JsValue::UNDEFINED))?;
            Ok((id, types, link))
        })();
        let (id, types, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let events = rt.read_log(&id, types, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(events.map_or(JsValue::NULL, |e| super::convert::events_to_js(&e)))
        })
    }

    /// What `target` (default the root) and its subtree spent: `{ own, subtree, complete }`.
    #[wasm_bindgen(unchecked_return_type = "Promise<UsageRollup>")]
    pub fn usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "string")] target: Option<JsValue>,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            let target = match target.filter(|t| !t.is_undefined() && !t.is_null()) {
                Some(t) => Some(string_arg(&t, "target")?),
                None => None,
            };
            let options = options.map(|o| options_arg(&o, "options")).transpose()?.flatten();
            Ok((self.agent(&root, "root")?, target, Link::from_options(options.as_ref(), "options", true)?))
        })();
        let (root, target, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let rollup = rt.usage(&root, target.as_deref(), link.signal()).await.map_err(|e| link.error(e))?;
            Ok(super::convert::value_to_js(&rollup.to_value()))
        })
    }

    /// Sets (or, with `null`, clears) the budget of `target` (`lead`, a full
    /// name or a Session id) under the root's authority: clamped to what its
    /// creators' budgets have left, durable in the root's log. Resolves with
    /// `{ set, remaining }`, or `null` once cleared; parked input runs again
    /// where a raised budget has room.
    #[wasm_bindgen(js_name = setBudget, unchecked_return_type = "Promise<BudgetState | null>")]
    pub fn set_budget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] root: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] target: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Budget | null")] budget: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "CallOptions")] options: Option<JsValue>,
    ) -> Promise {
        let parsed = (|| -> Result<_> {
            let root = self.agent(&root, "root")?;
            let target = string_arg(&target, "target")?;
            let budget = budget_arg(&budget, "budget")?;
            let options = options.map(|o| options_arg(&o, "options")).transpose()?.flatten();
            Ok((root, target, budget, Link::from_options(options.as_ref(), "options", true)?))
        })();
        let (root, target, budget, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let state = rt.set_budget(&root, &target, budget, link.signal()).await.map_err(|e| link.error(e))?;
            Ok(state.map_or(JsValue::NULL, |s| super::convert::value_to_js(&s.to_value())))
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
                    crate::core::name::quote_truncated(&kind, 40),
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
                // Converted only for the listeners of its type.
                if crate::runtime::stream::event_type(event) == kind {
                    let (_, payload) = event_to_js(event);
                    // A throwing listener must not break the runtime.
                    let _ = listener.call1(&JsValue::UNDEFINED, &payload);
                }
            }),
        );
        Ok(make_disposer("unsubscribe", self.id, token as f64))
    }

    /// Where members created from now on get their trace context (a tracing
    /// adapter such as `subagent-tree/otel` sets it): called with the member
    /// being created, its answer is kept in the member's log; `null` removes it.
    #[wasm_bindgen(js_name = setTraceContextSource)]
    pub fn set_trace_context_source(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TraceContextSource | null")] source: JsValue,
    ) -> JsResult<()> {
        if source.is_null() || source.is_undefined() {
            self.rt.set_trace_source(None);
            return Ok(());
        }
        let f: Function = source.dyn_into().map_err(|v| {
            to_js(invalid(format!("a trace context source must be a function or null, not {}", describe(&v))))
        })?;
        self.rt.set_trace_source(Some(super::ports::trace_source(f)));
        Ok(())
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
    pub fn tools_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Agent")] agent: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ToolChoice")] options: Option<JsValue>,
    ) -> JsResult<JsValue> {
        tools_for(&self.rt, self.id, &agent, &options.unwrap_or(JsValue::UNDEFINED)).map_err(to_js)
    }

    /// Names of the registered providers, in registration order.
    #[wasm_bindgen(js_name = providerNames, unchecked_return_type = "string[]")]
    pub fn provider_names(&self) -> Array {
        self.rt.provider_names().iter().map(|n| JsValue::from_str(n)).collect()
    }
}

impl JsRuntime {
    /// `listTree` (`whole`: `{ root, rows }`) and `listDescendants` (the rows alone): one listing.
    fn listing(&self, root_session_id: JsValue, options: Option<JsValue>, whole: bool) -> Promise {
        let parsed = (|| -> Result<_> {
            Ok((id_arg(&root_session_id, "rootSessionId")?, link_signal_or_options(options, "options")?))
        })();
        let (root, link) = match parsed {
            Ok(p) => p,
            Err(e) => return reject(e),
        };
        let rt = self.rt.clone();
        future_to_promise(async move {
            let (live, rows) = rt.list_tree(&root, link.signal()).await.map_err(|e| link.error(e))?;
            let mut out = super::convert::RowsToJs::default();
            let rows: Array = rows.iter().map(|r| live_row_to_js(&mut out, r)).collect();
            if !whole {
                return Ok(rows.into());
            }
            let tree = Object::new();
            set(&tree, "root", &live_root_to_js(&root, &live));
            set(&tree, "rows", &rows);
            Ok(tree.into())
        })
    }
}

/// `INVALID_ARGUMENT` unless `zone` is an IANA time zone the host knows (as
/// `Intl.DateTimeFormat` does: `Europe/Paris`, `UTC`); the check is the JS
/// environment's own tz data, asked without a throw reaching the wasm.
fn check_time_zone(zone: &str) -> Result<()> {
    let bad = || {
        invalid(format!("options.timeZone {} is not an IANA time zone", crate::core::name::quote_truncated(zone, 64)))
    };
    if zone.is_empty() || zone.len() > 64 {
        return Err(bad());
    }
    let intl = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("Intl")).map_err(|_| bad())?;
    let ctor = js_sys::Reflect::get(&intl, &JsValue::from_str("DateTimeFormat"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(bad)?;
    let options = Object::new();
    set(&options, "timeZone", &JsValue::from_str(zone));
    let args = Array::of2(&JsValue::from_str("en-US"), &options);
    js_sys::Reflect::construct(&ctor, &args).map(|_| ()).map_err(|_| bad())
}
