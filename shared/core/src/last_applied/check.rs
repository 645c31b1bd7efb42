//! What a scan reports about an object's annotation.
//!
//! - [`missing`]: kubectl's client-side managers wrote the object, but it has no
//!   annotation: the next `kubectl apply` cannot delete anything the file drops.
//! - [`oversized`]: the annotations are near (80%) or over the apiserver's 256 KiB
//!   total, or would be with the annotation kubectl would write.
//! - [`leaking`]: a Secret's annotation holds its values in clear text.
//! - [`stale`]: the annotation disagrees with the live object on a field, so the
//!   next apply of the same file reverts someone's change, or it names a field
//!   that a controller or another applier owns now. [`stale_candidate`] decides
//!   from `managedFields` alone whether the values need to be compared at all.
//!   An annotation [`left_over`] after a move to server-side apply is stale too, and
//!   `repair` removes it (there is no client-side intent left to rebuild it from).
//!
//! Details never quote values: an annotation may hold a Secret.

use serde_json::Value;

use super::{annotation_of, annotations_size};
use super::{NEAR_LIMIT_PERCENT, TOTAL_ANNOTATIONS_LIMIT};
use crate::fieldpath::{field_set_lossy, Path, PathElement, Set};
use crate::ownership::{is_client_side_write, managed_fields_of, ManagedFieldsEntry, Operation};
use crate::schema::{Gvk, Schema, TypeId};
use crate::well_known::REPLACE_MANAGER;

/// The kinds of problems, in the order a table lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    /// Written by kubectl's client-side managers, without the annotation.
    Missing,
    /// The annotation disagrees with the live object.
    Stale,
    /// The annotations are near or over the size limit.
    Oversized,
    /// A Secret's values in clear text in the annotation.
    Leaking,
}

impl FindingKind {
    /// The name used in tables and JSON: `missing`, `stale`, `oversized`, `leaking`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Missing => "missing",
            FindingKind::Stale => "stale",
            FindingKind::Oversized => "oversized",
            FindingKind::Leaking => "leaking",
        }
    }
}

/// One problem with one object's annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What kind of problem.
    pub kind: FindingKind,
    /// What exactly (never a value), every field named: what `-o json|yaml` prints.
    pub detail: String,
    /// The same with long lists of fields cut to their first few (`... and 35 more`), for
    /// a table row; `None` when nothing was cut. See [`Finding::brief`].
    pub short: Option<String>,
}

impl Finding {
    /// A finding whose detail is short already.
    pub fn new(kind: FindingKind, detail: impl Into<String>) -> Self {
        Finding { kind, detail: detail.into(), short: None }
    }

    /// The detail as a table row shows it: long lists cut.
    pub fn brief(&self) -> &str {
        self.short.as_deref().unwrap_or(&self.detail)
    }
}

/// The annotation is absent although kubectl's client-side managers wrote the object.
pub fn missing(object: &Value) -> Option<Finding> {
    if annotation_of(object).is_some() {
        return None;
    }
    let entries = managed_fields_of(object).ok()?;
    let mut names: Vec<&str> = entries.iter().filter(|e| is_client_side_write(e)).map(|e| e.manager.as_str()).collect();
    names.dedup();
    (!names.is_empty()).then(|| {
        Finding::new(
            FindingKind::Missing,
            format!("written by {} without the annotation: apply cannot delete fields", names.join(", ")),
        )
    })
}

/// The annotations are near or over the limit; `would_write` is the annotation kubectl would
/// write (when known), counted instead of the present one.
pub fn oversized(object: &Value, would_write: Option<&str>) -> Option<Finding> {
    let size = match would_write {
        Some(text) => super::annotations_size_with(object, text),
        None => annotations_size(object),
    };
    if size * 100 < TOTAL_ANNOTATIONS_LIMIT * NEAR_LIMIT_PERCENT {
        return None;
    }
    let how = if size > TOTAL_ANNOTATIONS_LIMIT { "over" } else { "near" };
    let subject = if would_write.is_some() && annotation_of(object).is_none() { "would be " } else { "" };
    Some(Finding::new(
        FindingKind::Oversized,
        format!(
            "annotations {subject}{size} bytes, {how} the {TOTAL_ANNOTATIONS_LIMIT}-byte limit ({}%): use server-side apply",
            size * 100 / TOTAL_ANNOTATIONS_LIMIT
        ),
    ))
}

