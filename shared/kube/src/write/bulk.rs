//! Many guarded writes at once (`repair --from-scan`, `migrate` of several
//! objects, `safe-patch -l ...`): bounded concurrency (the glue's one fan-out,
//! [`crate::api::listing::for_each_concurrently`]), a per-object result line, and a
//! circuit breaker: after several transport failures in a row the server is taken to
//! be gone, no further write is started, and one summary says what was done,
//! what failed and what was not tried. Each write is guarded and idempotent, so
//! running the same command again finishes the job.
//!
//! [`map`] is the same for work whose results the command needs back in order (the
//! previews and server dry-runs of every object before a bulk write).
//!
//! A stop signal (Ctrl-C, SIGTERM) ends a run the same way: nothing more is started,
//! the writes in flight finish, the summary is printed, and the command exits 130 or
//! 143 (see [`crate::write::interrupt`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;

use futures::stream::{self, Stream, StreamExt};

use crate::api::listing::{for_each_concurrently, map_concurrently};
use crate::conn::error::ConnError;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::output::progress::Progress;
use crate::write::classify::is_transport_failure;
use crate::write::interrupt::{self, InFlight, Signal};

/// How a bulk write runs.
#[derive(Debug, Clone, Copy)]
pub struct BulkOptions {
    /// Writes in flight at once.
    pub concurrency: usize,
    /// Stop starting writes after this many transport failures in a row.
    pub stop_after_transport_failures: usize,
    /// The work only reads (`owners plan`'s dry runs): a stop signal ends it at once, saying
    /// nothing was written, since there is no write to let finish.
    pub reads_only: bool,
}

impl BulkOptions {
    /// `concurrency` writes at once; the breaker opens after 3 transport failures in a row.
    pub fn with_concurrency(concurrency: usize) -> Self {
        BulkOptions { concurrency: concurrency.max(1), stop_after_transport_failures: 3, reads_only: false }
    }

    /// [`with_concurrency`](Self::with_concurrency) for work that writes nothing.
    pub fn reading(concurrency: usize) -> Self {
        BulkOptions { reads_only: true, ..Self::with_concurrency(concurrency) }
    }
}

/// What a bulk write did.
#[derive(Debug, Default)]
pub struct BulkSummary {
    /// Successes by the label their work returned (`repaired`, `unchanged`).
    pub succeeded: BTreeMap<&'static str, usize>,
    /// Objects whose write failed.
    pub failed: usize,
    /// Of those, failures in transport (no answer from the server).
    pub transport_failures: usize,
    /// Objects never tried because the breaker opened.
    pub not_tried: usize,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// The run stopped because the producer of the items failed (a scan that could
    /// not list), not because writes failed.
    pub stopped_by_producer: bool,
    /// The run stopped before the producer had given every item: more objects than
    /// `not_tried` may be left (a streamed run cannot count what it never saw).
    pub not_reached: bool,
    /// Of the failures, those that lost to another writer ([`Failure::Conflict`]).
    pub conflicts: usize,
    /// Of the failures, those the server or a rule refused ([`Failure::Refused`]).
    pub refused: usize,
    /// The exit code a single write of the worst failed object would have had (0 when none failed).
    pub worst_exit_code: u8,
    /// The run stopped on this signal.
    pub interrupted: Option<Signal>,
}

/// How a failed write counts in a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Another writer got there first and the approved change no longer stands
    /// (changed since the preview, kept changing, a field-manager conflict).
    Conflict,
    /// The server or a rule of fieldwise refused this object (forbidden, invalid, not found).
    Refused,
    /// Anything else: the server failed, the connection broke, a local error.
    Failed,
}

