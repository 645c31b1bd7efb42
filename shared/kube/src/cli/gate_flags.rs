//! `--allow-unreadable`, declared once for every check that gates on what it read
//! (`owners drift`, `owners plan`, `owners watch`, `last-applied scan`), so each takes it
//! with the same word and help; the gate itself is [`crate::api::unread::Unreadable`].

use clap::Args;

use crate::api::unread::Unreadable;

/// The gate's flag, flattened into a command's flags.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct GateFlags {
    /// Pass (exit as if all was read) when some types or objects could not be read (forbidden, not
    /// found); they are still named in every output format. Without it the command exits 1.
    #[arg(long)]
    pub allow_unreadable: bool,
}

impl GateFlags {
    /// The run's gate, nothing unread yet.
    pub fn gate(&self) -> Unreadable {
        Unreadable::new(self.allow_unreadable)
    }
}
