//! One object checked against a policy: every field (a leaf of a manager's field set, in
//! kubectl's notation) owned by a manager the policy does not expect there is a
//! [`Violation`], with its manager's class and the [`DriftFix`] for that class.
//!
//! A field is fine when it is ignored (by the defaults or by a rule that applies to the
//! object), when its manager is one a rule that applies expects, when a rule allows that
//! manager on that field, or when the default rule allows the manager. A field pattern
//! covers the fields under the field it names (`.metadata.labels` covers every label).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::defaults::{self, DEFAULT_RULE};
use super::glob::Glob;
use super::{class_of, ManagerPattern, ObjectFacts, Policy, Rule};
use crate::fieldpath::Path;
use crate::ownership::managers::ManagedFieldsEntry;

/// What to do about a violation, by the class of the manager that owns the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriftFix {
    /// A person's one-off write: hand the manager's fields to the expected manager with
    /// `kubectl owners transfer`, whose next apply then sets or removes them. `to` is the
    /// rule's first manager named exactly, when it has one.
    Transfer {
        /// The manager to hand the fields to.
        to: Option<String>,
    },
    /// Another applier: drop the field from that applier's configuration.
    Drop,
    /// A controller keeps writing it: allow it in the policy.
    Allow,
}

impl DriftFix {
    /// The word in reports: `transfer`, `drop`, `allow`.
    pub fn name(&self) -> &'static str {
        match self {
            DriftFix::Transfer { .. } => "transfer",
            DriftFix::Drop => "drop",
            DriftFix::Allow => "allow",
        }
    }
}

/// A field owned against the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The field.
    pub path: Path,
    /// The index of its manager's entry in the object's `managedFields`.
    pub entry: usize,
    /// The manager's class ([`class_of`]).
    pub class: &'static str,
    /// The rule it breaks: the first rule that applies to the object, else the default rule.
    pub rule: String,
    /// What to do about it.
    pub fix: DriftFix,
}

/// One object's check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectCheck {
    /// The names of the rules that apply to the object, in policy order.
    pub rules: Vec<String>,
    /// Its violations, manager by manager (in `managedFields` order), fields in set order.
    pub violations: Vec<Violation>,
}

/// A field and the fields above it, as text in kubectl's notation, shortest first.
fn texts(path: &Path) -> Vec<String> {
    let mut text = String::new();
    path.elements()
        .iter()
        .map(|element| {
            text.push_str(&element.to_string());
            text.clone()
        })
        .collect()
}

fn expects(patterns: &[ManagerPattern], name: &str, class: &str) -> bool {
    patterns.iter().any(|p| p.matches(name, class))
}

/// A policy made ready to check many objects: its rules indexed by the kinds they name, so
/// an object meets only the rules that may apply to it (a policy of 200,000 rules, one per
/// kind, costs each object a lookup, not 200,000 matches). Build it once per run.
#[derive(Debug)]
pub struct PolicyChecker<'p> {
    policy: &'p Policy,
    /// The rules naming only literal `group/Kind`s, by that text.
    by_group_kind: HashMap<&'p str, Vec<usize>>,
    /// The rules naming only literal `Kind`s (any group), by that text.
    by_kind: HashMap<&'p str, Vec<usize>>,
    /// The other rules: no kinds (every object), or a kind pattern.
    any_kind: Vec<usize>,
}

impl<'p> PolicyChecker<'p> {
    /// Indexes `policy`'s rules.
    pub fn new(policy: &'p Policy) -> Self {
        let mut checker =
            PolicyChecker { policy, by_group_kind: HashMap::new(), by_kind: HashMap::new(), any_kind: Vec::new() };
        for (index, rule) in policy.rules.iter().enumerate() {
            let kinds = &rule.selects.kinds;
            if kinds.is_empty() || kinds.iter().any(|kind| !kind.is_literal()) {
                checker.any_kind.push(index);
                continue;
            }
            for kind in kinds {
                let map = if kind.as_str().contains('/') { &mut checker.by_group_kind } else { &mut checker.by_kind };
                let rules = map.entry(kind.as_str()).or_default();
                if rules.last() != Some(&index) {
                    rules.push(index);
                }
            }
        }
        checker
    }

