//! The restore of one object from its backup, as both undos make it: whether the object
//! may be restored (created again, changed since the write, the write never confirmed),
//! the guarded write that restores it, and the plan of that write ([`restore_plan`]).
//! The undo of one object ([`crate::undo`]) and the undo of a whole run
//! ([`crate::undo_run`]) differ only in how they choose the backups, ask and report.

use std::time::Duration;

use fieldwise_core::ownership::patch_sets_managed_fields;
use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_core::write::restore::{
    overlapping_change, plan_restore, recreated, replay, since_the_write, SinceTheWrite,
};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::write::backup::{Backup, Provenance};
use fieldwise_kube::write::{GuardedWrite, PatchType, Planned, WriteOptions};
use serde_json::Value;

use crate::undo_args::UndoArgs;

/// The subresource the backup's write went through, if undo can restore through it.
pub fn restorable_subresource<'b>(backup: &'b Backup, display: &str) -> Result<Option<&'b str>> {
    match backup.record.subresource.as_deref() {
        Some(other) if !matches!(other, "scale" | "status") => Err(Error::usage(format!(
            "that backup is of a write through the {other} subresource, which undo cannot restore; restore it with `kubectl safe-patch {display} --subresource {other}`"
        ))),
        subresource => Ok(subresource),
    }
}

/// Why an object may not be restored, and the exit code a single undo ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The `error:` line.
    pub message: String,
    /// 3 when the object changed or was created again since the write, 2 when the write
    /// was never confirmed (refused for want of `--force`, like a finding that needs it).
    pub exit_code: u8,
}

/// Why the object may not be restored: created again since the backup (another UID)
/// without `--onto-recreated`, which `--force` does not cover; changed since the write in a
/// field the restore writes back (into `restored`, the planned result), or the write never
/// confirmed, without `--force`. A change since the write of other fields alone does not
/// refuse: the restore is guarded by exactly the fields it writes back. `None` to go ahead
/// (with a warning when a flag lets it).
pub fn refusal(backup: &Backup, live: &Value, restored: &Value, args: &UndoArgs, display: &str) -> Option<Refusal> {
    let record = &backup.record;
    if let Some((then, now)) = recreated(&record.before, live) {
        if args.onto_recreated {
            eprintln!("warning: {display} was created again since that backup; restoring the old object's values onto it (--onto-recreated)");
            return None;
        }
        return Some(Refusal {
            message: format!(
                "error: {display} was deleted and created again since that backup (UID {then} then, {now} now): the backup is of the old object, and restoring it would replace the new one's values; nothing was written. Use --onto-recreated to restore it onto the new object anyway."
            ),
            exit_code: exit_code::FOUND,
        });
    }
    let since = since_the_write(
        record.after_resource_version.as_deref(),
        record.after.as_ref(),
        live,
        record.subresource.as_deref(),
    );
    let (why, exit_code) = match since {
        SinceTheWrite::Untouched => return None,
        // A write that set the managers is undone by putting them back: any change since counts.
        SinceTheWrite::Changed { .. } if !sets_managers(backup) && record.after.is_some() => {
            let after = record.after.as_ref()?;
            let schema = builtin();
            let ty = Gvk::of_object(&record.before).and_then(|gvk| schema.root(&gvk));
            let change = overlapping_change(after, live, restored, record.subresource.as_deref(), schema, ty)?;
            let by = match change.changed_by.as_slice() {
                [] => "by a writer managedFields does not name".to_string(),
                managers => format!("by {}", managers.join(", ")),
            };
            (
                format!(
                    "{display} changed since the write being undone at {}, {by}, and the restore would write it back; nothing was written. Use --force to restore anyway.",
                    change.field
                ),
                exit_code::FOUND,
            )
        }
        SinceTheWrite::Changed { written, now } => (
            format!(
                "{display} changed since the write being undone (resourceVersion {written}, now {now}); nothing was written. Use --force to restore anyway."
            ),
            exit_code::FOUND,
        ),
        SinceTheWrite::NeverConfirmed => (
            format!("the write of {display} in that backup was never confirmed; use --force to restore its pre-image anyway"),
            exit_code::REFUSED,
        ),
    };
    if args.force {
        eprintln!("warning: {display} changed since that write, or it was never confirmed; restoring anyway (--force)");
        return None;
    }
    Some(Refusal { message: format!("error: {why}"), exit_code })
}

