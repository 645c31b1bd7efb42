//! Some structs hold exactly one of several members: a probe is `exec`,
//! `httpGet`, `tcpSocket` or `grpc`; a volume has one source. A merge or
//! strategic patch that sets a new member keeps the old one, and the server
//! rejects the object ("may not specify more than 1 handler type"). The fix is
//! to null the old member in the same patch.

use serde_json::{Map, Value};

use super::{dotted, Finding, Severity};
use crate::schema::{Schema, TypeId};

/// One-of groups by OpenAPI type name.
const GROUPS: &[(&str, &[&str])] = &[
    ("io.k8s.api.core.v1.Probe", &["exec", "httpGet", "tcpSocket", "grpc"]),
    ("io.k8s.api.core.v1.LifecycleHandler", &["exec", "httpGet", "tcpSocket", "sleep"]),
    ("io.k8s.api.core.v1.EnvVar", &["value", "valueFrom"]),
    (
        "io.k8s.api.core.v1.Volume",
        &[
            "awsElasticBlockStore",
            "azureDisk",
            "azureFile",
            "cephfs",
            "cinder",
            "configMap",
            "csi",
            "downwardAPI",
            "emptyDir",
            "ephemeral",
            "fc",
            "flexVolume",
            "flocker",
            "gcePersistentDisk",
            "gitRepo",
            "glusterfs",
            "hostPath",
            "image",
            "iscsi",
            "nfs",
            "persistentVolumeClaim",
            "photonPersistentDisk",
            "portworxVolume",
            "projected",
            "quobyte",
            "rbd",
            "scaleIO",
            "secret",
            "storageos",
            "vsphereVolume",
        ],
    ),
];

/// Findings, and the patch with the old members set to `null` (the fix).
#[derive(Debug, Clone, PartialEq)]
pub struct OneOfReport {
    /// One finding per switched member.
    pub findings: Vec<Finding>,
    /// The patch that removes the old members; equal to the input when nothing switched.
    pub fixed_patch: Value,
}

/// Finds one-of switches in a merge or strategic `patch` against `live`.
pub fn one_of_switches(live: &Value, patch: &Value, schema: &Schema, ty: Option<TypeId>) -> OneOfReport {
    let mut findings = Vec::new();
    let mut fixed = patch.clone();
    walk(live, &mut fixed, schema, ty, &mut Vec::new(), &mut findings);
    OneOfReport { findings, fixed_patch: fixed }
}

fn walk(
    live: &Value,
    patch: &mut Value,
    schema: &Schema,
    ty: Option<TypeId>,
    path: &mut Vec<String>,
    out: &mut Vec<Finding>,
) {
    let (Value::Object(live_map), Value::Object(patch_map)) = (live, &mut *patch) else { return };
    if let Some(members) = ty.and_then(|t| schema.name_of(t)).and_then(group_of) {
        switch_members(live_map, patch_map, members, path, out);
    }
    let keys: Vec<String> = patch_map.keys().filter(|k| !k.starts_with('$')).cloned().collect();
    for key in keys {
        let Some(live_child) = live_map.get(&key) else { continue };
        let field = ty.and_then(|t| schema.field(t, &key));
        let child_ty = field.map(|f| f.ty).or_else(|| ty.and_then(|t| schema.values(t)));
        let Some(patch_child) = patch_map.get_mut(&key) else { continue };
        path.push(key.clone());
        match (live_child, patch_child) {
            (Value::Array(live_items), Value::Array(patch_items)) => {
                // Strategic lists merge entries by key: follow each patch entry to its live twin.
                if let Some(merge_key) = field.and_then(|f| f.merge_key.as_deref()) {
                    let item_ty = child_ty.and_then(|t| schema.items(t));
                    for entry in patch_items.iter_mut() {
                        let Some(id) = entry.get(merge_key).cloned() else { continue };
                        if let Some(twin) = live_items.iter().find(|l| l.get(merge_key) == Some(&id)) {
                            let label = id.as_str().map(str::to_string).unwrap_or_else(|| id.to_string());
                            path.push(format!("[{merge_key}={label}]"));
                            walk(twin, entry, schema, item_ty, path, out);
                            path.pop();
                        }
                    }
                }
            }
            (live_child @ Value::Object(_), patch_child @ Value::Object(_)) => {
                walk(live_child, patch_child, schema, child_ty, path, out)
            }
            _ => {}
        }
        path.pop();
    }
}

fn group_of(type_name: &str) -> Option<&'static [&'static str]> {
    GROUPS.iter().find(|(name, _)| *name == type_name).map(|(_, members)| *members)
}

fn switch_members(
    live: &Map<String, Value>,
    patch: &mut Map<String, Value>,
    members: &[&str],
    path: &[String],
    out: &mut Vec<Finding>,
) {
    let new: Vec<&str> = members.iter().copied().filter(|m| patch.get(*m).is_some_and(|v| !v.is_null())).collect();
    if new.is_empty() {
        return;
    }
    let old: Vec<&str> = members
        .iter()
        .copied()
        .filter(|m| !new.contains(m) && live.get(*m).is_some_and(|v| !v.is_null()) && !patch.contains_key(*m))
        .collect();
    for member in old {
        let where_ = dotted(path);
        let label = if where_.is_empty() { "the object".to_string() } else { where_.clone() };
        out.push(
            Finding::new(
                Severity::Warning,
                &where_,
                format!(
                    "{label} can hold only one of {}: setting {} keeps {member}, and the server will reject both",
                    members.join("/"),
                    new.join("/"),
                ),
            )
            .with_fix(format!("add \"{member}\": null beside {} (rerun with --fix to do it)", new.join("/"))),
        );
        patch.insert(member.to_string(), Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    #[test]
    fn a_probe_switched_from_tcp_socket_to_http_get_nulls_the_old_handler() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 5}}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "readinessProbe": {"httpGet": {"path": "/", "port": 8080}}}]}}}});
        let report = one_of_switches(&live, &patch, schema, ty);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(report.findings[0].path, "spec.template.spec.containers[name=busybox].readinessProbe");
        assert_eq!(
            report.fixed_patch.pointer("/spec/template/spec/containers/0/readinessProbe"),
            Some(&json!({"httpGet": {"path": "/", "port": 8080}, "tcpSocket": null}))
        );
    }

    #[test]
    fn no_switch_no_finding() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("", "v1", "Pod"));
        let live = json!({"spec": {"containers": [{"name": "a", "readinessProbe": {"httpGet": {"port": 1}}}]}});
        let patch = json!({"spec": {"containers": [{"name": "a", "readinessProbe": {"httpGet": {"port": 2}}}]}});
        let report = one_of_switches(&live, &patch, schema, ty);
        assert!(report.findings.is_empty());
        assert_eq!(report.fixed_patch, patch);
    }
}
