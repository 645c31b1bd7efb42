//! What the server and the controllers own, which a user never writes back:
//! the metadata the apiserver sets, and the labels and annotations controllers
//! manage (`deployment.kubernetes.io/revision`). One list, used by the diff a
//! user is shown, by the restore `undo` writes and by the view `owners` prints.

use serde_json::{Map, Value};

use super::classify::ManagerKind;
use super::managers::ManagedFieldsEntry;
use crate::fieldpath::PathElement;

/// The `metadata` fields only the apiserver sets, in the order views list them.
/// Three change on every write ([`CHANGED_BY_EVERY_WRITE`]); the others are fixed when
/// the object is created.
pub const SERVER_SET_METADATA: [&str; 6] =
    ["managedFields", "uid", "resourceVersion", "creationTimestamp", "generation", "selfLink"];

/// The part of [`SERVER_SET_METADATA`] every write changes and nobody asks for: left out
/// of diffs, so that a diff shows what the user meant and nothing else.
pub const CHANGED_BY_EVERY_WRITE: [&str; 3] = ["managedFields", "resourceVersion", "generation"];

/// `object` without the metadata every write changes ([`CHANGED_BY_EVERY_WRITE`]): what a
/// diff compares. Everything a user could have meant is kept.
pub fn without_write_noise(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(Value::Object(meta)) = copy.get_mut("metadata") {
        remove_keys(meta, &CHANGED_BY_EVERY_WRITE);
    }
    copy
}

/// Removes every [`SERVER_SET_METADATA`] field from an object's `metadata` map.
pub fn remove_server_set_metadata(meta: &mut Map<String, Value>) {
    remove_keys(meta, &SERVER_SET_METADATA);
}

fn remove_keys(meta: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        meta.remove(*key);
    }
}

/// `(labels|annotations, key)` pairs that controllers own according to `entries`
/// (`metadata.managedFields`): a restore leaves them as the controller has them.
pub fn controller_owned_metadata(entries: &[ManagedFieldsEntry]) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    for entry in entries.iter().filter(|e| e.kind() == ManagerKind::Controller) {
        for path in entry.fields.leaves().iter() {
            if let [PathElement::Field(m), PathElement::Field(field), PathElement::Field(key), ..] = path.elements() {
                if m == "metadata" && (field == "labels" || field == "annotations") {
                    keys.push((field.clone(), key.clone()));
                }
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    #[test]
    fn what_every_write_changes_is_part_of_what_the_server_sets() {
        assert!(CHANGED_BY_EVERY_WRITE.iter().all(|name| SERVER_SET_METADATA.contains(name)));
    }

    #[test]
    fn write_noise_is_left_out_and_the_rest_kept() {
        let v = json!({"metadata": {"name": "x", "uid": "u", "resourceVersion": "5", "managedFields": [],
                                    "generation": 2}});
        assert_eq!(without_write_noise(&v), json!({"metadata": {"name": "x", "uid": "u"}}));
        let Value::Object(mut meta) = v["metadata"].clone() else { unreachable!() };
        remove_server_set_metadata(&mut meta);
        assert_eq!(Value::Object(meta), json!({"name": "x"}));
    }

    #[test]
    fn controllers_own_their_revision_annotation_and_users_their_labels() {
        let object = json!({"metadata": {"managedFields": [
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {
                 "f:deployment.kubernetes.io/revision": {}}}}},
            {"manager": "alice", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}]}});
        let entries = managed_fields_of(&object).unwrap();
        assert_eq!(
            controller_owned_metadata(&entries),
            vec![("annotations".to_string(), "deployment.kubernetes.io/revision".to_string())]
        );
    }
}
