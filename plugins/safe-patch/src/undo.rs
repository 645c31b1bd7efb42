//! `undo`: take back what a write changed, from the pre-image its backup holds (with
//! `--to TIME`, put the whole pre-image back), through the one write path (guarded,
//! backed up, re-planned when a controller writes in between). A change another writer
//! made just before the write landed is kept. A write made through a subresource
//! (`scale`, `status`) is restored through the same one.
//!
//! What to restore and how is the core's ([`fieldwise_core::restore`]): the backup to
//! undo (an undo stack: a second undo steps back further), whether the object was
//! changed by someone else since that write, and the merge patch that restores it.
//! This module reads the backups, asks, and writes. A whole bulk run is undone by
//! [`crate::undo_run`].

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::ownership::patch_sets_managed_fields;
use fieldwise_core::restore::{
    next_to_undo, plan_restore, recreated, replay, restore_sides, since_the_write, SinceTheWrite, UndoStep,
};
use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::output::diff;
use fieldwise_kube::write::backup::{Backup, BackupStore, ObjectKey, Provenance, WriteState};
use fieldwise_kube::write::settle;
use fieldwise_kube::write::{Committed, DryRun, GuardedWrite, PatchType, Planned, WriteOptions};
use serde_json::Value;

use crate::exit_code::{EXIT_CHANGED, EXIT_REFUSED};
use crate::FIELD_MANAGER;

/// `kubectl safe-patch undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The object: TYPE/NAME or TYPE NAME (not with --run or --last-run).
    #[arg(value_name = "TYPE/NAME", required_unless_present_any = ["run", "last_run"], conflicts_with_all = ["run", "last_run"])]
    pub targets: Vec<String>,
    /// Restore the pre-image of the backup taken at this time (as `history` prints it, or a prefix of it).
    #[arg(long, value_name = "TIME", conflicts_with_all = ["run", "last_run"])]
    pub to: Option<String>,
    /// Undo every write of the bulk run with this id (as printed at the run's end and by `history --runs`).
    #[arg(long, value_name = "ID", conflicts_with = "last_run")]
    pub run: Option<String>,
    /// Undo the last bulk run still in effect (a second --last-run undoes the run before it).
    #[arg(long)]
    pub last_run: bool,
    /// Restore even if the object changed since the write being undone (with a run: restore those objects too).
    #[arg(long)]
    pub force: bool,
    /// Restore even onto an object that was deleted and created again since the backup
    /// (another UID): the backup is of the old object, and its values replace the new one's.
    /// `--force` does not cover this.
    #[arg(long)]
    pub onto_recreated: bool,
    /// Only show what would be restored: client previews, server also sends the restore as a server-side dry run.
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRun,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Field manager recorded for the restoring write.
    #[arg(long, default_value = FIELD_MANAGER)]
    pub field_manager: String,
    /// With --run or --last-run: how many objects are read, dry-run and restored at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// Show Secret values in the diff.
    #[arg(long)]
    pub show_secrets: bool,
}

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
    if let Some(refusal) = refusal(chosen, &live, &args, &display) {
        eprintln!("{}", refusal.message);
        return Ok(ExitCode::from(refusal.exit_code));
    }
    let writer = restore_writer(&conn, &target, chosen, &args, retry_budget, Provenance::default());
    // --to names a point in time: the whole pre-image; a plain undo takes back one write.
    let whole = args.to.is_some();
    let mut planner = |live: &Value| restore_plan(live, chosen, whole);
    let mut preview = writer.plan(live, &mut planner)?;
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
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    match writer.commit(preview, &mut planner).await? {
        Committed::Written(_) => println!("{display} restored to the backup of {}", chosen.record.time),
        Committed::NoChange(_) => println!("{display} restored (no change)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The backup to restore: the one taken at `to`, else the newest write still in effect
/// (the core's undo stack: writes that an undo already put back are stepped over).
fn choose<'b>(backups: &'b [Backup], to: Option<&str>, display: &str, server: &str) -> Result<&'b Backup> {
    let chosen = match to {
        Some(time) => backups.iter().rev().find(|b| b.record.time.starts_with(time)),
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
/// without `--onto-recreated`, which `--force` does not cover; changed since the write, or
/// the write never confirmed, without `--force`. `None` to go ahead (with a warning when a
/// flag lets it).
pub fn refusal(backup: &Backup, live: &Value, args: &UndoArgs, display: &str) -> Option<Refusal> {
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
            exit_code: EXIT_CHANGED,
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
        SinceTheWrite::Changed { written, now } => (
            format!(
                "{display} changed since the write being undone (resourceVersion {written}, now {now}); nothing was written. Use --force to restore anyway."
            ),
            EXIT_CHANGED,
        ),
        SinceTheWrite::NeverConfirmed => (
            "the write of that backup was never confirmed; use --force to restore its pre-image anyway".to_string(),
            EXIT_REFUSED,
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
    retry_budget: std::time::Duration,
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
