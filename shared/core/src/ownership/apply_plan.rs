//! The plan of one object's server-side apply, as `kubectl owners plan` reports it: the
//! simulated outcome ([`super::simulate`]) read as findings a reviewer acts on.
//!
//! - **conflicts** (without `--force-conflicts`: the apiserver refuses the apply) or
//!   **takeovers** (with it: the fields forcing takes), each classified by who owns the
//!   field and with its fix ([`super::classify`]);
//! - **shared**: fields set to the value they already have, now co-owned;
//! - **removed** and **survives**: fields the manager stops owning because the file no
//!   longer sets them, pruned or kept by a co-owner;
//! - **lints** ([`super::apply_lints`]): duplicate list-map keys, fields a scaler owns.

use super::apply_conflict::Conflict;
use super::apply_lints::{duplicate_keys, scaled_fields};
use super::classify::{ConflictClass, Fix};
use super::client_side::defaulted_under_client_side_apply;
use super::manager_fields::live_managers;
use super::managers::Operation;
use super::simulate::{simulate_apply, ApplyInput, ApplyOutcome, Fate, ReleasedField};
use crate::fieldpath::Set;
use crate::lint::Finding;
use crate::well_known::CLIENT_SIDE_APPLY_MANAGER;

/// A conflict, with who owns the field and the way out.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedConflict {
    /// The field, its owner and both values.
    pub conflict: Conflict,
    /// What kind of owner it is.
    pub class: ConflictClass,
    /// What to do.
    pub fix: Fix,
}

impl ClassifiedConflict {
    /// Classifies `conflict`; `defaulted` holds the fields client-side apply owns only
    /// because the server defaulted them ([`defaulted_under_client_side_apply`]).
    fn of(conflict: Conflict, defaulted: Option<&Set>) -> Self {
        let class = ConflictClass::of(&conflict.manager);
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
        ApplyPlan { outcome, force, conflicts, lints }
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
    use crate::ownership::{parse_managed_fields, ApplyOptions};
    use crate::well_known::LAST_APPLIED_ANNOTATION;
    use serde_json::json;

    #[test]
    fn a_server_default_client_side_apply_owns_is_migrated_what_it_applied_is_forced() {
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
        let input = ApplyInput {
            live: Some(&live),
            managed: &managed,
            config: &config,
            manager: "ci",
            schema: &schema,
            ty: root,
            options: &options,
        };
        let plan = ApplyPlan::new(&input, false);
        let fixes: Vec<(String, Fix)> = plan.conflicts.iter().map(|c| (c.conflict.field(), c.fix)).collect();
        assert_eq!(
            fixes,
            [(".metadata.labels.a".to_string(), Fix::Force), (".spec.replicas".to_string(), Fix::Migrate)]
        );
        assert!(plan.conflicts[1].advice().contains("kubectl last-applied migrate"), "{}", plan.conflicts[1].advice());
    }
}