impl Failure {
    /// How `err` counts.
    pub fn of(err: &Error) -> Failure {
        match err {
            Error::ChangedSincePreview { .. } | Error::KeptChanging { .. } | Error::FieldManagerConflict { .. } => {
                Failure::Conflict
            }
            Error::Conn(ConnError::Api { code: 409, .. }) => Failure::Conflict,
            Error::Conn(ConnError::Api { code: 408 | 429, .. }) => Failure::Failed,
            Error::Conn(ConnError::Api { code: 400..=499, .. }) | Error::Refused { .. } => Failure::Refused,
            _ => Failure::Failed,
        }
    }
}

impl BulkSummary {
    /// Whether every object succeeded.
    pub fn all_succeeded(&self) -> bool {
        self.failed == 0 && self.not_tried == 0 && self.stopped.is_none()
    }

    /// How many objects a write was started for.
    pub fn tried(&self) -> usize {
        self.succeeded.values().sum::<usize>() + self.failed
    }

    /// The process exit code, as single writes have them: the worst object's, and 1 when
    /// the run stopped before every object was tried.
    pub fn exit_code(&self) -> u8 {
        let stopped = if self.not_tried > 0 || self.stopped.is_some() { exit_code::ERROR } else { exit_code::DONE };
        exit_code::worse(self.worst_exit_code, stopped)
    }

    /// Counts one object that failed with `err` (the runners count their own; a command
    /// counts here the objects that failed before the run, in its preview).
    pub fn record_failure(&mut self, err: &Error) {
        self.record(Failure::of(err), err.exit_code());
    }

    /// Counts one object that failed as `kind`, whose single write would have exited `exit_code`.
    pub fn record(&mut self, kind: Failure, exit_code: u8) {
        self.failed += 1;
        match kind {
            Failure::Conflict => self.conflicts += 1,
            Failure::Refused => self.refused += 1,
            Failure::Failed => {}
        }
        self.worst_exit_code = exit_code::worse(self.worst_exit_code, exit_code);
    }

    /// Counts one object that succeeded as `label` without going through a runner.
    pub fn record_success(&mut self, label: &'static str) {
        *self.succeeded.entry(label).or_default() += 1;
    }

    /// One line by outcome, each named even when none: `12 patched, 3 unchanged,
    /// 1 conflict, 2 refused, 0 failed` (then `, 40 not tried` if any were not).
    /// `labels` are the success labels to name in order (`patched`, `unchanged`).
    pub fn outcome_line(&self, labels: &[&str]) -> String {
        let mut parts: Vec<String> =
            labels.iter().map(|label| format!("{} {label}", self.succeeded.get(label).copied().unwrap_or(0))).collect();
        for (label, n) in &self.succeeded {
            if !labels.contains(label) {
                parts.push(format!("{n} {label}"));
            }
        }
        let plural = if self.conflicts == 1 { "" } else { "s" };
        parts.push(format!("{} conflict{plural}", self.conflicts));
        parts.push(format!("{} refused", self.refused));
        parts.push(format!("{} failed", self.failed - self.conflicts - self.refused));
        if self.not_tried > 0 || self.not_reached {
            parts.push(format!("{} not tried", self.not_tried));
        }
        parts.join(", ")
    }

    /// One line: `12 repaired, 3 unchanged, 2 failed, 40 not tried`.
    pub fn line(&self) -> String {
        let mut parts: Vec<String> = self.succeeded.iter().map(|(label, n)| format!("{n} {label}")).collect();
        if parts.is_empty() {
            parts.push("0 written".into());
        }
        parts.push(format!("{} failed", self.failed));
        if self.not_reached {
            parts.push(format!("{} not tried (and the objects not reached yet)", self.not_tried));
        } else if self.not_tried > 0 {
            parts.push(format!("{} not tried", self.not_tried));
        }
        parts.join(", ")
    }

    /// Prints the summary (and why the run stopped) on stderr.
    pub fn print(&self) {
        if let Some(why) = self.stop_message() {
            eprintln!("{why}");
        }
        eprintln!("{}", self.line());
    }

