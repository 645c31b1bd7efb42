//! Creating a merge patch from two documents, as evanphx `CreateMergePatch` does.
//!
//! The patch holds every member of `modified` that is new or different, and
//! `null` for every member of `original` that `modified` lacks; objects are
//! compared member by member, arrays and scalars as whole values. No change is
//! `{}`. Upstream details kept here:
//! - numbers are Go `float64`s: they compare as such (`1` and `1.0` are
//!   equal) and come out rounded to them (`9007199254740993` becomes
//!   `9007199254740992`), as `kubectl apply` sends them;
//! - a `null` document counts as `{}`;
//! - two arrays give an array of per-element patches (same length required);
//! - a member that is null in both documents is no change.

use serde_json::{Map, Value};

use super::error::MergePatchError;

/// The merge patch that turns `original` into `modified` (both objects, or both arrays of objects).
///
/// ```
/// use serde_json::json;
/// use fieldwise_core::merge_patch;
/// let original = json!({"spec": {"replicas": 1, "paused": true}});
/// let modified = json!({"spec": {"replicas": 3}});
/// let patch = merge_patch::create_two_way(&original, &modified).unwrap();
/// assert_eq!(patch, json!({"spec": {"replicas": 3, "paused": null}}));
/// ```
pub fn create_two_way(original: &Value, modified: &Value) -> Result<Value, MergePatchError> {
    match (original, modified) {
        (Value::Array(originals), Value::Array(modifieds)) => {
            if originals.len() != modifieds.len() {
                return Err(MergePatchError::BadJsonDoc(format!(
                    "arrays of documents differ in length ({} and {})",
                    originals.len(),
                    modifieds.len()
                )));
            }
            let patches = originals.iter().zip(modifieds).map(|(o, m)| object_patch(o, m));
            Ok(Value::Array(patches.collect::<Result<_, _>>()?))
        }
        (Value::Array(_), _) | (_, Value::Array(_)) => {
            Err(MergePatchError::MismatchedTypes("one document is an array and the other is not".into()))
        }
        _ => object_patch(original, modified),
    }
}

fn object_patch(original: &Value, modified: &Value) -> Result<Value, MergePatchError> {
    let empty = Map::new();
    let members = |doc: &'_ Value, role: &str| -> Result<Map<String, Value>, MergePatchError> {
        match doc {
            Value::Object(members) => Ok(members.clone()),
            Value::Null => Ok(empty.clone()),
            other => Err(MergePatchError::BadJsonDoc(format!("the {role} document must be an object, got {other}"))),
        }
    };
    let original = members(original, "original")?;
    let modified = members(modified, "modified")?;
    Ok(Value::Object(diff(&original, &modified)))
}

/// The recursive difference of two objects (upstream `getDiff`).
pub(crate) fn diff(original: &Map<String, Value>, modified: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for (key, new) in modified {
        let Some(old) = original.get(key) else {
            patch.insert(key.clone(), as_go_floats(new));
            continue;
        };
        match (old, new) {
            (Value::Object(old_members), Value::Object(new_members)) => {
                let nested = diff(old_members, new_members);
                if !nested.is_empty() {
                    patch.insert(key.clone(), Value::Object(nested));
                }
            }
            _ if !go_equal(old, new) => {
                patch.insert(key.clone(), as_go_floats(new));
            }
            _ => {}
        }
    }
    for key in original.keys() {
        if !modified.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    patch
}

/// Equality of values decoded by Go's `encoding/json`: numbers are `float64` (upstream `matchesValue`).
pub(crate) fn go_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| go_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && y.iter().all(|(k, v)| x.get(k).is_some_and(|u| go_equal(u, v)))
        }
        _ => false,
    }
}

/// `value` with every number rounded to a Go `float64`, as upstream decodes and re-encodes it.
///
/// Integral results come back as integers (Go writes `1`, not `1.0`), so the value compares equal to
/// what upstream sends.
pub(crate) fn as_go_floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => Value::Number(go_float_number(n)),
        Value::Array(items) => Value::Array(items.iter().map(as_go_floats).collect()),
        Value::Object(members) => Value::Object(members.iter().map(|(k, v)| (k.clone(), as_go_floats(v))).collect()),
        other => other.clone(),
    }
}

/// A number as upstream hands it on: decoded into a `float64`, written by `encoding/json`.
fn go_float_number(n: &serde_json::Number) -> serde_json::Number {
    match n.as_f64().and_then(crate::go_format::json::float_value) {
        Some(Value::Number(rounded)) => rounded,
        _ => n.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_change_is_empty() {
        let doc = json!({"a": {"b": [1, {"c": null}]}, "d": null});
        assert_eq!(create_two_way(&doc, &doc), Ok(json!({})));
    }

    #[test]
    fn numbers_compare_as_floats() {
        assert_eq!(create_two_way(&json!({"a": 1}), &json!({"a": 1.0})), Ok(json!({})));
        assert_eq!(create_two_way(&json!({"a": [1]}), &json!({"a": [1.0]})), Ok(json!({})));
    }

    #[test]
    fn emitted_numbers_are_go_floats() {
        let patch = create_two_way(&json!({}), &json!({"a": 9007199254740993_u64, "b": [1.0, 2.5, -0.0, 1e19]}));
        // Go writes -0 as `-0` (read back as the float -0.0) and 1e19 as twenty digits (a u64).
        assert_eq!(patch, Ok(json!({"a": 9007199254740992_u64, "b": [1, 2.5, -0.0, 10_000_000_000_000_000_000_u64]})));
    }

    #[test]
    fn type_change_replaces_whole_value() {
        assert_eq!(create_two_way(&json!({"a": {"b": 1}}), &json!({"a": [1]})), Ok(json!({"a": [1]})));
        assert_eq!(create_two_way(&json!({"a": null}), &json!({"a": {"b": 1}})), Ok(json!({"a": {"b": 1}})));
        assert_eq!(create_two_way(&json!({"a": 1}), &json!({"a": null})), Ok(json!({"a": null})));
    }

    #[test]
    fn null_document_is_empty_object() {
        assert_eq!(create_two_way(&Value::Null, &json!({"a": 1})), Ok(json!({"a": 1})));
        assert_eq!(create_two_way(&json!({"a": 1}), &Value::Null), Ok(json!({"a": null})));
    }

    #[test]
    fn arrays_of_documents() {
        let patch = create_two_way(&json!([{"a": 1}, {"b": 1}]), &json!([{"a": 2}, {"b": 1}]));
        assert_eq!(patch, Ok(json!([{"a": 2}, {}])));
        assert!(matches!(create_two_way(&json!([{}]), &json!([])), Err(MergePatchError::BadJsonDoc(_))));
        assert!(matches!(create_two_way(&json!([]), &json!({})), Err(MergePatchError::MismatchedTypes(_))));
        assert!(matches!(create_two_way(&json!(1), &json!({})), Err(MergePatchError::BadJsonDoc(_))));
    }
}
