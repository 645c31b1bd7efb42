//! One JSON Patch operation, typed, read from its JSON form as the apiserver reads it.
//!
//! The apiserver is lenient where RFC 6902 is strict, and a preview must accept
//! what the apiserver accepts:
//! - a missing `value` of `add` or `replace` is read as `null` (so
//!   `{"op":"add","path":"/a"}` adds `null`); `test` without `value`, and
//!   `replace` of the whole document without `value`, always fail;
//! - members other than `op`, `path`, `from` and `value` are ignored;
//! - `op` that is missing or not a string is an unknown operation.

use serde_json::{json, Value};

use super::error::{Failure, JsonPatchError};
use super::pointer::JsonPointer;

/// One step of a JSON Patch.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Inserts into an array, or sets an object member (replacing it if present).
    Add {
        /// Where to add.
        path: JsonPointer,
        /// What to add.
        value: Value,
    },
    /// Removes an object member or an array element, which must exist.
    Remove {
        /// What to remove.
        path: JsonPointer,
    },
    /// Replaces a value. On an object the member need not exist (the apiserver then adds it).
    Replace {
        /// What to replace; `""` replaces the whole document if the value is an object or array,
        /// and silently does nothing otherwise (upstream loses its own error).
        path: JsonPointer,
        /// The new value.
        value: Value,
    },
    /// Removes the value at `from` and adds it at `path`.
    Move {
        /// Where the value is taken from.
        from: JsonPointer,
        /// Where it is added, resolved after the removal.
        path: JsonPointer,
    },
    /// Adds a copy of the value at `from` at `path` (a missing object member copies as `null`).
    Copy {
        /// Where the value is read.
        from: JsonPointer,
        /// Where the copy is added.
        path: JsonPointer,
    },
    /// Fails the whole patch unless the value at `path` equals `value`.
    Test {
        /// What to compare; a missing object member compares equal to `null`.
        path: JsonPointer,
        /// The expected value.
        value: Value,
    },
}

impl Operation {
    /// The `op` name: `add`, `remove`, `replace`, `move`, `copy` or `test`.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Add { .. } => "add",
            Operation::Remove { .. } => "remove",
            Operation::Replace { .. } => "replace",
            Operation::Move { .. } => "move",
            Operation::Copy { .. } => "copy",
            Operation::Test { .. } => "test",
        }
    }

    /// The target of the operation.
    pub fn path(&self) -> &JsonPointer {
        match self {
            Operation::Add { path, .. }
            | Operation::Remove { path }
            | Operation::Replace { path, .. }
            | Operation::Move { path, .. }
            | Operation::Copy { path, .. }
            | Operation::Test { path, .. } => path,
        }
    }

    /// The source of a `move` or `copy`.
    pub fn from(&self) -> Option<&JsonPointer> {
        match self {
            Operation::Move { from, .. } | Operation::Copy { from, .. } => Some(from),
            _ => None,
        }
    }

    /// The value of an `add`, `replace` or `test`.
    pub fn value(&self) -> Option<&Value> {
        match self {
            Operation::Add { value, .. } | Operation::Replace { value, .. } | Operation::Test { value, .. } => {
                Some(value)
            }
            _ => None,
        }
    }

    /// The JSON form of the operation.
    ///
    /// ```
    /// use fieldwise_core::json_patch::{JsonPointer, Operation};
    /// let op = Operation::Remove { path: JsonPointer::parse("/metadata/labels/app") };
    /// assert_eq!(op.to_value(), serde_json::json!({"op": "remove", "path": "/metadata/labels/app"}));
    /// ```
    pub fn to_value(&self) -> Value {
        let mut out = json!({ "op": self.name() });
        if let Some(from) = self.from() {
            out["from"] = Value::String(from.as_str().to_string());
        }
        out["path"] = Value::String(self.path().as_str().to_string());
        if let Some(value) = self.value() {
            out["value"] = value.clone();
        }
        out
    }

    /// Reads operation number `index` from its JSON form.
    pub(crate) fn from_json(index: usize, raw: &Value) -> Result<Operation, JsonPatchError> {
        let fail = |failure: Failure| failure_at(index, raw, failure);
        let Some(object) = raw.as_object() else {
            // A null element decodes upstream as an operation without members: an unknown op.
            return Err(fail(if raw.is_null() { Failure::UnknownOp } else { Failure::NotAnObject }));
        };
        let op = object.get("op").and_then(Value::as_str).ok_or_else(|| fail(Failure::UnknownOp))?;
        let pointer = |member: &'static str| match object.get(member) {
            None | Some(Value::Null) => Err(fail(Failure::MissingMember(member))),
            Some(Value::String(text)) => Ok(JsonPointer::parse(text)),
            Some(_) => Err(fail(Failure::NotAString(member))),
        };
        let value = || object.get("value").cloned().unwrap_or(Value::Null);
        Ok(match op {
            "add" => Operation::Add { path: pointer("path")?, value: value() },
            "remove" => Operation::Remove { path: pointer("path")? },
            "replace" => {
                let path = pointer("path")?;
                // Upstream dereferences a missing value when replacing the whole document.
                if path.is_root() && !object.contains_key("value") {
                    return Err(fail(Failure::MissingMember("value")));
                }
                Operation::Replace { path, value: value() }
            }
            "move" => {
                let from = pointer("from")?;
                Operation::Move { from, path: pointer("path")? }
            }
            "copy" => {
                let from = pointer("from")?;
                Operation::Copy { from, path: pointer("path")? }
            }
            "test" => {
                let path = pointer("path")?;
                // json-patch v4.13 (Kubernetes 1.37) tests a missing value as null (a missing or null
                // member passes, anything else fails); at the root it still dereferences it (an error).
                if path.is_root() && !object.contains_key("value") {
                    return Err(fail(Failure::MissingMember("value")));
                }
                Operation::Test { path, value: value() }
            }
            _ => return Err(fail(Failure::UnknownOp)),
        })
    }
}

