//! What the runtime tells the outside: lifecycle events and their
//! listeners, the durability barrier's flush listeners (decision record
//! 004), and the trace source new members take their trace context from.
//! Listeners are called on a snapshot, with no runtime borrow held: a
//! listener may call back into the runtime.

use super::{BudgetState, ProviderRef, Runtime};
use crate::core::delta::Part;
use crate::core::error::{ErrorCode, Result};
use crate::core::exec::LocalBoxFuture;
use crate::core::json::Value;
use crate::core::trace::TraceContext;
use std::rc::Rc;

/// Lifecycle events, scoped to a tree root.
#[derive(Clone, Debug, PartialEq)]
pub enum RuntimeEvent {
    /// `subagent/start`: a provider established a published child.
    Start(RunInfo),
    /// `subagent/end`: a published child settled.
    End(RunEndInfo),
    /// `subagent/provider-added`: the registered provider itself (seed 000).
    ProviderAdded(ProviderRef),
    /// `subagent/provider-removed`.
    ProviderRemoved(String),
    /// A catalog fact committed (for views that follow the tree live).
    Catalog { root_id: String, parent_id: String, entry: crate::CatalogEntry },
    /// A message was accepted (durable) into a member's inbox.
    /// `from`: the sender's full name (an agent's message or a settlement notice; `None` from a user or host).
    Message {
        root_id: String,
        session_id: String,
        name: String,
        message_id: String,
        kind: &'static str,
        from: Option<String>,
        /// The message's content, when something listens (a copy: bounded by `messageBytes`).
        content: Option<Value>,
    },
    /// A member's turn started (`stop_reason` is `None`) or ended; `output` is
    /// the ended turn's final text (the `output` its `turn/end` records), if any.
    /// `parked` (on end): interrupted, its unread input waits for a waking send.
    Turn {
        root_id: String,
        session_id: String,
        name: String,
        stop_reason: Option<crate::core::result::StopReason>,
        output: Option<String>,
        parked: bool,
        /// On end: what the turn reported spending.
        usage: Option<crate::core::usage::Usage>,
        /// On start: the member's trace context, as its log keeps it.
        trace: Option<TraceContext>,
    },
    /// A part a running turn streamed (`turn_id` names the turn). Never stored.
    Delta { root_id: String, session_id: String, name: String, turn_id: u64, part: Part },
    /// A member's model-facing tool call began (`end` is `None`, `input` its
    /// arguments) or ended. `call_id` pairs the two, and a child the call
    /// started names it in its `subagent/start` (tracers hang the child there).
    Tool {
        root_id: String,
        session_id: String,
        name: String,
        call_id: u64,
        tool: String,
        input: Option<Value>,
        end: Option<ToolEnd>,
    },
    /// The durability barrier as a member left residency failed: its last
    /// writes may not be durable (`error` says why; the member left anyway).
    FlushFailed { root_id: String, session_id: String, name: String, error: String },
    /// Only an event stream's reader gets this: `missed` events it wanted
    /// were dropped before it read them (it fell behind what the stream
    /// keeps), so it should list the tree again.
    Gap { missed: u64 },
}

impl RuntimeEvent {
    /// The tree root an event is of, when it is of one (listeners scoped to a
    /// root get its events, and events of no root).
    pub fn root(&self) -> Option<&str> {
        match self {
            RuntimeEvent::Start(i) => Some(i.root_session_id.as_str()),
            RuntimeEvent::End(e) => Some(e.info.root_session_id.as_str()),
            RuntimeEvent::Catalog { root_id, .. }
            | RuntimeEvent::Message { root_id, .. }
            | RuntimeEvent::Turn { root_id, .. }
            | RuntimeEvent::Delta { root_id, .. }
            | RuntimeEvent::Tool { root_id, .. }
            | RuntimeEvent::FlushFailed { root_id, .. } => Some(root_id.as_str()),
            _ => None,
        }
    }
}

/// How a tool call ended: its result's text, and the child a delegation started.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEnd {
    pub is_error: bool,
    /// A refusal's code (the content is a sentence for the model, which may repeat its input).
    pub code: Option<ErrorCode>,
    pub content: String,
    /// A delegation's new child: its Session id and full name.
    pub child: Option<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub provider: String,
    pub id: String,
    pub parent_session_id: String,
    pub root_session_id: String,
    pub name: String,
    pub label: String,
    pub mode: crate::Mode,
    /// Its own budget as the event happened (set and remaining), where it has
    /// one: a view shows a new member's budget without reading its tree's log.
    pub budget: Option<BudgetState>,
    /// On a first start by a delegation tool: that call's `call_id`.
    pub tool_call: Option<u64>,
    /// Its trace context, as its log keeps it.
    pub trace: Option<TraceContext>,
}

