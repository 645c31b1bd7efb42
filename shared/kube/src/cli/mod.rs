//! The command-line layer: what every plugin does around its own command.
//!
//! - [`entry`]: parsing with kubectl's exit codes, running the async command, printing
//!   the one error line.
//! - [`prompt`]: the confirmation every writer asks on a terminal (`--yes` skips it).
//! - [`edit`]: `--edit` sessions in private temporary files, kept when an edit fails.
//! - [`completion`]: shell completion of resource types and names, and its install.
//! - [`selection_flags`]: the selection's flags (`TYPE/NAME`, `-f`, `-R`, `-k`, `-l`,
//!   `--field-selector`, `--all`, `-A`), declared once.
//! - [`gate_flags`]: `--allow-unreadable`, declared once for every check that gates on what it read.

pub mod completion;
#[cfg(feature = "test-hooks")]
pub mod conventions;
pub mod edit;
pub mod entry;
pub mod gate_flags;
pub mod prompt;
pub mod selection_flags;

#[cfg(feature = "test-hooks")]
pub use conventions::{help_convention_problems, subcommands_without_examples};
pub use entry::{fail, hoist_subcommand, parse, parse_with_subcommands, run, with_completion_examples};