/// A Secret whose annotation holds `data` or `stringData`.
pub fn leaking(object: &Value) -> Option<Finding> {
    if !super::string_data::is_secret(object) {
        return None;
    }
    let applied: Value = serde_json::from_str(annotation_of(object)?).ok()?;
    let keys = super::secret_values::held_values(&applied);
    (keys > 0).then(|| {
        Finding::new(
            FindingKind::Leaking,
            format!(
                "the annotation holds {keys} Secret value(s) in clear text, readable by anyone who can read metadata"
            ),
        )
    })
}

/// The leaf fields the annotation sets, typed through `schema` when it knows the kind.
fn annotation_leaves(applied: &Value, schema: &Schema) -> Vec<Path> {
    let ty = Gvk::of_object(applied).and_then(|g| schema.root(&g));
    recorded_leaves(applied, schema, ty)
}

/// The leaf fields a last-applied configuration sets as type `ty`, but the object's
/// identity (name, namespace, annotations, apiVersion, kind), which a patch never
/// reverts through it. Shared with the lint that warns of the next apply's revert.
pub(crate) fn recorded_leaves(applied: &Value, schema: &Schema, ty: Option<TypeId>) -> Vec<Path> {
    let (set, _) = field_set_lossy(applied, schema, ty);
    let mut skip = Set::new();
    for field in ["name", "namespace", "annotations"] {
        skip.insert(Path::fields(["metadata", field]).elements());
    }
    for field in ["apiVersion", "kind"] {
        skip.insert(&[PathElement::Field(field.into())]);
    }
    set.leaves().recursive_difference(&skip).paths()
}

fn is_file_writer(entry: &ManagedFieldsEntry) -> bool {
    is_client_side_write(entry) || (entry.manager == REPLACE_MANAGER && entry.operation == Operation::Update)
}

/// Whether the annotation may be stale, from `managedFields` alone: some field it sets is owned by
/// nobody, or by someone other than the managers that write files (apply, create, replace), at
/// it or below it. When false, the last writer of every field was the file itself, and the values agree.
///
/// "Below it" matters when `schema` reads a list whole that the server tracks entry by entry: a
/// custom resource's keyed list, which `kubectl apply` (a JSON merge patch there) replaces whole,
/// while managedFields record who added each entry.
pub fn stale_candidate(object: &Value, schema: &Schema) -> bool {
    let Some(applied) = annotation_of(object).and_then(|t| serde_json::from_str::<Value>(t).ok()) else {
        return false;
    };
    if left_over(object).is_some() {
        return true;
    }
    let Ok(entries) = managed_fields_of(object) else { return true };
    annotation_leaves(&applied, schema).iter().any(|path| {
        let at = |e: &&ManagedFieldsEntry| e.fields.has(path.elements());
        let below = |e: &&ManagedFieldsEntry| !e.fields.under(path).is_empty();
        let owners: Vec<&ManagedFieldsEntry> = entries.iter().filter(|e| at(e) || below(e)).collect();
        owners.is_empty() || owners.iter().any(|e| !is_file_writer(e))
    })
}

/// The server-side appliers of an annotation left over after a move to server-side apply
/// (`last-applied migrate` without `--drop-annotation`, `owners transfer`), or `None`. Left
/// over means: no client-side write of the object is recorded any more, and the annotation
/// itself is owned only by `Apply` managers other than `kubectl` (the apiserver keeps the
/// annotation up to date on `kubectl apply --server-side` alone). Nobody keeps it up to date,
/// and nothing is left to rebuild it from: the repair is to remove it. An annotation that
/// a client-side tool (an `Update` manager, such as Argo CD's client-side sync) owns is never
/// left over.
pub fn left_over(object: &Value) -> Option<Vec<String>> {
    annotation_of(object)?;
    let entries = managed_fields_of(object).ok()?;
    if entries.iter().any(is_client_side_write) {
        return None;
    }
    let path = Path::fields(["metadata", "annotations", super::LAST_APPLIED_ANNOTATION]);
    let owners: Vec<&ManagedFieldsEntry> = entries.iter().filter(|e| e.fields.has(path.elements())).collect();
    let server_side = |e: &&ManagedFieldsEntry| e.operation == Operation::Apply && e.manager != "kubectl";
    if owners.is_empty() || !owners.iter().all(server_side) {
        return None;
    }
    let mut names: Vec<String> = owners.iter().map(|e| e.manager.clone()).collect();
    names.dedup();
    Some(names)
}

