//! `kubectl last-applied` against the real cluster: the acceptance list of the issue.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use fieldwise_e2e::{
    busybox_in, install_widget_crd, namespace_mismatch, ok, require_cluster, run, text, write_file, Cluster,
};
use serde_json::Value;

const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A private directory per test (backups and manifests), so tests never see each other's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-la-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn plugin(cluster: &Cluster, dir: &Path, ns: &str) -> Command {
    let mut cmd = cluster.plugin("kubectl-last_applied");
    cmd.env("FIELDWISE_DATA_DIR", dir.join("data")).args(["-n", ns]);
    cmd
}

fn la(cluster: &Cluster, dir: &Path, ns: &str, args: &[&str]) -> Output {
    run(plugin(cluster, dir, ns).args(args))
}

fn annotation(object: &Value) -> Option<String> {
    object.pointer("/metadata/annotations").and_then(|a| a.get(ANNOTATION)).and_then(Value::as_str).map(String::from)
}

fn scan_json(cluster: &Cluster, dir: &Path, ns: &str, kinds: &str) -> (Option<i32>, Value) {
    let out = la(cluster, dir, ns, &["scan", kinds, "-o", "json"]);
    (out.status.code(), serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr))))
}

fn findings_of(report: &Value, name: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"] == name)
        .map(|f| f["finding"].as_str().unwrap().to_string())
        .collect()
}

