//! The directory tree of backups, and the record of a write in flight.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::local::input::read_own_file;
use crate::local::private_fs::create_dirs;
use crate::write::backup::atomic::{held_by_a_live_process, remove_abandoned, remove_record, TempFile, TEMP_DIR};
use crate::write::backup::in_flight::{find_abandoned, Abandoned, Marker, IN_FLIGHT_DIR};
use crate::write::backup::names::{encode_component, legacy_sanitize};
use crate::write::backup::record::{Backup, BackupRecord, ObjectKey, WriteState};
use crate::write::backup::retention::{prune_sorted, PruneReport, Retention};

/// The directory tree of backups.
#[derive(Debug, Clone)]
pub struct BackupStore {
    root: PathBuf,
}

impl BackupStore {
    /// The store at its default location (see the module docs).
    pub fn open_default() -> Result<Self> {
        let base = match std::env::var_os("FIELDWISE_DATA_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => dirs::data_dir().map(|d| d.join("fieldwise")).ok_or_else(|| Error::Unsupported {
                what: "this system has no data directory for backups; set FIELDWISE_DATA_DIR".into(),
            })?,
        };
        Ok(BackupStore { root: base.join("backups") })
    }

    /// A store rooted at `root` (for tests).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        BackupStore { root: root.into() }
    }

    /// The directory of one object's backups.
    pub fn dir_of(&self, key: &ObjectKey) -> PathBuf {
        self.encoded_dir(&key.cluster, key)
    }

    /// `<top>/<namespace or _cluster>/<resource>/<name>`, each percent-encoded.
    fn encoded_dir(&self, top: &str, key: &ObjectKey) -> PathBuf {
        let ns = if key.namespace.is_empty() { "_cluster" } else { key.namespace.as_str() };
        [top, ns, key.resource.as_str(), key.name.as_str()]
            .iter()
            .fold(self.root.clone(), |p, part| p.join(encode_component(part)))
    }

    /// Saves the record of a write about to be sent; the write path completes or removes
    /// it. Until then the write is in the journal of writes in flight ([`super::in_flight`]),
    /// with the API path its object is read at (`read`), so that the record is settled even
    /// if this process dies first.
    pub fn begin(&self, record: BackupRecord, read: &str) -> Result<PendingBackup> {
        let (file, held) = self.save_new(&record)?;
        let marker = Marker::create(&self.root, &self.temp_dir(), &record.cluster, &file, read)
            .map_err(|e| Error::local_io("note the write in flight in", &self.root.join(IN_FLIGHT_DIR), e));
        let marker = match marker {
            Ok(marker) => marker,
            Err(e) => {
                let _ = remove_record(&file);
                return Err(e);
            }
        };
        Ok(PendingBackup { file, record, temp_dir: self.temp_dir(), marker: Some(marker), _held: held })
    }

    /// The writes of `cluster` whose process died before settling their records (see
    /// [`super::in_flight`]); each is held by this process until it is settled.
    pub fn abandoned(&self, cluster: &str) -> Vec<Abandoned> {
        find_abandoned(&self.root, cluster)
    }

    /// Settles the record of an abandoned write against its object as it is now (`None`:
    /// the object is gone). A record whose pre-image has the live resourceVersion is of a
    /// write that never landed, and goes; one whose object moved on, or is gone, may have
    /// landed, and is marked `unknown`. Records already settled are left as they are.
    pub fn settle_abandoned(&self, abandoned: Abandoned, live: Option<&Value>) -> Result<Settled> {
        let outcome = match read_record(&abandoned.record)? {
            None => Settled::AlreadySettled,
            Some(mut record) if matches!(record.state, WriteState::Pending | WriteState::Unknown) => {
                let rv = |object: &Value| {
                    object.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from)
                };
                let live_rv = live.and_then(rv);
                if live_rv.is_some() && live_rv == rv(&record.before) {
                    remove_record(&abandoned.record)?;
                    if let Some(dir) = abandoned.record.parent() {
                        remove_empty_dirs(dir, &self.root);
                    }
                    Settled::Removed
                } else {
                    record.state = WriteState::Unknown;
                    rewrite(&self.temp_dir(), &abandoned.record, &record)?;
                    Settled::MarkedUnknown
                }
            }
            Some(_) => Settled::AlreadySettled,
        };
        abandoned.done();
        Ok(outcome)
    }

    /// Saves a new record; returns its file, and the file held open (locked) by this process.
    fn save_new(&self, record: &BackupRecord) -> Result<(PathBuf, Option<fs::File>)> {
        let dir = self.dir_of(&record.key());
        create_private_dirs(&dir)?;
        let temp = TempFile::write(&self.temp_dir(), &record_bytes(record)?)
            .map_err(|e| Error::local_io("write the backup in", &self.temp_dir(), e))?;
        let stamp = record.time.replace([':', '-'], "");
        let mut attempt = 0;
        while attempt < 1000 {
            let file = dir.join(if attempt == 0 { format!("{stamp}.json") } else { format!("{stamp}-{attempt}.json") });
            match temp.link_new(&file) {
                Ok(()) => return Ok((file, temp.into_held())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
                // Another process removed the directory when it emptied it (a discarded or
                // pruned backup) between our creating it and our file: create it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt < 999 => {
                    create_private_dirs(&dir)?;
                    attempt += 1;
                }
                Err(e) => return Err(Error::local_io("write the backup", &file, e)),
            }
        }
        Err(Error::local_io(
            "write a backup in",
            &dir,
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "1,000 backups with the same time stamp"),
        ))
    }

    /// Where records are written before they get their name (see [`super::atomic`]).
    fn temp_dir(&self) -> PathBuf {
        self.root.join(TEMP_DIR)
    }

    /// Every backup of one object, oldest first. Backups written by older versions
    /// (under the context's name, and before that with names that were not reversible)
    /// are found too, and only records of exactly this object on this cluster are returned.
    pub fn list(&self, key: &ObjectKey) -> Result<Vec<Backup>> {
        let mut backups = Vec::new();
        for dir in self.dirs_of(key) {
            backups.extend(read_dir_records(&dir)?.into_iter().filter(|b| key.is_of(&b.record)));
        }
        sort_oldest_first(&mut backups);
        Ok(backups)
    }

    /// Settles the `unknown` records of one object against its live version, and the
    /// `pending` ones a process that died left: a record whose pre-image has the live
    /// resourceVersion is of a write that never landed (the object has not changed since),
    /// so it is removed; a `pending` one whose object moved on may have landed, and is
    /// marked `unknown`. Returns how many were removed.
    pub fn settle_unknown(&self, key: &ObjectKey, live: &Value) -> Result<usize> {
        let rv = |object: &Value| object.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from);
        let live_rv = rv(live);
        let mut settled = 0;
        for backup in self.list(key)? {
            let abandoned = match backup.record.state {
                WriteState::Unknown => true,
                WriteState::Pending => !held_by_a_live_process(&backup.file),
                WriteState::Written => false,
            };
            if !abandoned {
                continue;
            }
            if live_rv.is_some() && rv(&backup.record.before) == live_rv {
                // Another process settling the same record first is no failure.
                if remove_record(&backup.file)? {
                    settled += 1;
                }
            } else if backup.record.state == WriteState::Pending {
                let mut record = backup.record;
                record.state = WriteState::Unknown;
                rewrite(&self.temp_dir(), &backup.file, &record)?;
            }
        }
        Ok(settled)
    }

    /// Removes the backups of one object that `policy` does not keep.
    pub fn prune(&self, key: &ObjectKey, policy: Retention) -> Result<PruneReport> {
        let backups = self.list(key)?;
        let report = prune_sorted(&backups, policy);
        remove_abandoned(&self.temp_dir());
        for dir in self.dirs_of(key) {
            remove_abandoned(&dir);
            remove_empty_dirs(&dir, &self.root);
        }
        report
    }

    /// Every backup in the store, of every object, oldest first: for the queries that span
    /// objects ([`crate::write::runs`]).
    pub fn all(&self) -> Result<Vec<Backup>> {
        let mut object_dirs = Vec::new();
        collect_leaf_dirs(&self.root, 0, &mut object_dirs);
        let mut backups = Vec::new();
        for dir in object_dirs {
            backups.extend(read_dir_records(&dir)?);
        }
        sort_oldest_first(&mut backups);
        Ok(backups)
    }

    /// Removes, for every object in the store, the backups `policy` does not keep.
    pub fn prune_all(&self, policy: Retention) -> Result<PruneReport> {
        let mut total = PruneReport::default();
        let mut object_dirs = Vec::new();
        collect_leaf_dirs(&self.root, 0, &mut object_dirs);
        remove_abandoned(&self.temp_dir());
        for dir in object_dirs {
            remove_abandoned(&dir);
            let mut backups = read_dir_records(&dir)?;
            sort_oldest_first(&mut backups);
            // One directory may hold several objects only in the legacy layout.
            let mut keys: Vec<ObjectKey> = Vec::new();
            for backup in &backups {
                if !keys.iter().any(|k| k.is_of(&backup.record)) {
                    keys.push(backup.record.key());
                }
            }
            for key in keys {
                let of_key: Vec<Backup> = backups.iter().filter(|b| key.is_of(&b.record)).cloned().collect();
                let report = prune_sorted(&of_key, policy)?;
                total.removed += report.removed;
                total.kept += report.kept;
            }
            remove_empty_dirs(&dir, &self.root);
        }
        Ok(total)
    }

    /// The directories that may hold an object's backups: its own, and where older versions
    /// put them (under the context's name).
    fn dirs_of(&self, key: &ObjectKey) -> Vec<PathBuf> {
        let mut dirs = vec![self.dir_of(key)];
        for dir in [self.encoded_dir(&key.context, key), self.legacy_dir_of(key)] {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    /// Where the first versions put an object's backups (under the context's name, with
    /// `_` for unsafe bytes).
    pub(super) fn legacy_dir_of(&self, key: &ObjectKey) -> PathBuf {
        let ns = if key.namespace.is_empty() { "_cluster" } else { key.namespace.as_str() };
        [key.context.as_str(), ns, key.resource.as_str(), key.name.as_str()]
            .iter()
            .fold(self.root.clone(), |p, part| p.join(legacy_sanitize(part)))
    }
}

/// What [`BackupStore::settle_abandoned`] did with a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The write never landed: the record is gone.
    Removed,
    /// The write may have landed: the record says `unknown`.
    MarkedUnknown,
    /// The record was settled already (written, or removed).
    AlreadySettled,
}

