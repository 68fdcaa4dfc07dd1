//! Property-based fuzzing of the parsers that read untrusted input: the name
//! grammar, agent references, catalog payloads, the catalog projection and the
//! output-schema subset, plus the limits and the directory policy with
//! oversized, deep and ill-formed inputs.
//!
//! Each `#[test]` is one fuzz target. Under plain `cargo test` a target runs a
//! few cases (`PROPTEST_CASES`, default 64); `make fuzz` (scripts/fuzz.sh) runs
//! each for a time budget (`FUZZ_SECONDS`), in batches with fresh seeds, and
//! every target prints `fuzz <target>: <n> executions, <k> findings`.
//! Failing inputs are persisted to `tests/fuzz.proptest-regressions` and
//! replayed first on every later run.

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseResult, TestRunner};
use serde_json::json;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use subagent_tree::catalog::{self, CatalogEntry, Mode};
use subagent_tree::event::{self, SessionEvent};
use subagent_tree::json::{Value, MAX_SAFE_INTEGER};
use subagent_tree::limits::{json_size, Limits};
use subagent_tree::name::{self, AgentName, AgentRef};
use subagent_tree::path;
use subagent_tree::schema::OutputSchema;
use subagent_tree::ErrorCode;

// ---------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------

/// Runs `test` on inputs from `strategy`: `PROPTEST_CASES` cases (default 64),
/// or batches of fresh cases until `FUZZ_SECONDS` have passed. Prints the
/// execution count (shrinking included) and panics with the minimal failing
/// input on a finding.
fn fuzz<S: Strategy>(target: &str, strategy: S, test: impl Fn(S::Value) -> TestCaseResult) {
    let env_number = |key: &str| std::env::var(key).ok().and_then(|v| v.trim().parse::<u64>().ok());
    let budget = env_number("FUZZ_SECONDS").map(Duration::from_secs);
    let cases = env_number("PROPTEST_CASES").unwrap_or(64).clamp(1, u32::MAX as u64) as u32;
    let batch = if budget.is_some() { cases.min(4096) } else { cases };
    let config = Config {
        cases: batch,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))),
        max_shrink_iters: 100_000,
        ..Config::default()
    };
    let executions = Cell::new(0u64);
    let started = Instant::now();
    let outcome = loop {
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&strategy, |input| {
            executions.set(executions.get() + 1);
            test(input)
        });
        match (result, budget) {
            (Err(e), _) => break Err(e.to_string()),
            (Ok(()), Some(budget)) if started.elapsed() < budget => continue,
            (Ok(()), _) => break Ok(()),
        }
    };
    let findings = usize::from(outcome.is_err());
    eprintln!(
        "fuzz {target}: {} executions, {findings} findings, {:.1}s",
        executions.get(),
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = outcome {
        panic!("fuzz {target} found a failing input: {e}");
    }
}

/// The crate's JSON value from a `serde_json` literal.
fn value(j: serde_json::Value) -> Value {
    serde_json::from_value(j).expect("a JSON value")
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Strings near the name grammar's edges, plus arbitrary ones.
fn name_like() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        'a', 'z', 'm', '0', '9', '-', 'A', 'Z', '_', '/', ' ', '.', 'é', 'ı', 'K', 'ſ', '\u{212A}', '\0', '`', '{',
        '@', '[', ':',
    ]);
    prop_oneof![
        3 => "[a-z][a-z0-9-]{0,33}",
        2 => prop::collection::vec(tricky, 0..40).prop_map(|cs| cs.into_iter().collect()),
        1 => any::<String>(),
        1 => prop::sample::select(vec!["lead", "leader", "lead-", "agent-1", "a", "", "-", "a-", "agent-0", "agent-01"])
            .prop_map(String::from),
        1 => (1usize..=40).prop_map(|n| "a".repeat(n)),
    ]
}

/// A hyphenated UUID spelled in any case.
fn uuid() -> impl Strategy<Value = String> {
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
}

/// Numbers with the edge cases the decoders care about.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.0,
            3.0,
            4.0,
            MAX_SAFE_INTEGER,
            MAX_SAFE_INTEGER + 1.0,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        any::<f64>(),
        (-5i64..50).prop_map(|n| n as f64),
    ]
}

/// Arbitrary JSON values, nested a few levels, with keys that may repeat.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        prop_oneof![any::<String>(), name_like()].prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        let key = prop_oneof![
            prop::sample::select(vec![
                "version",
                "childId",
                "childCreatedAt",
                "mode",
                "label",
                "name",
                "type",
                "properties",
                "items",
                "a",
                "",
            ])
            .prop_map(String::from),
            any::<String>(),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key, inner), 0..6).prop_map(Value::Object),
        ]
    })
}

