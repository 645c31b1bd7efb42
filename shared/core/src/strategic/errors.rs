//! Why a strategic merge patch could not be applied or created.
//!
//! Each [`ErrorKind`] is one of upstream's error cases (`mergepatch.Err*` and the
//! `fmt.Errorf` cases of `strategicpatch`), with upstream's wording, so that a
//! message a user searches for finds the same explanations. [`StrategicError`]
//! adds the field path where it happened.

use std::fmt;

use serde_json::Value;

/// A strategic merge patch failure, at a field path of the object.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategicError {
    /// Path segments, innermost last once complete (built while unwinding).
    segments: Vec<String>,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl StrategicError {
    /// An error at the root of the object.
    pub fn new(kind: ErrorKind) -> Self {
        StrategicError { segments: Vec::new(), kind }
    }

    /// The field path, e.g. `.spec.template.spec.containers[name=app].ports`; empty at the root.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for segment in self.segments.iter().rev() {
            if !segment.starts_with('[') {
                out.push('.');
            }
            out.push_str(segment);
        }
        out
    }

    /// Prefixes the path with a field name (called while unwinding, innermost first).
    pub(crate) fn at(mut self, field: &str) -> Self {
        self.segments.push(field.to_string());
        self
    }

    /// Prefixes the path with a list element, named by its merge key when it has one.
    pub(crate) fn at_element(mut self, merge_key: &str, element: &Value) -> Self {
        let segment = match element.get(merge_key) {
            Some(Value::String(s)) if !merge_key.is_empty() => format!("[{merge_key}={s}]"),
            Some(v) if !merge_key.is_empty() => format!("[{merge_key}={v}]"),
            _ => "[]".to_string(),
        };
        self.segments.push(segment);
        self
    }
}

impl fmt::Display for StrategicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{path}: {}", self.kind)
        }
    }
}

impl std::error::Error for StrategicError {}

impl From<ErrorKind> for StrategicError {
    fn from(kind: ErrorKind) -> Self {
        StrategicError::new(kind)
    }
}

/// The upstream error cases.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ErrorKind {
    /// `mergepatch.ErrBadJSONDoc`: an input is not a JSON object.
    #[error("invalid JSON document")]
    BadJsonDoc,
    /// `mergepatch.ErrNoListOfLists`.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// `mergepatch.ErrBadPatchFormatForPrimitiveList`: a malformed `$deleteFromPrimitiveList/<field>` key.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// `mergepatch.ErrBadPatchFormatForRetainKeys`: `$retainKeys` is not a list, or misses a patched field.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// `mergepatch.ErrBadPatchFormatForSetElementOrderList`: a malformed `$setElementOrder/<field>`.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// `mergepatch.ErrNoMergeKey`: a list element lacks the field's merge key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey {
        /// The element, Go-formatted.
        map: String,
        /// The merge key.
        key: String,
    },
    /// `mergepatch.ErrBadArgType`: a value has the wrong JSON type.
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        /// The Go type expected, e.g. `[]interface {}`.
        expected: &'static str,
        /// The Go type received.
        actual: &'static str,
    },
    /// `mergepatch.ErrBadArgKind`: the root type is not a struct.
    #[error("expected a {expected}, but received a {actual}")]
    BadArgKind {
        /// The kind expected.
        expected: &'static str,
        /// The kind received.
        actual: &'static str,
    },
    /// `mergepatch.ErrBadPatchType`: `$patch` has a value other than `replace`, `delete` or `merge`.
    #[error("unknown patch type: {directive} in map: {map}")]
    BadPatchType {
        /// The `$patch` value.
        directive: String,
        /// The map holding it, Go-formatted.
        map: String,
    },
    /// The patch sets a field the type does not have (and it is a map or list on both sides).
    #[error("unable to find api field in struct {structure} for the json field \"{field}\"")]
    FieldNotFound {
        /// The Go struct name, e.g. `PodSpec`.
        structure: String,
        /// The JSON field.
        field: String,
    },
    /// An object was merged into a field whose type is not an object.
    #[error("merging an object in json but data type is not map or struct, instead is: {kind}")]
    NotMapOrStruct {
        /// The Go kind of the field.
        kind: &'static str,
    },
    /// A list was merged into a field whose type is not a list.
    #[error("expected slice or array type, but got: {kind}")]
    NotSlice {
        /// The Go kind of the enclosing type.
        kind: &'static str,
    },
    /// A list type whose items are lists.
    #[error("unexpected slice of slice")]
    SliceOfSlice,
    /// A field's patch strategy cannot be interpreted.
    #[error("unexpected patch strategy: {0}")]
    UnexpectedPatchStrategy(String),
    /// A list of objects with strategy `merge` but no merge key.
    #[error("cannot merge lists without merge key for {kind}")]
    MergeWithoutMergeKey {
        /// The Go kind of the elements.
        kind: &'static str,
    },
    /// `$patch: merge` inside a list.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// A list mixes element types (`int64` and `float64` count as different).
    #[error("list element types are not identical: {0}")]
    ElementTypesDiffer(String),
    /// A list holds `null` where its element type is needed (upstream panics here).
    #[error("list elements must not be null: {0}")]
    NullListElement(String),
    /// Two empty lists where an element type is needed.
    #[error("no elements in any of the given slices")]
    NoElements,
    /// A list that should hold objects holds something else at this index.
    #[error("value for key {0} is not a map")]
    NotAMapInList(usize),
    /// The patch list's order contradicts its `$setElementOrder` list.
    #[error("the order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}")]
    SetElementOrderMismatch {
        /// The patch list, Go-formatted.
        patch: String,
        /// The `$setElementOrder` list, Go-formatted.
        order: String,
    },
    /// A list element cannot be compared for set membership (upstream panics here).
    #[error("list element cannot be used as a set member: {0}")]
    UnhashableElement(String),
    /// Two maps or two lists compared with Go's `==` (upstream panics: "comparing
    /// uncomparable type"), e.g. a merge key whose value is a list.
    #[error("comparing uncomparable type {0}")]
    Uncomparable(&'static str),
    /// `$patch` in an object being diffed is not a string.
    #[error("invalid value for special key: $patch")]
    InvalidDirectiveValue,
    /// Two `$retainKeys` lists differ while combining the parts of a three-way patch.
    #[error("{0} and {1} are not deep equal: this may happen when calculating the 3-way diff patch")]
    RetainKeysMismatch(String, String),
    /// A value of a JSON type the conflict check does not know.
    #[error("unknown type: {0}")]
    UnknownType(String),
    /// A precondition (e.g. `apiVersion`, `kind` or `metadata.name` unchanged) failed.
    #[error("precondition failed for: {0}")]
    PreconditionFailed(String),
    /// `mergepatch.ErrConflict`: the change conflicts with changes made since the last apply.
    #[error("patch:\n{patch}\nconflicts with changes made from original to current:\n{changes}\n")]
    Conflict {
        /// The patch that would be sent, as JSON.
        patch: String,
        /// The changes from original to current, as JSON.
        changes: String,
    },
    /// The type has no strategic merge metadata (custom resources, unknown kinds).
    #[error(
        "{type_name} has no strategic merge patch metadata (custom resources do not have any); \
         use a JSON merge patch (--type merge) or server-side apply instead"
    )]
    Untyped {
        /// The type, e.g. its group/version/kind or OpenAPI name.
        type_name: String,
    },
}
