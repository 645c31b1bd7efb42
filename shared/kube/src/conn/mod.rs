//! The connection layer: how a plugin reaches a cluster, exactly as kubectl would.
//!
//! - [`backoff`]: jittered exponential waits bounded by a deadline (a write's retries, a
//!   watch's reconnects).
//! - [`duration`]: Go's durations, as every duration flag takes them (never past Go's limit).
//! - [`flags`]: kubectl's global connection flags (`--context`, `--kubeconfig`, `-n`,
//!   `--as`, `--token`, `--server`, `--request-timeout`, ...).
//! - [`client`]: the [`client::Connection`] built from kubeconfig and those flags, and the
//!   conversion of the client's errors into ours (naming the server, see [`error`]).
//! - [`header_value`]: tokens and impersonation values checked before they become headers.
//! - [`namespace`]: the namespaces a request can name (a path segment, a DNS label).
//! - [`kubeconfig_file`]: one kubeconfig file read as client-go reads it (YAML 1.1).
//! - [`exec_credential`]: kubeconfig exec credential plugins, run once per command.
//! - [`version`]: the plugins' version and the User-Agent they send.
//! - [`error`]: this layer's errors ([`error::ConnError`]) and the one classifier of the
//!   client library's errors (the server's answer redacted there), which the layers above
//!   keep whole.

pub mod backoff;
pub mod client;
pub mod duration;
pub mod error;
pub mod exec_credential;
pub mod flags;
pub mod header_value;
pub mod kubeconfig_file;
pub mod namespace;
pub mod version;