/// Objects shaped like catalog payloads: each known field present or not,
/// with valid and invalid values, plus the odd unknown field, in any order.
fn payload_like() -> impl Strategy<Value = Value> {
    let field = |key: &'static str, values: Vec<serde_json::Value>| {
        prop::option::weighted(0.85, prop::sample::select(values).prop_map(move |v| (key.to_owned(), value(v))))
    };
    let any_string = || any::<String>().prop_map(Value::String);
    (
        field("version", vec![json!(0), json!(1), json!(2), json!(3), json!(4), json!(-1), json!(1.5), json!("0")]),
        prop::option::weighted(
            0.9,
            prop_oneof![
                prop::sample::select(vec![
                    json!("c"),
                    json!(""),
                    json!("0b0e7c1e-8c0a-4f7e-9d8b-2f4a6c1d3e5f"),
                    json!(3)
                ])
                .prop_map(value),
                any_string(),
            ]
            .prop_map(|v| ("childId".to_owned(), v)),
        ),
        prop::option::weighted(0.9, number().prop_map(|n| ("childCreatedAt".to_owned(), Value::Number(n)))),
        field(
            "mode",
            vec![
                json!("one-shot"),
                json!("continuable"),
                json!("external"),
                json!("unknown"),
                json!("ONE-SHOT"),
                json!(""),
                json!(1),
            ],
        ),
        field("label", vec![json!("L"), json!(""), json!(null), json!(3)]),
        prop::option::weighted(
            0.7,
            prop_oneof![
                3 => name_like().prop_map(Value::String),
                1 => prop::sample::select(vec![json!(7), json!(null), json!(["a"])]).prop_map(value),
            ]
            .prop_map(|v| ("name".to_owned(), v)),
        ),
        prop::option::weighted(0.1, (name_like(), any_value())),
    )
        .prop_map(|(a, b, c, d, e, f, g)| {
            let mut entries: Vec<(String, Value)> = [a, b, c, d, e, f].into_iter().flatten().collect();
            if let Some((key, v)) = g {
                if !entries.iter().any(|(k, _)| *k == key) {
                    entries.push((key, v));
                }
            }
            entries
        })
        .prop_shuffle()
        .prop_map(Value::Object)
}

/// A valid entry of any payload version, and the payload it is written as.
fn valid_payload() -> impl Strategy<Value = Value> {
    let valid_name = "[a-z][a-z0-9-]{0,31}".prop_filter("not lead", |n| n != "lead");
    (
        0u64..=3,
        "[a-z0-9-]{1,12}",
        0u64..=MAX_SAFE_INTEGER as u64,
        any::<u8>(),
        valid_name,
        prop::option::of("[a-z ]{0,8}"),
    )
        .prop_map(|(version, id, created_at, mode_pick, name, label)| {
            let modes: &[&str] = match version {
                0 => &["one-shot", "continuable"],
                1 => &["one-shot", "continuable", "unknown"],
                2 => &["external"],
                _ => &["one-shot", "continuable", "external"],
            };
            let mode = modes[mode_pick as usize % modes.len()];
            let label = if mode == "continuable" { Some(label.unwrap_or_default()) } else { label };
            let mut payload = json!({"version": version, "childId": id, "childCreatedAt": created_at, "mode": mode});
            if let Some(label) = label {
                payload["label"] = json!(label);
            }
            if version == 3 {
                payload["name"] = json!(name);
            }
            value(payload)
        })
}

// ---------------------------------------------------------------------------
// Reference implementations, written differently from the crate's
// ---------------------------------------------------------------------------

/// The name grammar as a character-class walk.
fn reference_is_valid_name(text: &str) -> bool {
    let mut count = 0;
    for (i, c) in text.chars().enumerate() {
        let ok = match c {
            'a'..='z' => true,
            '0'..='9' | '-' => i > 0,
            _ => false,
        };
        if !ok {
            return false;
        }
        count += 1;
    }
    (1..=32).contains(&count) && text != "lead"
}

/// The smallest N >= 1 with `agent-N` not in `taken`.
fn reference_default_name(taken: &[String]) -> String {
    (1u64..).map(|n| format!("agent-{n}")).find(|candidate| !taken.contains(candidate)).expect("some N is free")
}

/// Whether the strict catalog decoder should accept `payload` (keys unique).
fn reference_accepts_payload(payload: &Value) -> bool {
    let Some(fields) = payload.as_object() else { return false };
    let map: BTreeMap<&str, &Value> = fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let integer = |v: &Value| match v {
        Value::Number(n) => *n >= 0.0 && n.floor() == *n && *n <= MAX_SAFE_INTEGER,
        _ => false,
    };
    let Some(version) = map.get("version").filter(|v| integer(v)).and_then(|v| v.as_u64()) else { return false };
    if version > 3 {
        return false;
    }
    let allowed: &[&str] = if version == 3 {
        &["version", "childId", "childCreatedAt", "mode", "label", "name"]
    } else {
        &["version", "childId", "childCreatedAt", "mode", "label"]
    };
    if map.keys().any(|k| !allowed.contains(k)) {
        return false;
    }
    if !matches!(map.get("childId"), Some(Value::String(s)) if !s.is_empty()) {
        return false;
    }
    if !map.get("childCreatedAt").is_some_and(|v| integer(v)) {
        return false;
    }
    let modes: &[&str] = match version {
        0 => &["one-shot", "continuable"],
        1 => &["one-shot", "continuable", "unknown"],
        2 => &["external"],
        _ => &["one-shot", "continuable", "external"],
    };
    let Some(mode) = map.get("mode").and_then(|m| m.as_str()) else { return false };
    if !modes.contains(&mode) {
        return false;
    }
    match map.get("label") {
        None if mode == "continuable" => return false,
        None | Some(Value::String(_)) => {}
        Some(_) => return false,
    }
    version != 3 || matches!(map.get("name"), Some(Value::String(n)) if reference_is_valid_name(n))
}

