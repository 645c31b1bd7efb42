//! Pre-images saved before every write, so any change can be undone.
//!
//! One JSON file per write, readable by the user alone (0600, in 0700
//! directories), because the pre-image of a Secret holds its values:
//! `<data dir>/fieldwise/backups/<context>/<namespace or _cluster>/<resource>/<name>/<time>.json`.
//! The data dir is `$FIELDWISE_DATA_DIR`, else the platform's user data dir.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

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
    /// The tool and flavour of the write (`safe-patch strategic`, `last-applied repair`...).
    pub operation: String,
    /// The patch that was sent.
    pub patch: Value,
    /// The object before the write.
    pub before: Value,
    /// The resourceVersion the write produced, once known: undo refuses if the object moved on.
    pub after_resource_version: Option<String>,
    /// The object the write produced, once known: undo compares it with the live object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

impl BackupRecord {
    /// The record of a write about to happen to `target`: `before` is the object as read.
    pub fn before_write(
        conn: &crate::client::Connection,
        target: &crate::target::ObjectRef,
        operation: impl Into<String>,
        patch: &Value,
        before: &Value,
    ) -> Self {
        BackupRecord {
            time: now(),
            context: conn.context.clone(),
            server: conn.server.clone(),
            namespace: target.namespace.clone().unwrap_or_default(),
            resource: target.resource.plural_group(),
            name: target.name.clone(),
            operation: operation.into(),
            patch: patch.clone(),
            before: before.clone(),
            after_resource_version: None,
            after: None,
        }
    }

    /// Records what the write produced, so undo can tell whether the object moved on since.
    pub fn written(&mut self, object: &Value) {
        self.after_resource_version =
            object.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from);
        self.after = Some(object.clone());
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

/// The directory tree of backups.
#[derive(Debug, Clone)]
pub struct BackupStore {
    root: PathBuf,
}

impl BackupStore {
    /// The store at its default location (see the module docs).
    pub fn open_default() -> Result<Self> {
        let base = match std::env::var_os("FIELDWISE_DATA_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => dirs::data_dir().map(|d| d.join("fieldwise")).ok_or_else(|| {
                Error::Other("cannot find a data directory for backups; set FIELDWISE_DATA_DIR".into())
            })?,
        };
        Ok(BackupStore { root: base.join("backups") })
    }

    /// A store rooted at `root` (for tests).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        BackupStore { root: root.into() }
    }

    fn dir_for(&self, context: &str, namespace: &str, resource: &str, name: &str) -> PathBuf {
        let ns = if namespace.is_empty() { "_cluster" } else { namespace };
        [context, ns, resource, name].iter().fold(self.root.clone(), |p, part| p.join(sanitize(part)))
    }

    /// Saves a record; returns its file. Never overwrites an existing backup.
    pub fn save(&self, record: &BackupRecord) -> Result<PathBuf> {
        let dir = self.dir_for(&record.context, &record.namespace, &record.resource, &record.name);
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::Other(format!("cannot create the backup directory {}: {e}", dir.display())))?;
        let stamp = record.time.replace([':', '-'], "");
        for attempt in 0..1000 {
            let file = dir.join(if attempt == 0 { format!("{stamp}.json") } else { format!("{stamp}-{attempt}.json") });
            let opened = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&file);
            match opened {
                Ok(mut handle) => {
                    let text = serde_json::to_vec_pretty(record).map_err(|e| Error::Other(e.to_string()))?;
                    handle
                        .write_all(&text)
                        .and_then(|_| handle.sync_all())
                        .map_err(|e| Error::Other(format!("cannot write the backup {}: {e}", file.display())))?;
                    return Ok(file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::Other(format!("cannot write the backup {}: {e}", file.display()))),
            }
        }
        Err(Error::Other(format!("too many backups with the same time in {}", dir.display())))
    }

    /// Rewrites a saved record (to record the resourceVersion the write produced).
    pub fn update(&self, backup: &Path, record: &BackupRecord) -> Result<()> {
        let text = serde_json::to_vec_pretty(record).map_err(|e| Error::Other(e.to_string()))?;
        let tmp = backup.with_extension("json.tmp");
        let mut handle = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| Error::Other(format!("cannot update the backup {}: {e}", backup.display())))?;
        handle
            .write_all(&text)
            .map_err(|e| Error::Other(format!("cannot update the backup {}: {e}", backup.display())))?;
        fs::rename(&tmp, backup)
            .map_err(|e| Error::Other(format!("cannot update the backup {}: {e}", backup.display())))
    }

    /// Every backup of one object, oldest first.
    pub fn list(&self, context: &str, namespace: &str, resource: &str, name: &str) -> Result<Vec<Backup>> {
        let dir = self.dir_for(context, namespace, resource, name);
        let Ok(entries) = fs::read_dir(&dir) else { return Ok(Vec::new()) };
        let mut backups = Vec::new();
        for entry in entries.flatten() {
            let file = entry.path();
            if file.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = fs::read(&file).map_err(|e| Error::Other(format!("cannot read {}: {e}", file.display())))?;
            let record: BackupRecord = serde_json::from_slice(&text)
                .map_err(|e| Error::Other(format!("the backup {} is damaged: {e}", file.display())))?;
            backups.push(Backup { file, record });
        }
        // Same time: `T.json` was written before `T-1.json`, which sorts first as text.
        let name_len = |b: &Backup| b.file.as_os_str().len();
        backups.sort_by(|a, b| {
            a.record.time.cmp(&b.record.time).then(name_len(a).cmp(&name_len(b))).then(a.file.cmp(&b.file))
        });
        Ok(backups)
    }
}

/// The current time in RFC 3339 with milliseconds, UTC.
pub fn now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Keeps a path component a single, safe directory name.
fn sanitize(part: &str) -> String {
    let cleaned: String =
        part.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "_".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn record(time: &str) -> BackupRecord {
        BackupRecord {
            time: time.into(),
            context: "ctx".into(),
            server: "https://127.0.0.1:6443".into(),
            namespace: "ns".into(),
            resource: "secrets".into(),
            name: "s".into(),
            operation: "safe-patch merge".into(),
            patch: serde_json::json!({}),
            before: serde_json::json!({"data": {"k": "dg=="}}),
            after_resource_version: None,
            after: None,
        }
    }

    #[test]
    fn backups_are_private_ordered_and_never_overwritten() {
        let root = std::env::temp_dir().join(format!("fw-backup-test-{}", std::process::id()));
        let store = BackupStore::at(&root);
        let a = store.save(&record("2026-01-01T00:00:00.000Z")).unwrap();
        let b = store.save(&record("2026-01-01T00:00:00.000Z")).unwrap();
        let c = store.save(&record("2025-12-31T00:00:00.000Z")).unwrap();
        assert_ne!(a, b);
        assert_eq!(fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(a.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        let listed: Vec<PathBuf> =
            store.list("ctx", "ns", "secrets", "s").unwrap().into_iter().map(|b| b.file).collect();
        assert_eq!(listed, vec![c, a.clone(), b]);
        let mut updated = record("2026-01-01T00:00:00.000Z");
        updated.after_resource_version = Some("42".into());
        store.update(&a, &updated).unwrap();
        assert_eq!(fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
        let first = store.list("ctx", "ns", "secrets", "s").unwrap();
        assert_eq!(first[1].record.after_resource_version.as_deref(), Some("42"));
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn path_components_cannot_escape_the_store() {
        assert_eq!(sanitize("../../etc"), ".._.._etc");
        assert_eq!(sanitize(".."), "_");
        assert_eq!(sanitize("a/b"), "a_b");
    }
}
