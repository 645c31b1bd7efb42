//! Applying a strategic merge patch to an object (`StrategicMergeMapPatch`,
//! `mergeMap`, and `mergeSlice`: maps hold lists and lists hold maps, so the two
//! merges are one recursion and live together; the list helpers are in
//! [`super::slices`]).
//!
//! The same merge also combines the two halves of a three-way patch, with
//! different [`MergeOptions`]: there, directives are carried over rather than
//! carried out.

use serde_json::{Map, Value};

use super::directives::{
    discard_nulls, extract_key, remove_directives, DELETE, DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE_MARKER, REPLACE,
    RETAIN_KEYS, SET_ELEMENT_ORDER,
};
use super::errors::{ErrorKind, StrategicError};
use super::go_types::{self, GoType};
use super::key_index::{go_eq, EntryIndex};
use super::meta::{Lookup, Strategy, Ty};
use super::order::{self, OrderEntry};
use super::slices::{
    self, element_type, merge_special_elements, partition_maps, partition_primitives, AliasView, Live,
};
use crate::go_format::fmt as go_fmt;
use crate::object::field as object_field;

/// `MergeOptions`: how directives are treated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MergeOptions {
    /// Carry out `$deleteFromPrimitiveList`, `$retainKeys` (server side); otherwise keep them.
    pub(crate) merge_parallel_list: bool,
    /// Drop `null`s that delete nothing (server side); otherwise keep them in the result.
    pub(crate) ignore_unmatched_nulls: bool,
}

/// The options the apiserver applies patches with.
pub(crate) const SERVER: MergeOptions = MergeOptions { merge_parallel_list: true, ignore_unmatched_nulls: true };

/// `mergeMap`: merges `patch` into `original`.
pub(crate) fn merge_map(
    cx: Lookup<'_>,
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    ty: Ty,
    opts: MergeOptions,
) -> Result<Map<String, Value>, StrategicError> {
    if let Some(directive) = object_field::get(patch, DIRECTIVE_MARKER) {
        return directive_in_map(directive, patch);
    }
    apply_retain_keys(&mut original, patch, opts)?;
    let consumed = merge_ordered_lists(cx, &mut original, patch, ty, opts)?;
    let mut rebuilt = RebuiltLists::default();
    for (key, value) in patch {
        if key == RETAIN_KEYS || key.starts_with(SET_ELEMENT_ORDER) || consumed.iter().any(|c| c == key) {
            continue;
        }
        merge_field(cx, &mut original, key, value, ty, opts, &mut rebuilt)?;
    }
    Ok(original)
}

/// `handleDirectiveInMergeMap`: `$patch: replace` keeps the patch, `$patch: delete` empties.
fn directive_in_map(directive: &Value, patch: &Map<String, Value>) -> Result<Map<String, Value>, StrategicError> {
    match directive.as_str() {
        Some(REPLACE) => {
            let mut out = patch.clone();
            out.shift_remove(DIRECTIVE_MARKER);
            Ok(out)
        }
        Some(DELETE) => Ok(Map::new()),
        _ => Err(ErrorKind::BadPatchType {
            directive: go_fmt::v(directive),
            map: go_fmt::v(&Value::Object(patch.clone())),
        }
        .into()),
    }
}

/// The lists of one object that a `$deleteFromPrimitiveList` rebuilt, with the
/// capacity upstream gave the new slice (the old length). Upstream processes a
/// patch's keys in Go's random map order; here they go in the patch's order,
/// and a list merged after its deletion list is a fresh slice, not the decoded one.
#[derive(Default)]
struct RebuiltLists(Vec<(String, usize)>);

impl RebuiltLists {
    fn capacity(&self, field: &str) -> Option<usize> {
        self.0.iter().find(|(f, _)| f == field).map(|(_, capacity)| *capacity)
    }
}

