//! Fields the patch changes that another field manager owns, blamed only on a
//! manager that writes again. A controller owning `spec.replicas` (an HPA) will
//! simply change it back; a server-side applier will take it back on its next
//! apply; another tool (Helm, a CI job) may write it again. One-shot kubectl
//! commands (`kubectl-create`, `kubectl-edit`, `kubectl-scale`, ...) never write
//! again: what reverts their fields is the next client-side `kubectl apply`,
//! through the last-applied annotation, which [`super::next_apply`] reports.

use serde_json::Value;

use super::{summarize, Finding, Severity};
use crate::fieldpath::{compare, Set};
use crate::last_applied::rebuild::is_foreign_manager;
use crate::last_applied::{annotation_of, CLIENT_SIDE_APPLY_MANAGER};
use crate::ownership::{ManagedFieldsEntry, ManagerKind, Operation};
use crate::schema::{Schema, TypeId};

/// Findings for fields changed between `live` and `result` that managers
/// other than `me` own and that write again. Controllers and server-side
/// appliers need `--force`.
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
    let annotated = annotation_of(live).is_some();
    let mut out = Vec::new();
    for entry in managed.iter().filter(|e| e.manager != me) {
        let taken = entry.fields.intersection(&changed);
        if taken.is_empty() {
            continue;
        }
        let fields = summarize(&taken.leaves().iter().map(|p| p.to_string()).collect::<Vec<_>>());
        let (severity, consequence) = match (entry.kind(), entry.operation) {
            (ManagerKind::Controller, _) => (Severity::NeedsForce, "a controller: it will likely change it back"),
            (_, Operation::Apply) => (Severity::NeedsForce, "a server-side applier: its next apply will take it back"),
            // Without the annotation nothing says which fields the file sets: any of them may come back.
            (ManagerKind::Applier, _) if entry.manager == CLIENT_SIDE_APPLY_MANAGER && !annotated => (
                Severity::Warning,
                "the next `kubectl apply` of its file may set it back (the object has no last-applied annotation to tell which fields the file sets)",
            ),
            // Another tool's update (Helm 3, a script) may run again; kubectl's one-shot commands
            // and the apiserver's placeholders never do.
            (ManagerKind::Human, _) if is_foreign_manager(&entry.manager) => {
                (Severity::Warning, "the next write by that manager may revert it")
            }
            // With the annotation, what client-side apply sets back is next_apply's finding.
            _ => continue,
        };
        out.push(Finding::new(
            severity,
            fields.clone(),
            format!("{fields} owned by {} ({}), {consequence}", entry.manager, entry.operation.as_str()),
        ));
    }
    out
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
        assert!(findings[0].message.contains("no last-applied annotation"), "{}", findings[0].message);
    }

    #[test]
    fn one_shot_kubectl_commands_are_not_blamed() {
        let entry = |manager: &str| {
            json!({"manager": manager, "operation": "Update", "apiVersion": "apps/v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}})
        };
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        for (manager, annotation, blamed) in [
            ("kubectl-create", None, false),
            ("kubectl-edit", None, false),
            ("kubectl-client-side-apply", Some("{}"), false),
            ("kubectl-client-side-apply", None, true),
            ("helm", None, true),
        ] {
            let mut live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d", "managedFields": [entry(manager)]}, "spec": {"paused": false}});
            if let Some(text) = annotation {
                live["metadata"]["annotations"] = json!({crate::last_applied::LAST_APPLIED_ANNOTATION: text});
            }
            let mut result = live.clone();
            result["spec"]["paused"] = json!(true);
            let managed = managed_fields_of(&live).unwrap();
            let findings = foreign_owners(&live, &result, &managed, schema, ty, "kubectl-safe-patch");
            assert_eq!(!findings.is_empty(), blamed, "{manager} {annotation:?}: {findings:?}");
            assert!(findings.iter().all(|f| f.message.contains(manager)), "{findings:?}");
        }
    }

    #[test]
    fn the_owners_class_decides_kubectl_scale_by_hand_is_not_blamed_an_autoscaler_is() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        for (manager, subresource, severity) in [
            // A person's `kubectl scale`: a one-off write, never written again.
            ("kubectl", "scale", None),
            ("kubectl-scale", "scale", None),
            // Autoscalers and any other writer through /scale: controllers.
            ("horizontal-pod-autoscaler", "scale", Some(Severity::NeedsForce)),
            ("my-scaler", "scale", Some(Severity::NeedsForce)),
        ] {
            let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d",
                "managedFields": [{"manager": manager, "operation": "Update", "apiVersion": "apps/v1",
                    "subresource": subresource, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
                "spec": {"replicas": 3}});
            let mut result = live.clone();
            result["spec"]["replicas"] = json!(5);
            let managed = managed_fields_of(&live).unwrap();
            let findings = foreign_owners(&live, &result, &managed, schema, ty, "kubectl-safe-patch");
            assert_eq!(findings.first().map(|f| f.severity), severity, "{manager}/{subresource}: {findings:?}");
        }
    }
}
