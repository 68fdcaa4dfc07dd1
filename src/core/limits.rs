//! Size limits on everything that enters a tree.
//!
//! A tree runs inside one WebAssembly instance whose heap is at most 4 GiB and
//! never shrinks, so nothing a caller, a model or a store hands in may be
//! unbounded. Content limits (labels, prompts, messages, content blocks,
//! `cwd`) are checked twice: by the bridge while it converts a JS value (so an
//! oversized value is refused before it is copied into the heap), and by the
//! core where the value enters a tree (so native callers and the simulation
//! obey the same rules). What only JS can hand in is checked at the bridge
//! alone: ids (well-formed Unicode, `idBytes`; the JS stores check them too),
//! a host's or store's answers (`eventPayloadBytes`, stored events, reads) and
//! the runtime's own options (`maxDepth` up to 64; native callers set
//! [`crate::runtime::RuntimeOptions`] directly, as trusted code). A refusal is a
//! [`ErrorCode::LimitExceeded`] error whose sentence names the limit by its
//! JS option name (`promptBytes`, ...).
//!
//! | limit | default | configurable up to | applies to |
//! |---|---|---|---|
//! | name | 32 characters | fixed | agent names (the grammar, [`crate::core::name`]) |
//! | `idBytes` | 256 bytes | fixed | Session ids and message ids |
//! | `labelBytes` | 1 KiB | 64 KiB | activation labels |
//! | `cwdBytes` | 4 KiB | fixed | directories (`cwd`, `defaultCwd`) |
//! | `promptBytes` | 1 MiB | 16 MiB | an activation's prompt |
//! | `messageBytes` | 1 MiB | 16 MiB | a message (`prompt`, `sendMessage`, tools) |
//! | `contentBlocks` | 256 | 4096 | content blocks of one prompt or message |
//! | `eventPayloadBytes` | 4 MiB | 32 MiB | one stored event's payload; a host's turn outcome or run result |
//! | `maxDepth` | at most 64 | fixed | the runtime's `maxDepth` and an activation's `maxDepth` |
//! | `toolCallsPerReply` | 64 | 1024 | tool calls one model reply may ask for (each turn carries it; model hosts apply it) |
//! | `memberQueueBytes` | 64 MiB | 1 GiB | input one member holds and has not begun a turn on (its inbox and acceptances in flight) |
//! | `queueBytes` | 256 MiB | 2 GiB | the same, summed over every member of the runtime |
//! | stored event | 48 MiB | fixed | one event a store read answers, whatever limits the runtime that wrote it had |
//! | store read | 256 MiB | fixed | all events one store read answers |
//!
//! Sizes are measured as the UTF-8 bytes of every string and object key plus
//! one byte for every value (see [`json_size`]), which is close to the JSON
//! size without serialising anything. JS strings are checked by their length
//! in UTF-16 code units before they are copied (a code unit is at least one
//! UTF-8 byte), so a string far over a limit costs nothing to refuse.

use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use crate::core::json::Value;

/// Longest Session id or message id, in UTF-8 bytes.
pub const MAX_ID_BYTES: usize = 256;
/// Longest directory path, in UTF-8 bytes.
pub const MAX_CWD_BYTES: usize = 4096;
/// Deepest tree a runtime can be configured for (`maxDepth`).
pub const MAX_TREE_DEPTH: u32 = 64;
/// Most bytes one store read may answer, all events together.
pub const MAX_READ_BYTES: usize = 256 << 20;
/// Largest stored event a store read may answer (above every configurable
/// content and payload limit): reads honour what any runtime durably wrote,
/// whatever its limits, so a tree outlives the options it was written under.
pub const MAX_STORED_EVENT_BYTES: usize = 48 << 20;
/// What a held event costs in memory beyond its payload and type (its seq,
/// its strings' and vectors' headers): counted against every bound on events,
/// so a call with millions of tiny events is measured by what it takes.
pub const EVENT_OVERHEAD_BYTES: usize = 128;
/// What a `MemoryStore` holds at most by default (every event, measured as
/// [`stored_size`]); configurable up to [`MAX_MEMORY_STORE_BYTES`].
pub const DEFAULT_MEMORY_STORE_BYTES: usize = 256 << 20;
/// The most a `MemoryStore` may be configured to hold (half of a wasm heap).
pub const MAX_MEMORY_STORE_BYTES: usize = (1 << 31) - 1;

