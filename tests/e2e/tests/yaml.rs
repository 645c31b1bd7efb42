//! YAML in and out against the real cluster and the real kubectl: what the
//! plugins print with `-o yaml` (and `last-applied view`, `owners --manager`)
//! goes back through `kubectl apply -f` unchanged, and a manifest or patch is
//! read as kubectl reads it (YAML 1.1: `y: 2` is `true: 2`), on one object and on many
//! (bulk safe-patch's `-f DIR -R`, whose `-o yaml` is a stream of documents); a kubeconfig
//! too (`insecure-skip-tls-verify: yes`, paths relative to the file).

use std::path::{Path, PathBuf};

use fieldwise_e2e::{ok, require_cluster, run, text, Cluster};
use serde_json::{json, Value};

/// The strings a YAML 1.1 reader turns into something else when left unquoted.
fn tricky_data() -> Value {
    json!({
        "yes": "yes", "on": "on", "no": "no", "y": "y", "date": "2001-12-14", "mode": "0777", "exp": "1e3",
        "null": "null", "tilde": "~", "sexagesimal": "12:30", "hex": "0x1F", "empty": "", "merge": "<<",
        "multi": "line one\n  line two\n",
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fw-yaml-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `kubectl apply -f` of `yaml` (written to a file, as a user would save it).
fn kubectl_apply(cluster: &Cluster, dir: &Path, ns: &str, name: &str, yaml: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, yaml).unwrap();
    cluster.kubectl_ok(&["apply", "-n", ns, "-f", file.to_str().unwrap()])
}

fn live_data(cluster: &Cluster, ns: &str, name: &str) -> Value {
    cluster.get_json(ns, &format!("configmap/{name}"))["data"].clone()
}

/// A ConfigMap `name` holding [`tricky_data`], created with `kubectl apply` from JSON
/// (so every value is the string it says, and the object has a last-applied annotation).
fn tricky_configmap(cluster: &Cluster, ns: &str, name: &str) -> Value {
    let data = tricky_data();
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    cluster.kubectl_stdin(&["apply", "-n", ns, "-f", "-"], &object.to_string());
    assert_eq!(live_data(cluster, ns, name), data);
    data
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn yaml_printed_by_every_plugin_applies_back_unchanged() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-yaml-out");
    let dir = scratch("out");

    // safe-patch -o yaml.
    let data = tricky_configmap(&cluster, &ns, "patched");
    let patched = ok(&run(cluster.plugin("kubectl-safe_patch").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "-n",
        &ns,
        "configmap/patched",
        "-p",
        r#"{"metadata":{"labels":{"touched":"yes"}}}"#,
        "--yes",
        "-o",
        "yaml",
    ])));
    assert!(patched.contains("  \"yes\": \"yes\"\n") && patched.contains("  mode: \"0777\"\n"), "{patched}");
    kubectl_apply(&cluster, &dir, &ns, "patched.yaml", &patched);
    assert_eq!(live_data(&cluster, &ns, "patched"), data, "after applying safe-patch's -o yaml");
    assert_eq!(cluster.get_json(&ns, "configmap/patched")["metadata"]["labels"]["touched"], "yes");

    // last-applied view.
    let data = tricky_configmap(&cluster, &ns, "viewed");
    let view = ok(&run(cluster.plugin("kubectl-last_applied").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "-n",
        &ns,
        "view",
        "configmap/viewed",
    ])));
    kubectl_apply(&cluster, &dir, &ns, "view.yaml", &view);
    assert_eq!(live_data(&cluster, &ns, "viewed"), data, "after applying last-applied view");

    // owners --manager: the subtree kubectl's client-side apply owns, applicable as it is.
    let data = tricky_configmap(&cluster, &ns, "owned");
    let mine = ok(&run(cluster.plugin("kubectl-owners").args([
        "-n",
        &ns,
        "configmap/owned",
        "--manager",
        "kubectl-client-side-apply",
    ])));
    kubectl_apply(&cluster, &dir, &ns, "owned.yaml", &mine);
    assert_eq!(live_data(&cluster, &ns, "owned"), data, "after applying owners --manager");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn manifests_and_patches_are_read_as_kubectl_reads_them() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-yaml-in");
    let dir = scratch("in");
    let manifest = dir.join("ykey.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ykey\ndata:\n  y: \"2\"\n  mode: \"0777\"\n",
    )
    .unwrap();
    let manifest = manifest.to_str().unwrap();
    cluster.kubectl_ok(&["apply", "-n", &ns, "-f", manifest]);
    // kubectl reads `y` as the boolean true, whose key is "true".
    assert_eq!(live_data(&cluster, &ns, "ykey"), json!({"true": "2", "mode": "0777"}));

    // The same file and a YAML patch, offline: fieldwise and kubectl agree.
    let patch = "data:\n  n: \"3\"\n  on: \"4\"\n";
    let ours: Value = serde_json::from_str(&ok(&run(cluster
        .plugin("kubectl-safe_patch")
        .env("FIELDWISE_DATA_DIR", dir.join("data"))
        .args(["-n", &ns, "--local", "-f", manifest, "--type", "merge", "-p", patch, "-o", "json"]))))
    .unwrap();
    let theirs: Value =
        serde_json::from_str(&cluster.kubectl_ok(&[
            "patch", "-n", &ns, "--local", "-f", manifest, "--type", "merge", "-p", patch, "-o", "json",
        ]))
        .unwrap();
    assert_eq!(ours["data"], theirs["data"]);
    assert_eq!(ours["data"], json!({"true": "4", "false": "3", "mode": "0777"}));

    // safe-patch names the place of a YAML error in a manifest.
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\ndata: [\n").unwrap();
    let out = run(cluster.plugin("kubectl-safe_patch").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "-n",
        &ns,
        "--local",
        "-f",
        broken.to_str().unwrap(),
        "-p",
        "{}",
    ]));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("document 2, line 7, column 1"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn bulk_reads_files_as_kubectl_and_prints_a_stream_kubectl_applies_back() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-yaml-bulk");
    let dir = scratch("bulk");
    let data = tricky_data();
    for name in ["bulk-a", "bulk-b", "bulk-c"] {
        tricky_configmap(&cluster, &ns, name);
    }
    // YAML 1.1 only: the second item takes apiVersion and kind through a merge key.
    let manifests = dir.join("manifests");
    std::fs::create_dir_all(manifests.join("sub")).unwrap();
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n- &cm\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: bulk-a, namespace: {ns}}}\n- <<: *cm\n  metadata: {{name: bulk-b, namespace: {ns}}}\n"
    );
    std::fs::write(manifests.join("list.yaml"), list).unwrap();
    std::fs::write(
        manifests.join("sub").join("c.yml"),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bulk-c\n  namespace: {ns}\n"),
    )
    .unwrap();
    // `y` is the key "true", as kubectl patch --patch-file reads it.
    let patch = dir.join("patch.yaml");
    std::fs::write(&patch, "data:\n  y: patched\n").unwrap();

    let printed = ok(&run(cluster.plugin("kubectl-safe_patch").env("FIELDWISE_DATA_DIR", dir.join("data")).args([
        "-f",
        manifests.to_str().unwrap(),
        "-R",
        "--patch-file",
        patch.to_str().unwrap(),
        "--yes",
        "-o",
        "yaml",
    ])));
    // One YAML document per object, separated as kubectl's YAML printer separates them.
    let documents = fieldwise_core::yaml::read_stream(&printed).unwrap_or_else(|e| panic!("{e}: {printed}"));
    let mut names: Vec<&str> = documents.iter().filter_map(|d| d.value.pointer("/metadata/name")?.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["bulk-a", "bulk-b", "bulk-c"], "{printed}");
    let mut expected = data.clone();
    expected["true"] = json!("patched");
    for document in &documents {
        assert_eq!(document.value["data"], expected, "{printed}");
    }
    kubectl_apply(&cluster, &dir, &ns, "bulk.yaml", &printed);
    for name in ["bulk-a", "bulk-b", "bulk-c"] {
        assert_eq!(live_data(&cluster, &ns, name), expected, "{name} after applying bulk safe-patch's -o yaml");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn kubeconfig_is_read_as_kubectl_reads_it() {
    use base64::Engine;
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-yaml-kubeconfig");
    let dir = scratch("kubeconfig");
    tricky_configmap(&cluster, &ns, "reached");
    let mut config = fieldwise_core::yaml::to_json(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
    // The user's certificate and key as files named relative to the kubeconfig's directory.
    std::fs::create_dir_all(dir.join("certs")).unwrap();
    let user = config["users"].as_array_mut().unwrap().iter_mut().find(|u| u["name"] == "fieldwise").unwrap();
    for (data, file, field) in
        [("client-certificate-data", "user.crt", "client-certificate"), ("client-key-data", "user.key", "client-key")]
    {
        let pem = base64::engine::general_purpose::STANDARD.decode(user["user"][data].as_str().unwrap()).unwrap();
        std::fs::write(dir.join("certs").join(file), pem).unwrap();
        user["user"].as_object_mut().unwrap().remove(data);
        user["user"][field] = json!(format!("certs/{file}"));
    }
    // `yes` is true in YAML 1.1, as client-go reads a kubeconfig.
    let server = &mut config["clusters"][0]["cluster"];
    server.as_object_mut().unwrap().remove("certificate-authority-data");
    server["insecure-skip-tls-verify"] = json!(true);
    let text = fieldwise_core::yaml::to_yaml(&config)
        .replace("insecure-skip-tls-verify: true", "insecure-skip-tls-verify: yes");
    assert!(
        text.contains("insecure-skip-tls-verify: yes\n") && text.contains("client-key: certs/user.key\n"),
        "{text}"
    );
    let kubeconfig = dir.join("config");
    std::fs::write(&kubeconfig, text).unwrap();
    let kubeconfig = kubeconfig.to_str().unwrap();

    // From another directory, kubectl and the plugin both reach the cluster with it.
    let theirs = ok(&run(cluster.kubectl().current_dir("/").args([
        "--kubeconfig",
        kubeconfig,
        "get",
        "configmap/reached",
        "-n",
        &ns,
        "-o",
        "name",
    ])));
    assert_eq!(theirs, "configmap/reached\n");
    let ours = ok(&run(cluster.plugin("kubectl-last_applied").current_dir("/").args([
        "--kubeconfig",
        kubeconfig,
        "-n",
        &ns,
        "view",
        "configmap/reached",
        "-o",
        "name",
    ])));
    assert_eq!(ours, "configmap/reached\n");
    let _ = std::fs::remove_dir_all(&dir);
}
