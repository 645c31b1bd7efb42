//! Label selectors as Kubernetes writes them in objects (`matchLabels` and
//! `matchExpressions`, upstream's `metav1.LabelSelector`): all requirements must hold, and
//! an empty selector matches everything, as `metav1.LabelSelectorAsSelector` reads one.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// One `matchExpressions` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// How the key and values are compared.
    pub operator: SelectorOperator,
    /// The values of `In` and `NotIn` (empty for the others).
    pub values: Vec<String>,
}

/// The operators of `matchExpressions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectorOperator {
    /// The label is set to one of the values.
    In,
    /// The label is not set, or set to none of the values.
    NotIn,
    /// The label is set.
    Exists,
    /// The label is not set.
    DoesNotExist,
}

impl SelectorOperator {
    /// Every operator, as written.
    pub const ALL: [SelectorOperator; 4] =
        [SelectorOperator::In, SelectorOperator::NotIn, SelectorOperator::Exists, SelectorOperator::DoesNotExist];

    /// The word in YAML: `In`, `NotIn`, `Exists`, `DoesNotExist`.
    pub fn name(self) -> &'static str {
        match self {
            SelectorOperator::In => "In",
            SelectorOperator::NotIn => "NotIn",
            SelectorOperator::Exists => "Exists",
            SelectorOperator::DoesNotExist => "DoesNotExist",
        }
    }

    /// The operator a word names.
    pub fn from_name(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.name() == word)
    }
}

/// `matchLabels` and `matchExpressions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Labels that must be set to exactly these values.
    pub match_labels: BTreeMap<String, String>,
    /// Further requirements.
    pub match_expressions: Vec<Requirement>,
}

impl LabelSelector {
    /// Whether an object with `labels` is selected.
    ///
    /// ```
    /// use fieldwise_core::ownership::policy::LabelSelector;
    /// let mut selector = LabelSelector::default();
    /// selector.match_labels.insert("app".into(), "web".into());
    /// let labels = serde_json::json!({"app": "web", "tier": "front"});
    /// assert!(selector.matches(labels.as_object()));
    /// assert!(!selector.matches(None));
    /// ```
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.match_labels.iter().all(|(k, v)| label(k) == Some(v.as_str()))
            && self.match_expressions.iter().all(|r| {
                let value = label(&r.key);
                match r.operator {
                    SelectorOperator::In => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                    SelectorOperator::NotIn => value.is_none_or(|v| !r.values.iter().any(|x| x == v)),
                    SelectorOperator::Exists => value.is_some(),
                    SelectorOperator::DoesNotExist => value.is_none(),
                }
            })
    }

    /// The selector as YAML writes it.
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        if !self.match_labels.is_empty() {
            out.insert("matchLabels".into(), json!(self.match_labels));
        }
        if !self.match_expressions.is_empty() {
            let expressions: Vec<Value> = self
                .match_expressions
                .iter()
                .map(|r| {
                    let mut e = json!({"key": r.key, "operator": r.operator.name()});
                    if !r.values.is_empty() {
                        e["values"] = json!(r.values);
                    }
                    e
                })
                .collect();
            out.insert("matchExpressions".into(), Value::Array(expressions));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(key: &str, operator: SelectorOperator, values: &[&str]) -> Requirement {
        Requirement { key: key.into(), operator, values: values.iter().map(|v| v.to_string()).collect() }
    }

    #[test]
    fn every_operator_as_kubernetes_reads_it() {
        let labels = json!({"app": "web", "tier": "front"});
        let labels = labels.as_object();
        for (req, expected) in [
            (requirement("tier", SelectorOperator::In, &["front", "back"]), true),
            (requirement("tier", SelectorOperator::In, &["back"]), false),
            (requirement("tier", SelectorOperator::NotIn, &["back"]), true),
            (requirement("missing", SelectorOperator::NotIn, &["x"]), true),
            (requirement("app", SelectorOperator::Exists, &[]), true),
            (requirement("app", SelectorOperator::DoesNotExist, &[]), false),
        ] {
            let selector = LabelSelector { match_expressions: vec![req.clone()], ..LabelSelector::default() };
            assert_eq!(selector.matches(labels), expected, "{req:?}");
        }
        assert!(LabelSelector::default().matches(None), "an empty selector selects everything");
    }
}
