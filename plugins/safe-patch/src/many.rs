//! One patch on many objects (`kubectl safe-patch TYPE -l SELECTOR -p ...`, several
//! names, `-f DIR`): kubectl's selection, one preview for the run, one confirmation,
//! then every write through the one write path, as a run that can be undone as one.
//!
//! 1. The selection was refused when larger than `--max-objects` (by the one selection,
//!    as soon as it passed the limit: [`fieldwise_kube::api::selection::SelectionLimit`]).
//! 2. Every object is read, planned, linted and dry-run on the server ([`Patching::prepare`],
//!    as a single object is), `--concurrency` at a time (the shared bulk runner,
//!    [`bulk::map`]), before anything is written. The
//!    preview ([`crate::run_preview`]) groups the objects by identical change, one diff per
//!    group, and lists every lint once with its objects.
//! 3. One confirmation on a terminal; without one and without `--yes` nothing is written.
//! 4. The writes ([`bulk::run_with_progress`]): guarded, backed up under the run's id,
//!    re-planned when another writer got there first; a breaker stops the run when the
//!    server is gone, and running the same command again finishes the job.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::printer;
use fieldwise_kube::output::progress::Progress;
use fieldwise_kube::write::backup::Provenance;
use fieldwise_kube::write::bulk::{self, BulkOptions, BulkSummary, Failure};
use fieldwise_kube::write::runs::new_run_id;
use fieldwise_kube::write::Committed;
use fieldwise_kube::write::DryRun;
use serde_json::Value;

use crate::prepared::Prepared;
use crate::run_preview::{self, count};
use crate::steps::{self, Patching, TypePlan};
use crate::PatchArgs;

/// Runs the patch on every target (see the module docs).
pub async fn run(
    conn: &Connection,
    targets: Vec<ObjectRef>,
    patch: &Value,
    args: &PatchArgs,
    retry_budget: Duration,
) -> Result<ExitCode> {
    let plans = type_plans(conn, &targets, args).await?;
    let patching = Patching { conn, patch, args, retry_budget };
    let options = BulkOptions::with_concurrency(usize::from(args.concurrency));
    let total = targets.len();

    let progress = Progress::by_objects(total, "previewing");
    let mapped = bulk::map(targets.clone(), options, &progress, |target| {
        let plan = &plans[&type_key(&target)];
        async move { patching.prepare(target, None, plan).await.map_err(|n| n.error) }
    })
    .await;
    progress.finish();
    if let Some(why) = &mapped.stopped {
        eprintln!(
            "error: stopped the preview after {} transport failures in a row: {why}. Nothing was written; run the same command again when the server is back.",
            options.stop_after_transport_failures
        );
        return Ok(exit_code::exit(exit_code::ERROR));
    }
    let mut summary = BulkSummary::default();
    let mut ready = Vec::new();
    for (target, result) in targets.iter().zip(mapped.results) {
        match result {
            Some(Ok(prepared)) => ready.push(prepared),
            Some(Err(e)) => {
                eprintln!("error: {}: {e}", target.located());
                summary.record_failure(&e);
            }
            None => summary.not_tried += 1,
        }
    }
    run_preview::print(&ready.iter().collect::<Vec<_>>(), args.show_secrets, ("patch", "patched"));
    let (blocked, ready): (Vec<Prepared>, Vec<Prepared>) =
        ready.into_iter().partition(|p| p.refusal(args.force, args.allow_secret_exposure).is_some());
    for p in &blocked {
        summary.record(Failure::Refused, exit_code::REFUSED);
        let why = p.refusal(args.force, args.allow_secret_exposure).unwrap_or_default();
        eprintln!("error: not writing {}: {why}", p.target.located());
    }
    let changing = ready.iter().filter(|p| !p.preview.is_no_change()).count();
    if args.dry_run != DryRun::None {
        for p in &ready {
            let verb = if p.preview.is_no_change() { "unchanged" } else { "patched" };
            summary.record_success(verb);
        }
        let how = if args.dry_run == DryRun::Server { "server dry run" } else { "dry run" };
        eprintln!("{} ({how}; nothing was written)", summary.outcome_line(&["patched", "unchanged"]));
        return Ok(exit_code::exit(summary.exit_code()));
    }
    if changing > 0 {
        let question = format!(
            "Patch {} in {}?",
            count(changing, "object"),
            run_preview::namespaces_phrase(ready.iter().map(|p| &p.target))
        );
        if let Some(code) = prompt::run_refusal(args.yes, &question, "patching", "patched", changing) {
            return Ok(code);
        }
    }
    let run_id = new_run_id();
    let progress = Progress::by_objects(ready.len(), "patching");
    let written = bulk::run_with_progress(
        ready,
        options,
        &progress,
        |p| p.target.located(),
        |prepared| {
            let plan = &plans[&type_key(&prepared.target)];
            let (progress, run_id) = (progress.clone(), run_id.as_str());
            write(patching, prepared, plan, progress, run_id)
        },
    )
    .await;
    progress.finish();
    merge(&mut summary, written);
    if let Some(stop) = summary.stop_message() {
        eprintln!("{stop}");
    }
    eprintln!("{}", summary.outcome_line(&["patched", "unchanged"]));
    if summary.succeeded.get("patched").copied().unwrap_or(0) > 0 || summary.transport_failures > 0 {
        eprintln!("Run {run_id}; undo it with: kubectl safe-patch undo --run {run_id}");
    }
    Ok(exit_code::exit(summary.exit_code()))
}

