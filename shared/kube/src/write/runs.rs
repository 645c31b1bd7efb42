//! Bulk runs: every write of one command over many objects (`kubectl safe-patch -l ...`)
//! carries the run's id in its backup record ([`Provenance::run`]), so the run can be
//! listed (`history --runs`) and undone as one (`undo --run ID`, `undo --last-run`).
//!
//! A run is not stored apart: it is the set of backup records that name it, read from
//! the [`BackupStore`]. So a run is exactly what was written (a record exists for every
//! write that happened or may have), retention prunes it with its objects' backups, and
//! nothing can say a run holds an object it never wrote.

use std::time::{SystemTime, UNIX_EPOCH};

use fieldwise_core::write::restore::{next_to_undo, UndoStep};

use super::backup::{Backup, BackupStore, ClusterKey, Provenance, WriteState};
use crate::error::{Error, Result};

/// A fresh run id: the UTC time to the second and four hex digits, e.g.
/// `20260503-204512-7f3a`: sorts by time, short enough to type, and two runs started in
/// the same second still differ.
pub fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or_default();
    let salt = (nanos ^ std::process::id().rotate_left(16)) & 0xffff;
    format!("{}-{salt:04x}", now.strftime("%Y%m%d-%H%M%S"))
}

/// One bulk run, as its backup records tell it.
#[derive(Debug, Clone)]
pub struct Run {
    /// Its id.
    pub id: String,
    /// The kubeconfig context it wrote in (for people: the cluster is the key).
    pub context: String,
    /// When its first backup was taken.
    pub started: String,
    /// What it did (`safe-patch merge`, `safe-patch undo`).
    pub operation: String,
    /// For a run that undid another (`undo --run`): that run's id.
    pub undoes_run: Option<String>,
    /// Its backups, oldest first: one per object it wrote (or may have).
    pub backups: Vec<Backup>,
}

impl Run {
    /// How many of its writes are confirmed.
    pub fn written(&self) -> usize {
        self.count(WriteState::Written)
    }

    /// How many of its writes have an unknown outcome (the connection broke).
    pub fn unknown(&self) -> usize {
        self.count(WriteState::Unknown)
    }

    fn count(&self, state: WriteState) -> usize {
        self.backups.iter().filter(|b| b.record.state == state).count()
    }
}

/// The runs recorded on `cluster` (whatever context named it), oldest first.
pub fn runs(store: &BackupStore, cluster: &ClusterKey) -> Result<Vec<Run>> {
    let mut runs: Vec<Run> = Vec::new();
    for backup in store.all()? {
        if !cluster.holds(&backup.record) {
            continue;
        }
        let Provenance { run: Some(id), undoes_run, .. } = backup.record.provenance.clone() else { continue };
        match runs.iter_mut().find(|r| r.id == id) {
            Some(run) => {
                run.undoes_run = run.undoes_run.take().or(undoes_run);
                run.backups.push(backup);
            }
            None => runs.push(Run {
                id,
                context: backup.record.context.clone(),
                started: backup.record.time.clone(),
                operation: backup.record.operation.clone(),
                undoes_run,
                backups: vec![backup],
            }),
        }
    }
    runs.sort_by(|a, b| a.started.cmp(&b.started).then(a.id.cmp(&b.id)));
    Ok(runs)
}

/// The run `id` on `cluster`, refused clearly when there is none.
pub fn find(store: &BackupStore, cluster: &ClusterKey, id: &str) -> Result<Run> {
    runs(store, cluster)?.into_iter().find(|r| r.id == id).ok_or_else(|| {
        Error::usage(format!(
            "no run {id} on this cluster ({}) (its backups may have been pruned); see `kubectl safe-patch history --runs`",
            cluster.server
        ))
    })
}

