//! Issue 30 against the real cluster: `kubectl owners watch` follows a ConfigMap while
//! kubectl label, kubectl patch and two server-side appliers change it, and names each
//! change's manager from the managedFields entry that moved; the appliers flipping a field
//! are a fight (exit 3); a controller against Argo CD's sync is a fight fixed by Argo CD's
//! ignore rule; `--field` shows only its field; a Secret's values are never printed; a
//! dropped connection resumes and a too old version lists again (410 Gone); SIGTERM ends
//! with the summary; `--request-timeout` does not end a quiet watch. The apiserver killed
//! and a black-holed connection: `reliability/watch_faults.rs`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fieldwise_e2e::connect_proxy::ConnectProxy;
use fieldwise_e2e::{install_widget_crd, require_cluster, Cluster};
use serde_json::Value;

/// A watch running as a child process, started once it said it is watching.
struct Watch {
    child: Child,
    /// Its stdout's lines as they come, until it ends.
    stdout: mpsc::Receiver<String>,
    reader: std::thread::JoinHandle<()>,
    stderr: mpsc::Receiver<String>,
}

/// Reads `from`'s lines into a channel on a thread of its own.
fn lines(from: impl std::io::Read + Send + 'static) -> (mpsc::Receiver<String>, std::thread::JoinHandle<()>) {
    let (send, receive) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    (receive, reader)
}

fn start_watch(cluster: &Cluster, ns: &str, args: &[&str]) -> Watch {
    start_watch_with(cluster, &cluster.kubeconfig, ns, args)
}

