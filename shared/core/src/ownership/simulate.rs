//! One server-side apply, simulated end to end as the apiserver's field manager runs it:
//! what it conflicts with, the object it stores and every manager's fields afterwards.
//!
//! The steps follow structured-merge-diff's `Updater.Apply` and the managers the
//! apiserver wraps around it:
//! 1. an object without `managedFields` first gets a `before-first-apply` manager that
//!    owns everything it holds (upstream's `skipNonAppliedManager`), so an apply that
//!    changes those fields conflicts with it;
//! 2. the configuration is merged into the live object ([`merge`](mod@super::merge));
//! 3. fields the applier applied last time and no longer applies are pruned, unless
//!    another manager (applier or updater) owns them: those survive
//!    ([`prune`](super::prune));
//! 4. the live and new objects are compared: every other manager owning a field that was
//!    added or changed is in conflict; with `force` (or when `kubectl` upgrades from
//!    client-side apply) it loses those fields;
//! 5. fields the resource resets (`status` on a main resource that has a status
//!    subresource) are ignored throughout, and the server-set metadata (`name`,
//!    `apiVersion`, ...) is never recorded as owned.
//!
//! Conversion between API versions is taken to be the identity (exact for custom
//! resources, whose served versions convert with `None`; approximate for a built-in
//! object with managers recorded under an older version of its type).

use serde_json::{Map, Value};

use super::apply_conflict::{Conflict, SharedField};
use super::apply_lints::duplicate_keys;
use super::apply_options::ApplyOptions;
use super::client_side::allowed_by_last_applied;
use super::manager_fields::{live_managers, sort_by_identifier, ManagerFields};
use super::managers::{ManagedFieldsEntry, Manager, Operation};
use super::merge::merge;
use super::prune::prune;
use super::zero_objects::empty_object;
use crate::fieldpath::{compare, field_set_lossy, value_at, Path, PathElement, Set};
use crate::schema::{Gvk, Schema, TypeId};
use crate::well_known::BEFORE_FIRST_APPLY_MANAGER;

/// A server-side apply to simulate.
#[derive(Debug, Clone, Copy)]
pub struct ApplyInput<'a> {
    /// The live object, `None` when the apply creates it.
    pub live: Option<&'a Value>,
    /// The live object's `metadata.managedFields`, read ([`super::managed_fields_of`]).
    pub managed: &'a [ManagedFieldsEntry],
    /// The configuration applied.
    pub config: &'a Value,
    /// The applying field manager (`--field-manager`).
    pub manager: &'a str,
    /// The schema holding the object's type.
    pub schema: &'a Schema,
    /// The object's type.
    pub ty: TypeId,
    /// The subresource applied to and the fields the resource resets.
    pub options: &'a ApplyOptions,
}

/// What becomes of a field the applier owned and no longer applies.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Pruned: the field leaves the object, or the server sets it again to another value
    /// (a default that differs from the live value).
    Removed,
    /// Pruned, then set again by the server to the value it has live (a server default, a
    /// Secret's `data` rebuilt from `stringData`): no change. Only a server dry run's result
    /// tells ([`super::apply_plan::ApplyPlan::settle`]); the simulation predicts `Removed`.
    Defaulted,
    /// Kept, because these managers own it (or something under it) too: the trap of
    /// removing a field from a file that another manager co-owns (kubernetes#99003).
    /// Empty when it stays unowned.
    Survives(Vec<Manager>),
}

/// A field the applier stops owning.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedField {
    /// The field (the top-most one: fields under a removed item are not listed again).
    pub path: Path,
    /// Its live value.
    pub live: Option<Value>,
    /// Removed or kept.
    pub fate: Fate,
}

/// Everything the apiserver would decide for the apply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApplyOutcome {
    /// Fields other managers own that the apply changes: the 409's causes without
    /// force, the fields taken over with it.
    pub conflicts: Vec<Conflict>,
    /// Conflicts with client-side apply that `kubectl` takes without asking (its
    /// last-applied annotation still matches the live object).
    pub upgraded: Vec<Conflict>,
    /// Fields the applier sets to the value they have, which other managers own: shared.
    pub shared: Vec<SharedField>,
    /// Fields the applier owned and no longer applies: removed, or kept by a co-owner.
    pub released: Vec<ReleasedField>,
    /// The fields the applier owns afterwards.
    pub applied: Set,
    /// The object afterwards (before the server's defaulting and admission).
    pub object: Value,
    /// The object merged, before pruning.
    pub merged: Value,
    /// Every manager's fields afterwards, in the apiserver's order, were the apply
    /// accepted (without conflicts, or forced).
    pub managers: Vec<ManagerFields>,
    /// The object exists without managedFields: the apiserver attributes all it holds to
    /// `before-first-apply` first.
    pub before_first_apply: bool,
    /// The apply creates the object.
    pub creates: bool,
    /// Places where the configuration does not fit the schema (or repeats a list-map key): the
    /// apiserver refuses it.
    pub errors: Vec<String>,
}

