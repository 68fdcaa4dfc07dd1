//! The runtime's values as JS objects: messages, results, listing rows with
//! their activity, lifecycle events and providers.

use super::convert::{set, value_to_js};
use crate::core::result::SubagentResult;
use crate::runtime::ports::Provider;
use crate::runtime::stream::event_type;
use crate::runtime::{source_value, InboxMessage, Live, LiveRow, RuntimeEvent, Scheduling};
use js_sys::Object;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// `{id, source, content, delivery, text}` for a host.
pub(super) fn message_to_js(m: &InboxMessage) -> JsValue {
    let obj = Object::new();
    set(&obj, "id", &JsValue::from_str(&m.id));
    set(&obj, "source", &value_to_js(&source_value(&m.source)));
    set(&obj, "content", &value_to_js(&m.content));
    if let Some(id) = &m.meta.request_id {
        set(&obj, "requestId", &JsValue::from_str(id));
    }
    if let Some(zone) = &m.meta.time_zone {
        set(&obj, "timeZone", &JsValue::from_str(zone));
    }
    set(&obj, "delivery", &(if m.scheduling == Scheduling::Steer { "steer" } else { "queue" }).into());
    set(&obj, "text", &JsValue::from_str(&crate::runtime::text::render_input(m)));
    obj.into()
}

pub(super) fn result_to_js(r: &SubagentResult) -> JsValue {
    let obj = Object::new();
    set(&obj, "output", &value_to_js(&r.output));
    set(&obj, "stopReason", &JsValue::from_str(r.stop_reason.as_str()));
    if let Some(s) = &r.structured {
        set(&obj, "structured", &value_to_js(s));
    }
    if let Some(d) = &r.diagnostic {
        set(&obj, "diagnostic", &JsValue::from_str(d));
    }
    if let Some(usage) = &r.usage {
        set(&obj, "usage", &value_to_js(&usage.to_value()));
    }
    if let Some(totals) = &r.totals {
        set(&obj, "totals", &value_to_js(&totals.to_value()));
    }
    obj.into()
}

pub(super) fn live_row_to_js(rows: &mut super::convert::RowsToJs, row: &LiveRow) -> JsValue {
    let obj = rows.row(&row.row);
    set_live(obj.unchecked_ref(), &row.live);
    obj
}

/// `{ id, activity, state?, usage, budget?, lastTurn? }`: the root of `listTree`.
pub(super) fn live_root_to_js(id: &str, live: &Live) -> JsValue {
    let obj = Object::new();
    set(&obj, "id", &JsValue::from_str(id));
    set_live(&obj, live);
    obj.into()
}

fn set_live(obj: &Object, live: &Live) {
    set(obj, "activity", &JsValue::from_str(if live.running { "running" } else { "inactive" }));
    if let Some(rest) = live.rest {
        let state = if rest == crate::runtime::Rest::Parked { "parked" } else { "idle" };
        set(obj, "state", &JsValue::from_str(state));
    }
    set(obj, "usage", &value_to_js(&live.usage.to_value()));
    if let Some(budget) = &live.budget {
        set(obj, "budget", &value_to_js(&budget.to_value()));
    }
    super::convert::set_last_turn(obj, &live.turns);
}

/// An event as its `on()` listeners receive it, with its type's name.
pub(super) fn event_to_js(event: &RuntimeEvent) -> (&'static str, JsValue) {
    (event_type(event), event_value(event))
}

