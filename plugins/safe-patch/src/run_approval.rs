//! The one confirmation of a run over many objects (a bulk patch, the undo of a run): asked
//! once on a terminal, given by `--yes`, and never assumed without a terminal, where nothing
//! is written and the user is told how to go ahead. Both runs say it the same way.

use std::process::ExitCode;

use fieldwise_kube::cli::prompt::{self, Approval};

use crate::exit_code::EXIT_REFUSED;

/// `None` to go ahead; otherwise the exit code to end with, the reason printed. `doing` and
/// `done` name the action (`patching`, `patched`); `objects` counts what would change.
pub fn refusal(yes: bool, question: &str, doing: &str, done: &str, objects: &str) -> Option<ExitCode> {
    match prompt::approval(yes, question) {
        Approval::Approved => None,
        Approval::Declined => {
            eprintln!("Not {done}.");
            Some(ExitCode::from(EXIT_REFUSED))
        }
        Approval::NoTerminal => {
            eprintln!(
                "error: not {doing} {objects}: there is no terminal to confirm on, and --yes was not given. \
                 Nothing was written; review the preview above, then run the same command with --yes."
            );
            Some(ExitCode::from(EXIT_REFUSED))
        }
    }
}
