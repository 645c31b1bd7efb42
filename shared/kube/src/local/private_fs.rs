//! Files and directories only the user can read, for everything that may hold
//! an object's values (backups, cached schemas, editor buffers): directories
//! 0700, files 0600, set at creation so there is no moment when they are open
//! to others. On platforms without Unix modes the platform's defaults apply.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The private directories to remove if the process is stopped by a signal while they exist
/// (see [`RemovedAtExit`]).
static REMOVED_AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A private directory that must not outlive the process, even when a signal ends it
/// without unwinding (`std::process::exit` runs no `Drop`): an edit session holding a
/// Secret, say. While the value lives, [`remove_at_exit`] removes the directory; the
/// owner removes it itself as usual, and dropping this forgets it.
#[derive(Debug)]
pub struct RemovedAtExit {
    dir: PathBuf,
}

impl RemovedAtExit {
    /// Registers `dir` for removal if the process ends by a signal while this lives.
    pub fn register(dir: &Path) -> RemovedAtExit {
        registered().push(dir.to_path_buf());
        RemovedAtExit { dir: dir.to_path_buf() }
    }
}

impl Drop for RemovedAtExit {
    fn drop(&mut self) {
        let mut dirs = registered();
        if let Some(at) = dirs.iter().position(|d| *d == self.dir) {
            dirs.swap_remove(at);
        }
    }
}

fn registered() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    REMOVED_AT_EXIT.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes every directory registered by a living [`RemovedAtExit`]: called just before
/// the process exits on a signal.
pub fn remove_at_exit() {
    for dir in registered().drain(..) {
        let _ = fs::remove_dir_all(dir);
    }
}

/// Creates `dir` and its missing parents, each 0700.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates a file for writing, 0600: `exclusive` refuses one that exists (so a file
/// planted by someone else is never reused); otherwise an existing one is truncated.
pub fn create_file(path: &Path, exclusive: bool) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if exclusive {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_directory_is_removed_at_exit_and_a_dropped_one_is_forgotten() {
        let base = std::env::temp_dir().join(format!("fw-removed-at-exit-{}", std::process::id()));
        let (kept, removed) = (base.join("kept"), base.join("removed"));
        create_dirs(&kept).unwrap();
        create_dirs(&removed).unwrap();
        let forgotten = RemovedAtExit::register(&kept);
        drop(forgotten);
        let _living = RemovedAtExit::register(&removed);
        remove_at_exit();
        assert!(!removed.exists(), "a living registration is removed");
        assert!(kept.exists(), "a dropped registration is not");
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn private_modes_and_exclusive_creation() {
        let dir = std::env::temp_dir().join(format!("fw-private-fs-{}", std::process::id())).join("a/b");
        create_dirs(&dir).unwrap();
        let file = dir.join("f");
        create_file(&file, true).unwrap();
        assert_eq!(create_file(&file, true).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        create_file(&file, false).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        }
        fs::remove_dir_all(dir.parent().unwrap().parent().unwrap()).unwrap();
    }
}
