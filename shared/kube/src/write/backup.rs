//! Pre-images saved before every write, so any change can be undone.
//!
//! One JSON file per write, readable by the user alone (0600, in 0700
//! directories), because the pre-image of a Secret holds its values:
//! `<data dir>/backups/<context>/<namespace or _cluster>/<resource>/<name>/<time>.json`.
//! The data dir is `$FIELDWISE_DATA_DIR`, else the platform's user data dir
//! (`~/.local/share/fieldwise` on Linux). Each path component is the name
//! percent-encoded (every byte but ASCII letters, digits and `-_.@`), so two
//! objects never share a directory (`demo:role` and `demo_role` are
//! `demo%3Arole` and `demo_role`) and the name can be read back.
//!
//! Only the write path ([`crate::write`]) creates records: a [`PendingBackup`] is
//! saved before the request is sent and then either completed with what the
//! write produced, marked unknown (the connection broke and the object could not
//! be read again), or removed (the write certainly did not happen). So every
//! record is of a write that happened, or may have; the next write of the object
//! removes the `unknown` records its live version shows never landed.
//!
//! Backups are pruned by a [`Retention`] policy after each write of an object,
//! and on demand (`kubectl safe-patch history --prune`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::local::private_fs::{create_dirs, create_file};

/// What became of the write a backup was taken for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteState {
    /// Saved before the write; the write has not answered (or the process died).
    #[default]
    Pending,
    /// The write happened; `after` holds what it produced.
    Written,
    /// The connection broke after the write was sent, and the object could not
    /// be read again: it may or may not have landed.
    Unknown,
}

/// Which object a backup belongs to: the directory key, and what every record repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectKey {
    /// The kubeconfig context.
    pub context: String,
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// `plural.group` of the object's type.
    pub resource: String,
    /// The object's name.
    pub name: String,
}

impl ObjectKey {
    /// The key of `target` in the context of `conn`.
    pub fn of(conn: &crate::conn::client::Connection, target: &crate::api::reference::ObjectRef) -> Self {
        ObjectKey {
            context: conn.context.clone(),
            namespace: target.namespace.clone().unwrap_or_default(),
            resource: target.resource.plural_group(),
            name: target.name.clone(),
        }
    }
}

/// What is saved before a write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupRecord {
    /// When the backup was taken (RFC 3339, UTC).
    pub time: String,
    /// The kubeconfig context.
    pub context: String,
    /// The server URL.
    pub server: String,
    /// The object's namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// `plural.group` of the object's type.
    pub resource: String,
    /// The object's name.
    pub name: String,
    /// The subresource written through (`scale`, `status`), if any: `before` and
    /// `after` are then that subresource's objects, and undo restores through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// The tool and flavour of the write (`safe-patch strategic`, `last-applied repair`...).
    pub operation: String,
    /// The patch that was sent (without its guard).
    pub patch: Value,
    /// The object before the write.
    pub before: Value,
    /// What became of the write.
    #[serde(default)]
    pub state: WriteState,
    /// The resourceVersion the write produced, once known: undo refuses if the object moved on.
    pub after_resource_version: Option<String>,
    /// The object the write produced, once known: undo compares it with the live object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// Where the write came from: its bulk run, and for a restore, what it undid.
    #[serde(flatten)]
    pub provenance: Provenance,
}

/// What a backup record says about the command that wrote: the bulk run it was part of
/// (`kubectl safe-patch undo --run ID`), and for a restore the backup and run it undid,
/// so that a second undo steps back further instead of re-doing the first
/// ([`fieldwise_core::restore::next_to_undo`]). Empty for a single write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provenance {
    /// The id of the bulk run the write belonged to ([`crate::write::runs::new_run_id`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// For a restore: the id ([`Backup::id`]) of the backup of the same object it put back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// For a restore made by `undo --run`/`--last-run`: the run it undid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes_run: Option<String>,
}

impl BackupRecord {
    /// The record of a write about to happen to `target`: `before` is the object as read.
    pub fn before_write(
        conn: &crate::conn::client::Connection,
        target: &crate::api::reference::ObjectRef,
        subresource: Option<&str>,
        operation: impl Into<String>,
        patch: &Value,
        before: &Value,
    ) -> Self {
        let key = ObjectKey::of(conn, target);
        BackupRecord {
            time: now(),
            context: key.context,
            server: conn.server.clone(),
            namespace: key.namespace,
            resource: key.resource,
            name: key.name,
            subresource: subresource.map(String::from),
            operation: operation.into(),
            patch: patch.clone(),
            before: before.clone(),
            state: WriteState::Pending,
            after_resource_version: None,
            after: None,
            provenance: Provenance::default(),
        }
    }

