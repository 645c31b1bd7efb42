//! Issue #24 against the real cluster: fields written by kubectl's imperative commands (or
//! before the first server-side apply) stay co-owned after a move to server-side apply, so
//! the new applier cannot delete them. `kubectl owners transfer` hands them over; `kubectl
//! safe-patch` writes a patch of managedFields; `kubectl last-applied migrate` finishes the
//! move. Run on both clusters (1.37, and 1.33 with FIELDWISE_KUBE_VERSION=1.33).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fieldwise_e2e::{files_below, install_widget_crd, ok, require_cluster, run, text, write_file, Cluster};
use serde_json::{json, Value};

/// A private directory per test (backups and files), so tests never see each other's backups.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-transfer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn plugin(cluster: &Cluster, exe: &str, dir: &Path, ns: &str) -> Command {
    let mut cmd = cluster.plugin(exe);
    cmd.env("FIELDWISE_DATA_DIR", dir.join("data")).args(["-n", ns]);
    cmd
}

fn owners(cluster: &Cluster, dir: &Path, ns: &str, args: &[&str]) -> Output {
    run(plugin(cluster, "kubectl-owners", dir, ns).args(args))
}

/// `(manager, operation, subresource)` of every managedFields entry, in order.
fn managers(object: &Value) -> Vec<(String, String, String)> {
    let s = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    object["metadata"]["managedFields"]
        .as_array()
        .map(|l| l.iter().map(|e| (s(e, "manager"), s(e, "operation"), s(e, "subresource"))).collect())
        .unwrap_or_default()
}

fn names(object: &Value) -> Vec<String> {
    managers(object).into_iter().map(|(m, _, _)| m).collect()
}

/// The managedFields list without the entries' times.
fn without_times(object: &Value) -> Value {
    let mut list = object["metadata"]["managedFields"].clone();
    for entry in list.as_array_mut().into_iter().flatten() {
        if let Value::Object(map) = entry {
            map.remove("time");
        }
    }
    list
}

/// The one entry of `manager` with `operation` (and no subresource).
fn entry<'v>(object: &'v Value, manager: &str, operation: &str) -> &'v Value {
    object["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| {
            l.iter().find(|e| e["manager"] == manager && e["operation"] == operation && e.get("subresource").is_none())
        })
        .unwrap_or_else(|| panic!("no {manager} {operation} entry in {:?}", managers(object)))
}

fn deployment(name: &str, labels: &[(&str, &str)], env: &[(&str, &str)]) -> String {
    let mut text = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n");
    for (k, v) in labels {
        text.push_str(&format!("    {k}: {v}\n"));
    }
    text.push_str(&format!(
        "spec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n      containers:\n      - name: app\n        image: busybox:1.36\n        command: [sleep, \"3600\"]\n        env:\n"
    ));
    for (k, v) in env {
        text.push_str(&format!("        - name: {k}\n          value: \"{v}\"\n"));
    }
    text
}

