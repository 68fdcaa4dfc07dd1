//! Agent names (seed 000): model-facing references, never identity.
//!
//! A name is 1-32 of `a-z0-9-`, starts with a letter, and is never `lead` (the
//! root's name). A UUID starts with a hex digit or has 36 characters, so no
//! Session id ever parses as a name. Full names are `/`-joined paths from the
//! root without a `lead/` prefix.

use crate::core::error::{ErrorCode, Quoted, Result, SubagentError};
use std::fmt;

/// The root's name.
pub const LEAD: &str = "lead";
/// Longest name, in bytes (all name characters are ASCII).
pub const MAX_NAME_LEN: usize = 32;
const DEFAULT_PREFIX: &str = "agent-";

/// Whether `text` is a valid child name.
pub fn is_valid_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_NAME_LEN
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && text != LEAD
}

/// A validated child name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentName(String);

impl AgentName {
    pub fn parse(text: &str) -> Result<AgentName> {
        if is_valid_name(text) {
            Ok(AgentName(text.to_owned()))
        } else {
            Err(invalid_name(text))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `INVALID_NAME` error for `text`, with the rule it broke.
pub fn invalid_name(text: &str) -> SubagentError {
    let shown = quote_truncated(text, 64);
    let message = if text == LEAD {
        format!("agent name {shown} is reserved for the root")
    } else {
        format!("agent name {shown} must be 1-32 lower-case letters, digits or hyphens starting with a letter")
    };
    SubagentError::new(ErrorCode::InvalidName, message)
}

/// `"text"`, cut on a character boundary after `max` bytes so a huge input
/// never produces a huge message.
pub fn quote_truncated(text: &str, max: usize) -> String {
    if text.len() <= max {
        return Quoted(text).to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", Quoted(&text[..cut]), text.len())
}

/// The first free `agent-N` (N from 1) among `taken`.
pub fn default_name<S: AsRef<str>>(taken: &[S]) -> AgentName {
    // At most `taken.len()` numbers are taken, so one of 1..=len+1 is free.
    let mut used = vec![false; taken.len() + 2];
    for name in taken {
        if let Some(n) = name.as_ref().strip_prefix(DEFAULT_PREFIX).and_then(parse_index) {
            if n < used.len() {
                used[n] = true;
            }
        }
    }
    let n = (1..used.len()).find(|&n| !used[n]).unwrap_or(used.len());
    AgentName(format!("{DEFAULT_PREFIX}{n}"))
}

/// The first `agent-N` with `N >= max(floor, hint)` that `taken` does not
/// hold, its `N`, and the new floor: the first `N >= floor` that `committed`
/// does not hold. A caller that keeps the floor (every `agent-N` below it
/// committed, committed names never withdrawn) and the hint (every `agent-N`
/// from the floor to below the hint taken: reserved or committed) finds
/// default names in time flat in the number of children, even while
/// thousands of starts hold reservations.
pub fn first_free_default(
    floor: usize,
    hint: usize,
    committed: impl Fn(&str) -> bool,
    taken: impl Fn(&str) -> bool,
) -> (usize, usize, AgentName) {
    let name = |n: usize| format!("{DEFAULT_PREFIX}{n}");
    let mut floor = floor.max(1);
    while committed(&name(floor)) {
        floor += 1;
    }
    let mut n = floor.max(hint);
    while taken(&name(n)) {
        n += 1;
    }
    (floor, n, AgentName(name(n)))
}

/// `N` of a default name `agent-N`, if `name` is one.
pub fn default_index(name: &str) -> Option<usize> {
    name.strip_prefix(DEFAULT_PREFIX).and_then(parse_index)
}

/// `N` of `agent-N` in canonical decimal (no sign, no leading zero).
fn parse_index(digits: &str) -> Option<usize> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What a model-supplied agent reference names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentRef {
    /// The root.
    Lead,
    /// A full name: names from the root down.
    Path(Vec<AgentName>),
    /// Anything else is taken as a Session id, unchanged.
    Session(String),
}

impl AgentRef {
    pub fn parse(text: &str) -> AgentRef {
        if text == LEAD {
            return AgentRef::Lead;
        }
        let segments: Option<Vec<AgentName>> = text.split('/').map(|s| AgentName::parse(s).ok()).collect();
        match segments {
            Some(segments) => AgentRef::Path(segments),
            None => AgentRef::Session(text.to_owned()),
        }
    }
}

/// `name` below the full name `parent` (`""` is the root's: its children's full names are their names).
pub fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}/{name}")
    }
}

/// A full name under construction: `None` once an unnamed member breaks the chain.
pub fn join_path(parent: Option<&str>, name: Option<&AgentName>) -> Option<String> {
    match (parent, name) {
        (Some(""), Some(name)) => Some(name.as_str().to_owned()),
        (Some(parent), Some(name)) => Some(format!("{parent}/{}", name.as_str())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        for ok in ["a", "reviewer", "agent-1", "a-b-c", "x9", "leader", "lead-2", &"a".repeat(32)] {
            assert!(is_valid_name(ok), "{ok:?} should be valid");
        }
        for bad in [
            "",
            "lead",
            "Reviewer",
            "1abc",
            "-a",
            "a_b",
            "a b",
            "a/b",
            "é",
            &"a".repeat(33),
            "0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f",
            "deadbeef-0000-4000-8000-000000000000",
        ] {
            assert!(!is_valid_name(bad), "{bad:?} should be invalid");
        }
    }

    #[test]
    fn no_uuid_parses_as_a_name() {
        // Hyphenated UUIDs are 36 characters, longer than any name.
        let uuid = "abcdefab-cdef-4abc-8def-abcdefabcdef";
        assert!(!is_valid_name(uuid));
        assert_eq!(AgentRef::parse(uuid), AgentRef::Session(uuid.to_owned()));
    }

    #[test]
    fn invalid_name_messages_name_the_value_and_rule() {
        let e = AgentName::parse("Reviewer").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidName);
        assert_eq!(
            e.message,
            "agent name \"Reviewer\" must be 1-32 lower-case letters, digits or hyphens starting with a letter"
        );
        assert_eq!(AgentName::parse("lead").unwrap_err().message, "agent name \"lead\" is reserved for the root");
        let huge = "X".repeat(10_000);
        assert!(AgentName::parse(&huge).unwrap_err().message.len() < 200);
    }

    #[test]
    fn default_names_take_the_first_free_number() {
        let none: [&str; 0] = [];
        assert_eq!(default_name(&none).as_str(), "agent-1");
        assert_eq!(default_name(&["agent-1", "agent-2"]).as_str(), "agent-3");
        assert_eq!(default_name(&["agent-2", "reviewer"]).as_str(), "agent-1");
        assert_eq!(default_name(&["agent-1", "agent-3"]).as_str(), "agent-2");
        // Non-canonical spellings do not occupy a number.
        assert_eq!(default_name(&["agent-01", "agent-x", "agent-"]).as_str(), "agent-1");
        assert_eq!(default_name(&["agent-99999999999999999999999"]).as_str(), "agent-1");
    }

    #[test]
    fn default_names_from_a_kept_floor() {
        let committed = ["agent-1", "agent-2", "agent-4"];
        let reserved = ["agent-3"];
        let is_committed = |n: &str| committed.contains(&n);
        let is_taken = |n: &str| committed.contains(&n) || reserved.contains(&n);
        // The floor stops at the first uncommitted number; the name skips reservations too.
        assert_eq!(first_free_default(1, 0, is_committed, is_taken), (3, 5, AgentName("agent-5".into())));
        assert_eq!(first_free_default(0, 0, is_committed, |_| false), (3, 3, AgentName("agent-3".into())));
        // Same answer as the scan over every name.
        let all: Vec<&str> = committed.iter().chain(&reserved).copied().collect();
        assert_eq!(first_free_default(1, 0, is_committed, is_taken).2, default_name(&all));
        // The hint skips what is known taken, and never goes below the floor.
        let calls = std::cell::Cell::new(0);
        let counted = |n: &str| {
            calls.set(calls.get() + 1);
            is_taken(n)
        };
        assert_eq!(first_free_default(3, 5, is_committed, counted).2.as_str(), "agent-5");
        assert_eq!(calls.get(), 1, "from the hint, one name is looked at");
        assert_eq!(first_free_default(3, 1, is_committed, is_taken).1, 5);
        assert_eq!(default_index("agent-12"), Some(12));
        assert_eq!(default_index("agent-012"), None);
        assert_eq!(default_index("reviewer"), None);
    }

    #[test]
    fn references() {
        assert_eq!(AgentRef::parse("lead"), AgentRef::Lead);
        assert_eq!(
            AgentRef::parse("reviewer/checker"),
            AgentRef::Path(vec![AgentName("reviewer".into()), AgentName("checker".into())])
        );
        for session in ["lead/reviewer", "reviewer/", "/reviewer", "a//b", "", "Reviewer"] {
            assert_eq!(AgentRef::parse(session), AgentRef::Session(session.to_owned()), "{session:?}");
        }
    }

    #[test]
    fn paths_join_until_an_unnamed_member() {
        let a = AgentName::parse("a").unwrap();
        assert_eq!(join_path(Some(""), Some(&a)).as_deref(), Some("a"));
        assert_eq!(join_path(Some("x/y"), Some(&a)).as_deref(), Some("x/y/a"));
        assert_eq!(join_path(None, Some(&a)), None);
        assert_eq!(join_path(Some("x"), None), None);
    }
}
