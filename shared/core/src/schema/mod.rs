//! What the patch and ownership engines need to know about a Kubernetes type.
//!
//! Strategic Merge Patch needs, per field, the `patchStrategy`
//! (`merge`, `replace`, `retainKeys`) and the `patchMergeKey`; Server-Side
//! Apply needs, per list and map, its `x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`. Both are read
//! from the same OpenAPI document, so both live in one [`Schema`]: a graph of
//! named types (it is cyclic: `JSONSchemaProps` contains itself), addressed by
//! [`TypeId`], with root types found by [`Gvk`].
//!
//! A position with no schema (a custom resource without structural schema,
//! `x-kubernetes-preserve-unknown-fields`, a `RawExtension`) is
//! [`TypeDef::Untyped`]: the engines then behave as upstream does for
//! unknown types (lists are atomic, maps are merged).

use std::collections::{BTreeMap, HashMap};

mod builtin;
pub mod compact;
mod deduced;
pub mod go_pointers;
pub mod openapi;

pub use builtin::builtin;
pub use deduced::deduced;

/// Group, version and kind: how an object names its root type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
}

impl Gvk {
    /// Builds a Gvk from its parts.
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        Gvk { group: group.into(), version: version.into(), kind: kind.into() }
    }

    /// Reads `apiVersion` and `kind` from an object; `None` when either is missing.
    pub fn of_object(object: &serde_json::Value) -> Option<Self> {
        let api_version = object.get("apiVersion")?.as_str()?;
        let kind = object.get("kind")?.as_str()?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Some(Gvk::new(group, version, kind))
    }
}

/// Index of a type in its [`Schema`]. Only meaningful for the schema that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeId(pub u32);

/// One type of the schema graph.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDef {
    /// An object with named fields (`properties`).
    Struct(StructType),
    /// A map from string keys to values of one type (`additionalProperties`).
    Map(MapType),
    /// An array.
    List(ListType),
    /// A string, number, integer or boolean (and `int-or-string`).
    Scalar(ScalarKind),
    /// Nothing is known: any JSON value.
    Untyped,
}

/// The kinds of scalar the OpenAPI schema distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// `type: string`.
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
    /// `x-kubernetes-int-or-string`.
    IntOrString,
}

/// Whether a map or struct is merged key by key (`granular`) or replaced whole (`atomic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapKind {
    /// Keys are owned and merged individually (the default).
    #[default]
    Granular,
    /// `x-kubernetes-map-type: atomic`: one owner, replaced as a whole.
    Atomic,
}

/// An object type with named fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// Fields by JSON name.
    pub fields: BTreeMap<String, Field>,
    /// Value type of keys not in `fields` (`additionalProperties` beside `properties`), if any.
    pub extra: Option<TypeId>,
    /// `x-kubernetes-map-type`.
    pub map_kind: MapKind,
}

/// A field of a struct: its type, the strategic-merge metadata on it and its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's type.
    pub ty: TypeId,
    /// `x-kubernetes-patch-strategy` (the `patchStrategy` struct tag).
    pub patch_strategy: PatchStrategy,
    /// `x-kubernetes-patch-merge-key` (the `patchMergeKey` struct tag).
    pub merge_key: Option<String>,
    /// The OpenAPI `default` of the field, if any. Server-side apply uses it for
    /// a list-map key an item omits (container ports: `protocol` is `"TCP"`).
    pub default: Option<serde_json::Value>,
}

impl Field {
    /// A field of type `ty` with no strategic-merge metadata and no default.
    pub fn plain(ty: TypeId) -> Self {
        Field { ty, patch_strategy: PatchStrategy::default(), merge_key: None, default: None }
    }
}

/// A map from string keys to one value type.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// Type of every value.
    pub values: TypeId,
    /// `x-kubernetes-map-type`.
    pub map_kind: MapKind,
}

/// An array type.
#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    /// Type of every item.
    pub items: TypeId,
    /// `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
    pub list_kind: ListKind,
}

