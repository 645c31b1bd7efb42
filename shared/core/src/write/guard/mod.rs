//! The precondition a planned change is sent with: the fields it depends on,
//! or the whole object.
//!
//! A write guarded by the object's `resourceVersion` fails whenever anybody
//! wrote anything in between: 50 writers of 50 different labels on one object
//! draw thousands of 409s, each followed by a read and a re-plan, although none
//! of them overlaps another. What a preview depends on is narrower: the old
//! values of the fields the change replaces or removes, the absence of those it
//! adds, and the identity of the list entries it addresses by position. A
//! [`Guard::Fields`] is a JSON Patch that says exactly that: `test` operations
//! pinning those values, each followed by the operations that make the change
//! (see `ops.rs` for the rules). The apiserver applies it to the object as it is
//! when the request arrives, so a writer of another field never makes it fail,
//! and a writer of the same fields always does (a failed `test`: 422), after
//! which the write path reads, re-plans and decides as after a 409.
//!
//! Applied to the object it was planned against, the guard produces exactly the
//! planned result; applied to an object somebody changed elsewhere, it makes the
//! approved change and keeps theirs; it never touches `metadata.resourceVersion`,
//! `metadata.generation` or `metadata.managedFields` unless the planned change
//! does (the server maintains them, as for any patch). Its operations are
//! computed from the planned result, so a strategic or merge patch is sent as
//! the JSON Patch of the same change.
//!
//! Some changes depend on the whole object, or cannot be pinned field by field;
//! they keep the resourceVersion precondition ([`Guard::WholeObject`], with the
//! reason): a server-side apply (its field ownership is not a JSON Patch's), a
//! change derived from the whole object ([`Intent::Rule`]), a patch that sets
//! `resourceVersion` itself, a JSON Patch that reads after it writes (`copy`,
//! `move`, a `test` after a change), and values the apiserver's `test` cannot
//! compare (see `text.rs`).
//!
//! ```
//! use fieldwise_core::write::guard::{guard, Guard};
//! use fieldwise_core::plan::{PatchType, Planned};
//! use fieldwise_core::write::replan::Intent;
//! use fieldwise_core::schema::Schema;
//! use fieldwise_core::json_patch;
//! use serde_json::json;
//!
//! let live = json!({"metadata": {"name": "cm", "resourceVersion": "7", "labels": {"a": "1"}}});
//! let result = json!({"metadata": {"name": "cm", "resourceVersion": "7", "labels": {"a": "1", "mine": "y"}}});
//! let planned = Planned { patch_type: PatchType::Merge, patch: json!({"metadata": {"labels": {"mine": "y"}}}),
//!                         result: result.clone(), findings: vec![] };
//! let Guard::Fields(fields) = guard(&live, &planned, Intent::Values, &Schema::new(), None) else { panic!() };
//! let patch = fields.patch;
//! assert_eq!(patch, json!([
//!     {"op": "test", "path": "/metadata/labels/mine", "value": null},
//!     {"op": "add", "path": "/metadata/labels/mine", "value": "y"},
//! ]));
//! assert_eq!(json_patch::apply(&live, &patch).unwrap(), result);
//! // Another writer's label meanwhile: the guard still passes and keeps it.
//! let moved = json!({"metadata": {"name": "cm", "resourceVersion": "9", "labels": {"a": "1", "b": "2"}}});
//! assert_eq!(json_patch::apply(&moved, &patch).unwrap()["metadata"]["labels"], json!({"a": "1", "b": "2", "mine": "y"}));
//! ```

mod dry_run;
mod ops;
#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
mod text;

use std::fmt;

use serde_json::Value;

use crate::change::effect::SERVER_MANAGED_METADATA;
use crate::json_patch::{self, Operation};
use crate::plan::{PatchType, Planned};
use crate::schema::{Schema, TypeId};
use crate::write::replan::Intent;

pub use dry_run::server_values_on_plan;
pub use ops::{taking_back, Appended, Identity};

/// How a planned change is guarded.
#[derive(Debug, Clone, PartialEq)]
pub enum Guard {
    /// Send this JSON Patch (`application/json-patch+json`) in place of the planned patch,
    /// without a resourceVersion: `test`s of what the change depends on, and the change.
    Fields(FieldGuard),
    /// Send the planned patch with the object's resourceVersion as precondition.
    WholeObject(WholeObjectReason),
}

/// A field guard: the JSON Patch, and the entries it appends to lists without pinning them.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldGuard {
    /// The JSON Patch to send.
    pub patch: Value,
    /// The entries added at the front or the end of a list, which the patch cannot pin:
    /// the written object must name each of them once ([`taking_back`]).
    pub appended: Vec<Appended>,
}

/// Why a change is guarded by the whole object's resourceVersion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WholeObjectReason {
    /// Server-side apply: the apiserver records field ownership for an apply, not for a JSON Patch.
    ServerSideApply,
    /// The change is derived from the whole object ([`Intent::Rule`]).
    DerivedFromObject,
    /// The patch sets `metadata.resourceVersion` itself: the user asked for that precondition.
    PatchNamesResourceVersion,
    /// The change touches metadata the server maintains (`resourceVersion`, `generation`).
    ServerManagedMetadata,
    /// The JSON Patch reads what it wrote (`copy`, `move` or `test` after a change).
    ReadsAfterWriting,
    /// The object or the result is not a JSON object.
    NotAnObject,
    /// The guard would have more operations than the apiserver takes in one JSON Patch.
    TooManyOperations {
        /// How many.
        count: usize,
    },
    /// A value the guard would `test` that the apiserver cannot compare reliably.
    Untestable {
        /// Where, as a JSON Pointer.
        pointer: String,
        /// Why.
        why: &'static str,
    },
}

