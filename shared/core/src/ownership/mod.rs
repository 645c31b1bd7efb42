//! Managers and what they own: `metadata.managedFields`, read and reasoned about.
//!
//! - [`managers`]: entries of `metadata.managedFields`, manager identities as the
//!   apiserver counts them, and what kind of actor a manager is (and its name);
//! - [`path_owners`]: who owns one field: exactly, fields under it, or a field it is part of;
//! - [`client_side`]: which managers are kubectl's client-side ones, that a move to
//!   server-side apply hands over;
//! - [`server_owned`]: what the server and controllers own and a user never writes back
//!   (server-set metadata, controller-managed labels and annotations);
//! - [`merge`](mod@merge): the object a server-side apply produces;
//! - [`conflicts`]: which fields an apply would take from whom, and whether
//!   the apiserver would refuse it.
//! - [`selection`]: managers chosen by name or class (`human`, `helm-update`);
//! - [`transfer`]: handing the selected managers' fields to another manager;
//! - [`next_apply`]: what an applier's next apply keeps, removes and releases of its fields;
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
//! assert_eq!(owners[0].kind(), ManagerKind::Kubectl);
//! ```

pub mod client_side;
pub mod conflicts;
pub mod managers;
pub mod merge;
pub mod next_apply;
pub mod path_owners;
pub mod selection;
pub mod server_owned;
pub mod transfer;
pub mod values;
pub mod written_managers;

pub use client_side::{client_side_managers, is_client_side_write};

pub use conflicts::{predict_apply, predict_apply_conflicts, ApplyOptions, ApplyPrediction, Conflict, SharedField};
pub use managers::{
    managed_fields_of, owners_of, parse_managed_fields, ManagedFieldsEntry, ManagedFieldsError, Manager, ManagerKind,
    Operation,
};
pub use merge::merge;
pub use path_owners::{owners_at, PathOwners, Relation};
pub use server_owned::{
    controller_owned_metadata, remove_server_set_metadata, without_write_noise, CHANGED_BY_EVERY_WRITE,
    SERVER_SET_METADATA,
};
pub use values::owners_by_value;

pub use next_apply::{predict_next_apply, NextApply};
pub use selection::{ManagerClass, ManagerSelection, SelectionError, HELM_MANAGER, HUMAN_MANAGERS};
pub use transfer::{
    plan_object_transfer, plan_transfer, KeptEntry, MovedEntry, StillShared, Transfer, TransferError, TransferPlan,
    TransferTarget,
};
pub use written_managers::{diff_view, patch_sets_managed_fields, sets_managed_fields};