/// Compares the annotation with the live object (see the module docs).
pub fn stale(live: &Value, schema: &Schema) -> Option<Finding> {
    if let Some(appliers) = left_over(live) {
        return Some(Finding::new(
            FindingKind::Stale,
            format!(
                "left over from client-side apply: {} applies the object server-side and nobody keeps the annotation up to date (repair removes it)",
                appliers.join(", ")
            ),
        ));
    }
    let edits = match super::reapply::reapply(live, schema) {
        Ok(edits) => edits,
        Err(super::reapply::ReapplyError::NotJson) => {
            return Some(Finding::new(FindingKind::Stale, "the annotation is not valid JSON"))
        }
        Err(super::reapply::ReapplyError::Patch(why)) => {
            return Some(Finding::new(FindingKind::Stale, format!("the next apply of it fails: {why}")))
        }
    };
    let entries = managed_fields_of(live).unwrap_or_default();
    let mut taken = Vec::new();
    let mut differ = Vec::new();
    for edit in edits {
        let path = edit.path;
        let foreign: Vec<&str> = entries
            .iter()
            .filter(|e| e.fields.has(path.elements()))
            .filter(|e| super::rebuild::is_foreign_manager(&e.manager))
            .map(|e| e.manager.as_str())
            .collect();
        match foreign.first() {
            Some(first) => taken.push(format!("{path} (owned by {first})")),
            None => differ.push(path.to_string()),
        }
    }
    if taken.is_empty() && differ.is_empty() {
        return None;
    }
    let detail = |list: fn(&[String]) -> String| {
        let mut parts = Vec::new();
        if !differ.is_empty() {
            parts.push(format!("differs from the live object at {} (the next apply reverts it)", list(&differ)));
        }
        if !taken.is_empty() {
            parts.push(format!("reverts fields another manager owns: {}", list(&taken)));
        }
        parts.join("; ")
    };
    let (whole, short) = (detail(|items| items.join(", ")), detail(shorten));
    Some(Finding { kind: FindingKind::Stale, short: (short != whole).then_some(short), detail: whole })
}