fn configmap(name: &str, data: &[(&str, &str)]) -> String {
    let mut text =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    app: la\ndata:\n");
    for (k, v) in data {
        text.push_str(&format!("  {k}: \"{v}\"\n"));
    }
    text
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn created_objects_are_missing_and_repair_from_file_lets_apply_delete() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-missing");
    let dir = scratch("missing");
    let full = [("keep", "1"), ("drop", "<2>")];
    for name in ["repaired", "untouched"] {
        let file = write_file(&dir, &format!("{name}.yaml"), &configmap(name, &full));
        cluster.kubectl_ok(&["create", "-n", &ns, "-f", &file]);
    }
    let (code, report) = scan_json(&cluster, &dir, &ns, "cm");
    assert_eq!(code, Some(3));
    assert_eq!(findings_of(&report, "repaired"), ["missing"]);
    assert_eq!(findings_of(&report, "untouched"), ["missing"]);

    let repaired_file = dir.join("repaired.yaml");
    let out = la(&cluster, &dir, &ns, &["repair", "-f", repaired_file.to_str().unwrap()]);
    assert_eq!(ok(&out).trim(), "configmap/repaired repaired");
    // Byte for byte what the real kubectl apply stores for the same file.
    let reference = write_file(&dir, "reference.yaml", &configmap("reference", &full));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &reference]);
    let ours = annotation(&cluster.get_json(&ns, "cm/repaired")).unwrap();
    let theirs = annotation(&cluster.get_json(&ns, "cm/reference")).unwrap();
    assert_eq!(ours, theirs.replace("\"reference\"", "\"repaired\""));
    // Idempotent, and the scan agrees.
    let out = la(&cluster, &dir, &ns, &["repair", "-f", repaired_file.to_str().unwrap()]);
    assert_eq!(ok(&out).trim(), "configmap/repaired unchanged");
    let (_, report) = scan_json(&cluster, &dir, &ns, "cm");
    assert!(findings_of(&report, "repaired").is_empty(), "{report}");

    // Dropping a key from the file: the real kubectl apply deletes it only where the annotation was repaired.
    for name in ["repaired", "untouched"] {
        let file = write_file(&dir, &format!("{name}-v2.yaml"), &configmap(name, &[("keep", "1")]));
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &file]);
    }
    assert!(cluster.get_json(&ns, "cm/repaired")["data"].get("drop").is_none());
    assert_eq!(cluster.get_json(&ns, "cm/untouched")["data"]["drop"], "<2>");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn repair_reads_directories_recursively_and_view_lists_a_selection_as_the_other_commands() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-select");
    let dir = scratch("select");
    let nested = dir.join("config").join("nested");
    std::fs::create_dir_all(&nested).unwrap();
    let top = write_file(&dir.join("config"), "top.yaml", &configmap("top", &[("a", "1")]));
    let deep = write_file(&nested, "deep.yaml", &configmap("deep", &[("b", "2")]));
    for file in [&top, &deep] {
        cluster.kubectl_ok(&["create", "-n", &ns, "-f", file]);
    }
    let config = dir.join("config");
    // Without -R only the directory's own files; with it, the subdirectories' too (as kubectl).
    let out = la(&cluster, &dir, &ns, &["repair", "-f", config.to_str().unwrap(), "--yes"]);
    assert_eq!(ok(&out).trim(), "configmap/top repaired");
    let out = la(&cluster, &dir, &ns, &["repair", "-f", config.to_str().unwrap(), "-R", "--yes"]);
    let mut lines: Vec<String> = ok(&out).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["configmap/deep repaired", "configmap/top unchanged"]);
    // view takes the one selection: a TYPE with -l lists, and each object's annotation is shown.
    let out = la(&cluster, &dir, &ns, &["view", "cm", "-l", "app=la", "-o", "name"]);
    let mut names: Vec<String> = ok(&out).lines().map(String::from).collect();
    names.sort();
    assert_eq!(names, ["configmap/deep", "configmap/top"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn repair_from_live_leaves_an_autoscalers_replicas_alone() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-hpa");
    let dir = scratch("hpa");
    let deployment = |replicas: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n{replicas}  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: registry.k8s.io/pause:3.10\n"
        )
    };
    let with = write_file(&dir, "with.yaml", &deployment("  replicas: 2\n"));
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &with]);
    let scaler = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n";
    cluster.kubectl_stdin(
        &["apply", "-n", &ns, "--server-side", "--field-manager", "hpa-like", "--force-conflicts", "-f", "-"],
        scaler,
    );
    let out = la(&cluster, &dir, &ns, &["repair", "deploy/web"]);
    assert_eq!(ok(&out).trim(), "deployment.apps/web repaired");
    let live = cluster.get_json(&ns, "deploy/web");
    let stored = annotation(&live).unwrap();
    assert!(!stored.contains("replicas"), "{stored}");
    assert!(stored.contains("registry.k8s.io/pause:3.10") && stored.ends_with("}\n"), "{stored}");
    // A second run changes nothing.
    let out = la(&cluster, &dir, &ns, &["repair", "deploy/web"]);
    assert_eq!(ok(&out).trim(), "deployment.apps/web unchanged");
    // The file without replicas, applied for real, leaves the autoscaler's 5 alone.
    let without = write_file(&dir, "without.yaml", &deployment(""));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &without]);
    assert_eq!(cluster.get_json(&ns, "deploy/web")["spec"]["replicas"], 5);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn oversized_configmap_migrates_to_server_side_apply() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-big");
    let dir = scratch("big");
    let values: Vec<(String, String)> = (0..3).map(|i| (format!("key{i}"), "x".repeat(100_000))).collect();
    let data: Vec<(&str, &str)> = values.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let file = write_file(&dir, "big.yaml", &configmap("big", &data));
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &file]);
    let out = run(cluster.kubectl().args(["apply", "-n", &ns, "-f", &file]));
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Too long") && text(&out.stderr).contains("262144"), "{}", text(&out.stderr));

    let (code, report) = scan_json(&cluster, &dir, &ns, "cm");
    assert_eq!(code, Some(3));
    assert_eq!(findings_of(&report, "big"), ["missing", "oversized"]);
    // Repairing would not fit: a clear error pointing at migrate.
    let out = la(&cluster, &dir, &ns, &["repair", "cm/big"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("migrate"), "{}", text(&out.stderr));

    let out = la(&cluster, &dir, &ns, &["migrate", "cm/big", "--drop-annotation"]);
    assert!(ok(&out).contains("configmap/big migrated to server-side apply (kubectl)"), "{}", text(&out.stdout));
    cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "-f", &file]);
    let live = cluster.get_json(&ns, "cm/big");
    assert!(annotation(&live).is_none());
    let entries = live["metadata"]["managedFields"].as_array().unwrap();
    for (key, _) in &values {
        let owners: Vec<String> = entries
            .iter()
            .filter(|e| e.pointer("/fieldsV1/f:data").and_then(|d| d.get(format!("f:{key}"))).is_some())
            .map(|e| format!("{} {}", e["manager"].as_str().unwrap(), e["operation"].as_str().unwrap()))
            .collect();
        assert_eq!(owners, ["kubectl Apply"], "{key}: {entries:?}");
    }
    // Migrating again finds nothing to do.
    let out = la(&cluster, &dir, &ns, &["migrate", "cm/big"]);
    assert_eq!(ok(&out).trim(), "configmap/big unchanged");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn secret_values_are_never_printed() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-secret");
    let dir = scratch("secret");
    let secret =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: hunter2-very-secret\n";
    let file = write_file(&dir, "secret.yaml", secret);
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &file]);
    let encoded = "aHVudGVyMi12ZXJ5LXNlY3JldA=="; // base64 of the value
    let never = |out: &Output| {
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains("hunter2") && !all.contains(encoded), "{all}");
        all
    };
    let out = la(&cluster, &dir, &ns, &["scan", "secrets"]);
    assert!(never(&out).contains("leaking"));
    never(&la(&cluster, &dir, &ns, &["scan", "secrets", "-o", "yaml"]));
    assert!(never(&la(&cluster, &dir, &ns, &["view", "secret/creds"])).contains("password"));
    never(&la(&cluster, &dir, &ns, &["view", "secret/creds", "--diff"]));
    never(&la(&cluster, &dir, &ns, &["repair", "secret/creds", "--dry-run=server"]));
    never(&la(&cluster, &dir, &ns, &["repair", "secret/creds", "-o", "json"]));
    never(&la(&cluster, &dir, &ns, &["repair", "-f", &file, "-o", "yaml"]));
    // Asked for, they are shown.
    assert!(ok(&la(&cluster, &dir, &ns, &["view", "secret/creds", "--show-secrets"])).contains("hunter2-very-secret"));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bad_inputs_are_one_line_errors() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-bad");
    let dir = scratch("bad");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "plain", "--from-literal=a=b"]);
    let missing_file = dir.join("nope.yaml");
    // Each with the start of its one line: the server's refusal as kubectl prints it, or ours.
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["repair"], "error:"),
        (vec!["migrate"], "error:"),
        (vec!["view", "cm/does-not-exist"], "Error from server (NotFound):"),
        (vec!["view", "cm/plain"], "error:"),
        (vec!["repair", "cm"], "error:"),
        (vec!["repair", "--from-scan", "cm/plain"], "error:"),
        (vec!["scan", "frobnicators"], "error:"),
        (vec!["repair", "-f", missing_file.to_str().unwrap()], "error:"),
        (vec!["repair", "cm/plain", "--dry-run=bogus"], "error:"),
        (vec!["frobnicate"], "error:"),
    ];
    for (args, start) in cases {
        let out = la(&cluster, &dir, &ns, &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(first.starts_with(start), "{args:?}: {stderr}");
        if !matches!(args[0], "frobnicate") && !args.contains(&"--dry-run=bogus") {
            assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        }
    }
    // A user who may not list Secrets still gets a scan, with the type reported as skipped.
    let out = run(plugin(&cluster, &dir, &ns).args(["--context", "fieldwise-restricted", "scan", "-o", "json"]));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
    let skipped: Vec<&str> =
        report["skipped"].as_array().unwrap().iter().filter_map(|s| s["resource"].as_str()).collect();
    assert!(skipped.contains(&"secrets"), "{report}");
}

