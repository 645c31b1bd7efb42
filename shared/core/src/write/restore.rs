//! Putting a pre-image back: what `kubectl safe-patch undo` decides before it writes.
//!
//! A backup holds the object as it was before a write (`before`) and, once the write is
//! confirmed, what it produced (`after`). Undoing it is three questions, each answered
//! here from values alone:
//!
//! - which backup to undo: [`next_to_undo`], an undo stack (a second undo steps back
//!   further instead of re-doing what the first one undid);
//! - whether the object is still the one backed up ([`recreated`]): one deleted and created
//!   again under the same name is another object, and the old one's values would replace
//!   the new one's, so the command asks for `--onto-recreated` (`--force` does not cover it);
//! - whether the object was changed by someone else since that write ([`since_the_write`]),
//!   and if so whether the restore writes back a field they changed
//!   ([`overlapping_change`]): a restore is guarded, like every write, by exactly the fields
//!   it writes back, which must still hold what the write put there; a later change of
//!   other fields (a label set by another tool, an autoscaler's replicas) does not block
//!   it, and one of those fields refuses it unless `--force`, naming the field and its
//!   manager;
//! - what to send ([`plan_restore`]): a JSON merge patch that takes back what the write
//!   changed, from what the write made of the pre-image (its patch replayed on `before`,
//!   [`replay`]) back to `before`, applied to the live object; so a field another writer
//!   changed before the write landed (which a field guard lets through) is kept. Only what a user could have set is compared
//!   ([`restorable`]), none of what the server or a controller owns (status, server
//!   metadata, and labels or annotations a controller manages, like
//!   `deployment.kubernetes.io/revision`). Through the `status` subresource it is the
//!   status alone. Without `after` (a write never confirmed), the whole pre-image is put back.
//!
//! ```
//! use fieldwise_core::write::restore::plan_restore;
//! use serde_json::json;
//!
//! use fieldwise_core::plan::PatchType;
//! use fieldwise_core::write::restore::replay;
//! use fieldwise_core::schema::Schema;
//!
//! let before = json!({"metadata": {"name": "c", "resourceVersion": "1"}, "data": {"k": "old"}});
//! let patch = json!({"data": {"k": "new"}});
//! // Another writer added x just before the write landed; the server answered `live`.
//! let live = json!({"metadata": {"name": "c", "resourceVersion": "3"}, "data": {"k": "new", "x": "1"}});
//! let made = replay(&before, &patch, PatchType::Merge, &Schema::new(), None).unwrap();
//! let planned = plan_restore(&live, &before, Some(&made), None, false).unwrap();
//! assert_eq!(planned.patch, json!({"data": {"k": "old"}}));
//! assert_eq!(planned.result["data"], json!({"k": "old", "x": "1"}));
//! // Without what the write made, the pre-image is put back whole.
//! let whole = plan_restore(&live, &before, None, None, false).unwrap();
//! assert_eq!(whole.result["data"], json!({"k": "old"}));
//! ```

use serde_json::{Map, Value};

use crate::change::effect::Effect;
use crate::fieldpath::{value_at, Path};
use crate::merge_patch::{self, MergePatchError};
use crate::ownership::path_owners::owners_at;
use crate::ownership::{self, managed_fields_of, remove_server_set_metadata};
use crate::plan::{PatchType, Planned};
use crate::schema::{Schema, TypeId};
use crate::{json_patch, strategic};

/// The part of `object` a restore writes back; `controller_keys` are the
/// `(labels|annotations, key)` pairs controllers own ([`controller_owned_metadata`]).
pub fn restorable(object: &Value, controller_keys: &[(String, String)], subresource: Option<&str>) -> Value {
    if subresource == Some("status") {
        let mut only = Map::new();
        if let Some(status) = object.get("status") {
            only.insert("status".into(), status.clone());
        }
        return Value::Object(only);
    }
    let mut copy = object.clone();
    if let Value::Object(map) = &mut copy {
        map.remove("status");
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            remove_server_set_metadata(meta);
            for (field, key) in controller_keys {
                if let Some(Value::Object(entries)) = meta.get_mut(field) {
                    entries.remove(key);
                }
            }
        }
    }
    copy
}

/// `(labels|annotations, key)` pairs that controllers own in `live`'s managedFields
/// (none when they cannot be read: the restore then writes every label back).
pub fn controller_owned_metadata(live: &Value) -> Vec<(String, String)> {
    ownership::controller_owned_metadata(&managed_fields_of(live).unwrap_or_default())
}

