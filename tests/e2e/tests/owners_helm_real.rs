//! `kubectl owners plan --helm-release` and `owners transfer --helm-release` against real
//! Helm (v3 and v4, built by `scripts/build-helm`): a tiny chart (a ConfigMap and a
//! Deployment) installed with Helm 3, drifted with kubectl, planned as Helm 4's first
//! server-side upgrade (its conversion of Helm's client-side fields, then its apply), and
//! checked against what Helm 4 does: `--dry-run=server` and the real upgrade.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use fieldwise_e2e::helm::{write_chart, Helm};
use fieldwise_e2e::{require_cluster, run, text, Cluster};
use serde_json::Value;

const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  labels:\n    tier: web\n\
data:\n  mode: blue\n";
const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  \
selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
containers:\n      - name: web\n        image: busybox:1.36\n        args: [sleep, \"1000000\"]\n";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-helm-real-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// A namespace with chart `web` installed by Helm 3 as release `web`, then drifted by hand:
/// `kubectl scale`, `kubectl label --overwrite` and a `kubectl edit`-like patch.
fn drifted_helm3_release(cluster: &Cluster, home: &Path, prefix: &str) -> (String, String) {
    let ns = cluster.namespace(prefix);
    let chart = write_chart(home, "web", &[("configmap.yaml", CONFIG_MAP), ("deployment.yaml", DEPLOYMENT)]);
    Helm::V3.ok(cluster, home, &ns, &["install", "web", &chart]);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deployment/web", "--replicas=5"]);
    cluster.kubectl_ok(&["label", "-n", &ns, "--overwrite", "configmap/web-config", "tier=gold"]);
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "configmap/web-config",
        "--type=merge",
        "-p",
        r#"{"data":{"mode":"red"}}"#,
    ]);
    (ns, chart)
}

/// `kubectl-owners plan --helm-release web -n NS -o json`, its exit code asserted.
fn plan(cluster: &Cluster, ns: &str, code: i32) -> Value {
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", ns, "-o", "json"]);
    let out = run(&mut cmd);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(code), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}"))
}

