//! Names that would reach the wrong object (issue #44.1): `cm/c#zzz` cut at the `#`
//! patched `configmap/c`; `metadata.name: d/scale` in a file changed `deploy/d` through
//! `/scale`; `c?dryRun=All` reached the server as a query. Every name here goes through
//! every writer and a reader, as an argument and from a file, beside two decoys (`cm/c`,
//! `deploy/d`) that must never change; the audit log must show no request of the plugins
//! naming another object, and each command must fail as `kubectl patch` does for the same name.

use std::path::Path;

use fieldwise_e2e::{run, text, Cluster};
use serde_json::Value;

use super::{data_dir, describe, last_applied, report::Section, safe_patch, Checks};

/// Names sent as `TYPE/NAME` arguments: each a valid path segment that a pasted URL would
/// cut, or one client-go refuses.
const ARGUMENT_NAMES: [&str; 12] =
    ["c#zzz", "c#frag", "c?dryRun=All", "c?x=1#y", "c%2Fx", "c%23", ".", "..", "c d", "c\tq", "cé", "c;x=1"];

/// Names only a file can carry (an argument with a `/` is split by kubectl's grammar).
const FILE_NAMES: [&str; 4] = ["c/x", "../configmaps/c", "d/scale", "c#q"];

/// The plugins' programs, as their User-Agent names them.
const PLUGINS: [&str; 3] = ["kubectl-safe_patch", "kubectl-owners", "kubectl-last_applied"];

/// What the decoys are now: the ConfigMap's resourceVersion, the Deployment's generation and
/// labels (its controller writes its status, which moves its resourceVersion).
fn decoys(cluster: &Cluster, ns: &str) -> (Value, Value) {
    let deploy = cluster.get_json(ns, "deploy/d");
    let cm_version = cluster.get_json(ns, "cm/c")["metadata"]["resourceVersion"].clone();
    (cm_version, serde_json::json!([deploy["metadata"]["generation"], deploy["metadata"]["labels"]]))
}

