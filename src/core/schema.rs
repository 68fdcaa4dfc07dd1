//! `outputSchema`: the object-rooted JSON Schema subset a child's structured
//! result must match (seeds 000/003).
//!
//! The runtime compiles a requested schema once at start ([`OutputSchema::parse`],
//! which rejects anything outside the subset with `UNSUPPORTED_CAPABILITY`)
//! and checks each captured value against it ([`OutputSchema::validate`]).
//!
//! The subset: the root is `{"type": "object", ...}`; every schema is a JSON
//! object of these keywords and no others:
//!
//! | keyword | value | applies to |
//! |---|---|---|
//! | `type` | a type name or a non-empty array of unique type names (`object`, `array`, `string`, `number`, `integer`, `boolean`, `null`) | any value |
//! | `enum` | a non-empty array of JSON values | any value (JSON equality) |
//! | `const` | a JSON value | any value (JSON equality) |
//! | `properties` | an object of schemas | objects |
//! | `required` | an array of unique strings, each a key of `properties` | objects |
//! | `additionalProperties` | a boolean (default `true`) | objects |
//! | `items` | one schema | arrays |
//! | `minItems`, `maxItems` | a non-negative integer | arrays |
//! | `minLength`, `maxLength` | a non-negative integer (Unicode scalar values) | strings |
//! | `minimum`, `maximum` | a finite number (inclusive) | numbers |
//! | `title`, `description` | a string (annotation) | - |
//! | `default` | a JSON value (annotation, ignored) | - |
//!
//! `integer` is a number with a zero fraction. Schemas nest at most
//! [`MAX_DEPTH`] levels below the root, and `enum`/`const`/`default` values at
//! most [`MAX_DEPTH`] containers deep, so parsing and validation recurse a
//! bounded number of times whatever the input: validation follows the schema,
//! never the value, and compares literals only as deep as the literal goes.

use crate::core::error::{Quoted, Result, SubagentError};
use crate::core::hash::{HashMap, HashSet};
use crate::core::json::Value;
use crate::core::name::quote_truncated;
use crate::err;

use std::fmt::Write;

/// How many levels of `properties`/`items` may sit below the root schema, and
/// how many containers deep an `enum`, `const` or `default` value may nest.
pub const MAX_DEPTH: usize = 32;

/// Longest rendered JSON pointer in a message, in bytes.
const MAX_POINTER_LEN: usize = 200;
/// Longest rendered literal list (`enum`) in a message, in bytes.
const MAX_LITERALS_LEN: usize = 200;

/// A compiled output schema.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSchema {
    source: Value,
    root: Node,
}

impl OutputSchema {
    /// Compiles `schema`, rejecting anything outside the subset with
    /// `UNSUPPORTED_CAPABILITY` and one sentence naming the JSON pointer and
    /// keyword, e.g. `output schema keyword "$ref" at /properties/a is not supported`.
    pub fn parse(schema: &Value) -> Result<OutputSchema> {
        if !matches!(schema, Value::Object(_)) {
            return Err(err!(UnsupportedCapability, "output schema must be a JSON object, not {}", schema.kind()));
        }
        let mut path = Vec::new();
        let root = parse_node(schema, &mut path, 0)?;
        if root.types != Some(TypeSet::OBJECT) {
            return Err(err!(UnsupportedCapability, "output schema keyword \"type\" at the root must be \"object\""));
        }
        // Every part of `schema` is now known to nest boundedly, so cloning is safe.
        Ok(OutputSchema { source: schema.clone(), root })
    }

    /// `Ok`, or the first mismatch as one sentence naming the JSON pointer,
    /// e.g. `/items/2 must be an integer`.
    pub fn validate(&self, value: &Value) -> Result<(), String> {
        let mut path = Vec::new();
        validate_node(&self.root, value, &mut path)
    }

    /// The schema as given.
    pub fn source(&self) -> &Value {
        &self.source
    }
}

