//! The local layer's errors: a file or directory of the user's machine that could not be
//! read, written, created or removed, and input that cannot be taken (too large, not text,
//! nested too deep, unreadable). The layers above keep them whole inside their own
//! (`crate::error::Error::Local`), so a caller can still reach the operating system's error.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong on the user's machine.
#[derive(Debug)]
pub enum LocalError {
    /// A local file or directory could not be read, written, created or removed
    /// (backups, caches, `--edit` files, standard output).
    Io {
        /// What was being done, as a verb phrase: `write the backup`.
        action: String,
        /// The file, when there is one.
        path: Option<PathBuf>,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Input from the user (`-f`, `--patch-file`, standard input, `-p`) that is not taken:
    /// what is wrong with it, and what to do, in one line.
    Input(String),
}

/// Result with [`LocalError`].
pub type LocalResult<T> = std::result::Result<T, LocalError>;

impl LocalError {
    /// A file operation that failed: `action` is a verb phrase (`write the backup`).
    pub fn io(action: impl Into<String>, path: &Path, source: std::io::Error) -> Self {
        LocalError::Io { action: action.into(), path: Some(path.to_path_buf()), source }
    }

    /// An operation on no particular file that failed (`write to standard output`).
    pub fn io_without_path(action: impl Into<String>, source: std::io::Error) -> Self {
        LocalError::Io { action: action.into(), path: None, source }
    }

    /// Input that is not taken: `message` says what is wrong, and what to do.
    pub fn input(message: impl Into<String>) -> Self {
        LocalError::Input(message.into())
    }
}

impl fmt::Display for LocalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalError::Io { action, path: Some(path), source } => {
                write!(f, "cannot {action} {}: {source}", path.display())
            }
            LocalError::Io { action, path: None, source } => write!(f, "cannot {action}: {source}"),
            LocalError::Input(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for LocalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LocalError::Io { source, .. } => Some(source),
            LocalError::Input(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_error_names_the_file_and_keeps_the_system_error() {
        let err = LocalError::io(
            "write the backup",
            Path::new("/x/y.json"),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert_eq!(err.to_string(), "cannot write the backup /x/y.json: permission denied");
        let source = std::error::Error::source(&err).expect("the system error");
        assert_eq!(
            source.downcast_ref::<std::io::Error>().map(std::io::Error::kind),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        let unnamed = LocalError::io_without_path("write to standard output", std::io::Error::other("closed"));
        assert_eq!(unnamed.to_string(), "cannot write to standard output: closed");
        assert_eq!(LocalError::input("standard input is empty").to_string(), "standard input is empty");
    }
}
