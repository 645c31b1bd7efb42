//! The confirmation question every writer asks, only on a terminal: a person
//! at a terminal confirms, `--yes` skips the question, and a script (no
//! terminal) is never blocked by a prompt it cannot see.

use std::io::{BufRead, IsTerminal, Write};

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
