//! `undo`: take back what a write changed, from the pre-image its backup holds (with
//! `--to TIME`, put the whole pre-image back), through the one write path (guarded,
//! backed up, re-planned when a controller writes in between). A change another writer
//! made just before the write landed is kept. A write made through a subresource
//! (`scale`, `status`) is restored through the same one.
//!
//! What to restore and how is the core's ([`fieldwise_core::write::restore`]): the backup to
//! undo (an undo stack: a second undo steps back further), whether the object was
//! changed by someone else since that write, and the merge patch that restores it.
//! This module chooses the backup, shows the restore, asks, and writes; whether and
//! how one object is restored is [`crate::restore`], shared with the undo of a whole
//! bulk run, to which [`undo`] hands `--run` and `--last-run` ([`crate::undo_run`]).

use std::process::ExitCode;

use fieldwise_core::write::restore::{next_to_undo, restore_sides, UndoStep};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::diff;
use fieldwise_kube::write::backup::{taken_at, Backup, BackupStore, ObjectKey, Provenance, WriteState};
use fieldwise_kube::write::settle;
use fieldwise_kube::write::{Committed, DryRun, WriteOptions};
use serde_json::Value;

use crate::restore::{refusal, restorable_subresource, restore_plan, restore_writer, sets_managers};
use crate::undo_args::UndoArgs;

/// Connects and resolves exactly one `TYPE/NAME`.
pub async fn one_target(kube: &KubeFlags, targets: &[String]) -> Result<(Connection, ObjectRef)> {
    let conn = client::connect(kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let mut resolved = ObjectRef::from_args(targets, &catalog, &NamespaceScope::of(&conn))?;
    if resolved.len() != 1 || resolved[0].name.is_empty() {
        return Err(Error::usage("exactly one object is required: TYPE/NAME"));
    }
    Ok((conn, resolved.remove(0)))
}

/// Restores one object's pre-image, or (`--run`, `--last-run`) every object of a run.
pub async fn undo(kube: KubeFlags, args: UndoArgs) -> Result<ExitCode> {
    if args.run.is_some() || args.last_run {
        return crate::undo_run::undo_run(kube, args).await;
    }
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let (conn, target) = one_target(&kube, &args.targets).await?;
    let display = target.display();
    let store = BackupStore::open_default()?;
    settle::abandoned_writes(&conn, &store).await?;
    let backups = store.list(&ObjectKey::of(&conn, &target))?;
    let chosen = choose(&backups, args.to.as_deref(), &display, &conn.server)?;
    let subresource = restorable_subresource(chosen, &display)?;
    let live = objects::get(&conn, &target, subresource).await?;
    let writer = restore_writer(&conn, &target, chosen, &args, retry_budget, Provenance::default());
    // --to names a point in time: the whole pre-image; a plain undo takes back one write.
    let whole = args.to.is_some();
    let mut planner = |live: &Value| restore_plan(live, chosen, whole);
    let mut preview = writer.plan(live, &mut planner)?;
    if let Some(refusal) = refusal(chosen, &preview.live, &preview.planned.result, &args, &display) {
        eprintln!("{}", refusal.message);
        return Ok(exit_code::exit(refusal.exit_code));
    }
    if preview.is_no_change() {
        println!("{display} restored (no change)");
        return Ok(ExitCode::SUCCESS);
    }
    let managers = sets_managers(chosen);
    if let Some(d) =
        restore_diff(&preview.live, preview.result(), subresource, &chosen.record.time, args.show_secrets, managers)
    {
        eprint!("{d}");
    }
    if args.dry_run != DryRun::None {
        let how = if args.dry_run == DryRun::Server {
            writer.dry_run(&mut preview, &mut planner).await?;
            "server dry run"
        } else {
            "dry run"
        };
        println!("{display} restored ({how})");
        return Ok(ExitCode::SUCCESS);
    }
    if !prompt::approved(args.yes, &format!("Restore {display}?")) {
        eprintln!("Not restored.");
        return Ok(exit_code::exit(exit_code::REFUSED));
    }
    match writer.commit(preview, &mut planner).await? {
        Committed::Written(_) => println!("{display} restored to the backup of {}", chosen.record.time),
        Committed::NoChange(_) => println!("{display} restored (no change)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The backup to restore: the one taken at `to` (an ambiguous prefix is refused, see
/// [`taken_at`]), else the newest write still in effect
/// (the core's undo stack: writes that an undo already put back are stepped over).
fn choose<'b>(backups: &'b [Backup], to: Option<&str>, display: &str, server: &str) -> Result<&'b Backup> {
    let chosen = match to {
        Some(time) => taken_at(backups, time, display)?,
        None => {
            let written: Vec<&Backup> = backups.iter().filter(|b| b.record.state == WriteState::Written).collect();
            let ids: Vec<String> = written.iter().map(|b| b.id()).collect();
            let steps: Vec<UndoStep<'_>> = written
                .iter()
                .zip(&ids)
                .map(|(b, id)| UndoStep { id, undoes: b.record.provenance.undoes.as_deref() })
                .collect();
            next_to_undo(&steps).map(|index| written[index])
        }
    };
    chosen.ok_or_else(|| match to {
        Some(time) => {
            Error::usage(format!("no backup of {display} at {time}; see `kubectl safe-patch history {display}`"))
        }
        None if backups.is_empty() => Error::usage(format!("no backup of {display} to undo on this cluster ({server})")),
        None if backups.iter().all(|b| b.record.state != WriteState::Written) => Error::usage(format!(
            "no confirmed write of {display} to undo: its {} backup(s) are of writes whose outcome was never confirmed (see `kubectl safe-patch history {display}`); restore one with --to TIME --force",
            backups.len()
        )),
        None => Error::usage(format!(
            "nothing left to undo for {display}: every write in its backups is undone already (restore an older one with --to TIME; see `kubectl safe-patch history {display}`)"
        )),
    })
}

/// Exactly what is restored (`live` and the `restored` object): no status, no server
/// metadata, no controller-owned keys; the managers when they are restored (`managers`).
pub fn restore_diff(
    live: &Value,
    restored: &Value,
    subresource: Option<&str>,
    time: &str,
    show_secrets: bool,
    managers: bool,
) -> Option<String> {
    let (old, new) = restore_sides(live, restored, subresource, managers);
    let label = format!("backup {time}");
    if managers {
        diff::human_with_managers("live", &label, &old, &new, show_secrets)
    } else {
        diff::human("live", &label, &old, &new, show_secrets)
    }
}
