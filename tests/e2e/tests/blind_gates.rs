//! Issue #44 point 2 against the real cluster: a gate that could not look fails. Run with
//! the token of a ServiceAccount bound to nothing (it may read no object) or to a Role that
//! lets it read ConfigMaps only, `owners drift`, `last-applied scan`, `owners plan` and
//! `owners watch` exit 1 and name in every output format what they could not read;
//! `--allow-unreadable` lets them pass and they still name it. `owners watch cm/nosuch`
//! refuses as `kubectl get -w` does. Each test has its own namespace and accounts.

use std::process::Output;

use fieldwise_e2e::{require_cluster, run, sarif_schema, text, write_file, Cluster};
use serde_json::Value;

/// A private directory per test, for its policy and manifest files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-blind-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn describe(out: &Output) -> String {
    format!("exit {:?}\nstdout: {}\nstderr: {}", out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// A policy that expects `kubectl-create` on ConfigMaps (what `kubectl create cm` writes).
fn policy(dir: &std::path::Path) -> String {
    write_file(
        dir,
        "policy.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: settings\n  match:\n    kinds: [ConfigMap]\n  managers: [kubectl-create]\n",
    )
}

/// A token that may get, list and watch ConfigMaps in `ns`, and nothing else.
fn configmap_reader(cluster: &Cluster, ns: &str) -> String {
    let token = cluster.service_account_token(ns, "cm-reader");
    cluster.kubectl_ok(&["create", "role", "cm-read", "-n", ns, "--verb=get,list,watch", "--resource=configmaps"]);
    cluster.kubectl_ok(&[
        "create",
        "rolebinding",
        "cm-read",
        "-n",
        ns,
        "--role=cm-read",
        &format!("--serviceaccount={ns}:cm-reader"),
    ]);
    token
}

fn owners(cluster: &Cluster, ns: &str, token: &str, args: &[&str]) -> Output {
    run(cluster.plugin("kubectl-owners").args(["-n", ns, "--token", token]).args(args))
}

fn last_applied(cluster: &Cluster, ns: &str, token: &str, args: &[&str]) -> Output {
    run(cluster.plugin("kubectl-last_applied").args(["-n", ns, "--token", token]).args(args))
}

/// The `resource` of each entry of a document's list.
fn resources(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|u| u["resource"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn drift_that_may_read_only_configmaps_fails_and_every_format_names_secrets() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("blind-drift");
    let dir = scratch("drift");
    let policy = policy(&dir);
    cluster.kubectl_ok(&["create", "configmap", "settings", "-n", &ns, "--from-literal=a=b"]);
    let token = configmap_reader(&cluster, &ns);
    let check = |extra: &[&str]| {
        owners(&cluster, &ns, &token, &[&["drift", "cm,secrets", "--policy", &policy], extra].concat())
    };

    // Text: the ConfigMaps (settings, and kube-root-ca.crt every namespace has) are checked,
    // Secrets are named, and the summary is not a clean one.
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Not read (1 type): secrets (Forbidden); the check is incomplete."), "{stdout}");
    assert!(stdout.contains("0 violations in the 2 objects read; 1 type not read."), "{stdout}");
    assert!(!stdout.contains("No violations"), "{stdout}");
    assert!(text(&out.stderr).contains("error: could not read 1 type: secrets;"), "{}", describe(&out));

    // JSON and YAML: the unread list, with the server's reason.
    for format in ["json", "yaml"] {
        let out = check(&["-o", format]);
        assert_eq!(out.status.code(), Some(1), "{format}: {}", describe(&out));
        let doc: Value = if format == "json" {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            serde_yaml::from_slice(&out.stdout).unwrap()
        };
        assert_eq!(resources(&doc["unread"]), ["secrets"], "{doc}");
        assert!(doc["unread"][0]["reason"].as_str().unwrap().starts_with("Forbidden: secrets is forbidden"), "{doc}");
        assert_eq!(doc["summary"]["objects"], 2, "{doc}");
        assert_eq!(doc["summary"]["complete"], false, "{doc}");
    }

    // JUnit: the ConfigMaps passed, Secrets in error.
    let out = check(&["-o", "junit"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let xml = text(&out.stdout);
    assert!(xml.contains("tests=\"3\" failures=\"0\" errors=\"1\">"), "{xml}");
    assert!(xml.contains("<testcase classname=\"secrets\" name=\"(every object)\">"), "{xml}");
    assert!(xml.contains("<error message=\"not read: Forbidden: secrets is forbidden"), "{xml}");

    // SARIF: a failed execution with a notification naming Secrets, valid against the schema.
    let out = check(&["-o", "sarif"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{log}");
    let note = &invocation["toolExecutionNotifications"][0];
    assert_eq!(note["level"], "error", "{log}");
    assert!(note["message"]["text"].as_str().unwrap().starts_with("secrets was not read: Forbidden"), "{log}");
    if let Err(errors) = sarif_schema::validate(&out.stdout) {
        panic!("owners drift -o sarif with a type not read is not valid SARIF 2.1.0:\n{errors}\n{log}");
    }

    // Allowed: exit by the violations alone (none), still named everywhere.
    let out = check(&["--allow-unreadable"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(text(&out.stdout).contains("Not read (1 type): secrets (Forbidden); allowed by --allow-unreadable."));
    let out = check(&["--allow-unreadable", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(resources(&doc["unread"]), ["secrets"], "{doc}");
    let out = check(&["--allow-unreadable", "-o", "junit"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let xml = text(&out.stdout);
    assert!(xml.contains("tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"1\">"), "{xml}");
    let out = check(&["--allow-unreadable", "-o", "sarif"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(log["runs"][0]["invocations"][0]["executionSuccessful"], true, "{log}");
    assert_eq!(log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["level"], "warning", "{log}");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn drift_of_named_objects_names_the_missing_and_the_forbidden_one() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("blind-drift-named");
    let dir = scratch("drift-named");
    let policy = policy(&dir);
    cluster.kubectl_ok(&["create", "configmap", "settings", "-n", &ns, "--from-literal=a=b"]);
    cluster.kubectl_ok(&["create", "secret", "generic", "db", "-n", &ns, "--from-literal=p=q"]);
    let token = configmap_reader(&cluster, &ns);
    let args = ["drift", "cm/settings", "cm/nosuch", "secret/db", "--policy", &policy, "-o", "json"];
    let out = owners(&cluster, &ns, &token, &args);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unread: Vec<(String, String, String)> = doc["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            let s = |k: &str| u[k].as_str().unwrap_or_default().to_string();
            (s("resource"), s("name"), s("reason").split(':').next().unwrap_or_default().to_string())
        })
        .collect();
    let expected = [("configmaps", "nosuch", "NotFound"), ("secrets", "db", "Forbidden")]
        .map(|(r, n, why)| (r.to_string(), n.to_string(), why.to_string()));
    assert_eq!(unread, expected, "{doc}");
    assert_eq!(doc["summary"]["objects"], 1, "{doc}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "could not read 2 objects: configmaps/nosuch in namespace {ns}, secrets/db in namespace {ns}"
        )),
        "{stderr}"
    );
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn scan_that_may_read_only_configmaps_fails_and_every_format_names_secrets() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("blind-scan");
    cluster.kubectl_ok(&["create", "configmap", "settings", "-n", &ns, "--from-literal=a=b"]);
    let token = configmap_reader(&cluster, &ns);
    let scan = |extra: &[&str]| last_applied(&cluster, &ns, &token, &[&["scan", "cm", "secrets"], extra].concat());

    let out = scan(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Not read (1 type): secrets (Forbidden); the check is incomplete."), "{stdout}");
    // settings (by kubectl create, no annotation: missing) and kube-root-ca.crt.
    assert!(stdout.contains("1 finding in the 2 objects of 1 types read; 1 type not read."), "{stdout}");
    assert!(!stdout.contains("No last-applied problems"), "{stdout}");
    assert!(text(&out.stderr).contains("error: could not read 1 type: secrets;"), "{}", describe(&out));
    for format in ["json", "yaml"] {
        let out = scan(&["-o", format]);
        assert_eq!(out.status.code(), Some(1), "{format}: {}", describe(&out));
        let doc: Value = if format == "json" {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            serde_yaml::from_slice(&out.stdout).unwrap()
        };
        assert_eq!(resources(&doc["skipped"]), ["secrets"], "{doc}");
    }
    let out = scan(&["--json-lines"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let records: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let skipped: Vec<&Value> = records.iter().filter_map(|r| r.get("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{records:?}");
    assert_eq!(skipped[0]["resource"], "secrets");
    // -o name has only names: what was not read is on stderr, and the exit code says it.
    let out = scan(&["-o", "name"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("skipped secrets: Forbidden"), "{}", describe(&out));

    let out = scan(&["--allow-unreadable"]);
    assert_eq!(out.status.code(), Some(3), "kubectl create leaves no annotation (a finding): {}", describe(&out));
    assert!(text(&out.stdout).contains("Not read (1 type): secrets (Forbidden); allowed by --allow-unreadable."));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn plan_of_an_object_the_account_may_not_read_is_not_a_clean_plan() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("blind-plan");
    let dir = scratch("plan");
    cluster.kubectl_ok(&["create", "secret", "generic", "db", "-n", &ns, "--from-literal=p=q"]);
    let token = configmap_reader(&cluster, &ns);
    let file = write_file(
        &dir,
        "db.yaml",
        &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: {ns}\nstringData:\n  p: r\n"),
    );
    let plan = |extra: &[&str]| owners(&cluster, &ns, &token, &[&["plan", "-f", &file], extra].concat());

    let out = plan(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stdout).contains(&format!("Not read (1 object): secrets/db in namespace {ns} (Forbidden)")),
        "{}",
        describe(&out)
    );
    assert!(text(&out.stderr).contains(&format!("could not read 1 object: secrets/db in namespace {ns}")));
    let out = plan(&["-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(resources(&doc["unread"]), ["secrets"], "{doc}");
    assert_eq!(doc["summary"]["unread"], 1, "{doc}");
    let out = plan(&["-o", "junit"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stdout).contains("errors=\"1\""), "{}", describe(&out));

    let out = plan(&["--allow-unreadable", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(resources(&doc["unread"]), ["secrets"], "{doc}");
    // No Secret value in any output.
    for out in [plan(&[]), plan(&["-o", "json"])] {
        assert!(
            !text(&out.stdout).contains("\"r\"") && !text(&out.stderr).contains("stringData"),
            "{}",
            describe(&out)
        );
    }
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn watching_a_missing_object_or_a_forbidden_type_is_refused_unless_allowed() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("blind-watch");
    let admin = |args: &[&str]| run(cluster.plugin("kubectl-owners").args(["-n", &ns]).args(args));

    // kubectl get -w on a missing name fails with NotFound; so does the watch.
    let kubectl = run(cluster.kubectl().args(["get", "-w", "cm/nosuch", "-n", &ns]));
    assert_eq!(kubectl.status.code(), Some(1), "{}", describe(&kubectl));
    let out = admin(&["watch", "cm/nosuch", "--for", "20s"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("error: could not read 1 object: configmaps/nosuch in namespace {ns};")),
        "{stderr}"
    );
    assert!(!stderr.contains("Watching"), "{stderr}");

    // Allowed: it waits for the object and names it as not there.
    let out = admin(&["watch", "cm/nosuch", "--for", "2s", "--allow-unreadable"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Not read (1 object): configmaps/nosuch in namespace {ns} (NotFound); allowed by --allow-unreadable."
        )),
        "{stderr}"
    );
    let out = admin(&["watch", "cm/nosuch", "--for", "2s", "--allow-unreadable", "-o", "json"]);
    let summary: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["unread"][0]["name"], "nosuch", "{summary}");

    // A type the account may not list or watch.
    let token = cluster.service_account_token(&ns, "nobody");
    let out = owners(&cluster, &ns, &token, &["watch", "cm", "--all", "--for", "20s"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("could not read 1 type: configmaps;"), "{}", describe(&out));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}
