//! The catalog: a parent's membership record of its children (seeds 003/000).
//!
//! Each child is one strict `subagent/catalog` event in the parent's log,
//! written once at creation and never updated; it records membership, not
//! execution state. Payload versions:
//!
//! | v | modes                                   | fields                                               |
//! |---|-----------------------------------------|------------------------------------------------------|
//! | 0 | one-shot, continuable (label required)  | version, childId, childCreatedAt, mode, label?       |
//! | 1 | as 0, plus unknown                      | same                                                 |
//! | 2 | external only                           | same                                                 |
//! | 3 | one-shot, continuable (label), external | same plus `name` (required, valid grammar)           |
//!
//! Decoding is strict (unknown keys reject) so that a log written by a newer
//! or buggy writer surfaces as `CORRUPT_CATALOG`, never as a silently wrong tree.

use crate::core::error::{ErrorCode, Result, SubagentError};
use crate::core::event::{self, SessionEvent};
use crate::core::json::Value;
use crate::core::name::{self, AgentName};
use serde::{Deserialize, Serialize};

/// The version every new entry is written with.
pub const CURRENT_VERSION: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// A single execution with a durable Session; a traversal node.
    OneShot,
    /// A local child that accepts later messages and cold resume.
    Continuable,
    /// An execution run by an external provider: a leaf without a local Session.
    External,
    /// A historical child whose descriptor is unavailable: discoverable, never continued.
    Unknown,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::OneShot => "one-shot",
            Mode::Continuable => "continuable",
            Mode::External => "external",
            Mode::Unknown => "unknown",
        }
    }

    fn parse(text: &str) -> Option<Mode> {
        Some(match text {
            "one-shot" => Mode::OneShot,
            "continuable" => Mode::Continuable,
            "external" => Mode::External,
            "unknown" => Mode::Unknown,
            _ => return None,
        })
    }

    fn allowed_in(self, version: u64) -> bool {
        match version {
            0 => matches!(self, Mode::OneShot | Mode::Continuable),
            1 => matches!(self, Mode::OneShot | Mode::Continuable | Mode::Unknown),
            2 => self == Mode::External,
            3 => matches!(self, Mode::OneShot | Mode::Continuable | Mode::External),
            _ => false,
        }
    }
}

/// One decoded catalog entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    pub id: String,
    pub created_at: u64,
    pub mode: Mode,
    pub label: Option<String>,
    pub name: Option<AgentName>,
}

impl CatalogEntry {
    /// The payload a new entry is written with (always the current version).
    pub fn to_payload(&self) -> Value {
        Value::object([
            ("version", Some(Value::from(CURRENT_VERSION))),
            ("childId", Some(Value::from(self.id.as_str()))),
            ("childCreatedAt", Some(Value::from(self.created_at))),
            ("mode", Some(Value::from(self.mode.as_str()))),
            ("label", self.label.as_deref().map(Value::from)),
            ("name", self.name.as_ref().map(|n| Value::from(n.as_str()))),
        ])
    }
}

fn corrupt(message: String) -> SubagentError {
    SubagentError::new(ErrorCode::CorruptCatalog, message)
}

