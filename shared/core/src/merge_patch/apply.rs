//! Applying a merge patch, as the apiserver does for `application/merge-patch+json`.
//!
//! The apiserver calls evanphx/json-patch v4 `MergePatch(current, patch)`.
//! It follows RFC 7386 for objects (a `null` member deletes, an object merges
//! recursively, anything else replaces), with these upstream details:
//! - values that replace are stripped of null object members at every depth,
//!   including inside arrays, but `null` elements of arrays are kept;
//! - except when an object in the document is replaced by a non-object: then
//!   the new value is kept as sent, nulls and all;
//! - a `null` member of the document is replaced, never merged into;
//! - a `null` document or a `null` or scalar patch is an error
//!   ([`try_apply`]); [`apply`] then gives the RFC result instead.

use serde_json::{Map, Value};

use super::error::MergePatchError;

/// Applies `patch` to `doc`: the apiserver's result, or the RFC 7386 result where the apiserver refuses.
///
/// ```
/// use serde_json::json;
/// use fieldwise_core::merge_patch;
/// let doc = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
/// let patch = json!({"metadata": {"labels": {"tier": null, "team": "a"}}});
/// let out = merge_patch::apply(&doc, &patch);
/// assert_eq!(out, json!({"metadata": {"labels": {"app": "web", "team": "a"}}}));
/// ```
pub fn apply(doc: &Value, patch: &Value) -> Value {
    try_apply(doc, patch).unwrap_or_else(|_| match patch {
        Value::Object(members) => Value::Object(pruned_members(members)),
        other => other.clone(),
    })
}

/// Applies `patch` to `doc` exactly as the apiserver does, errors included.
pub fn try_apply(doc: &Value, patch: &Value) -> Result<Value, MergePatchError> {
    if doc.is_null() {
        return Err(MergePatchError::BadJsonDoc("the document is null".into()));
    }
    match (doc, patch) {
        (_, Value::Null) => Err(MergePatchError::BadJsonPatch("the patch is null".into())),
        (Value::Object(doc_members), Value::Object(patch_members)) => {
            let mut merged = doc_members.clone();
            merge_members(&mut merged, patch_members);
            Ok(Value::Object(merged))
        }
        // Upstream: "not an error, just not a doc, so we turn straight into the patch".
        (_, Value::Object(patch_members)) => Ok(Value::Object(pruned_members(patch_members))),
        (_, Value::Array(_)) => Ok(pruned(patch)),
        (_, scalar) => {
            Err(MergePatchError::BadJsonPatch(format!("a merge patch must be an object or an array, got {scalar}")))
        }
    }
}

/// Merges patch members into document members (upstream `mergeDocs`).
pub(crate) fn merge_members(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, patch_value) in patch {
        if patch_value.is_null() {
            doc.shift_remove(key);
            continue;
        }
        match doc.get_mut(key) {
            None | Some(Value::Null) => {
                doc.insert(key.clone(), pruned(patch_value));
            }
            Some(current) => merge_value(current, patch_value),
        }
    }
}

/// Merges one patch value into one non-null document value (upstream `merge`).
fn merge_value(current: &mut Value, patch: &Value) {
    match (current, patch) {
        (Value::Object(current_members), Value::Object(patch_members)) => merge_members(current_members, patch_members),
        // An object replaced by a non-object: upstream returns the patch value without pruning it.
        (current @ Value::Object(_), _) => *current = patch.clone(),
        (current, _) => *current = pruned(patch),
    }
}

/// A copy of `value` without null object members, at every depth (upstream `pruneNulls`).
pub(crate) fn pruned(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(pruned_members(members)),
        // Null elements stay: only object members are pruned.
        Value::Array(items) => Value::Array(items.iter().map(pruned).collect()),
        scalar => scalar.clone(),
    }
}

fn pruned_members(members: &Map<String, Value>) -> Map<String, Value> {
    members.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), pruned(v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_in_arrays_are_kept_but_null_members_inside_are_pruned() {
        let out = apply(&json!({}), &json!({"a": [null, {"b": null, "c": 1}, [{"d": null}]]}));
        assert_eq!(out, json!({"a": [null, {"c": 1}, [{}]]}));
    }

    #[test]
    fn object_replaced_by_array_keeps_nulls() {
        let out = apply(&json!({"a": {"x": 1}}), &json!({"a": [{"b": null}]}));
        assert_eq!(out, json!({"a": [{"b": null}]}));
        let out = apply(&json!({"a": 1}), &json!({"a": [{"b": null}]}));
        assert_eq!(out, json!({"a": [{}]}));
    }

    #[test]
    fn null_member_of_document_is_replaced_with_pruned_value() {
        let out = apply(&json!({"a": null}), &json!({"a": {"b": null, "c": 2}}));
        assert_eq!(out, json!({"a": {"c": 2}}));
    }

    #[test]
    fn scalar_member_replaced_by_object_is_pruned() {
        let out = apply(&json!({"a": "s"}), &json!({"a": {"b": null, "c": {"d": null}}}));
        assert_eq!(out, json!({"a": {"c": {}}}));
    }

    #[test]
    fn apiserver_refusals() {
        assert!(matches!(try_apply(&json!({}), &Value::Null), Err(MergePatchError::BadJsonPatch(_))));
        assert!(matches!(try_apply(&json!({}), &json!("x")), Err(MergePatchError::BadJsonPatch(_))));
        assert!(matches!(try_apply(&Value::Null, &json!({})), Err(MergePatchError::BadJsonDoc(_))));
        assert_eq!(apply(&json!({"a": 1}), &Value::Null), Value::Null);
        assert_eq!(apply(&json!({"a": 1}), &json!("x")), json!("x"));
    }

    #[test]
    fn non_object_document_becomes_the_pruned_patch() {
        assert_eq!(try_apply(&json!([1]), &json!({"a": null, "b": 1})), Ok(json!({"b": 1})));
        assert_eq!(try_apply(&json!({"a": 1}), &json!([{"x": null}, null])), Ok(json!([{}, null])));
    }
}
