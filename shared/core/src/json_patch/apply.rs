//! Carrying out operations on a document, with the apiserver's rules.
//!
//! Each operation finds the container its path points into (every token but
//! the last), then acts on the last token there. The rules that differ from
//! RFC 6902 are upstream's (evanphx/json-patch v4, which the apiserver calls
//! with its defaults), and a preview must follow them:
//! - `add` and `remove` cannot address the whole document (`""`); `replace`
//!   and `test` can;
//! - `replace` of a missing object member adds it;
//! - `replace` of the whole document by a scalar or `null` is refused
//!   (json-patch v4.13, Kubernetes 1.37; v4.12 in 1.33 ignored it, see
//!   docs/kubernetes-versions.md);
//! - `copy` from a missing object member copies `null`;
//! - array indices may be negative (from the end) and have leading zeros;
//! - the `copy` operations of one patch may duplicate at most
//!   [`Limits::max_copy_bytes`](super::Limits::max_copy_bytes) in total.

use serde_json::Value;

use super::copy_size::copied_bytes;
use super::equality::{test_passes, test_root_passes};
use super::error::{Failure, JsonPatchError};
use super::index;
use super::operation::Operation;
use super::pointer::JsonPointer;

static NULL: Value = Value::Null;

/// Applies operations one at a time, keeping the running total of copied bytes.
pub(crate) struct Patcher {
    max_copy_bytes: u64,
    copied: u64,
    /// The document was `null`: upstream holds it as a nil map, which reads as `{}` and cannot be
    /// written (a panic, so an error) until `replace ""` swaps it for a real document.
    nil_document: bool,
}

impl Patcher {
    /// A patcher for one patch; `max_copy_bytes` of 0 means no limit, as upstream.
    pub(crate) fn new(max_copy_bytes: u64) -> Self {
        Patcher { max_copy_bytes, copied: 0, nil_document: false }
    }

    /// Applies every operation to a copy of `doc`; the error names the failing operation.
    pub(crate) fn run<I>(mut self, doc: &Value, ops: I) -> Result<Value, JsonPatchError>
    where
        I: IntoIterator<Item = Result<(usize, Operation), JsonPatchError>>,
    {
        self.nil_document = doc.is_null();
        let mut patched = if self.nil_document { Value::Object(Default::default()) } else { doc.clone() };
        for item in ops {
            let (index, op) = item?;
            self.apply(&mut patched, &op).map_err(|failure| JsonPatchError::Operation {
                index,
                op: op.name().to_string(),
                path: Some(op.path().as_str().to_string()),
                from: op.from().map(|from| from.as_str().to_string()),
                failure,
            })?;
        }
        Ok(if self.nil_document { Value::Null } else { patched })
    }

    /// Applies one operation to `doc`. On error `doc` may be half-changed: callers work on a copy.
    fn apply(&mut self, doc: &mut Value, op: &Operation) -> Result<(), Failure> {
        if self.nil_document {
            match op {
                Operation::Replace { path, value } if path.is_root() && (value.is_object() || value.is_array()) => {
                    self.nil_document = false;
                }
                Operation::Add { path, .. } | Operation::Replace { path, .. } | Operation::Copy { path, .. }
                    if path.split_last().is_some_and(|(parents, _)| parents.is_empty()) =>
                {
                    return Err(Failure::NullDocument);
                }
                _ => {}
            }
        }
        match op {
            Operation::Add { path, value } => add(doc, path, value.clone()),
            Operation::Remove { path } => remove(doc, path),
            Operation::Replace { path, value } => replace(doc, path, value.clone()),
            Operation::Move { from, path } => move_value(doc, from, path),
            Operation::Copy { from, path } => self.copy(doc, from, path),
            Operation::Test { path, value } => test(doc, path, value),
        }
    }

    fn copy(&mut self, doc: &mut Value, from: &JsonPointer, path: &JsonPointer) -> Result<(), Failure> {
        let (from_parents, from_key) = from.split_last().ok_or(Failure::FromNotFound)?;
        let source = container(doc, from_parents).ok_or(Failure::FromNotFound)?;
        let value = get(source, from_key)?.clone();
        let (parents, key) = path.split_last().ok_or(Failure::PathNotFound)?;
        if container(doc, parents).is_none() {
            return Err(Failure::PathNotFound);
        }
        self.copied = self.copied.saturating_add(copied_bytes(&value));
        if self.max_copy_bytes > 0 && self.copied > self.max_copy_bytes {
            return Err(Failure::CopyTooLarge { accumulated: self.copied, limit: self.max_copy_bytes });
        }
        let target = container_mut(doc, parents).ok_or(Failure::PathNotFound)?;
        insert(target, key, value)
    }
}

