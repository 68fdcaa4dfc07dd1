//! Session events: a session is an append-only log of `{ seq, type, payload }`,
//! `seq` from 0 and contiguous. This crate reads and writes a few event types;
//! every other type passes through untouched.

use crate::core::json::Value;
use serde::{Deserialize, Serialize};

/// Membership of one child in its parent's log (see [`crate::core::catalog`]).
pub const CATALOG: &str = "subagent/catalog";
/// The first own event of a session the runtime creates. A forked child's log
/// starts with its parent's completed-turn prefix; this event, written right
/// after it, records how many events were inherited, so the child's catalog
/// ignores the parent's.
pub const SESSION_START: &str = "session/start";

/// An accepted inbox message (durable acceptance).
pub const MESSAGE: &str = "message/input";
/// The start of one turn, before the host runs it: the input ids it answers.
/// A start with no later end is a turn the host never finished (a crash).
pub const TURN_START: &str = "turn/start";
/// The end of one turn: its outcome and the message ids it consumed.
pub const TURN_END: &str = "turn/end";
/// A change of the member's effective directory.
pub const CWD: &str = "session/cwd";
/// What an external run its member created reported spending (`{ childId,
/// usage }`): the run has no log of its own (see [`crate::core::usage`]).
pub const SUBAGENT_USAGE: &str = "subagent/usage";
/// A member's effective budget (`{ sessionId, budget }`, `budget` null to
/// clear it), kept in its tree root's log so one read at open finds every
/// budget of the tree (see [`crate::core::budget`]).
pub const BUDGET: &str = "subagent/budget";
/// A root's agent options (`{ agentOptions }`), written when `openRoot` sets
/// ones its log does not already hold; the last one counts (a child's ride on
/// its `session/start`; see [`crate::core::agent_options`]).
pub const AGENT_OPTIONS: &str = "agent/options";
/// The member's trace context (`{ traceparent, tracestate? }`, W3C Trace
/// Context): what a tracer parents the member's spans on, so its turns after a
/// restart join the trace of the turn that created it (see [`crate::core::trace`]).
pub const TRACE: &str = "trace/context";

/// The payload key that marks a damaged event: one a store answered with data
/// that does not read (a lone surrogate, a getter that throws), kept in place
/// of the event (its `seq` and `type`, the fields that did read, and this key
/// saying why) so that one bad event costs its own entry, not the whole read.
/// Only a read that asks for them ([`crate::core::store::ReadQuery::damaged`])
/// gets such events; no writer ever stores this key.
pub const DAMAGED: &str = "$damaged";

/// Why `event` is damaged, when it is (see [`DAMAGED`]).
pub fn damaged(event: &SessionEvent) -> Option<&str> {
    event.payload.get(DAMAGED).and_then(Value::as_str)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionEvent {
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub payload: Value,
}

impl SessionEvent {
    pub fn new(seq: u64, kind: impl Into<String>, payload: Value) -> Self {
        SessionEvent { seq, kind: kind.into(), payload }
    }
}

/// How many leading events of `events` a fork inherited: the `inheritedEventCount`
/// of the last `session/start` event whose own position it names. Ancestors'
/// markers inside an inherited prefix sit at lower positions, so the last one wins.
pub fn inherited_event_count(events: &[SessionEvent]) -> u64 {
    events
        .iter()
        .rev()
        .filter(|e| e.kind == SESSION_START)
        .find_map(|e| e.payload.get("inheritedEventCount").and_then(Value::as_u64).filter(|&n| n == e.seq))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(seq: u64, inherited: u64) -> SessionEvent {
        SessionEvent::new(seq, SESSION_START, Value::object([("inheritedEventCount", Some(Value::from(inherited)))]))
    }

    #[test]
    fn inherited_count_comes_from_the_own_start_marker() {
        assert_eq!(inherited_event_count(&[]), 0);
        assert_eq!(inherited_event_count(&[start(0, 0)]), 0);
        let fork = vec![start(0, 0), SessionEvent::new(1, "x", Value::Null), start(2, 2)];
        assert_eq!(inherited_event_count(&fork), 2);
        // A marker that does not name its own position is not trusted.
        assert_eq!(inherited_event_count(&[start(0, 0), start(1, 7)]), 0);
    }
}
