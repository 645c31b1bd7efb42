//! `--from-scan` for the commands that write (`repair`, `migrate`): act on the scan's
//! findings as they are found, through the bulk runner of the shared write path, so
//! neither the list of findings nor their objects is ever held whole.
//!
//! A person at a terminal (no `--yes`, no dry run) confirms a count first: then the scan
//! runs to the end collecting only the names, and each object is read again when its turn
//! comes. Scripts and `--yes` stream: the first writes start while the scan is still listing.

use std::future::Future;

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::Result;
use fieldwise_kube::write::bulk::{self, BulkOptions, BulkSummary};
use futures::stream::StreamExt;
use serde_json::Value;

use crate::scan::{Flagged, Scan};
use crate::ScopeArgs;
use fieldwise_kube::output::listing_progress::ListingProgress;

/// How a `--from-scan` run ended.
#[derive(Debug)]
pub enum FromScan {
    /// The scan found nothing to act on.
    Nothing,
    /// The person at the terminal said no.
    Declined,
    /// The bulk run's summary.
    Ran(BulkSummary),
}

/// What to ask a person before acting on `count` objects, or `None` to act without asking
/// (`--yes`, a dry run, or no terminal).
pub type Question<'a> = Option<&'a dyn Fn(usize) -> String>;

/// Scans `scope`, keeps the flagged objects `wanted` says yes to, and runs `work` on each
/// (with the full object when the scan fetched one), `scope.concurrency` at a time.
pub async fn run<Work, Fut>(
    conn: &Connection,
    catalog: &ResourceCatalog,
    scope: &ScopeArgs,
    question: Question<'_>,
    wanted: impl Fn(&Flagged) -> bool,
    work: Work,
) -> Result<FromScan>
where
    Work: Fn(ObjectRef, Option<Value>) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    let scan = Scan::new(conn, catalog, scope)?;
    let options = BulkOptions::with_concurrency(usize::from(scope.concurrency));
    let keep = |found: &Result<Flagged>| futures::future::ready(found.as_ref().map_or(true, &wanted));
    let summary = match question.filter(|_| prompt::interactive()) {
        Some(question) => {
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
            if !prompt::confirm(&question(names.len())) {
                return Ok(FromScan::Declined);
            }
            bulk::run(names, options, ObjectRef::display, |target| work(target, None)).await
        }
        None => {
            // The result lines show the progress.
            let progress = ListingProgress::hidden(scan.types.len());
            let found = scan.flagged(&progress).filter(keep);
            bulk::run_stream(found, options, |f| f.target.display(), |f| work(f.target, f.live)).await
        }
    };
    Ok(if summary.tried() == 0 && summary.not_tried == 0 && summary.stopped.is_none() {
        FromScan::Nothing
    } else {
        FromScan::Ran(summary)
    })
}