/// An error about operation `index`, described from its raw JSON (which may be malformed).
pub(crate) fn failure_at(index: usize, raw: &Value, failure: Failure) -> JsonPatchError {
    let member = |name: &str| raw.get(name).and_then(Value::as_str).map(str::to_string);
    let op = member("op").unwrap_or_else(|| "?".to_string());
    let from = if matches!(op.as_str(), "move" | "copy") { member("from") } else { None };
    JsonPatchError::Operation { index, op, path: member("path"), from, failure }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_value_reads_as_null() {
        let op = Operation::from_json(0, &json!({"op": "add", "path": "/a"}));
        assert_eq!(op, Ok(Operation::Add { path: JsonPointer::parse("/a"), value: Value::Null }));
    }

    #[test]
    fn test_without_a_value_tests_null_except_at_the_root() {
        let op = Operation::from_json(0, &json!({"op": "test", "path": "/a"}));
        assert_eq!(op, Ok(Operation::Test { path: JsonPointer::parse("/a"), value: Value::Null }));
        let err = Operation::from_json(0, &json!({"op": "test", "path": ""})).err();
        assert_eq!(err.as_ref().and_then(|e| e.failure()), Some(&Failure::MissingMember("value")));
        let op = Operation::from_json(0, &json!({"op": "test", "path": "/a", "value": null}));
        assert_eq!(op, Ok(Operation::Test { path: JsonPointer::parse("/a"), value: Value::Null }));
    }

    #[test]
    fn unknown_and_missing_ops_are_refused() {
        for raw in [json!({"op": "frobnicate", "path": "/a"}), json!({"path": "/a"}), json!({"op": 1}), Value::Null] {
            let err = Operation::from_json(3, &raw).err();
            assert_eq!(err.as_ref().and_then(|e| e.failure()), Some(&Failure::UnknownOp), "{raw}");
        }
    }

    #[test]
    fn path_must_be_a_string() {
        let err = Operation::from_json(0, &json!({"op": "remove", "path": 1})).err();
        assert_eq!(err.as_ref().and_then(|e| e.failure()), Some(&Failure::NotAString("path")));
        let err = Operation::from_json(0, &json!({"op": "remove", "path": null})).err();
        assert_eq!(err.as_ref().and_then(|e| e.failure()), Some(&Failure::MissingMember("path")));
    }

    #[test]
    fn move_needs_from() {
        let err = Operation::from_json(1, &json!({"op": "move", "path": "/b"})).err();
        assert_eq!(err.map(|e| e.to_string()).unwrap_or_default(), "operation 1 (move /b): missing \"from\"");
    }

    #[test]
    fn json_form_round_trips() {
        let raw = json!({"op": "copy", "from": "/a", "path": "/b"});
        let op = Operation::from_json(0, &raw);
        assert_eq!(op.map(|o| o.to_value()), Ok(raw));
    }
}