/// JSON equality over `serde_json` values: numbers by value, maps by key.
fn reference_json_eq(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| reference_json_eq(x, y)),
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| reference_json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The schema subset, interpreted straight from the schema's JSON.
fn reference_validate(schema: &serde_json::Value, v: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    let s = schema.as_object().expect("a schema object");
    let number_kw = |k: &str| s.get(k).and_then(J::as_f64);
    let count_kw = |k: &str| s.get(k).and_then(J::as_f64).map(|n| n as usize);
    if let Some(t) = s.get("type") {
        let names: Vec<&str> = match t {
            J::String(name) => vec![name],
            J::Array(names) => names.iter().filter_map(J::as_str).collect(),
            _ => unreachable!(),
        };
        let matches = |name: &str| match (name, v) {
            ("object", J::Object(_)) | ("array", J::Array(_)) | ("string", J::String(_)) => true,
            ("number", J::Number(_)) | ("boolean", J::Bool(_)) | ("null", J::Null) => true,
            ("integer", J::Number(n)) => n.as_f64().is_some_and(|f| f.trunc() == f),
            _ => false,
        };
        if !names.into_iter().any(matches) {
            return false;
        }
    }
    if s.get("const").is_some_and(|c| !reference_json_eq(c, v)) {
        return false;
    }
    if let Some(J::Array(options)) = s.get("enum") {
        if !options.iter().any(|o| reference_json_eq(o, v)) {
            return false;
        }
    }
    match v {
        J::Object(map) => {
            let empty = serde_json::Map::new();
            let props = s.get("properties").and_then(J::as_object).unwrap_or(&empty);
            let required = s.get("required").and_then(J::as_array).cloned().unwrap_or_default();
            if required.iter().any(|r| !map.contains_key(r.as_str().unwrap())) {
                return false;
            }
            let closed = s.get("additionalProperties") == Some(&J::Bool(false));
            map.iter().all(|(k, x)| match props.get(k) {
                Some(sub) => reference_validate(sub, x),
                None => !closed,
            })
        }
        J::Array(items) => {
            count_kw("minItems").is_none_or(|min| items.len() >= min)
                && count_kw("maxItems").is_none_or(|max| items.len() <= max)
                && s.get("items").is_none_or(|sub| items.iter().all(|x| reference_validate(sub, x)))
        }
        J::String(text) => {
            let n = text.chars().count();
            count_kw("minLength").is_none_or(|min| n >= min) && count_kw("maxLength").is_none_or(|max| n <= max)
        }
        J::Number(n) => {
            let n = n.as_f64().unwrap();
            number_kw("minimum").is_none_or(|min| n >= min) && number_kw("maximum").is_none_or(|max| n <= max)
        }
        J::Bool(_) | J::Null => true,
    }
}

// ---------------------------------------------------------------------------
// JSON values
// ---------------------------------------------------------------------------

/// Whether any object in `value` repeats a key.
fn has_duplicate_keys(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(has_duplicate_keys),
        Value::Object(entries) => {
            entries.iter().enumerate().any(|(i, (k, _))| entries[..i].iter().any(|(other, _)| other == k))
                || entries.iter().any(|(_, v)| has_duplicate_keys(v))
        }
        _ => false,
    }
}

/// `value` with every non-finite number (which JSON cannot spell) replaced by 0.
fn finite(value: Value) -> Value {
    match value {
        Value::Number(n) if !n.is_finite() => Value::Number(0.0),
        Value::Array(items) => Value::Array(items.into_iter().map(finite).collect()),
        Value::Object(entries) => Value::Object(entries.into_iter().map(|(k, v)| (k, finite(v))).collect()),
        other => other,
    }
}

/// Equal, but numbers only to within a few ulps: serde_json's default float
/// parser (without its `float_roundtrip` feature) can be off by an ulp or so,
/// e.g. it reads `9007199254740991.0` as 9007199254740990, and subnormals
/// like `3.8866619209894e-310` as their neighbours.
fn nearly_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.signum() == y.signum() && x.to_bits().abs_diff(y.to_bits()) <= 4)
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| nearly_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, x), (l, y))| k == l && nearly_equal(x, y))
        }
        _ => a == b,
    }
}