/// One patch field into the original (the body of `mergeMap`'s loop).
fn merge_field(
    cx: Lookup<'_>,
    original: &mut Map<String, Value>,
    key: &str,
    patch_value: &Value,
    ty: Ty,
    opts: MergeOptions,
    rebuilt: &mut RebuiltLists,
) -> Result<(), StrategicError> {
    let mut field = key;
    let mut is_delete_list = false;
    if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
        if !opts.merge_parallel_list {
            original.insert(key.to_string(), patch_value.clone());
            return Ok(());
        }
        let stripped = extract_key(key, DELETE_FROM_PRIMITIVE_LIST).map_err(|e| StrategicError::new(e).at(key))?;
        is_delete_list = true;
        if !stripped.is_empty() {
            field = stripped;
        }
    }
    if patch_value.is_null() {
        original.shift_remove(field);
        if opts.ignore_unmatched_nulls {
            return Ok(());
        }
    }
    let same_type = object_field::get(original, field).map(|current| GoType::of(current) == GoType::of(patch_value));
    if same_type != Some(true) {
        // Absent from the original, or of another type: take the patch value.
        if !is_delete_list {
            let mut value = patch_value.clone();
            if opts.ignore_unmatched_nulls {
                discard_nulls(&mut value);
            }
            match remove_directives(value) {
                Some(value) => {
                    original.insert(field.to_string(), value);
                }
                None => {
                    original.shift_remove(field);
                }
            }
        }
        return Ok(());
    }
    let Some(slot) = object_field::get_mut(original, field) else { return Ok(()) };
    match patch_value {
        Value::Object(patch_map) => {
            let (sub, meta) = cx.for_struct(ty, field).map_err(|e| StrategicError::new(e).at(field))?;
            if meta.strategy == Strategy::Replace {
                *slot = patch_value.clone();
            } else if let Value::Object(current) = std::mem::take(slot) {
                *slot = Value::Object(merge_map(cx, current, patch_map, sub, opts).map_err(|e| e.at(field))?);
            }
        }
        Value::Array(patch_list) => {
            let (elem, meta) = cx.for_slice(ty, field).map_err(|e| StrategicError::new(e).at(field))?;
            if meta.strategy == Strategy::Merge || is_delete_list {
                if let Value::Array(current) = std::mem::take(slot) {
                    let live = slices::Live { capacity: rebuilt.capacity(field), view: None };
                    let (live_len, rebuilds) = (current.len(), is_delete_list && opts.merge_parallel_list);
                    let primitive = slices::element_type(&[&current, patch_list]).is_ok_and(|k| k != GoType::Map);
                    let merged = merge_slice(cx, current, patch_list, elem, meta.merge_key, opts, is_delete_list, live)
                        .map_err(|e| e.at(field))?;
                    if rebuilds && primitive {
                        rebuilt.0.push((field.to_string(), live_len));
                    }
                    *slot = Value::Array(merged);
                }
            } else {
                *slot = patch_value.clone();
            }
        }
        _ => *slot = patch_value.clone(),
    }
    Ok(())
}

