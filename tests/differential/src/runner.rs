//! One differential run: generate cases from a seed, ask the oracle, run the
//! Rust engine, compare, shrink the disagreements, report.

use crate::known_bugs;
use crate::oracle::Oracle;
use crate::outcome::{from_oracle, judge, Compare, Outcome, Verdict};
use crate::rng::Rng;
use crate::shrink::shrink;
use serde_json::Value;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

/// Seed used when `FIELDWISE_DIFF_SEED` is unset, so CI runs are reproducible.
pub const DEFAULT_SEED: u64 = 0x000F_1E1D_3153;
/// Cases per engine when `FIELDWISE_DIFF_CASES` is unset.
pub const DEFAULT_CASES: usize = 20_000;
/// Cases sent to the oracle at once.
const BATCH: usize = 1_000;
/// Disagreements shrunk and printed in full; the rest are counted.
const SHRUNK: usize = 5;
/// Oracle calls allowed per shrink.
const SHRINK_BUDGET: usize = 1_500;

/// How many cases to run and from which seed.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The run's seed; case `i` uses `Rng::case_seed(seed, i)`.
    pub seed: u64,
    /// Number of cases.
    pub cases: usize,
}

impl Settings {
    /// From `FIELDWISE_DIFF_SEED` (a number, or `random`) and `FIELDWISE_DIFF_CASES`.
    pub fn from_env() -> Self {
        let seed = match std::env::var("FIELDWISE_DIFF_SEED").ok().as_deref().map(str::trim) {
            None | Some("") => DEFAULT_SEED,
            Some("random") => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(DEFAULT_SEED),
            Some(text) => parse_seed(text).unwrap_or_else(|| panic!("FIELDWISE_DIFF_SEED={text:?} is not a number")),
        };
        let cases = std::env::var("FIELDWISE_DIFF_CASES")
            .ok()
            .map(|t| t.trim().parse().unwrap_or_else(|_| panic!("FIELDWISE_DIFF_CASES={t:?} is not a number")))
            .unwrap_or(DEFAULT_CASES);
        Settings { seed, cases }
    }
}

fn parse_seed(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Builds the case for a seed (with `op` set); `None` skips the seed.
pub type Generator<'a> = Box<dyn Fn(&mut Rng) -> Option<Value> + 'a>;

/// Runs the Rust engine on a case.
pub type RustEngine<'a> = Box<dyn Fn(&Value) -> Outcome + 'a>;

/// One engine function under test.
pub struct Engine<'a> {
    /// The oracle op, e.g. `strategic.apply`.
    pub op: &'static str,
    /// Builds the case for a seed (with `op` set); `None` skips the seed.
    pub generate: Generator<'a>,
    /// Runs the Rust engine on a case.
    pub run: RustEngine<'a>,
    /// How accepted results are compared.
    pub compare: Compare,
}

/// A case the engines disagree on.
#[derive(Debug, Clone)]
pub struct Disagreement {
    /// Index of the case in the run.
    pub index: usize,
    /// The case, as sent to the oracle.
    pub case: Value,
    /// Rust's answer.
    pub rust: Outcome,
    /// Upstream's answer.
    pub upstream: Outcome,
    /// How they differ.
    pub verdict: Verdict,
}

/// Totals of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// The op.
    pub op: &'static str,
    /// The run's seed.
    pub seed: u64,
    /// Cases compared.
    pub cases: usize,
    /// Same decision and same result.
    pub identical: usize,
    /// Same accept/reject decision (identical ones included).
    pub same_decision: usize,
    /// Upstream rejections among the cases (to see that both paths are exercised).
    pub upstream_rejected: usize,
    /// Disagreements explained by a documented upstream bug, by bug id.
    pub known_bugs: BTreeMap<&'static str, usize>,
    /// Unexplained disagreements.
    pub disagreements: Vec<Disagreement>,
    /// Cases the oracle could not use (harness bugs), with its reason.
    pub bad_cases: Vec<(usize, String)>,
}

impl Report {
    /// Whether the run found nothing wrong.
    pub fn passed(&self) -> bool {
        self.disagreements.is_empty() && self.bad_cases.is_empty()
    }

    /// One line of totals.
    pub fn summary(&self) -> String {
        let known: usize = self.known_bugs.values().sum();
        format!(
            "{}: seed {:#x}: {} cases, {} identical results, {} identical accept/reject decisions \
             ({} rejected upstream), {} known upstream bugs we differ on on purpose {:?}, \
             {} unexplained disagreements, {} unusable cases",
            self.op,
            self.seed,
            self.cases,
            self.identical,
            self.same_decision,
            self.upstream_rejected,
            known,
            self.known_bugs,
            self.disagreements.len(),
            self.bad_cases.len()
        )
    }
}

thread_local! {
    static QUIET_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// Silences panic messages of engine calls on this thread (they are reported
/// as disagreements instead of flooding the output).
fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANICS.with(Cell::get) {
                default(info);
            }
        }));
    });
}