fn event_value(event: &RuntimeEvent) -> JsValue {
    let info_obj = |i: &crate::runtime::RunInfo| {
        let obj = Object::new();
        set(&obj, "provider", &JsValue::from_str(&i.provider));
        set(&obj, "id", &JsValue::from_str(&i.id));
        set(&obj, "parentSessionId", &JsValue::from_str(&i.parent_session_id));
        set(&obj, "rootSessionId", &JsValue::from_str(&i.root_session_id));
        set(&obj, "name", &JsValue::from_str(&i.name));
        set(&obj, "label", &JsValue::from_str(&i.label));
        set(&obj, "mode", &JsValue::from_str(i.mode.as_str()));
        if let Some(budget) = &i.budget {
            set(&obj, "budget", &value_to_js(&budget.to_value()));
        }
        if let Some(call) = i.tool_call {
            set(&obj, "toolCallId", &JsValue::from_f64(call as f64));
        }
        if let Some(trace) = &i.trace {
            set(&obj, "trace", &value_to_js(&trace.to_payload()));
        }
        obj
    };
    match event {
        RuntimeEvent::Start(i) => info_obj(i).into(),
        RuntimeEvent::End(e) => {
            let obj = info_obj(&e.info);
            set(&obj, "stopReason", &JsValue::from_str(e.stop_reason.as_str()));
            if let Some(err) = &e.error {
                set(&obj, "error", &JsValue::from_str(err));
            }
            obj.into()
        }
        RuntimeEvent::Catalog { root_id, parent_id, entry } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "parentSessionId", &JsValue::from_str(parent_id));
            set(&obj, "entry", &super::convert::entry_to_js(entry));
            obj.into()
        }
        RuntimeEvent::Message { root_id, session_id, name, message_id, kind, from, content } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "messageId", &JsValue::from_str(message_id));
            set(&obj, "kind", &JsValue::from_str(kind));
            if let Some(from) = from {
                set(&obj, "from", &JsValue::from_str(from));
            }
            if let Some(content) = content {
                set(&obj, "content", &value_to_js(content));
            }
            obj.into()
        }
        RuntimeEvent::Turn { root_id, session_id, name, stop_reason, output, parked, usage, trace } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "phase", &JsValue::from_str(if stop_reason.is_some() { "end" } else { "start" }));
            if let Some(reason) = stop_reason {
                set(&obj, "stopReason", &JsValue::from_str(reason.as_str()));
            }
            if let Some(text) = output {
                set(&obj, "output", &JsValue::from_str(text));
            }
            if *parked {
                set(&obj, "parked", &JsValue::TRUE);
            }
            if let Some(usage) = usage {
                set(&obj, "usage", &value_to_js(&usage.to_value()));
            }
            if let Some(trace) = trace {
                set(&obj, "trace", &value_to_js(&trace.to_payload()));
            }
            obj.into()
        }
        RuntimeEvent::Delta { root_id, session_id, name, turn_id, part } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "turnId", &JsValue::from_f64(*turn_id as f64));
            set(&obj, "part", &value_to_js(&part.to_value()));
            obj.into()
        }
        RuntimeEvent::Tool { root_id, session_id, name, call_id, tool, input, end } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "callId", &JsValue::from_f64(*call_id as f64));
            set(&obj, "tool", &JsValue::from_str(tool));
            set(&obj, "phase", &JsValue::from_str(if end.is_some() { "end" } else { "start" }));
            if let Some(input) = input {
                set(&obj, "input", &value_to_js(input));
            }
            if let Some(end) = end {
                set(&obj, "isError", &JsValue::from_bool(end.is_error));
                if let Some(code) = end.code {
                    set(&obj, "errorCode", &JsValue::from_str(code.as_str()));
                }
                set(&obj, "output", &JsValue::from_str(&end.content));
                if let Some((id, child_name)) = &end.child {
                    set(&obj, "childId", &JsValue::from_str(id));
                    set(&obj, "childName", &JsValue::from_str(child_name));
                }
            }
            obj.into()
        }
        RuntimeEvent::ProviderAdded(provider) => provider_to_js(&provider.0),
        RuntimeEvent::ProviderRemoved(name) => JsValue::from_str(name),
        RuntimeEvent::FlushFailed { root_id, session_id, name, error } => {
            let obj = Object::new();
            set(&obj, "rootSessionId", &JsValue::from_str(root_id));
            set(&obj, "sessionId", &JsValue::from_str(session_id));
            set(&obj, "name", &JsValue::from_str(name));
            set(&obj, "error", &JsValue::from_str(error));
            obj.into()
        }
        RuntimeEvent::Gap { missed } => {
            let obj = Object::new();
            set(&obj, "missed", &JsValue::from_f64(*missed as f64));
            obj.into()
        }
    }
}

/// A provider as JS sees it: the registered object, or a frozen description of a built-in one.
pub(super) fn provider_to_js(provider: &Rc<dyn Provider>) -> JsValue {
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
