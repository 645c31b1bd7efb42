//! Why a JSON Patch was refused, with the operation, its index and its path.
//!
//! The apiserver answers a bad patch with a terse message
//! (`doc is missing path: "/spec/replicas": missing value`). A preview should
//! say which operation failed and why, in words a user can act on, so every
//! failure of an operation carries its index, its `op`, its `path` (and
//! `from`), and a [`Failure`] reason.

use std::fmt;

use thiserror::Error;

/// A JSON Patch that the apiserver would refuse; the document is left untouched.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum JsonPatchError {
    /// The patch document is not an array of operations (the apiserver answers 400 Bad Request).
    #[error("a JSON patch must be an array of operations, got {found}")]
    NotAnArray {
        /// The JSON type that was given instead.
        found: &'static str,
    },
    /// More operations than the apiserver accepts (it answers 413 Request Entity Too Large).
    #[error("the apiserver accepts at most {max} operations in a JSON patch, got {count}")]
    TooManyOperations {
        /// Operations in the patch.
        count: usize,
        /// The apiserver's limit.
        max: usize,
    },
    /// The document is a scalar, which the apiserver cannot decode for patching.
    #[error("a JSON patch applies to an object or an array, got {found}")]
    InvalidDocument {
        /// The JSON type of the document.
        found: &'static str,
    },
    /// One operation failed (the apiserver answers 422 Unprocessable Entity, or 400 for a malformed operation).
    #[error("operation {index} ({}): {failure}", describe(.op, .path, .from))]
    Operation {
        /// Position of the operation in the patch, from 0.
        index: usize,
        /// The `op` as written (`?` when absent or not a string).
        op: String,
        /// The `path` as written, when it is a string.
        path: Option<String>,
        /// The `from` as written, for `move` and `copy`.
        from: Option<String>,
        /// What went wrong.
        failure: Failure,
    },
}

impl JsonPatchError {
    /// The failure of the operation, when the error is about one operation.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            JsonPatchError::Operation { failure, .. } => Some(failure),
            _ => None,
        }
    }
}

/// Why one operation failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Failure {
    /// The operation is not a JSON object.
    #[error("an operation must be a JSON object")]
    NotAnObject,
    /// `op` is missing, not a string, or not one of the six operations.
    #[error("unknown op (expected add, remove, replace, move, copy or test)")]
    UnknownOp,
    /// A required member is missing: `path`; `from` of `move` and `copy` (null counts as missing for
    /// both); `value` of `test` and of `replace` of the whole document (null is a value there).
    #[error("missing \"{0}\"")]
    MissingMember(&'static str),
    /// `path` or `from` is not a string.
    #[error("\"{0}\" must be a string")]
    NotAString(&'static str),
    /// The container the path points into does not exist (or is not an object or array).
    #[error("path not found")]
    PathNotFound,
    /// The container `from` points into does not exist (or is not an object or array).
    #[error("from path not found")]
    FromNotFound,
    /// The object has no member to remove (or to move away).
    #[error("no member {0:?} to remove")]
    MemberNotFound(String),
    /// An array was addressed with a token that is not an integer.
    #[error("{0:?} is not an array index")]
    NotAnIndex(String),
    /// An array index outside the array (negative indices count from the end).
    #[error("index {index} is out of range for an array of {len}")]
    IndexOutOfRange {
        /// The index as written.
        index: i64,
        /// Length of the array.
        len: usize,
    },
    /// A member was written into a `null` document (upstream panics on its nil map).
    #[error("cannot write into a null document")]
    NullDocument,
    /// `replace ""` with a scalar or `null`: the whole document must stay an object or array
    /// (json-patch v4.13, Kubernetes 1.37+).
    #[error("replace operation value must be object or array")]
    ReplaceRootNotContainer,
    /// `test` found a different value.
    #[error("test failed: the value differs")]
    TestFailed,
    /// `test` compared arrays holding null; the apiserver fails this with an internal error.
    #[error("test cannot compare arrays that hold null (the apiserver fails with an internal error)")]
    TestNullInArray,
    /// The `copy` operations of the patch together copy more than the apiserver allows.
    #[error(
        "Unable to complete the copy, the accumulated size increase of copy is {accumulated}, exceeding the limit {limit}"
    )]
    CopyTooLarge {
        /// Bytes copied so far, this operation included.
        accumulated: u64,
        /// The apiserver's limit.
        limit: u64,
    },
}

/// `replace /spec/replicas`, or `move /a -> /b`.
fn describe(op: &str, path: &Option<String>, from: &Option<String>) -> String {
    struct Description<'a>(&'a str, &'a Option<String>, &'a Option<String>);
    impl fmt::Display for Description<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)?;
            if let Some(from) = self.2 {
                write!(f, " {from} ->")?;
            }
            if let Some(path) = self.1 {
                write!(f, " {path}")?;
            }
            Ok(())
        }
    }
    Description(op, path, from).to_string()
}

/// The JSON type of a value, for messages.
pub(crate) fn type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_index_op_and_path() {
        let e = JsonPatchError::Operation {
            index: 2,
            op: "replace".into(),
            path: Some("/spec/replicas".into()),
            from: None,
            failure: Failure::PathNotFound,
        };
        assert_eq!(e.to_string(), "operation 2 (replace /spec/replicas): path not found");
    }

    #[test]
    fn message_names_from_for_move() {
        let e = JsonPatchError::Operation {
            index: 0,
            op: "move".into(),
            path: Some("/b".into()),
            from: Some("/a".into()),
            failure: Failure::FromNotFound,
        };
        assert_eq!(e.to_string(), "operation 0 (move /a -> /b): from path not found");
    }
}
