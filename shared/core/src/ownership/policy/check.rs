//! One object checked against a policy: every field (a leaf of a manager's field set, in
//! kubectl's notation) owned by a manager the policy does not expect there is a
//! [`Violation`], with its manager's class and the [`DriftFix`] for that class.
//!
//! A field is fine when it is ignored (by the defaults or by a rule that applies to the
//! object), when its manager is one a rule that applies expects, when a rule allows that
//! manager on that field, or when the default rule allows the manager. A field pattern
//! covers the fields under the field it names (`.metadata.labels` covers every label).

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

fn covers(globs: &[Glob], texts: &[String]) -> bool {
    globs.iter().any(|glob| texts.iter().any(|text| glob.matches(text)))
}

fn expects(patterns: &[ManagerPattern], name: &str, class: &str) -> bool {
    patterns.iter().any(|p| p.matches(name, class))
}

/// What an object is checked with: the policy, the rules that apply to it, and the
/// defaults' ignored fields (built once per object, not per field).
struct Checker<'p> {
    policy: &'p Policy,
    rules: Vec<&'p Rule>,
    default_ignored: Vec<Glob>,
}

impl Checker<'_> {
    /// Whether `entry` may own the field `texts` names.
    fn permits(&self, entry: &ManagedFieldsEntry, class: &str, texts: &[String]) -> bool {
        (self.policy.defaults && (covers(&self.default_ignored, texts) || defaults::allows(entry)))
            || self.rules.iter().any(|rule| {
                covers(&rule.ignored, texts)
                    || expects(&rule.managers, &entry.manager, class)
                    || rule
                        .allowed
                        .iter()
                        .any(|a| covers(&a.fields, texts) && expects(&a.managers, &entry.manager, class))
            })
    }
}

/// Checks one object (`entries` are its `managedFields`) against `policy`.
pub fn check_object(policy: &Policy, object: &Value, entries: &[ManagedFieldsEntry]) -> ObjectCheck {
    let facts = ObjectFacts::of(object);
    let checker = Checker {
        policy,
        rules: policy.rules.iter().filter(|r| r.selects.matches(&facts)).collect(),
        default_ignored: if policy.defaults { defaults::ignored_fields() } else { Vec::new() },
    };
    let rule_name = checker.rules.first().map_or(DEFAULT_RULE, |r| r.name.as_str());
    let transfer_to = checker.rules.iter().flat_map(|r| &r.managers).find_map(|p| match p {
        ManagerPattern::Name(glob) if glob.is_literal() => Some(glob.as_str().to_string()),
        _ => None,
    });
    let mut violations = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let class = class_of(&entry.identity());
        for path in entry.fields.leaves().iter() {
            if checker.permits(entry, class, &texts(&path)) {
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
    ObjectCheck { rules: checker.rules.iter().map(|r| r.name.clone()).collect(), violations }
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
}
