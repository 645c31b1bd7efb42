//! The set of fields a value sets.
//!
//! [`field_set`] is upstream's `AsTyped` (validation, with duplicates allowed as
//! the apiserver's field manager allows them) followed by
//! `TypedValue.ToFieldSet`: scalars, atomic maps, structs and lists are leaves;
//! granular maps own each key; set lists own each member (`v:`); list maps own
//! each entry (`k:`) and the fields inside it. A struct field is a member itself
//! only when its value is `null` or an empty object (it sets nothing below);
//! map keys and list items always are. A value that does not fit its schema (a
//! field the schema does not declare, a string where a map is expected, a
//! list-map entry without its key) is an error, as upstream rejects it.
//! The other way, from paths to the values they name, is [`locate`](super::locate).

use std::collections::BTreeSet;

use serde_json::Value;

use super::element::PathElement;
use super::path::Path;
use super::set::Set;
use super::shape::{item_element, resolve};
use crate::schema::{ListKind, MapKind, ScalarKind, Schema, StructType, TypeDef, TypeId};

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
    let types = Types::of(schema);
    let mut validator = Validator { types, errors: Vec::new(), path: Vec::new() };
    validator.check(types.atom(ty), value);
    let mut walker = Walker { types, set: Set::new(), path: Vec::new() };
    walker.walk(types.atom(ty), value);
    (walker.set, validator.errors)
}

/// The schema, with the named types upstream's schema converter treats specially.
///
/// kube-openapi converts `type: string` with a format (other than `byte`) to an
/// untyped scalar, and hard-codes `Quantity` (any scalar) and `RawExtension`
/// (anything, atomic); an object schema without properties is a map of deduced
/// values (`FieldsV1`). Our schema vocabulary reads these as plain strings and
/// untyped positions, so they are recognised here by name.
#[derive(Clone, Copy)]
struct Types<'s> {
    schema: &'s Schema,
    any_scalar: [Option<TypeId>; 3],
    free_object: Option<TypeId>,
    raw_extension: Option<TypeId>,
}

impl<'s> Types<'s> {
    fn of(schema: &'s Schema) -> Self {
        let named = |name: &str| schema.by_name(name);
        Types {
            schema,
            any_scalar: [
                named("io.k8s.apimachinery.pkg.apis.meta.v1.Time"),
                named("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"),
                named("io.k8s.apimachinery.pkg.api.resource.Quantity"),
            ],
            free_object: named("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"),
            raw_extension: named("io.k8s.apimachinery.pkg.runtime.RawExtension"),
        }
    }

    fn atom(&self, ty: Option<TypeId>) -> Atom<'s> {
        match ty {
            Some(id) if self.any_scalar.contains(&Some(id)) => return Atom::Scalar(Scalar::Untyped),
            Some(id) if self.free_object == Some(id) => {
                return Atom::Map { fields: None, others: Others::Typed(None), atomic: false }
            }
            Some(id) if self.raw_extension == Some(id) => return Atom::UntypedAtomic,
            _ => {}
        }
        atom(self.schema, ty)
    }
}

/// How upstream's schema describes one position (a `schema.Atom` after `deduceAtom`).
#[derive(Clone, Copy)]
enum Atom<'s> {
    /// A scalar of this kind.
    Scalar(Scalar),
    /// A struct or a map: declared fields, the type of other keys, atomic or not.
    Map { fields: Option<&'s StructType>, others: Others, atomic: bool },
    /// A list: item type, and keys (`None`: atomic; empty: a set).
    List { items: Option<TypeId>, keys: Option<&'s [String]> },
    /// No schema (`__untyped_deduced_`): objects are granular maps, lists atomic, anything fits.
    Deduced,
    /// Anything, owned as a whole (`__untyped_atomic_`).
    UntypedAtomic,
}

/// Upstream's scalar kinds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scalar {
    String,
    Numeric,
    Boolean,
    /// Any scalar (`int-or-string`).
    Untyped,
}

