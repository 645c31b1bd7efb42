//! `undo --run ID` and `undo --last-run`: every object a bulk run wrote, put back to the
//! pre-image its backup holds, as one new run through the shared bulk runner and the one
//! write path. Objects someone changed since the run are skipped with the reason unless
//! `--force`. The restoring run names the run it undoes, so a second `--last-run` steps
//! back to the run before instead of re-doing this one.

use std::process::ExitCode;
use std::time::Duration;

use fieldwise_core::change::effect::Effect;
use fieldwise_core::schema::builtin;
use fieldwise_core::write::restore::recreated;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::diff::without_server_noise;
use fieldwise_kube::output::printer;
use fieldwise_kube::output::progress::Progress;
use fieldwise_kube::write::backup::{Backup, BackupStore, ClusterKey, Provenance};
use fieldwise_kube::write::bulk::{self, BulkOptions, BulkSummary, Failure};
use fieldwise_kube::write::runs::{self, new_run_id, Run};
use fieldwise_kube::write::settle;
use fieldwise_kube::write::{Committed, DryRun, WriteOptions};
use serde_json::Value;

use crate::prepared::Prepared;
use crate::restore::{refusal, restorable_subresource, restore_plan, restore_writer, Refusal};
use crate::run_preview::{self, count};
use crate::undo_args::UndoArgs;

/// One object of the run being undone.
struct Item {
    target: ObjectRef,
    backup: Backup,
}

/// What the preview found for one object.
enum Checked {
    /// Ready to restore.
    Ready(Box<(Prepared, Backup)>),
    /// Changed or created again since the run (or its write never confirmed): skipped, with why.
    Skipped(Refusal),
}

/// Undoes a whole run (see the module docs).
pub async fn undo_run(kube: KubeFlags, args: UndoArgs) -> Result<ExitCode> {
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let store = BackupStore::open_default()?;
    settle::abandoned_writes(&conn, &store).await?;
    let run = chosen_run(&store, &ClusterKey::of(&conn), args.run.as_deref())?;
    eprintln!(
        "Undoing run {} ({}, started {}): {} written.",
        run.id,
        run.operation,
        run.started,
        count(run.written(), "object")
    );
    let items: Vec<Item> = run
        .backups
        .iter()
        .map(|backup| Ok(Item { target: target_of(backup, &catalog)?, backup: backup.clone() }))
        .collect::<Result<_>>()?;
    let options = BulkOptions::with_concurrency(usize::from(args.concurrency));
    let progress = Progress::by_objects(items.len(), "previewing");
    let names: Vec<String> = items.iter().map(|i| i.target.located()).collect();
    let mapped = bulk::map(items, options, &progress, |item| check(&conn, item, &args, retry_budget)).await;
    progress.finish();
    if let Some(why) = &mapped.stopped {
        eprintln!("error: stopped the preview: {why}. Nothing was restored; run the same command again when the server is back.");
        return Ok(exit_code::exit(exit_code::ERROR));
    }
    let mut summary = BulkSummary::default();
    let mut ready = Vec::new();
    for (name, result) in names.iter().zip(mapped.results) {
        match result {
            Some(Ok(Checked::Ready(pair))) => ready.push(*pair),
            Some(Ok(Checked::Skipped(refusal))) => {
                eprintln!("{}", refusal.message);
                let kind = if refusal.exit_code == exit_code::FOUND { Failure::Conflict } else { Failure::Refused };
                summary.record(kind, refusal.exit_code);
            }
            Some(Err(e)) => {
                eprintln!("error: {name}: {e}");
                summary.record_failure(&e);
            }
            None => summary.not_tried += 1,
        }
    }
    let prepared: Vec<&Prepared> = ready.iter().map(|(p, _)| p).collect();
    run_preview::print(&prepared, args.show_secrets, ("restore", "restored"));
    let changing = prepared.iter().filter(|p| !p.preview.is_no_change()).count();
    if args.dry_run != DryRun::None {
        for p in &prepared {
            summary.record_success(if p.preview.is_no_change() { "unchanged" } else { "restored" });
        }
        let how = if args.dry_run == DryRun::Server { "server dry run" } else { "dry run" };
        eprintln!("{} ({how}; nothing was written)", summary.outcome_line(&["restored", "unchanged"]));
        return Ok(exit_code::exit(summary.exit_code()));
    }
    if changing > 0 {
        let question = format!("Restore {} to their state before run {}?", count(changing, "object"), run.id);
        if let Some(code) = prompt::run_refusal(args.yes, &question, "restoring", "restored", changing) {
            return Ok(code);
        }
    }
    let run_id = new_run_id();
    let provenance = Provenance { run: Some(run_id.clone()), undoes: None, undoes_run: Some(run.id.clone()) };
    let progress = Progress::by_objects(ready.len(), "restoring");
    let written = bulk::run_with_progress(
        ready,
        options,
        &progress,
        |(p, _)| p.target.located(),
        |(prepared, backup)| {
            let (conn, args, progress, provenance) = (&conn, &args, progress.clone(), provenance.clone());
            async move {
                let target = &prepared.target;
                let writer = restore_writer(conn, target, &backup, args, retry_budget, provenance);
                let mut planner = |live: &Value| restore_plan(live, &backup, false);
                let (object, verb, label) = match writer.commit(prepared.preview.clone(), &mut planner).await? {
                    Committed::Written(object) => (object, "restored", "restored"),
                    Committed::NoChange(object) => (object, "restored (no change)", "unchanged"),
                };
                progress.suspend(|| printer::print_run_outcome(target, &object, verb, None, args.show_secrets))?;
                Ok(label)
            }
        },
    )
    .await;
    progress.finish();
    crate::many::merge(&mut summary, written);
    if let Some(stop) = summary.stop_message() {
        eprintln!("{stop}");
    }
    eprintln!("{}", summary.outcome_line(&["restored", "unchanged"]));
    if summary.succeeded.get("restored").copied().unwrap_or(0) > 0 {
        eprintln!("Run {run_id} undid run {}; undo it with: kubectl safe-patch undo --run {run_id}", run.id);
    }
    Ok(exit_code::exit(summary.exit_code()))
}

