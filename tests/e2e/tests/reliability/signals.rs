//! A bulk run stopped by a signal (issue #22.4): SIGINT and SIGTERM stop new writes,
//! let the writes in flight finish, print the summary and exit 130 or 143, leaving no
//! record `pending` and none of a write that never happened; a second SIGINT, or
//! SIGKILL, ends the process at once, and the next run settles what it left.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use fieldwise_e2e::{eventually, files_below, require_cluster, run, text, Cluster};
use serde_json::Value;

use super::report::Section;
use super::{
    backup_records, bulk_state, create_many, data_dir, describe, exit, last_applied, safe_patch, wait_bounded, Checks,
};

/// Objects per case: enough that a run is still writing when the signal comes.
const OBJECTS: usize = 300;

/// How a case stops the first run.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// One signal: `kill -<name>`, then the exit code the run must end with.
    Graceful(&'static str, i32),
    /// SIGINT while a write waits 20 s between its backup and its request (the before-write
    /// hook holds it), then SIGINT again: the second must not wait for the first to finish.
    SecondInterrupt,
    /// SIGKILL: nothing can be finished.
    Kill,
}

impl Stop {
    fn label(self) -> &'static str {
        match self {
            Stop::Graceful("INT", _) => "SIGINT",
            Stop::Graceful(..) => "SIGTERM",
            Stop::SecondInterrupt => "SIGINT twice",
            Stop::Kill => "SIGKILL",
        }
    }
}

fn send(pid: u32, signal: &str) {
    let out = run(std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()));
    assert!(out.status.success(), "kill -{signal} {pid}: {}", text(&out.stderr));
}

/// Per object, the backup records under `data` by state (markers and temporary files aside).
fn records_by_object(dir: &Path) -> BTreeMap<String, Vec<String>> {
    let mut by_object: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files_below(dir, None) {
        let in_store_dir = file.components().any(|c| c.as_os_str().to_string_lossy().starts_with('%'));
        if in_store_dir || file.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let record: Value = serde_json::from_slice(&std::fs::read(&file).unwrap_or_default()).unwrap_or_default();
        let name = record["name"].as_str().unwrap_or_default().to_string();
        by_object.entry(name).or_default().push(record["state"].as_str().unwrap_or("none").to_string());
    }
    by_object
}

/// Per object, the PATCH requests (not dry runs) that landed for certain (2xx), and those
/// that may have (2xx, or a 5xx: the answer of a request whose client was killed is a 504
/// whether or not the change was stored).
#[derive(Debug, Default, Clone, Copy)]
struct Landed {
    certainly: usize,
    maybe: usize,
}

fn landed_patches(cluster: &Cluster, mark: fieldwise_e2e::audit::AuditMark, ns: &str) -> BTreeMap<String, Landed> {
    std::thread::sleep(Duration::from_millis(500));
    let mut landed: BTreeMap<String, Landed> = BTreeMap::new();
    for event in cluster.audit_since(mark) {
        if event.namespace != ns || event.verb != "patch" || event.dry_run {
            continue;
        }
        let entry = landed.entry(event.name).or_default();
        if (200..300).contains(&event.code) {
            entry.certainly += 1;
        }
        if (200..300).contains(&event.code) || event.code >= 500 || event.code == 0 {
            entry.maybe += 1;
        }
    }
    landed
}

/// Objects whose records do not match the writes: a record of a write that never
/// happened (a phantom), or a landed write without one.
fn mismatched(records: &BTreeMap<String, Vec<String>>, landed: &BTreeMap<String, Landed>) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = records.keys().chain(landed.keys()).collect();
    names
        .into_iter()
        .filter_map(|name| {
            let kept = records.get(name).map_or(0, Vec::len);
            let sent = landed.get(name).copied().unwrap_or_default();
            (kept > sent.maybe || kept < sent.certainly).then(|| {
                format!("{name}: {kept} record(s) for {} landed write(s), {} maybe", sent.certainly, sent.maybe)
            })
        })
        .collect()
}

fn leftovers(data: &Path) -> Vec<String> {
    files_below(data, None)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "tmp") || f.to_string_lossy().contains("%inflight"))
        .map(|f| f.display().to_string())
        .collect()
}

