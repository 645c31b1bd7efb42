//! Which `metadata.managedFields` entries a hand-over takes fields from: managers named
//! one by one, or by class. A class stands for the writers that leave fields behind when a
//! team moves to server-side apply: kubectl's imperative commands and the apiserver's
//! `before-first-apply` placeholder (`human`), and Helm 3's updates (`helm-update`).
//!
//! A class only ever selects `Update` entries of the main resource: controllers and
//! subresource entries (`/status`, `/scale`) are never in a class, so they are left alone
//! unless named explicitly (`kube-controller-manager`, `kubectl-scale/scale`).
//!
//! These are groups to select, not the classification every command prints
//! ([`super::classify::ManagerKind`]): `human` here is the well-known managers of the
//! `human` class that a move to server-side apply takes over, plus client-side apply
//! (an `applier` there, whose fields the move hands over too); Helm 3's updates, `human`
//! there, are a group of their own so that they are only moved when asked.
//!
//! ```
//! use fieldwise_core::ownership::{parse_managed_fields, ManagerSelection};
//! use serde_json::json;
//!
//! let from = ManagerSelection::parse(&["human", "my-script"]).unwrap();
//! let entries = parse_managed_fields(&json!([
//!     {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"},
//!     {"manager": "my-script", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"},
//!     {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
//!      "subresource": "status"},
//!     {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}
//! ])).unwrap();
//! let picked: Vec<bool> = entries.iter().map(|e| from.selects(e)).collect();
//! assert_eq!(picked, [true, true, false, false]);
//! ```

use std::fmt;

use super::managers::{ManagedFieldsEntry, Operation};
use crate::well_known::{BEFORE_FIRST_APPLY_MANAGER, CLIENT_SIDE_APPLY_MANAGER, CREATE_MANAGER};

/// The managers a person leaves behind: kubectl's imperative commands, client-side apply,
/// and the apiserver's placeholder for what was set before the first server-side apply.
pub const HUMAN_MANAGERS: [&str; 8] = [
    "kubectl-edit",
    "kubectl-patch",
    CREATE_MANAGER,
    "kubectl-set",
    "kubectl-label",
    "kubectl-annotate",
    CLIENT_SIDE_APPLY_MANAGER,
    BEFORE_FIRST_APPLY_MANAGER,
];

/// The manager Helm 3 writes its (non server-side) upgrades as.
pub const HELM_MANAGER: &str = "helm";

/// A named group of managers that `--from` and `--also` accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManagerClass {
    /// [`HUMAN_MANAGERS`], updating the main resource.
    Human,
    /// Helm 3's `Update` entries (`helm`; Helm 4 applies server-side as `helm` with `Apply`).
    HelmUpdate,
}

impl ManagerClass {
    /// Every class, in the order help texts list them.
    pub const ALL: [ManagerClass; 2] = [ManagerClass::Human, ManagerClass::HelmUpdate];

    /// The word on the command line: `human`, `helm-update`.
    pub fn name(self) -> &'static str {
        match self {
            ManagerClass::Human => "human",
            ManagerClass::HelmUpdate => "helm-update",
        }
    }

    /// The class a word names, if it names one.
    pub fn from_name(word: &str) -> Option<Self> {
        ManagerClass::ALL.into_iter().find(|c| c.name() == word)
    }

    /// The manager names in the class.
    pub fn members(self) -> &'static [&'static str] {
        match self {
            ManagerClass::Human => &HUMAN_MANAGERS,
            ManagerClass::HelmUpdate => &[HELM_MANAGER],
        }
    }

    /// Whether `entry` belongs to the class: one of its names, an `Update`, on the main resource.
    pub fn contains(self, entry: &ManagedFieldsEntry) -> bool {
        entry.operation == Operation::Update
            && entry.subresource.is_empty()
            && self.members().contains(&entry.manager.as_str())
    }
}

impl fmt::Display for ManagerClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One word of a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    /// A class: its members' `Update` entries on the main resource.
    Class(ManagerClass),
    /// A manager named explicitly, every operation, on the main resource or (`NAME/SUBRESOURCE`) on one subresource.
    Named { name: String, subresource: String },
}

/// A set of managers given as classes and names, e.g. `human,helm-update,my-script,kubectl-scale/scale`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagerSelection {
    selectors: Vec<Selector>,
}