/// [`start_watch`] with another kubeconfig.
fn start_watch_with(cluster: &Cluster, kubeconfig: &std::path::Path, ns: &str, args: &[&str]) -> Watch {
    let mut child = cluster
        .plugin("kubectl-owners")
        .env("KUBECONFIG", kubeconfig)
        .args(["-n", ns, "watch"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kubectl-owners watch");
    let (stderr, _) = lines(child.stderr.take().expect("stderr"));
    let (stdout, reader) = lines(child.stdout.take().expect("stdout"));
    loop {
        let line = stderr.recv_timeout(Duration::from_secs(30)).expect("the watch says it started");
        if line.starts_with("Watching 1 object(s)") {
            break;
        }
    }
    Watch { child, stdout, reader, stderr }
}

/// The watch's exit code and its JSON Lines records.
fn finish(watch: Watch, records: Vec<Value>) -> (Option<i32>, Vec<Value>) {
    let (code, records, _) = finish_with_stderr(watch, records);
    (code, records)
}

/// [`finish`], and the lines of stderr after the one that said the watch started.
fn finish_with_stderr(mut watch: Watch, mut records: Vec<Value>) -> (Option<i32>, Vec<Value>, Vec<String>) {
    let status = watch.child.wait().expect("the watch ends");
    watch.reader.join().expect("stdout read");
    let rest: Vec<String> = watch.stderr.try_iter().collect();
    for l in watch.stdout.try_iter() {
        records.push(serde_json::from_str(&l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}; stderr {rest:?}")));
    }
    (status.code(), records, rest)
}

/// Ends the watch with SIGINT once the lines it printed satisfy `seen` (a minute at most),
/// then reads the rest: what a fixed `--for` raced on a busy machine, where the kubectl
/// calls of a test can take longer than the duration (the watch ended before the last
/// change). Its exit code, stdout's lines and stderr's lines.
fn stop_when(mut watch: Watch, seen: impl Fn(&[String]) -> bool) -> (Option<i32>, Vec<String>, Vec<String>) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut printed = Vec::new();
    while !seen(&printed) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match watch.stdout.recv_timeout(left) {
            Ok(line) => printed.push(line),
            Err(_) => panic!("the watch never printed what was awaited; it printed {printed:?}"),
        }
    }
    let pid = watch.child.id().to_string();
    let killed = std::process::Command::new("kill").args(["-INT", &pid]).status().expect("run kill");
    assert!(killed.success(), "SIGINT to the watch");
    let status = watch.child.wait().expect("the watch ends");
    watch.reader.join().expect("stdout read");
    printed.extend(watch.stdout.try_iter());
    (status.code(), printed, watch.stderr.try_iter().collect())
}

/// [`stop_when_json`] once `changes` change records and `fights` fight records were printed.
fn stop_after_json(watch: Watch, changes: usize, fights: usize) -> (Option<i32>, Vec<Value>, Vec<String>) {
    let count =
        |lines: &[String], kind: &str| lines.iter().filter(|l| l.contains(&format!(r#""type":"{kind}""#))).count();
    stop_when_json(watch, |lines| count(lines, "change") >= changes && count(lines, "fight") >= fights)
}

/// [`stop_when`] for `-o json`: the exit code, the records and stderr's lines.
fn stop_when_json(watch: Watch, seen: impl Fn(&[String]) -> bool) -> (Option<i32>, Vec<Value>, Vec<String>) {
    let (code, lines, stderr) = stop_when(watch, seen);
    let records = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?} is not JSON: {e}; stderr {stderr:?}")))
        .collect();
    (code, records, stderr)
}

/// A namespace of its own, with ConfigMap `x` (`data.x: "0"`, created by kubectl-create).
fn configmap_x(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=x=0"]);
    ns
}

/// `kubectl label cm x team=a`: manager kubectl-label, operation Update.
fn label(cluster: &Cluster, ns: &str) {
    cluster.kubectl_ok(&["label", "cm", "x", "-n", ns, "team=a"]);
}

fn of_type<'r>(records: &'r [Value], kind: &str) -> Vec<&'r Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

/// `manifest` applied server-side by `manager`, taking its fields from whoever owned them.
fn apply_as(cluster: &Cluster, ns: &str, manager: &str, manifest: &str) {
    cluster.kubectl_stdin(
        &["apply", "-n", ns, "--server-side", "--field-manager", manager, "--force-conflicts", "-f", "-"],
        manifest,
    );
}

/// ConfigMap `x`'s `data.x` set to `value` by `manager`'s server-side apply.
fn apply(cluster: &Cluster, ns: &str, manager: &str, value: &str) {
    let manifest = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: {value}\n");
    apply_as(cluster, ns, manager, &manifest);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn each_change_names_its_manager_and_two_appliers_flipping_a_field_are_a_fight() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch");
    // Ended by the fight (the last apply's), not by a duration the kubectl calls could outlast.
    let watch = start_watch(&cluster, &ns, &["cm/x", "--until-fight", "--for", "120s", "-o", "json"]);
    label(&cluster, &ns);
    cluster.kubectl_ok(&["patch", "cm", "x", "-n", &ns, "--type", "merge", "-p", r#"{"data":{"y":"1"}}"#]);
    for (manager, value) in [("a", "a"), ("b", "b"), ("a", "a"), ("b", "b")] {
        apply(&cluster, &ns, manager, value);
    }
    let (code, records) = finish(watch, Vec::new());

    let changes: Vec<(String, Value, Value, String, String, String)> = of_type(&records, "change")
        .into_iter()
        .map(|c| {
            assert_eq!(
                (&c["kind"], &c["namespace"], &c["name"]),
                (&"ConfigMap".into(), &ns.as_str().into(), &"x".into())
            );
            let s = |k: &str| c[k].as_str().unwrap_or("<null>").to_string();
            (s("field"), c["before"].clone(), c["after"].clone(), s("manager"), s("operation"), s("subresource"))
        })
        .collect();
    let change = |field: &str, before: Value, after: &str, manager: &str, operation: &str| {
        (field.to_string(), before, Value::from(after), manager.to_string(), operation.to_string(), String::new())
    };
    assert_eq!(
        changes,
        [
            change(".metadata.labels.team", Value::Null, "a", "kubectl-label", "Update"),
            change(".data.y", Value::Null, "1", "kubectl-patch", "Update"),
            change(".data.x", "0".into(), "a", "a", "Apply"),
            change(".data.x", "a".into(), "b", "b", "Apply"),
            change(".data.x", "b".into(), "a", "a", "Apply"),
            change(".data.x", "a".into(), "b", "b", "Apply"),
        ]
    );

    let fights = of_type(&records, "fight");
    assert_eq!(fights.len(), 1, "{records:?}");
    let fight = fights[0];
    assert_eq!(fight["field"], ".data.x");
    let managers: Vec<(&str, &str)> = fight["managers"]
        .as_array()
        .expect("managers")
        .iter()
        .map(|m| (m["manager"].as_str().unwrap(), m["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(managers, [("a", "Apply"), ("b", "Apply")]);
    assert_eq!((&fight["flips"], &fight["values"]), (&Value::from(3), &serde_json::json!(["a", "b"])));
    assert!(fight["fix"].as_str().unwrap().starts_with("appliers a, b each apply .data.x"), "{fight}");

    let summary = records.last().expect("a summary");
    assert_eq!(summary["type"], "summary");
    assert_eq!((&summary["changes"], &summary["fights"], &summary["ended"]), (&6.into(), &1.into(), &"fight".into()));
    assert_eq!(code, Some(3), "a fight was seen: exit 3");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn until_fight_ends_at_the_first_fight_with_exit_3() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-until");
    let watch = start_watch(&cluster, &ns, &["cm/x", "--until-fight", "--for", "60s", "-o", "json"]);
    let started = std::time::Instant::now();
    for (manager, value) in [("a", "a"), ("b", "b"), ("a", "a"), ("b", "b")] {
        apply(&cluster, &ns, manager, value);
    }
    let (code, records) = finish(watch, Vec::new());
    assert!(started.elapsed() < Duration::from_secs(30), "it ended at the fight, not after --for");
    let types: Vec<&str> = records.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["change", "change", "change", "change", "fight", "summary"]);
    assert_eq!(records[5]["ended"], "fight");
    assert_eq!(code, Some(3));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn field_shows_only_changes_of_that_field() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-field");
    let watch = start_watch(&cluster, &ns, &["cm/x", "--field", "data.x", "-o", "json"]);
    label(&cluster, &ns);
    cluster.kubectl_ok(&["patch", "cm", "x", "-n", &ns, "--type", "merge", "-p", r#"{"data":{"x":"1","y":"2"}}"#]);
    // The label's event came first: once the patch's change is printed, the label's was skipped.
    let (code, records, _) = stop_after_json(watch, 1, 0);
    let changes = of_type(&records, "change");
    assert_eq!(changes.len(), 1, "{records:?}");
    assert_eq!(
        (&changes[0]["field"], &changes[0]["after"], &changes[0]["manager"]),
        (&".data.x".into(), &"1".into(), &"kubectl-patch".into())
    );
    let summary = records.last().expect("a summary");
    assert_eq!((&summary["type"], &summary["changes"], &summary["fights"]), (&"summary".into(), &1.into(), &0.into()));
    assert_eq!(code, Some(130), "ended by SIGINT");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_watch_that_saw_no_fight_ends_after_its_duration_with_exit_0() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-quiet");
    let watch = start_watch(&cluster, &ns, &["cm/x", "--for", "2s", "-o", "json"]);
    let (code, records) = finish(watch, Vec::new());
    let summary = records.last().expect("a summary");
    assert_eq!(
        (&summary["type"], &summary["changes"], &summary["fights"], &summary["ended"]),
        (&"summary".into(), &0.into(), &0.into(), &"duration".into()),
        "{records:?}"
    );
    assert_eq!(code, Some(0));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn one_manager_rewriting_a_field_is_churn_not_a_fight() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-churn");
    let watch = start_watch(&cluster, &ns, &["cm/x", "-o", "json"]);
    for value in ["1", "2", "3"] {
        let patch = format!(r#"{{"data":{{"x":"{value}"}}}}"#);
        cluster.kubectl_ok(&["patch", "cm", "x", "-n", &ns, "--type", "merge", "-p", &patch]);
    }
    let (code, records, _) = stop_when_json(watch, |lines| lines.iter().any(|l| l.contains(r#""type":"churn""#)));
    assert_eq!(of_type(&records, "change").len(), 3, "{records:?}");
    assert!(of_type(&records, "fight").is_empty(), "{records:?}");
    let churn = of_type(&records, "churn");
    assert_eq!(churn.len(), 1, "{records:?}");
    assert_eq!(
        (&churn[0]["field"], &churn[0]["manager"]["manager"], &churn[0]["changes"]),
        (&".data.x".into(), &"kubectl-patch".into(), &3.into())
    );
    assert_eq!(records.last().map(|s| &s["fights"]), Some(&0.into()), "churn is not a fight");
    assert_eq!(code, Some(130), "ended by SIGINT, not by a fight (3)");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn sigint_prints_the_summary_and_exits_130() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-sigint");
    let watch = start_watch(&cluster, &ns, &["cm/x", "-o", "json"]);
    label(&cluster, &ns);
    let first = watch.stdout.recv_timeout(Duration::from_secs(30)).expect("the label's change is printed");
    let first: Value = serde_json::from_str(&first).expect("JSON");
    let pid = watch.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().expect("kill").success());
    let (code, records) = finish(watch, vec![first]);
    let types: Vec<&str> = records.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["change", "summary"], "{records:?}");
    assert_eq!((&records[1]["changes"], &records[1]["ended"]), (&1.into(), &"signal".into()));
    assert_eq!(code, Some(130));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn sigterm_says_the_watch_stopped_and_prints_the_summary_with_exit_143() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-sigterm");
    let watch = start_watch(&cluster, &ns, &["cm/x", "-o", "json"]);
    label(&cluster, &ns);
    let first = watch.stdout.recv_timeout(Duration::from_secs(30)).expect("the label's change is printed");
    let pid = watch.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let (code, records, stderr) = finish_with_stderr(watch, vec![serde_json::from_str(&first).expect("JSON")]);
    let types: Vec<&str> = records.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["change", "summary"], "{records:?}");
    assert_eq!((&records[1]["changes"], &records[1]["ended"]), (&1.into(), &"signal".into()));
    assert!(stderr.iter().any(|l| l.starts_with("SIGTERM: stopping, the summary follows")), "{stderr:?}");
    assert!(!stderr.iter().any(|l| l.contains("nothing was written")), "a watch writes nothing: {stderr:?}");
    assert_eq!(code, Some(143));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn sigterm_before_the_watch_could_connect_still_ends_with_the_summary() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-early-term");
    // A proxy that answers nothing: the watch is still connecting when the signal comes.
    let proxy = ConnectProxy::start();
    proxy.stall();
    let kubeconfig = through_proxy(&cluster, &proxy, "early-term");
    let child = cluster
        .plugin("kubectl-owners")
        .env("KUBECONFIG", &kubeconfig)
        .env("FIELDWISE_CACHE_DIR", std::env::temp_dir().join(format!("fw-watch-early-{}", std::process::id())))
        .args(["-n", &ns, "watch", "cm/x", "-o", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kubectl-owners watch");
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let out = child.wait_with_output().expect("the watch ends");
    proxy.resume();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{stdout:?}: {e}; {stderr}"));
    assert_eq!((&summary["type"], &summary["ended"]), (&"summary".into(), &"signal".into()), "{stderr}");
    assert!(stderr.contains("SIGTERM: stopping, the summary follows"), "{stderr}");
    assert!(!stderr.contains("nothing was written"), "a watch writes nothing: {stderr}");
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    let _ = std::fs::remove_file(kubeconfig);
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn request_timeout_bounds_each_request_not_a_quiet_watch() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-timeout");
    let started = std::time::Instant::now();
    let watch = start_watch(&cluster, &ns, &["cm/x", "--request-timeout", "3s", "--for", "12s", "-o", "json"]);
    let (code, records, stderr) = finish_with_stderr(watch, Vec::new());
    let lasted = started.elapsed();
    let summary = records.last().expect("a summary");
    assert_eq!(
        (&summary["type"], &summary["ended"], &summary["outages"]),
        (&"summary".into(), &"duration".into(), &0.into()),
        "a quiet watch is not a slow answer: {records:?} {stderr:?}"
    );
    assert!(lasted >= Duration::from_secs(12) && lasted < Duration::from_secs(40), "lasted {lasted:?}");
    assert!(!stderr.iter().any(|l| l.contains("lost the connection")), "{stderr:?}");
    assert_eq!(code, Some(0), "{stderr:?}");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

/// The cluster's kubeconfig with every cluster reached through `proxy`.
fn through_proxy(cluster: &Cluster, proxy: &ConnectProxy, name: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig");
    let mut config: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig YAML");
    for entry in config["clusters"].as_sequence_mut().expect("clusters") {
        entry["cluster"]["proxy-url"] = proxy.url.clone().into();
    }
    let path = std::env::temp_dir().join(format!("fw-watch-{name}-{}.kubeconfig", std::process::id()));
    std::fs::write(&path, serde_yaml::to_string(&config).expect("YAML")).expect("write kubeconfig");
    path
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_dropped_watch_connection_is_resumed_losing_and_repeating_no_change() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-drop");
    let proxy = ConnectProxy::start();
    let kubeconfig = through_proxy(&cluster, &proxy, "drop");
    let watch = start_watch_with(&cluster, &kubeconfig, &ns, &["cm/x", "-o", "json"]);
    label(&cluster, &ns);
    let first = watch.stdout.recv_timeout(Duration::from_secs(30)).expect("the label's change is printed");
    let tunnels = proxy.tunnels();
    assert!(proxy.drop_connections() > 0, "the watch's connection goes through the proxy");
    // Changed while the watch is cut off, then after: both come, once each, in order.
    for value in ["1", "2"] {
        let patch = format!(r#"{{"data":{{"x":"{value}"}}}}"#);
        cluster.kubectl_ok(&["patch", "cm", "x", "-n", &ns, "--type", "merge", "-p", &patch]);
    }
    let (code, mut records, stderr) = stop_after_json(watch, 2, 0);
    records.insert(0, serde_json::from_str(&first).expect("JSON"));
    let changes: Vec<(&str, &str)> = of_type(&records, "change")
        .into_iter()
        .map(|c| (c["field"].as_str().unwrap(), c["after"].as_str().unwrap()))
        .collect();
    assert_eq!(changes, [(".metadata.labels.team", "a"), (".data.x", "1"), (".data.x", "2")], "{stderr:?}");
    // Resumed (a clean end) or reconnected (a broken one), from the last version either way.
    assert!(stderr.iter().any(|l| l.contains("resumed from resourceVersion")), "{stderr:?}");
    assert!(proxy.tunnels() > tunnels, "it reconnected through the proxy");
    assert_eq!(code, Some(130), "ended by SIGINT");
    let _ = std::fs::remove_file(kubeconfig);
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_watch_from_a_version_the_server_no_longer_has_lists_again() {
    use fieldwise_kube::api::discovery::ResourceCatalog;
    use fieldwise_kube::api::listing::Selectors;
    use fieldwise_kube::api::watch::{watch_from, Event, Query};
    use futures::StreamExt;

    let cluster = require_cluster!();
    // Widgets, not ConfigMaps: the apiserver serves a watch from its watch cache, which answers
    // 410 Gone for a version older than the oldest it can replay: the list it started from, or
    // once its buffer wrapped, its oldest event. The ConfigMaps cache starts with the apiserver,
    // on a young cluster at a version near 1, so whether version 1 is gone depended on how many
    // writes came before; a custom resource's cache starts when its CRD is established, after
    // the hundreds of writes of the apiserver's own start, so version 1 is always gone there.
    install_widget_crd(&cluster);
    let ns = cluster.namespace("owners-watch-gone");
    let widget = format!(
        "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata: {{name: x, namespace: {ns}}}\nspec:\n  replicas: 1\n"
    );
    cluster.kubectl_stdin(&["create", "-f", "-"], &widget);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let first = runtime.block_on(async {
        let conn = fieldwise_kube::conn::client::connect(&cluster.flags(&ns)).await.expect("connect");
        let catalog = ResourceCatalog::fetch(&conn).await.expect("discovery");
        let query = Query {
            resource: catalog.resolve("widgets").expect("widgets").clone(),
            namespace: Some(ns.clone()),
            selectors: Selectors { label: None, field: Some("metadata.name=x".into()) },
            object: Some("x".into()),
        };
        let mut events = std::pin::pin!(watch_from(&conn, query, "1".into()));
        events.next().await.expect("an event").expect("not an error")
    });
    let Event::Relisted(objects) = first else { panic!("listed again, got {first:?}") };
    let names: Vec<&str> = objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["x"]);
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

/// The watch's exit code and every line it printed, on stdout and on stderr.
fn finish_lines(mut watch: Watch) -> (Option<i32>, Vec<String>, Vec<String>) {
    let status = watch.child.wait().expect("the watch ends");
    watch.reader.join().expect("stdout read");
    (status.code(), watch.stdout.try_iter().collect(), watch.stderr.try_iter().collect())
}

/// Secret `db`'s `data.pw` set to `value` by `manager`'s server-side apply.
fn apply_secret(cluster: &Cluster, ns: &str, manager: &str, value: &str) {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(value);
    let manifest = format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  pw: {encoded}\n");
    apply_as(cluster, ns, manager, &manifest);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_secrets_values_are_never_printed_by_the_watch_in_text_or_json() {
    use base64::Engine;
    let cluster = require_cluster!();
    let ns = cluster.namespace("owners-watch-secret");
    cluster.kubectl_ok(&["create", "secret", "generic", "db", "-n", &ns, "--from-literal=pw=hunter2-first"]);
    let values = ["hunter2-first", "s3cret-a", "s3cret-b"];
    let mut forbidden: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    forbidden.extend(values.iter().map(|v| base64::engine::general_purpose::STANDARD.encode(v)));
    for json in [true, false] {
        // Ended by the fight, not by a duration the kubectl calls could outlast.
        let mut args = vec!["secret/db", "--until-fight", "--for", "120s"];
        if json {
            args.extend(["-o", "json"]);
        }
        let watch = start_watch(&cluster, &ns, &args);
        // Two appliers flipping the password: each change, and the fight's values, carry it.
        for (manager, value) in [("a", "s3cret-a"), ("b", "s3cret-b"), ("a", "s3cret-a"), ("b", "s3cret-b")] {
            apply_secret(&cluster, &ns, manager, value);
        }
        let (code, stdout, stderr) = finish_lines(watch);
        let printed = format!("{}\n{}", stdout.join("\n"), stderr.join("\n"));
        for secret in &forbidden {
            assert!(!printed.contains(secret.as_str()), "{secret:?} was printed (json: {json}):\n{printed}");
        }
        assert_eq!(code, Some(3), "the appliers fought (json: {json}):\n{printed}");
        if json {
            let records: Vec<Value> = stdout.iter().map(|l| serde_json::from_str(l).expect("JSON")).collect();
            let changes: Vec<(&str, &str)> = of_type(&records, "change")
                .into_iter()
                .map(|c| (c["field"].as_str().unwrap(), c["after"].as_str().unwrap()))
                .collect();
            assert_eq!(changes, [(".data.pw", "*** (8 bytes)"); 4], "{printed}");
            let fight = of_type(&records, "fight");
            assert_eq!(fight.len(), 1, "{printed}");
            assert_eq!(fight[0]["values"], serde_json::json!(["*** (8 bytes)", "*** (8 bytes)"]));
        } else {
            let changes: Vec<&String> =
                stdout.iter().filter(|l| l.contains(".data.pw") && l.contains(" -> ")).collect();
            assert_eq!(changes.len(), 4, "{printed}");
            assert!(changes.iter().all(|l| l.contains("-> '*** (8 bytes)'")), "the redaction marker: {printed}");
            let fight: Vec<&String> = stdout.iter().filter(|l| l.starts_with("FIGHT")).collect();
            assert_eq!(fight.len(), 1, "{printed}");
            assert!(fight[0].contains("(values '*** (8 bytes)', '*** (8 bytes)')"), "{printed}");
        }
    }
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_controller_rewriting_what_argo_cd_applies_is_a_fight_fixed_by_argo_cds_ignore_rule() {
    let cluster = require_cluster!();
    let ns = configmap_x(&cluster, "owners-watch-ignore");
    let watch = start_watch(&cluster, &ns, &["cm/x", "--until-fight", "--for", "120s", "-o", "json"]);
    // Argo CD's server-side sync against a controller patching the field back (an Update).
    for (manager, value) in
        [("argocd-controller", "a"), ("ca-injector", "b"), ("argocd-controller", "a"), ("ca-injector", "b")]
    {
        if manager == "argocd-controller" {
            apply(&cluster, &ns, manager, value);
        } else {
            let patch = format!(r#"{{"data":{{"x":"{value}"}}}}"#);
            cluster.kubectl_ok(&[
                "patch",
                "cm",
                "x",
                "-n",
                &ns,
                "--type",
                "merge",
                "--field-manager",
                manager,
                "-p",
                &patch,
            ]);
        }
    }
    let (code, records) = finish(watch, Vec::new());
    let fights = of_type(&records, "fight");
    assert_eq!(fights.len(), 1, "{records:?}");
    let snippet = serde_json::json!({"ignoreDifferences": [{"group": "", "kind": "ConfigMap", "name": "x",
        "namespace": ns, "jqPathExpressions": [".data.x"], "managedFieldsManagers": ["ca-injector"]}]});
    assert_eq!(fights[0]["ignore"], serde_json::json!({"tool": "argocd", "snippet": snippet}));
    let fix = fights[0]["fix"].as_str().expect("fix");
    assert!(
        fix.starts_with(
            "ca-injector (a controller or webhook) rewrites .data.x after every apply by argocd-controller"
        ) && fix.contains("add to the Argo CD Application's spec:\nignoreDifferences:\n")
            && fix.ends_with("managedFieldsManagers:\n  - ca-injector"),
        "{fix}"
    );
    assert_eq!(code, Some(3));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

/// A Deployment `web` applied server-side by `manager` with `replicas`.
fn apply_replicas(cluster: &Cluster, ns: &str, manager: &str, replicas: u32) {
    let manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: app\n        image: busybox:1.36\n"
    );
    apply_as(cluster, ns, manager, &manifest);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn two_appliers_flipping_replicas_are_a_fight_naming_both() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("owners-watch-replicas");
    apply_replicas(&cluster, &ns, "ci", 1);
    // Only replicas: the controller manager's status writes would come between the applies.
    let args = ["deploy/web", "--field", "spec.replicas", "--until-fight", "--for", "120s", "-o", "json"];
    let watch = start_watch(&cluster, &ns, &args);
    for (manager, replicas) in [("gitops", 2), ("ci", 1), ("gitops", 2), ("ci", 1)] {
        apply_replicas(&cluster, &ns, manager, replicas);
    }
    let (code, records) = finish(watch, Vec::new());
    let changes: Vec<(&str, &Value, &str)> = of_type(&records, "change")
        .into_iter()
        .map(|c| (c["field"].as_str().unwrap(), &c["after"], c["manager"].as_str().unwrap()))
        .collect();
    let (one, two) = (Value::from(1), Value::from(2));
    assert_eq!(
        changes,
        [
            (".spec.replicas", &two, "gitops"),
            (".spec.replicas", &one, "ci"),
            (".spec.replicas", &two, "gitops"),
            (".spec.replicas", &one, "ci")
        ],
        "{records:?}"
    );
    let fights = of_type(&records, "fight");
    assert_eq!(fights.len(), 1, "{records:?}");
    assert_eq!(fights[0]["field"], ".spec.replicas");
    let managers: Vec<(&str, &str)> = fights[0]["managers"]
        .as_array()
        .expect("managers")
        .iter()
        .map(|m| (m["manager"].as_str().unwrap(), m["operation"].as_str().unwrap()))
        .collect();
    assert_eq!(managers, [("gitops", "Apply"), ("ci", "Apply")]);
    assert_eq!((&fights[0]["flips"], &fights[0]["values"]), (&Value::from(3), &serde_json::json!([2, 1])));
    assert!(fights[0]["fix"].as_str().unwrap().contains(".spec.replicas"), "{}", fights[0]);
    assert_eq!(code, Some(3));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}
