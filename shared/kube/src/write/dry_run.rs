//! kubectl's `--dry-run`: whether a write is sent, sent as a server dry run, or only computed.

/// kubectl's `--dry-run` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DryRun {
    /// Write for real.
    #[default]
    None,
    /// Compute locally; send nothing that writes.
    Client,
    /// Send the request with dryRun=All: the server validates and admits but stores nothing.
    Server,
}
