//! A server dry run of a field guard that met a newer version of the object than the one
//! the change was planned on.
//!
//! The dry run's result is the change applied to the object as it was when the request
//! arrived. When another writer changed the object after the read the plan is built on,
//! that result holds their change too, and shown as the preview it would pass it off as this
//! patch's (issue #28.7). A field guard does not need the versions to be the same to be
//! compared: its `test`s passed, so every value the write depends on was as planned, and
//! where the write writes, the server's values are this change's (with the server's
//! defaulting and admission). [`server_values_on_plan`] takes exactly those values from the
//! dry run into the local plan, and nothing else; on the same version the dry run's whole
//! result is used instead, so nothing is lost then.

use serde_json::Value;

use super::Appended;
use crate::json_patch::unescape_token;

/// The planned result with the server's values where `patch` (the guard's JSON Patch that was
/// dry-run) writes: each `add` or `replace` path's value from `server` (removed when the server
/// has none), and each entry added at an end of a list (`appended`) as the server has it.
pub fn server_values_on_plan(planned: &Value, server: &Value, patch: &Value, appended: &[Appended]) -> Value {
    let mut result = planned.clone();
    for op in patch.as_array().into_iter().flatten() {
        let (Some(kind), Some(path)) = (op["op"].as_str(), op["path"].as_str()) else { continue };
        if !matches!(kind, "add" | "replace") || path.ends_with("/-") {
            continue;
        }
        match server.pointer(path) {
            Some(value) => set(&mut result, path, value.clone()),
            None => remove(&mut result, path),
        }
    }
    for added in appended {
        let (Some(&ours), Some(&theirs)) = (added.occurrences(planned).last(), added.occurrences(server).last()) else {
            continue;
        };
        let (ours, theirs) = (format!("{}/{ours}", added.list), format!("{}/{theirs}", added.list));
        if let Some(value) = server.pointer(&theirs) {
            set(&mut result, &ours, value.clone());
        }
    }
    result
}

fn set(object: &mut Value, path: &str, value: Value) {
    if let Some(slot) = object.pointer_mut(path) {
        *slot = value;
        return;
    }
    // A member the plan does not have (the server added it at a written path's parent).
    let Some((parent, last)) = path.rsplit_once('/') else { return };
    let Some(Value::Object(map)) = object.pointer_mut(parent) else { return };
    map.insert(unescape_token(last), value);
}

fn remove(object: &mut Value, path: &str) {
    let Some((parent, last)) = path.rsplit_once('/') else { return };
    let key = unescape_token(last);
    match object.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.remove(&key);
        }
        Some(Value::Array(list)) => {
            if let Ok(i) = key.parse::<usize>() {
                if i < list.len() {
                    list.remove(i);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::write::guard::Identity;

    #[test]
    fn only_the_written_paths_come_from_the_server() {
        // Planned on {a}: add label mine. The dry run met {a, other} and defaulted mine's value.
        let planned = json!({"metadata": {"labels": {"a": "1", "mine": "yes"}}});
        let server = json!({"metadata": {"labels": {"a": "1", "other": "was-here", "mine": "YES"}}});
        let patch = json!([{"op": "test", "path": "/metadata/labels/mine", "value": null},
                           {"op": "add", "path": "/metadata/labels/mine", "value": "yes"}]);
        assert_eq!(
            server_values_on_plan(&planned, &server, &patch, &[]),
            json!({"metadata": {"labels": {"a": "1", "mine": "YES"}}})
        );
    }

    #[test]
    fn an_entry_added_at_the_end_is_taken_as_the_server_has_it() {
        let planned = json!({"env": [{"name": "A"}, {"name": "MINE", "value": "1"}]});
        let server = json!({"env": [{"name": "A"}, {"name": "OTHER"}, {"name": "MINE", "value": "1", "x": true}]});
        let added = Appended {
            list: "/env".into(),
            identity: Identity::Keys(vec![("name".into(), json!("MINE"))]),
            at_front: false,
            entry: json!({"name": "MINE", "value": "1"}),
        };
        let patch = json!([{"op": "add", "path": "/env/-", "value": {"name": "MINE", "value": "1"}}]);
        assert_eq!(
            server_values_on_plan(&planned, &server, &patch, &[added]),
            json!({"env": [{"name": "A"}, {"name": "MINE", "value": "1", "x": true}]})
        );
    }
}