/// What the runtime asks a [`TraceSource`] for a member it creates (a child's
/// log, or a root whose log keeps no trace context yet).
#[derive(Debug)]
pub struct TraceRequest<'a> {
    pub session_id: &'a str,
    pub root_id: &'a str,
    /// The creator (`None` for a root).
    pub parent_id: Option<&'a str>,
    /// Its full name.
    pub name: &'a str,
    /// Its label and provider (empty for a root).
    pub label: &'a str,
    pub provider: &'a str,
    /// The delegation tool call that creates it, if one does.
    pub tool_call: Option<u64>,
}

/// Gives a member being created its trace context (a tracer's span for its
/// creation), kept in its log; `None` keeps none.
pub type TraceSource = Rc<dyn Fn(&TraceRequest) -> Option<TraceContext>>;

#[derive(Clone, Debug, PartialEq)]
pub struct RunEndInfo {
    pub info: RunInfo,
    /// The result's stop reason, or `error` when teardown failed.
    pub stop_reason: crate::core::result::StopReason,
    pub error: Option<String>,
}

pub(crate) type Listener = Rc<dyn Fn(&RuntimeEvent)>;

/// A durability listener: `(session id) -> participation result`.
pub type FlushListener = Rc<dyn Fn(&str) -> LocalBoxFuture<'static, Result<()>>>;

impl Runtime {
    /// Sets (or with `None` clears) where members created from now on get
    /// their trace context: a tracer's adapter parents their spans on it, and
    /// it is kept in their logs so a later runtime joins the same trace.
    pub fn set_trace_source(&self, source: Option<TraceSource>) {
        self.0.hooks.borrow_mut().trace_source = source;
    }

    /// What the trace source gives a member being created (out of any borrow:
    /// the source may call back into the runtime).
    pub(crate) fn trace_for(&self, request: &TraceRequest) -> Option<TraceContext> {
        let source = self.0.hooks.borrow().trace_source.clone()?;
        source(request)
    }

    /// Subscribes to lifecycle events, optionally only those of one tree root.
    pub fn subscribe(&self, root: Option<String>, listener: Listener) -> u64 {
        let token = self.token();
        self.0.hooks.borrow_mut().listeners.push((token, root, listener));
        token
    }

    pub fn unsubscribe(&self, token: u64) {
        self.0.hooks.borrow_mut().listeners.retain(|(t, _, _)| *t != token);
    }

    /// Calls listeners on a snapshot, with no runtime borrow held.
    /// Whether anything listens: an event that costs a copy is not built for nobody.
    pub(crate) fn listened(&self) -> bool {
        !self.0.hooks.borrow().listeners.is_empty()
    }

    pub(crate) fn emit(&self, event: RuntimeEvent) {
        let root = event.root();
        let listeners: Vec<Listener> = self
            .0
            .hooks
            .borrow()
            .listeners
            .iter()
            .filter(|(_, scope, _)| match (scope, root) {
                (None, _) => true,
                (Some(scope), Some(root)) => scope == root,
                (Some(_), None) => true,
            })
            .map(|(_, _, l)| l.clone())
            .collect();
        for listener in listeners {
            listener(&event);
        }
    }

    pub fn add_flush_listener(&self, listener: FlushListener) -> u64 {
        let token = self.token();
        self.0.hooks.borrow_mut().flush_listeners.push((token, listener));
        token
    }

    pub fn remove_flush_listener(&self, token: u64) {
        self.0.hooks.borrow_mut().flush_listeners.retain(|(t, _)| *t != token);
    }

    /// `true` when at least one listener took part, `false` for none; after all
    /// settle, the first failure in registration order rejects.
    pub async fn flush(&self, session_id: &str) -> Result<bool> {
        let listeners: Vec<FlushListener> =
            self.0.hooks.borrow().flush_listeners.iter().map(|(_, l)| l.clone()).collect();
        if listeners.is_empty() {
            return Ok(false);
        }
        // Start every listener before awaiting any, so they run in parallel.
        let pending: Vec<_> = listeners.iter().map(|l| l(session_id)).collect();
        let mut first_failure = None;
        for fut in pending {
            if let Err(e) = fut.await {
                first_failure.get_or_insert(e);
            }
        }
        match first_failure {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }
}
