//! Re-planning after a lost race keeps what the preview showed, on the real cluster:
//! an entry inserted into a keyed list by position lands where the preview put it
//! or the write stops with exit 3, never elsewhere (#22.1); positions in lists with
//! a composite key are guarded on every key field (#25.5); and the write is guarded
//! by the fields it depends on, so a concurrent writer of other fields costs nothing
//! while one of the same fields stops it (#22.10).
//!
//! The concurrent writer is `FIELDWISE_HOOK_BEFORE_WRITE`: it runs once, after the
//! preview (and its server dry run) and before the write. The Deployment and the race
//! helpers are `fieldwise_e2e::keyed_race`, which the reliability suite repeats.

use std::path::PathBuf;
use std::process::Output;

use fieldwise_e2e::keyed_race::{
    concurrent_json_patch, json_patch_racing, names, safe_patch_writes as writes, web, APPEND_LATE, ENV, INIT,
    INSERT_BACKUP_DB_SECOND, INSERT_ENV_B_SECOND, INSERT_ENV_Z_FIRST, INSERT_HOOK_INIT_FIRST,
};
use fieldwise_e2e::{require_cluster, run, text};

/// A private, empty backup directory per test.
fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-replan-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn describe(out: &Output) -> String {
    format!("exit {:?}\nstdout: {}\nstderr: {}", out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_init_container_inserted_by_index_stops_when_another_insert_would_move_it() {
    let cluster = require_cluster!();
    let ns = web(&cluster, "fw-replan-init");
    let data = data_dir("init");
    // Previewed after migrate-db; meanwhile hook-init is inserted first. Re-planned, `add .../1`
    // would put backup-db before migrate-db: the write stops and names the entry.
    let hook = concurrent_json_patch(&ns, INSERT_HOOK_INIT_FIRST);
    let mark = cluster.audit_mark();
    let out = json_patch_racing(&cluster, &data, &ns, INSERT_BACKUP_DB_SECOND, &hook);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(r#"[name="backup-db"] would now come before [name="migrate-db"]; the preview put it after"#),
        "{stderr}"
    );
    assert_eq!(names(&cluster, &ns, INIT), ["hook-init", "migrate-db", "warm-cache"], "nothing of ours written");
    // The one write sent failed its guard (422): the membership of the list moved.
    assert_eq!(writes(&cluster, mark, &ns), [422], "{stderr}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_init_container_inserted_by_index_lands_as_previewed_when_another_entry_is_appended() {
    let cluster = require_cluster!();
    let ns = web(&cluster, "fw-replan-append");
    let data = data_dir("append");
    let hook = concurrent_json_patch(&ns, APPEND_LATE);
    let mark = cluster.audit_mark();
    let out = json_patch_racing(&cluster, &data, &ns, INSERT_BACKUP_DB_SECOND, &hook);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(names(&cluster, &ns, INIT), ["migrate-db", "backup-db", "warm-cache", "late"]);
    // The first write's guard failed (the list grew), the re-plan kept backup-db after
    // migrate-db, and the second write landed.
    assert_eq!(writes(&cluster, mark, &ns), [422, 200]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_env_entry_inserted_by_index_stops_when_another_insert_would_move_it() {
    let cluster = require_cluster!();
    let ns = web(&cluster, "fw-replan-env");
    let data = data_dir("env");
    // B goes between A and C (C refers to B); meanwhile Z is inserted first.
    let hook = concurrent_json_patch(&ns, INSERT_ENV_Z_FIRST);
    let out = json_patch_racing(&cluster, &data, &ns, INSERT_ENV_B_SECOND, &hook);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains(r#"[name="B"] would now come before [name="A"]; the preview put it after"#),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(names(&cluster, &ns, ENV), ["Z", "A", "C"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_position_in_ports_is_guarded_on_container_port_and_protocol() {
    let cluster = require_cluster!();
    let ns = web(&cluster, "fw-replan-ports");
    let data = data_dir("ports");
    let ours = r#"[{"op":"add","path":"/spec/template/spec/containers/0/ports/1/name","value":"dns-udp"}]"#;
    // Meanwhile the two ports swap places: position 1 is now 53/TCP, same containerPort.
    let swap = r#"[{"op":"move","from":"/spec/template/spec/containers/0/ports/1","path":"/spec/template/spec/containers/0/ports/0"}]"#;
    let out = json_patch_racing(&cluster, &data, &ns, ours, &concurrent_json_patch(&ns, swap));
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("list keyed by containerPort and protocol"), "{stderr}");
    let ports = cluster.get_json(&ns, "deploy/web")["spec"]["template"]["spec"]["containers"][0]["ports"].clone();
    assert_eq!(ports[0]["protocol"], "UDP");
    assert!(ports.as_array().into_iter().flatten().all(|p| p.get("name").is_none()), "no port named: {ports}");
    // Without the race, the guarded write names the UDP port.
    let out = json_patch_racing(
        &cluster,
        &data,
        &ns,
        r#"[{"op":"add","path":"/spec/template/spec/containers/0/ports/0/name","value":"dns-udp"}]"#,
        "true",
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let ports = cluster.get_json(&ns, "deploy/web")["spec"]["template"]["spec"]["containers"][0]["ports"].clone();
    assert_eq!((ports[0]["protocol"].clone(), ports[0]["name"].clone()), ("UDP".into(), "dns-udp".into()));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_concurrent_writer_of_another_field_costs_no_retry_and_one_of_the_same_field_stops_the_write() {
    let cluster = require_cluster!();
    let ns = web(&cluster, "fw-replan-fields");
    let data = data_dir("fields");
    let strategic = |patch: &str, hook: &str| {
        run(cluster
            .plugin("kubectl-safe_patch")
            .env("FIELDWISE_DATA_DIR", &data)
            .env("FIELDWISE_HOOK_BEFORE_WRITE", hook)
            .args(["-n", &ns, "deploy/web", "-p", patch, "--yes"]))
    };
    // Another writer scales the Deployment while we change the app's image: one PATCH, accepted.
    let mark = cluster.audit_mark();
    let image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"busybox:1.36"}]}}}}"#;
    let out = strategic(image, &format!("kubectl scale -n {ns} deploy/web --replicas=4 >/dev/null"));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let d = cluster.get_json(&ns, "deploy/web");
    assert_eq!(
        (d["spec"]["replicas"].clone(), d["spec"]["template"]["spec"]["containers"][0]["image"].clone()),
        (4.into(), "busybox:1.36".into())
    );
    assert_eq!(writes(&cluster, mark, &ns), [200], "guarded by the image, not the resourceVersion");
    // Another writer sets the image we change: the guard fails, the re-plan would overwrite theirs.
    let mark = cluster.audit_mark();
    let hook = format!("kubectl set image -n {ns} deploy/web app=busybox:1.37 >/dev/null");
    let out =
        strategic(r#"{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"busybox:1.35"}]}}}}"#, &hook);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    assert!(
        text(&out.stderr)
            .contains(r#"would now do something else at .spec.template.spec.containers[name="app"].image"#),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        cluster.get_json(&ns, "deploy/web")["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox:1.37"
    );
    assert_eq!(writes(&cluster, mark, &ns), [422]);
}

/// Issue #28.7: another writer's change between the read the preview is planned on and the
/// server dry run is not shown as this patch's: the dry run is pinned to the version planned
/// against (re-read and re-planned when it moved), so the preview's diff holds only this
/// patch's label and no "differs from the local prediction" note appears.
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_change_made_before_the_dry_run_is_not_shown_as_the_patch() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-replan-dry-run-base");
    let data = data_dir("dry-run-base");
    cluster.kubectl_ok(&["create", "configmap", "base", "-n", &ns, "--from-literal=a=1"]);
    let hook = format!("kubectl label configmap base -n {ns} other-writer=was-here >/dev/null");
    let out = run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", &data)
        .env("FIELDWISE_HOOK_BEFORE_DRY_RUN", &hook)
        .args(["-n", &ns, "cm/base", "--type", "merge", "-p", r#"{"metadata":{"labels":{"mine":"yes"}}}"#, "--yes"]));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("differs from the local prediction"), "{stderr}");
    let added: Vec<&str> = stderr.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).collect();
    assert!(added.iter().any(|l| l.contains("mine: ")), "{stderr}");
    assert!(!added.iter().any(|l| l.contains("other-writer")), "another writer's label shown as added: {stderr}");
    let labels = cluster.get_json(&ns, "cm/base")["metadata"]["labels"].clone();
    assert_eq!(labels, serde_json::json!({"mine": "yes", "other-writer": "was-here"}));
}
