//! A JSON merge patch (RFC 7386) has no idea of lists: a list in the patch
//! replaces the live list whole. Patching one container's image with
//! `--type merge` silently deletes every other container, and the container
//! it patches keeps only the fields the patch's entry carries: its `args`,
//! `env`, `ports` or `resources` are gone too.

use serde_json::Value;

use super::{dotted, Finding, Severity};
use crate::schema::{ListKind, Schema, TypeDef, TypeId};

/// Lists a merge patch would replace, naming the live entries that would disappear,
/// and, for each entry that stays (same key), the fields it would lose. `strategic`
/// says whether the server takes strategic merge patches for the type: the fix a
/// finding proposes is one that works (custom resources refuse strategic merge, and
/// server-side apply merges their keyed lists by key).
pub fn merge_patch_list_losses(
    live: &Value,
    patch: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
    strategic: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let keyed_merge = if strategic { "--type strategic" } else { "--type apply" };
    walk(live, patch, schema, ty, keyed_merge, &mut Vec::new(), &mut out);
    out
}

fn walk(
    live: &Value,
    patch: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
    keyed_merge: &str,
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
                        finding = finding.with_fix(format!("use {keyed_merge} to merge list entries by key"));
                    }
                    out.push(finding);
                }
                if let Some(key) = merge_key.as_deref() {
                    let item_ty = child_ty.and_then(|t| schema.items(t));
                    kept_entries(live_items, patch_items, key, schema, item_ty, keyed_merge, path, out);
                }
            }
            (Value::Object(_), Value::Object(_)) => {
                walk(live_child, patch_child, schema, child_ty, keyed_merge, path, out)
            }
            _ => {}
        }
        path.pop();
    }
}

/// The entries of a keyed list that the patch keeps (an entry with the same key):
/// the patch's entry replaces the live one whole, so every live field it does not
/// carry is lost. Lists inside a kept entry are replaced whole too: walk into them.
#[allow(clippy::too_many_arguments)]
fn kept_entries(
    live_items: &[Value],
    patch_items: &[Value],
    key: &str,
    schema: &Schema,
    item_ty: Option<TypeId>,
    keyed_merge: &str,
    path: &mut Vec<String>,
    out: &mut Vec<Finding>,
) {
    let list = dotted(path);
    for live_item in live_items {
        let Some(twin) = patch_items.iter().find(|p| same_entry(live_item, p, Some(key))) else { continue };
        let label = describe(live_item, Some(key));
        path.push(format!("[{key}={label}]"));
        let mut lost = Vec::new();
        lost_fields(live_item, twin, twin, schema, item_ty, "", &mut lost);
        if !lost.is_empty() {
            out.push(
                Finding::new(
                    Severity::Warning,
                    dotted(path),
                    format!(
                        "a merge patch replaces the whole list {list}: {label} stays but loses {} (its entry in the patch does not carry {})",
                        summarize(&lost),
                        if lost.len() == 1 { "it" } else { "them" },
                    ),
                )
                .with_fix(format!("use {keyed_merge} to merge {label} with the live entry, or repeat those fields in the patch")),
            );
        }
        walk(live_item, twin, schema, item_ty, keyed_merge, path, out);
        path.pop();
    }
}

