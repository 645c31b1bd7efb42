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
use super::manager_fields::live_managers;
use super::simulate::{simulate_apply, ApplyInput, ApplyOutcome, Fate, ReleasedField};
use crate::lint::Finding;

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
    fn of(conflict: Conflict) -> Self {
        let class = ConflictClass::of(&conflict.manager);
        ClassifiedConflict { conflict, class, fix: class.fix() }
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
        let conflicts = outcome.conflicts.iter().cloned().map(ClassifiedConflict::of).collect();
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
