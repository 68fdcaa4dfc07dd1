//! A member's agent options: the host Agent's provider, model, reasoning
//! effort and output-token overrides (seed 003: "Optional host-Agent
//! provider, model, reasoning-effort, and output-token overrides ...;
//! in-process providers merge them over the parent Agent's options when they
//! create the child").
//!
//! A root's come from `openRoot` and live in its log as `agent/options`
//! events (the last one counts); a local child's effective options (its own
//! over its creator's) ride on its `session/start`, written before its first
//! turn, so every turn and every cold resume sees the same ones.

use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::json::{Value, MAX_SAFE_INTEGER};

/// The keys an `agentOptions` object may have.
pub const KEYS: [&str; 4] = ["provider", "model", "reasoningEffort", "maxOutputTokens"];

/// Longest provider, model or effort name, in UTF-8 bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// What a host Agent runs a member's turns with; each field overrides its default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentOptions {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    pub max_output_tokens: Option<u64>,
}

impl AgentOptions {
    /// Reads `{ provider?, model?, reasoningEffort?, maxOutputTokens? }`
    /// strictly: an unknown key, an empty or over-long name, or a token count
    /// that is not a positive safe integer is `INVALID_ARGUMENT` naming it.
    pub fn from_value(value: &Value, what: &str) -> Result<AgentOptions> {
        let invalid = |m: String| SubagentError::new(ErrorCode::InvalidArgument, m);
        if value.as_object().is_none() {
            return Err(invalid(format!(
                "{what} must be an object {{ provider?, model?, reasoningEffort?, maxOutputTokens? }}, not {}",
                value.kind()
            )));
        }
        crate::core::listing::check_fields(value, &KEYS, what)?;
        let name = |key: &str| -> Result<Option<String>> {
            match value.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_NAME_BYTES => Ok(Some(s.clone())),
                Some(Value::String(_)) => {
                    Err(invalid(format!("{what}.{key} must be a non-empty string of at most {MAX_NAME_BYTES} bytes")))
                }
                Some(other) => Err(invalid(format!("{what}.{key} must be a string, not {}", other.kind()))),
            }
        };
        let max_output_tokens = match value.get("maxOutputTokens") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_SAFE_INTEGER => Some(*n as u64),
            Some(other) => {
                return Err(invalid(format!(
                    "{what}.maxOutputTokens must be a whole number from 1 to 2^53 - 1, not {}",
                    match other {
                        Value::Number(n) => crate::core::json::number_text(*n),
                        other => other.kind().to_owned(),
                    }
                )))
            }
        };
        Ok(AgentOptions {
            provider: name("provider")?,
            model: name("model")?,
            reasoning_effort: name("reasoningEffort")?,
            max_output_tokens,
        })
    }

    /// `{ provider?, model?, reasoningEffort?, maxOutputTokens? }`, set fields only.
    pub fn to_value(&self) -> Value {
        let text = |s: &Option<String>| s.as_deref().map(Value::from);
        Value::object([
            ("provider", text(&self.provider)),
            ("model", text(&self.model)),
            ("reasoningEffort", text(&self.reasoning_effort)),
            ("maxOutputTokens", self.max_output_tokens.map(Value::from)),
        ])
    }

    pub fn is_empty(&self) -> bool {
        *self == AgentOptions::default()
    }

    /// These options over `base`: each field set here wins, the rest are `base`'s.
    pub fn over(&self, base: &AgentOptions) -> AgentOptions {
        AgentOptions {
            provider: self.provider.clone().or_else(|| base.provider.clone()),
            model: self.model.clone().or_else(|| base.model.clone()),
            reasoning_effort: self.reasoning_effort.clone().or_else(|| base.reasoning_effort.clone()),
            max_output_tokens: self.max_output_tokens.or(base.max_output_tokens),
        }
    }

    /// `own` over `base`, either absent; `None` when nothing is set.
    pub fn merged(own: Option<&AgentOptions>, base: Option<&AgentOptions>) -> Option<AgentOptions> {
        let merged = match (own, base) {
            (Some(own), Some(base)) => own.over(base),
            (Some(one), None) | (None, Some(one)) => one.clone(),
            (None, None) => return None,
        };
        (!merged.is_empty()).then_some(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Value {
        crate::core::json::parse(text, 8).unwrap()
    }

    #[test]
    fn options_are_read_strictly() {
        let o = AgentOptions::from_value(&v(r#"{"model":"gpt-5.4","maxOutputTokens":800}"#), "agentOptions").unwrap();
        assert_eq!(
            (o.model.as_deref(), o.max_output_tokens, o.provider.as_deref()),
            (Some("gpt-5.4"), Some(800), None)
        );
        assert_eq!(AgentOptions::from_value(&o.to_value(), "agentOptions").unwrap(), o);
        for (text, message) in [
            (
                r#"{"modle":"x"}"#,
                "agentOptions has an unknown field \"modle\"; did you mean model? agentOptions takes provider, model, reasoningEffort, maxOutputTokens",
            ),
            (r#"{"model":""}"#, "agentOptions.model must be a non-empty string of at most 256 bytes"),
            (r#"{"reasoningEffort":3}"#, "agentOptions.reasoningEffort must be a string, not a number"),
            (r#"{"maxOutputTokens":0}"#, "agentOptions.maxOutputTokens must be a whole number from 1 to 2^53 - 1, not 0"),
            (r#"[1]"#, "agentOptions must be an object { provider?, model?, reasoningEffort?, maxOutputTokens? }, not an array"),
        ] {
            let e = AgentOptions::from_value(&v(text), "agentOptions").unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::InvalidArgument, message), "{text}");
        }
    }

    #[test]
    fn a_childs_options_merge_over_its_creators() {
        let parent = AgentOptions { provider: Some("openai".into()), model: Some("big".into()), ..Default::default() };
        let child = AgentOptions { model: Some("small".into()), max_output_tokens: Some(100), ..Default::default() };
        let merged = AgentOptions::merged(Some(&child), Some(&parent)).unwrap();
        assert_eq!(
            merged,
            AgentOptions {
                provider: Some("openai".into()),
                model: Some("small".into()),
                reasoning_effort: None,
                max_output_tokens: Some(100)
            }
        );
        assert_eq!(AgentOptions::merged(None, Some(&parent)), Some(parent.clone()));
        assert_eq!(AgentOptions::merged(None, None), None);
        assert_eq!(AgentOptions::merged(Some(&AgentOptions::default()), None), None);
    }
}
