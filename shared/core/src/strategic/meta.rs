//! Patch metadata lookup: the strategy and merge key of a field, and the type below it.
//!
//! This follows `PatchMetaFromStruct` (what the apiserver uses), read from our
//! [`Schema`] instead of Go struct tags: a struct field is found by its JSON
//! name (case-insensitively as a fallback, like `encoding/json`), a map's
//! values all have the map's value type and no strategy, and an unknown field
//! is the error `unable to find api field in struct …`. Where the schema knows
//! nothing ([`TypeDef::Untyped`]) the lookup succeeds with no metadata, as
//! upstream's OpenAPI lookup does: objects merge, lists are replaced.

use crate::schema::go_pointers::is_go_pointer;
use crate::schema::{PatchStrategy, ScalarKind, Schema, TypeDef, TypeId};

use super::errors::ErrorKind;

/// Built-in Go structs with only `json:"-"` fields, which OpenAPI shows as untyped.
const GO_STRUCTS_WITHOUT_FIELDS: &[&str] =
    &["io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "io.k8s.apimachinery.pkg.runtime.RawExtension"];

/// A position in the schema; `None` when nothing is known.
pub(crate) type Ty = Option<TypeId>;

/// The main strategy of a field, `retainKeys` aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Strategy {
    /// No strategy: objects merge, lists are replaced.
    #[default]
    Default,
    /// `merge`: lists merge by merge key, or as sets of primitives.
    Merge,
    /// `replace`: the value is replaced whole.
    Replace,
}

/// The strategic-merge metadata of one field.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PatchMeta<'s> {
    pub(crate) strategy: Strategy,
    pub(crate) retain_keys: bool,
    pub(crate) merge_key: &'s str,
}

/// Looks up patch metadata in one schema.
#[derive(Clone, Copy)]
pub(crate) struct Lookup<'s> {
    pub(crate) schema: &'s Schema,
}

impl<'s> Lookup<'s> {
    /// `LookupPatchMetadataForStruct`: the type and metadata of field `key` of `ty`.
    pub(crate) fn for_struct(&self, ty: Ty, key: &str) -> Result<(Ty, PatchMeta<'s>), ErrorKind> {
        self.field(ty, key).map(|(sub, meta, _)| (sub, meta))
    }

