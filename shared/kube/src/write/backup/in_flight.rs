//! The journal of writes in flight, so a record left `pending` by a process that died
//! (SIGKILL, a second Ctrl-C, a crash) is settled by the next command on the cluster,
//! whichever objects that command writes.
//!
//! While a write is in flight its process holds (locked) a small marker in
//! `%inflight/<cluster>/` naming the record and the API path to read the object at; the
//! marker goes when the record is settled. A marker nobody holds is of a process that
//! died: [`BackupStore::abandoned`](super::BackupStore::abandoned) finds those, and
//! [`BackupStore::settle_abandoned`](super::BackupStore::settle_abandoned) settles each
//! against the object as it is now.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::write::backup::atomic::{unique_stem, TempFile};
use crate::write::backup::names::encode_component;

/// The directory of markers below the store's root (a name no encoded component can take).
pub(super) const IN_FLIGHT_DIR: &str = "%inflight";

/// What a marker says.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MarkerContent {
    /// The record, relative to the store's root.
    record: PathBuf,
    /// The API path the object (or its subresource) is read at.
    read: String,
}

/// The marker of one write in flight, held open (and locked) until the record is settled.
#[derive(Debug)]
pub(super) struct Marker {
    path: PathBuf,
    _held: fs::File,
}

impl Marker {
    /// Writes the marker of `record` (below `root`), readable at `read`, for `cluster`.
    pub(super) fn create(root: &Path, temp_dir: &Path, cluster: &str, record: &Path, read: &str) -> io::Result<Marker> {
        let dir = markers_dir(root, cluster);
        crate::local::private_fs::create_dirs(&dir)?;
        let content =
            MarkerContent { record: record.strip_prefix(root).unwrap_or(record).to_path_buf(), read: read.to_string() };
        let bytes = serde_json::to_vec(&content).map_err(io::Error::other)?;
        let temp = TempFile::write_unsynced(temp_dir, &bytes)?;
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = dir.join(format!("{}-{}.json", unique_stem(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        let held = temp.persist(&path)?;
        Ok(Marker { path, _held: held })
    }

    /// The record is settled: the marker goes.
    pub(super) fn remove(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A write whose process died before settling its record; held (locked) by this process
/// while it settles it.
#[derive(Debug)]
pub struct Abandoned {
    marker: PathBuf,
    _held: fs::File,
    /// The record.
    pub record: PathBuf,
    /// The API path the object (or its subresource) is read at.
    pub read: String,
}

impl Abandoned {
    /// Settled: the marker goes.
    pub(super) fn done(self) {
        let _ = fs::remove_file(&self.marker);
    }
}

fn markers_dir(root: &Path, cluster: &str) -> PathBuf {
    root.join(IN_FLIGHT_DIR).join(encode_component(cluster))
}

/// The markers of `cluster` that no live process holds.
pub(super) fn find_abandoned(root: &Path, cluster: &str) -> Vec<Abandoned> {
    let Ok(entries) = fs::read_dir(markers_dir(root, cluster)) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let marker = entry.path();
        let Ok(held) = fs::OpenOptions::new().read(true).write(true).open(&marker) else { continue };
        if held.try_lock().is_err() {
            continue; // its writer is alive (or another process is settling it)
        }
        let content = crate::local::input::read_own_file(&marker)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<MarkerContent>(&bytes).ok());
        match content {
            Some(content) => {
                found.push(Abandoned { record: root.join(content.record), read: content.read, marker, _held: held })
            }
            // Unreadable: it names nothing that could be settled.
            None => {
                let _ = fs::remove_file(&marker);
            }
        }
    }
    found
}
