//! The wasm-bindgen bridge: everything that mentions `wasm_bindgen` or
//! `js_sys` lives here, compiled only for wasm32. It converts, validates and
//! maps errors; every rule lives in the core.
//!
//! | module | owns |
//! |---|---|
//! | [`api`] | the exported functions |
//! | [`store`] | `JsStore` (any JS object as a core `Store`) and the exported `MemoryStore` |
//! | [`signal`] | JS `AbortSignal` <-> core `Signal` |
//! | [`error`] | core `SubagentError` -> JS `SubagentError` (from `js/error.js`) |
//! | [`convert`] | trap-free JS <-> core conversions |
//! | [`runtime`] | the exported `SubagentRuntime` class, agent handles, activations, tools |
//! | [`handles`] | the capability-guarded imports of `js/runtime.js` (handle minting) |
//! | [`ports`] | the agent host, providers, runs, clock and ids over JS objects |
//! | [`ts`] | the hand-written TypeScript types |

pub mod api;
pub mod convert;
pub mod error;
pub mod handles;
pub mod ports;
pub mod runtime;
pub mod signal;
pub mod store;
pub mod ts;
