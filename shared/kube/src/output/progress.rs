//! A progress bar for commands that work through many objects (`owners plan` of a
//! directory): drawn on stderr only when stderr is a terminal, never in a pipe or a CI
//! log; lines printed meanwhile go through [`Progress::suspend`] so they do not tear it.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Progress through a number of items that may grow while they are read.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar counting `what` (e.g. "objects planned"): drawn when stderr is a terminal,
    /// hidden otherwise.
    pub fn new(what: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::new(0);
        let template = format!("{{spinner}} {{pos}}/{{len}} {what} {{wide_bar}} {{elapsed}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar }
    }

    /// No bar at all.
    pub fn hidden() -> Self {
        Progress { bar: ProgressBar::hidden() }
    }

    /// One more item known (read, not yet done).
    pub fn found(&self) {
        self.bar.inc_length(1);
    }

    /// One more item done.
    pub fn done(&self) {
        self.bar.inc(1);
    }

    /// Runs `print` with the bar cleared, so lines on the same terminal do not interleave with it.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        self.bar.suspend(print)
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
