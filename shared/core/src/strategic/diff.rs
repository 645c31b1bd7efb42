//! Computing a strategic merge patch from two versions of an object (`diffMaps`).
//!
//! Two-way creation (`kubectl edit`) diffs original against modified; three-way
//! creation (`kubectl apply`) combines two one-sided diffs, selected by
//! [`DiffOptions`].

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::apply::merge_key_value;
use super::directives::{
    delete_directive, DELETE_FROM_PRIMITIVE_LIST, DIRECTIVE_MARKER, RETAIN_KEYS, SET_ELEMENT_ORDER,
};
use super::errors::{ErrorKind, StrategicError};
use super::go_types::{self, GoType};
use super::key_index::go_eq;
use super::meta::{Lookup, Strategy, Ty};
use super::order;
use super::slices;
use crate::go_format::fmt as go_fmt;
use crate::object::field as object_field;

/// `DiffOptions`: which changes the diff reports.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DiffOptions {
    /// Emit `$setElementOrder/<field>` lists.
    pub(crate) set_element_order: bool,
    /// Leave out additions and changes (only deletions).
    pub(crate) ignore_changes_and_additions: bool,
    /// Leave out deletions (only additions and changes).
    pub(crate) ignore_deletions: bool,
    /// Emit `$retainKeys` for this object (its field has the `retainKeys` strategy).
    pub(crate) build_retain_keys: bool,
}

type PatchMap = Map<String, Value>;

