//! The local layer: files on the user's machine that only the user may read.
//!
//! - [`private_fs`]: directories (0700) and files (0600, created exclusively when asked)
//!   that hold backups, edit sessions and caches.
//! - [`cache`]: the per-server disk cache (discovery, OpenAPI), written whole and atomically.
//! - [`input`]: what is read from the user (`-f`, `--patch-file`, stdin, `-p`), bounded in
//!   size and nesting: the limits, in one place.
//! - [`error`]: this layer's errors ([`error::LocalError`]), which the layers above keep whole.
//!
//! Nothing here knows about Kubernetes objects: it stores bytes for the layers above.

pub mod cache;
pub mod error;
pub mod input;
pub mod private_fs;
