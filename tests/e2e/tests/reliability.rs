//! The reliability suite: the one write path under contention and faults,
//! black-box through the real plugins on the real cluster (issue #12).
//!
//! Every failure mode the issue reproduced is a test here: preview/write races
//! (same-effect and conflicting concurrent writers, hook-driven), parallel
//! writers of disjoint changes to one object, a field-manager conflict on
//! apply, a validation refusal, undo of a subresource write, backups of two
//! objects whose names used to collide, backup retention, and a bulk repair
//! of 1,000 objects with the apiserver killed under it (on a private cluster);
//! from issue #22, keyed-list re-plan races repeated round after round
//! (`reliability/keyed_races.rs`), undo onto an object recreated since its
//! backup, and bulk runs stopped by SIGINT, SIGTERM, a second SIGINT and
//! SIGKILL (`reliability/signals.rs`); from issue #44, names that would reach another object
//! (`reliability/names.rs`), hostile Helm releases (`reliability/hostile_releases.rs`), every
//! check run by an account that may read nothing, in every output format
//! (`reliability/blind_gates.rs`), and `owners watch` through outages (`reliability/watch_faults.rs`).
//! The figures each test measures go to `target/reports/RELIABILITY.md` (see
//! `reliability/report.rs`), written by the run that measured them; `scripts/publish-reports`
//! copies it to `docs/`.

#[path = "reliability/blind_gates.rs"]
mod blind_gates;
#[path = "reliability/hostile_releases.rs"]
mod hostile_releases;
#[path = "reliability/keyed_races.rs"]
mod keyed_races;
#[path = "reliability/names.rs"]
mod names;
#[path = "reliability/report.rs"]
mod report;
#[path = "reliability/signals.rs"]
mod signals;
#[path = "reliability/watch_faults.rs"]
mod watch_faults;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fieldwise_e2e::audit::AuditEvent;
use fieldwise_e2e::private_cluster::PrivateCluster;
use fieldwise_e2e::raw_api::RawApi;
use fieldwise_e2e::{eventually, fixture, require_cluster, run, text, Cluster};
use report::Section;
use serde_json::{json, Value};

const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A private, empty backup directory per test.
fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-rel-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `kubectl safe-patch` (the plugin binary) in `ns`, backing up into `data`.
fn safe_patch(cluster: &Cluster, data: &Path, ns: &str) -> Command {
    let mut cmd = cluster.plugin("kubectl-safe_patch");
    cmd.env("FIELDWISE_DATA_DIR", data).args(["-n", ns]);
    cmd
}

/// `kubectl last-applied` (the plugin binary) in `ns`, backing up into `data`.
fn last_applied(cluster: &Cluster, data: &Path, ns: &str) -> Command {
    let mut cmd = cluster.plugin("kubectl-last_applied");
    cmd.env("FIELDWISE_DATA_DIR", data).args(["-n", ns]);
    cmd
}

fn describe(out: &Output) -> String {
    format!("{}\nstdout: {}\nstderr: {}", exit(out), text(&out.stdout), text(&out.stderr))
}

/// An exit code as a person reads it.
fn exit(out: &Output) -> String {
    out.status.code().map_or_else(|| "killed by a signal".into(), |c| format!("exit {c}"))
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", describe(out));
    text(&out.stdout)
}

fn busybox(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", fixture("busybox-demo.yaml").to_str().expect("UTF-8 path")]);
    ns
}

/// The requests a user's command (not a controller) sent about one object after `mark`,
/// read once the audit log has caught up.
fn user_requests(
    cluster: &Cluster,
    mark: fieldwise_e2e::audit::AuditMark,
    resource: &str,
    ns: &str,
    name: &str,
) -> Vec<AuditEvent> {
    std::thread::sleep(Duration::from_millis(500));
    cluster.audit_of(mark, resource, ns, name).into_iter().filter(|e| !e.is_from_system()).collect()
}

fn count(events: &[AuditEvent], verb: &str) -> usize {
    events.iter().filter(|e| e.verb == verb).count()
}

/// The rows of `kubectl safe-patch history`: every line but the header and the "No backups" line.
fn history_rows(out: &Output) -> Vec<String> {
    text(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("TIME") && !l.starts_with("No backups"))
        .map(String::from)
        .collect()
}

