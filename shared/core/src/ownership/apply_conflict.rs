//! What a server-side apply meets in the fields other managers own: a [`Conflict`] where
//! it would change their value, a [`SharedField`] where it sets the value they already
//! have. The simulation of an apply ([`super::simulate`]) finds them and the prediction
//! of its conflicts ([`super::conflicts`]) reports them, so they sit below both.

use serde_json::Value;

use super::managers::Manager;
use crate::fieldpath::Path;

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