/// `applyRetainKeysDirective`: clears the original's fields missing from `$retainKeys`.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    opts: MergeOptions,
) -> Result<(), StrategicError> {
    let Some(retain) = object_field::get(patch, RETAIN_KEYS) else { return Ok(()) };
    if !opts.merge_parallel_list {
        match object_field::get(original, RETAIN_KEYS) {
            Some(existing) if existing != retain => {
                return Err(ErrorKind::RetainKeysMismatch(go_fmt::v(existing), go_fmt::v(retain)).into());
            }
            Some(_) => {}
            None => {
                original.insert(RETAIN_KEYS.to_string(), retain.clone());
            }
        }
        return Ok(());
    }
    let Value::Array(list) = retain else {
        return Err(StrategicError::new(ErrorKind::BadPatchFormatForRetainKeys).at(RETAIN_KEYS));
    };
    if list.iter().any(|v| v.is_object() || v.is_array()) {
        return Err(StrategicError::new(ErrorKind::BadPatchFormatForRetainKeys).at(RETAIN_KEYS));
    }
    let retained = |key: &str| list.iter().any(|v| v.as_str() == Some(key));
    for (key, value) in patch {
        if key == RETAIN_KEYS
            || value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || key.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !retained(key) {
            return Err(StrategicError::new(ErrorKind::BadPatchFormatForRetainKeys).at(key));
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// `mergePatchIntoOriginal`: merges each list that has a `$setElementOrder` and
/// orders it; returns the fields it merged, which the main loop then skips.
fn merge_ordered_lists<'p>(
    cx: Lookup<'_>,
    original: &mut Map<String, Value>,
    patch: &'p Map<String, Value>,
    ty: Ty,
    opts: MergeOptions,
) -> Result<Vec<&'p str>, StrategicError> {
    let mut consumed = Vec::new();
    for (key, order_value) in patch {
        if !key.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if !opts.merge_parallel_list {
            match object_field::get(original, key.as_str()) {
                Some(existing) if existing != order_value => {
                    return Err(StrategicError::new(ErrorKind::BadPatchFormatForSetElementOrderList).at(key));
                }
                Some(_) => {}
                None => {
                    original.insert(key.clone(), order_value.clone());
                }
            }
        }
        let field = extract_key(key, SET_ELEMENT_ORDER).map_err(|e| StrategicError::new(e).at(key))?;
        merge_one_ordered_list(cx, original, patch, ty, opts, key, order_value, field).map_err(|e| e.at(field))?;
        if object_field::contains(patch, field) {
            consumed.push(field);
        }
    }
    Ok(consumed)
}

#[allow(clippy::too_many_arguments)]
fn merge_one_ordered_list(
    cx: Lookup<'_>,
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    ty: Ty,
    opts: MergeOptions,
    key: &str,
    order_value: &Value,
    field: &str,
) -> Result<(), StrategicError> {
    let Value::Array(set_order) = order_value else {
        return Err(StrategicError::new(ErrorKind::BadArgType {
            expected: "[]interface {}",
            actual: go_types::type_name(order_value),
        })
        .at(key));
    };
    let original_list = match object_field::get_mut(original, field) {
        None => None,
        Some(Value::Array(list)) => Some(std::mem::take(list)),
        Some(other) => {
            return Err(ErrorKind::BadArgType { expected: "[]interface {}", actual: go_types::type_name(other) }.into());
        }
    };
    let patch_list = match object_field::get(patch, field) {
        None => None,
        Some(Value::Array(list)) => Some(list),
        Some(other) => {
            return Err(ErrorKind::BadArgType { expected: "[]interface {}", actual: go_types::type_name(other) }.into());
        }
    };
    let (elem, meta) = cx.for_slice(ty, field)?;
    let no_items = Vec::new();
    validate_against_order(patch_list.unwrap_or(&no_items), set_order, meta.merge_key)?;
    // Upstream reads these after merging; they only depend on the inputs.
    let kind = slices::element_type(&[original_list.as_deref().unwrap_or(&[]), patch_list.unwrap_or(&no_items)]);
    let live_order = |list: &[Value]| list.iter().map(|v| OrderEntry::of(v, meta.merge_key)).collect();
    let (merged, server_order): (Vec<Value>, Vec<OrderEntry>) = match (original_list, patch_list) {
        (Some(current), None) => {
            let order = live_order(&current);
            (current, order)
        }
        (None, Some(list)) => match remove_directives(Value::Array(list.clone())) {
            Some(Value::Array(list)) => (list, Vec::new()),
            _ => return Ok(()),
        },
        (Some(current), Some(list)) => {
            if meta.strategy == Strategy::Merge {
                let mut view = AliasView::new(&current, meta.merge_key);
                let live = slices::Live { capacity: None, view: Some(&mut view) };
                let merged = merge_slice(cx, current, list, elem, meta.merge_key, opts, false, live)?;
                (merged, view.into_slots())
            } else {
                (list.clone(), live_order(&current))
            }
        }
        (None, None) => return Ok(()),
    };
    let (patch_items, server_only) = if meta.merge_key.is_empty() {
        slices::partition_primitives(merged, set_order)?
    } else {
        let by: Vec<&Value> = set_order.iter().collect();
        slices::partition_maps(merged, &by, meta.merge_key)?
    };
    let is_map = kind? == GoType::Map;
    let order: Vec<&Value> = set_order.iter().collect();
    let both = order::normalize_element_order(patch_items, server_only, &order, &server_order, meta.merge_key, is_map)?;
    original.insert(field.to_string(), Value::Array(both));
    Ok(())
}

/// `validatePatchWithSetOrderList`: the patch list must follow the order list.
fn validate_against_order(patch_list: &[Value], set_order: &[Value], merge_key: &str) -> Result<(), ErrorKind> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let mut plain: Vec<&Value> = Vec::with_capacity(patch_list.len());
    for item in patch_list {
        if !merge_key.is_empty() {
            if !item.is_object() {
                return Err(ErrorKind::BadArgType {
                    expected: "map[string]interface {}",
                    actual: go_types::type_name(item),
                });
            }
            if super::directives::is_delete_element(item) {
                continue;
            }
        }
        plain.push(item);
    }
    let (mut p, mut s) = (0, 0);
    while p < plain.len() && s < set_order.len() {
        if slices::is_special(plain[p]) {
            p += 1;
            continue;
        }
        if merge_key_equal(plain[p], &set_order[s], merge_key)? {
            p += 1;
        }
        s += 1;
    }
    if p < plain.len() && s >= set_order.len() {
        return Err(ErrorKind::SetElementOrderMismatch {
            patch: go_fmt::v(&Value::Array(patch_list.to_vec())),
            order: go_fmt::v(&Value::Array(set_order.to_vec())),
        });
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
/// The merge key's value in a list entry, with upstream's errors for an entry that
/// is not an object or lacks the key.
pub(crate) fn merge_key_value<'v>(item: &'v Value, merge_key: &str) -> Result<&'v Value, ErrorKind> {
    let Some(map) = item.as_object() else {
        return Err(ErrorKind::BadArgType { expected: "map[string]interface {}", actual: go_types::type_name(item) });
    };
    object_field::get(map, merge_key)
        .ok_or_else(|| ErrorKind::NoMergeKey { map: go_fmt::v(item), key: merge_key.to_string() })
}