/// `(object name, field, manager)` of every conflict of the plan.
fn planned_conflicts(doc: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for object in doc["objects"].as_array().expect("objects") {
        for c in object["conflicts"].as_array().expect("conflicts") {
            out.insert((
                object["name"].as_str().unwrap().to_string(),
                c["field"].as_str().unwrap().to_string(),
                c["manager"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// `(object name, field, manager)` of every conflict Helm's failed upgrade reports, read from
/// its `Error: UPGRADE FAILED: ` message: one part per object (joined by ` && `), `conflict
/// occurred while applying object NS/NAME ...: Apply failed with N conflicts: conflicts with
/// "MANAGER" ...:` then `- FIELD` lines, or `... 1 conflict: conflict with "MANAGER" ...: FIELD`.
fn helm_conflicts(stderr: &str) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    let error = stderr.split_once("Error: UPGRADE FAILED: ").map(|(_, e)| e).unwrap_or_default();
    for part in error.split(" && ") {
        let object = part
            .split_once("applying object ")
            .and_then(|(_, rest)| rest.split_once(' '))
            .and_then(|(located, _)| located.rsplit('/').next())
            .unwrap_or_default()
            .to_string();
        let Some((_, list)) = part.split_once(" conflict: ").or_else(|| part.split_once(" conflicts: ")) else {
            continue;
        };
        let mut manager = String::new();
        for line in list.lines() {
            if let Some(field) = line.strip_prefix("- ") {
                out.insert((object.clone(), field.trim().to_string(), manager.clone()));
                continue;
            }
            manager = line.split('"').nth(1).unwrap_or_default().to_string();
            if let Some((_, field)) = line.rsplit_once(": ") {
                out.insert((object.clone(), field.trim().to_string(), manager.clone()));
            }
        }
    }
    out
}

fn helm_upgrade(cluster: &Cluster, home: &Path, ns: &str, chart: &str, extra: &[&str]) -> Output {
    let mut args = vec!["upgrade", "web", chart, "--server-side=true"];
    args.extend_from_slice(extra);
    Helm::V4.output(cluster, home, ns, &args)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_preflight_plans_helm_4s_conversion_and_conflicts_exactly_as_its_real_upgrade_meets_them() {
    let cluster = require_cluster!();
    let home = scratch("preflight");
    let (ns, chart) = drifted_helm3_release(&cluster, &home, "fw-helm-real-pre");
    // Helm 3 wrote every object as manager helm, client-side (Update).
    let cm = cluster.get_json(&ns, "configmap/web-config");
    assert!(cm["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["manager"] == "helm" && e["operation"] == "Update"));

    let doc = plan(&cluster, &ns, 3);
    let expected: BTreeSet<(String, String, String)> = [
        ("web", ".spec.replicas", "kubectl"),
        ("web-config", ".data.mode", "kubectl-patch"),
        ("web-config", ".metadata.labels.tier", "kubectl-label"),
    ]
    .iter()
    .map(|(o, f, m)| (o.to_string(), f.to_string(), m.to_string()))
    .collect();
    assert_eq!(planned_conflicts(&doc), expected);
    for object in doc["objects"].as_array().unwrap() {
        assert_eq!(object["helmConversion"]["manager"], "helm", "{object}");
        assert!(object["helmConversion"]["fields"].as_u64().unwrap() > 0, "{object}");
        assert_eq!(object["verification"]["agrees"], true, "{object}");
        // Helm's own fields are its Apply entry's after the conversion: no conflict with them.
        assert!(object["conflicts"].as_array().unwrap().iter().all(|c| c["manager"] != "helm"));
    }

    // The text names the transfer that ends them.
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", &ns]);
    let out = text(&run(&mut cmd).stdout);
    let hint = format!(
        "To hand the fields set by hand to helm before the upgrade: kubectl owners transfer --helm-release web -n {ns} --from kubectl-label,kubectl-patch,kubectl/scale --to helm"
    );
    assert!(out.lines().any(|l| l == hint), "{out}");
    assert!(out.contains("first, Helm 4 converts helm's client-side fields ("), "{out}");

    // Helm 4's server dry run renders and stops before its kube client: it sends no apply and
    // sees no conflict, where the preflight does.
    let dry = helm_upgrade(&cluster, &home, &ns, &chart, &["--dry-run=server"]);
    assert!(dry.status.success(), "dry run: {}\n{}", text(&dry.stdout), text(&dry.stderr));

    // The real upgrade, without --force-conflicts, is refused exactly where the plan says.
    let real = helm_upgrade(&cluster, &home, &ns, &chart, &[]);
    let stderr = text(&real.stderr);
    assert!(!real.status.success(), "the upgrade went through: {}", text(&real.stdout));
    assert_eq!(helm_conflicts(&stderr), expected, "helm said: {stderr}");
    // Its conversion is stored even though the apply failed: helm's fields are its Apply entry's.
    let cm = cluster.get_json(&ns, "configmap/web-config");
    let helm_entries: Vec<&str> = cm["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["manager"] == "helm")
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    assert_eq!(helm_entries, ["Apply"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_transfer_to_helm_before_the_upgrade_lets_helm_4_upgrade_without_force_and_is_undoable() {
    let cluster = require_cluster!();
    let home = scratch("transfer");
    let (ns, chart) = drifted_helm3_release(&cluster, &home, "fw-helm-real-xfer");
    let transfer = || {
        let mut cmd = cluster.plugin("kubectl-owners");
        cmd.args(["transfer", "--helm-release", "web", "-n", &ns, "--from", "human,kubectl/scale", "--to", "helm"]);
        cmd.arg("--yes");
        let out = run(&mut cmd);
        assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
        text(&out.stderr)
    };
    let stderr = transfer();
    // The two objects are one run, undone as one: the conflicts are back.
    let run_id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("Run ").and_then(|r| r.split(';').next()))
        .unwrap_or_else(|| panic!("no run id: {stderr}"))
        .to_string();
    assert_eq!(planned_conflicts(&plan(&cluster, &ns, 0)), BTreeSet::new(), "nothing left to conflict");
    let mut undo = cluster.plugin("kubectl-safe_patch");
    undo.args(["undo", "--run", &run_id, "--yes"]);
    let undone = run(&mut undo);
    assert_eq!(undone.status.code(), Some(0), "{}\n{}", text(&undone.stdout), text(&undone.stderr));
    assert_eq!(planned_conflicts(&plan(&cluster, &ns, 3)).len(), 3, "the undo put the managers back");

    transfer();
    let upgrade = helm_upgrade(&cluster, &home, &ns, &chart, &[]);
    assert!(upgrade.status.success(), "{}\n{}", text(&upgrade.stdout), text(&upgrade.stderr));
    // Helm now owns and sets the chart's values.
    let deployment = cluster.get_json(&ns, "deployment/web");
    let cm = cluster.get_json(&ns, "configmap/web-config");
    assert_eq!(
        (deployment["spec"]["replicas"].clone(), cm["data"]["mode"].clone(), cm["metadata"]["labels"]["tier"].clone()),
        (Value::from(2), Value::from("blue"), Value::from("web"))
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_render_that_drops_objects_prunes_them_as_helm_4_does_and_keeps_the_kept_one() {
    let cluster = require_cluster!();
    let home = scratch("prune");
    let ns = cluster.namespace("fw-helm-real-prune");
    let extra = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-extra\ndata:\n  a: \"1\"\n";
    let keep = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-keep\n  annotations:\n    \
helm.sh/resource-policy: keep\ndata:\n  a: \"1\"\n";
    let first =
        write_chart(&home, "web", &[("configmap.yaml", CONFIG_MAP), ("extra.yaml", extra), ("keep.yaml", keep)]);
    Helm::V3.ok(&cluster, &home, &ns, &["install", "web", &first]);
    let second = write_chart(&home.join("next"), "web", &[("configmap.yaml", CONFIG_MAP)]);
    let render = Helm::V4.ok(&cluster, &home, &ns, &["template", "web", &second]);
    let render_file = fieldwise_e2e::write_file(&home, "render.yaml", &render);

    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", &ns, "-f", &render_file, "--fail-on", "prunes", "-o", "json"]);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(3), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("plan JSON");
    let prunes: Vec<(String, String)> = doc["prune"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["action"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(prunes, [("web-extra".to_string(), "delete".to_string()), ("web-keep".into(), "keep".into())]);

    let upgrade = helm_upgrade(&cluster, &home, &ns, &second, &[]);
    assert!(upgrade.status.success(), "{}\n{}", text(&upgrade.stdout), text(&upgrade.stderr));
    let left: BTreeSet<String> = cluster
        .kubectl_ok(&["get", "configmaps", "-n", &ns, "-o", "name"])
        .lines()
        .filter(|l| l.starts_with("configmap/web"))
        .map(String::from)
        .collect();
    let expected: BTreeSet<String> =
        ["configmap/web-config", "configmap/web-keep"].iter().map(|s| s.to_string()).collect();
    assert_eq!(left, expected, "Helm deleted what the plan prunes and kept what it keeps");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn helms_own_client_side_fields_are_converted_so_a_new_chart_value_is_no_conflict() {
    let cluster = require_cluster!();
    let home = scratch("convert");
    let ns = cluster.namespace("fw-helm-real-conv");
    let chart = write_chart(&home, "web", &[("configmap.yaml", CONFIG_MAP), ("deployment.yaml", DEPLOYMENT)]);
    Helm::V3.ok(&cluster, &home, &ns, &["install", "web", &chart]);
    let next = write_chart(
        &home.join("next"),
        "web",
        &[("configmap.yaml", &CONFIG_MAP.replace("blue", "green")), ("deployment.yaml", DEPLOYMENT)],
    );
    let render = Helm::V4.ok(&cluster, &home, &ns, &["template", "web", &next]);
    let render_file = fieldwise_e2e::write_file(&home, "render.yaml", &render);
    // Applied as it is, the new value conflicts with Helm 3's own Update entry.
    let unconverted = cluster.kubectl_stdin_output(
        &["apply", "--server-side", "--field-manager=helm", "--dry-run=server", "-n", &ns, "-f", "-"],
        &render,
    );
    assert!(text(&unconverted.stderr).contains("conflict with \"helm\" using v1"), "{}", text(&unconverted.stderr));
    // Helm 4 converts that entry first: the plan has no conflict, and the upgrade goes through.
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", &ns, "-f", &render_file, "-o", "json"]);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("plan JSON");
    assert_eq!(planned_conflicts(&doc), BTreeSet::new());
    assert_eq!(doc["objects"][0]["helmConversion"]["apiVersions"], serde_json::json!(["v1"]));
    assert_eq!(doc["objects"][0]["verification"]["agrees"], true, "{}", doc["objects"][0]);
    let upgrade = helm_upgrade(&cluster, &home, &ns, &next, &[]);
    assert!(upgrade.status.success(), "{}\n{}", text(&upgrade.stdout), text(&upgrade.stderr));
    assert_eq!(cluster.get_json(&ns, "configmap/web-config")["data"]["mode"], "green");
}