fn configmap(name: &str, data: &[(&str, &str)]) -> String {
    let mut text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n");
    for (k, v) in data {
        text.push_str(&format!("  {k}: \"{v}\"\n"));
    }
    text
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().map(|l| l.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_trap_then_transfer_then_the_same_apply_deletes_the_field() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-trap");
    let dir = scratch("trap");
    let created = write_file(&dir, "created.yaml", &deployment("web", &[("app", "web")], &[("A", "1")]));
    let full = write_file(
        &dir,
        "full.yaml",
        &deployment("web", &[("app", "web"), ("tier", "backend")], &[("A", "1"), ("B", "2")]),
    );
    let dropped = write_file(&dir, "dropped.yaml", &deployment("web", &[("app", "web")], &[("A", "1")]));
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &created]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "deploy/web", "-p", r#"{"metadata":{"labels":{"tier":"backend"}}}"#]);
    cluster.kubectl_ok(&["set", "env", "-n", &ns, "deploy/web", "B=2"]);
    // Argo CD adopts the object with server-side apply, then drops the label and the variable.
    let apply = |file: &str| {
        cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "--field-manager", "argocd", "-f", file])
    };
    apply(&full);
    apply(&dropped);
    let live = cluster.get_json(&ns, "deploy/web");
    assert_eq!(live["metadata"]["labels"]["tier"], "backend", "the trap: the label survives the apply");
    let env = live["spec"]["template"]["spec"]["containers"][0]["env"].to_string();
    assert!(env.contains("\"B\""), "the trap: the variable survives the apply: {env}");
    let controllers: Vec<(String, String, String)> =
        managers(&live).into_iter().filter(|(m, _, _)| m == "kube-controller-manager").collect();
    assert!(!controllers.is_empty(), "the deployment controller wrote the object: {:?}", managers(&live));

    // The preview: what moves from whom, and what argocd's next apply of its file removes.
    let out = owners(
        &cluster,
        &dir,
        &ns,
        &["transfer", "-f", &dropped, "--from", "human", "--to", "argocd", "--dry-run", "-o", "json"],
    );
    let doc = json_of(&out);
    let item = &doc["items"][0];
    assert_eq!(item["outcome"], "transferred to argocd (Apply) (dry run)", "{item}");
    let from: Vec<String> =
        item["moved"].as_array().unwrap().iter().map(|m| m["from"]["manager"].as_str().unwrap().to_string()).collect();
    assert_eq!(from, ["kubectl-create", "kubectl-patch", "kubectl-set"], "{item}");
    let removes = strings(&item["nextApply"]["removes"]);
    assert!(removes.contains(&".metadata.labels.tier".to_string()), "{removes:?}");
    assert!(removes.iter().any(|p| p.contains("env[name=\"B\"]")), "{removes:?}");
    assert!(!removes.iter().any(|p| p.contains("env[name=\"A\"]") || p == ".metadata.labels.app"), "{removes:?}");
    // What kubectl create's defaults set, argocd's apply drops and the server sets again: not removed.
    let defaulted = strings(&item["nextApply"]["defaultedAgain"]);
    assert!(defaulted.contains(&".spec.progressDeadlineSeconds".to_string()), "{defaulted:?}");
    assert_eq!(removes.len(), 3, "the label, and the variable's name and value: {removes:?}");
    assert!(item["nextApply"]["conflicts"].as_array().unwrap().is_empty(), "{item}");
    assert_eq!(
        cluster.get_json(&ns, "deploy/web")["metadata"]["managedFields"],
        live["metadata"]["managedFields"],
        "a dry run writes nothing"
    );

    // The transfer, then the server's check of argocd's next apply.
    let out = owners(&cluster, &dir, &ns, &["transfer", "-f", &dropped, "--from", "human", "--to", "argocd", "--yes"]);
    let stdout = ok(&out);
    assert!(
        stdout.contains("deployment.apps/web: ")
            && stdout.contains("from kubectl-patch (Update): .metadata.labels.tier"),
        "{stdout}"
    );
    assert!(stdout.contains("removes "), "{stdout}");
    assert!(stdout.contains("deployment.apps/web transferred to argocd (Apply)\n"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("a server dry run of argocd's next apply removes") && stderr.contains(".metadata.labels.tier"),
        "{stderr}"
    );
    assert!(stderr.contains(", as predicted"), "{stderr}");
    let after = cluster.get_json(&ns, "deploy/web");
    let left = names(&after);
    assert!(!left.iter().any(|m| ["kubectl-create", "kubectl-patch", "kubectl-set"].contains(&m.as_str())), "{left:?}");
    for c in &controllers {
        assert!(managers(&after).contains(c), "a controller's entry is kept: {c:?}");
    }
    assert!(entry(&after, "argocd", "Apply")["fieldsV1"].to_string().contains("f:tier"));

    // The same apply now deletes them.
    apply(&dropped);
    let live = cluster.get_json(&ns, "deploy/web");
    assert!(live["metadata"]["labels"].get("tier").is_none(), "{}", live["metadata"]["labels"]);
    let env = live["spec"]["template"]["spec"]["containers"][0]["env"].to_string();
    assert!(!env.contains("\"B\"") && env.contains("\"A\""), "{env}");
}

