//! Greedy shrinking: remove object keys and list items from a case's
//! documents, one at a time, keeping each removal after which the case still
//! shows the same disagreement, until no removal does.

use serde_json::Value;

/// Case fields that say what to do rather than what to do it to; never shrunk.
const FIXED_FIELDS: &[&str] = &["op", "gvk", "overwrite", "set_op", "id"];

/// A path into a value: object keys and list indices.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every removable position of `v`, shallow first (big cuts are tried first).
fn positions(v: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut frontier = vec![(Vec::new(), v)];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for (path, value) in frontier {
            match value {
                Value::Object(m) => {
                    for (k, child) in m {
                        let mut p = path.clone();
                        p.push(Step::Key(k.clone()));
                        out.push(p.clone());
                        next.push((p, child));
                    }
                }
                Value::Array(a) => {
                    for (i, child) in a.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(Step::Index(i));
                        out.push(p.clone());
                        next.push((p, child));
                    }
                }
                _ => {}
            }
        }
        frontier = next;
    }
    out
}

/// `v` without the element at `path`, or `None` when the path is gone.
fn without(v: &Value, path: &[Step]) -> Option<Value> {
    let mut out = v.clone();
    let (last, parents) = path.split_last()?;
    let mut at = &mut out;
    for step in parents {
        at = match step {
            Step::Key(k) => at.get_mut(k.as_str())?,
            Step::Index(i) => at.get_mut(*i)?,
        };
    }
    match (at, last) {
        (Value::Object(m), Step::Key(k)) => m.shift_remove(k.as_str()).map(|_| ()),
        (Value::Array(a), Step::Index(i)) if *i < a.len() => {
            a.remove(*i);
            Some(())
        }
        _ => None,
    }?;
    Some(out)
}

/// One field of a case as a JSON tree to shrink, and how to put it back:
/// FieldsV1 texts are shrunk as the JSON they hold.
fn as_tree(v: &Value) -> Option<(Value, bool)> {
    match v {
        Value::String(text) => serde_json::from_str::<Value>(text).ok().map(|t| (t, true)),
        other => Some((other.clone(), false)),
    }
}

/// The smallest case found (within `budget` checks) for which `still_fails` holds.
pub fn shrink(case: &Value, budget: usize, mut still_fails: impl FnMut(&Value) -> bool) -> Value {
    let mut best = case.clone();
    let mut checks = 0;
    let fields: Vec<String> = match case {
        Value::Object(m) => m.keys().filter(|k| !FIXED_FIELDS.contains(&k.as_str())).cloned().collect(),
        _ => return best,
    };
    let mut progress = true;
    while progress && checks < budget {
        progress = false;
        for field in &fields {
            let Some((tree, is_text)) = best.get(field).and_then(as_tree) else { continue };
            for path in positions(&tree) {
                if checks >= budget {
                    break;
                }
                let Some(smaller) = without(&tree, &path) else { continue };
                let mut candidate = best.clone();
                let encoded = if is_text { Value::String(smaller.to_string()) } else { smaller };
                candidate[field.as_str()] = encoded;
                checks += 1;
                if still_fails(&candidate) {
                    best = candidate;
                    progress = true;
                    break; // positions changed: start this field again
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shrinks_to_the_culprit() {
        let case = json!({"op": "x", "doc": {"a": [1, 2, {"bad": true}], "b": {"c": 1}}, "patch": {"d": 1}});
        let small = shrink(&case, 1000, |c| c.to_string().contains("bad"));
        assert_eq!(small, json!({"op": "x", "doc": {"a": [{"bad": true}]}, "patch": {}}));
    }

    #[test]
    fn shrinks_fields_v1_texts() {
        let case = json!({"op": "fieldpath.roundtrip", "fieldsV1": r#"{"f:a":{},"f:b":{"f:bad":{}}}"#});
        let small = shrink(&case, 1000, |c| c["fieldsV1"].as_str().is_some_and(|t| t.contains("bad")));
        assert_eq!(small["fieldsV1"], json!(r#"{"f:b":{"f:bad":{}}}"#));
    }

    #[test]
    fn respects_budget() {
        let case = json!({"op": "x", "doc": [1, 2, 3, 4]});
        let mut calls = 0;
        shrink(&case, 2, |_| {
            calls += 1;
            false
        });
        assert_eq!(calls, 2);
    }
}