/// The patches that reached the apiserver (not dry-runs), per object name, in `ns`, whatever the answer.
/// A patch cut off by the freeze is audited as a 504 (`context canceled`) whether it was stored or
/// not, so the audit log alone cannot say which were: the watch in the test does.
fn audited_patches(cluster: &Cluster, ns: &str) -> BTreeMap<String, usize> {
    let log = std::fs::read_to_string(cluster.dir.join("audit.log")).unwrap();
    let mut counts = BTreeMap::new();
    for line in log.lines().filter(|l| l.contains(ns) && l.contains("\"verb\":\"patch\"")) {
        let Ok(event) = serde_json::from_str::<Value>(line) else { continue };
        let uri = event["requestURI"].as_str().unwrap_or_default();
        if event["stage"] != "ResponseComplete" || event["objectRef"]["namespace"] != ns || uri.contains("dryRun") {
            continue;
        }
        *counts.entry(event["objectRef"]["name"].as_str().unwrap_or_default().to_string()).or_insert(0) += 1;
    }
    counts
}

fn apiserver_pid(cluster: &Cluster) -> String {
    let out = run(Command::new("pgrep").args(["-f", &format!("kube-apiserver.*{}", cluster.dir.display())]));
    let pids = text(&out.stdout);
    let pid = pids.lines().next().unwrap_or_else(|| panic!("no kube-apiserver for {}", cluster.dir.display()));
    pid.trim().to_string()
}

/// What [`repair_through_a_freeze`] saw: the first run, and per object how many patches the
/// apiserver audited and how many times the watch saw it stored.
struct FrozenRun {
    first: Output,
    patches: BTreeMap<String, usize>,
    stored: BTreeMap<String, usize>,
}

const FROZEN_OBJECTS: usize = 1000;

/// Creates 1,000 ConfigMaps without the annotation in `ns`, then runs `repair --from-scan`
/// with `request_timeout`; the write hook freezes the apiserver (SIGSTOP) just before the
/// 50th write, for `freeze_secs` at most (the test resumes it when the run ends). Then it
/// re-runs until done, checks every object holds the right annotation, and returns what the
/// audit log and a watch (the ground truth of "stored exactly once") saw.
fn repair_through_a_freeze(cluster: &Cluster, ns: &str, freeze_secs: u32, request_timeout: &str) -> FrozenRun {
    let dir = scratch(&format!("freeze-{freeze_secs}"));
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..FROZEN_OBJECTS {
        list.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i:04}\n  data:\n    num: \"{i}\"\n"
        ));
    }
    let file = write_file(&dir, "many.yaml", &list);
    cluster.kubectl_ok(&["create", "-n", ns, "-f", &file]);

    // Every stored write shows up as one MODIFIED event: the ground truth for "repaired exactly once".
    let mut watch = cluster
        .kubectl()
        .args(["get", "cm", "-n", ns, "--watch-only", "--output-watch-events", "-o", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut watch_out = watch.stdout.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 65536];
            while let Ok(n) = watch_out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    // The watch is running once it sees a probe object.
    cluster.kubectl_ok(&["create", "configmap", "-n", ns, "watch-probe"]);
    let mut touch = 0;
    fieldwise_e2e::eventually("the watch", Duration::from_secs(30), || {
        touch += 1;
        cluster.kubectl_ok(&["label", "configmap", "-n", ns, "watch-probe", &format!("touch={touch}"), "--overwrite"]);
        std::thread::sleep(Duration::from_millis(300));
        seen.lock().unwrap().contains("watch-probe").then_some(())
    });
    let pid = apiserver_pid(cluster);
    let args = [request_timeout, "repair", "--from-scan", "cm", "--yes"];
    // The write hook freezes the apiserver itself, just before the 50th write: mid-run however
    // fast or slow the machine is. Each write also waits 10 ms.
    let counter = dir.join("writes");
    let hook = format!(
        "n=$(flock {lock} sh -c 'n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n >{count}; echo $n'); \
         if [ \"$n\" = 50 ]; then kill -STOP {pid}; (sleep {freeze_secs}; kill -CONT {pid}) >/dev/null 2>&1 & fi; sleep 0.01",
        lock = dir.join("writes.lock").display(),
        count = counter.display(),
    );
    let first = plugin(cluster, &dir, ns).env("FIELDWISE_HOOK_BEFORE_WRITE", &hook).args(args).output().unwrap();
    // The apiserver runs again (a no-op when the hook's own CONT came first).
    run(Command::new("kill").args(["-CONT", &pid]));
    let hooked: usize = std::fs::read_to_string(&counter).unwrap_or_default().trim().parse().unwrap_or(0);
    assert!(hooked >= 50, "the run reached only {hooked} writes: the freeze never happened");
    fieldwise_e2e::eventually("the apiserver after the freeze", Duration::from_secs(30), || {
        cluster.kubectl().args(["get", "--raw", "/readyz"]).output().ok().filter(|o| o.status.success())
    });

    // Rerun until done (a rerun only sees what is still missing).
    ok(&la(cluster, &dir, ns, &args[1..]));
    let last = la(cluster, &dir, ns, &["scan", "cm"]);
    assert_eq!(last.status.code(), Some(0), "{}", text(&last.stdout));

    let patches = audited_patches(cluster, ns);
    std::thread::sleep(Duration::from_secs(1));
    run(Command::new("kill").arg(watch.id().to_string()));
    let _ = watch.wait();
    reader.join().unwrap();
    let events = seen.lock().unwrap().clone();
    let mut stored: BTreeMap<String, usize> = BTreeMap::new();
    for event in serde_json::Deserializer::from_str(&events).into_iter::<Value>() {
        let event = event.unwrap();
        if event["object"]["metadata"]["name"] == "watch-probe" {
            continue;
        }
        assert_eq!(event["type"], "MODIFIED", "{event}");
        *stored.entry(event["object"]["metadata"]["name"].as_str().unwrap().to_string()).or_insert(0) += 1;
    }
    let items: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", ns, "-o", "json"])).unwrap();
    let mut checked = 0;
    for item in items["items"].as_array().unwrap() {
        let name = item["metadata"]["name"].as_str().unwrap();
        let Some(i) = name.strip_prefix("cm-") else { continue };
        let n: usize = i.parse().unwrap();
        let expected = format!(
            "{{\"apiVersion\":\"v1\",\"data\":{{\"num\":\"{n}\"}},\"kind\":\"ConfigMap\",\"metadata\":{{\"annotations\":{{}},\"name\":\"{name}\",\"namespace\":\"{ns}\"}}}}\n"
        );
        assert_eq!(annotation(item).as_deref(), Some(expected.as_str()), "{name}");
        assert_eq!(stored.get(name), Some(&1), "{name} was stored {:?} times", stored.get(name));
        checked += 1;
    }
    assert_eq!(checked, FROZEN_OBJECTS);
    FrozenRun { first, patches, stored }
}

