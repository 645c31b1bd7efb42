//! `kubectl owners` against the real cluster: field-by-field attribution after
//! real kubectl writes, conflict prediction checked against the apiserver on
//! generated scenarios, the ownerReferences tree, offline use, redaction and
//! one-line errors.

#[path = "owners/scenarios.rs"]
mod scenarios;

#[path = "owners/cr_scenarios.rs"]
mod cr_scenarios;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use fieldwise_core::schema::Gvk;
use fieldwise_e2e::{
    busybox_in, eventually, fixture, install_widget_crd, namespace_mismatch, require_cluster, run, text, Cluster,
};
use fieldwise_kube::api::openapi::{Origin, Schemas};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client;
use fieldwise_kube::local::cache::ServerCache;
use fieldwise_kube::write;
use serde_json::Value;

fn owners(cluster: &Cluster) -> Command {
    cluster.plugin("kubectl-owners")
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "exit {:?}: {}{}", out.status.code(), text(&out.stderr), text(&out.stdout));
    text(&out.stdout)
}

fn json_of(out: Output) -> Value {
    serde_json::from_str(&ok(out)).expect("JSON output")
}

/// Asserts a failed command printed exactly one clear line and no panic.
fn assert_one_line_error(out: &Output, expected: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "exit code; stderr: {stderr}");
    assert!(stderr.contains(expected), "expected {expected:?} in stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line expected: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The managers (`name operation[/subresource]`) owning `path` in an owners -o json item.
fn owners_of(item: &Value, path: &str) -> Vec<String> {
    let fields = item["fields"].as_array().expect("fields");
    let field = fields.iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("no field {path} in {fields:#?}"));
    let mut names: Vec<String> = field["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let sub = o["subresource"].as_str().unwrap_or_default();
            let sub = if sub.is_empty() { String::new() } else { format!("/{sub}") };
            format!("{} {}{sub}", o["manager"].as_str().unwrap(), o["operation"].as_str().unwrap())
        })
        .collect();
    names.sort();
    names
}

