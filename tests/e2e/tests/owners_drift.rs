//! Issue #33 against the real cluster: `kubectl owners drift` reports every field owned by
//! a manager the ownership policy does not expect there, with the manager, its class and
//! the fix; a policy learned from today's owners passes; `--since` filters by the
//! managers' times; the JSON, YAML, JUnit and SARIF outputs parse, and the SARIF log is
//! valid against the OASIS SARIF 2.1.0 schema ([`fieldwise_e2e::sarif_schema`]). Each test
//! has its own namespace.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use fieldwise_e2e::{ok, require_cluster, run, sarif_schema, text, write_file, write_script, Cluster};
use serde_json::Value;

/// A private directory per test, for its policy files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-drift-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn drift(cluster: &Cluster, ns: &str, args: &[&str]) -> Output {
    run(cluster.plugin("kubectl-owners").args(["drift", "-n", ns]).args(args))
}

/// A Deployment applied server-side by `ci`.
fn apply_web(cluster: &Cluster, ns: &str) {
    let web = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\n  labels: {{app: web}}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: app\n        image: busybox:1.36\n        command: [sleep, \"3600\"]\n"
    );
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager", "ci", "-f", "-"], &web);
}

/// A policy whose only rule expects `ci` on Deployments, with `extra` appended to the rule.
fn ci_policy(dir: &Path, name: &str, extra: &str) -> String {
    let text = format!(
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: web-apps\n  match:\n    kinds: [apps/Deployment]\n  managers: [ci]\n{extra}"
    );
    write_file(dir, name, &text)
}

fn exit_code(out: &Output) -> Option<i32> {
    out.status.code()
}

