//! The progress line of a listing across many types (`last-applied scan -A`): pages and
//! objects read, types done, the type being listed. Beside [`super::progress`]'s bar by
//! objects because a scan does not know its objects up front, only its types.
//!
//! Counting types alone sat at "6/52 types" for seconds on a large cluster and then jumped;
//! pages and objects move with every answer. Shown on stderr, only when stderr is a
//! terminal; rows printed meanwhile go through [`ListingProgress::suspend`] so they do not tear it.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// The progress of one listing (single-threaded: the scan runs on one task).
#[derive(Debug)]
pub struct ListingProgress {
    bar: ProgressBar,
    types: usize,
    types_done: Cell<usize>,
    pages: Cell<u64>,
    objects: Cell<u64>,
}

impl ListingProgress {
    /// A progress line for `types` types: drawn when stderr is a terminal, hidden otherwise.
    pub fn new(types: usize) -> Self {
        let bar = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} scanning: {msg} ({elapsed})") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        } else {
            ProgressBar::hidden()
        };
        let progress =
            ListingProgress { bar, types, types_done: Cell::new(0), pages: Cell::new(0), objects: Cell::new(0) };
        progress.redraw("");
        progress
    }

    /// No progress line: for runs whose own output (a result line per write) shows the progress.
    pub fn hidden(types: usize) -> Self {
        let bar = ProgressBar::hidden();
        ListingProgress { bar, types, types_done: Cell::new(0), pages: Cell::new(0), objects: Cell::new(0) }
    }

    /// One more page of `objects` objects of the type `listing`.
    pub fn page(&self, listing: &str, objects: usize) {
        self.pages.set(self.pages.get() + 1);
        self.objects.set(self.objects.get() + objects as u64);
        self.redraw(listing);
    }

    /// One more type finished (listed, skipped or failed).
    pub fn type_done(&self) {
        self.types_done.set(self.types_done.get() + 1);
        self.redraw("");
    }

    /// Runs `print` with the progress line cleared, so stdout and stderr lines on the same
    /// terminal do not interleave with it.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        self.bar.suspend(print)
    }

    /// Removes the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn redraw(&self, listing: &str) {
        if self.bar.is_hidden() {
            return;
        }
        let mut message = format!(
            "{} pages, {} objects, {}/{} types done",
            self.pages.get(),
            self.objects.get(),
            self.types_done.get(),
            self.types
        );
        if !listing.is_empty() {
            message.push_str(&format!("; listing {listing}"));
        }
        self.bar.set_message(message);
    }
}
