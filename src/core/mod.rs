//! The rules of a subagent tree with no I/O at all: what a name is, what a
//! catalog payload says, how a listing or a resolution proceeds (as machines
//! that name the reads they need and take their answers), the `Store` port,
//! and the limits, errors and signals every layer shares. Nothing here
//! knows of JavaScript, clocks or the live runtime.
//!
//! | module | owns |
//! |---|---|
//! | [`name`] | the name grammar, default `agent-N`, references and full names |
//! | [`event`] | session events and the event types this crate writes |
//! | [`catalog`] | strict catalog payloads v0-v3 and the catalog fold |
//! | [`listing`] | descendant listing and name resolution: the `Lister` and `Resolver` machines, their drivers over a store, the "did you mean" hint |
//! | [`store`] | the `Store` port, `MemoryStore`, bounded concurrent reads |
//! | [`json`] | the JSON value and its parser |
//! | [`limits`] | the documented size limits and their checks |
//! | [`heap`] | the counted heap and its one limit, `heapBytes` |
//! | [`error`] | `SubagentError` and its stable codes |
//! | [`signal`], [`exec`] | cancellation, and the small local executor and futures the ports return |
//! | [`path`] | `cwd` resolution and the directory policy |
//! | [`result`], [`stop`], [`schema`] | run results, stop reasons and content; the `outputSchema` subset (runtime feature) |
//! | [`delta`] | the parts a host streams while a turn runs (runtime feature) |
//! | [`agent_options`] | a member's provider, model, reasoning effort and output-token overrides, and how a child's merge over its creator's (runtime feature) |
//! | [`budget`] | what a subtree may spend, and the ledger that reserves and counts it per tree (runtime feature) |
//! | [`turns`] | what a log says of its member's turns (one open, the last stop, the latest output) and the tree listing that carries it |
//! | [`trace`] | a member's durable W3C trace context: its grammar and where its log keeps it |
//! | [`usage`] | what a turn or run spends, its validation, and totals folded from logs (runtime feature) |

#[cfg(feature = "runtime")]
pub mod agent_options;
#[cfg(feature = "runtime")]
pub mod budget;
pub mod catalog;
#[cfg(feature = "runtime")]
pub mod delta;
pub mod error;
pub mod event;
pub mod exec;
pub(crate) mod hash;
pub mod heap;
pub mod json;
pub mod limits;
pub mod listing;
pub mod name;
pub mod path;
#[cfg(feature = "runtime")]
pub mod result;
#[cfg(feature = "runtime")]
pub mod schema;
pub mod signal;
#[cfg(feature = "runtime")]
pub mod stop;
pub mod store;
#[cfg(feature = "runtime")]
pub mod trace;
pub mod turns;
#[cfg(feature = "runtime")]
pub mod usage;
