//! Reading a policy document: YAML (or JSON) as kubectl reads it, checked field by field,
//! every error naming the line it is on, the field, and what is expected there.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::glob::Glob;
use super::selector::{LabelSelector, Requirement, SelectorOperator};
use super::{Allowance, ManagerPattern, ObjectMatch, Policy, Rule, POLICY_API_VERSION, POLICY_KIND};
use crate::yaml::{self, FieldLines};

/// Why a policy cannot be used: where (the line from 1, when the text has lines, and the
/// field) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// The line the field is on.
    pub line: Option<usize>,
    /// The field, as `rules[0].managers[1]`.
    pub field: String,
    /// What is wrong, and what is expected.
    pub problem: String,
}

impl std::fmt::Display for PolicyError {
    /// `line 4: rules[0].managers: expected ...`, without the parts that are unknown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.problem)
    }
}

impl std::error::Error for PolicyError {}

/// Reads and validates a policy.
///
/// ```
/// let err = fieldwise_core::ownership::policy::parse_policy(
///     "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- managers: ci\n",
/// ).unwrap_err();
/// assert_eq!(err.to_string(), "line 4: rules[0].managers: expected a list of manager names, globs or classes (human, controller, applier)");
/// ```
pub fn parse_policy(text: &str) -> Result<Policy, PolicyError> {
    let reader = Reader { text, lines: std::cell::OnceCell::new() };
    let documents = yaml::read_stream(text).map_err(|e| PolicyError {
        line: Some(e.line),
        field: String::new(),
        problem: format!("not YAML: column {}: {}", e.column, e.problem),
    })?;
    // Found while reading each document (from the same parse): the text is parsed once.
    if let Some(field) = documents.iter().flat_map(|d| &d.duplicates).next() {
        return Err(reader.error(field, "written twice; write it once"));
    }
    let document = match documents.as_slice() {
        [one] => &one.value,
        [] => return Err(reader.error("", "the file is empty: expected an OwnershipPolicy document")),
        [_, second, ..] => {
            return Err(PolicyError {
                line: Some(second.line),
                field: String::new(),
                problem: "one OwnershipPolicy document per file".into(),
            })
        }
    };
    reader.policy(document)
}

