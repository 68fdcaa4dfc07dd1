//! What a member receives: an accepted message, where it came from, how it
//! is scheduled, and how its log keeps it (the payload written at acceptance,
//! read back as pending input). Its own module so the machine, the member,
//! the log and the text the runtime renders share it without depending on
//! each other.

use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashSet;
use crate::core::json::Value;

/// How an inbox message is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduling {
    /// Waits for a later turn.
    Queue,
    /// Reaches a running turn at its next step; else starts a turn.
    Steer,
}

/// Where a message came from. Agent words and the runtime's account of a
/// settled child are different kinds, so a transcript never credits a child
/// with words it did not write.
#[derive(Clone, Debug, PartialEq)]
pub enum MessageSource {
    /// A user or host operation.
    User,
    /// Content another agent chose to send (`relay`).
    AgentMessage { sender_session_id: String, sender_name: String },
    /// The runtime stating how a child ended (`notice`).
    SubagentSettled {
        sender_session_id: String,
        sender_name: String,
        summary: String,
        stop_reason: crate::core::result::StopReason,
        structured: Option<Value>,
        diagnostic: Option<String>,
    },
}

/// One accepted message.
#[derive(Clone, Debug, PartialEq)]
pub struct InboxMessage {
    pub id: String,
    pub source: MessageSource,
    /// Content blocks (a JSON array).
    pub content: Value,
    pub scheduling: Scheduling,
    /// What the prompt's caller said of the request (kept with it, shown to the host).
    pub meta: MessageMeta,
}

/// The caller-minted request identity and the caller's time zone a prompt
/// keeps (seed 003: the prompt retains "the caller-minted request identity
/// and validated browser zone"), both checked where they enter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageMeta {
    pub request_id: Option<String>,
    /// An IANA zone (`Europe/Paris`), validated by the host environment.
    pub time_zone: Option<String>,
}

/// The durable form of an accepted message.
pub(crate) fn message_payload(m: &InboxMessage) -> Value {
    Value::object([
        ("messageId", Some(Value::from(m.id.as_str()))),
        ("source", Some(source_value(&m.source))),
        ("content", Some(m.content.clone())),
        ("delivery", Some(Value::from(if m.scheduling == Scheduling::Steer { "steer" } else { "queue" }))),
        ("requestId", m.meta.request_id.as_deref().map(Value::from)),
        ("timeZone", m.meta.time_zone.as_deref().map(Value::from)),
    ])
}

/// A message's `source` as stored and as hosts see it (one shape for both).
pub fn source_value(source: &MessageSource) -> Value {
    match source {
        MessageSource::User => Value::object([("kind", Some(Value::from("user")))]),
        MessageSource::AgentMessage { sender_session_id, sender_name } => Value::object([
            ("kind", Some(Value::from("agent-message"))),
            ("form", Some(Value::from("relay"))),
            ("senderSessionId", Some(Value::from(sender_session_id.as_str()))),
            ("senderName", Some(Value::from(sender_name.as_str()))),
        ]),
        MessageSource::SubagentSettled {
            sender_session_id,
            sender_name,
            summary,
            stop_reason,
            structured,
            diagnostic,
        } => Value::object([
            ("kind", Some(Value::from("subagent-settled"))),
            ("form", Some(Value::from("notice"))),
            ("summary", Some(Value::from(summary.as_str()))),
            ("stopReason", Some(Value::from(stop_reason.as_str()))),
            ("senderSessionId", Some(Value::from(sender_session_id.as_str()))),
            ("senderName", Some(Value::from(sender_name.as_str()))),
            ("structured", structured.clone()),
            ("diagnostic", diagnostic.as_deref().map(Value::from)),
        ]),
    }
}

/// Decodes a stored message; `None` for a malformed one (skipped, never a crash).
pub(crate) fn decode_message(payload: &Value) -> Option<InboxMessage> {
    let id = payload.get("messageId")?.as_str()?.to_owned();
    let scheduling = match payload.get("delivery").and_then(Value::as_str) {
        Some("steer") => Scheduling::Steer,
        _ => Scheduling::Queue,
    };
    let whole = payload.get("content").cloned().zip(payload.get("source").and_then(decode_source));
    let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
    let meta = MessageMeta { request_id: text("requestId"), time_zone: text("timeZone") };
    match (whole, payload.get(event::DAMAGED).and_then(Value::as_str)) {
        (Some((content, source)), _) => Some(InboxMessage { id, source, content, scheduling, meta }),
        // A damaged message (see `event::DAMAGED`) whose text or sender did not read is still
        // input its turn answers: the model is told what could not be read, never handed a
        // guess, and the message is consumed like any other (never delivered twice).
        (None, Some(why)) => Some(InboxMessage {
            id,
            source: MessageSource::User,
            content: Value::from(format!(
                "(A message to you could not be read from the session store and is not shown: {why}. \
                 Its sender may need to send it again.)"
            )),
            scheduling,
            meta,
        }),
        (None, None) => None,
    }
}

fn decode_source(src: &Value) -> Option<MessageSource> {
    let text = |k: &str| src.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(match src.get("kind")?.as_str()? {
        "agent-message" => MessageSource::AgentMessage {
            sender_session_id: text("senderSessionId")?,
            sender_name: text("senderName").unwrap_or_default(),
        },
        "subagent-settled" => MessageSource::SubagentSettled {
            sender_session_id: text("senderSessionId")?,
            sender_name: text("senderName").unwrap_or_default(),
            summary: text("summary").unwrap_or_default(),
            stop_reason: text("stopReason").unwrap_or_default().into(),
            structured: src.get("structured").cloned(),
            diagnostic: text("diagnostic"),
        },
        _ => MessageSource::User,
    })
}

/// The message ids the recorded turns among `events` (in log order) consumed.
/// A damaged turn end whose list did not read consumed every message accepted
/// before it: at most once, as a lost turn's input, never delivered twice.
pub(crate) fn consumed_ids<'a>(events: impl Iterator<Item = &'a SessionEvent>) -> HashSet<&'a str> {
    let (mut accepted, mut consumed) = (Vec::new(), HashSet::default());
    for e in events {
        match e.kind.as_str() {
            event::MESSAGE => accepted.extend(e.payload.get("messageId").and_then(Value::as_str)),
            event::TURN_END => match e.payload.get("consumed").and_then(Value::as_array) {
                Some(ids) => consumed.extend(ids.iter().filter_map(Value::as_str)),
                None if event::damaged(e).is_some() => consumed.extend(accepted.iter().copied()),
                None => {}
            },
            _ => {}
        }
    }
    consumed
}

/// Own messages never consumed by a recorded turn, in acceptance order.
pub(crate) fn pending_messages(events: &[SessionEvent]) -> Vec<InboxMessage> {
    let inherited = event::inherited_event_count(events);
    let own = events.iter().filter(|e| e.seq >= inherited);
    let consumed = consumed_ids(own.clone());
    own.filter(|e| e.kind == event::MESSAGE)
        .filter_map(|e| decode_message(&e.payload))
        .filter(|m| !consumed.contains(m.id.as_str()))
        .collect()
}
