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
//! and then defaulted again. Only the server knows its defaults: [`NextApply::object_after`]
//! is the object the apply would leave before defaulting, which a server dry run of the
//! change to it completes; [`NextApply::settle`] then sorts the removals into the fields
//! really removed, those defaulted again to the value they have, and those reset to a
//! default that differs. [`NextApply::removed_by`] reads what a dry run of the real apply
//! removed.

use serde_json::Value;

use super::apply_conflict::Conflict;
use super::conflicts::predict_apply_conflicts;
use super::managers::{ManagedFieldsEntry, Manager};
use super::merge::merge;
use super::prune::prune;
use super::settled::Settled;
use super::transfer::StillShared;
use crate::fieldpath::{compare, field_set_lossy, value_at, values_equal, Path, Set};
use crate::schema::{Schema, TypeId};

/// A field the next apply keeps but sets to another value than the live one (an image set
/// by hand goes back to the file's).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueChange {
    /// The field (a leaf).
    pub path: Path,
    /// Its live value (`None`: absent).
    pub live: Option<Value>,
    /// The value the configuration sets.
    pub applied: Value,
}

/// The outcome of an applier's next apply for the fields it owns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NextApply {
    /// Fields (leaves) it owns and its configuration sets: they stay, with their configured values.
    pub keeps: Set,
    /// Of [`NextApply::keeps`], those whose configured value differs from the live one: the
    /// apply changes them, in path order.
    pub changes: Vec<ValueChange>,
    /// Fields (leaves) it owns, its configuration does not set and nobody else owns: deleted.
    pub removes: Set,
    /// Of the removals, fields the server defaults again to the value they have (after [`NextApply::settle`]).
    pub defaulted: Set,
    /// Of the removals, fields the server defaults again to another value (after [`NextApply::settle`]).
    pub reset: Set,
    /// Everything it owns before the apply, containers included: the set it applied last.
    pub owned: Set,
    /// What stays owned after the apply: the configuration's fields and every other manager's.
    pub claimed: Set,
    /// Fields (leaves) it owns and its configuration does not set, that others own too: they
    /// stay, owned by the others only.
    pub releases: Vec<StillShared>,
    /// Fields other managers own that the apply would change (the apiserver refuses it without force).
    pub conflicts: Vec<Conflict>,
    /// Places where the configuration does not fit the schema (the prediction is best effort there).
    pub errors: Vec<String>,
}

impl NextApply {
    /// The object the apply would leave, before the server's defaulting: `config` merged
    /// into `live`, then pruned as the apiserver prunes ([`super::prune::prune`], the model
    /// `owners plan` uses too): what the applier owned that nobody claims now goes, and a map
    /// or list emptied that way with it.
    pub fn object_after(&self, live: &Value, config: &Value, schema: &Schema, ty: TypeId) -> Value {
        prune(&merge(live, config, schema, ty), &self.owned, &[&self.claimed], schema, ty)
    }

    /// Sorts the removals by what the server made of [`NextApply::object_after`]
    /// (`server`, a dry run's result): absent there, they stay removed; present with the
    /// value `live` has, they are [`NextApply::defaulted`]; with another, [`NextApply::reset`]
    /// (the rule of [`Settled`]).
    pub fn settle(&mut self, live: &Value, server: &Value) {
        let mut removes = Set::new();
        for path in self.removes.iter() {
            let target = match Settled::of(&path, live, server) {
                Settled::Removed => &mut removes,
                Settled::Defaulted => &mut self.defaulted,
                Settled::Reset => &mut self.reset,
            };
            target.insert(path.elements());
        }
        self.removes = removes;
    }

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
    let others_own = others.iter().fold(Set::new(), |all, e| all.union(&e.fields));
    let mut keeps = Set::new();
    let mut changes = Vec::new();
    let mut removes = Set::new();
    let mut releases = Vec::new();
    for path in owned.leaves().iter() {
        if configured.has(path.elements()) {
            keeps.insert(path.elements());
            let (now, applied) = (value_at(live, path.elements()), value_at(config, path.elements()));
            if let Some(applied) = applied.filter(|applied| !now.is_some_and(|now| values_equal(now, applied))) {
                changes.push(ValueChange { path: path.clone(), live: now.cloned(), applied: applied.clone() });
            }
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
    NextApply {
        keeps,
        changes,
        removes,
        defaulted: Set::new(),
        reset: Set::new(),
        claimed: configured.union(&others_own),
        owned,
        releases,
        conflicts: prediction.conflicts,
        errors: prediction.errors,
    }
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
        // Issue #32.8: kept, but set back to the file's value.
        assert_eq!(
            next.changes,
            [ValueChange { path: Path::fields(["data", "a"]), live: Some(json!("1")), applied: json!("9") }]
        );
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

    #[test]
    fn the_object_after_drops_what_is_pruned_and_settle_sorts_the_defaults() {
        let entry = |manager: &str, op: &str, fields: Value| json!({"manager": manager, "operation": op, "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": fields});
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web", "tier": "x", "team": "t"}, "managedFields": [
                entry("argocd", "Apply", json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
                    "f:spec": {"f:replicas": {}, "f:revisionHistoryLimit": {},
                        "f:strategy": {"f:type": {}, "f:rollingUpdate": {".": {}, "f:maxSurge": {}}}}})),
                entry("helm", "Update", json!({"f:metadata": {"f:labels": {"f:team": {}}}}))]},
            "spec": {"replicas": 2, "revisionHistoryLimit": 5,
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}}});
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 3}});
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment")).unwrap();
        let mut next = predict_next_apply(&live, &managed_fields_of(&live).unwrap(), &config, "argocd", schema, ty);
        let after = next.object_after(&live, &config, schema, ty);
        assert_eq!(after["metadata"]["labels"], json!({"app": "web", "team": "t"}));
        // As the apiserver prunes: the strategy the applier alone held goes whole, the struct
        // with it (upstream counts a struct field with owned fields under it as owned).
        assert_eq!(after["spec"], json!({"replicas": 3}));
        // The server defaults revisionHistoryLimit to 10 and the strategy to what it was.
        let mut server = after.clone();
        server["spec"]["revisionHistoryLimit"] = json!(10);
        server["spec"]["strategy"] = live["spec"]["strategy"].clone();
        next.settle(&live, &server);
        let shown = |s: &Set| s.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&next.removes), [".metadata.labels.tier"]);
        assert_eq!(shown(&next.reset), [".spec.revisionHistoryLimit"]);
        assert_eq!(shown(&next.defaulted), [".spec.strategy.type", ".spec.strategy.rollingUpdate.maxSurge"]);
    }
}