/// What keys a map does not declare are.
#[derive(Clone, Copy)]
enum Others {
    /// Not allowed: "field not declared in schema".
    Undeclared,
    /// Values of this type (`None`: untyped).
    Typed(Option<TypeId>),
}

fn atom(schema: &Schema, ty: Option<TypeId>) -> Atom<'_> {
    match resolve(schema, ty) {
        None | Some(TypeDef::Untyped) => Atom::Deduced,
        Some(TypeDef::Scalar(kind)) => Atom::Scalar(match kind {
            ScalarKind::String => Scalar::String,
            ScalarKind::Integer | ScalarKind::Number => Scalar::Numeric,
            ScalarKind::Boolean => Scalar::Boolean,
            ScalarKind::IntOrString => Scalar::Untyped,
        }),
        Some(TypeDef::Struct(s)) => Atom::Map {
            fields: Some(s),
            others: s.extra.map_or(Others::Undeclared, |e| Others::Typed(Some(e))),
            atomic: s.map_kind == MapKind::Atomic,
        },
        Some(TypeDef::Map(m)) => {
            Atom::Map { fields: None, others: Others::Typed(Some(m.values)), atomic: m.map_kind == MapKind::Atomic }
        }
        Some(TypeDef::List(l)) => Atom::List {
            items: Some(l.items),
            keys: match &l.list_kind {
                ListKind::Atomic => None,
                ListKind::Set => Some(&[]),
                ListKind::Map(keys) => Some(keys.as_slice()),
            },
        },
    }
}

impl<'s> Atom<'s> {
    /// The type of the value under `key` of a map, `Err` when the key is not allowed, and whether it is declared.
    fn child(&self, key: &str) -> Result<(Option<TypeId>, bool), ()> {
        match self {
            Atom::Map { fields, others, .. } => {
                if let Some(field) = fields.and_then(|s| s.fields.get(key)) {
                    return Ok((Some(field.ty), true));
                }
                match others {
                    Others::Undeclared => Err(()),
                    Others::Typed(ty) => Ok((*ty, false)),
                }
            }
            _ => Ok((None, false)),
        }
    }
}

/// Upstream's `validatingObjectWalker` with `AllowDuplicates`: collects where the value does not fit.
struct Validator<'s> {
    types: Types<'s>,
    errors: Vec<TypedError>,
    path: Vec<PathElement>,
}

impl Validator<'_> {
    fn error(&mut self, reason: String) {
        self.errors.push(TypedError { path: Path(self.path.clone()).to_string(), reason });
    }

    fn check(&mut self, atom: Atom<'_>, value: &Value) {
        if value.is_null() {
            return;
        }
        match atom {
            Atom::Deduced | Atom::UntypedAtomic => {}
            Atom::Scalar(kind) => {
                let fits = match kind {
                    Scalar::String => value.is_string(),
                    Scalar::Numeric => value.is_number(),
                    Scalar::Boolean => value.is_boolean(),
                    Scalar::Untyped => !value.is_array() && !value.is_object(),
                };
                if !fits {
                    let expected = match kind {
                        Scalar::String => "string",
                        Scalar::Numeric => "numeric (int or float)",
                        Scalar::Boolean => "boolean",
                        Scalar::Untyped => "any scalar",
                    };
                    self.error(format!("expected {expected}, got {}", kind_of(value)));
                }
            }
            Atom::Map { .. } => {
                let Value::Object(map) = value else {
                    return self.error(format!("expected map, got {}", kind_of(value)));
                };
                for (key, child) in map {
                    self.path.push(PathElement::Field(key.clone()));
                    match atom.child(key) {
                        Ok((ty, _)) => self.check(self.types.atom(ty), child),
                        Err(()) => self.error("field not declared in schema".into()),
                    }
                    self.path.pop();
                }
            }
            Atom::List { items, keys } => {
                let Value::Array(list) = value else {
                    return self.error(format!("expected list, got {}", kind_of(value)));
                };
                for (i, item) in list.iter().enumerate() {
                    let pe = match keys {
                        None => PathElement::Index(i as i64),
                        Some(keys) => match item_element(self.types.schema, items, Some(keys), item) {
                            Ok(pe) => pe,
                            Err(reason) => return self.error(format!("element {i}: {reason}")),
                        },
                    };
                    self.path.push(pe);
                    self.check(self.types.atom(items), item);
                    self.path.pop();
                }
            }
        }
    }
}