/// One case: a repair of OBJECTS objects stopped by `stop`, then run again.
fn stopped_repair(cluster: &Cluster, section: &mut Section, checks: &mut Checks, stop: Stop) {
    let label = stop.label();
    let ns = cluster.namespace(&format!("fw-rel-sig-{}", label.to_lowercase().replace(' ', "-")));
    let scratch = data_dir(&format!("sig-{}", label.replace(' ', "-")));
    let data = scratch.join("backups");
    create_many(cluster, &ns, &scratch, OBJECTS);
    let repair = |hook: Option<&str>| {
        let mut cmd = last_applied(cluster, &data, &ns);
        cmd.args(["repair", "--from-scan", "--yes"]);
        if let Some(hook) = hook {
            cmd.env("FIELDWISE_HOOK_BEFORE_WRITE", hook);
        }
        cmd
    };

    let mark = cluster.audit_mark();
    // With the hook, the first write waits 20 s between its backup and its request (the
    // hook's output away from the run's pipes, which would otherwise stay open after it ended).
    let hook = matches!(stop, Stop::SecondInterrupt).then_some("exec sleep 20 >/dev/null 2>&1");
    let child = repair(hook).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn repair");
    let pid = child.id();
    if hook.is_some() {
        eventually("the first backup, its write held by the hook", Duration::from_secs(120), || {
            (backup_records(&data).values().sum::<usize>() >= 1).then_some(())
        });
    } else {
        eventually(&format!("40 repairs before {label}"), Duration::from_secs(120), || {
            (backup_records(&data).get("written").copied().unwrap_or(0) >= 40).then_some(())
        });
    }
    let sent = Instant::now();
    let mut second_sent = None;
    match stop {
        Stop::Graceful(name, _) => send(pid, name),
        Stop::SecondInterrupt => {
            send(pid, "INT");
            std::thread::sleep(Duration::from_millis(300));
            second_sent = Some(Instant::now());
            send(pid, "INT");
        }
        Stop::Kill => send(pid, "KILL"),
    }
    let (first, timed_out): (Output, bool) = wait_bounded(child, Duration::from_secs(60));
    let stopped_after = sent.elapsed().as_secs_f64();
    let records = records_by_object(&data);
    let landed = landed_patches(cluster, mark, &ns);
    let stderr = text(&first.stderr);
    let summary = stderr.lines().find(|l| l.contains(" failed")).unwrap_or("(none)").to_string();
    let pending: usize = records.values().flatten().filter(|s| *s == "pending").count();
    let exit_text = match first.status.signal() {
        Some(signal) => format!("killed by signal {signal}"),
        None => exit(&first),
    };
    section.figure(&format!("{label}: first run"), format!("{exit_text} {stopped_after:.2} s after the signal"));
    section.figure(&format!("{label}: summary"), &summary);
    section.figure(
        &format!("{label}: writes landed, records left pending"),
        format!("{}, {pending}", landed.values().map(|l| l.certainly).sum::<usize>()),
    );
    checks.promise(!timed_out, || format!("{label}: the run ended by itself after the signal"));
    match stop {
        Stop::Graceful(_, code) => {
            checks.promise(first.status.code() == Some(code), || format!("{label}: exit {code}: {}", describe(&first)));
            checks.promise(summary.contains("not tried") && stderr.contains(&format!("interrupted ({label})")), || {
                format!("{label}: the summary and why the run stopped: {stderr}")
            });
            checks.promise(pending == 0 && mismatched(&records, &landed).is_empty(), || {
                format!(
                    "{label}: every record is of a write that landed, none pending: {pending} pending; {:?}",
                    mismatched(&records, &landed)
                )
            });
            checks.promise(stopped_after < 10.0, || format!("{label}: stopped {stopped_after:.1} s after the signal"));
        }
        Stop::SecondInterrupt => {
            let after_second = second_sent
                .map_or(f64::NAN, |t| t.elapsed().as_secs_f64() - (sent.elapsed().as_secs_f64() - stopped_after));
            section.figure(
                "SIGINT twice: exit after the second",
                format!("{after_second:.2} s (the hook holds the write 20 s)"),
            );
            checks.promise(first.status.code() == Some(130), || format!("{label}: exit 130: {}", describe(&first)));
            checks.promise(after_second < 1.5, || {
                format!("{label}: the second signal ends the run at once, not after the writes: {after_second:.2} s")
            });
        }
        Stop::Kill => checks.promise(first.status.signal() == Some(9), || format!("{label}: {}", describe(&first))),
    }

    // The re-run finishes the job and settles whatever the first run left.
    let rerun = run(&mut repair(None));
    let state = bulk_state(cluster, &ns);
    let repaired = state.values().filter(|(_, v)| *v == Some(true)).count();
    let records = records_by_object(&data);
    let landed = landed_patches(cluster, mark, &ns);
    let pending: usize = records.values().flatten().filter(|s| *s == "pending").count();
    let unknown: usize = records.values().flatten().filter(|s| *s == "unknown").count();
    let mismatch = mismatched(&records, &landed);
    let left = leftovers(&data);
    section.figure(
        &format!("{label}: re-run"),
        format!(
            "{}, {repaired} of {OBJECTS} repaired; records: {pending} pending, {unknown} unknown, {} of writes that never landed",
            exit(&rerun),
            mismatch.len()
        ),
    );
    checks.promise(rerun.status.success() && repaired == OBJECTS, || {
        format!("{label}: the re-run finishes: {repaired} of {OBJECTS}; {}", describe(&rerun))
    });
    checks.promise(pending == 0 && mismatch.is_empty(), || {
        format!("{label}: after the re-run, no record pending or of a write that never happened: {pending} pending; {mismatch:?}")
    });
    checks.promise(left.is_empty(), || format!("{label}: temporary files or in-flight markers left: {left:?}"));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn signals_stop_a_bulk_run_cleanly_and_the_rerun_settles_what_was_left() {
    let cluster = require_cluster!();
    let mut section = Section::start("Signals during a bulk run", &cluster);
    section.figure("objects per case (`last-applied repair --from-scan --yes`, --concurrency 8)", OBJECTS);
    let mut checks = Checks::default();
    for stop in [Stop::Graceful("INT", 130), Stop::Graceful("TERM", 143), Stop::SecondInterrupt, Stop::Kill] {
        stopped_repair(&cluster, &mut section, &mut checks, stop);
    }
    checks.verify();
}

/// A bulk `safe-patch` (a selection) stopped by SIGTERM while it writes: the writes in
/// flight finish, the summary says why it stopped, it exits 143; every record is of a patch
/// that landed (none pending), each names the run, and `undo --last-run` takes back exactly
/// what the run wrote.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_bulk_safe_patch_stopped_by_sigterm_finishes_its_writes_and_is_undone_as_one_run() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-rel-sig-bulk-patch");
    let scratch = data_dir("sig-bulk-patch");
    let data = scratch.join("backups");
    create_many(&cluster, &ns, &scratch, OBJECTS);
    let mark = cluster.audit_mark();
    let child = safe_patch(&cluster, &data, &ns)
        .args(["cm", "--all", "--max-objects", "1000", "--yes", "-p", r#"{"data":{"stopped":"no"}}"#])
        // Each write waits a little before it is sent, so the run is still writing when the signal comes.
        .env("FIELDWISE_HOOK_BEFORE_WRITE", "exec sleep 0.05 >/dev/null 2>&1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn safe-patch");
    let pid = child.id();
    eventually("40 patches before SIGTERM", Duration::from_secs(180), || {
        (backup_records(&data).get("written").copied().unwrap_or(0) >= 40).then_some(())
    });
    send(pid, "TERM");
    let (out, timed_out) = wait_bounded(child, Duration::from_secs(60));
    assert!(!timed_out, "the run did not end after SIGTERM: {}", describe(&out));
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: interrupted (SIGTERM): the writes in flight were finished")
            && stderr.lines().any(|l| l.contains(" patched, ") && l.contains(" not tried")),
        "{}",
        describe(&out)
    );

    let records = records_by_object(&data);
    let landed = landed_patches(&cluster, mark, &ns);
    let pending = records.values().flatten().filter(|s| *s == "pending").count();
    assert_eq!(pending, 0, "records left pending: {records:?}");
    assert_eq!(mismatched(&records, &landed), Vec::<String>::new(), "records of writes that never landed");
    let patched: Vec<String> = {
        let list: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", &ns, "-o", "json"])).unwrap();
        let items = list["items"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .filter(|cm| cm["data"]["stopped"] == "no")
            .map(|cm| cm["metadata"]["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert!(patched.len() >= 40 && patched.len() < OBJECTS, "{} of {OBJECTS} patched", patched.len());
    assert_eq!(patched.len(), records.len(), "one record per patched object: {records:?}");
    // Every record names the run, and the run's id is the one the summary printed.
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Run ").and_then(|rest| rest.split(';').next()))
        .unwrap_or_else(|| panic!("no run id printed: {stderr}"))
        .to_string();
    for file in files_below(&data, None) {
        if file.components().any(|c| c.as_os_str().to_string_lossy().starts_with('%'))
            || file.extension().is_none_or(|e| e != "json")
        {
            continue;
        }
        let record: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(record["run"], run_id.as_str(), "{}", file.display());
        assert!(record["cluster"].as_str().is_some_and(|c| !c.is_empty()), "keyed by the cluster: {record}");
    }

    // The run is undone as one: exactly the objects it patched, but one deleted and created
    // again since, which is skipped (another UID: the backup is of the old object).
    let recreated = &patched[0];
    cluster.kubectl_ok(&["delete", "configmap", recreated, "-n", &ns]);
    cluster.kubectl_ok(&["create", "configmap", recreated, "-n", &ns, "--from-literal=num=new"]);
    let undo = run(safe_patch(&cluster, &data, &ns).args(["undo", "--last-run", "--yes"]));
    assert_eq!(undo.status.code(), Some(3), "{}", describe(&undo));
    let undo_err = text(&undo.stderr);
    assert!(
        undo_err.contains(&format!("configmap/{recreated}")) && undo_err.contains("was deleted and created again"),
        "{}",
        describe(&undo)
    );
    assert!(
        undo_err.contains(&format!("{} restored, 0 unchanged, 1 conflict", patched.len() - 1)),
        "{}",
        describe(&undo)
    );
    assert_eq!(cluster.get_json(&ns, &format!("cm/{recreated}"))["data"], serde_json::json!({"num": "new"}));
    let list: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", &ns, "-o", "json"])).unwrap();
    let still = list["items"].as_array().into_iter().flatten().filter(|cm| cm["data"]["stopped"] == "no").count();
    assert_eq!(still, 0, "the undo left patched objects");
    let _ = std::fs::remove_dir_all(&scratch);
}