/// The fields the apiserver never records as owned (upstream's `stripMetaManager`).
fn stripped_fields() -> Set {
    let mut set = Set::new();
    for path in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        set.insert(Path::fields(path.iter().copied()).elements());
    }
    set
}

/// Simulates the apply (see the module docs).
pub fn simulate_apply(input: &ApplyInput<'_>) -> ApplyOutcome {
    let ApplyInput { live, managed, config, manager, schema, ty, options } = *input;
    let empty = Value::Object(Map::new());
    let creates = live.is_none();
    let live = live.unwrap_or(&empty);
    let version = config.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let reset = &options.reset_fields;
    let strip = stripped_fields();

    let mut managers = live_managers(managed);
    let before_first_apply = !creates && managers.is_empty();
    if before_first_apply {
        let fields = everything_in(live, config, schema, ty).recursive_difference(reset).difference(&strip);
        if !fields.is_empty() {
            let placeholder = Manager {
                name: BEFORE_FIRST_APPLY_MANAGER.into(),
                operation: Operation::Update,
                api_version: Some(version.clone()),
                subresource: options.subresource.clone(),
            };
            managers.push(ManagerFields { manager: placeholder, api_version: version.clone(), fields });
        }
    }

    let applier = Manager { subresource: options.subresource.clone(), ..Manager::applier(manager) };
    let last = managers.iter().find(|m| m.manager == applier).map(|m| m.fields.clone()).unwrap_or_default();
    let (config_set, errors) = field_set_lossy(config, schema, Some(ty));
    let applied = config_set.recursive_difference(reset);

    let merged = merge(live, config, schema, ty);
    let owned_after: Vec<&Set> =
        managers.iter().filter(|m| m.manager != applier).map(|m| &m.fields).chain([&applied]).collect();
    let mut object = prune(&merged, &last, &owned_after, schema, ty);
    // Managers see the changes in their own version; the reset fields are left out where the
    // resource declares them (every version of a built-in type, the applied one of a custom resource).
    let all_changes = compare(live, &object, schema, Some(ty));
    let reset_changes = all_changes.excluding(reset);
    let changes_for = |m: &ManagerFields| if options.resets_at(&m.api_version) { &reset_changes } else { &all_changes };
    // What the configuration sets there, for conflicts on reset fields (the server then keeps the live values).
    let applied_object = (!reset.is_empty()).then(|| object.clone());
    keep_reset_fields(&mut object, live, reset);

    let mut conflicts = Vec::new();
    let mut shared = Vec::new();
    let mut taken: Vec<(Manager, Set)> = Vec::new();
    for other in managers.iter().filter(|m| m.manager != applier) {
        let changes = changes_for(other);
        let clashing = other.fields.intersection(&changes.modified.union(&changes.added));
        for path in clashing.paths() {
            let theirs = value_at(live, path.elements()).cloned();
            let yours = value_at(applied_object.as_ref().unwrap_or(&object), path.elements()).cloned();
            conflicts.push(Conflict { path, manager: other.manager.clone(), theirs, yours });
        }
        for path in other.fields.intersection(&applied).difference(&clashing).paths() {
            shared.push(SharedField { path, with: other.manager.clone() });
        }
        if !clashing.is_empty() {
            taken.push((other.manager.clone(), clashing));
        }
    }

    let mut upgraded = Vec::new();
    if manager == "kubectl" && !conflicts.is_empty() {
        if let Some(allowed) = allowed_by_last_applied(live, config, schema, ty) {
            let conflict_set: Set = conflicts.iter().map(|c| c.path.clone()).collect();
            if conflict_set.difference(&allowed).is_empty() {
                upgraded = std::mem::take(&mut conflicts);
            } else {
                conflicts.retain(|c| !allowed.has(c.path.elements()));
            }
        }
    }

    // The managers afterwards, as if the apply went through (forced where it conflicts).
    let mut after = Vec::new();
    for m in &managers {
        if m.manager == applier {
            continue;
        }
        let mut fields = m.fields.clone();
        if let Some((_, clashing)) = taken.iter().find(|(who, _)| *who == m.manager) {
            fields = fields.difference(clashing);
        }
        fields = fields.difference(&changes_for(m).removed);
        if !fields.is_empty() {
            after.push(ManagerFields { fields, ..m.clone() });
        }
    }
    let applier_fields = applied.difference(&strip);
    if !applier_fields.is_empty() {
        after.push(ManagerFields { manager: applier.clone(), api_version: version, fields: applier_fields.clone() });
    }
    sort_by_identifier(&mut after);

    let released = released_fields(&last, &applier_fields, live, &object, &after, &applier);
    ApplyOutcome {
        conflicts,
        upgraded,
        shared,
        released,
        applied: applier_fields,
        object,
        merged,
        managers: after,
        before_first_apply,
        creates,
        errors: errors
            .into_iter()
            .map(|e| e.to_string())
            // The apiserver builds the configuration's typed value without allowing duplicates.
            .chain(
                duplicate_keys(config, schema, ty)
                    .into_iter()
                    .map(|f| format!("{}: duplicate entries for key", f.path)),
            )
            .collect(),
    }
}

