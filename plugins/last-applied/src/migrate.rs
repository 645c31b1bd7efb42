//! `migrate`: hand an object from client-side to server-side apply, as
//! `kubectl apply --server-side` does on its first run (client-go's csaupgrade), and
//! finish the job csaupgrade leaves: the fields of the managers a migration moves go
//! into the applier's `Apply` entry, in one JSON Patch of `metadata.managedFields`
//! (with, as csaupgrade does, a `replace` of `metadata.resourceVersion`), written through
//! the one write path, which guards it with a `test` of the resourceVersion. With
//! `--drop-annotation` the same patch removes the annotation, the cure for one that is
//! too large to keep.
//!
//! The patch is the core's ([`fieldwise_core::last_applied::plan_migration`]), and so is
//! which managers move ([`fieldwise_core::last_applied::moved_managers`]): the client-side
//! managers (the `Update` managers owning the annotation, `kubectl-client-side-apply` and
//! `kubectl-create`), `before-first-apply`, and with `--also` the classes or managers named
//! (`human`: kubectl edit, patch, set, label, annotate). This module asks, confirms and writes.

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::{self, annotation_of, Migration};
use fieldwise_core::ownership::ManagerSelection;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::printer;
use fieldwise_kube::write::bulk::{self, BulkOptions};
use fieldwise_kube::write::DryRun;
use fieldwise_kube::write::{Committed, GuardedWrite, Intent, PatchType, Planned, WriteOptions};
use serde_json::Value;

use crate::from_scan::{self, Ask, FromScan};
use crate::scan_scope::{self, ScanFlags, ScanScope};
use crate::WriteArgs;
use fieldwise_kube::api::selection;
use fieldwise_kube::cli::selection_flags::SelectionFlags;

/// `migrate`'s flags.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The objects: TYPE/NAME, TYPE NAME..., -f or -k; with --from-scan, TYPE[,TYPE...] and -l,
    /// --field-selector, -A choose what the scan reads.
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// Scan first (the TYPEs, -l, --field-selector and -A given), then migrate every object with
    /// a finding.
    #[arg(long)]
    pub from_scan: bool,

    /// The server-side apply manager that takes the fields (kubectl apply --server-side uses kubectl).
    #[arg(long, default_value = "kubectl")]
    pub field_manager: String,

    /// Also remove the last-applied annotation.
    #[arg(long)]
    pub drop_annotation: bool,

    /// Move these managers' fields too, comma-separated: classes (human: kubectl edit, patch, set,
    /// label, annotate, create, client-side apply, before-first-apply; helm-update: Helm 3) or
    /// names of managers that update. Without it, fields they set stay co-owned, and the
    /// applier's later apply that drops them cannot delete them.
    #[arg(long, value_name = "MANAGERS")]
    pub also: Vec<String>,

    #[command(flatten)]
    pub scan: ScanFlags,

    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `kubectl last-applied migrate`.