#[test]
fn fuzz_json_round_trip() {
    fuzz("json_round_trip", any_value().prop_map(finite), |original| {
        let text = serde_json::to_string(&original).expect("serializable");
        let reparsed = serde_json::from_str::<Value>(&text);
        if has_duplicate_keys(&original) {
            // A JSON text that repeats a key is refused, never silently merged.
            let e = reparsed.expect_err("a duplicate key is refused");
            prop_assert!(e.to_string().contains("duplicate key"), "{}", e);
        } else {
            let reparsed = reparsed.map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            prop_assert!(nearly_equal(&reparsed, &original), "{} came back as {:?}", text, reparsed);
        }
        Ok(())
    });
}

/// The bridge's fast path: `to_json` text (what `JSON.stringify` would write,
/// and also serde_json's text, with escapes) reads back as the same value,
/// exactly; text with a lone surrogate escape or nesting past the bound is
/// `None`, never a panic.
#[test]
fn fuzz_json_text_reader() {
    use subagent_tree::json::parse;
    fuzz("json_text_reader", any_value().prop_map(finite), |original| {
        let ours = original.to_json();
        prop_assert_eq!(parse(&ours, 128), Some(original.clone()), "{}", ours);
        let theirs = serde_json::to_string_pretty(&original).expect("serializable");
        prop_assert_eq!(parse(&theirs, 128), Some(original.clone()), "{}", theirs);
        if matches!(original, Value::Array(_) | Value::Object(_)) {
            prop_assert_eq!(parse(&ours, 0), None);
        }
        prop_assert_eq!(parse(&format!("[{ours},\"\\ud800\"]"), 128), None);
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// Names and references
// ---------------------------------------------------------------------------

#[test]
fn fuzz_name_grammar() {
    fuzz("name_grammar", name_like(), |text| {
        let valid = name::is_valid_name(&text);
        prop_assert_eq!(valid, reference_is_valid_name(&text), "{:?}", text);
        match AgentName::parse(&text) {
            Ok(parsed) => {
                prop_assert!(valid);
                prop_assert_eq!(parsed.as_str(), text.as_str());
                prop_assert_eq!(parsed.to_string(), text.clone());
                prop_assert_eq!(AgentName::parse(parsed.as_str()).ok(), Some(parsed.clone()));
                prop_assert_eq!(AgentRef::parse(&text), AgentRef::Path(vec![parsed]));
            }
            Err(e) => {
                prop_assert!(!valid);
                prop_assert_eq!(e.code, ErrorCode::InvalidName);
                prop_assert!(e.message.starts_with("agent name "), "{}", e.message);
                prop_assert!(e.message.len() < 400, "{} bytes", e.message.len());
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_uuids_are_never_names() {
    let any_36 =
        prop_oneof![uuid(), "[a-z0-9-]{36}", prop::collection::vec(any::<char>(), 36).prop_map(String::from_iter)];
    fuzz("uuids_are_never_names", any_36, |id| {
        prop_assert!(!name::is_valid_name(&id), "{:?}", id);
        prop_assert!(AgentName::parse(&id).is_err());
        if !id.contains('/') {
            prop_assert_eq!(AgentRef::parse(&id), AgentRef::Session(id.clone()));
        }
        Ok(())
    });
}

#[test]
fn fuzz_default_name() {
    let taken_one = prop_oneof![
        3 => (0u64..40).prop_map(|n| format!("agent-{n}")),
        1 => (0u64..40).prop_map(|n| format!("agent-0{n}")),
        1 => name_like(),
        1 => (0u64..u64::MAX).prop_map(|n| format!("agent-{n}")),
    ];
    fuzz("default_name", prop::collection::vec(taken_one, 0..48), |taken| {
        let chosen = name::default_name(&taken);
        prop_assert!(name::is_valid_name(chosen.as_str()), "{}", chosen);
        prop_assert!(!taken.iter().any(|t| t == chosen.as_str()), "{} is taken", chosen);
        prop_assert_eq!(chosen.as_str(), reference_default_name(&taken));
        Ok(())
    });
}

#[test]
fn fuzz_agent_ref() {
    let segment = prop_oneof![3 => "[a-z][a-z0-9-]{0,5}", 1 => name_like(), 1 => Just("lead".to_owned())];
    let reference = prop_oneof![
        2 => prop::collection::vec(segment, 0..5).prop_map(|s| s.join("/")),
        1 => name_like(),
        1 => uuid(),
        1 => any::<String>(),
    ];
    fuzz("agent_ref", reference, |text| {
        let segments: Vec<&str> = text.split('/').collect();
        match AgentRef::parse(&text) {
            AgentRef::Lead => prop_assert_eq!(text.as_str(), "lead"),
            AgentRef::Path(names) => {
                prop_assert!(text != "lead");
                let joined: Vec<&str> = names.iter().map(AgentName::as_str).collect();
                prop_assert_eq!(joined.join("/"), text.clone());
                prop_assert!(joined.iter().all(|s| reference_is_valid_name(s)));
            }
            AgentRef::Session(id) => {
                prop_assert_eq!(&id, &text);
                prop_assert!(text != "lead");
                prop_assert!(!segments.iter().all(|s| reference_is_valid_name(s)), "{:?} is a path", text);
            }
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// Catalog payloads and the projection
// ---------------------------------------------------------------------------

/// What every decoded entry satisfies, and its v3 round trip.
fn check_decoded(entry: &CatalogEntry) -> TestCaseResult {
    prop_assert!(!entry.id.is_empty());
    prop_assert!(entry.created_at as f64 <= MAX_SAFE_INTEGER);
    prop_assert!(entry.mode != Mode::Continuable || entry.label.is_some());
    prop_assert!(entry.name.as_ref().is_none_or(|n| name::is_valid_name(n.as_str())));
    let payload = entry.to_payload();
    prop_assert_eq!(payload.get("version").and_then(Value::as_u64), Some(catalog::CURRENT_VERSION));
    match (&entry.name, entry.mode, catalog::decode_payload(&payload)) {
        // v3 has no `unknown` mode: such an entry cannot be rewritten.
        (Some(_), Mode::Unknown, decoded) => prop_assert!(decoded.is_err()),
        (Some(_), _, decoded) => prop_assert_eq!(decoded.ok(), Some(entry.clone())),
        // v3 requires a name.
        (None, _, decoded) => prop_assert!(decoded.is_err()),
    }
    Ok(())
}

#[test]
fn fuzz_decode_payload_arbitrary() {
    fuzz("decode_payload_arbitrary", any_value(), |payload| {
        match catalog::decode_payload(&payload) {
            Ok(entry) => check_decoded(&entry)?,
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::CorruptCatalog);
                prop_assert!(e.message.len() < 400, "{} bytes", e.message.len());
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_decode_payload_near_valid() {
    fuzz("decode_payload_near_valid", prop_oneof![payload_like(), valid_payload()], |payload| {
        let decoded = catalog::decode_payload(&payload);
        prop_assert_eq!(decoded.is_ok(), reference_accepts_payload(&payload), "{:?} -> {:?}", payload, decoded);
        match decoded {
            Ok(entry) => {
                check_decoded(&entry)?;
                prop_assert_eq!(Some(entry.id.as_str()), payload.get("childId").and_then(Value::as_str));
                prop_assert_eq!(Some(entry.mode.as_str()), payload.get("mode").and_then(Value::as_str));
                prop_assert_eq!(entry.label.as_deref(), payload.get("label").and_then(Value::as_str));
            }
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::CorruptCatalog);
                prop_assert!(e.message.len() < 400, "{} bytes", e.message.len());
            }
        }
        Ok(())
    });
}

#[derive(Clone, Debug)]
enum Slot {
    Catalog(Value),
    Corrupt(Value),
    Start(u64),
    Other(String),
}

#[test]
fn fuzz_projection() {
    let slot = prop_oneof![
        4 => valid_payload().prop_map(Slot::Catalog),
        1 => any_value().prop_filter_map("corrupt", |v| catalog::decode_payload(&v).is_err().then_some(Slot::Corrupt(v))),
        // What a store bridge hands over for an event that did not read whole: always bad.
        1 => valid_payload().prop_map(|p| {
            let mut fields = p.as_object().unwrap_or_default().to_vec();
            fields.push((event::DAMAGED.to_owned(), Value::from("payload.label is not well-formed Unicode")));
            Slot::Corrupt(Value::Object(fields))
        }),
        1 => (0u64..12).prop_map(Slot::Start),
        1 => prop::sample::select(vec!["message/user", "message/assistant", "subagent/catalog2", "Subagent/catalog"])
            .prop_map(String::from)
            .prop_map(Slot::Other),
    ];
    fuzz(
        "projection",
        (prop::collection::vec(slot, 0..12), prop_oneof![Just(0u64), 0u64..4, 0u64..14]),
        |(slots, inherited)| {
            let events: Vec<SessionEvent> = slots
                .iter()
                .enumerate()
                .map(|(seq, slot)| {
                    let seq = seq as u64;
                    match slot {
                        Slot::Catalog(p) | Slot::Corrupt(p) => SessionEvent::new(seq, event::CATALOG, p.clone()),
                        Slot::Start(n) => SessionEvent::new(
                            seq,
                            event::SESSION_START,
                            Value::object([("inheritedEventCount", Some(Value::from(*n)))]),
                        ),
                        Slot::Other(kind) => SessionEvent::new(seq, kind.as_str(), Value::Null),
                    }
                })
                .collect();
            let own: Vec<(u64, &Slot)> =
                slots.iter().enumerate().map(|(i, s)| (i as u64, s)).skip(inherited as usize).collect();
            let first_corrupt = own.iter().find(|(_, s)| matches!(s, Slot::Corrupt(_))).map(|(seq, _)| *seq);
            let expected: Vec<CatalogEntry> = own
                .iter()
                .filter_map(|(_, s)| match s {
                    Slot::Catalog(p) => Some(catalog::decode_payload(p).expect("a valid payload")),
                    _ => None,
                })
                .collect();
            match (catalog::project(&events, inherited), first_corrupt) {
                (Ok(entries), None) => prop_assert_eq!(entries, expected),
                (Err(e), Some(seq)) => {
                    prop_assert_eq!(e.code, ErrorCode::CorruptCatalog);
                    let prefix = format!("event {seq}: ");
                    prop_assert!(e.message.starts_with(&prefix), "{}", e.message);
                }
                (result, corrupt) => prop_assert!(false, "{:?} with first corrupt own event {:?}", result, corrupt),
            }
            prop_assert_eq!(
                catalog::project_log(&events),
                catalog::project(&events, event::inherited_event_count(&events))
            );
            // Entry by entry: one item per own catalog event, bad ones where they are, the rest as decoded.
            let each = catalog::project_each(&events, inherited);
            let own_catalog: Vec<&(u64, &Slot)> =
                own.iter().filter(|(_, s)| matches!(s, Slot::Catalog(_) | Slot::Corrupt(_))).collect();
            prop_assert_eq!(each.len(), own_catalog.len());
            for (item, (seq, slot)) in each.iter().zip(own_catalog) {
                match (item, slot) {
                    (Ok(entry), Slot::Catalog(p)) => {
                        prop_assert_eq!(Some(entry.clone()), catalog::decode_payload(p).ok())
                    }
                    (Err(d), Slot::Corrupt(_)) => {
                        prop_assert_eq!(d.seq, *seq);
                        prop_assert!(d.detail.starts_with(&format!("event {seq}: ")), "{}", d.detail);
                        prop_assert!(d.id.as_deref().is_none_or(|id| !id.is_empty()));
                    }
                    (item, slot) => prop_assert!(false, "{:?} for {:?}", item, slot),
                }
            }
            if let (Err(e), Some(Err(d))) = (catalog::project(&events, inherited), each.iter().find(|i| i.is_err())) {
                prop_assert_eq!(e.message, d.detail.clone());
            }
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------
// Output schemas
// ---------------------------------------------------------------------------

/// Small scalars and containers, so that `enum`, `const` and bounds hit often.
fn instance() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(|b| json!(b)),
        prop::sample::select(vec![-2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 1e300]).prop_map(|n| json!(n)),
        prop::sample::select(vec!["", "a", "ab", "héé", "😀😀", "abcd"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c", "d"]), inner, 0..4)
                .prop_map(|m| json!(m)),
        ]
    })
}

/// Schemas inside the subset: every keyword, a few levels deep.
fn subset_schema() -> impl Strategy<Value = serde_json::Value> {
    let type_names = vec!["object", "array", "string", "number", "integer", "boolean", "null"];
    let types = prop_oneof![
        prop::sample::select(type_names.clone()).prop_map(|t| json!(t)),
        prop::sample::subsequence(type_names, 1..4).prop_shuffle().prop_map(|t| json!(t)),
    ];
    let leaf_keywords = (
        prop::option::weighted(0.5, types),
        prop::option::weighted(0.15, prop::collection::vec(instance(), 1..4)),
        prop::option::weighted(0.1, instance()),
        prop::option::weighted(0.2, (0u64..3, 0u64..5)),
        prop::option::weighted(0.2, (0u64..3, 0u64..5)),
        prop::option::weighted(0.2, (prop::sample::select(vec![-1.0, 0.0, 0.5, 1.0]), 0.0f64..4.0)),
        prop::option::weighted(0.1, "[a-z ]{0,6}"),
    );
    let leaf = leaf_keywords.prop_map(|(t, e, c, items, length, bounds, title)| {
        let mut s = serde_json::Map::new();
        if let Some(t) = t {
            s.insert("type".into(), t);
        }
        if let Some(e) = e {
            s.insert("enum".into(), json!(e));
        }
        if let Some(c) = c {
            s.insert("const".into(), c);
        }
        if let Some((min, max)) = items {
            s.insert("minItems".into(), json!(min));
            s.insert("maxItems".into(), json!(max));
        }
        if let Some((min, max)) = length {
            s.insert("minLength".into(), json!(min));
            s.insert("maxLength".into(), json!(max));
        }
        if let Some((min, max)) = bounds {
            s.insert("minimum".into(), json!(min));
            s.insert("maximum".into(), json!(max));
        }
        if let Some(title) = title {
            s.insert("title".into(), json!(title));
            s.insert("description".into(), json!(title));
            s.insert("default".into(), json!([title]));
        }
        serde_json::Value::Object(s)
    });
    leaf.prop_recursive(4, 32, 4, |inner| {
        (
            inner.clone(),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner.clone(), 0..4),
            any::<u8>(),
            prop::option::of(any::<bool>()),
            prop::option::weighted(0.4, inner),
        )
            .prop_map(|(base, props, required_mask, additional, items)| {
                let mut s = base.as_object().cloned().unwrap_or_default();
                let required: Vec<&str> =
                    props.keys().enumerate().filter(|(i, _)| required_mask & (1 << i) != 0).map(|(_, k)| *k).collect();
                if !props.is_empty() || required_mask & 0x80 != 0 {
                    s.insert("properties".into(), json!(props));
                    s.insert("required".into(), json!(required));
                }
                if let Some(additional) = additional {
                    s.insert("additionalProperties".into(), json!(additional));
                }
                if let Some(items) = items {
                    s.insert("items".into(), items);
                }
                serde_json::Value::Object(s)
            })
    })
}

/// A subset schema with `"type": "object"` at the root.
fn rooted_subset_schema() -> impl Strategy<Value = serde_json::Value> {
    subset_schema().prop_map(|s| {
        let mut s = s.as_object().cloned().unwrap_or_default();
        s.insert("type".into(), json!("object"));
        serde_json::Value::Object(s)
    })
}

#[test]
fn fuzz_schema_agrees_with_reference() {
    let rooted = rooted_subset_schema();
    let instances = prop::collection::vec(
        prop_oneof![
            3 => prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c", "d"]), instance(), 0..4)
                .prop_map(|m| json!(m)),
            1 => instance(),
        ],
        1..8,
    );
    fuzz("schema_agrees_with_reference", (rooted, instances), |(schema_json, instances)| {
        let compiled = match OutputSchema::parse(&value(schema_json.clone())) {
            Ok(compiled) => compiled,
            Err(e) => return Err(TestCaseError::fail(format!("{schema_json} was rejected: {}", e.message))),
        };
        prop_assert_eq!(compiled.source(), &value(schema_json.clone()));
        for instance in instances {
            let got = compiled.validate(&value(instance.clone()));
            let expected = reference_validate(&schema_json, &instance);
            prop_assert_eq!(got.is_ok(), expected, "schema {} value {} -> {:?}", schema_json, instance, got);
            if let Err(sentence) = got {
                prop_assert!(sentence.starts_with('/') || sentence.starts_with("the root "), "{}", sentence);
                prop_assert!(sentence.contains(" must "), "{}", sentence);
            }
        }
        Ok(())
    });
}

/// Objects built from schema keywords with arbitrary values: mostly rejected.
fn schema_like() -> impl Strategy<Value = Value> {
    let keyword = prop_oneof![
        6 => prop::sample::select(vec![
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "description",
            "title",
            "default",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "minItems",
            "maxItems",
            "$ref",
            "oneOf",
            "pattern",
        ])
        .prop_map(String::from),
        1 => any::<String>(),
    ];
    let leaf = prop_oneof![
        any_value(),
        prop::sample::select(vec![
            json!("object"),
            json!("string"),
            json!(["integer", "null"]),
            json!(["a"]),
            json!(true),
            json!(-1),
            json!(2),
        ])
        .prop_map(value),
    ];
    leaf.prop_recursive(5, 48, 5, move |inner| {
        prop::collection::vec((keyword.clone(), inner), 0..6).prop_map(|mut entries| {
            if entries.len() % 2 == 1 {
                entries.insert(0, ("type".into(), Value::from("object")));
            }
            Value::Object(entries)
        })
    })
}

#[test]
fn fuzz_schema_never_panics() {
    let schemas = prop_oneof![schema_like(), any_value(), rooted_subset_schema().prop_map(value)];
    let instances = prop_oneof![any_value(), instance().prop_map(value)];
    fuzz("schema_never_panics", (schemas, instances), |(schema, instance)| {
        match OutputSchema::parse(&schema) {
            Ok(compiled) => {
                prop_assert_eq!(format!("{:?}", compiled.source()), format!("{schema:?}"));
                if let Err(sentence) = compiled.validate(&instance) {
                    prop_assert!(sentence.len() < 1000, "{} bytes", sentence.len());
                }
            }
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::UnsupportedCapability);
                prop_assert!(e.message.starts_with("output schema "), "{}", e.message);
                prop_assert!(e.message.len() < 1000, "{} bytes", e.message.len());
            }
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------
// Limits and the directory policy: oversized, deep and ill-formed inputs
// ---------------------------------------------------------------------------

/// The measured size, recursively (the reference for the iterative `json_size`).
fn reference_size(v: &Value) -> usize {
    1 + match v {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(reference_size).sum(),
        Value::Object(entries) => entries.iter().map(|(k, v)| k.len() + reference_size(v)).sum(),
        _ => 0,
    }
}

/// Content of any size: `blocks` text blocks of `len` copies of one (possibly
/// multi-byte) character, optionally wrapped `depth` levels deep in one block.
fn oversized_content() -> impl Strategy<Value = (Value, usize)> {
    let ch = prop::sample::select(vec!['a', 'é', '€', '😀', '\u{FFFD}', '\u{202E}']);
    (ch, 0usize..600_000, 0usize..400, 0usize..300).prop_map(|(ch, len, blocks, depth)| {
        let text: String = std::iter::repeat_n(ch, len / blocks.max(1)).collect();
        let mut items: Vec<Value> = (0..blocks).map(|_| subagent_tree::result::text_block(&text)).collect();
        if depth > 0 {
            let mut deep = Value::from("x");
            for _ in 0..depth {
                deep = Value::object([("type", Some(Value::from("nest"))), ("inner", Some(deep))]);
            }
            items.push(deep);
        }
        let count = items.len();
        (Value::Array(items), count)
    })
}

#[test]
fn fuzz_limits_on_oversized_content() {
    let limits = Limits { message_bytes: 1 << 20, content_blocks: 256, ..Limits::default() };
    fuzz("limits_on_oversized_content", oversized_content(), |(content, blocks)| {
        let size = json_size(&content);
        prop_assert_eq!(size, reference_size(&content));
        let outcome = limits.check_message(&content);
        let fits = blocks <= 256 && size <= 1 << 20;
        prop_assert_eq!(outcome.is_ok(), fits, "{} blocks, {} bytes", blocks, size);
        if let Err(e) = outcome {
            prop_assert_eq!(e.code, ErrorCode::LimitExceeded);
            prop_assert!(e.message.contains("contentBlocks") || e.message.contains("messageBytes"), "{}", e.message);
            prop_assert!(e.message.len() < 200, "{}", e.message);
        }
        Ok(())
    });
}

/// Paths built from hostile segments: `..`, `.`, empty, NUL, very long, absolute or not.
fn path_like() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        prop::sample::select(vec![
            "..", ".", "", "a", "etc", "work", "app", "src", "\0", "a\0b", "…", "..\\..", "a\\b"
        ])
        .prop_map(String::from),
        "[a-z.]{0,4}",
        (1usize..3000).prop_map(|n| "d".repeat(n)),
    ];
    (any::<bool>(), prop::collection::vec(segment, 0..8)).prop_map(|(absolute, parts)| {
        let joined = parts.join("/");
        if absolute {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

#[test]
fn fuzz_cwd_confinement() {
    let roots = prop::sample::select(vec!["/", "/work", "/work/app", "/work/app/"]);
    fuzz("cwd_confinement", (roots, prop::option::of(path_like()), any::<bool>()), |(root, requested, below)| {
        let root_dir = path::normalize(root);
        let parent = if below { format!("{root_dir}/sub") } else { root_dir.clone() };
        let parent = path::normalize(&parent);
        let outcome = path::confine(root, &parent, requested.as_deref(), true);
        let has_nul = requested.as_deref().is_some_and(|p| p.contains('\0'));
        let too_long = requested.as_deref().is_some_and(|p| p.len() > subagent_tree::limits::MAX_CWD_BYTES);
        let backslash = requested.as_deref().is_some_and(|p| p.contains('\\'));
        let resolved = path::resolve(&parent, requested.as_deref());
        match outcome {
            Ok(dir) => {
                prop_assert!(!has_nul && !too_long && !backslash);
                prop_assert_eq!(&dir, &resolved);
                prop_assert!(dir.starts_with('/') && !dir.contains('\0'));
                prop_assert!(!dir.split('/').any(|s| s == ".." || s == "."), "{}", dir);
                prop_assert!(path::is_within(&dir, &root_dir), "{} escapes {}", dir, root_dir);
            }
            Err(e) => {
                let expected = if too_long {
                    ErrorCode::LimitExceeded
                } else if has_nul || backslash {
                    ErrorCode::InvalidArgument
                } else {
                    prop_assert!(!path::is_within(&resolved, &root_dir), "{} was refused", resolved);
                    ErrorCode::Unauthorized
                };
                prop_assert_eq!(e.code, expected, "{}", e.message);
                prop_assert!(e.message.len() < 400, "{} bytes", e.message.len());
            }
        }
        // Unconfined, only NUL and length are refused.
        let open = path::confine(root, &parent, requested.as_deref(), false);
        prop_assert_eq!(open.is_ok(), !has_nul && !too_long);
        Ok(())
    });
}

#[test]
fn fuzz_deep_and_oversized_payloads() {
    // Catalog payloads and schemas nested thousands of levels, or holding megabytes: a coded error, never a crash.
    let shape = (0usize..2000, 0usize..2_000_000, prop::sample::select(vec!["label", "childId", "name", "extra"]));
    fuzz("deep_and_oversized_payloads", shape, |(depth, len, key)| {
        let mut deep = Value::from("€".repeat(len / 3));
        for _ in 0..depth {
            deep = Value::Array(vec![deep]);
        }
        let payload = Value::object([
            ("version", Some(Value::Number(3.0))),
            ("childId", Some(Value::from("c"))),
            ("childCreatedAt", Some(Value::Number(1.0))),
            ("mode", Some(Value::from("one-shot"))),
            ("name", Some(Value::from("kid"))),
            (key, Some(deep.clone())),
        ]);
        match catalog::decode_payload(&payload) {
            // A repeated childId or name is read from its first occurrence.
            Ok(entry) => prop_assert!(
                key != "extra" && (depth == 0 || key != "label"),
                "{} {:?}",
                key,
                entry.label.map(|l| l.len())
            ),
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::CorruptCatalog);
                prop_assert!(e.message.len() < 1000, "{} bytes", e.message.len());
            }
        }
        let schema = Value::object([("type", Some(Value::from("object"))), ("properties", Some(deep))]);
        if let Err(e) = OutputSchema::parse(&schema) {
            prop_assert!(e.message.len() < 1000, "{} bytes", e.message.len());
        }
        prop_assert!(Limits::default().check_payload("payload", &payload).is_ok() == (json_size(&payload) <= 4 << 20));
        Ok(())
    });
}
