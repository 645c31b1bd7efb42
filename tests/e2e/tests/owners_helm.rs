//! `kubectl owners plan --helm-release` against the real cluster, without a helm binary: a
//! release stored as Helm 3 stores it (a Secret of type `helm.sh/release.v1`, base64 of
//! gzipped JSON), its objects installed as manager `helm`, drifted with `kubectl scale`;
//! the plan reads the release, plans its manifest as `helm`, and with a new render lists the
//! objects the upgrade deletes, keeping those with `helm.sh/resource-policy: keep`.

use std::io::Write;
use std::path::PathBuf;
use std::process::Output;

use base64::Engine;
use fieldwise_e2e::{require_cluster, run, text, write_file, Cluster};
use serde_json::{json, Value};

const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  mode: blue\n";
const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  \
selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
containers:\n      - name: web\n        image: busybox:1.36\n        args: [sleep, \"1000000\"]\n";

/// The manifest of the release as Helm writes it: `# Source:` comments, `---` between documents.
fn manifest(parts: &[(&str, &str)]) -> String {
    parts.iter().map(|(file, doc)| format!("---\n# Source: web/templates/{file}\n{doc}")).collect::<Vec<_>>().join("")
}

/// What Helm stores for revision `version` of release `web` in `ns`: base64 of gzipped JSON.
fn encoded_release(ns: &str, version: u64, status: &str, manifest: &str) -> String {
    let release = json!({"name": "web", "namespace": ns, "version": version, "info": {"status": status},
        "chart": {"metadata": {"name": "web", "version": "0.1.0"}}, "config": {}, "manifest": manifest});
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(release.to_string().as_bytes()).expect("gzip");
    base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("gzip"))
}

/// Helm's labels on a stored revision.
fn release_labels(version: u64, status: &str) -> Value {
    json!({"owner": "helm", "name": "web", "status": status, "version": version.to_string()})
}

/// Stores revision `version` of release `web` in `ns` as Helm 3's Secret driver does.
fn store_release(cluster: &Cluster, ns: &str, version: u64, status: &str, manifest: &str) {
    let stored = encoded_release(ns, version, status, manifest);
    // The Secret's own base64 layer on top of Helm's.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": format!("sh.helm.release.v1.web.v{version}"), "labels": release_labels(version, status)},
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(stored)}});
    cluster.kubectl_stdin(&["create", "-n", ns, "-f", "-"], &secret.to_string());
}

/// A namespace with release `web` revision 1 deployed (a ConfigMap and a Deployment, applied
/// as manager `helm`) and the Deployment scaled by hand.
fn drifted_release(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    let objects = manifest(&[("configmap.yaml", CONFIG_MAP), ("deployment.yaml", DEPLOYMENT)]);
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager=helm", "-n", &ns, "-f", "-"], &objects);
    store_release(cluster, &ns, 1, "deployed", &objects);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deployment/web", "--replicas=5"]);
    ns
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-helm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// `kubectl-owners plan --helm-release web -n NS ARGS -o json`.
fn plan(cluster: &Cluster, ns: &str, args: &[&str]) -> Output {
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", ns, "-o", "json"]).args(args);
    run(&mut cmd)
}

fn plan_json(out: &Output, code: i32) -> Value {
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(code), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}"))
}

