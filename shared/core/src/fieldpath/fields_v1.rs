//! The FieldsV1 wire format of `metadata.managedFields[].fieldsV1`.
//!
//! A FieldsV1 document is a JSON object whose keys are serialized path
//! elements (`f:name`, `k:{"name":"x"}`, `v:"x"`, `i:0`) and whose values are
//! nested documents; `"."` inside a node means "this node itself is in the
//! set". Encoding follows upstream's `Set.ToJSON` exactly: keys in
//! [`PathElement`] order, members and children interleaved, `"."` first.

use serde_json::{Map, Value};

use super::element::PathElement;

mod reader;
use super::set::Set;
use crate::go_format::json as gojson;

/// Why a FieldsV1 document could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} at {}", if at.is_empty() { "the top level" } else { at.as_str() })]
pub struct FieldsV1Error {
    /// The FieldsV1 keys leading to the problem, joined with `.` (e.g. `f:spec.f:template`).
    pub at: String,
    /// What is wrong.
    pub reason: String,
}

/// Why one serialized path element could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathElementError {
    /// The type prefix is not `f`, `k`, `v` or `i`. Upstream skips such keys silently.
    UnknownKind,
    /// The key is malformed.
    Invalid(String),
}

/// Reads one serialized path element such as `f:spec` or `k:{"name":"x"}`.
///
/// Numbers inside keys and values become floats, as upstream's decoder makes them;
/// they still compare equal to the integers in objects. As upstream, text after
/// the embedded JSON value is ignored, and a key naming a field twice keeps both.
pub fn parse_path_element(key: &str) -> Result<PathElement, PathElementError> {
    let bytes = key.as_bytes();
    if bytes.len() < 2 {
        return Err(PathElementError::Invalid("key must be 2 characters long".into()));
    }
    if bytes[1] != b':' {
        return Err(PathElementError::Invalid("missing colon".into()));
    }
    let body = &key[2..];
    match bytes[0] {
        b'f' => Ok(PathElement::Field(body.to_string())),
        b'v' => reader::embedded_value(&mut reader::Cursor::new(body))
            .map(PathElement::Value)
            .map_err(PathElementError::Invalid),
        b'k' => reader::key_fields(body).map(PathElement::Key).map_err(PathElementError::Invalid),
        b'i' => body.parse::<i64>().map(PathElement::Index).map_err(|e| PathElementError::Invalid(e.to_string())),
        _ => Err(PathElementError::UnknownKind),
    }
}

/// Turns every number into a float, as upstream's decoder does.
fn floats(value: Value) -> Value {
    match value {
        Value::Number(n) => n.as_f64().map(Value::from).unwrap_or(Value::Number(n)),
        Value::Array(items) => Value::Array(items.into_iter().map(floats).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, floats(v))).collect()),
        other => other,
    }
}

/// Serializes one path element as a FieldsV1 key, byte for byte as upstream.
pub fn path_element_key(pe: &PathElement) -> String {
    let mut out = String::new();
    match pe {
        PathElement::Field(name) => {
            out.push_str("f:");
            out.push_str(name);
        }
        PathElement::Key(key) => {
            out.push_str("k:{");
            for (i, (name, value)) in key.fields().iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gojson::write_string(&mut out, name, false);
                out.push(':');
                gojson::write_value(&mut out, value);
            }
            out.push('}');
        }
        PathElement::Value(value) => {
            out.push_str("v:");
            gojson::write_value(&mut out, value);
        }
        PathElement::Index(i) => {
            out.push_str("i:");
            out.push_str(&i.to_string());
        }
    }
    out
}

impl Set {
    /// Reads a FieldsV1 document as the apiserver does: keys of unknown kinds (not
    /// `f:`, `k:`, `v:`, `i:`) are dropped with their subtrees (a later version
    /// may know them). See [`Set::from_fields_v1_strict`] to reject them instead.
    pub fn from_fields_v1(doc: &Value) -> Result<Set, FieldsV1Error> {
        read_top(doc, true)
    }

    /// The same as [`Set::from_fields_v1`] (which skips unknown kinds, as upstream).
    pub fn from_fields_v1_lenient(doc: &Value) -> Result<Set, FieldsV1Error> {
        read_top(doc, true)
    }

    /// Reads a FieldsV1 document, rejecting keys of unknown kinds (for a linter
    /// that wants to warn about data upstream silently drops).
    pub fn from_fields_v1_strict(doc: &Value) -> Result<Set, FieldsV1Error> {
        read_top(doc, false)
    }

    /// Reads FieldsV1 text exactly as upstream's `Set.FromJSON`: duplicate keys
    /// are merged (members) or replaced (subtrees), unknown kinds and the value of
    /// `"."` are skipped, a top-level `null` is the empty set, and text after the
    /// top-level object is ignored.
    pub fn from_fields_v1_str(text: &str) -> Result<Set, FieldsV1Error> {
        reader::read(text, false)
    }

    /// Like [`Set::from_fields_v1_str`], but keys of unknown kinds are errors.
    pub fn from_fields_v1_str_strict(text: &str) -> Result<Set, FieldsV1Error> {
        reader::read(text, true)
    }

    /// The FieldsV1 document for this set, with keys in upstream's order.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(emit(self, false))
    }

    /// The FieldsV1 document as compact JSON text.
    pub fn to_fields_v1_string(&self) -> String {
        self.to_fields_v1().to_string()
    }
}

fn read_top(doc: &Value, lenient: bool) -> Result<Set, FieldsV1Error> {
    let mut at = Vec::new();
    read_node(doc, &mut at, lenient).map(|(set, _)| set)
}

