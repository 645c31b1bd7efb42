//! `undo` and `history`: the backups of pre-images that the write path keeps.
//!
//! `undo` restores a pre-image with a JSON merge patch planned against the live
//! object (lists restored whole) and written through the one write path: guarded,
//! backed up, re-planned when a controller writes in between. A write made
//! through a subresource (`scale`, `status`) is restored through the same one.

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::merge_patch;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::output::diff;
use fieldwise_kube::write::backup::{parse_age, parse_keep, Backup, BackupStore, ObjectKey, Retention, WriteState};
use fieldwise_kube::write::settle;
use fieldwise_kube::write::{Committed, GuardedWrite, PatchType, Planned, WriteOptions};
use serde_json::{Map, Value};

use crate::flow::EXIT_REFUSED;
use crate::restore::{changed_by_others, controller_owned_metadata, restorable};
use crate::FIELD_MANAGER;

/// Exit code when the object changed since the write being undone.
const EXIT_CHANGED: u8 = 3;

/// `kubectl safe-patch undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The object: TYPE/NAME or TYPE NAME.
    #[arg(value_name = "TYPE/NAME", required = true)]
    targets: Vec<String>,
    /// Restore the pre-image of the backup taken at this time (as `history` prints it, or a prefix of it).
    #[arg(long, value_name = "TIME")]
    to: Option<String>,
    /// Restore even if the object changed since the write being undone.
    #[arg(long)]
    force: bool,
    /// Restore even onto an object that was deleted and created again since the backup
    /// (another UID): the backup is of the old object, and its values replace the new one's.
    #[arg(long)]
    onto_recreated: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    yes: bool,
    /// Field manager recorded for the restoring write.
    #[arg(long, default_value = FIELD_MANAGER)]
    field_manager: String,
    /// Show Secret values in the diff.
    #[arg(long)]
    pub show_secrets: bool,
}

/// `kubectl safe-patch history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The object: TYPE/NAME or TYPE NAME (with --prune: optional; without, every object).
    #[arg(value_name = "TYPE/NAME", required_unless_present = "prune")]
    targets: Vec<String>,
    /// Remove the backups the retention policy does not keep, instead of listing them.
    #[arg(long)]
    prune: bool,
    /// With --prune: keep at most this many backups per object (default: $FIELDWISE_BACKUP_KEEP, else 20; 0 for any number).
    #[arg(long, value_name = "N", requires = "prune")]
    keep: Option<String>,
    /// With --prune: remove backups older than this, e.g. 30d, 12h (default: $FIELDWISE_BACKUP_MAX_AGE, else 30d; 0 for never).
    #[arg(long, value_name = "AGE", requires = "prune")]
    max_age: Option<String>,
}

