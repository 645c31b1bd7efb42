//! The confirmation question every writer asks, only on a terminal: a person
//! at a terminal confirms, `--yes` skips the question, and a script (no
//! terminal) is never blocked by a prompt it cannot see.
//!
//! A run over many objects ([`run_refusal`]: `safe-patch` of a selection, `undo --run`,
//! `owners transfer`, `last-applied repair|migrate --from-scan` and `migrate` of several
//! objects) is never assumed approved without a terminal: nothing is written without `--yes`,
//! and every such command says so in the same words and ends with [`NOT_APPROVED_EXIT`].

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use crate::exit_code;

/// The exit code of a run over many objects that was not approved: declined at the terminal,
/// or no terminal and no `--yes`. Nothing was written: refused.
pub const NOT_APPROVED_EXIT: u8 = exit_code::REFUSED;

/// Whether both stdin and stderr are terminals, so a person can answer.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks `question [y/N]` on stderr; true only for an explicit yes.
pub fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

/// Whether to go ahead with `question`: yes with `--yes` or without a terminal, else the answer.
pub fn approved(yes: bool, question: &str) -> bool {
    yes || !interactive() || confirm(question)
}

/// What became of a request to write: asked and approved, asked and declined, or not
/// asked because nobody can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// `--yes`, or a yes at the terminal.
    Approved,
    /// A no (or anything but yes) at the terminal.
    Declined,
    /// No terminal to ask on and no `--yes`: nothing may be written.
    NoTerminal,
}

/// Whether to go ahead with a write: yes with `--yes`; on a terminal, the answer to
/// `question`; without a terminal, [`Approval::NoTerminal`] (a script must say `--yes`).
pub fn approval(yes: bool, question: &str) -> Approval {
    if yes {
        Approval::Approved
    } else if !interactive() {
        Approval::NoTerminal
    } else if confirm(question) {
        Approval::Approved
    } else {
        Approval::Declined
    }
}

/// The one confirmation of a run over many objects: `None` to go ahead (`--yes`, or a yes at
/// the terminal to `question`); otherwise nothing may be written, the reason is printed, and the
/// command ends with the exit code returned ([`NOT_APPROVED_EXIT`]). `doing` and `done` name the
/// action (`patching`, `patched`); `objects` counts those that would be written.
pub fn run_refusal(yes: bool, question: &str, doing: &str, done: &str, objects: usize) -> Option<ExitCode> {
    let message = refusal_message(approval(yes, question), doing, done, objects)?;
    eprintln!("{message}");
    Some(ExitCode::from(NOT_APPROVED_EXIT))
}

/// What [`run_refusal`] prints for an `approval`, or `None` when it is approved.
fn refusal_message(approval: Approval, doing: &str, done: &str, objects: usize) -> Option<String> {
    let objects = if objects == 1 { "1 object".to_string() } else { format!("{objects} objects") };
    match approval {
        Approval::Approved => None,
        Approval::Declined => Some(format!("Not {done}.")),
        Approval::NoTerminal => Some(format!(
            "error: not {doing} {objects}: there is no terminal to confirm on, and --yes was not given. \
             Nothing was written; to go ahead, run the same command with --yes (--dry-run=server shows \
             what the server would make of it first)."
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_not_approved_says_why_in_the_same_words_for_every_command() {
        assert_eq!(refusal_message(Approval::Approved, "repairing", "repaired", 3), None);
        assert_eq!(refusal_message(Approval::Declined, "repairing", "repaired", 3).as_deref(), Some("Not repaired."));
        assert_eq!(
            refusal_message(Approval::NoTerminal, "patching", "patched", 1).as_deref(),
            Some(
                "error: not patching 1 object: there is no terminal to confirm on, and --yes was not given. \
                 Nothing was written; to go ahead, run the same command with --yes (--dry-run=server shows \
                 what the server would make of it first)."
            )
        );
    }
}
