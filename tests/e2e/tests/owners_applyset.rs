//! `kubectl owners plan --prune --applyset` against kubectl's own ApplySet prune: a set
//! applied with `KUBECTL_APPLYSET=true kubectl apply --server-side --prune --applyset`, then
//! a smaller set planned; the plan's `prune` list is exactly what kubectl's server dry run
//! of the same apply prunes.

use std::collections::BTreeSet;

use fieldwise_e2e::{require_cluster, run, text, write_file, Cluster};
use serde_json::Value;

const SET: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"1\"\n---\n\
apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: \"1\"\n---\n\
apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: \"1\"\n";
const SMALLER: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"2\"\n";

/// `KUBECTL_APPLYSET=true kubectl apply --server-side --prune --applyset=web-set -n NS -f FILE ARGS`.
fn kubectl_applyset(cluster: &Cluster, ns: &str, file: &str, args: &[&str]) -> String {
    let mut cmd = cluster.kubectl();
    cmd.env("KUBECTL_APPLYSET", "true")
        .args(["apply", "--server-side", "--prune", "--applyset=web-set", "-n", ns, "-f", file])
        .args(args);
    let out = run(&mut cmd);
    assert!(out.status.success(), "kubectl: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_prune_list_is_what_kubectls_applyset_prune_deletes() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-applyset");
    let dir = std::env::temp_dir().join(format!("fw-applyset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let set = write_file(&dir, "set.yaml", SET);
    let smaller = write_file(&dir, "smaller.yaml", SMALLER);
    kubectl_applyset(&cluster, &ns, &set, &[]);
    // Not a member: never pruned.
    cluster.kubectl_ok(&["create", "configmap", "outsider", "-n", &ns]);

    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args([
        "plan",
        "-f",
        &smaller,
        "--prune",
        "--applyset",
        "web-set",
        "-n",
        &ns,
        "--fail-on",
        "prunes",
        "-o",
        "json",
    ]);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(3), "{}\n{}", text(&out.stdout), text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("plan JSON");
    let planned: BTreeSet<String> = doc["prune"]
        .as_array()
        .expect("prune")
        .iter()
        .map(|p| {
            assert_eq!((p["action"].clone(), p["blockers"].clone()), (Value::from("delete"), serde_json::json!([])));
            format!("{}/{}", p["kind"].as_str().unwrap().to_lowercase(), p["name"].as_str().unwrap())
        })
        .collect();
    let dry_run = kubectl_applyset(&cluster, &ns, &smaller, &["--dry-run=server"]);
    let pruned: BTreeSet<String> =
        dry_run.lines().filter_map(|l| l.strip_suffix(" pruned (server dry run)")).map(String::from).collect();
    assert_eq!(planned, pruned, "kubectl said: {dry_run}");
    assert_eq!(planned, ["configmap/b", "secret/s"].map(String::from).into_iter().collect());
    // The member label is planned as kubectl applies it: the object keeps it, no removal.
    let object = &doc["objects"][0];
    assert_eq!(
        (object["conflicts"].clone(), object["removed"].clone()),
        (serde_json::json!([]), serde_json::json!([]))
    );
    assert_eq!(object["verification"]["agrees"], true, "{object}");

    // A parent another tool manages is refused, as kubectl refuses it.
    cluster.kubectl_ok(&[
        "annotate",
        "--overwrite",
        "-n",
        &ns,
        "secret/web-set",
        "applyset.kubernetes.io/tooling=helm/v3",
    ]);
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "-f", &smaller, "--prune", "--applyset", "web-set", "-n", &ns]);
    let refused = run(&mut cmd);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        text(&refused.stderr).trim(),
        format!(
            "error: the ApplySet parent secret/web-set in namespace {ns} cannot be used: it already exists and is managed by tooling \"helm\" instead of \"kubectl\""
        )
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_custom_parent_type_is_refused_as_kubectl_refuses_it_until_its_definition_is_labelled() {
    let cluster = require_cluster!();
    fieldwise_e2e::install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-applyset-crd");
    let dir = std::env::temp_dir().join(format!("fw-applyset-crd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let smaller = write_file(&dir, "smaller.yaml", SMALLER);
    let parent = "widgets.fieldwise.test/web-set";
    let plan = || {
        let mut cmd = cluster.plugin("kubectl-owners");
        cmd.args(["plan", "-f", &smaller, "--prune", "--applyset", parent, "-n", &ns, "-o", "json"]);
        run(&mut cmd)
    };
    // The Widget definition does not carry applyset.kubernetes.io/is-parent-type: kubectl refuses it.
    let mut kubectl = cluster.kubectl();
    kubectl.env("KUBECTL_APPLYSET", "true").args([
        "apply",
        "--server-side",
        "--prune",
        "--applyset",
        parent,
        "-n",
        &ns,
        "-f",
        &smaller,
        "--dry-run=server",
    ]);
    let theirs = run(&mut kubectl);
    assert!(!theirs.status.success());
    let why = "is not permitted as an ApplySet parent";
    assert!(text(&theirs.stderr).contains(why), "kubectl: {}", text(&theirs.stderr));
    let ours = plan();
    assert_eq!(ours.status.code(), Some(1), "{}", text(&ours.stdout));
    let stderr = text(&ours.stderr);
    assert!(
        stderr.contains("resource \"fieldwise.test/v1, Resource=widgets\" is not permitted as an ApplySet parent"),
        "{stderr}"
    );
    // Labelled, it is a parent type for both (none exists yet: nothing to prune).
    cluster.kubectl_ok(&[
        "label",
        "--overwrite",
        "crd/widgets.fieldwise.test",
        "applyset.kubernetes.io/is-parent-type=true",
    ]);
    let ours = plan();
    cluster.kubectl_ok(&["label", "crd/widgets.fieldwise.test", "applyset.kubernetes.io/is-parent-type-"]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    let doc: Value = serde_json::from_slice(&ours.stdout).expect("plan JSON");
    assert_eq!(doc["prune"], serde_json::json!([]));
}
