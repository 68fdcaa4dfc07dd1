//! What a run produces: [`SubagentResult`], stop reasons, and the output rule.

use crate::core::json::Value;

pub use crate::core::stop::StopReason;

/// Longest diagnostic, in UTF-8 bytes.
pub const MAX_DIAGNOSTIC_BYTES: usize = 4096;

/// The terminal outcome of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct SubagentResult {
    /// Content blocks (a JSON array) of the final assistant output.
    pub output: Value,
    /// The schema-valid structured value, when an output schema was satisfied.
    pub structured: Option<Value>,
    /// Non-assistant failure detail, at most 4096 UTF-8 bytes.
    pub diagnostic: Option<String>,
    pub stop_reason: StopReason,
    /// What the turn or external run reported spending.
    pub usage: Option<crate::core::usage::Usage>,
    /// An activation's result: its member's own and subtree totals, read
    /// from the logs once it settled.
    pub totals: Option<crate::core::usage::Rollup>,
}

impl SubagentResult {
    pub fn new(stop_reason: impl Into<StopReason>) -> Self {
        SubagentResult {
            output: Value::Array(Vec::new()),
            structured: None,
            diagnostic: None,
            stop_reason: stop_reason.into(),
            usage: None,
            totals: None,
        }
    }

    pub fn with_diagnostic(mut self, diagnostic: impl Into<String>) -> Self {
        self.diagnostic = Some(cut_diagnostic(diagnostic.into()));
        self
    }

    /// The output's text blocks joined, for notices and listings.
    pub fn output_text(&self) -> String {
        content_text(&self.output)
    }
}

/// Cuts a diagnostic to [`MAX_DIAGNOSTIC_BYTES`] on a character boundary.
pub fn cut_diagnostic(mut text: String) -> String {
    if text.len() > MAX_DIAGNOSTIC_BYTES {
        let mut cut = MAX_DIAGNOSTIC_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

/// The final output: the last assistant message with non-empty content
/// (usage-only and empty messages are skipped), else the accumulated text
/// stream as one text block, else no blocks.
pub fn final_output(messages: &[Value], text: Option<&str>) -> Value {
    if let Some(content) = messages.iter().rev().find(|m| !is_empty_content(m)) {
        return match content {
            Value::String(s) => Value::Array(vec![text_block(s)]),
            other => other.clone(),
        };
    }
    match text {
        Some(t) if !t.is_empty() => Value::Array(vec![text_block(t)]),
        _ => Value::Array(Vec::new()),
    }
}

fn is_empty_content(content: &Value) -> bool {
    match content {
        Value::String(s) => s.is_empty(),
        Value::Array(blocks) => blocks.iter().all(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").and_then(Value::as_str).unwrap_or_default().is_empty(),
            Some(_) => false,
            None => true,
        }),
        _ => true,
    }
}

/// `{ type: 'text', text }`.
pub fn text_block(text: &str) -> Value {
    Value::object([("type", Some(Value::from("text"))), ("text", Some(Value::from(text)))])
}

/// Content given as a string or blocks, normalised to blocks.
pub fn normalize_content(content: Value) -> Option<Value> {
    match content {
        Value::String(s) => Some(Value::Array(vec![text_block(&s)])),
        Value::Array(blocks) if blocks.iter().all(|b| b.get("type").and_then(Value::as_str).is_some()) => {
            Some(Value::Array(blocks))
        }
        _ => None,
    }
}

pub use crate::core::turns::content_text;

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str) -> Value {
        Value::Array(vec![text_block(text)])
    }

    #[test]
    fn output_is_the_last_non_empty_message_else_text_else_empty() {
        let usage_only = Value::Array(vec![]);
        let empty_text = blocks("");
        assert_eq!(
            final_output(&[blocks("first"), blocks("last"), usage_only.clone(), empty_text], Some("acc")),
            blocks("last")
        );
        assert_eq!(final_output(&[usage_only], Some("accumulated")), blocks("accumulated"));
        assert_eq!(final_output(&[], None), Value::Array(vec![]));
        assert_eq!(final_output(&[], Some("")), Value::Array(vec![]));
    }

    #[test]
    fn diagnostics_are_cut_on_a_character_boundary() {
        let long = "é".repeat(3000); // 6000 bytes
        let cut = cut_diagnostic(long);
        assert!(cut.len() <= MAX_DIAGNOSTIC_BYTES && cut.len() >= MAX_DIAGNOSTIC_BYTES - 1);
        assert!(cut.chars().all(|c| c == 'é'));
        assert_eq!(cut_diagnostic("short".into()), "short");
    }
}
