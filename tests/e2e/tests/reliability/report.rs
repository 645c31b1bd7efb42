//! The reliability report, written whole by the run that measured its figures, to
//! `target/reports/RELIABILITY.md` ([`fieldwise_e2e::reports_dir`]); `scripts/publish-reports`
//! copies it to `docs/RELIABILITY.md`.
//!
//! Each test of the suite is one [`Section`]: it records its figures as it
//! measures them (before it asserts on them, so a failing run still reports
//! what it saw), and when the last of [`SECTIONS`] ends, passed or failed, the
//! file is generated from this run alone. A filtered run (`cargo test ... races`)
//! ends fewer sections and leaves the file alone, so the file never mixes runs.

use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use fieldwise_e2e::run_info::{commit, kubernetes_version, utc_now};
use fieldwise_e2e::{reports_dir, Cluster};

/// The sections, in the order the file shows them; the file is written when all have ended.
pub const SECTIONS: [&str; 16] = [
    "Preview/write races",
    "Keyed-list re-plan races",
    "Parallel writers",
    "Parallel list entries and data keys",
    "Field-manager conflict on apply",
    "Validation refusal",
    "Subresource undo",
    "Undo onto a recreated object",
    "Backup keys",
    "Backup retention",
    "Bulk repair with the apiserver killed",
    "Signals during a bulk run",
    "Names",
    "Hostile Helm releases",
    "Blind gates",
    "Watch faults",
];

/// What one section measured.
struct Measured {
    title: &'static str,
    passed: bool,
    seconds: f64,
    figures: Vec<(String, String)>,
}

/// When the run started (the first section's start) and its UTC time.
struct Run {
    started: Instant,
    utc: String,
}

static RUN: OnceLock<Run> = OnceLock::new();
static PANIC_HOOK: OnceLock<()> = OnceLock::new();

thread_local! {
    /// The first line of the last panic on this thread: why a section failed.
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the default panic report and remembers the message for the section's "failed because" row.
fn remember_panics() {
    PANIC_HOOK.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| info.payload().downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let short: String = message
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .take(3)
                .collect::<Vec<_>>()
                .join(" / ")
                .chars()
                .take(600)
                .collect();
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(short));
            default(info);
        }));
    });
}
static ENDED: Mutex<Vec<Measured>> = Mutex::new(Vec::new());

/// One running section: figures go in as they are measured; dropping it
/// (at the end of the test, or while a failed assertion unwinds) records it.
pub struct Section {
    title: &'static str,
    started: Instant,
    figures: Vec<(String, String)>,
    cluster: Cluster,
}

impl Section {
    /// Starts the section `title` (one of [`SECTIONS`]) against `cluster`.
    pub fn start(title: &'static str, cluster: &Cluster) -> Self {
        assert!(SECTIONS.contains(&title), "unknown section {title}");
        remember_panics();
        RUN.get_or_init(|| Run { started: Instant::now(), utc: utc_now() });
        Self { title, started: Instant::now(), figures: Vec::new(), cluster: cluster.clone() }
    }

    /// Records a measured figure.
    pub fn figure(&mut self, name: &str, value: impl ToString) {
        self.figures.push((name.to_string(), value.to_string()));
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let why = LAST_PANIC.with(|last| last.borrow_mut().take()).unwrap_or_default();
            self.figure("failed because", why);
        }
        let measured = Measured {
            title: self.title,
            passed: !std::thread::panicking(),
            seconds: self.started.elapsed().as_secs_f64(),
            figures: std::mem::take(&mut self.figures),
        };
        for (name, value) in &measured.figures {
            eprintln!("figure [{}] {name}: {value}", measured.title);
        }
        let Ok(mut ended) = ENDED.lock() else { return };
        ended.push(measured);
        if ended.len() == SECTIONS.len() {
            let doc = render(&ended, &self.cluster);
            let path = reports_dir().join("RELIABILITY.md");
            if let Err(e) = std::fs::create_dir_all(reports_dir()).and_then(|()| std::fs::write(&path, doc)) {
                eprintln!("cannot write {}: {e}", path.display());
            } else {
                eprintln!("reliability figures written to {}", path.display());
            }
        }
    }
}

fn render(ended: &[Measured], cluster: &Cluster) -> String {
    let run_info = RUN.get().expect("a section started the run");
    let passed = ended.iter().filter(|m| m.passed).count();
    let failed: Vec<&str> = ended.iter().filter(|m| !m.passed).map(|m| m.title).collect();
    let mut doc = String::new();
    let _ = writeln!(doc, "# Reliability figures\n");
    let _ = writeln!(
        doc,
        "Generated by the reliability suite (`tests/e2e/tests/reliability.rs`, run by `scripts/test`; \
         `scripts/publish-reports` copies it here). Every figure below was measured in the run described here.\n"
    );
    let _ = writeln!(doc, "| run | |\n|---|---|");
    let _ = writeln!(doc, "| command | `cargo test -p fieldwise-e2e --test reliability` (or `scripts/test`) |");
    let _ = writeln!(doc, "| date | {} |", run_info.utc);
    let _ = writeln!(doc, "| wall time | {:.1} s for all sections |", run_info.started.elapsed().as_secs_f64());
    let _ = writeln!(doc, "| commit | {} |", commit());
    let _ = writeln!(doc, "| Kubernetes | {} |", kubernetes_version(cluster));
    let _ = writeln!(
        doc,
        "| machine | {} cores (the cluster runs on the same cores) |",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let verdict = if failed.is_empty() {
        format!("all {passed} sections passed")
    } else {
        format!("{passed} of {} sections passed; **FAILED**: {}", ended.len(), failed.join(", "))
    };
    let _ = writeln!(doc, "| result | {verdict} |\n");
    for title in SECTIONS {
        let Some(m) = ended.iter().find(|m| m.title == title) else { continue };
        let status = if m.passed { "passed" } else { "**FAILED**" };
        let _ = writeln!(doc, "## {title}\n\n{status} in {:.1} s\n", m.seconds);
        if m.figures.is_empty() {
            continue;
        }
        let _ = writeln!(doc, "| figure | measured |\n|---|---|");
        for (name, value) in &m.figures {
            let _ = writeln!(doc, "| {name} | {} |", value.replace('|', "\\|").replace('\n', " "));
        }
        doc.push('\n');
    }
    doc
}