/// The plan of each resource type in the selection ([`steps::type_plan`]), decided once per type.
async fn type_plans(conn: &Connection, targets: &[ObjectRef], args: &PatchArgs) -> Result<HashMap<String, TypePlan>> {
    let mut schemas = Schemas::connected(conn);
    let mut plans = HashMap::new();
    for target in targets {
        let key = type_key(target);
        if let Entry::Vacant(entry) = plans.entry(key) {
            let label = target.resource.display_name();
            entry.insert(steps::type_plan(&mut schemas, target, &label, args).await?);
        }
    }
    Ok(plans)
}

/// The key of an object's type in [`type_plans`].
fn type_key(target: &ObjectRef) -> String {
    format!("{}/{}", target.resource.api_version(), target.resource.plural)
}

/// Writes one approved change through the one write path, under the run's id.
async fn write(
    patching: Patching<'_>,
    prepared: Prepared,
    plan: &TypePlan,
    progress: Progress,
    run_id: &str,
) -> Result<&'static str> {
    let args = patching.args;
    let target = prepared.target.clone();
    let provenance = Provenance { run: Some(run_id.to_string()), ..Provenance::default() };
    let committed = patching.commit(prepared, plan, provenance).await?;
    let (object, verb, label) = match &committed {
        Committed::Written(object) => (object, "patched", "patched"),
        Committed::NoChange(object) => (object, "patched (no change)", "unchanged"),
    };
    result_line(
        progress.suspend(|| printer::print_run_outcome(&target, object, verb, args.output, args.show_secrets)),
    )?;
    Ok(label)
}

/// A result line's write: a reader that closed stdout (`| head`) does not make a write that
/// happened count as failed, nor stop the run half-way; the summary is on stderr anyway.
pub fn result_line(printed: Result<()>) -> Result<()> {
    match printed {
        Err(Error::StdoutClosed) => Ok(()),
        other => other,
    }
}

/// Adds the write phase's counts to those of the preview.
pub fn merge(summary: &mut BulkSummary, written: BulkSummary) {
    for (label, n) in written.succeeded {
        *summary.succeeded.entry(label).or_default() += n;
    }
    summary.failed += written.failed;
    summary.conflicts += written.conflicts;
    summary.refused += written.refused;
    summary.transport_failures += written.transport_failures;
    summary.not_tried += written.not_tried;
    summary.stopped = written.stopped;
    summary.interrupted = written.interrupted;
    summary.worst_exit_code = exit_code::worse(summary.worst_exit_code, written.worst_exit_code);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summaries_of_preview_and_writes_add_up() {
        let mut preview = BulkSummary::default();
        preview.record(Failure::Refused, 1);
        let mut written = BulkSummary::default();
        written.record_success("patched");
        written.record_success("patched");
        written.record(Failure::Conflict, 3);
        merge(&mut preview, written);
        assert_eq!(
            preview.outcome_line(&["patched", "unchanged"]),
            "2 patched, 0 unchanged, 1 conflict, 1 refused, 0 failed"
        );
        assert_eq!(preview.exit_code(), 1);
    }
}