/// A freeze far longer than the request timeout: the writes in flight get no answer, the
/// breaker opens, and the run stops with one summary and exit 1; the re-run finishes the job
/// and every object is stored exactly once. On a cluster of its own: a 30 s freeze of the
/// shared one would stall every other test.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bulk_repair_stops_with_one_summary_when_the_apiserver_freezes_past_the_request_timeout() {
    let private = fieldwise_e2e::private_cluster::PrivateCluster::up("la-freeze");
    let cluster = &private.cluster;
    let ns = cluster.namespace("fw-la-freeze-long");
    let outcome = repair_through_a_freeze(cluster, &ns, 30, "--request-timeout=2s");
    let stderr = text(&outcome.first.stderr);
    assert_eq!(outcome.first.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("transport failures in a row").count(), 1, "one summary: {stderr}");
    assert_eq!(stderr.lines().filter(|l| l.contains(" failed") && l.contains("not tried")).count(), 1, "{stderr}");
    // A second request only where the first was cut off by the freeze before it was stored.
    for (name, count) in outcome.patches.iter().filter(|(name, _)| name.starts_with("cm-")) {
        assert!(matches!(count, 1 | 2), "{name}: {count} patch requests");
    }
    assert!(outcome.patches.values().filter(|&&c| c == 2).count() <= 64, "{:?}", outcome.patches);
    assert_eq!(outcome.stored.len(), FROZEN_OBJECTS);
}

/// A freeze shorter than the request timeout: the writes in flight just wait, and the run rides
/// it out with exit 0; every object is patched once and stored once.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bulk_repair_rides_out_an_apiserver_freeze_shorter_than_the_request_timeout() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-freeze-short");
    let outcome = repair_through_a_freeze(&cluster, &ns, 2, "--request-timeout=30s");
    assert_eq!(outcome.first.status.code(), Some(0), "{}", text(&outcome.first.stderr));
    let repaired: Vec<_> = outcome.patches.iter().filter(|(name, _)| name.starts_with("cm-")).collect();
    for (name, count) in &repaired {
        assert_eq!(**count, 1, "{name}: {count} patch requests");
    }
    assert_eq!(repaired.len(), FROZEN_OBJECTS);
    assert_eq!(outcome.stored.len(), FROZEN_OBJECTS);
}