/// Whether someone other than a controller changed the object since `after`:
/// controllers' own writes (status, revision annotations) do not count.
pub fn changed_by_others(after: &Value, live: &Value, subresource: Option<&str>) -> bool {
    let keys = controller_owned_metadata(live);
    restorable(after, &keys, subresource) != restorable(live, &keys, subresource)
}

/// The two sides a restore preview compares: the live object and what the restore makes
/// of it, both as [`restorable`] sees them (no status, no server metadata, no
/// controller-owned keys).
/// With `managers` (the write undone set `metadata.managedFields` itself, see
/// [`plan_restore`]), both sides show the managers too: they are what changes.
pub fn restore_sides(live: &Value, restored: &Value, subresource: Option<&str>, managers: bool) -> (Value, Value) {
    let keys = controller_owned_metadata(live);
    let side = |object: &Value| {
        let mut view = restorable(object, &keys, subresource);
        if managers {
            if let (Some(list), Some(Value::Object(meta))) = (object.pointer(MANAGED_FIELDS), view.get_mut("metadata"))
            {
                meta.insert("managedFields".into(), list.clone());
            }
        }
        view
    };
    (side(live), side(restored))
}

/// What a write's `patch` (of `patch_type`) makes of `before`, replayed locally: the write's
/// own change, without what other writers did before it landed. `None` where it cannot be
/// replayed: a server-side apply (the server merges it by ownership), a strategic merge
/// patch of a type `schema` does not describe, or a patch that no longer applies.
pub fn replay(
    before: &Value,
    patch: &Value,
    patch_type: PatchType,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Option<Value> {
    match patch_type {
        PatchType::Merge => merge_patch::try_apply(before, patch).ok(),
        PatchType::Json => json_patch::apply(before, patch).ok(),
        PatchType::Strategic => strategic::apply(before, patch, schema, ty?).ok(),
        PatchType::Apply => None,
    }
}

/// The restore of `before` planned against `live`: a JSON merge patch from what the write
/// made (`written`: [`replay`], else what the server answered; the live object when
/// unknown) back to `before`, over the restorable fields (lists restored whole), and the
/// object it produces. A restore that changes nothing is the empty patch `{}`.
///
/// With `managers`, the write undone set `metadata.managedFields` itself (`kubectl owners
/// transfer`, `last-applied migrate`, a patch of them:
/// [`crate::ownership::patch_sets_managed_fields`] of its patch): the managers it changed
/// are put back too ([`restored_managers`]), each entry the write left alone keeps what it
/// holds now. Through a subresource the managers are left alone.
pub fn plan_restore(
    live: &Value,
    before: &Value,
    written: Option<&Value>,
    subresource: Option<&str>,
    managers: bool,
) -> Result<Planned, MergePatchError> {
    let keys = controller_owned_metadata(live);
    let written_object = written.unwrap_or(live);
    let written_view = restorable(written_object, &keys, subresource);
    let patch = merge_patch::create_two_way(&written_view, &restorable(before, &keys, subresource))?;
    let mut patch = if patch.is_null() { Value::Object(Map::new()) } else { patch };
    if managers && subresource.is_none() {
        let list = restored_managers(live, before, written_object);
        if live.pointer(MANAGED_FIELDS) != Some(&list) {
            if let Value::Object(map) = &mut patch {
                let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert("managedFields".into(), list);
                }
            }
        }
    }
    let result = merge_patch::try_apply(live, &patch)?;
    Ok(Planned { patch_type: PatchType::Merge, patch, result, findings: Vec::new() })
}

const MANAGED_FIELDS: &str = "/metadata/managedFields";

