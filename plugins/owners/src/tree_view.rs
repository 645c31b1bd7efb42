//! How `--tree` shows the tree that `tree::build` found: a kubectl-tree table
//! (`NAMESPACE  NAME  READY  REASON  AGE`, the NAME column drawn as a tree), or
//! the same nesting as JSON for `-o json|yaml`.
//!
//! What each object shows, and where, is decided in the core:
//! [`fieldwise_core::object::readiness`] for READY and REASON,
//! [`fieldwise_core::object::owner_tree`] for the one place of an object with several
//! owners (under its controller owner, else the owner nearest the root; the
//! others named beside it as `also owned by ...`). `--kinds` keeps the objects of
//! those types and the path from the root to them.

use std::collections::HashMap;

use fieldwise_core::object::owner_tree::{self, OwnerReference, Placement};
use fieldwise_core::object::readiness::readiness;
use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::Result;
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::age::{self, TimeStyle};
use crate::subject::{reference, Subject};
use crate::summary::styled_table;
use crate::tree::Tree;

/// The types `--kinds` asks for, resolved through discovery as kubectl does.
#[derive(Debug, Clone, Default)]
pub struct KindFilter {
    /// (group, kind) of each type named; empty: every type.
    types: Vec<(String, String)>,
}

impl KindFilter {
    /// Resolves each name (`pods`, `rs`, `deployments.apps`, `Pod`); an unknown one is
    /// kubectl's error: `the server doesn't have a resource type "..."`.
    pub fn resolve(catalog: &ResourceCatalog, names: &[String]) -> Result<Self> {
        let mut types = Vec::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let t: &ResourceType = catalog.resolve(name)?;
            types.push((t.group.clone(), t.kind.clone()));
        }
        Ok(KindFilter { types })
    }

    /// Whether the filter lets every type through.
    pub fn is_all(&self) -> bool {
        self.types.is_empty()
    }

    /// Whether `object` is of one of the types (any version of the group).
    pub fn matches(&self, object: &Value) -> bool {
        let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let group = text("/apiVersion").rsplit_once('/').map(|(g, _)| g).unwrap_or_default();
        self.is_all() || self.types.iter().any(|(g, k)| g == group && k == text("/kind"))
    }
}

/// A tree laid out for showing: every object once, filtered.
struct Layout<'t> {
    tree: &'t Tree,
    by_uid: HashMap<&'t str, &'t Value>,
    placement: Placement,
}

fn uid(object: &Value) -> &str {
    object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
}

impl<'t> Layout<'t> {
    fn new(tree: &'t Tree, filter: &KindFilter) -> Self {
        // Siblings in build's order (kind, namespace, name); each object once.
        let mut objects: Vec<&Value> = vec![&tree.root];
        let mut owners: Vec<&String> = tree.children.keys().collect();
        owners.sort();
        for owner in owners {
            objects.extend(tree.children[owner].iter().map(|(o, _)| o));
        }
        let mut by_uid = HashMap::new();
        objects.retain(|o| by_uid.insert(uid(o), *o).is_none());
        objects[1..].sort_by_key(|o| sort_key(o));
        let placement = owner_tree::place(uid(&tree.root), &objects);
        let placement = if filter.is_all() {
            placement
        } else {
            placement.prune(|u| u == tree.target_uid || by_uid.get(u).is_some_and(|o| filter.matches(o)))
        };
        Layout { tree, by_uid, placement }
    }

    fn children(&self, object: &Value) -> Vec<&'t Value> {
        self.placement.children(uid(object)).iter().filter_map(|u| self.by_uid.get(u.as_str()).copied()).collect()
    }

    /// The owners of `object` besides the one it is shown under.
    fn other_owners(&self, object: &Value) -> Vec<OwnerReference> {
        match self.placement.parent(uid(object)) {
            Some(parent) => owner_tree::other_owners(object, parent),
            None => Vec::new(),
        }
    }

    /// Whether the reference `object` is shown under has `controller: true`.
    fn controlled(&self, object: &Value) -> Option<bool> {
        let parent = self.placement.parent(uid(object))?;
        Some(owner_tree::owner_references(object).iter().any(|r| r.uid == parent && r.controller))
    }
}

