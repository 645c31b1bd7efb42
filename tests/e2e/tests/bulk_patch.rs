//! `kubectl safe-patch` on many objects against the real cluster (issue #25): selection
//! across namespaces under a concurrent writer, no write without --yes off a terminal,
//! runs undone as one (and a second undo stepping back), RBAC that forbids part of a
//! selection, custom resources through their status and scale subresources, and a run
//! that survives the apiserver dying mid-way (on a private cluster).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use fieldwise_e2e::private_cluster::PrivateCluster;
use fieldwise_e2e::{eventually, install_widget_crd, require_cluster, run, text, workspace_root, Cluster};
use serde_json::{json, Value};

/// A private backup directory per test, so runs and backups of tests never mix.
fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-bulk-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The plugin, pointed at `cluster`, keeping its backups in `data`.
fn safe_patch(cluster: &Cluster, data: &Path) -> Command {
    let mut cmd = cluster.plugin("kubectl-safe_patch");
    cmd.env("FIELDWISE_DATA_DIR", data);
    cmd
}

fn describe(out: &Output) -> String {
    format!("exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", describe(out));
    text(&out.stdout)
}

/// Creates `count` ConfigMaps `cm-NN` in `ns` holding `k: v`, labelled `label` (`key=value`).
fn configmaps(cluster: &Cluster, ns: &str, count: usize, label: &str) {
    let (key, value) = label.split_once('=').expect("key=value");
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..count {
        list.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-{i:02}\n    labels: {{\"{key}\": \"{value}\"}}\n  data:\n    k: v\n"
        ));
    }
    cluster.kubectl_stdin(&["create", "-n", ns, "-f", "-"], &list);
}

/// Every ConfigMap of `ns` by name.
fn configmaps_in(cluster: &Cluster, ns: &str) -> Vec<Value> {
    let list: Value = serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", ns, "-o", "json"])).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|cm| cm["metadata"]["name"] != "kube-root-ca.crt")
        .cloned()
        .collect()
}

/// The resourceVersion of every ConfigMap of the namespaces, to tell whether anything was written.
fn versions(cluster: &Cluster, namespaces: &[&str]) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for ns in namespaces {
        for cm in configmaps_in(cluster, ns) {
            let name = format!("{ns}/{}", cm["metadata"]["name"].as_str().unwrap());
            all.push((name, cm["metadata"]["resourceVersion"].as_str().unwrap().to_string()));
        }
    }
    all
}

/// Writes sent to the namespaces since `mark` by anyone but the system (dry runs aside).
fn user_writes(cluster: &Cluster, mark: fieldwise_e2e::audit::AuditMark, namespaces: &[&str]) -> usize {
    std::thread::sleep(Duration::from_millis(300));
    cluster
        .audit_since(mark)
        .iter()
        .filter(|e| namespaces.contains(&e.namespace.as_str()) && e.is_write() && !e.dry_run && !e.is_from_system())
        .count()
}

