//! Strategic Merge Patch, as `k8s.io/apimachinery/pkg/util/strategicpatch` does it.
//!
//! A strategic merge patch is a JSON merge patch whose lists can be merged
//! rather than replaced: each field's `patchStrategy` and `patchMergeKey`
//! (read from the [`Schema`]) say how, and directives in the patch (`$patch`,
//! `$retainKeys`, `$deleteFromPrimitiveList/…`, `$setElementOrder/…`) refine it.
//!
//! - [`apply`] is what the apiserver does with `kubectl patch --type strategic`;
//! - [`create_two_way`] is what `kubectl edit` sends;
//! - [`create_three_way`] is what `kubectl apply` (client-side) sends.
//!
//! The functions follow upstream (v0.33) case by case, including its ordering
//! rules and error cases, so that a preview computed here is what the cluster
//! will store. They never panic; where upstream would panic they return an
//! error. Custom resources have no strategic metadata: for their types the
//! functions return [`ErrorKind::Untyped`].
//!
//! ```
//! use fieldwise_core::schema::{builtin, Gvk};
//! use fieldwise_core::strategic;
//! use serde_json::json;
//!
//! let schema = builtin();
//! let ty = schema.root(&Gvk::new("", "v1", "Pod")).unwrap();
//! let pod = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
//! let patch = json!({"spec": {"containers": [{"name": "b", "image": "b:2"}]}});
//! let patched = strategic::apply(&pod, &patch, schema, ty).unwrap();
//! assert_eq!(patched, json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]}}));
//! ```

mod apply;
mod conflicts;
mod diff;
pub(crate) mod directives;
mod errors;
mod go_types;
mod key_index;
mod meta;
mod order;
mod slices;

use serde_json::{Map, Value};

use crate::schema::{Gvk, Schema, TypeDef, TypeId};

pub use errors::{ErrorKind, StrategicError};

use diff::DiffOptions;
use meta::{Lookup, Ty};

/// A condition a created patch must meet (`mergepatch.PreconditionFunc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// The patch must not change this top-level field (`RequireKeyUnchanged`).
    KeyUnchanged(String),
    /// The patch must not change this `metadata` field (`RequireMetadataKeyUnchanged`).
    MetadataKeyUnchanged(String),
}

impl Precondition {
    /// The preconditions `kubectl apply` and `kubectl edit` use: `apiVersion`,
    /// `kind` and `metadata.name` unchanged.
    pub fn kubectl() -> Vec<Precondition> {
        vec![
            Precondition::KeyUnchanged("apiVersion".into()),
            Precondition::KeyUnchanged("kind".into()),
            Precondition::MetadataKeyUnchanged("name".into()),
        ]
    }

    /// Whether a patch meets the condition.
    pub fn holds(&self, patch: &Map<String, Value>) -> bool {
        match self {
            Precondition::KeyUnchanged(key) => !patch.contains_key(key),
            Precondition::MetadataKeyUnchanged(key) => match patch.get("metadata") {
                Some(Value::Object(metadata)) => !metadata.contains_key(key),
                _ => true,
            },
        }
    }
}

/// The root type of an object, found by its `apiVersion` and `kind`; an
/// [`ErrorKind::Untyped`] error when the schema does not know it (custom resources).
pub fn root_type(schema: &Schema, object: &Value) -> Result<TypeId, StrategicError> {
    let gvk = Gvk::of_object(object)
        .ok_or(ErrorKind::Untyped { type_name: "an object without apiVersion and kind".into() })?;
    schema.root(&gvk).ok_or_else(|| {
        let group = if gvk.group.is_empty() { String::new() } else { format!(".{}", gvk.group) };
        ErrorKind::Untyped { type_name: format!("{}{group}/{}", gvk.kind, gvk.version) }.into()
    })
}

/// Applies a strategic merge patch (`StrategicMergePatch` with the apiserver's options).
///
/// `null` in the patch deletes; `null` as `original` or `patch` counts as `{}`.
/// `original` is copied; [`apply_owned`] merges into it instead.
pub fn apply(original: &Value, patch: &Value, schema: &Schema, ty: TypeId) -> Result<Value, StrategicError> {
    apply_owned(original.clone(), patch, schema, ty)
}

/// [`apply`] that merges into `original` rather than a copy of it, as upstream's
/// `StrategicMergeMapPatch` merges into its argument: for a caller that does not
/// need the unpatched object afterwards (a decoded response, a preview), this
/// saves copying the whole object, most of which a patch leaves untouched.
pub fn apply_owned(original: Value, patch: &Value, schema: &Schema, ty: TypeId) -> Result<Value, StrategicError> {
    let root = check_root(schema, ty)?;
    let patch = object(patch)?;
    let original = match original {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        _ => return Err(ErrorKind::BadJsonDoc.into()),
    };
    let cx = Lookup { schema };
    Ok(Value::Object(apply::merge_map(cx, original, patch, root, apply::SERVER)?))
}

