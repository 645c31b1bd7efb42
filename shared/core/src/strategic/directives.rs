//! The patch directives: special keys that say how to merge rather than what to set.
//!
//! - `$patch: replace | delete | merge` inside an object or a list element;
//! - `$retainKeys: [...]` beside the fields of a `retainKeys` struct;
//! - `$deleteFromPrimitiveList/<field>: [...]` to remove items from a set of primitives;
//! - `$setElementOrder/<field>: [...]` to give the order of a merged list.

use serde_json::{Map, Value};

use super::errors::ErrorKind;
use crate::object::field as object_field;

/// `$patch`.
pub(crate) const DIRECTIVE_MARKER: &str = "$patch";
/// `$patch: delete`.
pub(crate) const DELETE: &str = "delete";
/// `$patch: replace`.
pub(crate) const REPLACE: &str = "replace";
/// `$patch: merge`.
pub(crate) const MERGE: &str = "merge";
/// `$retainKeys`.
pub(crate) const RETAIN_KEYS: &str = "$retainKeys";
/// `$deleteFromPrimitiveList/<field>`.
pub(crate) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
/// `$setElementOrder/<field>`.
pub(crate) const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// The field a prefixed directive key applies to (`extractKey`).
pub(crate) fn extract_key<'k>(key: &'k str, prefix: &str) -> Result<&'k str, ErrorKind> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field),
        _ if prefix == SET_ELEMENT_ORDER => Err(ErrorKind::BadPatchFormatForSetElementOrderList),
        _ => Err(ErrorKind::BadPatchFormatForPrimitiveList),
    }
}

/// Whether a value is an object holding `$patch`.
pub(crate) fn has_directive_marker(value: &Value) -> bool {
    value.as_object().is_some_and(|m| object_field::contains(m, DIRECTIVE_MARKER))
}

/// Whether a list element is `{"$patch": "delete", ...}`.
pub(crate) fn is_delete_element(value: &Value) -> bool {
    object_field::get_in(value, DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE)
}

/// `{mergeKey: value, "$patch": "delete"}` (`CreateDeleteDirective`).
pub(crate) fn delete_directive(merge_key: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert(merge_key.to_string(), value);
    m.insert(DIRECTIVE_MARKER.to_string(), Value::from(DELETE));
    Value::Object(m)
}

/// Strips directives from a value taken whole from the patch (`removeDirectives`):
/// an object holding `$patch` disappears (`None`), in lists as in objects.
pub(crate) fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if object_field::contains(&map, DIRECTIVE_MARKER) {
                return None;
            }
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                if let Some(v) = remove_directives(v) {
                    out.insert(k, v);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => Some(Value::Array(items.into_iter().filter_map(remove_directives).collect())),
        other => Some(other),
    }
}

/// Drops `null` fields, recursively through objects and lists (`discardNullValuesFromPatch`).
pub(crate) fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_directive_keys() {
        assert_eq!(extract_key("$setElementOrder/containers", SET_ELEMENT_ORDER), Ok("containers"));
        assert_eq!(
            extract_key("$setElementOrder", SET_ELEMENT_ORDER),
            Err(ErrorKind::BadPatchFormatForSetElementOrderList)
        );
        assert_eq!(
            extract_key("$deleteFromPrimitiveListX/a", DELETE_FROM_PRIMITIVE_LIST),
            Err(ErrorKind::BadPatchFormatForPrimitiveList)
        );
    }

    #[test]
    fn removes_directive_objects() {
        let v = json!({"a": {"$patch": "replace", "x": 1}, "b": [{"$patch": "delete"}, 1], "c": {"d": 2}});
        assert_eq!(remove_directives(v), Some(json!({"b": [1], "c": {"d": 2}})));
        assert_eq!(remove_directives(json!({"$patch": "delete"})), None);
    }

    #[test]
    fn discards_nested_nulls() {
        let mut v = json!({"a": null, "b": {"c": null, "d": [{"e": null}, null]}});
        discard_nulls(&mut v);
        assert_eq!(v, json!({"b": {"d": [{}, null]}}));
    }
}
