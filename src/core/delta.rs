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
}
