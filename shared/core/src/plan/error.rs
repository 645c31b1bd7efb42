//! [`PlanError`]: why a patch cannot be planned against an object. Each variant
//! keeps the engine's error as its source (boxed: the engines' errors are large,
//! and a plan that succeeds should not pay for them); the message is one line
//! naming the object and what to do.

use super::PatchType;
use crate::json_patch::JsonPatchError;
use crate::merge_patch::MergePatchError;
use crate::ownership::ManagedFieldsError;
use crate::strategic::StrategicError;

/// Why a patch cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The JSON Patch is not a valid list of operations.
    #[error("invalid JSON Patch: {0}")]
    InvalidJsonPatch(#[source] Box<JsonPatchError>),
    /// A merge, strategic or apply patch that is not a JSON object.
    #[error("a {patch_type} patch must be a JSON object, got {got}")]
    NotAnObject {
        /// The patch type asked for.
        patch_type: PatchType,
        /// What it was instead, with a hint.
        got: &'static str,
    },
    /// The JSON Patch fails on this object (a missing path, a failed `test`).
    #[error("the JSON Patch does not apply to {object}: {source}")]
    JsonPatchDoesNotApply {
        /// kubectl's name of the object.
        object: String,
        /// The engine's error.
        source: Box<JsonPatchError>,
    },
    /// The merge patch fails on this object.
    #[error("the merge patch does not apply to {object}: {source}")]
    MergePatchDoesNotApply {
        /// kubectl's name of the object.
        object: String,
        /// The engine's error.
        source: Box<MergePatchError>,
    },
    /// The strategic merge patch fails on this object (a list entry without its merge key, a bad directive).
    #[error("the strategic merge patch does not apply to {object}: {source}")]
    StrategicDoesNotApply {
        /// kubectl's name of the object.
        object: String,
        /// The engine's error.
        source: Box<StrategicError>,
    },
    /// A strategic merge patch for a kind the server takes none for (custom resources).
    #[error(
        "{object} takes no strategic merge patch (the server accepts none for its kind, as for custom resources): use --type merge, or --type apply for server-side apply"
    )]
    NoStrategicMergePatch {
        /// kubectl's name of the object.
        object: String,
    },
    /// A JSON Patch pointer without its leading `/`: the apiserver would silently drop its
    /// first segment (`spec/replicas` writes `/replicas`), so it is refused before anything
    /// is planned, rather than reported later as a path that is not found.
    #[error(
        "invalid JSON Patch: operation {operation}: its {field} {pointer:?} does not start with \"/\" (the apiserver would ignore {dropped:?} and use {used:?}); write {meant:?}"
    )]
    PointerWithoutSlash {
        /// The operation's index, from 0.
        operation: usize,
        /// `path` or `from`.
        field: &'static str,
        /// The pointer as written.
        pointer: String,
        /// The segment the apiserver would drop.
        dropped: String,
        /// What the apiserver would use instead.
        used: String,
        /// The pointer with its `/`.
        meant: String,
    },
    /// The object's own `metadata.managedFields` cannot be read (the object is at fault, not the patch).
    #[error("{object}: {source}")]
    ManagedFields {
        /// kubectl's name of the object.
        object: String,
        /// The entry that cannot be read.
        source: Box<ManagedFieldsError>,
    },
}

impl PlanError {
    /// Whether the user's patch (or choice of patch type) is at fault, rather than the object.
    pub fn is_usage(&self) -> bool {
        !matches!(self, PlanError::ManagedFields { .. })
    }
}
