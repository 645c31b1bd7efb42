//! The keyed-list re-plan race of issue #22, shared by `tests/replan.rs` (each promise once)
//! and the reliability suite (the same races, round after round).
//!
//! A Deployment whose init containers and env are lists keyed by name gets an entry
//! inserted by position (`add .../initContainers/1`) while a concurrent writer changes the
//! same list. The concurrent writer is `FIELDWISE_HOOK_BEFORE_WRITE` (the `test-hooks`
//! feature): it runs once, after the preview (and its server dry run) and before the write,
//! so the race happens on every run, not by luck of timing.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::audit::{AuditEvent, AuditMark};
use crate::{run, text, Cluster};

/// The Deployment of the issue: init containers migrate-db then warm-cache; the app's env A then
/// C (C refers to B, which the patch adds between them); two ports on 53 told apart by protocol.
pub const WEB: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
      - {name: migrate-db, image: "busybox:1.28"}
      - {name: warm-cache, image: "busybox:1.28"}
      containers:
      - name: app
        image: "busybox:1.28"
        env:
        - {name: A, value: a}
        - {name: C, value: "$(B)/c"}
        ports:
        - {containerPort: 53, protocol: TCP}
        - {containerPort: 53, protocol: UDP}
"#;

/// The init containers of deploy/web, as a JSON pointer.
pub const INIT: &str = "/spec/template/spec/initContainers";
/// The app container's env of deploy/web, as a JSON pointer.
pub const ENV: &str = "/spec/template/spec/containers/0/env";

/// Ours: backup-db inserted second, after migrate-db.
pub const INSERT_BACKUP_DB_SECOND: &str = r#"[{"op":"add","path":"/spec/template/spec/initContainers/1","value":{"name":"backup-db","image":"busybox:1.28"}}]"#;
/// Theirs: hook-init inserted first, which would move backup-db before migrate-db.
pub const INSERT_HOOK_INIT_FIRST: &str = r#"[{"op":"add","path":"/spec/template/spec/initContainers/0","value":{"name":"hook-init","image":"busybox:1.28"}}]"#;
/// Theirs: late appended, which leaves backup-db's place as previewed.
pub const APPEND_LATE: &str =
    r#"[{"op":"add","path":"/spec/template/spec/initContainers/-","value":{"name":"late","image":"busybox:1.28"}}]"#;
/// Ours: B inserted between A and C (C refers to B).
pub const INSERT_ENV_B_SECOND: &str =
    r#"[{"op":"add","path":"/spec/template/spec/containers/0/env/1","value":{"name":"B","value":"b"}}]"#;
/// Theirs: Z inserted first, which would move B before A.
pub const INSERT_ENV_Z_FIRST: &str =
    r#"[{"op":"add","path":"/spec/template/spec/containers/0/env/0","value":{"name":"Z","value":"z"}}]"#;

/// A new namespace (named after `prefix`) holding deploy/web as [`WEB`].
pub fn web(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    cluster.kubectl_stdin(&["apply", "-n", &ns, "-f", "-"], WEB);
    ns
}

/// Puts deploy/web in `ns` back to [`WEB`] (a replace, so entries others added go too), for the next round.
///
/// `kubectl replace` of a manifest without a resourceVersion reads the live object and sends its
/// resourceVersion; the deployment controller's status write in between makes that PUT a
/// Conflict. That is setup racing a controller, not the race under test, so it is sent again
/// (a few times, then it fails with kubectl's message).
pub fn reset_web(cluster: &Cluster, ns: &str) {
    let args = ["replace", "-n", ns, "-f", "-"];
    for _ in 0..5 {
        let out = cluster.kubectl_stdin_output(&args, WEB);
        if out.status.success() {
            return;
        }
        let stderr = text(&out.stderr);
        assert!(stderr.contains("(Conflict)"), "kubectl {args:?} failed: {stderr}");
        std::thread::sleep(Duration::from_millis(100));
    }
    cluster.kubectl_stdin(&args, WEB);
}

/// `kubectl safe-patch -n ns deploy/web --type json -p ops --yes`, backing up into `data`, with
/// `hook` as the concurrent writer.
pub fn json_patch_racing(cluster: &Cluster, data: &Path, ns: &str, ops: &str, hook: &str) -> Output {
    run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", data)
        .env("FIELDWISE_HOOK_BEFORE_WRITE", hook)
        .args(["-n", ns, "deploy/web", "--type", "json", "-p", ops, "--yes"]))
}

/// The hook: `kubectl patch` of deploy/web in `ns` with this JSON Patch.
pub fn concurrent_json_patch(ns: &str, ops: &str) -> String {
    format!("kubectl patch -n {ns} deploy/web --type json -p '{ops}' >/dev/null")
}

/// The names of the entries of the list at `pointer` in deploy/web, in order.
pub fn names(cluster: &Cluster, ns: &str, pointer: &str) -> Vec<String> {
    let d = cluster.get_json(ns, "deploy/web");
    d.pointer(pointer)
        .and_then(Value::as_array)
        .map(|l| l.iter().map(|e| e["name"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

/// The PATCHes (not dry runs) safe-patch sent to deploy/web in `ns` after `mark`: their answer
/// codes, read once the audit log has caught up.
pub fn safe_patch_writes(cluster: &Cluster, mark: AuditMark, ns: &str) -> Vec<u16> {
    std::thread::sleep(Duration::from_millis(500));
    cluster
        .audit_of(mark, "deployments", ns, "web")
        .into_iter()
        .filter(|e: &AuditEvent| e.is_from("kubectl-safe_patch") && e.verb == "patch" && !e.dry_run)
        .map(|e| e.code)
        .collect()
}
