//! Which managers are client-side: the `Update` managers kubectl writes as when a
//! file is applied without server-side apply, whose fields `kubectl apply
//! --server-side` moves to the applier on its first run (client-go's csaupgrade).

use serde_json::Value;

use super::managers::{ManagedFieldsEntry, Operation};
use crate::fieldpath::{compare, field_set_lossy, Path, Set};
use crate::schema::{Schema, TypeId};
use crate::well_known::{CLIENT_SIDE_APPLY_MANAGER, CREATE_MANAGER, LAST_APPLIED_ANNOTATION};

/// Whether `entry` is `kubectl apply` (client-side) or `kubectl create` writing the object
/// itself: a write that means "this object came from a file, through kubectl".
pub fn is_client_side_write(entry: &ManagedFieldsEntry) -> bool {
    entry.operation == Operation::Update
        && entry.subresource.is_empty()
        && (entry.manager == CLIENT_SIDE_APPLY_MANAGER || entry.manager == CREATE_MANAGER)
}

/// The client-side managers whose fields a move to server-side apply takes, in a fixed
/// order: `kubectl-client-side-apply` and `kubectl-create` (fields a `kubectl create -f`
/// set would otherwise stay co-owned, and a later server-side apply without them could
/// never delete them), then, sorted, every `Update` manager owning the last-applied
/// annotation (what kubectl picks).
pub fn client_side_managers(entries: &[ManagedFieldsEntry]) -> Vec<String> {
    let annotation = Path::fields(["metadata", "annotations", LAST_APPLIED_ANNOTATION]);
    let mut names = vec![CLIENT_SIDE_APPLY_MANAGER.to_string(), CREATE_MANAGER.to_string()];
    let mut owners: Vec<String> = entries
        .iter()
        .filter(|e| e.operation == Operation::Update && e.fields.has(annotation.elements()))
        .map(|e| e.manager.clone())
        .collect();
    owners.sort();
    for name in owners {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The fields client-side apply set that still hold their last-applied value (upstream's
/// `lastAppliedManager.allowedConflictsFromLastApplied`), or `None` when there is no usable annotation.
pub(crate) fn allowed_by_last_applied(live: &Value, config: &Value, schema: &Schema, ty: TypeId) -> Option<Set> {
    let last_applied = last_applied_of(live)?;
    if last_applied.get("apiVersion") != config.get("apiVersion") {
        return None;
    }
    let set = last_applied_fields(&last_applied, schema, ty)?;
    let diff = compare(&last_applied, live, schema, Some(ty));
    Some(set.difference(&diff.modified).difference(&diff.added).difference(&diff.removed))
}

/// The fields `kubectl-client-side-apply` owns in `live` though its last-applied annotation
/// never set them, or `None` without a usable annotation. A client-side apply that creates
/// an object records as its own every field of the stored object, the ones the apiserver
/// defaulted included (an `Update` owns all it changes), so these hold the server's
/// defaults: a server-side apply setting another value conflicts with a manager that never
/// chose it, and moving client-side apply's fields to the applier (`kubectl last-applied
/// migrate`, `kubectl owners transfer`) ends the conflict for good.
pub fn defaulted_under_client_side_apply(
    live: &Value,
    entries: &[ManagedFieldsEntry],
    schema: &Schema,
    ty: TypeId,
) -> Option<Set> {
    let owned = entries.iter().find(|e| {
        e.manager == CLIENT_SIDE_APPLY_MANAGER && e.operation == Operation::Update && e.subresource.is_empty()
    })?;
    let applied = last_applied_fields(&last_applied_of(live)?, schema, ty)?;
    Some(owned.fields.difference(&applied))
}

/// The object in `live`'s last-applied annotation, `None` when there is none or it is not an object.
fn last_applied_of(live: &Value) -> Option<Value> {
    let text = live.get("metadata")?.get("annotations")?.get(LAST_APPLIED_ANNOTATION)?.as_str()?;
    let last_applied: Value = serde_json::from_str(text).ok()?;
    last_applied.is_object().then_some(last_applied)
}

/// The fields the last-applied object sets, `None` when it does not fit the schema.
fn last_applied_fields(last_applied: &Value, schema: &Schema, ty: TypeId) -> Option<Set> {
    let (set, errors) = field_set_lossy(last_applied, schema, Some(ty));
    errors.is_empty().then_some(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    fn entries(list: serde_json::Value) -> Vec<ManagedFieldsEntry> {
        managed_fields_of(&json!({"metadata": {"managedFields": list}})).unwrap()
    }

    #[test]
    fn the_annotation_owners_join_the_two_kubectl_managers_once_each() {
        let annotation = json!({"f:metadata": {"f:annotations": {format!("f:{LAST_APPLIED_ANNOTATION}"): {}}}});
        let list = json!([
            {"manager": "zeta", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": annotation},
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": annotation},
            {"manager": "alpha", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": annotation},
            {"manager": "applier", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": annotation},
            {"manager": "helm", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {}}}]);
        assert_eq!(
            client_side_managers(&entries(list)),
            ["kubectl-client-side-apply", "kubectl-create", "alpha", "zeta"]
        );
        assert_eq!(client_side_managers(&[]), ["kubectl-client-side-apply", "kubectl-create"]);
    }

    #[test]
    fn client_side_writes_are_kubectl_apply_or_create_on_the_object_itself() {
        let list = json!([
            {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"},
            {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "subresource": "status"},
            {"manager": "kubectl-client-side-apply", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1"},
            {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}]);
        let verdicts: Vec<bool> = entries(list).iter().map(is_client_side_write).collect();
        assert_eq!(verdicts, [true, false, false, false]);
    }
}
