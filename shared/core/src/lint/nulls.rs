//! `null` in a merge or strategic patch removes a field, and if the field has a
//! server-side default, the server puts the default right back:
//! `{"spec":{"replicas":null}}` gives 1 replica, not 0 and not "unchanged".

use serde_json::Value;

use super::{dotted, short, Finding, Severity};

/// Field paths the patch sets to `null`, through maps only (directive keys
/// like `$patch` are skipped; entries of lists are matched by key elsewhere).
pub fn null_paths(patch: &Value) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    walk(patch, &mut Vec::new(), &mut out);
    out
}

fn walk(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Value::Object(map) = value else { return };
    for (key, child) in map {
        if key.starts_with('$') {
            continue;
        }
        path.push(key.clone());
        match child {
            Value::Null => out.push(path.clone()),
            Value::Object(_) => walk(child, path, out),
            _ => {}
        }
        path.pop();
    }
}

/// Compares the nulls of a patch with the object the server would store
/// (a server-side dry-run result): a field that is still there was reset to
/// its default, not removed.
pub fn null_resets(patch: &Value, server_result: &Value) -> Vec<Finding> {
    null_paths(patch)
        .into_iter()
        .filter_map(|path| {
            let value = path.iter().try_fold(server_result, |v, key| v.get(key))?;
            let where_ = dotted(&path);
            Some(
                Finding::new(
                    Severity::Warning,
                    &where_,
                    format!("null does not remove {where_}: the server resets it to its default ({})", short(value)),
                )
                .with_fix(format!("set {where_} to the value you want instead of null")),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_nulls_through_maps_only() {
        let patch = json!({"spec": {"replicas": null, "template": {"metadata": {"labels": {"a": null}}}, "$patch": null},
                           "list": [{"x": null}]});
        assert_eq!(
            null_paths(&patch),
            vec![
                vec!["spec".to_string(), "replicas".to_string()],
                vec!["spec".into(), "template".into(), "metadata".into(), "labels".into(), "a".into()]
            ]
        );
    }

    #[test]
    fn a_field_still_present_after_null_was_reset_to_its_default() {
        let patch = json!({"spec": {"replicas": null, "paused": null}});
        let result = json!({"spec": {"replicas": 1}});
        let findings = null_resets(&patch, &result);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "spec.replicas");
        assert!(findings[0].message.contains("resets it to its default (1)"), "{}", findings[0].message);
    }
}