/// The run `--run ID` names, or the last one still in effect, on this cluster.
fn chosen_run(store: &BackupStore, cluster: &ClusterKey, id: Option<&str>) -> Result<Run> {
    if let Some(id) = id {
        return runs::find(store, cluster, id);
    }
    let all = runs::runs(store, cluster)?;
    runs::last_to_undo(&all).cloned().ok_or_else(|| {
        Error::usage(format!(
            "no bulk run left to undo on this cluster ({}); see `kubectl safe-patch history --runs`",
            cluster.server
        ))
    })
}

/// The object a backup was taken of, by its type (`plural.group`) as the cluster serves it now.
fn target_of(backup: &Backup, catalog: &ResourceCatalog) -> Result<ObjectRef> {
    let record = &backup.record;
    let resource = catalog.resolve(&record.resource)?.clone();
    let namespace = (!record.namespace.is_empty()).then(|| record.namespace.clone());
    Ok(ObjectRef { resource, namespace, name: record.name.clone() })
}

/// Reads one object, decides whether it may be restored, and plans (and with
/// `--dry-run=server` dry-runs) the restore.
async fn check(conn: &Connection, item: Item, args: &UndoArgs, retry_budget: Duration) -> Result<Checked> {
    let Item { target, backup } = item;
    let display = target.display();
    let subresource = restorable_subresource(&backup, &display)?;
    let live = objects::get(conn, &target, subresource).await?;
    let preview = {
        let writer = restore_writer(conn, &target, &backup, args, retry_budget, Provenance::default());
        let mut planner = |live: &Value| restore_plan(live, &backup, false);
        let planned = writer.plan(live.clone(), &mut planner);
        // An object already at the state being restored (a re-run of an interrupted undo
        // restored it) is unchanged, however it got there; anything else must be untouched
        // since the write being undone.
        let already_restored =
            matches!(&planned, Ok(p) if p.is_no_change()) && recreated(&backup.record.before, &live).is_none();
        if !already_restored {
            let restored = planned.as_ref().map_or(&live, |p| &p.planned.result);
            if let Some(mut refused) = refusal(&backup, &live, restored, args, &target.located()) {
                refused.message = refused.message.replacen("nothing was written", "skipped", 1);
                return Ok(Checked::Skipped(refused));
            }
        }
        let mut preview = planned?;
        if args.dry_run == DryRun::Server {
            writer.dry_run(&mut preview, &mut planner).await?;
        }
        preview
    };
    let (before, after) = (without_server_noise(&preview.live), without_server_noise(preview.result()));
    let change_key = Effect::between(&before, &after, builtin(), None).to_string();
    Ok(Checked::Ready(Box::new((Prepared { target, preview, findings: Vec::new(), change_key }, backup))))
}