/// Every field `object` holds, as an update from the empty object of the kind (read from
/// `config`) records them.
fn everything_in(object: &Value, config: &Value, schema: &Schema, ty: TypeId) -> Set {
    let mut empty = Gvk::of_object(config).map(|gvk| empty_object(&gvk)).unwrap_or_else(|| Value::Object(Map::new()));
    with_live_nulls(&mut empty, object);
    let changes = compare(&empty, object, schema, Some(ty));
    changes.added.union(&changes.modified).difference(&changes.removed)
}

/// Adds to the empty object the `null`s the live object holds inside structs the empty object
/// has: a `null` the server writes is a Go zero value, which the empty object of the server's
/// own version holds too (`creationTimestamp: null` in a pod template until Kubernetes 1.34).
fn with_live_nulls(empty: &mut Value, live: &Value) {
    let (Value::Object(empty), Value::Object(live)) = (empty, live) else { return };
    for (key, value) in live {
        match (empty.get_mut(key), value) {
            (None, Value::Null) => {
                empty.insert(key.clone(), Value::Null);
            }
            (Some(inner), Value::Object(_)) => with_live_nulls(inner, value),
            _ => {}
        }
    }
}

/// Puts back the top-level fields the resource resets (`status`): the server keeps the live ones.
fn keep_reset_fields(object: &mut Value, live: &Value, reset: &Set) {
    let Value::Object(map) = object else { return };
    for member in reset.members() {
        let PathElement::Field(name) = member else { continue };
        match live.get(name) {
            Some(v) => {
                map.insert(name.clone(), v.clone());
            }
            None => {
                map.remove(name);
            }
        }
    }
}

/// The fields in `last` and not in `applied`, each removed or kept, top-most first.
fn released_fields(
    last: &Set,
    applied: &Set,
    live: &Value,
    object: &Value,
    after: &[ManagerFields],
    applier: &Manager,
) -> Vec<ReleasedField> {
    let mut out: Vec<ReleasedField> = Vec::new();
    for path in last.difference(applied).paths() {
        // A map or list the applier stops owning as such (an entry it took over from an
        // Update manager owned `.data` itself) while it still applies fields under it: the
        // applier keeps it through those, so nothing leaves and nobody else keeps it.
        if !applied.under(&path).is_empty() {
            continue;
        }
        let present = value_at(object, path.elements()).is_some_and(|v| !v.is_null());
        let fate = if present {
            let owners = after
                .iter()
                .filter(|m| m.manager != *applier)
                .filter(|m| m.fields.has(path.elements()) || !m.fields.under(&path).is_empty())
                .map(|m| m.manager.clone())
                .collect();
            Fate::Survives(owners)
        } else {
            Fate::Removed
        };
        let covered = out
            .iter()
            .any(|r| path.len() > r.path.len() && path.starts_with(r.path.elements()) && same_kind(&r.fate, &fate));
        if !covered {
            let live = value_at(live, path.elements()).cloned();
            out.push(ReleasedField { path, live, fate });
        }
    }
    out
}