/// A word of a manager selection that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid manager {word:?}: {reason}")]
pub struct SelectionError {
    /// The word as given.
    pub word: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ManagerSelection {
    /// Reads classes and manager names (each word may itself be a comma-separated list).
    /// `NAME/SUBRESOURCE` selects a manager's entries on that subresource only.
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<Self, SelectionError> {
        let mut selectors = Vec::new();
        for word in words.iter().flat_map(|w| w.as_ref().split(',')).map(str::trim) {
            let fail = |reason: &str| SelectionError { word: word.to_string(), reason: reason.to_string() };
            if word.is_empty() {
                return Err(fail("empty manager name"));
            }
            let selector = match ManagerClass::from_name(word) {
                Some(class) => Selector::Class(class),
                None => match word.rsplit_once('/') {
                    Some((name, sub)) if name.is_empty() || sub.is_empty() => {
                        return Err(fail("NAME/SUBRESOURCE needs both parts, e.g. kubectl-scale/scale"))
                    }
                    Some((name, sub)) => Selector::Named { name: name.to_string(), subresource: sub.to_string() },
                    None => Selector::Named { name: word.to_string(), subresource: String::new() },
                },
            };
            if !selectors.contains(&selector) {
                selectors.push(selector);
            }
        }
        Ok(ManagerSelection { selectors })
    }

    /// A selection of classes only.
    pub fn of_classes(classes: &[ManagerClass]) -> Self {
        ManagerSelection { selectors: classes.iter().copied().map(Selector::Class).collect() }
    }

    /// Whether the selection names nothing.
    pub fn is_empty(&self) -> bool {
        self.selectors.is_empty()
    }

    /// Whether `entry` is selected: by a class it belongs to, or by its name (and subresource).
    pub fn selects(&self, entry: &ManagedFieldsEntry) -> bool {
        self.selectors.iter().any(|s| match s {
            Selector::Class(class) => class.contains(entry),
            Selector::Named { name, subresource } => entry.manager == *name && entry.subresource == *subresource,
        })
    }

    /// The manager names given explicitly (not through a class), for messages.
    pub fn named(&self) -> Vec<String> {
        self.selectors
            .iter()
            .filter_map(|s| match s {
                Selector::Named { name, subresource } if subresource.is_empty() => Some(name.clone()),
                Selector::Named { name, subresource } => Some(format!("{name}/{subresource}")),
                Selector::Class(_) => None,
            })
            .collect()
    }
}

impl fmt::Display for ManagerSelection {
    /// The selection as the command line spells it: `human,my-script`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self
            .selectors
            .iter()
            .map(|s| match s {
                Selector::Class(c) => c.name().to_string(),
                Selector::Named { name, subresource } if subresource.is_empty() => name.clone(),
                Selector::Named { name, subresource } => format!("{name}/{subresource}"),
            })
            .collect();
        f.write_str(&words.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::parse_managed_fields;
    use serde_json::{json, Value};

    fn entry(manager: &str, operation: &str, subresource: &str) -> ManagedFieldsEntry {
        let mut e: Value =
            json!({"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1"});
        if !subresource.is_empty() {
            e["subresource"] = subresource.into();
        }
        parse_managed_fields(&json!([e])).unwrap().remove(0)
    }

    #[test]
    fn the_human_group_is_the_human_class_and_client_side_apply() {
        use crate::ownership::ManagerKind;
        for name in HUMAN_MANAGERS {
            let kind = entry(name, "Update", "").kind();
            let expected = if name == CLIENT_SIDE_APPLY_MANAGER { ManagerKind::Applier } else { ManagerKind::Human };
            assert_eq!(kind, expected, "{name}");
        }
        assert_eq!(entry(HELM_MANAGER, "Update", "").kind(), ManagerKind::Human);
    }

    #[test]
    fn classes_take_only_updates_of_the_main_resource() {
        let human = ManagerSelection::parse(&["human"]).unwrap();
        for name in HUMAN_MANAGERS {
            assert!(human.selects(&entry(name, "Update", "")), "{name}");
            assert!(!human.selects(&entry(name, "Update", "status")), "{name} on status");
        }
        assert!(!human.selects(&entry("kubectl-client-side-apply", "Apply", "")));
        assert!(!human.selects(&entry("kubectl-scale", "Update", "scale")));
        assert!(!human.selects(&entry("kube-controller-manager", "Update", "")));
        assert!(!human.selects(&entry("helm", "Update", "")));
        let helm = ManagerSelection::parse(&["helm-update"]).unwrap();
        assert!(helm.selects(&entry("helm", "Update", "")));
        assert!(!helm.selects(&entry("helm", "Apply", "")), "Helm 4 applies: not an update");
    }

    #[test]
    fn names_select_every_operation_of_their_resource_or_subresource() {
        let from = ManagerSelection::parse(&["kube-controller-manager,kubectl-scale/scale", "argocd"]).unwrap();
        assert!(from.selects(&entry("kube-controller-manager", "Update", "")));
        assert!(!from.selects(&entry("kube-controller-manager", "Update", "status")));
        assert!(from.selects(&entry("kubectl-scale", "Update", "scale")));
        assert!(!from.selects(&entry("kubectl-scale", "Update", "")));
        assert!(from.selects(&entry("argocd", "Apply", "")));
        assert_eq!(from.to_string(), "kube-controller-manager,kubectl-scale/scale,argocd");
        assert_eq!(from.named(), ["kube-controller-manager", "kubectl-scale/scale", "argocd"]);
    }

    #[test]
    fn bad_words_are_refused_and_repeats_collapse() {
        let err = ManagerSelection::parse(&["human,,x"]).unwrap_err();
        assert_eq!(err.to_string(), r#"invalid manager "": empty manager name"#);
        let err = ManagerSelection::parse(&["x/"]).unwrap_err();
        assert!(err.to_string().contains("NAME/SUBRESOURCE"), "{err}");
        let twice = ManagerSelection::parse(&["human", "human,a", "a"]).unwrap();
        assert_eq!(twice.to_string(), "human,a");
        assert!(ManagerSelection::parse::<&str>(&[]).unwrap().is_empty());
        assert_eq!(ManagerSelection::of_classes(&[ManagerClass::HelmUpdate]).to_string(), "helm-update");
    }
}
