//! Keyed-list re-plan races (issue #22.1), repeated: an entry inserted into a keyed list by
//! position lands where the preview put it, or the write stops with exit 3 and names the
//! entry; never elsewhere. `tests/replan.rs` checks each case once; here each runs round
//! after round, the three cases in parallel, so a promise kept only most of the time shows.
//!
//! The concurrent writer is the before-write hook, so the race happens in every round: the
//! assertion is exact, not statistical.

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::time::Instant;

use fieldwise_e2e::keyed_race::{
    concurrent_json_patch, json_patch_racing, names, reset_web, safe_patch_writes, web, APPEND_LATE, ENV, INIT,
    INSERT_BACKUP_DB_SECOND, INSERT_ENV_B_SECOND, INSERT_ENV_Z_FIRST, INSERT_HOOK_INIT_FIRST,
};
use fieldwise_e2e::{require_cluster, text, Cluster};

use super::report::Section;
use super::{data_dir, describe};

/// Rounds per case.
const ROUNDS: usize = 10;

/// One race: our insert by position, and what the concurrent writer does to the same list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum KeyedRace {
    /// We insert init container backup-db second; they insert hook-init first. Re-planned, our
    /// `add .../1` would put backup-db before migrate-db: exit 3.
    InitInsertedBefore,
    /// We insert init container backup-db second; they append late. Re-planned, backup-db
    /// still lands after migrate-db: exit 0.
    InitAppended,
    /// We insert env B second (between A and C); they insert Z first: exit 3.
    EnvInsertedBefore,
}

const RACES: [KeyedRace; 3] = [KeyedRace::InitInsertedBefore, KeyedRace::InitAppended, KeyedRace::EnvInsertedBefore];

impl KeyedRace {
    /// The case as the report names it.
    fn label(self) -> &'static str {
        match self {
            KeyedRace::InitInsertedBefore => "initContainers, concurrent insert at 0 (must exit 3)",
            KeyedRace::InitAppended => "initContainers, concurrent append (must land as previewed)",
            KeyedRace::EnvInsertedBefore => "env, concurrent insert at 0 (must exit 3)",
        }
    }

    /// Our JSON Patch and theirs.
    fn patches(self) -> (&'static str, &'static str) {
        match self {
            KeyedRace::InitInsertedBefore => (INSERT_BACKUP_DB_SECOND, INSERT_HOOK_INIT_FIRST),
            KeyedRace::InitAppended => (INSERT_BACKUP_DB_SECOND, APPEND_LATE),
            KeyedRace::EnvInsertedBefore => (INSERT_ENV_B_SECOND, INSERT_ENV_Z_FIRST),
        }
    }

    /// The list raced for, our entry, and the entry the preview put it right after.
    fn list(self) -> (&'static str, &'static str, &'static str) {
        match self {
            KeyedRace::InitInsertedBefore | KeyedRace::InitAppended => (INIT, "backup-db", "migrate-db"),
            KeyedRace::EnvInsertedBefore => (ENV, "B", "A"),
        }
    }

    /// Whether our write must land (exit 0) rather than stop (exit 3).
    fn lands(self) -> bool {
        self == KeyedRace::InitAppended
    }

    /// The list's names once the round is over.
    fn expected_names(self) -> &'static [&'static str] {
        match self {
            KeyedRace::InitInsertedBefore => &["hook-init", "migrate-db", "warm-cache"],
            KeyedRace::InitAppended => &["migrate-db", "backup-db", "warm-cache", "late"],
            KeyedRace::EnvInsertedBefore => &["Z", "A", "C"],
        }
    }

    /// The answers to safe-patch's PATCHes: the first write's guard always fails (the list's
    /// membership moved); only a re-plan that keeps the previewed place writes again.
    fn expected_writes(self) -> &'static [u16] {
        if self.lands() {
            &[422, 200]
        } else {
            &[422]
        }
    }
}

/// What one round came to.
#[derive(Debug, Default)]
struct RoundOutcome {
    /// Our entry is in the list, but not right after the entry the preview put it after.
    landed_elsewhere: bool,
    /// The answers to safe-patch's PATCHes (dry runs not counted).
    writes: Vec<u16>,
    /// How the round broke a promise, if it did.
    problem: Option<String>,
}

