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
    /// A value is over one of the documented size or count limits (`crate::limits`).
    LimitExceeded = "LIMIT_EXCEEDED",
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

/// Shorthand for building an error: `err!(InvalidName, "name {:?} ...", x)`.
#[macro_export]
macro_rules! err {
    ($code:ident, $($fmt:tt)+) => {
        $crate::error::SubagentError::new($crate::error::ErrorCode::$code, format!($($fmt)+))
    };
}
