//! RFC 6902 JSON Patch, exactly as the apiserver applies it.
//!
//! `kubectl patch --type=json` sends a list of operations; the apiserver
//! applies them with evanphx/json-patch v4 (`Patch.Apply`, default options:
//! negative indices allowed, no "allow missing path on remove", no "create
//! missing parents on add"), after checking the patch has at most 10 000
//! operations, and with the `copy` size limit armed at 3 MiB. This module does
//! the same on [`serde_json::Value`]s, so a plugin can show the result of a
//! patch, or why it will be refused, before sending it.
//!
//! Where upstream departs from the RFC, this module departs the same way (see
//! `docs/json-patch-deviations.md`): for example `replace` of a missing object
//! member adds it, `copy` from a missing member copies `null`, `01` is index 1
//! and `-1` the last element.
//!
//! Patches are atomic: on any error the input is untouched and the error names
//! the operation, its index and its path. Indexes count from 0, as the patch
//! array (and every JSON Pointer index) does: `operation 0` is the first one.
//! A caller that puts operations of its own ahead of the user's (safe-patch's
//! position tests) applies the user's operations alone for its errors, so they
//! number the operations as the user wrote them.
//!
//! ```
//! use serde_json::json;
//! use fieldwise_core::json_patch;
//!
//! let deployment = json!({"spec": {"replicas": 1, "template": {}}});
//! let patch = json!([
//!     {"op": "test", "path": "/spec/replicas", "value": 1},
//!     {"op": "replace", "path": "/spec/replicas", "value": 3},
//! ]);
//! let patched = json_patch::apply(&deployment, &patch).unwrap();
//! assert_eq!(patched["spec"]["replicas"], 3);
//!
//! let bad = json!([{"op": "remove", "path": "/spec/paused"}]);
//! let err = json_patch::apply(&deployment, &bad).unwrap_err();
//! assert_eq!(err.to_string(), r#"operation 0 (remove /spec/paused): no member "paused" to remove"#);
//! ```

mod apply;
mod copy_size;
mod equality;
mod error;
mod index;
mod operation;
mod pointer;
#[cfg(test)]
mod properties;

use serde_json::Value;

pub use error::{Failure, JsonPatchError};
pub use operation::Operation;
pub use pointer::{escape_token, unescape_token, JsonPointer};

use error::type_name;
use operation::failure_at;

/// The limits the apiserver puts on a JSON Patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most operations in one patch (`maxJSONPatchOperations`, 10 000).
    pub max_operations: usize,
    /// Most bytes that the `copy` operations of one patch may duplicate in total; 0 means no limit.
    /// The apiserver's `--json-patch-max-copy-bytes` (`JSONPatchMaxCopyBytes`), 3 MiB by default.
    pub max_copy_bytes: u64,
}

impl Default for Limits {
    /// The apiserver's defaults.
    fn default() -> Self {
        Limits { max_operations: 10_000, max_copy_bytes: 3 * 1024 * 1024 }
    }
}

/// Applies a JSON Patch (the JSON array) to `doc` as the apiserver does, with its default limits.
pub fn apply(doc: &Value, patch: &Value) -> Result<Value, JsonPatchError> {
    apply_with_limits(doc, patch, Limits::default())
}

/// Applies a JSON Patch with explicit limits (for an apiserver started with other flags).
///
/// Operations are read one at a time, as upstream reads them, so the error
/// names the first operation that fails, whether it is malformed or does not apply.
pub fn apply_with_limits(doc: &Value, patch: &Value, limits: Limits) -> Result<Value, JsonPatchError> {
    let raw_ops = decode(patch)?;
    check_count(raw_ops.len(), limits)?;
    check_document(doc)?;
    let ops = raw_ops.iter().enumerate().map(|(index, raw)| Operation::from_json(index, raw).map(|op| (index, op)));
    apply::Patcher::new(limits.max_copy_bytes).run(doc, ops)
}

/// Applies typed operations, with the same rules and limits as [`apply_with_limits`].
pub fn apply_operations(doc: &Value, ops: &[Operation], limits: Limits) -> Result<Value, JsonPatchError> {
    check_count(ops.len(), limits)?;
    check_document(doc)?;
    apply::Patcher::new(limits.max_copy_bytes).run(doc, ops.iter().cloned().enumerate().map(Ok))
}

/// Reads a JSON Patch into typed operations, refusing what the apiserver would refuse to decode or run.
///
/// A `null` patch is an empty patch, as upstream decodes it.
pub fn parse(patch: &Value) -> Result<Vec<Operation>, JsonPatchError> {
    decode(patch)?.iter().enumerate().map(|(index, raw)| Operation::from_json(index, raw)).collect()
}

/// The operations of a patch, checked as upstream's `DecodePatch` checks them: an array of objects.
fn decode(patch: &Value) -> Result<&[Value], JsonPatchError> {
    let raw_ops = match patch {
        Value::Null => &[][..],
        Value::Array(items) => items.as_slice(),
        other => return Err(JsonPatchError::NotAnArray { found: type_name(other) }),
    };
    // Upstream decodes the whole array first: a non-object element fails before anything is applied.
    if let Some(index) = raw_ops.iter().position(|raw| !raw.is_object() && !raw.is_null()) {
        return Err(failure_at(index, &raw_ops[index], Failure::NotAnObject));
    }
    Ok(raw_ops)
}

fn check_count(count: usize, limits: Limits) -> Result<(), JsonPatchError> {
    if count > limits.max_operations {
        return Err(JsonPatchError::TooManyOperations { count, max: limits.max_operations });
    }
    Ok(())
}

/// Upstream decodes any document but a scalar; a `null` one reads as an empty object that cannot be written.
fn check_document(doc: &Value) -> Result<(), JsonPatchError> {
    if doc.is_object() || doc.is_array() || doc.is_null() {
        Ok(())
    } else {
        Err(JsonPatchError::InvalidDocument { found: type_name(doc) })
    }
}
