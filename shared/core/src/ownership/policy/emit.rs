//! One policy for the GitOps tools too: a policy's allowed foreign fields (and ignored
//! fields) as Argo CD `ignoreDifferences` entries and as Flux helm-controller drift-ignore
//! rules, so the drift gate and the GitOps controller agree on what may differ.
//!
//! Shapes, from the projects' published API types: Argo CD's `ResourceIgnoreDifferences`
//! (`group`, `kind`, `name`, `namespace`, `jqPathExpressions`, `managedFieldsManagers`;
//! argo-cd `pkg/apis/application/v1alpha1`) under an Application's `spec`; Flux's
//! `DriftDetection` (`mode`, `ignore[].paths` as JSON pointers, `ignore[].target` a kustomize
//! `Selector`: `group`, `kind`, `name`, `namespace`, `labelSelector`; helm-controller
//! `api/v2`) under a HelmRelease's `spec`. What one tool cannot say (a glob of names, a
//! class of managers, a field inside a keyed list for a JSON pointer) is left out and
//! said in [`Emitted::notes`]: the snippet never ignores more than the policy allows on
//! the fields, but may ignore less.

use serde_json::{json, Map, Value};

use super::glob::Glob;
use super::selector::{LabelSelector, SelectorOperator};
use super::{Allowance, ManagerPattern, ObjectFacts, ObjectMatch, Policy, Rule};
use crate::ownership::classify::GitOpsTool;

/// A snippet for a GitOps tool, and what of the policy it could not express.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    /// The snippet: `{"ignoreDifferences": [...]}` or `{"driftDetection": {...}}`.
    pub value: Value,
    /// One sentence per part of the policy left out.
    pub notes: Vec<String>,
}

/// One element of a field pattern, as the tools can address it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    /// A list item chosen by one key field: `[name="app"]`.
    Item(String, String),
}

