//! The wasm-bindgen bridge: everything that mentions `wasm_bindgen` or
//! `js_sys` lives here, compiled only for wasm32. It converts, validates and
//! maps errors; every rule lives in the core.
//!
//! | module | owns |
//! |---|---|
//! | [`api`] | the exported functions |
//! | [`store`] | `JsStore` (any JS object as a core `Store`) and the exported `MemoryStore` |
//! | [`native`] | the package's own `MemoryStore` recognised and used as the core store |
//! | [`signal`] | JS `AbortSignal` <-> core `Signal` |
//! | [`error`] | core `SubagentError` -> JS `SubagentError` (from `js/error.js`) |
//! | [`convert`] | trap-free JS <-> core conversions |
//! | [`fast`] | the same conversions as one JSON crossing, where the data allows it |
//! | [`runtime`] | the exported `SubagentRuntime` class |
//! | [`registry`] | live runtimes by id, hosts' holds, the one dispatcher JS-side callables route through |
//! | [`args`] | the runtime's arguments from JS: options, signals, content, limits |
//! | [`values`] | the runtime's values as JS: messages, results, rows, events, providers |
//! | [`tools`] | a member's tools as JS objects and their calls |
//! | [`lite`] | (lite build) listings and resolutions as jobs a JS loop drives: no futures in the lite wasm |
//! | [`handles`] | agent handles: the capability-guarded imports of `js/runtime.js` that mint them, and their checks |
//! | [`ports`] | the agent host, providers, runs, clock and ids over JS objects |
//! | [`ts`] | the TypeScript names of option arguments (the types are `js/types/*.d.ts`) |
//!
//! `runtime`, `registry`, `args`, `values`, `tools`, `ports`, `handles` and `native` need the `runtime` feature (the lite build leaves
//! them out: its listings use a MemoryStore through JS, as any store).

/// Talc in place of Rust's default wasm allocator (dlmalloc): 2.7-2.9 KB
/// gzip smaller in each build, as fast here, ~2 % more linear memory.
/// The full build counts what it holds (`core::heap`): its inputs are
/// refused past `heapBytes` instead of trapping at 4 GiB.
#[cfg(all(not(target_feature = "atomics"), feature = "runtime"))]
#[global_allocator]
static ALLOCATOR: crate::core::heap::Counting<talc::wasm::WasmDynamicTalc> =
    crate::core::heap::Counting(talc::wasm::new_wasm_dynamic_allocator());
#[cfg(all(not(target_feature = "atomics"), not(feature = "runtime")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

pub mod api;
#[cfg(feature = "runtime")]
pub mod args;
pub mod convert;
pub mod error;
pub mod fast;
#[cfg(feature = "runtime")]
pub mod handles;
#[cfg(not(feature = "runtime"))]
pub mod lite;
#[cfg(feature = "runtime")]
pub mod native;
#[cfg(feature = "runtime")]
pub mod ports;
#[cfg(feature = "runtime")]
pub mod registry;
#[cfg(feature = "runtime")]
pub mod runtime;
pub mod signal;
pub mod store;
#[cfg(feature = "runtime")]
pub mod tools;
pub mod ts;
#[cfg(feature = "runtime")]
pub mod values;

/// `wasm_bindgen_futures::future_to_promise` over one boxed future type: every
/// async export shares a single copy of its body (~2.5 KB gzip saved) instead
/// of one per future type.
#[cfg(feature = "runtime")]
pub fn future_to_promise(
    future: impl std::future::Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>> + 'static,
) -> js_sys::Promise {
    type Boxed =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>>>>;
    wasm_bindgen_futures::future_to_promise(Box::pin(future) as Boxed)
}

/// Runs once when the module is instantiated (nothing random here: workerd
/// forbids randomness at module top level).
#[wasm_bindgen::prelude::wasm_bindgen(start)]
fn start() {
    crate::core::json::set_number_formatter(convert::number_text);
    crate::core::json::set_number_parser(convert::number_value);
    // Installed while the module is instantiated: the dispatcher claims the
    // handle module's capability before any other code can import and claim it.
    #[cfg(feature = "runtime")]
    registry::ensure_dispatcher();
}
