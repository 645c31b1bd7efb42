//! What a server-side apply would do to ownership, and whether the apiserver would refuse it.
//!
//! This follows upstream's `Updater.Apply` and the apiserver's field manager
//! around it (simulated in full by [`super::simulate`]): the configuration's
//! field set is computed; it is merged into the live object and pruned; the
//! live and new objects are compared; every other manager (appliers and
//! updaters alike, but not the applying manager's own `Apply` entry) whose
//! fields intersect the added or modified ones is in conflict. An object
//! without managedFields is owned by `before-first-apply` first. Fields set to the value they already have
//! are not changed, so they are not conflicts: they become shared. Fields the
//! resource resets (`status` on the main resource of built-in types) never
//! conflict. When `kubectl` applies over a client-side-applied object, the
//! fields its last-applied annotation still matches are taken without conflict.

use serde_json::Value;

use super::managers::{ManagedFieldsEntry, Manager};
use super::simulate::{simulate_apply, ApplyInput};
use crate::fieldpath::{compare, field_set_lossy, Path, Set};
use crate::schema::{Gvk, Schema, TypeId};
use crate::well_known::LAST_APPLIED_ANNOTATION;

/// One field another manager owns that the apply would change.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The field.
    pub path: Path,
    /// The manager that owns it.
    pub manager: Manager,
    /// Its live value (`None` if the live object lacks it).
    pub theirs: Option<Value>,
    /// The value after the apply (`None` if the field would be absent).
    pub yours: Option<Value>,
}

impl Conflict {
    /// The apiserver's cause message: `conflict with "kubectl-edit" using apps/v1`.
    pub fn message(&self) -> String {
        format!("conflict with {}", self.manager)
    }

    /// The apiserver's cause field: `.spec.replicas`.
    pub fn field(&self) -> String {
        self.path.to_string()
    }
}

/// A field the applier sets to the value it already has while another manager owns it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedField {
    /// The field.
    pub path: Path,
    /// The manager that keeps owning it beside the applier.
    pub with: Manager,
}

/// The outcome of a server-side apply, predicted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApplyPrediction {
    /// Fields owned by other managers that the apply would change. Without `force`, the
    /// apiserver refuses the apply (409) with one cause per conflict; with `force`, the
    /// applier takes them over.
    pub conflicts: Vec<Conflict>,
    /// Conflicts with client-side apply that `kubectl` takes over without asking, because
    /// the last-applied annotation still matches the live object.
    pub upgraded: Vec<Conflict>,
    /// Fields that would become co-owned.
    pub shared: Vec<SharedField>,
    /// The fields the applier would own afterwards.
    pub applied: Set,
    /// The object after the merge (before pruning fields the applier no longer sets).
    pub merged: Value,
    /// Whether the apiserver would refuse the apply (409 Conflict).
    pub rejected: bool,
    /// Places where the configuration does not fit the schema (the apiserver would refuse
    /// it as invalid; the prediction is best effort).
    pub errors: Vec<String>,
}

impl ApplyPrediction {
    /// The apiserver's status message for the 409, or `None` when there is no conflict.
    pub fn message(&self) -> Option<String> {
        match self.conflicts.as_slice() {
            [] => None,
            [one] => Some(format!("Apply failed with 1 conflict: {}: {}", one.message(), one.path)),
            many => {
                let mut lines = Vec::new();
                let mut last: Option<&Manager> = None;
                for c in many {
                    if last != Some(&c.manager) {
                        lines.push(format!("conflicts with {}:", c.manager));
                        last = Some(&c.manager);
                    }
                    lines.push(format!("- {}", c.path));
                }
                Some(format!("Apply failed with {} conflicts: {}", many.len(), lines.join("\n")))
            }
        }
    }
}

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

/// Predicts a server-side apply of `config` by `manager` to the main resource of `live`.
///
/// `managed` is the live object's `metadata.managedFields`; `ty` is the object's type in
/// `schema`. Reset fields come from [`ApplyOptions::main_resource`] for the config's kind.
pub fn predict_apply_conflicts(
    live: &Value,
    managed: &[ManagedFieldsEntry],
    config: &Value,
    manager: &str,
    schema: &Schema,
    ty: TypeId,
    force: bool,
) -> ApplyPrediction {
    let options = Gvk::of_object(config).map(|g| ApplyOptions::main_resource(&g)).unwrap_or_default();
    predict_apply(live, managed, config, manager, schema, ty, force, &options)
}

/// Like [`predict_apply_conflicts`], with explicit [`ApplyOptions`]: the conflict part of
/// [`simulate_apply`](super::simulate::simulate_apply).
#[allow(clippy::too_many_arguments)]
pub fn predict_apply(
    live: &Value,
    managed: &[ManagedFieldsEntry],
    config: &Value,
    manager: &str,
    schema: &Schema,
    ty: TypeId,
    force: bool,
    options: &ApplyOptions,
) -> ApplyPrediction {
    let input = ApplyInput { live: Some(live), managed, config, manager, schema, ty, options };
    let outcome = simulate_apply(&input);
    let rejected = !force && !outcome.conflicts.is_empty();
    ApplyPrediction {
        conflicts: outcome.conflicts,
        upgraded: outcome.upgraded,
        shared: outcome.shared,
        applied: outcome.applied,
        merged: outcome.merged,
        rejected,
        errors: outcome.errors,
    }
}

/// The fields client-side apply set that still hold their last-applied value (upstream's
/// `lastAppliedManager.allowedConflictsFromLastApplied`), or `None` when there is no usable annotation.
pub(crate) fn allowed_by_last_applied(live: &Value, config: &Value, schema: &Schema, ty: TypeId) -> Option<Set> {
    let text = live.get("metadata")?.get("annotations")?.get(LAST_APPLIED_ANNOTATION)?.as_str()?;
    if text.is_empty() {
        return None;
    }
    let last_applied: Value = serde_json::from_str(text).ok()?;
    if !last_applied.is_object() || last_applied.get("apiVersion") != config.get("apiVersion") {
        return None;
    }
    let (set, errors) = field_set_lossy(&last_applied, schema, Some(ty));
    if !errors.is_empty() {
        return None;
    }
    let diff = compare(&last_applied, live, schema, Some(ty));
    Some(set.difference(&diff.modified).difference(&diff.added).difference(&diff.removed))
}