/// `(kind/name, [(field, manager)])` of each planned object.
fn conflicts(doc: &Value) -> Vec<(String, Vec<(String, String)>)> {
    let objects = doc["objects"].as_array().expect("objects");
    objects
        .iter()
        .map(|o| {
            let rows = o["conflicts"].as_array().expect("conflicts");
            let rows = rows
                .iter()
                .map(|c| (c["field"].as_str().unwrap().to_string(), c["manager"].as_str().unwrap().to_string()))
                .collect();
            (format!("{}/{}", o["kind"].as_str().unwrap(), o["name"].as_str().unwrap()), rows)
        })
        .collect()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_deployed_release_is_planned_as_helm_and_shows_the_hand_made_drift() {
    let cluster = require_cluster!();
    let ns = drifted_release(&cluster, "fw-helm-plan");
    let doc = plan_json(&plan(&cluster, &ns, &[]), 3);
    assert_eq!(doc["fieldManager"], "helm");
    assert_eq!(doc["helmRelease"], json!({"name": "web", "namespace": ns, "revision": 1}));
    assert_eq!(
        conflicts(&doc),
        [
            ("ConfigMap/web-config".to_string(), vec![]),
            ("Deployment/web".to_string(), vec![(".spec.replicas".to_string(), "kubectl".to_string())]),
        ]
    );
    assert_eq!(doc["objects"][1]["namespace"], ns.as_str(), "objects without a namespace go to the release's");
    assert_eq!(doc["prune"], json!([]));
    // The Secret's content is never printed.
    let secret = cluster.get_json(&ns, "secret/sh.helm.release.v1.web.v1");
    let stored = secret["data"]["release"].as_str().unwrap();
    assert!(!doc.to_string().contains(&stored[..40]));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn revision_picks_a_revision_and_the_last_deployed_one_is_the_default() {
    let cluster = require_cluster!();
    let ns = drifted_release(&cluster, "fw-helm-rev");
    store_release(&cluster, &ns, 2, "failed", &manifest(&[("configmap.yaml", CONFIG_MAP)]));
    let names = |doc: &Value| -> Vec<String> {
        doc["objects"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap().to_string()).collect()
    };
    let latest_deployed = plan_json(&plan(&cluster, &ns, &["--fail-on", "refusals"]), 0);
    assert_eq!(
        (latest_deployed["helmRelease"]["revision"].clone(), names(&latest_deployed)),
        (json!(1), vec!["web-config".to_string(), "web".to_string()])
    );
    let second = plan_json(&plan(&cluster, &ns, &["--revision", "2"]), 0);
    assert_eq!((second["helmRelease"]["revision"].clone(), names(&second)), (json!(2), vec!["web-config".to_string()]));
    let missing = plan(&cluster, &ns, &["--revision", "7"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr).trim(),
        format!(
            "error: the Helm release \"web\" in namespace \"{ns}\" has no revision 7; see its revisions with helm history web -n {ns}"
        )
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_render_without_an_object_prunes_it_unless_helm_keeps_it() {
    let cluster = require_cluster!();
    let ns = drifted_release(&cluster, "fw-helm-prune");
    let dir = scratch("prune");
    let render = write_file(&dir, "render.yaml", &manifest(&[("deployment.yaml", DEPLOYMENT)]));
    let doc = plan_json(&plan(&cluster, &ns, &["-f", &render, "--fail-on", "prunes"]), 3);
    assert_eq!(
        doc["prune"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": "web-config",
            "action": "delete", "blockers": []}])
    );
    assert_eq!((doc["summary"]["pruned"].clone(), doc["summary"]["kept"].clone()), (json!(1), json!(0)));
    cluster.kubectl_ok(&["annotate", "-n", &ns, "configmap/web-config", "helm.sh/resource-policy=keep"]);
    let kept = plan_json(&plan(&cluster, &ns, &["-f", &render, "--fail-on", "prunes"]), 0);
    assert_eq!(
        kept["prune"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": "web-config", "action": "keep",
            "blockers": [{"reason": "managers", "names": ["kubectl-annotate"]}, {"reason": "resourcePolicyKeep"}]}])
    );
    // The text lists it after the objects.
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "web", "-n", &ns, "-f", &render, "--fail-on", "prunes"]);
    let out = text(&run(&mut cmd).stdout);
    let tail: Vec<&str> = out.lines().rev().take(3).collect::<Vec<_>>().into_iter().rev().collect();
    assert_eq!(
        tail,
        [
            format!("prune configmap/web-config in namespace {ns}: kept (helm.sh/resource-policy: keep): the release no longer has it, Helm leaves it"),
            "  other managers own fields in it: kubectl-annotate".to_string(),
            "Plan: 1 object, 1 conflicting, 0 refused, 0 new, 0 pruned, 1 kept.".to_string(),
        ]
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_release_in_helms_configmap_storage_is_read_too_and_a_missing_one_is_named() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-helm-cm");
    let objects = manifest(&[("configmap.yaml", CONFIG_MAP)]);
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager=helm", "-n", &ns, "-f", "-"], &objects);
    let stored = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "sh.helm.release.v1.web.v1", "labels": release_labels(1, "deployed")},
        "data": {"release": encoded_release(&ns, 1, "deployed", &objects)}});
    cluster.kubectl_stdin(&["create", "-n", &ns, "-f", "-"], &stored.to_string());
    let doc = plan_json(&plan(&cluster, &ns, &[]), 0);
    assert_eq!(doc["helmRelease"], json!({"name": "web", "namespace": ns, "revision": 1}));
    assert_eq!(conflicts(&doc), [("ConfigMap/web-config".to_string(), vec![])]);
    assert_eq!(doc["objects"][0]["source"], "Helm release web revision 1", "one document: no number");
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "--helm-release", "nope", "-n", &ns]);
    let missing = run(&mut cmd);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr).trim(),
        format!(
            "error: no Helm release \"nope\" in namespace \"{ns}\": no Secret (type helm.sh/release.v1) or ConfigMap is labelled owner=helm,name=nope; check the name and -n (helm list -n {ns})"
        )
    );
}