/// The run id a bulk run printed at its end.
fn run_id(out: &Output) -> String {
    let stderr = text(&out.stderr);
    let line = stderr.lines().find(|l| l.starts_with("Run ")).unwrap_or_else(|| panic!("no run id: {}", describe(out)));
    line.trim_start_matches("Run ").split([';', ' ']).next().unwrap().to_string()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn thirty_objects_across_namespaces_land_under_a_concurrent_writer_and_undo_as_one_run() {
    let cluster = require_cluster!();
    let data = data_dir("writer");
    let namespaces: Vec<String> = (0..3).map(|_| cluster.namespace("fw-bulk-writer")).collect();
    let namespaces: Vec<&str> = namespaces.iter().map(String::as_str).collect();
    let selector = format!("fw-bulk-writer={}", std::process::id());
    for ns in &namespaces {
        configmaps(&cluster, ns, 11, &selector);
        // Not selected: same namespaces, no label.
        cluster.kubectl_ok(&["create", "configmap", "unselected", "-n", ns, "--from-literal=k=v"]);
    }
    let before = versions(&cluster, &namespaces);
    // The concurrent writer: between each object's preview and its write, another writer
    // changes another key of that very object. The write's field guard (only what the change
    // depends on) lets ours land anyway, and neither change is lost, nor lost again by undo.
    let hook = "kubectl patch -n \"$FIELDWISE_HOOK_NAMESPACE\" configmap \"$FIELDWISE_HOOK_NAME\" --type merge \
                -p '{\"data\":{\"writer\":\"was-here\"}}' >/dev/null";
    let out = run(safe_patch(&cluster, &data).env("FIELDWISE_HOOK_BEFORE_WRITE", hook).args([
        "configmap",
        "-l",
        &selector,
        "-A",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"k":"patched"}}"#,
        "--yes",
    ]));
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    assert_eq!(stdout.lines().filter(|l| l.contains(" patched in namespace fw-bulk-writer-")).count(), 33, "{stdout}");
    assert!(stderr.contains("Change 1 of 1, on 33 objects"), "one group for one identical change: {stderr}");
    for ns in &namespaces {
        assert!(stderr.contains(&format!("  namespace {ns}: configmap/cm-00, configmap/cm-01")), "{stderr}");
    }
    assert!(stderr.contains("33 objects to patch, dry-run on the server, 0 unchanged, in 3 namespaces."), "{stderr}");
    assert!(stderr.contains("33 patched, 0 unchanged, 0 conflicts, 0 refused, 0 failed"), "{stderr}");
    let id = run_id(&out);
    for ns in &namespaces {
        for cm in configmaps_in(&cluster, ns) {
            let name = cm["metadata"]["name"].as_str().unwrap();
            if name == "unselected" {
                continue;
            }
            assert_eq!(cm["data"]["k"], "patched", "{ns}/{name}: our change landed");
            assert_eq!(cm["data"]["writer"], "was-here", "{ns}/{name}: the writer's change is kept");
        }
    }
    let after = versions(&cluster, &namespaces);
    for ((name, old), (_, new)) in before.iter().zip(&after) {
        assert_eq!(name.ends_with("/unselected"), old == new, "{name}: only the selected objects were written");
    }

    let runs = ok(&run(safe_patch(&cluster, &data).args(["history", "--runs"])));
    let row = runs.lines().find(|l| l.starts_with(&id)).unwrap_or_else(|| panic!("{runs}"));
    assert!(row.contains("safe-patch merge") && row.split_whitespace().nth(4) == Some("33"), "{row}");

    // The undo, previewed, then refused without a terminal and --yes, then done.
    let mark = cluster.audit_mark();
    let preview = run(safe_patch(&cluster, &data).args(["undo", "--last-run", "--dry-run"]));
    assert!(preview.status.success(), "{}", describe(&preview));
    assert!(text(&preview.stderr).contains("33 objects to restore"), "{}", describe(&preview));
    let refused = run(safe_patch(&cluster, &data).args(["undo", "--last-run"]));
    assert_eq!(refused.status.code(), Some(2), "{}", describe(&refused));
    assert!(text(&refused.stderr).contains("not restoring 33 objects"), "{}", describe(&refused));
    assert_eq!(user_writes(&cluster, mark, &namespaces), 0, "a dry run and a refused undo write nothing");
    let undone = run(safe_patch(&cluster, &data).args(["undo", "--last-run", "--yes"]));
    let undone_out = ok(&undone);
    assert_eq!(undone_out.lines().filter(|l| l.contains(" restored in namespace ")).count(), 33, "{undone_out}");
    assert!(text(&undone.stderr).contains(&format!("undid run {id}")), "{}", describe(&undone));
    for ns in &namespaces {
        for cm in configmaps_in(&cluster, ns).iter().filter(|cm| cm["metadata"]["name"] != "unselected") {
            assert_eq!(cm["data"]["k"], "v", "restored: {cm}");
            assert_eq!(cm["data"]["writer"], "was-here", "the writer's change came before ours and stays: {cm}");
        }
    }
}

