//! Some structs hold exactly one of several members: a probe is `exec`,
//! `httpGet`, `tcpSocket` or `grpc`; a volume has one source. A merge or
//! strategic patch that sets a new member keeps the old one, and the server
//! rejects the object ("may not specify more than 1 handler type"). The fix is
//! to null the old member in the same patch.
//!
//! Some one-ofs have a discriminator: a Deployment's `strategy.rollingUpdate`
//! may be set only while `strategy.type` is `RollingUpdate`. Patching `type` to
//! `Recreate` keeps `rollingUpdate`, and the server answers 422 ("may not be
//! specified when strategy `type` is 'Recreate'"). The fix clears the member:
//! `"$retainKeys"` in a strategic patch where the field has the `retainKeys`
//! strategy (what `kubectl apply` sends), else the member set to `null`.

use serde_json::{Map, Value};

use super::{dotted, Finding, Severity};
use crate::schema::{Schema, TypeId};
use crate::strategic::directives::RETAIN_KEYS;

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

/// A struct whose discriminator field says which member may be set (apiserver validation).
struct Discriminated {
    /// The OpenAPI type name.
    type_name: &'static str,
    /// The discriminator field.
    field: &'static str,
    /// Each member, with the one discriminator value it belongs to.
    members: &'static [(&'static str, &'static str)],
}

/// The discriminated one-ofs the apiserver enforces. (A DaemonSet's `updateStrategy`
/// accepts `rollingUpdate` beside `OnDelete`, so it is not one.)
const DISCRIMINATED: &[Discriminated] = &[
    Discriminated {
        type_name: "io.k8s.api.apps.v1.DeploymentStrategy",
        field: "type",
        members: &[("rollingUpdate", "RollingUpdate")],
    },
    Discriminated {
        type_name: "io.k8s.api.apps.v1.StatefulSetUpdateStrategy",
        field: "type",
        members: &[("rollingUpdate", "RollingUpdate")],
    },
];

/// How a patch merges, which decides the form of the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merging {
    /// A JSON merge patch (RFC 7386): a member is cleared by `null`.
    Merge,
    /// A strategic merge patch: `$retainKeys` where the field has the `retainKeys` strategy, else `null`.
    Strategic,
}

/// Findings, and the patch with the old members set to `null` (the fix).
#[derive(Debug, Clone, PartialEq)]
pub struct OneOfReport {
    /// One finding per switched member.
    pub findings: Vec<Finding>,
    /// The patch that removes the old members; equal to the input when nothing switched.
    pub fixed_patch: Value,
}

/// Finds one-of switches in a merge or strategic `patch` against `live`.
pub fn one_of_switches(
    live: &Value,
    patch: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
    merging: Merging,
) -> OneOfReport {
    let mut findings = Vec::new();
    let mut fixed = patch.clone();
    let mut walker = Walker { schema, merging, out: &mut findings };
    walker.walk(live, &mut fixed, ty, false, &mut Vec::new());
    OneOfReport { findings, fixed_patch: fixed }
}

struct Walker<'a> {
    schema: &'a Schema,
    merging: Merging,
    out: &'a mut Vec<Finding>,
}

impl Walker<'_> {
    /// `retain_keys`: the field holding this value has the `retainKeys` strategy.
    fn walk(&mut self, live: &Value, patch: &mut Value, ty: Option<TypeId>, retain_keys: bool, path: &mut Vec<String>) {
        let schema = self.schema;
        let (Value::Object(live_map), Value::Object(patch_map)) = (live, &mut *patch) else { return };
        let type_name = ty.and_then(|t| schema.name_of(t));
        if let Some(members) = type_name.and_then(group_of) {
            switch_members(live_map, patch_map, members, path, self.out);
        }
        if let Some(rule) = type_name.and_then(|name| DISCRIMINATED.iter().find(|d| d.type_name == name)) {
            let retain = retain_keys && self.merging == Merging::Strategic;
            switch_discriminated(live_map, patch_map, rule, retain, path, self.out);
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
                                self.walk(twin, entry, item_ty, false, path);
                                path.pop();
                            }
                        }
                    }
                }
                (live_child @ Value::Object(_), patch_child @ Value::Object(_)) => {
                    let retain = field.is_some_and(|f| f.patch_strategy.retain_keys);
                    self.walk(live_child, patch_child, child_ty, retain, path)
                }
                _ => {}
            }
            path.pop();
        }
    }
}