/// One round of `race` in `ns`: reset deploy/web, run safe-patch with the concurrent writer as the
/// hook, judge the exit, the message, the list and the PATCHes sent.
fn round(cluster: &Cluster, ns: &str, data: &std::path::Path, race: KeyedRace, i: usize) -> RoundOutcome {
    reset_web(cluster, ns);
    let (ours, theirs) = race.patches();
    let (pointer, entry, previous) = race.list();
    let mark = cluster.audit_mark();
    let out = json_patch_racing(cluster, data, ns, ours, &concurrent_json_patch(ns, theirs));
    let after = names(cluster, ns, pointer);
    let writes = safe_patch_writes(cluster, mark, ns);
    let place = after.iter().position(|n| n == entry);
    let landed_elsewhere = place.is_some_and(|p| p == 0 || after[p - 1] != previous);
    let what = format!("round {i} of {race:?} in {ns}");
    let stderr = text(&out.stderr);
    let message = format!(r#"[name="{entry}"] would now come before [name="{previous}"]; the preview put it after"#);
    let problem = if race.lands() && out.status.code() != Some(0) {
        Some(format!("{what}: expected exit 0, {}", describe(&out)))
    } else if !race.lands() && out.status.code() != Some(3) {
        Some(format!("{what}: expected exit 3, {}", describe(&out)))
    } else if !race.lands() && !stderr.contains(&message) {
        Some(format!("{what}: exit 3 without naming the entry ({message}): {stderr}"))
    } else if after != race.expected_names() {
        Some(format!("{what}: {pointer} is {after:?}, expected {:?}", race.expected_names()))
    } else if writes != race.expected_writes() {
        Some(format!("{what}: PATCH answers {writes:?}, expected {:?}", race.expected_writes()))
    } else {
        None
    };
    RoundOutcome { landed_elsewhere, writes, problem }
}

/// The text a panic carried.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// `422: n, 200: m` over the rounds' PATCH answers.
fn answer_counts<'a>(outcomes: impl Iterator<Item = &'a RoundOutcome>) -> String {
    let mut counts: BTreeMap<u16, usize> = BTreeMap::from([(422, 0), (200, 0)]);
    for code in outcomes.flat_map(|o| &o.writes) {
        *counts.entry(*code).or_default() += 1;
    }
    counts.iter().rev().map(|(code, n)| format!("{code}: {n}")).collect::<Vec<_>>().join(", ")
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn keyed_list_races_land_as_previewed_or_stop_every_round() {
    let cluster = require_cluster!();
    let mut section = Section::start("Keyed-list re-plan races", &cluster);
    let started = Instant::now();
    let outcomes: Mutex<Vec<(KeyedRace, RoundOutcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for race in RACES {
            let (cluster, outcomes) = (&cluster, &outcomes);
            scope.spawn(move || {
                let ns = web(cluster, "fw-rel-keyed");
                let data = data_dir(&format!("keyed-{race:?}"));
                for i in 0..ROUNDS {
                    // A helper that fails (a kubectl that errs) is this round's problem, with its
                    // message in the report, not a bare "a scoped thread panicked".
                    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| round(cluster, &ns, &data, race, i)))
                        .unwrap_or_else(|payload| RoundOutcome {
                            problem: Some(format!("round {i} of {race:?} in {ns}: {}", panic_message(&*payload))),
                            ..RoundOutcome::default()
                        });
                    outcomes.lock().expect("outcomes").push((race, outcome));
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().expect("outcomes");
    let ran = outcomes.len();
    let elsewhere = outcomes.iter().filter(|(_, o)| o.landed_elsewhere).count();
    let problems: Vec<&String> = outcomes.iter().filter_map(|(_, o)| o.problem.as_ref()).collect();
    section.figure(&format!("rounds run ({} cases raced in parallel, {ROUNDS} rounds each)", RACES.len()), ran);
    for race in RACES {
        let of_race = || outcomes.iter().filter(move |(r, _)| *r == race).map(|(_, o)| o);
        let good = of_race().filter(|o| o.problem.is_none()).count();
        section.figure(&format!("{}: as promised / run", race.label()), format!("{good} / {}", of_race().count()));
        section.figure(&format!("{}: PATCH answers", race.label()), answer_counts(of_race()));
    }
    section.figure("writes that landed in another position than previewed", elsewhere);
    section.figure("rounds not as promised (any reason)", problems.len());
    if let Some(first) = problems.first() {
        section.figure("first problem", first.lines().next().unwrap_or_default());
    }
    section.figure("duration", format!("{:.1} s", started.elapsed().as_secs_f64()));
    let first: Vec<String> = problems.iter().take(5).map(|p| p.chars().take(400).collect()).collect();
    assert_eq!(ran, RACES.len() * ROUNDS, "rounds run");
    assert_eq!(elsewhere, 0, "writes landed elsewhere than previewed; first problems:\n{first:#?}");
    assert!(problems.is_empty(), "{} rounds not as promised; first:\n{first:#?}", problems.len());
}