    /// Why the run stopped early and what to do, as an `error:` line; `None` when it ran to the end.
    pub fn stop_message(&self) -> Option<String> {
        if let Some(signal) = self.interrupted {
            return Some(format!(
                "error: interrupted ({}): the writes in flight were finished and nothing more was started; running the same command again is safe and finishes the job.",
                signal.name()
            ));
        }
        let why = self.stopped.as_ref()?;
        Some(if self.stopped_by_producer {
            format!(
                "error: {why}. Nothing more was started; running the same command again is safe and finishes the job."
            )
        } else {
            format!(
                "error: stopped after {} transport failures in a row: {why}. Nothing more was started; run the same command again when the server is back (it is safe to repeat).",
                self.transport_failures.min(self.failed)
            )
        })
    }
}

/// Runs `work` for every item, `options.concurrency` at a time. `name` gives the
/// object's name for error lines; `work` prints its own success line and returns
/// its label. Errors are printed one line each, except transport failures,
/// which are counted (the first is printed) so a dead server gives one message.
/// Every item not tried after the breaker opened is counted in `not_tried`.
pub async fn run<I, F, Fut>(
    items: impl IntoIterator<Item = I>,
    options: BulkOptions,
    name: impl Fn(&I) -> String,
    work: F,
) -> BulkSummary
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    run_with_progress(items, options, &Progress::hidden(), name, work).await
}

/// [`run`] with a progress bar by objects: `progress` advances as each object is done,
/// and error lines are printed with it cleared. `work` prints its own lines through the
/// same [`Progress`] (a clone of it).
pub async fn run_with_progress<I, F, Fut>(
    items: impl IntoIterator<Item = I>,
    options: BulkOptions,
    progress: &Progress,
    name: impl Fn(&I) -> String,
    work: F,
) -> BulkSummary
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    let items: Vec<I> = items.into_iter().collect();
    let total = items.len();
    // Until the summary is printed, a first stop signal lets the run finish the writes it started.
    let _in_flight = (!options.reads_only).then(InFlight::start);
    let stop = stop_signal(&options);
    let mut summary = drive(stream::iter(items.into_iter().map(Ok)), options, progress, name, work, stop).await;
    // A list is known in full: whatever was not reached was not tried either.
    summary.not_tried = total - summary.tried();
    summary.not_reached = false;
    summary
}

/// [`run`] over items that arrive while the run goes on (a scan that is still
/// listing): nothing is collected, so memory is bounded by the concurrency and
/// whatever the producer buffers. An `Err` item ends the run like an open breaker
/// does (the writes in flight finish, nothing more is started) and is the
/// summary's `stopped` reason. When the run stops early the items not yet
/// produced are not counted; `not_reached` says there may be some.
pub async fn run_stream<I, F, Fut>(
    items: impl Stream<Item = Result<I>>,
    options: BulkOptions,
    name: impl Fn(&I) -> String,
    work: F,
) -> BulkSummary
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    // Until the summary is printed, a first stop signal lets the run finish the writes it started.
    let _in_flight = (!options.reads_only).then(InFlight::start);
    let stop = stop_signal(&options);
    drive(items, options, &Progress::hidden(), name, work, stop).await
}

/// What stops a run: a stop signal, for work that writes. Work that only reads is never
/// stopped here: with nothing in flight the signal ends the process at once, saying nothing
/// was written, and a summary printed meanwhile would race that line.
fn stop_signal(
    options: &BulkOptions,
) -> futures::future::Either<impl Future<Output = Signal>, futures::future::Pending<Signal>> {
    if options.reads_only {
        futures::future::Either::Right(futures::future::pending())
    } else {
        futures::future::Either::Left(interrupt::stopped())
    }
}