/// A patch that sets the discriminator to a value a live member does not belong to,
/// without clearing that member: the server refuses the object with both.
fn switch_discriminated(
    live: &Map<String, Value>,
    patch: &mut Map<String, Value>,
    rule: &Discriminated,
    retain_keys: bool,
    path: &[String],
    out: &mut Vec<Finding>,
) {
    let (discriminator, members) = (rule.field, rule.members);
    let Some(new) = patch.get(discriminator).and_then(Value::as_str).map(str::to_string) else { return };
    if patch.contains_key(RETAIN_KEYS) {
        return; // the user says which keys stay
    }
    let kept: Vec<&str> = members
        .iter()
        .filter(|(member, value)| {
            *value != new && live.get(*member).is_some_and(|v| !v.is_null()) && !patch.contains_key(*member)
        })
        .map(|(member, _)| *member)
        .collect();
    if kept.is_empty() {
        return;
    }
    let where_ = dotted(path);
    let label = if where_.is_empty() { "the object".to_string() } else { where_.clone() };
    let retained: Vec<String> = patch.keys().filter(|k| !k.starts_with('$')).cloned().collect();
    for member in &kept {
        let value = members.iter().find(|(m, _)| m == member).map_or("", |(_, v)| *v);
        let fix = if retain_keys {
            format!("add \"{RETAIN_KEYS}\": {} beside {discriminator}", serde_json::json!(retained))
        } else {
            format!("add \"{member}\": null beside {discriminator}")
        };
        out.push(
            Finding::new(
                Severity::Warning,
                &where_,
                format!(
                    "{label} allows {member} only when {discriminator} is {value}: setting {discriminator} to {new} keeps {member}, and the server will reject it"
                ),
            )
            .with_fix(format!("{fix} (rerun with --fix to do it)")),
        );
    }
    if retain_keys {
        patch.insert(RETAIN_KEYS.to_string(), serde_json::json!(retained));
    } else {
        for member in kept {
            patch.insert(member.to_string(), Value::Null);
        }
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
        let report = one_of_switches(&live, &patch, schema, ty, Merging::Strategic);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(report.findings[0].path, "spec.template.spec.containers[name=busybox].readinessProbe");
        assert_eq!(
            report.fixed_patch.pointer("/spec/template/spec/containers/0/readinessProbe"),
            Some(&json!({"httpGet": {"path": "/", "port": 8080}, "tcpSocket": null}))
        );
    }

    #[test]
    fn recreate_without_clearing_rolling_update_is_fixed_with_retain_keys_or_null() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        let patch = json!({"spec": {"strategy": {"type": "Recreate"}}});
        let report = one_of_switches(&live, &patch, schema, ty, Merging::Strategic);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(report.findings[0].path, "spec.strategy");
        assert_eq!(
            report.findings[0].message,
            "spec.strategy allows rollingUpdate only when type is RollingUpdate: setting type to Recreate keeps rollingUpdate, and the server will reject it"
        );
        assert!(report.findings[0].fix.as_deref().unwrap().contains(r#"add "$retainKeys": ["type"]"#));
        let fixed = json!({"spec": {"strategy": {"type": "Recreate", "$retainKeys": ["type"]}}});
        assert_eq!(report.fixed_patch, fixed);
        // The fixed strategic patch ends as Recreate without rollingUpdate.
        let result = crate::strategic::apply(&live, &report.fixed_patch, schema, ty.unwrap()).unwrap();
        assert_eq!(result["spec"]["strategy"], json!({"type": "Recreate"}));

        let report = one_of_switches(&live, &patch, schema, ty, Merging::Merge);
        assert!(report.findings[0].fix.as_deref().unwrap().contains(r#"add "rollingUpdate": null"#));
        assert_eq!(report.fixed_patch, json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null}}}));
        let result = crate::merge_patch::try_apply(&live, &report.fixed_patch).unwrap();
        assert_eq!(result["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn a_statefulset_strategy_has_no_retain_keys_so_the_fix_is_null() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "StatefulSet"));
        let live = json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}}});
        let patch = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
        let report = one_of_switches(&live, &patch, schema, ty, Merging::Strategic);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        assert_eq!(
            report.fixed_patch,
            json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}})
        );
    }

    #[test]
    fn a_strategy_that_stays_or_clears_its_member_is_fine() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        for patch in [
            json!({"spec": {"strategy": {"type": "RollingUpdate"}}}),
            json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null}}}),
            json!({"spec": {"strategy": {"type": "Recreate", "$retainKeys": ["type"]}}}),
        ] {
            let report = one_of_switches(&live, &patch, schema, ty, Merging::Strategic);
            assert!(report.findings.is_empty(), "{patch}: {:?}", report.findings);
            assert_eq!(report.fixed_patch, patch);
        }
    }

    #[test]
    fn no_switch_no_finding() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("", "v1", "Pod"));
        let live = json!({"spec": {"containers": [{"name": "a", "readinessProbe": {"httpGet": {"port": 1}}}]}});
        let patch = json!({"spec": {"containers": [{"name": "a", "readinessProbe": {"httpGet": {"port": 2}}}]}});
        let report = one_of_switches(&live, &patch, schema, ty, Merging::Strategic);
        assert!(report.findings.is_empty());
        assert_eq!(report.fixed_patch, patch);
    }
}
