//! What a scan found, as the scan produces it and the report prints it: objects
//! with findings ([`Flagged`]) and types it could not list ([`Skipped`]). Its own
//! module so that `scan` (which makes them) and `report` (which prints them) do
//! not import each other.

use fieldwise_core::last_applied::Finding;
use fieldwise_kube::api::discovery::ResourceType;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::api::unread::Unread;
use serde_json::Value;

/// One object with problems, and the full object when the scan fetched it and was asked
/// to keep it (see `scan::events`).
#[derive(Debug, Clone)]
pub struct Flagged {
    /// The object.
    pub target: ObjectRef,
    /// What is wrong, sorted by kind.
    pub findings: Vec<Finding>,
    /// The full object, when fetched (missing and stale candidates) and kept.
    pub live: Option<Value>,
}

/// A type the scan could not list, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The type.
    pub resource: ResourceType,
    /// The server's answer.
    pub reason: String,
    /// The server no longer serves the type (removed since discovery was read): it has no
    /// objects left to read ([`fieldwise_kube::api::unread::is_gone`]).
    pub gone: bool,
}

impl Skipped {
    /// What the gate counts of it ([`fieldwise_kube::api::unread`]).
    pub fn unread(&self, namespace: Option<&str>) -> Unread {
        Unread {
            api_version: self.resource.api_version(),
            resource: self.resource.plural_group(),
            namespace: namespace.filter(|_| self.resource.namespaced).map(String::from),
            name: None,
            reason: self.reason.clone(),
        }
    }
}