/// How server-side apply treats a list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ListKind {
    /// Replaced as a whole; one owner (the default).
    #[default]
    Atomic,
    /// A set of scalars; each element owned individually.
    Set,
    /// A list of objects keyed by these fields; each entry owned individually.
    Map(Vec<String>),
}

/// The strategic-merge `patchStrategy` of a field; upstream allows several, comma-separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PatchStrategy {
    /// `merge`: lists are merged (by merge key, or as sets of primitives).
    pub merge: bool,
    /// `replace`: the field is replaced whole.
    pub replace: bool,
    /// `retainKeys`: fields absent from the patch are cleared (for one-of structs).
    pub retain_keys: bool,
}

impl PatchStrategy {
    /// Parses the comma-separated form used in OpenAPI and struct tags; unknown words are ignored.
    pub fn parse(text: &str) -> Self {
        let mut s = PatchStrategy::default();
        for word in text.split(',').map(str::trim) {
            match word {
                "merge" => s.merge = true,
                "replace" => s.replace = true,
                "retainKeys" => s.retain_keys = true,
                _ => {}
            }
        }
        s
    }
}

/// A graph of named types, with root types by group/version/kind.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    types: Vec<TypeDef>,
    names: HashMap<String, TypeId>,
    roots: HashMap<Gvk, TypeId>,
}

impl Schema {
    /// An empty schema: every lookup answers `None`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a type and returns its id. A `name` makes it findable by [`Schema::by_name`].
    pub fn add(&mut self, name: Option<&str>, def: TypeDef) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(def);
        if let Some(name) = name {
            self.names.insert(name.to_string(), id);
        }
        id
    }

    /// Replaces the definition of an existing type (used to close cycles while building).
    pub fn set(&mut self, id: TypeId, def: TypeDef) {
        self.types[id.0 as usize] = def;
    }

    /// Records that objects of `gvk` have type `id`.
    pub fn add_root(&mut self, gvk: Gvk, id: TypeId) {
        self.roots.insert(gvk, id);
    }

    /// The definition of a type.
    pub fn get(&self, id: TypeId) -> &TypeDef {
        &self.types[id.0 as usize]
    }

    /// A type by its OpenAPI name, e.g. `io.k8s.api.apps.v1.Deployment`.
    pub fn by_name(&self, name: &str) -> Option<TypeId> {
        self.names.get(name).copied()
    }

    /// The root type of objects of `gvk`, if the schema knows it.
    pub fn root(&self, gvk: &Gvk) -> Option<TypeId> {
        self.roots.get(gvk).copied()
    }

    /// Every known group/version/kind.
    pub fn kinds(&self) -> impl Iterator<Item = &Gvk> {
        self.roots.keys()
    }

    /// How many types the graph holds.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether the graph holds no type.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Every named type, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = (&str, TypeId)> {
        self.names.iter().map(|(name, id)| (name.as_str(), *id))
    }

    /// The OpenAPI name of a type, if it has one (a linear search: meant for error messages).
    pub fn name_of(&self, id: TypeId) -> Option<&str> {
        self.names.iter().find(|(_, v)| **v == id).map(|(name, _)| name.as_str())
    }

    /// The definition of a type, or `None` when `id` does not belong to this schema.
    pub fn try_get(&self, id: TypeId) -> Option<&TypeDef> {
        self.types.get(id.0 as usize)
    }

    /// The field `name` of a struct type (`None` for other types and unknown fields).
    pub fn field(&self, ty: TypeId, name: &str) -> Option<&Field> {
        match self.try_get(ty)? {
            TypeDef::Struct(s) => s.fields.get(name),
            _ => None,
        }
    }

    /// The item type of a list type.
    pub fn items(&self, ty: TypeId) -> Option<TypeId> {
        match self.try_get(ty)? {
            TypeDef::List(l) => Some(l.items),
            _ => None,
        }
    }

    /// The value type of a map type, or of a struct's extra keys.
    pub fn values(&self, ty: TypeId) -> Option<TypeId> {
        match self.try_get(ty)? {
            TypeDef::Map(m) => Some(m.values),
            TypeDef::Struct(s) => s.extra,
            _ => None,
        }
    }
}