/// The promises a test checks, all of them before it fails, so one run shows every broken one.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    /// Records `what` as broken unless `kept`.
    fn promise(&mut self, kept: bool, what: impl FnOnce() -> String) {
        if !kept {
            self.0.push(what());
        }
    }

    /// Fails the test if any promise was broken.
    fn verify(self) {
        let summary: Vec<String> =
            self.0.iter().map(|p| p.lines().next().unwrap_or_default().chars().take(160).collect()).collect();
        assert!(
            self.0.is_empty(),
            "{} broken promise(s): {}\n\nin full:\n- {}",
            self.0.len(),
            summary.join("; "),
            self.0.join("\n- ")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Preview/write races

/// What the concurrent writer (the hook) does between our preview and our write. Labels and
/// annotations, not ConfigMap data, so the diffs show values (data values are masked as `***`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Concurrent {
    /// Adds another label to the labels map we add ours to.
    OtherLabel,
    /// Changes another field (an annotation).
    OtherField,
    /// Writes the very label value we are about to write.
    SameValue,
    /// Creates the labels map that our patch also creates (`kubectl label cm nolabels other=x`).
    CreatesMap,
    /// Writes another value to the label we set: the only conflicting case.
    SameFieldOtherValue,
}

const CONCURRENT: [Concurrent; 5] = [
    Concurrent::OtherLabel,
    Concurrent::OtherField,
    Concurrent::SameValue,
    Concurrent::CreatesMap,
    Concurrent::SameFieldOtherValue,
];

/// What one race came to.
#[derive(Debug, Default)]
struct RaceOutcome {
    /// A write was lost: ours after exit 0, or theirs overwritten.
    lost_update: bool,
    /// Exit 3 although the concurrent change had the same effect as ours.
    false_exit_3: bool,
    /// Anything else that broke the promise, described.
    problem: Option<String>,
}

/// One race on `object`: reset it, run safe-patch with the concurrent writer as the hook, judge.
fn race(
    cluster: &Cluster,
    api: &RawApi,
    data: &Path,
    ns: &str,
    object: &str,
    i: usize,
    kind: Concurrent,
) -> RaceOutcome {
    let path = format!("/api/v1/namespaces/{ns}/configmaps/{object}");
    if kind == Concurrent::CreatesMap {
        let no_maps = json!({"metadata": {"labels": null, "annotations": null}});
        api.patch(&path, "application/merge-patch+json", &no_maps);
    } else {
        let base = json!([
            {"op": "add", "path": "/metadata/labels", "value": {"base": "b"}},
            {"op": "add", "path": "/metadata/annotations", "value": {}},
        ]);
        api.patch(&path, "application/json-patch+json", &base);
    }
    let label = |value: String| format!("kubectl label -n {ns} cm/{object} --overwrite {value} >/dev/null");
    let hook = match kind {
        Concurrent::OtherLabel | Concurrent::CreatesMap => label(format!("other=x{i}")),
        Concurrent::OtherField => format!("kubectl annotate -n {ns} cm/{object} --overwrite note=o{i} >/dev/null"),
        Concurrent::SameValue => label(format!("mine=y{i}")),
        Concurrent::SameFieldOtherValue => label(format!("mine=w{i}")),
    };
    let ours = format!(r#"{{"metadata":{{"labels":{{"mine":"y{i}"}}}}}}"#);
    let patch_type = if (i / CONCURRENT.len()).is_multiple_of(2) { "strategic" } else { "merge" };
    let out = run(safe_patch(cluster, data, ns).env("FIELDWISE_HOOK_BEFORE_WRITE", &hook).args([
        &format!("cm/{object}"),
        "--type",
        patch_type,
        "-p",
        &ours,
        "--yes",
    ]));
    let after = api.get(&path);
    let label = |k: &str| after["metadata"]["labels"][k].as_str().unwrap_or_default().to_string();
    let code = out.status.code();
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let what = format!("race {i} ({kind:?}, --type {patch_type}, {object})");
    let mut outcome = RaceOutcome::default();
    if kind == Concurrent::SameFieldOtherValue {
        outcome.lost_update = label("mine") != format!("w{i}");
        if code != Some(3) {
            outcome.problem = Some(format!("{what}: expected exit 3, {}", describe(&out)));
        } else if !stderr.contains(&format!("w{i}")) {
            outcome.problem = Some(format!("{what}: exit 3 without the diff of what moved (w{i}): {stderr}"));
        } else if outcome.lost_update {
            outcome.problem = Some(format!("{what}: the other writer's value was overwritten"));
        }
        return outcome;
    }
    let ours_there = label("mine") == format!("y{i}");
    let theirs_there = match kind {
        Concurrent::OtherLabel | Concurrent::CreatesMap => label("other") == format!("x{i}"),
        Concurrent::OtherField => after["metadata"]["annotations"]["note"] == format!("o{i}"),
        _ => ours_there,
    };
    let base_kept = kind == Concurrent::CreatesMap || label("base") == "b";
    outcome.false_exit_3 = code == Some(3);
    // Lost: our success without both changes, our write over theirs, or the untouched label gone. An
    // error before the hook ran leaves neither change: a problem, not a lost update.
    outcome.lost_update = !base_kept || (code == Some(0) && !ours_there) || (ours_there && !theirs_there);
    if code != Some(0) {
        outcome.problem = Some(format!("{what}: expected exit 0, {}", describe(&out)));
    } else if kind == Concurrent::SameValue && stdout.trim() != format!("configmap/{object} patched (no change)") {
        outcome.problem = Some(format!("{what}: expected `configmap/{object} patched (no change)`, got {stdout:?}"));
    } else if outcome.lost_update {
        outcome.problem = Some(format!("{what}: lost update, now {}", after["metadata"]));
    }
    outcome
}

/// At least 200 races, spread over several objects raced in parallel, bounded in time.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn races_lose_no_update_and_stop_only_on_real_conflicts() {
    const RACES: usize = 210;
    const OBJECTS: usize = 6;
    const TIME_LIMIT: Duration = Duration::from_secs(180);
    let cluster = require_cluster!();
    let mut section = Section::start("Preview/write races", &cluster);
    let ns = cluster.namespace("fw-rel-race");
    let data = data_dir("race");
    for w in 0..OBJECTS {
        cluster.kubectl_ok(&["create", "configmap", "-n", &ns, &format!("race-{w}")]);
    }
    let started = Instant::now();
    let outcomes: Mutex<Vec<(Concurrent, RaceOutcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for w in 0..OBJECTS {
            let (cluster, data, ns, outcomes) = (&cluster, &data, &ns, &outcomes);
            scope.spawn(move || {
                let api = RawApi::connect(cluster, ns);
                for i in (w..RACES).step_by(OBJECTS) {
                    if started.elapsed() > TIME_LIMIT {
                        break;
                    }
                    let kind = CONCURRENT[i % CONCURRENT.len()];
                    let outcome = race(cluster, &api, data, ns, &format!("race-{w}"), i, kind);
                    outcomes.lock().expect("outcomes").push((kind, outcome));
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().expect("outcomes");
    let ran = outcomes.len();
    let lost = outcomes.iter().filter(|(_, o)| o.lost_update).count();
    let false_3 = outcomes.iter().filter(|(_, o)| o.false_exit_3).count();
    let problems: Vec<&String> = outcomes.iter().filter_map(|(_, o)| o.problem.as_ref()).collect();
    let mut per_kind: BTreeMap<Concurrent, (usize, usize)> = BTreeMap::new();
    for (kind, o) in &outcomes {
        let entry = per_kind.entry(*kind).or_default();
        entry.0 += 1;
        entry.1 += usize::from(o.problem.is_none());
    }
    section.figure("races run (6 objects raced in parallel)", ran);
    for (kind, (n, good)) in &per_kind {
        section.figure(&format!("{kind:?}: as promised / run"), format!("{good} / {n}"));
    }
    section.figure("lost updates", lost);
    section.figure("false exit 3 (same-effect change stopped)", false_3);
    section.figure("races not as promised (any reason)", problems.len());
    if let Some(first) = problems.first() {
        let error = first.lines().find(|l| l.starts_with("error")).unwrap_or_default();
        section.figure("first problem", format!("{} / {error}", first.lines().next().unwrap_or_default()));
    }
    section.figure("duration", format!("{:.1} s", started.elapsed().as_secs_f64()));
    let first: Vec<String> = problems.iter().take(5).map(|p| p.chars().take(400).collect()).collect();
    assert!(ran >= 200, "only {ran} races in {TIME_LIMIT:?}");
    assert_eq!(
        (lost, false_3),
        (0, 0),
        "{lost} lost updates and {false_3} false exit 3 in {ran} races\n\nfirst problems:\n{first:#?}"
    );
    assert!(problems.is_empty(), "{} races not as promised; first:\n{first:#?}", problems.len());
}

// ---------------------------------------------------------------------------------------------
// Parallel writers

/// Starts one child per label `l1..lN`, all at once, and waits for all.
fn all_at_once(n: usize, command: impl Fn(usize) -> Command) -> Vec<Output> {
    let children: Vec<Child> = (1..=n)
        .map(|i| command(i).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn a parallel writer"))
        .collect();
    children.into_iter().map(|c| c.wait_with_output().expect("parallel writer output")).collect()
}

fn labels_landed(cluster: &Cluster, ns: &str, object: &str, n: usize) -> usize {
    let labels = cluster.get_json(ns, &format!("cm/{object}"))["metadata"]["labels"].clone();
    (1..=n).filter(|i| labels[format!("l{i}")] == format!("v{i}")).count()
}

fn exit_codes(outs: &[Output]) -> String {
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    for out in outs {
        *codes.entry(out.status.code().map_or("signal".into(), |c| c.to_string())).or_default() += 1;
    }
    codes.iter().map(|(c, n)| format!("exit {c}: {n}")).collect::<Vec<_>>().join(", ")
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn fifty_parallel_writers_of_disjoint_labels_all_land() {
    const WRITERS: usize = 50;
    let cluster = require_cluster!();
    let mut section = Section::start("Parallel writers", &cluster);
    let ns = cluster.namespace("fw-rel-parallel");
    let data = data_dir("parallel");
    // The labels map is there (another label), so the 50 labels are 50 disjoint fields.
    for name in ["safe", "plain"] {
        cluster.kubectl_ok(&["create", "configmap", "-n", &ns, name]);
        cluster.kubectl_ok(&["label", "-n", &ns, &format!("cm/{name}"), "base=b"]);
    }
    let label = |i: usize| format!(r#"{{"metadata":{{"labels":{{"l{i}":"v{i}"}}}}}}"#);

    let mark = cluster.audit_mark();
    let started = Instant::now();
    let safe = all_at_once(WRITERS, |i| {
        let mut cmd = safe_patch(&cluster, &data, &ns);
        cmd.args(["cm/safe", "--yes", "-p", &label(i)]);
        cmd
    });
    let safe_seconds = started.elapsed().as_secs_f64();
    let safe_landed = labels_landed(&cluster, &ns, "safe", WRITERS);
    let safe_ok = safe.iter().filter(|o| o.status.success()).count();
    let requests = user_requests(&cluster, mark, "configmaps", &ns, "safe");
    let answered = |code: u16| requests.iter().filter(|e| e.verb == "patch" && !e.dry_run && e.code == code).count();
    let (lost_races, failed_tests) = (answered(409), answered(422));
    let writes = requests.iter().filter(|e| e.verb == "patch" && !e.dry_run).count();

    let started = Instant::now();
    let plain = all_at_once(WRITERS, |i| {
        let mut cmd = cluster.kubectl();
        cmd.args(["patch", "-n", &ns, "cm/plain", "-p", &label(i)]);
        cmd
    });
    let plain_seconds = started.elapsed().as_secs_f64();
    let plain_landed = labels_landed(&cluster, &ns, "plain", WRITERS);

    section.figure("`kubectl safe-patch --yes`, 50 at once: labels landed", format!("{safe_landed} of {WRITERS}"));
    section.figure("`kubectl safe-patch`: exit codes", exit_codes(&safe));
    section.figure("`kubectl safe-patch`: wall time for all 50", format!("{safe_seconds:.1} s"));
    section.figure(
        "`kubectl safe-patch`: PATCH requests (not dry runs), answered 409 / 422",
        format!("{writes}, {lost_races} / {failed_tests}"),
    );
    section.figure("`kubectl safe-patch`: GET requests", count(&requests, "get"));
    section.figure("`kubectl patch`, 50 at once: labels landed", format!("{plain_landed} of {WRITERS}"));
    section.figure("`kubectl patch`: exit codes", exit_codes(&plain));
    section.figure("`kubectl patch`: wall time for all 50", format!("{plain_seconds:.1} s"));
    let failed: Vec<String> = safe.iter().filter(|o| !o.status.success()).map(describe).take(3).collect();
    let last_error = safe
        .iter()
        .filter(|o| !o.status.success())
        .filter_map(|o| text(&o.stderr).lines().find(|l| l.starts_with("error")).map(String::from))
        .next()
        .unwrap_or_default();
    assert_eq!(plain_landed, WRITERS, "plain kubectl patch is the baseline: {}", exit_codes(&plain));
    assert_eq!(
        (safe_landed, safe_ok),
        (WRITERS, WRITERS),
        "safe-patch: {safe_landed} of {WRITERS} landed, {safe_ok} exit 0; e.g. {last_error}\n\nfirst failures: {failed:#?}"
    );
    // Disjoint fields: each write is guarded by what it changes, so none is refused (#22.10).
    assert_eq!(
        (lost_races, failed_tests, writes),
        (0, 0, WRITERS),
        "{writes} PATCHes for {WRITERS} disjoint writes: {lost_races} answered 409, {failed_tests} answered 422 ({safe_seconds:.1} s)"
    );
}

/// A Deployment `name` in `ns` with one container `app` whose env is `BASE=b`.
fn deployment_with_env(cluster: &Cluster, ns: &str, name: &str) {
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                                       "env": [{"name": "BASE", "value": "b"}]}]}}}});
    let file = std::env::temp_dir().join(format!("fw-rel-{ns}-{name}.json"));
    std::fs::write(&file, manifest.to_string()).expect("write the manifest");
    cluster.kubectl_ok(&["create", "-f", file.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_file(file);
}

/// The names of the env entries of `deploy/name`'s first container, in order.
fn env_names(cluster: &Cluster, ns: &str, name: &str) -> Vec<String> {
    let deployment = cluster.get_json(ns, &format!("deploy/{name}"));
    let env = deployment["spec"]["template"]["spec"]["containers"][0]["env"].as_array().cloned().unwrap_or_default();
    env.iter().map(|e| e["name"].as_str().unwrap_or_default().to_string()).collect()
}

/// Issue #28.11: writers appending their own entry to one keyed list (JSON Patch `/-`, and a
/// strategic merge patch, which puts new entries first) and setting their own data key never
/// make each other fail: each entry lands exactly once, beside the entry already there (not
/// between), with no PATCH answered 409 or 422.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn parallel_writers_of_their_own_list_entries_and_data_keys_all_land() {
    const WRITERS: usize = 20;
    let cluster = require_cluster!();
    let mut section = Section::start("Parallel list entries and data keys", &cluster);
    let ns = cluster.namespace("fw-rel-appends");
    let data = data_dir("appends");
    let mut checks = Checks::default();
    type Writer = fn(usize) -> (String, String);
    let appends: [(&str, &str, Writer); 2] = [
        ("json", "JSON Patch add .../env/-", |i| {
            (
                "json".into(),
                format!(
                    r#"[{{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{{"name":"W{i}","value":"v"}}}}]"#
                ),
            )
        }),
        ("strategic", "strategic merge patch of env", |i| {
            (
                "strategic".into(),
                format!(
                    r#"{{"spec":{{"template":{{"spec":{{"containers":[{{"name":"app","env":[{{"name":"W{i}","value":"v"}}]}}]}}}}}}}}"#
                ),
            )
        }),
    ];
    for (name, what, writer) in appends {
        deployment_with_env(&cluster, &ns, name);
        let mark = cluster.audit_mark();
        let started = Instant::now();
        let outs = all_at_once(WRITERS, |i| {
            let (patch_type, patch) = writer(i);
            let mut cmd = safe_patch(&cluster, &data, &ns);
            cmd.args([&format!("deploy/{name}"), "--type", &patch_type, "--yes", "-p", &patch]);
            cmd
        });
        let seconds = started.elapsed().as_secs_f64();
        let env = env_names(&cluster, &ns, name);
        let requests = user_requests(&cluster, mark, "deployments", &ns, name);
        let refused = requests.iter().filter(|e| e.verb == "patch" && matches!(e.code, 409 | 422)).count();
        let landed = (1..=WRITERS).filter(|i| env.iter().filter(|n| **n == format!("W{i}")).count() == 1).count();
        section.figure(&format!("{what}, {WRITERS} at once: entries landed once"), format!("{landed} of {WRITERS}"));
        section.figure(&format!("{what}: exit codes"), exit_codes(&outs));
        section.figure(&format!("{what}: wall time for all {WRITERS}"), format!("{seconds:.1} s"));
        section.figure(&format!("{what}: PATCH requests (dry runs too) answered 409 or 422"), refused);
        checks.promise(landed == WRITERS && env.len() == WRITERS + 1, || format!("{what}: env is {env:?}"));
        checks.promise(outs.iter().all(|o| o.status.success()), || format!("{what}: {}", exit_codes(&outs)));
        checks.promise(refused == 0, || format!("{what}: {refused} PATCHes answered 409 or 422"));
        // Beside the entry already there: after it for `-`, before it for a strategic merge patch.
        let base_at = env.iter().position(|n| n == "BASE");
        let expected_base = if name == "json" { Some(0) } else { Some(WRITERS) };
        checks.promise(base_at == expected_base, || format!("{what}: BASE at {base_at:?} in {env:?}"));
    }
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "keys", "--from-literal=base=b"]);
    let mark = cluster.audit_mark();
    let outs = all_at_once(WRITERS, |i| {
        let mut cmd = safe_patch(&cluster, &data, &ns);
        cmd.args(["cm/keys", "--yes", "-p", &format!(r#"{{"data":{{"k{i}":"v{i}"}}}}"#)]);
        cmd
    });
    let keys = cluster.get_json(&ns, "cm/keys")["data"].clone();
    let landed = (1..=WRITERS).filter(|i| keys[format!("k{i}")] == format!("v{i}")).count();
    let requests = user_requests(&cluster, mark, "configmaps", &ns, "keys");
    let refused = requests.iter().filter(|e| e.verb == "patch" && matches!(e.code, 409 | 422)).count();
    section.figure(&format!("data keys, {WRITERS} at once: landed"), format!("{landed} of {WRITERS}"));
    section.figure("data keys: PATCH requests (dry runs too) answered 409 or 422", refused);
    section.figure("data keys: exit codes", exit_codes(&outs));
    checks.promise(outs.iter().all(|o| o.status.success()), || format!("data keys: {}", exit_codes(&outs)));
    checks.promise(landed == WRITERS && refused == 0, || format!("data keys: {landed} landed, {refused} refused"));
    checks.verify();
}

/// Issue #28.11: what the guard of an added entry cannot pin, somebody adding the same entry
/// between the preview and the write, is caught on the written object: the write's copy is
/// taken out again, and the re-plan decides: the same entry is `(no change)`, another value
/// exits 3; the list names the entry once either way.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_same_entry_added_by_another_writer_meanwhile_is_never_left_twice() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-rel-same-entry");
    let data = data_dir("same-entry");
    for (name, theirs, code) in [("same", "v", 0), ("other", "theirs", 3)] {
        deployment_with_env(&cluster, &ns, name);
        let theirs = format!(
            r#"[{{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{{"name":"MINE","value":"{theirs}"}}}}]"#
        );
        let hook = format!("kubectl patch -n {ns} deploy/{name} --type json -p '{theirs}' >/dev/null");
        let out = run(safe_patch(&cluster, &data, &ns).env("FIELDWISE_HOOK_BEFORE_WRITE", &hook).args([
            &format!("deploy/{name}"),
            "--type",
            "json",
            "--yes",
            "-p",
            r#"[{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"MINE","value":"v"}}]"#,
        ]));
        assert_eq!(out.status.code(), Some(code), "{name}: {}", describe(&out));
        assert!(text(&out.stderr).contains("taking this write's copy out again"), "{name}: {}", describe(&out));
        assert_eq!(env_names(&cluster, &ns, name), ["BASE", "MINE"], "{name}: {}", describe(&out));
    }
}

// ---------------------------------------------------------------------------------------------
// Answers that must never be retried

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn field_manager_conflict_on_apply_is_refused_with_names_and_not_retried() {
    let cluster = require_cluster!();
    let mut section = Section::start("Field-manager conflict on apply", &cluster);
    let ns = cluster.namespace("fw-rel-manager");
    let data = data_dir("manager");
    let file = fixture("busybox-demo.yaml");
    cluster.kubectl_ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "ci1",
        "-n",
        &ns,
        "-f",
        file.to_str().expect("UTF-8 path"),
    ]);
    let mark = cluster.audit_mark();
    let out = run(safe_patch(&cluster, &data, &ns).args([
        "deploy/busybox-demo",
        "--type",
        "apply",
        "--field-manager",
        "ci2",
        "--yes",
        "-p",
        r#"{"spec":{"replicas":7}}"#,
    ]));
    let requests = user_requests(&cluster, mark, "deployments", &ns, "busybox-demo");
    let (gets, patches) = (count(&requests, "get"), count(&requests, "patch"));
    let stderr = text(&out.stderr);
    section.figure("exit code (2 promised)", exit(&out));
    section.figure("GETs of the object during the command", gets);
    section.figure("PATCHes (dry-run and real) during the command", patches);
    section.figure("names field and manager, suggests --force", {
        stderr.contains("spec.replicas") && stderr.contains("ci1") && stderr.contains("--force")
    });
    let mut checks = Checks::default();
    checks
        .promise(out.status.code() == Some(2), || format!("exit 2 (refused), got {}: {}", exit(&out), describe(&out)));
    checks.promise(stderr.contains("spec.replicas") && stderr.contains("ci1"), || {
        format!("the conflicting field and manager named: {stderr}")
    });
    checks.promise(stderr.contains("--force"), || format!("--force suggested: {stderr}"));
    checks.promise(gets <= 2 && patches <= 2, || format!("no retries, but {gets} GETs and {patches} PATCHes"));
    checks.promise(requests.iter().all(|e| !e.is_write() || e.dry_run || e.code >= 400), || {
        format!("nothing written: {requests:#?}")
    });
    let replicas = cluster.get_json(&ns, "deploy/busybox-demo")["spec"]["replicas"].clone();
    checks.promise(replicas == 1, || format!("replicas unchanged, now {replicas}"));
    checks.verify();
}

/// Waits until `what`'s resourceVersion stays the same over three reads half a second apart
/// (its controllers are done writing), for at most 30 seconds.
fn wait_until_unchanged(cluster: &Cluster, ns: &str, what: &str) {
    let version = || cluster.get_json(ns, what)["metadata"]["resourceVersion"].clone();
    let mut last = (version(), 0);
    fieldwise_e2e::eventually(&format!("{what} no longer changing"), Duration::from_secs(30), || {
        std::thread::sleep(Duration::from_millis(500));
        let now = version();
        last = if now == last.0 { (now, last.1 + 1) } else { (now, 0) };
        (last.1 >= 2).then_some(())
    });
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn validation_refusal_exits_1_with_the_server_reason_and_no_retry() {
    let cluster = require_cluster!();
    let mut section = Section::start("Validation refusal", &cluster);
    let ns = busybox(&cluster, "fw-rel-invalid");
    let data = data_dir("invalid");
    let cases = [
        (r#"{"spec":{"replicas":-1}}"#, "must be greater than or equal to 0"),
        (r#"{"metadata":{"labels":{"bad":"-x-"}}}"#, "a valid label must be"),
    ];
    let mut failures = Vec::new();
    for (patch, reason) in cases {
        // The dry run is pinned to the version read, so a status write of the deployment
        // controller in between is a lost race (a failed test, 422) and one more round: wait
        // until the controller is done, so the only 422 is the refusal.
        wait_until_unchanged(&cluster, &ns, "deploy/busybox-demo");
        let mark = cluster.audit_mark();
        let out = run(safe_patch(&cluster, &data, &ns).args(["deploy/busybox-demo", "--yes", "-p", patch]));
        let requests = user_requests(&cluster, mark, "deployments", &ns, "busybox-demo");
        let patches = count(&requests, "patch");
        // A PATCH that lost a race with the deployment controller (409) is re-planned, not a
        // retry of the refusal: the refusal itself (422) must be sent exactly once.
        let refused = requests.iter().filter(|e| e.verb == "patch" && e.code == 422).count();
        let stderr = text(&out.stderr);
        section.figure(
            &format!("`-p '{patch}'`"),
            format!(
                "{}, server reason shown: {}, PATCH requests: {patches} ({refused} refused with 422), GETs: {}",
                exit(&out),
                stderr.contains(reason),
                count(&requests, "get")
            ),
        );
        if out.status.code() != Some(1) || !stderr.contains(reason) || refused != 1 {
            failures.push(format!("{patch}: {patches} PATCHes, {refused} refused, {}", describe(&out)));
        }
        if stderr.contains("panicked") || requests.iter().any(|e| e.is_write() && !e.dry_run && e.code < 400) {
            failures.push(format!("{patch}: a write landed or a panic: {}", describe(&out)));
        }
    }
    assert_eq!(cluster.get_json(&ns, "deploy/busybox-demo")["spec"]["replicas"], 1);
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// Undo and backups

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_of_a_scale_write_goes_through_the_scale_subresource_or_refuses_clearly() {
    let cluster = require_cluster!();
    let mut section = Section::start("Subresource undo", &cluster);
    let ns = busybox(&cluster, "fw-rel-scale");
    let data = data_dir("scale");
    let template = cluster.get_json(&ns, "deploy/busybox-demo")["spec"]["template"].clone();
    ok(&run(safe_patch(&cluster, &data, &ns).args([
        "deploy/busybox-demo",
        "--subresource",
        "scale",
        "--yes",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ])));
    assert_eq!(cluster.get_json(&ns, "deploy/busybox-demo")["spec"]["replicas"], 3);

    let mut checks = Checks::default();
    let mut verdicts = Vec::new();
    for args in [&["undo", "deploy/busybox-demo", "--yes"][..], &["undo", "deploy/busybox-demo", "--yes", "--force"]] {
        let mark = cluster.audit_mark();
        let out = run(safe_patch(&cluster, &data, &ns).args(args));
        let requests = user_requests(&cluster, mark, "deployments", &ns, "busybox-demo");
        let writes: Vec<&AuditEvent> = requests.iter().filter(|e| e.is_write() && !e.dry_run).collect();
        let live = cluster.get_json(&ns, "deploy/busybox-demo");
        let stderr = text(&out.stderr);
        let command = args.join(" ");
        checks.promise(live["kind"] == "Deployment" && live["spec"]["template"] == template, || {
            format!("`{command}` kept the Deployment and its template")
        });
        checks.promise(writes.iter().all(|e| e.subresource == "scale"), || {
            format!(
                "`{command}` wrote the Deployment itself, not its scale subresource: {writes:?}; {}",
                describe(&out)
            )
        });
        if out.status.success() {
            let sent: Vec<String> =
                writes.iter().map(|e| format!("{} {} {}", e.verb, subresource_of(e), e.code)).collect();
            section.figure(
                &format!("`{command}`"),
                format!("exit 0, replicas now {}; writes sent: {sent:?}", live["spec"]["replicas"]),
            );
            checks.promise(live["spec"]["replicas"] == 1, || format!("`{command}` restored replicas to 1"));
            checks.promise(!writes.is_empty(), || format!("`{command}` exit 0 with no write: {}", describe(&out)));
            verdicts.push(format!("`{command}` restored"));
            break;
        }
        let first_line = stderr.lines().next().unwrap_or_default().to_string();
        let sent: Vec<String> = writes.iter().map(|e| format!("{} {} {}", e.verb, subresource_of(e), e.code)).collect();
        section.figure(&format!("`{command}`"), format!("{}: {first_line}; writes sent: {sent:?}", exit(&out)));
        checks.promise(stderr.contains("subresource") && stderr.contains("scale"), || {
            format!(
                "`{command}` refused ({}) without naming the scale subresource as the reason: {}",
                exit(&out),
                describe(&out)
            )
        });
        checks.promise(live["spec"]["replicas"] == 3 && writes.is_empty(), || {
            format!("`{command}` refused but wrote: replicas now {}, writes {writes:?}", live["spec"]["replicas"])
        });
        verdicts.push(format!("`{command}` refused ({})", exit(&out)));
    }
    section.figure("outcome", verdicts.join(", then "));
    checks.verify();
}

/// A backup is of one object, and its UID says which: after the object was deleted and created
/// again under the same name, `undo` (even with `--force`) refuses to put the old object's values
/// onto the new one; `--onto-recreated` asks for exactly that.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_refuses_a_recreated_object_unless_asked() {
    let cluster = require_cluster!();
    let mut section = Section::start("Undo onto a recreated object", &cluster);
    let ns = cluster.namespace("fw-rel-uid");
    let data = data_dir("uid");
    cluster.kubectl_ok(&["create", "configmap", "app", "-n", &ns, "--from-literal=mode=old"]);
    ok(&run(safe_patch(&cluster, &data, &ns).args(["cm/app", "--yes", "-p", r#"{"data":{"mode":"patched"}}"#])));
    let old_uid = cluster.get_json(&ns, "cm/app")["metadata"]["uid"].clone();
    cluster.kubectl_ok(&["delete", "configmap", "app", "-n", &ns]);
    cluster.kubectl_ok(&["create", "configmap", "app", "-n", &ns, "--from-literal=mode=new", "--from-literal=keep=me"]);
    let new_uid = cluster.get_json(&ns, "cm/app")["metadata"]["uid"].clone();
    assert_ne!(old_uid, new_uid, "the object was recreated");

    let mut checks = Checks::default();
    for args in [&["undo", "cm/app", "--yes"][..], &["undo", "cm/app", "--yes", "--force"]] {
        let command = args.join(" ");
        let mark = cluster.audit_mark();
        let out = run(safe_patch(&cluster, &data, &ns).args(args));
        let writes = user_requests(&cluster, mark, "configmaps", &ns, "app").iter().filter(|e| e.is_write()).count();
        let live = cluster.get_json(&ns, "cm/app");
        let first_line = text(&out.stderr).lines().find(|l| l.starts_with("error")).unwrap_or_default().to_string();
        section.figure(&format!("`{command}` on the recreated object"), format!("{}: {first_line}", exit(&out)));
        checks.promise(out.status.code() == Some(3), || format!("`{command}` exits 3: {}", describe(&out)));
        checks.promise(first_line.contains("created again") && first_line.contains("--onto-recreated"), || {
            format!("`{command}` says the object was recreated and how to restore anyway: {}", describe(&out))
        });
        checks.promise(writes == 0 && live["data"] == json!({"mode": "new", "keep": "me"}), || {
            format!("`{command}` refused but wrote ({writes} writes): {}", live["data"])
        });
    }
    let out = run(safe_patch(&cluster, &data, &ns).args(["undo", "cm/app", "--yes", "--onto-recreated"]));
    let live = cluster.get_json(&ns, "cm/app");
    section.figure("`undo cm/app --onto-recreated`", format!("{}, data now {}", exit(&out), live["data"]));
    checks.promise(out.status.success() && live["data"] == json!({"mode": "old"}), || {
        format!("--onto-recreated restores the old values onto the new object: {}; {}", live["data"], describe(&out))
    });
    checks.promise(live["metadata"]["uid"] == new_uid, || "the new object stays (same UID)".into());
    checks.verify();
}

/// `deployments/scale` or `deployments` for an audited request.
fn subresource_of(e: &AuditEvent) -> String {
    if e.subresource.is_empty() {
        e.resource.clone()
    } else {
        format!("{}/{}", e.resource, e.subresource)
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn backups_of_colon_and_underscore_names_stay_apart() {
    let cluster = require_cluster!();
    let mut section = Section::start("Backup keys", &cluster);
    let data = data_dir("keys");
    // Cluster-scoped: unique names per run, deleted at the end, so parallel runs never meet.
    let colon = format!("fw-rel-{}:role", std::process::id());
    let underscore = format!("fw-rel-{}_role", std::process::id());
    struct Cleanup<'a>(&'a Cluster, [String; 2]);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            for name in &self.1 {
                let _ = run(self.0.kubectl().args(["delete", "clusterrole", name, "--ignore-not-found"]));
            }
        }
    }
    let _cleanup = Cleanup(&cluster, [colon.clone(), underscore.clone()]);
    for name in [&colon, &underscore] {
        cluster.kubectl_ok(&["create", "clusterrole", name, "--verb=get", "--resource=pods"]);
    }
    let label = |v: &str| format!(r#"{{"metadata":{{"labels":{{"who":"{v}"}}}}}}"#);
    let sp = |args: &[&str]| run(safe_patch(&cluster, &data, "default").args(args));
    let (colon_ref, underscore_ref) = (format!("clusterrole/{colon}"), format!("clusterrole/{underscore}"));
    ok(&sp(&[&colon_ref, "--yes", "-p", &label("colon-1")]));
    ok(&sp(&[&underscore_ref, "--yes", "-p", &label("underscore-1")]));
    ok(&sp(&[&colon_ref, "--yes", "-p", &label("colon-2")]));

    let colon_rows = history_rows(&sp(&["history", &colon_ref]));
    let underscore_rows = history_rows(&sp(&["history", &underscore_ref]));
    section.figure("`history` rows of demo:role after 2 writes (2 promised)", colon_rows.len());
    section.figure("`history` rows of demo_role after 1 write (1 promised)", underscore_rows.len());
    let who = |name: &str| {
        let live: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "clusterrole", name, "-o", "json"]))
            .expect("clusterrole JSON");
        live["metadata"]["labels"]["who"].as_str().map(String::from)
    };
    let undo_underscore = sp(&["undo", &underscore_ref, "--yes"]);
    let after_undo_underscore = (who(&underscore), who(&colon));
    let undo_colon = sp(&["undo", &colon_ref, "--yes"]);
    let after_undo_colon = (who(&underscore), who(&colon));
    section.figure("undo demo_role: who=(demo_role, demo:role)", format!("{after_undo_underscore:?}"));
    section.figure("then undo demo:role: who=(demo_role, demo:role)", format!("{after_undo_colon:?}"));
    let mut checks = Checks::default();
    checks.promise((colon_rows.len(), underscore_rows.len()) == (2, 1), || {
        format!(
            "`history` lists each object's own backups only: {} rows for demo:role, {} for demo_role\n{colon_rows:#?}\n{underscore_rows:#?}",
            colon_rows.len(),
            underscore_rows.len()
        )
    });
    checks.promise(undo_underscore.status.success(), || format!("undo demo_role: {}", describe(&undo_underscore)));
    checks.promise(after_undo_underscore == (None, Some("colon-2".into())), || {
        format!("undo of demo_role restores demo_role only: who=(demo_role, demo:role) = {after_undo_underscore:?}")
    });
    checks.promise(undo_colon.status.success(), || format!("undo demo:role: {}", describe(&undo_colon)));
    checks.promise(after_undo_colon == (None, Some("colon-1".into())), || {
        format!("undo of demo:role restores demo:role only: who=(demo_role, demo:role) = {after_undo_colon:?}")
    });
    checks.verify();
}

/// Writes `label=value` labels to `cm/object` `writes` times (values 1..=writes), with `env` set.
fn label_writes(cluster: &Cluster, data: &Path, ns: &str, object: &str, writes: usize, env: &[(&str, &str)]) {
    for i in 1..=writes {
        let patch = format!(r#"{{"metadata":{{"labels":{{"n":"{i}"}}}}}}"#);
        let mut cmd = safe_patch(cluster, data, ns);
        cmd.envs(env.iter().copied()).args([&format!("cm/{object}"), "--yes", "-p", &patch]);
        ok(&run(&mut cmd));
    }
}

/// How many backups `history` lists for `cm/object`.
fn backups_listed(cluster: &Cluster, data: &Path, ns: &str, object: &str) -> usize {
    history_rows(&run(safe_patch(cluster, data, ns).args(["history", &format!("cm/{object}")]))).len()
}

/// Retention as the README documents it: after each write an object keeps its newest 20 backups
/// and none older than 30 days; `FIELDWISE_BACKUP_KEEP` / `FIELDWISE_BACKUP_MAX_AGE` and
/// `history --prune [--keep N] [--max-age AGE]` change that.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn backup_retention_keeps_the_newest_by_default_and_prunes_on_request() {
    const DEFAULT_KEEP: usize = 20;
    const WRITES: usize = DEFAULT_KEEP + 2;
    let cluster = require_cluster!();
    let mut section = Section::start("Backup retention", &cluster);
    let ns = cluster.namespace("fw-rel-retention");
    let data = data_dir("retention");
    for object in ["kept", "env", "aged"] {
        cluster.kubectl_ok(&["create", "configmap", "-n", &ns, object]);
    }
    let mut checks = Checks::default();

    label_writes(&cluster, &data, &ns, "kept", WRITES, &[]);
    let by_default = backups_listed(&cluster, &data, &ns, "kept");
    section.figure(&format!("backups kept after {WRITES} writes (default: newest {DEFAULT_KEEP})"), by_default);
    checks
        .promise(by_default == DEFAULT_KEEP, || format!("default retention keeps {DEFAULT_KEEP}, listed {by_default}"));

    let prune =
        |extra: &[&str]| run(safe_patch(&cluster, &data, &ns).args(["history", "--prune", "cm/kept"]).args(extra));
    let first = prune(&["--keep", "5"]);
    let after_first = backups_listed(&cluster, &data, &ns, "kept");
    let again = prune(&["--keep", "5"]);
    let after_again = backups_listed(&cluster, &data, &ns, "kept");
    let defaults = prune(&[]);
    let after_defaults = backups_listed(&cluster, &data, &ns, "kept");
    section.figure(
        "`history --prune cm/kept --keep 5`",
        format!("{}: {}, {after_first} listed", exit(&first), text(&first.stdout).trim()),
    );
    section.figure("the same again", format!("{}: {}, {after_again} listed", exit(&again), text(&again.stdout).trim()));
    section.figure("`history --prune cm/kept` (defaults)", format!("{}, {after_defaults} listed", exit(&defaults)));
    checks.promise(first.status.success() && after_first == 5, || {
        format!("--keep 5 leaves 5: {after_first}; {}", describe(&first))
    });
    checks.promise(again.status.success() && after_again == 5, || {
        format!("pruning twice removes nothing more: {after_again}")
    });
    checks.promise(defaults.status.success() && after_defaults == 5, || {
        format!("default prune keeps the 5: {after_defaults}")
    });
    let undo = run(safe_patch(&cluster, &data, &ns).args(["undo", "cm/kept", "--yes"]));
    let n = cluster.get_json(&ns, "cm/kept")["metadata"]["labels"]["n"].clone();
    section.figure("undo after pruning restores the last write's pre-image", n == json!((WRITES - 1).to_string()));
    checks.promise(undo.status.success() && n == json!((WRITES - 1).to_string()), || {
        format!("the newest backup survived pruning: n={n}; {}", describe(&undo))
    });

    label_writes(&cluster, &data, &ns, "env", 5, &[("FIELDWISE_BACKUP_KEEP", "3")]);
    let with_env = backups_listed(&cluster, &data, &ns, "env");
    section.figure("FIELDWISE_BACKUP_KEEP=3, 5 writes: backups kept", with_env);
    checks.promise(with_env == 3, || format!("FIELDWISE_BACKUP_KEEP=3 keeps 3, listed {with_env}"));

    label_writes(&cluster, &data, &ns, "aged", 2, &[]);
    std::thread::sleep(Duration::from_secs(5));
    label_writes(&cluster, &data, &ns, "aged", 1, &[]);
    let aged = run(safe_patch(&cluster, &data, &ns).args(["history", "--prune", "cm/aged", "--max-age", "4s"]));
    let young = backups_listed(&cluster, &data, &ns, "aged");
    section.figure("2 backups 5 s old and 1 new, `--max-age 4s`: backups kept", young);
    checks.promise(aged.status.success() && young == 1, || {
        format!("--max-age 4s keeps the new one only: {young}; {}", describe(&aged))
    });
    checks.verify();
}

// ---------------------------------------------------------------------------------------------
// Bulk repair with the apiserver killed

/// The annotation `kubectl apply` would have written for `cm-NNNN` holding `num: N`.
fn expected_annotation(ns: &str, name: &str, n: usize) -> String {
    format!(
        "{{\"apiVersion\":\"v1\",\"data\":{{\"num\":\"{n}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"annotations\":{{}},\"name\":\"{name}\",\"namespace\":\"{ns}\"}}}}\n"
    )
}

/// Per object `cm-NNNN`: its resourceVersion and whether it carries no annotation (`Some(false)`),
/// exactly the expected one (`Some(true)`), or anything else (`None`: half-written).
fn bulk_state(cluster: &Cluster, ns: &str) -> BTreeMap<String, (String, Option<bool>)> {
    let list: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", ns, "-o", "json"])).expect("list");
    let mut state = BTreeMap::new();
    for item in list["items"].as_array().into_iter().flatten() {
        let name = item["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let Some(n) = name.strip_prefix("cm-").and_then(|n| n.parse::<usize>().ok()) else { continue };
        let annotation = item["metadata"]["annotations"][ANNOTATION].as_str();
        let verdict = match annotation {
            None => Some(false),
            Some(a) if a == expected_annotation(ns, &name, n) => Some(true),
            Some(_) => None,
        };
        let rv = item["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
        state.insert(name, (rv, verdict));
    }
    state
}

/// The backup records under `dir`, counted by their `state` (`written`, `unknown`, `pending`;
/// `none` for a record without one).
fn backup_records(dir: &Path) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        // `%inflight` and `%tmp` hold the store's own files, not records.
        if path.is_dir() && entry.file_name().to_string_lossy().starts_with('%') {
            continue;
        }
        if path.is_dir() {
            for (state, n) in backup_records(&path) {
                *counts.entry(state).or_default() += n;
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            let record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap_or_default()).unwrap_or_default();
            let state = record["state"].as_str().unwrap_or("none").to_string();
            *counts.entry(state).or_default() += 1;
        }
    }
    counts
}

/// Creates `cm-0000..` in four parallel `kubectl create` of List manifests.
fn create_many(cluster: &Cluster, ns: &str, scratch: &Path, objects: usize) {
    std::fs::create_dir_all(scratch).expect("scratch dir");
    let children: Vec<Child> = (0..4)
        .map(|part| {
            let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
            for i in (part..objects).step_by(4) {
                list.push_str(&format!(
                    "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i:04}\n  data:\n    num: \"{i}\"\n"
                ));
            }
            let file = scratch.join(format!("part-{part}.yaml"));
            std::fs::write(&file, list).expect("write the List manifest");
            cluster
                .kubectl()
                .args(["create", "-n", ns, "-f"])
                .arg(&file)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn kubectl create")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("kubectl create");
        assert!(out.status.success(), "kubectl create: {}", text(&out.stderr));
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bulk_repair_with_the_apiserver_killed_stops_with_one_summary_and_resumes() {
    const OBJECTS: usize = 1000;
    // `repair`'s default --concurrency, per the README.
    const CONCURRENCY: usize = 8;
    let shared = require_cluster!();
    let mut section = Section::start("Bulk repair with the apiserver killed", &shared);
    let private = PrivateCluster::up("reliability");
    let cluster = &private.cluster;
    section.figure(
        "private cluster (`scripts/cluster up`, killed and restarted)",
        fieldwise_e2e::run_info::kubernetes_version(cluster),
    );
    let ns = cluster.namespace("fw-rel-bulk");
    let scratch = data_dir("bulk");
    let data = scratch.join("backups");
    let started = Instant::now();
    create_many(cluster, &ns, &scratch, OBJECTS);
    section.figure("objects missing the annotation", OBJECTS);
    section.figure(
        "creating them (4 parallel `kubectl create` of List manifests)",
        format!("{:.1} s", started.elapsed().as_secs_f64()),
    );

    let repair = || {
        let mut cmd = last_applied(cluster, &data, &ns);
        cmd.args(["repair", "--from-scan", "--yes"]);
        cmd
    };

    // First run: kill the apiserver about 1 s after the first write lands.
    let mark = cluster.audit_mark();
    let first_started = Instant::now();
    let child = repair().stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn repair");
    eventually("the first repair write", Duration::from_secs(120), || {
        cluster.audit_since(mark).iter().any(|e| e.namespace == ns && e.verb == "patch" && !e.dry_run).then_some(())
    });
    std::thread::sleep(Duration::from_secs(1));
    let stop = private.apiserver("stop");
    let killed_at = Instant::now();
    if !stop.status.success() {
        let _ = wait_bounded(child, Duration::ZERO);
        panic!("`scripts/cluster apiserver stop` (from branch harness): {}", describe(&stop));
    }
    let first = wait_bounded(child, Duration::from_secs(120));
    let stopped_after = killed_at.elapsed().as_secs_f64();
    let backups_after_first = backup_records(&data);
    let start = private.apiserver("start");
    assert!(start.status.success(), "`scripts/cluster apiserver start` (from branch harness): {}", describe(&start));
    eventually("the apiserver back", Duration::from_secs(60), || {
        run(cluster.kubectl().args(["get", "--raw", "/readyz"])).status.success().then_some(())
    });

    let state = bulk_state(cluster, &ns);
    let landed = state.values().filter(|(_, v)| *v == Some(true)).count();
    let untouched = state.values().filter(|(_, v)| *v == Some(false)).count();
    let half_written = state.values().filter(|(_, v)| v.is_none()).count();
    let (first_out, first_err) = (text(&first.0.stdout), text(&first.0.stderr));
    let error_lines = first_out.lines().chain(first_err.lines()).filter(|l| {
        let l = l.to_lowercase();
        l.contains("error") || l.contains("fail")
    });
    let error_lines = error_lines.count();
    let summary = first_err.lines().chain(first_out.lines()).find(|l| l.to_lowercase().contains("not tried"));
    section.figure("first run: exit code", exit(&first.0));
    section.figure("first run: stopped after the kill", format!("{stopped_after:.1} s (limit 120 s)"));
    section.figure("first run: lines mentioning an error or failure", error_lines);
    section.figure("first run: summary line", summary.unwrap_or("(none)"));
    section.figure("objects repaired before the kill (annotation exact)", landed);
    section.figure("objects untouched", untouched);
    section.figure("half-written objects", half_written);
    let state_count = |state: &str| backups_after_first.get(state).copied().unwrap_or(0);
    let (written_records, unknown_records) = (state_count("written"), state_count("unknown"));
    let other_records: usize = backups_after_first.values().sum::<usize>() - written_records - unknown_records;
    section.figure("backup records after the first run marked written (= repaired promised)", written_records);
    section.figure("backup records marked unknown (sent as the server died, could not be read back)", unknown_records);
    section.figure("other backup records (pending, or no state)", other_records);
    assert_eq!(state.len(), OBJECTS, "every object still there");
    assert!(landed < OBJECTS, "the kill came after the repair finished: inconclusive");
    let mut checks = Checks::default();
    checks.promise(!first.1, || "the first run stopped on its own after the apiserver was gone".into());
    checks.promise(half_written == 0, || format!("{half_written} half-written objects"));
    checks.promise(first.0.status.code() != Some(0), || "the interrupted run reports failure".into());
    checks.promise(error_lines <= 5, || {
        let head: Vec<&str> = first_err.lines().take(5).collect();
        format!("one summary, not one error per object: {error_lines} error lines\nthe first: {head:#?}")
    });
    checks.promise(summary.is_some(), || "a summary of done / failed / not tried".into());
    // A write the server applied but whose answer was lost when it died is recorded as unknown, never
    // as written: so written <= landed <= written + unknown, and nothing is left pending.
    checks.promise(written_records <= landed && landed <= written_records + unknown_records && other_records == 0, || {
        format!("every landed write has a written or unknown record, no written record without a write: {backups_after_first:?} for {landed} writes")
    });
    // Writes in flight when the server died cannot be told landed or not; at most one per worker.
    checks.promise(unknown_records <= CONCURRENCY, || {
        format!("at most --concurrency ({CONCURRENCY}) records of unknown writes, got {unknown_records}")
    });

    // Second run: completes.
    let second_started = Instant::now();
    let second = run(&mut repair());
    let second_seconds = second_started.elapsed().as_secs_f64();
    let state = bulk_state(cluster, &ns);
    let repaired = state.values().filter(|(_, v)| *v == Some(true)).count();
    section.figure("re-run: exit code", exit(&second));
    section.figure("re-run: objects with the exact annotation afterwards", format!("{repaired} of {OBJECTS}"));
    section.figure("re-run: duration", format!("{second_seconds:.1} s"));
    checks.promise(second.status.success(), || format!("re-run: {}", describe(&second)));
    checks.promise(repaired == OBJECTS, || format!("the re-run completes: {repaired} of {OBJECTS}"));
    // The re-run reads every object it still has to repair, and drops the unknown records of the writes
    // that never landed (the object's resourceVersion is still the one the record saw before).
    let unknown_after_rerun = backup_records(&data).get("unknown").copied().unwrap_or(0);
    let unknown_that_landed = landed - written_records.min(landed);
    section.figure("re-run: unknown records left (writes that did land)", unknown_after_rerun);
    checks.promise(unknown_after_rerun == unknown_that_landed, || {
        format!("the re-run settles the unknown records of writes that never landed: {unknown_after_rerun} left, {unknown_that_landed} landed")
    });

    // Third run: changes nothing.
    let third = run(&mut repair());
    let after_third = bulk_state(cluster, &ns);
    let changed = after_third.iter().filter(|(name, (rv, _))| state.get(*name).map(|s| &s.0) != Some(rv)).count();
    section.figure("third run: exit code", exit(&third));
    section.figure("third run: objects changed", changed);
    section.figure(
        "from the first repair to the end of the third run",
        format!("{:.1} s", first_started.elapsed().as_secs_f64()),
    );
    checks.promise(third.status.success(), || format!("third run: {}", describe(&third)));
    checks.promise(changed == 0, || format!("the third run changes nothing, changed {changed}"));
    checks.verify();
}

/// Waits for `child` at most `limit`, reading its output meanwhile (a full pipe would stall it);
/// kills it if it is still running then. Returns its output and whether it had to be killed.
fn wait_bounded(mut child: Child, limit: Duration) -> (Output, bool) {
    fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    }
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let started = Instant::now();
    let killed = loop {
        match child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                break true;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("waiting for the repair: {e}"),
        }
    };
    let status = child.wait().expect("repair status");
    let output =
        Output { status, stdout: stdout.join().expect("stdout reader"), stderr: stderr.join().expect("stderr reader") };
    (output, killed)
}
