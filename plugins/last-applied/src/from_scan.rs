//! `--from-scan` for the commands that write (`repair`, `migrate`): act on the scan's
//! findings as they are found, through the bulk runner of the shared write path, so
//! neither the list of findings nor their objects is ever held whole.
//!
//! Without `--yes` (and not a dry run) the run is approved first, as every run over many
//! objects is ([`prompt::run_refusal`]): the scan runs to the end collecting only the names, a
//! person at a terminal confirms their count, a script without a terminal is refused (nothing
//! written), and each object is read again when its turn comes. `--yes` and dry runs stream: the
//! first writes start while the scan is still listing.

use std::future::Future;
use std::process::ExitCode;

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::Result;
use fieldwise_kube::write::bulk::{self, BulkOptions, BulkSummary};
use fieldwise_kube::write::DryRun;
use futures::stream::StreamExt;
use serde_json::Value;

use crate::scan::{Flagged, Scan};
use crate::scan_scope::ScanScope;
use fieldwise_kube::output::listing_progress::ListingProgress;

/// How a `--from-scan` run ended.
#[derive(Debug)]
pub enum FromScan {
    /// The scan found nothing to act on.
    Nothing,
    /// The run was not approved (declined, or no terminal and no `--yes`): nothing was
    /// written, the reason was printed, and the command ends with this code.
    NotApproved(ExitCode),
    /// The bulk run's summary.
    Ran(BulkSummary),
}

/// How a run that needs approval asks for it (see [`prompt::run_refusal`]).
pub struct Ask<'a> {
    /// The question for this many objects.
    pub question: &'a dyn Fn(usize) -> String,
    /// The action, as the refusal names it: `repairing`, `migrating`.
    pub doing: &'static str,
    /// The action done: `repaired`, `migrated`.
    pub done: &'static str,
}

impl<'a> Ask<'a> {
    /// The approval a write without `--yes` needs; `None` for `--yes` and dry runs, which act
    /// without asking.
    pub fn unless(yes: bool, dry_run: DryRun, ask: Ask<'a>) -> Option<Ask<'a>> {
        (dry_run == DryRun::None && !yes).then_some(ask)
    }
}

/// Scans `scope`, keeps the flagged objects `wanted` says yes to, and, once approved (`ask`),
/// runs `work` on each (with the full object when the scan fetched one), `scope.concurrency`
/// at a time.
pub async fn run<Work, Fut>(
    conn: &Connection,
    catalog: &ResourceCatalog,
    scope: &ScanScope,
    ask: Option<Ask<'_>>,
    wanted: impl Fn(&Flagged) -> bool,
    work: Work,
) -> Result<FromScan>
where
    Work: Fn(ObjectRef, Option<Value>) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    let scan = Scan::new(conn, catalog, scope)?;
    let options = BulkOptions::with_concurrency(scope.concurrency);
    let keep = |found: &Result<Flagged>| futures::future::ready(found.as_ref().map_or(true, &wanted));
    let summary = match ask {
        Some(ask) => {
            let progress = ListingProgress::new(scan.types.len());
            let mut found = std::pin::pin!(scan.flagged(&progress).filter(keep));
            let mut names = Vec::new();
            while let Some(f) = found.next().await {
                names.push(f?.target);
            }
            progress.finish();
            if names.is_empty() {
                return Ok(FromScan::Nothing);
            }
            // `ask` exists only without --yes.
            let question = (ask.question)(names.len());
            if let Some(code) = prompt::run_refusal(false, &question, ask.doing, ask.done, names.len()) {
                return Ok(FromScan::NotApproved(code));
            }
            bulk::run(names, options, ObjectRef::located, |target| work(target, None)).await
        }
        None => {
            // The result lines show the progress.
            let progress = ListingProgress::hidden(scan.types.len());
            let found = scan.flagged(&progress).filter(keep);
            bulk::run_stream(found, options, |f| f.target.located(), |f| work(f.target, f.live)).await
        }
    };
    Ok(if summary.tried() == 0 && summary.not_tried == 0 && summary.stopped.is_none() {
        FromScan::Nothing
    } else {
        FromScan::Ran(summary)
    })
}
