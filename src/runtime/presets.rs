//! Agent presets: named compositions a runtime offers its children (seed
//! 003: "Spawn alone supports an independent agentPreset; omission and fork
//! inherit the parent's active composition. The child preset rules define
//! explicit selection, event ordering, and historical restoration").
//!
//! A preset is `{ description?, agentOptions?, tools? }`. A local child's
//! preset is the one `spawn` names, else its creator's; it is recorded on the
//! child's `session/start` (before its first turn), given to every turn,
//! shapes its agent options (under explicit overrides) and narrows its tools,
//! and a cold resume reads it back from the log.

use crate::core::agent_options::AgentOptions;
use crate::core::error::{Result, SubagentError};
use crate::core::json::Value;

/// Longest preset id, in UTF-8 bytes.
pub const MAX_PRESET_ID_BYTES: usize = 64;
/// Most presets one runtime offers.
pub const MAX_PRESETS: usize = 256;

/// What a preset gives the members that run with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preset {
    /// For people and listings: what the preset is for.
    pub description: Option<String>,
    /// Under a child's explicit options, over its creator's.
    pub agent_options: Option<AgentOptions>,
    /// The member's tools narrowed to these (`only`, then not `except`).
    pub only: Option<Vec<String>>,
    pub except: Vec<String>,
}

impl Preset {
    /// Whether the member keeps its tool `name`: names the preset lists that
    /// the member does not have (a provider not registered, a depth reached)
    /// are simply absent.
    pub fn keeps(&self, name: &str) -> bool {
        keeps(self.only.as_deref(), &self.except, name)
    }
}

/// Whether a choice of tools keeps `name`: in `only` (when set), and not in `except`.
pub fn keeps(only: Option<&[String]>, except: &[String], name: &str) -> bool {
    only.is_none_or(|only| only.iter().any(|n| n == name)) && !except.iter().any(|n| n == name)
}

/// A runtime's presets by id, in id order (listed in that order). A short
/// sorted list: at most [`MAX_PRESETS`], and no map or sort code in the wasm.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Presets(Vec<(String, Preset)>);

impl Presets {
    /// Adds (or replaces) preset `id`, keeping id order.
    pub fn insert(&mut self, id: String, preset: Preset) {
        match self.0.iter().position(|(k, _)| *k >= id) {
            Some(at) if self.0[at].0 == id => self.0[at].1 = preset,
            Some(at) => self.0.insert(at, (id, preset)),
            None => self.0.push((id, preset)),
        }
    }

    pub fn get(&self, id: &str) -> Option<&Preset> {
        self.0.iter().find(|(k, _)| k == id).map(|(_, p)| p)
    }

    pub fn contains_key(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Ids in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Preset)> {
        self.0.iter().map(|(k, p)| (k, p))
    }
}

/// Reads `{ id: { description?, agentOptions?, tools?: { only?, except? } } }`
/// strictly (`what` names it: `options.presets`): ids of 1-64 bytes, at
/// most [`MAX_PRESETS`], unknown fields and tool names that can be no tool
/// refused by name (`check_tool`: the runtime's `tools::check_tool_name`).
pub fn from_value(value: &Value, what: &str, check_tool: &dyn Fn(&str, &str) -> Result<()>) -> Result<Presets> {
    let invalid = |m: String| SubagentError::new(crate::core::error::ErrorCode::InvalidArgument, m);
    let Some(entries) = value.as_object() else {
        return Err(invalid(format!(
            "{what} must be an object of preset id -> {{ description?, agentOptions?, tools? }}, not {}",
            value.kind()
        )));
    };
    if entries.len() > MAX_PRESETS {
        return Err(SubagentError::new(
            crate::core::error::ErrorCode::LimitExceeded,
            format!("{what} has {} presets; at most {MAX_PRESETS}", entries.len()),
        ));
    }
    let mut presets = Presets::default();
    for (id, entry) in entries {
        if id.is_empty() || id.len() > MAX_PRESET_ID_BYTES {
            return Err(invalid(format!(
                "{what} has a preset id of {} bytes; ids are 1-{MAX_PRESET_ID_BYTES} bytes",
                id.len()
            )));
        }
        let what = format!("{what}.{id}");
        if entry.as_object().is_none() {
            return Err(invalid(format!(
                "{what} must be an object {{ description?, agentOptions?, tools? }}, not {}",
                entry.kind()
            )));
        }
        crate::core::listing::check_fields(entry, &["description", "agentOptions", "tools"], &what)?;
        let description = match entry.get("description") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(invalid(format!("{what}.description must be a string, not {}", other.kind()))),
        };
        let agent_options = match entry.get("agentOptions") {
            None | Some(Value::Null) => None,
            Some(v) => Some(AgentOptions::from_value(v, &format!("{what}.agentOptions"))?),
        };
        let (mut only, mut except) = (None, Vec::new());
        if let Some(tools) = entry.get("tools").filter(|t| **t != Value::Null) {
            let what = format!("{what}.tools");
            if tools.as_object().is_none() {
                return Err(invalid(format!("{what} must be an object {{ only?, except? }}, not {}", tools.kind())));
            }
            crate::core::listing::check_fields(tools, &["only", "except"], &what)?;
            let names = |key: &str| -> Result<Option<Vec<String>>> {
                let what = format!("{what}.{key}");
                match tools.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|item| match item {
                            Value::String(name) => check_tool(name, &what).map(|()| name.clone()),
                            other => Err(invalid(format!("{what} must hold tool names, not {}", other.kind()))),
                        })
                        .collect::<Result<Vec<_>>>()
                        .map(Some),
                    Some(other) => Err(invalid(format!("{what} must be an array of tool names, not {}", other.kind()))),
                }
            };
            only = names("only")?;
            except = names("except")?.unwrap_or_default();
        }
        presets.insert(id.clone(), Preset { description, agent_options, only, except });
    }
    Ok(presets)
}

