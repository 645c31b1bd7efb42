//! Ownership policies: who may own which fields of which objects, and the fields owned
//! against it (drift). `kubectl owners drift` reads a policy, checks every selected
//! object's `metadata.managedFields` with it, and can learn one from the owners of today.
//!
//! Why this exists: GitOps tools compare values, not owners; a `kubectl edit` that sets a
//! field to the value the file has, or a label only a person added, is invisible to them,
//! and their allow-lists of managers are per application. A policy says, per group of
//! objects (by kind, namespace, name and labels), which managers are expected, which
//! foreign managers are allowed on which fields (an autoscaler on `.spec.replicas`), and
//! which fields nobody checks; everything else some other manager owns is a violation.
//! Pure: the policy is parsed from text ([`parse_policy`], errors naming their line),
//! checked against values ([`check_object`]) and learned from values ([`Learner`]).
//! The schema is documented in `docs/ownership-policy.md`.
//!
//! - [`glob`]: the patterns of names and fields;
//! - [`selector`]: label selectors (`matchLabels`, `matchExpressions`);
//! - [`parse`]: the YAML document, validated;
//! - [`defaults`]: the fields ignored and the controllers allowed unless `defaults: false`;
//! - [`check`]: one object's violations, each with its manager's class and the fix;
//! - [`learn`]: the smallest policy today's owners satisfy;
//! - [`emit`]: the allowed and ignored fields as Argo CD and Flux ignore rules.
//!
//! ```
//! use fieldwise_core::ownership::managed_fields_of;
//! use fieldwise_core::ownership::policy::{check_object, parse_policy};
//! use serde_json::json;
//!
//! let policy = parse_policy("apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- match: {kinds: [apps/Deployment]}\n  managers: [ci]\n").unwrap();
//! let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web",
//!     "labels": {"app": "web", "oncall": "alice"}, "managedFields": [
//!     {"manager": "ci", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
//!      "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}},
//!     {"manager": "kubectl-label", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
//!      "fieldsV1": {"f:metadata": {"f:labels": {"f:oncall": {}}}}}]}});
//! let entries = managed_fields_of(&deployment).unwrap();
//! let found = check_object(&policy, &deployment, &entries);
//! assert_eq!(found.violations.len(), 1);
//! assert_eq!(found.violations[0].path.to_string(), ".metadata.labels.oncall");
//! assert_eq!(entries[found.violations[0].entry].manager, "kubectl-label");
//! ```

pub mod check;
pub mod defaults;
pub mod emit;
pub mod glob;
pub mod learn;
pub mod parse;
pub mod selector;

pub use check::{check_object, DriftFix, ObjectCheck, PolicyChecker, Violation};
pub use glob::Glob;
pub use learn::Learner;
pub use parse::{parse_policy, PolicyError};
pub use selector::{LabelSelector, Requirement, SelectorOperator};

use serde_json::{json, Map, Value};

use super::classify::ManagerKind;
use super::managers::Manager;

/// The `apiVersion` of a policy document.
pub const POLICY_API_VERSION: &str = "fieldwise.dev/v1alpha1";

/// The `kind` of a policy document.
pub const POLICY_KIND: &str = "OwnershipPolicy";

/// The class words a policy may name managers by, in the order the docs list them.
pub const CLASSES: [&str; 3] = ["human", "controller", "applier"];

/// The class of a manager: the core's one classification of managers
/// ([`ManagerKind`]), in the words policies and drift reports use. Drift reads the
/// classification here and nowhere else.
pub fn class_of(manager: &Manager) -> &'static str {
    ManagerKind::of(manager).name()
}

/// A whole policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Whether the [`defaults`] apply (`defaults: false` turns them off).
    pub defaults: bool,
    /// The rules, in the order written.
    pub rules: Vec<Rule>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { defaults: true, rules: Vec::new() }
    }
}

