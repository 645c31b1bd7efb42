//! The kube glue of fieldwise: everything that touches a cluster, a file or a terminal.
//!
//! The pure semantics live in `fieldwise-core`; this crate connects them to a real
//! cluster the way kubectl users expect. Plugins stay thin: parse flags, call in here
//! and into the core, print. Its modules, by concern:
//!
//! - **Connecting**: [`flags`] (kubectl's global flags), [`client`] (kubeconfig, the
//!   connection flags, the User-Agent of [`version`]), [`cache`] (per-server disk cache).
//! - **Knowing the server**: [`discovery`] (resource types, cached 6 h), [`openapi`] (the
//!   server's own schema, for custom resources and newer types).
//! - **Naming and reading objects**: [`reference`](mod@reference) (the one object reference, from
//!   `TYPE/NAME`, a manifest or an owner reference, with kubectl's namespace rules),
//!   [`target`] (positional arguments), [`manifests`] (`-f`), [`objects`] (GET, LIST,
//!   pagination), [`metadata_list`] (metadata-only lists for scans).
//! - **Writing**: [`write`](mod@write) (the one write path: guard, backup, send, classify, re-plan,
//!   retry, and bulk runs), [`backup`] (pre-images for `undo`), [`edit`] (`--edit`
//!   sessions in private files), [`prompt`] (the confirmation every writer asks).
//! - **Printing**: [`printer`] (kubectl's result lines and `-o`), [`diff`], [`color`],
//!   [`stdout`] (closed pipes end quietly), and [`redact`], the one redaction boundary
//!   every Secret value and server message passes.
//! - **Process**: [`cli`] (parsing and exit codes), [`completion`] (shell completion and
//!   its install), [`private_fs`] (files only the user can read), [`error`] (typed errors
//!   that print as one kubectl-style line and keep their source).
//!
//! What is pure is not here: a patch's plan and its [`write::PatchType`]
//! (re-exported from `fieldwise_core::plan`, with the HTTP content type added by
//! [`write::content_type`]), the server-set metadata [`diff`] leaves out
//! (`fieldwise_core::ownership`), the annotation key [`redact`] knows
//! (`fieldwise_core::well_known`). This crate adds the I/O around them.

pub mod backup;
pub mod cache;
pub mod cli;
pub mod client;
pub mod color;
pub mod completion;
pub mod diff;
pub mod discovery;
pub mod discovery_cache;
pub mod edit;
pub mod error;
pub mod flags;
pub mod manifests;
pub mod metadata_list;
pub mod objects;
pub mod openapi;
pub mod printer;
pub mod private_fs;
pub mod prompt;
pub mod redact;
pub mod reference;
pub mod stdout;
pub mod target;
pub mod version;
pub mod write;

pub use error::{CoreError, Error, Refusal, Result, StatusCause};
