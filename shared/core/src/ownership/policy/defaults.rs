//! What every policy assumes unless it says `defaults: false`: fields nobody's ownership
//! is checked (status, and the bookkeeping the apiserver, kubectl and controllers keep in
//! metadata), and one rule that lets Kubernetes' own controllers own the fields they
//! write. `docs/ownership-policy.md` lists both; keep it in step.

use std::sync::OnceLock;

use super::glob::Glob;
use crate::ownership::classify::GitOpsTool;
use crate::ownership::managers::{ManagedFieldsEntry, Operation};
use crate::well_known::LAST_APPLIED_ANNOTATION;

/// Fields ignored by default, as field patterns: status (written by controllers through
/// `/status`), and the annotations kubectl and the Deployment controller keep for their
/// own bookkeeping.
pub fn ignored_fields() -> Vec<Glob> {
    [
        ".status".to_string(),
        format!(".metadata.annotations.{LAST_APPLIED_ANNOTATION}"),
        ".metadata.annotations.deployment.kubernetes.io/revision".to_string(),
        ".metadata.annotations.kubectl.kubernetes.io/restartedAt".to_string(),
        ".metadata.annotations.autoscaling.alpha.kubernetes.io/*".to_string(),
    ]
    .into_iter()
    .map(Glob::new)
    .collect()
}

/// The name of the default rule in reports.
pub const DEFAULT_RULE: &str = "default";

/// The managers the default rule allows on every field they update (never on what they
/// apply: an applier named `*-controller`, such as a GitOps tool, is checked like any
/// applier): the control loops that ship with Kubernetes, and controllers named as
/// controllers conventionally are.
pub const DEFAULT_CONTROLLERS: [&str; 7] = [
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
    "cloud-controller-manager",
    "*-controller",
    "*-controller-manager",
];

/// Whether the default rule allows the fields of `entry`. Never a GitOps tool's
/// ([`GitOpsTool`]): an applier whatever its name says, also when it syncs with Update.
pub fn allows(entry: &ManagedFieldsEntry) -> bool {
    // Compiled once for the process, not at every entry.
    static CONTROLLERS: OnceLock<Vec<Glob>> = OnceLock::new();
    let controllers = CONTROLLERS.get_or_init(|| DEFAULT_CONTROLLERS.iter().map(|p| Glob::new(*p)).collect());
    entry.operation == Operation::Update
        && GitOpsTool::of_manager(&entry.manager).is_none()
        && controllers.iter().any(|pattern| pattern.matches(&entry.manager))
}

/// [`ignored_fields`], compiled once for the process.
pub fn ignored() -> &'static [Glob] {
    static IGNORED: OnceLock<Vec<Glob>> = OnceLock::new();
    IGNORED.get_or_init(ignored_fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::Set;

    #[test]
    fn kubernetes_controllers_are_allowed_and_people_are_not() {
        let entry = |manager: &str, operation| ManagedFieldsEntry {
            manager: manager.into(),
            operation,
            api_version: "v1".into(),
            time: None,
            fields_type: "FieldsV1".into(),
            fields: Set::new(),
            subresource: String::new(),
        };
        for (name, operation, expected) in [
            ("kube-controller-manager", Operation::Update, true),
            ("cert-manager-controller", Operation::Update, true),
            ("kubectl", Operation::Update, false),
            ("kubectl-edit", Operation::Update, false),
            ("argocd-controller", Operation::Apply, false),
            ("argocd-application-controller", Operation::Update, false),
            ("helm-controller", Operation::Update, false),
            ("helm", Operation::Update, false),
        ] {
            assert_eq!(allows(&entry(name, operation)), expected, "{name}");
        }
        assert!(ignored_fields().iter().any(|g| g.matches(".status")));
    }
}