/// `(field, manager, subresource, class, action, fix)` of each violation of the one object in a JSON report.
fn violations(report: &Value) -> Vec<(String, String, String, String, String, String)> {
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    report["objects"][0]["violations"]
        .as_array()
        .unwrap_or_else(|| panic!("no violations in {report}"))
        .iter()
        .map(|v| (s(v, "field"), s(v, "manager"), s(v, "subresource"), s(v, "class"), s(v, "action"), s(v, "fix")))
        .collect()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_label_a_scale_and_another_applier_are_reported_with_class_and_fix_and_a_learned_policy_passes() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift");
    let dir = scratch("report");
    apply_web(&cluster, &ns);

    // Learned from today's owners, then checked: clean.
    let learned = ok(&drift(&cluster, &ns, &["--learn"]));
    assert!(learned.contains("kind: OwnershipPolicy") && learned.contains("- ci\n"), "{learned}");
    let learned_path = write_file(&dir, "learned.yaml", &learned);
    let clean = drift(&cluster, &ns, &["--policy", &learned_path]);
    assert_eq!(exit_code(&clean), Some(0), "{}{}", text(&clean.stdout), text(&clean.stderr));

    // Three writers the policy does not expect.
    cluster.kubectl_ok(&["label", "-n", &ns, "deploy/web", "oncall=alice"]);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/web", "--replicas=3"]);
    let other = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\n  annotations: {{team: payments}}\n"
    );
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager", "other-team", "-f", "-"], &other);

    let policy = ci_policy(&dir, "ci.yaml", "");
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &policy, "-o", "json"]);
    assert_eq!(exit_code(&out), Some(3), "violations exit 3: {}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let transfer = format!("kubectl owners transfer deployment.apps/web -n {ns} --from kubectl-label --to ci");
    let row = |f: &str, m: &str, sub: &str, class: &str, action: &str, fix: &str| {
        (f.to_string(), m.to_string(), sub.to_string(), class.to_string(), action.to_string(), fix.to_string())
    };
    // In managedFields order, as the apiserver keeps it (appliers first).
    assert_eq!(
        violations(&report),
        [
            row(
                ".metadata.annotations.team",
                "other-team",
                "",
                "applier",
                "drop",
                "drop .metadata.annotations.team from what other-team applies"
            ),
            // kubectl scale by hand (through /scale): a person's one-off write, the core's one
            // classification says, so the fix hands the field to the applier.
            row(
                ".spec.replicas",
                "kubectl",
                "scale",
                "human",
                "transfer",
                &format!("kubectl owners transfer deployment.apps/web -n {ns} --from kubectl/scale --to ci")
            ),
            row(".metadata.labels.oncall", "kubectl-label", "", "human", "transfer", &transfer),
        ]
    );
    let object = &report["objects"][0];
    assert_eq!((object["apiVersion"].as_str(), object["kind"].as_str()), (Some("apps/v1"), Some("Deployment")));
    assert_eq!((object["namespace"].as_str(), object["name"].as_str()), (Some(ns.as_str()), Some("web")));
    let label = &object["violations"][2];
    assert_eq!((label["operation"].as_str(), label["value"].as_str()), (Some("Update"), Some("alice")));
    assert!(label["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{label}");
    let applied = &object["violations"][0];
    assert_eq!((applied["operation"].as_str(), applied["value"].as_str()), (Some("Apply"), Some("payments")));
    assert_eq!(object["violations"][1]["value"], 3);
    assert_eq!(report["summary"]["violations"], 3);
    assert_eq!(report["summary"]["objectsWithViolations"], 1);

    // The table: one heading per object, one row per violation, and the summary line.
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &policy, "--time", "none"]);
    let table = text(&out.stdout);
    assert_eq!(exit_code(&out), Some(3));
    assert!(table.starts_with(&format!("deployment.apps/web (namespace {ns}): 3 violations\nFIELD ")), "{table}");
    assert!(table.ends_with("3 violations in 1 of 1 object.\n"), "{table}");

    // Allowed and ignored fields pass.
    let allowing = ci_policy(
        &dir,
        "allowing.yaml",
        "  allowed:\n  - fields: [.spec.replicas]\n    managers: [kubectl]\n  - fields: [.metadata.annotations.*]\n    managers: [other-*]\n  ignored: [.metadata.labels.oncall]\n",
    );
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &allowing]);
    assert_eq!(exit_code(&out), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), "No violations in 1 object.\n");

    // Learned again from the drifted state, every type of the namespace: clean again.
    let learned = ok(&drift(&cluster, &ns, &["--learn"]));
    let learned_path = write_file(&dir, "learned-again.yaml", &learned);
    let out = drift(&cluster, &ns, &["--policy", &learned_path]);
    assert_eq!(exit_code(&out), Some(0), "{}{}\n{learned}", text(&out.stdout), text(&out.stderr));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_kubectl_edit_and_an_operators_update_are_reported_with_class_and_fix() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift-edit");
    let dir = scratch("edit");
    apply_web(&cluster, &ns);
    // kubectl edit, with an editor that changes the container's image.
    let editor = write_script(&dir, "editor.sh", "#!/bin/sh\nsed -i 's/busybox:1.36/busybox:1.37/' \"$1\"\n");
    let out = run(cluster.kubectl().env("KUBE_EDITOR", &editor).args(["edit", "-n", &ns, "deploy/web"]));
    assert!(out.status.success(), "kubectl edit: {}", text(&out.stderr));
    // A controller's write, as an operator updates the object (no controller-manager runs here).
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "deploy/web",
        "--field-manager",
        "web-operator",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"minReadySeconds":5}}"#,
    ]);

    let policy = ci_policy(&dir, "ci.yaml", "");
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &policy, "-o", "json"]);
    assert_eq!(exit_code(&out), Some(3), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let transfer = format!("kubectl owners transfer deployment.apps/web -n {ns} --from kubectl-edit --to ci");
    let row = |f: &str, m: &str, class: &str, action: &str, fix: &str| {
        (f.to_string(), m.to_string(), String::new(), class.to_string(), action.to_string(), fix.to_string())
    };
    assert_eq!(
        violations(&report),
        [
            row(".spec.template.spec.containers[name=\"app\"].image", "kubectl-edit", "human", "transfer", &transfer),
            row(
                ".spec.minReadySeconds",
                "web-operator",
                "controller",
                "allow",
                "allow web-operator on .spec.minReadySeconds in the policy"
            ),
        ]
    );
    assert_eq!(report["objects"][0]["violations"][0]["value"], "busybox:1.37");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_kustomization_selects_the_objects_it_builds() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift-kustomize");
    let dir = scratch("kustomize");
    apply_web(&cluster, &ns);
    let other =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  namespace: {ns}\ndata: {{a: b}}\n");
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager", "someone", "-f", "-"], &other);
    cluster.kubectl_ok(&["label", "-n", &ns, "deploy/web", "oncall=alice"]);
    // The kustomization builds the Deployment only (kubectl kustomize, as kubectl apply -k does).
    let base = dir.join("base");
    std::fs::create_dir_all(&base).unwrap();
    write_file(
        &base,
        "web.yaml",
        &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\n"),
    );
    write_file(&base, "kustomization.yaml", "resources:\n- web.yaml\n");
    let policy = ci_policy(&dir, "ci.yaml", "");
    let out = drift(&cluster, &ns, &["-k", base.to_str().unwrap(), "--policy", &policy, "-o", "json"]);
    assert_eq!(exit_code(&out), Some(3), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let objects: Vec<&str> =
        report["objects"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(objects, ["web"], "{report}");
    assert_eq!(violations(&report)[0].1, "kubectl-label");
    // -k names the objects: with -f, or a TYPE, it is refused with what to do.
    let both = drift(&cluster, &ns, &["-k", base.to_str().unwrap(), "-f", &policy, "--policy", &policy]);
    assert_eq!(exit_code(&both), Some(1));
    assert!(text(&both.stderr).contains("give either -f FILE or -k DIR, not both"), "{}", text(&both.stderr));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn since_keeps_only_managers_that_wrote_after_it() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift-since");
    let dir = scratch("since");
    apply_web(&cluster, &ns);
    cluster.kubectl_ok(&["label", "-n", &ns, "deploy/web", "oncall=alice"]);
    let labelled = cluster.get_json(&ns, "deploy/web");
    let label_time = labelled["metadata"]["managedFields"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["manager"] == "kubectl-label"))
        .and_then(|e| e["time"].as_str())
        .expect("the label's entry has a time")
        .to_string();
    // managedFields times have whole seconds: the annotation comes two seconds after.
    std::thread::sleep(Duration::from_millis(2100));
    cluster.kubectl_ok(&["annotate", "-n", &ns, "deploy/web", "note=hi"]);
    let cutoff = bump_one_second(&label_time);

    let policy = ci_policy(&dir, "ci.yaml", "");
    let managers = |args: &[&str]| {
        let out = drift(&cluster, &ns, &[&["deploy/web", "--policy", &policy, "-o", "json"], args].concat());
        assert_eq!(exit_code(&out), Some(3), "{}", text(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        violations(&report).into_iter().map(|v| v.1).collect::<Vec<_>>()
    };
    assert_eq!(managers(&[]), ["kubectl-label", "kubectl-annotate"]);
    assert_eq!(managers(&["--since", "1h"]), ["kubectl-label", "kubectl-annotate"]);
    assert_eq!(managers(&["--since", &cutoff]), ["kubectl-annotate"], "--since {cutoff}");
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &policy, "--since", "yesterday"]);
    assert_eq!(exit_code(&out), Some(1));
    assert!(text(&out.stderr).contains("--since \"yesterday\": expected a duration"), "{}", text(&out.stderr));
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

/// `2026-11-27T09:00:59Z` plus one second, as RFC 3339.
fn bump_one_second(time: &str) -> String {
    let (date, clock) = time.trim_end_matches('Z').split_once('T').unwrap();
    let parts: Vec<u64> = clock.split(':').map(|p| p.parse().unwrap()).collect();
    let seconds = parts[0] * 3600 + parts[1] * 60 + parts[2] + 1;
    assert!(seconds < 86_400, "the test does not cross midnight: {time}");
    format!("{date}T{:02}:{:02}:{:02}Z", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn junit_sarif_and_yaml_parse_and_secret_values_stay_hidden() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift-ci");
    let dir = scratch("ci");
    apply_web(&cluster, &ns);
    cluster.kubectl_ok(&["label", "-n", &ns, "deploy/web", "oncall=alice"]);
    cluster.kubectl_ok(&["create", "secret", "generic", "db", "-n", &ns, "--from-literal=pw=hunter2"]);
    let policy = write_file(
        &dir,
        "policy.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: web-apps\n  match: {kinds: [apps/Deployment]}\n  managers: [ci]\n- name: secrets\n  match: {kinds: [Secret]}\n  managers: [ci]\n",
    );
    let targets = ["deploy/web", "secret/db", "--policy", &policy];

    // JUnit: one test case per object, each failed with its violations.
    let out = drift(&cluster, &ns, &[&targets[..], &["-o", "junit"]].concat());
    assert_eq!(exit_code(&out), Some(3));
    let xml = text(&out.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("JUnit is not XML: {e}\n{xml}"));
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).expect("a testsuite");
    assert_eq!((suite.attribute("tests"), suite.attribute("failures")), (Some("2"), Some("2")));
    let cases: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| (n.attribute("classname").unwrap(), n.attribute("name").unwrap()))
        .collect();
    let web = format!("{ns}/web");
    let db = format!("{ns}/db");
    assert_eq!(cases, [("deployment.apps", web.as_str()), ("secret", db.as_str())]);

    // SARIF 2.1.0: the required fields, one result per violation, each rule declared.
    let out = drift(&cluster, &ns, &[&targets[..], &["-o", "sarif"]].concat());
    assert_eq!(exit_code(&out), Some(3));
    let log: Value = serde_json::from_slice(&out.stdout).expect("SARIF is JSON");
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().is_some_and(|s| s.contains("sarif-2.1.0")), "{log}");
    let run = &log["runs"][0];
    assert!(run["tool"]["driver"]["name"].is_string(), "a run names its tool");
    let rules: Vec<&str> =
        run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(rules, ["web-apps", "secrets", "default"]);
    let results = run["results"].as_array().unwrap();
    let rule_ids: Vec<&str> = results.iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    assert_eq!(
        rule_ids,
        ["web-apps", "secrets", "secrets"],
        "the label; the Secret's data.pw and type from kubectl-create"
    );
    for result in results {
        assert!(result["message"]["text"].is_string(), "every result has message.text: {result}");
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index], result["ruleId"].as_str().unwrap());
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str(),
            Some(policy.as_str())
        );
    }
    // The whole log against the OASIS SARIF 2.1.0 schema, by a JSON Schema validator; a log the
    // schema refuses (a level SARIF does not know, a result without its message) fails it.
    if let Err(errors) = sarif_schema::validate(&out.stdout) {
        panic!("owners drift -o sarif is not valid SARIF 2.1.0:\n{errors}\n{log}");
    }
    let mut broken = log.clone();
    broken["runs"][0]["results"][1]["level"] = "fatal".into();
    broken["runs"][0]["results"][2].as_object_mut().unwrap().remove("message");
    let errors = sarif_schema::validate(broken.to_string().as_bytes()).expect_err("a broken log is refused");
    for pointer in ["/runs/0/results/1/level", "/runs/0/results/2"] {
        assert!(errors.contains(pointer), "the validator names {pointer}: {errors}");
    }

    // YAML parses to the JSON document; the Secret's value is hidden in every output.
    let yaml = ok_or_3(&drift(&cluster, &ns, &[&targets[..], &["-o", "yaml"]].concat()));
    let from_yaml: Value = serde_yaml::from_str(&yaml).expect("YAML report");
    let json = ok_or_3(&drift(&cluster, &ns, &[&targets[..], &["-o", "json"]].concat()));
    assert_eq!(from_yaml, serde_json::from_str::<Value>(&json).unwrap());
    let secret = &from_yaml["objects"][1]["violations"];
    let pw = secret.as_array().unwrap().iter().find(|v| v["field"] == ".data.pw").expect("data.pw reported");
    assert_eq!(pw["value"], "*** (7 bytes)");
    let table = ok_or_3(&drift(&cluster, &ns, &targets));
    for output in [&xml, &out_text(&log), &yaml, &json, &table] {
        assert!(
            !output.contains("hunter2") && !output.contains("aHVudGVyMg=="),
            "a Secret value was printed: {output}"
        );
    }

    // Objects named by files are checked as when named on the command line.
    let manifest = write_file(
        &dir,
        "web.yaml",
        &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\n"),
    );
    let out = drift(&cluster, &ns, &["-f", &manifest, "--policy", &policy, "--time", "none"]);
    assert_eq!(exit_code(&out), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stdout).ends_with("1 violation in 1 of 1 object.\n"), "{}", text(&out.stdout));

    // --emit: the allowed fields for Argo CD and Flux, as YAML, without reading the cluster.
    let allowing = write_file(
        &dir,
        "allowing.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- match: {kinds: [apps/Deployment]}\n  managers: [ci]\n  allowed:\n  - fields: [.spec.replicas]\n    managers: [keda-operator]\n",
    );
    let argo: Value =
        serde_yaml::from_str(&ok(&drift(&cluster, &ns, &["--policy", &allowing, "--emit", "argocd"]))).unwrap();
    assert_eq!(
        argo,
        serde_json::json!({"ignoreDifferences": [{"group": "apps", "kind": "Deployment",
            "jqPathExpressions": [".spec.replicas"], "managedFieldsManagers": ["keda-operator"]}]})
    );
    let flux: Value =
        serde_yaml::from_str(&ok(&drift(&cluster, &ns, &["--policy", &allowing, "--emit", "flux"]))).unwrap();
    assert_eq!(
        flux,
        serde_json::json!({"driftDetection": {"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"],
            "target": {"group": "apps", "kind": "Deployment"}}]}})
    );

    // A policy with an error names the file, the line and the field; exit 1.
    let bad = write_file(
        &dir,
        "bad.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: a\n  managers: ci\n",
    );
    let out = drift(&cluster, &ns, &["deploy/web", "--policy", &bad]);
    assert_eq!(exit_code(&out), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: {bad}: line 5: rules[0].managers: expected a list of manager names, globs or classes (human, controller, applier)\n")
    );
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}

