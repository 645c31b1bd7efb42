//! Differential tests of `fieldwise-core` against the upstream Kubernetes Go code.
//!
//! The core crate re-implements JSON Patch, JSON Merge Patch, Strategic Merge
//! Patch and FieldsV1 field sets. The only way to know it does what the
//! apiserver and kubectl do is to ask them: `tests/oracle` is a Go program
//! that answers the same questions with the upstream packages, one JSON case
//! per line. This crate generates cases from a seed, sends them to the
//! oracle, runs the Rust function on each, and reports every disagreement
//! shrunk to a minimal case that can be pasted into a unit test.
//!
//! It is not a unit test of the generators' realism nor a benchmark: a case
//! either agrees with upstream (same accept/reject decision, same JSON value)
//! or it is a bug, unless `docs/` documents it as an upstream bug we do not copy.
//!
//! - [`rng`]: the seeded random source; [`values`]: scalars and keys;
//!   [`objects`]: objects of a kind by walking the schema; [`mutate`]: modified
//!   and current versions of an object; [`patches`]: JSON patches, merge
//!   patches, strategic patches with directives; [`fields_v1`]: FieldsV1 texts.
//! - [`cases`]: whole cases per oracle op, in the oracle's JSON form.
//! - [`oracle`]: the Go process; [`outcome`]: what an engine answered and how two
//!   answers compare; [`shrink`]: greedy reduction of a disagreement;
//!   [`runner`]: one differential run with its report; [`known_bugs`]:
//!   upstream bugs we differ on on purpose; [`yaml_texts`]: YAML texts (a corpus
//!   and a generator) and JSON values for the YAML reader and writer.

pub mod cases;
pub mod fields_v1;
pub mod known_bugs;
pub mod mutate;
pub mod objects;
pub mod oracle;
pub mod outcome;
pub mod patches;
pub mod rng;
pub mod runner;
pub mod sample_schema;
pub mod shrink;
pub mod values;
pub mod yaml_texts;