    /// [`Self::for_struct`], plus the field's own JSON name when `ty` is a struct that declares it.
    fn field(&self, ty: Ty, key: &str) -> Result<(Ty, PatchMeta<'s>, Option<&'s str>), ErrorKind> {
        let Some(id) = ty else { return Ok((None, PatchMeta::default(), None)) };
        match self.schema.try_get(id) {
            Some(TypeDef::Untyped) if self.is_go_struct_without_fields(id) => {
                Err(ErrorKind::FieldNotFound { structure: self.struct_name(id), field: key.to_string() })
            }
            None | Some(TypeDef::Untyped) => Ok((None, PatchMeta::default(), None)),
            Some(TypeDef::Struct(s)) => {
                let field = s
                    .fields
                    .get_key_value(key)
                    .or_else(|| s.fields.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)));
                match field {
                    Some((name, field)) => {
                        let (strategy, retain_keys) = split_strategy(field.patch_strategy)?;
                        let merge_key = field.merge_key.as_deref().unwrap_or("");
                        Ok((Some(field.ty), PatchMeta { strategy, retain_keys, merge_key }, Some(name.as_str())))
                    }
                    None => match s.extra {
                        Some(extra) => Ok((Some(extra), PatchMeta::default(), None)),
                        None => {
                            Err(ErrorKind::FieldNotFound { structure: self.struct_name(id), field: key.to_string() })
                        }
                    },
                }
            }
            Some(TypeDef::Scalar(ScalarKind::IntOrString)) => {
                Err(ErrorKind::FieldNotFound { structure: "IntOrString".to_string(), field: key.to_string() })
            }
            Some(other) => Err(ErrorKind::NotMapOrStruct { kind: go_kind(Some(other)) }),
        }
    }

    /// `LookupPatchMetadataForSlice`: the element type and metadata of list field `key` of `ty`.
    ///
    /// A field that is not a list is still accepted when its Go type is a
    /// pointer (upstream then takes the pointee as the "element" type), so a
    /// list patched onto `*LabelSelector` or `*bool` is replaced like any value.
    pub(crate) fn for_slice(&self, ty: Ty, key: &str) -> Result<(Ty, PatchMeta<'s>), ErrorKind> {
        let (field_ty, meta, name) = self.field(ty, key)?;
        let Some(field_id) = field_ty else { return Ok((None, meta)) };
        let is_pointer = || match (ty.and_then(|id| self.schema.name_of(id)), name) {
            (Some(parent), Some(name)) => is_go_pointer(parent, name),
            _ => false,
        };
        match self.schema.try_get(field_id) {
            Some(TypeDef::Untyped) if self.is_go_struct_without_fields(field_id) && !is_pointer() => {
                Err(ErrorKind::NotSlice { kind: go_kind(ty.and_then(|id| self.schema.try_get(id))) })
            }
            None | Some(TypeDef::Untyped) => Ok((None, meta)),
            Some(TypeDef::List(list)) => match self.schema.try_get(list.items) {
                Some(TypeDef::List(_)) => Err(ErrorKind::SliceOfSlice),
                _ => Ok((Some(list.items), meta)),
            },
            Some(_) if is_pointer() => Ok((Some(field_id), meta)),
            Some(_) => Err(ErrorKind::NotSlice { kind: go_kind(ty.and_then(|id| self.schema.try_get(id))) }),
        }
    }

    /// Whether an untyped position is one of the Go structs that hold raw JSON
    /// behind a custom marshaller and have no JSON fields of their own
    /// (`FieldsV1`, `RawExtension`): upstream finds no field in them.
    fn is_go_struct_without_fields(&self, id: TypeId) -> bool {
        matches!(self.schema.name_of(id), Some(name) if GO_STRUCTS_WITHOUT_FIELDS.contains(&name))
    }

    /// The Go kind name of a type, as `PatchMetaFromStruct.Name()` reports it.
    pub(crate) fn kind_name(&self, ty: Ty) -> &'static str {
        go_kind(ty.and_then(|id| self.schema.try_get(id)))
    }

    /// The short Go struct name of a type: the last segment of its OpenAPI name.
    fn struct_name(&self, id: TypeId) -> String {
        match self.schema.name_of(id) {
            Some(name) => name.rsplit('.').next().unwrap_or(name).to_string(),
            None => String::new(),
        }
    }
}

/// Splits a field's strategies into the main one and the `retainKeys` flag
/// (`extractRetainKeysPatchStrategy`).
fn split_strategy(strategy: PatchStrategy) -> Result<(Strategy, bool), ErrorKind> {
    match (strategy.merge, strategy.replace) {
        (true, true) => Err(ErrorKind::UnexpectedPatchStrategy(format!(
            "[merge replace{}]",
            if strategy.retain_keys { " retainKeys" } else { "" }
        ))),
        (true, false) => Ok((Strategy::Merge, strategy.retain_keys)),
        (false, true) => Ok((Strategy::Replace, strategy.retain_keys)),
        (false, false) => Ok((Strategy::Default, strategy.retain_keys)),
    }
}

fn go_kind(def: Option<&TypeDef>) -> &'static str {
    match def {
        None | Some(TypeDef::Untyped) => "interface",
        Some(TypeDef::Struct(_)) => "struct",
        Some(TypeDef::Map(_)) => "map",
        Some(TypeDef::List(_)) => "slice",
        Some(TypeDef::Scalar(ScalarKind::String)) => "string",
        Some(TypeDef::Scalar(ScalarKind::Integer)) => "int64",
        Some(TypeDef::Scalar(ScalarKind::Number)) => "float64",
        Some(TypeDef::Scalar(ScalarKind::Boolean)) => "bool",
        Some(TypeDef::Scalar(ScalarKind::IntOrString)) => "struct",
    }
}
