//! The optimistic-concurrency guard a write carries, on the wire: the server
//! refuses the write when what the change depends on moved.
//!
//! The core decides the guard ([`fieldwise_core::guard`]). A field guard is sent
//! as it is: a JSON Patch whose `test`s pin the fields the change depends on (a
//! failed `test` comes back as 422). A whole-object guard is the object's
//! `metadata.resourceVersion`: merge, strategic and apply patches carry it as a
//! precondition (409 Conflict when it moved); a JSON Patch starts with a `test`
//! of `/metadata/resourceVersion`.
//!
//! Every request is also pinned to the object previewed, by its `metadata.uid`: a field
//! guard starts with a `test` of `/metadata/uid`, and a merge, strategic or apply body
//! carries `metadata.uid`, which the apiserver refuses to change. An object deleted and
//! created again under the same name between the preview and the write (same fields, new
//! uid) then refuses the write, and the re-plan stops (the core's `Conflict::Recreated`).

use fieldwise_core::guard::Guard;
use fieldwise_core::plan::Planned;
use fieldwise_core::replan::uid_of;
use serde_json::{json, Map, Value};

use super::request::PatchType;

/// A write's request body under its guard, and the patch type it is sent as.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedRequest {
    /// The body.
    pub body: Value,
    /// Its patch type (a field guard is a JSON Patch whatever the planned patch type).
    pub patch_type: PatchType,
}

/// The request that sends `planned`, planned against `live`, under `guard`; `None` when
/// the guard is the whole object and the object has no resourceVersion.
pub fn request_of(guard: Guard, planned: &Planned, live: &Value) -> Option<GuardedRequest> {
    let request = match guard {
        Guard::Fields(body) => GuardedRequest { body, patch_type: PatchType::Json },
        Guard::WholeObject(_) => GuardedRequest {
            body: guarded_body(planned.patch_type, &planned.patch, resource_version(live)?),
            patch_type: planned.patch_type,
        },
    };
    Some(match uid_of(live) {
        Some(uid) => GuardedRequest { body: pinned_to_uid(request.patch_type, request.body, uid), ..request },
        None => request,
    })
}

/// `request` pinned also to the version of `live` it was planned against: for a dry run,
/// whose result is compared with the plan and shown as the change, so it must be the
/// change made to that very version (another writer's change in between would otherwise
/// show up as this one's). A field guard gains a `test` of the resourceVersion (a
/// whole-object guard has it already). `None` when `live` has no resourceVersion.
pub fn pinned_to_version(request: GuardedRequest, live: &Value) -> Option<GuardedRequest> {
    let version = resource_version(live)?;
    let already = match &request.body {
        Value::Array(ops) => {
            ops.iter().any(|op| op.get("path").and_then(Value::as_str) == Some("/metadata/resourceVersion"))
        }
        body => body.pointer("/metadata/resourceVersion").is_some(),
    };
    if already {
        return Some(request);
    }
    Some(GuardedRequest { body: guarded_body(request.patch_type, &request.body, version), ..request })
}

/// `body` pinned to the object whose uid is `uid` (see the module docs).
fn pinned_to_uid(patch_type: PatchType, body: Value, uid: &str) -> Value {
    match (patch_type, body) {
        (PatchType::Json, Value::Array(ops)) => {
            let mut pinned = Vec::with_capacity(ops.len() + 1);
            pinned.push(json!({"op": "test", "path": "/metadata/uid", "value": uid}));
            pinned.extend(ops);
            Value::Array(pinned)
        }
        (_, mut body) => {
            if let Value::Object(map) = &mut body {
                let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert("uid".into(), Value::String(uid.into()));
                }
            }
            body
        }
    }
}

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

    #[test]
    fn a_field_guard_is_sent_as_a_json_patch_and_a_whole_object_guard_as_the_planned_type() {
        use fieldwise_core::guard::WholeObjectReason;
        let live = json!({"metadata": {"resourceVersion": "5"}});
        let planned = Planned {
            patch_type: PatchType::Merge,
            patch: json!({"spec": {"replicas": 2}}),
            result: json!({}),
            findings: vec![],
        };
        let tests = json!([{"op": "test", "path": "/spec/replicas", "value": 1}]);
        let fields = request_of(Guard::Fields(tests.clone()), &planned, &live).unwrap();
        assert_eq!(fields, GuardedRequest { body: tests, patch_type: PatchType::Json });
        let whole = request_of(Guard::WholeObject(WholeObjectReason::ServerSideApply), &planned, &live).unwrap();
        assert_eq!(whole.patch_type, PatchType::Merge);
        assert_eq!(whole.body["metadata"]["resourceVersion"], "5");
        let unversioned = request_of(Guard::WholeObject(WholeObjectReason::ServerSideApply), &planned, &json!({}));
        assert_eq!(unversioned, None);
    }

    #[test]
    fn a_dry_run_is_pinned_to_the_version_planned_against_once() {
        let live = json!({"metadata": {"resourceVersion": "5", "uid": "u-1"}});
        let fields = GuardedRequest {
            body: json!([{"op": "test", "path": "/metadata/uid", "value": "u-1"}]),
            patch_type: PatchType::Json,
        };
        let pinned = pinned_to_version(fields, &live).unwrap();
        assert_eq!(pinned.body[0], json!({"op": "test", "path": "/metadata/resourceVersion", "value": "5"}));
        assert_eq!(pinned_to_version(pinned.clone(), &live).unwrap(), pinned, "already pinned: unchanged");
        let merge = GuardedRequest { body: json!({"data": {"k": "v"}}), patch_type: PatchType::Merge };
        assert_eq!(pinned_to_version(merge, &live).unwrap().body["metadata"]["resourceVersion"], "5");
        let json = GuardedRequest { body: json!([]), patch_type: PatchType::Json };
        assert_eq!(pinned_to_version(json, &json!({})), None);
    }

    #[test]
    fn every_request_is_pinned_to_the_uid_of_the_object_previewed() {
        use fieldwise_core::guard::WholeObjectReason;
        let live = json!({"metadata": {"resourceVersion": "5", "uid": "u-1"}});
        let planned = Planned {
            patch_type: PatchType::Strategic,
            patch: json!({"spec": {"replicas": 2}}),
            result: json!({}),
            findings: vec![],
        };
        let tests = json!([{"op": "test", "path": "/spec/replicas", "value": 1}]);
        let fields = request_of(Guard::Fields(tests), &planned, &live).unwrap();
        assert_eq!(
            fields.body,
            json!([{"op": "test", "path": "/metadata/uid", "value": "u-1"}, {"op": "test", "path": "/spec/replicas", "value": 1}])
        );
        let whole = request_of(Guard::WholeObject(WholeObjectReason::DerivedFromObject), &planned, &live).unwrap();
        assert_eq!(whole.body["metadata"], json!({"resourceVersion": "5", "uid": "u-1"}));
        let json_planned = Planned { patch_type: PatchType::Json, patch: json!([]), ..planned };
        let whole = request_of(Guard::WholeObject(WholeObjectReason::ReadsAfterWriting), &json_planned, &live).unwrap();
        assert_eq!(whole.body[0], json!({"op": "test", "path": "/metadata/uid", "value": "u-1"}));
        assert_eq!(whole.body[1], json!({"op": "test", "path": "/metadata/resourceVersion", "value": "5"}));
    }
}
