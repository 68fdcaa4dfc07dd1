//! Why a turn or run stopped ([`StopReason`]): a leaf of the core, so the
//! result, the usage rollups and the runtime all read it without a cycle.

/// Why a turn or run stopped: the reasons the seeds name, and a host's own.
/// The set is open: a backend may add reasons ([`StopReason::Other`]), and
/// consumers fall through on ones they do not know. On the wire (logs, the JS
/// API) each is its string: [`StopReason::as_str`] and [`StopReason::from`]
/// are exact inverses, so a log written with a host's own reason reads back
/// as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `completed`
    #[default]
    Completed,
    /// `aborted`: interrupted, disposed, drained, or stopped by a signal.
    Aborted,
    /// `error`: the host failed, or a structured result did not validate.
    Error,
    /// `max-tokens`
    MaxTokens,
    /// `refusal`
    Refusal,
    /// `budget-exhausted`: a budget on the member's chain of creators is
    /// spent; its input stays pending.
    BudgetExhausted,
    /// A host's own reason, kept as it was given.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Completed => "completed",
            StopReason::Aborted => "aborted",
            StopReason::Error => "error",
            StopReason::MaxTokens => "max-tokens",
            StopReason::Refusal => "refusal",
            StopReason::BudgetExhausted => "budget-exhausted",
            StopReason::Other(reason) => reason,
        }
    }
}

impl From<&str> for StopReason {
    fn from(reason: &str) -> StopReason {
        match reason {
            "completed" => StopReason::Completed,
            "aborted" => StopReason::Aborted,
            "error" => StopReason::Error,
            "max-tokens" => StopReason::MaxTokens,
            "refusal" => StopReason::Refusal,
            "budget-exhausted" => StopReason::BudgetExhausted,
            other => StopReason::Other(other.to_owned()),
        }
    }
}

impl From<String> for StopReason {
    fn from(reason: String) -> StopReason {
        match StopReason::from(reason.as_str()) {
            StopReason::Other(_) => StopReason::Other(reason),
            known => known,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compared with its wire string (a log's payload, a test's expectation).
impl PartialEq<str> for StopReason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StopReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_read_back_as_written() {
        let known = [
            StopReason::Completed,
            StopReason::Aborted,
            StopReason::Error,
            StopReason::MaxTokens,
            StopReason::Refusal,
            StopReason::BudgetExhausted,
        ];
        for reason in known {
            assert_eq!(StopReason::from(reason.as_str()), reason);
            assert!(!matches!(StopReason::from(reason.to_string()), StopReason::Other(_)));
        }
        // A host's own reason (even one that differs from a known one only by case) is kept as given.
        for own in ["tool-use", "Completed", ""] {
            assert_eq!(StopReason::from(own), StopReason::Other(own.to_owned()));
            assert_eq!(StopReason::from(own.to_owned()).as_str(), own);
        }
        assert_eq!(StopReason::BudgetExhausted, "budget-exhausted");
    }
}
