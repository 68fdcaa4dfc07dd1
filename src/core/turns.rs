//! What a member's log says of its turns: whether one is open, how the last
//! one stopped and its latest output. A view reads this to show a tree as it
//! is from the logs alone (after a reload, or in a page that only reads the
//! store, where no runtime's events ever reached it), so it rides on a
//! listing's own reads ([`TreeLister`]): no extra round trip.

use crate::core::error::Result;
use crate::core::event::{self, SessionEvent};
use crate::core::hash::HashMap;
use crate::core::json::Value;
use crate::core::listing::{read_level, Lister, Row};
use crate::core::signal::Signal;
use crate::core::store::{ReadQuery, ReadResult, Store};

/// Longest output text a listing carries per member, in UTF-8 bytes: a
/// listing of a large tree stays small (the whole output stays in the log).
pub const MAX_OUTPUT_BYTES: usize = 4096;

/// What a tree listing reads of each log: its catalog and start marker (as
/// any listing), and its turn records.
pub const TREE_TYPES: &[&str] = &[event::CATALOG, event::SESSION_START, event::TURN_START, event::TURN_END];

/// A member's turns as its own log records them (its inherited prefix, a
/// fork's copy of its parent's turns, is not its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Turns {
    /// Its last turn started and has not ended: it runs where another
    /// runtime (a tab, a process) drives it, or it was lost in a crash.
    pub open: bool,
    /// How its last ended turn stopped (`None`: none ended, or that
    /// record's reason did not read).
    pub stop_reason: Option<String>,
    /// The text of its latest non-empty output, cut to [`MAX_OUTPUT_BYTES`]
    /// (ending `…` when cut).
    pub output: Option<String>,
    /// The preset its own `session/start` records (see `runtime::presets`).
    pub preset: Option<String>,
}

impl Turns {
    pub fn of(events: &[SessionEvent]) -> Turns {
        let inherited = event::inherited_event_count(events);
        let mut own = events.iter().rev().take_while(|e| e.seq >= inherited);
        let mut ends = own.clone().filter(|e| e.kind == event::TURN_END);
        Turns {
            open: own
                .find(|e| e.kind == event::TURN_START || e.kind == event::TURN_END)
                .is_some_and(|e| e.kind == event::TURN_START),
            stop_reason: ends
                .clone()
                .next()
                .and_then(|e| e.payload.get("stopReason").and_then(Value::as_str).map(str::to_owned)),
            output: ends.find_map(|e| {
                let text = e.payload.get("output").map(content_text).unwrap_or_default();
                (!text.is_empty()).then(|| cut(text))
            }),
            preset: events
                .iter()
                .find(|e| e.kind == event::SESSION_START && e.seq == inherited)
                .and_then(|e| e.payload.get("agentPreset").and_then(Value::as_str))
                .map(str::to_owned),
        }
    }
}

/// The text blocks of content (a string, or blocks of which `text` ones count) joined by newlines.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// At most [`MAX_OUTPUT_BYTES`], cut on a character boundary with `…` (3 bytes) appended.
fn cut(mut text: String) -> String {
    if text.len() > MAX_OUTPUT_BYTES {
        let mut at = MAX_OUTPUT_BYTES - '…'.len_utf8();
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push('…');
    }
    text
}

/// A tree listing: the rows a [`Lister`] gives, each with what its log says of
/// its turns, and the root's. Reads each log once, as the listing does.
pub struct TreeLister {
    root: String,
    lister: Lister,
    query: ReadQuery,
    turns: HashMap<String, Turns>,
}

/// What [`TreeLister`] gives: the root's turns, the rows, and each row's
/// turns in the rows' order (`None` for a member whose log was not read: an
/// external run, a diagnostic).
pub struct TreeListing {
    pub root: Turns,
    pub rows: Vec<Row>,
    pub turns: Vec<Option<Turns>>,
}

impl TreeLister {
    pub fn new(root: &str) -> TreeLister {
        let lister = Lister::new(root);
        let query =
            ReadQuery { types: Some(TREE_TYPES.iter().map(|t| (*t).to_owned()).collect()), ..lister.query().clone() };
        TreeLister { root: root.to_owned(), lister, query, turns: HashMap::default() }
    }

    /// The root's Session id.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The sessions to read now (empty once done).
    pub fn wants(&self) -> &[String] {
        self.lister.wants()
    }

