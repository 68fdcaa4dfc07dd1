//! Errors with stable codes.
//!
//! Every failure the library reports carries an [`ErrorCode`] (an UPPER_SNAKE
//! string across the JS boundary) and one sentence naming the offending value.
//! Failures that came from a host callback keep the host's own value as an
//! opaque [`HostCause`], so the bridge can hand the original JS error back as
//! `cause` without the core knowing what JS is.

use std::any::Any;
use std::fmt;
use std::rc::Rc;

/// A host value (for the wasm bridge, a `JsValue`) kept alongside an error.
#[derive(Clone)]
pub struct HostCause(pub Rc<dyn Any>);

impl fmt::Debug for HostCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HostCause(..)")
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// Stable error codes. Codes the seeds' harness uses keep its meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($(#[$doc])* $variant,)* }

        impl ErrorCode {
            /// Every code, in declaration order (the TypeScript union is checked against it).
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text,)* }
            }
        }
    };
}

codes! {
    /// No provider is registered under the requested name.
    NoProvider = "NO_PROVIDER",
    /// A provider with this name is already registered.
    DuplicateProvider = "DUPLICATE_PROVIDER",
    /// The provider lacks a requested start-time capability, or has no execution method.
    UnsupportedCapability = "UNSUPPORTED_CAPABILITY",
    /// Continuable children cannot be created or resumed here.
    ContinuationUnavailable = "CONTINUATION_UNAVAILABLE",
    /// The store failed or is missing.
    PersistenceUnavailable = "PERSISTENCE_UNAVAILABLE",
    /// The caller does not hold the authority the operation needs.
    Unauthorized = "UNAUTHORIZED",
    /// The tree is draining; admission is closed.
    Draining = "DRAINING",
    /// The activation is being torn down.
    ActivationClosing = "ACTIVATION_CLOSING",
    /// The tree already has as many live children as its capacity allows.
    ActivationLimitReached = "ACTIVATION_LIMIT_REACHED",
    /// Releasing an activation's resources failed.
    ActivationTeardownFailed = "ACTIVATION_TEARDOWN_FAILED",
    /// A child with this Session id already exists.
    DuplicateChild = "DUPLICATE_CHILD",
    /// The target cannot be resumed from its log.
    NotResumable = "NOT_RESUMABLE",
    /// The target is an external execution and takes no further input.
    NotContinuable = "NOT_CONTINUABLE",
    /// The activation's input is closed (a structured result was captured).
    InputClosed = "INPUT_CLOSED",
    /// The parent is not a live member.
    ParentUnavailable = "PARENT_UNAVAILABLE",
    /// The caller cancelled.
    Cancelled = "CANCELLED",
    /// The child would be deeper than the depth limit allows.
    DepthExceeded = "DEPTH_EXCEEDED",
    /// A name breaks the grammar (including `lead`).
    InvalidName = "INVALID_NAME",
    /// A name is taken or reserved among the creator's children.
    DuplicateName = "DUPLICATE_NAME",
    /// A name resolves to nobody.
    UnknownAgent = "UNKNOWN_AGENT",
    /// A stored catalog event is not a valid payload.
    CorruptCatalog = "CORRUPT_CATALOG",
    /// An argument has the wrong type or shape.
    InvalidArgument = "INVALID_ARGUMENT",
    /// An append did not continue the log at its current length.
    AppendConflict = "APPEND_CONFLICT",
    /// A value is over one of the documented size or count limits (`crate::core::limits`).
    LimitExceeded = "LIMIT_EXCEEDED",
    /// A budget on the target's chain of creators is spent (`crate::core::budget`).
    BudgetExhausted = "BUDGET_EXHAUSTED",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One failure: a stable code, a sentence, and optionally the host's original error.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct SubagentError {
    pub code: ErrorCode,
    pub message: String,
    pub cause: Option<HostCause>,
}

