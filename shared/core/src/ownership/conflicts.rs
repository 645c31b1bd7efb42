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

use super::apply_conflict::{Conflict, SharedField};
use super::apply_options::ApplyOptions;
use super::managers::{ManagedFieldsEntry, Manager};
use super::simulate::{simulate_apply, ApplyInput};
use crate::fieldpath::Set;
use crate::schema::{Gvk, Schema, TypeId};

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
/// [`simulate_apply`].
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