/// A local child's preset: the one its start names (which must be offered),
/// else its creator's current one.
pub fn child_preset(presets: &Presets, explicit: Option<&str>, creator: Option<&str>) -> Result<Option<String>> {
    match explicit {
        None => Ok(creator.map(str::to_owned)),
        Some(id) if presets.contains_key(id) => Ok(Some(id.to_owned())),
        Some(id) => {
            let known: Vec<&str> = presets.keys().map(String::as_str).collect();
            let list = if known.is_empty() {
                "this runtime offers none (new SubagentRuntime({ presets }))".to_owned()
            } else {
                format!("the presets are {}", known.join(", "))
            };
            Err(SubagentError::new(
                crate::core::error::ErrorCode::InvalidArgument,
                format!(
                    "agentPreset {} is not a preset of this runtime; {list}",
                    crate::core::name::quote_truncated(id, 80)
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_childs_preset_is_the_one_named_else_its_creators() {
        let mut presets = Presets::default();
        presets.insert("reviewer".into(), Preset::default());
        presets.insert("coder".into(), Preset::default());
        assert_eq!(child_preset(&presets, Some("coder"), Some("reviewer")).unwrap().as_deref(), Some("coder"));
        assert_eq!(child_preset(&presets, None, Some("reviewer")).unwrap().as_deref(), Some("reviewer"));
        assert_eq!(child_preset(&presets, None, None).unwrap(), None);
        let e = child_preset(&presets, Some("writer"), None).unwrap_err();
        assert_eq!(
            e.message,
            "agentPreset \"writer\" is not a preset of this runtime; the presets are coder, reviewer"
        );
    }

    #[test]
    fn presets_are_read_strictly() {
        let v = |t: &str| crate::core::json::parse(t, 8).unwrap();
        let presets = from_value(
            &v(r#"{"reviewer":{"description":"Reads code","agentOptions":{"model":"small"},"tools":{"except":["spawn_agent"]}}}"#),
            "options.presets",
            &crate::runtime::tools::check_tool_name,
        )
        .unwrap();
        let reviewer = presets.get("reviewer").unwrap();
        assert_eq!(reviewer.agent_options.as_ref().and_then(|o| o.model.as_deref()), Some("small"));
        assert_eq!(
            (reviewer.description.as_deref(), &reviewer.except[..]),
            (Some("Reads code"), &["spawn_agent".to_owned()][..])
        );
        for (text, message) in [
            (r#"{"x":{"descripton":"typo"}}"#, "options.presets.x has an unknown field \"descripton\"; did you mean description? options.presets.x takes description, agentOptions, tools"),
            (r#"{"x":{"tools":{"only":["send_mesage"]}}}"#, "options.presets.x.tools.only names \"send_mesage\", which is no tool: the tools are send_message, interrupt_agent, list_agents, task_create, task_list, task_update, and each provider's {name}_agent"),
            (r#"{"x":{"agentOptions":{"model":7}}}"#, "options.presets.x.agentOptions.model must be a string, not a number"),
            (r#"[1]"#, "options.presets must be an object of preset id -> { description?, agentOptions?, tools? }, not an array"),
        ] {
            let e = from_value(&v(text), "options.presets", &crate::runtime::tools::check_tool_name).unwrap_err();
            assert_eq!(e.message, message, "{text}");
        }
    }

    #[test]
    fn a_preset_narrows_tools_by_name() {
        let p = Preset {
            only: Some(vec!["send_message".into(), "list_agents".into()]),
            except: vec!["list_agents".into()],
            ..Preset::default()
        };
        assert!(p.keeps("send_message"));
        assert!(!p.keeps("list_agents") && !p.keeps("spawn_agent"));
        assert!(Preset::default().keeps("spawn_agent"));
    }
}
