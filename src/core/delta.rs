//! Live output a host streams while a turn runs: [`Part`]s, published as
//! `subagent/delta` events and never written to a log (the turn's final
//! output is, at its end).

use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::json::Value;

/// Longest `text` of one part, in UTF-8 bytes: a host streams many small parts.
pub const MAX_PART_BYTES: usize = 64 << 10;

/// What a part carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// Assistant text as it arrives.
    TextDelta,
    /// Reasoning text as it arrives.
    ReasoningDelta,
}

impl PartKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PartKind::TextDelta => "text-delta",
            PartKind::ReasoningDelta => "reasoning-delta",
        }
    }
}

/// One streamed part: `{ type: 'text-delta' | 'reasoning-delta', text }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub kind: PartKind,
    pub text: String,
}

impl Part {
    /// Reads a part; anything else is `INVALID_ARGUMENT`, text over
    /// [`MAX_PART_BYTES`] `LIMIT_EXCEEDED`, each naming what is wrong.
    pub fn from_value(value: &Value) -> Result<Part> {
        let invalid = |m: String| SubagentError::new(ErrorCode::InvalidArgument, m);
        if value.as_object().is_none() {
            return Err(invalid(format!("a part must be an object {{type, text}}, not {}", value.kind())));
        }
        let kind = match value.get("type") {
            Some(Value::String(t)) if t == "text-delta" => PartKind::TextDelta,
            Some(Value::String(t)) if t == "reasoning-delta" => PartKind::ReasoningDelta,
            Some(Value::String(t)) => {
                return Err(invalid(format!(
                    "part.type must be \"text-delta\" or \"reasoning-delta\", not {}",
                    crate::core::name::quote_truncated(t, 40)
                )))
            }
            other => {
                return Err(invalid(format!(
                    "part.type must be \"text-delta\" or \"reasoning-delta\", not {}",
                    other.map_or("missing", Value::kind)
                )))
            }
        };
        let text = match value.get("text") {
            Some(Value::String(t)) => t,
            other => {
                return Err(invalid(format!(
                    "part.text must be a string, not {}",
                    other.map_or("missing", Value::kind)
                )))
            }
        };
        if text.len() > MAX_PART_BYTES {
            return Err(SubagentError::new(
                ErrorCode::LimitExceeded,
                format!("part.text is {} bytes; the limit partBytes is {MAX_PART_BYTES}", text.len()),
            ));
        }
        Ok(Part { kind, text: text.clone() })
    }

    pub fn to_value(&self) -> Value {
        Value::object([
            ("type", Some(Value::from(self.kind.as_str()))),
            ("text", Some(Value::from(self.text.as_str()))),
        ])
    }
}

/// Longest key, tool name of a run's tool call, in UTF-8 bytes.
pub const MAX_TOOL_KEY_BYTES: usize = 256;

/// What an external run streams through its start request's `emit`: text as
/// a turn's [`Part`]s do, and its own tool calls (an external agent runs
/// tools the tree never sees otherwise). Live only, never logged.
#[derive(Clone, Debug, PartialEq)]
pub enum RunPart {
    /// `{ type: 'text-delta' | 'reasoning-delta', text }`.
    Delta(Part),
    /// `{ type: 'tool-call', id, tool, input? }`: a call began (`id` is the run's own).
    ToolCall { key: String, tool: String, input: Option<Value> },
    /// `{ type: 'tool-result', id, output?, isError? }`: the call `id` ended.
    ToolResult { key: String, output: String, is_error: bool },
}