/// Upstream's `toFieldSetWalker`.
struct Walker<'s> {
    types: Types<'s>,
    set: Set,
    path: Vec<PathElement>,
}

impl Walker<'_> {
    fn walk(&mut self, atom: Atom<'_>, value: &Value) {
        match (atom, value) {
            (Atom::Scalar(_) | Atom::UntypedAtomic, _) => self.set.insert(&self.path),
            (Atom::Deduced, Value::Object(_)) => {
                let deduced = Atom::Map { fields: None, others: Others::Typed(None), atomic: false };
                self.walk_map(deduced, value);
            }
            // Null under no schema is a map that sets nothing; its parent records it.
            (Atom::Deduced, Value::Null) => {}
            (Atom::Deduced, _) => self.set.insert(&self.path),
            (Atom::Map { atomic: true, .. }, _) | (Atom::List { keys: None, .. }, _) => self.set.insert(&self.path),
            (Atom::Map { .. }, _) => self.walk_map(atom, value),
            (Atom::List { items, keys: Some(keys) }, Value::Array(list)) => self.walk_list(items, keys, list),
            (Atom::List { .. }, _) => {}
        }
    }

    fn walk_map(&mut self, atom: Atom<'_>, value: &Value) {
        let Value::Object(map) = value else { return };
        for (key, child) in map {
            let (ty, declared) = atom.child(key).unwrap_or((None, false));
            self.path.push(PathElement::Field(key.clone()));
            self.walk(self.types.atom(ty), child);
            let sets_nothing = child.is_null() || child.as_object().is_some_and(|m| m.is_empty());
            if sets_nothing || !declared {
                self.set.insert(&self.path);
            }
            self.path.pop();
        }
    }

    /// Items of an associative list. Items sharing a key are recorded once, as
    /// the item alone: upstream does not descend into duplicates.
    fn walk_list(&mut self, items: Option<TypeId>, keys: &[String], list: &[Value]) {
        let elements: Vec<Option<PathElement>> =
            list.iter().map(|item| item_element(self.types.schema, items, Some(keys), item).ok()).collect();
        let mut seen: BTreeSet<&PathElement> = BTreeSet::new();
        let mut duplicates: BTreeSet<&PathElement> = BTreeSet::new();
        for pe in elements.iter().flatten() {
            if !seen.insert(pe) {
                duplicates.insert(pe);
            }
        }
        for pe in &duplicates {
            self.path.push((*pe).clone());
            self.set.insert(&self.path);
            self.path.pop();
        }
        let item_atom = self.types.atom(items);
        for (item, pe) in list.iter().zip(&elements) {
            let Some(pe) = pe else { continue };
            if duplicates.contains(&pe) {
                continue;
            }
            self.path.push(pe.clone());
            self.walk(item_atom, item);
            self.set.insert(&self.path);
            self.path.pop();
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::schema::{Field, ListKind, ListType, MapKind, MapType, ScalarKind, StructType, TypeDef};
    use serde_json::json;

    fn field(ty: TypeId) -> Field {
        Field::plain(ty)
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
                fields: [
                    ("containerPort".to_string(), field(int)),
                    ("protocol".to_string(), Field { default: Some(json!("TCP")), ..field(string) }),
                ]
                .into(),
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
        assert!(errs[0].to_string().starts_with(
            ".spec.containers: element 0: associative list with keys has an element that omits key field \"name\""
        ));
    }
}