    /// The rules that apply to the object, in policy order.
    fn rules_for(&self, facts: &ObjectFacts<'_>) -> Vec<&'p Rule> {
        let group_kind = format!("{}/{}", facts.group, facts.kind);
        let mut candidates: Vec<usize> = self.any_kind.clone();
        candidates.extend(self.by_group_kind.get(group_kind.as_str()).into_iter().flatten());
        candidates.extend(self.by_kind.get(facts.kind).into_iter().flatten());
        candidates.sort_unstable();
        candidates.dedup();
        let rules = &self.policy.rules;
        candidates.into_iter().map(|i| &rules[i]).filter(|rule| rule.selects.matches(facts)).collect()
    }

    /// Checks one object (`entries` are its `managedFields`).
    pub fn check(&self, object: &Value, entries: &[ManagedFieldsEntry]) -> ObjectCheck {
        let policy = self.policy;
        let facts = ObjectFacts::of(object);
        let rules = self.rules_for(&facts);
        let rule_name = rules.first().map_or(DEFAULT_RULE, |r| r.name.as_str());
        let transfer_to = rules.iter().flat_map(|r| &r.managers).find_map(|p| match p {
            ManagerPattern::Name(glob) if glob.is_literal() => Some(glob.as_str().to_string()),
            _ => None,
        });
        let mut violations = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let class = class_of(&entry.identity());
            let owned = Owned::by(policy, &rules, entry, class);
            for path in entry.fields.leaves().iter() {
                if owned.permits(&texts(&path)) {
                    continue;
                }
                let fix = match class {
                    "controller" => DriftFix::Allow,
                    "applier" => DriftFix::Drop,
                    _ => DriftFix::Transfer { to: transfer_to.clone() },
                };
                violations.push(Violation { path, entry: index, class, rule: rule_name.to_string(), fix });
            }
        }
        ObjectCheck { rules: rules.iter().map(|r| r.name.clone()).collect(), violations }
    }
}

/// The fields one manager of an object may own, decided once per manager rather than per
/// field: every field (the default rule allows it, or a rule expects it), or the fields the
/// defaults and the rules ignore and those a rule allows this manager on. A field is
/// permitted when a pattern covers it or a field above it; literal patterns are looked up.
struct Owned<'p> {
    everything: bool,
    literal: HashSet<&'p str>,
    patterns: Vec<&'p Glob>,
}

impl<'p> Owned<'p> {
    fn by(policy: &'p Policy, rules: &[&'p Rule], entry: &ManagedFieldsEntry, class: &str) -> Self {
        let mut owned = Owned { everything: false, literal: HashSet::new(), patterns: Vec::new() };
        if (policy.defaults && defaults::allows(entry))
            || rules.iter().any(|rule| expects(&rule.managers, &entry.manager, class))
        {
            owned.everything = true;
            return owned;
        }
        let defaults: &'p [Glob] = if policy.defaults { defaults::ignored() } else { &[] };
        let allowed = rules
            .iter()
            .flat_map(|rule| &rule.allowed)
            .filter(|a| expects(&a.managers, &entry.manager, class))
            .flat_map(|a| &a.fields);
        for glob in defaults.iter().chain(rules.iter().flat_map(|rule| &rule.ignored)).chain(allowed) {
            if glob.is_literal() {
                owned.literal.insert(glob.as_str());
            } else {
                owned.patterns.push(glob);
            }
        }
        owned
    }

    /// Whether the field `texts` names (it and the fields above it) may be owned.
    fn permits(&self, texts: &[String]) -> bool {
        self.everything
            || texts
                .iter()
                .any(|text| self.literal.contains(text.as_str()) || self.patterns.iter().any(|glob| glob.matches(text)))
    }
}