/// What an event costs a store that holds it in memory: its payload as
/// [`memory_size`] measures it, its type, and [`EVENT_OVERHEAD_BYTES`].
pub fn stored_size(event: &crate::core::event::SessionEvent) -> usize {
    memory_size(&event.payload).saturating_add(event.kind.len()).saturating_add(EVENT_OVERHEAD_BYTES)
}

/// What a value takes on the heap: a [`Value`] per node (16 bytes in wasm32,
/// 32 natively), each string's bytes, and each object key. Unlike
/// [`json_size`] (one byte per value, close to the JSON text), this is what
/// a store that holds values pays: a payload of many small numbers costs many
/// times its JSON size.
pub fn memory_size(value: &Value) -> usize {
    let node = std::mem::size_of::<Value>();
    let key = std::mem::size_of::<String>();
    let mut size = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        size = size.saturating_add(node);
        match v {
            Value::String(s) => size = size.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(entries) => {
                for (k, item) in entries {
                    size = size.saturating_add(key + k.len());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    size
}

/// Deepest nesting of JSON data (payloads, options, tool input).
pub const MAX_NESTING: usize = 128;
/// Longest event type, in UTF-8 bytes.
pub const MAX_EVENT_TYPE_BYTES: usize = 256;

/// The configurable limits of one runtime (see the module doc for the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub label_bytes: usize,
    pub prompt_bytes: usize,
    pub message_bytes: usize,
    pub content_blocks: usize,
    pub event_payload_bytes: usize,
    pub tool_calls_per_reply: usize,
    /// Input one member may hold before its turns take it (settlement notices always land).
    pub member_queue_bytes: usize,
    /// The same over the whole runtime: a runtime's heap holds every member's queue.
    pub queue_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            label_bytes: 1 << 10,
            prompt_bytes: 1 << 20,
            message_bytes: 1 << 20,
            content_blocks: 256,
            event_payload_bytes: 4 << 20,
            tool_calls_per_reply: 64,
            member_queue_bytes: 64 << 20,
            queue_bytes: 256 << 20,
        }
    }
}

/// One configurable limit: its JS option name, floor and ceiling.
#[derive(Clone, Copy, Debug)]
pub struct LimitSpec {
    pub key: &'static str,
    pub min: usize,
    pub max: usize,
}

/// Every configurable limit, with the range a runtime may set it to.
pub const CONFIGURABLE: &[LimitSpec] = &[
    LimitSpec { key: "labelBytes", min: 64, max: 64 << 10 },
    LimitSpec { key: "promptBytes", min: 1 << 10, max: 16 << 20 },
    LimitSpec { key: "messageBytes", min: 1 << 10, max: 16 << 20 },
    LimitSpec { key: "contentBlocks", min: 1, max: 4096 },
    LimitSpec { key: "eventPayloadBytes", min: 64 << 10, max: 32 << 20 },
    LimitSpec { key: "toolCallsPerReply", min: 1, max: 1024 },
    LimitSpec { key: "memberQueueBytes", min: 1 << 20, max: 1 << 30 },
    LimitSpec { key: "queueBytes", min: 1 << 20, max: (1 << 31) - 1 },
];