/// A Widget (the custom resource of `fixtures/widget-crd.yaml`) with a keyed list of workers.
fn widget(name: &str) -> String {
    format!(
        "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  tags: [a]\n  workers:\n  - name: main\n    image: img:1\n    env:\n    - {{name: A, value: '1'}}\n"
    )
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_are_scanned_and_repaired() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-la-cr");
    let dir = scratch("cr");
    for name in ["clean", "drift"] {
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, &format!("{name}.yaml"), &widget(name))]);
    }
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &write_file(&dir, "created.yaml", &widget("created"))]);
    // Someone adds an entry to the keyed list of the drifted one (`kubectl patch`, an update).
    let add = r#"[{"op":"add","path":"/spec/workers/0/env/-","value":{"name":"C","value":"c"}}]"#;
    cluster.kubectl_ok(&["patch", "-n", &ns, "widget/drift", "--type", "json", "-p", add]);
    let (code, report) = scan_json(&cluster, &dir, &ns, "widgets.fieldwise.test");
    assert_eq!(code, Some(3), "{report}");
    assert_eq!(findings_of(&report, "created"), ["missing"], "{report}");
    assert!(findings_of(&report, "clean").is_empty(), "{report}");
    assert_eq!(findings_of(&report, "drift"), ["stale"], "{report}");
    // The finding is true: kubectl apply of a custom resource is a JSON merge patch, which
    // replaces the whole list and drops team-c's entry.
    let detail = report["findings"].as_array().unwrap().iter().find(|f| f["name"] == "drift").unwrap().to_string();
    assert!(detail.contains(".spec.workers"), "{detail}");
    let out = la(&cluster, &dir, &ns, &["view", "widget/drift", "--diff"]);
    assert_eq!(out.status.code(), Some(3), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("name: C"), "{}", text(&out.stdout));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", dir.join("drift.yaml").to_str().unwrap()]);
    let env = cluster.get_json(&ns, "widget/drift")["spec"]["workers"][0]["env"].clone();
    assert_eq!(env.as_array().map(Vec::len), Some(1), "{env}");

    // Repair of the created one, from the live object, as for built-in types.
    let out = la(&cluster, &dir, &ns, &["repair", "widget/created"]);
    assert_eq!(ok(&out).trim(), "widget.fieldwise.test/created repaired");
    let stored: Value = serde_json::from_str(&annotation(&cluster.get_json(&ns, "widget/created")).unwrap()).unwrap();
    assert_eq!(stored["spec"]["workers"][0]["env"][0]["name"], "A", "{stored}");
    let (code, report) = scan_json(&cluster, &dir, &ns, "widgets.fieldwise.test");
    assert_eq!(code, Some(0), "{report}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_file_in_another_namespace_than_dash_n_is_refused_and_nothing_written() {
    let cluster = require_cluster!();
    let (ns_a, ns_b) = (cluster.namespace("fw-la-nsa"), cluster.namespace("fw-la-nsb"));
    let dir = scratch("namespaces");
    let file = write_file(&dir, "in-b.yaml", &busybox_in(&ns_b));
    // Created, not applied: the annotation is missing, and repair would write it.
    cluster.kubectl_ok(&["create", "-f", &file]);
    cluster.kubectl_ok(&["create", "-n", &ns_a, "-f", fieldwise_e2e::fixture("busybox-demo.yaml").to_str().unwrap()]);

    let out = la(&cluster, &dir, &ns_a, &["repair", "-f", &file]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end(), format!("error: {file}: {}", namespace_mismatch(&ns_b, &ns_a)));
    std::thread::sleep(Duration::from_secs(1));
    for ns in [&ns_a, &ns_b] {
        assert!(audited_patches(&cluster, ns).is_empty(), "no patch reached the server in {ns}");
        assert_eq!(annotation(&cluster.get_json(ns, "deploy/busybox-demo")), None);
    }

    // Without -n the file's namespace wins over the context's; the result names the group.
    let out = run(cluster
        .plugin("kubectl-last_applied")
        .env("FIELDWISE_DATA_DIR", dir.join("data"))
        .args(["repair", "-f", &file]));
    assert_eq!(ok(&out).trim(), "deployment.apps/busybox-demo repaired");
    assert!(annotation(&cluster.get_json(&ns_b, "deploy/busybox-demo")).is_some());
    assert_eq!(annotation(&cluster.get_json(&ns_a, "deploy/busybox-demo")), None);
    let out = la(&cluster, &dir, &ns_a, &["view", "deploy/busybox-demo"]);
    assert!(text(&out.stderr).contains("deployment.apps/busybox-demo"), "{}", text(&out.stderr));

    // An -f file with no object is an error naming it.
    let empty = write_file(&dir, "empty.yaml", "");
    let out = la(&cluster, &dir, &ns_a, &["repair", "-f", &empty]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end(), format!("error: no objects passed in -f: \"{empty}\" holds no object (it is empty or only comments and empty documents); give a file with at least one Kubernetes object"));
}

