//! Field paths, field sets and the FieldsV1 wire format of `metadata.managedFields`.
//!
//! This is the vocabulary of server-side apply, exactly as
//! `sigs.k8s.io/structured-merge-diff/v4` (Kubernetes v1.33) defines it:
//! - [`PathElement`] and [`Path`]: a step and a path into an object
//!   (`.spec.containers[name="app"].image`);
//! - [`Set`]: a set of paths with union, intersection, difference, prefixes and leaves;
//! - FieldsV1 ([`Set::from_fields_v1`], [`Set::to_fields_v1`]): the JSON form the
//!   apiserver stores, read and written byte for byte as upstream;
//! - [`field_set`]: the fields a value sets, given its schema; [`value_at`] and
//!   [`locate`] to find the values paths name;
//! - [`compare`]: which fields were added, modified and removed between two values;
//! - [`remove_items`] and [`with_named_fields`]: the pruning steps of a server-side apply;
//!   [`remove`]: a value without the fields of a set (what an apply's pruning leaves).
//!
//! ```
//! use fieldwise_core::fieldpath::{Path, PathElement, Set};
//! use serde_json::json;
//!
//! let owned = Set::from_fields_v1(&json!({
//!     "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
//!         "k:{\"name\":\"app\"}": {".": {}, "f:image": {}}
//!     }}}}
//! })).unwrap();
//! let image = Path::fields(["spec", "template", "spec", "containers"])
//!     .child(PathElement::key([("name", json!("app"))]))
//!     .child(PathElement::field("image"));
//! assert!(owned.has(image.elements()));
//! assert_eq!(image.to_string(), ".spec.template.spec.containers[name=\"app\"].image");
//! assert_eq!(owned.under(&Path::fields(["spec"])).len(), 3);
//! ```

mod compare;
mod display;
mod element;
mod extract;
mod fields_v1;
mod from_value;
mod items;
mod locate;
mod order;
mod parse;
mod path;
mod remove;
mod set;
pub(crate) mod shape;

pub use compare::{compare, Comparison};
pub use element::{KeyFields, PathElement};
pub use extract::extract;
pub use fields_v1::{parse_path_element, path_element_key, FieldsV1Error, PathElementError};
pub use from_value::{field_set, field_set_lossy, TypedError};
pub use locate::{for_each_located, locate, value_at};
pub use order::{compare_values, values_equal};
pub use parse::{parse_field_path, FieldPathError};
pub use path::Path;
pub use remove::{remove_items, with_named_fields};
pub use set::Set;

/// Hand-built schemas shared by the unit tests of this crate.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::from_value::tests::pod_schema;
}
