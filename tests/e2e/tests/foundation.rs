//! Foundation: plugin discovery by the real kubectl, kubeconfig loading,
//! discovery-based resolution, and the one-line errors users see.

use std::time::Duration;

use fieldwise_e2e::{eventually, fixture, require_cluster, run, text, Cluster, PLUGINS};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::listing::{self, Scope, Selectors};
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::conn::client;
use serde_json::Value;

/// Asserts a failed command printed exactly one clear line and no panic.
fn assert_one_line_error(out: &std::process::Output, expected: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "exit code; stderr: {stderr}");
    assert!(stderr.contains(expected), "expected {expected:?} in stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line expected: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn kubectl_discovers_every_plugin_without_warnings() {
    let cluster = require_cluster!();
    let out = run(cluster.kubectl().args(["plugin", "list"]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "kubectl plugin list failed: {stderr}");
    for exe in PLUGINS {
        assert!(stdout.lines().any(|l| l.ends_with(&format!("/{exe}"))), "{exe} not listed:\n{stdout}");
    }
    assert!(!stderr.to_lowercase().contains("warning"), "warnings: {stderr}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn kubectl_runs_each_plugin_help_with_kubectl_examples() {
    let cluster = require_cluster!();
    for (command, exe) in
        [("safe-patch", "kubectl-safe_patch"), ("owners", "kubectl-owners"), ("last-applied", "kubectl-last_applied")]
    {
        let out = run(cluster.kubectl().args([command, "--help"]));
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "kubectl {command} --help: {}", text(&out.stderr));
        assert!(stdout.contains(&format!("Usage: kubectl {command}")), "{exe} usage line:\n{stdout}");
        let examples: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("Examples:"))
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert!(!examples.is_empty(), "{exe} has no examples");
        for example in examples {
            assert!(example.starts_with(&format!("kubectl {command}")), "{exe} example {example:?}");
        }
        let version = run(cluster.kubectl().args([command, "--version"]));
        assert!(text(&version.stdout).contains("commit "), "{exe} --version: {}", text(&version.stdout));
    }
}

fn apply_busybox(cluster: &Cluster, ns: &str) {
    let path = fixture("busybox-demo.yaml");
    cluster.kubectl_ok(&["apply", "-n", ns, "-f", path.to_str().unwrap()]);
}

