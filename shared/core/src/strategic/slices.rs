//! The helpers of merging two lists (`mergeSlice`, which lives in
//! [`super::apply`] beside `mergeMap`, the two being one recursion).
//!
//! Lists of primitives merge as sets (with upstream's de-duplication order);
//! lists of objects merge element by element, matched by merge key, after the
//! `$patch: delete | replace` elements are handled here. The merged list is then
//! ordered by [`super::order`].
//!
//! Upstream edits the original list in place while deleting and appending, and
//! `mergePatchIntoOriginal` later reads the same backing array through its own,
//! longer slice header as the live order. [`AliasView`] reproduces what that
//! header sees, because it changes the resulting order.

use serde_json::Value;

use super::directives::{has_directive_marker, DELETE, DIRECTIVE_MARKER, MERGE, REPLACE};
use super::errors::{ErrorKind, StrategicError};
use super::go_types::{self, GoType};
use super::key_index::{find_by_key, EntryIndex};
use super::order::{self, OrderEntry};
use crate::go_format::fmt as go_fmt;
use crate::object::field as object_field;

/// `sliceElementType`: the one Go type of all elements of the lists.
pub(crate) fn element_type(lists: &[&[Value]]) -> Result<GoType, ErrorKind> {
    let mut first: Option<GoType> = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let ty = GoType::of(item);
        match first {
            None => {
                if ty == GoType::Nil {
                    return Err(ErrorKind::NullListElement(describe_lists(lists)));
                }
                if ty == GoType::Slice {
                    return Err(ErrorKind::NoListOfLists);
                }
                first = Some(ty);
            }
            Some(prev) if prev != ty => return Err(ErrorKind::ElementTypesDiffer(describe_lists(lists))),
            Some(_) => {}
        }
    }
    first.ok_or(ErrorKind::NoElements)
}

fn describe_lists(lists: &[&[Value]]) -> String {
    let parts: Vec<String> = lists.iter().map(|l| go_fmt::v(&Value::Array(l.to_vec()))).collect();
    format!("[{}]", parts.join(" "))
}

/// The `$setElementOrder` entry for an element: its merge key only, when it has one.
pub(crate) fn order_view(item: &Value, merge_key: &str) -> Value {
    match object_field::get_in(item, merge_key) {
        Some(key) if !merge_key.is_empty() => {
            let mut m = serde_json::Map::with_capacity(1);
            m.insert(merge_key.to_string(), key.clone());
            Value::Object(m)
        }
        _ => item.clone(),
    }
}

/// What upstream's original slice header sees after in-place deletions and appends.
///
/// Its first `live` slots are the order entries of the list as merged so far
/// (deletions mirrored as they happen), which `merge_slice` reads as the live order.
pub(crate) struct AliasView {
    /// The order entries upstream's header sees.
    pub(crate) slots: Vec<OrderEntry>,
    live: usize,
    merge_key: String,
}

impl AliasView {
    /// A view of `list` (its order entries).
    pub(crate) fn new(list: &[Value], merge_key: &str) -> Self {
        AliasView {
            slots: list.iter().map(|v| OrderEntry::of(v, merge_key)).collect(),
            live: list.len(),
            merge_key: merge_key.to_string(),
        }
    }

    fn delete(&mut self, index: usize) {
        if self.live == 0 || index >= self.live {
            return;
        }
        // Go's `append(s[:i], s[i+1:]...)` copies the tail left by one; the last
        // slot keeps its old element, now also in the slot before it.
        self.slots[index..self.live].rotate_left(1);
        if self.live - index >= 2 {
            self.slots[self.live - 1] = self.slots[self.live - 2].clone();
        }
        self.live -= 1;
    }

    /// Mirrors an element appended to the merged list.
    pub(crate) fn append(&mut self, item: &Value) {
        if self.live < self.slots.len() {
            self.slots[self.live] = OrderEntry::of(item, &self.merge_key);
        }
        self.live += 1;
    }

    /// The elements upstream's full-length header sees.
    pub(crate) fn into_slots(self) -> Vec<OrderEntry> {
        self.slots
    }
}

/// What upstream's live list is besides its elements: the spare capacity of its
/// backing array, and (in `mergePatchIntoOriginal`) another header onto it.
pub(crate) struct Live<'v> {
    /// The capacity of the live slice; `None` for one as the JSON decoder made it.
    pub(crate) capacity: Option<usize>,
    /// Upstream's other slice header onto the live list, if it reads one afterwards.
    pub(crate) view: Option<&'v mut AliasView>,
}

/// `mergeSliceWithSpecialElements`: applies `$patch: delete` elements to the
/// original and notes `$patch: replace`. Returns the list to merge into, the
/// plain patch elements and whether the list was replaced.
pub(crate) fn merge_special_elements<'p>(
    mut original: Vec<Value>,
    patch: &'p [Value],
    merge_key: &str,
    mut view: Option<&mut AliasView>,
) -> Result<(Vec<Value>, Vec<&'p Value>, bool), StrategicError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = object_field::get_in(item, DIRECTIVE_MARKER) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE) => {
                let Some(value) = object_field::get_in(item, merge_key) else {
                    return Err(ErrorKind::NoMergeKey { map: go_fmt::v(item), key: merge_key.to_string() }.into());
                };
                while let Some(i) = find_by_key(&original, merge_key, value)? {
                    original.remove(i);
                    if let Some(view) = view.as_deref_mut() {
                        view.delete(i);
                    }
                }
            }
            Some(REPLACE) => replace = true,
            Some(MERGE) => return Err(ErrorKind::MergeDirectiveInList.into()),
            _ => {
                return Err(ErrorKind::BadPatchType { directive: go_fmt::v(directive), map: go_fmt::v(item) }.into());
            }
        }
    }
    if replace {
        return Ok((plain.into_iter().cloned().collect(), Vec::new(), true));
    }
    Ok((original, plain, false))
}

/// `partitionPrimitivesByPresentInList`: items present in `by`, and the others.
pub(crate) fn partition_primitives(list: Vec<Value>, by: &[Value]) -> Result<(Vec<Value>, Vec<Value>), ErrorKind> {
    if let Some(bad) = by.iter().chain(list.iter()).find(|v| v.is_object() || v.is_array()) {
        return Err(ErrorKind::UnhashableElement(go_fmt::v(bad)));
    }
    Ok(list.into_iter().partition(|v| by.contains(v)))
}

/// `partitionMapsByPresentInList`: objects whose merge key appears in `by`, and the others.
pub(crate) fn partition_maps(
    list: Vec<Value>,
    by: &[&Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), ErrorKind> {
    let index = EntryIndex::new(by, merge_key);
    let mut found = Vec::with_capacity(list.len());
    for item in &list {
        let Some(map) = item.as_object() else {
            return Err(ErrorKind::BadArgType {
                expected: "map[string]interface {}",
                actual: go_types::type_name(item),
            });
        };
        let Some(value) = object_field::get(map, merge_key) else {
            return Err(ErrorKind::NoMergeKey { map: go_fmt::v(item), key: merge_key.to_string() });
        };
        found.push(index.find(by, value)?.is_some());
    }
    let mut absent = list;
    let mut found = found.into_iter();
    let present = order::take_where(&mut absent, |_| found.next() == Some(true));
    Ok((present, absent))
}

/// Whether a value is an object with `$patch` (for `validatePatchWithSetOrderList`).
pub(crate) fn is_special(item: &Value) -> bool {
    has_directive_marker(item)
}
