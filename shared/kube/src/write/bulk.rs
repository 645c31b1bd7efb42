//! Many guarded writes at once (`repair --from-scan`, `migrate` of several
//! objects): bounded concurrency, a per-object result line, and a circuit
//! breaker: after several transport failures in a row the server is taken to
//! be gone, no further write is started, and one summary says what was done,
//! what failed and what was not tried. Each write is guarded and idempotent, so
//! running the same command again finishes the job.
//!
//! A stop signal (Ctrl-C, SIGTERM) ends a run the same way: nothing more is started,
//! the writes in flight finish, the summary is printed, and the command exits 130 or
//! 143 (see [`crate::write::interrupt`]).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;

use futures::stream::{self, Stream, StreamExt};

use crate::error::{Error, Result};
use crate::write::interrupt::{self, InFlight, Signal};

/// How a bulk write runs.
#[derive(Debug, Clone, Copy)]
pub struct BulkOptions {
    /// Writes in flight at once.
    pub concurrency: usize,
    /// Stop starting writes after this many transport failures in a row.
    pub stop_after_transport_failures: usize,
}

impl BulkOptions {
    /// `concurrency` writes at once; the breaker opens after 3 transport failures in a row.
    pub fn with_concurrency(concurrency: usize) -> Self {
        BulkOptions { concurrency: concurrency.max(1), stop_after_transport_failures: 3 }
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
    /// The run stopped on this signal.
    pub interrupted: Option<Signal>,
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
        if let Some(signal) = self.interrupted {
            eprintln!(
                "error: interrupted ({}): the writes in flight were finished and nothing more was started; running the same command again is safe and finishes the job.",
                signal.name()
            );
        } else if let (Some(why), true) = (&self.stopped, self.stopped_by_producer) {
            eprintln!(
                "error: {why}. Nothing more was started; running the same command again is safe and finishes the job."
            );
        } else if let Some(why) = &self.stopped {
            eprintln!(
                "error: stopped after {} transport failures in a row: {why}. Nothing more was started; run the same command again when the server is back (it is safe to repeat).",
                self.transport_failures.min(self.failed)
            );
        }
        eprintln!("{}", self.line());
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
    let items: Vec<I> = items.into_iter().collect();
    let total = items.len();
    let mut summary = run_stream(stream::iter(items.into_iter().map(Ok)), options, name, work).await;
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
    // Until the summary is printed, a first stop signal lets the run finish what it started.
    let _in_flight = InFlight::start();
    run_stream_until(items, options, name, work, interrupt::stopped()).await
}

/// [`run_stream`] that stops when `stop` resolves (with the signal that stopped it).
async fn run_stream_until<I, F, Fut>(
    items: impl Stream<Item = Result<I>>,
    options: BulkOptions,
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
    items
        .map(|item| async move {
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
            let mut summary = summary_ref.borrow_mut();
            match outcome {
                Ok(label) => {
                    in_a_row_ref.set(0);
                    *summary.succeeded.entry(label).or_default() += 1;
                }
                // Stopped by a signal before its write was sent: not tried, not failed.
                Err(Error::Interrupted { .. }) => summary.not_tried += 1,
                Err(e) => {
                    summary.failed += 1;
                    let transport = is_transport(&e);
                    if transport {
                        summary.transport_failures += 1;
                        in_a_row_ref.set(in_a_row_ref.get() + 1);
                    } else {
                        in_a_row_ref.set(0);
                    }
                    if !transport || summary.transport_failures == 1 {
                        eprintln!("error: {object}: {e}");
                    }
                    if transport && in_a_row_ref.get() >= options.stop_after_transport_failures && !open_ref.get() {
                        open_ref.set(true);
                        summary.stopped = Some(e.to_string());
                    }
                }
            }
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect::<()>()
        .await;
    let mut summary = summary.into_inner();
    if let Some(signal) = interrupted.get() {
        summary.interrupted = Some(signal);
        summary.stopped.get_or_insert_with(|| format!("interrupted ({})", signal.name()));
    }
    summary.not_reached = summary.stopped.is_some() && !exhausted.get();
    summary
}

/// A failure that says the server is not answering, rather than refusing this object.
fn is_transport(err: &Error) -> bool {
    err.is_transport() || matches!(err, Error::Api { code: 502..=504, .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> Error {
        Error::Unreachable {
            server: "https://127.0.0.1:1".into(),
            reason: "connection refused".into(),
            maybe_sent: false,
        }
    }

    #[test]
    fn the_breaker_stops_a_run_against_a_dead_server() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let summary = runtime.block_on(run(
            0..100,
            BulkOptions { concurrency: 4, stop_after_transport_failures: 3 },
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
    fn a_signal_stops_the_run_after_the_writes_in_flight() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (signal, received) = futures::channel::oneshot::channel::<()>();
        let signal = RefCell::new(Some(signal));
        let started = Cell::new(0usize);
        let summary = runtime.block_on(run_stream_until(
            stream::iter((0..1000).map(Ok)),
            BulkOptions::with_concurrency(4),
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
                    Err(Error::Api { code: 422, reason: "Invalid".into(), message: "no".into(), causes: vec![] })
                } else {
                    Ok("unchanged")
                }
            },
        ));
        assert_eq!((summary.failed, summary.not_tried, summary.stopped.is_none()), (10, 0, true));
        assert_eq!(summary.succeeded.get("unchanged"), Some(&10));
    }
}
