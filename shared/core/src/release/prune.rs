//! Prunes: the objects an apply of a new set deletes because the previous set had them and
//! the new one does not, and why deleting each may surprise.
//!
//! Helm's upgrade deletes the objects of the previous release's manifest that the new
//! render no longer has (`ResourceList.Difference`, which matches objects by group, kind,
//! namespace and name: never by version), unless the live object carries
//! `helm.sh/resource-policy: keep`, which Helm reads from the live object before deleting.
//! [`pruned`] is that difference; [`blockers`] reads a live object for what the user should
//! know before it goes: fields other managers own, owners, finalizers, or the keep policy.

use serde_json::Value;

use crate::well_known::{HELM_KEEP_POLICY, HELM_RESOURCE_POLICY_ANNOTATION};

/// An object as prunes match it: by group and kind, never by version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PruneKey {
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (`None` for cluster-scoped types).
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// The objects of `previous` that `next` no longer has, in `previous`'s order, each once.
pub fn pruned<'a>(previous: &'a [PruneKey], next: &[PruneKey]) -> Vec<&'a PruneKey> {
    let mut out: Vec<&PruneKey> = Vec::new();
    for key in previous {
        if !next.contains(key) && !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// Why deleting an object may surprise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// Managers other than the one that prunes own fields of the object (main resource only:
    /// the controllers writing `status` through its subresource are expected).
    Managers(Vec<String>),
    /// Its `ownerReferences`, as `Kind/name`: its owner may expect it, or recreate it.
    OwnerReferences(Vec<String>),
    /// Its finalizers: the delete waits for them.
    Finalizers(Vec<String>),
    /// `helm.sh/resource-policy: keep`: Helm keeps it, so it is not deleted.
    ResourcePolicyKeep,
}

impl Blocker {
    /// The blocker's name in the plan document.
    pub fn reason(&self) -> &'static str {
        match self {
            Blocker::Managers(_) => "managers",
            Blocker::OwnerReferences(_) => "ownerReferences",
            Blocker::Finalizers(_) => "finalizers",
            Blocker::ResourcePolicyKeep => "resourcePolicyKeep",
        }
    }

    /// The names the blocker is about (managers, owners, finalizers; none for keep).
    pub fn names(&self) -> &[String] {
        match self {
            Blocker::Managers(n) | Blocker::OwnerReferences(n) | Blocker::Finalizers(n) => n,
            Blocker::ResourcePolicyKeep => &[],
        }
    }
}

/// What the live object says about deleting it, when `manager` prunes it.
pub fn blockers(live: &Value, manager: &str) -> Vec<Blocker> {
    let mut out = Vec::new();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut managers: Vec<String> = Vec::new();
    for entry in entries {
        let subresource = entry.get("subresource").and_then(Value::as_str).unwrap_or_default();
        let Some(name) = entry.get("manager").and_then(Value::as_str) else { continue };
        if subresource.is_empty() && name != manager && !managers.iter().any(|m| m == name) {
            managers.push(name.to_string());
        }
    }
    if !managers.is_empty() {
        out.push(Blocker::Managers(managers));
    }
    let owners: Vec<String> = array(live, "/metadata/ownerReferences")
        .iter()
        .map(|o| {
            let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default();
            format!("{}/{}", text("kind"), text("name"))
        })
        .collect();
    if !owners.is_empty() {
        out.push(Blocker::OwnerReferences(owners));
    }
    let finalizers: Vec<String> =
        array(live, "/metadata/finalizers").iter().filter_map(Value::as_str).map(str::to_string).collect();
    if !finalizers.is_empty() {
        out.push(Blocker::Finalizers(finalizers));
    }
    let policy = live.pointer("/metadata/annotations").and_then(|a| a.get(HELM_RESOURCE_POLICY_ANNOTATION));
    if policy.and_then(Value::as_str) == Some(HELM_KEEP_POLICY) {
        out.push(Blocker::ResourcePolicyKeep);
    }
    out
}

/// Whether the blockers keep the object (Helm does not delete it).
pub fn kept(blockers: &[Blocker]) -> bool {
    blockers.contains(&Blocker::ResourcePolicyKeep)
}

fn array<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    value.pointer(pointer).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> PruneKey {
        PruneKey { group: group.into(), kind: kind.into(), namespace: namespace.map(Into::into), name: name.into() }
    }

    #[test]
    fn pruned_is_what_the_previous_set_has_and_the_next_does_not() {
        let cm = key("", "ConfigMap", Some("shop"), "web");
        let deploy = key("apps", "Deployment", Some("shop"), "web");
        let role = key("rbac.authorization.k8s.io", "ClusterRole", None, "web");
        let previous = [cm.clone(), deploy.clone(), role.clone(), cm.clone()];
        let next = [deploy.clone(), key("", "ConfigMap", Some("other"), "web")];
        assert_eq!(pruned(&previous, &next), [&cm, &role]);
        assert!(pruned(&previous, &previous).is_empty());
    }

    #[test]
    fn blockers_name_other_managers_owners_finalizers_and_keep() {
        let live = json!({"metadata": {
        "annotations": {"helm.sh/resource-policy": "keep"},
        "finalizers": ["example.com/cleanup"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "front", "uid": "1"}],
        "managedFields": [
            {"manager": "helm", "operation": "Update"},
            {"manager": "kubectl-edit", "operation": "Update"},
            {"manager": "kubectl-edit", "operation": "Apply"},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status"},
        ]}});
        assert_eq!(
            blockers(&live, "helm"),
            [
                Blocker::Managers(vec!["kubectl-edit".into()]),
                Blocker::OwnerReferences(vec!["Service/front".into()]),
                Blocker::Finalizers(vec!["example.com/cleanup".into()]),
                Blocker::ResourcePolicyKeep,
            ]
        );
        assert!(kept(&blockers(&live, "helm")));
    }

    #[test]
    fn an_object_only_its_manager_owns_has_no_blocker() {
        let live = json!({"metadata": {"annotations": {"helm.sh/resource-policy": "delete"},
            "managedFields": [{"manager": "helm", "operation": "Apply"}]}});
        assert_eq!(blockers(&live, "helm"), []);
        assert!(!kept(&[]));
    }
}
