//! Whether two patches change the same field differently (`MergingMapsHaveConflicts`).
//!
//! `kubectl apply` without `--overwrite` refuses a patch that conflicts with the
//! changes made to the live object since the last apply.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::directives::{DIRECTIVE_MARKER, RETAIN_KEYS};
use super::errors::{ErrorKind, StrategicError};
use super::go_types::GoType;
use super::meta::{Lookup, Strategy, Ty};
use super::order;
use super::slices;
use crate::object::field as object_field;

/// `MergingMapsHaveConflicts`.
///
/// Like upstream, the check de-duplicates and sorts the non-merging lists of
/// scalars of `left` (the patch) in place, and that is what gets sent: a
/// patch that passes the check carries those lists as the check left them.
pub(crate) fn maps_conflict(
    cx: Lookup<'_>,
    left: &mut Map<String, Value>,
    right: &Map<String, Value>,
    ty: Ty,
) -> Result<bool, StrategicError> {
    for (key, left_value) in left.iter_mut() {
        if key == DIRECTIVE_MARKER || key == RETAIN_KEYS {
            continue;
        }
        let Some(right_value) = right.get(key) else { continue };
        let (sub, strategy, merge_key) = match left_value {
            Value::Array(_) => {
                let (sub, meta) = cx.for_slice(ty, key).map_err(|e| StrategicError::new(e).at(key))?;
                (sub, meta.strategy, meta.merge_key)
            }
            Value::Object(_) => {
                let (sub, meta) = cx.for_struct(ty, key).map_err(|e| StrategicError::new(e).at(key))?;
                (sub, meta.strategy, meta.merge_key)
            }
            _ => (None, Strategy::Default, ""),
        };
        if fields_conflict(cx, left_value, right_value, sub, strategy, merge_key).map_err(|e| e.at(key))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `mergingMapFieldsHaveConflicts`.
fn fields_conflict(
    cx: Lookup<'_>,
    left: &mut Value,
    right: &Value,
    ty: Ty,
    strategy: Strategy,
    merge_key: &str,
) -> Result<bool, StrategicError> {
    match left {
        Value::Object(l) => {
            let Value::Object(r) = right else { return Ok(true) };
            let (lm, rm) = (object_field::get(l, DIRECTIVE_MARKER), object_field::get(r, DIRECTIVE_MARKER));
            if (lm.is_some() || rm.is_some()) && lm != rm {
                return Ok(true);
            }
            if strategy == Strategy::Replace {
                return Ok(false);
            }
            maps_conflict(cx, l, r, ty)
        }
        Value::Array(l) => {
            let Value::Array(r) = right else { return Ok(true) };
            slices_conflict(cx, l, r, ty, strategy, merge_key)
        }
        _ => Ok(left != right),
    }
}

/// `slicesHaveConflicts`.
fn slices_conflict(
    cx: Lookup<'_>,
    left: &mut [Value],
    right: &[Value],
    elem: Ty,
    strategy: Strategy,
    merge_key: &str,
) -> Result<bool, StrategicError> {
    let kind = slices::element_type(&[left, right])?;
    if strategy == Strategy::Merge {
        if kind != GoType::Map {
            return Ok(false);
        }
        let left_map = by_merge_key(left, merge_key)?;
        let right_map = by_merge_key(right, merge_key)?;
        for (key, &l) in &left_map {
            if let Some(&r) = right_map.get(key) {
                if fields_conflict(cx, &mut left[l], &right[r], elem, Strategy::Default, "")? {
                    return Ok(true);
                }
            }
        }
        return Ok(false);
    }
    if left.len() != right.len() {
        return Ok(true);
    }
    let (compared, right) = if kind != GoType::Map {
        // `deduplicateAndSortScalars` on the patch's own list: the de-duplicated
        // items come first, sorted, and the rest of the list is what the
        // de-duplication left behind.
        let unique = order::deduplicate_in_place(left);
        let sorted = order::sort_scalars(left[..unique].to_vec());
        left[..unique].clone_from_slice(&sorted);
        (unique, order::sort_scalars(order::deduplicate_scalars(right.to_vec())))
    } else {
        (left.len(), right.to_vec())
    };
    for (i, l) in left[..compared].iter_mut().enumerate() {
        // Upstream indexes out of range (and panics) when de-duplication shortened the right side.
        let Some(r) = right.get(i) else { return Ok(true) };
        if fields_conflict(cx, l, r, elem, Strategy::Default, "")? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `sliceOfMapsToMapOfMaps`: the index of the element for each merge key (later duplicates win).
fn by_merge_key(list: &[Value], merge_key: &str) -> Result<HashMap<String, usize>, ErrorKind> {
    let mut out = HashMap::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let Some(map) = item.as_object() else {
            return Err(ErrorKind::UnknownType(format!("invalid element type in merging list: {item}")));
        };
        let Some(key) = map.get(merge_key) else {
            return Err(ErrorKind::NoMergeKey { map: crate::go_format::fmt::v(item), key: merge_key.to_string() });
        };
        out.insert(key.to_string(), i);
    }
    Ok(out)
}
