//! The move of one object from client-side to server-side apply, as a JSON Patch:
//! `kubectl apply --server-side`'s first run (client-go's csaupgrade), finished. The
//! fields of the managers a migration moves ([`moved_managers`]: the client-side managers
//! of [`crate::ownership::client_side_managers`], the apiserver's `before-first-apply`,
//! and the managers `--also` selects) move into the applier's `Apply` entry
//! ([`super::upgrade_managed_fields`]), in one `replace` of `metadata.managedFields`
//! with, as csaupgrade does, a `replace` of `metadata.resourceVersion`; optionally the
//! same patch removes the annotation (the cure for one too large to keep). The write path
//! adds its guard.
//!
//! csaupgrade moves only `kubectl-client-side-apply`, `kubectl-create` and the annotation's
//! owners: fields set by `kubectl edit`, `patch`, `set`, `label` or before the first
//! server-side apply stay co-owned, and the applier's later apply that drops them cannot
//! delete them (kubernetes#99003). `before-first-apply` always moves; the others with
//! `--also human` (see [`ManagerSelection`]).

use serde_json::{json, Value};

use super::{annotation_of, upgrade_managed_fields, LAST_APPLIED_ANNOTATION};
use crate::json_patch::{self, escape_token, JsonPatchError};
use crate::ownership::{
    client_side_managers, managed_fields_of, ManagedFieldsEntry, ManagedFieldsError, ManagerSelection, Operation,
};
use crate::well_known::BEFORE_FIRST_APPLY_MANAGER;

/// A migration planned against one version of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// The JSON Patch (empty when there is nothing to do).
    pub patch: Value,
    /// The object it produces.
    pub result: Value,
    /// Whether fields move to the applier (false: only the annotation goes).
    pub upgrades: bool,
    /// The managers whose fields move, in the order they move (empty when none does).
    pub moved: Vec<String>,
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

/// The managers a migration of an object with these `metadata.managedFields` moves, in the
/// order they move: its client-side managers ([`client_side_managers`]), then
/// `before-first-apply`, then (sorted) the managers `also` selects; each only when it has an
/// `Update` entry of the main resource (the entries a migration takes).
pub fn moved_managers(entries: &[ManagedFieldsEntry], also: &ManagerSelection) -> Vec<String> {
    let movable = |e: &&ManagedFieldsEntry| e.operation == Operation::Update && e.subresource.is_empty();
    let present = |name: &str| entries.iter().filter(movable).any(|e| e.manager == name);
    let mut names: Vec<String> = client_side_managers(entries);
    names.push(BEFORE_FIRST_APPLY_MANAGER.to_string());
    let mut extra: Vec<String> =
        entries.iter().filter(movable).filter(|e| also.selects(e)).map(|e| e.manager.clone()).collect();
    extra.sort();
    for name in extra {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.retain(|n| present(n));
    names
}

/// Whether a migration would move fields of `object` (it is still managed by client-side
/// apply, or has fields set before its first server-side apply): what `migrate --from-scan`
/// takes besides the objects with findings. False when its managedFields cannot be read.
pub fn migratable(object: &Value) -> bool {
    managed_fields_of(object).is_ok_and(|entries| !moved_managers(&entries, &ManagerSelection::default()).is_empty())
}

/// Plans the migration of `live` to server-side apply by `applier`, moving also the
/// managers `also` selects; with `drop_annotation`, the last-applied annotation goes too.
pub fn plan_migration(
    live: &Value,
    applier: &str,
    drop_annotation: bool,
    also: &ManagerSelection,
) -> Result<Migration, MigrationError> {
    let entries = managed_fields_of(live).map_err(|e| MigrationError::ManagedFields(Box::new(e)))?;
    let moved = moved_managers(&entries, also);
    let names: Vec<&str> = moved.iter().map(String::as_str).collect();
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
    let upgrades = upgraded.is_some();
    Ok(Migration { patch, result, upgrades, moved: if upgrades { moved } else { Vec::new() } })
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
        let m = plan_migration(&live, "kubectl", true, &ManagerSelection::default()).unwrap();
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
        assert_eq!(m.moved, ["kubectl-client-side-apply"]);
    }

    #[test]
    fn nothing_to_move_and_nothing_to_drop_is_an_empty_patch() {
        let live = object(
            json!([{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}}}]),
            false,
        );
        let m = plan_migration(&live, "kubectl", true, &ManagerSelection::default()).unwrap();
        assert_eq!((m.patch, m.upgrades), (json!([]), false));
        assert_eq!(m.result, live);
        let broken = object(json!([{"manager": "x"}]), false);
        assert!(matches!(
            plan_migration(&broken, "kubectl", false, &ManagerSelection::default()),
            Err(MigrationError::ManagedFields(_))
        ));
    }

    fn update(manager: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": "Update", "apiVersion": "v1", "time": "2025-01-01T00:00:00Z",
               "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn before_first_apply_always_moves_and_human_managers_with_also() {
        let live = object(
            json!([
                {"manager": "argocd", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:data": {"f:a": {}}}},
                update("before-first-apply", json!({"f:data": {".": {}, "f:b": {}}})),
                update("kubectl-edit", json!({"f:data": {"f:c": {}}})),
                update("kube-controller-manager", json!({"f:metadata": {"f:labels": {"f:x": {}}}}))]),
            false,
        );
        let plain = plan_migration(&live, "argocd", false, &ManagerSelection::default()).unwrap();
        assert_eq!(plain.moved, ["before-first-apply"]);
        let managers: Vec<&str> = plain.result["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["argocd", "kubectl-edit", "kube-controller-manager"]);
        let human = ManagerSelection::parse(&["human"]).unwrap();
        let all = plan_migration(&live, "argocd", false, &human).unwrap();
        assert_eq!(all.moved, ["before-first-apply", "kubectl-edit"]);
        let list = all.result["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0]["fieldsV1"], json!({"f:data": {".": {}, "f:a": {}, "f:b": {}, "f:c": {}}}));
        assert!(migratable(&live));
        assert!(!migratable(&all.result));
    }

    #[test]
    fn moved_managers_lists_only_update_entries_of_the_main_resource_that_are_there() {
        let entries = managed_fields_of(&object(
            json!([
                update("kubectl-patch", json!({})),
                {"manager": "kubectl-label", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
                 "subresource": "status"},
                update("kubectl-client-side-apply", json!({}))]),
            false,
        ))
        .unwrap();
        let human = ManagerSelection::parse(&["human"]).unwrap();
        assert_eq!(moved_managers(&entries, &human), ["kubectl-client-side-apply", "kubectl-patch"]);
        assert_eq!(moved_managers(&entries, &ManagerSelection::default()), ["kubectl-client-side-apply"]);
        assert!(moved_managers(&[], &human).is_empty());
    }
}