/// The fields of `live` (relative dotted paths) that `patch` does not carry, or
/// sets to `null`, recursing into objects both have. Empty values lose nothing,
/// and neither do fields the server fills in again with the same value.
/// `entry` is the patch's whole list entry, which some defaults depend on.
fn lost_fields(
    live: &Value,
    patch: &Value,
    entry: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
    prefix: &str,
    out: &mut Vec<String>,
) {
    let (Value::Object(live_map), Value::Object(patch_map)) = (live, patch) else { return };
    for (key, live_child) in live_map {
        if is_empty(live_child) {
            continue;
        }
        let field = ty.and_then(|t| schema.field(t, key));
        let child_ty = field.map(|f| f.ty).or_else(|| ty.and_then(|t| schema.values(t)));
        let name = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        match patch_map.get(key) {
            None | Some(Value::Null) => {
                let defaulted = field.and_then(|f| f.default.as_ref()) == Some(live_child)
                    || ty.and_then(|t| schema.name_of(t)).and_then(|t| server_default(t, key, entry)).as_ref()
                        == Some(live_child);
                if !defaulted {
                    out.push(name);
                }
            }
            Some(patch_child @ Value::Object(_)) => {
                lost_fields(live_child, patch_child, entry, schema, child_ty, &name, out)
            }
            Some(_) => {}
        }
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// What the apiserver's defaulting (Go defaulters, not published in OpenAPI) puts
/// into a field of `type_name` that a write leaves out; `entry` is the written entry.
fn server_default(type_name: &str, field: &str, entry: &Value) -> Option<Value> {
    let text = match (type_name, field) {
        ("io.k8s.api.core.v1.Container", "terminationMessagePath") => "/dev/termination-log",
        ("io.k8s.api.core.v1.Container", "terminationMessagePolicy") => "File",
        ("io.k8s.api.core.v1.Container", "imagePullPolicy") => default_pull_policy(entry.get("image")?.as_str()?),
        ("io.k8s.api.core.v1.ContainerPort", "protocol") => "TCP",
        _ => return None,
    };
    Some(Value::String(text.to_string()))
}

/// `Always` for an image tagged `latest` or not tagged at all (and without a
/// digest), else `IfNotPresent`, as `SetDefaults_Container` decides.
fn default_pull_policy(image: &str) -> &'static str {
    let (name, digest) = image.split_once('@').unwrap_or((image, ""));
    let last = name.rsplit('/').next().unwrap_or(name);
    let tag = last.split_once(':').map_or("", |(_, tag)| tag);
    if tag == "latest" || (tag.is_empty() && digest.is_empty()) {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// At most five names, then how many more: a message is one line.
fn summarize(names: &[String]) -> String {
    match names.len() {
        0..=5 => names.join(", "),
        n => format!("{} and {} more", names[..5].join(", "), n - 5),
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
        let findings = merge_patch_list_losses(&live, &patch, schema, ty, true);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].path, "spec.template.spec.containers");
        assert!(findings[0].message.ends_with("busybox would be removed"), "{}", findings[0].message);
        assert!(findings[0].fix.as_deref().unwrap().contains("--type strategic"));
    }

    #[test]
    fn names_the_fields_a_kept_container_would_lose() {
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [{
            "name": "busybox", "image": "busybox:1.28", "args": ["sleep", "1000000"],
            "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "500m"}},
            "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "securityContext": {}}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "image": "busybox:1.36", "resources": {"requests": {"cpu": "1"}}}]}}}});
        let findings = merge_patch_list_losses(&live, &patch, schema, ty, true);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].path, "spec.template.spec.containers[name=busybox]");
        assert_eq!(
            findings[0].message,
            "a merge patch replaces the whole list spec.template.spec.containers: busybox stays but loses args, env, \
             ports, resources.limits (its entry in the patch does not carry them)"
        );
        assert!(findings[0].fix.as_deref().unwrap().contains("--type strategic"), "{findings:?}");
        // A field the server fills in again with another value is lost: IfNotPresent is not latest's default.
        let latest = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "busybox", "image": "busybox", "args": ["sleep", "1000000"], "env": [{"name": "A", "value": "1"}],
             "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}]}}}});
        let findings = merge_patch_list_losses(&live, &latest, schema, ty, true);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("busybox stays but loses imagePullPolicy (its entry"), "{findings:?}");
    }

    #[test]
    fn a_type_without_strategic_merge_is_never_told_to_use_it() {
        // A custom resource's keyed list (x-kubernetes-list-map-keys): the server refuses
        // strategic merge for it, and server-side apply merges it by key.
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("apps", "v1", "Deployment"));
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x", "args": ["run"]}, {"name": "b", "image": "y"}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "z"}]}}}});
        let findings = merge_patch_list_losses(&live, &patch, schema, ty, false);
        assert_eq!(findings.len(), 2, "{findings:?}");
        for finding in &findings {
            let fix = finding.fix.as_deref().unwrap();
            assert!(fix.contains("--type apply") && !fix.contains("strategic"), "{fix}");
        }
    }

    #[test]
    fn lists_inside_a_kept_entry_are_replaced_whole_too() {
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("", "v1", "Pod"));
        let live = json!({"spec": {"containers": [{"name": "app", "image": "x:1",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}});
        let patch =
            json!({"spec": {"containers": [{"name": "app", "image": "x:1", "env": [{"name": "B", "value": "3"}]}]}});
        let findings = merge_patch_list_losses(&live, &patch, schema, ty, true);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].path, "spec.containers[name=app].env");
        assert!(findings[0].message.ends_with(": A would be removed"), "{findings:?}");
        // The same entry, fully repeated: nothing is lost.
        assert!(merge_patch_list_losses(&live, &live, schema, ty, true).is_empty());
    }

    #[test]
    fn pull_policy_defaults_follow_the_tag() {
        assert_eq!(default_pull_policy("busybox"), "Always");
        assert_eq!(default_pull_policy("busybox:latest"), "Always");
        assert_eq!(default_pull_policy("registry:5000/busybox"), "Always");
        assert_eq!(default_pull_policy("registry:5000/busybox:1.28"), "IfNotPresent");
        assert_eq!(default_pull_policy("busybox@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn untyped_lists_compare_whole_values() {
        let live = json!({"spec": {"args": ["a", "b"]}});
        let patch = json!({"spec": {"args": ["a"]}});
        let findings = merge_patch_list_losses(&live, &patch, &Schema::new(), None, true);
        assert_eq!(findings[0].message, "a merge patch replaces the whole list spec.args: b would be removed");
        assert!(merge_patch_list_losses(&live, &json!({"spec": {"args": ["b", "a"]}}), &Schema::new(), None, true)
            .is_empty());
    }
}
