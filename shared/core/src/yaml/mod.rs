//! YAML as kubectl reads and writes it: text in, [`serde_json::Value`] out,
//! and back.
//!
//! Why this exists: kubectl reads YAML through sigs.k8s.io/yaml on go-yaml v2,
//! which follows YAML 1.1 (`y`, `yes`, `on` are `true`; `0777` is octal;
//! non-string keys become strings), and it cuts multi-document files at `---`
//! lines itself. YAML 1.2 libraries read and write the same text differently,
//! so what a plugin showed or wrote was not what kubectl would apply.
//!
//! - [`read_stream`]: a file as `kubectl apply -f` reads it, document by document
//!   ([`documents`]: the same, one document at a time, for readers that may stop early).
//! - [`to_json`]: a patch as `kubectl patch --patch-file` reads it.
//! - [`duplicate_fields`]: the fields a text writes twice in one mapping (the value kept is the last).
//! - [`field_lines`]: the line each field of a document is written on, to name it in errors.
//! - [`to_yaml`] / [`to_yaml_stream`]: YAML that kubectl reads back to the same values.
//!
//! Inside, one step each: `frame` cuts the stream into documents,
//! `json_value` decodes its JSON ones, `compose` builds a YAML document's
//! nodes with libyaml, `decode` turns them into JSON by go-yaml v2's rules,
//! which `resolve` (and `timestamp`) give for each scalar; `style` picks how a
//! string is written and `write` lays out the document. The departures from
//! kubectl, all deliberate, are in `docs/yaml-deviations.md`.

mod compose;
mod contained_panic;
mod decode;
mod duplicates;
mod frame;
mod json_value;
mod lines;
mod read;
mod resolve;
mod style;
mod timestamp;
mod write;

pub use duplicates::duplicate_fields;
pub use lines::{field_lines, FieldLines};
pub use read::{documents, read_stream, to_json, Document, Documents, ReadError, MAX_DEPTH};
pub use write::{to_yaml, to_yaml_stream};

#[cfg(test)]
mod tests;
