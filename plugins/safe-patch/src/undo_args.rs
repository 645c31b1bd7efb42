//! The flags of `kubectl safe-patch undo`: read by the undo of one object
//! ([`crate::undo`]), the undo of a run ([`crate::undo_run`]) and the restore both make
//! ([`crate::restore`]), so they sit below all three.

use clap::Args;
use fieldwise_kube::write::DryRun;

use crate::FIELD_MANAGER;

/// `kubectl safe-patch undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The object: TYPE/NAME or TYPE NAME (not with --run or --last-run).
    #[arg(value_name = "TYPE/NAME", required_unless_present_any = ["run", "last_run"], conflicts_with_all = ["run", "last_run"])]
    pub targets: Vec<String>,
    /// Restore the pre-image of the backup taken at this time (as `history` prints it, or a prefix of it).
    #[arg(long, value_name = "TIME", conflicts_with_all = ["run", "last_run"])]
    pub to: Option<String>,
    /// Undo every write of the bulk run with this id (as printed at the run's end and by `history --runs`).
    #[arg(long, value_name = "ID", conflicts_with = "last_run")]
    pub run: Option<String>,
    /// Undo the last bulk run still in effect (a second --last-run undoes the run before it).
    #[arg(long)]
    pub last_run: bool,
    /// Restore even if the object changed since the write being undone (with a run: restore those objects too).
    #[arg(long)]
    pub force: bool,
    /// Restore even onto an object that was deleted and created again since the backup
    /// (another UID): the backup is of the old object, and its values replace the new one's.
    /// `--force` does not cover this.
    #[arg(long)]
    pub onto_recreated: bool,
    /// Only show what would be restored: client previews, server also sends the restore as a server-side dry run.
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRun,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Field manager recorded for the restoring write.
    #[arg(long, default_value = FIELD_MANAGER)]
    pub field_manager: String,
    /// With --run or --last-run: how many objects are read, dry-run and restored at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// Show Secret values in the diff.
    #[arg(long)]
    pub show_secrets: bool,
}
