//! `kubectl owners plan` against the real cluster: the cases the single-object
//! `--conflicts` got wrong (status of custom resources with a status subresource,
//! `before-first-apply`, schema refusals), directories that hold more than objects,
//! `-k`, the fields that survive a removal because another manager co-owns them,
//! the machine outputs and exit codes, Secrets, and a generated corpus of applies
//! whose plans agree with the apiserver's dry runs field for field, and a corpus of real-world
//! manifests (the Kubernetes module's) taken from client-side to server-side apply.

#[allow(dead_code)]
#[path = "owners/scenarios.rs"]
mod scenarios;

#[path = "owners_plan/corpus.rs"]
mod corpus;

#[path = "owners_plan/real_world.rs"]
mod real_world;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use fieldwise_e2e::{eventually, fixture, install_widget_crd, require_cluster, run, text, write_file, Cluster};
use serde_json::Value;

/// `kubectl-owners plan -n NAMESPACE`, run directly.
fn plan(cluster: &Cluster, namespace: &str) -> Command {
    let mut cmd = cluster.plugin("kubectl-owners");
    cmd.args(["plan", "-n", namespace]);
    cmd
}

/// A private directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-plan-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// The plan's JSON document, asserting the exit code.
fn plan_json(out: &Output, code: i32) -> Value {
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(code), "stdout: {stdout}\nstderr: {}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}"))
}

/// The object named `name` in a plan document.
fn object<'v>(doc: &'v Value, name: &str) -> &'v Value {
    let objects = doc["objects"].as_array().expect("objects");
    objects.iter().find(|o| o["name"] == name).unwrap_or_else(|| panic!("no {name} in {objects:#?}"))
}

fn fields(list: &Value) -> Vec<String> {
    list.as_array().expect("a list").iter().map(|c| c["field"].as_str().unwrap_or_default().to_string()).collect()
}

/// Asserts the apiserver's dry run was compared with the prediction and agreed.
fn assert_checked(item: &Value) {
    let v = &item["verification"];
    assert!(v["checked"] == true && v["agrees"] == true, "not verified: {item:#}");
}