fn widget(name: &str, ports: &[u16], tags: &[&str]) -> String {
    let ports: Vec<String> = ports.iter().map(|p| format!("{{port: {p}, protocol: TCP}}")).collect();
    format!(
        "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  mode: fast\n  ports: [{}]\n  tags: [{}]\n",
        ports.join(", "),
        tags.join(", ")
    )
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_with_list_maps_and_sets_and_subresource_entries_left_alone() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-transfer-cr");
    let dir = scratch("cr");
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &write_file(&dir, "w.yaml", &widget("w", &[80], &["a"]))]);
    let add = r#"[{"op":"add","path":"/spec/ports/-","value":{"port":81,"protocol":"TCP"}},{"op":"add","path":"/spec/tags/-","value":"b"}]"#;
    cluster.kubectl_ok(&["patch", "-n", &ns, "widget/w", "--type", "json", "-p", add]);
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "widget/w",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        r#"{"status":{"phase":"Ready"}}"#,
    ]);
    let full = write_file(&dir, "full.yaml", &widget("w", &[80, 81], &["a", "b"]));
    let dropped = write_file(&dir, "dropped.yaml", &widget("w", &[80], &["a"]));
    let apply = |file: &str| {
        cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "--field-manager", "argocd", "-f", file])
    };
    apply(&full);
    apply(&dropped);
    let live = cluster.get_json(&ns, "widget/w");
    assert_eq!(live["spec"]["ports"].as_array().unwrap().len(), 2, "the trap: the port survives");
    assert_eq!(live["spec"]["tags"].as_array().unwrap().len(), 2, "the trap: the tag survives");
    let status_entry = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subresource"] == "status")
        .cloned()
        .expect("kubectl-patch's status entry");
    assert_eq!(status_entry["manager"], "kubectl-patch");

    let out = owners(&cluster, &dir, &ns, &["transfer", "widgets/w", "--from", "human", "--to", "argocd", "--yes"]);
    let stdout = ok(&out);
    assert!(stdout.contains("widget.fieldwise.test/w transferred to argocd (Apply)"), "{stdout}");
    let after = cluster.get_json(&ns, "widget/w");
    let list = after["metadata"]["managedFields"].as_array().unwrap();
    assert!(list.contains(&status_entry), "the status entry is untouched: {list:?}");
    assert_eq!(
        managers(&after)
            .into_iter()
            .filter(|(_, _, sub)| sub.is_empty())
            .map(|(m, o, _)| format!("{m} {o}"))
            .collect::<Vec<_>>(),
        ["argocd Apply"]
    );
    let owned = entry(&after, "argocd", "Apply")["fieldsV1"].to_string();
    assert!(owned.contains(r#"k:{\"port\":81,\"protocol\":\"TCP\"}"#) && owned.contains(r#"v:\"b\""#), "{owned}");

    apply(&dropped);
    let live = cluster.get_json(&ns, "widget/w");
    assert_eq!(live["spec"]["ports"], serde_json::json!([{"port": 80, "protocol": "TCP"}]));
    assert_eq!(live["spec"]["tags"], serde_json::json!(["a"]));
    assert_eq!(live["status"]["phase"], "Ready");

    // Named explicitly, a subresource entry moves too.
    let out = owners(
        &cluster,
        &dir,
        &ns,
        &["transfer", "widget/w", "--from", "kubectl-patch/status", "--to", "argocd", "--yes"],
    );
    assert!(ok(&out).contains("from kubectl-patch (Update, /status): .status.phase"), "{}", text(&out.stdout));
    let after = cluster.get_json(&ns, "widget/w");
    assert!(managers(&after).iter().all(|(_, _, sub)| sub != "status"), "{:?}", managers(&after));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_concurrent_writer_is_replanned_and_nothing_is_lost() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-race");
    let dir = scratch("race");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "x", "--from-literal=a=1"]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/x", "-p", r#"{"data":{"c":"3"}}"#]);
    // Between the preview and the write: another manager labels the object, and kubectl patch
    // (a manager being transferred) sets one more field.
    let hook = format!(
        "kubectl -n {ns} label cm x other=1 --field-manager=other-writer && kubectl -n {ns} patch cm x -p '{{\"data\":{{\"d\":\"4\"}}}}'"
    );
    let out = run(plugin(&cluster, "kubectl-owners", &dir, &ns)
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .env("PATH", fieldwise_e2e::path_with_plugins())
        .args(["transfer", "cm/x", "--from", "human", "--to", "argocd", "--yes"]));
    let stdout = ok(&out);
    assert!(!stdout.contains(".data.d"), "the preview came before the concurrent write: {stdout}");
    assert!(stdout.contains("configmap/x transferred to argocd (Apply)"), "{stdout}");
    let live = cluster.get_json(&ns, "cm/x");
    assert_eq!(live["data"]["d"], "4");
    let owned = entry(&live, "argocd", "Apply")["fieldsV1"].to_string();
    for key in ["f:a", "f:c", "f:d"] {
        assert!(owned.contains(key), "{key} moved: {owned}");
    }
    assert!(
        entry(&live, "other-writer", "Update")["fieldsV1"].to_string().contains("f:other"),
        "the other writer's entry is kept"
    );
    let left = names(&live);
    assert!(!left.contains(&"kubectl-patch".to_string()) && !left.contains(&"kubectl-create".to_string()), "{left:?}");
    let history = ok(&run(plugin(&cluster, "kubectl-safe_patch", &dir, &ns).args(["history", "cm/x"])));
    assert_eq!(history.lines().filter(|l| l.contains("owners transfer")).count(), 1, "{history}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_restores_the_managers_and_history_lists_the_transfer() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-undo");
    let dir = scratch("undo");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "y", "--from-literal=a=1", "--from-literal=b=2"]);
    cluster.kubectl_ok(&["label", "-n", &ns, "cm/y", "team=x"]);
    cluster.kubectl_ok(&["annotate", "-n", &ns, "cm/y", "note=hi"]);
    let before = cluster.get_json(&ns, "cm/y");
    ok(&owners(&cluster, &dir, &ns, &["transfer", "cm/y", "--from", "human", "--to", "flux", "--yes"]));
    assert_eq!(names(&cluster.get_json(&ns, "cm/y")), ["flux"]);
    let sp = |args: &[&str]| run(plugin(&cluster, "kubectl-safe_patch", &dir, &ns).args(args));
    let history = ok(&sp(&["history", "cm/y"]));
    assert!(history.contains("owners transfer"), "{history}");
    let out = sp(&["undo", "cm/y", "--yes"]);
    assert!(ok(&out).contains("configmap/y restored to the backup of"), "{}", text(&out.stdout));
    let after = cluster.get_json(&ns, "cm/y");
    assert_eq!(without_times(&after), without_times(&before), "the managers are back");
    assert_eq!(after["data"], before["data"]);
    assert_eq!(after["metadata"]["labels"], before["metadata"]["labels"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn no_rights_or_no_terminal_writes_nothing() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-denied");
    let dir = scratch("denied");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "z", "--from-literal=a=1"]);
    let before = cluster.get_json(&ns, "cm/z");
    let out = owners(
        &cluster,
        &dir,
        &ns,
        &["transfer", "cm/z", "--from", "human", "--to", "argocd", "--yes", "--context", "fieldwise-restricted"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("Forbidden") && stderr.contains("cannot patch resource \"configmaps\""), "{stderr}");
    assert!(!text(&out.stdout).contains("transferred to"), "{}", text(&out.stdout));
    assert_eq!(cluster.get_json(&ns, "cm/z")["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);
    let backups: Vec<PathBuf> = files_below(&dir.join("data"), None);
    assert!(backups.is_empty(), "no backup of a write that never happened: {backups:?}");

    // No terminal and no --yes: the preview, then how to proceed, exit 2, nothing sent.
    let out = owners(&cluster, &dir, &ns, &["transfer", "cm/z", "--from", "human", "--to", "argocd"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("from kubectl-create (Update): .data.a"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("run the same command with --yes"), "{}", text(&out.stderr));
    assert_eq!(cluster.get_json(&ns, "cm/z")["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);

    // Bad input: a clear error, exit 1.
    let out = owners(&cluster, &dir, &ns, &["transfer", "cm/z", "--from", "human,", "--to", "argocd"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--from: invalid manager \"\": empty manager name"), "{}", text(&out.stderr));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_selection_has_one_preview_and_one_summary() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-bulk");
    let dir = scratch("bulk");
    for name in ["m1", "m2", "m3"] {
        cluster.kubectl_ok(&["create", "configmap", "-n", &ns, name, "--from-literal=a=1"]);
        cluster.kubectl_ok(&["label", "-n", &ns, "cm", name, "app=bulk"]);
    }
    let before: Vec<Value> =
        ["m1", "m2", "m3"].iter().map(|name| cluster.get_json(&ns, &format!("cm/{name}"))).collect();
    let out =
        owners(&cluster, &dir, &ns, &["transfer", "cm", "-l", "app=bulk", "--from", "human", "--to", "flux", "--yes"]);
    let stdout = ok(&out);
    let stderr = text(&out.stderr);
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Run ").and_then(|rest| rest.split(';').next()))
        .unwrap_or_else(|| panic!("the transfer is one run: {stderr}"))
        .to_string();
    assert!(stdout.contains("3 objects of 3: 6 fields move to flux (Apply)"), "{stdout}");
    let line_end = format!(" transferred to flux (Apply) in namespace {ns}");
    assert_eq!(stdout.lines().filter(|l| l.ends_with(&line_end)).count(), 3, "{stdout}");
    assert!(text(&out.stderr).contains("3 transferred, 0 failed"), "{}", text(&out.stderr));
    for name in ["m1", "m2", "m3"] {
        assert_eq!(names(&cluster.get_json(&ns, &format!("cm/{name}"))), ["flux"], "{name}");
    }
    let out =
        owners(&cluster, &dir, &ns, &["transfer", "cm", "-l", "app=bulk", "--from", "human", "--to", "flux", "--yes"]);
    ok(&out);
    assert!(text(&out.stderr).contains("Nothing to transfer."), "{}", text(&out.stderr));

    // The objects are chosen as kubectl (and safe-patch) chooses them: a type alone is refused
    // (exit 1, nothing read or written); --field-selector and --all select.
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "other", "--from-literal=b=2"]);
    let other = cluster.get_json(&ns, "cm/other");
    let out = owners(&cluster, &dir, &ns, &["transfer", "cm", "--from", "human", "--to", "flux", "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("a name is required: configmap/NAME, or select objects with -l"),
        "{}",
        text(&out.stderr)
    );
    let out = owners(
        &cluster,
        &dir,
        &ns,
        &["transfer", "cm", "--field-selector", "metadata.name=m2", "--from", "human", "--to", "flux", "--dry-run"],
    );
    let stdout = ok(&out);
    assert!(stdout.contains("configmap/m2: nothing to transfer to flux (Apply)"), "{stdout}");
    assert!(!stdout.contains("configmap/other"), "only m2 is selected: {stdout}");
    assert_eq!(cluster.get_json(&ns, "cm/other"), other, "a dry run writes nothing");
    let out = owners(&cluster, &dir, &ns, &["transfer", "cm", "--all", "--from", "human", "--to", "flux", "--yes"]);
    let stdout = ok(&out);
    assert!(stdout.contains("configmap/other transferred to flux (Apply)"), "{stdout}");
    assert_eq!(names(&cluster.get_json(&ns, "cm/other")), ["flux"]);

    // The run is undone as one: every object's managers are back.
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir, &ns).args(["undo", "--run", &run_id, "--yes"]));
    assert!(text(&out.stderr).contains("3 restored"), "{}", text(&out.stderr));
    ok(&out);
    for (name, before) in ["m1", "m2", "m3"].iter().zip(&before) {
        let after = cluster.get_json(&ns, &format!("cm/{name}"));
        assert_eq!(without_times(&after), without_times(before), "{name}: the managers are back");
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn safe_patch_writes_a_patch_of_managed_fields_and_undo_puts_it_back() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-sp");
    let dir = scratch("sp");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "x", "--from-literal=a=1"]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/x", "-p", r#"{"data":{"c":"3"}}"#]);
    let before = cluster.get_json(&ns, "cm/x");
    assert_eq!(names(&before).len(), 2, "{:?}", managers(&before));
    let sp = |args: &[&str]| run(plugin(&cluster, "kubectl-safe_patch", &dir, &ns).args(args));
    let out = sp(&["cm/x", "--type", "json", "-p", r#"[{"op":"remove","path":"/metadata/managedFields/1"}]"#, "--yes"]);
    assert_eq!(ok(&out), "configmap/x patched\n", "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("-  - manager: "), "the diff shows the entry going: {}", text(&out.stderr));
    let after = cluster.get_json(&ns, "cm/x");
    let mut expected = before["metadata"]["managedFields"].as_array().unwrap().clone();
    expected.remove(1);
    assert_eq!(after["metadata"]["managedFields"], Value::Array(expected));
    ok(&sp(&["undo", "cm/x", "--yes"]));
    assert_eq!(without_times(&cluster.get_json(&ns, "cm/x")), without_times(&before));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn migrate_moves_human_managers_and_before_first_apply_and_scan_and_repair_agree_after() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-migrate");
    let dir = scratch("migrate");
    let la = |args: &[&str]| run(plugin(&cluster, "kubectl-last_applied", &dir, &ns).args(args));
    let full = write_file(&dir, "full.yaml", &configmap("m", &[("a", "1"), ("b", "2")]));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &full]);
    cluster.kubectl_ok(&["patch", "-n", &ns, "cm/m", "-p", r#"{"data":{"c":"3"}}"#]);
    // Without --also, kubectl patch's field stays co-owned; with it, it moves too.
    ok(&la(&["migrate", "cm/m", "--field-manager", "argocd", "--yes"]));
    assert!(names(&cluster.get_json(&ns, "cm/m")).contains(&"kubectl-patch".to_string()));
    let out = la(&["migrate", "cm/m", "--field-manager", "argocd", "--also", "human", "--yes"]);
    assert!(ok(&out).contains("configmap/m migrated to server-side apply (argocd)"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("fields of kubectl-patch move to argocd (Apply)"), "{}", text(&out.stderr));
    assert_eq!(names(&cluster.get_json(&ns, "cm/m")), ["argocd"]);

    // The annotation is left over now: scan says so, and repair removes it; then both are clean.
    let out = la(&["scan", "--kinds", "cm"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("left over from client-side apply: argocd"), "{}", text(&out.stdout));
    let out = la(&["repair", "--from-scan", "--kinds", "cm", "--yes"]);
    assert!(ok(&out).contains("configmap/m repaired"), "{}", text(&out.stderr));
    assert!(cluster.get_json(&ns, "cm/m")["metadata"]
        .get("annotations")
        .and_then(|a| a.get("kubectl.kubernetes.io/last-applied-configuration"))
        .is_none());
    assert_eq!(la(&["scan", "--kinds", "cm"]).status.code(), Some(0));

    // argocd's apply without c now deletes it.
    let dropped = write_file(&dir, "dropped.yaml", &configmap("m", &[("a", "1"), ("b", "2")]));
    cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "--field-manager", "argocd", "-f", &dropped]);
    assert!(cluster.get_json(&ns, "cm/m")["data"].get("c").is_none());

    // Fields set before the first server-side apply (managedFields cleared, then applied) move too.
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "old", "--from-literal=a=1", "--from-literal=b=2"]);
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "cm/old",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"managedFields":[{}]}}"#,
    ]);
    let partial = write_file(&dir, "old.yaml", &configmap("old", &[("a", "1")]));
    cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "--field-manager", "argocd", "-f", &partial]);
    assert!(names(&cluster.get_json(&ns, "cm/old")).contains(&"before-first-apply".to_string()));
    let out = la(&["migrate", "cm/old", "--field-manager", "argocd", "--yes"]);
    assert!(ok(&out).contains("configmap/old migrated to server-side apply (argocd)"), "{}", text(&out.stdout));
    assert_eq!(names(&cluster.get_json(&ns, "cm/old")), ["argocd"]);
    cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "--field-manager", "argocd", "-f", &partial]);
    assert!(cluster.get_json(&ns, "cm/old")["data"].get("b").is_none(), "b, set before the first apply, is deleted");
}

