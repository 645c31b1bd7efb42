//! The suite's one table of exit codes: every command of the three plugins ends with one of
//! these, and each code means one thing everywhere, so a script or a CI job can branch on it
//! without knowing which plugin ran. README.md's "Exit codes" table documents exactly these
//! (a test below reads it), and each command's `--help` names the ones it uses.
//!
//! - [`DONE`]: what was asked was done (also a write that changed nothing), or nothing was found;
//! - [`ERROR`]: an error, as kubectl exits 1 on every failure: bad flags or input, the cluster
//!   unreachable or refusing, an outcome unknown, a bulk run with objects failed or not tried;
//! - [`REFUSED`]: nothing was written because a check or a person stopped it: a finding needs
//!   `--force`, a run needs `--yes` without a terminal, the answer was no, a server-side apply
//!   conflicted, a Secret's value would be exposed;
//! - [`FOUND`]: the cluster is not as expected, and the command's job is to say so: predicted
//!   conflicts, a plan failing `--fail-on`, stale or leaking annotations, drift, or the object
//!   changed since the preview so the write was not made;
//! - the signals as a shell reports them (128 + the signal's number), and [`CLOSED_PIPE`] when
//!   stdout's reader went away (what a shell reports for SIGPIPE, as `kubectl get | head` ends).
//!
//! It sits at the ground of the crate (it imports nothing), so that every layer, the errors
//! included, takes its codes from here.

use std::process::ExitCode;

/// Done, or nothing found.
pub const DONE: u8 = 0;
/// An error (kubectl's one failure code).
pub const ERROR: u8 = 1;
/// Refused: nothing written, a check or a person stopped it.
pub const REFUSED: u8 = 2;
/// Found: conflicts, findings, drift, or the object changed since the preview.
pub const FOUND: u8 = 3;
/// Ended by SIGHUP (the terminal closed).
pub const HANGUP: u8 = 129;
/// Ended by SIGINT (Ctrl-C).
pub const INTERRUPT: u8 = 130;
/// Stdout's reader went away (SIGPIPE's code).
pub const CLOSED_PIPE: u8 = 141;
/// Ended by SIGTERM.
pub const TERMINATE: u8 = 143;

/// Every code of the table, in order.
pub const ALL: [u8; 8] = [DONE, ERROR, REFUSED, FOUND, HANGUP, INTERRUPT, CLOSED_PIPE, TERMINATE];

/// The process exit code for one of the table's codes.
pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// [`FOUND`] when `found`, else [`DONE`]: the end of every command whose job is to find.
pub fn found_if(found: bool) -> ExitCode {
    exit(if found { FOUND } else { DONE })
}

/// The code that says more of two, for a run over many objects ending with its worst object's
/// code: an error (or a signal) over a finding or change (the object changed since the preview)
/// over a refusal needing `--force` over done; of two equal ranks, the first.
pub fn worse(a: u8, b: u8) -> u8 {
    fn rank(code: u8) -> u8 {
        match code {
            DONE => 0,
            REFUSED => 1,
            FOUND => 2,
            _ => 3,
        }
    }
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes in the first column of README.md's "Exit codes" table (`129, 130, 143` is three).
    fn readme_codes() -> Vec<u8> {
        let readme = include_str!("../../../README.md");
        let table = readme.split("## Exit codes").nth(1).expect("README.md has an \"Exit codes\" section");
        let mut codes: Vec<u8> = table
            .lines()
            .skip_while(|line| !line.starts_with('|'))
            .take_while(|line| line.starts_with('|'))
            .filter_map(|line| line.split('|').nth(1))
            .flat_map(|cell| cell.split(',').map(str::trim).map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|cell| cell.parse().ok())
            .collect();
        codes.sort_unstable();
        codes
    }

    #[test]
    fn the_readme_documents_exactly_this_table() {
        let mut all = ALL.to_vec();
        all.sort_unstable();
        assert_eq!(readme_codes(), all);
    }

    #[test]
    fn an_error_outranks_a_change_which_outranks_a_refusal() {
        assert_eq!(worse(DONE, REFUSED), REFUSED);
        assert_eq!(worse(REFUSED, FOUND), FOUND);
        assert_eq!(worse(FOUND, REFUSED), FOUND);
        assert_eq!(worse(FOUND, ERROR), ERROR);
        assert_eq!(worse(ERROR, DONE), ERROR);
        assert_eq!(worse(INTERRUPT, ERROR), INTERRUPT);
    }
}