fn apply_busybox(cluster: &Cluster, ns: &str) {
    cluster.kubectl_ok(&["apply", "-n", ns, "-f", fixture("busybox-demo.yaml").to_str().unwrap()]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn attributes_every_field_to_the_manager_that_wrote_it() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners");
    apply_busybox(&cluster, &ns);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/busybox-demo", "--replicas=3"]);
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "deploy/busybox-demo",
        "-p",
        r#"{"metadata":{"labels":{"tier":"demo"}},"spec":{"template":{"spec":{"containers":[{"name":"busybox","image":"busybox:1.36"}]}}}}"#,
    ]);
    // A server-side apply by another manager, sent as is: `kubectl apply --server-side` would
    // also move kubectl-client-side-apply's fields to team-b (kubectl's CSA upgrade).
    let team_b = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "busybox-demo", "annotations": {"team": "b"}},
        "spec": {"template": {"spec": {"containers": [{"name": "busybox", "env": [{"name": "MODE", "value": "demo"}]}]}}}});
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let conn = client::connect(&cluster.flags(&ns)).await.expect("connect");
        let resource = scenarios::deployments(&conn).await;
        let target = ObjectRef { resource, namespace: Some(ns.clone()), name: "busybox-demo".into() };
        write::patch(&conn, &target, &scenarios::apply(&team_b, "team-b")).await.expect("apply by team-b");
    });
    let report = json_of(run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "-o", "json"])));
    assert_eq!(report["kind"], "OwnersReport");
    let item = &report["items"][0];
    assert_eq!(item["object"]["name"], "busybox-demo");
    let c = r#".spec.template.spec.containers[name="busybox"]"#;
    let expected: &[(&str, &[&str])] = &[
        (".spec.replicas", &["kubectl Update/scale"]),
        (".metadata.labels.app", &["kubectl-client-side-apply Update"]),
        (".metadata.labels.tier", &["kubectl-patch Update"]),
        (".metadata.annotations.team", &["team-b Apply"]),
        (".spec.selector", &["kubectl-client-side-apply Update"]),
        (&format!("{c}.image"), &["kubectl-patch Update"]),
        (&format!("{c}.args"), &["kubectl-client-side-apply Update"]),
        (&format!("{c}.env[name=\"MODE\"].value"), &["team-b Apply"]),
        (&format!("{c}.name"), &["kubectl-client-side-apply Update", "team-b Apply"]),
    ];
    for (path, managers) in expected {
        assert_eq!(owners_of(item, path), *managers, "{path}");
    }
    let value =
        |path: &str| item["fields"].as_array().unwrap().iter().find(|f| f["path"] == path).map(|f| f["value"].clone());
    assert_eq!(value(".spec.replicas"), Some(Value::from(3)));
    assert_eq!(value(&format!("{c}.image")), Some(Value::from("busybox:1.36")));
    assert!(
        item["fields"].as_array().unwrap().iter().all(|f| !f["path"].as_str().unwrap().starts_with(".status")),
        "status hidden by default"
    );
    let kinds: Vec<(String, String)> = item["managers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["manager"].as_str().unwrap().to_string(), m["kind"].as_str().unwrap().to_string()))
        .collect();
    // One classification: kubectl scale by hand is human, as in `owners plan`; client-side apply an applier.
    assert!(kinds.contains(&("team-b".into(), "applier".into())), "{kinds:?}");
    assert!(kinds.contains(&("kubectl-patch".into(), "human".into())), "{kinds:?}");
    assert!(kinds.contains(&("kubectl".into(), "human".into())), "{kinds:?}");
    assert!(kinds.contains(&("kubectl-client-side-apply".into(), "applier".into())), "{kinds:?}");

    // --field, in every spelling, agrees.
    for spelling in ["spec.template.spec.containers[name=busybox].image", "{.spec.template.spec.containers[0].image}"] {
        let answer =
            json_of(run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--field", spelling, "-o", "json"])));
        let field = &answer["items"][0]["field"];
        assert_eq!(field["path"], format!("{c}.image"));
        assert_eq!(field["relation"], "exact");
        assert_eq!(field["value"], "busybox:1.36");
        let managers: Vec<&str> =
            field["owners"].as_array().unwrap().iter().map(|o| o["manager"].as_str().unwrap()).collect();
        assert_eq!(managers, ["kubectl-patch"], "{spelling}");
    }
    let table = ok(run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--field", "spec.replicas"])));
    assert!(table.contains(".spec.replicas: 3") && table.contains("kubectl ") && table.contains("scale"), "{table}");

    // The annotated view marks lines, and --manager gives an applicable subtree.
    let view = ok(run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--time", "none"])));
    assert!(view.lines().any(|l| l.contains("tier: demo") && l.ends_with("# kubectl-patch Update")), "{view}");
    assert!(view.lines().any(|l| l.contains("replicas: 3") && l.ends_with("# kubectl Update/scale")), "{view}");
    assert!(!view.contains("\u{1b}["), "no color when not a terminal");
    let mine = ok(run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--manager", "team-b"])));
    let subtree: Value = serde_json::to_value(serde_yaml::from_str::<serde_yaml::Value>(&mine).unwrap()).unwrap();
    assert_eq!(subtree["metadata"]["annotations"], serde_json::json!({"team": "b"}));
    assert_eq!(
        subtree["spec"]["template"]["spec"]["containers"],
        serde_json::json!([{"name": "busybox", "env": [{"name": "MODE", "value": "demo"}]}])
    );
    assert!(subtree["spec"].get("replicas").is_none());
    cluster.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=team-b", "-n", &ns, "-f", "-", "--dry-run=server"],
        &mine,
    );

    // Many objects: by label and with -A.
    let summary = ok(run(owners(&cluster).args(["deploy", "-l", "app=busybox", "-A", "--summary"])));
    assert!(summary.contains(&"deployment.apps/busybox-demo".to_string()) && summary.contains("FIELDS"), "{summary}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn predicted_conflicts_equal_the_apiservers_409_causes() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-conflicts");
    let started = Instant::now();
    let total: u64 = std::env::var("FIELDWISE_SCENARIOS").ok().and_then(|n| n.parse().ok()).unwrap_or(240);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcomes = runtime.block_on(async {
        let conn = client::connect(&cluster.flags(&ns)).await.expect("connect");
        let deployments = scenarios::deployments(&conn).await;
        let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(12));
        let mut tasks = tokio::task::JoinSet::new();
        for seed in 0..total {
            let (conn, deployments, ns, limit) = (conn.clone(), deployments.clone(), ns.clone(), limit.clone());
            tasks.spawn(async move {
                let _permit = limit.acquire().await.unwrap();
                scenarios::run(&conn, &deployments, &ns, seed).await
            });
        }
        let mut outcomes = Vec::new();
        while let Some(done) = tasks.join_next().await {
            outcomes.push(done.expect("scenario task"));
        }
        outcomes
    });
    assert_all_agree("conflict prediction", &outcomes, started);
}

/// Asserts every scenario's prediction equals the apiserver's answer, on at least 200
/// scenarios with a mix of 409s and successes, within two minutes; prints the figure.
fn assert_all_agree(what: &str, outcomes: &[scenarios::Outcome], started: Instant) {
    let agreeing = outcomes.iter().filter(|o| o.agrees()).count();
    let with_conflicts = outcomes.iter().filter(|o| o.server.as_ref().is_ok_and(|c| !c.is_empty())).count();
    eprintln!(
        "{what}: {agreeing}/{} scenarios agree with the apiserver ({with_conflicts} answered 409) in {:?}",
        outcomes.len(),
        started.elapsed()
    );
    for o in outcomes.iter().filter(|o| !o.agrees()).take(5) {
        eprintln!(
            "DISAGREE seed {}: {:?} then apply by {} of {}\n  predicted {:?}\n  server    {:?}",
            o.seed, o.history, o.applier, o.config, o.predicted, o.server
        );
    }
    assert!(outcomes.len() >= 200 && agreeing == outcomes.len(), "{agreeing}/{} agree", outcomes.len());
    assert!(
        with_conflicts >= 40 && with_conflicts + 40 <= outcomes.len(),
        "a mix of 409s and successes: {with_conflicts}"
    );
    assert!(started.elapsed() < Duration::from_secs(120), "took {:?}", started.elapsed());
}

/// The server's `/openapi/v2` (the fallback where v3 is missing) describes a custom resource well
/// enough to predict the same conflicts: the first 60 custom-resource scenarios under it.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_openapi_v2_fallback_predicts_custom_resources_too() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-cr-conflicts-v2");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcomes = runtime.block_on(async {
        let conn = client::connect(&cluster.flags(&ns)).await.expect("connect");
        let widgets = cr_scenarios::widgets(&conn).await;
        let gvk = Gvk::new("fieldwise.test", "v1", "Widget");
        // v2 is one document for the whole server, rebuilt when a CRD changes: wait for Widget in it.
        let mut schema = None;
        for _ in 0..100 {
            let typed = Schemas::v2_only(&conn).for_gvk(&gvk).await.expect("/openapi/v2");
            if typed.root.is_some() {
                schema = Some(typed);
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let schema = schema.expect("Widget in /openapi/v2");
        assert_eq!((schema.origin, schema.strategic), (Origin::ServerV2, Some(false)));
        let mut outcomes = Vec::new();
        let mut tasks = tokio::task::JoinSet::new();
        for seed in 0..60 {
            let (conn, widgets, schema, ns) = (conn.clone(), widgets.clone(), schema.clone(), ns.clone());
            tasks.spawn(async move { cr_scenarios::run(&conn, &widgets, &schema, &ns, seed).await });
        }
        while let Some(done) = tasks.join_next().await {
            outcomes.push(done.expect("scenario task"));
        }
        outcomes
    });
    let disagreeing: Vec<_> = outcomes.iter().filter(|o| !o.agrees()).map(|o| o.seed).collect();
    assert!(disagreeing.is_empty(), "seeds predicted differently from the apiserver under v2: {disagreeing:?}");
    assert!(outcomes.iter().any(|o| o.server.as_ref().is_ok_and(|c| !c.is_empty())), "some 409s");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn predicted_conflicts_on_custom_resources_equal_the_apiservers_409_causes() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-cr-conflicts");
    let cache = std::env::temp_dir().join(format!("fw-cr-conflicts-cache-{}", std::process::id()));
    let started = Instant::now();
    let total: u64 = std::env::var("FIELDWISE_CR_SCENARIOS").ok().and_then(|n| n.parse().ok()).unwrap_or(240);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcomes = runtime.block_on(async {
        let conn = client::connect(&cluster.flags(&ns)).await.expect("connect");
        let widgets = cr_scenarios::widgets(&conn).await;
        // The schema as the plugins read it: the server's /openapi/v3, cached privately.
        let mut schemas = Schemas::with_cache(&conn, Some(ServerCache::under(&cache, &conn.server)));
        let schema = schemas.for_gvk(&Gvk::new("fieldwise.test", "v1", "Widget")).await.expect("Widget schema");
        assert_eq!(schema.origin, Origin::ServerV3);
        assert_eq!(schema.strategic, Some(false), "custom resources take no strategic merge patch");
        let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(12));
        let mut tasks = tokio::task::JoinSet::new();
        for seed in 0..total {
            let (conn, widgets, schema, ns, limit) =
                (conn.clone(), widgets.clone(), schema.clone(), ns.clone(), limit.clone());
            tasks.spawn(async move {
                let _permit = limit.acquire().await.unwrap();
                cr_scenarios::run(&conn, &widgets, &schema, &ns, seed).await
            });
        }
        let mut outcomes = Vec::new();
        while let Some(done) = tasks.join_next().await {
            outcomes.push(done.expect("scenario task"));
        }
        outcomes
    });
    std::fs::remove_dir_all(&cache).ok();
    assert_all_agree("custom-resource conflict prediction", &outcomes, started);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn conflicts_flag_predicts_verifies_and_exits_3() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-conflicts");
    apply_busybox(&cluster, &ns);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/busybox-demo", "--replicas=2"]);
    let dir = std::env::temp_dir().join(format!("fw-owners-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("apply.yaml");
    std::fs::write(
        &file,
        std::fs::read_to_string(fixture("busybox-demo.yaml")).unwrap().replace("replicas: 1", "replicas: 4"),
    )
    .unwrap();
    // `kubectl owners --conflicts -f FILE --field-manager ci --verify`, plus `extra`.
    let predict = |file: &std::path::Path, extra: &[&str]| {
        run(owners(&cluster)
            .args(["-n", &ns, "--conflicts", "-f", file.to_str().unwrap(), "--field-manager", "ci", "--verify"])
            .args(extra))
    };
    let out = predict(&file, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(".spec.replicas") && stdout.contains("verified"), "{stdout}");
    let report = serde_json::from_str::<Value>(&text(&predict(&file, &["-o", "json"]).stdout)).unwrap();
    let section = &report["items"][0]["conflicts"];
    assert_eq!(section["verification"]["matches"], true);
    assert_eq!(section["verification"]["status"], 409);
    assert!(section["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["field"] == ".spec.replicas" && c["manager"]["subresource"] == "scale"));
    // The same file without the replicas change conflicts with nobody.
    let same = dir.join("same.yaml");
    std::fs::write(
        &same,
        std::fs::read_to_string(fixture("busybox-demo.yaml")).unwrap().replace("  replicas: 1\n", ""),
    )
    .unwrap();
    let out = predict(&same, &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn tree_shows_the_replicaset_and_pods_of_a_deployment() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-tree");
    apply_busybox(&cluster, &ns);
    let pod = eventually("the ReplicaSet to create a pod", Duration::from_secs(90), || {
        let names = cluster.kubectl_ok(&["get", "pods", "-n", &ns, "-o", "name"]);
        names.lines().next().map(str::to_string)
    });
    for target in ["deploy/busybox-demo", pod.as_str()] {
        let report = json_of(run(owners(&cluster).args(["-n", &ns, target, "--tree", "-o", "json"])));
        let root = &report["items"][0]["tree"]["root"];
        assert_eq!(root["object"]["kind"], "Deployment", "{target}: {root:#}");
        let rs = &root["children"][0];
        assert_eq!(
            (rs["object"]["kind"].as_str(), rs["controller"].as_bool()),
            (Some("ReplicaSet"), Some(true)),
            "{root:#}"
        );
        let pods = rs["children"].as_array().unwrap();
        assert!(pods.iter().any(|p| p["object"]["kind"] == "Pod" && p["controller"] == true), "{root:#}");
        let marked =
            if target.starts_with("pod/") { pods.iter().any(|p| p["target"] == true) } else { root["target"] == true };
        assert!(marked, "{target} is marked: {root:#}");
    }
    let text_tree = ok(run(owners(&cluster).args(["-n", &ns, &pod, "--tree"])));
    let lines: Vec<&str> = text_tree.lines().collect();
    assert!(
        lines.len() >= 4
            && lines[1].split_whitespace().nth(1) == Some("deployment.apps/busybox-demo")
            && lines[2].contains("└─replicaset.apps/busybox-demo-"),
        "{text_tree}"
    );
    // A user who may not list everything still gets the tree, and is told what was skipped.
    let restricted = ok(run(owners(&cluster).args([
        "--context",
        "fieldwise-restricted",
        "-n",
        &ns,
        "deploy/busybox-demo",
        "--tree",
    ])));
    assert!(
        restricted.contains("replicaset.apps/")
            && restricted.contains("skipped, could not list: ")
            && restricted.contains("secrets (forbidden)"),
        "{restricted}"
    );
}

/// The rows of a `--tree` table whose NAME cell holds `name`.
fn tree_rows<'t>(table: &'t str, name: &str) -> Vec<&'t str> {
    table.lines().filter(|l| l.split_whitespace().nth(1).is_some_and(|n| n.contains(name))).collect()
}

/// kubectl's AGE of something made during this test: `12s`, `2m5s`, `3m`.
fn is_recent_age(cell: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match cell.strip_suffix('s') {
        Some(rest) => digits(rest) || rest.split_once('m').is_some_and(|(m, s)| digits(m) && digits(s)),
        None => cell.strip_suffix('m').is_some_and(digits),
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn tree_columns_readiness_two_owners_and_kinds() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-tree-cols");
    // owners writes nothing, but a run must never touch the user's data directory.
    let data_dir = std::env::temp_dir().join(format!("fw-owners-tree-data-{}", std::process::id()));
    let tree = |args: &[&str]| {
        let mut cmd = owners(&cluster);
        cmd.env("FIELDWISE_DATA_DIR", &data_dir).args(["-n", &ns, "deploy/busybox-demo", "--tree"]).args(args);
        run(&mut cmd)
    };
    apply_busybox(&cluster, &ns);
    // The controller-manager makes the ReplicaSet and its Pod; no kubelet runs, so the Pod
    // stays Pending and the Deployment unavailable, until the Pod's status is set below.
    let pod = eventually("the ReplicaSet to create a pod", Duration::from_secs(90), || {
        let names = cluster.kubectl_ok(&["get", "pods", "-n", &ns, "-o", "name"]);
        names.lines().next().map(|n| n.trim_start_matches("pod/").to_string())
    });
    let available = |want: &str| {
        eventually(&format!("the Deployment's Available condition to be {want}"), Duration::from_secs(90), || {
            let d = cluster.get_json(&ns, "deploy/busybox-demo");
            let conditions = d["status"]["conditions"].as_array().cloned().unwrap_or_default();
            conditions.iter().any(|c| c["type"] == "Available" && c["status"] == want).then_some(())
        })
    };
    available("False");
    let pending = ok(tree(&[]));
    let root: Vec<&str> = pending.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(root[1..4], ["deployment.apps/busybox-demo", "False", "MinimumReplicasUnavailable"], "{pending}");
    let pod_row = tree_rows(&pending, &format!("pod/{pod}"));
    assert_eq!(pod_row.len(), 1, "{pending}");
    assert_eq!(pod_row[0].split_whitespace().collect::<Vec<_>>()[2..4], ["-", "Pending"], "{pending}");
    // Now as a kubelet would: Running and Ready, through the status subresource.
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "pod",
        &pod,
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#,
    ]);
    available("True");
    let uid_of = |what: &str| cluster.get_json(&ns, what)["metadata"]["uid"].as_str().unwrap().to_string();
    let deploy_uid = uid_of("deploy/busybox-demo");
    let rs = cluster
        .kubectl_ok(&["get", "rs", "-n", &ns, "-o", "name"])
        .trim()
        .trim_start_matches("replicaset.apps/")
        .to_string();
    let rs_uid = uid_of(&format!("rs/{rs}"));
    let pod_uid = uid_of(&format!("pod/{pod}"));
    // Two ConfigMaps with two owners each: one controlled by the ReplicaSet (and owned by the
    // Deployment too), one owned by the Pod and the Deployment with no controller.
    let owner = |kind: &str, api: &str, name: &str, uid: &str, controller: bool| serde_json::json!({"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": controller});
    let configmaps = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared", "ownerReferences": [
            owner("Deployment", "apps/v1", "busybox-demo", &deploy_uid, false),
            owner("ReplicaSet", "apps/v1", &rs, &rs_uid, true),
        ]}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "second", "ownerReferences": [
            owner("Pod", "v1", &pod, &pod_uid, false),
            owner("Deployment", "apps/v1", "busybox-demo", &deploy_uid, false),
        ]}},
    ]});
    cluster.kubectl_stdin(&["create", "-n", &ns, "-f", "-"], &configmaps.to_string());

    let table = ok(tree(&[]));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["NAMESPACE", "NAME", "READY", "REASON", "AGE"]);
    let root: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(root[..2], [ns.as_str(), "deployment.apps/busybox-demo"], "{table}");
    // Available and Progressing are both True now, and a Deployment has no Ready condition.
    assert_eq!(root[2..4], ["-", "-"], "{table}");
    assert!(is_recent_age(root[4]), "{table}");
    let rs_rows = tree_rows(&table, &format!("replicaset.apps/{rs}"));
    assert_eq!(rs_rows.len(), 1, "{table}");
    // Under the Deployment beside configmap/second: the last of the two drawn with └─.
    let rs_at = lines.iter().position(|l| l.contains(&format!("replicaset.apps/{rs}")));
    let second_at = lines.iter().position(|l| l.contains("configmap/second"));
    let connector = if rs_at > second_at { "└─" } else { "├─" };
    assert!(rs_rows[0].contains(&format!("{connector}replicaset.apps/{rs}")), "{table}");
    // The Pod: the status set above, a real AGE.
    let pod_rows = tree_rows(&table, &format!("pod/{pod}"));
    assert_eq!(pod_rows.len(), 1, "{table}");
    let pod_cells: Vec<&str> = pod_rows[0].split_whitespace().collect();
    assert_eq!(pod_cells[2..4], ["True", "Running"], "{table}");
    assert!(is_recent_age(pod_cells[4]), "{table}");
    // Each ConfigMap once: `shared` under its controller (the ReplicaSet, two levels down),
    // `second` under the owner nearest the root (the Deployment), each naming its other owner.
    let shared = tree_rows(&table, "configmap/shared");
    assert_eq!(shared.len(), 1, "{table}");
    // Under the ReplicaSet beside the Pod: the last of the two drawn with └─, the other with ├─.
    let row_of = |name: &str| lines.iter().position(|l| l.split_whitespace().nth(1).is_some_and(|n| n.contains(name)));
    let (shared_at, pod_at) = (row_of("configmap/shared"), row_of(&format!("pod/{pod}")));
    let expected = if shared_at > pod_at { "  └─configmap/shared" } else { "  ├─configmap/shared" };
    assert!(shared[0].contains(expected), "{table}");
    assert!(shared[0].ends_with("(also owned by deployment.apps/busybox-demo)"), "{table}");
    let second = tree_rows(&table, "configmap/second");
    assert_eq!(second.len(), 1, "{table}");
    assert!(
        second[0].split_whitespace().nth(1).is_some_and(|n| n == "├─configmap/second" || n == "└─configmap/second"),
        "{table}"
    );
    assert!(second[0].ends_with(&format!("(also owned by pod/{pod})")), "{table}");
    assert_eq!(table.matches("configmap/").count(), 2, "{table}");

    // --kinds: the Pods and the path to them; no ConfigMaps. Short names and kinds resolve.
    for kinds in ["pods", "po", "Pod"] {
        let only_pods = ok(tree(&["--kinds", kinds]));
        assert!(
            !only_pods.contains("configmap/")
                && tree_rows(&only_pods, &format!("pod/{pod}")).len() == 1
                && tree_rows(&only_pods, &format!("replicaset.apps/{rs}")).len() == 1,
            "--kinds {kinds}: {only_pods}"
        );
    }
    let maps = ok(tree(&["--kinds", "cm,configmaps"]));
    assert!(
        maps.contains("configmap/shared") && maps.contains("configmap/second") && tree_rows(&maps, "pod/").is_empty(),
        "{maps}"
    );
    let unknown = tree(&["--kinds", "pods,frobnicators"]);
    assert_one_line_error(&unknown, "the server doesn't have a resource type \"frobnicators\"");

    // -o json: the same nesting, each object once, with its readiness and other owners.
    let report = json_of(tree(&["-o", "json"]));
    let root = &report["items"][0]["tree"]["root"];
    let kids = root["children"].as_array().unwrap();
    let names: Vec<&str> = kids.iter().map(|c| c["object"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["second", rs.as_str()], "{root:#}");
    assert_eq!(kids[0]["alsoOwnedBy"][0]["uid"], pod_uid.as_str(), "{root:#}");
    assert_eq!(kids[0]["controller"], false, "{root:#}");
    let under_rs = kids[1]["children"].as_array().unwrap();
    let shared = under_rs.iter().find(|c| c["object"]["name"] == "shared").expect("shared under the ReplicaSet");
    assert_eq!(
        (shared["controller"].as_bool(), shared["alsoOwnedBy"][0]["kind"].as_str()),
        (Some(true), Some("Deployment"))
    );
    let pod_node = under_rs.iter().find(|c| c["object"]["kind"] == "Pod").expect("the pod");
    assert_eq!((pod_node["ready"].as_str(), pod_node["reason"].as_str()), (Some("True"), Some("Running")), "{root:#}");
    assert!(pod_node["creationTimestamp"].is_string(), "{pod_node:#}");
    let yaml = ok(tree(&["-o", "yaml", "--kinds", "pods"]));
    assert!(
        yaml.contains("kind: OwnersReport") && yaml.contains("reason: Running") && !yaml.contains("name: shared"),
        "{yaml}"
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn local_mode_needs_no_cluster() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-local");
    apply_busybox(&cluster, &ns);
    let yaml = cluster.kubectl_ok(&["get", "-n", &ns, "deploy/busybox-demo", "-o", "yaml", "--show-managed-fields"]);
    let file = std::env::temp_dir().join(format!("fw-owners-local-{}.yaml", std::process::id()));
    std::fs::write(&file, &yaml).unwrap();
    let offline = || {
        let mut cmd = owners(&cluster);
        cmd.env("KUBECONFIG", "/nonexistent");
        cmd
    };
    let view = ok(run(offline().args(["--local", "-f", file.to_str().unwrap(), "--time", "none"])));
    assert!(
        view.lines().any(|l| l.contains("image: busybox:1.28") && l.ends_with("# kubectl-client-side-apply Update")),
        "{view}"
    );
    let mut child = offline()
        .args(["--local", "-f", "-", "--summary"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(yaml.as_bytes()).unwrap();
    let summary = ok(child.wait_with_output().unwrap());
    assert!(summary.contains("kubectl-client-side-apply") && summary.contains("kubectl"), "{summary}");
    let out = run(offline().args(["--local", "-f", fixture("busybox-demo.yaml").to_str().unwrap()]));
    assert_one_line_error(&out, "deployment.apps/busybox-demo has no metadata.managedFields");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn secret_values_never_appear_without_show_values() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-secret");
    cluster.kubectl_stdin(
        &["apply", "-n", &ns, "-f", "-"],
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: s3cr3t-value\n",
    );
    let base64 = "czNjcjN0LXZhbHVl";
    for args in [
        &[][..],
        &["-o", "json"],
        &["-o", "yaml"],
        &["--field", "data.password"],
        &["--manager", "kubectl-client-side-apply"],
        &["--show-metadata", "--show-status"],
    ] {
        let out = ok(run(owners(&cluster).args(["-n", &ns, "secret/creds"]).args(args)));
        assert!(!out.contains("s3cr3t-value") && !out.contains(base64), "{args:?} leaks the value:\n{out}");
        assert!(out.contains("***"), "{args:?}:\n{out}");
    }
    let shown = ok(run(owners(&cluster).args(["-n", &ns, "secret/creds", "--show-values"])));
    assert!(shown.contains(base64), "{shown}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bad_input_is_one_clear_line() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-owners-bad");
    apply_busybox(&cluster, &ns);
    let out = run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--field", "spec.replicaz"]));
    assert_one_line_error(&out, "field \"spec.replicaz\" (.spec.replicaz) not found in deployment.apps/busybox-demo");
    let out = run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--field", "spec.template[oops"]));
    assert_one_line_error(&out, "invalid field path \"spec.template[oops\"");
    let out = run(owners(&cluster).args(["-n", &ns, "deploy/busybox-demo", "--manager", "nobody"]));
    assert_one_line_error(&out, "no manager \"nobody\" in deployment.apps/busybox-demo");

    let dir = std::env::temp_dir().join(format!("fw-owners-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let malformed = dir.join("malformed.yaml");
    std::fs::write(
        &malformed,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n  managedFields:\n  - manager: x\n    operation: Patch\n    apiVersion: v1\n    fieldsType: FieldsV1\n",
    )
    .unwrap();
    let out = run(owners(&cluster).args(["--local", "-f", malformed.to_str().unwrap()]));
    assert_one_line_error(
        &out,
        "configmap/m: invalid managedFields entry 0 (manager \"x\"): operation must be `Apply` or `Update`",
    );
    let bad_fields = dir.join("bad-fields.yaml");
    std::fs::write(
        &bad_fields,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\n  managedFields:\n  - manager: x\n    operation: Apply\n    apiVersion: v1\n    fieldsType: FieldsV1\n    fieldsV1: {\"f:data\": {\"k:not-json\": {}}}\n",
    )
    .unwrap();
    let out = run(owners(&cluster).args(["--local", "-f", bad_fields.to_str().unwrap()]));
    assert_one_line_error(&out, "configmap/m: invalid managedFields entry 0");
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, "kind: [unclosed\n").unwrap();
    let out = run(owners(&cluster).args(["--local", "-f", broken.to_str().unwrap()]));
    assert_one_line_error(&out, &format!("cannot parse {}", broken.display()));
    let out = run(owners(&cluster).args(["--local", "-f", "/nonexistent/dir"]));
    assert_one_line_error(&out, "the path \"/nonexistent/dir\" cannot be read");
}

/// A Widget (the custom resource of `fixtures/widget-crd.yaml`) as its team applies it.
const WIDGET: &str = r#"apiVersion: fieldwise.test/v1
kind: Widget
metadata:
  name: w1
spec:
  replicas: 1
  ports:
  - {port: 80, protocol: TCP, name: http}
  args: [one, two]
  tags: [a, b]
  workers:
  - name: main
    image: img:1
    env:
    - {name: A, value: "1"}
    zones: [z1]
"#;

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_conflicts_fields_and_blame_use_the_servers_schema() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-owners-cr");
    let dir = std::env::temp_dir().join(format!("fw-owners-cr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("cache");
    let write_file = |name: &str, content: &str| {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        path
    };
    let base = write_file("w1.yaml", WIDGET);
    cluster.kubectl_ok(&["apply", "-n", &ns, "--server-side", "-f", base.to_str().unwrap()]);
    cluster.kubectl_ok(&["scale", "-n", &ns, "widget/w1", "--replicas=3"]);
    let team_c = write_file(
        "team-c.yaml",
        "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata: {name: w1}\nspec:\n  workers:\n  - name: main\n    env:\n    - {name: C, value: c}\n",
    );
    cluster.kubectl_ok(&[
        "apply",
        "-n",
        &ns,
        "--server-side",
        "--field-manager",
        "team-c",
        "-f",
        team_c.to_str().unwrap(),
    ]);
    let owners_cr = || {
        let mut cmd = owners(&cluster);
        cmd.env("FIELDWISE_CACHE_DIR", &cache).args(["-n", &ns]);
        cmd
    };
    let conflicts = |file: &std::path::Path, extra: &[&str]| {
        run(owners_cr().args(["--conflicts", "-f", file.to_str().unwrap(), "--field-manager", "ci"]).args(extra))
    };

    // Conflicts predicted through the keyed lists of the CRD's schema, without and with --verify.
    let changed = write_file("changed.yaml", &WIDGET.replace("replicas: 1", "replicas: 5").replace("\"1\"", "\"2\""));
    let out = conflicts(&changed, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(".spec.replicas") && stdout.contains(r#".spec.workers[name="main"].env[name="A"].value"#));
    assert!(!stdout.contains("verified"), "no dry run without --verify: {stdout}");
    let report =
        serde_json::from_str::<Value>(&text(&conflicts(&changed, &["--verify", "-o", "json"]).stdout)).unwrap();
    let section = &report["items"][0]["conflicts"];
    assert_eq!(
        (&section["verification"]["matches"], &section["verification"]["status"]),
        (&Value::from(true), &Value::from(409))
    );
    let mut fields: Vec<&str> =
        section["conflicts"].as_array().unwrap().iter().map(|c| c["field"].as_str().unwrap()).collect();
    fields.sort();
    assert_eq!(fields, [".spec.replicas", r#".spec.workers[name="main"].env[name="A"].value"#]);
    // The schema was cached by its content hash, per server.
    let cached: Vec<_> = fieldwise_e2e::files_below(&cache, None)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("apis_fieldwise.test_v1"))
        .collect();
    assert_eq!(cached.len(), 1, "one cached v3 document for fieldwise.test/v1: {cached:?}");

    // A new entry of a keyed list or a set is no conflict; replacing an atomic list is.
    let added = write_file(
        "added.yaml",
        &WIDGET
            .replace("  replicas: 1\n", "")
            .replace("  - {port: 80, protocol: TCP, name: http}", "  - {port: 443, protocol: TCP}")
            .replace("tags: [a, b]", "tags: [c]"),
    );
    let out = conflicts(&added, &["--verify"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let atomic =
        write_file("atomic.yaml", &WIDGET.replace("  replicas: 1\n", "").replace("args: [one, two]", "args: [three]"));
    let out = conflicts(&atomic, &["--verify"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(".spec.args") && stdout.contains("verified"), "{stdout}");

    // --field through nested keyed lists, and blame of every field.
    let field = json_of(run(owners_cr().args([
        "widget/w1",
        "--field",
        "spec.workers[name=main].env[name=C].value",
        "-o",
        "json",
    ])));
    let answer = &field["items"][0]["field"];
    assert_eq!(answer["value"], "c", "{answer:#}");
    assert!(answer.to_string().contains("team-c"), "{answer:#}");
    let blame = json_of(run(owners_cr().args(["widget/w1", "-o", "json"])));
    let item = &blame["items"][0];
    let main = r#".spec.workers[name="main"]"#;
    assert_eq!(owners_of(item, ".spec.replicas"), ["kubectl Update/scale"]);
    assert_eq!(owners_of(item, &format!("{main}.env[name=\"C\"].value")), ["team-c Apply"]);
    assert_eq!(owners_of(item, &format!("{main}.env[name=\"A\"].value")), ["kubectl Apply"]);
    assert_eq!(owners_of(item, r#".spec.tags[="a"]"#), ["kubectl Apply"]);
    assert_eq!(owners_of(item, r#".spec.ports[port=80,protocol="TCP"].name"#), ["kubectl Apply"]);

    // Offline, the embedded schema is used, and the command says so.
    let yaml = cluster.kubectl_ok(&["get", "-n", &ns, "widget/w1", "-o", "yaml", "--show-managed-fields"]);
    let live = write_file("live.yaml", &yaml);
    let out = run(owners(&cluster).env("KUBECONFIG", "/nonexistent").args([
        "--local",
        "-f",
        live.to_str().unwrap(),
        "--field",
        "spec.replicas",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("embedded"), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn dash_f_objects_keep_their_namespace_unless_dash_n_names_another() {
    let cluster = require_cluster!();
    let (ns_a, ns_b) = (cluster.namespace("fw-owners-nsa"), cluster.namespace("fw-owners-nsb"));
    apply_busybox(&cluster, &ns_a);
    apply_busybox(&cluster, &ns_b);
    let dir = std::env::temp_dir().join(format!("fw-owners-ns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("in-b.yaml");
    std::fs::write(&file, busybox_in(&ns_b)).unwrap();
    let file = file.to_str().unwrap();

    // -n names another namespace: refused like kubectl, for every mode reading -f.
    for extra in [&[][..], &["--summary"], &["--conflicts"], &["--conflicts", "--verify"]] {
        let out = run(owners(&cluster).args(["-n", &ns_a, "-f", file]).args(extra));
        assert_one_line_error(&out, &format!("{file}: {}", namespace_mismatch(&ns_b, &ns_a)));
        assert!(out.stdout.is_empty(), "{extra:?}: {}", text(&out.stdout));
    }
    // Without -n the file's namespace wins over the context's; with the same -n it is accepted.
    let uid_b = cluster.get_json(&ns_b, "deploy/busybox-demo")["metadata"]["uid"].clone();
    for args in [vec!["-f", file, "-o", "json"], vec!["-n", &ns_b, "-f", file, "-o", "json"]] {
        let report = json_of(run(owners(&cluster).args(&args)));
        assert_eq!(report["items"][0]["object"]["uid"], uid_b, "{args:?}");
    }
    // Display names carry the group whichever way the object was named.
    let view = ok(run(owners(&cluster).args(["-f", file, "--summary"])));
    assert!(view.contains("deployment.apps/busybox-demo"), "{view}");
    // The file is what was applied: the same values, so no conflict, and the server agrees.
    let out = run(owners(&cluster).args(["-f", file, "--conflicts", "--verify"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("deployment.apps/busybox-demo: no conflicts"), "{stdout}");
    assert!(stdout.contains("verified: the apiserver's dry run answered success"), "{stdout}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn dash_f_with_nothing_to_read_is_an_error_not_an_empty_answer() {
    let cluster = require_cluster!();
    let dir = std::env::temp_dir().join(format!("fw-owners-empty-{}", std::process::id()));
    let no_manifests = dir.join("no-manifests");
    std::fs::create_dir_all(&no_manifests).unwrap();
    std::fs::write(no_manifests.join("notes.txt"), "apiVersion: v1\nkind: ConfigMap\n").unwrap();
    let empty = dir.join("empty.yaml");
    std::fs::write(&empty, "").unwrap();
    let comments = dir.join("comments.yaml");
    std::fs::write(&comments, "# nothing yet\n---\n---\n").unwrap();
    let cases = [
        (empty.display().to_string(), format!("\"{}\" holds no object", empty.display())),
        (comments.display().to_string(), format!("\"{}\" holds no object", comments.display())),
        (
            no_manifests.display().to_string(),
            format!("the directory \"{}\" holds no .yaml, .yml or .json file", no_manifests.display()),
        ),
    ];
    for (input, expected) in &cases {
        for mode in [&[][..], &["--local"], &["--conflicts"], &["--summary"]] {
            let out = run(owners(&cluster).args(["-f", input]).args(mode));
            assert_one_line_error(&out, &format!("error: no objects passed in -f: {expected}"));
            assert!(!text(&out.stderr).contains("No resources found"), "{mode:?}");
        }
    }
    // A system directory is no manifest directory either: an error, never "No resources found." and 0.
    let out = run(owners(&cluster).args(["-f", "/etc"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: ") && !stderr.contains("No resources found"), "{stderr}");
}