/// The run `undo --last-run` undoes: the newest run still in effect, so that a second
/// `undo --last-run` steps back to the run before instead of re-doing the first
/// ([`next_to_undo`]). Runs that confirmed no write are left out.
pub fn last_to_undo(runs: &[Run]) -> Option<&Run> {
    let with_writes: Vec<&Run> = runs.iter().filter(|r| r.written() > 0).collect();
    let steps: Vec<UndoStep<'_>> =
        with_writes.iter().map(|r| UndoStep { id: &r.id, undoes: r.undoes_run.as_deref() }).collect();
    next_to_undo(&steps).map(|index| with_writes[index])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::backup::BackupRecord;
    use serde_json::json;

    fn record(name: &str, time: &str, run: &str, undoes_run: Option<&str>) -> BackupRecord {
        BackupRecord {
            time: time.into(),
            context: "ctx".into(),
            cluster: "c1".into(),
            server: "https://127.0.0.1:6443".into(),
            namespace: "ns".into(),
            resource: "configmaps".into(),
            name: name.into(),
            subresource: None,
            operation: if undoes_run.is_some() { "safe-patch undo" } else { "safe-patch merge" }.into(),
            patch: json!({}),
            patch_type: None,
            before: json!({}),
            state: WriteState::Pending,
            after_resource_version: None,
            after: None,
            provenance: Provenance { run: Some(run.into()), undoes: None, undoes_run: undoes_run.map(String::from) },
        }
    }

    #[test]
    fn runs_gather_their_records_across_objects_and_undo_steps_back() {
        let root = std::env::temp_dir().join(format!("fw-runs-{}", std::process::id()));
        std::fs::remove_dir_all(&root).ok();
        let store = BackupStore::at(&root);
        let written = |r: BackupRecord| {
            store
                .begin(r, "/api/v1/namespaces/ns/configmaps/x")
                .unwrap()
                .written(&json!({"metadata": {"resourceVersion": "9"}}))
        };
        for name in ["a", "b", "c"] {
            written(record(name, "2026-01-01T00:00:00.000Z", "r1", None)).unwrap();
        }
        for name in ["a", "b"] {
            written(record(name, "2026-01-02T00:00:00.000Z", "r2", None)).unwrap();
        }
        // A run that never confirmed a write does not count for --last-run.
        store.begin(record("z", "2026-01-03T00:00:00.000Z", "r3", None), "/x").unwrap().unknown().unwrap();
        // Another cluster that a kubeconfig names with the same context: not this cluster's run.
        let mut other_cluster = record("a", "2026-01-04T00:00:00.000Z", "elsewhere", None);
        other_cluster.cluster = "c2".into();
        written(other_cluster).unwrap();
        // A record of an earlier version names no cluster: its server says which it is.
        let mut earlier = record("d", "2026-01-01T00:00:00.000Z", "r1", None);
        (earlier.cluster, earlier.context, earlier.state) = (String::new(), "renamed".into(), WriteState::Written);
        earlier.after_resource_version = Some("9".into());
        let legacy_dir = root.join("renamed/ns/configmaps/d");
        std::fs::create_dir_all(&legacy_dir).unwrap();
        std::fs::write(legacy_dir.join("2026-01-01T00-00-00.000Z.json"), serde_json::to_vec(&earlier).unwrap())
            .unwrap();

        let here = ClusterKey { cluster: "c1".into(), server: "https://127.0.0.1:6443".into() };
        let all = runs(&store, &here).unwrap();
        assert_eq!(all.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["r1", "r2", "r3"]);
        assert_eq!((all[0].written(), all[1].written(), all[2].written(), all[2].unknown()), (4, 2, 0, 1));
        assert_eq!(last_to_undo(&all).map(|r| r.id.as_str()), Some("r2"));

        for name in ["a", "b"] {
            written(record(name, "2026-01-05T00:00:00.000Z", "u1", Some("r2"))).unwrap();
        }
        let all = runs(&store, &here).unwrap();
        assert_eq!(all[3].undoes_run.as_deref(), Some("r2"));
        assert_eq!(last_to_undo(&all).map(|r| r.id.as_str()), Some("r1"), "a second undo steps back further");
        assert_eq!(find(&store, &here, "r1").unwrap().backups.len(), 4);
        let err = find(&store, &here, "nope").unwrap_err().to_string();
        assert!(
            err.contains("no run nope on this cluster (https://127.0.0.1:6443)") && err.contains("history --runs"),
            "{err}"
        );
        let elsewhere = ClusterKey { cluster: "c2".into(), server: "https://10.0.0.1:6443".into() };
        assert_eq!(runs(&store, &elsewhere).unwrap().iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["elsewhere"]);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn run_ids_are_a_time_and_a_salt() {
        let id = new_run_id();
        assert_eq!(id.len(), "20260503-204512-7f3a".len(), "{id}");
        assert!(id.starts_with("20") && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'), "{id}");
        assert_eq!(id.matches('-').count(), 2, "{id}");
    }
}
