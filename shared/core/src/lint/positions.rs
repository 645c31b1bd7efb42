//! A JSON Patch path like `/spec/template/spec/containers/0/image` names a
//! *position*. If someone reorders or removes containers between the preview
//! and the write, position 0 is another container. For lists whose entries
//! have a key (containers by `name`), the guard is a `test` of that key,
//! placed first in the patch so the write fails if the list moved.

use serde_json::{json, Value};

use super::{Finding, Severity};
use crate::json_patch::{escape_token, Operation};
use crate::schema::{ListKind, Schema, TypeDef, TypeId};

/// The patch with key guards prepended, and one finding per guard.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardedPatch {
    /// `test` operations first, then the original operations.
    pub operations: Vec<Value>,
    /// What was guarded and why.
    pub findings: Vec<Finding>,
}

/// Adds a `test` of the entry's key before any operation whose path (or `from`)
/// indexes into a keyed list of `live`.
pub fn guard_positions(ops: &[Operation], live: &Value, schema: &Schema, ty: Option<TypeId>) -> GuardedPatch {
    let mut guards: Vec<(String, Value)> = Vec::new();
    let mut findings = Vec::new();
    for op in ops {
        for pointer in [Some(op.path()), op.from()].into_iter().flatten() {
            let Some(tokens) = pointer.tokens() else { continue };
            for (test_path, key, value, where_) in keyed_positions(tokens, live, schema, ty) {
                if guards.iter().any(|(p, _)| *p == test_path) {
                    continue;
                }
                findings.push(Finding::new(
                    Severity::Info,
                    where_.clone(),
                    format!(
                        "{} is a position in a list keyed by {key}: added a test that it is still {key}={}, so the write fails if the list moved",
                        pointer.as_str(),
                        super::short(&value)
                    ),
                ));
                guards.push((test_path, value));
            }
        }
    }
    let mut operations: Vec<Value> =
        guards.into_iter().map(|(path, value)| json!({"op": "test", "path": path, "value": value})).collect();
    operations.extend(ops.iter().map(Operation::to_value));
    GuardedPatch { operations, findings }
}

/// Every `(test path, key field, key value, dotted path)` for list indices along `tokens`.
fn keyed_positions(
    tokens: &[String],
    live: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Vec<(String, String, Value, String)> {
    let mut out = Vec::new();
    let mut current = live;
    let mut current_ty = ty;
    let mut key_of_list: Option<String> = None;
    let mut pointer = String::new();
    let mut dotted = String::new();
    for token in tokens {
        match current {
            Value::Array(items) => {
                let Ok(index) = token.parse::<usize>() else { break };
                let Some(item) = items.get(index) else { break };
                if let Some(key) = &key_of_list {
                    if let Some(value) = item.get(key) {
                        out.push((
                            format!("{pointer}/{index}/{}", escape_token(key)),
                            key.clone(),
                            value.clone(),
                            format!(
                                "{dotted}[{key}={}]",
                                value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string())
                            ),
                        ));
                    }
                }
                current = item;
                current_ty = current_ty.and_then(|t| schema.items(t));
                key_of_list = None;
            }
            Value::Object(map) => {
                let Some(child) = map.get(token) else { break };
                let field = current_ty.and_then(|t| schema.field(t, token));
                let child_ty = field.map(|f| f.ty).or_else(|| current_ty.and_then(|t| schema.values(t)));
                key_of_list = field.and_then(|f| f.merge_key.clone()).or_else(|| list_map_key(schema, child_ty));
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

fn list_map_key(schema: &Schema, ty: Option<TypeId>) -> Option<String> {
    match ty.and_then(|t| schema.try_get(t)) {
        Some(TypeDef::List(list)) => match &list.list_kind {
            ListKind::Map(keys) if keys.len() == 1 => keys.first().cloned(),
            _ => None,
        },
        _ => None,
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
    fn no_guard_for_unkeyed_lists_or_appends() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "args": ["x"]}]}}}});
        let ops = json_patch::parse(&json!([
            {"op": "add", "path": "/spec/template/spec/containers/-", "value": {"name": "c"}}
        ]))
        .unwrap();
        assert!(guard_positions(&ops, &live, schema, ty).findings.is_empty());
    }
}
