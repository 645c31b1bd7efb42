//! A JSON Patch path like `/spec/template/spec/containers/0/image` names a
//! *position*. If someone reorders or removes containers between the preview
//! and the write, position 0 is another container. For lists whose entries
//! have a key (containers by `name`, container ports by `containerPort` and
//! `protocol`), the guard is a `test` of every key field; for sets
//! (`finalizers`), a `test` of the value. The guards go first in the patch, so
//! the write fails if the list moved.

use serde_json::{json, Value};

use super::{Finding, Severity};
use crate::json_patch::{escape_token, Operation};
use crate::schema::{Field, ListKind, Schema, TypeDef, TypeId};

/// The patch with key guards prepended, and one finding per guard.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedPatch {
    /// `test` operations first, then the original operations.
    pub operations: Vec<Value>,
    /// What was guarded and why.
    pub findings: Vec<Finding>,
}

/// Adds `test`s of the entry's identity before any operation whose path (or `from`)
/// indexes into a keyed list of `live`: every key field of a list map (all of a
/// composite key, like container ports' `containerPort` and `protocol`), the value
/// itself for a set.
pub fn guard_positions(ops: &[Operation], live: &Value, schema: &Schema, ty: Option<TypeId>) -> GuardedPatch {
    let mut guards: Vec<(String, Value)> = Vec::new();
    let mut findings = Vec::new();
    for op in ops {
        for pointer in [Some(op.path()), op.from()].into_iter().flatten() {
            let Some(tokens) = pointer.tokens() else { continue };
            for position in keyed_positions(tokens, live, schema, ty) {
                if position.tests.iter().all(|(path, _)| guards.iter().any(|(p, _)| p == path)) {
                    continue;
                }
                let message = match &position.identity {
                    Identity::Keys(keys) => {
                        let shown: Vec<String> = position
                            .tests
                            .iter()
                            .zip(keys)
                            .map(|((_, value), key)| format!("{key}={}", super::short(value)))
                            .collect();
                        format!(
                            "{} is a position in a list keyed by {}: added a test that it is still {}, so the write fails if the list moved",
                            position.at,
                            keys.join(" and "),
                            shown.join(", ")
                        )
                    }
                    Identity::Value => format!(
                        "{} is a position in a set: added a test that it is still {}, so the write fails if the list moved",
                        position.at,
                        super::short(&position.tests[0].1)
                    ),
                };
                findings.push(Finding::new(Severity::Info, position.dotted, message));
                for (path, value) in position.tests {
                    if !guards.iter().any(|(p, _)| *p == path) {
                        guards.push((path, value));
                    }
                }
            }
        }
    }
    let mut operations: Vec<Value> =
        guards.into_iter().map(|(path, value)| json!({"op": "test", "path": path, "value": value})).collect();
    operations.extend(ops.iter().map(Operation::to_value));
    GuardedPatch { operations, findings }
}

/// How the entries of a list are told apart.
#[derive(Debug, Clone, PartialEq)]
enum Identity {
    /// By these key fields (a list map, or a strategic merge key).
    Keys(Vec<String>),
    /// By value (a set).
    Value,
}

/// One index into a keyed list along a path: the tests that pin its entry, and where it is.
struct Position {
    identity: Identity,
    /// `(test path, value)`, one per key field (in key order), or one of the entry for a set.
    tests: Vec<(String, Value)>,
    /// The entry as a dotted field path, for the finding.
    dotted: String,
    /// The entry as a JSON Pointer (`/spec/template/spec/containers/0`), for the message:
    /// a path through several keyed lists has one position in each.
    at: String,
}

