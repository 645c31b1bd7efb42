//! The set of fields a value sets, and the values a set of paths points at.
//!
//! [`field_set`] is upstream's `TypedValue.ToFieldSet`: scalars, atomic maps,
//! structs and lists are leaves; granular maps own each key; set lists own
//! each member (`v:`); list maps own each entry (`k:`) and the fields inside
//! it. Struct fields are not members themselves (only what is under them),
//! map keys and list items are. [`value_at`] goes the other way: from a path to
//! the value it names, matching list-map entries by key values compared as
//! JSON values (`80` matches `80.0`), so a printer can mark the lines a
//! manager owns.

use serde_json::Value;

use super::element::PathElement;
use super::order::values_equal;
use super::path::Path;
use super::set::Set;
use super::shape::{item_element, shape_of, Shape};
use crate::schema::{Schema, TypeId};

/// A value that does not fit its schema, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", if path.is_empty() { "<root>" } else { path.as_str() })]
pub struct TypedError {
    /// Where, as upstream prints paths (`.spec.ports[0]` style, empty for the root).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

/// The fields `value` (of type `ty`) sets, or every place where it does not fit the schema.
pub fn field_set(value: &Value, schema: &Schema, ty: TypeId) -> Result<Set, Vec<TypedError>> {
    let (set, errors) = field_set_lossy(value, schema, Some(ty));
    if errors.is_empty() {
        Ok(set)
    } else {
        Err(errors)
    }
}

/// Like [`field_set`], but returns what it could build beside the errors (items it cannot name are skipped).
/// `ty` of `None` means untyped.
pub fn field_set_lossy(value: &Value, schema: &Schema, ty: Option<TypeId>) -> (Set, Vec<TypedError>) {
    let mut walker = Walker { schema, set: Set::new(), errors: Vec::new(), path: Vec::new() };
    walker.walk(ty, value);
    (walker.set, walker.errors)
}

struct Walker<'s> {
    schema: &'s Schema,
    set: Set,
    errors: Vec<TypedError>,
    path: Vec<PathElement>,
}

impl Walker<'_> {
    fn error(&mut self, reason: String) {
        self.errors.push(TypedError { path: Path(self.path.clone()).to_string(), reason });
    }

    fn walk(&mut self, ty: Option<TypeId>, value: &Value) {
        match shape_of(self.schema, ty, Some(value)) {
            Shape::Leaf => self.set.insert(&self.path),
            Shape::Fields(fields) => match value {
                Value::Object(map) => {
                    for (key, child) in map {
                        let (child_ty, declared) = fields.child(key);
                        self.path.push(PathElement::Field(key.clone()));
                        self.walk(child_ty, child);
                        if !declared {
                            self.set.insert(&self.path);
                        }
                        self.path.pop();
                    }
                }
                Value::Null => {}
                other => self.error(format!("expected a map, found {}", kind(other))),
            },
            Shape::List { items, keys } => match value {
                Value::Array(list) => {
                    for item in list {
                        match item_element(self.schema, items, keys, item) {
                            Ok(pe) => {
                                self.path.push(pe);
                                self.walk(items, item);
                                self.set.insert(&self.path);
                                self.path.pop();
                            }
                            Err(reason) => self.error(reason),
                        }
                    }
                }
                Value::Null => {}
                other => self.error(format!("expected a list, found {}", kind(other))),
            },
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// The value a path names inside `value`, if it is there.
///
/// A list-map key matches the entry whose key fields equal it; when none does, an
/// entry that omits some key fields (defaulted by the server, like `protocol: TCP`)
/// and agrees on the others.
pub fn value_at<'v>(value: &'v Value, path: &[PathElement]) -> Option<&'v Value> {
    let mut here = value;
    for pe in path {
        here = match pe {
            PathElement::Field(name) => here.as_object()?.get(name)?,
            PathElement::Key(key) => {
                let items = here.as_array()?;
                items.iter().find(|item| key.matches(item)).or_else(|| {
                    items.iter().find(|item| {
                        item.is_object()
                            && key.fields().iter().all(|(n, v)| item.get(n).is_none_or(|got| values_equal(got, v)))
                    })
                })?
            }
            PathElement::Value(want) => here.as_array()?.iter().find(|item| values_equal(item, want))?,
            PathElement::Index(i) => here.as_array()?.get(usize::try_from(*i).ok()?)?,
        };
    }
    Some(here)
}

