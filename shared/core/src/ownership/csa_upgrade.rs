//! Moving fields from client-side managers to a server-side apply manager,
//! exactly as client-go's `csaupgrade.UpgradeManagedFields` does (what
//! `kubectl apply --server-side` runs on objects last applied client-side).
//!
//! For each client-side manager name, in the order given: the applier's `Apply`
//! entry (or, when there is none, the first `Update` entry of the client-side
//! manager, renamed to the applier and turned into `Apply`) takes the union of its
//! fields and those of the client-side manager's `Update` entry with the same API
//! version; then every `Update` entry of the client-side manager is dropped.
//!
//! Helm 4 runs the same function on its first server-side upgrade of a release Helm 3
//! wrote client-side ([`helm_conversion`]): before its apply of each object it patches the
//! object's `managedFields` with `csaupgrade.UpgradeManagedFieldsPatch(obj, {helm}, helm)`
//! (helm.sh/helm/v4 `pkg/kube/client.go`, `upgradeClientSideFieldManager`), so Helm 3's own
//! `Update` entry becomes its `Apply` entry, and only that entry: fields `kubectl edit`,
//! `kubectl scale` or a controller took stay theirs, and the apply conflicts with them.

use serde_json::Value;

use crate::ownership::{ManagedFieldsEntry, ManagedFieldsError, Operation};

fn parse(raw: &[Value]) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    raw.iter()
        .enumerate()
        .map(|(i, v)| ManagedFieldsEntry::from_value(v).map_err(|e| ManagedFieldsError { index: Some(i), ..e }))
        .collect()
}

/// The upgraded `managedFields` list, or `None` when nothing changes. Untouched entries are
/// kept byte for byte; the entry that takes the fields is re-encoded.
pub fn upgrade_managed_fields(
    raw: &[Value],
    client_side: &[&str],
    applier: &str,
    subresource: &str,
) -> Result<Option<Vec<Value>>, ManagedFieldsError> {
    let mut raw = raw.to_vec();
    let mut entries = parse(&raw)?;
    let mut changed = false;
    for csa in client_side {
        let is_csa = |e: &ManagedFieldsEntry| {
            e.manager == *csa && e.operation == Operation::Update && e.subresource == subresource
        };
        if !entries.iter().any(is_csa) {
            continue;
        }
        let target = entries
            .iter()
            .position(|e| e.manager == applier && e.operation == Operation::Apply && e.subresource == subresource);
        let target = match target {
            Some(t) => t,
            None => {
                let Some(first) = entries.iter().position(is_csa) else { continue };
                // Renamed, it is no longer a client-side entry: the union below finds the next one.
                entries[first].manager = applier.to_string();
                entries[first].operation = Operation::Apply;
                first
            }
        };
        let api_version = entries[target].api_version.clone();
        if let Some(source) = entries.iter().position(|e| is_csa(e) && e.api_version == api_version) {
            entries[target].fields = entries[target].fields.union(&entries[source].fields);
        }
        raw[target] = entries[target].to_value();
        let keep: Vec<bool> = entries.iter().map(|e| !is_csa(e)).collect();
        let mut index = 0;
        raw.retain(|_| {
            index += 1;
            keep[index - 1]
        });
        entries.retain(|e| !is_csa(e));
        changed = true;
    }
    Ok(changed.then_some(raw))
}

