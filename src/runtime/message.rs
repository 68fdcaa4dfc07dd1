//! What a member receives: an accepted message, where it came from, and how
//! it is scheduled. Its own module so the machine and the member (and the
//! text the runtime renders) share it without depending on each other.

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
