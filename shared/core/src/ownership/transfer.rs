//! Handing fields from some managers to another: what `kubectl owners transfer` writes.
//!
//! When a team moves to server-side apply, fields set earlier by `kubectl edit`, `kubectl
//! patch`, `kubectl create`, client-side apply or an old Helm stay owned by those managers;
//! the new applier's next apply that drops such a field cannot delete it, because someone
//! else still owns it (kubernetes#99003). The cure is to move those managers' fields into
//! the applier's entry, which the apiserver lets a client do by writing
//! `metadata.managedFields` itself.
//!
//! [`plan_transfer`] computes the new list: every selected entry (see
//! [`ManagerSelection`]) written in the target's API version gives its fields to the
//! target's entry (created when missing, at the place of the first entry it takes from)
//! and is dropped; entries in another API version are kept and reported, because their
//! paths cannot be converted here; every other entry, subresource entries included, is
//! kept byte for byte. [`plan_object_transfer`] wraps it into the JSON Patch the write
//! path sends and the object it produces.
//!
//! ```
//! use fieldwise_core::ownership::{plan_object_transfer, ManagerSelection, Operation, TransferTarget};
//! use serde_json::json;
//!
//! let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "managedFields": [
//!     {"manager": "argocd", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
//!      "fieldsV1": {"f:data": {"f:a": {}}}},
//!     {"manager": "kubectl-patch", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
//!      "fieldsV1": {"f:data": {"f:b": {}}}}]}, "data": {"a": "1", "b": "2"}});
//! let from = ManagerSelection::parse(&["human"]).unwrap();
//! let to = TransferTarget { manager: "argocd".into(), operation: Operation::Apply };
//! let transfer = plan_object_transfer(&live, &from, &to, None).unwrap();
//! let list = transfer.result["metadata"]["managedFields"].as_array().unwrap();
//! assert_eq!(list.len(), 1);
//! assert_eq!(list[0]["fieldsV1"], json!({"f:data": {"f:a": {}, "f:b": {}}}));
//! ```

use serde_json::{json, Value};

use super::managers::{ManagedFieldsEntry, ManagedFieldsError, Manager, Operation};
use super::selection::ManagerSelection;
use crate::fieldpath::{Path, Set};

/// The manager that takes the fields, and how it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferTarget {
    /// Its field manager name (`argocd`, `helm`, `kubectl`, `flux`...).
    pub manager: String,
    /// `Apply` for a server-side applier (the usual case), `Update` for a controller that updates.
    pub operation: Operation,
}

/// One entry whose fields move to the target.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedEntry {
    /// Its identity.
    pub from: Manager,
    /// The fields it owned, all of which move.
    pub fields: Set,
}

/// A selected entry that stays where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptEntry {
    /// Its identity.
    pub manager: Manager,
    /// The API version its fields are written in, which is not the target's.
    pub api_version: String,
}

/// A moved field that other managers keep owning: the target shares it with them, so its
/// next apply that drops the field does not delete it.
#[derive(Debug, Clone, PartialEq)]
pub struct StillShared {
    /// The field.
    pub path: Path,
    /// Who else owns it after the transfer.
    pub with: Vec<Manager>,
}

/// What a transfer does to one object's `metadata.managedFields`.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferPlan {
    /// The target's identity.
    pub target: Manager,
    /// The API version of the target's entry (and of the fields that move).
    pub api_version: String,
    /// Whether the target had no entry, so one is created.
    pub created: bool,
    /// The entries whose fields move, in list order.
    pub moved: Vec<MovedEntry>,
    /// Selected entries left alone, because they are written in another API version.
    pub kept: Vec<KeptEntry>,
    /// Moved fields (leaves) that other managers still own afterwards.
    pub shared: Vec<StillShared>,
    /// The target's fields before.
    pub target_before: Set,
    /// The target's fields after.
    pub target_after: Set,
    /// The new list, or `None` when nothing moves.
    pub managed_fields: Option<Vec<Value>>,
}

impl TransferPlan {
    /// The fields that move, all entries together.
    pub fn moved_fields(&self) -> Set {
        self.moved.iter().fold(Set::new(), |all, m| all.union(&m.fields))
    }

    /// Whether the transfer changes nothing.
    pub fn is_empty(&self) -> bool {
        self.managed_fields.is_none()
    }
}

/// Why a transfer cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransferError {
    /// The object's `metadata.managedFields` cannot be read.
    #[error(transparent)]
    ManagedFields(#[from] ManagedFieldsError),
    /// The target has no name.
    #[error("the manager that takes the fields (--to) must have a name")]
    NoTarget,
}