fn ok_or_3(out: &Output) -> String {
    assert_eq!(exit_code(out), Some(3), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn out_text(value: &Value) -> String {
    value.to_string()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_type_alone_is_listed_as_kubectl_get_lists_it_and_a_query_selects_from_it() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("drift-types");
    let dir = scratch("types");
    for name in ["a", "b", "c"] {
        cluster.kubectl_ok(&["create", "configmap", name, "-n", &ns, "--from-literal=k=v"]);
    }
    // A human's label on two of them: foreign to a policy expecting only kubectl-create.
    cluster.kubectl_ok(&["label", "-n", &ns, "cm/a", "cm/b", "pick=yes"]);
    let policy = write_file(
        &dir,
        "policy.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: cms\n  match: {kinds: [ConfigMap]}\n  managers: [kubectl-create]\n",
    );
    let names = |out: &Output| -> Vec<String> {
        let report: Value = serde_json::from_str(&text(&out.stdout)).expect("JSON");
        let mut names: Vec<String> =
            report["objects"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap().to_string()).collect();
        names.sort();
        names
    };
    // Every ConfigMap of the namespace (its kube-root-ca.crt too, which the defaults allow),
    // the type named twice listed once.
    let out = drift(&cluster, &ns, &["cm,configmaps", "--policy", &policy, "-o", "json"]);
    assert_eq!(exit_code(&out), Some(3), "{}", text(&out.stderr));
    assert_eq!(names(&out), ["a", "b"]);
    let report: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(report["summary"]["objects"], 4, "a, b, c and kube-root-ca.crt, each once: {report}");
    // -l and --field-selector select from the type; a selector matching nothing is clean.
    let selected = ["cm", "-l", "pick=yes", "--field-selector", "metadata.name!=b"];
    let out = drift(&cluster, &ns, &[&selected[..], &["--policy", &policy, "-o", "json"]].concat());
    assert_eq!(exit_code(&out), Some(3));
    assert_eq!(names(&out), ["a"]);
    let out = drift(&cluster, &ns, &["cm", "-l", "pick=no", "--policy", &policy]);
    assert_eq!(exit_code(&out), Some(0), "{}", text(&out.stdout));
    // A type the server does not have is the error kubectl gives, before anything is listed.
    let out = drift(&cluster, &ns, &["nosuchtype", "--policy", &policy]);
    assert_eq!(exit_code(&out), Some(1));
    assert!(
        text(&out.stderr).starts_with("error: the server doesn't have a resource type \"nosuchtype\""),
        "{}",
        text(&out.stderr)
    );
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}
