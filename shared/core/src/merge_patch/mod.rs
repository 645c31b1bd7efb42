//! RFC 7386 JSON Merge Patch: apply, and create two-way and three-way patches.
//!
//! A merge patch is an object that mirrors the document: members set values,
//! `null` members delete, nested objects merge, arrays replace whole. The
//! apiserver applies `application/merge-patch+json` with evanphx/json-patch
//! v4, and `kubectl apply` creates three-way merge patches for types without
//! a strategic-merge schema (custom resources) with
//! `k8s.io/apimachinery/pkg/util/jsonmergepatch`. This module does all three
//! the same way, on [`serde_json::Value`]s:
//! - [`apply`] / [`try_apply`]: the apiserver's merge (see [`apply`](fn@apply) for its details);
//! - [`create_two_way`]: evanphx `CreateMergePatch`;
//! - [`create_three_way`] / [`create_three_way_with`]: `CreateThreeWayJSONMergePatch`, with [`Precondition`]s.
//!
//! Key order in outputs follows the inputs; upstream sorts keys. Outputs are
//! meant to be compared as JSON values, where order does not matter.

mod apply;
mod error;
mod precondition;
#[cfg(test)]
mod properties;
mod three_way;
mod two_way;

pub use apply::{apply, try_apply};
pub use error::MergePatchError;
pub use precondition::Precondition;
pub use three_way::{create_three_way, create_three_way_with};
pub use two_way::create_two_way;
