//! The optimistic-concurrency guard a write carries, on the wire: the server
//! refuses the write when what the change depends on moved.
//!
//! The core decides the guard ([`fieldwise_core::write::guard`]). A field guard is sent
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

use fieldwise_core::plan::Planned;
use fieldwise_core::write::guard::{taking_back, Appended, Guard};
use fieldwise_core::write::replan::uid_of;
use serde_json::{json, Map, Value};

use super::request::PatchType;

/// A write's request body under its guard, and the patch type it is sent as.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedRequest {
    /// The body.
    pub body: Value,
    /// Its patch type (a field guard is a JSON Patch whatever the planned patch type).
    pub patch_type: PatchType,
    /// The entries a field guard adds at either end of a list without pinning it: the
    /// written object must name each once ([`GuardedRequest::taking_back`]).
    pub appended: Vec<Appended>,
}

impl GuardedRequest {
    /// When `written` (the object as this request left it) names an entry it added twice
    /// (somebody else added the same entry between the read and the write): the JSON Patch
    /// that takes this request's copies out again (the core's [`taking_back`]), pinned to the
    /// object's uid. `None` when every added entry is there once.
    pub fn taking_back(&self, written: &Value) -> Option<Value> {
        let back = taking_back(&self.appended, written)?;
        Some(match uid_of(written) {
            Some(uid) => pinned_to_uid(PatchType::Json, back, uid),
            None => back,
        })
    }
}

/// The request that sends `planned`, planned against `live`, under `guard`; `None` when
/// the guard is the whole object and the object has no resourceVersion.
pub fn request_of(guard: Guard, planned: &Planned, live: &Value) -> Option<GuardedRequest> {
    let request = match guard {
        Guard::Fields(fields) => {
            GuardedRequest { body: fields.patch, patch_type: PatchType::Json, appended: fields.appended }
        }
        Guard::WholeObject(_) => GuardedRequest {
            body: guarded_body(planned.patch_type, &planned.patch, resource_version(live)?),
            patch_type: planned.patch_type,
            appended: Vec::new(),
        },
    };
    Some(match uid_of(live) {
        Some(uid) => GuardedRequest { body: pinned_to_uid(request.patch_type, request.body, uid), ..request },
        None => request,
    })
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
        use fieldwise_core::write::guard::WholeObjectReason;
        let live = json!({"metadata": {"resourceVersion": "5"}});
        let planned = Planned {
            patch_type: PatchType::Merge,
            patch: json!({"spec": {"replicas": 2}}),
            result: json!({}),
            findings: vec![],
        };
        let tests = json!([{"op": "test", "path": "/spec/replicas", "value": 1}]);
        let fields = request_of(field_guard(tests.clone()), &planned, &live).unwrap();
        assert_eq!(fields, GuardedRequest { body: tests, patch_type: PatchType::Json, appended: vec![] });
        let whole = request_of(Guard::WholeObject(WholeObjectReason::ServerSideApply), &planned, &live).unwrap();
        assert_eq!(whole.patch_type, PatchType::Merge);
        assert_eq!(whole.body["metadata"]["resourceVersion"], "5");
        let unversioned = request_of(Guard::WholeObject(WholeObjectReason::ServerSideApply), &planned, &json!({}));
        assert_eq!(unversioned, None);
    }

    #[test]
    fn every_request_is_pinned_to_the_uid_of_the_object_previewed() {
        use fieldwise_core::write::guard::WholeObjectReason;
        let live = json!({"metadata": {"resourceVersion": "5", "uid": "u-1"}});
        let planned = Planned {
            patch_type: PatchType::Strategic,
            patch: json!({"spec": {"replicas": 2}}),
            result: json!({}),
            findings: vec![],
        };
        let tests = json!([{"op": "test", "path": "/spec/replicas", "value": 1}]);
        let fields = request_of(field_guard(tests), &planned, &live).unwrap();
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

    fn field_guard(patch: Value) -> Guard {
        Guard::Fields(fieldwise_core::write::guard::FieldGuard { patch, appended: vec![] })
    }

    #[test]
    fn a_copy_of_an_entry_added_twice_is_taken_back_where_the_write_put_it() {
        use fieldwise_core::write::guard::Identity;
        let added = |at_front| Appended {
            list: "/env".into(),
            identity: Identity::Keys(vec![("name".into(), json!("MINE"))]),
            at_front,
            entry: json!({"name": "MINE", "value": "1"}),
        };
        let request =
            |at_front| GuardedRequest { body: json!([]), patch_type: PatchType::Json, appended: vec![added(at_front)] };
        let once = json!({"metadata": {"uid": "u"}, "env": [{"name": "A"}, {"name": "MINE", "value": "1"}]});
        assert_eq!(request(false).taking_back(&once), None);
        let twice = json!({"metadata": {"uid": "u"}, "env": [
            {"name": "MINE", "value": "2"}, {"name": "A"}, {"name": "MINE", "value": "1"}]});
        assert_eq!(
            request(false).taking_back(&twice),
            Some(json!([
                {"op": "test", "path": "/metadata/uid", "value": "u"},
                {"op": "test", "path": "/env/2", "value": {"name": "MINE", "value": "1"}},
                {"op": "remove", "path": "/env/2"},
            ]))
        );
        assert_eq!(request(true).taking_back(&twice).unwrap()[1]["path"], "/env/0");
    }
}
