//! A corpus of manifests nobody here wrote: those of the Kubernetes Go module the cluster
//! harness builds from (`cluster/addons`, `test/e2e/testing-manifests`: StatefulSets, CSI
//! drivers with their RBAC, ingress and load balancers, device plugins, DNS, metrics), read in
//! place from the Go module cache at the version the harness pins
//! ([`fieldwise_e2e::kubernetes_module`]), never copied into the repository.
//!
//! Selection, each rule counted in the report with its reason:
//! - files: `*.yaml`, `*.yml`, `*.json`; a file with a template placeholder (`{{`, `${`, or an
//!   upper-case `__NAME__` such as `__PILLAR__DNS__SERVER__`) is skipped whole, as is one
//!   that is not plain YAML;
//! - objects: a document without `apiVersion`, `kind` and `metadata.name` is not an object;
//!   a type this cluster does not serve is skipped; types whose objects would change the
//!   shared cluster for every other test are skipped (CustomResourceDefinitions, whose names
//!   are global; APIServices, webhooks and admission policies, which route or refuse other
//!   requests; flow control; Namespaces); a second object of the same type and name is skipped;
//! - every namespaced object goes into the test's namespace; a cluster-scoped one gets the
//!   namespace's name as a prefix of its own, so runs never clash; each carries the label
//!   [`CORPUS_LABEL`] (the run's namespace) so that scans can select the run's objects.
//!
//! Then, as a team moving to server-side apply would:
//! 1. `kubectl apply` (client-side) of every object; an object the apiserver refuses is
//!    skipped with kubectl's reason;
//! 2. scripted human drift: `kubectl label --overwrite` of a label the file sets, `kubectl
//!    annotate`, `kubectl scale`, `kubectl edit` of a ConfigMap key;
//! 3. `owners plan` of every file as `kubectl` (one run), checked object by object against
//!    the apiserver's dry runs ([`fieldwise_e2e::plan_check::check_plan`]);
//! 4. `last-applied scan` must call stale exactly the objects whose drift changed a field
//!    the file sets; `repair --from-scan` rebuilds their annotations, after which the scan
//!    reports nothing stale or missing;
//! 5. `owners transfer` of the human edits (`kubectl label`, `annotate`, `edit`) to
//!    `kubectl`, `last-applied migrate` of every object to `kubectl`, then `owners plan` again
//!    with a label dropped from some files (removals), checked the same way;
//! 6. `kubectl apply --server-side` of those files, which must succeed.
//!
//! The figures go to `target/reports/real-world-corpus-<version>.md` (see
//! `scripts/publish-reports` and docs/FIDELITY.md).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fieldwise_e2e::kubernetes_module::{kubernetes_module_dir, kubernetes_module_version};
use fieldwise_e2e::plan_check::check_plan;
use fieldwise_e2e::run_info::{commit, kubernetes_version, utc_now};
use fieldwise_e2e::{files_below, reports_dir, run, text, Cluster};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::write::{self, FieldValidation, PatchRequest, PatchType};
use serde_json::{json, Value};

/// The label every object of a run carries, its value the run's namespace.
pub const CORPUS_LABEL: &str = "fieldwise.test/corpus";

/// The directories of the module the corpus is read from.
const ROOTS: [&str; 2] = ["cluster/addons", "test/e2e/testing-manifests"];

/// Types never installed, and why: each would change the shared cluster for every other test.
const LEFT_OUT: [(&str, &str); 9] = [
    ("CustomResourceDefinition", "a CustomResourceDefinition's name is global (plural.group)"),
    ("APIService", "an APIService would route an API group to a service that does not run"),
    ("ValidatingWebhookConfiguration", "a webhook would receive the shared cluster's writes"),
    ("MutatingWebhookConfiguration", "a webhook would receive the shared cluster's writes"),
    ("ValidatingAdmissionPolicy", "an admission policy would judge the shared cluster's writes"),
    ("ValidatingAdmissionPolicyBinding", "an admission policy would judge the shared cluster's writes"),
    ("FlowSchema", "flow control would change the shared cluster's request limits"),
    ("PriorityLevelConfiguration", "flow control would change the shared cluster's request limits"),
    ("Namespace", "the suite works in its own namespace"),
];