/// The object as Helm 4's conversion leaves it before its first server-side apply of
/// `live` as `manager` (the base name of Helm's executable: `helm`): `manager`'s
/// client-side `Update` entries of the main resource moved into its `Apply` entry, as
/// [`upgrade_managed_fields`] moves them. `None` when there is nothing to convert (an
/// object Helm already applied server-side, or never wrote), as Helm then sends no patch.
pub fn helm_conversion(live: &Value, manager: &str) -> Result<Option<Value>, ManagedFieldsError> {
    let Some(raw) = live.pointer("/metadata/managedFields").and_then(Value::as_array) else { return Ok(None) };
    let Some(upgraded) = upgrade_managed_fields(raw, &[manager], manager, "")? else { return Ok(None) };
    let mut converted = live.clone();
    converted["metadata"]["managedFields"] = Value::Array(upgraded);
    Ok(Some(converted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, api_version: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": api_version, "time": "2025-01-01T00:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn client_side_entries_become_the_appliers() {
        let controller = entry("kube-controller-manager", "Update", "v1", json!({"f:status": {}}));
        let raw = vec![
            entry("kubectl-create", "Update", "v1", json!({"f:data": {".": {}, "f:a": {}}})),
            controller.clone(),
            entry("kubectl-client-side-apply", "Update", "v1", json!({"f:data": {"f:b": {}}})),
        ];
        let out = upgrade_managed_fields(&raw, &["kubectl-client-side-apply", "kubectl-create"], "kubectl", "")
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            vec![controller, entry("kubectl", "Apply", "v1", json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})),]
        );
        // Upgrading again changes nothing; objects without client-side managers neither.
        assert_eq!(
            upgrade_managed_fields(&out, &["kubectl-client-side-apply", "kubectl-create"], "kubectl", "").unwrap(),
            None
        );
    }

    #[test]
    fn existing_apply_entry_takes_same_version_fields_and_others_are_dropped() {
        let raw = vec![
            entry("kubectl", "Apply", "apps/v1", json!({"f:spec": {"f:replicas": {}}})),
            entry("kubectl-client-side-apply", "Update", "apps/v1", json!({"f:spec": {"f:paused": {}}})),
            entry("kubectl-client-side-apply", "Update", "apps/v1beta1", json!({"f:spec": {"f:x": {}}})),
        ];
        let out = upgrade_managed_fields(&raw, &["kubectl-client-side-apply"], "kubectl", "").unwrap().unwrap();
        assert_eq!(
            out,
            vec![entry("kubectl", "Apply", "apps/v1", json!({"f:spec": {"f:paused": {}, "f:replicas": {}}}))]
        );
    }

    #[test]
    fn helm_conversion_makes_helms_updates_its_apply_and_leaves_the_others() {
        // A Deployment Helm 3 created and upgraded (its fields in `helm` Update entries of two
        // versions), scaled with kubectl and labelled by hand.
        let scale = json!({"manager": "kubectl", "operation": "Update", "apiVersion": "autoscaling/v1",
            "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
            "subresource": "scale"});
        let label = entry("kubectl-label", "Update", "apps/v1", json!({"f:metadata": {"f:labels": {"f:tier": {}}}}));
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web",
            "resourceVersion": "7", "managedFields": [
                entry("helm", "Update", "apps/v1", json!({"f:spec": {"f:replicas": {}, "f:template": {}}})),
                scale.clone(),
                label.clone(),
                entry("helm", "Update", "apps/v1beta2", json!({"f:spec": {"f:paused": {}}})),
            ]}, "spec": {"replicas": 5}});
        let converted = helm_conversion(&live, "helm").unwrap().unwrap();
        let mut expected = live.clone();
        // The first Update entry renamed in place; the other version's Update entry dropped.
        expected["metadata"]["managedFields"] = json!([
            entry("helm", "Apply", "apps/v1", json!({"f:spec": {"f:replicas": {}, "f:template": {}}})),
            scale,
            label,
        ]);
        assert_eq!(converted, expected);
        // Converted once, there is nothing left to convert; nor on an object Helm never wrote.
        assert_eq!(helm_conversion(&converted, "helm").unwrap(), None);
        assert_eq!(helm_conversion(&json!({"metadata": {"name": "a"}}), "helm").unwrap(), None);
    }

    #[test]
    fn helm_conversion_joins_an_existing_apply_entry_of_the_same_version() {
        let live = json!({"metadata": {"managedFields": [
            entry("helm", "Apply", "v1", json!({"f:data": {"f:a": {}}})),
            entry("helm", "Update", "v1", json!({"f:data": {"f:b": {}}})),
        ]}});
        let converted = helm_conversion(&live, "helm").unwrap().unwrap();
        assert_eq!(
            converted["metadata"]["managedFields"],
            json!([entry("helm", "Apply", "v1", json!({"f:data": {"f:a": {}, "f:b": {}}}))])
        );
    }
}
