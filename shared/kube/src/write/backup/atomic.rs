//! Backup files appear whole or not at all, so a process listing an object's backups
//! never reads another's half-written record.
//!
//! A record is written to a private temporary file in the store's `%tmp` directory (a
//! name no encoded path component can take), synced, and then linked to its final name
//! (which fails if the name is taken: a record is never overwritten) or renamed over the
//! record it replaces. The writer holds a shared lock on its file while it exists (and on
//! a `pending` record while its write is in flight: [`held_by_a_live_process`]); a file
//! nobody holds was left by a process that died (SIGKILL, power loss), and a temporary
//! one is removed by [`remove_abandoned`]. Shared, so that readers are never refused
//! (Windows locks are mandatory), and any holder makes an exclusive try fail.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::local::private_fs::{create_dirs, create_file};

/// The directory of temporary files below the store's root.
pub(super) const TEMP_DIR: &str = "%tmp";

/// Temporary files younger than this are left alone even when unlocked: their writer may
/// be between creating and locking them.
const ABANDONED_AFTER: Duration = Duration::from_secs(1);

/// A private temporary file holding complete bytes, locked by this process; removed when
/// dropped unless it was moved into place.
pub(super) struct TempFile {
    path: PathBuf,
    /// Open while the file exists, for its lock (taken by [`TempFile::persist`]).
    handle: Option<fs::File>,
}

impl TempFile {
    /// Writes `bytes` to a new temporary file in `temp_dir` and syncs it to disk: for
    /// records, whose pre-image must survive a power loss once the write is sent.
    pub(super) fn write(temp_dir: &Path, bytes: &[u8]) -> io::Result<TempFile> {
        TempFile::create(temp_dir, bytes, true)
    }

    /// [`TempFile::write`] without the sync, for files that mean nothing after a power
    /// loss: a marker of a write in flight says "this process lives", and no process
    /// survives a power loss; its record (synced) is settled when its object is next
    /// written. A sync costs a disk flush, which 50 writers at once wait on in turn.
    pub(super) fn write_unsynced(temp_dir: &Path, bytes: &[u8]) -> io::Result<TempFile> {
        TempFile::create(temp_dir, bytes, false)
    }

    fn create(temp_dir: &Path, bytes: &[u8], sync: bool) -> io::Result<TempFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        create_dirs(temp_dir)?;
        let path = temp_dir.join(format!("{}-{}.tmp", unique_stem(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        let handle = create_file(&path, true)?;
        let _ = handle.try_lock_shared();
        let temp = TempFile { handle: Some(handle), path };
        if let Some(handle) = &temp.handle {
            (&*handle).write_all(bytes)?;
            if sync {
                handle.sync_all()?;
            }
        }
        Ok(temp)
    }

    /// Renames the file to `file` and returns it still open and locked: a file that says
    /// "in flight" while this process lives, and "abandoned" once it is gone.
    pub(super) fn persist(mut self, file: &Path) -> io::Result<fs::File> {
        fs::rename(&self.path, file)?;
        self.handle.take().ok_or_else(|| io::Error::other("the temporary file was closed"))
    }

    /// The open (and locked) file, once its bytes have their name ([`TempFile::link_new`]):
    /// held while the record's write is in flight.
    pub(super) fn into_held(mut self) -> Option<fs::File> {
        self.handle.take()
    }

    /// Gives the bytes the name `file` unless a file has it already (`AlreadyExists`).
    pub(super) fn link_new(&self, file: &Path) -> io::Result<()> {
        match fs::hard_link(&self.path, file) {
            Ok(()) => Ok(()),
            Err(e) if matches!(e.kind(), io::ErrorKind::AlreadyExists | io::ErrorKind::NotFound) => Err(e),
            // A filesystem without hard links: a rename, after checking the name is free.
            Err(_) if file.exists() => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
            Err(_) => fs::rename(&self.path, file),
        }
    }

    /// Replaces `file` with the bytes in one step.
    pub(super) fn replace(self, file: &Path) -> io::Result<()> {
        fs::rename(&self.path, file)
    }
}

/// `<pid>-<nanoseconds>`: a process that reuses a dead one's pid does not reuse its names.
pub(super) fn unique_stem() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Whether a live process holds `file` (see the module docs); `false` when it is not there.
pub(super) fn held_by_a_live_process(file: &Path) -> bool {
    match fs::OpenOptions::new().read(true).write(true).open(file) {
        Ok(handle) => handle.try_lock().is_err(),
        Err(_) => false,
    }
}

/// Removes the temporary files in `dir` that no live process holds (their writer died).
/// Older versions wrote theirs beside the records (`*.json.<pid>.tmp`), so object
/// directories are cleaned the same way.
pub(super) fn remove_abandoned(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("tmp") {
            continue;
        }
        let old_enough = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= ABANDONED_AFTER));
        if old_enough && !held_by_a_live_process(&path) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Removes a record; `false` when it was gone already (another process pruned or settled it).
pub(super) fn remove_record(file: &Path) -> crate::error::Result<bool> {
    match fs::remove_file(file) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(crate::error::Error::local_io("remove the backup", file, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_files_are_linked_whole_and_abandoned_ones_removed() {
        let root = std::env::temp_dir().join(format!("fw-atomic-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let temps = root.join(TEMP_DIR);
        fs::create_dir_all(&root).unwrap();
        let first = TempFile::write(&temps, b"one").unwrap();
        first.link_new(&root.join("a.json")).unwrap();
        let second = TempFile::write(&temps, b"two").unwrap();
        assert_eq!(second.link_new(&root.join("a.json")).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(root.join("a.json")).unwrap(), b"one", "never overwritten");
        second.replace(&root.join("a.json")).unwrap();
        assert_eq!(fs::read(root.join("a.json")).unwrap(), b"two");
        drop(first);
        assert_eq!(fs::read_dir(&temps).unwrap().count(), 0, "no temporary file is left");

        // One held by a live writer stays; one nobody holds (its writer was killed) goes.
        let held = TempFile::write(&temps, b"held").unwrap();
        fs::write(temps.join("999999-0.tmp"), b"").unwrap();
        fs::write(root.join("b.json.999999.tmp"), b"").unwrap();
        std::thread::sleep(ABANDONED_AFTER + Duration::from_millis(100));
        remove_abandoned(&temps);
        remove_abandoned(&root);
        assert!(held.path.exists());
        assert!(!temps.join("999999-0.tmp").exists() && !root.join("b.json.999999.tmp").exists());
        drop(held);
        fs::remove_dir_all(root).unwrap();
    }
}
