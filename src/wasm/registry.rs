//! The bridge's registry of live runtimes and the one dispatcher every
//! JS-side callable (handles, activations, turns, tools) routes through:
//! runtimes by id, the hosts' holds from `reopen`, and the operations those
//! callables name.

use super::convert::{set, value_within, Budget};
use super::error::{invalid, to_js};
use super::future_to_promise;
use super::tools::{call_tool, tools_for};
use super::values::{event_to_js, message_to_js};
use crate::core::delta::{Part, MAX_PART_BYTES};
use crate::core::error::{Quoted, Result};
use crate::core::hash::HashMap;
use crate::core::limits::Limits;
use crate::runtime::stream::EventStream;
use crate::runtime::{Held, Runtime, WeakRuntime};
use js_sys::{Array, Object};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

type JsResult<T> = std::result::Result<T, JsValue>;

thread_local! {
    pub(super) static RUNTIMES: RefCell<HashMap<u32, WeakRuntime>> = RefCell::new(HashMap::default());
    pub(super) static NEXT_RUNTIME: Cell<u32> = const { Cell::new(1) };
    static DISPATCHER: Cell<bool> = const { Cell::new(false) };
    /// Host holds from `reopen`, until their `release()`: (runtime, token) -> hold.
    pub(super) static HOLDS: RefCell<HashMap<(u32, u64), Held>> = RefCell::new(HashMap::default());
    pub(super) static NEXT_HOLD: Cell<u64> = const { Cell::new(1) };
    /// Event streams from `events()`, until closed: (runtime, id) -> stream.
    pub(super) static STREAMS: RefCell<HashMap<(u32, u64), Rc<EventStream>>> = RefCell::new(HashMap::default());
}

pub(super) fn runtime_by_id(id: u32) -> Result<Runtime> {
    RUNTIMES.with(|r| r.borrow().get(&id).and_then(WeakRuntime::upgrade)).ok_or_else(|| {
        crate::err!(
            Unauthorized,
            "the SubagentRuntime this handle or tool belongs to was freed; keep the runtime referenced while its handles and tools are in use"
        )
    })
}

/// The limits of a runtime (the defaults once it is freed).
pub(super) fn limits_of(id: u32) -> Limits {
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

pub(super) fn dispatch(op: &str, args: &Array) -> Result<JsValue> {
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
        "emit" => {
            let (id, inc) = key(1);
            let turn = arg(3).as_f64().unwrap_or(-1.0) as u64;
            // Bounded before it is copied: a part's text plus its framing.
            let budget = Budget::new(MAX_PART_BYTES + 64, "partBytes").lenient();
            let part = value_within(&arg(4), budget).map_err(|e| e.error("the part"))?;
            let part = Part::from_value(&part)?;
            let emitted = rt.handle(&id, inc).is_some_and(|a| rt.emit_part(&a, turn, part));
            Ok(JsValue::from_bool(emitted))
        }
        "setCwd" => {
            let (id, inc) = key(1);
            let turn = arg(3).as_f64().unwrap_or(-1.0) as u64;
            let path = super::convert::cwd_arg(&arg(4), "path")?;
            let agent = rt.handle(&id, inc);
            Ok(future_to_promise(async move {
                let Some(agent) = agent else {
                    return Err(to_js(crate::err!(ActivationClosing, "this turn's member is no longer live")));
                };
                rt.set_cwd(&agent, turn, &path).await.map(|cwd| JsValue::from_str(&cwd)).map_err(to_js)
            })
            .into())
        }
        "readLog" => {
            // `turn.readLog({ types?, signal? })`: the member's own log, for its host's history.
            let (id, inc) = key(1);
            let (types, link) = super::args::read_log_options(&arg(3))?;
            let agent = rt.handle(&id, inc);
            Ok(future_to_promise(async move {
                let Some(agent) = agent else {
                    return Err(to_js(crate::err!(ActivationClosing, "this turn's member is no longer live")));
                };
                let events = rt.read_own_log(&agent, types, link.signal()).await.map_err(|e| link.error(e))?;
                Ok(super::convert::events_to_js(&events))
            })
            .into())
        }
        "emitRun" => {
            let token = arg(1).as_f64().unwrap_or(-1.0) as u64;
            // Bounded before it is copied: a part's text plus its framing (a tool call's input too).
            let budget = Budget::new(MAX_PART_BYTES + 64, "partBytes").lenient();
            let part = value_within(&arg(2), budget).map_err(|e| e.error("the part"))?;
            let part = crate::core::delta::RunPart::from_value(&part)?;
            Ok(JsValue::from_bool(rt.emit_run(token, part)))
        }
        "streamNext" => {
            let id = arg(1).as_f64().unwrap_or(0.0) as u64;
            let stream = STREAMS.with(|s| s.borrow().get(&(rt_id, id)).cloned());
            Ok(future_to_promise(async move {
                let event = match stream {
                    Some(stream) => stream.next().await.map_err(super::error::to_js)?,
                    None => None,
                };
                let item = Object::new();
                match event {
                    Some(event) => {
                        let (kind, value) = event_to_js(&event);
                        let entry = Object::new();
                        set(&entry, "type", &JsValue::from_str(kind));
                        set(&entry, "event", &value);
                        set(&item, "value", &entry);
                        set(&item, "done", &JsValue::FALSE);
                    }
                    None => {
                        set(&item, "value", &JsValue::UNDEFINED);
                        set(&item, "done", &JsValue::TRUE);
                    }
                }
                Ok(item.into())
            })
            .into())
        }
        "streamClose" => {
            let id = arg(1).as_f64().unwrap_or(0.0) as u64;
            if let Some(stream) = STREAMS.with(|s| s.borrow_mut().remove(&(rt_id, id))) {
                stream.close();
            }
            Ok(JsValue::UNDEFINED)
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
        "toolsFor" => tools_for(&rt, rt_id, &arg(1), &arg(2)),
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
