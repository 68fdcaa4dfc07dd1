//! subagent-tree: the subagent-tree runtime of an AI agent harness, as a
//! runtime-agnostic core with a thin wasm-bindgen bridge.
//!
//! The core (every module but `wasm`) owns the rules and knows nothing of
//! JavaScript, threads or clocks; hosts plug in through small traits
//! ([`store::Store`], and the runtime's provider and agent-host ports).
//!
//! | module | owns |
//! |---|---|
//! | [`name`] | the name grammar, default `agent-N`, references and full names |
//! | [`event`] | session events and the event types this crate writes |
//! | [`catalog`] | strict catalog payloads v0-v3 and the catalog fold |
//! | [`listing`] | descendant listing and name resolution over a store |
//! | [`store`] | the `Store` port and `MemoryStore` |
//! | [`schema`] | the object-rooted JSON Schema subset of `outputSchema` |
//! | [`runtime`] | live trees: admission, names at admission, messages, interrupts, settlement, drain, cold resume |
//! | [`ports`] | what hosts implement: agent host, providers, clock, ids |
//! | [`providers`] | the built-in `spawn` and `fork` providers |
//! | [`result`], [`text`] | run results and the model-visible text the runtime writes |
//! | [`tools`], [`team`] | model-facing tools and the team task board |
//! | [`limits`] | the documented size limits and their checks |
//! | [`path`] | `cwd` resolution and the directory policy |
//! | [`signal`], [`exec`] | cancellation and a small local executor |
//! | `sim` | (native) the deterministic simulation with fault injection |
//!
//! The modules from `schema` to `team` (and `sim`) need the default `runtime`
//! feature; without it the crate is the listing core the `subagent-tree/lite`
//! package entry is built from.
//! | [`error`] | `SubagentError` and its stable codes |

// State lives in `RefCell`s borrowed for one synchronous step: never across an `.await`.
#![deny(clippy::await_holding_refcell_ref)]

pub mod catalog;
pub mod error;
pub mod event;
pub mod exec;
mod hash;
pub mod json;
pub mod limits;
pub mod listing;
pub mod name;
pub mod path;
#[cfg(feature = "runtime")]
pub mod result;
#[cfg(feature = "runtime")]
pub mod runtime;
#[cfg(feature = "runtime")]
pub mod schema;
pub mod signal;
#[cfg(all(feature = "runtime", not(target_arch = "wasm32")))]
pub mod sim;
pub mod store;
#[cfg(feature = "runtime")]
pub mod testkit;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod wasm;

pub use catalog::{CatalogEntry, Mode};
pub use error::{ErrorCode, Result, SubagentError};
pub use event::SessionEvent;
pub use listing::{list_descendants, resolve_name, ChildRow, DiagnosticReason, DiagnosticRow, Row};
pub use name::{default_name, is_valid_name, AgentName, AgentRef};
#[cfg(feature = "runtime")]
pub use result::SubagentResult;
/// The runtime's ports, providers, text, tools and team board, at their earlier paths.
#[cfg(feature = "runtime")]
pub use runtime::{ports, providers, team, text, tools};
#[cfg(feature = "runtime")]
pub use runtime::{Activation, ActivationSpec, Agent, Runtime, RuntimeOptions};
pub use signal::Signal;
pub use store::{MemoryStore, ReadQuery, Store};
