//! Standard output that a reader may close early (`kubectl last-applied scan -A | head -1`).
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe is an error, and `println!` turns that
//! error into a panic (exit 101, "failed printing to stdout: Broken pipe"). Command-line
//! tools are expected to stop quietly instead: `cat`, `grep` and kubectl itself are ended by
//! the signal, and the shell reports status 141 (128 + SIGPIPE). Two ways lead here:
//! [`write()`] returns [`Error::StdoutClosed`] for the caller to unwind (streaming printers
//! stop at once and nothing else is sent), which [`crate::cli::run`] turns into the quiet
//! exit; and [`crate::cli`] installs a panic hook ([`quiet_on_closed_pipe`]) so any remaining
//! `print!` ends the same way instead of panicking.

use std::io::{ErrorKind, Write};

use crate::error::{Error, Result};
use crate::exit_code::CLOSED_PIPE;
use crate::local::error::LocalError;

/// Writes `text` to stdout and flushes it, so each streamed row reaches the reader as it
/// is found. A closed pipe is [`Error::StdoutClosed`]; other failures (disk full behind a
/// redirect) are reported as errors.
pub fn write(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(from_io)
}

/// Converts a failed write to stdout into the error the caller returns.
pub fn from_io(err: std::io::Error) -> Error {
    if err.kind() == ErrorKind::BrokenPipe {
        Error::StdoutClosed
    } else {
        Error::Local(LocalError::io_without_path("write to standard output", err))
    }
}

/// Installs a panic hook that ends the process quietly with [`CLOSED_PIPE`] when the
/// panic is `print!`'s or `eprint!`'s complaint about a closed pipe, and defers to the
/// previous hook for every other panic (which stays a bug worth its message).
pub fn quiet_on_closed_pipe() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if is_closed_pipe_panic(message) {
            std::process::exit(i32::from(CLOSED_PIPE));
        }
        previous(info);
    }));
}

/// Whether a panic message is std's "failed printing to stdout: Broken pipe (os error 32)"
/// (or the same for stderr).
fn is_closed_pipe_panic(message: &str) -> bool {
    (message.starts_with("failed printing to stdout") || message.starts_with("failed printing to stderr"))
        && message.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_print_panics_about_a_closed_pipe_are_quiet() {
        assert!(is_closed_pipe_panic("failed printing to stdout: Broken pipe (os error 32)"));
        assert!(is_closed_pipe_panic("failed printing to stderr: Broken pipe (os error 32)"));
        assert!(!is_closed_pipe_panic("failed printing to stdout: No space left on device (os error 28)"));
        assert!(!is_closed_pipe_panic("called `Option::unwrap()` on a `None` value: Broken pipe"));
    }

    #[test]
    fn a_broken_pipe_is_the_quiet_error_and_others_are_reported() {
        assert!(matches!(from_io(std::io::Error::from(ErrorKind::BrokenPipe)), Error::StdoutClosed));
        let other = from_io(std::io::Error::from(ErrorKind::StorageFull));
        assert!(other.printed().starts_with("error: cannot write to standard output"), "{other}");
    }
}