/// Every path of `set` with the value it names in `value` (`None` where the object lacks it), in set order.
pub fn locate<'v>(value: &'v Value, set: &Set) -> Vec<(Path, Option<&'v Value>)> {
    set.paths()
        .into_iter()
        .map(|p| {
            let found = value_at(value, p.elements());
            (p, found)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::schema::{Field, ListKind, ListType, MapKind, MapType, PatchStrategy, ScalarKind, StructType, TypeDef};
    use serde_json::json;

    fn field(ty: TypeId) -> Field {
        Field { ty, patch_strategy: PatchStrategy::default(), merge_key: None }
    }

    /// A pod-like schema: metadata.labels (map), spec.containers (list map by name) with
    /// ports (list map by containerPort+protocol), args (atomic), finalizers (set), selector (atomic struct).
    pub(crate) fn pod_schema() -> (Schema, TypeId) {
        let mut s = Schema::new();
        let string = s.add(None, TypeDef::Scalar(ScalarKind::String));
        let int = s.add(None, TypeDef::Scalar(ScalarKind::Integer));
        let labels = s.add(None, TypeDef::Map(MapType { values: string, map_kind: MapKind::Granular }));
        let strings = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Atomic }));
        let set = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Set }));
        let port = s.add(
            None,
            TypeDef::Struct(StructType {
                fields: [("containerPort".to_string(), field(int)), ("protocol".to_string(), field(string))].into(),
                ..Default::default()
            }),
        );
        let ports = s.add(
            None,
            TypeDef::List(ListType {
                items: port,
                list_kind: ListKind::Map(vec!["containerPort".into(), "protocol".into()]),
            }),
        );
        let container = s.add(
            None,
            TypeDef::Struct(StructType {
                fields: [
                    ("name".to_string(), field(string)),
                    ("image".to_string(), field(string)),
                    ("args".to_string(), field(strings)),
                    ("ports".to_string(), field(ports)),
                ]
                .into(),
                ..Default::default()
            }),
        );
        let containers =
            s.add(None, TypeDef::List(ListType { items: container, list_kind: ListKind::Map(vec!["name".into()]) }));
        let selector = s.add(
            None,
            TypeDef::Struct(StructType {
                fields: [("matchLabels".to_string(), field(labels))].into(),
                extra: None,
                map_kind: MapKind::Atomic,
            }),
        );
        let untyped = s.add(None, TypeDef::Untyped);
        let spec = s.add(
            None,
            TypeDef::Struct(StructType {
                fields: [
                    ("containers".to_string(), field(containers)),
                    ("selector".to_string(), field(selector)),
                    ("replicas".to_string(), field(int)),
                    ("extra".to_string(), field(untyped)),
                ]
                .into(),
                ..Default::default()
            }),
        );
        let meta = s.add(
            None,
            TypeDef::Struct(StructType {
                fields: [
                    ("name".to_string(), field(string)),
                    ("labels".to_string(), field(labels)),
                    ("finalizers".to_string(), field(set)),
                ]
                .into(),
                ..Default::default()
            }),
        );
        let root = s.add(
            Some("Pod"),
            TypeDef::Struct(StructType {
                fields: [
                    ("apiVersion".to_string(), field(string)),
                    ("kind".to_string(), field(string)),
                    ("metadata".to_string(), field(meta)),
                    ("spec".to_string(), field(spec)),
                ]
                .into(),
                ..Default::default()
            }),
        );
        (s, root)
    }

    #[test]
    fn sets_like_upstream_to_field_set() {
        let (schema, root) = pod_schema();
        let value = json!({
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {"app": "a"}, "finalizers": ["f1"]},
            "spec": {
                "selector": {"matchLabels": {"a": "b"}},
                "containers": [{"name": "c", "image": "i", "args": ["x"], "ports": [{"containerPort": 80}]}],
                "extra": {"deep": {"k": 1}, "list": [1, 2]},
            }
        });
        let set = field_set(&value, &schema, root).unwrap();
        let expected = json!({
            "f:apiVersion": {},
            "f:metadata": {"f:finalizers": {"v:\"f1\"": {}}, "f:labels": {"f:app": {}}, "f:name": {}},
            "f:spec": {
                "f:containers": {"k:{\"name\":\"c\"}": {
                    ".": {}, "f:args": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}
                }},
                "f:extra": {"f:deep": {".": {}, "f:k": {}}, "f:list": {}},
                "f:selector": {}
            }
        });
        assert_eq!(set.to_fields_v1_string(), expected.to_string());
    }

    #[test]
    fn reports_values_that_do_not_fit() {
        let (schema, root) = pod_schema();
        let errs =
            field_set(&json!({"spec": {"containers": [{"image": "x"}], "replicas": 1}}), &schema, root).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0]
            .to_string()
            .starts_with(".spec.containers: associative list with keys has an element that omits key field \"name\""));
    }

    #[test]
    fn locates_values_by_key_values() {
        let obj = json!({"spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}, {"port": 443}]}});
        let k = PathElement::key([("port", Value::from(80.0)), ("protocol", json!("TCP"))]);
        let p = Path::fields(["spec", "ports"]).child(k).child(PathElement::field("targetPort"));
        assert_eq!(value_at(&obj, p.elements()), Some(&json!(8080)));
        let k443 = PathElement::key([("port", json!(443)), ("protocol", json!("TCP"))]);
        assert_eq!(value_at(&obj, Path::fields(["spec", "ports"]).child(k443).elements()), Some(&json!({"port": 443})));
        let set: Set = [p.clone(), Path::fields(["nope"])].into_iter().collect();
        let found = locate(&obj, &set);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].1, None);
        assert_eq!(found[1].1, Some(&json!(8080)));
    }
}
