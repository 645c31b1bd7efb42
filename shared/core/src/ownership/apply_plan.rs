//! The plan of one object's server-side apply, as `kubectl owners plan` reports it: the
//! simulated outcome ([`super::simulate`]) read as findings a reviewer acts on.
//!
//! - **conflicts** (without `--force-conflicts`: the apiserver refuses the apply) or
//!   **takeovers** (with it: the fields forcing takes), each classified by who owns the
//!   field and with its fix ([`super::classify`]);
//! - **shared**: fields set to the value they already have, now co-owned;
//! - **removed** and **survives**: fields the manager stops owning because the file no
//!   longer sets them, pruned or kept by a co-owner; once the server's dry run is read
//!   ([`ApplyPlan::settle`]), a pruned field the server sets again to the value it has is
//!   **defaulted** (no change), not removed;
//! - **lints** ([`super::apply_lints`]): duplicate list-map keys, fields a scaler owns.

use super::apply_conflict::Conflict;
use super::apply_lints::{duplicate_keys, scaled_fields};
use super::classify::{Fix, ManagerKind};
use super::client_side::defaulted_under_client_side_apply;
use super::manager_fields::live_managers;
use super::managers::Operation;
use super::settled::Settled;
use super::simulate::{simulate_apply, ApplyInput, ApplyOutcome, Fate, ReleasedField};
use crate::fieldpath::Set;
use crate::lint::Finding;
use crate::well_known::CLIENT_SIDE_APPLY_MANAGER;
use serde_json::Value;

/// A conflict, with who owns the field and the way out.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedConflict {
    /// The field, its owner and both values.
    pub conflict: Conflict,
    /// What kind of owner it is.
    pub class: ManagerKind,
    /// What to do.
    pub fix: Fix,
}

impl ClassifiedConflict {
    /// Classifies `conflict`; `defaulted` holds the fields client-side apply owns only
    /// because the server defaulted them ([`defaulted_under_client_side_apply`]).
    fn of(conflict: Conflict, defaulted: Option<&Set>) -> Self {
        let class = ManagerKind::of(&conflict.manager);
        let own_default = conflict.manager.name == CLIENT_SIDE_APPLY_MANAGER
            && conflict.manager.operation == Operation::Update
            && conflict.manager.subresource.is_empty()
            && defaulted.is_some_and(|set| set.has(conflict.path.elements()));
        let fix = if own_default { Fix::Migrate } else { class.fix() };
        ClassifiedConflict { conflict, class, fix }
    }

    /// The fix as one sentence.
    pub fn advice(&self) -> String {
        self.fix.advice(&self.conflict.field(), &self.conflict.manager.name)
    }
}

/// The plan of one apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyPlan {
    /// The simulated outcome (conflicts as the apiserver's causes, the object and the
    /// managers afterwards), for verification against the server.
    pub outcome: ApplyOutcome,
    /// Whether the apply is forced (`--force-conflicts`).
    pub force: bool,
    /// The conflicts, classified: refusals without force, takeovers with it.
    pub conflicts: Vec<ClassifiedConflict>,
    /// Traps in the configuration.
    pub lints: Vec<Finding>,
    /// Whether the removals were sorted by the server's dry run ([`ApplyPlan::settle`]):
    /// until then a removal may be a field the server sets again to the same value.
    pub settled: bool,
}

impl ApplyPlan {
    /// Plans the apply of `input`, forced or not.
    pub fn new(input: &ApplyInput<'_>, force: bool) -> Self {
        let outcome = simulate_apply(input);
        let defaulted =
            input.live.and_then(|live| defaulted_under_client_side_apply(live, input.managed, input.schema, input.ty));
        let conflicts =
            outcome.conflicts.iter().cloned().map(|c| ClassifiedConflict::of(c, defaulted.as_ref())).collect();
        let mut lints = duplicate_keys(input.config, input.schema, input.ty);
        if input.live.is_some() {
            lints.extend(scaled_fields(&outcome.applied, &live_managers(input.managed)));
        }
        ApplyPlan { outcome, force, conflicts, lints, settled: false }
    }

    /// Whether the apiserver refuses the apply with 409 Conflict.
    pub fn rejected(&self) -> bool {
        !self.force && !self.conflicts.is_empty()
    }

    /// The fields forcing takes from their owners (only when forced).
    pub fn takeovers(&self) -> &[ClassifiedConflict] {
        if self.force {
            &self.conflicts
        } else {
            &[]
        }
    }

    /// The conflicts that refuse the apply (only when not forced).
    pub fn refusing_conflicts(&self) -> &[ClassifiedConflict] {
        if self.force {
            &[]
        } else {
            &self.conflicts
        }
    }

    /// Fields the manager stops owning that leave the object.
    pub fn removed(&self) -> impl Iterator<Item = &ReleasedField> {
        self.outcome.released.iter().filter(|r| r.fate == Fate::Removed)
    }

    /// Fields the manager stops owning that the server sets again to the value they have:
    /// no change (only after [`ApplyPlan::settle`]).
    pub fn defaulted(&self) -> impl Iterator<Item = &ReleasedField> {
        self.outcome.released.iter().filter(|r| r.fate == Fate::Defaulted)
    }

    /// Sorts the removals by the object the server's dry run of the apply returned
    /// (`server`), the object as it will be ([`Settled`]): a removed field present there with
    /// its `live` value becomes [`Fate::Defaulted`]; absent or changed, it stays removed.
    pub fn settle(&mut self, live: &Value, server: &Value) {
        for released in &mut self.outcome.released {
            if released.fate == Fate::Removed && Settled::of(&released.path, live, server).unchanged() {
                released.fate = Fate::Defaulted;
            }
        }
        self.settled = true;
    }