/// One step of a JSON pointer.
#[derive(Clone, Copy, Debug)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// The RFC 6901 pointer of `path` (control characters escaped), `the root`
/// when empty, cut after [`MAX_POINTER_LEN`] bytes.
fn pointer(path: &[Seg]) -> String {
    if path.is_empty() {
        return "the root".to_owned();
    }
    let mut out = String::new();
    for seg in path {
        out.push('/');
        match seg {
            Seg::Key(key) => {
                for c in key.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        // Keep the sentence on one line.
                        c if c.is_control() => out.extend(c.escape_debug()),
                        c => out.push(c),
                    }
                    if out.len() > MAX_POINTER_LEN {
                        break;
                    }
                }
            }
            Seg::Index(i) => {
                let _ = write!(out, "{i}");
            }
        }
        if out.len() > MAX_POINTER_LEN {
            break;
        }
    }
    if out.len() > MAX_POINTER_LEN {
        let mut cut = MAX_POINTER_LEN;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// A set of JSON Schema type names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TypeSet(u8);

impl TypeSet {
    const OBJECT: TypeSet = TypeSet(1);
    const ARRAY: TypeSet = TypeSet(2);
    const STRING: TypeSet = TypeSet(4);
    const NUMBER: TypeSet = TypeSet(8);
    const INTEGER: TypeSet = TypeSet(16);
    const BOOLEAN: TypeSet = TypeSet(32);
    const NULL: TypeSet = TypeSet(64);

    /// Every type in message order, with its name and its phrase in sentences.
    const NAMES: [(TypeSet, &'static str, &'static str); 7] = [
        (TypeSet::OBJECT, "object", "an object"),
        (TypeSet::ARRAY, "array", "an array"),
        (TypeSet::STRING, "string", "a string"),
        (TypeSet::NUMBER, "number", "a number"),
        (TypeSet::INTEGER, "integer", "an integer"),
        (TypeSet::BOOLEAN, "boolean", "a boolean"),
        (TypeSet::NULL, "null", "null"),
    ];

    fn named(name: &str) -> Option<TypeSet> {
        TypeSet::NAMES.iter().find(|(_, n, _)| *n == name).map(|(t, _, _)| *t)
    }

    fn has(self, t: TypeSet) -> bool {
        self.0 & t.0 != 0
    }

    fn admits(self, value: &Value) -> bool {
        match value {
            Value::Object(_) => self.has(TypeSet::OBJECT),
            Value::Array(_) => self.has(TypeSet::ARRAY),
            Value::String(_) => self.has(TypeSet::STRING),
            Value::Number(n) => self.has(TypeSet::NUMBER) || (self.has(TypeSet::INTEGER) && n.fract() == 0.0),
            Value::Bool(_) => self.has(TypeSet::BOOLEAN),
            Value::Null => self.has(TypeSet::NULL),
        }
    }

    /// `a string`, `a string or null`, `an object, an array or null`.
    fn phrase(self) -> String {
        let phrases: Vec<&str> = TypeSet::NAMES.iter().filter(|(t, _, _)| self.has(*t)).map(|(_, _, p)| *p).collect();
        match phrases.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// One compiled schema.
#[derive(Clone, Debug, Default, PartialEq)]
struct Node {
    types: Option<TypeSet>,
    enum_values: Option<Vec<Value>>,
    const_value: Option<Value>,
    properties: HashMap<String, Node>,
    required: Vec<String>,
    additional_properties: bool,
    items: Option<Box<Node>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

const KEYWORDS: [&str; 16] = [
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "title",
    "description",
    "default",
];

/// Compiles the schema at `path`, `depth` schemas below the root.
fn parse_node<'a>(schema: &'a Value, path: &mut Vec<Seg<'a>>, depth: usize) -> Result<Node> {
    let Value::Object(entries) = schema else {
        return Err(err!(
            UnsupportedCapability,
            "output schema at {} must be an object, not {}",
            pointer(path),
            schema.kind()
        ));
    };
    let mut node = Node { additional_properties: true, ..Node::default() };
    let mut seen = [false; KEYWORDS.len()];
    // `required` is checked against `properties` once both are read.
    let mut required: Option<&Value> = None;
    for (key, value) in entries {
        let index = match KEYWORDS.iter().position(|k| k == key) {
            Some(index) => index,
            None => {
                return Err(err!(
                    UnsupportedCapability,
                    "output schema keyword {} at {} is not supported",
                    quote_truncated(key, 64),
                    pointer(path)
                ))
            }
        };
        if std::mem::replace(&mut seen[index], true) {
            return Err(err!(
                UnsupportedCapability,
                "output schema keyword {key} at {} appears twice",
                pointer(path),
                key = Quoted(key)
            ));
        }
        match key.as_str() {
            "type" => node.types = Some(parse_type(value).map_err(|rule| keyword_error(key, path, &rule))?),
            "enum" => {
                let values = match value {
                    Value::Array(values) if !values.is_empty() => values,
                    _ => return Err(keyword_error(key, path, "must be a non-empty array")),
                };
                if values.iter().any(|v| literal_depth_exceeds(v, MAX_DEPTH)) {
                    return Err(keyword_error(key, path, &format!("nests values deeper than {MAX_DEPTH} levels")));
                }
                node.enum_values = Some(values.clone());
            }
            "const" | "default" => {
                if literal_depth_exceeds(value, MAX_DEPTH) {
                    return Err(keyword_error(key, path, &format!("nests values deeper than {MAX_DEPTH} levels")));
                }
                if key == "const" {
                    node.const_value = Some(value.clone());
                }
            }
            "properties" => {
                let Value::Object(props) = value else {
                    return Err(keyword_error(key, path, "must be an object of schemas"));
                };
                if depth >= MAX_DEPTH && !props.is_empty() {
                    return Err(keyword_error(key, path, &format!("nests schemas deeper than {MAX_DEPTH} levels")));
                }
                for (name, sub) in props {
                    if node.properties.contains_key(name) {
                        return Err(keyword_error(
                            key,
                            path,
                            &format!("declares property {} twice", quote_truncated(name, 64)),
                        ));
                    }
                    path.push(Seg::Key("properties"));
                    path.push(Seg::Key(name));
                    let parsed = parse_node(sub, path, depth + 1);
                    path.truncate(path.len() - 2);
                    node.properties.insert(name.clone(), parsed?);
                }
            }
            "required" => required = Some(value),
            "additionalProperties" => match value {
                Value::Bool(b) => node.additional_properties = *b,
                _ => return Err(keyword_error(key, path, "must be a boolean")),
            },
            "items" => {
                if depth >= MAX_DEPTH {
                    return Err(keyword_error(key, path, &format!("nests schemas deeper than {MAX_DEPTH} levels")));
                }
                path.push(Seg::Key("items"));
                let parsed = parse_node(value, path, depth + 1);
                path.pop();
                node.items = Some(Box::new(parsed?));
            }
            "minItems" | "maxItems" | "minLength" | "maxLength" => {
                let n = value.as_u64().ok_or_else(|| keyword_error(key, path, "must be a non-negative integer"))?;
                let slot = match key.as_str() {
                    "minItems" => &mut node.min_items,
                    "maxItems" => &mut node.max_items,
                    "minLength" => &mut node.min_length,
                    _ => &mut node.max_length,
                };
                *slot = Some(n);
            }
            "minimum" | "maximum" => {
                let n = match value {
                    Value::Number(n) if n.is_finite() => *n,
                    _ => return Err(keyword_error(key, path, "must be a finite number")),
                };
                if key == "minimum" {
                    node.minimum = Some(n);
                } else {
                    node.maximum = Some(n);
                }
            }
            "title" | "description" if !matches!(value, Value::String(_)) => {
                return Err(keyword_error(key, path, "must be a string"));
            }
            _ => {}
        }
    }
    if let Some(value) = required {
        let bad = |rule: String| keyword_error("required", path, &rule);
        let Some(names) = value.as_array() else {
            return Err(bad("must be an array of strings".into()));
        };
        let mut listed: HashSet<&str> = HashSet::default();
        for name in names {
            let Some(name) = name.as_str() else {
                return Err(bad("must be an array of strings".into()));
            };
            if !listed.insert(name) {
                return Err(bad(format!("lists {} twice", quote_truncated(name, 64))));
            }
            if !node.properties.contains_key(name) {
                return Err(bad(format!("names {}, which \"properties\" does not declare", quote_truncated(name, 64))));
            }
            node.required.push(name.to_owned());
        }
    }
    Ok(node)
}

/// `output schema keyword "minLength" at /properties/a must be ...`.
fn keyword_error(keyword: &str, path: &[Seg], rule: &str) -> SubagentError {
    err!(
        UnsupportedCapability,
        "output schema keyword {keyword} at {} {rule}",
        pointer(path),
        keyword = Quoted(keyword)
    )
}

/// A `type` keyword's value, or the rule it breaks.
fn parse_type(value: &Value) -> Result<TypeSet, String> {
    let unknown = |name: &str| format!("names unknown type {}", quote_truncated(name, 32));
    match value {
        Value::String(name) => TypeSet::named(name).ok_or_else(|| unknown(name)),
        Value::Array(names) if !names.is_empty() => {
            let mut set = TypeSet(0);
            for name in names {
                let Some(name) = name.as_str() else {
                    return Err("must be a type name or an array of type names".into());
                };
                let t = TypeSet::named(name).ok_or_else(|| unknown(name))?;
                if set.has(t) {
                    return Err(format!("lists {name} twice", name = Quoted(name)));
                }
                set.0 |= t.0;
            }
            Ok(set)
        }
        Value::Array(_) => Err("must not be an empty array".into()),
        _ => Err("must be a type name or an array of type names".into()),
    }
}

/// Whether `value` nests containers more than `max` deep (iteratively, so any depth is safe).
fn literal_depth_exceeds(value: &Value, max: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(entries) => Box::new(entries.iter().map(|(_, v)| v)),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// JSON equality: numbers by value, objects regardless of key order. Recurses
/// only while both sides are containers, so at most as deep as `literal`.
fn json_eq(literal: &Value, value: &Value) -> bool {
    match (literal, value) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| json_eq(a, b)),
        // Keys are unique in a `Value` (the reader refuses duplicates), so equal
        // sizes and every key of one found, equal, in the other is equality. No
        // sort: each sort instance is ~1 KB gzip of wasm.
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, x)| b.iter().any(|(l, y)| k == l && json_eq(x, y)))
        }
        _ => false,
    }
}

