//! Writes that set `metadata.managedFields` themselves: a transfer of ownership, a
//! migration to server-side apply, a JSON Patch that removes an entry. The apiserver takes
//! such a list as given (and records no entry for the write itself), so for these writes
//! the managers are the change, not noise: a diff must show them, a "no change" decision
//! must count them, and an undo must put the old list back.
//!
//! Every other write changes `managedFields` too (the server records who wrote), which is
//! why diffs normally leave them out ([`super::without_write_noise`]); a plan never
//! touches them unless the patch does, so comparing a plan's result with the live object
//! tells the two apart ([`sets_managed_fields`]), and a stored patch says it too
//! ([`patch_sets_managed_fields`]).

use serde_json::Value;

use super::server_owned::without_write_noise;

const MANAGED_FIELDS_POINTER: &str = "/metadata/managedFields";

/// Whether a planned change sets the managers: its locally planned `result` has other
/// `metadata.managedFields` than the `live` object it was planned against.
pub fn sets_managed_fields(live: &Value, result: &Value) -> bool {
    live.pointer(MANAGED_FIELDS_POINTER) != result.pointer(MANAGED_FIELDS_POINTER)
}

/// Whether a patch as sent (a JSON Patch list, or a merge, strategic or apply object)
/// writes `metadata.managedFields`: an operation on it or in it (`path`, or `from` of a
/// move or copy), or the key in the object's `metadata`.
pub fn patch_sets_managed_fields(patch: &Value) -> bool {
    let touches = |pointer: &str| {
        pointer == MANAGED_FIELDS_POINTER
            || pointer.strip_prefix(MANAGED_FIELDS_POINTER).is_some_and(|rest| rest.starts_with('/'))
            || pointer == "/metadata"
            || pointer.is_empty()
    };
    match patch {
        Value::Array(ops) => ops.iter().any(|op| {
            op.get("op").and_then(Value::as_str) != Some("test")
                && ["path", "from"].iter().any(|key| op.get(*key).and_then(Value::as_str).is_some_and(touches))
        }),
        Value::Object(map) => map.get("metadata").and_then(|m| m.get("managedFields")).is_some(),
        _ => false,
    }
}

/// `object` as a diff shows it: without the metadata every write changes, but with
/// `metadata.managedFields` when `keep_managers` (the change sets them).
pub fn diff_view(object: &Value, keep_managers: bool) -> Value {
    let mut view = without_write_noise(object);
    if keep_managers {
        if let (Some(list), Some(Value::Object(meta))) =
            (object.pointer(MANAGED_FIELDS_POINTER), view.get_mut("metadata"))
        {
            meta.insert("managedFields".into(), list.clone());
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plan_sets_managers_only_when_its_result_has_other_ones() {
        let live = json!({"metadata": {"managedFields": [{"manager": "a"}, {"manager": "b"}]}, "data": {"x": "1"}});
        let mut patched = live.clone();
        patched["data"]["x"] = json!("2");
        assert!(!sets_managed_fields(&live, &patched));
        patched["metadata"]["managedFields"] = json!([{"manager": "a"}]);
        assert!(sets_managed_fields(&live, &patched));
    }

    #[test]
    fn patches_of_every_shape_are_recognised() {
        for (patch, sets) in [
            (json!([{"op": "remove", "path": "/metadata/managedFields/1"}]), true),
            (json!([{"op": "add", "path": "/metadata/managedFields", "value": []}]), true),
            (json!([{"op": "copy", "from": "/metadata/managedFields/0", "path": "/data/x"}]), true),
            (json!([{"op": "replace", "path": "/metadata", "value": {}}]), true),
            (json!([{"op": "test", "path": "/metadata/managedFields/0/manager", "value": "a"}]), false),
            (json!([{"op": "add", "path": "/metadata/managedFieldsX", "value": 1}]), false),
            (json!([{"op": "replace", "path": "/data/x", "value": "1"}]), false),
            (json!({"metadata": {"managedFields": [{"manager": "a"}]}}), true),
            (json!({"metadata": {"labels": {"a": "b"}}}), false),
            (json!("text"), false),
        ] {
            assert_eq!(patch_sets_managed_fields(&patch), sets, "{patch}");
        }
    }

    #[test]
    fn the_diff_view_keeps_managers_only_when_asked() {
        let object = json!({"metadata": {"name": "x", "resourceVersion": "3", "managedFields": [{"manager": "a"}]}});
        assert_eq!(diff_view(&object, false), json!({"metadata": {"name": "x"}}));
        assert_eq!(diff_view(&object, true), json!({"metadata": {"name": "x", "managedFields": [{"manager": "a"}]}}));
    }
}
