//! A compact JSON form of a [`Schema`], for embedding the built-in types.
//!
//! The full OpenAPI of a cluster is tens of megabytes, mostly descriptions; the
//! engines need only the graph and its `x-kubernetes-*` metadata. This form keeps
//! exactly that:
//!
//! ```json
//! {"format": "fieldwise-schema/1",
//!  "types": [["S", "io.k8s.api.core.v1.Pod", {"spec": 1, "containers": [2, "merge", "name"]}, 0, 0], ...],
//!  "roots": [["", "v1", "Pod", 0], ...]}
//! ```
//!
//! A type's id is its index in `types`. Entries (trailing defaults may be left out;
//! `0` stands for "none" or "no"):
//! - `["S", name, {field: ty | [ty, strategy, mergeKey, default]}, extra, atomic]`: a struct
//!   (`default`, the field's OpenAPI default, is left out when the field has none);
//! - `["M", name, values, atomic]`: a map;
//! - `["L", name, items, kind]`: a list; kind `0` atomic, `1` set, `[keys…]` map;
//! - `["s"|"i"|"n"|"b"|"q", name]`: string, integer, number, boolean, int-or-string;
//! - `["u", name]`: untyped.

use serde_json::{json, Map, Value};

use super::openapi::SchemaError;
use super::{
    Field, Gvk, ListKind, ListType, MapKind, MapType, PatchStrategy, ScalarKind, Schema, StructType, TypeDef, TypeId,
};

/// The format tag written in and required from every compact document.
pub const FORMAT: &str = "fieldwise-schema/1";

/// Encodes a schema in the compact form.
pub fn encode(schema: &Schema) -> Value {
    let mut names: Vec<Value> = vec![Value::from(0); schema.len()];
    for (name, id) in schema.names() {
        if let Some(slot) = names.get_mut(id.0 as usize) {
            *slot = Value::from(name);
        }
    }
    let types: Vec<Value> =
        (0..schema.len()).map(|i| encode_type(schema.get(TypeId(i as u32)), names[i].take())).collect();
    let mut roots: Vec<(&Gvk, TypeId)> = schema.kinds().filter_map(|g| Some((g, schema.root(g)?))).collect();
    roots.sort_by(|a, b| a.0.cmp(b.0));
    let roots: Vec<Value> = roots.into_iter().map(|(g, id)| json!([g.group, g.version, g.kind, id.0])).collect();
    json!({"format": FORMAT, "types": types, "roots": roots})
}

fn encode_type(def: &TypeDef, name: Value) -> Value {
    let atomic = |kind: MapKind| Value::from(u8::from(kind == MapKind::Atomic));
    match def {
        TypeDef::Struct(s) => {
            let fields: Map<String, Value> = s.fields.iter().map(|(k, f)| (k.clone(), encode_field(f))).collect();
            json!(["S", name, fields, s.extra.map_or(Value::from(0), |e| Value::from(e.0)), atomic(s.map_kind)])
        }
        TypeDef::Map(m) => json!(["M", name, m.values.0, atomic(m.map_kind)]),
        TypeDef::List(l) => {
            let kind = match &l.list_kind {
                ListKind::Atomic => Value::from(0),
                ListKind::Set => Value::from(1),
                ListKind::Map(keys) => json!(keys),
            };
            json!(["L", name, l.items.0, kind])
        }
        TypeDef::Scalar(kind) => json!([scalar_tag(*kind), name]),
        TypeDef::Untyped => json!(["u", name]),
    }
}

fn encode_field(field: &Field) -> Value {
    let strategy = strategy_text(field.patch_strategy);
    match &field.default {
        None if strategy.is_empty() && field.merge_key.is_none() => Value::from(field.ty.0),
        None => json!([field.ty.0, strategy, field.merge_key.as_deref().unwrap_or("")]),
        Some(default) => json!([field.ty.0, strategy, field.merge_key.as_deref().unwrap_or(""), default]),
    }
}

/// The comma-separated text of a strategy, in upstream's usual order.
fn strategy_text(strategy: PatchStrategy) -> String {
    let mut words = Vec::new();
    if strategy.merge {
        words.push("merge");
    }
    if strategy.replace {
        words.push("replace");
    }
    if strategy.retain_keys {
        words.push("retainKeys");
    }
    words.join(",")
}

fn scalar_tag(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::String => "s",
        ScalarKind::Integer => "i",
        ScalarKind::Number => "n",
        ScalarKind::Boolean => "b",
        ScalarKind::IntOrString => "q",
    }
}