/// Checks one object (`entries` are its `managedFields`) against `policy`. For many objects,
/// build a [`PolicyChecker`] once and check each with it.
pub fn check_object(policy: &Policy, object: &Value, entries: &[ManagedFieldsEntry]) -> ObjectCheck {
    PolicyChecker::new(policy).check(object, entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use crate::ownership::policy::parse_policy;
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod",
            "labels": {"app": "web", "oncall": "alice"}, "managedFields": [
            {"manager": "ci", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "time": "2026-01-01T00:00:00Z",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}}},
            {"manager": "kubectl-label", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:labels": {"f:oncall": {}}}}},
            {"manager": "keda-operator", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "subresource": "scale", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "other-team", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:paused": {}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
             "f:spec": {"f:template": {"f:metadata": {"f:annotations": {"f:x": {}}}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:replicas": {}}}}
        ]}})
    }

    fn found(policy_body: &str) -> Vec<(String, String, &'static str, DriftFix)> {
        let policy =
            parse_policy(&format!("apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\n{policy_body}")).unwrap();
        let object = deployment();
        let entries = managed_fields_of(&object).unwrap();
        check_object(&policy, &object, &entries)
            .violations
            .into_iter()
            .map(|v| (v.path.to_string(), entries[v.entry].manager.clone(), v.class, v.fix))
            .collect()
    }

    #[test]
    fn foreign_owners_are_violations_with_their_class_and_fix() {
        let to_ci = DriftFix::Transfer { to: Some("ci".into()) };
        assert_eq!(
            found("rules:\n- match: {kinds: [apps/Deployment]}\n  managers: [ci]\n"),
            [
                (".metadata.labels.oncall".to_string(), "kubectl-label".to_string(), "human", to_ci),
                (".spec.replicas".to_string(), "keda-operator".to_string(), "controller", DriftFix::Allow),
                (".spec.paused".to_string(), "other-team".to_string(), "applier", DriftFix::Drop),
            ]
        );
    }

    #[test]
    fn allowed_expected_and_ignored_fields_pass() {
        let policy = "rules:\n- match: {kinds: [apps/Deployment]}\n  managers: [ci, other-*]\n  allowed:\n  - fields: [.spec.replicas]\n    managers: [controller]\n  ignored: [.metadata.labels]\n";
        assert_eq!(found(policy), []);
    }

    #[test]
    fn without_defaults_status_and_controllers_are_checked_too() {
        let policy = "defaults: false\nrules:\n- managers: [ci, kubectl*, keda-operator, other-team]\n";
        let fields: Vec<String> = found(policy).into_iter().map(|(path, ..)| path).collect();
        assert_eq!(
            fields,
            [
                ".metadata.annotations.deployment.kubernetes.io/revision",
                ".spec.template.metadata.annotations.x",
                ".status.replicas"
            ]
        );
    }

    #[test]
    fn objects_no_rule_selects_meet_the_default_rule_alone() {
        let policy = parse_policy("apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- match: {kinds: [ConfigMap]}\n  managers: [ci]\n").unwrap();
        let object = deployment();
        let check = check_object(&policy, &object, &managed_fields_of(&object).unwrap());
        assert!(check.rules.is_empty());
        assert_eq!(check.violations.len(), 5, "ci's two fields, the label, the autoscaler and the other applier");
        assert!(check.violations.iter().all(|v| v.rule == DEFAULT_RULE));
        assert_eq!(check.violations[2].fix, DriftFix::Transfer { to: None }, "no rule names a manager to hand over to");
    }

    #[test]
    fn indexed_rules_apply_in_policy_order_as_matching_every_rule_would() {
        let policy = parse_policy(
            "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n\
             - {name: cm, match: {kinds: [ConfigMap]}, managers: [a]}\n\
             - {name: every, managers: [b]}\n\
             - {name: both-spellings, match: {kinds: [apps/Deployment, Deployment]}, managers: [c]}\n\
             - {name: apps-glob, match: {kinds: [apps/*], names: [w*]}, managers: [d]}\n\
             - {name: core-only, match: {kinds: [/Deployment]}, managers: [e]}\n\
             - {name: other-name, match: {kinds: [Deployment], names: [db]}, managers: [f]}\n",
        )
        .unwrap();
        let object = deployment();
        let facts = ObjectFacts::of(&object);
        let every: Vec<&str> =
            policy.rules.iter().filter(|r| r.selects.matches(&facts)).map(|r| r.name.as_str()).collect();
        assert_eq!(every, ["every", "both-spellings", "apps-glob"]);
        let checker = PolicyChecker::new(&policy);
        let indexed: Vec<&str> = checker.rules_for(&facts).iter().map(|r| r.name.as_str()).collect();
        assert_eq!(indexed, every);
        let entries = managed_fields_of(&object).unwrap();
        assert_eq!(checker.check(&object, &entries), check_object(&policy, &object, &entries));
    }

    #[test]
    fn a_policy_of_many_rules_meets_each_object_with_its_own_kind_only() {
        let mut text = String::from("apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n");
        for i in 0..20_000 {
            text.push_str(&format!("- {{match: {{kinds: [example.com/Kind{i}]}}, managers: [m{i}]}}\n"));
        }
        text.push_str("- {match: {kinds: [apps/Deployment]}, managers: [ci]}\n");
        let policy = parse_policy(&text).unwrap();
        let checker = PolicyChecker::new(&policy);
        assert!(checker.any_kind.is_empty() && checker.by_kind.is_empty());
        assert_eq!(checker.by_group_kind.len(), 20_001);
        let object = deployment();
        let rules = checker.rules_for(&ObjectFacts::of(&object));
        assert_eq!(rules.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["rules[20000]"]);
        let entries = managed_fields_of(&object).unwrap();
        assert_eq!(
            checker.check(&object, &entries).violations.len(),
            3,
            "the label, the autoscaler, the other applier"
        );
    }
}
