//! A member's trace context: the W3C Trace Context (`traceparent`, optional
//! `tracestate`) a tracer gave it when it was created, kept in its own log as
//! a [`TRACE`] event so that a runtime that resumes it (a new process, a
//! restarted Durable Object) parents its turns on the same trace. The runtime
//! never reads a trace id: it keeps the text and hands it back.
//!
//! A stored context that does not read is ignored (the member's spans then
//! start a new trace), never an error: tracing must not cost a tree its log.

use crate::core::error::Result;
use crate::core::event::{SessionEvent, TRACE};
use crate::core::json::Value;

/// The most bytes of `tracestate` kept (W3C: 32 members of at most 256 bytes; implementations may cut at 512).
pub const MAX_TRACESTATE_BYTES: usize = 512;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

impl TraceContext {
    /// A context a tracer handed over: `traceparent` must be a version-00
    /// header (`00-<32 hex>-<16 hex>-<2 hex>`, ids not all zero).
    pub fn new(traceparent: &str, tracestate: Option<&str>) -> Result<TraceContext> {
        if !valid_traceparent(traceparent) {
            return Err(crate::err!(
                InvalidArgument,
                "traceparent must be a W3C version-00 header (00-<32 lower-case hex>-<16 lower-case hex>-<2 hex>), got {}",
                crate::core::name::quote_truncated(traceparent, 80)
            ));
        }
        if let Some(state) = tracestate {
            if state.len() > MAX_TRACESTATE_BYTES || !state.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return Err(crate::err!(
                    InvalidArgument,
                    "tracestate must be at most {MAX_TRACESTATE_BYTES} bytes of printable ASCII"
                ));
            }
        }
        Ok(TraceContext { traceparent: traceparent.to_owned(), tracestate: tracestate.map(str::to_owned) })
    }

    /// The [`TRACE`] event's payload.
    pub fn to_payload(&self) -> Value {
        Value::object([
            ("traceparent", Some(Value::from(self.traceparent.as_str()))),
            ("tracestate", self.tracestate.as_deref().map(Value::from)),
        ])
    }

    fn from_payload(payload: &Value) -> Option<TraceContext> {
        let parent = payload.get("traceparent")?.as_str()?;
        let state = match payload.get("tracestate") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_str()?),
        };
        TraceContext::new(parent, state).ok()
    }

    /// The context a log keeps: its last readable [`TRACE`] event at or after
    /// `inherited` (a fork's prefix is its parent's, not its own).
    pub fn of_events<'a>(
        events: impl DoubleEndedIterator<Item = &'a SessionEvent>,
        inherited: u64,
    ) -> Option<TraceContext> {
        events.rev().filter(|e| e.seq >= inherited && e.kind == TRACE).find_map(|e| Self::from_payload(&e.payload))
    }
}

fn valid_traceparent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    parts.len() == 4
        && parts[0] == "00"
        && hex(parts[1], 32)
        && nonzero(parts[1])
        && hex(parts[2], 16)
        && nonzero(parts[2])
        && hex(parts[3], 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn only_a_version_00_traceparent_with_nonzero_ids_reads() {
        assert!(TraceContext::new(GOOD, Some("vendor=1")).is_ok());
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            let e = TraceContext::new(bad, None).unwrap_err();
            assert_eq!(e.code, crate::core::error::ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(TraceContext::new(GOOD, Some(&"x".repeat(513))).is_err());
        assert!(TraceContext::new(GOOD, Some("a=\n")).is_err());
    }

    #[test]
    fn a_log_keeps_its_last_readable_own_context() {
        let ctx =
            |seq, parent: &str| SessionEvent::new(seq, TRACE, TraceContext::new(parent, None).unwrap().to_payload());
        let other = "00-11111111111111111111111111111111-2222222222222222-00";
        let broken = SessionEvent::new(3, TRACE, Value::object([("traceparent", Some(Value::from("nope")))]));
        let events = [ctx(0, other), SessionEvent::new(1, "session/start", Value::Null), ctx(2, GOOD), broken];
        assert_eq!(TraceContext::of_events(events.iter(), 1).unwrap().traceparent, GOOD);
        assert_eq!(TraceContext::of_events(events[..2].iter(), 1), None, "an inherited context is the parent's");
        let round = TraceContext::new(GOOD, Some("a=b")).unwrap();
        assert_eq!(TraceContext::from_payload(&round.to_payload()), Some(round));
    }
}
