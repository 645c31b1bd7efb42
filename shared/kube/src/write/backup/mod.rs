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
//! removes the `unknown` records its live version shows never landed.
//!
//! Backups are pruned by a [`Retention`] policy after each write of an object,
//! and on demand (`kubectl safe-patch history --prune`).
//!
//! - [`record`]: what one record holds ([`BackupRecord`]) and which object it is of ([`ObjectKey`]).
//! - [`store`]: the directory tree ([`BackupStore`]) and the record of a write in flight ([`PendingBackup`]).
//! - `atomic`: records appear whole or not at all (a temporary file, then a link or rename).
//! - [`retention`]: how many records are kept, and for how long ([`Retention`]).

mod atomic;
pub mod record;
pub mod retention;
pub mod store;

pub use record::{now, Backup, BackupRecord, ObjectKey, WriteState};
pub use retention::{parse_age, parse_keep, PruneReport, Retention};
pub use store::{BackupStore, PendingBackup};

#[cfg(test)]
mod tests;
