//! The smallest policy today's owners satisfy: object by object, the managers owning
//! fields that the defaults do not already permit are gathered per kind; kinds with the
//! same managers share one rule. Checking the same objects with the policy learned finds
//! nothing, so a policy learned today catches in CI whatever changes afterwards.
//!
//! Memory grows with the kinds and managers seen, not with the objects.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::check::check_object;
use super::glob::Glob;
use super::{ManagerPattern, ObjectFacts, ObjectMatch, Policy, Rule};
use crate::ownership::managers::ManagedFieldsEntry;

/// Gathers the owners of objects, one at a time, into a policy.
///
/// ```
/// use fieldwise_core::ownership::managed_fields_of;
/// use fieldwise_core::ownership::policy::Learner;
/// use serde_json::json;
///
/// let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": [
///     {"manager": "helm", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
///      "fieldsV1": {"f:data": {"f:a": {}}}}]}});
/// let mut learner = Learner::default();
/// learner.add(&cm, &managed_fields_of(&cm).unwrap());
/// let policy = learner.policy();
/// assert_eq!(policy.rules[0].selects.kinds[0].as_str(), "ConfigMap");
/// assert_eq!(policy.rules[0].managers[0].as_str(), "helm");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Learner {
    /// `group/Kind` and the managers whose fields the defaults do not permit.
    kinds: BTreeMap<String, BTreeSet<String>>,
}

impl Learner {
    /// Adds one object (`entries` are its `managedFields`).
    pub fn add(&mut self, object: &Value, entries: &[ManagedFieldsEntry]) {
        let facts = ObjectFacts::of(object);
        let found = check_object(&Policy::default(), object, entries);
        let managers = self.kinds.entry(facts.kind_text()).or_default();
        for violation in found.violations {
            managers.insert(entries[violation.entry].manager.clone());
        }
    }

    /// The policy: one rule per set of managers, naming the kinds that have exactly it.
    pub fn policy(self) -> Policy {
        let mut by_managers: BTreeMap<BTreeSet<String>, Vec<String>> = BTreeMap::new();
        for (kind, managers) in self.kinds.into_iter().filter(|(_, m)| !m.is_empty()) {
            by_managers.entry(managers).or_default().push(kind);
        }
        let mut rules: Vec<Rule> = by_managers
            .into_iter()
            .map(|(managers, kinds)| Rule {
                name: kinds[0].clone(),
                selects: ObjectMatch { kinds: kinds.into_iter().map(Glob::new).collect(), ..ObjectMatch::default() },
                managers: managers.into_iter().map(|m| ManagerPattern::Name(Glob::new(m))).collect(),
                allowed: Vec::new(),
                ignored: Vec::new(),
            })
            .collect();
        rules.sort_by(|a, b| a.name.cmp(&b.name));
        Policy { defaults: true, rules }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    fn object(api_version: &str, kind: &str, managers: &[(&str, &str)]) -> Value {
        let entries: Vec<Value> = managers
            .iter()
            .map(|(manager, operation)| {
                json!({"manager": manager, "operation": operation, "apiVersion": api_version, "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:labels": {format!("f:{manager}"): {}}}}})
            })
            .collect();
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "managedFields": entries}})
    }

    #[test]
    fn kinds_with_the_same_owners_share_a_rule_and_the_policy_passes() {
        let objects = [
            object("apps/v1", "Deployment", &[("ci", "Apply"), ("kubectl-edit", "Update")]),
            object("apps/v1", "StatefulSet", &[("kubectl-edit", "Update"), ("ci", "Apply")]),
            object("v1", "ConfigMap", &[("helm", "Update")]),
            object("v1", "Secret", &[("kube-controller-manager", "Update")]),
        ];
        let mut learner = Learner::default();
        for o in &objects {
            learner.add(o, &managed_fields_of(o).unwrap());
        }
        let policy = learner.policy();
        let rules: Vec<(String, Vec<&str>, Vec<&str>)> = policy
            .rules
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.selects.kinds.iter().map(Glob::as_str).collect(),
                    r.managers.iter().map(ManagerPattern::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            rules,
            [
                ("ConfigMap".to_string(), vec!["ConfigMap"], vec!["helm"]),
                (
                    "apps/Deployment".to_string(),
                    vec!["apps/Deployment", "apps/StatefulSet"],
                    vec!["ci", "kubectl-edit"]
                ),
            ],
            "the Secret's only owner is allowed by default: no rule"
        );
        for o in &objects {
            assert_eq!(check_object(&policy, o, &managed_fields_of(o).unwrap()).violations, []);
        }
    }
}