impl RunPart {
    /// Reads a run's part; anything else is `INVALID_ARGUMENT` (or
    /// `LIMIT_EXCEEDED` for text over [`MAX_PART_BYTES`]), naming what is wrong.
    pub fn from_value(value: &Value) -> Result<RunPart> {
        let invalid = |m: String| SubagentError::new(ErrorCode::InvalidArgument, m);
        let text = |key: &str, max: usize, required: bool| -> Result<Option<String>> {
            match value.get(key) {
                None | Some(Value::Null) if !required => Ok(None),
                Some(Value::String(t)) if t.len() <= max => Ok(Some(t.clone())),
                Some(Value::String(t)) => Err(SubagentError::new(
                    ErrorCode::LimitExceeded,
                    format!("part.{key} is {} bytes; the limit is {max}", t.len()),
                )),
                other => {
                    Err(invalid(format!("part.{key} must be a string, not {}", other.map_or("missing", Value::kind))))
                }
            }
        };
        match value.get("type") {
            Some(Value::String(t)) if t == "tool-call" => Ok(RunPart::ToolCall {
                key: text("id", MAX_TOOL_KEY_BYTES, true)?.unwrap_or_default(),
                tool: text("tool", MAX_TOOL_KEY_BYTES, true)?.unwrap_or_default(),
                input: value.get("input").filter(|v| **v != Value::Null).cloned(),
            }),
            Some(Value::String(t)) if t == "tool-result" => Ok(RunPart::ToolResult {
                key: text("id", MAX_TOOL_KEY_BYTES, true)?.unwrap_or_default(),
                output: text("output", MAX_PART_BYTES, false)?.unwrap_or_default(),
                is_error: match value.get("isError") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => {
                        return Err(invalid(format!("part.isError must be a boolean, not {}", other.kind())))
                    }
                },
            }),
            _ => Part::from_value(value).map(RunPart::Delta).map_err(|mut e| {
                if e.code == ErrorCode::InvalidArgument && e.message.starts_with("part.type") {
                    e.message = e.message.replace(
                        "\"text-delta\" or \"reasoning-delta\"",
                        "\"text-delta\", \"reasoning-delta\", \"tool-call\" or \"tool-result\"",
                    );
                }
                e
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_strictly() {
        let v = |t: &str| crate::core::json::parse(t, 8).unwrap();
        let p = Part::from_value(&v(r#"{"type":"text-delta","text":"Hel"}"#)).unwrap();
        assert_eq!((p.kind, p.text.as_str()), (PartKind::TextDelta, "Hel"));
        assert_eq!(Part::from_value(&p.to_value()).unwrap(), p);
        for (text, message) in [
            (
                r#"{"type":"image","text":"x"}"#,
                "part.type must be \"text-delta\" or \"reasoning-delta\", not \"image\"",
            ),
            (r#"{"text":"x"}"#, "part.type must be \"text-delta\" or \"reasoning-delta\", not missing"),
            (r#"{"type":"text-delta","text":7}"#, "part.text must be a string, not a number"),
            (r#""text""#, "a part must be an object {type, text}, not a string"),
        ] {
            let e = Part::from_value(&v(text)).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, message), "{text}");
        }
        let huge = Value::object([
            ("type", Some(Value::from("text-delta"))),
            ("text", Some(Value::from("x".repeat(MAX_PART_BYTES + 1)))),
        ]);
        assert_eq!(Part::from_value(&huge).unwrap_err().code, ErrorCode::LimitExceeded);
    }

    #[test]
    fn a_runs_parts_are_read_strictly() {
        let v = |t: &str| crate::core::json::parse(t, 8).unwrap();
        let part = |t: &str| RunPart::from_value(&v(t));
        assert_eq!(
            part(r#"{"type":"text-delta","text":"Hi"}"#).unwrap(),
            RunPart::Delta(Part { kind: PartKind::TextDelta, text: "Hi".into() })
        );
        assert_eq!(
            part(r#"{"type":"tool-call","id":"c1","tool":"Read","input":{"path":"a"}}"#).unwrap(),
            RunPart::ToolCall { key: "c1".into(), tool: "Read".into(), input: Some(v(r#"{"path":"a"}"#)) }
        );
        assert_eq!(
            part(r#"{"type":"tool-result","id":"c1","isError":true}"#).unwrap(),
            RunPart::ToolResult { key: "c1".into(), output: String::new(), is_error: true }
        );
        for (text, message) in [
            (r#"{"type":"tool-call","tool":"Read"}"#, "part.id must be a string, not missing"),
            (r#"{"type":"tool-result","id":"c1","isError":"yes"}"#, "part.isError must be a boolean, not a string"),
            (
                r#"{"type":"image"}"#,
                "part.type must be \"text-delta\", \"reasoning-delta\", \"tool-call\" or \"tool-result\", not \"image\"",
            ),
        ] {
            let e = part(text).unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, message), "{text}");
        }
    }
}
