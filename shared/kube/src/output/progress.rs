//! A progress bar by objects for commands that act on many (`safe-patch -l ...`): drawn
//! on stderr only when stderr is a terminal, so scripts and logs see the result lines
//! alone. Lines printed meanwhile go through [`Progress::suspend`] (or
//! [`Progress::print`]), so they do not tear the bar.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::Result;

/// A progress bar over a known number of objects; cheap to clone (the clones draw one bar).
#[derive(Debug, Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar over `total` objects, labelled `what` (`dry-run`, `patching`): drawn when
    /// stderr is a terminal, hidden otherwise.
    pub fn by_objects(total: usize, what: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self::hidden();
        }
        let bar = ProgressBar::new(total as u64);
        let template = format!("{what} [{{bar:30}}] {{pos}}/{{len}} objects ({{elapsed}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar }
    }

    /// No bar: lines are printed as they come.
    pub fn hidden() -> Self {
        Progress { bar: ProgressBar::hidden() }
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