/// Issue #44: a file of more documents than `--max-objects` is refused by the limit as soon as
/// it is passed, before the rest of the file is parsed (its unparseable tail is never met)
/// and before any request about its objects; within the limit the same tail is refused.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_file_over_max_objects_is_refused_before_the_rest_is_read() {
    let cluster = require_cluster!();
    let data = data_dir("over-file");
    std::fs::create_dir_all(&data).unwrap();
    let ns = cluster.namespace("fw-bulk-overfile");
    let mut manifests = String::new();
    for i in 0..4 {
        manifests.push_str(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\n  namespace: {ns}\ndata: {{k: v}}\n---\n"
        ));
    }
    manifests.push_str("metadata: {name: [\n");
    let file = data.join("many.yaml");
    std::fs::write(&file, manifests).unwrap();
    let patch = ["-f", file.to_str().unwrap(), "--yes", "-p", r#"{"data":{"k":"w"}}"#];
    let mark = cluster.audit_mark();
    let over = run(safe_patch(&cluster, &data).args(patch).args(["--max-objects", "3"]));
    assert_eq!(over.status.code(), Some(2), "{}", describe(&over));
    let stderr = text(&over.stderr);
    assert!(
        stderr.starts_with("error: the selection holds more than --max-objects (3) objects")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!stderr.contains("cannot parse"), "the tail was never parsed: {stderr}");
    std::thread::sleep(Duration::from_millis(300));
    let about = cluster.audit_since(mark).iter().filter(|e| e.namespace == ns && !e.is_from_system()).count();
    assert_eq!(about, 0, "refused before any request about the objects");
    // Within the limit the whole file is read, and its tail refused: it really is garbage.
    let within = run(safe_patch(&cluster, &data).args(patch).args(["--max-objects", "4"]));
    assert_eq!(within.status.code(), Some(1), "{}", describe(&within));
    let stderr = text(&within.stderr);
    assert!(stderr.contains("cannot parse") && stderr.contains("document 5"), "{stderr}");
    assert_eq!(user_writes(&cluster, mark, &[&ns]), 0);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn without_yes_and_a_terminal_or_over_max_objects_nothing_is_written() {
    let cluster = require_cluster!();
    let data = data_dir("no-yes");
    let (a, b) = (cluster.namespace("fw-bulk-noyes"), cluster.namespace("fw-bulk-noyes"));
    let selector = format!("fw-bulk-noyes={}", std::process::id());
    configmaps(&cluster, &a, 7, &selector);
    configmaps(&cluster, &b, 6, &selector);
    let mark = cluster.audit_mark();
    let before = versions(&cluster, &[&a, &b]);
    let patch = ["cm", "-l", &selector, "-A", "-p", r#"{"data":{"k":"w"}}"#];
    let out = run(safe_patch(&cluster, &data).args(patch));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not patching 13 objects") && stderr.contains("--yes"), "{stderr}");
    assert!(stderr.contains("13 objects to patch, dry-run on the server"), "the preview is shown: {stderr}");
    assert!(text(&out.stdout).is_empty(), "no result lines: {}", describe(&out));
    let over = run(safe_patch(&cluster, &data).args(patch).args(["--yes", "--max-objects", "12"]));
    assert_eq!(over.status.code(), Some(2), "{}", describe(&over));
    let stderr = text(&over.stderr);
    assert!(stderr.contains("holds 13 objects, more than --max-objects (12)") && stderr.contains("--max-objects 13"));
    assert_eq!(versions(&cluster, &[&a, &b]), before);
    assert_eq!(user_writes(&cluster, mark, &[&a, &b]), 0, "only dry runs were sent");
    // Names with a selector, or names across namespaces: kubectl's refusals, clearly.
    let out = run(safe_patch(&cluster, &data).args(["cm/cm-00", "-l", &selector, "-p", "{}", "-n", &a]));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("names cannot be combined with -l"), "{}", describe(&out));
    let out = run(safe_patch(&cluster, &data).args(["cm", "-p", "{}", "-n", &a]));
    assert!(text(&out.stderr).contains("a name is required: configmap/NAME, or select"), "{}", describe(&out));
    // Several names, and files (repeatable -f, a directory with -R): the same bulk flow.
    let dir = data.join("manifests");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let manifest =
        |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {b}\n");
    std::fs::write(dir.join("one.yaml"), manifest("cm-00")).unwrap();
    std::fs::write(dir.join("sub").join("two.yaml"), manifest("cm-01")).unwrap();
    let extra = data.join("three.yaml");
    std::fs::write(&extra, manifest("cm-02")).unwrap();
    let files = [dir.to_str().unwrap(), extra.to_str().unwrap()];
    let out = run(safe_patch(&cluster, &data)
        .args(["-f", files[0], "-f", files[1], "-R", "-p", r#"{"data":{"f":"1"}}"#])
        .arg("--yes"));
    assert!(text(&out.stderr).contains("3 patched, 0 unchanged"), "{}", describe(&out));
    let named = run(safe_patch(&cluster, &data).args([
        "-n",
        &a,
        "cm",
        "cm-00",
        "cm-01",
        "-p",
        r#"{"data":{"n":"1"}}"#,
        "--yes",
    ]));
    assert!(text(&named.stderr).contains("2 patched, 0 unchanged"), "{}", describe(&named));
    let patched = |ns: &str, key: &str| configmaps_in(&cluster, ns).iter().filter(|cm| cm["data"][key] == "1").count();
    assert_eq!((patched(&b, "f"), patched(&a, "n")), (3, 2));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_second_undo_of_runs_steps_back_and_changed_objects_are_skipped_unless_forced() {
    let cluster = require_cluster!();
    let data = data_dir("undo");
    let ns = cluster.namespace("fw-bulk-undo");
    configmaps(&cluster, &ns, 4, "app=undo");
    let patch = |value: &str| {
        let out = run(safe_patch(&cluster, &data)
            .args(["-n", &ns, "cm", "-l", "app=undo", "-p"])
            .arg(format!(r#"{{"data":{{"k":"{value}"}}}}"#))
            .arg("--yes"));
        assert!(text(&out.stderr).contains("4 patched"), "{}", describe(&out));
        run_id(&out)
    };
    let values = || {
        configmaps_in(&cluster, &ns).iter().map(|cm| cm["data"]["k"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let first = patch("a");
    let second = patch("b");
    assert_eq!(values(), ["b"; 4]);
    let undo = || run(safe_patch(&cluster, &data).args(["undo", "--last-run", "--yes"]));
    let out = undo();
    assert!(text(&out.stderr).contains(&format!("undid run {second}")), "{}", describe(&out));
    assert_eq!(values(), ["a"; 4]);
    let out = undo();
    assert!(text(&out.stderr).contains(&format!("undid run {first}")), "a second undo steps back: {}", describe(&out));
    assert_eq!(values(), ["v"; 4]);
    let out = undo();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("no bulk run left to undo"), "{}", describe(&out));

    // One object changed by someone since the run: skipped with the reason (exit 3), the rest restored.
    let third = patch("c");
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/cm-02", "--type", "merge", "-p", r#"{"data":{"k":"someone"}}"#]);
    let out = run(safe_patch(&cluster, &data).args(["undo", "--run", &third, "--yes"]));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("configmap/cm-02 in namespace {ns} changed since the write being undone")),
        "{stderr}"
    );
    assert!(stderr.contains("3 restored, 0 unchanged, 1 conflict, 0 refused, 0 failed"), "{stderr}");
    assert_eq!(values(), ["v", "v", "someone", "v"]);
    let out = run(safe_patch(&cluster, &data).args(["undo", "--run", &third, "--yes", "--force"]));
    assert!(text(&out.stderr).contains("1 restored, 3 unchanged"), "{}", describe(&out));
    assert_eq!(values(), ["v"; 4]);
    // A single object's undo reads the same stack: every write of cm-00 is undone already.
    let single = run(safe_patch(&cluster, &data).args(["-n", &ns, "undo", "cm/cm-00", "--dry-run"]));
    assert_eq!(single.status.code(), Some(1), "{}", describe(&single));
    assert!(text(&single.stderr).contains("nothing left to undo for configmap/cm-00"), "{}", describe(&single));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn objects_rbac_forbids_are_reported_and_the_rest_patched() {
    let cluster = require_cluster!();
    let data = data_dir("rbac");
    let (allowed, forbidden) = (cluster.namespace("fw-bulk-rbac-ok"), cluster.namespace("fw-bulk-rbac-no"));
    let selector = format!("fw-bulk-rbac={}", std::process::id());
    configmaps(&cluster, &allowed, 3, &selector);
    configmaps(&cluster, &forbidden, 2, &selector);
    // The restricted user may read everywhere (view) and patch ConfigMaps in `allowed` only.
    cluster.kubectl_ok(&[
        "create",
        "role",
        "patch-cm",
        "-n",
        &allowed,
        "--verb=get,list,patch",
        "--resource=configmaps",
    ]);
    cluster.kubectl_ok(&[
        "create",
        "rolebinding",
        "patch-cm",
        "-n",
        &allowed,
        "--role=patch-cm",
        "--user=fieldwise-restricted",
    ]);
    eventually("the role binding to take effect", Duration::from_secs(30), || {
        let out = run(cluster.kubectl().args([
            "auth",
            "can-i",
            "patch",
            "configmaps",
            "-n",
            &allowed,
            "--as",
            "fieldwise-restricted",
        ]));
        out.status.success().then_some(())
    });
    let before_forbidden = versions(&cluster, &[&forbidden]);
    let out = run(safe_patch(&cluster, &data).args([
        "--context",
        "fieldwise-restricted",
        "cm",
        "-l",
        &selector,
        "-A",
        "-p",
        r#"{"data":{"k":"w"}}"#,
        "--yes",
    ]));
    assert_eq!(
        out.status.code(),
        Some(1),
        "forbidden objects exit 1, as a single patch of one does: {}",
        describe(&out)
    );
    let stderr = text(&out.stderr);
    for i in 0..2 {
        let line = format!("error: configmap/cm-{i:02} in namespace {forbidden}: ");
        let reported = stderr.lines().find(|l| l.starts_with(&line)).unwrap_or_else(|| panic!("{stderr}"));
        assert!(reported.contains("forbidden"), "{reported}");
    }
    assert!(stderr.contains("3 patched, 0 unchanged, 0 conflicts, 2 refused, 0 failed"), "{stderr}");
    assert!(configmaps_in(&cluster, &allowed).iter().all(|cm| cm["data"]["k"] == "w"));
    assert_eq!(versions(&cluster, &[&forbidden]), before_forbidden, "nothing written where it is forbidden");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_through_scale_and_status_take_merge_and_undo_through_them() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let data = data_dir("cr");
    let ns = cluster.namespace("fw-bulk-cr");
    for i in 0..3 {
        let widget = format!(
            "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata: {{name: w{i}, labels: {{fleet: a}}}}\nspec:\n  replicas: 1\n  workers:\n  - {{name: main, image: img:1}}\n  - {{name: side, image: img:1}}\n"
        );
        cluster.kubectl_stdin(&["create", "-n", &ns, "-f", "-"], &widget);
    }
    let widgets = || {
        let list: Value =
            serde_json::from_str(&cluster.kubectl_ok(&["get", "widgets", "-n", &ns, "-o", "json"])).unwrap();
        list["items"].as_array().unwrap().clone()
    };
    let bulk = |args: &[&str]| {
        run(safe_patch(&cluster, &data).args(["-n", &ns, "widgets", "-l", "fleet=a"]).args(args).arg("--yes"))
    };

    // Scale without --type: merge (a custom resource refuses strategic on every subresource).
    let out = bulk(&["--subresource", "scale", "-p", r#"{"spec":{"replicas":3}}"#]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains("takes no strategic merge patch") && text(&out.stderr).contains("3 patched"),
        "{}",
        describe(&out)
    );
    assert!(widgets().iter().all(|w| w["spec"]["replicas"] == 3), "{:?}", widgets());
    // One object through scale: the single-object flow chooses the same.
    let one = run(safe_patch(&cluster, &data).args([
        "-n",
        &ns,
        "widget/w0",
        "--subresource",
        "scale",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
        "--yes",
    ]));
    assert_eq!(ok(&one).trim(), "widget.fieldwise.test/w0 patched");
    // Status: only status changes.
    let out = bulk(&["--subresource", "status", "-p", r#"{"status":{"phase":"Ready"}}"#]);
    assert!(text(&out.stderr).contains("3 patched"), "{}", describe(&out));
    assert!(widgets().iter().all(|w| w["status"]["phase"] == "Ready"));

    // A merge patch replacing a keyed list: the advice is server-side apply, never strategic.
    let out = run(safe_patch(&cluster, &data).args([
        "-n",
        &ns,
        "widget/w1",
        "-p",
        r#"{"spec":{"workers":[{"name":"main","image":"img:2"}]}}"#,
        "--dry-run=client",
    ]));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("replaces the whole list spec.workers: side would be removed"), "{stderr}");
    assert!(
        stderr.contains("use --type apply to merge list entries by key") && !stderr.contains("--type strategic"),
        "{stderr}"
    );

    // Undo the status run, then the scale run: each through its subresource.
    let undo = || run(safe_patch(&cluster, &data).args(["undo", "--last-run", "--yes"]));
    let out = undo();
    assert!(text(&out.stderr).contains("3 restored"), "{}", describe(&out));
    assert!(widgets().iter().all(|w| w["status"].get("phase").is_none()), "{:?}", widgets());
    let out = undo();
    assert!(
        text(&out.stderr).contains("2 restored, 0 unchanged, 1 conflict"),
        "w0 was scaled again since: {}",
        describe(&out)
    );
    let replicas: Vec<Value> = widgets().iter().map(|w| w["spec"]["replicas"].clone()).collect();
    assert_eq!(replicas, [json!(4), json!(1), json!(1)]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_run_survives_the_apiserver_dying_mid_way_and_a_re_run_finishes_it() {
    let _shared = require_cluster!();
    let private = PrivateCluster::up("bulk");
    let cluster = &private.cluster;
    let data = data_dir("killed");
    let ns = cluster.namespace("fw-bulk-killed");
    configmaps(cluster, &ns, 30, "app=killed");
    let counter = data.join("writes");
    std::fs::create_dir_all(&data).unwrap();
    // Before the 10th write, the apiserver is killed (etcd and the state stay).
    let script = workspace_root().join("scripts/cluster");
    let hook = format!(
        "n=$(( $(cat {c} 2>/dev/null || echo 0) + 1 )); echo $n > {c}; \
         if [ $n -eq 10 ]; then {s} apiserver stop >/dev/null 2>&1; fi",
        c = counter.display(),
        s = script.display()
    );
    let patch =
        ["-n", &ns, "cm", "-l", "app=killed", "--type", "merge", "-p", r#"{"data":{"a":"1","b":"2"}}"#, "--yes"];
    let first = run(safe_patch(cluster, &data)
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .env("FIELDWISE_CLUSTER_DIR", &cluster.dir)
        .args(["--request-timeout", "5s"])
        .args(patch));
    let start = private.apiserver("start");
    assert!(start.status.success(), "apiserver start: {}", describe(&start));
    eventually("the apiserver back", Duration::from_secs(60), || {
        run(cluster.kubectl().args(["get", "--raw", "/readyz"])).status.success().then_some(())
    });
    assert_eq!(first.status.code(), Some(1), "{}", describe(&first));
    let stderr = text(&first.stderr);
    assert!(stderr.contains("stopped after") && stderr.contains("run the same command again"), "{stderr}");
    assert!(stderr.contains("not tried"), "{stderr}");
    let state = |cm: &Value| match (cm["data"].get("a"), cm["data"].get("b")) {
        (Some(a), Some(b)) if a == "1" && b == "2" => "patched",
        (None, None) => "untouched",
        _ => "half-written",
    };
    let states: Vec<&str> = configmaps_in(cluster, &ns).iter().map(state).collect();
    let patched = states.iter().filter(|s| **s == "patched").count();
    assert!(!states.contains(&"half-written"), "{states:?}");
    assert!((1..30).contains(&patched), "the kill came mid-run: {patched} patched");
    let pending = fieldwise_e2e::files_below(&data, None)
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .filter(|f| std::fs::read_to_string(f).unwrap_or_default().contains("\"state\": \"pending\""))
        .count();
    assert_eq!(pending, 0, "every backup record is written, unknown or gone");

    let second = run(safe_patch(cluster, &data).args(patch));
    assert!(second.status.success(), "{}", describe(&second));
    let summary = format!("{} patched, {} unchanged, 0 conflicts, 0 refused, 0 failed", 30 - patched, patched);
    assert!(text(&second.stderr).contains(&summary), "{summary}: {}", describe(&second));
    assert!(configmaps_in(cluster, &ns).iter().all(|cm| state(cm) == "patched"));
}

/// Issue #28.5: `undo --run` stopped by Ctrl-C after its first restore, then run again as its
/// message advises: the object the first attempt restored is `unchanged`, not a conflict, and
/// the others are restored.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_interrupted_undo_run_finishes_when_run_again() {
    let cluster = require_cluster!();
    let data = data_dir("undo-again");
    let ns = cluster.namespace("fw-bulk-undo-again");
    configmaps(&cluster, &ns, 3, "app=undo-again");
    let patched = run(safe_patch(&cluster, &data).args([
        "-n",
        &ns,
        "cm",
        "-l",
        "app=undo-again",
        "-p",
        r#"{"data":{"k":"w"}}"#,
        "--yes",
    ]));
    ok(&patched);
    let run_id = text(&patched.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("Run ").and_then(|rest| rest.split(';').next()).map(String::from))
        .expect("the run id line");
    // The hook runs once before each write, in a shell whose parent is the plugin: Ctrl-C
    // before the second write, so the first has landed and nothing more is sent.
    std::fs::create_dir_all(&data).unwrap();
    let hook = format!(
        "n=$(( $(cat {c} 2>/dev/null || echo 0) + 1 )); echo $n > {c}; if [ $n -eq 2 ]; then kill -INT $PPID; sleep 1; fi",
        c = data.join("writes").display()
    );
    let first = run(safe_patch(&cluster, &data).env("FIELDWISE_HOOK_BEFORE_WRITE", &hook).args([
        "undo",
        "--run",
        &run_id,
        "--concurrency",
        "1",
        "--yes",
    ]));
    assert_eq!(first.status.code(), Some(130), "{}", describe(&first));
    let restored = |cms: &[Value]| cms.iter().filter(|cm| cm["data"]["k"] == "v").count();
    assert_eq!(restored(&configmaps_in(&cluster, &ns)), 1, "{}", describe(&first));
    let again = run(safe_patch(&cluster, &data).args(["undo", "--run", &run_id, "--yes"]));
    assert_eq!(again.status.code(), Some(0), "{}", describe(&again));
    assert!(
        text(&again.stderr).contains("2 restored, 1 unchanged, 0 conflicts, 0 refused, 0 failed"),
        "{}",
        describe(&again)
    );
    assert_eq!(restored(&configmaps_in(&cluster, &ns)), 3);
}

/// Issue #32.10: an undo is guarded by the fields it writes back, not by the whole object:
/// objects only labelled since the run are restored (the label stays), and one whose patched
/// field was changed since is skipped (exit 3), naming the field and the manager.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_undo_run_is_blocked_only_by_changes_of_the_fields_it_restores() {
    let cluster = require_cluster!();
    let data = data_dir("undo-fields");
    let ns = cluster.namespace("fw-bulk-undo-fields");
    configmaps(&cluster, &ns, 3, "app=undo-fields");
    ok(&run(safe_patch(&cluster, &data).args([
        "-n",
        &ns,
        "cm",
        "-l",
        "app=undo-fields",
        "-p",
        r#"{"data":{"k":"w"}}"#,
        "--yes",
    ])));
    cluster.kubectl_ok(&["label", "-n", &ns, "cm", "-l", "app=undo-fields", "other-tool=was-here"]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/cm-01", "--type", "merge", "-p", r#"{"data":{"k":"someone"}}"#]);
    let out = run(safe_patch(&cluster, &data).args(["undo", "--last-run", "--yes"]));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "configmap/cm-01 in namespace {ns} changed since the write being undone at .data.k, by kubectl-patch (Update)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("2 restored, 0 unchanged, 1 conflict, 0 refused, 0 failed"), "{stderr}");
    let cms = configmaps_in(&cluster, &ns);
    let values: Vec<&str> = cms.iter().map(|cm| cm["data"]["k"].as_str().unwrap()).collect();
    assert_eq!(values, ["v", "someone", "v"]);
    assert!(cms.iter().all(|cm| cm["metadata"]["labels"]["other-tool"] == "was-here"), "the later label stays");
}