async fn one_target(kube: &KubeFlags, targets: &[String]) -> Result<(Connection, ObjectRef)> {
    let conn = client::connect(kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let mut resolved = ObjectRef::from_args(targets, &catalog, &NamespaceScope::of(&conn))?;
    if resolved.len() != 1 || resolved[0].name.is_empty() {
        return Err(Error::usage("exactly one object is required: TYPE/NAME"));
    }
    Ok((conn, resolved.remove(0)))
}

/// Lists the backups of one object, or prunes them.
pub async fn history(kube: KubeFlags, args: HistoryArgs) -> Result<ExitCode> {
    let store = BackupStore::open_default()?;
    if args.prune {
        let mut policy = Retention::from_env()?;
        if let Some(keep) = &args.keep {
            policy.keep = parse_keep(keep, "--keep")?;
        }
        if let Some(age) = &args.max_age {
            policy.max_age = parse_age(age, "--max-age")?;
        }
        let (report, scope) = if args.targets.is_empty() {
            (store.prune_all(policy)?, "every object".to_string())
        } else {
            let (conn, target) = one_target(&kube, &args.targets).await?;
            (store.prune(&ObjectKey::of(&conn, &target), policy)?, target.display())
        };
        println!("Pruned {} backup(s) of {scope}; {} kept.", report.removed, report.kept);
        return Ok(ExitCode::SUCCESS);
    }
    let (conn, target) = one_target(&kube, &args.targets).await?;
    settle::abandoned_writes(&conn, &store).await?;
    let backups = store.list(&ObjectKey::of(&conn, &target))?;
    if backups.is_empty() {
        println!("No backups of {} on this cluster ({}).", target.display(), conn.server);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<26} {:<30} {:<14} {:<14} FILE", "TIME", "OPERATION", "BEFORE", "AFTER");
    for b in &backups {
        let before = b.record.before.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("-");
        let after = match (b.record.state, b.record.after_resource_version.as_deref()) {
            (WriteState::Written, Some(rv)) => rv,
            (WriteState::Unknown, _) => "(unknown)",
            _ => "(not confirmed)",
        };
        let operation = match &b.record.subresource {
            Some(sub) => format!("{} ({sub})", b.record.operation),
            None => b.record.operation.clone(),
        };
        println!("{:<26} {:<30} {:<14} {:<14} {}", b.record.time, operation, before, after, b.file.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Restores a pre-image with a guarded JSON merge patch (lists restored whole).
pub async fn undo(kube: KubeFlags, args: UndoArgs) -> Result<ExitCode> {
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let (conn, target) = one_target(&kube, &args.targets).await?;
    let display = target.display();
    let store = BackupStore::open_default()?;
    settle::abandoned_writes(&conn, &store).await?;
    let backups = store.list(&ObjectKey::of(&conn, &target))?;
    let chosen = choose(&backups, args.to.as_deref(), &display, &conn.server)?;
    let subresource = chosen.record.subresource.as_deref();
    if let Some(other) = subresource.filter(|s| !matches!(*s, "scale" | "status")) {
        return Err(Error::usage(format!(
            "that backup is of a write through the {other} subresource, which undo cannot restore; restore it with `kubectl safe-patch {display} --subresource {other}`"
        )));
    }
    let live = objects::get(&conn, &target, subresource).await?;
    let live_rv = live.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
    let untouched = chosen.record.after.as_ref().is_some_and(|after| !changed_by_others(after, &live, subresource));
    let uid = |object: &Value| object.pointer("/metadata/uid").and_then(Value::as_str).map(String::from);
    let recreated = match (uid(&chosen.record.before), uid(&live)) {
        (Some(then), Some(now)) if then != now => Some((then, now)),
        _ => None,
    };
    match (&recreated, chosen.record.after_resource_version.as_deref()) {
        (Some(_), _) if args.onto_recreated => {
            eprintln!("warning: {display} was created again since that backup; restoring the old object's values onto it (--onto-recreated)")
        }
        (Some((then, now)), _) => {
            eprintln!(
                "error: {display} was deleted and created again since that backup (UID {then} then, {now} now): the backup is of the old object, and restoring it would replace the new one's values; nothing was written. Use --onto-recreated to restore it onto the new object anyway."
            );
            return Ok(ExitCode::from(EXIT_CHANGED));
        }
        (None, Some(after)) if after == live_rv || untouched => {}
        _ if args.force => eprintln!("warning: {display} changed since that write; restoring anyway (--force)"),
        (None, Some(after)) => {
            eprintln!(
                "error: {display} changed since the write being undone (resourceVersion {after}, now {live_rv}); nothing was written. Use --force to restore anyway."
            );
            return Ok(ExitCode::from(EXIT_CHANGED));
        }
        // Refused for want of --force, like a finding that needs it (exit 2): nothing says the
        // object changed, only that the write was never confirmed.
        (None, None) => {
            eprintln!(
                "error: the write of that backup was never confirmed; use --force to restore its pre-image anyway"
            );
            return Ok(ExitCode::from(EXIT_REFUSED));
        }
    }
    let before = &chosen.record.before;
    let options = WriteOptions::new("safe-patch undo", &args.field_manager, &live, retry_budget)
        .subresource(subresource)
        .show_secrets(args.show_secrets);
    let writer = GuardedWrite::new(&conn, &target, options);
    let mut planner = |live: &Value| restore_plan(live, before, subresource);
    let preview = writer.plan(live, &mut planner)?;
    if preview.is_no_change() {
        println!("{display} restored (no change)");
        return Ok(ExitCode::SUCCESS);
    }
    // Show exactly what is restored: no status, no server metadata, no controller-owned keys.
    let keys = controller_owned_metadata(&preview.live);
    let (old, new) = (restorable(&preview.live, &keys, subresource), restorable(before, &keys, subresource));
    if let Some(d) = diff::human("live", &format!("backup {}", chosen.record.time), &old, &new, args.show_secrets) {
        eprint!("{d}");
    }
    if !prompt::approved(args.yes, &format!("Restore {display}?")) {
        eprintln!("Not restored.");
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    match writer.commit(preview, &mut planner).await? {
        Committed::Written(_) => println!("{display} restored to the backup of {}", chosen.record.time),
        Committed::NoChange(_) => println!("{display} restored (no change)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The backup to restore: the one taken at `to`, else the last confirmed write.
fn choose<'b>(backups: &'b [Backup], to: Option<&str>, display: &str, server: &str) -> Result<&'b Backup> {
    let chosen = match to {
        Some(time) => backups.iter().rev().find(|b| b.record.time.starts_with(time)),
        None => backups.iter().rev().find(|b| b.record.state == WriteState::Written),
    };
    chosen.ok_or_else(|| match to {
        Some(time) => {
            Error::usage(format!("no backup of {display} at {time}; see `kubectl safe-patch history {display}`"))
        }
        None if backups.is_empty() => Error::usage(format!("no backup of {display} to undo on this cluster ({server})")),
        None => Error::usage(format!(
            "no confirmed write of {display} to undo: its {} backup(s) are of writes whose outcome was never confirmed (see `kubectl safe-patch history {display}`); restore one with --to TIME --force",
            backups.len()
        )),
    })
}

/// The restore of `before` planned against `live`: a merge patch of the restorable fields.
fn restore_plan(live: &Value, before: &Value, subresource: Option<&str>) -> Result<Planned> {
    let keys = controller_owned_metadata(live);
    let patch =
        merge_patch::create_two_way(&restorable(live, &keys, subresource), &restorable(before, &keys, subresource))
            .map_err(|e| Error::semantics("the restore patch", e))?;
    let patch = if patch.is_null() { Value::Object(Map::new()) } else { patch };
    let result = merge_patch::try_apply(live, &patch).map_err(|e| Error::semantics("the restored object", e))?;
    Ok(Planned { patch_type: PatchType::Merge, patch, result, findings: Vec::new() })
}