/// The managedFields list a restore writes: `live`'s, with every entry the write changed
/// (it differs between `before` and `written`, what the write made) put back as `before`
/// had it (removed when `before` had none, added back when the write removed it). An
/// entry is known by manager, operation, subresource and apiVersion, as the apiserver
/// keeps them apart; entries the write left alone keep what they hold now, so a
/// controller's later write is not lost.
pub fn restored_managers(live: &Value, before: &Value, written: &Value) -> Value {
    let entries = |object: &Value| -> Vec<Value> {
        object.pointer(MANAGED_FIELDS).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let (before, written, mut list) = (entries(before), entries(written), entries(live));
    let find = |entries: &[Value], key: &EntryKey| entries.iter().find(|e| &entry_key(e) == key).cloned();
    let mut changed: Vec<EntryKey> = before.iter().chain(&written).map(entry_key).collect();
    changed.sort();
    changed.dedup();
    changed.retain(|key| find(&before, key) != find(&written, key));
    // Entries the write changed or removed take `before`'s form; those it added go.
    list.retain(|e| {
        let key = entry_key(e);
        !changed.contains(&key) || find(&before, &key).is_some()
    });
    for entry in list.iter_mut() {
        let key = entry_key(entry);
        if changed.contains(&key) {
            if let Some(old) = find(&before, &key) {
                *entry = old;
            }
        }
    }
    // Entries the write removed come back where `before` had them (after the entry before them).
    let mut cursor = 0;
    for entry in &before {
        let key = entry_key(entry);
        match list.iter().position(|e| entry_key(e) == key) {
            Some(at) => cursor = at + 1,
            None if changed.contains(&key) => {
                list.insert(cursor, entry.clone());
                cursor += 1;
            }
            None => {}
        }
    }
    Value::Array(list)
}

/// What tells managedFields entries apart: manager, operation, subresource, apiVersion.
type EntryKey = [Option<String>; 4];

fn entry_key(entry: &Value) -> EntryKey {
    ["manager", "operation", "subresource", "apiVersion"]
        .map(|k| entry.get(k).and_then(Value::as_str).map(String::from))
}

/// What happened to an object since the write a backup was taken for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SinceTheWrite {
    /// Nothing but controllers touched it: restoring loses nobody's change.
    Untouched,
    /// Someone changed it: restoring would overwrite that change.
    Changed {
        /// The resourceVersion the write produced.
        written: String,
        /// The live resourceVersion.
        now: String,
    },
    /// The write was never confirmed (its connection broke), so there is nothing to compare with.
    NeverConfirmed,
}

/// Whether `live` is still what the write produced (`after_resource_version`, `after`),
/// but for controllers' own writes.
pub fn since_the_write(
    after_resource_version: Option<&str>,
    after: Option<&Value>,
    live: &Value,
    subresource: Option<&str>,
) -> SinceTheWrite {
    let now = live.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
    let untouched = after.is_some_and(|after| !changed_by_others(after, live, subresource));
    match after_resource_version {
        Some(written) if written == now || untouched => SinceTheWrite::Untouched,
        Some(written) => SinceTheWrite::Changed { written: written.to_string(), now: now.to_string() },
        None => SinceTheWrite::NeverConfirmed,
    }
}

/// A field a restore would write back that someone changed since the write being undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlappingChange {
    /// The field (kubectl's notation when displayed).
    pub field: Path,
    /// The managers that own it now (`manager (Operation)`, with `/subresource` when
    /// through one): who changed it, as managedFields tells; empty when nobody does.
    pub changed_by: Vec<String>,
}

/// The first field (in path order) that the restore of `live` into `restored` writes back
/// and that no longer holds what the write being undone left there (`after`, the server's
/// answer to it): restoring it would overwrite somebody's later change. `None` when every
/// field it writes back still holds the write's value, however much else changed. Only what
/// a restore writes is compared ([`restorable`]); `schema` and `ty` tell list entries apart.
pub fn overlapping_change(
    after: &Value,
    live: &Value,
    restored: &Value,
    subresource: Option<&str>,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Option<OverlappingChange> {
    let keys = controller_owned_metadata(live);
    let view = |object: &Value| restorable(object, &keys, subresource);
    let (now, written) = (view(live), view(after));
    let restore = Effect::between(&now, &view(restored), schema, ty);
    let edit = restore.edits().iter().find(|edit| value_at(&written, edit.path.elements()) != edit.before.as_ref())?;
    let entries = managed_fields_of(live).unwrap_or_default();
    let changed_by = owners_at(&entries, &edit.path)
        .owners
        .iter()
        .map(|(index, _)| {
            let entry = &entries[*index];
            let through =
                if entry.subresource.is_empty() { String::new() } else { format!(", /{}", entry.subresource) };
            format!("{} ({}{through})", entry.manager, entry.operation.as_str())
        })
        .collect();
    Some(OverlappingChange { field: edit.path.clone(), changed_by })
}

/// The UIDs of the object a backup was taken of (`before`) and of the `live` one, when they
/// differ: the object was deleted and created again since the backup. `None` when they are
/// the same object, or either side names no UID (nothing says otherwise).
pub fn recreated(before: &Value, live: &Value) -> Option<(String, String)> {
    let uid = |object: &Value| object.pointer("/metadata/uid").and_then(Value::as_str).map(String::from);
    match (uid(before), uid(live)) {
        (Some(then), Some(now)) if then != now => Some((then, now)),
        _ => None,
    }
}

/// One step of an undo history (a written backup of an object, or a run), oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoStep<'a> {
    /// The step's id (a backup's id, a run's id).
    pub id: &'a str,
    /// For a step that was itself an undo: the id of the step it undid.
    pub undoes: Option<&'a str>,
}