/// Decodes the compact form; every type reference is checked to be in range.
pub fn decode(value: &Value) -> Result<Schema, SchemaError> {
    let bad = |what: &str| SchemaError::Compact(what.to_string());
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(bad("missing or unknown format tag"));
    }
    let types = value.get("types").and_then(Value::as_array).ok_or_else(|| bad("no types array"))?;
    let count = types.len();
    let id = |v: Option<&Value>| -> Result<TypeId, SchemaError> {
        match v.and_then(Value::as_u64) {
            Some(n) if (n as usize) < count => Ok(TypeId(n as u32)),
            _ => Err(SchemaError::Compact(format!("type reference out of range: {v:?}"))),
        }
    };
    let optional_id = |v: Option<&Value>| -> Result<Option<TypeId>, SchemaError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64() == Some(0) => Ok(None),
            other => id(other).map(Some),
        }
    };
    let flag = |v: Option<&Value>| v.and_then(Value::as_u64) == Some(1);
    let map_kind = |v: Option<&Value>| if flag(v) { MapKind::Atomic } else { MapKind::Granular };
    let mut schema = Schema::new();
    for entry in types {
        let parts = entry.as_array().ok_or_else(|| bad("type entry is not an array"))?;
        let tag = parts.first().and_then(Value::as_str).ok_or_else(|| bad("type entry without tag"))?;
        let name = parts.get(1).and_then(Value::as_str);
        let def = match tag {
            "S" => {
                let mut out = StructType { map_kind: map_kind(parts.get(4)), ..StructType::default() };
                if let Some(fields) = parts.get(2).and_then(Value::as_object) {
                    for (field_name, f) in fields {
                        out.fields.insert(field_name.clone(), decode_field(f, &id)?);
                    }
                }
                out.extra = optional_id(parts.get(3))?;
                TypeDef::Struct(out)
            }
            "M" => TypeDef::Map(MapType { values: id(parts.get(2))?, map_kind: map_kind(parts.get(3)) }),
            "L" => {
                let list_kind = match parts.get(3) {
                    Some(Value::Array(keys)) => {
                        ListKind::Map(keys.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    }
                    v if flag(v) => ListKind::Set,
                    _ => ListKind::Atomic,
                };
                TypeDef::List(ListType { items: id(parts.get(2))?, list_kind })
            }
            "s" => TypeDef::Scalar(ScalarKind::String),
            "i" => TypeDef::Scalar(ScalarKind::Integer),
            "n" => TypeDef::Scalar(ScalarKind::Number),
            "b" => TypeDef::Scalar(ScalarKind::Boolean),
            "q" => TypeDef::Scalar(ScalarKind::IntOrString),
            "u" => TypeDef::Untyped,
            other => return Err(SchemaError::Compact(format!("unknown type tag {other:?}"))),
        };
        schema.add(name, def);
    }
    for root in value.get("roots").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let text = |i: usize| root.get(i).and_then(Value::as_str).ok_or_else(|| bad("root entry malformed"));
        schema.add_root(Gvk::new(text(0)?, text(1)?, text(2)?), id(root.get(3))?);
    }
    Ok(schema)
}

fn decode_field(
    value: &Value,
    id: &dyn Fn(Option<&Value>) -> Result<TypeId, SchemaError>,
) -> Result<Field, SchemaError> {
    match value {
        Value::Array(parts) => {
            let strategy = parts.get(1).and_then(Value::as_str).unwrap_or("");
            let merge_key = parts.get(2).and_then(Value::as_str).filter(|k| !k.is_empty()).map(str::to_string);
            let default = parts.get(3).filter(|d| !d.is_null()).cloned();
            Ok(Field { ty: id(parts.first())?, patch_strategy: PatchStrategy::parse(strategy), merge_key, default })
        }
        other => Ok(Field::plain(id(Some(other))?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::openapi::from_v3;

    #[test]
    fn round_trips_through_the_compact_form() {
        let doc = json!({"components": {"schemas": {
            "A": {"type": "object", "x-kubernetes-map-type": "atomic",
                  "properties": {"self": {"$ref": "#/components/schemas/A"},
                                 "items": {"type": "array", "items": {"type": "string"},
                                           "x-kubernetes-patch-strategy": "merge,retainKeys",
                                           "x-kubernetes-list-type": "set"},
                                 "protocol": {"type": "string", "default": "TCP"},
                                 "keyed": {"type": "array", "items": {"$ref": "#/components/schemas/A"},
                                           "x-kubernetes-patch-merge-key": "k",
                                           "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
                                 "labels": {"type": "object", "additionalProperties": {"type": "string"}}},
                  "x-kubernetes-group-version-kind": [{"group": "g", "version": "v1", "kind": "A"}]}
        }}});
        let schema = from_v3(&doc).expect("v3");
        let encoded = encode(&schema);
        let decoded = decode(&encoded).expect("decodes");
        assert_eq!(decoded.len(), schema.len());
        for i in 0..schema.len() {
            assert_eq!(decoded.get(TypeId(i as u32)), schema.get(TypeId(i as u32)));
        }
        assert_eq!(decoded.root(&Gvk::new("g", "v1", "A")), decoded.by_name("A"));
        assert_eq!(encode(&decoded), encoded);
        let a = decoded.by_name("A").expect("A");
        assert_eq!(decoded.field(a, "protocol").and_then(|f| f.default.clone()), Some(json!("TCP")));
        assert_eq!(decoded.field(a, "items").and_then(|f| f.default.clone()), None);
    }

    #[test]
    fn rejects_dangling_references() {
        let bad = json!({"format": FORMAT, "types": [["M", 0, 7, 0]], "roots": []});
        assert!(decode(&bad).is_err());
        assert!(decode(&json!({"types": []})).is_err());
    }
}
