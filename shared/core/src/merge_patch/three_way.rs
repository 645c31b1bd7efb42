//! Creating a three-way merge patch, as `kubectl apply` does for types without a strategic schema.
//!
//! Upstream is `k8s.io/apimachinery/pkg/util/jsonmergepatch.CreateThreeWayJSONMergePatch`:
//! - additions and changes come from current to modified, keeping non-null
//!   members only (an explicitly empty object is a value and is kept);
//! - deletions come from original to modified (the last-applied
//!   configuration), keeping null members only;
//! - the two must not overlap with different values (a [`MergePatchError::Conflict`]);
//! - the deletions are then merged with the additions as evanphx `MergePatch`
//!   merges, which also strips null members from objects inside arrays;
//! - finally every [`Precondition`] must hold on the result.
//!
//! A `null` original, modified or current counts as `{}`, as an empty input does upstream.

use serde_json::{Map, Value};

use super::apply::merge_members;
use super::error::MergePatchError;
use super::precondition::Precondition;
use super::two_way::create_two_way;

/// The three-way merge patch from `current` (live) to `modified` (wanted), deleting what `original` had.
///
/// ```
/// use serde_json::json;
/// use fieldwise_core::merge_patch;
/// let original = json!({"name": 1});                // last applied
/// let modified = json!({"value": 1});               // wanted now
/// let current = json!({"name": 1, "other": "a"});   // live, with a field someone else set
/// let patch = merge_patch::create_three_way(&original, &modified, &current).unwrap();
/// assert_eq!(patch, json!({"name": null, "value": 1}));
/// ```
pub fn create_three_way(original: &Value, modified: &Value, current: &Value) -> Result<Value, MergePatchError> {
    create_three_way_with(original, modified, current, &[])
}

/// [`create_three_way`] that also checks `preconditions` on the result.
pub fn create_three_way_with(
    original: &Value,
    modified: &Value,
    current: &Value,
    preconditions: &[Precondition],
) -> Result<Value, MergePatchError> {
    let changes = object_of(create_two_way(current, modified)?, "current and modified")?;
    let changes = keep_or_delete_nulls(&changes, false);
    let deletions = object_of(create_two_way(original, modified)?, "original and modified")?;
    let deletions = keep_or_delete_nulls(&deletions, true);

    if has_conflicts(&Value::Object(changes.clone()), &Value::Object(deletions.clone())) {
        return Err(MergePatchError::Conflict {
            patch: Box::new(Value::Object(changes)),
            deletions: Box::new(Value::Object(deletions)),
        });
    }

    let mut patch = deletions;
    merge_members(&mut patch, &changes);
    let patch = Value::Object(patch);
    if let Some(failed) = preconditions.iter().find(|p| !p.holds(&patch)) {
        return Err(MergePatchError::PreconditionFailed { precondition: failed.clone(), patch: Box::new(patch) });
    }
    Ok(patch)
}

fn object_of(patch: Value, between: &str) -> Result<Map<String, Value>, MergePatchError> {
    match patch {
        Value::Object(members) => Ok(members),
        _ => Err(MergePatchError::BadJsonDoc(format!("{between} must be objects"))),
    }
}

/// Keeps only the null members (`keep_null`) or only the others, recursively (upstream `keepOrDeleteNullInObj`).
///
/// An empty object is a value: kept among the non-nulls, dropped among the nulls. A non-empty object
/// that filters down to nothing is dropped. Arrays and scalars are values and are not looked into.
pub(crate) fn keep_or_delete_nulls(members: &Map<String, Value>, keep_null: bool) -> Map<String, Value> {
    let mut filtered = Map::new();
    for (key, value) in members {
        match value {
            Value::Null if keep_null => {
                filtered.insert(key.clone(), Value::Null);
            }
            Value::Null => {}
            Value::Object(nested) if nested.is_empty() && !keep_null => {
                filtered.insert(key.clone(), value.clone());
            }
            Value::Object(nested) if nested.is_empty() => {}
            Value::Object(nested) => {
                let nested = keep_or_delete_nulls(nested, keep_null);
                if !nested.is_empty() {
                    filtered.insert(key.clone(), Value::Object(nested));
                }
            }
            _ if !keep_null => {
                filtered.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    filtered
}

/// Whether two patches set a common key to different values (upstream `mergepatch.HasConflicts`).
pub(crate) fn has_conflicts(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Object(l), Value::Object(r)) => {
            l.iter().any(|(key, lv)| r.get(key).is_some_and(|rv| has_conflicts(lv, rv)))
        }
        (Value::Object(_), _) => true,
        (Value::Array(l), Value::Array(r)) => l.len() != r.len() || l.iter().zip(r).any(|(a, b)| has_conflicts(a, b)),
        (Value::Array(_), _) => true,
        (scalar, other) => scalar != other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filter(v: Value, keep_null: bool) -> Value {
        Value::Object(keep_or_delete_nulls(v.as_object().cloned().as_ref().unwrap_or(&Map::new()), keep_null))
    }

    #[test]
    fn keep_or_delete_nulls_like_upstream() {
        let obj = json!({"n": null, "s": "foo", "m": {"n": null, "s": 1}, "e": {}, "l": [{"k": null}], "allnull": {"x": null}});
        assert_eq!(filter(obj.clone(), true), json!({"n": null, "m": {"n": null}, "allnull": {"x": null}}));
        assert_eq!(filter(obj, false), json!({"s": "foo", "m": {"s": 1}, "e": {}, "l": [{"k": null}]}));
    }

    #[test]
    fn conflicts() {
        assert!(!has_conflicts(&json!({"a": 1}), &json!({"b": null})));
        assert!(has_conflicts(&json!({"a": 1}), &json!({"a": null})));
        assert!(has_conflicts(&json!({"a": {"b": 1}}), &json!({"a": null})));
        assert!(!has_conflicts(&json!({"a": {"b": 1}}), &json!({"a": {"c": null}})));
        assert!(has_conflicts(&json!({"a": [1]}), &json!({"a": [1, 2]})));
        assert!(!has_conflicts(&json!({"a": [1]}), &json!({"a": [1]})));
    }

    #[test]
    fn preconditions() {
        let p = Precondition::kubectl_apply();
        assert!(p.iter().all(|c| c.holds(&json!({"spec": {}}))));
        assert!(!p[1].holds(&json!({"kind": "Other"})));
        assert!(!p[2].holds(&json!({"metadata": {"name": null}})));
        assert!(p[2].holds(&json!({"metadata": "x"})));
        let err = create_three_way_with(&json!({"kind": "A"}), &json!({"kind": "B"}), &json!({"kind": "A"}), &p);
        assert!(matches!(err, Err(MergePatchError::PreconditionFailed { .. })));
    }

    #[test]
    fn nulls_inside_arrays_objects_are_stripped_by_the_final_merge() {
        let patch = create_three_way(&json!({}), &json!({"a": [{"b": null, "c": 1}]}), &json!({}));
        assert_eq!(patch, Ok(json!({"a": [{"c": 1}]})));
    }

    #[test]
    fn new_object_of_only_nulls_comes_from_the_deletions() {
        // Dropped from the changes (it filters down to nothing), kept by the deletions (all null).
        let patch = create_three_way(&json!({}), &json!({"a": {"b": null}}), &json!({}));
        assert_eq!(patch, Ok(json!({"a": {"b": null}})));
    }
}
