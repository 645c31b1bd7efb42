//! `kubectl safe-patch` against the real cluster: the acceptance list of the issue.

use std::path::PathBuf;
use std::process::Output;

use fieldwise_e2e::audit::AuditMark;
use fieldwise_e2e::{
    busybox_in, files_below, fixture, install_widget_crd, namespace_mismatch, ok, require_cluster, run, text,
    write_script, Cluster,
};
use serde_json::{json, Value};

/// A private backup directory per test, so tests never see each other's backups.
fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-sp-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn safe_patch(cluster: &Cluster, data: &PathBuf, ns: &str, args: &[&str]) -> Output {
    run(cluster.plugin("kubectl-safe_patch").env("FIELDWISE_DATA_DIR", data).args(["-n", ns]).args(args))
}

fn busybox(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", fixture("busybox-demo.yaml").to_str().unwrap()]);
    ns
}

fn deployment(cluster: &Cluster, ns: &str) -> Value {
    cluster.get_json(ns, "deploy/busybox-demo")
}

fn containers(d: &Value) -> Vec<Value> {
    d.pointer("/spec/template/spec/containers").and_then(Value::as_array).cloned().unwrap_or_default()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn replicas_two_zero_and_null_as_promised() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-replicas");
    let data = data_dir("replicas");
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":2}}"#, "--yes"]);
    assert_eq!(ok(&out).trim(), "deployment.apps/busybox-demo patched");
    assert_eq!(deployment(&cluster, &ns)["spec"]["replicas"], 2);
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":0}}"#, "--yes"]));
    assert_eq!(deployment(&cluster, &ns)["spec"]["replicas"], 0);
    let out =
        safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":null}}"#, "--yes"]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("null does not remove spec.replicas: the server resets it to its default (1)"), "{stderr}");
    assert_eq!(deployment(&cluster, &ns)["spec"]["replicas"], 1);
    // A patch that changes nothing writes nothing. The generation, not the resourceVersion:
    // the deployment controller is still writing the status of the scale above, which moves
    // the resourceVersion but never the generation (a write of the spec would).
    let before = deployment(&cluster, &ns)["metadata"]["generation"].clone();
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":1}}"#, "--yes"]);
    assert_eq!(ok(&out).trim(), "deployment.apps/busybox-demo patched (no change)");
    assert_eq!(deployment(&cluster, &ns)["metadata"]["generation"], before);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn strategic_merge_by_name_then_delete_directive_then_merge_patch_warning() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-containers");
    let data = data_dir("containers");
    let add = r#"{"spec":{"template":{"spec":{"containers":[
        {"name":"busybox","resources":{"requests":{"cpu":"500m"}}},
        {"name":"busybox-add","image":"busybox:1.28","args":["sleep","1000000"]}]}}}}"#;
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", add, "--yes"]));
    let c = containers(&deployment(&cluster, &ns));
    assert_eq!(c.len(), 2, "{c:?}");
    let first = c.iter().find(|c| c["name"] == "busybox").unwrap();
    assert_eq!(first["resources"]["requests"]["cpu"], "500m");
    assert_eq!(first["args"], json!(["sleep", "1000000"]), "the first container keeps its args");
    assert!(c.iter().any(|c| c["name"] == "busybox-add"));

    let delete = r#"{"spec":{"template":{"spec":{"containers":[{"name":"busybox-add","$patch":"delete"}]}}}}"#;
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", delete, "--yes"]));
    let c = containers(&deployment(&cluster, &ns));
    assert_eq!(c.iter().map(|c| c["name"].clone()).collect::<Vec<_>>(), vec![json!("busybox")]);
    assert_eq!(c[0]["resources"]["requests"]["cpu"], "500m", "only busybox-add was removed");

    let merge = r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"busybox:1.28"}]}}}}"#;
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "--type", "merge", "-p", merge, "--yes"]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .contains("a merge patch replaces the whole list spec.template.spec.containers: busybox would be removed"),
        "{stderr}"
    );
    let c = containers(&deployment(&cluster, &ns));
    assert_eq!(c.iter().map(|c| c["name"].clone()).collect::<Vec<_>>(), vec![json!("only")], "it does what it said");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn probe_switch_fails_with_kubectl_patch_and_succeeds_with_the_fix() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-probe");
    let data = data_dir("probe");
    let tcp = r#"{"spec":{"template":{"spec":{"containers":[{"name":"busybox","readinessProbe":{"tcpSocket":{"port":8080}}}]}}}}"#;
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", tcp, "--yes"]));
    let http = r#"{"spec":{"template":{"spec":{"containers":[{"name":"busybox","readinessProbe":{"httpGet":{"port":8080,"path":"/"}}}]}}}}"#;
    let plain = run(cluster.kubectl().args(["patch", "-n", &ns, "deploy/busybox-demo", "-p", http]));
    assert!(!plain.status.success(), "plain kubectl patch is expected to fail");
    assert!(text(&plain.stderr).contains("may not specify more than 1 handler type"), "{}", text(&plain.stderr));

    let without_fix = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", http, "--yes"]);
    assert_eq!(without_fix.status.code(), Some(1));
    let stderr = text(&without_fix.stderr);
    assert!(stderr.contains("setting httpGet keeps tcpSocket") && stderr.contains("--fix"), "{stderr}");

    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", http, "--fix", "--yes"]));
    let probe = containers(&deployment(&cluster, &ns))[0]["readinessProbe"].clone();
    assert_eq!(probe["httpGet"]["path"], "/");
    assert!(probe.get("tcpSocket").is_none(), "{probe}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn json_patch_index_into_containers_is_guarded_by_name() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-json");
    let data = data_dir("json");
    let patch = r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.36"}]"#;
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "--type", "json", "-p", patch, "--yes"]);
    ok(&out);
    assert!(
        text(&out.stderr).contains("list keyed by name: added a test that it is still name=\"busybox\""),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(containers(&deployment(&cluster, &ns))[0]["image"], "busybox:1.36");
    // Someone puts another container first between preview and write: the guard stops the write.
    let hook = format!(
        "kubectl patch -n {ns} deploy/busybox-demo --type json -p '[{{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0\",\"value\":{{\"name\":\"first\",\"image\":\"busybox:1.28\"}}}}]'"
    );
    let patch = r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.37"}]"#;
    let out = run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", &data)
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .args(["-n", &ns, "deploy/busybox-demo", "--type", "json", "-p", patch, "--yes"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let c = containers(&deployment(&cluster, &ns));
    assert_eq!((c[0]["name"].clone(), c[0]["image"].clone()), (json!("first"), json!("busybox:1.28")));
    assert_eq!(c[1]["image"], "busybox:1.36", "busybox untouched");
}

/// The concurrent writer, 30 times (ten of each): it changes another field, the patched
/// field, or nothing but the resourceVersion, between preview and write. The hook makes each
/// round deterministic, so more rounds add no case; the reliability suite races for real.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn race_thirty_times_no_silent_overwrite() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-race");
    let data = data_dir("race");
    cluster.kubectl_ok(&[
        "create",
        "configmap",
        "race",
        "-n",
        &ns,
        "--from-literal=target=t0",
        "--from-literal=other=o0",
    ]);
    let (mut retried_ok, mut stopped, mut touched_ok) = (0, 0, 0);
    for i in 1..=30 {
        let mode = i % 3;
        let writer_patch = match mode {
            0 => format!(r#"{{"data":{{"other":"o{i}"}}}}"#),
            1 => format!(r#"{{"data":{{"target":"w{i}"}}}}"#),
            _ => format!(r#"{{"metadata":{{"labels":{{"touch":"x{i}"}}}}}}"#),
        };
        let hook = format!("kubectl patch -n {ns} cm/race --type merge -p '{writer_patch}' >/dev/null");
        let before = cluster.get_json(&ns, "cm/race");
        let out = run(cluster
            .plugin("kubectl-safe_patch")
            .env("FIELDWISE_DATA_DIR", &data)
            .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
            .args([
                "-n",
                &ns,
                "cm/race",
                "--type",
                "merge",
                "-p",
                &format!(r#"{{"data":{{"target":"p{i}"}}}}"#),
                "--yes",
            ]));
        let after = cluster.get_json(&ns, "cm/race");
        match mode {
            0 => {
                assert_eq!(out.status.code(), Some(0), "{i}: {}", text(&out.stderr));
                assert_eq!(after["data"]["target"], format!("p{i}"));
                assert_eq!(after["data"]["other"], format!("o{i}"), "{i}: the concurrent write survived");
                retried_ok += 1;
            }
            1 => {
                assert_eq!(out.status.code(), Some(3), "{i}: stops: {}", text(&out.stderr));
                assert_eq!(after["data"]["target"], format!("w{i}"), "{i}: the concurrent write is not overwritten");
                stopped += 1;
            }
            _ => {
                assert_eq!(out.status.code(), Some(0), "{i}: {}", text(&out.stderr));
                assert_eq!(after["data"]["target"], format!("p{i}"));
                assert_eq!(after["metadata"]["labels"]["touch"], format!("x{i}"));
                assert_eq!(after["data"]["other"], before["data"]["other"]);
                touched_ok += 1;
            }
        }
    }
    assert_eq!((retried_ok, stopped, touched_ok), (10, 10, 10));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_restores_the_exact_pre_image_and_refuses_after_a_change() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-undo");
    let data = data_dir("undo");
    let original = deployment(&cluster, &ns);
    let patch = r#"{"metadata":{"labels":{"tier":"web"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"busybox","image":"busybox:1.36"}]}}}}"#;
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", patch, "--yes"]));
    // Backups are private.
    let files: Vec<PathBuf> = fieldwise_e2e::files_below(&data, None);
    assert_eq!(files.len(), 1);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    let history = ok(&safe_patch(&cluster, &data, &ns, &["history", "deploy/busybox-demo"]));
    assert!(history.contains("safe-patch strategic"), "{history}");

    let out = safe_patch(&cluster, &data, &ns, &["undo", "deploy/busybox-demo", "--yes"]);
    assert!(ok(&out).contains("restored"), "{}", text(&out.stdout));
    let restored = deployment(&cluster, &ns);
    assert_eq!(restored["spec"], original["spec"], "spec restored exactly");
    assert_eq!(restored["metadata"]["labels"], original["metadata"]["labels"], "labels restored exactly");

    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":4}}"#, "--yes"]));
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/busybox-demo", "--replicas=5"]);
    let out = safe_patch(&cluster, &data, &ns, &["undo", "deploy/busybox-demo", "--yes"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("changed since the write being undone"), "{}", text(&out.stderr));
    assert_eq!(deployment(&cluster, &ns)["spec"]["replicas"], 5, "refused: nothing written");
    ok(&safe_patch(&cluster, &data, &ns, &["undo", "deploy/busybox-demo", "--yes", "--force"]));
    assert_eq!(deployment(&cluster, &ns)["spec"], original["spec"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn secret_values_never_printed_without_show_secrets() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-secret");
    let data = data_dir("secret");
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=password=hunter2"]);
    let out = safe_patch(
        &cluster,
        &data,
        &ns,
        &["secret/s", "--type", "merge", "-p", r#"{"data":{"password":"bmV3cGFzcw=="}}"#, "--yes", "-o", "yaml"],
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    ok(&out);
    for secret in ["aHVudGVyMg==", "hunter2", "bmV3cGFzcw==", "newpass"] {
        assert!(!all.contains(secret), "{secret} leaked:\n{all}");
    }
    assert!(all.contains("*** (changed)"), "{all}");
    assert_eq!(cluster.get_json(&ns, "secret/s")["data"]["password"], "bmV3cGFzcw==");
}

/// Non-dry-run write requests the audit log saw in a namespace.
fn writes_in(cluster: &Cluster, ns: &str) -> usize {
    // Only what a user's command sent: controllers keep writing to the namespace (a
    // Deployment's status, its ReplicaSets' Pods), and counting them made these tests race.
    let everything = cluster.audit_since(AuditMark::start());
    everything.iter().filter(|e| e.namespace == ns && e.is_write() && !e.dry_run && !e.is_from_system()).count()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bad_input_is_a_clear_error_and_never_a_write() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-bad");
    cluster.kubectl_ok(&["create", "configmap", "cm", "-n", &ns, "--from-literal=a=b"]);
    let data = data_dir("bad");
    std::thread::sleep(std::time::Duration::from_secs(2)); // let controllers settle
    let writes_before = writes_in(&cluster, &ns);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":2}"#], "is not valid JSON"),
        (vec!["deploy/busybox-demo", "-p", "spec: [replicas: 2"], "neither JSON nor YAML"),
        (vec!["deploy/busybox-demo", "--type", "frob", "-p", "{}"], "invalid value 'frob' for '--type <PATCH_TYPE>'"),
        (
            vec![
                "deploy/busybox-demo",
                "--type",
                "json",
                "-p",
                r#"[{"op":"replace","path":"/spec/nope/x","value":1}]"#,
            ],
            "operation 0 (replace /spec/nope/x)",
        ),
        (vec!["cm/cm", "-p", r#"{"spec":{"replicas":2}}"#], "unknown field \"spec\""),
        (vec!["deploy/does-not-exist", "-p", r#"{"spec":{"replicas":2}}"#], "Error from server (NotFound)"),
        (
            vec!["--context", "fieldwise-restricted", "deploy/busybox-demo", "-p", r#"{"spec":{"replicas":2}}"#],
            "Error from server (Forbidden)",
        ),
    ];
    for (args, expected) in cases {
        let out = safe_patch(&cluster, &data, &ns, &args.iter().copied().chain(["--yes"]).collect::<Vec<_>>());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!(writes_in(&cluster, &ns), writes_before, "no write request reached the server");
    assert_eq!(cluster.get_json(&ns, "deploy/busybox-demo")["spec"]["replicas"], 1);
}

/// safe-patch with a kubeconfig that does not exist: `--local` must not need one.
fn offline_safe_patch() -> std::process::Command {
    let mut cmd = std::process::Command::new(fieldwise_e2e::bin_dir().join("kubectl-safe_patch"));
    cmd.env("KUBECONFIG", "/nonexistent");
    cmd
}

#[test]
fn local_mode_needs_no_cluster() {
    let out = run(offline_safe_patch().args([
        "-f",
        fixture("busybox-demo.yaml").to_str().unwrap(),
        "--local",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
        "-o",
        "json",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(result["spec"]["replicas"], 3);
    assert_eq!(result["spec"]["template"]["spec"]["containers"][0]["name"], "busybox");
}

/// Issue #32.12: `--local -f` patches every object of a file of several (and of a directory
/// with -R), as `kubectl patch --local -f` does: a YAML stream, each object once; a patch that
/// does not apply to one of them prints nothing but the error naming that object.
#[test]
fn local_mode_patches_every_object_of_the_files() {
    let dir = std::env::temp_dir().join(format!("fw-sp-local-many-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n");
    std::fs::write(dir.join("two.yaml"), format!("{}---\n{}", cm("a"), cm("b"))).unwrap();
    std::fs::write(dir.join("sub/three.yaml"), cm("c")).unwrap();
    let patch = r#"{"metadata":{"labels":{"team":"x"}}}"#;
    let out = run(offline_safe_patch().args(["-f", dir.to_str().unwrap(), "-R", "--local", "-p", patch]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let documents: Vec<Value> = fieldwise_core::yaml::read_stream(&text(&out.stdout))
        .expect("a YAML stream")
        .into_iter()
        .map(|d| d.value)
        .collect();
    let mut names: Vec<&str> = documents.iter().map(|d| d["metadata"]["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "c"], "each object once");
    assert!(documents.iter().all(|d| d["metadata"]["labels"]["team"] == "x" && d["data"]["k"] == "v"), "{documents:?}");
    // A JSON Patch that applies to no object: nothing printed, the first object named.
    let out = run(offline_safe_patch().args([
        "-f",
        dir.join("two.yaml").to_str().unwrap(),
        "--local",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/data/missing"}]"#,
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "nothing printed");
    assert!(text(&out.stderr).contains("configmap/a"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_take_apply_and_every_suggestion_works() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-sp-cr");
    let data = data_dir("cr");
    let widget = "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata: {name: w1}\nspec:\n  replicas: 1\n  tags: [a]\n  workers:\n  - {name: main, image: img:1}\n";
    cluster.kubectl_stdin(&["apply", "-n", &ns, "--server-side", "-f", "-"], widget);
    // --type apply: predicted from the CRD's schema, written, owned by our manager.
    let out = safe_patch(
        &cluster,
        &data,
        &ns,
        &["widget/w1", "--type", "apply", "-p", r#"{"spec":{"mode":"fast"}}"#, "--yes"],
    );
    assert_eq!(ok(&out).trim(), "widget.fieldwise.test/w1 patched");
    let live = cluster.get_json(&ns, "widget/w1");
    assert_eq!(live["spec"]["mode"], "fast");
    assert!(live["metadata"]["managedFields"].to_string().contains("kubectl-safe-patch"));
    // A conflict with the applier needs --force (exit 2), then goes through.
    let replicas = r#"{"spec":{"replicas":5}}"#;
    let out = safe_patch(&cluster, &data, &ns, &["widget/w1", "--type", "apply", "-p", replicas, "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    ok(&safe_patch(&cluster, &data, &ns, &["widget/w1", "--type", "apply", "-p", replicas, "--yes", "--force"]));
    assert_eq!(cluster.get_json(&ns, "widget/w1")["spec"]["replicas"], 5);
    // --dry-run=server works for apply: nothing written.
    let before = cluster.get_json(&ns, "widget/w1")["metadata"]["resourceVersion"].clone();
    ok(&safe_patch(
        &cluster,
        &data,
        &ns,
        &["widget/w1", "--type", "apply", "-p", r#"{"spec":{"mode":"slow"}}"#, "--dry-run=server"],
    ));
    assert_eq!(cluster.get_json(&ns, "widget/w1")["metadata"]["resourceVersion"], before);
    // Strategic is refused (the server takes none for custom resources), suggesting what works.
    let out = safe_patch(
        &cluster,
        &data,
        &ns,
        &["widget/w1", "--type", "strategic", "-p", r#"{"spec":{"tags":["b"]}}"#, "--yes"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--type merge") && stderr.contains("--type apply"), "{stderr}");
    // Without --type: merge, with a note; the lints read the CRD's schema: the merge patch replaces
    // the set spec.tags, whose entry "a" the server-side applier owns, so it needs --force.
    let tags = r#"{"spec":{"tags":["b"]}}"#;
    let out = safe_patch(&cluster, &data, &ns, &["widget/w1", "-p", tags, "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("using --type merge") && stderr.contains("replaces the whole list spec.tags"), "{stderr}");
    assert!(stderr.contains(r#".spec.tags[="a"] owned by kubectl"#), "{stderr}");
    ok(&safe_patch(&cluster, &data, &ns, &["widget/w1", "-p", tags, "--yes", "--force"]));
    assert_eq!(cluster.get_json(&ns, "widget/w1")["spec"]["tags"], json!(["b"]));
}

/// `--validate` loosens the strict default, as kubectl's flag does (kubectl patch sends none,
/// so the server warns and drops unknown fields).
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn validate_strict_by_default_and_loosened_by_the_flag() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-validate");
    let data = data_dir("validate");
    cluster.kubectl_ok(&["create", "configmap", "v", "-n", &ns, "--from-literal=a=1"]);
    let unknown = r#"{"spec":{"replicas":2}}"#;
    let strict = safe_patch(&cluster, &data, &ns, &["cm/v", "-p", unknown, "--yes"]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict.stderr));
    assert!(text(&strict.stderr).contains("unknown field \"spec\""), "{}", text(&strict.stderr));
    for loose in ["--validate=ignore", "--validate=warn"] {
        let out = safe_patch(&cluster, &data, &ns, &["cm/v", "-p", unknown, "--yes", loose]);
        assert_eq!(ok(&out).trim(), "configmap/v patched (no change)", "{loose}: {}", text(&out.stderr));
    }
    assert!(cluster.get_json(&ns, "cm/v").get("spec").is_none(), "the server dropped the unknown field");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn merge_patch_names_the_fields_a_kept_container_loses() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-kept");
    let data = data_dir("kept");
    let merge = r#"{"spec":{"template":{"spec":{"containers":[{"name":"busybox","image":"busybox:1.36"}]}}}}"#;
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "--type", "merge", "-p", merge, "--yes"]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "a merge patch replaces the whole list spec.template.spec.containers: busybox stays but loses args \
             (its entry in the patch does not carry it)"
        ),
        "{stderr}"
    );
    // It does what it said: the args are gone, and the fields it did not name came back as server defaults.
    let c = containers(&deployment(&cluster, &ns));
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(c[0].get("args").is_none(), "{c:?}");
    assert_eq!(c[0]["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c[0]["imagePullPolicy"], "IfNotPresent");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn the_last_applied_annotation_is_named_as_the_reverter_not_a_one_shot_command() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-blame");
    let data = data_dir("blame");
    let file = fixture("busybox-demo.yaml");
    // `kubectl create --save-config`: kubectl-create owns the fields, the annotation records the file.
    cluster.kubectl_ok(&["create", "--save-config", "-n", &ns, "-f", file.to_str().unwrap()]);
    let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", r#"{"spec":{"replicas":2}}"#, "--yes"]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "warning: the next `kubectl apply` of the same file sets it back: .spec.replicas (back to 1); \
             the kubectl.kubernetes.io/last-applied-configuration annotation records it"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("kubectl-create"), "a one-shot command is not blamed: {stderr}");
    // And it is true: the next apply of the same file sets it back.
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", file.to_str().unwrap()]);
    assert_eq!(deployment(&cluster, &ns)["spec"]["replicas"], 1);

    // Created without the annotation: nobody will revert the change, so there is nothing to warn about.
    cluster.kubectl_ok(&["create", "deployment", "plain", "-n", &ns, "--image", "busybox:1.28"]);
    let out = safe_patch(&cluster, &data, &ns, &["deploy/plain", "-p", r#"{"spec":{"replicas":2}}"#, "--yes"]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("warning") && !stderr.contains("kubectl-create"), "{stderr}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn recreate_strategy_is_refused_by_kubectl_patch_and_fixed_with_retain_keys_or_null() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-recreate");
    let data = data_dir("recreate");
    let recreate = r#"{"spec":{"strategy":{"type":"Recreate"}}}"#;
    let plain = run(cluster.kubectl().args(["patch", "-n", &ns, "deploy/busybox-demo", "-p", recreate]));
    assert!(!plain.status.success(), "plain kubectl patch is expected to fail");
    assert!(text(&plain.stderr).contains("may not be specified when strategy `type` is 'Recreate'"));

    for patch_type in ["strategic", "merge"] {
        let without_fix =
            safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "--type", patch_type, "-p", recreate, "--yes"]);
        assert_eq!(without_fix.status.code(), Some(1), "{}", text(&without_fix.stderr));
        let stderr = text(&without_fix.stderr);
        let fix =
            if patch_type == "strategic" { r#"add "$retainKeys": ["type"]"# } else { r#"add "rollingUpdate": null"# };
        assert!(stderr.contains("setting type to Recreate keeps rollingUpdate") && stderr.contains(fix), "{stderr}");
        assert_eq!(deployment(&cluster, &ns)["spec"]["strategy"]["type"], "RollingUpdate", "nothing was written");

        let fixed = safe_patch(
            &cluster,
            &data,
            &ns,
            &["deploy/busybox-demo", "--type", patch_type, "-p", recreate, "--fix", "--yes"],
        );
        ok(&fixed);
        assert_eq!(deployment(&cluster, &ns)["spec"]["strategy"], json!({"type": "Recreate"}), "{patch_type}");
        // Back to RollingUpdate (the server defaults rollingUpdate again) for the next round.
        let back = r#"{"spec":{"strategy":{"type":"RollingUpdate"}}}"#;
        ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", back, "--yes"]));
        assert!(deployment(&cluster, &ns)["spec"]["strategy"]["rollingUpdate"].is_object());
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn json_patch_errors_number_the_operations_as_the_user_wrote_them() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-numbering");
    let data = data_dir("numbering");
    cluster.kubectl_ok(&["label", "-n", &ns, "deploy/busybox-demo", "extra=x"]);
    // Operation 0 indexes into containers, so a test of its name is added ahead of it; it is not counted.
    let image = r#"{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.36"}"#;
    let cases = [
        (format!(r#"[{image},{{"op":"frob","path":"/spec/paused"}}]"#), "operation 1 (frob /spec/paused): unknown op"),
        (
            format!(r#"[{image},{{"op":"remove","path":"/spec/paused"}}]"#),
            r#"operation 1 (remove /spec/paused): no member "paused" to remove"#,
        ),
    ];
    for (patch, expected) in &cases {
        let out = safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "--type", "json", "-p", patch, "--yes"]);
        assert_eq!(out.status.code(), Some(1), "{patch}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(expected), "{patch}: expected {expected:?} in {}", text(&out.stderr));
    }
    // The server refuses the write (its resourceVersion test fails: someone removed the label meanwhile);
    // the write path reads the object again and names the user's operation that no longer applies, not
    // its place in the request sent (after the resourceVersion test and the position test: 3).
    let patch = format!(r#"[{image},{{"op":"remove","path":"/metadata/labels/extra"}}]"#);
    let hook = format!("kubectl label -n {ns} deploy/busybox-demo extra- >/dev/null");
    let out = run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", &data)
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .args(["-n", &ns, "deploy/busybox-demo", "--type", "json", "-p", &patch, "--yes"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(r#"operation 1 (remove /metadata/labels/extra): no member "extra" to remove"#), "{stderr}");
    assert_eq!(containers(&deployment(&cluster, &ns))[0]["image"], "busybox:1.28", "nothing was written");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_file_in_another_namespace_than_dash_n_is_refused_and_nothing_written() {
    let cluster = require_cluster!();
    let (ns_a, ns_b) = (busybox(&cluster, "fw-sp-nsa"), busybox(&cluster, "fw-sp-nsb"));
    let data = data_dir("namespaces");
    let file = std::env::temp_dir().join(format!("fw-sp-in-b-{}.yaml", std::process::id()));
    std::fs::write(&file, busybox_in(&ns_b)).unwrap();
    let file = file.to_str().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2)); // let controllers settle
    let before = (writes_in(&cluster, &ns_a), writes_in(&cluster, &ns_b));
    let two = r#"{"spec":{"replicas":2}}"#;
    for dry_run in ["none", "server"] {
        let out =
            safe_patch(&cluster, &data, &ns_a, &["-f", file, "-p", two, "--yes", &format!("--dry-run={dry_run}")]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.trim_end(), format!("error: {file}: {}", namespace_mismatch(&ns_b, &ns_a)));
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!((writes_in(&cluster, &ns_a), writes_in(&cluster, &ns_b)), before, "no write request reached the server");
    assert_eq!(files_below(&data, None), Vec::<PathBuf>::new(), "no backup was written");
    for ns in [&ns_a, &ns_b] {
        assert_eq!(deployment(&cluster, ns)["spec"]["replicas"], 1);
    }

    // Without -n the file's namespace wins over the context's, as in kubectl.
    let out = run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", &data)
        .args(["-f", file, "-p", two, "--yes"]));
    assert_eq!(ok(&out).trim(), "deployment.apps/busybox-demo patched");
    assert_eq!(deployment(&cluster, &ns_b)["spec"]["replicas"], 2);
    assert_eq!(deployment(&cluster, &ns_a)["spec"]["replicas"], 1);
    // The same -n as the file's is fine.
    let out = safe_patch(&cluster, &data, &ns_b, &["-f", file, "-p", r#"{"spec":{"replicas":3}}"#, "--yes"]);
    assert_eq!(ok(&out).trim(), "deployment.apps/busybox-demo patched");
    assert_eq!(deployment(&cluster, &ns_b)["spec"]["replicas"], 3);

    // An -f file with no object is an error, not a silent nothing.
    let empty = std::env::temp_dir().join(format!("fw-sp-empty-{}.yaml", std::process::id()));
    std::fs::write(&empty, "# nothing here\n").unwrap();
    let out = safe_patch(&cluster, &data, &ns_a, &["-f", empty.to_str().unwrap(), "-p", two, "--yes"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: no objects passed in -f: \"{}\" holds no object", empty.display())),
        "{stderr}"
    );
}

#[test]
fn local_mode_names_the_object_with_its_group() {
    let out = run(offline_safe_patch().args([
        "-f",
        fixture("busybox-demo.yaml").to_str().unwrap(),
        "--local",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/nope/x","value":1}]"#,
    ]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the JSON Patch does not apply to deployment.apps/busybox-demo: "), "{stderr}");
}

/// Issue #28.2: an object deleted and created again under the same name between the preview
/// and the write (same data, new uid) is another object: nothing is written to it, exit 3.
/// Both guards: a merge patch sent as a field guard, and a JSON Patch that reads after it
/// writes (`move`), sent with the resourceVersion.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_write_is_pinned_to_the_object_previewed() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-uid");
    let data = data_dir("uid");
    let patches =
        [("merge", r#"{"data":{"a":"patched"}}"#), ("json", r#"[{"op":"move","from":"/data/a","path":"/data/b"}]"#)];
    for (patch_type, patch) in patches {
        let _ = run(cluster.kubectl().args(["delete", "configmap", "pinned", "-n", &ns, "--ignore-not-found"]));
        cluster.kubectl_ok(&["create", "configmap", "pinned", "-n", &ns, "--from-literal=a=1"]);
        let previewed_uid = cluster.get_json(&ns, "cm/pinned")["metadata"]["uid"].clone();
        let hook = format!(
            "kubectl delete configmap pinned -n {ns} >/dev/null && kubectl create configmap pinned -n {ns} --from-literal=a=1 >/dev/null"
        );
        let out = run(cluster
            .plugin("kubectl-safe_patch")
            .env("FIELDWISE_DATA_DIR", &data)
            .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
            .args(["-n", &ns, "cm/pinned", "--type", patch_type, "-p", patch, "--yes"]));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{patch_type}: {stderr}");
        assert!(stderr.contains("it was deleted and created again since the preview"), "{patch_type}: {stderr}");
        assert!(stderr.contains("nothing was written"), "{patch_type}: {stderr}");
        let now = cluster.get_json(&ns, "cm/pinned");
        assert_ne!(now["metadata"]["uid"], previewed_uid, "{patch_type}: the hook made a new object");
        assert_eq!(now["data"], json!({"a": "1"}), "{patch_type}: the new object is untouched");
    }
}

/// Issue #28.3: a signal while the editor is open (SIGINT, SIGTERM, SIGHUP: the terminal
/// closed) ends the command with the signal's code and leaves no edit file in `$TMPDIR`:
/// the file holds the whole object, a Secret's data included.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_signal_during_edit_leaves_no_file_behind() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-edit-signal");
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=pw=edit-signal-canary"]);
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let tmp = data_dir(&format!("edit-signal-{signal}"));
        std::fs::create_dir_all(&tmp).unwrap();
        // The editor signals the plugin (the parent of the `sh -c` that runs the editor) and
        // stays open a while, as an editor would when the terminal goes away.
        let editor = write_script(
            &tmp,
            "editor.sh",
            &format!("#!/bin/sh\nplugin=$(cut -d' ' -f4 /proc/$PPID/stat)\nkill -{signal} \"$plugin\"\nsleep 2\n"),
        );
        let out = run(cluster
            .plugin("kubectl-safe_patch")
            .env("TMPDIR", &tmp)
            .env("KUBE_EDITOR", &editor)
            .env("FIELDWISE_DATA_DIR", tmp.join("data"))
            .args(["-n", &ns, "secret/s", "--edit", "--yes"]));
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {}", text(&out.stderr));
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("fieldwise-edit-"))
            .collect();
        assert!(left.is_empty(), "SIG{signal} left {left:?} in TMPDIR");
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

/// Issue #28.6: removing a map's last key while another writer removes the same key is the
/// same change (no conflict), as it is with two keys: `(no change)`, exit 0.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn removing_the_last_label_that_someone_else_removed_is_no_change() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-sp-last-label");
    let data = data_dir("last-label");
    for labels in [vec!["only=x"], vec!["only=x", "other=y"]] {
        let _ = run(cluster.kubectl().args(["delete", "configmap", "labelled", "-n", &ns, "--ignore-not-found"]));
        cluster.kubectl_ok(&["create", "configmap", "labelled", "-n", &ns, "--from-literal=a=1"]);
        let mut label = vec!["label", "configmap", "labelled", "-n", &ns];
        label.extend(labels.iter().copied());
        cluster.kubectl_ok(&label);
        let hook = format!("kubectl label configmap labelled -n {ns} only- >/dev/null");
        let out = run(cluster
            .plugin("kubectl-safe_patch")
            .env("FIELDWISE_DATA_DIR", &data)
            .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
            .args([
                "-n",
                &ns,
                "cm/labelled",
                "--type",
                "merge",
                "-p",
                r#"{"metadata":{"labels":{"only":null}}}"#,
                "--yes",
            ]));
        assert_eq!(out.status.code(), Some(0), "{labels:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).trim(), "configmap/labelled patched (no change)", "{labels:?}");
        let now = cluster.get_json(&ns, "cm/labelled");
        assert!(now["metadata"]["labels"].get("only").is_none(), "{labels:?}: {now}");
    }
}

/// Issue #32.10: a later change of another field (an autoscaler's replicas) does not block the
/// undo of an image change, and survives it.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_is_guarded_by_the_fields_it_restores() {
    let cluster = require_cluster!();
    let ns = busybox(&cluster, "fw-sp-undo-fields");
    let data = data_dir("undo-fields");
    let image_before = containers(&deployment(&cluster, &ns))[0]["image"].clone();
    let patch = r#"{"spec":{"template":{"spec":{"containers":[{"name":"busybox","image":"busybox:1.36"}]}}}}"#;
    ok(&safe_patch(&cluster, &data, &ns, &["deploy/busybox-demo", "-p", patch, "--yes"]));
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/busybox-demo", "--replicas=4"]);
    let out = safe_patch(&cluster, &data, &ns, &["undo", "deploy/busybox-demo", "--yes"]);
    assert!(ok(&out).contains("restored"), "{}", text(&out.stderr));
    let now = deployment(&cluster, &ns);
    assert_eq!(containers(&now)[0]["image"], image_before, "the image is restored");
    assert_eq!(now["spec"]["replicas"], 4, "the later scale survives");
}