/// The runners' loop: stops starting work when the breaker opens, the producer fails,
/// or `stop` resolves (with the signal that stopped it).
async fn drive<I, F, Fut>(
    items: impl Stream<Item = Result<I>>,
    options: BulkOptions,
    progress: &Progress,
    name: impl Fn(&I) -> String,
    work: F,
    stop: impl Future<Output = Signal>,
) -> BulkSummary
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<&'static str>>,
{
    let summary = RefCell::new(BulkSummary::default());
    let interrupted: Cell<Option<Signal>> = Cell::new(None);
    let interrupted_ref = &interrupted;
    // Ends the items at once on a signal, even while the producer is still listing.
    let stop = async move { interrupted_ref.set(Some(stop.await)) };
    let in_a_row = Cell::new(0usize);
    let open = Cell::new(false);
    let (summary_ref, in_a_row_ref, open_ref, work_ref, name_ref) = (&summary, &in_a_row, &open, &work, &name);
    // Stop asking the producer for more once the run has stopped: pulling on would
    // keep a scan of a dead server going.
    let exhausted = Cell::new(false);
    let exhausted_ref = &exhausted;
    let items = items
        .chain(stream::poll_fn(move |_| {
            exhausted_ref.set(true);
            std::task::Poll::Ready(None)
        }))
        .take_while(|_| futures::future::ready(!open_ref.get()))
        .take_until(stop);
    for_each_concurrently(items, options.concurrency, |item| async move {
        let item = match item {
            Ok(item) => item,
            Err(e) => {
                let mut summary = summary_ref.borrow_mut();
                if !open_ref.get() {
                    open_ref.set(true);
                    summary.stopped_by_producer = true;
                    summary.stopped = Some(e.to_string());
                }
                return;
            }
        };
        if open_ref.get() || interrupted_ref.get().is_some() {
            summary_ref.borrow_mut().not_tried += 1;
            return;
        }
        let object = name_ref(&item);
        let outcome = work_ref(item).await;
        progress.advance();
        let mut summary = summary_ref.borrow_mut();
        match outcome {
            Ok(label) => {
                in_a_row_ref.set(0);
                *summary.succeeded.entry(label).or_default() += 1;
            }
            // Stopped by a signal before its write was sent: not tried, not failed.
            Err(Error::Interrupted { .. }) => summary.not_tried += 1,
            Err(e) => {
                summary.record_failure(&e);
                let transport = is_transport_failure(&e);
                if transport {
                    summary.transport_failures += 1;
                    in_a_row_ref.set(in_a_row_ref.get() + 1);
                } else {
                    in_a_row_ref.set(0);
                }
                if !transport || summary.transport_failures == 1 {
                    progress.suspend(|| eprintln!("error: {object}: {e}"));
                }
                if transport && in_a_row_ref.get() >= options.stop_after_transport_failures && !open_ref.get() {
                    open_ref.set(true);
                    summary.stopped = Some(e.to_string());
                }
            }
        }
    })
    .await;
    let mut summary = summary.into_inner();
    if let Some(signal) = interrupted.get() {
        summary.interrupted = Some(signal);
        summary.stopped.get_or_insert_with(|| format!("interrupted ({})", signal.name()));
    }
    summary.not_reached = summary.stopped.is_some() && !exhausted.get();
    summary
}

/// What [`map`] returns: each item's result in the items' order (`None`: never started,
/// because the breaker opened), and why the run stopped, if it did.
#[derive(Debug)]
pub struct Mapped<T> {
    /// One per item, in order.
    pub results: Vec<Option<Result<T>>>,
    /// The transport failure that opened the breaker.
    pub stopped: Option<String>,
}