/// Reads one node: the subset under it, and whether the node itself is a member.
///
/// `at` holds the keys leading here, borrowed: they are only joined when there is an error.
fn read_node<'d>(doc: &'d Value, at: &mut Vec<&'d str>, lenient: bool) -> Result<(Set, bool), FieldsV1Error> {
    let map = match doc {
        Value::Object(map) => map,
        Value::Null => return Ok((Set::new(), true)),
        other => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "a list",
            };
            return Err(FieldsV1Error { at: at.join("."), reason: format!("expected an object, found {kind}") });
        }
    };
    let mut children = Set::new();
    let mut member = false;
    let mut any = false;
    for (key, child) in map {
        if key == "." {
            member = true;
            continue;
        }
        let pe = match parse_path_element(key) {
            Ok(pe) => pe,
            Err(PathElementError::UnknownKind) if lenient => continue,
            Err(e) => {
                let reason = match e {
                    PathElementError::UnknownKind => format!("unknown path element {}", quote(key)),
                    PathElementError::Invalid(why) => format!("invalid path element {}: {why}", quote(key)),
                };
                return Err(FieldsV1Error { at: at.join("."), reason });
            }
        };
        at.push(key);
        let (grandchildren, child_member) = read_node(child, at, lenient)?;
        at.pop();
        any = true;
        match (child_member, grandchildren.is_empty()) {
            (true, false) => {
                children.insert_member(pe.clone());
                children.set_child(pe, grandchildren);
            }
            (true, true) => children.insert_member(pe),
            (false, false) => children.set_child(pe, grandchildren),
            (false, true) => {}
        }
    }
    Ok((children, member || !any))
}

fn quote(key: &str) -> String {
    serde_json::to_string(key).unwrap_or_else(|_| key.to_string())
}

/// Writes a node's contents: members and children interleaved in order, `"."` last when asked.
fn emit(set: &Set, include_self: bool) -> Map<String, Value> {
    let mut out = Map::new();
    if include_self && !set.is_empty() {
        out.insert(".".into(), Value::Object(Map::new()));
    }
    let (members, children) = (set.members(), set.children());
    let (mut i, mut j) = (0, 0);
    while i < members.len() || j < children.len() {
        let ord = match (members.get(i), children.get(j)) {
            (Some(m), Some((c, _))) => m.cmp(c),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                out.insert(path_element_key(&members[i]), Value::Object(Map::new()));
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                let (pe, sub) = &children[j];
                out.insert(path_element_key(pe), Value::Object(emit(sub, false)));
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (pe, sub) = &children[j];
                out.insert(path_element_key(pe), Value::Object(emit(sub, true)));
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_float_members_survive_a_round_trip() {
        // Found by the fields_v1 fuzz target: floats must be parsed correctly rounded
        // (serde_json's float_roundtrip), as Go's decoder does, or re-encoding drifts.
        let text = r#"{"v:33333":{"v:1.333333333333333333333333333333333333":{"v:1.3333333333333":{}}}}"#;
        let set = Set::from_fields_v1_str(text).unwrap();
        let again = Set::from_fields_v1_str(&set.to_fields_v1_string()).unwrap();
        assert_eq!(again, set);
    }

    #[test]
    fn round_trips_a_small_document() {
        // The apiserver writes "." first, then keys in element order (not byte order).
        let text = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}},"f:finalizers":{"v:\"a\"":{}}}}"#;
        let set = Set::from_fields_v1_str(text).unwrap();
        assert_eq!(set.len(), 5);
        // Re-encoding sorts keys as upstream does: f:finalizers < f:ports.
        let again = set.to_fields_v1_string();
        assert_eq!(Set::from_fields_v1_str(&again).unwrap(), set);
        assert_eq!(
            again,
            r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:finalizers":{"v:\"a\"":{}},"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}"#
        );
    }

    #[test]
    fn member_markers_and_nulls() {
        let a = Set::from_fields_v1(&json!({"f:a": {".": {}}})).unwrap();
        let b = Set::from_fields_v1(&json!({"f:a": {}})).unwrap();
        let c = Set::from_fields_v1(&json!({"f:a": null})).unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(b.to_fields_v1(), json!({"f:a": {}}));
    }

    #[test]
    fn errors_name_the_place() {
        let doc = json!({"f:spec": {"f:template": {"x:abc": {}}}});
        let err = Set::from_fields_v1_strict(&doc).unwrap_err();
        assert_eq!(err.to_string(), r#"unknown path element "x:abc" at f:spec.f:template"#);
        assert!(Set::from_fields_v1_lenient(&doc)
            .unwrap()
            .has(&[PathElement::field("spec"), PathElement::field("template")]));
        let err = Set::from_fields_v1(&json!({"f:a": 3})).unwrap_err();
        assert_eq!(err.to_string(), "expected an object, found a number at f:a");
        for bad in ["k", "k-x", "k:{", "k:[1]", "i:x", "v:"] {
            assert!(Set::from_fields_v1(&json!({ bad: {} })).is_err(), "{bad}");
        }
    }

    #[test]
    fn element_keys_are_upstream_bytes() {
        assert_eq!(
            path_element_key(&PathElement::key([("b", json!("<x>")), ("a", Value::from(80.0))])),
            r#"k:{"a":80,"b":"\u003cx\u003e"}"#
        );
        assert_eq!(path_element_key(&PathElement::value(json!({"z": 1, "a": [true]}))), r#"v:{"a":[true],"z":1}"#);
        assert_eq!(path_element_key(&PathElement::Index(-2)), "i:-2");
        assert_eq!(parse_path_element("i:+5"), Ok(PathElement::Index(5)));
    }
}
