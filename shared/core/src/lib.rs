//! The semantics of partial updates to Kubernetes objects, exactly as the
//! apiserver and kubectl implement them, with no I/O.
//!
//! Kubernetes has four ways to change part of an object and two ways to
//! remember what a client meant to set. This crate implements all of them as
//! pure functions over [`serde_json::Value`]: no network, no filesystem, no
//! async. That is what lets the plugins preview a write before making it, and
//! what lets the test suite compare every function with the upstream Go code
//! on hundreds of thousands of generated cases.
//!
//! Modules, one concept each:
//! - [`effect`]: what a change does to an object, field by field (the intent a user approves).
//! - [`placement`]: where a change puts the entries of keyed lists (the order a user approves).
//! - [`guard`]: the precondition a planned change is sent with: `test`s of exactly the fields it
//!   depends on (a JSON Patch), or the whole object's resourceVersion.
//! - [`helm_release`]: a Helm release as Helm's Secret and ConfigMap storage keep it (decoded, no I/O).
//! - [`json`]: decoding JSON text into values, as serde_json does but faster.
//! - [`json_patch`]: RFC 6902 JSON Patch, as the apiserver applies it.
//! - [`merge_patch`]: RFC 7386 JSON Merge Patch: apply, two-way and three-way creation.
//! - [`schema`]: what the engines need to know about a type (patch strategies,
//!   merge keys, list and map types), read from OpenAPI, with the built-in
//!   types embedded.
//! - [`strategic`]: Strategic Merge Patch: apply, two-way and three-way creation.
//! - [`fieldpath`]: field paths and field sets, and the FieldsV1 wire format.
//! - [`ownership`]: managers, managedFields, and server-side apply conflicts.
//! - [`lint`]: the traps of each patch type, found before the write.
//! - [`last_applied`]: the `kubectl.kubernetes.io/last-applied-configuration` annotation.
//! - [`owner_tree`]: the ownerReferences tree below an object, each object shown once.
//! - [`object_prune`]: the objects an apply of a new set deletes, and what deleting each may surprise.
//! - [`applyset`]: ApplySets (KEP-3659) as `kubectl apply --prune --applyset` reads their parents.
//! - [`readiness`]: whether an object is ready and why not, from its conditions (READY, REASON).
//! - [`replan`]: after a lost race, whether the re-planned change is the approved one, already
//!   done, or a conflict (the decision of the write path, pure).
//! - [`plan`]: what a patch of each type would do to an object, with its lints: the
//!   change a write path sends and a user approves.
//! - [`restore`]: putting a pre-image back (undo): which backup, whether the object moved
//!   on since, and the merge patch that restores it.
//! - [`secret_text`]: a Secret's values and where they appear in a text: the one rule by which
//!   they are masked for printing and a patch is found to expose them.
//! - [`well_known`]: the annotation keys and manager names Kubernetes gives meaning to, defined once.
//! - [`yaml`]: YAML as kubectl reads it (YAML 1.1, go-yaml v2) and writes that kubectl reads back.

pub mod applyset;
pub mod effect;
pub mod fieldpath;
mod go_format;
pub mod guard;
pub mod helm_release;
pub mod json;
pub mod json_patch;
pub mod last_applied;
pub mod lint;
pub mod merge_patch;
mod object_field;
pub mod object_prune;
pub mod owner_tree;
pub mod ownership;
pub mod placement;
pub mod plan;
pub mod readiness;
pub mod replan;
pub mod restore;
pub mod schema;
pub mod secret_text;
mod str_eq;
pub mod strategic;
pub mod well_known;
pub mod yaml;
