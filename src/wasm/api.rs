//! The exported functions (issue 2's JS surface). Each validates its
//! arguments into core types, calls the core, and maps the result back;
//! no rule lives here.

use super::convert::{
    agent_ref_to_js, count_arg, entry_to_js, events_from_js, id_arg, option, options_arg, string_arg, strings_arg,
    value_from_js,
};
use super::error::{invalid, to_js};
use super::signal::Link;
use super::store::JsStore;
use crate::core::catalog;
use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::name::{self, AgentRef};
use js_sys::{Array, JsString, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
#[cfg(feature = "runtime")]
use {super::future_to_promise, crate::core::listing, crate::core::store::Store};

type JsResult<T> = std::result::Result<T, JsValue>;

fn throw<T>(outcome: Result<T>) -> JsResult<T> {
    outcome.map_err(to_js)
}

/// Whether `text` is a valid agent name: 1-32 of `a-z0-9-`, starting with a
/// letter, and not `lead`. Anything that is not a string is not a name.
#[wasm_bindgen(js_name = isValidName)]
pub fn is_valid_name(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> bool {
    let Some(s) = text.dyn_ref::<JsString>().filter(|_| text.is_string()) else { return false };
    // Names are ASCII, so a longer string is invalid without copying it.
    if s.length() as usize > name::MAX_NAME_LEN {
        return false;
    }
    name::is_valid_name(&String::from(s))
}

/// Returns `text` when it is a valid agent name; throws `INVALID_NAME` otherwise.
#[wasm_bindgen(js_name = validateName, unchecked_return_type = "string")]
pub fn validate_name(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> JsResult<JsValue> {
    throw((|| {
        if !text.is_string() {
            return Err(invalid(format!("agent name must be a string, not {}", super::convert::describe(&text))));
        }
        let s: &JsString = text.unchecked_ref();
        let len = s.length();
        if len as usize > 64 {
            // Never copy a huge string just to reject it.
            let head: String = s.slice(0, 64).into();
            return Err(SubagentError::new(
                ErrorCode::InvalidName,
                format!(
                    "agent name {}… ({len} characters) must be 1-32 lower-case letters, digits or hyphens starting with a letter",
                    Quoted(&head)
                ),
            ));
        }
        name::AgentName::parse(&String::from(s))?;
        Ok(text.clone())
    })())
}

/// The first free `agent-N` (N from 1) among the sibling names already taken.
#[wasm_bindgen(js_name = defaultName)]
pub fn default_name(
    #[wasm_bindgen(js_name = takenSiblingNames, unchecked_param_type = "string[]")] taken: JsValue,
) -> JsResult<String> {
    throw(strings_arg(&taken, "takenSiblingNames").map(|names| name::default_name(&names).into_string()))
}

/// `{kind:'lead'}`, `{kind:'path', segments}` or `{kind:'session', id}`.
#[wasm_bindgen(js_name = parseAgentRef, unchecked_return_type = "AgentRef")]
pub fn parse_agent_ref(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> JsResult<JsValue> {
    throw(string_arg(&text, "agent reference").map(|s| agent_ref_to_js(&AgentRef::parse(&s), &text)))
}

/// Strictly decodes one `subagent/catalog` payload; throws `CORRUPT_CATALOG`.
#[wasm_bindgen(js_name = decodeCatalogPayload, unchecked_return_type = "CatalogEntry")]
pub fn decode_catalog_payload(#[wasm_bindgen(unchecked_param_type = "unknown")] payload: JsValue) -> JsResult<JsValue> {
    throw((|| {
        let value = value_from_js(&payload).map_err(|e| e.error_as(ErrorCode::CorruptCatalog, "catalog payload"))?;
        catalog::decode_payload(&value).map(|entry| entry_to_js(&entry))
    })())
}

/// The catalog rows of a parent's events, in event order; events a fork
/// inherited (`seq < inheritedEventCount`) and other types are ignored.
#[wasm_bindgen(js_name = projectCatalog, unchecked_return_type = "CatalogEntry[]")]
pub fn project_catalog(
    #[wasm_bindgen(unchecked_param_type = "SessionEvent[]")] events: JsValue,
    options: Option<super::ts::ProjectCatalogOptionsArg>,
) -> JsResult<JsValue> {
    let entries = throw((|| {
        let events = events_from_js(&events, Default::default()).map_err(|e| e.error("events"))?;
        let options = options_arg(&super::ts::opt(options), "options")?;
        let inherited = option(options.as_ref(), "inheritedEventCount", "options")?
            .map(|n| count_arg(&n, "options.inheritedEventCount"))
            .transpose()?
            .unwrap_or(0);
        catalog::project(&events, inherited)
    })())?;
    super::fast::entries_to_js(&entries)
}

/// The store of a listing call: the package's own `MemoryStore` natively
/// (the full build), any other store through its methods.
#[cfg(feature = "runtime")]
type CallStore = Box<dyn Store>;
/// The store of a listing call, always through its methods (the lite build's
/// JS loop calls them; see `super::lite`).
#[cfg(not(feature = "runtime"))]
type CallStore = JsStore;

/// Validates a listing call's common arguments and links its signal (the
/// lite build's JS loop listens to it itself).
fn prepare(store: &JsValue, root: &JsValue, options: &JsValue) -> Result<(CallStore, String, Link)> {
    #[cfg(feature = "runtime")]
    let store: CallStore =
        match super::native::native_store(store, "store", crate::core::limits::MAX_STORED_EVENT_BYTES)? {
            Some(native) => Box::new(native),
            None => Box::new(JsStore::new(store, "store")?),
        };
    #[cfg(not(feature = "runtime"))]
    let store = JsStore::new(store, "store")?;
    let root = id_arg(root, "rootSessionId")?;
    let options = options_arg(options, "options")?;
    let link = Link::from_options(options.as_ref(), "options", cfg!(feature = "runtime"))?;
    link.check()?;
    Ok((store, root, link))
}

/// Every descendant of `rootSessionId`, in stable pre-order.
#[wasm_bindgen(js_name = listDescendants, unchecked_return_type = "Promise<Row[]>")]
pub fn list_descendants(
    #[wasm_bindgen(unchecked_param_type = "SessionStore")] store: JsValue,
    #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
    options: Option<super::ts::CallOptionsArg>,
) -> Promise {
    let (store, root, link) = match prepare(&store, &root_session_id, &super::ts::opt(options)) {
        Ok(prepared) => prepared,
        Err(e) => return Promise::reject(&to_js(e)),
    };
    #[cfg(not(feature = "runtime"))]
    return super::lite::list(store, &root, link);
    #[cfg(feature = "runtime")]
    future_to_promise(async move {
        match listing::list_descendants(&*store, &root, link.signal()).await {
            Ok(rows) => super::fast::rows_to_js(&rows),
            Err(e) => Err(link.error(e)),
        }
    })
}

/// Every descendant of `rootSessionId` as `listDescendants` lists it, each
/// with what its log says of its turns (`turnOpen`, `lastTurn`), and the
/// root's: a tree as it is, from the store alone.
#[wasm_bindgen(js_name = listTree, unchecked_return_type = "Promise<TreeListing>")]
pub fn list_tree(
    #[wasm_bindgen(unchecked_param_type = "SessionStore")] store: JsValue,
    #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
    options: Option<super::ts::CallOptionsArg>,
) -> Promise {
    let (store, root, link) = match prepare(&store, &root_session_id, &super::ts::opt(options)) {
        Ok(prepared) => prepared,
        Err(e) => return Promise::reject(&to_js(e)),
    };
    #[cfg(not(feature = "runtime"))]
    return super::lite::tree(store, &root, link);
    #[cfg(feature = "runtime")]
    future_to_promise(async move {
        match crate::core::turns::list_tree(&*store, &root, link.signal()).await {
            Ok(listing) => super::convert::tree_to_js(&root, &listing),
            Err(e) => Err(link.error(e)),
        }
    })
}

/// The Session id a reference names within the tree of `rootSessionId`.
#[wasm_bindgen(js_name = resolveName, unchecked_return_type = "Promise<string>")]
pub fn resolve_name(
    #[wasm_bindgen(unchecked_param_type = "SessionStore")] store: JsValue,
    #[wasm_bindgen(js_name = rootSessionId, unchecked_param_type = "string")] root_session_id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    options: Option<super::ts::CallOptionsArg>,
) -> Promise {
    let prepared = prepare(&store, &root_session_id, &super::ts::opt(options))
        .and_then(|p| string_arg(&text, "agent reference").map(|t| (p, t)));
    let ((store, root, link), text_string) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => return Promise::reject(&to_js(e)),
    };
    match AgentRef::parse(&text_string) {
        // Returned unchanged: the caller's own string.
        AgentRef::Session(_) => return Promise::resolve(&text),
        AgentRef::Lead => return Promise::resolve(&JsValue::from_str(&root)),
        AgentRef::Path(_) => {}
    }
    #[cfg(not(feature = "runtime"))]
    return super::lite::resolve(store, &root, &text_string, link);
    #[cfg(feature = "runtime")]
    future_to_promise(async move {
        match listing::resolve_name(&*store, &root, &text_string, link.signal()).await {
            Ok(id) => Ok(JsValue::from_str(&id)),
            Err(e) => Err(link.error(e)),
        }
    })
}

/// The module's heap: what it holds, its limit and its linear memory (full build).
#[cfg(feature = "runtime")]
#[wasm_bindgen(js_name = heapUsage, unchecked_return_type = "HeapUsage")]
pub fn heap_usage() -> JsValue {
    use crate::core::heap;
    let obj = js_sys::Object::new();
    let memory = core::arch::wasm32::memory_size(0) * 65536;
    super::convert::set(&obj, "usedBytes", &JsValue::from_f64(heap::used() as f64));
    super::convert::set(&obj, "limitBytes", &JsValue::from_f64(heap::limit() as f64));
    super::convert::set(&obj, "memoryBytes", &JsValue::from_f64(memory as f64));
    obj.into()
}

/// Sets `heapBytes`, the module's heap limit (16 MiB - 3 GiB; default 2 GiB):
/// past it every input is refused `LIMIT_EXCEEDED` instead of the instance
/// trapping when its memory cannot grow.
#[cfg(feature = "runtime")]
#[wasm_bindgen(js_name = setHeapLimit)]
pub fn set_heap_limit(#[wasm_bindgen(unchecked_param_type = "number")] bytes: JsValue) -> JsResult<()> {
    throw((|| {
        let n = bytes.as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0).ok_or_else(|| {
            invalid(format!("heapBytes must be a whole number of bytes, not {}", super::convert::describe(&bytes)))
        })?;
        crate::core::heap::set_limit(if n > usize::MAX as f64 { usize::MAX } else { n as usize })
    })())
}

/// Every error code, in declaration order (the package exports it as `errorCodes`).
#[wasm_bindgen(js_name = errorCodeList, skip_typescript)]
pub fn error_code_list() -> Array {
    ErrorCode::ALL.iter().map(|c| JsValue::from_str(c.as_str())).collect()
}