/// Strictly decodes one `subagent/catalog` payload.
pub fn decode_payload(payload: &Value) -> Result<CatalogEntry> {
    let Some(fields) = payload.as_object() else {
        return Err(corrupt(format!("catalog payload must be an object, not {}", payload.kind())));
    };
    let version = match payload.get("version") {
        Some(v) => v.as_u64().filter(|v| *v <= CURRENT_VERSION).ok_or_else(|| {
            corrupt(format!("catalog payload version must be an integer from 0 to {CURRENT_VERSION}"))
        })?,
        None => return Err(corrupt("catalog payload has no version".into())),
    };
    for (key, _) in fields {
        let known = matches!(key.as_str(), "version" | "childId" | "childCreatedAt" | "mode" | "label")
            || (key == "name" && version == 3);
        if !known {
            return Err(corrupt(format!(
                "catalog payload v{version} has unknown field {}",
                name::quote_truncated(key, 64)
            )));
        }
    }
    let id = match payload.get("childId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => return Err(corrupt(format!("catalog payload v{version} needs a non-empty string childId"))),
    };
    let created_at = payload.get("childCreatedAt").and_then(Value::as_u64).ok_or_else(|| {
        corrupt(format!("catalog entry {} needs childCreatedAt as an integer >= 0", name::quote_truncated(&id, 64)))
    })?;
    let mode_text = payload.get("mode").and_then(Value::as_str).unwrap_or_default();
    let mode = Mode::parse(mode_text).filter(|m| m.allowed_in(version)).ok_or_else(|| {
        corrupt(format!("catalog payload v{version} cannot have mode {}", name::quote_truncated(mode_text, 32)))
    })?;
    let label = match payload.get("label") {
        None => None,
        Some(Value::String(label)) => Some(label.clone()),
        Some(other) => return Err(corrupt(format!("catalog label must be a string, not {}", other.kind()))),
    };
    if mode == Mode::Continuable && label.is_none() {
        return Err(corrupt(format!("continuable catalog entry {} needs a label", name::quote_truncated(&id, 64))));
    }
    let name = if version == 3 {
        match payload.get("name") {
            Some(Value::String(text)) => {
                Some(AgentName::parse(text).map_err(|e| corrupt(format!("catalog {}", e.message)))?)
            }
            Some(other) => return Err(corrupt(format!("catalog name must be a string, not {}", other.kind()))),
            None => return Err(corrupt("catalog payload v3 needs a name".into())),
        }
    } else {
        None
    };
    Ok(CatalogEntry { id, created_at, mode, label, name })
}

/// A catalog event that does not decode (bad data, or damaged in the store:
/// see [`event::DAMAGED`]), with what could still be read of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DamagedEntry {
    /// The event's position in the parent's log.
    pub seq: u64,
    /// Its `childId`, when that reads as a non-empty string.
    pub id: Option<String>,
    /// Its `name`, when that reads as a valid name: still taken among its
    /// creator's children, so a new child never reuses it.
    pub name: Option<AgentName>,
    /// Why it does not decode (one sentence, starting `event {seq}: `).
    pub detail: String,
}

/// One own catalog event: an entry, or what is left of one that does not decode.
pub type Projected = std::result::Result<CatalogEntry, DamagedEntry>;

fn decode_event(e: &SessionEvent) -> Projected {
    let detail = match event::damaged(e) {
        Some(why) => format!("event {}: damaged in the store: {why}", e.seq),
        None => match decode_payload(&e.payload) {
            Ok(entry) => return Ok(entry),
            Err(err) => format!("event {}: {}", e.seq, err.message),
        },
    };
    let text = |key| e.payload.get(key).and_then(Value::as_str);
    Err(DamagedEntry {
        seq: e.seq,
        id: text("childId").filter(|id| !id.is_empty()).map(str::to_owned),
        name: text("name").and_then(|n| AgentName::parse(n).ok()),
        detail,
    })
}

/// The catalog of a session entry by entry: its own `subagent/catalog`
/// events in log order, each decoded on its own, so one bad event costs its
/// own entry (a listing shows it as a `corrupt` row), not the catalog.
pub fn project_each(events: &[SessionEvent], inherited_event_count: u64) -> Vec<Projected> {
    events.iter().filter(|e| e.kind == event::CATALOG && e.seq >= inherited_event_count).map(decode_event).collect()
}

/// The catalog of a session: its own `subagent/catalog` events in log order.
///
/// Events a fork inherited (`seq < inherited_event_count`) belong to the
/// parent and are ignored; other event types are ignored. Duplicate ids are
/// kept (listing skips them) so the projection stays a faithful fold. Strict:
/// the first entry that does not decode is the error (see [`project_each`]).
pub fn project(events: &[SessionEvent], inherited_event_count: u64) -> Result<Vec<CatalogEntry>> {
    events
        .iter()
        .filter(|e| e.kind == event::CATALOG && e.seq >= inherited_event_count)
        .map(|e| decode_event(e).map_err(|d| corrupt(d.detail)))
        .collect()
}

