//! One write, the way every write of this plugin goes: dry-run when asked,
//! else back up the pre-image (0600), send the guarded patch, record the result.

use fieldwise_kube::backup::{BackupRecord, BackupStore};
use fieldwise_kube::client::Connection;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::DryRun;
use fieldwise_kube::target::ObjectRef;
use fieldwise_kube::write::{self, PatchRequest, PatchType};
use serde_json::Value;

/// A patch to send, with the object it was computed from.
pub struct Write<'a> {
    /// The object.
    pub target: &'a ObjectRef,
    /// The live object the patch was computed from (the backup's pre-image).
    pub before: &'a Value,
    /// The patch flavour.
    pub patch_type: PatchType,
    /// The patch; it carries its own resourceVersion guard.
    pub body: &'a Value,
    /// The field manager of the request.
    pub field_manager: &'a str,
    /// `last-applied repair`, `last-applied migrate`: recorded in the backup.
    pub operation: &'a str,
}

/// Sends `write` (or not, for `--dry-run=client`); returns the object the server answered with
/// (for client dry-runs, the pre-image).
pub async fn send(conn: &Connection, write: &Write<'_>, dry_run: DryRun, store: &BackupStore) -> Result<Value> {
    let request = |dry_run| PatchRequest {
        patch_type: write.patch_type,
        body: write.body,
        field_manager: write.field_manager,
        dry_run,
        force: false,
        subresource: None,
    };
    match dry_run {
        DryRun::Client => return Ok(write.before.clone()),
        DryRun::Server => return write::patch(conn, write.target, &request(true)).await,
        DryRun::None => {}
    }
    let mut record = BackupRecord::before_write(conn, write.target, write.operation, write.body, write.before);
    let file = store.save(&record)?;
    match write::patch(conn, write.target, &request(false)).await {
        Ok(written) => {
            record.written(&written);
            store.update(&file, &record)?;
            Ok(written)
        }
        Err(e) => {
            // The server answered, so nothing was written: the backup is of nothing. After a
            // transport error the write may still land, so its pre-image is kept.
            if matches!(e, Error::Api { .. }) {
                std::fs::remove_file(&file).ok();
            }
            Err(e)
        }
    }
}

/// The object's resourceVersion.
pub fn resource_version(object: &Value) -> Option<&str> {
    object.pointer("/metadata/resourceVersion").and_then(Value::as_str)
}

/// How many times a write is recomputed after a resourceVersion conflict.
pub const MAX_ATTEMPTS: u32 = 5;