/// A backup saved before its write was sent. The write path ends it one of three
/// ways; dropping it without ending it leaves the record `pending` (as a crash would),
/// for the next command on the cluster to settle.
#[derive(Debug)]
pub struct PendingBackup {
    file: PathBuf,
    record: BackupRecord,
    temp_dir: PathBuf,
    marker: Option<Marker>,
    /// The record held open (locked) while the write is in flight, so another process can
    /// tell it from one a dead process left (see [`super::atomic`]).
    _held: Option<fs::File>,
}

impl PendingBackup {
    /// Its file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The write was planned again against a fresh object: the pre-image and patch change.
    pub fn rebase(&mut self, before: &Value, patch: &Value) -> Result<()> {
        self.record.before = before.clone();
        self.record.patch = patch.clone();
        let fail = |e: std::io::Error| Error::local_io("update the backup", &self.file, e);
        let temp = TempFile::write(&self.temp_dir, &record_bytes(&self.record)?).map_err(fail)?;
        self._held = Some(temp.persist(&self.file).map_err(fail)?);
        Ok(())
    }

    /// The write happened and produced `object`.
    pub fn written(mut self, object: &Value) -> Result<PathBuf> {
        self.record.written(object);
        rewrite(&self.temp_dir, &self.file, &self.record)?;
        self.settled();
        Ok(self.file)
    }