impl SubagentError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        SubagentError { code, message: message.into(), cause: None }
    }

    pub fn with_cause(mut self, cause: HostCause) -> Self {
        self.cause = Some(cause);
        self
    }

    pub fn cancelled() -> Self {
        SubagentError::new(ErrorCode::Cancelled, "the operation was cancelled")
    }
}

impl PartialEq for SubagentError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message
    }
}

pub type Result<T, E = SubagentError> = std::result::Result<T, E>;

/// `"text"` in an error sentence, escaped as `{:?}` escapes it wherever that
/// matters for a reader: quotes, backslashes, control characters, and the
/// invisible format characters (bidi overrides, zero-width spaces and the
/// like) that could hide or reorder the sentence around the text, and the
/// Hangul fillers that render as blanks. Other characters stand as they
/// are. Not `{:?}` itself: std's `Debug` for `str` brings Unicode's
/// printable tables into the wasm for the same job (~3 KB).
#[derive(Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        f.write_str("\"")?;
        let mut plain = 0;
        for (at, c) in text.char_indices() {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                '\0' => Some("\\0"),
                _ if hidden(c) => None,
                _ => continue,
            };
            f.write_str(&text[plain..at])?;
            plain = at + c.len_utf8();
            match short {
                Some(escape) => f.write_str(escape)?,
                // Lower-case hex, as `{:?}` writes it.
                None => write!(f, "\\u{{{:x}}}", c as u32)?,
            }
        }
        f.write_str(&text[plain..])?;
        f.write_str("\"")
    }
}

/// Control characters and the format characters that render as nothing or
/// change the direction of the text around them.
fn hidden(c: char) -> bool {
    matches!(
        c as u32,
        0..=0x1f
            | 0x7f..=0x9f
            | 0xad
            | 0x34f
            | 0x61c
            | 0x115f..=0x1160
            | 0x17b4..=0x17b5
            | 0x180b..=0x180f
            | 0x200b..=0x200f
            | 0x2028..=0x202e
            | 0x2060..=0x206f
            | 0x3164
            | 0xfe00..=0xfe0f
            | 0xfeff
            | 0xffa0
            | 0xfff0..=0xfffb
            | 0x1bca0..=0x1bca3
            | 0x1d173..=0x1d17a
            | 0xe0000..=0xe0fff
    )
}

/// Shorthand for building an error: `err!(InvalidName, "name {} ...", Quoted(x))`.
#[macro_export]
macro_rules! err {
    ($code:ident, $($fmt:tt)+) => {
        $crate::core::error::SubagentError::new($crate::core::error::ErrorCode::$code, format!($($fmt)+))
    };
}

#[cfg(test)]
mod tests {
    use super::Quoted;

    #[test]
    fn quoting_matches_debug_for_ordinary_text_and_escapes() {
        for text in ["", "plain", "a\"b\\c", "line\nbreak\ttab\r\0", "\u{1}\u{1f}\u{7f}", "é漢字 emoji 🦀", "agent-1/x"]
        {
            assert_eq!(Quoted(text).to_string(), format!("{text:?}"), "{text:?}");
        }
    }

    #[test]
    fn invisible_and_bidi_characters_are_escaped() {
        assert_eq!(Quoted("a\u{202e}b").to_string(), "\"a\\u{202e}b\"");
        assert_eq!(
            Quoted("\u{200b}\u{2066}x\u{2069}\u{feff}").to_string(),
            "\"\\u{200b}\\u{2066}x\\u{2069}\\u{feff}\""
        );
        assert_eq!(Quoted("\u{85}\u{2028}\u{e0041}").to_string(), "\"\\u{85}\\u{2028}\\u{e0041}\"");
        // Each escaped as `{:?}` escapes it.
        for c in ['\u{ad}', '\u{61c}', '\u{200f}', '\u{202a}', '\u{2060}', '\u{fff9}', '\u{e0001}'] {
            let text = c.to_string();
            assert_eq!(Quoted(&text).to_string(), format!("{text:?}"), "{text:?}");
        }
    }
}
