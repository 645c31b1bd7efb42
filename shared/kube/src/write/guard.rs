//! The optimistic-concurrency guard a write carries: the server refuses it when
//! the object is no longer the one the change was planned against.
//!
//! Merge, strategic and apply patches carry `metadata.resourceVersion` (a
//! precondition: 409 Conflict when it moved). A JSON Patch starts with a `test`
//! of `/metadata/resourceVersion` (the apiserver applies a JSON Patch to the
//! current object, so a moved object fails the test with 422).

use serde_json::{json, Map, Value};

use super::request::PatchType;

/// The request body: `patch` guarded by `resource_version`.
pub fn guarded_body(patch_type: PatchType, patch: &Value, resource_version: &str) -> Value {
    match (patch_type, patch) {
        (PatchType::Json, Value::Array(ops)) => {
            let mut body = Vec::with_capacity(ops.len() + 1);
            body.push(json!({"op": "test", "path": "/metadata/resourceVersion", "value": resource_version}));
            body.extend(ops.iter().cloned());
            Value::Array(body)
        }
        _ => {
            let mut body = patch.clone();
            if let Value::Object(map) = &mut body {
                let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert("resourceVersion".into(), Value::String(resource_version.into()));
                }
            }
            body
        }
    }
}

/// The resourceVersion of an object, if it has one.
pub fn resource_version(object: &Value) -> Option<&str> {
    object.pointer("/metadata/resourceVersion").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_patch_type_carries_its_guard() {
        let merge = guarded_body(PatchType::Merge, &json!({"spec": {"replicas": 2}}), "7");
        assert_eq!(merge, json!({"spec": {"replicas": 2}, "metadata": {"resourceVersion": "7"}}));
        let apply = guarded_body(PatchType::Apply, &json!({"metadata": {"name": "x"}}), "8");
        assert_eq!(apply["metadata"], json!({"name": "x", "resourceVersion": "8"}));
        let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 2}]);
        let json_patch = guarded_body(PatchType::Json, &ops, "9");
        assert_eq!(json_patch[0], json!({"op": "test", "path": "/metadata/resourceVersion", "value": "9"}));
        assert_eq!(json_patch[1], ops[0]);
        assert_eq!(resource_version(&merge), Some("7"));
    }
}