struct Reader<'t> {
    text: &'t str,
    /// Where each field is written: found only when an error needs a line.
    lines: std::cell::OnceCell<FieldLines>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Reader<'_> {
    fn error(&self, field: &str, problem: impl Into<String>) -> PolicyError {
        let lines = self.lines.get_or_init(|| yaml::field_lines(self.text));
        PolicyError { line: lines.line_of(field), field: field.to_string(), problem: problem.into() }
    }

    /// A mapping with only `known` keys.
    fn mapping<'v>(&self, value: &'v Value, path: &str, known: &[&str]) -> Result<&'v Map<String, Value>, PolicyError> {
        let Value::Object(map) = value else { return Err(self.error(path, "expected a mapping")) };
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(
                self.error(&join(path, unknown), format!("unknown field; expected one of: {}", known.join(", ")))
            );
        }
        Ok(map)
    }

    fn string<'v>(&self, value: &'v Value, path: &str, what: &str) -> Result<&'v str, PolicyError> {
        match value {
            Value::String(s) if !s.is_empty() => Ok(s),
            _ => Err(self.error(path, format!("expected {what}"))),
        }
    }

    fn strings<'v>(&self, value: &'v Value, path: &str, what: &str) -> Result<Vec<&'v str>, PolicyError> {
        let Value::Array(items) = value else { return Err(self.error(path, format!("expected a list of {what}"))) };
        items.iter().enumerate().map(|(i, item)| self.string(item, &format!("{path}[{i}]"), what)).collect()
    }

    fn policy(&self, document: &Value) -> Result<Policy, PolicyError> {
        let map = self.mapping(document, "", &["apiVersion", "kind", "metadata", "defaults", "rules"])?;
        let text = |key: &str| map.get(key).and_then(Value::as_str);
        if text("apiVersion") != Some(POLICY_API_VERSION) {
            return Err(self.error("apiVersion", format!("expected apiVersion: {POLICY_API_VERSION}")));
        }
        if text("kind") != Some(POLICY_KIND) {
            return Err(self.error("kind", format!("expected kind: {POLICY_KIND}")));
        }
        let defaults = match map.get("defaults") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(self.error("defaults", "expected true or false")),
        };
        let rules = match map.get("rules") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                items.iter().enumerate().map(|(i, item)| self.rule(item, i)).collect::<Result<Vec<_>, _>>()?
            }
            Some(_) => return Err(self.error("rules", "expected a list of rules")),
        };
        let mut names = BTreeMap::new();
        for (i, rule) in rules.iter().enumerate() {
            if let Some(first) = names.insert(rule.name.as_str(), i) {
                return Err(self.error(
                    &format!("rules[{i}].name"),
                    format!("rules[{first}] has the name {:?} already; give each rule its own", rule.name),
                ));
            }
        }
        Ok(Policy { defaults, rules })
    }

    fn rule(&self, value: &Value, index: usize) -> Result<Rule, PolicyError> {
        let path = format!("rules[{index}]");
        let map = self.mapping(value, &path, &["name", "match", "managers", "allowed", "ignored"])?;
        let name = match map.get("name") {
            None => path.clone(),
            Some(v) => self.string(v, &join(&path, "name"), "a name")?.to_string(),
        };
        let selects = match map.get("match") {
            None => ObjectMatch::default(),
            Some(v) => self.object_match(v, &join(&path, "match"))?,
        };
        let managers = match map.get("managers") {
            None => Vec::new(),
            Some(v) => self.managers(v, &join(&path, "managers"))?,
        };
        let allowed = match map.get("allowed") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.allowance(item, &format!("{path}.allowed[{i}]")))
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(self.error(&join(&path, "allowed"), "expected a list of {fields: [...], managers: [...]}"))
            }
        };
        let ignored = match map.get("ignored") {
            None => Vec::new(),
            Some(v) => self.fields(v, &join(&path, "ignored"))?,
        };
        if managers.is_empty() && allowed.is_empty() && ignored.is_empty() {
            return Err(self.error(&path, "a rule needs managers, allowed or ignored fields"));
        }
        Ok(Rule { name, selects, managers, allowed, ignored })
    }

    fn object_match(&self, value: &Value, path: &str) -> Result<ObjectMatch, PolicyError> {
        let map = self.mapping(value, path, &["kinds", "namespaces", "names", "labelSelector"])?;
        let globs = |key: &str, what: &str| -> Result<Vec<Glob>, PolicyError> {
            match map.get(key) {
                None => Ok(Vec::new()),
                Some(v) => Ok(self.strings(v, &join(path, key), what)?.into_iter().map(Glob::new).collect()),
            }
        };
        Ok(ObjectMatch {
            kinds: globs("kinds", "kinds (group/Kind, or Kind in any group)")?,
            namespaces: globs("namespaces", "namespace names or globs")?,
            names: globs("names", "object names or globs")?,
            labels: map.get("labelSelector").map(|v| self.selector(v, &join(path, "labelSelector"))).transpose()?,
        })
    }

    fn selector(&self, value: &Value, path: &str) -> Result<LabelSelector, PolicyError> {
        let map = self.mapping(value, path, &["matchLabels", "matchExpressions"])?;
        let mut selector = LabelSelector::default();
        if let Some(labels) = map.get("matchLabels") {
            let labels_path = join(path, "matchLabels");
            let Value::Object(labels) = labels else { return Err(self.error(&labels_path, "expected a mapping")) };
            for (key, v) in labels {
                let v = v.as_str().ok_or_else(|| self.error(&join(&labels_path, key), "expected a string value"))?;
                selector.match_labels.insert(key.clone(), v.to_string());
            }
        }
        if let Some(expressions) = map.get("matchExpressions") {
            let list_path = join(path, "matchExpressions");
            let Value::Array(items) = expressions else { return Err(self.error(&list_path, "expected a list")) };
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{list_path}[{i}]");
                let e = self.mapping(item, &item_path, &["key", "operator", "values"])?;
                let key = self.string(e.get("key").unwrap_or(&Value::Null), &join(&item_path, "key"), "a label key")?;
                let op_path = join(&item_path, "operator");
                let operator = e
                    .get("operator")
                    .and_then(Value::as_str)
                    .and_then(SelectorOperator::from_name)
                    .ok_or_else(|| self.error(&op_path, "expected In, NotIn, Exists or DoesNotExist"))?;
                let values = match e.get("values") {
                    None => Vec::new(),
                    Some(v) => self.strings(v, &join(&item_path, "values"), "label values")?,
                };
                let needs_values = matches!(operator, SelectorOperator::In | SelectorOperator::NotIn);
                if needs_values == values.is_empty() {
                    let problem = if needs_values {
                        "In and NotIn need values"
                    } else {
                        "Exists and DoesNotExist take no values"
                    };
                    return Err(self.error(&item_path, problem));
                }
                selector.match_expressions.push(Requirement {
                    key: key.to_string(),
                    operator,
                    values: values.into_iter().map(String::from).collect(),
                });
            }
        }
        Ok(selector)
    }

    fn managers(&self, value: &Value, path: &str) -> Result<Vec<ManagerPattern>, PolicyError> {
        let what = "manager names, globs or classes (human, controller, applier)";
        Ok(self.strings(value, path, what)?.into_iter().map(ManagerPattern::parse).collect())
    }

    fn fields(&self, value: &Value, path: &str) -> Result<Vec<Glob>, PolicyError> {
        let words = self.strings(value, path, "fields in kubectl's notation, e.g. .spec.replicas")?;
        for (i, word) in words.iter().enumerate() {
            if !word.starts_with(['.', '*']) {
                return Err(self.error(
                    &format!("{path}[{i}]"),
                    format!("a field starts with `.`, as kubectl owners prints it: .{word}"),
                ));
            }
        }
        Ok(words.into_iter().map(Glob::new).collect())
    }

    fn allowance(&self, value: &Value, path: &str) -> Result<Allowance, PolicyError> {
        let map = self.mapping(value, path, &["fields", "managers"])?;
        let fields_path = join(path, "fields");
        let managers_path = join(path, "managers");
        let fields = self.fields(map.get("fields").unwrap_or(&Value::Null), &fields_path)?;
        let managers = self.managers(map.get("managers").unwrap_or(&Value::Null), &managers_path)?;
        if fields.is_empty() {
            return Err(self.error(&fields_path, "expected at least one field"));
        }
        if managers.is_empty() {
            return Err(self.error(&managers_path, "expected at least one manager"));
        }
        Ok(Allowance { fields, managers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::policy::Glob;

    const HEAD: &str = "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\n";

    fn error(body: &str) -> String {
        parse_policy(&format!("{HEAD}{body}")).unwrap_err().to_string()
    }

    #[test]
    fn a_whole_policy_is_read() {
        let text = format!(
            "{HEAD}defaults: false\nrules:\n- name: web\n  match:\n    kinds: [apps/Deployment]\n    namespaces: [prod-*]\n    names: [web-*]\n    labelSelector:\n      matchLabels: {{app: web}}\n      matchExpressions:\n      - {{key: tier, operator: In, values: [front]}}\n  managers: [argocd, controller]\n  allowed:\n  - fields: [.spec.replicas]\n    managers: [kube-controller-manager]\n  ignored: [.metadata.annotations.note]\n"
        );
        let policy = parse_policy(&text).unwrap();
        assert!(!policy.defaults);
        let rule = &policy.rules[0];
        assert_eq!(rule.name, "web");
        assert_eq!(rule.selects.kinds, [Glob::new("apps/Deployment")]);
        assert_eq!(rule.selects.labels.as_ref().unwrap().match_expressions[0].operator, SelectorOperator::In);
        assert_eq!(rule.managers, [ManagerPattern::Name(Glob::new("argocd")), ManagerPattern::Class("controller")]);
        assert_eq!(rule.allowed[0].fields, [Glob::new(".spec.replicas")]);
        assert_eq!(rule.ignored, [Glob::new(".metadata.annotations.note")]);
        assert_eq!(parse_policy(&crate::yaml::to_yaml(&policy.to_value())).unwrap(), policy, "written and read back");
    }

    #[test]
    fn every_error_names_its_line_and_field() {
        assert_eq!(
            error("rules:\n- name: a\n  managers: [ci]\n  matchh: {}\n"),
            "line 6: rules[0].matchh: unknown field; expected one of: name, match, managers, allowed, ignored"
        );
        assert_eq!(
            error("rules:\n- managers: [ci]\n  allowed:\n  - fields: [spec.replicas]\n    managers: [hpa]\n"),
            "line 6: rules[0].allowed[0].fields[0]: a field starts with `.`, as kubectl owners prints it: .spec.replicas"
        );
        assert_eq!(
            error("rules:\n- name: a\n  managers: [ci]\n- name: a\n  managers: [ci]\n"),
            "line 6: rules[1].name: rules[0] has the name \"a\" already; give each rule its own"
        );
        assert_eq!(
            error("rules:\n- managers: [ci]\n  match:\n    labelSelector:\n      matchExpressions:\n      - {key: a, operator: In}\n"),
            "line 8: rules[0].match.labelSelector.matchExpressions[0]: In and NotIn need values"
        );
        assert_eq!(
            error("rules:\n- match: {kinds: [ConfigMap]}\n"),
            "line 4: rules[0]: a rule needs managers, allowed or ignored fields"
        );
        assert_eq!(error("rules: []\nrules: []\n"), "line 3: rules: written twice; write it once");
        assert_eq!(
            parse_policy("apiVersion: v1\nkind: OwnershipPolicy\n").unwrap_err().to_string(),
            "line 1: apiVersion: expected apiVersion: fieldwise.dev/v1alpha1"
        );
        assert_eq!(parse_policy("a: [\n").unwrap_err().line, Some(2));
        assert_eq!(
            parse_policy(&format!("{HEAD}---\n{HEAD}")).unwrap_err().to_string(),
            "line 4: one OwnershipPolicy document per file"
        );
    }
}