/// The transfer of the fields of the entries `from` selects to `to`, planned against the
/// raw `metadata.managedFields` list of an object read as `object_api_version` (the new
/// entry's version when the target has none). `now`
/// (RFC 3339) becomes the target entry's time when fields move; `None` keeps its time.
pub fn plan_transfer(
    raw: &[Value],
    object_api_version: &str,
    from: &ManagerSelection,
    to: &TransferTarget,
    now: Option<&str>,
) -> Result<TransferPlan, TransferError> {
    if to.manager.is_empty() {
        return Err(TransferError::NoTarget);
    }
    let entries = raw
        .iter()
        .enumerate()
        .map(|(i, v)| ManagedFieldsEntry::from_value(v).map_err(|e| ManagedFieldsError { index: Some(i), ..e }))
        .collect::<Result<Vec<_>, _>>()?;
    let target_index = find_target(&entries, to, object_api_version);
    // The target's version; for a new entry the object's, else (an object read without it) the
    // first selected entry's.
    let api_version = match target_index {
        Some(i) => entries[i].api_version.clone(),
        None if !object_api_version.is_empty() => object_api_version.to_string(),
        None => entries.iter().find(|e| from.selects(e)).map(|e| e.api_version.clone()).unwrap_or_default(),
    };
    let target = Manager {
        name: to.manager.clone(),
        operation: to.operation,
        api_version: (to.operation == Operation::Update).then(|| api_version.clone()),
        subresource: String::new(),
    };
    let mut moved_at = Vec::new();
    let mut kept = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if Some(i) == target_index || !from.selects(entry) || entry.identity() == target {
            continue;
        }
        if entry.api_version == api_version {
            moved_at.push(i);
        } else {
            kept.push(KeptEntry { manager: entry.identity(), api_version: entry.api_version.clone() });
        }
    }
    let target_before = target_index.map(|i| entries[i].fields.clone()).unwrap_or_default();
    let moved: Vec<MovedEntry> = moved_at
        .iter()
        .map(|&i| MovedEntry { from: entries[i].identity(), fields: entries[i].fields.clone() })
        .collect();
    let moved_fields = moved.iter().fold(Set::new(), |all, m| all.union(&m.fields));
    let target_after = target_before.union(&moved_fields);
    let staying: Vec<&ManagedFieldsEntry> = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != target_index && !moved_at.contains(i))
        .map(|(_, e)| e)
        .collect();
    let shared = still_shared(&moved_fields, &staying);
    let managed_fields = (!moved.is_empty()).then(|| {
        let entry = ManagedFieldsEntry {
            manager: to.manager.clone(),
            operation: to.operation,
            api_version: api_version.clone(),
            time: now.map(str::to_string).or_else(|| target_index.and_then(|i| entries[i].time.clone())),
            fields_type: "FieldsV1".into(),
            fields: target_after.clone(),
            subresource: String::new(),
        };
        rewrite(raw, target_index, &moved_at, entry.to_value())
    });
    Ok(TransferPlan {
        target,
        api_version,
        created: target_index.is_none(),
        moved,
        kept,
        shared,
        target_before,
        target_after,
        managed_fields,
    })
}

/// The target's entry: its `Apply` entry on the main resource; for `Update`, its entry in
/// the object's API version, else its first one.
fn find_target(entries: &[ManagedFieldsEntry], to: &TransferTarget, object_api_version: &str) -> Option<usize> {
    let candidates: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.manager == to.manager && e.operation == to.operation && e.subresource.is_empty())
        .map(|(i, _)| i)
        .collect();
    candidates.iter().copied().find(|&i| entries[i].api_version == object_api_version).or(candidates.first().copied())
}

/// The list with the target's entry replaced (or put where the first moved entry was) and
/// the moved entries dropped; every other entry as it was, byte for byte.
fn rewrite(raw: &[Value], target_index: Option<usize>, moved_at: &[usize], target: Value) -> Vec<Value> {
    let insert_at = target_index.or(moved_at.first().copied());
    let mut out = Vec::with_capacity(raw.len());
    for (i, item) in raw.iter().enumerate() {
        if Some(i) == insert_at {
            out.push(target.clone());
        } else if !moved_at.contains(&i) {
            out.push(item.clone());
        }
    }
    out
}