/// The patches (dry runs left out) the audit log shows in `ns`, for proving a dry run wrote nothing.
fn writes_in(cluster: &Cluster, ns: &str) -> usize {
    audited_patches(cluster, ns).values().sum()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn from_scan_writers_stream_dry_run_writes_nothing_and_a_rerun_finds_nothing() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-stream");
    let dir = scratch("stream");
    for name in ["a", "b", "c"] {
        let file = write_file(&dir, &format!("{name}.yaml"), &configmap(name, &[("k", name)]));
        cluster.kubectl_ok(&["create", "-n", &ns, "-f", &file]);
    }
    let clean = write_file(&dir, "clean.yaml", &configmap("clean", &[("k", "v")]));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &clean]);
    std::thread::sleep(std::time::Duration::from_secs(2)); // the audit log is written in batches
    let before = writes_in(&cluster, &ns);

    // Dry runs (client and server) stream the same candidates and write nothing.
    for dry_run in ["--dry-run=client", "--dry-run=server"] {
        let out = la(&cluster, &dir, &ns, &["repair", "--from-scan", "cm", dry_run]);
        let stdout = ok(&out);
        for name in ["a", "b", "c"] {
            assert!(stdout.contains(&format!("configmap/{name} repaired (")), "{dry_run}: {stdout}");
        }
        assert!(!stdout.contains("configmap/clean"), "{stdout}");
        assert!(text(&out.stderr).contains("3 repaired, 0 failed"), "{}", text(&out.stderr));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(writes_in(&cluster, &ns), before, "a dry run sent no write");
    for name in ["a", "b", "c"] {
        assert!(annotation(&cluster.get_json(&ns, &format!("cm/{name}"))).is_none(), "{name} untouched");
    }

    // With --yes, no question: the writes stream; then nothing is left to do.
    let out = la(&cluster, &dir, &ns, &["repair", "--from-scan", "cm", "--yes"]);
    let stdout = ok(&out);
    assert_eq!(stdout.lines().filter(|l| l.ends_with(&format!(" repaired in namespace {ns}"))).count(), 3, "{stdout}");
    for name in ["a", "b", "c"] {
        assert!(annotation(&cluster.get_json(&ns, &format!("cm/{name}"))).is_some(), "{name} repaired");
    }
    let out = la(&cluster, &dir, &ns, &["repair", "--from-scan", "cm", "--yes"]);
    assert!(ok(&out).is_empty() && text(&out.stderr).contains("Nothing to repair."), "{}", text(&out.stderr));

    // migrate --from-scan streams the same way: the object the scan still flags (d, made by
    // `kubectl create` after the repair) and the ones client-side apply still manages without a
    // finding (a, b, c repaired, clean applied) move to server-side apply; a re-run finds nothing.
    cluster.kubectl_ok(&["create", "-n", &ns, "configmap", "d", "--from-literal=k=d"]);
    let out = la(&cluster, &dir, &ns, &["migrate", "--from-scan", "cm", "--yes"]);
    let stdout = ok(&out);
    for name in ["a", "b", "c", "clean", "d"] {
        assert!(stdout.contains(&format!("configmap/{name} migrated to server-side apply (kubectl)")), "{stdout}");
    }
    assert!(text(&out.stderr).contains("5 migrated, 0 failed"), "{}", text(&out.stderr));
    let live = cluster.get_json(&ns, "cm/d");
    let managers: Vec<&str> =
        live["metadata"]["managedFields"].as_array().unwrap().iter().map(|e| e["manager"].as_str().unwrap()).collect();
    assert!(managers.contains(&"kubectl") && !managers.contains(&"kubectl-create"), "{managers:?}");
    let out = la(&cluster, &dir, &ns, &["migrate", "--from-scan", "cm", "--yes"]);
    assert!(text(&out.stderr).contains("Nothing to migrate."), "{}", text(&out.stderr));
}

/// `view --diff` and `scan` give one verdict per object (the core's `drift`): on every object
/// of the fixtures, applied, edited, patched, scaled and created, `view --diff` exits 3
/// exactly when `scan` calls the object stale.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn view_diff_and_scan_agree_on_every_fixture_object() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-la-agree");
    let dir = scratch("agree");
    let busybox = fieldwise_e2e::fixture("busybox-demo.yaml");
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", busybox.to_str().unwrap()]);
    for name in ["clean", "drift", "scaled"] {
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, &format!("{name}.yaml"), &widget(name))]);
    }
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &write_file(&dir, "created.yaml", &widget("created"))]);
    for name in ["cm-clean", "cm-edited", "cm-managed"] {
        let cm = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: \"1\"\n");
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, &format!("{name}.yaml"), &cm)]);
    }
    let add = r#"[{"op":"add","path":"/spec/workers/0/env/-","value":{"name":"C","value":"c"}}]"#;
    cluster.kubectl_ok(&["patch", "-n", &ns, "widget/drift", "--type", "json", "-p", add]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "widget/scaled", "--type", "merge", "-p", r#"{"spec":{"replicas":4}}"#]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/cm-edited", "-p", r#"{"data":{"a":"2"}}"#]);
    cluster.kubectl_ok(&["label", "-n", &ns, "cm/cm-managed", "team=a"]);
    let (_, report) = scan_json(&cluster, &dir, &ns, "deploy,cm,widgets");
    let mut compared = 0;
    for (kind, name) in [
        ("deploy", "busybox-demo"),
        ("widget", "clean"),
        ("widget", "drift"),
        ("widget", "scaled"),
        ("cm", "cm-clean"),
        ("cm", "cm-edited"),
        ("cm", "cm-managed"),
    ] {
        let stale = findings_of(&report, name).iter().any(|f| f == "stale");
        let out = la(&cluster, &dir, &ns, &["view", &format!("{kind}/{name}"), "--diff"]);
        let expected = if stale { 3 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{kind}/{name}: scan says stale={stale}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        compared += 1;
    }
    assert_eq!(compared, 7);
    // The fixtures cover both verdicts.
    assert!(findings_of(&report, "drift").iter().any(|f| f == "stale"), "{report}");
    assert!(findings_of(&report, "cm-edited").iter().any(|f| f == "stale"), "{report}");
    assert!(findings_of(&report, "clean").is_empty(), "{report}");
}

/// A StatefulSet applied client-side: its controller (kube-controller-manager runs) makes
/// ControllerRevisions carrying a copy of the StatefulSet's annotations, the last-applied one
/// included. They are not applied objects: `scan` leaves them out and counts them, and
/// `migrate --from-scan` does not offer to hand kube-controller-manager's fields to kubectl.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn controller_revisions_with_a_copy_of_their_owners_annotation_are_left_out_and_counted() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-revisions");
    let dir = scratch("revisions");
    let statefulset = |image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  serviceName: db\n  selector:\n    matchLabels: {{app: db}}\n  template:\n    metadata:\n      labels: {{app: db}}\n    spec:\n      containers:\n      - name: db\n        image: {image}\n"
        )
    };
    // Two revisions: the template changes once.
    for (i, image) in ["registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.9"].iter().enumerate() {
        let file = write_file(&dir, &format!("db-{i}.yaml"), &statefulset(image));
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &file]);
        fieldwise_e2e::eventually("the controller's revision", Duration::from_secs(60), || {
            let list: Value =
                serde_json::from_str(&cluster.kubectl_ok(&["get", "controllerrevisions", "-n", &ns, "-o", "json"]))
                    .unwrap();
            let copies = list["items"].as_array().unwrap().iter().filter(|r| annotation(r).is_some()).count();
            (copies == i + 1).then_some(())
        });
    }

    let (code, report) = scan_json(&cluster, &dir, &ns, "controllerrevisions");
    assert_eq!(report["findings"], serde_json::json!([]), "{report}");
    assert_eq!(report["scanned"], serde_json::json!({"types": 1, "objects": 2, "controllerCopies": 2}), "{report}");
    assert_eq!(code, Some(0), "{report}");
    let out = la(&cluster, &dir, &ns, &["scan", "controllerrevisions"]);
    assert_eq!(
        ok(&out),
        "No last-applied problems in 2 objects of 1 types (2 left out: made by a controller, with a copy of its owner's annotation).\n"
    );
    let out = la(&cluster, &dir, &ns, &["migrate", "--from-scan", "controllerrevisions", "--dry-run=client"]);
    assert_eq!(ok(&out), "", "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).trim_end(), "Nothing to migrate.");
}

