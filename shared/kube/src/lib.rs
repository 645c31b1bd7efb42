//! The kube glue of fieldwise: everything that touches a cluster or a terminal.
//!
//! The pure semantics live in `fieldwise-core`; this crate connects them to a
//! real cluster the way kubectl users expect: the same global flags
//! ([`flags::KubeFlags`]), the same kubeconfig loading ([`client::connect`]),
//! the same resource names resolved through discovery
//! ([`discovery::ResourceCatalog`]) into one object reference
//! ([`reference::ObjectRef`], from `TYPE/NAME` arguments or `-f` manifests, with
//! kubectl's namespace rules), and errors that
//! read like kubectl's, one line each ([`error::Error`]).
//!
//! Plugins stay thin: parse flags, call in here and into the core, print.

pub mod backup;
pub mod cache;
pub mod cli;
pub mod client;
pub mod color;
pub mod completion;
pub mod diff;
pub mod discovery;
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