/// The catalog of a whole stored log, finding a fork's inherited prefix itself.
pub fn project_log(events: &[SessionEvent]) -> Result<Vec<CatalogEntry>> {
    project(events, event::inherited_event_count(events))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(j: serde_json::Value) -> Value {
        serde_json::from_value(j).unwrap()
    }

    fn decode(j: serde_json::Value) -> Result<CatalogEntry> {
        decode_payload(&v(j))
    }

    #[test]
    fn version_0_one_shot_and_continuable() {
        let e = decode(json!({"version":0,"childId":"c1","childCreatedAt":5,"mode":"one-shot"})).unwrap();
        assert_eq!((e.mode, e.label, e.name), (Mode::OneShot, None, None));
        let e =
            decode(json!({"version":0,"childId":"c1","childCreatedAt":5,"mode":"continuable","label":"L"})).unwrap();
        assert_eq!((e.mode, e.label.as_deref()), (Mode::Continuable, Some("L")));
        decode(json!({"version":0,"childId":"c1","childCreatedAt":5,"mode":"continuable"})).unwrap_err();
        decode(json!({"version":0,"childId":"c1","childCreatedAt":5,"mode":"unknown"})).unwrap_err();
        decode(json!({"version":0,"childId":"c1","childCreatedAt":5,"mode":"external"})).unwrap_err();
    }

    #[test]
    fn version_1_adds_unknown_and_version_2_is_external_only() {
        let e = decode(json!({"version":1,"childId":"c","childCreatedAt":0,"mode":"unknown"})).unwrap();
        assert_eq!(e.mode, Mode::Unknown);
        decode(json!({"version":1,"childId":"c","childCreatedAt":0,"mode":"continuable"})).unwrap_err();
        let e = decode(json!({"version":2,"childId":"c","childCreatedAt":0,"mode":"external","label":"x"})).unwrap();
        assert_eq!(e.mode, Mode::External);
        decode(json!({"version":2,"childId":"c","childCreatedAt":0,"mode":"one-shot"})).unwrap_err();
    }

    #[test]
    fn version_3_requires_a_valid_name() {
        let e = decode(
            json!({"version":3,"childId":"c","childCreatedAt":1,"mode":"continuable","label":"L","name":"reviewer"}),
        )
        .unwrap();
        assert_eq!(e.name.unwrap().as_str(), "reviewer");
        for bad in [json!("lead"), json!("Reviewer"), json!(7), json!(null)] {
            let err =
                decode(json!({"version":3,"childId":"c","childCreatedAt":1,"mode":"external","name":bad})).unwrap_err();
            assert_eq!(err.code, ErrorCode::CorruptCatalog);
        }
        decode(json!({"version":3,"childId":"c","childCreatedAt":1,"mode":"external"})).unwrap_err();
        decode(json!({"version":3,"childId":"c","childCreatedAt":1,"mode":"unknown","name":"a"})).unwrap_err();
        decode(json!({"version":3,"childId":"c","childCreatedAt":1,"mode":"continuable","name":"a"})).unwrap_err();
    }

    #[test]
    fn strictness() {
        let base = json!({"version":0,"childId":"c","childCreatedAt":1,"mode":"one-shot"});
        decode(base.clone()).unwrap();
        for (key, value) in [
            ("extra", json!(1)),
            ("name", json!("a")),
            ("version", json!(4)),
            ("version", json!(-1)),
            ("version", json!(1.5)),
            ("version", json!("0")),
            ("childId", json!("")),
            ("childId", json!(3)),
            ("childCreatedAt", json!(-1)),
            ("childCreatedAt", json!(1.5)),
            ("childCreatedAt", json!(1e300)),
            ("label", json!(null)),
            ("label", json!(3)),
            ("mode", json!("ONE-SHOT")),
        ] {
            let mut p = base.clone();
            p[key] = value.clone();
            let err = decode(p).unwrap_err();
            assert_eq!(err.code, ErrorCode::CorruptCatalog, "{key} = {value}");
        }
        for missing in ["version", "childId", "childCreatedAt", "mode"] {
            let mut p = base.clone();
            p.as_object_mut().unwrap().remove(missing);
            decode(p).unwrap_err();
        }
        for not_object in [json!(null), json!([]), json!("x"), json!(3)] {
            decode(not_object).unwrap_err();
        }
    }

    #[test]
    fn new_entries_are_written_as_v3_and_round_trip() {
        let entry = CatalogEntry {
            id: "c".into(),
            created_at: 9,
            mode: Mode::Continuable,
            label: Some("review".into()),
            name: Some(AgentName::parse("reviewer").unwrap()),
        };
        let payload = entry.to_payload();
        assert_eq!(payload.get("version").and_then(Value::as_u64), Some(3));
        assert_eq!(decode_payload(&payload).unwrap(), entry);
    }

    fn cat(seq: u64, id: &str) -> SessionEvent {
        SessionEvent::new(
            seq,
            event::CATALOG,
            v(json!({"version":0,"childId":id,"childCreatedAt":seq,"mode":"one-shot"})),
        )
    }

    #[test]
    fn projection_keeps_order_duplicates_and_ignores_others_and_inherited() {
        let events = vec![
            cat(0, "inherited"),
            SessionEvent::new(1, "message/user", Value::Null),
            cat(2, "b"),
            cat(3, "a"),
            cat(4, "b"),
        ];
        let ids = |entries: Vec<CatalogEntry>| entries.into_iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids(project(&events, 0).unwrap()), ["inherited", "b", "a", "b"]);
        assert_eq!(ids(project(&events, 1).unwrap()), ["b", "a", "b"]);
    }

    #[test]
    fn each_entry_decodes_on_its_own_and_a_damaged_one_keeps_what_reads() {
        let bad = SessionEvent::new(1, event::CATALOG, v(json!({"version":9,"childId":"x"})));
        let damaged = SessionEvent::new(
            2,
            event::CATALOG,
            v(json!({"version":3,"childId":"d","name":"reviewer","$damaged":"event [2].payload.label is ill-formed"})),
        );
        let nameless = SessionEvent::new(3, event::CATALOG, v(json!({"$damaged":"event [3].payload.childId ..."})));
        let each = project_each(&[cat(0, "a"), bad, damaged, nameless, cat(4, "b")], 0);
        assert_eq!(each.len(), 5);
        assert_eq!(each[0].as_ref().unwrap().id, "a");
        assert_eq!(each[4].as_ref().unwrap().id, "b");
        let d = each[1].as_ref().unwrap_err();
        assert_eq!((d.seq, d.id.as_deref(), d.name.is_none()), (1, Some("x"), true));
        assert!(d.detail.starts_with("event 1: catalog payload version"), "{}", d.detail);
        let d = each[2].as_ref().unwrap_err();
        assert_eq!((d.id.as_deref(), d.name.as_ref().map(AgentName::as_str)), (Some("d"), Some("reviewer")));
        assert!(d.detail.starts_with("event 2: damaged in the store: event [2].payload.label"), "{}", d.detail);
        let d = each[3].as_ref().unwrap_err();
        assert_eq!((d.id.as_deref(), d.name.as_ref()), (None, None));
        // The strict projection fails on the first of them.
        let err =
            project(&[cat(0, "a"), SessionEvent::new(1, event::CATALOG, v(json!({"$damaged":"x"})))], 0).unwrap_err();
        assert_eq!((err.code, err.message.as_str()), (ErrorCode::CorruptCatalog, "event 1: damaged in the store: x"));
    }

    #[test]
    fn a_corrupt_own_event_fails_the_projection_but_an_inherited_one_does_not() {
        let bad = SessionEvent::new(0, event::CATALOG, v(json!({"version":9})));
        let err = project(&[bad.clone(), cat(1, "a")], 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::CorruptCatalog);
        assert!(err.message.starts_with("event 0: "), "{}", err.message);
        assert_eq!(project(&[bad, cat(1, "a")], 1).unwrap().len(), 1);
    }
}