fn managers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|entries| entries.iter().filter_map(|e| e["manager"].as_str().map(String::from)).collect())
        .unwrap_or_default()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn glue_reads_back_controller_managed_fields_and_owner_references() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-foundation");
    apply_busybox(&cluster, &ns);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let flags = cluster.flags(&ns);
    let (deployment, replicasets) =
        eventually("the deployment controller to write status", Duration::from_secs(90), || {
            rt.block_on(async {
                let conn = client::connect(&flags).await.expect("connect");
                let catalog = ResourceCatalog::fetch(&conn).await.expect("discovery");
                let scope = NamespaceScope { namespace: ns.clone(), explicit: true };
                let target = ObjectRef::from_args(&["deploy/busybox-demo".to_string()], &catalog, &scope).unwrap();
                let deployment = objects::get(&conn, &target[0], None).await.expect("get deployment");
                let m = managers(&deployment);
                if !(m.iter().any(|x| x == "kubectl-client-side-apply")
                    && m.iter().any(|x| x == "kube-controller-manager"))
                {
                    return None;
                }
                let rs = catalog.resolve("rs").unwrap();
                let list = listing::list(&conn, rs, &Scope::Namespace(ns.clone()), &Selectors::default())
                    .await
                    .expect("list rs");
                (!list.is_empty()).then_some((deployment, list))
            })
        });
    assert_eq!(deployment["kind"], "Deployment");
    assert!(deployment.pointer("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration").is_some());
    let uid = deployment.pointer("/metadata/uid").unwrap();
    let owned: Vec<&Value> = replicasets
        .iter()
        .filter(|rs| {
            rs.pointer("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|refs| {
                refs.iter().any(|r| {
                    r["kind"] == "Deployment"
                        && r["name"] == "busybox-demo"
                        && r["uid"] == *uid
                        && r["controller"] == true
                })
            })
        })
        .collect();
    assert_eq!(owned.len(), 1, "one ReplicaSet controlled by the Deployment: {replicasets:?}");
    assert_eq!(owned[0]["kind"], "ReplicaSet", "list items get their kind back");
    assert!(managers(owned[0]).iter().any(|m| m == "kube-controller-manager"));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn every_kubectl_spelling_of_a_type_resolves_including_crds() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-resolve");
    apply_busybox(&cluster, &ns);
    cluster.kubectl_ok(&["apply", "-f", fixture("crontab-crd.yaml").to_str().unwrap()]);
    cluster.kubectl_ok(&["wait", "--for=condition=Established", "crd/crontabs.fieldwise.test", "--timeout=60s"]);
    cluster.kubectl_stdin(
        &["apply", "-n", &ns, "-f", "-"],
        "apiVersion: fieldwise.test/v1\nkind: CronTab\nmetadata:\n  name: nightly\nspec:\n  cronSpec: '0 0 * * *'\n",
    );
    let spellings: &[&[&str]] = &[
        &["deploy/busybox-demo"],
        &["deployment", "busybox-demo"],
        &["deployments.apps/busybox-demo"],
        &["Deployment.v1.apps/busybox-demo"],
        &["ct/nightly"],
        &["crontab/nightly"],
        &["crontabs", "nightly"],
        &["CronTab/nightly"],
        &["crontabs.fieldwise.test/nightly"],
        &["crontabs.v1.fieldwise.test/nightly"],
    ];
    for args in spellings {
        // The CRD may take a moment to appear in discovery.
        eventually(&format!("owners {args:?}"), Duration::from_secs(30), || {
            let out = run(cluster.plugin("kubectl-owners").args(*args).args(["-n", &ns, "--summary"]));
            out.status.success().then_some(()).or_else(|| {
                eprintln!("retrying {args:?}: {}", text(&out.stderr));
                None
            })
        });
    }
    let out = run(cluster.plugin("kubectl-owners").args(["frobnicators/x", "-n", &ns]));
    assert_one_line_error(&out, "the server doesn't have a resource type \"frobnicators\"");
    let out = run(cluster.plugin("kubectl-owners").args(["deploy/does-not-exist", "-n", &ns]));
    assert_one_line_error(&out, "Error from server (NotFound): deployments.apps \"does-not-exist\" not found");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn forbidden_requests_read_like_kubectl() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-rbac");
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=k=v"]);
    let out = run(cluster.plugin("kubectl-owners").args(["--context", "fieldwise-restricted", "secret/s", "-n", &ns]));
    assert_one_line_error(&out, "Error from server (Forbidden): secrets \"s\" is forbidden: User \"fieldwise-restricted\" cannot get resource \"secrets\"");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn kubeconfig_problems_are_one_clear_line() {
    let cluster = require_cluster!();
    let tmp = std::env::temp_dir().join(format!("fw-kubeconfig-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let owners = || cluster.plugin("kubectl-owners");

    let out = run(owners().args(["--kubeconfig", "/nonexistent/kubeconfig", "deploy/x"]));
    assert_one_line_error(&out, "cannot load kubeconfig /nonexistent/kubeconfig");

    let out = run(owners().env("KUBECONFIG", "/nonexistent/a:/nonexistent/b").args(["deploy/x"]));
    assert_one_line_error(&out, "none of the files in KUBECONFIG exist");

    let broken = tmp.join("broken");
    std::fs::write(&broken, "apiVersion: v1\nclusters: [this is: not: yaml\n").unwrap();
    let out = run(owners().args(["--kubeconfig", broken.to_str().unwrap(), "deploy/x"]));
    assert_one_line_error(&out, &format!("cannot load kubeconfig {}", broken.display()));

    let out = run(owners().args(["--context", "no-such-context", "deploy/x"]));
    assert_one_line_error(&out, "context \"no-such-context\" does not exist in the kubeconfig");

    let config: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
    let mut unreachable = config.clone();
    unreachable["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1".into();
    let path = tmp.join("unreachable");
    std::fs::write(&path, serde_yaml::to_string(&unreachable).unwrap()).unwrap();
    let out = run(owners().args(["--kubeconfig", path.to_str().unwrap(), "deploy/x"]));
    assert_one_line_error(&out, "cannot reach the Kubernetes API server at https://127.0.0.1:1");

    // KUBECONFIG with several files is merged as kubectl merges it: the
    // current context in one file, the cluster and user in another.
    let mut rest = config.clone();
    rest["current-context"] = "".into();
    let rest_path = tmp.join("rest");
    std::fs::write(&rest_path, serde_yaml::to_string(&rest).unwrap()).unwrap();
    let current_path = tmp.join("current");
    std::fs::write(&current_path, "apiVersion: v1\nkind: Config\ncurrent-context: fieldwise-restricted\n").unwrap();
    let ns = cluster.namespace("fw-merge");
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=k=v"]);
    let merged = format!("{}:{}", current_path.display(), rest_path.display());
    let out = run(owners().env("KUBECONFIG", &merged).args(["secret/s", "-n", &ns]));
    assert_one_line_error(&out, "User \"fieldwise-restricted\" cannot get resource \"secrets\"");

    let out = run(owners().args(["deploy/x", "--request-timeout", "soon"]));
    assert_one_line_error(
        &out,
        "invalid argument \"soon\" for \"--request-timeout\" flag: time: invalid duration \"soon\"",
    );
}