/// A list of fields for a table row: the first few, and how many more.
fn shorten(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = items.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_applied::LAST_APPLIED_ANNOTATION;
    use crate::schema::builtin;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    fn deployment(annotation: &str, replicas: i64, managers: Vec<Value>) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "annotations": {LAST_APPLIED_ANNOTATION: annotation},
                "managedFields": managers},
            "spec": {"replicas": replicas, "paused": false}})
    }

    #[test]
    fn stale_when_someone_changed_a_field_or_owns_it() {
        let annotation = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"replicas":3}}"#;
        let applied = entry("kubectl-client-side-apply", "Update", json!({"f:spec": {"f:replicas": {}}}));
        let clean = deployment(annotation, 3, vec![applied.clone()]);
        assert!(!stale_candidate(&clean, builtin()));
        assert_eq!(stale(&clean, builtin()), None);

        let edited =
            deployment(annotation, 5, vec![entry("kubectl-edit", "Update", json!({"f:spec": {"f:replicas": {}}}))]);
        assert!(stale_candidate(&edited, builtin()));
        let finding = stale(&edited, builtin()).unwrap();
        assert!(finding.detail.contains(".spec.replicas") && !finding.detail.contains('5'), "{}", finding.detail);

        let scaled = deployment(annotation, 5, vec![entry("hpa-like", "Apply", json!({"f:spec": {"f:replicas": {}}}))]);
        assert_eq!(
            stale(&scaled, builtin()).unwrap().detail,
            "reverts fields another manager owns: .spec.replicas (owned by hpa-like)"
        );
        // Owned by another manager with the annotation's value: the next apply changes nothing.
        let agreed = deployment(annotation, 3, vec![entry("hpa-like", "Apply", json!({"f:spec": {"f:replicas": {}}}))]);
        assert_eq!(stale(&agreed, builtin()), None);
    }

    #[test]
    fn the_detail_names_every_field_and_the_brief_one_the_first_few() {
        let fields: Vec<String> = (0..40).map(|i| format!("k{i:02}")).collect();
        let data = |value: &str| Value::Object(fields.iter().map(|k| (k.clone(), json!(value))).collect());
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data("a")});
        let owned: serde_json::Map<String, Value> = fields.iter().map(|k| (format!("f:{k}"), json!({}))).collect();
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {LAST_APPLIED_ANNOTATION: applied.to_string()},
                "managedFields": [entry("kubectl-edit", "Update", json!({"f:data": owned}))]},
            "data": data("b")});
        let finding = stale(&live, builtin()).unwrap();
        let every: Vec<String> = fields.iter().map(|k| format!(".data.{k}")).collect();
        assert_eq!(
            finding.detail,
            format!("differs from the live object at {} (the next apply reverts it)", every.join(", "))
        );
        assert_eq!(
            finding.brief(),
            "differs from the live object at .data.k00, .data.k01, .data.k02 and 37 more (the next apply reverts it)"
        );
        // A short list is the same both ways.
        let one = stale(
            &deployment(
                r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":3}}"#,
                5,
                vec![entry("kubectl-edit", "Update", json!({"f:spec": {"f:replicas": {}}}))],
            ),
            builtin(),
        )
        .unwrap();
        assert_eq!((one.brief(), one.short.as_deref()), (one.detail.as_str(), None));
    }

    #[test]
    fn an_entry_added_inside_a_list_read_whole_makes_a_candidate() {
        // A custom resource: `kubectl apply` merges it with a JSON merge patch, so the annotation's
        // leaves are read without a schema (lists whole); the server records entries by key.
        let annotation = r#"{"apiVersion":"x.test/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"workers":[{"name":"main"}]}}"#;
        let applied = entry(
            "kubectl-client-side-apply",
            "Update",
            json!({"f:spec": {"f:workers": {".": {}, "k:{\"name\":\"main\"}": {".": {}, "f:name": {}}}}}),
        );
        let widget = |workers: Value, managers: Vec<Value>| {
            json!({"apiVersion": "x.test/v1", "kind": "Widget",
                "metadata": {"name": "w", "annotations": {LAST_APPLIED_ANNOTATION: annotation}, "managedFields": managers},
                "spec": {"workers": workers}})
        };
        let untyped = Schema::new();
        let clean = widget(json!([{"name": "main"}]), vec![applied.clone()]);
        assert!(!stale_candidate(&clean, &untyped));
        let added = entry(
            "kubectl-patch",
            "Update",
            json!({"f:spec": {"f:workers": {"k:{\"name\":\"side\"}": {".": {}, "f:name": {}}}}}),
        );
        let patched = widget(json!([{"name": "main"}, {"name": "side"}]), vec![applied, added]);
        assert!(stale_candidate(&patched, &untyped));
        assert!(stale(&patched, &untyped).unwrap().detail.contains(".spec.workers"));
    }

    #[test]
    fn missing_oversized_and_leaking() {
        let created = json!({"metadata": {"name": "a", "managedFields": [
            entry("kubectl-create", "Update", json!({"f:data": {}}))]}});
        assert_eq!(missing(&created).unwrap().kind, FindingKind::Missing);
        let by_helm = json!({"metadata": {"managedFields": [entry("helm", "Update", json!({"f:data": {}}))]}});
        assert_eq!(missing(&by_helm), None);

        let big = "x".repeat(220_000);
        assert!(oversized(&created, Some(&big)).unwrap().detail.contains("would be"));
        assert_eq!(oversized(&created, Some("{}")), None);
        let over = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: "y".repeat(300_000)}}});
        assert!(oversized(&over, None).unwrap().detail.contains("over the 262144-byte limit"));

        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"annotations": {
            LAST_APPLIED_ANNOTATION: r#"{"apiVersion":"v1","data":{"password":"c2VjcmV0"},"kind":"Secret"}"#}}});
        let finding = leaking(&secret).unwrap();
        assert_eq!(
            leaking(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"annotations": {
            LAST_APPLIED_ANNOTATION: r#"{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap"}"#}}})),
            None
        );
        assert!(!finding.detail.contains("c2VjcmV0"), "{}", finding.detail);
    }

    #[test]
    fn applied_string_data_that_the_server_stored_in_data_is_not_stale() {
        let annotation = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"s","namespace":"ns"},"stringData":{"token":"abc"}}"#;
        let fields = json!({"f:data": {".": {}, "f:token": {}}, "f:type": {}});
        let secret = |token: &str| {
            json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "s", "namespace": "ns", "annotations": {LAST_APPLIED_ANNOTATION: annotation},
                    "managedFields": [entry("kubectl-client-side-apply", "Update", fields.clone())]},
                "data": {"token": token}})
        };
        assert_eq!(stale(&secret("YWJj"), builtin()), None);
        let finding = stale(&secret("eHl6"), builtin()).expect("a changed value is stale");
        assert!(finding.detail.contains(".stringData.token") && !finding.detail.contains("abc"), "{}", finding.detail);
    }

    #[test]
    fn an_annotation_left_over_after_a_move_to_server_side_apply_is_stale() {
        let annotation = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"replicas":3}}"#;
        let owned = json!({"f:metadata": {"f:annotations": {".": {}, format!("f:{LAST_APPLIED_ANNOTATION}"): {}}},
                           "f:spec": {"f:replicas": {}}});
        let migrated = deployment(annotation, 3, vec![entry("argocd", "Apply", owned.clone())]);
        assert_eq!(left_over(&migrated), Some(vec!["argocd".to_string()]));
        assert!(stale_candidate(&migrated, builtin()));
        let finding = stale(&migrated, builtin()).unwrap();
        assert!(finding.detail.starts_with("left over from client-side apply: argocd"), "{}", finding.detail);
        // kubectl's own server-side apply keeps the annotation up to date: not left over.
        let kubectl = deployment(annotation, 3, vec![entry("kubectl", "Apply", owned.clone())]);
        assert_eq!(left_over(&kubectl), None);
        assert_eq!(stale(&kubectl, builtin()), None);
        // A client-side tool (an Update manager) owns it: not left over.
        let tool = deployment(annotation, 3, vec![entry("argocd-controller", "Update", owned.clone())]);
        assert_eq!(left_over(&tool), None);
        // Client-side apply still writes the object: not left over.
        let both = deployment(
            annotation,
            3,
            vec![entry("argocd", "Apply", owned), entry("kubectl-client-side-apply", "Update", json!({"f:spec": {}}))],
        );
        assert_eq!(left_over(&both), None);
    }

    /// Issue 32, defect 4: what `kubectl apply` (client-side) wrote, as the server stores it.
    fn applied_as_stored(annotation: Value, live: Value) -> Value {
        let mut live = live;
        live["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: annotation.to_string()});
        live["metadata"]["managedFields"] =
            json!([entry("kubectl-client-side-apply", "Update", json!({"f:spec": {}}))]);
        live
    }

    #[test]
    fn zero_and_empty_values_the_server_does_not_store_are_not_stale() {
        let pod = |mount: Value, env: Option<Value>| {
            let mut container = json!({"name": "app", "image": "app:1", "volumeMounts": [mount]});
            if let Some(env) = env {
                container["env"] = env;
            }
            json!({"containers": [container], "volumes": [{"name": "v", "emptyDir": {}}]})
        };
        let deployment = |extra: Value, pod: Value| {
            let mut spec = json!({"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod}});
            spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}, "spec": spec})
        };
        let file = deployment(
            json!({"minReadySeconds": 0}),
            pod(json!({"name": "v", "mountPath": "/v", "readOnly": false}), Some(json!([]))),
        );
        let live = deployment(json!({}), pod(json!({"name": "v", "mountPath": "/v"}), None));
        assert_eq!(stale(&applied_as_stored(file, live), builtin()), None);
    }

    #[test]
    fn a_null_for_an_absent_field_is_not_stale() {
        let file = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": null});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}});
        assert_eq!(stale(&applied_as_stored(file, live), builtin()), None);
    }

    #[test]
    fn a_field_ref_api_version_the_server_defaulted_is_not_stale() {
        let pod = |field_ref: Value| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "app", "image": "app:1"}],
                    "volumes": [{"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": field_ref}]}}]}})
        };
        let file = pod(json!({"fieldPath": "metadata.labels"}));
        let live = pod(json!({"apiVersion": "v1", "fieldPath": "metadata.labels"}));
        assert_eq!(stale(&applied_as_stored(file.clone(), live), builtin()), None);
        let edited = pod(json!({"apiVersion": "v1", "fieldPath": "metadata.name"}));
        assert_eq!(
            stale(&applied_as_stored(file, edited), builtin()).unwrap().detail,
            "differs from the live object at .spec.volumes[name=\"info\"].downwardAPI.items (the next apply reverts it)"
        );
    }
}