/// Installs the Gadget custom resource (two served versions, status and scale
/// subresources) and waits until both versions' schemas are published.
fn install_gadget_crd(cluster: &Cluster) {
    let file = fixture("gadget-crd.yaml");
    cluster.kubectl_ok(&["apply", "--server-side", "--force-conflicts", "-f", file.to_str().expect("UTF-8 path")]);
    cluster.kubectl_ok(&["wait", "--for=condition=Established", "crd/gadgets.fieldwise.test", "--timeout=60s"]);
    for version in ["v1", "v1beta1"] {
        eventually("the Gadget schema at /openapi/v3", Duration::from_secs(60), || {
            let out =
                run(cluster.kubectl().args(["get", "--raw", &format!("/openapi/v3/apis/fieldwise.test/{version}")]));
            (out.status.success() && text(&out.stdout).contains(&format!("test.fieldwise.{version}.Gadget")))
                .then_some(())
        });
    }
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn status_of_a_custom_resource_with_a_status_subresource_is_ignored_not_a_conflict() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let ns = cluster.namespace("fw-plan-status");
    let base = "apiVersion: fieldwise.test/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 1, mode: a}\n";
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager=team", "-n", &ns, "-f", "-"], base);
    cluster.kubectl_ok(&[
        "patch",
        "-n",
        &ns,
        "widget/w",
        "--subresource=status",
        "--type=merge",
        "--field-manager=widget-controller",
        "-p",
        r#"{"status":{"phase":"Ready","replicas":1}}"#,
    ]);
    let dir = scratch("status");
    let file = write_file(&dir, "w.yaml", &format!("{base}status: {{phase: Done, replicas: 7}}\n"));
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &file, "--field-manager", "team", "-o", "json"])), 0);
    let w = object(&doc, "w");
    assert_eq!(fields(&w["conflicts"]), Vec::<String>::new(), "{w:#}");
    assert_checked(w);
    // The single-object form agrees, and so does the server.
    let out = run(cluster.plugin("kubectl-owners").args([
        "-n",
        &ns,
        "--conflicts",
        "-f",
        &file,
        "--field-manager",
        "team",
        "--verify",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("verified"), "{}", text(&out.stdout));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_object_without_managed_fields_conflicts_with_before_first_apply() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-bfa");
    cluster.kubectl_ok(&["create", "configmap", "-n", &ns, "cfg", "--from-literal=a=1", "--from-literal=b=2"]);
    cluster.kubectl_ok(&["create", "deployment", "-n", &ns, "web", "--image=busybox:1.36", "--replicas=2"]);
    for what in ["configmap/cfg", "deployment/web"] {
        cluster.kubectl_ok(&["patch", "-n", &ns, what, "--type=merge", "-p", r#"{"metadata":{"managedFields":[{}]}}"#]);
        let live = cluster.get_json(&ns, what);
        assert!(live["metadata"].get("managedFields").is_none(), "{what} still has managedFields");
    }
    let dir = scratch("bfa");
    let changed = write_file(
        &dir,
        "changed.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"9\", c: \"3\"}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  \
         template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: busybox, image: \"busybox:1.37\"}]\n",
    );
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &changed, "--field-manager", "ci", "-o", "json"])), 3);
    let cfg = object(&doc, "cfg");
    assert_eq!(fields(&cfg["conflicts"]), [".data.a"], "{cfg:#}");
    let conflict = &cfg["conflicts"][0];
    assert_eq!(
        (&conflict["manager"], &conflict["operation"], &conflict["class"], &conflict["fix"]),
        (&"before-first-apply".into(), &"Update".into(), &"human".into(), &"force".into())
    );
    assert_eq!((&conflict["live"], &conflict["yours"]), (&"1".into(), &"9".into()));
    assert_eq!(cfg["beforeFirstApply"], true);
    assert_checked(cfg);
    let web = object(&doc, "web");
    assert_eq!(fields(&web["conflicts"]), [".spec.template.spec.containers[name=\"busybox\"].image"], "{web:#}");
    assert_checked(web);
    // The same values are shared, not conflicts.
    let same =
        write_file(&dir, "same.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"1\"}\n");
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &same, "--field-manager", "ci", "-o", "json"])), 0);
    let cfg = object(&doc, "cfg");
    assert_eq!(fields(&cfg["shared"]), [".data.a"], "{cfg:#}");
    assert_checked(cfg);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn schema_refusals_are_reported_per_object_never_as_clean() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-refused");
    let dir = scratch("refused");
    let deployment = |name: &str, extra: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  {extra}\n  selector: {{matchLabels: {{app: x}}}}\n  \
             template:\n    metadata: {{labels: {{app: x}}}}\n    spec:\n      containers: [{{name: c, image: busybox}}]\n"
        )
    };
    write_file(&dir, "a-undeclared.yaml", &deployment("undeclared", "replicass: 2"));
    write_file(&dir, "b-wrong-type.yaml", &deployment("wrong-type", "replicas: two"));
    write_file(&dir, "c-fine.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {k: v}\n");
    write_file(
        &dir,
        "d-duplicate.yaml",
        &deployment("duplicate", "replicas: 1").replace(
            "{name: c, image: busybox}",
            "{name: c, image: busybox, env: [{name: X, value: \"1\"}, {name: X, value: \"2\"}]}",
        ),
    );
    let out = run(plan(&cluster, &ns).args(["-f", dir.to_str().unwrap()]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("deployment.apps/undeclared") && stdout.contains("refused by the server"), "{stdout}");
    assert!(stdout.contains("replicass"), "the server's reason names the field: {stdout}");
    assert!(stdout.contains("Plan: 4 objects, 0 conflicting, 3 refused, 1 new."), "{stdout}");
    // The lint says why the duplicate is refused, before the server's words.
    assert!(
        stdout.contains("lint: .spec.template.spec.containers[name=\"c\"].env has two entries for [name=\"X\"]"),
        "{stdout}"
    );
    assert!(!stdout.contains("clean"), "{stdout}");
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", dir.to_str().unwrap(), "-o", "json"])), 3);
    // The apiserver refuses a server-side apply that does not fit the schema while it builds
    // the typed patch (500, "failed to create typed patch object"), before any conflict.
    for (name, field) in
        [("undeclared", ".spec.replicass"), ("wrong-type", ".spec.replicas"), ("duplicate", "duplicate entries")]
    {
        let item = object(&doc, name);
        let refused = &item["refused"];
        assert!(refused["code"].as_u64().unwrap_or_default() >= 400, "{name}: {refused:#}");
        assert!(refused["message"].as_str().unwrap().contains(field), "{name}: {refused:#}");
        assert_checked(item);
    }
    assert_eq!(object(&doc, "fine")["new"], true);
    assert_checked(object(&doc, "fine"));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_directory_with_a_kustomization_an_unknown_kind_and_new_objects_is_planned_to_the_end() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-dir");
    let dir = scratch("dir");
    write_file(&dir, "a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n");
    write_file(&dir, "kustomization.yaml", "resources: [a.yaml]\n");
    write_file(&dir, "m.yaml", "apiVersion: fieldwise.test/v1\nkind: NotInstalled\nmetadata: {name: x}\nspec: {}\n");
    write_file(&dir, "z.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\ndata: {k: v}\n");
    let out = run(plan(&cluster, &ns).args(["-f", dir.to_str().unwrap()]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("kustomization.yaml\" is a kustomization") && stderr.contains("-k"), "{stderr}");
    assert!(stdout.contains("configmap/a") && stdout.contains("configmap/z"), "every object is planned: {stdout}");
    assert!(
        stdout.contains("notinstalled.fieldwise.test/x") && stdout.contains("CustomResourceDefinition"),
        "{stdout}"
    );
    assert!(stdout.contains("Plan: 3 objects, 0 conflicting, 1 refused, 2 new."), "{stdout}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn dash_k_plans_what_kubectl_kustomize_builds_and_stdin_takes_a_render() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-k");
    let dir = scratch("k");
    write_file(&dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {k: v}\n");
    write_file(&dir, "kustomization.yaml", "namePrefix: prod-\nresources: [cm.yaml]\n");
    // Through kubectl, as users run it: the plugin builds -k with the kubectl that runs it.
    let out = run(cluster.kubectl().args(["owners", "plan", "-n", &ns, "-k", dir.to_str().unwrap(), "-o", "json"]));
    let doc = plan_json(&out, 0);
    let cm = object(&doc, "prod-settings");
    assert_eq!((cm["new"].clone(), cm["namespace"].clone()), (true.into(), ns.clone().into()), "{cm:#}");
    assert!(cm["source"].as_str().unwrap().ends_with("(kustomize)"), "{cm:#}");
    // A render on stdin (what `helm template ... | kubectl owners plan -f -` sends).
    let render = "---\n# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: rendered}\ndata: {k: v}\n";
    let mut child = plan(&cluster, &ns)
        .args(["-f", "-", "-o", "name"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), render.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "a new object without findings is not listed by -o name");
    assert!(text(&out.stderr).contains("Plan: 1 object, 0 conflicting, 0 refused, 1 new."), "{}", text(&out.stderr));
    // A kustomization that does not build is one clear error.
    let out = run(plan(&cluster, &ns).args(["-k", "/nonexistent-kustomization"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("error: kubectl kustomize \"/nonexistent-kustomization\" failed"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_field_removed_from_the_file_survives_when_client_side_apply_co_owns_it() {
    // kubernetes#99003: a tool that moves an object from client-side to server-side apply
    // (without kubectl's migration of the managedFields) co-owns every field with
    // kubectl-client-side-apply; a field it later removes from its file stays.
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-survives");
    let dir = scratch("survives");
    let full = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, labels: {team: a, tier: web}}\ndata: {a: \"1\", b: \"2\"}\n";
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &write_file(&dir, "full.yaml", full)]);
    let raw = fieldwise_e2e::raw_api::RawApi::connect(&cluster, &ns);
    let path = format!("/api/v1/namespaces/{ns}/configmaps/app?fieldManager=ci");
    let apply = "application/apply-patch+yaml";
    let with_c = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "labels": {"team": "a", "tier": "web"}}, "data": {"a": "1", "b": "2", "c": "3"}});
    raw.patch(&path, apply, &with_c);
    let smaller = write_file(
        &dir,
        "smaller.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, labels: {team: a}}\ndata: {a: \"1\"}\n",
    );
    let args = ["-f", smaller.as_str(), "--field-manager", "ci"];
    let doc = plan_json(&run(plan(&cluster, &ns).args(args).args(["-o", "json", "--fail-on", "removals"])), 3);
    let app = object(&doc, "app");
    assert_checked(app);
    assert_eq!(fields(&app["survives"]), [".data.b", ".metadata.labels.tier"], "{app:#}");
    for survivor in app["survives"].as_array().unwrap() {
        assert_eq!(survivor["owners"][0]["manager"], "kubectl-client-side-apply", "{app:#}");
    }
    assert_eq!(fields(&app["removed"]), [".data.c"], "{app:#}");
    let out = run(plan(&cluster, &ns).args(args));
    assert_eq!(out.status.code(), Some(0), "removals do not fail unless asked");
    let table = text(&out.stdout);
    assert!(table.contains("survives") && table.contains("kubectl-client-side-apply (Update)"), "{table}");
    assert!(table.contains("stays in the cluster"), "{table}");
    let row =
        table.lines().find(|l| l.trim_start().starts_with("survives") && l.contains(".data.b")).unwrap_or_default();
    assert!(row.trim_end().ends_with(" -"), "YOURS is empty for a field the file no longer sets: {table}");
    // What the plan said is what the apply does.
    let smaller_object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "labels": {"team": "a"}}, "data": {"a": "1"}});
    let live = raw.patch(&path, apply, &smaller_object);
    assert_eq!(live["data"], serde_json::json!({"a": "1", "b": "2"}), "{live:#}");
    assert_eq!(live["metadata"]["labels"]["tier"], "web");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn outputs_exit_codes_fail_on_and_force_conflicts_for_ci() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-ci");
    let dir = scratch("ci");
    let base = std::fs::read_to_string(fixture("busybox-demo.yaml")).unwrap();
    let file = write_file(&dir, "deploy.yaml", &base);
    cluster.kubectl_ok(&["apply", "--server-side", "-n", &ns, "-f", &file]);
    cluster.kubectl_ok(&["scale", "-n", &ns, "deploy/busybox-demo", "--replicas=3"]);
    let plans = scratch("ci-plan");
    write_file(&plans, "deploy.yaml", &base.replace("replicas: 1", "replicas: 4"));
    write_file(&plans, "new.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {k: v}\n");
    let dir_arg = plans.to_str().unwrap();
    // Text: a table per object, a summary line, exit 3 for the conflict.
    let out = run(plan(&cluster, &ns).args(["-f", dir_arg]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("conflict   .spec.replicas"), "{stdout}");
    // kubectl scale by hand is a person's one-off write, as in `owners --summary`: take it back with force.
    assert!(stdout.contains("kubectl (Update, scale) [human]"), "{stdout}");
    assert!(stdout.contains("fix: apply with --force-conflicts to take .spec.replicas"), "{stdout}");
    assert!(stdout.contains("lint:") && stdout.contains("scale subresource"), "{stdout}");
    assert!(stdout.ends_with("Plan: 2 objects, 1 conflicting, 0 refused, 1 new.\n"), "{stdout}");
    // -o name: only the objects with findings.
    let out = run(plan(&cluster, &ns).args(["-f", dir_arg, "-o", "name"]));
    assert_eq!(text(&out.stdout), "deployment.apps/busybox-demo\n");
    assert_eq!(out.status.code(), Some(3));
    // JSON: the documented shape.
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", dir_arg, "-o", "json"])), 3);
    assert_eq!(
        (doc["apiVersion"].as_str(), doc["kind"].as_str()),
        (Some("fieldwise.dev/v1alpha1"), Some("OwnersPlan"))
    );
    let d = object(&doc, "busybox-demo");
    let c = &d["conflicts"][0];
    for key in ["field", "manager", "operation", "subresource", "class", "live", "yours"] {
        assert!(c.get(key).is_some(), "{key} missing: {c:#}");
    }
    assert_eq!((&c["subresource"], &c["live"], &c["yours"]), (&"scale".into(), &3.into(), &4.into()));
    assert_eq!((&c["class"], &c["fix"]), (&"human".into(), &"force".into()));
    assert_eq!(doc["summary"]["objects"], 2);
    assert_eq!(doc["summary"]["conflicting"], 1);
    assert_eq!(doc["summary"]["new"], 1);
    // --force-conflicts: the conflict becomes a takeover, which fails only when asked.
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", dir_arg, "--force-conflicts", "-o", "json"])), 0);
    assert_eq!(fields(&object(&doc, "busybox-demo")["takeovers"]), [".spec.replicas"]);
    assert_checked(object(&doc, "busybox-demo"));
    let out = run(plan(&cluster, &ns).args(["-f", dir_arg, "--force-conflicts", "--fail-on", "takeovers"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let out = run(plan(&cluster, &ns).args(["-f", dir_arg, "--fail-on", "refusals"]));
    assert_eq!(out.status.code(), Some(0), "conflicts do not fail when not asked: {}", text(&out.stdout));
    // JUnit: one test case per object, the conflicting one failed.
    let out = run(plan(&cluster, &ns).args(["-f", dir_arg, "-o", "junit"]));
    let xml = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3));
    assert!(xml.contains("<testsuite name=\"kubectl owners plan\" tests=\"2\" failures=\"1\" errors=\"0\">"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 2, "{xml}");
    assert!(xml.contains("<failure message=\"1 conflict\" type=\"conflicts\">"), "{xml}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn secret_values_are_hidden_unless_asked_and_an_unset_value_is_unset() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-secret");
    cluster.kubectl_ok(&["create", "secret", "generic", "-n", &ns, "db", "--from-literal=password=hunter2-live"]);
    let dir = scratch("secret");
    // password changes (a conflict with kubectl-create); token is new (unset live).
    let file = write_file(
        &dir,
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: aHVudGVyMi1taW5l, token: dG9rZW4tc2VjcmV0}\n",
    );
    let out = run(plan(&cluster, &ns).args(["-f", &file, "--field-manager", "ci"]));
    let stdout = text(&out.stdout) + &text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    for secret in ["aHVudGVyMi1saXZl", "hunter2-live", "aHVudGVyMi1taW5l", "hunter2-mine", "dG9rZW4tc2VjcmV0"] {
        assert!(!stdout.contains(secret), "{secret} leaked: {stdout}");
    }
    assert!(stdout.contains("*** (12 bytes)"), "{stdout}");
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &file, "--field-manager", "ci", "-o", "json"])), 3);
    let conflict = &object(&doc, "db")["conflicts"][0];
    assert_eq!(conflict["field"], ".data.password");
    assert_eq!(conflict["yours"], "*** (12 bytes)");
    let shown = text(&run(plan(&cluster, &ns).args(["-f", &file, "--field-manager", "ci", "--show-secrets"])).stdout);
    assert!(shown.contains("aHVudGVyMi1saXZl") && shown.contains("aHVudGVyMi1taW5l"), "{shown}");
    // A field the apply removes is unset afterwards, not ***.
    cluster.kubectl_ok(&["apply", "--server-side", "--force-conflicts", "--field-manager=ci", "-n", &ns, "-f", &file]);
    let fewer = write_file(
        &dir,
        "fewer.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: aHVudGVyMi1taW5l}\n",
    );
    let table = text(&run(plan(&cluster, &ns).args(["-f", &fewer, "--field-manager", "ci"])).stdout);
    let removed =
        table.lines().find(|l| l.contains("removed") && l.contains(".data.token")).unwrap_or_else(|| panic!("{table}"));
    assert!(removed.trim_end().ends_with("unset") && removed.contains("*** (12 bytes)"), "{removed}");
    assert!(!table.contains("dG9rZW4tc2VjcmV0"), "{table}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_generated_corpus_of_applies_agrees_with_the_apiserver_field_for_field() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    install_gadget_crd(&cluster);
    let ns = cluster.namespace("fw-plan-corpus");
    let seed: u64 = std::env::var("FIELDWISE_PLAN_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(23);
    let total: usize = std::env::var("FIELDWISE_PLAN_SCENARIOS").ok().and_then(|s| s.parse().ok()).unwrap_or(240);
    corpus::run(&cluster, &ns, seed, total);
}

/// Manifests nobody here wrote (the Kubernetes module's addons and e2e manifests), installed
/// client-side with human drift, scanned, repaired, planned, migrated and applied server-side:
/// every plan agrees with the apiserver's dry runs (see `owners_plan/real_world.rs`).
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn real_world_manifests_agree_with_the_apiserver_from_client_side_to_server_side_apply() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-real");
    real_world::run_suite(&cluster, &ns);
}