/// The guarded write of a restore of `backup` onto `target` (the record names what it undoes).
pub fn restore_writer<'a>(
    conn: &'a Connection,
    target: &'a ObjectRef,
    backup: &'a Backup,
    args: &'a UndoArgs,
    retry_budget: Duration,
    provenance: Provenance,
) -> GuardedWrite<'a> {
    let provenance = Provenance { undoes: Some(backup.id()), ..provenance };
    let options = WriteOptions::new("safe-patch undo", &args.field_manager, &backup.record.before, retry_budget)
        .subresource(backup.record.subresource.as_deref())
        .show_secrets(args.show_secrets);
    GuardedWrite::new(conn, target, options).with_provenance(provenance)
}

/// The restore of `backup` planned against `live` ([`plan_restore`]): what its write
/// changed, taken back (the write's patch replayed on the pre-image, else what the server
/// answered); with `whole`, the whole pre-image put back. Onto an object created again since
/// the backup (which only `--onto-recreated` lets through) the whole pre-image too: the write
/// was of the old object, so what it changed says nothing about the new one.
pub fn restore_plan(live: &Value, backup: &Backup, whole: bool) -> Result<Planned> {
    let record = &backup.record;
    let whole = whole || recreated(&record.before, live).is_some();
    let schema = builtin();
    let ty = Gvk::of_object(&record.before).and_then(|gvk| schema.root(&gvk));
    let patch_type = record.patch_type.as_deref().and_then(|name| name.parse::<PatchType>().ok());
    let replayed = patch_type.and_then(|t| replay(&record.before, &record.patch, t, schema, ty));
    let written = if whole { None } else { replayed.as_ref().or(record.after.as_ref()) };
    plan_restore(live, &record.before, written, record.subresource.as_deref(), sets_managers(backup))
        .map_err(|e| Error::semantics("the restore patch", e))
}

/// Whether the write `backup` holds set `metadata.managedFields` itself (`kubectl owners
/// transfer`, `last-applied migrate`, a patch of them): its undo puts the managers back.
pub fn sets_managers(backup: &Backup) -> bool {
    patch_sets_managed_fields(&backup.record.patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Parser)]
    struct Undo {
        #[command(flatten)]
        args: UndoArgs,
    }

    fn backup(after_resource_version: Option<&str>) -> Backup {
        let record = json!({
            "time": "2026-11-27T20:00:00.000Z", "context": "c", "server": "https://127.0.0.1:6443",
            "namespace": "shop", "resource": "configmaps", "name": "web", "operation": "safe-patch merge",
            "patch": {"data": {"k": "1"}}, "before": {"metadata": {"name": "web", "resourceVersion": "4"}},
            "afterResourceVersion": after_resource_version,
        });
        Backup { file: "20261127T200000.000Z.json".into(), record: serde_json::from_value(record).unwrap() }
    }

    #[test]
    fn every_refusal_names_the_object() {
        let args = Undo::parse_from(["undo", "--run", "r1"]).args;
        let live = json!({"metadata": {"name": "web", "resourceVersion": "6"}});
        let display = "configmap/web in namespace shop";
        let never = refusal(&backup(None), &live, &live, &args, display).expect("refused");
        assert_eq!(
            never,
            Refusal {
                message: "error: the write of configmap/web in namespace shop in that backup was never confirmed; use --force to restore its pre-image anyway".into(),
                exit_code: exit_code::REFUSED,
            }
        );
        let changed = refusal(&backup(Some("5")), &live, &live, &args, display).expect("refused");
        assert!(changed.message.starts_with("error: configmap/web in namespace shop changed since"), "{changed:?}");
    }
}