/// One rule: the objects it is about and who may own what in them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Its name (`rules[N]` when the policy gives none): the `ruleId` of reports.
    pub name: String,
    /// The objects it applies to.
    pub selects: ObjectMatch,
    /// The managers expected to own any field of these objects.
    pub managers: Vec<ManagerPattern>,
    /// Foreign managers allowed on some fields.
    pub allowed: Vec<Allowance>,
    /// Fields nobody's ownership of is checked.
    pub ignored: Vec<Glob>,
}

/// Which objects a rule applies to; an empty list matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectMatch {
    /// `group/Kind` patterns (`apps/Deployment`, `apps/*`), or `Kind` in any group.
    pub kinds: Vec<Glob>,
    /// Namespace patterns (a cluster-scoped object has the namespace `""`).
    pub namespaces: Vec<Glob>,
    /// Name patterns.
    pub names: Vec<Glob>,
    /// The labels the objects must have.
    pub labels: Option<LabelSelector>,
}

/// A manager a policy names: by name pattern, or by class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManagerPattern {
    /// Every manager of this class (one of [`CLASSES`]).
    Class(&'static str),
    /// Managers whose name matches.
    Name(Glob),
}

impl ManagerPattern {
    /// Reads a word of the policy: a class word, else a name pattern.
    pub fn parse(word: &str) -> Self {
        match CLASSES.iter().find(|c| **c == word) {
            Some(class) => ManagerPattern::Class(class),
            None => ManagerPattern::Name(Glob::new(word)),
        }
    }

    /// Whether the manager `name` of class `class` is one of these.
    pub fn matches(&self, name: &str, class: &str) -> bool {
        match self {
            ManagerPattern::Class(c) => *c == class,
            ManagerPattern::Name(glob) => glob.matches(name),
        }
    }

    /// The word as written.
    pub fn as_str(&self) -> &str {
        match self {
            ManagerPattern::Class(c) => c,
            ManagerPattern::Name(glob) => glob.as_str(),
        }
    }
}

/// Foreign managers allowed on some fields of a rule's objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    /// Field patterns, in kubectl's notation (`.spec.replicas`).
    pub fields: Vec<Glob>,
    /// The managers allowed on them.
    pub managers: Vec<ManagerPattern>,
}

/// What a rule matches an object by, read from the object once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectFacts<'o> {
    /// The API group (`""` for the core group).
    pub group: &'o str,
    /// The kind.
    pub kind: &'o str,
    /// The namespace (`""` when cluster-scoped).
    pub namespace: &'o str,
    /// The name.
    pub name: &'o str,
    /// Its labels.
    pub labels: Option<&'o Map<String, Value>>,
}

impl<'o> ObjectFacts<'o> {
    /// The facts of an object.
    pub fn of(object: &'o Value) -> Self {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).unwrap_or("");
        let api_version = text("/apiVersion");
        ObjectFacts {
            group: api_version.rsplit_once('/').map_or("", |(group, _)| group),
            kind: text("/kind"),
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name"),
            labels: object.pointer("/metadata/labels").and_then(Value::as_object),
        }
    }

    /// `group/Kind`, or `Kind` in the core group: how a policy names the kind.
    pub fn kind_text(&self) -> String {
        kind_text(self.group, self.kind)
    }
}