fn sort_key(object: &Value) -> (String, String, String) {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    (text("/kind"), text("/metadata/namespace"), text("/metadata/name"))
}

/// `kind.group/name` of an owner reference, as kubectl names objects.
fn owner_name(r: &OwnerReference) -> String {
    let object = json!({"apiVersion": r.api_version, "kind": r.kind, "metadata": {"name": r.name}});
    Subject::from_object(object, None).display
}

/// The human table: owners that could not be read, the tree, the types skipped.
pub fn render(tree: &Tree, filter: &KindFilter, now: Timestamp) -> String {
    let layout = Layout::new(tree, filter);
    let mut out = String::new();
    for missing in &tree.missing_owners {
        out.push_str(&format!("(owner not shown: {missing})\n"));
    }
    let mut rows = Vec::new();
    add_rows(&layout, &tree.root, "", "", now, &mut rows);
    let header = ["NAMESPACE", "NAME", "READY", "REASON", "AGE"].map(String::from);
    out.push_str(&styled_table(&header, &rows, |row, column, text| paint(&rows[row][2], column, text)));
    if !tree.skipped.is_empty() {
        let names: Vec<String> = tree.skipped.iter().map(|s| format!("{} ({})", s.resource, s.reason)).collect();
        out.push_str(&format!("skipped, could not list: {}\n", names.join(", ")));
    }
    out
}

/// kubectl-tree's colors (only when `colored` is on: a terminal, no `NO_COLOR`): READY and
/// REASON green when ready, red when not, dimmed when unknown to the object.
fn paint(ready: &str, column: usize, text: String) -> String {
    use colored::Colorize;
    if column != 2 && column != 3 {
        return text;
    }
    match ready {
        "True" => text.green().to_string(),
        "False" | "Unknown" => text.red().to_string(),
        _ => text.dimmed().to_string(),
    }
}

/// One row per object, depth first; `branch` draws this row, `indent` the rows below it.
fn add_rows(layout: &Layout, object: &Value, branch: &str, indent: &str, now: Timestamp, rows: &mut Vec<[String; 5]>) {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    let status = readiness(object);
    let mut age =
        age::show(object.pointer("/metadata/creationTimestamp").and_then(Value::as_str), TimeStyle::Relative, now);
    if age.is_empty() {
        age = "<unknown>".into();
    }
    let others: Vec<String> = layout.other_owners(object).iter().map(owner_name).collect();
    if !others.is_empty() {
        age.push_str(&format!("   (also owned by {})", others.join(", ")));
    }
    if uid(object) == layout.tree.target_uid {
        age.push_str("   <- this object");
    }
    let name = Subject::from_object(object.clone(), None).display;
    rows.push([
        text("/metadata/namespace"),
        format!("{branch}{name}"),
        status.ready_cell().to_string(),
        status.reason_cell().to_string(),
        age,
    ]);
    let children = layout.children(object);
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let branch = format!("{indent}{}", if last { "└─" } else { "├─" });
        let deeper = format!("{indent}{}", if last { "  " } else { "│ " });
        add_rows(layout, child, &branch, &deeper, now, rows);
    }
}

/// The `tree` section of the JSON output: the same nesting, each object once.
pub fn json(tree: &Tree, filter: &KindFilter) -> Value {
    let layout = Layout::new(tree, filter);
    let skipped: Vec<Value> =
        tree.skipped.iter().map(|s| json!({"resource": s.resource, "reason": s.reason})).collect();
    json!({
        "root": node(&layout, &tree.root),
        "missingOwners": tree.missing_owners,
        "skipped": skipped,
    })
}

