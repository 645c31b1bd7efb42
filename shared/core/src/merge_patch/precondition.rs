//! [`Precondition`]: a change a three-way merge patch must not make. Its own
//! module because both the three-way creation (which checks it) and the error
//! type (which names the one that failed) need it.

use std::fmt;

use serde_json::Value;

/// A change a three-way patch must not make (upstream `mergepatch.PreconditionFunc`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Precondition {
    /// The top-level key must be absent from the patch (`mergepatch.RequireKeyUnchanged`).
    KeyUnchanged(String),
    /// `metadata.<key>` must be absent from the patch (`mergepatch.RequireMetadataKeyUnchanged`).
    MetadataKeyUnchanged(String),
}

impl Precondition {
    /// What `kubectl apply` requires: `apiVersion`, `kind` and `metadata.name` unchanged.
    pub fn kubectl_apply() -> Vec<Precondition> {
        vec![
            Precondition::KeyUnchanged("apiVersion".into()),
            Precondition::KeyUnchanged("kind".into()),
            Precondition::MetadataKeyUnchanged("name".into()),
        ]
    }

    /// Whether `patch` respects this precondition. A patch that is not an object always does, as upstream.
    pub fn holds(&self, patch: &Value) -> bool {
        let Some(members) = patch.as_object() else {
            return true;
        };
        match self {
            Precondition::KeyUnchanged(key) => !members.contains_key(key),
            Precondition::MetadataKeyUnchanged(key) => {
                members.get("metadata").and_then(Value::as_object).is_none_or(|metadata| !metadata.contains_key(key))
            }
        }
    }
}

impl fmt::Display for Precondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Precondition::KeyUnchanged(key) => write!(f, "{key} must not change"),
            Precondition::MetadataKeyUnchanged(key) => write!(f, "metadata.{key} must not change"),
        }
    }
}