/// One object of the corpus, rewritten for the run.
struct Item {
    /// Where it came from: the file relative to the module, and the document's index.
    source: String,
    target: ObjectRef,
    /// The object as installed (namespace, prefix and label rewritten).
    object: Value,
    /// What human drift did to it, if anything.
    drift: Option<String>,
    /// Whether the drift changed a field the file sets (so the annotation is stale).
    stale_expected: bool,
    /// The configuration applied server-side at the end (a label dropped from some).
    last: Value,
}

/// What was left out, by reason, with the count.
#[derive(Default)]
struct Skipped(BTreeMap<String, usize>);

impl Skipped {
    fn add(&mut self, reason: impl Into<String>) {
        *self.0.entry(reason.into()).or_default() += 1;
    }
    fn total(&self) -> usize {
        self.0.values().sum()
    }
}

/// Runs the suite in `namespace` and writes its report.
pub fn run_suite(cluster: &Cluster, namespace: &str) {
    let started = Instant::now();
    let module = kubernetes_module_dir();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let conn = runtime.block_on(client::connect(&cluster.flags(namespace))).expect("connect");
    let catalog = runtime.block_on(ResourceCatalog::fetch(&conn)).expect("discovery");

    let mut files_skipped = Skipped::default();
    let mut objects_skipped = Skipped::default();
    let (files_used, documents) = read_corpus(&module, &mut files_skipped);
    let mut items = select(documents, &catalog, namespace, &mut objects_skipped);
    let _cleanup = ClusterScoped(
        cluster.clone(),
        items.iter().filter(|i| i.target.namespace.is_none()).map(|i| i.target.clone()).collect(),
    );

    // 1. Client-side install, as `kubectl apply -f DIR` does it.
    let work = std::env::temp_dir().join(format!("fw-real-world-{namespace}"));
    let _ = std::fs::remove_dir_all(&work);
    let install = write_configs(&work.join("install"), items.iter().map(|i| &i.object));
    let out = run(cluster.kubectl().args(["apply", "-n", namespace, "-f", install.to_str().unwrap()]));
    let mut refusals = refusals_by_file(&text(&out.stderr));
    if !refusals.is_empty() {
        // A second pass of the refused files installs what needed an object of a later file.
        let retry = work.join("retry");
        std::fs::create_dir_all(&retry).expect("work directory");
        for file in refusals.keys() {
            std::fs::copy(install.join(file), retry.join(file)).expect("copy a refused file");
        }
        let out = run(cluster.kubectl().args(["apply", "-n", namespace, "-f", retry.to_str().unwrap()]));
        refusals = refusals_by_file(&text(&out.stderr));
    }
    let mut installed = Vec::new();
    for (index, item) in items.drain(..).enumerate() {
        let present = runtime.block_on(objects::get(&conn, &item.target, None)).is_ok();
        match (present, refusals.get(&format!("{index:04}.json"))) {
            (true, _) => installed.push(item),
            (false, Some(why)) => objects_skipped.add(format!("refused by the apiserver: {why}")),
            (false, None) => objects_skipped.add("not found after kubectl apply"),
        }
    }
    let mut items = installed;
    let installed_at = started.elapsed();

    // 2. Scripted human drift.
    for (index, item) in items.iter_mut().enumerate() {
        runtime.block_on(drift(&conn, index, item));
    }

    // 3. The plan of every file as `kubectl`, checked against the apiserver's dry runs.
    let configs: Vec<Value> = items.iter().map(|i| i.object.clone()).collect();
    let first = plan_and_check(cluster, &runtime, &conn, namespace, &work.join("plan"), &items, &configs);

    // 4. The scan calls stale exactly what drifted; a repair leaves nothing stale.
    let la = |args: &[&str]| {
        let mut cmd = cluster.plugin("kubectl-last_applied");
        cmd.env("FIELDWISE_DATA_DIR", work.join("data")).args(args);
        run(&mut cmd)
    };
    let selector = format!("{CORPUS_LABEL}={namespace}");
    let scan = || {
        let out = la(&["scan", "-A", "-l", &selector, "-o", "json"]);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("scan JSON ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
        doc["findings"].as_array().cloned().unwrap_or_default()
    };
    let before_repair = scan();
    let stale_found: BTreeSet<String> = findings_of_kind(&before_repair, "stale");
    let stale_expected: BTreeSet<String> =
        items.iter().filter(|i| i.stale_expected).map(|i| key_of(&i.target)).collect();
    let mut disagreements: Vec<String> = Vec::new();
    for key in stale_found.difference(&stale_expected) {
        let detail = detail_of(&before_repair, key);
        disagreements
            .push(format!("scan: {key} is reported stale, but no drift changed a field its file sets: {detail}"));
    }
    for key in stale_expected.difference(&stale_found) {
        disagreements.push(format!("scan: {key} drifted on a field its file sets, and is not reported stale"));
    }
    let out = la(&["repair", "--from-scan", "-A", "-l", &selector, "--yes"]);
    assert!(out.status.success(), "repair --from-scan: {}{}", text(&out.stdout), text(&out.stderr));
    let repaired = summary_count(&text(&out.stderr), "repaired");
    let after_repair = scan();
    for kind in ["stale", "missing"] {
        for key in findings_of_kind(&after_repair, kind) {
            let detail = detail_of(&after_repair, &key);
            disagreements.push(format!("scan after repair: {key} is reported {kind}: {detail}"));
        }
    }
    let other_findings: BTreeMap<String, usize> = before_repair.iter().fold(BTreeMap::new(), |mut m, f| {
        *m.entry(f["finding"].as_str().unwrap_or_default().to_string()).or_default() += 1;
        m
    });

    // 5. Hand the human edits to `kubectl` (transfer), move client-side apply's fields to it
    // (migrate), then plan the last files (some labels dropped).
    let lasts: Vec<Value> = items.iter().map(|i| i.last.clone()).collect();
    let last_dir = write_configs(&work.join("last"), lasts.iter());
    let out = run(cluster.plugin("kubectl-owners").args([
        "transfer",
        "-n",
        namespace,
        "-f",
        last_dir.to_str().unwrap(),
        "--from",
        "kubectl-label,kubectl-annotate,kubectl-edit",
        "--to",
        "kubectl",
        "--yes",
    ]));
    assert!(out.status.success(), "transfer: {}{}", text(&out.stdout), text(&out.stderr));
    let transferred = summary_count(&text(&out.stderr), "transferred");
    let targets: Vec<String> = items.iter().map(|i| type_name(&i.target)).collect();
    let mut args = vec!["migrate", "-n", namespace, "--yes"];
    args.extend(targets.iter().map(String::as_str));
    let out = la(&args);
    assert!(out.status.success(), "migrate: {}{}", text(&out.stdout), text(&out.stderr));
    let migrated = summary_count(&text(&out.stderr), "migrated");
    let second = plan_and_check(cluster, &runtime, &conn, namespace, &work.join("plan-last"), &items, &lasts);

    // 6. The real server-side apply of the last files.
    let out = run(cluster.kubectl().args([
        "apply",
        "--server-side",
        "--force-conflicts",
        "-n",
        namespace,
        "-f",
        last_dir.to_str().unwrap(),
    ]));
    if !out.status.success() {
        disagreements.push(format!("kubectl apply --server-side failed: {}", text(&out.stderr).trim()));
    }
    for plan in [&first, &second] {
        disagreements.extend(plan.problems.iter().cloned());
    }
    let elapsed = started.elapsed();

    let figures = Figures {
        files_used,
        files_skipped,
        objects_used: items.len(),
        objects_skipped,
        drifted: items.iter().filter(|i| i.drift.is_some()).count(),
        stale_expected: stale_expected.len(),
        stale_found: stale_found.len(),
        other_findings,
        repaired,
        transferred,
        migrated,
        plans: [first, second],
        disagreements: disagreements.clone(),
        installed_at: installed_at.as_secs_f64(),
        elapsed: elapsed.as_secs_f64(),
        kinds: items.iter().fold(BTreeMap::new(), |mut m, i| {
            *m.entry(i.target.resource.kind.clone()).or_default() += 1;
            m
        }),
    };
    write_report(cluster, &module, &figures);
    let _ = std::fs::remove_dir_all(&work);
    for d in disagreements.iter().take(20) {
        eprintln!("DISAGREES {d}");
    }
    assert!(disagreements.is_empty(), "{} disagreement(s) with the apiserver (first ones above)", disagreements.len());
    assert!(figures.objects_used >= 100, "at least 100 objects from the module: {}", figures.objects_used);
}

/// Reads every file below [`ROOTS`]; returns how many were used and their documents with their source.
fn read_corpus(module: &Path, skipped: &mut Skipped) -> (usize, Vec<(String, Value)>) {
    let mut files: Vec<PathBuf> = ROOTS.iter().flat_map(|root| files_below(&module.join(root), None)).collect();
    files.sort();
    let mut used = 0;
    let mut documents = Vec::new();
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !(name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json")) {
            continue;
        }
        let relative = file.strip_prefix(module).unwrap_or(&file).display().to_string();
        let Ok(content) = std::fs::read_to_string(&file) else {
            skipped.add("not UTF-8 text");
            continue;
        };
        if is_templated(&content) {
            skipped.add("a template (`{{`, `${` or `__NAME__` placeholders)");
            continue;
        }
        let mut docs = Vec::new();
        let mut plain = true;
        for document in serde_yaml::Deserializer::from_str(&content) {
            match serde::Deserialize::deserialize(document) {
                Ok(Value::Null) => {}
                Ok(value) => docs.push(value),
                Err(_) => {
                    plain = false;
                    break;
                }
            }
        }
        if !plain {
            skipped.add("not plain YAML");
            continue;
        }
        used += 1;
        for (i, doc) in docs.into_iter().enumerate() {
            documents.push((format!("{relative}#{i}"), doc));
        }
    }
    (used, documents)
}