/// Objects of one name in several namespaces: each result line names its namespace, and the
/// `-o json` document gives each its own outcome.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn objects_of_one_name_in_several_namespaces_are_told_apart() {
    let cluster = require_cluster!();
    let namespaces: Vec<String> = (0..3).map(|_| cluster.namespace("fw-transfer-same")).collect();
    let dir = scratch("same");
    let selector = format!("fw-transfer-same={}", std::process::id());
    for ns in &namespaces[..2] {
        cluster.kubectl_ok(&["create", "configmap", "-n", ns, "same", "--from-literal=a=1"]);
        cluster.kubectl_ok(&["label", "-n", ns, "cm", "same", &selector]);
    }
    // The third is flux's already: nothing of a human's to move.
    let (key, value) = selector.split_once('=').unwrap();
    let applied = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  labels:\n    {key}: \"{value}\"\ndata:\n  a: \"1\"\n"
    );
    cluster.kubectl_stdin(
        &["apply", "-n", &namespaces[2], "--server-side", "--field-manager", "flux", "-f", "-"],
        &applied,
    );
    let transfer = |extra: &[&str]| {
        let mut cmd = cluster.plugin("kubectl-owners");
        cmd.env("FIELDWISE_DATA_DIR", dir.join("data"));
        cmd.args(["transfer", "cm", "-l", &selector, "-A", "--from", "human", "--to", "flux"]).args(extra);
        run(&mut cmd)
    };
    let out = transfer(&["--dry-run=client"]);
    let stdout = ok(&out);
    let mut lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("configmap/same ")).collect();
    lines.sort();
    let mut expected: Vec<String> = namespaces[..2]
        .iter()
        .map(|ns| format!("configmap/same transferred to flux (Apply) (dry run) in namespace {ns}"))
        .collect();
    expected.sort();
    assert_eq!(lines, expected, "{stdout}");

    let out = transfer(&["--yes", "-o", "json"]);
    let doc: Value = serde_json::from_str(&ok(&out)).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
    let mut outcomes: Vec<(String, String)> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["object"]["namespace"].as_str().unwrap().to_string(), i["outcome"].as_str().unwrap().to_string()))
        .collect();
    outcomes.sort();
    let mut expected: Vec<(String, String)> = vec![
        (namespaces[0].clone(), "transferred to flux (Apply)".into()),
        (namespaces[1].clone(), "transferred to flux (Apply)".into()),
        (namespaces[2].clone(), "nothing to transfer".into()),
    ];
    expected.sort();
    assert_eq!(outcomes, expected, "{doc}");
}