/// Runs `work` for every item, `options.concurrency` at a time, and hands every result
/// back in the items' order, for work whose results the command needs (previews, dry
/// runs). Nothing is printed; `progress` advances per item. After
/// `options.stop_after_transport_failures` transport failures in a row no more work is
/// started (those items' results are `None`) and `stopped` says why.
pub async fn map<I, T, F, Fut>(items: Vec<I>, options: BulkOptions, progress: &Progress, work: F) -> Mapped<T>
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let in_a_row = Cell::new(0usize);
    let stopped: RefCell<Option<String>> = RefCell::new(None);
    let (in_a_row_ref, stopped_ref, work_ref) = (&in_a_row, &stopped, &work);
    let results = map_concurrently(items, options.concurrency, |item| async move {
        if stopped_ref.borrow().is_some() {
            return None;
        }
        let outcome = work_ref(item).await;
        progress.advance();
        match &outcome {
            Err(e) if is_transport_failure(e) => {
                in_a_row_ref.set(in_a_row_ref.get() + 1);
                let mut stopped = stopped_ref.borrow_mut();
                if in_a_row_ref.get() >= options.stop_after_transport_failures && stopped.is_none() {
                    *stopped = Some(e.to_string());
                }
            }
            _ => in_a_row_ref.set(0),
        }
        Some(outcome)
    })
    .await;
    Mapped { results, stopped: stopped.into_inner() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> Error {
        Error::Conn(ConnError::Unreachable {
            server: "https://127.0.0.1:1".into(),
            reason: "connection refused".into(),
            maybe_sent: false,
        })
    }

    #[test]
    fn the_breaker_stops_a_run_against_a_dead_server() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let summary = runtime.block_on(run(
            0..100,
            BulkOptions::with_concurrency(4),
            |i| format!("cm/{i}"),
            |i| async move {
                if i < 10 {
                    Ok("repaired")
                } else {
                    Err(unreachable())
                }
            },
        ));
        assert_eq!(summary.succeeded.get("repaired"), Some(&10));
        assert!(summary.failed >= 3 && summary.failed <= 6, "{summary:?}");
        assert_eq!(summary.failed + summary.not_tried + 10, 100);
        assert!(summary.stopped.is_some());
        assert!(!summary.all_succeeded());
        let line = summary.line();
        assert!(line.starts_with("10 repaired, ") && line.contains("not tried"), "{line}");
    }

    #[test]
    fn a_stream_is_consumed_as_it_comes_and_a_failing_producer_stops_the_run() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let pulled = Cell::new(0usize);
        let items = stream::iter(0..1000).map(|i| {
            pulled.set(pulled.get() + 1);
            if i == 50 {
                Err(unreachable())
            } else {
                Ok(i)
            }
        });
        let summary = runtime.block_on(run_stream(
            items,
            BulkOptions::with_concurrency(4),
            |i| format!("cm/{i}"),
            |_| async { Ok("repaired") },
        ));
        assert!(pulled.get() <= 50 + 4 + 1, "the producer was pulled on after it failed: {}", pulled.get());
        assert_eq!(summary.succeeded.get("repaired"), Some(&50));
        assert!(summary.stopped_by_producer && summary.not_reached && !summary.all_succeeded(), "{summary:?}");
        assert!(summary.line().contains("not tried"), "{}", summary.line());
    }

    #[test]
    fn a_stream_that_ends_is_not_reported_as_cut_short() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let summary = runtime.block_on(run_stream(
            stream::iter((0..10).map(Ok)),
            BulkOptions::with_concurrency(3),
            |i: &i32| format!("cm/{i}"),
            |_| async { Ok("unchanged") },
        ));
        assert_eq!(summary.succeeded.get("unchanged"), Some(&10));
        assert!(summary.all_succeeded() && !summary.not_reached, "{summary:?}");
        assert_eq!(summary.line(), "10 unchanged, 0 failed");
    }

    #[test]
    fn map_keeps_the_order_and_stops_starting_work_after_the_breaker_opens() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let started = Cell::new(0usize);
        let mapped = runtime.block_on(map(
            (0..50).collect(),
            BulkOptions::with_concurrency(3),
            &Progress::hidden(),
            |i: usize| {
                started.set(started.get() + 1);
                async move {
                    // Later items finish first: the order comes from the input, not from completion.
                    tokio::time::sleep(std::time::Duration::from_millis(10 - (i % 10) as u64)).await;
                    if i < 20 {
                        Ok(i * 2)
                    } else {
                        Err(unreachable())
                    }
                }
            },
        ));
        assert_eq!(mapped.results.len(), 50);
        for (i, result) in mapped.results.iter().take(20).enumerate() {
            assert_eq!(result.as_ref().unwrap().as_ref().unwrap(), &(i * 2));
        }
        assert!(mapped.stopped.is_some());
        assert!(started.get() <= 20 + 3 + 3, "work went on after the breaker opened: {}", started.get());
        assert!(mapped.results[49].is_none());
    }

    #[test]
    fn failures_count_by_kind_and_the_exit_code_is_the_worst_objects() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let summary = runtime.block_on(run(
            0..6,
            BulkOptions::with_concurrency(2),
            |i| format!("cm/{i}"),
            |i| async move {
                match i {
                    0 => {
                        Err(Error::ChangedSincePreview { object: "cm/0".into(), reason: "x".into(), what_moved: None })
                    }
                    1 => Err(Error::Conn(ConnError::Api {
                        code: 403,
                        reason: "Forbidden".into(),
                        message: "no".into(),
                        causes: vec![],
                    })),
                    2 => Ok("unchanged"),
                    _ => Ok("patched"),
                }
            },
        ));
        assert_eq!((summary.failed, summary.conflicts, summary.refused), (2, 1, 1));
        assert_eq!(summary.exit_code(), 1, "a forbidden object exits 1, as a single patch of it would");
        assert_eq!(
            summary.outcome_line(&["patched", "unchanged"]),
            "3 patched, 1 unchanged, 1 conflict, 1 refused, 0 failed"
        );
        assert_eq!(Failure::of(&unreachable()), Failure::Failed);
    }

    #[test]
    fn a_signal_stops_the_run_after_the_writes_in_flight() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (signal, received) = futures::channel::oneshot::channel::<()>();
        let signal = RefCell::new(Some(signal));
        let started = Cell::new(0usize);
        let summary = runtime.block_on(drive(
            stream::iter((0..1000).map(Ok)),
            BulkOptions::with_concurrency(4),
            &Progress::hidden(),
            |i: &i32| format!("cm/{i}"),
            |i| {
                started.set(started.get() + 1);
                if i == 20 {
                    signal.borrow_mut().take().map(|s| s.send(()));
                }
                async move {
                    tokio::task::yield_now().await;
                    // One write the signal caught before it was sent.
                    if i == 21 {
                        return Err(Error::Interrupted { object: format!("cm/{i}"), signal: "SIGINT" });
                    }
                    Ok("repaired")
                }
            },
            async move {
                let _ = received.await;
                Signal::Interrupt
            },
        ));
        assert_eq!(summary.interrupted, Some(Signal::Interrupt));
        assert!(started.get() <= 21 + 4, "{} writes started after the signal", started.get() - 21);
        assert_eq!(summary.failed, 0, "the writes in flight finished: {summary:?}");
        assert_eq!(summary.succeeded.get("repaired").copied().unwrap_or(0) + summary.not_tried, started.get());
        assert!(summary.not_reached && !summary.all_succeeded(), "{summary:?}");
        assert!(summary.line().contains("not tried"), "{}", summary.line());
    }

    #[test]
    fn refusals_do_not_open_the_breaker() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let summary = runtime.block_on(run(
            0..20,
            BulkOptions::with_concurrency(2),
            |i| format!("cm/{i}"),
            |i| async move {
                if i % 2 == 0 {
                    Err(Error::Conn(ConnError::Api {
                        code: 422,
                        reason: "Invalid".into(),
                        message: "no".into(),
                        causes: vec![],
                    }))
                } else {
                    Ok("unchanged")
                }
            },
        ));
        assert_eq!((summary.failed, summary.not_tried, summary.stopped.is_none()), (10, 0, true));
        assert_eq!(summary.succeeded.get("unchanged"), Some(&10));
    }
}