/// The step a plain `undo` restores: the newest write still in effect. Read from the
/// newest: an undo that is in effect cancels the step it undid (so two undos step back
/// two writes, never re-do the first), and an undo that was itself undone (a re-do
/// with `--to`) cancels nothing. `None` when every write is undone.
pub fn next_to_undo(history: &[UndoStep<'_>]) -> Option<usize> {
    let mut cancelled: Vec<&str> = Vec::new();
    for (index, step) in history.iter().enumerate().rev() {
        if cancelled.contains(&step.id) {
            continue;
        }
        match step.undoes {
            Some(undone) => cancelled.push(undone),
            None => return Some(index),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_restores_status_only_and_the_rest_leaves_it_out() {
        let object = json!({"metadata": {"name": "d", "resourceVersion": "3", "uid": "u"},
                            "spec": {"replicas": 2}, "status": {"replicas": 1}});
        assert_eq!(restorable(&object, &[], Some("status")), json!({"status": {"replicas": 1}}));
        assert_eq!(restorable(&object, &[], None), json!({"metadata": {"name": "d"}, "spec": {"replicas": 2}}));
        assert_eq!(
            restorable(&object, &[], Some("scale")),
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 2}})
        );
        let mut moved = object.clone();
        moved["status"]["replicas"] = json!(2);
        moved["metadata"]["resourceVersion"] = json!("4");
        assert!(!changed_by_others(&object, &moved, None));
        assert!(changed_by_others(&object, &moved, Some("status")));
    }

    #[test]
    fn a_restore_leaves_controller_owned_labels_and_server_metadata_alone() {
        let managed = json!([{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}}}}]);
        let before = json!({"metadata": {"name": "d", "resourceVersion": "1",
                "annotations": {"deployment.kubernetes.io/revision": "1", "team": "a"}},
            "spec": {"replicas": 1, "paused": true}});
        let live = json!({"metadata": {"name": "d", "resourceVersion": "7", "managedFields": managed,
                "annotations": {"deployment.kubernetes.io/revision": "2", "team": "b"}},
            "spec": {"replicas": 3}, "status": {"replicas": 3}});
        let planned = plan_restore(&live, &before, None, None, false).unwrap();
        assert_eq!(planned.patch_type, PatchType::Merge);
        assert_eq!(
            planned.patch,
            json!({"metadata": {"annotations": {"team": "a"}}, "spec": {"replicas": 1, "paused": true}})
        );
        assert_eq!(planned.result["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");
        assert_eq!(planned.result["metadata"]["resourceVersion"], "7", "server metadata is not restored");
        assert_eq!(planned.result["status"], json!({"replicas": 3}), "status is not restored");
        // Restoring onto the pre-image itself changes nothing.
        assert_eq!(plan_restore(&before, &before, None, None, false).unwrap().patch, json!({}));
    }

    #[test]
    fn through_the_status_subresource_only_status_is_restored() {
        let before = json!({"metadata": {"name": "w"}, "spec": {"replicas": 1}, "status": {"phase": "A"}});
        let live = json!({"metadata": {"name": "w"}, "spec": {"replicas": 5}, "status": {"phase": "B", "x": 1}});
        let planned = plan_restore(&live, &before, None, Some("status"), false).unwrap();
        assert_eq!(planned.patch, json!({"status": {"phase": "A", "x": null}}));
        assert_eq!(planned.result["spec"]["replicas"], 5);
    }

    #[test]
    fn a_change_another_writer_made_before_the_write_landed_is_kept() {
        // A field guard lets a disjoint write land between the preview (the backup's
        // `before`) and ours: the write produced `after`, holding both changes.
        let before = json!({"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}});
        let after = json!({"metadata": {"name": "c", "labels": {"a": "1", "theirs": "x"}},
                           "data": {"k": "ours", "writer": "was-here"}});
        let patch = json!({"data": {"k": "ours"}});
        let made = replay(&before, &patch, PatchType::Merge, &Schema::new(), None).unwrap();
        let planned = plan_restore(&after, &before, Some(&made), None, false).unwrap();
        assert_eq!(planned.patch, json!({"data": {"k": "v"}}));
        assert_eq!(planned.result["data"], json!({"k": "v", "writer": "was-here"}));
        assert_eq!(planned.result["metadata"]["labels"], json!({"a": "1", "theirs": "x"}));
        // A field of ours changed since (undo --force): it goes back too; later changes elsewhere stay.
        let mut later = after.clone();
        later["data"]["k"] = json!("someone");
        later["data"]["new"] = json!("n");
        let forced = plan_restore(&later, &before, Some(&made), None, false).unwrap();
        assert_eq!(forced.result["data"], json!({"k": "v", "writer": "was-here", "new": "n"}));
        // What the server answered holds the other writer's change too: restoring from it loses that.
        let from_answer = plan_restore(&after, &before, Some(&after), None, false).unwrap();
        assert_eq!(from_answer.result["data"], json!({"k": "v"}));
    }

    #[test]
    fn a_write_that_set_the_managers_is_undone_entry_by_entry() {
        let entry = |manager: &str, operation: &str, field: &str| {
            json!({"manager": manager, "operation": operation, "apiVersion": "v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {format!("f:{field}"): {}}}})
        };
        let object = |list: Vec<Value>| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": list},
                   "data": {"a": "1", "s": "1"}})
        };
        let before = object(vec![entry("kubectl-edit", "Update", "a"), entry("operator", "Update", "s")]);
        // The transfer handed kubectl-edit's field to argocd.
        let written = object(vec![entry("argocd", "Apply", "a"), entry("operator", "Update", "s")]);
        // Since, the operator wrote again (its entry changed): that is kept.
        let live = object(vec![entry("argocd", "Apply", "a"), entry("operator", "Update", "t")]);
        let planned = plan_restore(&live, &before, Some(&written), None, true).unwrap();
        assert_eq!(
            planned.result["metadata"]["managedFields"],
            json!([entry("kubectl-edit", "Update", "a"), entry("operator", "Update", "t")])
        );
        assert_eq!(planned.patch, json!({"metadata": {"managedFields": planned.result["metadata"]["managedFields"]}}));
        // Without `managers` (an ordinary write), the managers are the server's business.
        assert_eq!(plan_restore(&live, &before, Some(&written), None, false).unwrap().patch, json!({}));
        // Already restored: nothing to send.
        let restored = planned.result.clone();
        assert_eq!(plan_restore(&restored, &before, Some(&written), None, true).unwrap().patch, json!({}));
        // The preview shows the managers only when they are the change.
        let (old, new) = restore_sides(&live, &planned.result, None, true);
        assert_ne!(old, new);
        assert_eq!(
            restore_sides(&live, &planned.result, None, false).0,
            restore_sides(&live, &planned.result, None, false).1
        );
    }

    #[test]
    fn every_patch_type_but_apply_replays() {
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("apps", "v1", "Deployment"));
        let before = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}}});
        let strategic = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x:2"}]}}}});
        let made = replay(&before, &strategic, PatchType::Strategic, schema, ty).unwrap();
        assert_eq!(made["spec"]["template"]["spec"]["containers"][0]["image"], "x:2");
        let json_patch = json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]);
        assert_eq!(replay(&before, &json_patch, PatchType::Json, schema, ty).unwrap()["spec"]["replicas"], 3);
        assert_eq!(replay(&before, &strategic, PatchType::Strategic, schema, None), None, "no schema, no replay");
        assert_eq!(replay(&before, &json!({"spec": {}}), PatchType::Apply, schema, ty), None);
    }

    #[test]
    fn since_the_write_tells_untouched_changed_and_unconfirmed_apart() {
        let after = json!({"metadata": {"name": "c", "resourceVersion": "5"}, "data": {"k": "v"}});
        assert_eq!(since_the_write(Some("5"), Some(&after), &after, None), SinceTheWrite::Untouched);
        // A controller's status write moves the resourceVersion, not what a user set.
        let mut status_only = after.clone();
        status_only["metadata"]["resourceVersion"] = json!("6");
        status_only["status"] = json!({"ready": true});
        assert_eq!(since_the_write(Some("5"), Some(&after), &status_only, None), SinceTheWrite::Untouched);
        let mut edited = status_only.clone();
        edited["data"]["k"] = json!("w");
        assert_eq!(
            since_the_write(Some("5"), Some(&after), &edited, None),
            SinceTheWrite::Changed { written: "5".into(), now: "6".into() }
        );
        assert_eq!(since_the_write(None, None, &edited, None), SinceTheWrite::NeverConfirmed);
    }

    #[test]
    fn a_restore_is_refused_only_by_a_change_of_a_field_it_writes_back() {
        // Issue #32.10: the write set the image; later an autoscaler scaled and a tool labelled.
        let schema = crate::schema::builtin();
        let ty = schema.root(&crate::schema::Gvk::new("apps", "v1", "Deployment"));
        let deployment = |image: &str, replicas: i64, labels: Value, env: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "d", "resourceVersion": "5", "labels": labels, "managedFields": [
                       {"manager": "hpa", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"},
                       {"manager": "kubectl-set", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"a\"}": {"f:env": {}}}}}}}}]},
                   "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "a", "image": image, "env": env}]}}}})
        };
        let before = deployment("x:1", 1, json!({}), json!([]));
        let after = deployment("x:2", 1, json!({}), json!([]));
        let restore = |live: &Value| plan_restore(live, &before, Some(&after), None, false).unwrap().result;
        // Disjoint: replicas and a label changed since; the restore writes back the image only.
        let disjoint = deployment("x:2", 4, json!({"team": "a"}), json!([]));
        assert_eq!(overlapping_change(&after, &disjoint, &restore(&disjoint), None, schema, ty), None);
        // Overlapping: the image changed since.
        let image = deployment("x:3", 1, json!({}), json!([]));
        let change = overlapping_change(&after, &image, &restore(&image), None, schema, ty).expect("the image moved");
        assert_eq!(change.field.to_string(), ".spec.template.spec.containers[name=\"a\"].image");
        // The merge patch restores the container list whole: an env entry added since would be
        // written back too, so it overlaps, and its manager is named.
        let env = deployment("x:2", 1, json!({}), json!([{"name": "E", "value": "1"}]));
        let change = overlapping_change(&after, &env, &restore(&env), None, schema, ty).expect("env is written back");
        assert!(change.field.to_string().contains(".env"), "{}", change.field);
        assert_eq!(change.changed_by, ["kubectl-set (Update)"]);
    }

    #[test]
    fn an_object_created_again_is_told_by_its_uid() {
        let before = json!({"metadata": {"name": "c", "uid": "u1"}});
        assert_eq!(recreated(&before, &json!({"metadata": {"name": "c", "uid": "u1", "resourceVersion": "9"}})), None);
        assert_eq!(
            recreated(&before, &json!({"metadata": {"name": "c", "uid": "u2"}})),
            Some(("u1".to_string(), "u2".to_string()))
        );
        assert_eq!(recreated(&json!({"metadata": {"name": "c"}}), &json!({"metadata": {"uid": "u2"}})), None);
    }

    fn step<'a>(id: &'a str, undoes: Option<&'a str>) -> UndoStep<'a> {
        UndoStep { id, undoes }
    }

    #[test]
    fn a_second_undo_steps_back_further_instead_of_re_doing() {
        assert_eq!(next_to_undo(&[]), None);
        let writes = [step("w1", None), step("w2", None)];
        assert_eq!(next_to_undo(&writes), Some(1));
        let once = [step("w1", None), step("w2", None), step("u1", Some("w2"))];
        assert_eq!(next_to_undo(&once), Some(0), "after undoing w2, the next undo is of w1");
        let twice = [step("w1", None), step("w2", None), step("u1", Some("w2")), step("u2", Some("w1"))];
        assert_eq!(next_to_undo(&twice), None, "everything undone");
        let new_write = [step("w1", None), step("w2", None), step("u1", Some("w2")), step("w3", None)];
        assert_eq!(next_to_undo(&new_write), Some(3));
    }

    #[test]
    fn undoing_an_undo_puts_the_undone_write_back_in_effect() {
        // u2 restored the pre-image of u1 (a re-do of w2): w2 is in effect again.
        let redo = [step("w1", None), step("w2", None), step("u1", Some("w2")), step("u2", Some("u1"))];
        assert_eq!(next_to_undo(&redo), Some(1));
    }
}
