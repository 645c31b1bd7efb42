//! Settling the backup records a process that died left `pending` (see
//! [`crate::write::backup::in_flight`]): each is checked against its object as it is now,
//! once per command, before the command's first write and by `history` and `undo`.

use tokio::sync::OnceCell;

use crate::api::objects;
use crate::conn::client::Connection;
use crate::error::Result;
use crate::write::backup::{off_thread, BackupStore, Settled};

/// How many abandoned records were settled, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SettledCount {
    /// Of writes that never landed: removed.
    pub removed: usize,
    /// Of writes that may have landed: marked `unknown`.
    pub unknown: usize,
}

/// Settles the records of this cluster's writes whose process died. An object that cannot be
/// read now (the server is away) keeps its record for a later command.
pub async fn abandoned_writes(conn: &Connection, store: &BackupStore) -> Result<SettledCount> {
    let found = off_thread({
        let (store, cluster) = (store.clone(), conn.cluster.clone());
        move || store.abandoned(&cluster)
    })
    .await;
    let mut count = SettledCount::default();
    for abandoned in found {
        let live = match objects::get_path(conn, &abandoned.read).await {
            Ok(live) => Some(live),
            Err(e) if e.is_not_found() => None,
            Err(_) => continue,
        };
        let settled = off_thread({
            let store = store.clone();
            move || store.settle_abandoned(abandoned, live.as_ref())
        })
        .await?;
        match settled {
            Settled::Removed => count.removed += 1,
            Settled::MarkedUnknown => count.unknown += 1,
            Settled::AlreadySettled => {}
        }
    }
    Ok(count)
}

/// [`abandoned_writes`] once per process (the first write waits for it, the others do not
/// repeat it); a failure is a warning: the records stay for a later command.
pub async fn abandoned_writes_once(conn: &Connection, store: &BackupStore) {
    static DONE: OnceCell<()> = OnceCell::const_new();
    DONE.get_or_init(|| async {
        if let Err(e) = abandoned_writes(conn, store).await {
            eprintln!("warning: the backups of an earlier command that was stopped were not settled: {e}");
        }
    })
    .await;
}