impl Limits {
    /// The current value of a configurable limit by its JS name.
    pub fn get(&self, key: &str) -> Option<usize> {
        Some(match key {
            "labelBytes" => self.label_bytes,
            "promptBytes" => self.prompt_bytes,
            "messageBytes" => self.message_bytes,
            "contentBlocks" => self.content_blocks,
            "eventPayloadBytes" => self.event_payload_bytes,
            "toolCallsPerReply" => self.tool_calls_per_reply,
            "memberQueueBytes" => self.member_queue_bytes,
            "queueBytes" => self.queue_bytes,
            _ => return None,
        })
    }

    /// Sets a configurable limit by its JS name. Out of its range is a bad
    /// option, `INVALID_ARGUMENT` naming it (`LIMIT_EXCEEDED` is for values
    /// over a limit, not for the limit itself).
    pub fn set(&mut self, key: &str, value: usize) -> Result<()> {
        let spec = CONFIGURABLE
            .iter()
            .find(|s| s.key == key)
            .ok_or_else(|| crate::err!(InvalidArgument, "there is no limit named {key}", key = Quoted(key)))?;
        if value < spec.min || value > spec.max {
            return Err(crate::err!(
                InvalidArgument,
                "limits.{key} must be from {} to {}, not {value}",
                spec.min,
                spec.max
            ));
        }
        let slot = match key {
            "labelBytes" => &mut self.label_bytes,
            "promptBytes" => &mut self.prompt_bytes,
            "messageBytes" => &mut self.message_bytes,
            "contentBlocks" => &mut self.content_blocks,
            "eventPayloadBytes" => &mut self.event_payload_bytes,
            "memberQueueBytes" => &mut self.member_queue_bytes,
            "queueBytes" => &mut self.queue_bytes,
            _ => &mut self.tool_calls_per_reply,
        };
        *slot = value;
        Ok(())
    }

    /// A label within `labelBytes`.
    pub fn check_label(&self, label: &str) -> Result<()> {
        check_bytes("the label", label.len(), "labelBytes", self.label_bytes)
    }

    /// What admission checks of an activation: label, prompt and `maxDepth`.
    pub fn check_activation(&self, label: &str, prompt: &Value, max_depth: Option<f64>) -> Result<()> {
        self.check_label(label)?;
        self.check_prompt(prompt)?;
        max_depth.map_or(Ok(()), |d| Self::check_depth("maxDepth", d))
    }

    /// A prompt (already normalised to blocks) within `promptBytes` and `contentBlocks`.
    pub fn check_prompt(&self, prompt: &Value) -> Result<()> {
        self.check_content("the prompt", prompt, "promptBytes", self.prompt_bytes)
    }

    /// A message (already normalised to blocks) within `messageBytes` and `contentBlocks`.
    pub fn check_message(&self, content: &Value) -> Result<()> {
        self.check_content("the message", content, "messageBytes", self.message_bytes)
    }

    fn check_content(&self, what: &str, content: &Value, key: &str, max: usize) -> Result<()> {
        if let Value::Array(blocks) = content {
            if blocks.len() > self.content_blocks {
                return Err(exceeded(format!(
                    "{what} has {} content blocks; the limit contentBlocks is {}",
                    blocks.len(),
                    self.content_blocks
                )));
            }
        }
        let size = json_size(content);
        check_bytes(what, size, key, max)?;
        crate::core::heap::admit(what, size)
    }

    /// An event payload within `eventPayloadBytes`.
    pub fn check_payload(&self, what: &str, payload: &Value) -> Result<()> {
        check_bytes(what, json_size(payload), "eventPayloadBytes", self.event_payload_bytes)
    }

    /// A `maxDepth` within [`MAX_TREE_DEPTH`].
    pub fn check_depth(what: &str, depth: f64) -> Result<()> {
        if depth > MAX_TREE_DEPTH as f64 {
            return Err(exceeded(format!(
                "{what} is {}; the limit maxDepth is {MAX_TREE_DEPTH}",
                crate::core::json::number_text(depth)
            )));
        }
        Ok(())
    }
}