/// `ConfigMap` (or, for `d/...`, `Deployment`) manifest named `name`.
fn manifest(dir: &Path, index: usize, name: &str) -> String {
    let (api_version, kind) = if name.starts_with("d/") { ("apps/v1", "Deployment") } else { ("v1", "ConfigMap") };
    let document = serde_json::json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
    let path = dir.join(format!("object-{index}.json"));
    std::fs::write(&path, document.to_string()).expect("write manifest");
    path.to_str().expect("UTF-8 path").to_string()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn names_reach_exactly_their_object_or_are_refused() {
    let cluster = fieldwise_e2e::require_cluster!();
    let mut section = Section::start("Names", &cluster);
    let ns = cluster.namespace("fw-rel-names");
    let data = data_dir("names");
    std::fs::create_dir_all(&data).expect("data dir");
    cluster.kubectl_ok(&["create", "configmap", "c", "-n", &ns, "--from-literal=k=v"]);
    cluster.kubectl_ok(&["create", "deployment", "d", "-n", &ns, "--image=busybox", "--replicas=1"]);
    let before = decoys(&cluster, &ns);
    let label = r#"{"metadata":{"labels":{"reached":"yes"}}}"#;

    let mut checks = Checks::default();
    let (mut runs, mut agreed, mut refused_before_sending) = (0usize, 0usize, 0usize);
    let mut wrong_requests = Vec::new();
    let mark = cluster.audit_mark();
    for name in ARGUMENT_NAMES {
        let target = format!("cm/{name}");
        let kubectl = run(cluster.kubectl().args(["patch", "-n", &ns, "configmap", name, "-p", label]));
        let commands: [(&str, Vec<&str>); 4] = [
            ("safe-patch", vec![&target, "-p", label, "--yes"]),
            ("safe-patch --dry-run=server", vec![&target, "-p", label, "--dry-run=server"]),
            ("last-applied repair", vec!["repair", &target, "--yes"]),
            ("owners", vec![&target]),
        ];
        for (command, args) in commands {
            let mut cmd = match command {
                "last-applied repair" => last_applied(&cluster, &data, &ns),
                "owners" => {
                    let mut cmd = cluster.plugin("kubectl-owners");
                    cmd.args(["-n", &ns]);
                    cmd
                }
                _ => safe_patch(&cluster, &data, &ns),
            };
            let out = run(cmd.args(&args));
            runs += 1;
            let stderr = text(&out.stderr);
            let says = stderr.contains("not found") || stderr.contains(&format!("invalid resource name {name:?}"));
            checks.promise(!out.status.success() && says, || {
                format!("`{command}` of {name:?} fails saying not found or invalid: {}", describe(&out))
            });
            if out.status.success() == kubectl.status.success() {
                agreed += 1;
            }
            if stderr.contains("invalid resource name") {
                refused_before_sending += 1;
            }
        }
    }
    let files = data.join("manifests");
    std::fs::create_dir_all(&files).expect("manifests dir");
    for (i, name) in FILE_NAMES.iter().enumerate() {
        let file = manifest(&files, i, name);
        let patch = if name.starts_with("d/") { r#"{"spec":{"replicas":4}}"# } else { label };
        for (command, mut cmd) in [
            ("safe-patch -f", safe_patch(&cluster, &data, &ns)),
            ("last-applied repair -f", last_applied(&cluster, &data, &ns)),
        ] {
            if command.starts_with("safe-patch") {
                cmd.args(["-f", &file, "-p", patch, "--yes"]);
            } else {
                cmd.args(["repair", "-f", &file, "--yes"]);
            }
            let out = run(&mut cmd);
            runs += 1;
            let stderr = text(&out.stderr);
            let refused = stderr.contains("invalid resource name") && stderr.contains("metadata.name in");
            let says = refused || stderr.contains("not found");
            checks.promise(!out.status.success() && says, || {
                format!("`{command}` of a file naming {name:?} fails, naming the file's field: {}", describe(&out))
            });
            if refused {
                refused_before_sending += 1;
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut plugin_requests = 0usize;
    for event in cluster.audit_since(mark) {
        if !PLUGINS.iter().any(|p| event.is_from(p)) || event.namespace != ns {
            continue;
        }
        plugin_requests += 1;
        // Every request about an object names one of the names tried, whole; none names a decoy.
        let named = ARGUMENT_NAMES.contains(&event.name.as_str()) || FILE_NAMES.contains(&event.name.as_str());
        if event.is_write() || (!event.name.is_empty() && !named) {
            wrong_requests.push(format!("{} {}/{} {:?}", event.verb, event.resource, event.subresource, event.name));
        }
    }
    let after = decoys(&cluster, &ns);
    let labels = cluster.get_json(&ns, "cm/c")["metadata"]["labels"].clone();
    let replicas = cluster.get_json(&ns, "deploy/d")["spec"]["replicas"].clone();

    section.figure(
        "names tried (as arguments / only in files)",
        format!("{} / {}", ARGUMENT_NAMES.len(), FILE_NAMES.len()),
    );
    section.figure("commands run (writers, dry runs, a reader)", runs);
    section.figure("refused before any request (client-go's path segment rule)", refused_before_sending);
    section.figure(
        "exit status agreeing with `kubectl patch` of the same name (arguments)",
        format!("{agreed} of {}", ARGUMENT_NAMES.len() * 4),
    );
    section.figure("requests of the plugins seen in the audit log", plugin_requests);
    section.figure("requests naming another object, or writing", wrong_requests.len());
    section.figure("decoys `cm/c` and `deploy/d` changed", if before == after { "no" } else { "yes" });
    checks.promise(wrong_requests.is_empty(), || format!("requests that reached another object: {wrong_requests:?}"));
    checks.promise(before == after, || format!("a decoy changed: {before:?} -> {after:?}"));
    checks.promise(labels.get("reached").is_none() && replicas == 1, || {
        format!("a decoy was written: labels {labels}, replicas {replicas}")
    });
    checks.promise(agreed == ARGUMENT_NAMES.len() * 4, || format!("{agreed} agreed with kubectl"));
    checks.verify();
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_subresource_the_type_does_not_have_is_refused_before_sending() {
    let cluster = fieldwise_e2e::require_cluster!();
    let ns = cluster.namespace("fw-rel-subresource");
    let data = data_dir("subresource");
    cluster.kubectl_ok(&["create", "configmap", "c", "-n", &ns, "--from-literal=k=v"]);
    cluster.kubectl_ok(&["create", "deployment", "d", "-n", &ns, "--image=busybox"]);
    for (target, has) in [("cm/c", "it has none"), ("deploy/d", "it has: ")] {
        let out = run(safe_patch(&cluster, &data, &ns).args([
            target,
            "--subresource",
            "bogus",
            "-p",
            r#"{"metadata":{"labels":{"x":"y"}}}"#,
            "--yes",
        ]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        assert!(stderr.contains("has no subresource \"bogus\"") && stderr.contains(has), "{stderr}");
        assert!(!stderr.contains("discovery") && !stderr.contains("no longer serves"), "{stderr}");
    }
}