/// The first line of `out`'s stderr that starts with `error: not `, with the action's words
/// (`patching`, `repairing`, ...) replaced by `WRITING`.
fn refusal_line(out: &Output, doing: &str) -> String {
    let stderr = text(&out.stderr);
    let line = stderr.lines().find(|l| l.starts_with("error: not ")).unwrap_or_else(|| panic!("{stderr}"));
    line.replacen(doing, "WRITING", 1)
}

/// `repair --from-scan`, `migrate --from-scan` and `repair` of several named objects or files
/// write many objects: without a terminal and without `--yes` they write nothing and exit 2, in
/// the words of `safe-patch`'s bulk run (repair of several named objects wrote them all); with
/// `--yes` they write, each result line naming the object's namespace.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn from_scan_writers_without_a_terminal_or_yes_write_nothing_as_every_bulk_run() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-noyes");
    let dir = scratch("noyes");
    for name in ["a", "b"] {
        // Created (labelled app=la), not applied: the annotation is missing, and no patch was sent yet.
        let file = write_file(&dir, &format!("{name}.yaml"), &configmap(name, &[("k", "v")]));
        cluster.kubectl_ok(&["create", "-n", &ns, "-f", &file]);
    }
    let before: Vec<Value> = ["a", "b"].iter().map(|n| cluster.get_json(&ns, &format!("cm/{n}"))).collect();
    let safe_patch = run(cluster.plugin("kubectl-safe_patch").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "-n",
        &ns,
        "cm",
        "-l",
        "app=la",
        "-p",
        r#"{"data":{"k":"w"}}"#,
    ]));
    assert_eq!(safe_patch.status.code(), Some(2), "{}", text(&safe_patch.stderr));
    let expected = refusal_line(&safe_patch, "patching");

    // Several objects by scan, by name and by a directory of files: one rule for every run.
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    for name in ["a", "b"] {
        write_file(&files, &format!("{name}.yaml"), &configmap(name, &[("k", "v")]));
    }
    let files = files.to_str().unwrap();
    let runs: [(&str, &str, Vec<&str>); 5] = [
        ("repair", "repairing", vec!["repair", "--from-scan", "cm"]),
        ("migrate", "migrating", vec!["migrate", "--from-scan", "cm"]),
        ("repair", "repairing", vec!["repair", "cm/a", "cm/b"]),
        ("repair", "repairing", vec!["repair", "cm", "a", "b"]),
        ("repair", "repairing", vec!["repair", "-f", files]),
    ];
    for (command, doing, args) in runs {
        let out = la(&cluster, &dir, &ns, &args);
        let command = format!("{command} {}", args[1..].join(" "));
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "", "{command}: no result lines");
        assert!(refusal_line(&out, doing).starts_with("error: not WRITING 2 objects: "), "{command}");
        assert_eq!(refusal_line(&out, doing), expected, "{command}: the same words as safe-patch");
    }
    // A dry run writes nothing and needs no --yes.
    let out = la(&cluster, &dir, &ns, &["repair", "cm/a", "cm/b", "--dry-run=server"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::thread::sleep(Duration::from_secs(2)); // the audit log is written in batches
    assert_eq!(writes_in(&cluster, &ns), 0, "nothing was sent");
    for (name, before) in ["a", "b"].iter().zip(&before) {
        assert_eq!(cluster.get_json(&ns, &format!("cm/{name}")), *before, "{name} untouched");
    }

    let out = la(&cluster, &dir, &ns, &["repair", "--from-scan", "cm", "--yes"]);
    // The writes run concurrently: their result lines come in either order.
    let mut lines: Vec<String> = ok(&out).lines().map(String::from).collect();
    lines.sort();
    assert_eq!(
        lines,
        [format!("configmap/a repaired in namespace {ns}"), format!("configmap/b repaired in namespace {ns}")],
        "{}",
        text(&out.stderr)
    );
    for name in ["a", "b"] {
        assert!(annotation(&cluster.get_json(&ns, &format!("cm/{name}"))).is_some(), "{name} repaired");
    }
}

/// Objects of one name in several namespaces: a run's result lines tell them apart.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn migrate_result_lines_name_the_namespace_of_each_object() {
    let cluster = require_cluster!();
    let namespaces = [cluster.namespace("fw-la-same"), cluster.namespace("fw-la-same")];
    let dir = scratch("same");
    let selector = format!("fw-la-same={}", std::process::id());
    for ns in &namespaces {
        cluster.kubectl_ok(&["create", "configmap", "-n", ns, "same", "--from-literal=k=v"]);
        cluster.kubectl_ok(&["label", "configmap", "-n", ns, "same", &selector]);
    }
    let out = run(cluster.plugin("kubectl-last_applied").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "migrate",
        "--from-scan",
        "-A",
        "-l",
        &selector,
        "--kinds",
        "cm",
        "--yes",
    ]));
    let mut lines: Vec<String> = ok(&out).lines().map(String::from).collect();
    lines.sort();
    let mut expected: Vec<String> = namespaces
        .iter()
        .map(|ns| format!("configmap/same migrated to server-side apply (kubectl) in namespace {ns}"))
        .collect();
    expected.sort();
    assert_eq!(lines, expected, "{}", text(&out.stderr));
}