fn merge_key_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, ErrorKind> {
    if merge_key.is_empty() {
        return go_eq(left, right);
    }
    go_eq(merge_key_value(left, merge_key)?, merge_key_value(right, merge_key)?)
}

/// `mergeSlice`: merges `patch` into `original`, then orders the result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_slice(
    cx: Lookup<'_>,
    original: Vec<Value>,
    patch: &[Value],
    elem: Ty,
    merge_key: &str,
    opts: MergeOptions,
    is_delete_list: bool,
    live: Live<'_>,
) -> Result<Vec<Value>, StrategicError> {
    let view = live.view;
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_type(&[&original, patch])?;
    if kind != GoType::Map {
        if opts.merge_parallel_list && is_delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        // Upstream appends the patch to the live list and de-duplicates in place.
        // When the append fits in the live list's spare capacity, the live list
        // (read below as the server order) sees the de-duplicated array.
        let live_len = original.len();
        let capacity = live.capacity.unwrap_or_else(|| go_types::decoded_capacity(live_len));
        let aliased = live_len + patch.len() <= capacity;
        let mut both = original;
        both.extend(patch.iter().cloned());
        let unaliased_order = if aliased { Vec::new() } else { both[..live_len].to_vec() };
        let merged_len = order::deduplicate_in_place(&mut both);
        let server_order = if aliased { both[..live_len].to_vec() } else { unaliased_order };
        if let (true, Some(view)) = (aliased, view) {
            view.slots = server_order.iter().map(|v| OrderEntry::Element(Box::new(v.clone()))).collect();
        }
        both.truncate(merged_len);
        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(both, patch)?
        } else {
            // A keyed list holding primitives: upstream partitions them as maps, which fails.
            let by: Vec<&Value> = patch.iter().collect();
            partition_maps(both, &by, merge_key)?
        };
        let patch_order: Vec<&Value> = patch.iter().collect();
        let server_order: Vec<&Value> = server_order.iter().collect();
        return Ok(order::normalize_element_order(patch_items, server_only, &patch_order, &server_order, "", false)?);
    }
    if merge_key.is_empty() {
        return Err(ErrorKind::MergeWithoutMergeKey { kind: cx.kind_name(elem) }.into());
    }
    let mut view = view;
    let (original, rest, replaced) = merge_special_elements(original, patch, merge_key, view.as_deref_mut())?;
    // The live order is the list after deletions. The view already holds it, in
    // its first slots (appends write after them), unless the list was replaced.
    let live_len = original.len();
    if replaced {
        view = None;
    }
    let own_order: Vec<OrderEntry> = match view {
        Some(_) => Vec::new(),
        None => original.iter().map(|v| OrderEntry::of(v, merge_key)).collect(),
    };
    let merged = merge_plain_elements(cx, original, &rest, merge_key, elem, opts, view.as_deref_mut())?;
    let server_order = match &view {
        Some(view) => &view.slots[..live_len],
        None => &own_order[..],
    };
    let (patch_items, server_only) = partition_maps(merged, &rest, merge_key)?;
    Ok(order::normalize_element_order(patch_items, server_only, &rest, server_order, merge_key, true)?)
}

/// `mergeSliceWithoutSpecialElements`: merges each patch element into the
/// original element with the same merge key, or appends it.
fn merge_plain_elements(
    cx: Lookup<'_>,
    mut original: Vec<Value>,
    patch: &[&Value],
    merge_key: &str,
    elem: Ty,
    opts: MergeOptions,
    mut view: Option<&mut AliasView>,
) -> Result<Vec<Value>, StrategicError> {
    let mut index = EntryIndex::new(&original, merge_key);
    for item in patch {
        let (Some(patch_map), Some(value)) = (item.as_object(), object_field::get_in(item, merge_key)) else {
            return Err(ErrorKind::NoMergeKey { map: go_fmt::v(item), key: merge_key.to_string() }.into());
        };
        match index.find(&original, value)? {
            Some(i) => {
                let target = std::mem::take(&mut original[i]);
                let Value::Object(target) = target else { return Err(ErrorKind::NotAMapInList(i).into()) };
                let merged = merge_map(cx, target, patch_map, elem, opts).map_err(|e| e.at_element(merge_key, item))?;
                original[i] = Value::Object(merged);
                index.changed(&original, i, value);
            }
            None => {
                if let Some(view) = view.as_deref_mut() {
                    view.append(item);
                }
                original.push((*item).clone());
                index.appended(&original);
            }
        }
    }
    Ok(original)
}
