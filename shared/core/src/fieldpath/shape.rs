//! How server-side apply treats the value at one position, given the schema.
//!
//! Every walk over a typed value (field sets, comparison, merge) asks the same
//! question at each node: is this a leaf (a scalar, or an atomic map, struct
//! or list), a granular map whose keys are owned one by one, or an
//! associative list whose items are? Positions without schema are deduced
//! from the value, as upstream's `__untyped_deduced_` type: objects are
//! granular maps, lists are atomic, anything else is a scalar.

use serde_json::Value;

use super::element::{KeyFields, PathElement};
use crate::schema::{ListKind, MapKind, Schema, StructType, TypeDef, TypeId};

/// The treatment of one position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape<'s> {
    /// Owned and replaced as a whole.
    Leaf,
    /// Keys are owned one by one.
    Fields(Fields<'s>),
    /// Items are owned one by one: a set (`keys` is `None`) or a list map.
    List { items: Option<TypeId>, keys: Option<&'s [String]> },
}

/// The keys of a granular map or struct, and how to type them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields<'s> {
    declared: Option<&'s StructType>,
    values: Option<TypeId>,
    untyped: bool,
}

impl<'s> Fields<'s> {
    /// The type of the value under `key` (`None`: untyped), and whether `key` is a declared struct field.
    pub(crate) fn child(&self, key: &str) -> (Option<TypeId>, bool) {
        if let Some(field) = self.declared.and_then(|s| s.fields.get(key)) {
            return (Some(field.ty), true);
        }
        if self.untyped {
            return (None, false);
        }
        (self.values, false)
    }
}

/// A type definition, or `None` for untyped positions (and ids the schema does not hold).
pub(crate) fn resolve(schema: &Schema, ty: Option<TypeId>) -> Option<&TypeDef> {
    let ty = ty?;
    if (ty.0 as usize) < schema.len() {
        match schema.get(ty) {
            TypeDef::Untyped => None,
            def => Some(def),
        }
    } else {
        None
    }
}

/// The treatment of a position of type `ty` holding `value` (`None`: absent).
pub(crate) fn shape_of<'s>(schema: &'s Schema, ty: Option<TypeId>, value: Option<&Value>) -> Shape<'s> {
    match resolve(schema, ty) {
        None => match value {
            Some(Value::Object(_)) => Shape::Fields(Fields { declared: None, values: None, untyped: true }),
            _ => Shape::Leaf,
        },
        Some(TypeDef::Scalar(_)) | Some(TypeDef::Untyped) => Shape::Leaf,
        Some(TypeDef::Struct(s)) => match s.map_kind {
            MapKind::Atomic => Shape::Leaf,
            MapKind::Granular => {
                Shape::Fields(Fields { declared: Some(s), values: s.extra, untyped: s.extra.is_none() })
            }
        },
        Some(TypeDef::Map(m)) => match m.map_kind {
            MapKind::Atomic => Shape::Leaf,
            MapKind::Granular => Shape::Fields(Fields { declared: None, values: Some(m.values), untyped: false }),
        },
        Some(TypeDef::List(l)) => match &l.list_kind {
            ListKind::Atomic => Shape::Leaf,
            ListKind::Set => Shape::List { items: Some(l.items), keys: None },
            ListKind::Map(keys) => Shape::List { items: Some(l.items), keys: Some(keys) },
        },
    }
}

/// Whether a value counts as empty for upstream's "empty on both sides is a leaf" rule.
pub(crate) fn is_empty_container(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => true,
    }
}

/// The path element naming one item of an associative list, as upstream's `listItemToPathElement`.
pub(crate) fn item_element(
    schema: &Schema,
    items: Option<TypeId>,
    keys: Option<&[String]>,
    item: &Value,
) -> Result<PathElement, String> {
    // A list map without keys is a set, as upstream decides by the number of keys.
    let Some(keys) = keys.filter(|keys| !keys.is_empty()) else {
        return match item {
            Value::Object(_) => Err("associative list without keys has an element that's a map type".into()),
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => Err("associative list without keys has an element that's an explicit null".into()),
            scalar => Ok(PathElement::Value(as_go_decodes(scalar.clone()))),
        };
    };
    let Value::Object(map) = item else {
        return Err(if item.is_null() {
            "associative list with keys may not have a null element".into()
        } else {
            "associative list with keys may not have non-map elements".into()
        });
    };
    let mut fields = Vec::with_capacity(keys.len());
    for name in keys {
        match map.get(name).cloned().or_else(|| key_default(schema, items, name)) {
            Some(v) => fields.push((name.clone(), as_go_decodes(v))),
            None => {
                return Err(format!(
                    "associative list with keys has an element that omits key field {name:?} (and doesn't have default value)"
                ))
            }
        }
    }
    Ok(PathElement::Key(KeyFields::new(fields)))
}

/// A value as the apiserver's decoder holds it: an integer beyond int64 is a
/// float64 there (`18446744073709551615` is written back as `18446744073709552000`).
fn as_go_decodes(value: Value) -> Value {
    match &value {
        Value::Number(n) if n.is_u64() && n.as_i64().is_none() => n.as_f64().map(Value::from).unwrap_or(value),
        _ => value,
    }
}

/// The default of a list-map key field that an item omits: the OpenAPI `default`
/// of that field of the item type, as upstream's `getAssociativeKeyDefault`
/// (container ports: `protocol` is `"TCP"`, `containerPort` is `0`).
fn key_default(schema: &Schema, items: Option<TypeId>, name: &str) -> Option<Value> {
    match resolve(schema, items) {
        Some(TypeDef::Struct(s)) => s.fields.get(name)?.default.clone(),
        _ => None,
    }
}