    /// The write may have happened: keep the pre-image, say so.
    pub fn unknown(mut self) -> Result<PathBuf> {
        self.record.state = WriteState::Unknown;
        rewrite(&self.temp_dir, &self.file, &self.record)?;
        self.settled();
        Ok(self.file)
    }

    /// The write certainly did not happen: the record goes.
    pub fn discard(mut self) {
        fs::remove_file(&self.file).ok();
        if let Some(dir) = self.file.parent() {
            fs::remove_dir(dir).ok();
        }
        self.settled();
    }

    /// The record says what became of the write: it is no longer in flight.
    fn settled(&mut self) {
        if let Some(marker) = self.marker.take() {
            marker.remove();
        }
    }
}

/// One record; `None` when it is not there (any more).
fn read_record(file: &Path) -> Result<Option<BackupRecord>> {
    match read_own_file(file) {
        Ok(text) => serde_json::from_slice::<BackupRecord>(&text)
            .map(|record| Some(record.normalized()))
            .map_err(|e| Error::malformed(format!("the backup {} (damaged)", file.display()), e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::local_io("read", file, e)),
    }
}

fn read_dir_records(dir: &Path) -> Result<Vec<Backup>> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut backups = Vec::new();
    for entry in entries.flatten() {
        let file = entry.path();
        if file.extension().and_then(|e| e.to_str()) != Some("json") || !file.is_file() {
            continue;
        }
        let text = match read_own_file(&file) {
            Ok(text) => text,
            // Pruned or settled by another process since the directory was read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::local_io("read", &file, e)),
        };
        let record: BackupRecord = serde_json::from_slice(&text)
            .map_err(|e| Error::malformed(format!("the backup {} (damaged)", file.display()), e))?;
        backups.push(Backup { file, record: record.normalized() });
    }
    Ok(backups)
}

/// Same time: `T.json` was written before `T-1.json`, which sorts first as text.
fn sort_oldest_first(backups: &mut [Backup]) {
    let name_len = |b: &Backup| b.file.as_os_str().len();
    backups.sort_by(|a, b| {
        a.record.time.cmp(&b.record.time).then(name_len(a).cmp(&name_len(b))).then(a.file.cmp(&b.file))
    });
}

/// The directories four levels down (cluster/namespace/resource/name).
fn collect_leaf_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth == 3 {
                out.push(path);
            } else {
                collect_leaf_dirs(&path, depth + 1, out);
            }
        }
    }
}

/// Removes `dir` and its parents up to (not including) `root` while they are empty.
fn remove_empty_dirs(dir: &Path, root: &Path) {
    let mut here = Some(dir);
    while let Some(d) = here {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        here = d.parent();
    }
}

fn record_bytes(record: &BackupRecord) -> Result<Vec<u8>> {
    serde_json::to_vec_pretty(record).map_err(|e| Error::malformed("a backup record", e))
}

/// Replaces a record's file in one step (a private temporary file, then a rename).
fn rewrite(temp_dir: &Path, file: &Path, record: &BackupRecord) -> Result<()> {
    let fail = |e: std::io::Error| Error::local_io("update the backup", file, e);
    TempFile::write(temp_dir, &record_bytes(record)?).and_then(|temp| temp.replace(file)).map_err(fail)
}

fn create_private_dirs(dir: &Path) -> Result<()> {
    create_dirs(dir).map_err(|e| Error::local_io("create the backup directory", dir, e))
}