/// `diffMaps`: the patch that turns `original` into `modified`.
pub(crate) fn diff_maps(
    cx: Lookup<'_>,
    original: &PatchMap,
    modified: &PatchMap,
    ty: Ty,
    opts: DiffOptions,
) -> Result<PatchMap, StrategicError> {
    let mut patch = Map::new();
    let mut retain_keys = Vec::new();
    let mut original_fields = object_field::InOrder::new(original);
    for (key, modified_value) in modified {
        if opts.build_retain_keys && !modified_value.is_null() {
            retain_keys.push(Value::from(key.as_str()));
        }
        let Some(original_value) = original_fields.get(key) else {
            if !opts.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        };
        if key == DIRECTIVE_MARKER {
            let (Some(before), Some(after)) = (original_value.as_str(), modified_value.as_str()) else {
                return Err(ErrorKind::InvalidDirectiveValue.into());
            };
            if before != after {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        if GoType::of(original_value) != GoType::of(modified_value) {
            if !opts.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        match (original_value, modified_value) {
            (Value::Object(before), Value::Object(after)) => {
                diff_map_field(cx, key, before, after, &mut patch, ty, opts).map_err(|e| e.at(key))?;
            }
            (Value::Array(before), Value::Array(after)) => {
                diff_list_field(cx, key, before, after, &mut patch, ty, opts).map_err(|e| e.at(key))?;
            }
            _ => replace_if_changed(key, original_value, modified_value, &mut patch, opts),
        }
    }
    if !opts.ignore_deletions {
        let mut modified_fields = object_field::InOrder::new(modified);
        for key in original.keys() {
            if modified_fields.get(key).is_none() {
                patch.insert(key.clone(), Value::Null);
            }
        }
    }
    if !retain_keys.is_empty() && (!patch.is_empty() || has_additional_field(original, modified)) {
        patch.insert(RETAIN_KEYS.to_string(), Value::Array(order::sort_scalars(retain_keys)));
    }
    Ok(patch)
}

/// `hasAdditionalNewField`: `original` has a non-null field that `modified` lacks.
fn has_additional_field(original: &PatchMap, modified: &PatchMap) -> bool {
    original.iter().any(|(k, v)| !v.is_null() && object_field::get(modified, k).is_none())
}

/// `replacePatchFieldIfNotEqual`.
fn replace_if_changed(key: &str, original: &Value, modified: &Value, patch: &mut PatchMap, opts: DiffOptions) {
    if !opts.ignore_changes_and_additions && original != modified {
        patch.insert(key.to_string(), modified.clone());
    }
}

/// `handleMapDiff`.
fn diff_map_field(
    cx: Lookup<'_>,
    key: &str,
    original: &PatchMap,
    modified: &PatchMap,
    patch: &mut PatchMap,
    ty: Ty,
    opts: DiffOptions,
) -> Result<(), StrategicError> {
    let (sub, meta) = match cx.for_struct(ty, key) {
        Ok(found) => found,
        Err(_) if original == modified => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let opts = DiffOptions { build_retain_keys: meta.retain_keys, ..opts };
    if meta.strategy == Strategy::Replace {
        if !opts.ignore_changes_and_additions {
            patch.insert(key.to_string(), Value::Object(modified.clone()));
        }
        return Ok(());
    }
    let value = diff_maps(cx, original, modified, sub, opts)?;
    if !value.is_empty() {
        patch.insert(key.to_string(), Value::Object(value));
    }
    Ok(())
}

/// `handleSliceDiff`.
fn diff_list_field(
    cx: Lookup<'_>,
    key: &str,
    original: &[Value],
    modified: &[Value],
    patch: &mut PatchMap,
    ty: Ty,
    opts: DiffOptions,
) -> Result<(), StrategicError> {
    let (elem, meta) = match cx.for_slice(ty, key) {
        Ok(found) => found,
        Err(_) if original == modified => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if meta.strategy != Strategy::Merge {
        if !opts.ignore_changes_and_additions && original != modified {
            patch.insert(key.to_string(), Value::Array(modified.to_vec()));
        }
        return Ok(());
    }
    let opts = DiffOptions { build_retain_keys: meta.retain_keys, ..opts };
    let (additions, deletions, set_order) = diff_lists(cx, original, modified, elem, meta.merge_key, opts)?;
    if !additions.is_empty() {
        patch.insert(key.to_string(), Value::Array(additions));
    }
    if !deletions.is_empty() {
        patch.insert(format!("{DELETE_FROM_PRIMITIVE_LIST}/{key}"), Value::Array(deletions));
    }
    if !set_order.is_empty() {
        patch.insert(format!("{SET_ELEMENT_ORDER}/{key}"), Value::Array(set_order));
    }
    Ok(())
}

type ListDiff = (Vec<Value>, Vec<Value>, Vec<Value>);

/// `diffLists`: the patch list, the primitive deletion list and the order list.
fn diff_lists(
    cx: Lookup<'_>,
    original: &[Value],
    modified: &[Value],
    elem: Ty,
    merge_key: &str,
    opts: DiffOptions,
) -> Result<ListDiff, StrategicError> {
    if original.is_empty() {
        if modified.is_empty() || opts.ignore_changes_and_additions {
            return Ok((Vec::new(), Vec::new(), Vec::new()));
        }
        return Ok((modified.to_vec(), Vec::new(), Vec::new()));
    }
    let kind = slices::element_type(&[original, modified])?;
    let modified_refs: Vec<&Value> = modified.iter().collect();
    if kind == GoType::Map {
        let keys = (merge_keys(original, merge_key), merge_keys(modified, merge_key));
        let (changes, deletions) =
            diff_lists_of_maps(cx, (original, &keys.0), (modified, &keys.1), elem, merge_key, opts)?;
        // With no changes there is nothing to order, and the check of `modified`'s
        // merge keys that ordering starts with cannot fail: diff_lists_of_maps has
        // already refused any entry of `modified` that is not an object with the key.
        let mut patch_list = if changes.is_empty() {
            changes
        } else {
            order::normalize_slice_order(changes, &modified_refs, merge_key, true)?
        };
        let order_same = is_order_same((original, &keys.0), (modified, &keys.1), merge_key)?;
        patch_list.extend(deletions);
        let mut set_order = Vec::new();
        if opts.set_element_order
            && ((!opts.ignore_changes_and_additions && (!patch_list.is_empty() || !order_same))
                || (!opts.ignore_deletions && !patch_list.is_empty()))
        {
            set_order = modified.iter().map(|v| slices::order_view(v, merge_key)).collect();
        }
        return Ok((patch_list, Vec::new(), set_order));
    }
    // Upstream sorts the original list in place before comparing it with the modified one.
    let original_sorted = order::sort_scalars(original.to_vec());
    let (additions, deletions) = diff_lists_of_scalars(&original_sorted, modified, opts);
    let additions = order::normalize_slice_order(additions, &modified_refs, "", false)?;
    let mut set_order = Vec::new();
    if opts.set_element_order
        && ((!opts.ignore_deletions && !deletions.is_empty())
            || (!opts.ignore_changes_and_additions && original_sorted.as_slice() != modified))
    {
        set_order = modified.to_vec();
    }
    Ok((additions, deletions, set_order))
}

/// A list of objects with the merge-key value of each entry ([`merge_keys`]).
type KeyedList<'l, 'v> = (&'v [Value], &'l [Option<&'v Value>]);

/// The merge-key value of each entry, read once per diff (`None`: not an object
/// with the key; the entry is refused where upstream meets it).
fn merge_keys<'v>(list: &'v [Value], merge_key: &str) -> Vec<Option<&'v Value>> {
    list.iter().map(|v| object_field::get_in(v, merge_key)).collect()
}

/// `isOrderSame`: the merge keys are equal position by position.
fn is_order_same<'v>(
    original: KeyedList<'_, 'v>,
    modified: KeyedList<'_, 'v>,
    merge_key: &str,
) -> Result<bool, ErrorKind> {
    if original.0.len() != modified.0.len() {
        return Ok(false);
    }
    let key = |(list, keys): KeyedList<'_, 'v>, at: usize| -> Result<&'v Value, ErrorKind> {
        keys[at].map_or_else(|| merge_key_value(&list[at], merge_key), Ok)
    };
    for at in 0..original.0.len() {
        if !go_eq(key(original, at)?, key(modified, at)?)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `diffListsOfScalars`: additions and (de-duplicated) deletions, comparing `%v` texts.
fn diff_lists_of_scalars(original_sorted: &[Value], modified: &[Value], opts: DiffOptions) -> (Vec<Value>, Vec<Value>) {
    let modified_sorted = order::sort_scalars(modified.to_vec());
    let before: Vec<String> = original_sorted.iter().map(go_fmt::v).collect();
    let after: Vec<String> = modified_sorted.iter().map(go_fmt::v).collect();
    let (mut i, mut j) = (0, 0);
    let mut additions = Vec::new();
    let mut deletions = Vec::new();
    while i < before.len() || j < after.len() {
        let both = i < before.len() && j < after.len();
        if both && before[i] == after[j] {
            i += 1;
            j += 1;
        } else if i >= before.len() || (both && before[i] > after[j]) {
            if !opts.ignore_changes_and_additions {
                additions.push(modified_sorted[j].clone());
            }
            j += 1;
        } else {
            if !opts.ignore_deletions {
                deletions.push(original_sorted[i].clone());
            }
            i += 1;
        }
    }
    (additions, order::deduplicate_scalars(deletions))
}

/// A list entry of `diffListsOfMaps`: the object, its merge key's `%v` text and value.
struct Keyed<'v> {
    map: &'v Map<String, Value>,
    text: &'v str,
    key: &'v Value,
}

impl<'v> Keyed<'v> {
    /// A sorted entry, with upstream's errors for one that is not an object or lacks the key.
    fn of(sorted: &'v [SortedEntry<'v>], at: usize, merge_key: &str) -> Result<Option<Keyed<'v>>, ErrorKind> {
        let Some((text, (entry, key))) = sorted.get(at) else { return Ok(None) };
        let Some(map) = entry.as_object() else {
            return Err(ErrorKind::BadArgType {
                expected: "map[string]interface {}",
                actual: go_types::type_name(entry),
            });
        };
        let key = key.ok_or_else(|| ErrorKind::NoMergeKey { map: go_fmt::v(entry), key: merge_key.to_string() })?;
        Ok(Some(Keyed { map, text, key }))
    }
}

/// An entry of a list sorted by merge-key text: the text, the entry and its key.
type SortedEntry<'v> = (Cow<'v, str>, (&'v Value, Option<&'v Value>));

/// `diffListsOfMaps`: changed and added elements, and delete directives.
fn diff_lists_of_maps<'v>(
    cx: Lookup<'_>,
    original: KeyedList<'_, 'v>,
    modified: KeyedList<'_, 'v>,
    elem: Ty,
    merge_key: &str,
    opts: DiffOptions,
) -> Result<(Vec<Value>, Vec<Value>), StrategicError> {
    // Each entry's `%v` text is computed once, for the sort; the entry itself is
    // checked when the walk reaches it, where upstream reports a bad entry.
    let text = |&(_, key): &(&'v Value, Option<&'v Value>)| go_fmt::text(key.unwrap_or(&Value::Null));
    let entries = |(list, keys): KeyedList<'_, 'v>| list.iter().zip(keys.iter().copied()).collect();
    let before = order::sort_by_text_keeping(entries(original), text);
    let after = order::sort_by_text_keeping(entries(modified), text);
    let mut patch = Vec::new(); // usually a few changed entries of a long list
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    // Each side is read again only when the walk moves past it.
    let mut left = Keyed::of(&before, i, merge_key)?;
    let mut right = Keyed::of(&after, j, merge_key)?;
    while i < before.len() || j < after.len() {
        let (moved_left, moved_right) = match (&left, &right) {
            (Some(l), Some(r)) if l.text == r.text => {
                let mut value =
                    diff_maps(cx, l.map, r.map, elem, opts).map_err(|e| e.at_element(merge_key, after[j].1 .0))?;
                if !value.is_empty() {
                    value.insert(merge_key.to_string(), r.key.clone());
                    patch.push(Value::Object(value));
                }
                (true, true)
            }
            (None, Some(_)) => {
                if !opts.ignore_changes_and_additions {
                    patch.push(after[j].1 .0.clone());
                }
                (false, true)
            }
            (Some(l), Some(r)) if l.text > r.text => {
                if !opts.ignore_changes_and_additions {
                    patch.push(after[j].1 .0.clone());
                }
                (false, true)
            }
            (Some(l), _) => {
                if !opts.ignore_deletions {
                    deletions.push(delete_directive(merge_key, l.key.clone()));
                }
                (true, false)
            }
            (None, None) => break,
        };
        if moved_left {
            i += 1;
            left = Keyed::of(&before, i, merge_key)?;
        }
        if moved_right {
            j += 1;
            right = Keyed::of(&after, j, merge_key)?;
        }
    }
    Ok((patch, deletions))
}
