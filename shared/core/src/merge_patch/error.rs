//! Why a merge patch could not be applied or created.
//!
//! The variants mirror the errors of upstream (evanphx/json-patch and
//! `k8s.io/apimachinery/pkg/util/mergepatch`), so a plugin can map each to the
//! message kubectl prints, and add the context upstream leaves out.

use serde_json::Value;
use thiserror::Error;

use super::precondition::Precondition;

/// A merge patch operation that upstream refuses.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MergePatchError {
    /// A document is not of a usable type (evanphx `ErrBadJSONDoc`, mergepatch `ErrBadJSONDoc`).
    #[error("invalid JSON document: {0}")]
    BadJsonDoc(String),
    /// The patch is `null` or a scalar, which the apiserver refuses with 400 Bad Request (evanphx `ErrBadJSONPatch`).
    #[error("invalid JSON patch: {0}")]
    BadJsonPatch(String),
    /// One document is an array and the other is not (evanphx `errBadMergeTypes`).
    #[error("mismatched JSON documents: {0}")]
    MismatchedTypes(String),
    /// A list of lists (mergepatch `ErrNoListOfLists`). Strategic merge patches refuse them; JSON merge
    /// patches replace lists whole and never produce this error. Kept so both engines share one vocabulary.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// The changes from current to modified overlap the deletions from original to modified (mergepatch `ErrConflict`).
    #[error("patch:\n{patch}\nconflicts with changes made from original to current:\n{deletions}\n")]
    Conflict {
        /// The additions and changes (current to modified).
        patch: Box<Value>,
        /// The deletions (original to modified).
        deletions: Box<Value>,
    },
    /// The patch changes a field that a precondition requires unchanged (mergepatch `ErrPreconditionFailed`).
    #[error("precondition failed for: {patch} ({precondition})")]
    PreconditionFailed {
        /// The precondition that failed.
        precondition: Precondition,
        /// The patch that was computed.
        patch: Box<Value>,
    },
}
