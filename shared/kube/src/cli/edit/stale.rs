//! Edit sessions a killed process left behind, removed by the next session.
//!
//! SIGKILL (an OOM kill, `kill -9`, a closed terminal's process group killed hard) runs no
//! destructor and no signal handler, so a session's private directory stays in `$TMPDIR`
//! with the object it held. Each session's directory is named after its process
//! (`fieldwise-edit-PID-START-RANDOM`: the process id and its start time in clock ticks
//! since boot, from `/proc/PID/stat`, which tells a live owner from a later process that
//! got the same id). When a session starts, it removes the directories in `$TMPDIR` that
//! are all of:
//!
//! - named `fieldwise-edit-*`, a real directory (never a symbolic link: `lstat`, and the
//!   removal itself follows no link, `std::fs::remove_dir_all`), owned by the same user;
//! - stale: its owner process is gone (no process with that id and start time); or, when
//!   that cannot be told (no `/proc`, a name from an earlier version without the process
//!   in it), last changed more than [`STALE_AFTER`] (24 hours) ago, longer than any edit is
//!   expected to stay open; or an edit kept on purpose (not valid YAML, or not mergeable,
//!   its path printed for the user: marked [`KEPT_MARKER`]) more than [`STALE_AFTER`] ago.
//!
//! A live concurrent edit's directory is never removed: its process is alive. Removal
//! errors are ignored (the directory is someone's business, not this edit's).

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How old a directory whose owner cannot be told alive, or a kept edit, must be to be removed.
pub const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The file that marks a session's directory as kept for the user.
pub const KEPT_MARKER: &str = "KEPT";

/// The prefix of every session directory's name.
const PREFIX: &str = "fieldwise-edit-";

/// A session directory's name: the prefix, this process's id and start time, `random`.
pub fn session_name(random: &str) -> String {
    let pid = std::process::id();
    format!("{PREFIX}{pid}-{}-{random}", start_time(pid).unwrap_or(0))
}

/// The owner a session directory's name records: process id and start time.
fn owner_of(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let (pid, start, random) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || random.is_empty() {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// A process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`); `None`
/// when there is no such process or no `/proc`.
fn start_time(pid: u32) -> Option<u64> {
    // Read within the input limit, as every file read whole (a /proc file is small anyway).
    let stat = crate::local::input::read_own_file(std::path::Path::new(&format!("/proc/{pid}/stat"))).ok()?;
    let stat = String::from_utf8(stat).ok()?;
    // The command name (field 2) is in parentheses and may hold anything; fields 3.. follow.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process that made a session is alive; `None` when it cannot be told.
fn owner_alive(pid: u32, start: u64) -> Option<bool> {
    if start == 0 || !Path::new("/proc/self/stat").exists() {
        return None;
    }
    Some(start_time(pid) == Some(start))
}

/// Removes the stale session directories in `base` (see the module docs), never `own`
/// (this session's, whose owner defines "the same user").
pub fn remove_stale(base: &Path, own: &Path) {
    let Some(uid) = owner_uid(own) else { return };
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.starts_with(PREFIX)) else { continue };
        if path == own || !is_own_directory(&path, uid) {
            continue;
        }
        if is_stale(&path, name, now) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn is_stale(dir: &Path, name: &str, now: SystemTime) -> bool {
    let older_than_bound = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).unwrap_or_default() > STALE_AFTER)
    };
    let kept = dir.join(KEPT_MARKER);
    if std::fs::symlink_metadata(&kept).is_ok() {
        return older_than_bound(&kept);
    }
    match owner_of(name).and_then(|(pid, start)| owner_alive(pid, start)) {
        Some(alive) => !alive,
        None => older_than_bound(dir),
    }
}

/// The owner of `path` (not following a link).
#[cfg(unix)]
fn owner_uid(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn owner_uid(_path: &Path) -> Option<u32> {
    // No owners to compare: nothing is removed.
    None
}

/// Whether `path` is a directory itself (not a link to one) owned by `uid`.
#[cfg(unix)]
fn is_own_directory(path: &Path, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir() && m.uid() == uid)
}

#[cfg(not(unix))]
fn is_own_directory(_path: &Path, _uid: u32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fw-stale-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn names_record_the_owner_process() {
        let name = session_name("00ff");
        let (pid, start) = owner_of(&name).unwrap();
        assert_eq!(pid, std::process::id());
        assert_eq!(owner_alive(pid, start), Some(true));
        assert_eq!(owner_of("fieldwise-edit-0123456789abcdef"), None, "an earlier version's name");
        assert_eq!(owner_of("fieldwise-edit-1-2-"), None);
    }

    #[test]
    fn dead_owners_go_live_ones_links_and_kept_edits_stay() {
        let base = scratch("base");
        let own = base.join(session_name("own"));
        fs::create_dir(&own).unwrap();
        // A process that has ended: its id with a start time it never had.
        let dead = base.join(format!("{PREFIX}{}-1-dead", std::process::id()));
        let live = base.join(session_name("live"));
        let legacy = base.join(format!("{PREFIX}0123456789abcdef"));
        let kept = base.join(format!("{PREFIX}{}-1-kept", std::process::id()));
        for dir in [&dead, &live, &legacy, &kept] {
            fs::create_dir(dir).unwrap();
            fs::write(dir.join("edit.yaml"), "x").unwrap();
        }
        fs::write(kept.join(KEPT_MARKER), "").unwrap();
        // A link named like a session, pointing at a directory that must survive.
        let target = scratch("target");
        fs::write(target.join("precious"), "x").unwrap();
        let link = base.join(format!("{PREFIX}{}-1-link", std::process::id()));
        std::os::unix::fs::symlink(&target, &link).unwrap();

        // An earlier version's directory and a kept edit, both older than the bound.
        let (old_legacy, old_kept) =
            (base.join(format!("{PREFIX}fedcba9876543210")), base.join(format!("{PREFIX}9-9-old")));
        fs::create_dir(&old_legacy).unwrap();
        fs::create_dir(&old_kept).unwrap();
        let long_ago = SystemTime::now() - STALE_AFTER - Duration::from_secs(60);
        fs::File::create(old_kept.join(KEPT_MARKER)).unwrap().set_modified(long_ago).unwrap();
        fs::File::open(&old_legacy).unwrap().set_modified(long_ago).unwrap();

        remove_stale(&base, &own);
        assert!(!dead.exists(), "a dead owner's directory is removed");
        assert!(!old_legacy.exists() && !old_kept.exists(), "directories past the bound are removed");
        for survivor in [&own, &live, &legacy, &kept] {
            assert!(survivor.exists(), "{} must stay", survivor.display());
        }
        assert!(fs::symlink_metadata(&link).is_ok() && target.join("precious").exists());
        fs::remove_dir_all(&base).unwrap();
        fs::remove_dir_all(&target).unwrap();
    }
}
