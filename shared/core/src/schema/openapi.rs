//! Reading a [`Schema`] from the OpenAPI documents an apiserver publishes.
//!
//! Kubernetes serves OpenAPI v3 (one document per group-version under
//! `/openapi/v3`, types in `components.schemas`) and OpenAPI v2 (one document at
//! `/openapi/v2`, types in `definitions`). Both describe the same types with the
//! same `x-kubernetes-*` extensions, so one reader handles both: only where the
//! types live and how `$ref` is spelled differ.
//!
//! What is read: `properties`, `additionalProperties`, `items`, `type`,
//! `$ref` (directly or as the single entry of `allOf`, as v3 writes it),
//! `x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`,
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`, a property's `default`, `x-kubernetes-int-or-string` (and v2's
//! `format: int-or-string`), `x-kubernetes-preserve-unknown-fields` and
//! `x-kubernetes-group-version-kind` (roots). Anything else is
//! [`TypeDef::Untyped`]: the engines then treat it as upstream treats a type it
//! knows nothing about.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::{
    Field, Gvk, ListKind, ListType, MapKind, MapType, PatchStrategy, ScalarKind, Schema, StructType, TypeDef, TypeId,
};

/// Why an OpenAPI document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The document has no `components.schemas` (v3) or `definitions` (v2) object.
    #[error("not an OpenAPI {version} document: no `{section}` object")]
    NotADocument {
        /// `v2` or `v3`.
        version: &'static str,
        /// The section that was looked for.
        section: &'static str,
    },
    /// The compact built-in form is malformed (see [`super::compact`]).
    #[error("malformed compact schema: {0}")]
    Compact(String),
}

/// Builds a schema from one OpenAPI v3 document (`components.schemas`).
pub fn from_v3(document: &Value) -> Result<Schema, SchemaError> {
    from_v3_documents([document])
}

/// Builds one schema from several OpenAPI v3 documents, e.g. every group-version
/// listed at `/openapi/v3`. A type defined in several documents is read from the first.
pub fn from_v3_documents<'a>(documents: impl IntoIterator<Item = &'a Value>) -> Result<Schema, SchemaError> {
    let mut definitions = BTreeMap::new();
    for document in documents {
        let schemas = document
            .get("components")
            .and_then(|c| c.get("schemas"))
            .and_then(Value::as_object)
            .ok_or(SchemaError::NotADocument { version: "v3", section: "components.schemas" })?;
        for (name, def) in schemas {
            definitions.entry(name.as_str()).or_insert(def);
        }
    }
    Ok(Builder::new(definitions).build())
}

/// Builds a schema from an OpenAPI v2 (swagger) document (`definitions`).
pub fn from_v2(document: &Value) -> Result<Schema, SchemaError> {
    let definitions = document
        .get("definitions")
        .and_then(Value::as_object)
        .ok_or(SchemaError::NotADocument { version: "v2", section: "definitions" })?;
    Ok(Builder::new(definitions.iter().map(|(k, v)| (k.as_str(), v)).collect()).build())
}

/// Turns named OpenAPI definitions into a [`Schema`], sharing one id per scalar kind.
struct Builder<'a> {
    definitions: BTreeMap<&'a str, &'a Value>,
    schema: Schema,
    ids: HashMap<&'a str, TypeId>,
    shared: HashMap<SharedKind, TypeId>,
}

/// The anonymous types every schema needs at most once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SharedKind {
    Scalar(u8),
    Untyped,
}

impl<'a> Builder<'a> {
    fn new(definitions: BTreeMap<&'a str, &'a Value>) -> Self {
        Builder { definitions, schema: Schema::new(), ids: HashMap::new(), shared: HashMap::new() }
    }

    fn build(mut self) -> Schema {
        // First give every named type an id, so references (and cycles) resolve.
        let names: Vec<&'a str> = self.definitions.keys().copied().collect();
        for name in &names {
            let id = self.schema.add(Some(name), TypeDef::Untyped);
            self.ids.insert(name, id);
        }
        for name in names {
            let Some(def) = self.definitions.get(name).copied() else { continue };
            let Some(id) = self.ids.get(name).copied() else { continue };
            let type_def = self.convert(def);
            self.schema.set(id, type_def);
            for gvk in group_version_kinds(def) {
                self.schema.add_root(gvk, id);
            }
        }
        self.schema
    }

    /// The id of the type a property, item or value schema denotes.
    fn type_of(&mut self, node: &'a Value) -> TypeId {
        if let Some(name) = reference(node) {
            if let Some(id) = self.ids.get(name) {
                return *id;
            }
            return self.shared(SharedKind::Untyped);
        }
        match self.convert(node) {
            TypeDef::Scalar(kind) => self.shared(SharedKind::Scalar(kind as u8)),
            TypeDef::Untyped => self.shared(SharedKind::Untyped),
            def => self.schema.add(None, def),
        }
    }

    fn shared(&mut self, kind: SharedKind) -> TypeId {
        if let Some(id) = self.shared.get(&kind) {
            return *id;
        }
        let def = match kind {
            SharedKind::Untyped => TypeDef::Untyped,
            SharedKind::Scalar(k) => TypeDef::Scalar(scalar_from_index(k)),
        };
        let id = self.schema.add(None, def);
        self.shared.insert(kind, id);
        id
    }

    fn convert(&mut self, node: &'a Value) -> TypeDef {
        let ext_true = |key: &str| node.get(key).and_then(Value::as_bool) == Some(true);
        if ext_true("x-kubernetes-int-or-string") || node.get("format").and_then(Value::as_str) == Some("int-or-string")
        {
            return TypeDef::Scalar(ScalarKind::IntOrString);
        }
        let properties = node.get("properties").and_then(Value::as_object);
        let additional = node.get("additionalProperties");
        match node.get("type").and_then(Value::as_str) {
            Some("string") => TypeDef::Scalar(ScalarKind::String),
            Some("integer") => TypeDef::Scalar(ScalarKind::Integer),
            Some("number") => TypeDef::Scalar(ScalarKind::Number),
            Some("boolean") => TypeDef::Scalar(ScalarKind::Boolean),
            Some("array") => self.list(node),
            _ if properties.is_some() => self.structure(node),
            None if scalar_alternatives(node) => TypeDef::Scalar(ScalarKind::String),
            _ if additional.is_some_and(|a| a.is_object() || a.as_bool() == Some(true)) => self.map(node),
            None if node.get("items").is_some() => self.list(node),
            _ => TypeDef::Untyped,
        }
    }

    fn structure(&mut self, node: &'a Value) -> TypeDef {
        let mut out = StructType { map_kind: map_kind(node), ..StructType::default() };
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let ty = self.type_of(property);
                out.fields.insert(name.clone(), field_meta(property, ty));
            }
        }
        out.extra = match node.get("additionalProperties") {
            Some(a) if a.is_object() => Some(self.type_of(a)),
            Some(Value::Bool(true)) => Some(self.shared(SharedKind::Untyped)),
            _ if node.get("x-kubernetes-preserve-unknown-fields").and_then(Value::as_bool) == Some(true) => {
                Some(self.shared(SharedKind::Untyped))
            }
            _ => None,
        };
        TypeDef::Struct(out)
    }

    fn map(&mut self, node: &'a Value) -> TypeDef {
        let values = match node.get("additionalProperties") {
            Some(a) if a.is_object() => self.type_of(a),
            _ => self.shared(SharedKind::Untyped),
        };
        TypeDef::Map(MapType { values, map_kind: map_kind(node) })
    }

    fn list(&mut self, node: &'a Value) -> TypeDef {
        let items = match node.get("items") {
            Some(items) if items.is_object() => self.type_of(items),
            _ => self.shared(SharedKind::Untyped),
        };
        TypeDef::List(ListType { items, list_kind: list_kind(node) })
    }
}

/// A field's strategic-merge metadata and default, read from the property schema.
fn field_meta(property: &Value, ty: TypeId) -> Field {
    let patch_strategy = property
        .get("x-kubernetes-patch-strategy")
        .and_then(Value::as_str)
        .map(PatchStrategy::parse)
        .unwrap_or_default();
    let merge_key = property.get("x-kubernetes-patch-merge-key").and_then(Value::as_str).map(str::to_string);
    // An explicit `null` default is no default, as upstream's schema converter reads it.
    let default = property.get("default").filter(|d| !d.is_null()).cloned();
    Field { ty, patch_strategy, merge_key, default }
}

/// The referenced definition name: `$ref`, or the only `$ref` of `allOf`.
fn reference(node: &Value) -> Option<&str> {
    let target = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => r,
        None => match node.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
            Some([only]) => only.get("$ref")?.as_str()?,
            _ => return None,
        },
    };
    Some(target.rsplit('/').next().unwrap_or(target))
}

fn map_kind(node: &Value) -> MapKind {
    match node.get("x-kubernetes-map-type").and_then(Value::as_str) {
        Some("atomic") => MapKind::Atomic,
        _ => MapKind::Granular,
    }
}

fn list_kind(node: &Value) -> ListKind {
    match node.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => ListKind::Set,
        Some("map") => {
            let keys = node
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            ListKind::Map(keys)
        }
        _ => ListKind::Atomic,
    }
}

fn group_version_kinds(def: &Value) -> Vec<Gvk> {
    let Some(list) = def.get("x-kubernetes-group-version-kind").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|entry| {
            let text = |key: &str| entry.get(key).and_then(Value::as_str);
            Some(Gvk::new(text("group").unwrap_or(""), text("version")?, text("kind")?))
        })
        .collect()
}

/// Whether the node is a `oneOf`/`anyOf` of scalar types only (e.g. `Quantity`: string or number).
fn scalar_alternatives(node: &Value) -> bool {
    let alternatives = node.get("oneOf").or_else(|| node.get("anyOf")).and_then(Value::as_array);
    alternatives.is_some_and(|all| {
        !all.is_empty()
            && all.iter().all(|a| {
                matches!(a.get("type").and_then(Value::as_str), Some("string" | "integer" | "number" | "boolean"))
            })
    })
}

fn scalar_from_index(index: u8) -> ScalarKind {
    match index {
        0 => ScalarKind::String,
        1 => ScalarKind::Integer,
        2 => ScalarKind::Number,
        3 => ScalarKind::Boolean,
        _ => ScalarKind::IntOrString,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_fragment() -> Value {
        json!({"openapi": "3.0.0", "components": {"schemas": {
            "io.k8s.api.core.v1.Pod": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}], "default": {}}
                },
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "Pod", "version": "v1"}]
            },
            "io.k8s.api.core.v1.PodSpec": {
                "type": "object",
                "properties": {
                    "containers": {
                        "type": "array",
                        "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}]},
                        "x-kubernetes-list-map-keys": ["name"],
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-patch-merge-key": "name",
                        "x-kubernetes-patch-strategy": "merge"
                    },
                    "nodeSelector": {"type": "object", "additionalProperties": {"type": "string", "default": ""},
                                     "x-kubernetes-map-type": "atomic"},
                    "finalizers": {"type": "array", "items": {"type": "string"},
                                   "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"}
                }
            },
            "io.k8s.api.core.v1.Container": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "port": {"x-kubernetes-int-or-string": true},
                    "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            }
        }}})
    }

    #[test]
    fn reads_v3_structs_lists_maps_and_roots() {
        let doc = pod_fragment();
        let schema = from_v3(&doc).expect("a v3 document");
        let pod = schema.root(&Gvk::new("", "v1", "Pod")).expect("Pod is a root");
        let spec = schema.field(pod, "spec").expect("spec");
        assert_eq!(schema.name_of(spec.ty), Some("io.k8s.api.core.v1.PodSpec"));
        let containers = schema.field(spec.ty, "containers").expect("containers");
        assert!(containers.patch_strategy.merge);
        assert_eq!(containers.merge_key.as_deref(), Some("name"));
        let TypeDef::List(list) = schema.get(containers.ty) else { panic!("containers is a list") };
        assert_eq!(list.list_kind, ListKind::Map(vec!["name".into()]));
        assert_eq!(schema.name_of(list.items), Some("io.k8s.api.core.v1.Container"));
        let selector = schema.field(spec.ty, "nodeSelector").expect("nodeSelector");
        assert!(matches!(schema.get(selector.ty), TypeDef::Map(MapType { map_kind: MapKind::Atomic, .. })));
        let finalizers = schema.field(spec.ty, "finalizers").expect("finalizers");
        assert!(matches!(schema.get(finalizers.ty), TypeDef::List(ListType { list_kind: ListKind::Set, .. })));
        let port = schema.field(list.items, "port").expect("port");
        assert_eq!(schema.get(port.ty), &TypeDef::Scalar(ScalarKind::IntOrString));
        let raw = schema.field(list.items, "raw").expect("raw");
        assert_eq!(schema.get(raw.ty), &TypeDef::Untyped);
    }

    /// A custom resource as the apiserver publishes its CRD's `openAPIV3Schema`
    /// at `/openapi/v3/apis/<group>/<version>`: nested schemas inline, not by `$ref`.
    fn widget_document() -> Value {
        json!({"openapi": "3.0.0", "components": {"schemas": {
            "test.fieldwise.v1.Widget": {
                "type": "object",
                "properties": {
                    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
                    "spec": {"type": "object", "properties": {
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port", "protocol"],
                            "items": {"type": "object", "required": ["port"], "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"},
                                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
                            }}},
                        "args": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
                        "plain": {"type": "array", "items": {"type": "string"}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "selector": {"type": "object", "additionalProperties": {"type": "string"},
                            "x-kubernetes-map-type": "atomic"},
                        "target": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "properties": {"name": {"type": "string"}, "kind": {"type": "string"}}},
                        "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                            "properties": {"known": {"type": "string"}}},
                        "size": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}
                    }}
                },
                "x-kubernetes-group-version-kind": [{"group": "fieldwise.test", "kind": "Widget", "version": "v1"}]
            },
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {
                "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
            }}
        }}})
    }

    #[test]
    fn reads_custom_resource_schemas() {
        let doc = widget_document();
        let schema = from_v3(&doc).expect("a v3 document");
        let widget = schema.root(&Gvk::new("fieldwise.test", "v1", "Widget")).expect("Widget is a root");
        let meta = schema.field(widget, "metadata").expect("metadata").ty;
        assert_eq!(schema.name_of(meta), Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        let spec = schema.field(widget, "spec").expect("spec").ty;
        let kind_of = |name: &str| match schema.get(schema.field(spec, name).expect(name).ty) {
            TypeDef::List(l) => Some(l.list_kind.clone()),
            _ => None,
        };
        assert_eq!(kind_of("ports"), Some(ListKind::Map(vec!["port".into(), "protocol".into()])));
        assert_eq!(kind_of("args"), Some(ListKind::Atomic));
        assert_eq!(kind_of("plain"), Some(ListKind::Atomic), "a list without a list type is atomic");
        let ports = schema.field(spec, "ports").expect("ports").ty;
        let port = schema.items(ports).expect("port items");
        let protocol = schema.field(port, "protocol").expect("protocol");
        assert_eq!(protocol.default, Some(json!("TCP")), "a key's default fills an omitted key");
        let tags = schema.field(port, "tags").expect("tags").ty;
        assert!(matches!(schema.get(tags), TypeDef::List(ListType { list_kind: ListKind::Set, .. })));
        let labels = schema.field(spec, "labels").expect("labels").ty;
        assert!(matches!(schema.get(labels), TypeDef::Map(MapType { map_kind: MapKind::Granular, .. })));
        let selector = schema.field(spec, "selector").expect("selector").ty;
        assert!(matches!(schema.get(selector), TypeDef::Map(MapType { map_kind: MapKind::Atomic, .. })));
        let target = schema.field(spec, "target").expect("target").ty;
        assert!(matches!(schema.get(target), TypeDef::Struct(StructType { map_kind: MapKind::Atomic, .. })));
        let config = schema.field(spec, "config").expect("config").ty;
        assert_eq!(schema.get(config), &TypeDef::Untyped, "preserve-unknown-fields alone: any value");
        let extra = schema.field(spec, "extra").expect("extra").ty;
        let TypeDef::Struct(extra) = schema.get(extra) else { panic!("extra is a struct") };
        assert!(extra.fields.contains_key("known"));
        assert_eq!(extra.extra.map(|id| schema.get(id)), Some(&TypeDef::Untyped), "unknown keys are kept");
        let size = schema.field(spec, "size").expect("size").ty;
        assert_eq!(schema.get(size), &TypeDef::Scalar(ScalarKind::IntOrString));
    }

    #[test]
    fn reads_v2_definitions() {
        let doc = json!({"swagger": "2.0", "definitions": {
            "io.k8s.api.apps.v1.Deployment": {
                "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"}},
                "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]
            },
            "io.k8s.api.apps.v1.DeploymentSpec": {"properties": {
                "replicas": {"type": "integer", "format": "int32"},
                "maxSurge": {"type": "string", "format": "int-or-string"}
            }}
        }});
        let schema = from_v2(&doc).expect("a v2 document");
        let deployment = schema.root(&Gvk::new("apps", "v1", "Deployment")).expect("root");
        let spec = schema.field(deployment, "spec").expect("spec").ty;
        let replicas = schema.field(spec, "replicas").expect("replicas").ty;
        assert_eq!(schema.get(replicas), &TypeDef::Scalar(ScalarKind::Integer));
        let surge = schema.field(spec, "maxSurge").expect("maxSurge").ty;
        assert_eq!(schema.get(surge), &TypeDef::Scalar(ScalarKind::IntOrString));
    }

    #[test]
    fn rejects_documents_without_types() {
        assert!(matches!(from_v3(&json!({})), Err(SchemaError::NotADocument { .. })));
        assert!(matches!(from_v2(&json!([])), Err(SchemaError::NotADocument { .. })));
    }

    #[test]
    fn unknown_references_are_untyped() {
        let doc = json!({"definitions": {"A": {"properties": {"b": {"$ref": "#/definitions/Missing"}}}}});
        let schema = from_v2(&doc).expect("v2");
        let a = schema.by_name("A").expect("A");
        let b = schema.field(a, "b").expect("b").ty;
        assert_eq!(schema.get(b), &TypeDef::Untyped);
    }
}