/// Whether a file holds a template placeholder (see the module docs).
fn is_templated(content: &str) -> bool {
    if content.contains("{{") || content.contains("${") {
        return true;
    }
    content.split("__").skip(1).step_by(2).any(|inner| {
        !inner.is_empty() && inner.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// The objects the run installs, rewritten (see the module docs).
fn select(
    documents: Vec<(String, Value)>,
    catalog: &ResourceCatalog,
    namespace: &str,
    skipped: &mut Skipped,
) -> Vec<Item> {
    let mut seen = BTreeSet::new();
    let mut items = Vec::new();
    let mut expanded = Vec::new();
    for (source, doc) in documents {
        if doc["kind"].as_str().is_some_and(|k| k.ends_with("List")) && doc["items"].is_array() {
            for (i, item) in doc["items"].as_array().unwrap().iter().enumerate() {
                expanded.push((format!("{source}/{i}"), item.clone()));
            }
        } else {
            expanded.push((source, doc));
        }
    }
    for (source, mut object) in expanded {
        let (Some(api_version), Some(kind), Some(name)) = (
            object["apiVersion"].as_str().map(String::from),
            object["kind"].as_str().map(String::from),
            object.pointer("/metadata/name").and_then(Value::as_str).map(String::from),
        ) else {
            skipped.add("not a Kubernetes object (no apiVersion, kind and metadata.name)");
            continue;
        };
        if let Some((_, why)) = LEFT_OUT.iter().find(|(k, _)| *k == kind) {
            skipped.add(format!("{kind}: {why}"));
            continue;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version.as_str()));
        let Some(resource) = catalog.by_gvk(&fieldwise_core::schema::Gvk::new(group, version, &kind)).cloned() else {
            skipped.add(format!("{api_version} {kind}: not served by this cluster"));
            continue;
        };
        let name = if resource.namespaced { name } else { format!("{namespace}-{name}") };
        if !seen.insert((resource.plural.clone(), resource.group.clone(), name.clone())) {
            skipped.add("the same type and name as an object of an earlier file");
            continue;
        }
        let metadata = object["metadata"].as_object_mut().expect("metadata is an object");
        metadata.insert("name".into(), json!(name));
        if resource.namespaced {
            metadata.insert("namespace".into(), json!(namespace));
        } else {
            metadata.remove("namespace");
        }
        if !metadata.get("labels").is_some_and(Value::is_object) {
            metadata.insert("labels".into(), json!({}));
        }
        object["metadata"]["labels"][CORPUS_LABEL] = json!(namespace);
        let target = ObjectRef {
            resource: resource.clone(),
            namespace: resource.namespaced.then(|| namespace.to_string()),
            name,
        };
        items.push(Item { source, target, last: object.clone(), object, drift: None, stale_expected: false });
    }
    items
}

/// The labels a file sets, but the run's own.
fn own_labels(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| m.keys().filter(|k| *k != CORPUS_LABEL).cloned().collect())
        .unwrap_or_default()
}

/// The human drift of object `index` (deterministic), and the last configuration it will be applied with.
async fn drift(conn: &Connection, index: usize, item: &mut Item) {
    let labels = own_labels(&item.object);
    let patch = |body: Value, manager: &'static str, subresource: Option<&'static str>| {
        let target = item.target.clone();
        async move {
            let req = PatchRequest {
                patch_type: PatchType::Merge,
                body: &body,
                field_manager: manager,
                dry_run: false,
                force: false,
                subresource,
                validation: FieldValidation::Strict,
            };
            write::patch(conn, &target, &req).await
        }
    };
    let replicas = item.object.pointer("/spec/replicas").and_then(Value::as_i64);
    let first_key = item.object.get("data").and_then(Value::as_object).and_then(|d| d.keys().next().cloned());
    let (drift, stale, result) = if index.is_multiple_of(3) && !labels.is_empty() {
        let body = json!({"metadata": {"labels": {labels[0].clone(): "drifted"}}});
        (format!("kubectl label --overwrite {}=drifted", labels[0]), true, patch(body, "kubectl-label", None).await)
    } else if index % 3 == 1 {
        let body = json!({"metadata": {"annotations": {"drift.fieldwise.test/note": "edited"}}});
        ("kubectl annotate".to_string(), false, patch(body, "kubectl-annotate", None).await)
    } else if let (Some(n), true) = (replicas, item.target.resource.subresources.iter().any(|s| s == "scale")) {
        let body = json!({"spec": {"replicas": n + 1}});
        (format!("kubectl scale --replicas={}", n + 1), true, patch(body, "kubectl-scale", Some("scale")).await)
    } else if let (Some(key), "ConfigMap") = (first_key, item.target.resource.kind.as_str()) {
        let body = json!({"data": {key.clone(): "edited"}});
        (format!("kubectl edit: data.{key}"), true, patch(body, "kubectl-edit", None).await)
    } else {
        return;
    };
    if let Err(e) = result {
        panic!("{} ({}): {drift} failed: {e}", key_of(&item.target), item.source);
    }
    item.drift = Some(drift);
    item.stale_expected = stale;
    if index % 4 == 3 {
        if let Some(label) = labels.last() {
            item.last["metadata"]["labels"].as_object_mut().unwrap().remove(label);
        }
    }
}

/// One `owners plan` run and its check.
#[derive(Default)]
struct Planned {
    objects: usize,
    verified: usize,
    conflicting: usize,
    conflicts: usize,
    removals: usize,
    survivors: usize,
    /// By kind of drift: objects, and those with conflicts.
    by_drift: BTreeMap<String, (usize, usize)>,
    problems: Vec<String>,
    seconds: f64,
}

/// Plans `configs` (one per item) as `kubectl` in one run and checks each object's plan.
fn plan_and_check(
    cluster: &Cluster,
    runtime: &tokio::runtime::Runtime,
    conn: &Connection,
    namespace: &str,
    dir: &Path,
    items: &[Item],
    configs: &[Value],
) -> Planned {
    let started = Instant::now();
    let dir = write_configs(dir, configs.iter());
    let out = run(cluster.plugin("kubectl-owners").args([
        "plan",
        "-n",
        namespace,
        "-f",
        dir.to_str().unwrap(),
        "--field-manager",
        "kubectl",
        "-o",
        "json",
    ]));
    let stdout = text(&out.stdout);
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("plan: {e}: {stdout}\n{}", text(&out.stderr)));
    let seconds = started.elapsed().as_secs_f64();
    let mut planned = Planned { seconds, ..Planned::default() };
    let reports = doc["objects"].as_array().cloned().unwrap_or_default();
    // Exit 3 exactly when an object fails --fail-on (by default: a conflict or a refusal).
    let expected = fieldwise_e2e::plan_check::expected_plan_exit(&reports);
    if out.status.code() != Some(expected) {
        planned.problems.push(format!(
            "owners plan exited {:?}, expected {expected}: {}",
            out.status.code(),
            text(&out.stderr).trim()
        ));
    }
    let count = |v: &Value, key: &str| v[key].as_array().map_or(0, Vec::len);
    for (item, config) in items.iter().zip(configs) {
        let Some(report) = reports
            .iter()
            .find(|o| o["name"] == item.target.name.as_str() && o["kind"] == item.target.resource.kind.as_str())
        else {
            planned.problems.push(format!("{}: not in the plan", key_of(&item.target)));
            continue;
        };
        planned.objects += 1;
        let label =
            format!("{} ({}; {})", key_of(&item.target), item.source, item.drift.as_deref().unwrap_or("no drift"));
        if let Some(error) = report.get("error") {
            planned.problems.push(format!("{label}: the plan failed: {error}"));
            continue;
        }
        if report["verification"]["agrees"] != true {
            planned.problems.push(format!("{label}: the plugin's own check disagrees: {}", report["verification"]));
        }
        planned.verified += usize::from(report["verification"]["agrees"] == true);
        planned.conflicting += usize::from(count(report, "conflicts") > 0);
        planned.conflicts += count(report, "conflicts");
        planned.removals += count(report, "removed");
        planned.survivors += count(report, "survives");
        let label =
            format!("{} ({}; {})", key_of(&item.target), item.source, item.drift.as_deref().unwrap_or("no drift"));
        planned.problems.extend(runtime.block_on(check_plan(conn, &label, &item.target, config, "kubectl", report)));
        let drift = drift_kind(item);
        let row = planned.by_drift.entry(drift).or_default();
        row.0 += 1;
        row.1 += usize::from(count(report, "conflicts") > 0);
    }
    planned
}

