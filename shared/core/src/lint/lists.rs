//! A JSON merge patch (RFC 7386) has no idea of lists: a list in the patch
//! replaces the live list whole. Patching one container's image with
//! `--type merge` silently deletes every other container.

use serde_json::Value;

use super::{dotted, Finding, Severity};
use crate::schema::{ListKind, Schema, TypeDef, TypeId};

/// Lists a merge patch would replace, naming the live entries that would disappear.
pub fn merge_patch_list_losses(live: &Value, patch: &Value, schema: &Schema, ty: Option<TypeId>) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(live, patch, schema, ty, &mut Vec::new(), &mut out);
    out
}

fn walk(
    live: &Value,
    patch: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
    path: &mut Vec<String>,
    out: &mut Vec<Finding>,
) {
    let (Value::Object(live_map), Value::Object(patch_map)) = (live, patch) else { return };
    for (key, patch_child) in patch_map {
        let Some(live_child) = live_map.get(key) else { continue };
        let field = ty.and_then(|t| schema.field(t, key));
        let child_ty = field.map(|f| f.ty).or_else(|| ty.and_then(|t| schema.values(t)));
        path.push(key.clone());
        match (live_child, patch_child) {
            (Value::Array(live_items), Value::Array(patch_items)) => {
                let merge_key = merge_key_of(schema, field, child_ty);
                let lost: Vec<String> = live_items
                    .iter()
                    .filter(|item| !patch_items.iter().any(|p| same_entry(item, p, merge_key.as_deref())))
                    .map(|item| describe(item, merge_key.as_deref()))
                    .collect();
                if !lost.is_empty() {
                    let where_ = dotted(path);
                    let mut finding = Finding::new(
                        Severity::Warning,
                        &where_,
                        format!("a merge patch replaces the whole list {where_}: {} would be removed", lost.join(", ")),
                    );
                    if merge_key.is_some() {
                        finding = finding.with_fix("use --type strategic to merge list entries by key");
                    }
                    out.push(finding);
                }
            }
            (Value::Object(_), Value::Object(_)) => walk(live_child, patch_child, schema, child_ty, path, out),
            _ => {}
        }
        path.pop();
    }
}

/// The key entries of a list are told apart by: the strategic merge key, or
/// the first server-side-apply list-map key.
fn merge_key_of(schema: &Schema, field: Option<&crate::schema::Field>, list_ty: Option<TypeId>) -> Option<String> {
    if let Some(key) = field.and_then(|f| f.merge_key.clone()) {
        return Some(key);
    }
    match list_ty.and_then(|t| schema.try_get(t)) {
        Some(TypeDef::List(list)) => match &list.list_kind {
            ListKind::Map(keys) => keys.first().cloned(),
            _ => None,
        },
        _ => None,
    }
}

fn same_entry(live: &Value, patch: &Value, key: Option<&str>) -> bool {
    match key {
        Some(k) => live.get(k).is_some() && live.get(k) == patch.get(k),
        None => live == patch,
    }
}

fn describe(item: &Value, key: Option<&str>) -> String {
    match key.and_then(|k| item.get(k)).unwrap_or(item) {
        Value::String(s) => s.clone(),
        other => super::short(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_containers_a_merge_patch_would_drop() {
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "image": "busybox:1.28"}, {"name": "sidecar", "image": "x"}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "y"}]}}}});
        let findings = merge_patch_list_losses(&live, &patch, schema, ty);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].path, "spec.template.spec.containers");
        assert!(findings[0].message.ends_with("busybox would be removed"), "{}", findings[0].message);
        assert!(findings[0].fix.as_deref().unwrap().contains("--type strategic"));
    }

    #[test]
    fn untyped_lists_compare_whole_values() {
        let live = json!({"spec": {"args": ["a", "b"]}});
        let patch = json!({"spec": {"args": ["a"]}});
        let findings = merge_patch_list_losses(&live, &patch, &Schema::new(), None);
        assert_eq!(findings[0].message, "a merge patch replaces the whole list spec.args: b would be removed");
        assert!(merge_patch_list_losses(&live, &json!({"spec": {"args": ["b", "a"]}}), &Schema::new(), None).is_empty());
    }
}