fn add(doc: &mut Value, path: &JsonPointer, value: Value) -> Result<(), Failure> {
    let (parents, key) = path.split_last().ok_or(Failure::PathNotFound)?;
    let target = container_mut(doc, parents).ok_or(Failure::PathNotFound)?;
    insert(target, key, value)
}

fn remove(doc: &mut Value, path: &JsonPointer) -> Result<(), Failure> {
    let (parents, key) = path.split_last().ok_or(Failure::PathNotFound)?;
    let target = container_mut(doc, parents).ok_or(Failure::PathNotFound)?;
    take(target, key).map(drop)
}

fn replace(doc: &mut Value, path: &JsonPointer, value: Value) -> Result<(), Failure> {
    if path.is_root() {
        // json-patch v4.13 refuses a scalar or null (v4.12 wrapped a nil error and did nothing).
        if !(value.is_object() || value.is_array()) {
            return Err(Failure::ReplaceRootNotContainer);
        }
        *doc = value;
        return Ok(());
    }
    let (parents, key) = path.split_last().ok_or(Failure::PathNotFound)?;
    match container_mut(doc, parents).ok_or(Failure::PathNotFound)? {
        Value::Object(members) => {
            members.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let i = index::existing(key, items.len())?;
            items[i] = value;
            Ok(())
        }
        _ => Err(Failure::PathNotFound),
    }
}

fn move_value(doc: &mut Value, from: &JsonPointer, path: &JsonPointer) -> Result<(), Failure> {
    let (from_parents, from_key) = from.split_last().ok_or(Failure::FromNotFound)?;
    let source = container_mut(doc, from_parents).ok_or(Failure::FromNotFound)?;
    let value = take(source, from_key)?;
    // The destination is resolved after the removal, so moving a value into itself finds no path.
    add(doc, path, value)
}

fn test(doc: &Value, path: &JsonPointer, expected: &Value) -> Result<(), Failure> {
    if path.is_root() {
        return test_root_passes(doc, expected);
    }
    let (parents, key) = path.split_last().ok_or(Failure::PathNotFound)?;
    let target = container(doc, parents).ok_or(Failure::PathNotFound)?;
    test_passes(get(target, key)?, expected)
}

/// Sets an object member or inserts into an array.
fn insert(target: &mut Value, key: &str, value: Value) -> Result<(), Failure> {
    match target {
        Value::Object(members) => {
            members.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let i = index::insertion(key, items.len())?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err(Failure::PathNotFound),
    }
}

/// Removes and returns an object member or array element, which must exist.
fn take(target: &mut Value, key: &str) -> Result<Value, Failure> {
    match target {
        Value::Object(members) => members.shift_remove(key).ok_or_else(|| Failure::MemberNotFound(key.to_string())),
        Value::Array(items) => {
            let i = index::existing(key, items.len())?;
            Ok(items.remove(i))
        }
        _ => Err(Failure::PathNotFound),
    }
}

/// Reads an object member (a missing one reads as null, as upstream) or an array element.
fn get<'a>(target: &'a Value, key: &str) -> Result<&'a Value, Failure> {
    match target {
        Value::Object(members) => Ok(members.get(key).unwrap_or(&NULL)),
        Value::Array(items) => Ok(&items[index::existing(key, items.len())?]),
        _ => Err(Failure::PathNotFound),
    }
}

/// The object or array that `tokens` lead to; `None` through a missing member, a null or a scalar.
fn container<'a>(doc: &'a Value, tokens: &[String]) -> Option<&'a Value> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(members) => members.get(token)?,
            Value::Array(items) => items.get(index::existing(token, items.len()).ok()?)?,
            _ => return None,
        };
    }
    (current.is_object() || current.is_array()).then_some(current)
}

/// [`container`], mutably.
fn container_mut<'a>(doc: &'a mut Value, tokens: &[String]) -> Option<&'a mut Value> {
    let mut current = doc;
    for token in tokens {
        current = match current {
            Value::Object(members) => members.get_mut(token)?,
            Value::Array(items) => {
                let i = index::existing(token, items.len()).ok()?;
                items.get_mut(i)?
            }
            _ => return None,
        };
    }
    (current.is_object() || current.is_array()).then_some(current)
}
