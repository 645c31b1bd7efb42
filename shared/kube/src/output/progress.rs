//! A progress bar by objects for commands that act on many (`safe-patch -l ...`,
//! `owners plan -f dir/`): drawn on stderr only when stderr is a terminal, so scripts,
//! pipes and CI logs see the result lines alone. Lines printed meanwhile go through
//! [`Progress::suspend`] (or [`Progress::print`]), so they do not tear the bar.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::Result;

/// A progress bar over objects; cheap to clone (the clones draw one bar).
#[derive(Debug, Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar over `total` objects known up front, labelled `what` (`dry-run`,
    /// `patching`): drawn when stderr is a terminal, hidden otherwise.
    pub fn by_objects(total: usize, what: &str) -> Self {
        let template = format!("{what} [{{bar:30}}] {{pos}}/{{len}} objects ({{elapsed}})");
        Self::drawn(total, &template, 200)
    }

    /// A bar whose total grows while the objects are read (a directory streamed file by
    /// file): each [`Progress::found`] adds one; `what` counts them (`objects planned`).
    /// Drawn when stderr is a terminal, hidden otherwise.
    pub fn growing(what: &str) -> Self {
        let template = format!("{{spinner}} {{pos}}/{{len}} {what} [{{bar:30}}] ({{elapsed}})");
        Self::drawn(0, &template, 120)
    }

    fn drawn(total: usize, template: &str, tick_ms: u64) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        let bar = ProgressBar::new(total as u64);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(tick_ms));
        Progress { bar }
    }

    /// No bar: lines are printed as they come.
    pub fn hidden() -> Self {
        Progress { bar: ProgressBar::hidden() }
    }

    /// One more object known (read, not yet done), for a [`Progress::growing`] bar.
    pub fn found(&self) {
        self.bar.inc_length(1);
    }

    /// One more object done.
    pub fn advance(&self) {
        self.bar.inc(1);
    }

    /// Runs `print` with the bar cleared, so its lines do not interleave with it.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        self.bar.suspend(print)
    }

    /// Writes `line` and a newline to stdout with the bar cleared (a closed stdout is
    /// [`crate::Error::StdoutClosed`], as for every stdout write).
    pub fn print(&self, line: &str) -> Result<()> {
        self.suspend(|| crate::output::stdout::write(&format!("{line}\n")))
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