    /// Fields the manager stops owning that stay, because another manager owns them.
    pub fn survivors(&self) -> impl Iterator<Item = &ReleasedField> {
        self.outcome.released.iter().filter(|r| matches!(r.fate, Fate::Survives(_)))
    }

    /// The apiserver's 409 causes for the apply without force, sorted: `(field, message)`.
    pub fn expected_causes(&self) -> Vec<(String, String)> {
        let mut causes: Vec<(String, String)> =
            self.outcome.conflicts.iter().map(|c| (c.field(), c.message())).collect();
        causes.sort();
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use crate::ownership::{parse_managed_fields, verify_removals, ApplyOptions, ManagedFieldsEntry};
    use crate::schema::{Schema, TypeId};
    use crate::well_known::LAST_APPLIED_ANNOTATION;
    use serde_json::json;

    /// The apply of `config` by the manager `ci` to `live`.
    fn ci_input<'a>(
        live: &'a Value,
        managed: &'a [ManagedFieldsEntry],
        config: &'a Value,
        (schema, ty): (&'a Schema, TypeId),
        options: &'a ApplyOptions,
    ) -> ApplyInput<'a> {
        ApplyInput { live: Some(live), managed, config, manager: "ci", schema, ty, options }
    }

    #[test]
    fn a_server_default_client_side_apply_owns_is_migrated_what_it_applied_is_transferred() {
        let (schema, root) = pod_schema();
        // Client-side apply sent labels.a; the server defaulted spec.replicas, which the
        // create recorded as client-side apply's too.
        let last_applied = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"1"},"name":"p"}}"#;
        let live = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"},
            "annotations": {LAST_APPLIED_ANNOTATION: last_applied}}, "spec": {"replicas": 1}});
        let managed = parse_managed_fields(&json!([{"manager": "kubectl-client-side-apply", "operation": "Update",
            "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {
                "f:annotations": {".": {}, format!("f:{LAST_APPLIED_ANNOTATION}"): {}},
                "f:labels": {".": {}, "f:a": {}}}, "f:spec": {"f:replicas": {}}}}]))
        .unwrap();
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "2"}},
            "spec": {"replicas": 3}});
        let options = ApplyOptions::default();
        let input = ci_input(&live, &managed, &config, (&schema, root), &options);
        let plan = ApplyPlan::new(&input, false);
        let fixes: Vec<(String, Fix)> = plan.conflicts.iter().map(|c| (c.conflict.field(), c.fix)).collect();
        assert_eq!(
            fixes,
            [(".metadata.labels.a".to_string(), Fix::Transfer), (".spec.replicas".to_string(), Fix::Migrate)]
        );
        assert!(plan.conflicts[1].advice().contains("kubectl last-applied migrate"), "{}", plan.conflicts[1].advice());
        // Client-side apply is an applier: what its file set is handed over, never forced.
        assert_eq!(plan.conflicts[0].class, ManagerKind::Applier);
        assert!(plan.conflicts[0].advice().contains("kubectl last-applied migrate"), "{}", plan.conflicts[0].advice());
    }

    #[test]
    fn a_removal_the_servers_result_sets_again_to_its_value_is_defaulted_and_every_field_that_leaves_is_checked() {
        let (schema, root) = pod_schema();
        // ci applied labels a, b, c and spec.replicas (which the server defaults to 3 here);
        // its file now sets label a only.
        let live = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2", "c": "3"}}, "spec": {"replicas": 3}});
        let managed = parse_managed_fields(&json!([{"manager": "ci", "operation": "Apply", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}, "f:c": {}}},
                "f:spec": {"f:replicas": {}}}}]))
        .unwrap();
        let config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}}});
        let options = ApplyOptions::default();
        let input = ci_input(&live, &managed, &config, (&schema, root), &options);
        let mut plan = ApplyPlan::new(&input, false);
        let named = |fields: Vec<&ReleasedField>| fields.iter().map(|r| r.path.to_string()).collect::<Vec<_>>();
        assert_eq!(named(plan.removed().collect()), [".metadata.labels.b", ".metadata.labels.c", ".spec.replicas"]);
        assert!(!plan.settled);
        // The server's result: b and c leave, replicas is defaulted again to the value it has.
        let server = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {"replicas": 3}});
        plan.settle(&live, &server);
        assert!(plan.settled);
        assert_eq!(named(plan.removed().collect()), [".metadata.labels.b", ".metadata.labels.c"]);
        assert_eq!(named(plan.defaulted().collect()), [".spec.replicas"]);
        assert_eq!(verify_removals(&plan.outcome, &live, &server, &schema, root), Vec::<String>::new());
        // A default that differs is a change: still removed.
        let mut plan = ApplyPlan::new(&input, false);
        let mut reset = server.clone();
        reset["spec"]["replicas"] = json!(1);
        plan.settle(&live, &reset);
        assert_eq!(named(plan.removed().collect()), [".metadata.labels.b", ".metadata.labels.c", ".spec.replicas"]);
        assert_eq!(plan.defaulted().count(), 0);
        // A field that leaves the server's result without being predicted removed disagrees.
        let config_bc = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1", "b": "2", "c": "3"}}});
        let mut plan = ApplyPlan::new(&ApplyInput { config: &config_bc, ..input }, false);
        plan.settle(&live, &server);
        assert_eq!(
            verify_removals(&plan.outcome, &live, &server, &schema, root),
            ["the server removes 2 field(s) that were not predicted removed: .metadata.labels.b, .metadata.labels.c"]
        );
    }
}
