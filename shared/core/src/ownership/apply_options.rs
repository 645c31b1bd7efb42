//! The settings of a server-side apply beyond the object: the subresource applied to,
//! and the fields the resource resets (which never conflict). Both the simulation of an
//! apply ([`super::simulate`]) and the prediction of its conflicts ([`super::conflicts`])
//! take them, so they sit below both.

use crate::fieldpath::{Path, Set};
use crate::schema::Gvk;

/// Settings of an apply beyond the object: which subresource, and which fields the resource resets.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// The subresource applied to (`status`, `scale`), empty for the main resource.
    pub subresource: String,
    /// Fields the resource's strategy resets, which never conflict (upstream's `IgnoredFields`).
    pub reset_fields: Set,
    /// The only API version whose managers the reset fields are ignored for, or `None` for
    /// every version. A custom resource's strategy declares them for the version applied
    /// through only, so a status writer recorded under another served version still
    /// conflicts with status fields in a main-resource apply (built-in types declare every
    /// version).
    pub reset_only_at: Option<String>,
}

impl ApplyOptions {
    /// The options of an apply to the main resource of `gvk`: built-in kinds with a
    /// `status` subresource reset `status`. Custom resources reset `status` only when their
    /// CRD enables the status subresource, which the object does not tell: set it yourself.
    pub fn main_resource(gvk: &Gvk) -> Self {
        let mut reset_fields = Set::new();
        if resets_status(gvk) {
            reset_fields.insert(Path::fields(["status"]).elements());
        }
        ApplyOptions { subresource: String::new(), reset_fields, reset_only_at: None }
    }
}

impl ApplyOptions {
    /// The options of an apply to the main resource of a type whose subresources discovery
    /// lists: a type with a `status` subresource (built-in or custom) resets `status` on its
    /// main resource, so status fields in a configuration are ignored, never conflicts.
    pub fn for_main_resource_of(subresources: &[String]) -> Self {
        let mut reset_fields = Set::new();
        if subresources.iter().any(|s| s == "status") {
            reset_fields.insert(Path::fields(["status"]).elements());
        }
        ApplyOptions { subresource: String::new(), reset_fields, reset_only_at: None }
    }

    /// These options for a custom resource applied through `api_version`: its reset fields
    /// count for the managers recorded under that version only (see [`ApplyOptions::reset_only_at`]).
    pub fn for_custom_resource(self, api_version: &str) -> Self {
        ApplyOptions { reset_only_at: Some(api_version.to_string()), ..self }
    }

    /// Whether the reset fields are ignored for a manager recorded under `api_version`.
    pub fn resets_at(&self, api_version: &str) -> bool {
        self.reset_only_at.as_deref().is_none_or(|only| only == api_version)
    }
}

/// Built-in kinds whose main resource ignores `status` (their strategies' `GetResetFields`).
fn resets_status(gvk: &Gvk) -> bool {
    let kinds: &[&str] = match gvk.group.as_str() {
        "" => &[
            "Pod",
            "Service",
            "Node",
            "Namespace",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "ReplicationController",
            "ResourceQuota",
        ],
        "apps" => &["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"],
        "batch" => &["Job", "CronJob"],
        "autoscaling" => &["HorizontalPodAutoscaler"],
        "policy" => &["PodDisruptionBudget"],
        "networking.k8s.io" => &["Ingress", "ServiceCIDR"],
        "apiextensions.k8s.io" => &["CustomResourceDefinition"],
        "apiregistration.k8s.io" => &["APIService"],
        "certificates.k8s.io" => &["CertificateSigningRequest"],
        "flowcontrol.apiserver.k8s.io" => &["FlowSchema", "PriorityLevelConfiguration"],
        "storage.k8s.io" => &["VolumeAttachment"],
        "admissionregistration.k8s.io" => &["ValidatingAdmissionPolicy"],
        "resource.k8s.io" => &["ResourceClaim"],
        _ => &[],
    };
    kinds.contains(&gvk.kind.as_str())
}