/// The kind of drift an object saw (the command, without its arguments).
fn drift_kind(item: &Item) -> String {
    match &item.drift {
        None => "none".into(),
        Some(d) => d.split(&[' ', ':'][..]).take(2).collect::<Vec<_>>().join(" "),
    }
}

/// Writes each configuration to `dir/NNNN.json` and returns `dir`.
fn write_configs<'a>(dir: &Path, configs: impl Iterator<Item = &'a Value>) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("work directory");
    for (index, config) in configs.enumerate() {
        std::fs::write(dir.join(format!("{index:04}.json")), config.to_string()).expect("write a configuration");
    }
    dir.to_path_buf()
}

/// kubectl's refusals on stderr by file name (`NNNN.json`): the line that names the file.
fn refusals_by_file(stderr: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in stderr.lines() {
        let Some(at) = line.find(".json\"") else { continue };
        let start = line[..at].rfind('/').map_or(0, |i| i + 1);
        let file = format!("{}.json", &line[start..at]);
        let why = line.split(": ").skip(2).collect::<Vec<_>>().join(": ");
        let why: String = why.chars().take(160).collect();
        out.entry(file).or_insert(why);
    }
    out
}

/// The count a bulk run's summary line (`12 repaired, 3 unchanged, 0 failed`, on stderr) gives for `what`.
fn summary_count(stderr: &str, what: &str) -> usize {
    let suffix = format!(" {what}");
    stderr
        .lines()
        .rev()
        .flat_map(|line| line.split(", "))
        .find_map(|part| part.strip_suffix(&suffix).and_then(|n| n.trim().parse().ok()))
        .unwrap_or(0)
}

