//! Pre-images saved before every write, so any change can be undone.
//!
//! One JSON file per write, readable by the user alone (0600, in 0700
//! directories), because the pre-image of a Secret holds its values:
//! `<data dir>/backups/<cluster>/<namespace or _cluster>/<resource>/<name>/<time>.json`,
//! where `<cluster>` is the cluster's identity (its host and port and a hash of its URL
//! and CA: [`crate::conn::client::cluster_identity`]), never the context's name, which
//! another kubeconfig may give to another cluster.
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
//! removes the `unknown` records its live version shows never landed, and the next
//! write on the cluster settles the `pending` records of a process that died.
//!
//! Backups are pruned by a [`Retention`] policy after each write of an object,
//! and on demand (`kubectl safe-patch history --prune`).
//!
//! - [`record`]: what one record holds ([`BackupRecord`]) and which object it is of ([`ObjectKey`]).
//! - [`store`]: the directory tree ([`BackupStore`]) and the record of a write in flight ([`PendingBackup`]).
//! - `atomic`: records appear whole or not at all (a temporary file, then a link or rename).
//! - [`in_flight`]: the journal of writes in flight, so a dead process's `pending` records are settled.
//! - [`retention`]: how many records are kept, and for how long ([`Retention`]).

mod atomic;
pub mod in_flight;
mod names;
pub mod record;
pub mod retention;
pub mod store;

pub use in_flight::Abandoned;
pub use record::{now, taken_at, Backup, BackupRecord, ClusterKey, ObjectKey, Provenance, WriteState};
pub use retention::{parse_age, parse_keep, PruneReport, Retention};
pub use store::{BackupStore, PendingBackup, Settled};

/// Runs backup file work (each record is synced to disk before its write is sent) on
/// tokio's blocking pool: on the runtime's one thread, a bulk run's writes would wait for
/// the disk one after another (measured: 113 repairs/s at 10,000 objects, the fsyncs
/// in series), instead of side by side.
pub(crate) async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => panic!("backup file task stopped: {e}"),
    }
}

#[cfg(test)]
mod tests;
