//! What a manager's next server-side apply of its configuration does to the fields it
//! owns: the question to answer before handing it more fields (`owners transfer -f`).
//!
//! A server-side apply sets the fields of the configuration and then prunes: a field the
//! applier owned before and its configuration no longer sets is deleted, unless another
//! manager owns it too (then it stays, and only the applier's ownership goes). So every
//! field a transfer gives the applier that is not in its configuration is one its next
//! apply deletes. [`predict_next_apply`] sorts the applier's fields into those it keeps,
//! removes and releases, and adds the conflicts the apply would meet
//! ([`super::predict_apply_conflicts`]).
//!
//! Fields the server defaults (a container's `imagePullPolicy`) are pruned like any other
//! and then defaulted again: they are reported as removed, and a server dry run shows them
//! back ([`NextApply::removed_by`] reads what a dry run really removed).

use serde_json::Value;

use super::conflicts::{predict_apply_conflicts, Conflict};
use super::managers::{ManagedFieldsEntry, Manager};
use super::transfer::StillShared;
use crate::fieldpath::{compare, field_set_lossy, Set};
use crate::schema::{Schema, TypeId};

/// The outcome of an applier's next apply for the fields it owns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NextApply {
    /// Fields (leaves) it owns and its configuration sets: they stay, with their configured values.
    pub keeps: Set,
    /// Fields (leaves) it owns, its configuration does not set and nobody else owns: deleted.
    pub removes: Set,
    /// Fields (leaves) it owns and its configuration does not set, that others own too: they
    /// stay, owned by the others only.
    pub releases: Vec<StillShared>,
    /// Fields other managers own that the apply would change (the apiserver refuses it without force).
    pub conflicts: Vec<Conflict>,
    /// Places where the configuration does not fit the schema (the prediction is best effort there).
    pub errors: Vec<String>,
}

impl NextApply {
    /// The leaves present in `before` and absent from `after`: what an apply (a server
    /// dry run of it) really removed, to set beside [`NextApply::removes`].
    pub fn removed_by(before: &Value, after: &Value, schema: &Schema, ty: Option<TypeId>) -> Set {
        compare(before, after, schema, ty).removed.leaves()
    }
}

/// Predicts the apply of `config` by `applier` (an `Apply` manager of the main resource)
/// to `live`, whose `metadata.managedFields` are `entries`.
pub fn predict_next_apply(
    live: &Value,
    entries: &[ManagedFieldsEntry],
    config: &Value,
    applier: &str,
    schema: &Schema,
    ty: TypeId,
) -> NextApply {
    let identity = Manager::applier(applier);
    let owned = entries.iter().filter(|e| e.identity() == identity).fold(Set::new(), |all, e| all.union(&e.fields));
    let (configured, _) = field_set_lossy(config, schema, Some(ty));
    let others: Vec<&ManagedFieldsEntry> = entries.iter().filter(|e| e.identity() != identity).collect();
    let mut keeps = Set::new();
    let mut removes = Set::new();
    let mut releases = Vec::new();
    for path in owned.leaves().iter() {
        if configured.has(path.elements()) {
            keeps.insert(path.elements());
            continue;
        }
        let with: Vec<Manager> =
            others.iter().filter(|e| e.fields.has(path.elements())).map(|e| e.identity()).collect();
        if with.is_empty() {
            removes.insert(path.elements());
        } else {
            releases.push(StillShared { path, with });
        }
    }
    let prediction = predict_apply_conflicts(live, entries, config, applier, schema, ty, false);
    NextApply { keeps, removes, releases, conflicts: prediction.conflicts, errors: prediction.errors }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn configmap(data: Value, managers: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "managedFields": managers}, "data": data})
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn owned_fields_outside_the_configuration_are_removed_unless_shared() {
        let live = configmap(
            json!({"a": "1", "b": "2", "c": "3"}),
            json!([
                entry("argocd", "Apply", json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})),
                entry("helm", "Update", json!({"f:data": {"f:c": {}}}))
            ]),
        );
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "9"}});
        let schema = builtin();
        let ty = schema.root(&Gvk::new("", "v1", "ConfigMap")).unwrap();
        let entries = managed_fields_of(&live).unwrap();
        let next = predict_next_apply(&live, &entries, &config, "argocd", schema, ty);
        let shown = |s: &Set| s.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&next.keeps), [".data.a"]);
        assert_eq!(shown(&next.removes), [".data.b"]);
        assert_eq!(next.releases.len(), 1);
        assert_eq!(
            (next.releases[0].path.to_string(), next.releases[0].with[0].name.as_str()),
            (".data.c".into(), "helm")
        );
        assert!(next.conflicts.is_empty());

        // Changing a field helm owns conflicts.
        let config =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1", "c": "4"}});
        let next = predict_next_apply(&live, &entries, &config, "argocd", schema, ty);
        assert_eq!(next.conflicts.len(), 1);
        assert_eq!(next.conflicts[0].field(), ".data.c");
    }

    #[test]
    fn removed_by_reads_the_leaves_a_result_lost() {
        let before = json!({"data": {"a": "1", "b": "2"}});
        let after = json!({"data": {"a": "1"}});
        let removed = NextApply::removed_by(&before, &after, &Schema::new(), None);
        assert_eq!(removed.iter().map(|p| p.to_string()).collect::<Vec<_>>(), [".data.b"]);
    }
}