/// `kind.group/name` (and its namespace), as findings and messages name an object.
fn key_of(target: &ObjectRef) -> String {
    let r = &target.resource;
    let kind =
        if r.group.is_empty() { r.kind.to_lowercase() } else { format!("{}.{}", r.kind.to_lowercase(), r.group) };
    format!("{kind}/{}", target.name)
}

/// The fully qualified `plural.version.group/name` a command line takes.
fn type_name(target: &ObjectRef) -> String {
    let r = &target.resource;
    format!("{}.{}.{}/{}", r.plural, r.version, r.group, target.name)
}

/// The objects (as [`key_of`] names them) with a finding of `kind` in a scan's findings.
fn findings_of_kind(findings: &[Value], kind: &str) -> BTreeSet<String> {
    findings.iter().filter(|f| f["finding"] == kind).map(finding_key).collect()
}

fn finding_key(finding: &Value) -> String {
    let kind = finding["kind"].as_str().unwrap_or_default().to_lowercase();
    let group = finding["group"]
        .as_str()
        .or_else(|| finding["apiVersion"].as_str().and_then(|v| v.split_once('/').map(|(g, _)| g)));
    let kind = match group {
        Some(g) if !g.is_empty() => format!("{kind}.{g}"),
        _ => kind,
    };
    format!("{kind}/{}", finding["name"].as_str().unwrap_or_default())
}

