//! The kube glue of fieldwise: everything that touches a cluster or a terminal.
//!
//! The pure semantics live in `fieldwise-core`; this crate connects them to a
//! real cluster the way kubectl users expect: the same global flags
//! ([`flags::KubeFlags`]), the same kubeconfig loading ([`client::connect`]),
//! the same resource names resolved through discovery
//! ([`discovery::ResourceCatalog`], [`target::TargetArgs`]), and errors that
//! read like kubectl's, one line each ([`error::Error`]).
//!
//! Plugins stay thin: parse flags, call in here and into the core, print.
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
pub mod stdout;
pub mod target;
pub mod version;
pub mod write;

pub use error::{Error, Result, StatusCause};