/// `group/Kind`, or `Kind` for the core group.
pub fn kind_text(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

impl ObjectMatch {
    /// Whether the object is one of these.
    pub fn matches(&self, facts: &ObjectFacts<'_>) -> bool {
        let any = |globs: &[Glob], text: &str| globs.is_empty() || globs.iter().any(|g| g.matches(text));
        let group_kind = std::cell::OnceCell::new();
        let kind_matches = self.kinds.is_empty()
            || self.kinds.iter().any(|g| match g.as_str().contains('/') {
                true => g.matches(group_kind.get_or_init(|| format!("{}/{}", facts.group, facts.kind))),
                false => g.matches(facts.kind),
            });
        kind_matches
            && any(&self.namespaces, facts.namespace)
            && any(&self.names, facts.name)
            && self.labels.as_ref().is_none_or(|s| s.matches(facts.labels))
    }
}

impl Policy {
    /// The policy as its YAML document holds it (what [`parse_policy`] reads back).
    pub fn to_value(&self) -> Value {
        let words = |patterns: &[ManagerPattern]| json!(patterns.iter().map(|p| p.as_str()).collect::<Vec<_>>());
        let globs = |globs: &[Glob]| json!(globs.iter().map(Glob::as_str).collect::<Vec<_>>());
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|rule| {
                let mut selects = Map::new();
                for (key, list) in [
                    ("kinds", &rule.selects.kinds),
                    ("namespaces", &rule.selects.namespaces),
                    ("names", &rule.selects.names),
                ] {
                    if !list.is_empty() {
                        selects.insert(key.into(), globs(list));
                    }
                }
                if let Some(labels) = &rule.selects.labels {
                    selects.insert("labelSelector".into(), labels.to_value());
                }
                let mut out = json!({"name": rule.name, "match": selects, "managers": words(&rule.managers)});
                if !rule.allowed.is_empty() {
                    out["allowed"] = rule
                        .allowed
                        .iter()
                        .map(|a| json!({"fields": globs(&a.fields), "managers": words(&a.managers)}))
                        .collect();
                }
                if !rule.ignored.is_empty() {
                    out["ignored"] = globs(&rule.ignored);
                }
                out
            })
            .collect();
        let mut out = json!({"apiVersion": POLICY_API_VERSION, "kind": POLICY_KIND});
        if !self.defaults {
            out["defaults"] = false.into();
        }
        out["rules"] = Value::Array(rules);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managers::Operation;

    #[test]
    fn objects_are_matched_by_kind_namespace_name_and_labels() {
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web"}}});
        let facts = ObjectFacts::of(&object);
        assert_eq!(facts.kind_text(), "apps/Deployment");
        let globs = |list: &[&str]| list.iter().map(|g| Glob::new(*g)).collect::<Vec<_>>();
        let selects = |kinds: &[&str], namespaces: &[&str], names: &[&str]| ObjectMatch {
            kinds: globs(kinds),
            namespaces: globs(namespaces),
            names: globs(names),
            labels: None,
        };
        assert!(selects(&[], &[], &[]).matches(&facts), "no criteria: every object");
        assert!(selects(&["apps/Deployment"], &["prod"], &["web-*"]).matches(&facts));
        assert!(selects(&["Deployment"], &[], &[]).matches(&facts), "a Kind alone: any group");
        assert!(selects(&["apps/*"], &[], &[]).matches(&facts));
        assert!(!selects(&["/Deployment"], &[], &[]).matches(&facts), "/Kind: the core group only");
        assert!(!selects(&["apps/Deployment"], &["dev"], &[]).matches(&facts));
        assert!(!selects(&[], &[], &["db"]).matches(&facts));
        let mut labelled = selects(&[], &[], &[]);
        labelled.labels = Some(LabelSelector::default());
        labelled.labels.as_mut().unwrap().match_labels.insert("app".into(), "db".into());
        assert!(!labelled.matches(&facts));
    }

    #[test]
    fn managers_are_named_by_name_glob_or_class() {
        let scale = Manager {
            name: "kube-controller-manager".into(),
            operation: Operation::Update,
            api_version: Some("apps/v1".into()),
            subresource: "scale".into(),
        };
        assert_eq!(class_of(&scale), "controller");
        assert_eq!(class_of(&Manager::applier("argocd")), "applier");
        let label = Manager {
            name: "kubectl-label".into(),
            operation: Operation::Update,
            api_version: None,
            subresource: "".into(),
        };
        assert_eq!(class_of(&label), "human");
        assert_eq!(ManagerPattern::parse("controller"), ManagerPattern::Class("controller"));
        assert!(ManagerPattern::parse("argo*").matches("argocd", "applier"));
        assert!(!ManagerPattern::parse("human").matches("argocd", "applier"));
    }
}