/// The moved leaves other entries own too, with those entries' identities.
fn still_shared(moved: &Set, staying: &[&ManagedFieldsEntry]) -> Vec<StillShared> {
    moved
        .leaves()
        .iter()
        .filter_map(|path| {
            let with: Vec<Manager> =
                staying.iter().filter(|e| e.fields.has(path.elements())).map(|e| e.identity()).collect();
            (!with.is_empty()).then_some(StillShared { path, with })
        })
        .collect()
}

/// A transfer planned against one version of an object: the plan, the JSON Patch that
/// writes it (empty when nothing moves; the write path adds its guard), and the result.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer {
    /// What moves.
    pub plan: TransferPlan,
    /// `[{"op": "add", "path": "/metadata/managedFields", "value": [...]}]`, or `[]`.
    pub patch: Value,
    /// The object with its new `metadata.managedFields`.
    pub result: Value,
}

/// Plans the transfer on `live` (see [`plan_transfer`]).
pub fn plan_object_transfer(
    live: &Value,
    from: &ManagerSelection,
    to: &TransferTarget,
    now: Option<&str>,
) -> Result<Transfer, TransferError> {
    let raw = match live.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => {
            return Err(TransferError::ManagedFields(ManagedFieldsError {
                index: None,
                manager: None,
                reason: "expected a list".into(),
            }))
        }
    };
    let api_version = live.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let plan = plan_transfer(&raw, api_version, from, to, now)?;
    let mut result = live.clone();
    let patch = match &plan.managed_fields {
        Some(list) => {
            if let Some(meta) = result.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("managedFields".into(), Value::Array(list.clone()));
            }
            json!([{"op": "add", "path": "/metadata/managedFields", "value": list}])
        }
        None => json!([]),
    };
    Ok(Transfer { plan, patch, result })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_patch;

    fn entry(manager: &str, operation: &str, api_version: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": api_version,
               "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    fn human() -> ManagerSelection {
        ManagerSelection::parse(&["human"]).unwrap()
    }

    fn apply(manager: &str) -> TransferTarget {
        TransferTarget { manager: manager.into(), operation: Operation::Apply }
    }

    #[test]
    fn selected_fields_join_the_appliers_entry_and_the_rest_stays_byte_for_byte() {
        let controller = entry("kube-controller-manager", "Update", "apps/v1", json!({"f:status": {"f:replicas": {}}}));
        let mut status = entry("kubectl-edit", "Update", "apps/v1", json!({"f:status": {"f:x": {}}}));
        status["subresource"] = "status".into();
        let raw = vec![
            entry("argocd", "Apply", "apps/v1", json!({"f:spec": {"f:replicas": {}}})),
            entry("kubectl-create", "Update", "apps/v1", json!({"f:spec": {"f:paused": {}, "f:replicas": {}}})),
            controller.clone(),
            entry("kubectl-patch", "Update", "apps/v1", json!({"f:metadata": {"f:labels": {"f:a": {}}}})),
            status.clone(),
        ];
        let plan = plan_transfer(&raw, "apps/v1", &human(), &apply("argocd"), Some("2026-02-03T04:05:06Z")).unwrap();
        assert!(!plan.created);
        let names: Vec<&str> = plan.moved.iter().map(|m| m.from.name.as_str()).collect();
        assert_eq!(names, ["kubectl-create", "kubectl-patch"]);
        let list = plan.managed_fields.unwrap();
        assert_eq!(
            list,
            vec![
                json!({"manager": "argocd", "operation": "Apply", "apiVersion": "apps/v1",
                       "time": "2026-02-03T04:05:06Z", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:paused": {}, "f:replicas": {}}}}),
                controller,
                status,
            ]
        );
        assert!(plan.shared.is_empty());
        assert_eq!(plan.target_after.leaves().len(), 3);
    }

    #[test]
    fn a_missing_target_is_created_where_the_first_moved_entry_was() {
        let raw = vec![
            entry("kube-controller-manager", "Update", "v1", json!({"f:metadata": {"f:annotations": {"f:c": {}}}})),
            entry("before-first-apply", "Update", "v1", json!({"f:data": {".": {}, "f:a": {}}})),
            entry("kubectl-label", "Update", "v1", json!({"f:metadata": {"f:labels": {"f:l": {}}}})),
        ];
        let plan = plan_transfer(&raw, "v1", &human(), &apply("flux"), None).unwrap();
        assert!(plan.created);
        let list = plan.managed_fields.unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0], raw[0]);
        assert_eq!((list[1]["manager"].as_str(), list[1]["operation"].as_str()), (Some("flux"), Some("Apply")));
        assert!(list[1].get("time").is_none(), "a new entry without --now has no time");
    }

    #[test]
    fn fields_others_still_own_are_reported_shared() {
        let raw = vec![
            entry("kubectl-edit", "Update", "v1", json!({"f:data": {"f:a": {}, "f:b": {}}})),
            entry("helm", "Update", "v1", json!({"f:data": {"f:a": {}}})),
        ];
        let plan = plan_transfer(&raw, "v1", &human(), &apply("argocd"), None).unwrap();
        assert_eq!(plan.shared.len(), 1);
        assert_eq!(plan.shared[0].path.to_string(), ".data.a");
        assert_eq!(plan.shared[0].with[0].name, "helm");
        // Named with its class, Helm's entry moves too and nothing stays shared.
        let both = ManagerSelection::parse(&["human,helm-update"]).unwrap();
        let plan = plan_transfer(&raw, "v1", &both, &apply("argocd"), None).unwrap();
        assert!(plan.shared.is_empty());
        assert_eq!(plan.managed_fields.unwrap().len(), 1);
    }

    #[test]
    fn other_api_versions_are_kept_and_nothing_to_move_is_no_change() {
        let raw = vec![
            entry("argocd", "Apply", "autoscaling/v2", json!({"f:spec": {"f:minReplicas": {}}})),
            entry(
                "kubectl-edit",
                "Update",
                "autoscaling/v1",
                json!({"f:spec": {"f:targetCPUUtilizationPercentage": {}}}),
            ),
        ];
        let plan = plan_transfer(&raw, "autoscaling/v2", &human(), &apply("argocd"), None).unwrap();
        assert!(plan.is_empty());
        assert_eq!(plan.kept.len(), 1);
        assert_eq!(plan.kept[0].api_version, "autoscaling/v1");
        let none = plan_transfer(&raw, "v1", &ManagerSelection::parse(&["helm-update"]).unwrap(), &apply("x"), None);
        assert!(none.unwrap().is_empty());
    }

    #[test]
    fn an_update_target_keys_by_version_and_is_never_its_own_source() {
        let raw = vec![
            entry("ci", "Update", "v1", json!({"f:data": {"f:a": {}}})),
            entry("ci", "Apply", "v1", json!({"f:data": {"f:b": {}}})),
            entry("kubectl-patch", "Update", "v1", json!({"f:data": {"f:c": {}}})),
        ];
        let from = ManagerSelection::parse(&["ci", "human"]).unwrap();
        let to = TransferTarget { manager: "ci".into(), operation: Operation::Update };
        let plan = plan_transfer(&raw, "v1", &from, &to, None).unwrap();
        assert_eq!(plan.target.identifier(), r#"{"manager":"ci","operation":"Update","apiVersion":"v1"}"#);
        let names: Vec<String> = plan.moved.iter().map(|m| m.from.identifier()).collect();
        assert_eq!(
            names,
            [
                r#"{"manager":"ci","operation":"Apply"}"#,
                r#"{"manager":"kubectl-patch","operation":"Update","apiVersion":"v1"}"#
            ]
        );
        let list = plan.managed_fields.unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0]["fieldsV1"], json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}}));
        assert!(matches!(plan_transfer(&raw, "v1", &from, &apply(""), None), Err(TransferError::NoTarget)));
        let created = plan_transfer(&raw, "", &from, &apply("new"), None).unwrap();
        assert_eq!((created.api_version.as_str(), created.moved.len()), ("v1", 3), "without the object's version");
    }

    #[test]
    fn the_object_patch_produces_the_planned_result() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "resourceVersion": "5", "managedFields": [
                entry("kubectl-create", "Update", "v1", json!({"f:data": {".": {}, "f:a": {}}}))]},
            "data": {"a": "1"}});
        let t = plan_object_transfer(&live, &human(), &apply("argocd"), Some("2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(json_patch::apply(&live, &t.patch).unwrap(), t.result);
        assert_eq!(t.result["metadata"]["managedFields"][0]["manager"], "argocd");
        let again = plan_object_transfer(&t.result, &human(), &apply("argocd"), None).unwrap();
        assert_eq!((again.patch, again.result), (json!([]), t.result));
        let bad = json!({"metadata": {"managedFields": {"x": 1}}});
        assert!(matches!(
            plan_object_transfer(&bad, &human(), &apply("a"), None),
            Err(TransferError::ManagedFields(_))
        ));
    }
}