/// Every index into a keyed list along `tokens`, with the tests that pin its entry.
fn keyed_positions(tokens: &[String], live: &Value, schema: &Schema, ty: Option<TypeId>) -> Vec<Position> {
    let mut out = Vec::new();
    let mut current = live;
    let mut current_ty = ty;
    let mut identity: Option<Identity> = None;
    let mut pointer = String::new();
    let mut dotted = String::new();
    for token in tokens {
        match current {
            Value::Array(items) => {
                let Ok(index) = token.parse::<usize>() else { break };
                let Some(item) = items.get(index) else { break };
                let entry = match &identity {
                    Some(Identity::Keys(keys)) if item.is_object() => {
                        let values: Vec<Value> =
                            keys.iter().map(|k| item.get(k).cloned().unwrap_or(Value::Null)).collect();
                        let shown: Vec<String> = keys
                            .iter()
                            .zip(&values)
                            .map(|(k, v)| {
                                format!("{k}={}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                            })
                            .collect();
                        Some(Position {
                            identity: Identity::Keys(keys.clone()),
                            tests: keys
                                .iter()
                                .zip(values)
                                .map(|(k, v)| (format!("{pointer}/{index}/{}", escape_token(k)), v))
                                .collect(),
                            dotted: format!("{dotted}[{}]", shown.join(",")),
                            at: format!("{pointer}/{index}"),
                        })
                    }
                    Some(Identity::Value) if !item.is_object() && !item.is_array() => Some(Position {
                        identity: Identity::Value,
                        tests: vec![(format!("{pointer}/{index}"), item.clone())],
                        dotted: format!(
                            "{dotted}[={}]",
                            item.as_str().map(str::to_string).unwrap_or_else(|| item.to_string())
                        ),
                        at: format!("{pointer}/{index}"),
                    }),
                    _ => None,
                };
                // Deeper positions are named under this entry: `containers[name=app].ports[...]`.
                match entry {
                    Some(position) => {
                        dotted.clone_from(&position.dotted);
                        out.push(position);
                    }
                    None => dotted.push_str(&format!("[{index}]")),
                }
                current = item;
                current_ty = current_ty.and_then(|t| schema.items(t));
                identity = None;
            }
            Value::Object(map) => {
                let Some(child) = map.get(token) else { break };
                let field = current_ty.and_then(|t| schema.field(t, token));
                let child_ty = field.map(|f| f.ty).or_else(|| current_ty.and_then(|t| schema.values(t)));
                identity = list_identity(schema, child_ty, field);
                current = child;
                current_ty = child_ty;
                if !dotted.is_empty() {
                    dotted.push('.');
                }
                dotted.push_str(token);
            }
            _ => break,
        }
        pointer.push('/');
        pointer.push_str(&escape_token(token));
    }
    out
}

/// How the entries of the list of type `ty` (the value of `field`, if a struct field) are
/// told apart: the list-map keys (all of them), else the strategic merge key; by value for
/// a set, or a list of scalars merged by strategic merge patch. `None`: by position only.
fn list_identity(schema: &Schema, ty: Option<TypeId>, field: Option<&Field>) -> Option<Identity> {
    let list = match ty.and_then(|t| schema.try_get(t)) {
        Some(TypeDef::List(list)) => list,
        _ => return None,
    };
    match &list.list_kind {
        ListKind::Map(keys) if !keys.is_empty() => Some(Identity::Keys(keys.clone())),
        ListKind::Set => Some(Identity::Value),
        _ => match field {
            Some(Field { merge_key: Some(key), .. }) => Some(Identity::Keys(vec![key.clone()])),
            Some(f) if f.patch_strategy.merge => Some(Identity::Value),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_patch;
    use crate::schema::{builtin, Gvk};

    #[test]
    fn guards_an_index_into_containers_by_name() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "busybox", "image": "busybox:1.28"}]}}}});
        let ops = json_patch::parse(&json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.36"}
        ]))
        .unwrap();
        let guarded = guard_positions(&ops, &live, schema, ty);
        assert_eq!(
            guarded.operations[0],
            json!({"op": "test", "path": "/spec/template/spec/containers/0/name", "value": "busybox"})
        );
        assert_eq!(guarded.operations.len(), 2);
        assert_eq!(guarded.findings[0].path, "spec.template.spec.containers[name=busybox]");
        // The guard passes on the previewed object and fails once the list moved.
        let patch = Value::Array(guarded.operations.clone());
        assert!(json_patch::apply(&live, &patch).is_ok());
        let moved = json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar"}, {"name": "busybox"}]}}}});
        assert!(json_patch::apply(&moved, &patch).is_err());
    }

    #[test]
    fn each_position_along_a_path_is_named_by_its_own_pointer() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}}}});
        let ops = json_patch::parse(&json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/env/1/value", "value": "3"}
        ]))
        .unwrap();
        let findings = guard_positions(&ops, &live, schema, ty).findings;
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert!(
            messages[0].starts_with("/spec/template/spec/containers/0 is a position in a list keyed by name"),
            "{messages:?}"
        );
        assert!(messages[0].contains("name=\"busybox\""), "{messages:?}");
        assert!(
            messages[1].starts_with("/spec/template/spec/containers/0/env/1 is a position in a list keyed by name"),
            "{messages:?}"
        );
        assert!(messages[1].contains("name=\"B\""), "{messages:?}");
        assert_eq!(findings[1].path, "spec.template.spec.containers[name=busybox].env[name=B]");
    }

    #[test]
    fn no_guard_for_unkeyed_lists_or_appends() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "args": ["x"]}]}}}});
        let ops = json_patch::parse(&json!([
            {"op": "add", "path": "/spec/template/spec/containers/-", "value": {"name": "c"}}
        ]))
        .unwrap();
        assert!(guard_positions(&ops, &live, schema, ty).findings.is_empty());
        // args are an atomic list of strings: a position there is only a position.
        let ops = json_patch::parse(&json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/args/0", "value": "y"}
        ]))
        .unwrap();
        let guarded = guard_positions(&ops, &live, schema, ty);
        assert_eq!(guarded.operations.len(), 2, "only the container's name: {:?}", guarded.operations);
        assert_eq!(guarded.operations[0]["path"], "/spec/template/spec/containers/0/name");
    }

    #[test]
    fn composite_keys_are_guarded_on_every_key_field_and_sets_on_the_value() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"metadata": {"finalizers": ["a/x", "b"]},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "ports": [
                {"containerPort": 53, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP", "name": "dns"}]}]}}}});
        let ops = json_patch::parse(&json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/ports/1/name", "value": "dns-udp"},
            {"op": "remove", "path": "/metadata/finalizers/0"}
        ]))
        .unwrap();
        let guarded = guard_positions(&ops, &live, schema, ty);
        let tests: Vec<(String, Value)> = guarded
            .operations
            .iter()
            .filter(|op| op["op"] == "test")
            .map(|op| (op["path"].as_str().unwrap_or_default().to_string(), op["value"].clone()))
            .collect();
        assert_eq!(
            tests,
            [
                ("/spec/template/spec/containers/0/name".to_string(), json!("app")),
                ("/spec/template/spec/containers/0/ports/1/containerPort".to_string(), json!(53)),
                ("/spec/template/spec/containers/0/ports/1/protocol".to_string(), json!("UDP")),
                ("/metadata/finalizers/0".to_string(), json!("a/x")),
            ]
        );
        let paths: Vec<&str> = guarded.findings.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.template.spec.containers[name=app]",
                "spec.template.spec.containers[name=app].ports[containerPort=53,protocol=UDP]",
                "metadata.finalizers[=a/x]"
            ]
        );
        assert!(
            guarded.findings[1].message.contains("keyed by containerPort and protocol"),
            "{}",
            guarded.findings[1].message
        );
        // The guards pass on the previewed object; the TCP entry at position 1 (the list moved) fails them.
        let patch = Value::Array(guarded.operations.clone());
        assert!(json_patch::apply(&live, &patch).is_ok());
        let mut swapped = live.clone();
        swapped["spec"]["template"]["spec"]["containers"][0]["ports"] = json!([
            {"containerPort": 53, "protocol": "UDP", "name": "dns"}, {"containerPort": 53, "protocol": "TCP"}]);
        assert!(json_patch::apply(&swapped, &patch).is_err(), "same containerPort, other protocol");
        let mut finalizers = live.clone();
        finalizers["metadata"]["finalizers"] = json!(["b", "a/x"]);
        assert!(json_patch::apply(&finalizers, &patch).is_err());
    }
}