fn node(layout: &Layout, object: &Value) -> Value {
    let status = readiness(object);
    let children: Vec<Value> = layout.children(object).into_iter().map(|c| node(layout, c)).collect();
    let also: Vec<Value> = layout
        .other_owners(object)
        .iter()
        .map(|r| {
            json!({"apiVersion": r.api_version, "kind": r.kind, "name": r.name, "uid": r.uid, "controller": r.controller})
        })
        .collect();
    let mut out = json!({
        "object": reference(object),
        "target": uid(object) == layout.tree.target_uid,
        "ready": status.ready,
        "reason": status.reason,
        "creationTimestamp": object.pointer("/metadata/creationTimestamp"),
        "alsoOwnedBy": also,
        "children": children,
    });
    if let Some(c) = layout.controlled(object) {
        out["controller"] = c.into();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(kind: &str, api: &str, name: &str, uid: &str, owners: &[(&str, &str, &str, bool)]) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|(k, n, u, c)| json!({"apiVersion": "apps/v1", "kind": k, "name": n, "uid": u, "controller": c}))
            .collect();
        json!({"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": uid,
            "creationTimestamp": "2026-01-01T00:00:00Z", "ownerReferences": refs}})
    }

    fn sample() -> Tree {
        let deploy = object("Deployment", "apps/v1", "web", "d", &[]);
        let rs = object("ReplicaSet", "apps/v1", "web-1", "rs", &[("Deployment", "web", "d", true)]);
        let mut pod = object("Pod", "v1", "web-1-a", "p", &[("ReplicaSet", "web-1", "rs", true)]);
        pod["status"] = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]});
        let cm = object(
            "ConfigMap",
            "v1",
            "shared",
            "cm",
            &[("Deployment", "web", "d", false), ("ReplicaSet", "web-1", "rs", true)],
        );
        // build() files an object under every owner it names: cm twice.
        let children = HashMap::from([
            ("d".to_string(), vec![(rs.clone(), true), (cm.clone(), false)]),
            ("rs".to_string(), vec![(cm, true), (pod, true)]),
        ]);
        Tree { root: deploy, children, target_uid: "p".into(), missing_owners: vec![], skipped: vec![] }
    }

    #[test]
    fn columns_tree_lines_and_one_row_per_object() {
        let now: Timestamp = "2026-01-01T00:05:00Z".parse().unwrap();
        let text = render(&sample(), &KindFilter::default(), now);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["NAMESPACE", "NAME", "READY", "REASON", "AGE"]);
        assert!(lines[1].starts_with("ns          deployment.apps/web "), "{text}");
        assert!(lines[2].contains("└─replicaset.apps/web-1 "), "{text}");
        let cm = lines[3];
        assert!(cm.contains("  ├─configmap/shared ") && cm.ends_with("(also owned by deployment.apps/web)"), "{text}");
        let pod: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(pod, ["ns", "└─pod/web-1-a", "True", "Running", "5m", "<-", "this", "object"], "{text}");
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(text.matches("configmap/shared").count(), 1, "{text}");
    }

    #[test]
    fn kinds_keep_the_path_and_json_nests_once() {
        let tree = sample();
        let pods = KindFilter { types: vec![(String::new(), "Pod".into())] };
        let now: Timestamp = "2026-01-01T00:05:00Z".parse().unwrap();
        let text = render(&tree, &pods, now);
        assert!(!text.contains("configmap") && text.contains("replicaset.apps/web-1") && text.contains("pod/web-1-a"));
        let doc = json(&tree, &KindFilter::default());
        let rs = &doc["root"]["children"][0];
        assert_eq!(rs["object"]["kind"], "ReplicaSet");
        assert_eq!(doc["root"]["children"].as_array().unwrap().len(), 1, "{doc:#}");
        let cm = &rs["children"][0];
        assert_eq!((cm["object"]["name"].as_str(), cm["controller"].as_bool()), (Some("shared"), Some(true)));
        assert_eq!(cm["alsoOwnedBy"][0]["name"], "web");
        let pod = &rs["children"][1];
        assert_eq!(
            (pod["ready"].as_str(), pod["reason"].as_str(), pod["target"].as_bool()),
            (Some("True"), Some("Running"), Some(true))
        );
        assert_eq!(doc["root"]["ready"], Value::Null);
    }
}