fn same_kind(a: &Fate, b: &Fate) -> bool {
    matches!((a, b), (Fate::Removed, Fate::Removed) | (Fate::Survives(_), Fate::Survives(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use crate::ownership::parse_managed_fields;
    use serde_json::json;

    /// The apply of `config` to `live` (whose managedFields are `managed`) by the manager `ci`.
    fn ci_applies<'a>(
        schema: &'a Schema,
        root: TypeId,
        live: &'a Value,
        managed: &'a [ManagedFieldsEntry],
        config: &'a Value,
        options: &'a ApplyOptions,
    ) -> ApplyInput<'a> {
        ApplyInput { live: Some(live), managed, config, manager: "ci", schema, ty: root, options }
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": fields})
    }

    fn paths(set: &Set) -> Vec<String> {
        set.paths().iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn an_object_without_managed_fields_is_owned_by_before_first_apply() {
        let (schema, root) = pod_schema();
        let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}},
            "spec": {"replicas": 1}});
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"replicas": 2}});
        let options = ApplyOptions::default();
        let input = ci_applies(&schema, root, &live, &[], &config, &options);
        let outcome = simulate_apply(&input);
        assert!(outcome.before_first_apply);
        let causes: Vec<String> = outcome.conflicts.iter().map(|c| format!("{}: {}", c.field(), c.message())).collect();
        assert_eq!(causes, [".spec.replicas: conflict with \"before-first-apply\" using v1"]);
        let placeholder = outcome.managers.iter().find(|m| m.manager.name == "before-first-apply").unwrap();
        assert_eq!(paths(&placeholder.fields), [".metadata.labels", ".metadata.labels.a"]);
        let ci = outcome.managers.iter().find(|m| m.manager.name == "ci").unwrap();
        assert_eq!(paths(&ci.fields), [".spec.replicas"]);
    }

    #[test]
    fn dropped_fields_are_removed_unless_a_co_owner_keeps_them() {
        let (schema, root) = pod_schema();
        let live = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 3}});
        let managed = parse_managed_fields(&json!([
            entry(
                "ci",
                "Apply",
                json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}, "f:spec": {"f:replicas": {}}})
            ),
            entry("kubectl-edit", "Update", json!({"f:metadata": {"f:labels": {"f:b": {}}}})),
        ]))
        .unwrap();
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}}});
        let options = ApplyOptions::default();
        let input = ci_applies(&schema, root, &live, &managed, &config, &options);
        let outcome = simulate_apply(&input);
        assert!(outcome.conflicts.is_empty(), "{:?}", outcome.conflicts);
        assert_eq!(outcome.object["metadata"]["labels"], json!({"a": "1", "b": "2"}));
        assert!(outcome.object.get("spec").is_none(), "{}", outcome.object);
        let released: Vec<(String, bool)> = outcome
            .released
            .iter()
            .map(|r| (r.path.to_string(), matches!(r.fate, Fate::Survives(ref who) if who[0].name == "kubectl-edit")))
            .collect();
        assert_eq!(released, [(".metadata.labels.b".to_string(), true), (".spec.replicas".to_string(), false)]);
        // Afterwards: ci owns only what it applied; kubectl-edit keeps b.
        let after: Vec<(String, Vec<String>)> =
            outcome.managers.iter().map(|m| (m.manager.name.clone(), paths(&m.fields))).collect();
        assert_eq!(
            after,
            [
                ("ci".to_string(), vec![".metadata.labels.a".to_string()]),
                ("kubectl-edit".to_string(), vec![".metadata.labels.b".to_string()])
            ]
        );
    }

    #[test]
    fn a_map_owned_as_such_is_not_released_while_the_applier_keeps_fields_under_it() {
        let (schema, root) = pod_schema();
        let live = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}});
        // Taken over from an Update manager: ci owns the labels map itself (`.`) and both labels.
        let managed = parse_managed_fields(&json!([entry(
            "ci",
            "Apply",
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}})
        )]))
        .unwrap();
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}}});
        let options = ApplyOptions::default();
        let input = ci_applies(&schema, root, &live, &managed, &config, &options);
        let outcome = simulate_apply(&input);
        let released: Vec<String> = outcome.released.iter().map(|r| r.path.to_string()).collect();
        // b leaves; the labels map stays through a, which ci still applies: not a finding.
        assert_eq!(released, [".metadata.labels.b"]);
        assert_eq!(outcome.object["metadata"]["labels"], json!({"a": "1"}));
    }

    #[test]
    fn status_is_ignored_where_the_resource_resets_it() {
        let (schema, root) = pod_schema();
        let live =
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"phase": "Running"}});
        let managed = parse_managed_fields(&json!([{"manager": "ctrl", "operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:phase": {}}}}]))
        .unwrap();
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"phase": "Done"}});
        let with_status = ApplyOptions::for_main_resource_of(&["status".to_string(), "scale".to_string()]);
        let input = ci_applies(&schema, root, &live, &managed, &config, &with_status);
        let outcome = simulate_apply(&input);
        assert!(outcome.conflicts.is_empty());
        assert_eq!(outcome.object["status"]["phase"], "Running");
        assert!(!outcome.managers.iter().any(|m| m.manager.name == "ci"), "nothing owned: no entry");
        let without = ApplyOptions::for_main_resource_of(&[]);
        let outcome = simulate_apply(&ApplyInput { options: &without, ..input });
        assert_eq!(outcome.conflicts.len(), 1);
    }
}