/// `what` (a Session id, a message id) within [`MAX_ID_BYTES`].
pub fn check_id(what: &str, id: &str) -> Result<()> {
    check_bytes(what, id.len(), "idBytes", MAX_ID_BYTES)
}

/// The `LIMIT_EXCEEDED` sentence for a size over its limit.
pub fn check_bytes(what: &str, bytes: usize, key: &str, max: usize) -> Result<()> {
    if bytes > max {
        return Err(exceeded(format!("{what} is {bytes} bytes; the limit {key} is {max}")));
    }
    Ok(())
}

/// A `LIMIT_EXCEEDED` error.
pub fn exceeded(message: String) -> SubagentError {
    SubagentError::new(ErrorCode::LimitExceeded, message)
}

/// The measured size of JSON data: the UTF-8 bytes of every string and key,
/// plus one per value. Iterative, so any nesting is measured without recursion.
pub fn json_size(value: &Value) -> usize {
    let mut size = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        size = size.saturating_add(1);
        match v {
            Value::String(s) => size = size.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(entries) => {
                for (k, item) in entries {
                    size = size.saturating_add(k.len());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::result::{normalize_content, text_block};

    #[test]
    fn sizes_count_string_and_key_bytes_plus_one_per_value() {
        assert_eq!(json_size(&Value::Null), 1);
        assert_eq!(json_size(&Value::from("€")), 4);
        // [{type:"text", text:"ab"}]: array 1, object 1, "type" 4 + "text" 1+4, "text" 4 + "ab" 1+2.
        assert_eq!(json_size(&Value::Array(vec![text_block("ab")])), 18);
        let mut deep = Value::Null;
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(json_size(&deep), 100_001);
        // Dropping it iteratively is the caller's business; leak it rather than recurse 100k frames.
        std::mem::forget(deep);
    }

    #[test]
    fn content_over_a_limit_is_refused_naming_the_limit() {
        let limits = Limits::default();
        let ok = normalize_content(Value::from("x".repeat(1000))).unwrap();
        assert!(limits.check_prompt(&ok).is_ok());
        let big = normalize_content(Value::from("€".repeat(400_000))).unwrap();
        let e = limits.check_prompt(&big).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        assert!(e.message.contains("promptBytes is 1048576"), "{}", e.message);
        let many = Value::Array((0..257).map(|_| text_block("a")).collect());
        let e = limits.check_message(&many).unwrap_err();
        assert!(e.message.contains("257 content blocks; the limit contentBlocks is 256"), "{}", e.message);
        let e = limits.check_label(&"l".repeat(1025)).unwrap_err();
        assert!(e.message.contains("labelBytes is 1024"), "{}", e.message);
        assert!(Limits::check_depth("maxDepth", 64.0).is_ok());
        assert_eq!(Limits::check_depth("maxDepth", 65.0).unwrap_err().code, ErrorCode::LimitExceeded);
        assert!(check_id("the Session id", &"i".repeat(257)).is_err());
    }

    #[test]
    fn limits_are_configurable_within_their_ranges() {
        let mut limits = Limits::default();
        limits.set("promptBytes", 2048).unwrap();
        assert_eq!(limits.get("promptBytes"), Some(2048));
        let e = limits.set("promptBytes", 1).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::InvalidArgument, "limits.promptBytes must be from 1024 to 16777216, not 1")
        );
        assert_eq!(limits.set("promptBytes", 17 << 20).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(limits.set("contentBlocks", 0).unwrap_err().code, ErrorCode::InvalidArgument);
        assert_eq!(limits.set("nope", 1).unwrap_err().code, ErrorCode::InvalidArgument);
        for spec in CONFIGURABLE {
            assert!(limits.get(spec.key).is_some());
            let default = Limits::default().get(spec.key).unwrap();
            assert!(spec.min <= default && default <= spec.max, "{}", spec.key);
        }
    }
}