    /// The object this record belongs to.
    pub fn key(&self) -> ObjectKey {
        ObjectKey {
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            resource: self.resource.clone(),
            name: self.name.clone(),
        }
    }

    /// Records what the write produced, so undo can tell whether the object moved on since.
    fn written(&mut self, object: &Value) {
        self.state = WriteState::Written;
        self.after_resource_version =
            object.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from);
        self.after = Some(object.clone());
    }

    /// Records of older versions have no state: a resourceVersion after means written.
    fn normalized(mut self) -> Self {
        if self.after_resource_version.is_some() {
            self.state = WriteState::Written;
        }
        self
    }
}

/// A saved backup and its file.
#[derive(Debug, Clone)]
pub struct Backup {
    /// Where it is.
    pub file: PathBuf,
    /// What it holds.
    pub record: BackupRecord,
}

impl Backup {
    /// Its id among the object's backups (the file name without `.json`: the time stamp,
    /// with a counter when several share it), as a restore's [`Provenance::undoes`] names it.
    pub fn id(&self) -> String {
        self.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// How many backups of one object are kept, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// At most this many backups per object (the newest); 0 keeps any number.
    pub keep: usize,
    /// Backups older than this are removed; `None` keeps them forever.
    pub max_age: Option<Duration>,
}

impl Default for Retention {
    /// 20 backups per object, 30 days.
    fn default() -> Self {
        Retention { keep: 20, max_age: Some(Duration::from_secs(30 * 24 * 3600)) }
    }
}

impl Retention {
    /// The default policy, changed by `FIELDWISE_BACKUP_KEEP` (a count, 0 for no limit)
    /// and `FIELDWISE_BACKUP_MAX_AGE` (`30d`, `12h`, `90m`; 0 for no limit).
    pub fn from_env() -> Result<Self> {
        let mut policy = Retention::default();
        if let Ok(text) = std::env::var("FIELDWISE_BACKUP_KEEP") {
            policy.keep = parse_keep(&text, "FIELDWISE_BACKUP_KEEP")?;
        }
        if let Ok(text) = std::env::var("FIELDWISE_BACKUP_MAX_AGE") {
            policy.max_age = parse_age(&text, "FIELDWISE_BACKUP_MAX_AGE")?;
        }
        Ok(policy)
    }
}

/// Parses a backup count (`FIELDWISE_BACKUP_KEEP`, `--keep`).
pub fn parse_keep(text: &str, source: &str) -> Result<usize> {
    text.trim()
        .parse()
        .map_err(|_| Error::usage(format!("invalid {source} {text:?}: use a whole number (0 keeps any number)")))
}

/// Parses a backup age (`FIELDWISE_BACKUP_MAX_AGE`, `--max-age`): a number with
/// `d`, `h`, `m` or `s`; `0` means no limit.
pub fn parse_age(text: &str, source: &str) -> Result<Option<Duration>> {
    let text = text.trim();
    let bad = || {
        Error::usage(format!(
            "invalid {source} {text:?}: use a number with a unit (d, h, m, s), e.g. 30d; 0 keeps backups forever"
        ))
    };
    if text == "0" {
        return Ok(None);
    }
    let unit = text.chars().last().ok_or_else(bad)?;
    let seconds = match unit {
        'd' => 86_400,
        'h' => 3_600,
        'm' => 60,
        's' => 1,
        _ => return Err(bad()),
    };
    let number: u64 = text[..text.len() - 1].parse().map_err(|_| bad())?;
    Ok((number > 0).then(|| Duration::from_secs(number * seconds)))
}

/// What a prune removed and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Files removed.
    pub removed: usize,
    /// Files kept.
    pub kept: usize,
}

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
        let ns = if key.namespace.is_empty() { "_cluster" } else { key.namespace.as_str() };
        [key.context.as_str(), ns, key.resource.as_str(), key.name.as_str()]
            .iter()
            .fold(self.root.clone(), |p, part| p.join(encode_component(part)))
    }

    /// Saves the record of a write about to be sent; the write path completes or removes it.
    pub fn begin(&self, record: BackupRecord) -> Result<PendingBackup> {
        let file = self.save_new(&record)?;
        Ok(PendingBackup { file, record })
    }

    fn save_new(&self, record: &BackupRecord) -> Result<PathBuf> {
        let dir = self.dir_of(&record.key());
        create_private_dirs(&dir)?;
        let stamp = record.time.replace([':', '-'], "");
        let mut attempt = 0;
        while attempt < 1000 {
            let file = dir.join(if attempt == 0 { format!("{stamp}.json") } else { format!("{stamp}-{attempt}.json") });
            match create_file(&file, true) {
                Ok(mut handle) => {
                    write_record(&mut handle, record, &file)?;
                    return Ok(file);
                }
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

    /// Every backup of one object, oldest first. Backups written by older versions
    /// (whose directory names were not reversible) are found too, and only records
    /// of exactly this object are returned.
    pub fn list(&self, key: &ObjectKey) -> Result<Vec<Backup>> {
        let mut dirs = vec![self.dir_of(key)];
        let legacy = self.legacy_dir_of(key);
        if !dirs.contains(&legacy) {
            dirs.push(legacy);
        }
        let mut backups = Vec::new();
        for dir in dirs {
            backups.extend(read_dir_records(&dir)?.into_iter().filter(|b| b.record.key() == *key));
        }
        sort_oldest_first(&mut backups);
        Ok(backups)
    }

    /// Settles the `unknown` records of one object against its live version: a record
    /// whose pre-image has the live resourceVersion is of a write that never landed
    /// (the object has not changed since), so it is removed. Returns how many were.
    pub fn settle_unknown(&self, key: &ObjectKey, live: &Value) -> Result<usize> {
        let live_rv = live.pointer("/metadata/resourceVersion").and_then(Value::as_str);
        let mut settled = 0;
        for backup in self.list(key)? {
            let before_rv = backup.record.before.pointer("/metadata/resourceVersion").and_then(Value::as_str);
            if backup.record.state == WriteState::Unknown && live_rv.is_some() && before_rv == live_rv {
                fs::remove_file(&backup.file).map_err(|e| Error::local_io("remove the backup", &backup.file, e))?;
                settled += 1;
            }
        }
        Ok(settled)
    }

    /// Removes the backups of one object that `policy` does not keep.
    pub fn prune(&self, key: &ObjectKey, policy: Retention) -> Result<PruneReport> {
        let backups = self.list(key)?;
        let report = prune_sorted(&backups, policy);
        remove_empty_dirs(&self.dir_of(key), &self.root);
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
        for dir in object_dirs {
            let mut backups = read_dir_records(&dir)?;
            sort_oldest_first(&mut backups);
            // One directory may hold several objects only in the legacy layout.
            let mut keys: Vec<ObjectKey> = Vec::new();
            for key in backups.iter().map(|b| b.record.key()) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            for key in keys {
                let of_key: Vec<Backup> = backups.iter().filter(|b| b.record.key() == key).cloned().collect();
                let report = prune_sorted(&of_key, policy)?;
                total.removed += report.removed;
                total.kept += report.kept;
            }
            remove_empty_dirs(&dir, &self.root);
        }
        Ok(total)
    }

    /// Where versions before 0.2 put an object's backups (names with `_` for unsafe bytes).
    fn legacy_dir_of(&self, key: &ObjectKey) -> PathBuf {
        let ns = if key.namespace.is_empty() { "_cluster" } else { key.namespace.as_str() };
        [key.context.as_str(), ns, key.resource.as_str(), key.name.as_str()]
            .iter()
            .fold(self.root.clone(), |p, part| p.join(legacy_sanitize(part)))
    }
}

/// A backup saved before its write was sent. The write path ends it one of three
/// ways; dropping it without ending it leaves the record `pending` (as a crash would).
#[derive(Debug)]
pub struct PendingBackup {
    file: PathBuf,
    record: BackupRecord,
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
        rewrite(&self.file, &self.record)
    }

    /// The write happened and produced `object`.
    pub fn written(mut self, object: &Value) -> Result<PathBuf> {
        self.record.written(object);
        rewrite(&self.file, &self.record)?;
        Ok(self.file)
    }

    /// The write may have happened: keep the pre-image, say so.
    pub fn unknown(mut self) -> Result<PathBuf> {
        self.record.state = WriteState::Unknown;
        rewrite(&self.file, &self.record)?;
        Ok(self.file)
    }

    /// The write certainly did not happen: the record goes.
    pub fn discard(self) {
        fs::remove_file(&self.file).ok();
        if let Some(dir) = self.file.parent() {
            fs::remove_dir(dir).ok();
        }
    }
}

/// Percent-encodes a path component: reversible, and safe on every filesystem.
fn encode_component(part: &str) -> String {
    if part.is_empty() {
        return "%".into();
    }
    if part == "." || part == ".." {
        return part.replace('.', "%2E");
    }
    let mut out = String::with_capacity(part.len());
    for b in part.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn legacy_sanitize(part: &str) -> String {
    let cleaned: String =
        part.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "_".into()
    } else {
        cleaned
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
        let text = fs::read(&file).map_err(|e| Error::local_io("read", &file, e))?;
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

/// Prunes one object's backups, given oldest first.
fn prune_sorted(backups: &[Backup], policy: Retention) -> Result<PruneReport> {
    let now = jiff::Timestamp::now();
    let mut report = PruneReport::default();
    let count = backups.len();
    for (index, backup) in backups.iter().enumerate() {
        let newer = count - index - 1;
        let too_many = policy.keep > 0 && newer >= policy.keep;
        let too_old = policy.max_age.is_some_and(|max| age(&backup.record.time, now).is_some_and(|a| a > max));
        if too_many || too_old {
            fs::remove_file(&backup.file).map_err(|e| Error::local_io("remove the backup", &backup.file, e))?;
            report.removed += 1;
        } else {
            report.kept += 1;
        }
    }
    Ok(report)
}

fn age(time: &str, now: jiff::Timestamp) -> Option<Duration> {
    let then: jiff::Timestamp = time.parse().ok()?;
    let seconds = now.as_second() - then.as_second();
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// The directories four levels down (context/namespace/resource/name).
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

fn write_record(handle: &mut fs::File, record: &BackupRecord, file: &Path) -> Result<()> {
    let text = serde_json::to_vec_pretty(record).map_err(|e| Error::malformed("a backup record", e))?;
    handle.write_all(&text).and_then(|_| handle.sync_all()).map_err(|e| Error::local_io("write the backup", file, e))
}

/// Replaces a record's file in one step (a private temporary file, then a rename).
fn rewrite(file: &Path, record: &BackupRecord) -> Result<()> {
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    let fail = |e: std::io::Error| Error::local_io("update the backup", file, e);
    fs::remove_file(&tmp).ok();
    let mut handle = create_file(&tmp, true).map_err(fail)?;
    write_record(&mut handle, record, &tmp)?;
    fs::rename(&tmp, file).map_err(fail)
}

fn create_private_dirs(dir: &Path) -> Result<()> {
    create_dirs(dir).map_err(|e| Error::local_io("create the backup directory", dir, e))
}

/// The current time in RFC 3339 with milliseconds, UTC.
pub fn now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjectKey {
        ObjectKey {
            context: "ctx".into(),
            namespace: String::new(),
            resource: "clusterroles.rbac.authorization.k8s.io".into(),
            name: name.into(),
        }
    }

    fn record(time: &str, name: &str) -> BackupRecord {
        let k = key(name);
        BackupRecord {
            time: time.into(),
            context: k.context,
            server: "https://127.0.0.1:6443".into(),
            namespace: k.namespace,
            resource: k.resource,
            name: k.name,
            subresource: None,
            operation: "safe-patch merge".into(),
            patch: serde_json::json!({}),
            before: serde_json::json!({"data": {"k": "dg=="}}),
            state: WriteState::Pending,
            after_resource_version: None,
            after: None,
            provenance: Provenance::default(),
        }
    }

    fn temp_store(test: &str) -> (BackupStore, PathBuf) {
        let root = std::env::temp_dir().join(format!("fw-backup-{test}-{}", std::process::id()));
        fs::remove_dir_all(&root).ok();
        (BackupStore::at(&root), root)
    }

    #[test]
    fn backups_are_private_ordered_and_never_overwritten() {
        let (store, root) = temp_store("order");
        let a = store.begin(record("2026-01-01T00:00:00.000Z", "r")).unwrap();
        let b = store.begin(record("2026-01-01T00:00:00.000Z", "r")).unwrap();
        let c = store.begin(record("2025-12-31T00:00:00.000Z", "r")).unwrap();
        assert_ne!(a.file(), b.file());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(a.file()), 0o600);
            assert_eq!(mode(a.file().parent().unwrap()), 0o700);
        }
        let (fa, fb, fc) = (a.file().to_path_buf(), b.file().to_path_buf(), c.file().to_path_buf());
        let written = a.written(&serde_json::json!({"metadata": {"resourceVersion": "42"}})).unwrap();
        assert_eq!(written, fa);
        let listed: Vec<PathBuf> = store.list(&key("r")).unwrap().into_iter().map(|b| b.file).collect();
        assert_eq!(listed, vec![fc, fa.clone(), fb]);
        let first = store.list(&key("r")).unwrap();
        assert_eq!(first[1].record.after_resource_version.as_deref(), Some("42"));
        assert_eq!(first[1].record.state, WriteState::Written);
        assert_eq!(first[0].record.state, WriteState::Pending);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn names_that_sanitize_alike_never_share_backups() {
        let (store, root) = temp_store("keys");
        assert_ne!(store.dir_of(&key("demo:role")), store.dir_of(&key("demo_role")));
        assert!(store.dir_of(&key("demo:role")).ends_with("demo%3Arole"));
        store.begin(record("2026-01-01T00:00:00.000Z", "demo:role")).unwrap().written(&serde_json::json!({})).unwrap();
        store.begin(record("2026-01-02T00:00:00.000Z", "demo_role")).unwrap().written(&serde_json::json!({})).unwrap();
        // A legacy record of demo:role (same sanitized directory as demo_role) is found, and kept apart.
        let legacy = store.legacy_dir_of(&key("demo:role"));
        assert_eq!(legacy, store.dir_of(&key("demo_role")));
        let mut old = record("2025-01-01T00:00:00.000Z", "demo:role");
        old.after_resource_version = Some("7".into());
        fs::write(legacy.join("old.json"), serde_json::to_vec(&old).unwrap()).unwrap();
        let colon = store.list(&key("demo:role")).unwrap();
        let underscore = store.list(&key("demo_role")).unwrap();
        assert_eq!(colon.len(), 2);
        assert!(colon.iter().all(|b| b.record.name == "demo:role"));
        assert_eq!(colon[0].record.state, WriteState::Written, "legacy records with an after are written");
        assert_eq!(underscore.len(), 1);
        assert_eq!(underscore[0].record.name, "demo_role");
        for part in ["", ".", "..", "a/b", "ü"] {
            let encoded = encode_component(part);
            assert!(!encoded.is_empty() && encoded != "." && encoded != ".." && !encoded.contains('/'), "{part:?}");
        }
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn discard_unknown_and_rebase() {
        let (store, root) = temp_store("ends");
        let pending = store.begin(record("2026-01-01T00:00:00.000Z", "x")).unwrap();
        let file = pending.file().to_path_buf();
        pending.discard();
        assert!(!file.exists());
        assert!(store.list(&key("x")).unwrap().is_empty());
        let mut pending = store.begin(record("2026-01-01T00:00:00.000Z", "x")).unwrap();
        pending.rebase(&serde_json::json!({"v": 2}), &serde_json::json!({"p": 2})).unwrap();
        let file = pending.unknown().unwrap();
        let listed = store.list(&key("x")).unwrap();
        assert_eq!(listed[0].file, file);
        assert_eq!(listed[0].record.state, WriteState::Unknown);
        assert_eq!(listed[0].record.before, serde_json::json!({"v": 2}));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn unknown_records_of_writes_that_never_landed_are_settled() {
        let (store, root) = temp_store("settle");
        let mut landed = record("2026-01-01T00:00:00.000Z", "s");
        landed.before = serde_json::json!({"metadata": {"resourceVersion": "5"}});
        store.begin(landed).unwrap().unknown().unwrap();
        let mut lost = record("2026-01-02T00:00:00.000Z", "s");
        lost.before = serde_json::json!({"metadata": {"resourceVersion": "7"}});
        store.begin(lost).unwrap().unknown().unwrap();
        let live = serde_json::json!({"metadata": {"resourceVersion": "7"}});
        assert_eq!(store.settle_unknown(&key("s"), &live).unwrap(), 1);
        let left = store.list(&key("s")).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].record.before["metadata"]["resourceVersion"], "5", "the one that may have landed stays");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn retention_by_count_and_age() {
        let (store, root) = temp_store("prune");
        let recent = now();
        for time in ["2020-01-01T00:00:00.000Z", "2020-01-02T00:00:00.000Z"] {
            store.begin(record(time, "old")).unwrap().written(&serde_json::json!({})).unwrap();
        }
        for _ in 0..5 {
            store.begin(record(&recent, "many")).unwrap().written(&serde_json::json!({})).unwrap();
        }
        let policy = Retention { keep: 3, max_age: Some(Duration::from_secs(86_400)) };
        let report = store.prune(&key("many"), policy).unwrap();
        assert_eq!(report, PruneReport { removed: 2, kept: 3 });
        let all = store.prune_all(policy).unwrap();
        assert_eq!(all, PruneReport { removed: 2, kept: 3 });
        assert!(!store.dir_of(&key("old")).exists(), "empty object directories are removed");
        assert_eq!(parse_age("30d", "x").unwrap(), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("0", "x").unwrap(), None);
        assert!(parse_age("3w", "x").is_err() && parse_keep("-1", "x").is_err());
        fs::remove_dir_all(root).unwrap();
    }
}