/// Creates the patch that turns `original` into `modified` (`CreateTwoWayMergePatch`).
pub fn create_two_way(
    original: &Value,
    modified: &Value,
    schema: &Schema,
    ty: TypeId,
) -> Result<Value, StrategicError> {
    create_two_way_checked(original, modified, schema, ty, &[])
}

/// [`create_two_way`] with preconditions on the created patch (e.g. [`Precondition::kubectl`]).
pub fn create_two_way_checked(
    original: &Value,
    modified: &Value,
    schema: &Schema,
    ty: TypeId,
    preconditions: &[Precondition],
) -> Result<Value, StrategicError> {
    let root = check_root(schema, ty)?;
    let cx = Lookup { schema };
    let options = DiffOptions { set_element_order: true, ..DiffOptions::default() };
    let patch = diff::diff_maps(cx, object(original)?, object(modified)?, root, options)?;
    check_preconditions(&patch, preconditions)?;
    Ok(Value::Object(patch))
}

/// Creates the patch `kubectl apply` sends (`CreateThreeWayMergePatch`): the
/// changes from `current` (live) to `modified` (the file), plus the deletions
/// from `original` (last applied) to `modified`.
///
/// Without `overwrite`, a patch that changes a field the live object changed
/// differently since `original` is an [`ErrorKind::Conflict`].
pub fn create_three_way(
    original: &Value,
    modified: &Value,
    current: &Value,
    schema: &Schema,
    ty: TypeId,
    overwrite: bool,
) -> Result<Value, StrategicError> {
    create_three_way_checked(original, modified, current, schema, ty, overwrite, &[])
}

/// [`create_three_way`] with preconditions on the created patch.
pub fn create_three_way_checked(
    original: &Value,
    modified: &Value,
    current: &Value,
    schema: &Schema,
    ty: TypeId,
    overwrite: bool,
    preconditions: &[Precondition],
) -> Result<Value, StrategicError> {
    let root = check_root(schema, ty)?;
    let cx = Lookup { schema };
    let (original, modified, current) = (object(original)?, object(modified)?, object(current)?);
    let delta_options = DiffOptions { ignore_deletions: true, set_element_order: true, ..DiffOptions::default() };
    let delta = diff::diff_maps(cx, current, modified, root, delta_options)?;
    let deletion_options =
        DiffOptions { ignore_changes_and_additions: true, set_element_order: true, ..DiffOptions::default() };
    let deletions = diff::diff_maps(cx, original, modified, root, deletion_options)?;
    let client = apply::MergeOptions { merge_parallel_list: false, ignore_unmatched_nulls: false };
    let mut patch = apply::merge_map(cx, deletions, &delta, root, client)?;
    check_preconditions(&patch, preconditions)?;
    if !overwrite {
        let changes = diff::diff_maps(cx, original, current, root, DiffOptions::default())?;
        if conflicts::maps_conflict(cx, &mut patch, &changes, root)? {
            return Err(ErrorKind::Conflict { patch: json_text(&patch), changes: json_text(&changes) }.into());
        }
    }
    Ok(Value::Object(patch))
}

fn check_root(schema: &Schema, ty: TypeId) -> Result<Ty, StrategicError> {
    match schema.try_get(ty) {
        Some(TypeDef::Struct(_)) => Ok(Some(ty)),
        Some(TypeDef::Untyped) | None => {
            let type_name = schema.name_of(ty).unwrap_or("this type").to_string();
            Err(ErrorKind::Untyped { type_name }.into())
        }
        Some(TypeDef::Map(_)) => Err(ErrorKind::BadArgKind { expected: "struct", actual: "map" }.into()),
        Some(TypeDef::List(_)) => Err(ErrorKind::BadArgKind { expected: "struct", actual: "slice" }.into()),
        Some(TypeDef::Scalar(_)) => Err(ErrorKind::BadArgKind { expected: "struct", actual: "string" }.into()),
    }
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

/// A document as an object; `null` is the empty object, anything else is `ErrBadJSONDoc`.
fn object(value: &Value) -> Result<&Map<String, Value>, StrategicError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(EMPTY.get_or_init(Map::new)),
        _ => Err(ErrorKind::BadJsonDoc.into()),
    }
}

fn check_preconditions(patch: &Map<String, Value>, preconditions: &[Precondition]) -> Result<(), StrategicError> {
    if preconditions.iter().all(|p| p.holds(patch)) {
        return Ok(());
    }
    Err(ErrorKind::PreconditionFailed(json_text(patch)).into())
}

fn json_text(map: &Map<String, Value>) -> String {
    serde_json::to_string(map).unwrap_or_default()
}
