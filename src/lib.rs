//! subagent-tree: the subagent-tree runtime of an AI agent harness, as a
//! runtime-agnostic core with a thin wasm-bindgen bridge.
//!
//! The folders are the layers; each depends only on those above it in this
//! table, and no two files import each other in a cycle
//! (`scripts/module-cycles.mjs`, run by `make lint`).
//!
//! | layer | owns |
//! |---|---|
//! | [`core`] | rules with no I/O: names, catalog payloads and events, listing and resolution machines, the `Store` port and `MemoryStore`, limits, errors, signals, paths, results, the output-schema subset, JSON |
//! | [`runtime`] | live trees: admission, messages, interrupts, settlement, drain, cold resume and recovery; the ports it calls (agent host, providers, clock, ids), the built-in providers, the model-visible text, the tools and the team board |
//! | [`testkit`] | deterministic runtimes for tests (shipped: a product for test harnesses) |
//! | `wasm` | the bridge (wasm32 only): one file per exported class, conversions, the JS ports |
//! | `sim` | (the `sim` feature: tests and `make sim` only) the seeded simulation with fault injection |
//!
//! The core's modules are also at the crate root (`subagent_tree::listing`,
//! ...), and the runtime's ports, providers, text, tools and team board too,
//! where they lived before the layers had folders.
//!
//! Without the default `runtime` feature the crate is the listing core (no
//! `runtime`, `result`, `schema` or `testkit`): the `subagent-tree/lite`
//! package entry is built from it.

// State lives in `RefCell`s borrowed for one synchronous step: never across an `.await`.
#![deny(clippy::await_holding_refcell_ref)]

pub mod core;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(all(feature = "sim", not(target_arch = "wasm32")))]
pub mod sim;
#[cfg(feature = "runtime")]
pub mod testkit;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;

pub use crate::core::{catalog, error, event, exec, json, limits, listing, name, path, signal, store};
#[cfg(feature = "runtime")]
pub use crate::core::{result, schema};
#[cfg(feature = "runtime")]
pub use runtime::{ports, providers, team, text, tools};

pub use crate::core::catalog::{CatalogEntry, Mode};
pub use crate::core::error::{ErrorCode, Result, SubagentError};
pub use crate::core::event::SessionEvent;
pub use crate::core::listing::{list_descendants, resolve_name, ChildRow, DiagnosticReason, DiagnosticRow, Row};
pub use crate::core::name::{default_name, is_valid_name, AgentName, AgentRef};
#[cfg(feature = "runtime")]
pub use crate::core::result::SubagentResult;
pub use crate::core::signal::Signal;
pub use crate::core::store::{MemoryStore, ReadQuery, Store};
#[cfg(feature = "runtime")]
pub use runtime::{Activation, ActivationSpec, Agent, Runtime, RuntimeOptions};
