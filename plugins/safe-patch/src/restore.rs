//! What `undo` restores: everything a user could have set, none of what the
//! server or a controller owns (status, server metadata, and labels or
//! annotations a controller manages, like `deployment.kubernetes.io/revision`).
//! Through the `status` subresource it is the status alone.

use fieldwise_core::ownership::{self, managed_fields_of, remove_server_set_metadata};
use serde_json::{Map, Value};

/// The part of `object` a restore writes back.
pub fn restorable(object: &Value, controller_keys: &[(String, String)], subresource: Option<&str>) -> Value {
    if subresource == Some("status") {
        let mut only = Map::new();
        if let Some(status) = object.get("status") {
            only.insert("status".into(), status.clone());
        }
        return Value::Object(only);
    }
    let mut copy = object.clone();
    if let Value::Object(map) = &mut copy {
        map.remove("status");
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            remove_server_set_metadata(meta);
            for (field, key) in controller_keys {
                if let Some(Value::Object(entries)) = meta.get_mut(field) {
                    entries.remove(key);
                }
            }
        }
    }
    copy
}

/// `(labels|annotations, key)` pairs that controllers own in `live`'s managedFields
/// (none when they cannot be read).
pub fn controller_owned_metadata(live: &Value) -> Vec<(String, String)> {
    ownership::controller_owned_metadata(&managed_fields_of(live).unwrap_or_default())
}

/// Whether someone other than a controller changed the object since `after`:
/// controllers' own writes (status, revision annotations) do not count.
pub fn changed_by_others(after: &Value, live: &Value, subresource: Option<&str>) -> bool {
    let keys = controller_owned_metadata(live);
    restorable(after, &keys, subresource) != restorable(live, &keys, subresource)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_restores_status_only_and_the_rest_leaves_it_out() {
        let object = json!({"metadata": {"name": "d", "resourceVersion": "3", "uid": "u"},
                            "spec": {"replicas": 2}, "status": {"replicas": 1}});
        assert_eq!(restorable(&object, &[], Some("status")), json!({"status": {"replicas": 1}}));
        assert_eq!(restorable(&object, &[], None), json!({"metadata": {"name": "d"}, "spec": {"replicas": 2}}));
        assert_eq!(
            restorable(&object, &[], Some("scale")),
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 2}})
        );
        let mut moved = object.clone();
        moved["status"]["replicas"] = json!(2);
        moved["metadata"]["resourceVersion"] = json!("4");
        assert!(!changed_by_others(&object, &moved, None));
        assert!(changed_by_others(&object, &moved, Some("status")));
    }
}
