//! Fields the patch changes that another field manager owns. A controller
//! owning `spec.replicas` (an HPA) will simply change it back; a server-side
//! applier will take it back on its next apply, and a client-side `kubectl
//! apply` of an old file may revert it.

use serde_json::Value;

use super::{Finding, Severity};
use crate::fieldpath::{compare, Set};
use crate::ownership::{ManagedFieldsEntry, ManagerKind, Operation};
use crate::schema::{Schema, TypeId};

/// Findings for fields changed between `live` and `result` that managers
/// other than `me` own. Controllers and server-side appliers need `--force`.
pub fn foreign_owners(
    live: &Value,
    result: &Value,
    managed: &[ManagedFieldsEntry],
    schema: &Schema,
    ty: Option<TypeId>,
    me: &str,
) -> Vec<Finding> {
    let comparison = compare(live, result, schema, ty);
    let changed: Set = comparison.added.union(&comparison.modified).union(&comparison.removed);
    let mut out = Vec::new();
    for entry in managed.iter().filter(|e| e.manager != me) {
        let taken = entry.fields.intersection(&changed);
        if taken.is_empty() {
            continue;
        }
        let fields = summarize(taken.leaves().iter().map(|p| p.to_string()).collect());
        let kind = entry.kind();
        let (severity, consequence) = match (kind, entry.operation) {
            (ManagerKind::Controller, _) => (Severity::NeedsForce, "a controller: it will likely change it back"),
            (_, Operation::Apply) => (Severity::NeedsForce, "a server-side applier: its next apply will take it back"),
            _ => (Severity::Warning, "the next write by that manager may revert it"),
        };
        out.push(Finding::new(
            severity,
            fields.clone(),
            format!("{fields} owned by {} ({}), {consequence}", entry.manager, entry.operation.as_str()),
        ));
    }
    out
}

/// At most three paths, then how many more: a message is one line.
fn summarize(paths: Vec<String>) -> String {
    match paths.len() {
        0..=3 => paths.join(", "),
        n => format!("{} and {} more fields", paths[..3].join(", "), n - 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    #[test]
    fn a_controller_owning_replicas_needs_force() {
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "managedFields": [
            {"manager": "horizontal-pod-autoscaler-controller", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}}]},
            "spec": {"replicas": 3, "paused": false}});
        let mut result = live.clone();
        result["spec"]["replicas"] = json!(5);
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let managed = managed_fields_of(&live).unwrap();
        let findings = foreign_owners(&live, &result, &managed, schema, ty, "kubectl-safe-patch");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].severity, Severity::NeedsForce);
        assert!(findings[0].message.contains("horizontal-pod-autoscaler-controller"), "{}", findings[0].message);
        result["spec"]["replicas"] = json!(3);
        result["spec"]["paused"] = json!(true);
        let findings = foreign_owners(&live, &result, &managed, schema, ty, "kubectl-safe-patch");
        assert_eq!(findings[0].severity, Severity::Warning);
    }
}