impl fmt::Display for WholeObjectReason {
    /// Why, in a few words (for `-v` output and tests).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WholeObjectReason::ServerSideApply => f.write_str("server-side apply records field ownership"),
            WholeObjectReason::DerivedFromObject => f.write_str("the change is derived from the whole object"),
            WholeObjectReason::PatchNamesResourceVersion => f.write_str("the patch sets metadata.resourceVersion"),
            WholeObjectReason::ServerManagedMetadata => {
                f.write_str("the change touches metadata.resourceVersion or metadata.generation")
            }
            WholeObjectReason::ReadsAfterWriting => {
                f.write_str("the JSON Patch reads what it writes (copy, move, test)")
            }
            WholeObjectReason::NotAnObject => f.write_str("the object is not a JSON object"),
            WholeObjectReason::TooManyOperations { count } => {
                write!(f, "the guard would take {count} JSON Patch operations, more than the apiserver accepts")
            }
            WholeObjectReason::Untestable { pointer, why } => {
                write!(f, "the value at {pointer} cannot be tested: {why}")
            }
        }
    }
}

/// The guard of `planned`, the change planned against `live` (of type `ty` in `schema`)
/// for what the user approved (`intent`): see the module docs.
pub fn guard(live: &Value, planned: &Planned, intent: Intent, schema: &Schema, ty: Option<TypeId>) -> Guard {
    match field_guard(live, planned, intent, schema, ty) {
        Ok(guard) => Guard::Fields(guard),
        Err(reason) => Guard::WholeObject(reason),
    }
}

fn field_guard(
    live: &Value,
    planned: &Planned,
    intent: Intent,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Result<FieldGuard, WholeObjectReason> {
    if planned.patch_type == PatchType::Apply {
        return Err(WholeObjectReason::ServerSideApply);
    }
    if intent == Intent::Rule {
        return Err(WholeObjectReason::DerivedFromObject);
    }
    if !live.is_object() || !planned.result.is_object() {
        return Err(WholeObjectReason::NotAnObject);
    }
    let mut operations = match planned.patch_type {
        PatchType::Json => json_patch_reads(live, &planned.patch)?,
        _ if planned.patch.pointer("/metadata").is_some_and(|m| m.get("resourceVersion").is_some()) => {
            return Err(WholeObjectReason::PatchNamesResourceVersion)
        }
        _ => Vec::new(),
    };
    for field in SERVER_MANAGED_METADATA {
        let pointer = format!("/metadata/{field}");
        if live.pointer(&pointer) != planned.result.pointer(&pointer) {
            return Err(WholeObjectReason::ServerManagedMetadata);
        }
    }
    let (changes, appended) = ops::operations(live, &planned.result, schema, ty)
        .map_err(|u| WholeObjectReason::Untestable { pointer: u.pointer, why: u.why })?;
    operations.extend(changes);
    let max = json_patch::Limits::default().max_operations;
    if operations.len() > max {
        return Err(WholeObjectReason::TooManyOperations { count: operations.len() });
    }
    Ok(FieldGuard { patch: Value::Array(operations), appended })
}

/// The reads of a JSON Patch that the guard keeps: its leading `test`s (the user's, and the
/// position tests the planner put first), and the `from` of a `copy` or `move` that comes
/// right after them, pinned to its live value. A read after a change cannot be pinned on the
/// live object; nor can a patch that sets `resourceVersion`.
fn json_patch_reads(live: &Value, patch: &Value) -> Result<Vec<Value>, WholeObjectReason> {
    let ops = json_patch::parse(patch).map_err(|_| WholeObjectReason::ReadsAfterWriting)?;
    let names_version = |op: &Operation| {
        [Some(op.path()), op.from()]
            .into_iter()
            .flatten()
            .any(|p| p.tokens().is_some_and(|t| t.len() >= 2 && t[0] == "metadata" && t[1] == "resourceVersion"))
    };
    if ops.iter().any(names_version) {
        return Err(WholeObjectReason::PatchNamesResourceVersion);
    }
    let leading = ops.iter().take_while(|op| matches!(op, Operation::Test { .. })).count();
    let mut reads: Vec<Value> = ops[..leading].iter().map(Operation::to_value).collect();
    let mut rest = ops[leading..].iter();
    if let Some(Operation::Copy { from, .. } | Operation::Move { from, .. }) = rest.clone().next() {
        let Some(value) = live.pointer(from.as_str()) else { return Err(WholeObjectReason::ReadsAfterWriting) };
        if let Some(why) = text::untestable(value) {
            return Err(WholeObjectReason::Untestable { pointer: from.as_str().to_string(), why });
        }
        reads.push(Operation::Test { path: from.clone(), value: value.clone() }.to_value());
        rest.next();
    }
    if rest.any(|op| matches!(op, Operation::Test { .. } | Operation::Copy { .. } | Operation::Move { .. })) {
        return Err(WholeObjectReason::ReadsAfterWriting);
    }
    Ok(reads)
}
