//! The listing engine against the real cluster: a selector across several namespaces gives
//! exactly the selected objects, once each, in the server's order, also when the engine
//! goes on namespace by namespace (checked in the audit log); bulk `safe-patch`'s selection
//! (`--all`, `--field-selector` with `-A`) listed by the engine, and a type the server does not
//! list refused.

use std::collections::BTreeSet;

use fieldwise_e2e::{require_cluster, run, text, Cluster};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::listing::{ListOptions, Lister, Scope, Selectors};
use fieldwise_kube::conn::client;
use serde_json::Value;

/// ConfigMaps per namespace, and how many of them carry the selected label.
const PER_NAMESPACE: usize = 500;
const SELECTED_PER_NAMESPACE: usize = 400;

/// Creates the ConfigMaps of one namespace: the first `SELECTED_PER_NAMESPACE` labelled
/// `fw-listing=<run>`, the others `fw-listing=other-<run>`.
fn create_configmaps(cluster: &Cluster, ns: &str, run_id: &str) {
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..PER_NAMESPACE {
        let value = if i < SELECTED_PER_NAMESPACE { run_id.to_string() } else { format!("other-{run_id}") };
        list.push_str(&format!(
            "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: cm-{i:04}, namespace: {ns}, labels: {{fw-listing: \"{value}\"}}}}\n  data: {{num: \"{i}\"}}\n"
        ));
    }
    cluster.kubectl_stdin(&["create", "-f", "-"], &list);
}