fn detail_of(findings: &[Value], key: &str) -> String {
    findings.iter().filter(|f| finding_key(f) == key).map(|f| f["detail"].to_string()).collect::<Vec<_>>().join("; ")
}

/// Deletes the run's cluster-scoped objects when the suite ends, passed or failed.
struct ClusterScoped(Cluster, Vec<ObjectRef>);

impl Drop for ClusterScoped {
    fn drop(&mut self) {
        if self.1.is_empty() {
            return;
        }
        let names: Vec<String> = self.1.iter().map(type_name).collect();
        let _ = run(self.0.kubectl().args(["delete", "--ignore-not-found", "--wait=false"]).args(&names));
    }
}

/// Everything the report shows.
struct Figures {
    files_used: usize,
    files_skipped: Skipped,
    objects_used: usize,
    objects_skipped: Skipped,
    drifted: usize,
    stale_expected: usize,
    stale_found: usize,
    other_findings: BTreeMap<String, usize>,
    repaired: usize,
    transferred: usize,
    migrated: usize,
    plans: [Planned; 2],
    disagreements: Vec<String>,
    installed_at: f64,
    elapsed: f64,
    kinds: BTreeMap<String, usize>,
}

/// Writes `target/reports/real-world-corpus-<version>.md`, whole, from this run alone.
fn write_report(cluster: &Cluster, module: &Path, f: &Figures) {
    let version = std::env::var("FIELDWISE_KUBE_VERSION").unwrap_or_else(|_| "1.37".into());
    let mut doc = String::new();
    let _ = writeln!(doc, "# Real-world corpus on Kubernetes {version}\n");
    let _ = writeln!(
        doc,
        "Generated by `tests/e2e/tests/owners_plan/real_world.rs` (run by `scripts/test` on each version; \
         `scripts/publish-reports` copies it here). Every figure below was measured in the run described here.\n"
    );
    let _ = writeln!(doc, "| run | |\n|---|---|");
    let _ = writeln!(doc, "| started | {} |", utc_now());
    let _ = writeln!(doc, "| commit | {} |", commit());
    let _ = writeln!(doc, "| Kubernetes | {} |", kubernetes_version(cluster));
    let _ = writeln!(
        doc,
        "| manifests | `k8s.io/kubernetes@{}` from the Go module cache: {} |",
        kubernetes_module_version(),
        ROOTS.map(|r| format!("`{r}`")).join(", ")
    );
    let _ = writeln!(doc, "| wall time | {:.1} s ({:.1} s to install) |", f.elapsed, f.installed_at);
    let verdict = if f.disagreements.is_empty() {
        "0 disagreements".to_string()
    } else {
        format!("**{} disagreements**", f.disagreements.len())
    };
    let _ = writeln!(doc, "| result | {verdict} |\n");
    let _ = writeln!(doc, "## Corpus\n\n| | count |\n|---|---|");
    let _ = writeln!(doc, "| files used | {} |", f.files_used);
    for (why, n) in &f.files_skipped.0 {
        let _ = writeln!(doc, "| files skipped: {why} | {n} |");
    }
    let _ = writeln!(doc, "| files skipped | {} |", f.files_skipped.total());
    let _ = writeln!(doc, "| objects installed | {} |", f.objects_used);
    let _ = writeln!(doc, "| objects skipped | {} |", f.objects_skipped.total());
    for (why, n) in &f.objects_skipped.0 {
        let _ = writeln!(doc, "| objects skipped: {} | {n} |", why.replace('|', "\\|"));
    }
    let kinds: Vec<String> = f.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(doc, "| kinds | {} |\n", kinds.join(", "));
    let _ = writeln!(doc, "## Drift, scan and repair\n\n| | count |\n|---|---|");
    let _ = writeln!(doc, "| objects drifted by hand | {} |", f.drifted);
    let _ = writeln!(doc, "| of which on a field the file sets (stale expected) | {} |", f.stale_expected);
    let _ = writeln!(doc, "| reported stale by `last-applied scan` | {} |", f.stale_found);
    for (finding, n) in &f.other_findings {
        let _ = writeln!(doc, "| scan findings `{finding}` before repair | {n} |");
    }
    let _ = writeln!(doc, "| repaired by `repair --from-scan` | {} |", f.repaired);
    let _ = writeln!(doc, "| human edits handed to `kubectl` by `owners transfer` | {} |", f.transferred);
    let _ = writeln!(doc, "| migrated by `last-applied migrate` | {} |\n", f.migrated);
    let _ = writeln!(
        doc,
        "## Plans against the apiserver's dry runs\n\n| plan (as `kubectl`) | objects | verified by the plugin | \
         conflicting objects | conflicts | removals | survivors | time |\n|---|---|---|---|---|---|---|---|"
    );
    for (what, p) in ["after client-side apply and drift", "after repair, transfer and migrate, some labels dropped"]
        .iter()
        .zip(&f.plans)
    {
        let _ = writeln!(
            doc,
            "| {what} | {} | {} | {} | {} | {} | {} | {:.1} s |",
            p.objects, p.verified, p.conflicting, p.conflicts, p.removals, p.survivors, p.seconds
        );
    }
    let _ = writeln!(doc, "\n| drift | objects | conflicting in the first plan | in the second |\n|---|---|---|---|");
    for (drift, (objects, first)) in &f.plans[0].by_drift {
        let second = f.plans[1].by_drift.get(drift).map_or(0, |r| r.1);
        let _ = writeln!(doc, "| {drift} | {objects} | {first} | {second} |");
    }
    let _ = writeln!(doc, "\n## Disagreements\n");
    if f.disagreements.is_empty() {
        let _ = writeln!(doc, "None: every conflict, removal and survivor the plans name is what the apiserver did.");
    }
    for d in &f.disagreements {
        let _ = writeln!(doc, "- {}", d.replace('\n', " "));
    }
    let path = reports_dir().join(format!("real-world-corpus-{version}.md"));
    match std::fs::create_dir_all(reports_dir()).and_then(|()| std::fs::write(&path, doc)) {
        Ok(()) => eprintln!("real-world corpus figures written to {} (module {})", path.display(), module.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
}
