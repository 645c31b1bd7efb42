//! The local layer: files on the user's machine that only the user may read.
//!
//! - [`private_fs`]: directories (0700) and files (0600, created exclusively when asked)
//!   that hold backups, edit sessions and caches.
//! - [`cache`]: the per-server disk cache (discovery, OpenAPI), written whole and atomically.
//!
//! Nothing here knows about Kubernetes objects: it stores bytes for the layers above.

pub mod cache;
pub mod private_fs;