/// The steps of a field pattern (`.spec.replicas`, `.metadata.labels.app.kubernetes.io/name`,
/// `.spec.template.spec.containers[name="app"].image`, `.metadata.annotations.*` for
/// everything under a field), or `None` when a tool cannot address it (a glob inside it, a
/// set element, an index, a key of several fields).
fn steps(pattern: &Glob) -> Option<Vec<Step>> {
    let text = pattern.as_str();
    let text = text.strip_suffix(".*").unwrap_or(text);
    if text.contains(['*', '?']) || !text.starts_with('.') {
        return None;
    }
    // A label's or annotation's key is one field, dots and slashes included.
    for map in [".metadata.labels.", ".metadata.annotations."] {
        if let Some(key) = text.strip_prefix(map).filter(|k| !k.is_empty()) {
            let name = map.trim_matches('.').rsplit('.').next().unwrap_or_default();
            return Some(vec![Step::Field("metadata".into()), Step::Field(name.into()), Step::Field(key.into())]);
        }
    }
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            out.push(Step::Field(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let (key, value) = after[..end].split_once('=')?;
            let value = value.strip_prefix('"')?.strip_suffix('"')?;
            if key.is_empty() || key.contains(',') || value.contains(['"', '\\']) {
                return None;
            }
            out.push(Step::Item(key.to_string(), value.to_string()));
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A jq path expression for the steps: `.spec.template.spec.containers[] | select(.name == "app") | .image`.
fn jq(steps: &[Step]) -> String {
    let mut stages: Vec<String> = Vec::new();
    let mut current = String::new();
    for step in steps {
        match step {
            Step::Field(name) if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                current.push('.');
                current.push_str(name);
            }
            Step::Field(name) => {
                if current.is_empty() {
                    current.push('.');
                }
                current.push_str(&format!("[{}]", Value::from(name.as_str())));
            }
            Step::Item(key, value) => {
                if current.is_empty() {
                    current.push('.');
                }
                current.push_str("[]");
                stages.push(std::mem::take(&mut current));
                stages.push(format!("select(.{key} == {})", Value::from(value.as_str())));
            }
        }
    }
    if !current.is_empty() {
        stages.push(current);
    }
    stages.join(" | ")
}

/// A JSON pointer for steps without list items (`/metadata/labels/app.kubernetes.io~1name`).
fn json_pointer(steps: &[Step]) -> Option<String> {
    let mut out = String::new();
    for step in steps {
        let Step::Field(name) = step else { return None };
        out.push('/');
        out.push_str(&name.replace('~', "~0").replace('/', "~1"));
    }
    Some(out)
}

/// The fields a rule lets differ: each allowance's (with its managers) and the ignored ones.
fn allowances(rule: &Rule) -> Vec<(&[Glob], &[ManagerPattern])> {
    let mut out: Vec<(&[Glob], &[ManagerPattern])> =
        rule.allowed.iter().map(|a| (a.fields.as_slice(), a.managers.as_slice())).collect();
    if !rule.ignored.is_empty() {
        out.push((rule.ignored.as_slice(), &[]));
    }
    out
}

/// `(group, kind)` of each kind pattern of a rule (`*` for any), for tools that take both.
fn kinds(rule: &Rule) -> Vec<(String, String)> {
    if rule.selects.kinds.is_empty() {
        return vec![("*".into(), "*".into())];
    }
    rule.selects
        .kinds
        .iter()
        .map(|k| match k.as_str().split_once('/') {
            Some((group, kind)) => (group.to_string(), kind.to_string()),
            None => ("*".into(), k.as_str().to_string()),
        })
        .collect()
}

/// The one literal value of a list of patterns, when it has exactly one; a note otherwise.
fn single(globs: &[Glob], what: &str, rule: &str, notes: &mut Vec<String>) -> Option<String> {
    match globs {
        [] => None,
        [one] if one.is_literal() => Some(one.as_str().to_string()),
        _ => {
            notes
                .push(format!("rule {rule}: its {what} patterns are not expressed; the entries apply to every {what}"));
            None
        }
    }
}

/// The rules' allowed and ignored fields as Argo CD `ignoreDifferences` entries.
///
/// ```
/// use fieldwise_core::ownership::policy::{emit, parse_policy};
/// let policy = parse_policy("apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- match: {kinds: [apps/Deployment]}\n  managers: [argocd]\n  allowed:\n  - fields: [.spec.replicas]\n    managers: [keda-operator]\n").unwrap();
/// let argo = emit::argocd(&policy);
/// assert_eq!(argo.value["ignoreDifferences"][0]["jqPathExpressions"][0], ".spec.replicas");
/// assert_eq!(argo.value["ignoreDifferences"][0]["managedFieldsManagers"][0], "keda-operator");
/// ```
pub fn argocd(policy: &Policy) -> Emitted {
    let mut notes = Vec::new();
    let mut entries = Vec::new();
    for rule in &policy.rules {
        if rule.selects.labels.is_some() {
            notes.push(format!(
                "rule {}: Argo CD cannot select by labels; its entries apply to every object of the kinds",
                rule.name
            ));
        }
        let namespace = single(&rule.selects.namespaces, "namespace", &rule.name, &mut notes);
        let name = single(&rule.selects.names, "name", &rule.name, &mut notes);
        for (fields, managers) in allowances(rule) {
            let mut paths = Vec::new();
            for field in fields {
                match steps(field) {
                    Some(s) => paths.push(jq(&s)),
                    None => notes.push(format!("rule {}: field {field} has no jq path here; left out", rule.name)),
                }
            }
            let mut names = Vec::new();
            for manager in managers {
                match manager {
                    ManagerPattern::Name(glob) if glob.is_literal() => names.push(glob.as_str().to_string()),
                    other => notes.push(format!(
                        "rule {}: manager {} is a class or glob, which managedFieldsManagers cannot name; left out",
                        rule.name,
                        other.as_str()
                    )),
                }
            }
            if paths.is_empty() {
                continue;
            }
            for (group, kind) in kinds(rule) {
                let mut entry = Map::new();
                // An empty group is the core group to Argo CD; `*` is any.
                entry.insert("group".into(), group.clone().into());
                entry.insert("kind".into(), kind.into());
                if let Some(n) = &name {
                    entry.insert("name".into(), n.clone().into());
                }
                if let Some(ns) = &namespace {
                    entry.insert("namespace".into(), ns.clone().into());
                }
                entry.insert("jqPathExpressions".into(), json!(paths));
                if !names.is_empty() {
                    entry.insert("managedFieldsManagers".into(), json!(names));
                }
                entries.push(Value::Object(entry));
            }
        }
    }
    Emitted { value: json!({"ignoreDifferences": entries}), notes }
}

/// A label selector as the string form a kustomize `Selector` takes: `app=web,tier in (a,b)`.
fn selector_text(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for r in &selector.match_expressions {
        parts.push(match r.operator {
            SelectorOperator::In => format!("{} in ({})", r.key, r.values.join(",")),
            SelectorOperator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
            SelectorOperator::Exists => r.key.clone(),
            SelectorOperator::DoesNotExist => format!("!{}", r.key),
        });
    }
    parts.join(",")
}

/// The rules' allowed and ignored fields as Flux helm-controller drift-ignore rules
/// (`driftDetection.ignore`). Flux ignores the paths whoever owns them: the managers are
/// the gate's alone.
pub fn flux(policy: &Policy) -> Emitted {
    let mut notes = Vec::new();
    let mut ignore = Vec::new();
    for rule in &policy.rules {
        let namespace = single(&rule.selects.namespaces, "namespace", &rule.name, &mut notes);
        let name = single(&rule.selects.names, "name", &rule.name, &mut notes);
        let mut paths = Vec::new();
        for (fields, _) in allowances(rule) {
            for field in fields {
                match steps(field).as_deref().and_then(json_pointer) {
                    Some(pointer) => paths.push(pointer),
                    None => notes.push(format!("rule {}: field {field} has no JSON pointer; left out", rule.name)),
                }
            }
        }
        if paths.is_empty() {
            continue;
        }
        let targets: Vec<(String, String)> = match rule.selects.kinds.is_empty() {
            true => vec![(String::new(), String::new())],
            false => kinds(rule),
        };
        for (group, kind) in targets {
            let mut target = Map::new();
            if !group.is_empty() && group != "*" {
                target.insert("group".into(), group.into());
            }
            if !kind.is_empty() && kind != "*" {
                target.insert("kind".into(), kind.into());
            }
            if let Some(n) = &name {
                target.insert("name".into(), n.clone().into());
            }
            if let Some(ns) = &namespace {
                target.insert("namespace".into(), ns.clone().into());
            }
            if let Some(labels) = &rule.selects.labels {
                target.insert("labelSelector".into(), selector_text(labels).into());
            }
            let mut entry = json!({"paths": paths});
            if !target.is_empty() {
                entry["target"] = Value::Object(target);
            }
            ignore.push(entry);
        }
    }
    Emitted { value: json!({"driftDetection": {"mode": "enabled", "ignore": ignore}}), notes }
}

/// What `tool` needs to leave one field of one object to `manager`: the policy "on this
/// object, `manager` may own `field`", emitted as [`argocd`] and [`flux`] emit any policy,
/// so a fight's fix ([`crate::ownership::fights`]) and `owners drift --emit` say the same.
///
/// ```
/// use fieldwise_core::ownership::policy::{emit, ObjectFacts};
/// use fieldwise_core::ownership::GitOpsTool;
/// let web = ObjectFacts { group: "apps", kind: "Deployment", namespace: "prod", name: "web", labels: None };
/// let argo = emit::allow_field(GitOpsTool::ArgoCd, &web, ".spec.template.metadata.annotations", "injector");
/// assert_eq!(argo.value["ignoreDifferences"][0]["managedFieldsManagers"][0], "injector");
/// ```
pub fn allow_field(tool: GitOpsTool, object: &ObjectFacts<'_>, field: &str, manager: &str) -> Emitted {
    let rule = Rule {
        name: format!("{}/{}", object.kind_text(), object.name),
        selects: ObjectMatch {
            // `/Kind` names the core group (empty), where `Kind` alone would be any group.
            kinds: vec![Glob::new(format!("{}/{}", object.group, object.kind))],
            namespaces: match object.namespace {
                "" => Vec::new(),
                namespace => vec![Glob::new(namespace)],
            },
            names: vec![Glob::new(object.name)],
            labels: None,
        },
        managers: Vec::new(),
        allowed: vec![Allowance {
            fields: vec![Glob::new(field)],
            managers: vec![ManagerPattern::Name(Glob::new(manager))],
        }],
        ignored: Vec::new(),
    };
    let policy = Policy { defaults: false, rules: vec![rule] };
    match tool {
        GitOpsTool::ArgoCd => argocd(&policy),
        GitOpsTool::Flux => flux(&policy),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::policy::parse_policy;

    const POLICY: &str = "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: web\n  match:\n    kinds: [apps/Deployment, Service]\n    namespaces: [prod]\n    labelSelector:\n      matchLabels: {app: web}\n      matchExpressions: [{key: tier, operator: NotIn, values: [db]}]\n  managers: [argocd]\n  allowed:\n  - fields: ['.spec.replicas', '.metadata.labels.app.kubernetes.io/version', '.spec.template.spec.containers[name=\"app\"].image', '.metadata.annotations.*']\n    managers: [keda-operator, controller]\n  ignored: ['.spec.*.x']\n";

    #[test]
    fn argo_cd_entries_per_kind_with_jq_paths_and_managers() {
        let emitted = argocd(&parse_policy(POLICY).unwrap());
        let entries = emitted.value["ignoreDifferences"].as_array().unwrap();
        assert_eq!(entries.len(), 2, "one per kind of the rule: {entries:?}");
        assert_eq!(
            entries[0],
            json!({"group": "apps", "kind": "Deployment", "namespace": "prod",
                   "jqPathExpressions": [".spec.replicas", ".metadata.labels[\"app.kubernetes.io/version\"]",
                                         ".spec.template.spec.containers[] | select(.name == \"app\") | .image",
                                         ".metadata.annotations"],
                   "managedFieldsManagers": ["keda-operator"]})
        );
        assert_eq!(
            (entries[1]["group"].as_str(), entries[1]["kind"].as_str()),
            (Some("*"), Some("Service")),
            "Kind alone: any group"
        );
        assert_eq!(
            emitted.notes,
            [
                "rule web: Argo CD cannot select by labels; its entries apply to every object of the kinds",
                "rule web: manager controller is a class or glob, which managedFieldsManagers cannot name; left out",
                "rule web: field .spec.*.x has no jq path here; left out",
            ]
        );
    }

    #[test]
    fn flux_rules_with_json_pointers_and_selectors() {
        let emitted = flux(&parse_policy(POLICY).unwrap());
        let ignore = emitted.value["driftDetection"]["ignore"].as_array().unwrap();
        assert_eq!(emitted.value["driftDetection"]["mode"], "enabled");
        assert_eq!(
            ignore[0],
            json!({"paths": ["/spec/replicas", "/metadata/labels/app.kubernetes.io~1version", "/metadata/annotations"],
                   "target": {"group": "apps", "kind": "Deployment", "namespace": "prod",
                              "labelSelector": "app=web,tier notin (db)"}})
        );
        assert_eq!(ignore[1]["target"]["kind"], "Service");
        assert!(ignore[1]["target"].get("group").is_none());
        assert_eq!(
            emitted.notes,
            [
                "rule web: field .spec.template.spec.containers[name=\"app\"].image has no JSON pointer; left out",
                "rule web: field .spec.*.x has no JSON pointer; left out",
            ]
        );
    }

    #[test]
    fn one_field_of_one_object_left_to_one_manager_is_the_policy_emitted() {
        let facts = |group, namespace| ObjectFacts { group, kind: "ConfigMap", namespace, name: "x", labels: None };
        let argo = allow_field(GitOpsTool::ArgoCd, &facts("", "shop"), ".data.bundle", "cainjector");
        assert_eq!(
            argo.value,
            json!({"ignoreDifferences": [{"group": "", "kind": "ConfigMap", "name": "x", "namespace": "shop",
                                          "jqPathExpressions": [".data.bundle"],
                                          "managedFieldsManagers": ["cainjector"]}]})
        );
        assert!(argo.notes.is_empty(), "{:?}", argo.notes);
        let flux = allow_field(GitOpsTool::Flux, &facts("", ""), ".metadata.labels.app.kubernetes.io/name", "labeller");
        assert_eq!(
            flux.value,
            json!({"driftDetection": {"mode": "enabled", "ignore": [{"paths": ["/metadata/labels/app.kubernetes.io~1name"],
                                                                      "target": {"kind": "ConfigMap", "name": "x"}}]}})
        );
        let web = ObjectFacts { group: "apps", kind: "Deployment", namespace: "prod", name: "web", labels: None };
        let flux = allow_field(GitOpsTool::Flux, &web, ".spec.template.spec.containers[name=\"app\"].image", "m");
        assert_eq!(flux.value["driftDetection"]["ignore"], json!([]), "no JSON pointer for a list item");
        assert_eq!(flux.notes.len(), 1, "{:?}", flux.notes);
    }

    #[test]
    fn field_patterns_tools_cannot_address_are_refused() {
        for pattern in [".spec.*.x", ".spec.ports[0]", "*", ".spec.a[=\"x\"]", ".spec.c[a=\"1\",b=\"2\"].x"] {
            assert_eq!(steps(&Glob::new(pattern)), None, "{pattern}");
        }
    }
}
