//! The move of one object from client-side to server-side apply, as a JSON Patch:
//! `kubectl apply --server-side`'s first run (client-go's csaupgrade). The fields of
//! the client-side managers ([`crate::ownership::client_side_managers`]) move into the
//! applier's `Apply` entry ([`super::upgrade_managed_fields`]), in one `replace` of
//! `metadata.managedFields` with, as csaupgrade does, a `replace` of
//! `metadata.resourceVersion`; optionally the same patch removes the annotation (the
//! cure for one too large to keep). The write path adds its guard.

use serde_json::{json, Value};

use super::{annotation_of, upgrade_managed_fields, LAST_APPLIED_ANNOTATION};
use crate::json_patch::{self, escape_token, JsonPatchError};
use crate::ownership::{client_side_managers, managed_fields_of, ManagedFieldsError};

/// A migration planned against one version of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// The JSON Patch (empty when there is nothing to do).
    pub patch: Value,
    /// The object it produces.
    pub result: Value,
    /// Whether fields move to the applier (false: only the annotation goes).
    pub upgrades: bool,
}

/// Why a migration cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    /// The object's `metadata.managedFields` cannot be read.
    #[error(transparent)]
    ManagedFields(Box<ManagedFieldsError>),
    /// The patch does not apply to the object it was made from (a bug, reported rather than sent).
    #[error("cannot plan the migration: {0}")]
    Patch(#[source] Box<JsonPatchError>),
}

/// Plans the migration of `live` to server-side apply by `applier`; with `drop_annotation`,
/// the last-applied annotation goes too.
pub fn plan_migration(live: &Value, applier: &str, drop_annotation: bool) -> Result<Migration, MigrationError> {
    let entries = managed_fields_of(live).map_err(|e| MigrationError::ManagedFields(Box::new(e)))?;
    let names = client_side_managers(&entries);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let raw = live.pointer("/metadata/managedFields").and_then(Value::as_array).cloned().unwrap_or_default();
    let upgraded =
        upgrade_managed_fields(&raw, &names, applier, "").map_err(|e| MigrationError::ManagedFields(Box::new(e)))?;
    let drop = drop_annotation && annotation_of(live).is_some();
    let rv = live.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null);
    let mut ops = Vec::new();
    if let Some(list) = &upgraded {
        ops.push(json!({"op": "replace", "path": "/metadata/managedFields", "value": list}));
    }
    if drop {
        let key = escape_token(LAST_APPLIED_ANNOTATION);
        ops.push(json!({"op": "remove", "path": format!("/metadata/annotations/{key}")}));
    }
    if !ops.is_empty() {
        ops.push(json!({"op": "replace", "path": "/metadata/resourceVersion", "value": rv}));
    }
    let patch = Value::Array(ops);
    let result = json_patch::apply(live, &patch).map_err(|e| MigrationError::Patch(Box::new(e)))?;
    Ok(Migration { patch, result, upgrades: upgraded.is_some() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(managers: Value, annotation: bool) -> Value {
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "resourceVersion": "9", "managedFields": managers}, "data": {"a": "1"}});
        if annotation {
            object["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: "{}"});
        }
        object
    }

    #[test]
    fn client_side_fields_move_to_the_applier_and_the_annotation_goes_when_asked() {
        let live = object(
            json!([{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
                    "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}]),
            true,
        );
        let m = plan_migration(&live, "kubectl", true).unwrap();
        assert!(m.upgrades);
        let ops: Vec<(&str, &str)> = m
            .patch
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["op"].as_str().unwrap(), o["path"].as_str().unwrap()))
            .collect();
        assert_eq!(
            ops,
            [
                ("replace", "/metadata/managedFields"),
                ("remove", "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"),
                ("replace", "/metadata/resourceVersion"),
            ]
        );
        let entry = &m.result["metadata"]["managedFields"][0];
        assert_eq!((entry["manager"].as_str(), entry["operation"].as_str()), (Some("kubectl"), Some("Apply")));
        assert!(annotation_of(&m.result).is_none());
    }

    #[test]
    fn nothing_to_move_and_nothing_to_drop_is_an_empty_patch() {
        let live = object(
            json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}}}]),
            false,
        );
        let m = plan_migration(&live, "kubectl", true).unwrap();
        assert_eq!((m.patch, m.upgrades), (json!([]), false));
        assert_eq!(m.result, live);
        let broken = object(json!([{"manager": "x"}]), false);
        assert!(matches!(plan_migration(&broken, "kubectl", false), Err(MigrationError::ManagedFields(_))));
    }
}