    /// Whether [`TreeLister::wants`] is the root alone (as [`Lister::at_root`]).
    pub fn at_root(&self) -> bool {
        self.lister.at_root()
    }

    /// The query every read asks.
    pub fn query(&self) -> &ReadQuery {
        &self.query
    }

    /// The reads of [`TreeLister::wants`], in its order (as [`Lister::answer`]).
    pub fn answer(&mut self, reads: Result<Vec<ReadResult>>) -> Result<()> {
        if let Ok(reads) = &reads {
            if reads.len() == self.lister.wants().len() {
                for (id, read) in self.lister.wants().iter().zip(reads) {
                    if let Ok(Some(events)) = read {
                        self.turns.insert(id.clone(), Turns::of(events));
                    }
                }
            }
        }
        self.lister.answer(reads)
    }

    /// The listing (once [`TreeLister::wants`] is empty).
    pub fn listing(&self) -> TreeListing {
        let rows = self.lister.rows();
        let turns = rows
            .iter()
            .map(|row| match row {
                Row::Child(c) => self.turns.get(&c.id).cloned(),
                Row::Diagnostic(_) => None,
            })
            .collect();
        TreeListing { root: self.turns.get(&self.root).cloned().unwrap_or_default(), rows, turns }
    }
}

/// The tree below `root` with each member's turns (see [`TreeLister`]): the
/// same reads, round trips and errors as [`crate::core::listing::list_descendants`].
pub async fn list_tree(store: &dyn Store, root: &str, signal: &Signal) -> Result<TreeListing> {
    let mut lister = TreeLister::new(root);
    let query = ReadQuery { signal: signal.clone(), ..lister.query().clone() };
    while !lister.wants().is_empty() {
        let ids = lister.wants().to_vec();
        let reads = read_level(store, &ids, &query, signal, !lister.at_root()).await;
        signal.check()?;
        lister.answer(reads)?;
    }
    Ok(lister.listing())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Value {
        crate::core::json::parse(text, 64).unwrap()
    }

    #[test]
    fn the_last_end_says_how_it_stopped_and_the_latest_text_is_its_output() {
        let e = |seq, kind: &str, payload: &str| SessionEvent::new(seq, kind, v(payload));
        let log = [
            e(0, event::SESSION_START, r#"{}"#),
            e(1, event::TURN_START, r#"{"input":["m1"]}"#),
            e(
                2,
                event::TURN_END,
                r#"{"stopReason":"completed","output":[{"type":"text","text":"first"},{"type":"image"},{"type":"text","text":"answer"}],"consumed":["m1"]}"#,
            ),
            e(3, event::TURN_START, r#"{"input":["m2"]}"#),
            e(4, event::TURN_END, r#"{"stopReason":"aborted","output":[],"consumed":[]}"#),
        ];
        let turns = Turns::of(&log);
        assert_eq!(
            turns,
            Turns {
                open: false,
                stop_reason: Some("aborted".into()),
                output: Some("first\nanswer".into()),
                preset: None
            }
        );
        assert!(Turns::of(&log[..4]).open, "a start with no end is open");
        assert_eq!(Turns::of(&log[..4]).stop_reason.as_deref(), Some("completed"));
        assert_eq!(Turns::of(&log[..1]), Turns::default());
    }

    #[test]
    fn a_forks_inherited_turns_are_not_its_own() {
        let e = |seq, kind: &str, payload: &str| SessionEvent::new(seq, kind, v(payload));
        let log = [
            e(0, event::TURN_START, r#"{"input":["m1"]}"#),
            e(1, event::TURN_END, r#"{"stopReason":"completed","output":"the parent's","consumed":["m1"]}"#),
            e(2, event::SESSION_START, r#"{"inheritedEventCount":2}"#),
        ];
        assert_eq!(event::inherited_event_count(&log), 2);
        assert_eq!(Turns::of(&log), Turns::default());
    }

    #[test]
    fn a_long_output_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_OUTPUT_BYTES);
        let payload = Value::object([
            ("stopReason", Some(Value::from("completed"))),
            ("output", Some(Value::from(long.as_str()))),
        ]);
        let turns = Turns::of(&[SessionEvent::new(0, event::TURN_END, payload)]);
        let out = turns.output.unwrap();
        assert!(out.len() <= MAX_OUTPUT_BYTES && out.ends_with('…'), "{}", out.len());
        assert_eq!(out.len(), MAX_OUTPUT_BYTES - 1, "2-byte characters up to 4093 bytes, then the 3-byte ellipsis");
    }
}
