//! Every manager's fields as the apiserver decodes `metadata.managedFields`: one set per
//! manager identity, in the apiserver's order. The simulation of an apply
//! ([`super::simulate`]) starts from them and returns them, the lints of a configuration
//! ([`super::apply_lints`]) and the check against the server ([`super::verify`]) read them.

use super::managers::{ManagedFieldsEntry, Manager};
use crate::fieldpath::Set;

/// One manager's fields, as a `managedFields` entry holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerFields {
    /// Who (the identity the apiserver keys entries by).
    pub manager: Manager,
    /// The API version the fields are recorded in.
    pub api_version: String,
    /// The fields.
    pub fields: Set,
}

/// The managers as the apiserver decodes `managedFields`: one per identity (a later entry
/// replaces an earlier one), sorted by the apiserver's identifier.
pub fn live_managers(managed: &[ManagedFieldsEntry]) -> Vec<ManagerFields> {
    let mut out: Vec<ManagerFields> = Vec::new();
    for entry in managed {
        let identity = entry.identity();
        let fields = ManagerFields {
            manager: identity.clone(),
            api_version: entry.api_version.clone(),
            fields: entry.fields.clone(),
        };
        match out.iter_mut().find(|m| m.manager == identity) {
            Some(slot) => *slot = fields,
            None => out.push(fields),
        }
    }
    sort_by_identifier(&mut out);
    out
}

/// Sorts managers by the apiserver's identifier, the order it stores them in.
pub(crate) fn sort_by_identifier(managers: &mut [ManagerFields]) {
    managers.sort_by_cached_key(|m| m.manager.identifier());
}