/// The `namespace/name` of every ConfigMap list the audit log recorded with `selector`.
fn audited_list_namespaces(cluster: &Cluster, selector: &str) -> Vec<Option<String>> {
    let log = std::fs::read_to_string(cluster.dir.join("audit.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains(selector))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| {
            e["stage"] == "ResponseComplete" && e["verb"] == "list" && e["objectRef"]["resource"] == "configmaps"
        })
        .map(|e| e["objectRef"]["namespace"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_selector_across_namespaces_lists_exactly_the_selected_objects() {
    let cluster = require_cluster!();
    let run_id = format!("run-{}", std::process::id());
    let namespaces: Vec<String> =
        ["a", "b", "c"].iter().map(|n| cluster.namespace(&format!("fw-listing-{n}"))).collect();
    for ns in &namespaces {
        create_configmaps(&cluster, ns, &run_id);
    }
    // In the server's key order (`namespace/`), names in order within each.
    let mut ordered = namespaces.clone();
    ordered.sort_by(|a, b| format!("{a}/").cmp(&format!("{b}/")));
    let expected: Vec<String> =
        ordered.iter().flat_map(|ns| (0..SELECTED_PER_NAMESPACE).map(move |i| format!("{ns}/cm-{i:04}"))).collect();
    let selector = format!("fw-listing={run_id}");

    // The glue's engine itself.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let listed: Vec<String> = runtime.block_on(async {
        let conn = client::connect(&cluster.flags("default")).await.expect("connect");
        let catalog = ResourceCatalog::fetch(&conn).await.expect("discovery");
        let configmaps = catalog.resolve("configmaps").unwrap();
        let lister =
            Lister::new(&conn, Scope::AllNamespaces, Selectors::label(Some(&selector)), ListOptions::default());
        let objects = lister.list(configmaps).await.expect("list");
        objects
            .iter()
            .map(|o| {
                format!("{}/{}", o["metadata"]["namespace"].as_str().unwrap(), o["metadata"]["name"].as_str().unwrap())
            })
            .collect()
    });
    assert_eq!(listed.len(), expected.len());
    assert_eq!(listed, expected, "exactly the selected objects, once each, in the server's order");
    let encoded = format!("labelSelector=fw-listing%3D{run_id}");
    let lists = fieldwise_e2e::eventually("the listing in the audit log", std::time::Duration::from_secs(20), || {
        let lists = audited_list_namespaces(&cluster, &encoded);
        lists.iter().any(|ns| ns.as_deref() == Some(&ordered[2])).then_some(lists)
    });
    // 1,200 selected and uncounted: after 1,000 objects across all namespaces, the rest
    // was listed namespace by namespace (the last of ours among them).
    assert!(lists.contains(&None), "{lists:?}");
    assert!(!lists.iter().any(|ns| ns.as_deref() == Some(&ordered[0])), "the first namespace was complete: {lists:?}");

    // The same through `last-applied scan -A -l` (metadata first, then whole pages, split):
    // every selected ConfigMap was made by `kubectl create`, so each is one `missing` finding
    // (one finding per line of the report).
    let out = run(cluster
        .plugin("kubectl-last_applied")
        .args(["scan", "-A", "-l", &selector, "--kinds", "cm", "-o", "json"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let found: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}/{}", f["namespace"].as_str().unwrap_or_default(), f["name"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(found, expected, "the scan's findings: the selected objects, once each, in order");
    assert_eq!(report["scanned"]["objects"], expected.len() as u64);
    let kinds: BTreeSet<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["finding"].as_str().map(str::to_string))
        .collect();
    assert_eq!(kinds, BTreeSet::from(["missing".to_string()]));

    for ns in &namespaces {
        cluster.kubectl_ok(&["delete", "namespace", ns, "--wait=false"]);
    }
}

/// Every list of `resource` the audit log recorded whose URL holds `needle`: its request URI.
fn audited_list_uris(cluster: &Cluster, resource: &str, needle: &str) -> Vec<String> {
    let log = std::fs::read_to_string(cluster.dir.join("audit.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains(needle))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["stage"] == "ResponseComplete" && e["verb"] == "list" && e["objectRef"]["resource"] == resource)
        .filter_map(|e| e["requestURI"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bulk_safe_patch_selects_through_the_engine() {
    let cluster = require_cluster!();
    let data = std::env::temp_dir().join(format!("fw-listing-select-{}", std::process::id()));
    let (a, b) = (cluster.namespace("fw-listing-sel"), cluster.namespace("fw-listing-sel"));
    let picked = format!("fw-picked-{}", std::process::id());
    for ns in [&a, &b] {
        let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for i in 0..12 {
            list.push_str(&format!(
                "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: cm-{i:02}}}, data: {{k: v}}}}\n"
            ));
        }
        list.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: {picked}}}, data: {{k: v}}}}\n"
        ));
        cluster.kubectl_stdin(&["create", "-n", ns, "-f", "-"], &list);
    }
    let safe_patch = |args: &[&str]| {
        let mut cmd = cluster.plugin("kubectl-safe_patch");
        cmd.env("FIELDWISE_DATA_DIR", &data).args(args);
        run(&mut cmd)
    };
    let patch = r#"{"data":{"k":"w"}}"#;

    // `--all` in one namespace: every ConfigMap there (whatever else the cluster put in it),
    // previewed, and nothing written without a terminal or --yes.
    let in_a = cluster.kubectl_ok(&["get", "cm", "-n", &a, "-o", "name"]).lines().count();
    assert!(in_a >= 13, "{in_a} ConfigMaps in {a}");
    let out = safe_patch(&["cm", "--all", "-n", &a, "-p", patch]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("not patching {in_a} objects")), "{stderr}");
    // Listed by the engine: the namespace's list, paged at kubectl's chunk size.
    let uris = fieldwise_e2e::eventually("the selection's list", std::time::Duration::from_secs(20), || {
        let uris = audited_list_uris(&cluster, "configmaps", &format!("/namespaces/{a}/configmaps"));
        (!uris.is_empty()).then_some(uris)
    });
    assert!(uris.iter().all(|u| u.contains("limit=500")), "{uris:?}");

    // `--field-selector` across every namespace: exactly the two picked, one in each.
    let selector = format!("metadata.name={picked}");
    let out = safe_patch(&["cm", "-A", "--field-selector", &selector, "-p", patch]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not patching 2 objects"), "{stderr}");
    for ns in [&a, &b] {
        assert!(stderr.contains(ns.as_str()), "{ns} is in the preview: {stderr}");
    }
    let encoded = format!("fieldSelector=metadata.name%3D{picked}");
    let uris = fieldwise_e2e::eventually("the -A list", std::time::Duration::from_secs(20), || {
        let uris = audited_list_uris(&cluster, "configmaps", &encoded);
        (!uris.is_empty()).then_some(uris)
    });
    assert!(uris.iter().all(|u| u.starts_with("/api/v1/configmaps?") && u.contains("limit=500")), "{uris:?}");

    // A type the server does not list (bindings: create only) is refused, with what to do.
    let out = safe_patch(&["bindings", "--all", "-n", &a, "-p", "{}"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot be listed") && stderr.contains("name its objects"), "{stderr}");

    for ns in [&a, &b] {
        cluster.kubectl_ok(&["delete", "namespace", ns, "--wait=false"]);
    }
    let _ = std::fs::remove_dir_all(&data);
}