/// Issue #32.8: the preview of the next apply names every value it changes among the fields
/// it keeps (an image set by hand goes back to the file's), not only "keeps N fields".
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_next_apply_preview_shows_every_value_it_changes() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-transfer-changes");
    let dir = scratch("changes");
    let file = write_file(&dir, "web.yaml", &deployment("web", &[("app", "web")], &[("A", "1")]));
    cluster.kubectl_ok(&["create", "-n", &ns, "-f", &file]);
    cluster.kubectl_ok(&["set", "image", "-n", &ns, "deploy/web", "app=busybox:1.37"]);
    let args = ["transfer", "-f", file.as_str(), "--from", "human", "--to", "argocd", "--dry-run"];
    let image = r#".spec.template.spec.containers[name="app"].image"#;
    let out = owners(&cluster, &dir, &ns, &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        shown.contains(&format!("changes the value of 1 field of them: {image} (busybox:1.37 -> busybox:1.36)")),
        "{shown}"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["-o", "json"]);
    let document = json_of(&owners(&cluster, &dir, &ns, &json_args));
    let changes = document.pointer("/items/0/nextApply/changes").cloned().unwrap_or_default();
    assert_eq!(changes, json!([{"field": image, "live": "busybox:1.37", "applied": "busybox:1.36"}]), "{document}");
}
