//! Managers and what they own: `metadata.managedFields`, read and reasoned about.
//!
//! - [`managers`]: entries of `metadata.managedFields`, manager identities as the
//!   apiserver counts them;
//! - [`path_owners`]: who owns one field: exactly, fields under it, or a field it is part of;
//! - [`client_side`]: which managers are kubectl's client-side ones, that a move to
//!   server-side apply hands over;
//! - [`csa_upgrade`]: client-go's `csaupgrade`, moving client-side managers' fields to a
//!   server-side applier, as `kubectl apply --server-side` and Helm 4's first server-side
//!   upgrade of a Helm 3 release run it;
//! - [`server_owned`]: what the server and controllers own and a user never writes back
//!   (server-set metadata, controller-managed labels and annotations);
//! - [`manager_fields`]: every manager's fields as the apiserver decodes `managedFields`;
//! - [`merge`](mod@merge): the object a server-side apply produces;
//! - [`apply_options`]: an apply's subresource and the fields its resource resets;
//! - [`apply_conflict`]: the fields an apply would change (conflicts) or share with other managers;
//! - [`conflicts`]: which fields an apply would take from whom, and whether
//!   the apiserver would refuse it;
//! - [`prune`](mod@prune): which fields an applier's dropped fields take with them, and which survive;
//! - [`simulate`]: one server-side apply end to end: conflicts, the stored object and
//!   every manager's fields afterwards;
//! - [`classify`]: the one classification of managers (human, controller, applier), used by
//!   every command, and the fix for a conflict with each;
//! - [`apply_lints`]: traps in a configuration (duplicate list-map keys, scaled fields);
//! - [`apply_plan`]: one object's apply as findings: conflicts or takeovers, shared,
//!   removed and surviving fields, lints;
//! - [`verify`]: a simulated apply checked against the apiserver's dry run, field for field;
//! - [`selection`]: managers chosen by name or class (`human`, `helm-update`);
//! - [`transfer`]: handing the selected managers' fields to another manager;
//! - [`next_apply`]: what an applier's next apply keeps, removes and releases of its fields;
//! - [`policy`]: who may own which fields of which objects, checked and learned (drift);
//! - [`blame`]: what changed between two versions of an object, and which entry moved with it;
//! - [`fights`]: managers setting one field back and forth (fights), or one rewriting it (churn);
//! - [`written_managers`]: writes that set `managedFields` themselves, whose managers are the change.
//!
//! ```
//! use fieldwise_core::fieldpath::Path;
//! use fieldwise_core::ownership::{managed_fields_of, owners_of, ManagerKind};
//! use serde_json::json;
//!
//! let deployment = json!({"metadata": {"managedFields": [
//!     {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
//!      "fieldsV1": {"f:spec": {"f:replicas": {}}}},
//!     {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
//!      "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:replicas": {}}}}
//! ]}});
//! let entries = managed_fields_of(&deployment).unwrap();
//! let owners = owners_of(&entries, Path::fields(["spec", "replicas"]).elements());
//! assert_eq!(owners.len(), 1);
//! assert_eq!(owners[0].kind(), ManagerKind::Applier);
//! ```

pub mod apply_conflict;
pub mod apply_lints;
pub mod apply_options;
pub mod apply_plan;
pub mod blame;
pub mod classify;
pub mod client_side;
pub mod conflicts;
pub mod csa_upgrade;
pub mod fights;
pub mod manager_fields;
pub mod managers;
pub mod merge;
pub mod next_apply;
pub mod path_owners;
pub mod policy;
pub mod prune;
pub mod selection;
pub mod server_owned;
pub mod settled;
pub mod simulate;
pub mod transfer;
pub mod values;
pub mod verify;
pub mod written_managers;
pub mod zero_objects;

pub use client_side::{client_side_managers, defaulted_under_client_side_apply, is_client_side_write};

pub use apply_conflict::{Conflict, SharedField};
pub use apply_options::ApplyOptions;
pub use apply_plan::{ApplyPlan, ClassifiedConflict};
pub use classify::{is_kubectl_manager, is_placeholder_manager, Fix, GitOpsTool, ManagerKind};
pub use conflicts::{predict_apply, predict_apply_conflicts, ApplyPrediction};
pub use csa_upgrade::helm_conversion;
pub use manager_fields::{live_managers, ManagerFields};
pub use managers::{
    managed_fields_of, owners_of, parse_managed_fields, ManagedFieldsEntry, ManagedFieldsError, Manager, Operation,
};
pub use merge::merge;
pub use path_owners::{owners_at, PathOwners, Relation};
pub use server_owned::{
    controller_owned_metadata, remove_server_set_metadata, without_write_noise, CHANGED_BY_EVERY_WRITE,
    SERVER_SET_METADATA,
};
pub use settled::Settled;
pub use simulate::{simulate_apply, ApplyInput, ApplyOutcome, Fate, ReleasedField};
pub use values::owners_by_value;
pub use verify::{
    causes_after_conversion, verify_after_conversion, verify_forced, verify_removals, verify_unforced, ServerAnswer,
    Verification,
};

pub use next_apply::{predict_next_apply, NextApply, ValueChange};
pub use selection::{ManagerClass, ManagerSelection, SelectionError, HELM_MANAGER, HUMAN_MANAGERS};
pub use transfer::{
    plan_object_transfer, plan_transfer, KeptEntry, MovedEntry, StillShared, Transfer, TransferError, TransferPlan,
    TransferTarget,
};
pub use written_managers::{diff_view, patch_sets_managed_fields, sets_managed_fields};