pub async fn run(kube: KubeFlags, args: MigrateArgs) -> Result<ExitCode> {
    let selection = args.selection.for_writing();
    scan_scope::check_writer(&args.selection, args.from_scan, &args.scan)?; // before anything is read
    also(&args)?; // checked before anything is read
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    if args.from_scan {
        return migrate_from_scan(&conn, &catalog, &args, retry_budget).await;
    }
    let work: Vec<ObjectRef> = selection::select(&conn, &catalog, &selection).await?;
    if work.is_empty() {
        eprintln!("Nothing to migrate.");
        return Ok(ExitCode::SUCCESS);
    }
    if let [target] = work.as_slice() {
        let question = format!("Migrate {} to server-side apply ({})?", target.display(), args.field_manager);
        if args.write.dry_run == DryRun::None && !prompt::approved(args.write.yes, &question) {
            eprintln!("Not migrated.");
            return Ok(exit_code::exit(prompt::NOT_APPROVED_EXIT));
        }
        let (object, verb) = migrate_one(&conn, target, &args, retry_budget).await?;
        report(&args, target, &object, &verb, false)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.write.dry_run == DryRun::None {
        let question = format!("Migrate {} objects to server-side apply ({})?", work.len(), args.field_manager);
        if let Some(code) = prompt::run_refusal(args.write.yes, &question, "migrating", "migrated", work.len()) {
            return Ok(code);
        }
    }
    let summary = bulk::run(
        work,
        BulkOptions::with_concurrency(usize::from(args.scan.concurrency)),
        ObjectRef::located,
        |target| {
            let (conn, args) = (&conn, &args);
            async move {
                let (object, verb) = migrate_one(conn, &target, args, retry_budget).await?;
                report(args, &target, &object, &verb, true)?;
                Ok(if verb == "unchanged" { "unchanged" } else { "migrated" })
            }
        },
    )
    .await;
    summary.print();
    Ok(exit_code::exit(summary.exit_code()))
}

/// `--from-scan`: every object the scan flags, migrated as the scan finds it.
async fn migrate_from_scan(
    conn: &Connection,
    catalog: &ResourceCatalog,
    args: &MigrateArgs,
    retry_budget: std::time::Duration,
) -> Result<ExitCode> {
    let question = |count: usize| format!("Migrate {count} object(s) to server-side apply ({})?", args.field_manager);
    let ask = Ask { question: &question, doing: "migrating", done: "migrated" };
    let ask = Ask::unless(args.write.yes, args.write.dry_run, ask);
    let migrate = |target: ObjectRef, _live: Option<Value>| async move {
        let (object, verb) = migrate_one(conn, &target, args, retry_budget).await?;
        report(args, &target, &object, &verb, true)?;
        Ok(if verb == "unchanged" { "unchanged" } else { "migrated" })
    };
    let scope = ScanScope::of_selection(&args.selection.for_writing(), &args.scan)?;
    match from_scan::run(conn, catalog, &scope, ask, |_| true, migrate).await? {
        FromScan::Nothing => {
            eprintln!("Nothing to migrate.");
            Ok(ExitCode::SUCCESS)
        }
        FromScan::NotApproved(code) => Ok(code),
        FromScan::Ran(summary) => {
            summary.print();
            Ok(exit_code::exit(summary.exit_code()))
        }
    }
}

/// The managers `--also` selects.
fn also(args: &MigrateArgs) -> Result<ManagerSelection> {
    ManagerSelection::parse(&args.also).map_err(|e| Error::usage(format!("--also: {e}")))
}

/// The migration of one object planned against `live` by the core
/// ([`fieldwise_core::last_applied::plan_migration`]): the JSON Patch (without its guard),
/// and the managers whose fields move (none when only the annotation goes).
fn plan_migration(target: &ObjectRef, live: &Value, args: &MigrateArgs) -> Result<(Planned, Vec<String>)> {
    let migration = last_applied::plan_migration(live, &args.field_manager, args.drop_annotation, &also(args)?)
        .map_err(|e| Error::semantics(target.display(), e))?;
    let Migration { patch, result, moved, .. } = migration;
    Ok((Planned { patch_type: PatchType::Json, patch, result, findings: vec![] }, moved))
}

async fn migrate_one(
    conn: &Connection,
    target: &ObjectRef,
    args: &MigrateArgs,
    retry_budget: std::time::Duration,
) -> Result<(Value, String)> {
    let live = objects::get(conn, target, None).await?;
    let options = WriteOptions::new("last-applied migrate", &args.field_manager, &live, retry_budget)
        .intent(Intent::Rule)
        .show_secrets(args.write.show_secrets);
    let writer = GuardedWrite::new(conn, target, options);
    let mut planner = |live: &Value| plan_migration(target, live, args).map(|(planned, _)| planned);
    let mut preview = writer.plan(live, &mut planner)?;
    if preview.is_no_change() {
        return Ok((preview.live, "unchanged".into()));
    }
    let (_, moved) = plan_migration(target, &preview.live, args)?;
    let upgrades = !moved.is_empty();
    if upgrades {
        eprintln!("{}: fields of {} move to {} (Apply)", target.display(), moved.join(", "), args.field_manager);
    }
    let mut verb = if upgrades {
        format!("migrated to server-side apply ({})", args.field_manager)
    } else {
        "annotation dropped".to_string()
    };
    if upgrades && args.drop_annotation && annotation_of(&preview.live).is_some() {
        verb.push_str(", annotation dropped");
    }
    let object = match args.write.dry_run {
        DryRun::Client => {
            verb.push_str(" (dry run)");
            preview.planned.result
        }
        DryRun::Server => {
            writer.dry_run(&mut preview, &mut planner).await?;
            verb.push_str(" (server dry run)");
            preview.result().clone()
        }
        DryRun::None => match writer.commit(preview, &mut planner).await? {
            Committed::Written(written) => written,
            Committed::NoChange(object) => return Ok((object, "unchanged".into())),
        },
    };
    Ok((object, verb))
}

/// Prints an object's result line; `many`: one of a run over many objects.
fn report(args: &MigrateArgs, target: &ObjectRef, object: &Value, verb: &str, many: bool) -> Result<()> {
    let (output, show_secrets) = (args.write.output, args.write.show_secrets);
    if many {
        printer::print_run_outcome(target, object, verb, output, show_secrets)
    } else {
        printer::print_outcome(&target.display(), object, verb, output, show_secrets)
    }
}
