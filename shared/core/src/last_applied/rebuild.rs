//! An annotation rebuilt from the live object, for objects whose annotation is
//! missing or wrong and whose configuration file is not at hand.
//!
//! The intent is read from `metadata.managedFields`: the fields owned by kubectl's
//! own managers writing through the main resource ([`is_kubectl_manager`] with
//! `Update` operations: `kubectl-client-side-apply`, `kubectl-create`,
//! `kubectl-replace`, `kubectl-edit`, `kubectl-patch`, `kubectl-label`, ...), minus:
//! - fields any other manager also owns (controllers, server-side appliers such as
//!   an autoscaler, other tools): they are theirs, and a field in the annotation
//!   is one the next apply deletes when the file drops it;
//! - `status`, and metadata the server sets (`uid`, `resourceVersion`,
//!   `generation`, `creationTimestamp`, `managedFields`, deletion fields);
//! - the annotation itself.
//!
//! `apiVersion`, `kind`, `metadata.name` and `metadata.namespace` are always kept,
//! as every configuration file has them. Defaulted fields that kubectl's managers
//! own (the apiserver counts defaults as set by the writer) stay in: removing them
//! from a later file makes apply null them, and the server defaults them again.

use serde_json::{Map, Value};

use super::LAST_APPLIED_ANNOTATION;
use crate::fieldpath::{extract, Path, PathElement, Set};
use crate::ownership::{
    is_kubectl_manager, is_placeholder_manager, managed_fields_of, ManagedFieldsEntry, ManagedFieldsError, Operation,
};

/// Why an intent cannot be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntentError {
    /// `metadata.managedFields` cannot be read.
    #[error(transparent)]
    ManagedFields(#[from] ManagedFieldsError),
    /// No kubectl manager owns anything: there is no intent to rebuild.
    #[error(
        "no kubectl manager owns any field of it (managers: {0}); there is nothing to rebuild the annotation from"
    )]
    NoKubectlFields(String),
}

/// Whether an entry records kubectl writing the object itself (not a subresource, not server-side apply).
pub fn is_kubectl_update(entry: &ManagedFieldsEntry) -> bool {
    is_kubectl_manager(&entry.manager) && entry.operation == Operation::Update && entry.subresource.is_empty()
}

/// Whether `name` is neither kubectl nor an apiserver placeholder: a controller or another tool,
/// whose fields are theirs, not the intent's.
pub fn is_foreign_manager(name: &str) -> bool {
    !is_kubectl_manager(name) && !is_placeholder_manager(name)
}

/// The fields of the intent: owned by kubectl's managers, owned by nobody else, no server-set fields.
pub fn intent_fields(entries: &[ManagedFieldsEntry]) -> Set {
    let mut ours = Set::new();
    let mut theirs = Set::new();
    for entry in entries {
        if is_kubectl_update(entry) {
            ours = ours.union(&entry.fields);
        } else if is_foreign_manager(&entry.manager)
            || (is_kubectl_manager(&entry.manager) && entry.operation == Operation::Apply)
        {
            theirs = theirs.union(&entry.fields);
        }
    }
    // Leaves first: a map or list entry kubectl owns as a whole (".") would otherwise be copied
    // with everything in it, including what others own or what is left out below.
    ours.leaves().difference(&theirs).recursive_difference(&server_fields())
}

/// Paths no configuration sets: status, server-set metadata, the annotation itself.
fn server_fields() -> Set {
    let mut set = Set::new();
    set.insert(Path::fields(["status"]).elements());
    for field in [
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    ] {
        set.insert(Path::fields(["metadata", field]).elements());
    }
    set.insert(Path::fields(["metadata", "annotations", LAST_APPLIED_ANNOTATION]).elements());
    set
}

/// The configuration kubectl's managers set on `live` (see the module docs), as an object to
/// give to [`super::encode`]. Fails when no kubectl manager owns a field.
pub fn rebuild(live: &Value) -> Result<Value, IntentError> {
    let entries = managed_fields_of(live)?;
    if !entries.iter().any(is_kubectl_update) {
        let names: Vec<&str> = entries.iter().map(|e| e.manager.as_str()).collect();
        return Err(IntentError::NoKubectlFields(if names.is_empty() { "none".into() } else { names.join(", ") }));
    }
    let fields = intent_fields(&entries);
    let mut config = match extract(live, &fields) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for key in ["apiVersion", "kind"] {
        if let Some(v) = live.get(key) {
            config.insert(key.into(), v.clone());
        }
    }
    let meta = config.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        for key in ["name", "namespace"] {
            if let Some(v) = live.pointer(&format!("/metadata/{key}")) {
                meta.insert(key.into(), v.clone());
            }
        }
    }
    Ok(Value::Object(config))
}

/// Whether `path` is one of the fields kubectl's managers own on `live` (used by the scan to explain).
pub fn owned_by_kubectl(entries: &[ManagedFieldsEntry], path: &[PathElement]) -> bool {
    entries.iter().any(|e| is_kubectl_update(e) && e.fields.has(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_applied::encode;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn keeps_kubectl_fields_only() {
        let live = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "9", "generation": 3,
                "labels": {"app": "web", "team": "x"},
                "annotations": {"deployment.kubernetes.io/revision": "1", LAST_APPLIED_ANNOTATION: "{}"},
                "managedFields": [
                    entry("kubectl-create", "Update", json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                            "k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}})),
                    entry("kubectl-client-side-apply", "Update", json!({"f:metadata": {"f:annotations": {
                        ".": {}, format!("f:{LAST_APPLIED_ANNOTATION}"): {}}}})),
                    entry("hpa-like", "Apply", json!({"f:spec": {"f:replicas": {}}})),
                    entry("kube-controller-manager", "Update", json!({"f:metadata": {"f:annotations": {
                        "f:deployment.kubernetes.io/revision": {}}}, "f:status": {"f:replicas": {}}})),
                    entry("kubectl-label", "Update", json!({"f:metadata": {"f:labels": {"f:team": {}}}})),
                ]},
            "spec": {"replicas": 7, "paused": false,
                "template": {"spec": {"containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Always"}]}}},
            "status": {"replicas": 7}
        });
        let config = rebuild(&live).unwrap();
        assert_eq!(
            config,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"labels": {"app": "web", "team": "x"}, "name": "web", "namespace": "ns"},
                "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
        );
        let text = encode(&config, Some("ns"));
        assert!(!text.contains("replicas") && !text.contains("revision") && text.ends_with("}\n"), "{text}");
    }

    #[test]
    fn refuses_objects_kubectl_never_wrote() {
        let live =
            json!({"metadata": {"name": "x", "managedFields": [entry("helm", "Update", json!({"f:data": {}}))]}});
        let err = rebuild(&live).unwrap_err().to_string();
        assert!(err.contains("no kubectl manager") && err.contains("helm"), "{err}");
    }
}