/// A namespace name no test creates: unique to this run, and left absent.
fn absent_namespace(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// Asserts the cluster has no namespace `name`.
fn assert_no_namespace(cluster: &Cluster, name: &str) {
    let out = run(cluster.kubectl().args(["get", "namespace", name]));
    assert!(!out.status.success() && text(&out.stderr).contains("NotFound"), "namespace {name} exists");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_fresh_install_with_its_namespace_in_the_input_plans_every_object_as_new_and_writes_nothing() {
    let cluster = require_cluster!();
    let ns = absent_namespace("fw-plan-fresh");
    let dir = scratch("fresh");
    // The Namespace comes after an object in it: kubectl applies Namespaces first.
    let file = write_file(
        &dir,
        "install.yaml",
        &format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  \
             selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    \
             spec:\n      containers: [{{name: web, image: \"busybox:1.36\"}}]\n---\n\
             apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {ns}}}\ndata: {{k: v}}\n"
        ),
    );
    let out = run(plan(&cluster, &ns).args(["-f", &file]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let created = format!("new: the apply creates it, in namespace {ns} created by this apply");
    assert_eq!(stdout.matches(&created).count(), 2, "{stdout}");
    assert!(!stdout.contains("refused by the server"), "{stdout}");
    assert!(stdout.ends_with("Plan: 3 objects, 0 conflicting, 0 refused, 3 new.\n"), "{stdout}");
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &file, "-o", "json"])), 0);
    for name in ["web", "settings"] {
        let item = object(&doc, name);
        assert_eq!(
            (&item["new"], &item["namespaceCreated"], &item["refused"], &item["conflicts"]),
            (&true.into(), &ns.clone().into(), &Value::Null, &Value::Array(Vec::new())),
            "{item:#}"
        );
        assert_eq!(item["verification"]["checked"], false, "{item:#}");
    }
    assert_eq!(object(&doc, &ns)["new"], true);
    assert_checked(object(&doc, &ns));
    // The plan never writes.
    assert_no_namespace(&cluster, &ns);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn an_object_in_a_namespace_neither_on_the_server_nor_in_the_input_is_refused_with_the_servers_reason() {
    let cluster = require_cluster!();
    let ns = absent_namespace("fw-plan-nons");
    let dir = scratch("nons");
    let file = write_file(
        &dir,
        "cm.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings, namespace: {ns}}}\ndata: {{k: v}}\n"),
    );
    let out = run(plan(&cluster, &ns).args(["-f", &file]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    let status = stdout.lines().find(|l| l.starts_with("configmap/settings")).unwrap_or_default();
    assert!(
        status.ends_with(&format!("refused by the server (404 NotFound): namespaces \"{ns}\" not found")),
        "the status line says why: {stdout}"
    );
    assert!(stdout.ends_with("Plan: 1 object, 0 conflicting, 1 refused, 0 new.\n"), "{stdout}");
    assert_no_namespace(&cluster, &ns);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_conflict_on_a_long_image_shows_where_the_values_differ_and_a_client_side_default_advises_migrate() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-long");
    let dir = scratch("long");
    let deployment = |image: &str, extra: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: metrics}}\nspec:\n  \
             selector: {{matchLabels: {{app: metrics}}}}\n  template:\n    metadata: {{labels: {{app: metrics}}}}\n    \
             spec:\n      containers:\n      - name: metrics\n        image: {image}\n{extra}"
        )
    };
    let image = "registry.k8s.io/kube-state-metrics/kube-state-metrics";
    // Client-side apply: the server defaults imagePullPolicy, which client-side apply then owns.
    let old = write_file(&dir, "old.yaml", &deployment(&format!("{image}:v2.10.0"), ""));
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &old]);
    let new =
        write_file(&dir, "new.yaml", &deployment(&format!("{image}:v2.13.0"), "        imagePullPolicy: Always\n"));
    let out = run(plan(&cluster, &ns).args(["-f", &new, "--field-manager", "ci"]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    let row = stdout.lines().find(|l| l.contains("].image ")).unwrap_or_else(|| panic!("no image row: {stdout}"));
    assert!(row.contains("…kube-state-metrics:v2.10.0") && row.contains("…kube-state-metrics:v2.13.0"), "{row}");
    let row = stdout.lines().find(|l| l.contains("].imagePullPolicy ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(row.contains("IfNotPresent") && row.trim_end().ends_with("Always"), "{row}");
    assert!(stdout.contains("kubectl last-applied migrate") && stdout.contains("kubectl owners transfer"), "{stdout}");
    let doc = plan_json(&run(plan(&cluster, &ns).args(["-f", &new, "--field-manager", "ci", "-o", "json"])), 3);
    let metrics = object(&doc, "metrics");
    assert_checked(metrics);
    let fixes: Vec<(String, String)> = metrics["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap().to_string(), c["fix"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        fixes,
        [
            // Client-side apply's file set the image: an applier's field, handed over.
            (".spec.template.spec.containers[name=\"metrics\"].image".to_string(), "transfer".to_string()),
            (".spec.template.spec.containers[name=\"metrics\"].imagePullPolicy".to_string(), "migrate".to_string()),
        ],
        "{metrics:#}"
    );
    // JSON keeps the values whole.
    assert_eq!(metrics["conflicts"][0]["yours"], format!("{image}:v2.13.0"));
}

/// A Deployment and a Service as a human writes them: the server defaults the rest.
const CLIENT_SIDE_APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
  annotations: {team: payments}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: busybox:1.36
        command: [sleep, '3600']
        ports:
        - containerPort: 8080
        env:
        - {name: A, value: '1'}
        - {name: B, value: '2'}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  annotations: {team: payments}
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
";

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn fields_the_server_defaults_again_are_defaulted_not_removed_after_a_transfer_from_client_side_apply() {
    // Issue 32: after `owners transfer --from human --to kubectl`, kubectl owns every field
    // client-side apply's create recorded, server defaults included. Its next apply prunes
    // those the file does not set, and the server sets them again to the same value.
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-plan-defaulted");
    let dir = scratch("defaulted");
    let file = write_file(&dir, "app.yaml", CLIENT_SIDE_APP);
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", &file]);
    let transfer = ["transfer", "-n", &ns, "deploy/web", "svc/web", "--from", "human", "--to", "kubectl", "--yes"];
    let out = run(cluster.plugin("kubectl-owners").args(transfer));
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    let args = ["-f", file.as_str(), "--field-manager", "kubectl"];
    let doc = plan_json(&run(plan(&cluster, &ns).args(args).args(["-o", "json"])), 0);
    let last_applied = ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration";
    let pod = ".spec.template.spec";
    let container = format!("{pod}.containers[name=\"app\"]");
    let defaulted_deployment = [
        format!("{pod}.dnsPolicy"),
        format!("{pod}.restartPolicy"),
        format!("{container}.imagePullPolicy"),
        format!("{container}.terminationMessagePath"),
        format!("{container}.ports[containerPort=8080,protocol=\"TCP\"].protocol"),
    ];
    let defaulted_service =
        [".spec.type", ".spec.internalTrafficPolicy", ".spec.ports[port=80,protocol=\"TCP\"].protocol"];
    let (deployment, service) = (&doc["objects"][0], &doc["objects"][1]);
    // The one real removal: kubectl's server-side apply drops the client-side annotation.
    for (item, defaulted) in
        [(deployment, &defaulted_deployment[..]), (service, &defaulted_service.map(String::from)[..])]
    {
        assert_checked(item);
        assert_eq!(item["removalsVerified"], true, "{item:#}");
        assert_eq!(fields(&item["removed"]), [last_applied], "{item:#}");
        let listed = fields(&item["defaulted"]);
        for field in defaulted {
            assert!(listed.contains(field), "{field} is not defaulted: {item:#}");
        }
    }
    assert_eq!((&doc["summary"]["withDefaulted"], &doc["summary"]["withRemovals"]), (&2.into(), &2.into()));
    let out = run(plan(&cluster, &ns).args(args).args(["--fail-on", "removals"]));
    assert_eq!(out.status.code(), Some(3), "the annotation is a real removal: {}", text(&out.stdout));
    // Without the annotation nothing really leaves: the defaults fail nothing.
    cluster.kubectl_ok(&[
        "annotate",
        "-n",
        &ns,
        "deploy/web",
        "svc/web",
        "kubectl.kubernetes.io/last-applied-configuration-",
    ]);
    let out = run(plan(&cluster, &ns).args(args).args(["--fail-on", "removals"]));
    let table = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}{}", text(&out.stderr));
    assert!(!table.contains("removed "), "{table}");
    assert!(!table.contains("dnsPolicy"), "defaulted fields are hidden unless asked: {table}");
    assert!(table.contains("defaulted: ") && table.contains("--show-defaulted lists them"), "{table}");
    assert!(table.contains("checked: the apiserver's dry run agrees"), "{table}");
    assert!(
        table.ends_with(
            "Plan: 2 objects, 0 conflicting, 0 refused, 0 new, 2 with fields defaulted again (no change).\n"
        ),
        "{table}"
    );
    let out = run(plan(&cluster, &ns).args(args).args(["--show-defaulted"]));
    let table = text(&out.stdout);
    for field in defaulted_deployment.iter().map(String::as_str).chain(defaulted_service) {
        let row = table.lines().find(|l| l.contains(field)).unwrap_or_else(|| panic!("{field} not listed: {table}"));
        assert!(row.trim_start().starts_with("defaulted "), "{row}");
    }
    // A label and an env var the file no longer sets really leave.
    let smaller =
        CLIENT_SIDE_APP.replace("app: web, tier: front}", "app: web}").replace("        - {name: B, value: '2'}\n", "");
    let smaller = write_file(&dir, "smaller.yaml", &smaller);
    let args = ["-f", smaller.as_str(), "--field-manager", "kubectl", "--fail-on", "removals"];
    let doc = plan_json(&run(plan(&cluster, &ns).args(args).args(["-o", "json"])), 3);
    let deployment = object(&doc, "web");
    assert_checked(deployment);
    assert_eq!(
        fields(&deployment["removed"]),
        [".metadata.labels.tier".to_string(), format!("{container}.env[name=\"B\"]")],
        "{deployment:#}"
    );
    assert!(fields(&deployment["defaulted"]).contains(&format!("{pod}.dnsPolicy")), "{deployment:#}");
    assert_eq!(doc["objects"][0]["failures"], serde_json::json!(["2 removals"]), "{doc:#}");
    // A file the server refuses returns no object: its removals are unverified, not guessed.
    let refused = write_file(&dir, "refused.yaml", &CLIENT_SIDE_APP.replace("replicas: 1", "replicas: -1"));
    let args = ["-f", refused.as_str(), "--field-manager", "kubectl"];
    let doc = plan_json(&run(plan(&cluster, &ns).args(args).args(["-o", "json"])), 3);
    let deployment = object(&doc, "web");
    assert_eq!((deployment["refused"]["code"].as_u64(), &deployment["removalsVerified"]), (Some(422), &false.into()));
    assert_eq!(doc["summary"]["removalsUnverified"], 1, "{doc:#}");
    let table = text(&run(plan(&cluster, &ns).args(args)).stdout);
    assert!(table.contains("removals unverified: the server returned no object"), "{table}");
}