/// Runs the Rust engine on a case, turning a panic into [`Outcome::Panicked`].
pub fn run_guarded(engine: &Engine<'_>, case: &Value) -> Outcome {
    install_quiet_hook();
    QUIET_PANICS.with(|q| q.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| (engine.run)(case)));
    QUIET_PANICS.with(|q| q.set(false));
    result.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic".into());
        Outcome::Panicked(message)
    })
}

/// Runs `settings.cases` cases of `engine` against `oracle`.
pub fn run(engine: &Engine<'_>, oracle: &mut Oracle, settings: Settings) -> Result<Report, String> {
    let mut report = Report { op: engine.op, seed: settings.seed, ..Report::default() };
    let mut index = 0;
    let mut seed_index = 0u64;
    while index < settings.cases {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH.min(settings.cases - index) {
            let mut rng = Rng::new(Rng::case_seed(settings.seed, seed_index));
            seed_index += 1;
            if let Some(case) = (engine.generate)(&mut rng) {
                batch.push(case);
            }
            if seed_index > (settings.cases as u64) * 20 + 100 {
                return Err(format!("{}: the generator skips nearly every seed", engine.op));
            }
        }
        let answers = oracle.ask_all(&batch)?;
        for (case, answer) in batch.into_iter().zip(answers) {
            let at = index;
            index += 1;
            let upstream = match from_oracle(&answer) {
                Ok(outcome) => outcome,
                Err(reason) => {
                    if report.bad_cases.len() < 20 {
                        report.bad_cases.push((at, format!("{reason}; case {case}")));
                    }
                    continue;
                }
            };
            let rust = run_guarded(engine, &case);
            record(&mut report, engine, at, case, rust, upstream);
        }
    }
    Ok(report)
}

fn record(report: &mut Report, engine: &Engine<'_>, index: usize, case: Value, rust: Outcome, upstream: Outcome) {
    report.cases += 1;
    report.upstream_rejected += usize::from(matches!(upstream, Outcome::Rejected(_)));
    let verdict = judge(&rust, &upstream, engine.compare);
    if verdict != Verdict::DifferentDecision {
        report.same_decision += 1;
    }
    if verdict == Verdict::Identical {
        report.identical += 1;
        return;
    }
    if let Some(bug) = known_bugs::classify(engine.op, &case, &rust, &upstream) {
        *report.known_bugs.entry(bug.id).or_default() += 1;
        return;
    }
    report.disagreements.push(Disagreement { index, case, rust, upstream, verdict });
}

/// Shrinks a disagreement to a minimal case that still disagrees the same way.
pub fn minimize(engine: &Engine<'_>, oracle: &mut Oracle, d: &Disagreement) -> Value {
    shrink(&d.case, SHRINK_BUDGET, |candidate| {
        let Ok(answer) = oracle.ask(candidate) else { return false };
        let Ok(upstream) = from_oracle(&answer) else { return false };
        judge(&run_guarded(engine, candidate), &upstream, engine.compare) == d.verdict
    })
}

/// The failure message: totals, then the first disagreements shrunk and ready to paste.
pub fn failure_text(engine: &Engine<'_>, oracle: &mut Oracle, report: &Report) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}", report.summary());
    let _ = writeln!(
        text,
        "replay with FIELDWISE_DIFF_SEED={:#x} (case i uses Rng::case_seed(seed, i) among generated seeds)",
        report.seed
    );
    for (index, reason) in &report.bad_cases {
        let _ = writeln!(text, "unusable case #{index}: {reason}");
    }
    for d in report.disagreements.iter().take(SHRUNK) {
        let small = minimize(engine, oracle, d);
        let rust = run_guarded(engine, &small);
        let upstream = oracle.ask(&small).ok().and_then(|a| from_oracle(&a).ok());
        let _ = writeln!(text, "\n{:?} on case #{} (seed {:#x}); minimal case:", d.verdict, d.index, report.seed);
        let _ = writeln!(text, "{small}");
        let _ = writeln!(text, "  rust:     {}", describe(&rust));
        let _ = writeln!(text, "  upstream: {}", upstream.as_ref().map(describe).unwrap_or_else(|| "?".into()));
        let _ = writeln!(text, "  original case: {}", d.case);
    }
    if report.disagreements.len() > SHRUNK {
        let _ = writeln!(text, "\n... and {} more disagreements", report.disagreements.len() - SHRUNK);
    }
    text
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Accepted(v) => format!("accepted {v}"),
        Outcome::Rejected(e) => format!("rejected: {e}"),
        Outcome::Panicked(p) => format!("PANICKED: {p}"),
    }
}

/// Starts the oracle, runs the engine with the environment's settings, prints
/// the totals, and panics with the shrunk disagreements if there are any.
/// The oracle is required: without it the test fails, it never skips.
pub fn check(engine: Engine<'_>) {
    let settings = Settings::from_env();
    let mut oracle = Oracle::start().unwrap_or_else(|e| panic!("{}: the Go oracle is required: {e}", engine.op));
    let report = run(&engine, &mut oracle, settings).unwrap_or_else(|e| panic!("{}: {e}", engine.op));
    println!("{}", report.summary());
    eprintln!("{}", report.summary());
    if !report.passed() {
        panic!("{}", failure_text(&engine, &mut oracle, &report));
    }
    assert!(report.cases > 0, "{}: no case ran", engine.op);
}
