//! The kube glue of fieldwise: everything that touches a cluster, a file or a terminal.
//!
//! The pure semantics live in `fieldwise-core`; this crate connects them to a real
//! cluster the way kubectl users expect. Plugins stay thin: parse flags, call in here
//! and into the core, print.
//!
//! Its folders are layers; each imports only the ones listed before it:
//!
//! - the ground: [`exit_code`] (the suite's one table of exit codes) and [`redact`] (the one
//!   redaction boundary every Secret value and server message passes, errors' own text
//!   included);
//! - [`local`]: private files and the per-server disk cache; its own errors
//!   ([`local::error::LocalError`]);
//! - [`conn`]: kubectl's connection flags, the client, the version; its own errors and the one
//!   classifier of the client library's errors ([`conn::error::ConnError`]);
//! - [`error`]: the error of the layers above (typed errors that print as one kubectl-style line
//!   and keep their source), which keeps the local and connection layers' errors whole;
//! - [`api`]: discovery, OpenAPI, object references, manifests, reading and listing objects;
//! - [`output`]: printers, the one human diff, color, stdout;
//! - [`write`](mod@write): the one write path (guard, backup, send, classify, re-plan, bulk runs);
//! - [`cli`]: parsing and ending a command, the confirmation prompt, `--edit` sessions, completion,
//!   the selection flags.
//!
//! What is pure is not here: a patch's plan and its [`write::PatchType`]
//! (re-exported from `fieldwise_core::plan`, with the HTTP content type added by
//! [`api::media_type`]), the server-set metadata [`output::diff`] leaves out
//! (`fieldwise_core::ownership`), the annotation key [`redact`] knows
//! (`fieldwise_core::well_known`). This crate adds the I/O around them.

pub mod exit_code;
pub mod redact;

pub mod local;

pub mod conn;

pub mod error;

pub mod api;

pub mod output;

pub mod write;

pub mod cli;

pub use conn::error::ConnError;
pub use error::{CoreError, Error, ReferenceError, Refusal, Result, StatusCause};
pub use local::error::LocalError;
