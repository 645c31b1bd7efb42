//! One backup record: the pre-image of a write, what was sent, and what became of it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Which cluster ([`Connection::cluster`](crate::conn::client::Connection::cluster)):
    /// backups are kept per cluster, never per context name, which another kubeconfig may
    /// give to another cluster.
    pub cluster: String,
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// `plural.group` of the object's type.
    pub resource: String,
    /// The object's name.
    pub name: String,
    /// The kubeconfig context: earlier versions kept backups under its name, and
    /// those records count as this cluster's only when they name [`ObjectKey::server`].
    pub context: String,
    /// The server URL.
    pub server: String,
}

impl ObjectKey {
    /// The key of `target` on the cluster of `conn`.
    pub fn of(conn: &crate::conn::client::Connection, target: &crate::api::reference::ObjectRef) -> Self {
        ObjectKey {
            cluster: conn.cluster.clone(),
            namespace: target.namespace.clone().unwrap_or_default(),
            resource: target.resource.plural_group(),
            name: target.name.clone(),
            context: conn.context.clone(),
            server: conn.server.clone(),
        }
    }

    /// Whether `record` is a backup of this object on this cluster. Records of earlier
    /// versions name no cluster: theirs is the server they name.
    pub fn is_of(&self, record: &BackupRecord) -> bool {
        self.cluster_key().holds(record)
            && record.namespace == self.namespace
            && record.resource == self.resource
            && record.name == self.name
    }
}

impl ObjectKey {
    /// The cluster this object is on.
    pub fn cluster_key(&self) -> ClusterKey {
        ClusterKey { cluster: self.cluster.clone(), server: self.server.clone() }
    }
}

/// Which cluster backup records are of, for the queries that span objects (a bulk run's
/// records, [`crate::write::runs`]): its identity, never the context's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterKey {
    /// The cluster's identity ([`Connection::cluster`](crate::conn::client::Connection::cluster)).
    pub cluster: String,
    /// Its server URL: records of earlier versions name no identity, only the server.
    pub server: String,
}

impl ClusterKey {
    /// The cluster of `conn`.
    pub fn of(conn: &crate::conn::client::Connection) -> Self {
        ClusterKey { cluster: conn.cluster.clone(), server: conn.server.clone() }
    }

    /// Whether `record` is of a write on this cluster. Records of earlier versions name no
    /// cluster: theirs is the server they name.
    pub fn holds(&self, record: &BackupRecord) -> bool {
        if record.cluster.is_empty() {
            record.server == self.server
        } else {
            record.cluster == self.cluster
        }
    }
}

/// What is saved before a write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupRecord {
    /// When the backup was taken (RFC 3339, UTC).
    pub time: String,
    /// The kubeconfig context (for people reading the record; the cluster is the key).
    pub context: String,
    /// Which cluster ([`ObjectKey::cluster`]); empty in records of earlier versions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster: String,
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
    /// Its kind (`merge`, `strategic`, `json`, `apply`), so undo can replay it on `before`
    /// and take back this write's change alone ([`fieldwise_core::write::restore::replay`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
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
/// ([`fieldwise_core::write::restore::next_to_undo`]). Empty for a single write.
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
            cluster: key.cluster,
            server: key.server,
            namespace: key.namespace,
            resource: key.resource,
            name: key.name,
            subresource: subresource.map(String::from),
            operation: operation.into(),
            patch: patch.clone(),
            patch_type: None,
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
            cluster: self.cluster.clone(),
            namespace: self.namespace.clone(),
            resource: self.resource.clone(),
            name: self.name.clone(),
            context: self.context.clone(),
            server: self.server.clone(),
        }
    }

    /// Records what the write produced, so undo can tell whether the object moved on since.
    pub(super) fn written(&mut self, object: &Value) {
        self.state = WriteState::Written;
        self.after_resource_version =
            object.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(String::from);
        self.after = Some(object.clone());
    }

    /// Records of older versions have no state: a resourceVersion after means written.
    pub(super) fn normalized(mut self) -> Self {
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

/// The backup of `object` (kubectl's name, for messages) that `--to TIME` names among
/// `backups`: the one whose id is `time`, else the one whose time stamp (as `history` prints
/// it) starts with `time`. `None` when none does. A prefix that several backups start with is
/// refused with their times listed: taking the newest silently could restore the wrong one.
pub fn taken_at<'b>(backups: &'b [Backup], time: &str, object: &str) -> crate::error::Result<Option<&'b Backup>> {
    if let Some(exact) = backups.iter().find(|b| b.id() == time) {
        return Ok(Some(exact));
    }
    let matching: Vec<&Backup> = backups.iter().filter(|b| b.record.time.starts_with(time)).collect();
    match matching.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        several => {
            // As `history` prints them; two taken in the same millisecond by their ids.
            let shared = |b: &Backup| several.iter().filter(|o| o.record.time == b.record.time).count() > 1;
            let times: Vec<String> = several
                .iter()
                .map(|b| if shared(b) { format!("{} (id {})", b.record.time, b.id()) } else { b.record.time.clone() })
                .collect();
            Err(crate::error::Error::usage(format!(
                "--to {time} matches {} backups of {object}: {}; give more of the time, so that it matches one",
                several.len(),
                times.join(", ")
            )))
        }
    }
}

/// The current time in RFC 3339 with milliseconds, UTC.
pub fn now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
