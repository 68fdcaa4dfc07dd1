//! A member's model-facing tools as JS objects: their specs, and a call that
//! always resolves to a tool result (bad input, options or handles included).

use super::args::link_signal_or_options;
use super::convert::{option, options_arg, set, string_arg, strings_arg, value_to_js, value_within, Budget};
use super::future_to_promise;
use super::handles::{agent_from_js, make_tools};
use crate::core::error::{ErrorCode, Result};
use crate::runtime::tools::ToolChoice;
use crate::runtime::Runtime;
use js_sys::{Array, Object, Promise};
use wasm_bindgen::prelude::*;

/// `{ only?, except? }`: tool names to keep, then to leave out.
fn choice_arg(options: &JsValue) -> Result<ToolChoice> {
    let options = options_arg(options, "options")?;
    let names = |key: &str| -> Result<Option<Vec<String>>> {
        option(options.as_ref(), key, "options")?.map(|v| strings_arg(&v, &format!("options.{key}"))).transpose()
    };
    Ok(ToolChoice { only: names("only")?, except: names("except")?.unwrap_or_default() })
}

pub(super) fn tools_for(rt: &Runtime, rt_id: u32, agent_js: &JsValue, options: &JsValue) -> Result<JsValue> {
    let agent = agent_from_js(rt, rt_id, agent_js, "agent", ErrorCode::Unauthorized)?;
    let choice = choice_arg(options)?;
    let tools = rt.tools_for(&agent)?.select(&choice)?;
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

pub(super) fn call_tool(
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
            Err(e) => {
                crate::runtime::tools::ToolResult { content: format!("the input{e}"), is_error: true, structured: None }
            }
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