/// `-o json` names every field of a stale annotation; the table keeps to the first few.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn scan_json_detail_names_every_field() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-whole");
    let dir = scratch("whole");
    let keys: Vec<String> = (0..12).map(|i| format!("k{i:02}")).collect();
    let data: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "a")).collect();
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, "many.yaml", &configmap("many", &data))]);
    let changed: serde_json::Map<String, Value> = keys.iter().map(|k| (k.clone(), Value::from("b"))).collect();
    let patch = serde_json::json!({"data": changed}).to_string();
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/many", "-p", &patch]);
    let (_, report) = scan_json(&cluster, &dir, &ns, "cm");
    let fields: Vec<String> = keys.iter().map(|k| format!(".data.{k}")).collect();
    let detail = format!("differs from the live object at {} (the next apply reverts it)", fields.join(", "));
    let stale: Vec<&Value> = report["findings"].as_array().unwrap().iter().filter(|f| f["name"] == "many").collect();
    assert_eq!(stale.len(), 1, "{report}");
    assert_eq!(stale[0]["detail"], detail.as_str(), "{report}");
    let out = la(&cluster, &dir, &ns, &["scan", "cm"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains(".data.k00, .data.k01, .data.k02 and 9 more (the next apply reverts it)"), "{table}");
}

/// A Deployment whose file sets values the server never stores (`readOnly: false`, `env: []`,
/// `minReadySeconds: 0`) and leaves `fieldRef.apiVersion` for the server to default.
fn zero_valued_deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  minReadySeconds: 0\n  \
selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      labels:\n        app: {name}\n    spec:\n      \
containers:\n      - name: app\n        image: registry.k8s.io/pause:3.10\n        env: []\n        volumeMounts:\n        \
- name: info\n          mountPath: /info\n          readOnly: false\n      - name: side\n        image: registry.k8s.io/pause:3.10\n        \
env:\n        - name: POD\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n      volumes:\n      \
- name: info\n        downwardAPI:\n          items:\n          - path: labels\n            fieldRef:\n              fieldPath: metadata.labels\n"
    )
}

/// Issue 32, defect 4: stale means the next `kubectl apply` of the annotation changes the object.
/// Objects applied client-side from files with zero and empty values, and one whose annotation
/// `repair -f` just wrote, are not stale; the same object edited afterwards is.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn zero_and_empty_values_applied_client_side_are_not_stale_and_an_edit_is() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-la-zero");
    let dir = scratch("zero");
    for name in ["zero", "edited"] {
        let file = write_file(&dir, &format!("{name}.yaml"), &zero_valued_deployment(name));
        cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &file]);
    }
    let null_data = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: null-data\ndata: null\n";
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, "null-data.yaml", null_data)]);
    let created = write_file(&dir, "created.yaml", &zero_valued_deployment("created"));
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &created]);
    let out = la(&cluster, &dir, &ns, &["repair", "-f", &created]);
    assert_eq!(ok(&out).trim(), "deployment.apps/created repaired");
    let (code, report) = scan_json(&cluster, &dir, &ns, "deploy,cm");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["findings"], serde_json::json!([]), "{report}");

    let edit = r#"{"spec":{"minReadySeconds":5,"template":{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}}"#;
    cluster.kubectl_ok(&["patch", "-n", &ns, "deploy/edited", "-p", edit]);
    let (code, report) = scan_json(&cluster, &dir, &ns, "deploy,cm");
    assert_eq!(code, Some(3), "{report}");
    let findings: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(
        findings,
        [(
            "edited",
            "differs from the live object at .spec.minReadySeconds, \
             .spec.template.spec.containers[name=\"app\"].image (the next apply reverts it)"
        )],
        "{report}"
    );
    let out = la(&cluster, &dir, &ns, &["view", "deploy/zero", "--diff"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}
