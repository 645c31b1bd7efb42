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
//! - [`change`]: a change as a user approves it: what it does to an object, field by field
//!   (`effect`), and where it puts the entries of keyed lists (`placement`).
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
//! - [`object`]: facts of one object: the ownerReferences tree below it (`owner_tree`), whether
//!   it is ready and why not (`readiness`).
//! - [`release`]: what a release tool keeps and prunes: a Helm release as Helm's Secret and
//!   ConfigMap storage keep it (`helm`), ApplySets (KEP-3659) as `kubectl apply --prune
//!   --applyset` reads their parents (`applyset`), the objects an apply of a new set deletes
//!   and what deleting each may surprise (`prune`).
//! - [`plan`]: what a patch of each type would do to an object, with its lints: the
//!   change a write path sends and a user approves.
//! - [`write`]: the write path's decisions, pure: the precondition a planned change is sent
//!   with (`guard`: `test`s of exactly the fields it depends on, or the whole object's
//!   resourceVersion), after a lost race whether the re-planned change is the approved one,
//!   already done, or a conflict (`replan`), and putting a pre-image back (`restore`).
//! - [`secret_text`]: a Secret's values and where they appear in a text: the one rule by which
//!   they are masked for printing and a patch is found to expose them.
//! - [`well_known`]: the annotation keys and manager names Kubernetes gives meaning to, defined once.
//! - [`yaml`]: YAML as kubectl reads it (YAML 1.1, go-yaml v2) and writes that kubectl reads back.
//! - `go_format` (inside the crate): how Go writes values (its JSON, `%q`, `%v`), defined once.

pub mod change;
pub mod fieldpath;
mod go_format;
pub mod json;
pub mod json_patch;
pub mod last_applied;
pub mod lint;
pub mod merge_patch;
pub mod object;
pub mod ownership;
pub mod plan;
pub mod release;
pub mod schema;
pub mod secret_text;
mod str_eq;
pub mod strategic;
pub mod well_known;
pub mod write;
pub mod yaml;