/// A number as JS would print it (in the wasm: JS's own `String(n)`, so no
/// float formatting is linked in).
#[cfg(target_arch = "wasm32")]
fn number_text(n: f64) -> String {
    crate::core::json::number_text(n)
}

/// A number as JS would print it, near enough for messages.
#[cfg(not(target_arch = "wasm32"))]
fn number_text(n: f64) -> String {
    let abs = n.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        format!("{n:e}")
    } else {
        format!("{n}")
    }
}

/// A scalar literal as JSON-ish text, or `None` for containers.
fn scalar_text(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number_text(*n),
        Value::String(s) => quote_truncated(s, 64),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

fn validate_node<'v>(node: &Node, value: &'v Value, path: &mut Vec<Seg<'v>>) -> Result<(), String> {
    if let Value::Number(n) = value {
        if !n.is_finite() {
            return Err(format!("{} must be a finite number", pointer(path)));
        }
    }
    if let Some(types) = node.types {
        if !types.admits(value) {
            return Err(format!("{} must be {}", pointer(path), types.phrase()));
        }
    }
    if let Some(literal) = &node.const_value {
        if !json_eq(literal, value) {
            return Err(match scalar_text(literal) {
                Some(text) => format!("{} must be {text}", pointer(path)),
                None => format!("{} must equal the schema's \"const\" value", pointer(path)),
            });
        }
    }
    if let Some(literals) = &node.enum_values {
        if !literals.iter().any(|literal| json_eq(literal, value)) {
            let texts: Option<Vec<String>> = literals.iter().map(scalar_text).collect();
            let listed = texts.map(|t| t.join(", ")).filter(|t| t.len() <= MAX_LITERALS_LEN);
            return Err(match listed {
                Some(listed) => format!("{} must be one of {listed}", pointer(path)),
                None => format!("{} must equal one of the schema's {} \"enum\" values", pointer(path), literals.len()),
            });
        }
    }
    match value {
        Value::Object(entries) => {
            if !node.required.is_empty() {
                // A hash set (membership only): the crate's other `&str` sets
                // share its code, where a `BTreeSet` brought its own (and
                // `collect` into one a sort instance, ~1 KB gzip of wasm).
                let present: HashSet<&str> = entries.iter().map(|(key, _)| key.as_str()).collect();
                if let Some(name) = node.required.iter().find(|name| !present.contains(name.as_str())) {
                    return Err(format!("{} must have property {}", pointer(path), quote_truncated(name, 64)));
                }
            }
            for (key, sub_value) in entries {
                match node.properties.get(key) {
                    Some(sub) => {
                        path.push(Seg::Key(key));
                        let result = validate_node(sub, sub_value, path);
                        path.pop();
                        result?;
                    }
                    None if !node.additional_properties => {
                        return Err(format!("{} must not have property {}", pointer(path), quote_truncated(key, 64)));
                    }
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            if let Some(min) = node.min_items.filter(|&min| count < min) {
                return Err(format!("{} must have at least {min} item{}", pointer(path), plural(min)));
            }
            if let Some(max) = node.max_items.filter(|&max| count > max) {
                return Err(format!("{} must have at most {max} item{}", pointer(path), plural(max)));
            }
            if let Some(sub) = &node.items {
                for (i, item) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    let result = validate_node(sub, item, path);
                    path.pop();
                    result?;
                }
            }
        }
        Value::String(s) => {
            if node.min_length.is_some() || node.max_length.is_some() {
                let count = s.chars().count() as u64;
                if let Some(min) = node.min_length.filter(|&min| count < min) {
                    return Err(format!("{} must be at least {min} character{} long", pointer(path), plural(min)));
                }
                if let Some(max) = node.max_length.filter(|&max| count > max) {
                    return Err(format!("{} must be at most {max} character{} long", pointer(path), plural(max)));
                }
            }
        }
        Value::Number(n) => {
            if let Some(min) = node.minimum.filter(|&min| *n < min) {
                return Err(format!("{} must be >= {}", pointer(path), number_text(min)));
            }
            if let Some(max) = node.maximum.filter(|&max| *n > max) {
                return Err(format!("{} must be <= {}", pointer(path), number_text(max)));
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
    Ok(())
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::ErrorCode;
    use serde_json::json;

    fn v(j: serde_json::Value) -> Value {
        serde_json::from_value(j).unwrap()
    }

    fn schema(j: serde_json::Value) -> OutputSchema {
        OutputSchema::parse(&v(j)).unwrap()
    }

    /// The rejection sentence for schema `j`.
    fn rejects(j: serde_json::Value) -> String {
        let e = OutputSchema::parse(&v(j.clone())).expect_err(&format!("{j} should be rejected"));
        assert_eq!(e.code, ErrorCode::UnsupportedCapability, "{}", e.message);
        e.message
    }

    /// An object schema with one property `a` of schema `sub`.
    fn prop(sub: serde_json::Value) -> serde_json::Value {
        json!({"type":"object","properties":{"a":sub}})
    }

    /// Validates `{"a": value}` against `prop(sub)`.
    fn check(sub: serde_json::Value, value: serde_json::Value) -> Result<(), String> {
        schema(prop(sub)).validate(&v(json!({ "a": value })))
    }

    #[test]
    fn the_root_must_be_an_object_schema() {
        assert_eq!(rejects(json!([])), "output schema must be a JSON object, not an array");
        assert_eq!(rejects(json!(true)), "output schema must be a JSON object, not a boolean");
        assert_eq!(rejects(json!({})), "output schema keyword \"type\" at the root must be \"object\"");
        assert_eq!(rejects(json!({"type":"string"})), "output schema keyword \"type\" at the root must be \"object\"");
        assert_eq!(
            rejects(json!({"type":["object","null"]})),
            "output schema keyword \"type\" at the root must be \"object\""
        );
        schema(json!({"type":"object"}));
        schema(json!({"type":["object"]}));
        let s = schema(json!({"type":"object"}));
        assert_eq!(s.validate(&v(json!({"anything":[1, {"x":null}]}))), Ok(()));
        assert_eq!(s.validate(&v(json!([]))), Err("the root must be an object".into()));
        assert_eq!(s.validate(&Value::Null), Err("the root must be an object".into()));
    }

    #[test]
    fn the_source_is_kept_as_given() {
        let source = v(json!({"title":"T","type":"object","properties":{"a":{"default":[1,{"b":2}]}}}));
        assert_eq!(OutputSchema::parse(&source).unwrap().source(), &source);
    }

    #[test]
    fn unsupported_keywords_name_the_keyword_and_pointer() {
        for keyword in [
            "$ref",
            "$schema",
            "$defs",
            "definitions",
            "oneOf",
            "anyOf",
            "allOf",
            "not",
            "pattern",
            "format",
            "patternProperties",
            "if",
            "then",
            "else",
            "exclusiveMinimum",
            "multipleOf",
            "uniqueItems",
            "contains",
            "prefixItems",
            "dependentRequired",
            "propertyNames",
            "minProperties",
            "Type",
        ] {
            assert_eq!(
                rejects(json!({"type":"object", keyword: 1})),
                format!("output schema keyword {keyword:?} at the root is not supported")
            );
            assert_eq!(
                rejects(prop(json!({ keyword: {} }))),
                format!("output schema keyword {keyword:?} at /properties/a is not supported")
            );
        }
        assert_eq!(
            rejects(json!({"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#"}}}})),
            "output schema keyword \"$ref\" at /properties/a/items is not supported"
        );
        assert_eq!(
            rejects(json!({"type":"object","properties":{"a\nb":{"not":{}}}})),
            "output schema keyword \"not\" at /properties/a\\nb is not supported"
        );
        // Pointers escape `~` and `/` (RFC 6901); huge keys are cut.
        assert_eq!(
            rejects(json!({"type":"object","properties":{"a/b~c":{"oneOf":[]}}})),
            "output schema keyword \"oneOf\" at /properties/a~1b~0c is not supported"
        );
        let huge = "k".repeat(10_000);
        let message = rejects(json!({"type":"object","properties":{ huge.clone(): {"not":{}} }}));
        assert!(message.len() < 400, "{message}");
        let message = rejects(json!({"type":"object", huge: 1}));
        assert!(message.len() < 200, "{message}");
    }

    #[test]
    fn subschemas_must_be_objects() {
        assert_eq!(rejects(prop(json!(true))), "output schema at /properties/a must be an object, not a boolean");
        assert_eq!(
            rejects(json!({"type":"object","properties":{"a":{"items":[{}]}}})),
            "output schema at /properties/a/items must be an object, not an array"
        );
    }

    #[test]
    fn duplicate_keywords_and_properties_are_rejected() {
        let dup = Value::Object(vec![("type".into(), "object".into()), ("type".into(), "object".into())]);
        assert_eq!(
            OutputSchema::parse(&dup).unwrap_err().message,
            "output schema keyword \"type\" at the root appears twice"
        );
        let props = Value::Object(vec![("a".into(), Value::Object(vec![])), ("a".into(), Value::Object(vec![]))]);
        let dup = Value::Object(vec![("type".into(), "object".into()), ("properties".into(), props)]);
        assert_eq!(
            OutputSchema::parse(&dup).unwrap_err().message,
            "output schema keyword \"properties\" at the root declares property \"a\" twice"
        );
    }

    #[test]
    fn type_keyword() {
        let bad = |t: serde_json::Value| rejects(prop(json!({ "type": t })));
        assert_eq!(bad(json!("text")), "output schema keyword \"type\" at /properties/a names unknown type \"text\"");
        assert_eq!(
            bad(json!(["string", "int"])),
            "output schema keyword \"type\" at /properties/a names unknown type \"int\""
        );
        assert_eq!(bad(json!([])), "output schema keyword \"type\" at /properties/a must not be an empty array");
        assert_eq!(
            bad(json!(["null", "null"])),
            "output schema keyword \"type\" at /properties/a lists \"null\" twice"
        );
        for t in [json!(1), json!(null), json!({}), json!([1])] {
            assert_eq!(
                bad(t),
                "output schema keyword \"type\" at /properties/a must be a type name or an array of type names"
            );
        }

        let cases = [
            ("object", json!({}), "an object"),
            ("array", json!([]), "an array"),
            ("string", json!(""), "a string"),
            ("number", json!(1.5), "a number"),
            ("integer", json!(-3), "an integer"),
            ("boolean", json!(false), "a boolean"),
            ("null", json!(null), "null"),
        ];
        for (name, good, phrase) in &cases {
            assert_eq!(check(json!({ "type": name }), good.clone()), Ok(()), "{name}");
            for (other, value, _) in &cases {
                let admitted = other == name || (*name == "number" && *other == "integer");
                let result = check(json!({ "type": name }), value.clone());
                if admitted {
                    assert_eq!(result, Ok(()), "{name} admits {value}");
                } else {
                    assert_eq!(result, Err(format!("/a must be {phrase}")), "{name} rejects {value}");
                }
            }
        }
        // `integer` is a number with a zero fraction.
        assert_eq!(check(json!({"type":"integer"}), json!(2.0)), Ok(()));
        assert_eq!(check(json!({"type":"integer"}), json!(1e300)), Ok(()));
        assert_eq!(check(json!({"type":"integer"}), json!(2.5)), Err("/a must be an integer".into()));
        // Type unions.
        assert_eq!(check(json!({"type":["string","null"]}), json!(null)), Ok(()));
        assert_eq!(check(json!({"type":["string","null"]}), json!(1)), Err("/a must be a string or null".into()));
        assert_eq!(
            check(json!({"type":["object","array","integer"]}), json!(0.5)),
            Err("/a must be an object, an array or an integer".into())
        );
        // No `type`: anything goes.
        assert_eq!(check(json!({}), json!([1, "x"])), Ok(()));
    }

    #[test]
    fn non_finite_numbers_never_match() {
        let s = schema(prop(json!({})));
        let value = Value::Object(vec![("a".into(), Value::Number(f64::NAN))]);
        assert_eq!(s.validate(&value), Err("/a must be a finite number".into()));
        let value = Value::Object(vec![("a".into(), Value::Number(f64::INFINITY))]);
        assert_eq!(s.validate(&value), Err("/a must be a finite number".into()));
    }

    #[test]
    fn properties_required_and_additional_properties() {
        assert_eq!(
            rejects(json!({"type":"object","properties":[]})),
            "output schema keyword \"properties\" at the root must be an object of schemas"
        );
        let s = schema(json!({
            "type":"object",
            "properties":{"name":{"type":"string"},"age":{"type":"integer"}},
            "required":["name"],
        }));
        assert_eq!(s.validate(&v(json!({"name":"x"}))), Ok(()));
        assert_eq!(s.validate(&v(json!({"name":"x","age":3,"extra":[]}))), Ok(()));
        assert_eq!(s.validate(&v(json!({"age":3}))), Err("the root must have property \"name\"".into()));
        assert_eq!(s.validate(&v(json!({"name":1}))), Err("/name must be a string".into()));
        assert_eq!(s.validate(&v(json!({"name":"x","age":"3"}))), Err("/age must be an integer".into()));

        let closed = schema(json!({"type":"object","properties":{"a":{}},"additionalProperties":false}));
        assert_eq!(closed.validate(&v(json!({"a":1}))), Ok(()));
        assert_eq!(closed.validate(&v(json!({}))), Ok(()));
        assert_eq!(closed.validate(&v(json!({"a":1,"b":2}))), Err("the root must not have property \"b\"".into()));
        schema(json!({"type":"object","additionalProperties":true}));
        assert_eq!(
            rejects(json!({"type":"object","additionalProperties":{}})),
            "output schema keyword \"additionalProperties\" at the root must be a boolean"
        );
        // Nested pointers.
        let nested = schema(prop(json!({"type":"object","properties":{"b":{"type":"object","required":[]}}})));
        assert_eq!(nested.validate(&v(json!({"a":{"b":[]}}))), Err("/a/b must be an object".into()));
        let nested = schema(prop(json!({"properties":{"x/y":{"type":"null"}},"required":["x/y"]})));
        assert_eq!(nested.validate(&v(json!({"a":{"x/y":0}}))), Err("/a/x~1y must be null".into()));
        assert_eq!(nested.validate(&v(json!({"a":{}}))), Err("/a must have property \"x/y\"".into()));
        // Object keywords ignore non-objects.
        assert_eq!(nested.validate(&v(json!({"a":"text"}))), Ok(()));
    }

    #[test]
    fn required_keyword() {
        let bad = |r: serde_json::Value| rejects(json!({"type":"object","properties":{"a":{},"b":{}},"required":r}));
        assert_eq!(bad(json!("a")), "output schema keyword \"required\" at the root must be an array of strings");
        assert_eq!(bad(json!([1])), "output schema keyword \"required\" at the root must be an array of strings");
        assert_eq!(bad(json!(["a", "a"])), "output schema keyword \"required\" at the root lists \"a\" twice");
        assert_eq!(
            bad(json!(["c"])),
            "output schema keyword \"required\" at the root names \"c\", which \"properties\" does not declare"
        );
        assert_eq!(
            rejects(json!({"type":"object","required":["a"]})),
            "output schema keyword \"required\" at the root names \"a\", which \"properties\" does not declare"
        );
        // Order does not matter: `required` before `properties` is fine.
        schema(json!({"required":["b","a"],"type":"object","properties":{"a":{},"b":{}}}));
        schema(json!({"type":"object","required":[]}));
    }

    #[test]
    fn items_and_array_bounds() {
        let s = schema(prop(json!({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})));
        assert_eq!(check(json!({"type":"array","items":{"type":"integer"}}), json!([1, 2])), Ok(()));
        assert_eq!(s.validate(&v(json!({"a":[1, 2, 3]}))), Ok(()));
        assert_eq!(s.validate(&v(json!({"a":[1, 2, 2.5]}))), Err("/a/2 must be an integer".into()));
        assert_eq!(s.validate(&v(json!({"a":[]}))), Err("/a must have at least 1 item".into()));
        assert_eq!(s.validate(&v(json!({"a":[1, 2, 3, 4]}))), Err("/a must have at most 3 items".into()));
        assert_eq!(check(json!({"minItems":2}), json!([1])), Err("/a must have at least 2 items".into()));
        assert_eq!(check(json!({"maxItems":1}), json!([1, 2])), Err("/a must have at most 1 item".into()));
        assert_eq!(check(json!({"maxItems":0}), json!([])), Ok(()));
        // Array keywords ignore non-arrays.
        assert_eq!(check(json!({"minItems":2, "items":{"type":"null"}}), json!("x")), Ok(()));
        let nested = schema(prop(json!({"items":{"items":{"properties":{"k":{"type":"boolean"}}}}})));
        assert_eq!(
            nested.validate(&v(json!({"a":[[], [{"k":true}, {"k":1}]]}))),
            Err("/a/1/1/k must be a boolean".into())
        );
    }

    #[test]
    fn count_keywords_need_non_negative_integers() {
        for keyword in ["minItems", "maxItems", "minLength", "maxLength"] {
            for bad in [json!(-1), json!(1.5), json!("1"), json!(null), json!(1e300)] {
                assert_eq!(
                    rejects(prop(json!({ keyword: bad }))),
                    format!("output schema keyword {keyword:?} at /properties/a must be a non-negative integer")
                );
            }
            schema(prop(json!({ keyword: 0 })));
            schema(prop(json!({ keyword: 2.0 })));
        }
    }

    #[test]
    fn string_lengths_count_unicode_scalar_values() {
        let s = |min: u64, max: u64| json!({"type":"string","minLength":min,"maxLength":max});
        assert_eq!(check(s(2, 3), json!("ab")), Ok(()));
        assert_eq!(check(s(2, 3), json!("héé")), Ok(()), "3 scalars, 5 bytes");
        assert_eq!(check(s(2, 3), json!("😀😀")), Ok(()), "2 scalars, 4 UTF-16 units");
        assert_eq!(check(s(2, 3), json!("a")), Err("/a must be at least 2 characters long".into()));
        assert_eq!(check(s(2, 3), json!("abcd")), Err("/a must be at most 3 characters long".into()));
        assert_eq!(check(json!({"minLength":1}), json!("")), Err("/a must be at least 1 character long".into()));
        assert_eq!(check(json!({"maxLength":1}), json!("éé")), Err("/a must be at most 1 character long".into()));
        // String keywords ignore non-strings.
        assert_eq!(check(json!({"minLength":5}), json!(1)), Ok(()));
    }

    #[test]
    fn numeric_bounds_are_inclusive() {
        let s = json!({"type":"number","minimum":-1.5,"maximum":10});
        assert_eq!(check(s.clone(), json!(-1.5)), Ok(()));
        assert_eq!(check(s.clone(), json!(10)), Ok(()));
        assert_eq!(check(s.clone(), json!(-2)), Err("/a must be >= -1.5".into()));
        assert_eq!(check(s, json!(10.01)), Err("/a must be <= 10".into()));
        assert_eq!(check(json!({"maximum":1e300}), json!(1e301)), Err("/a must be <= 1e300".into()));
        assert_eq!(check(json!({"minimum":0.0000001}), json!(0)), Err("/a must be >= 1e-7".into()));
        for keyword in ["minimum", "maximum"] {
            for bad in [json!("1"), json!(null), json!([1])] {
                assert_eq!(
                    rejects(prop(json!({ keyword: bad }))),
                    format!("output schema keyword {keyword:?} at /properties/a must be a finite number")
                );
            }
        }
        // Numeric keywords ignore non-numbers.
        assert_eq!(check(json!({"minimum":5}), json!("1")), Ok(()));
    }

    #[test]
    fn enum_keyword() {
        let e = json!({"enum":["red", 1, null, true, [1], {"k":"v","n":1}]});
        for good in [json!("red"), json!(1), json!(1.0), json!(null), json!(true), json!([1]), json!({"n":1,"k":"v"})] {
            assert_eq!(check(e.clone(), good.clone()), Ok(()), "{good}");
        }
        for bad in [json!("RED"), json!(2), json!(false), json!([1, 1]), json!({"k":"v"}), json!({"k":"v","n":2})] {
            assert_eq!(
                check(e.clone(), bad.clone()),
                Err("/a must equal one of the schema's 6 \"enum\" values".into()),
                "{bad}"
            );
        }
        assert_eq!(
            check(json!({"enum":["a", 1.5, null, false]}), json!("b")),
            Err("/a must be one of \"a\", 1.5, null, false".into())
        );
        let long: Vec<String> = (0..100).map(|i| format!("value-{i}")).collect();
        assert_eq!(
            check(json!({ "enum": long }), json!("x")),
            Err("/a must equal one of the schema's 100 \"enum\" values".into())
        );
        for bad in [json!([]), json!("a"), json!({})] {
            assert_eq!(
                rejects(prop(json!({ "enum": bad }))),
                "output schema keyword \"enum\" at /properties/a must be a non-empty array"
            );
        }
    }

    #[test]
    fn const_keyword() {
        assert_eq!(check(json!({"const":"x"}), json!("x")), Ok(()));
        assert_eq!(check(json!({"const":"x"}), json!("y")), Err("/a must be \"x\"".into()));
        assert_eq!(check(json!({"const":0}), json!(-0.0)), Ok(()));
        assert_eq!(check(json!({"const":null}), json!(false)), Err("/a must be null".into()));
        assert_eq!(check(json!({"const":{"a":[1,2]}}), json!({"a":[1,2]})), Ok(()));
        assert_eq!(
            check(json!({"const":{"a":[1,2]}}), json!({"a":[2,1]})),
            Err("/a must equal the schema's \"const\" value".into())
        );
    }

    #[test]
    fn annotations() {
        schema(
            json!({"type":"object","title":"T","description":"D","default":{"x":[1]},"properties":{"a":{"title":"t","default":3}}}),
        );
        for keyword in ["title", "description"] {
            assert_eq!(
                rejects(prop(json!({ keyword: 1 }))),
                format!("output schema keyword {keyword:?} at /properties/a must be a string")
            );
        }
        // `default` is not checked against the schema.
        assert_eq!(check(json!({"type":"string","default":3}), json!("s")), Ok(()));
    }

    /// `{"items": {"items": ... {}}}` with `levels` nested schemas below the top.
    fn nested_items(levels: usize) -> Value {
        let mut s = Value::Object(vec![]);
        for _ in 0..levels {
            s = Value::Object(vec![("items".into(), s)]);
        }
        s
    }

    fn nested_value(levels: usize, leaf: Value) -> Value {
        let mut value = leaf;
        for _ in 0..levels {
            value = Value::Array(vec![value]);
        }
        value
    }

    #[test]
    fn schemas_nest_at_most_max_depth_levels() {
        let root = |sub: Value| {
            Value::Object(vec![
                ("type".into(), "object".into()),
                ("properties".into(), Value::Object(vec![("a".into(), sub)])),
            ])
        };
        // The root is level 0, `/properties/a` level 1, each `items` one more.
        let deepest = OutputSchema::parse(&root(nested_items(MAX_DEPTH - 1))).unwrap();
        let value = Value::Object(vec![("a".into(), nested_value(MAX_DEPTH - 1, Value::Null))]);
        assert_eq!(deepest.validate(&value), Ok(()));
        let e = OutputSchema::parse(&root(nested_items(MAX_DEPTH))).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedCapability);
        let at = format!("/properties/a{}", "/items".repeat(MAX_DEPTH - 1));
        assert_eq!(e.message, format!("output schema keyword \"items\" at {at} nests schemas deeper than 32 levels"));
        // An empty `properties` at the limit adds no level.
        let mut props_leaf = nested_items(MAX_DEPTH - 1);
        if let Value::Object(entries) = &mut props_leaf {
            entries.push(("properties".into(), Value::Object(vec![])));
        }
        OutputSchema::parse(&root(props_leaf)).unwrap();
        let mut props_over = nested_items(MAX_DEPTH - 1);
        let mut cursor = &mut props_over;
        while let Value::Object(entries) = cursor {
            if entries.is_empty() {
                entries.push(("properties".into(), Value::Object(vec![("p".into(), Value::Object(vec![]))])));
                break;
            }
            cursor = &mut entries[0].1;
        }
        let e = OutputSchema::parse(&root(props_over)).unwrap_err();
        assert_eq!(
            e.message,
            format!("output schema keyword \"properties\" at {at} nests schemas deeper than 32 levels")
        );
    }

    /// Frees a value of any depth (a derived drop recurses once per level).
    fn drop_deep(value: Value) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items),
                Value::Object(entries) => stack.extend(entries.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    #[test]
    fn hostile_depth_is_rejected_without_recursing() {
        // Far deeper than any stack would survive if walked recursively.
        let levels = 200_000;
        let deep_schema = Value::Object(vec![
            ("type".into(), "object".into()),
            ("properties".into(), Value::Object(vec![("a".into(), nested_items(levels))])),
        ]);
        let e = OutputSchema::parse(&deep_schema).unwrap_err();
        assert!(e.message.contains("nests schemas deeper than 32 levels"), "{}", e.message);
        assert!(e.message.len() < 400);
        for keyword in ["const", "default"] {
            let s = Value::Object(vec![
                ("type".into(), "object".into()),
                (keyword.into(), nested_value(levels, Value::Null)),
            ]);
            assert_eq!(
                OutputSchema::parse(&s).unwrap_err().message,
                format!("output schema keyword {keyword:?} at the root nests values deeper than 32 levels")
            );
            drop_deep(s);
        }
        let s = Value::Object(vec![
            ("type".into(), "object".into()),
            ("enum".into(), Value::Array(vec![nested_value(levels, Value::Null)])),
        ]);
        assert_eq!(
            OutputSchema::parse(&s).unwrap_err().message,
            "output schema keyword \"enum\" at the root nests values deeper than 32 levels"
        );
        drop_deep(s);
        // The deepest allowed literal.
        let s = Value::Object(vec![
            ("type".into(), "object".into()),
            ("const".into(), nested_value(MAX_DEPTH, Value::Null)),
        ]);
        OutputSchema::parse(&s).unwrap();

        // Validation of a hostile value recurses only as deep as the schema and the literal.
        let s = schema(json!({"type":"object","properties":{"a":{"items":{"const":[[1]]}}, "b":{"enum":[[[[1]]]]}}}));
        let value = Value::Object(vec![("a".into(), nested_value(levels, Value::Null))]);
        assert_eq!(s.validate(&value), Err("/a/0 must equal the schema's \"const\" value".into()));
        drop_deep(value);
        let value = Value::Object(vec![("b".into(), nested_value(levels, Value::Null))]);
        assert_eq!(s.validate(&value), Err("/b must equal one of the schema's 1 \"enum\" values".into()));
        drop_deep(deep_schema);
        drop_deep(value);
    }
}
