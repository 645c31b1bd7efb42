//! The benchmark corpus: generated objects, patches and apply configurations
//! of the sizes the issues name, shared by the criterion bench (`benches/engine.rs`)
//! and the side-by-side timing example (`tools/src/bin/bench_engine.rs`), which writes
//! it to files so the Go implementation reads exactly the same bytes.
//!
//! Every case is deterministic (no randomness), so two runs measure the same work.

use serde_json::{json, Map, Value};

/// One benchmark case: a live object and the inputs of each operation on it.
pub struct Case {
    /// Short name used in tables and file names (`deploy-5k`).
    pub name: &'static str,
    /// What the case is, for the tables.
    #[allow(dead_code)] // read by bench_engine, not by the criterion bench
    pub description: &'static str,
    /// The object as the server holds it: what a patch applies to, and `current` of a three-way patch.
    pub live: Value,
    /// A strategic merge patch for `live` (changed fields, a new list entry, a `$patch: delete`).
    pub strategic_patch: Value,
    /// An RFC 7386 merge patch for `live`.
    pub merge_patch: Value,
    /// The last-applied configuration (`original` of a three-way patch).
    pub original: Value,
    /// The edited configuration (`modified` of a three-way patch).
    pub modified: Value,
}

/// Every case of the patch-engine table, smallest first.
pub fn cases() -> Vec<Case> {
    vec![
        deployment_case("deploy-5k", "Deployment, ~5 KB (3 containers x 12 env vars)", 3, 12),
        deployment_case("deploy-200k", "Deployment, ~200 KB (50 containers x 100 env vars)", 50, 100),
        config_map_case(),
        deployment_case(
            "keyed-10k",
            "Deployment, one container with a 10,000-entry env list (merge key name)",
            1,
            10_000,
        ),
    ]
}

/// A Deployment of about 1 MB including its managedFields (two managers, one owning
/// every field of the spec): the object `kubectl owners` annotates.
pub fn owned_deployment_1m(managed_fields: impl FnOnce(&Value) -> Vec<Value>) -> Value {
    let mut live = deployment_live("big", &containers(180, 40), 3);
    let entries = managed_fields(&live);
    live["metadata"]["managedFields"] = Value::Array(entries);
    live
}

fn env(container: usize, count: usize) -> Vec<Value> {
    (0..count)
        .map(|j| json!({"name": format!("VAR_{j:05}"), "value": format!("value-{container:03}-{j:05}")}))
        .collect()
}

fn container(i: usize, env_count: usize) -> Value {
    json!({
        "name": format!("c{i:03}"),
        "image": format!("registry.example.com/team/service-{i:03}:1.0.{i}"),
        "args": ["--port", format!("{}", 8080 + i), "--log-level=info"],
        "ports": [{"name": format!("http-{i:03}"), "containerPort": 8080 + i, "protocol": "TCP"}],
        "env": env(i, env_count),
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": format!("/etc/service-{i:03}"), "readOnly": true}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + i}, "periodSeconds": 10},
    })
}

fn containers(count: usize, env_count: usize) -> Vec<Value> {
    (0..count).map(|i| container(i, env_count)).collect()
}

/// The configuration a user applies.
fn deployment_config(name: &str, containers: &[Value], replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "bench", "labels": {"app": name, "tier": "backend", "app.kubernetes.io/version": "1"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "backend"}},
                "spec": {
                    "containers": containers,
                    "volumes": [{"name": "config", "configMap": {"name": format!("{name}-config")}}],
                },
            },
        },
    })
}

/// The same configuration as the server stores it: server metadata, defaults, status.
fn deployment_live(name: &str, containers: &[Value], replicas: i64) -> Value {
    let defaulted: Vec<Value> = containers
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c["imagePullPolicy"] = json!("IfNotPresent");
            c["terminationMessagePath"] = json!("/dev/termination-log");
            c["terminationMessagePolicy"] = json!("File");
            c
        })
        .collect();
    let mut live = deployment_config(name, &defaulted, replicas);
    let metadata = live["metadata"].as_object_mut().expect("metadata is a map");
    metadata.insert("uid".into(), json!("6c7a3a8e-1d2b-4c55-9f0e-0b8f3b7d5a11"));
    metadata.insert("resourceVersion".into(), json!("123456"));
    metadata.insert("generation".into(), json!(4));
    metadata.insert("creationTimestamp".into(), json!("2025-01-01T00:00:00Z"));
    metadata.insert("annotations".into(), json!({"deployment.kubernetes.io/revision": "4"}));
    let spec = live["spec"].as_object_mut().expect("spec is a map");
    spec.insert("revisionHistoryLimit".into(), json!(10));
    spec.insert("progressDeadlineSeconds".into(), json!(600));
    spec.insert(
        "strategy".into(),
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
    );
    let pod = live["spec"]["template"]["spec"].as_object_mut().expect("pod spec is a map");
    pod.insert("restartPolicy".into(), json!("Always"));
    pod.insert("terminationGracePeriodSeconds".into(), json!(30));
    pod.insert("dnsPolicy".into(), json!("ClusterFirst"));
    pod.insert("schedulerName".into(), json!("default-scheduler"));
    pod.insert("securityContext".into(), json!({}));
    live["status"] = json!({
        "observedGeneration": 4, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas,
        "availableReplicas": replicas,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
             "lastUpdateTime": "2025-01-01T00:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
             "lastUpdateTime": "2025-01-01T00:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z"},
        ],
    });
    live
}

/// Which containers an edit touches: every tenth (at least the first).
fn touched(count: usize) -> impl Iterator<Item = usize> {
    (0..count).step_by(10)
}

/// Which env entries of a touched container an edit changes: every hundredth (at least the first).
fn touched_env(count: usize) -> impl Iterator<Item = usize> {
    (0..count).step_by(100.min(count.max(1)))
}

fn deployment_case(name: &'static str, description: &'static str, count: usize, env_count: usize) -> Case {
    let base = containers(count, env_count);
    let original = deployment_config(name, &base, 3);
    let mut live = deployment_live(name, &base, 3);
    // Scaled by an autoscaler since the last apply: current differs from original.
    live["spec"]["replicas"] = json!(7);

    // The edit: new images and env values on some containers, one env var added and one removed.
    let mut edited = base.clone();
    let mut patch_containers = Vec::new();
    for i in touched(count) {
        let image = format!("registry.example.com/team/service-{i:03}:2.0.0");
        edited[i]["image"] = json!(image);
        let mut patch_env = Vec::new();
        for j in touched_env(env_count) {
            let value = format!("changed-{i:03}-{j:05}");
            edited[i]["env"][j]["value"] = json!(value);
            patch_env.push(json!({"name": format!("VAR_{j:05}"), "value": value}));
        }
        let added = json!({"name": "ADDED_VAR", "value": "added"});
        let env_list = edited[i]["env"].as_array_mut().expect("env is a list");
        env_list.push(added.clone());
        patch_env.push(added);
        if env_count > 2 {
            let removed = env_list.remove(1);
            patch_env.push(json!({"name": removed["name"], "$patch": "delete"}));
        }
        patch_containers.push(json!({"name": format!("c{i:03}"), "image": image, "env": patch_env}));
    }
    let mut modified = deployment_config(name, &edited, 5);
    modified["metadata"]["labels"]["app.kubernetes.io/version"] = json!("2");
    let strategic_patch = json!({
        "metadata": {"labels": {"app.kubernetes.io/version": "2"}},
        "spec": {"replicas": 5, "template": {"spec": {"containers": patch_containers}}},
    });
    let merge_patch = json!({
        "metadata": {"labels": {"app.kubernetes.io/version": "2", "tier": null}},
        "spec": {"replicas": 5, "paused": false},
    });
    Case { name, description, live, strategic_patch, merge_patch, original, modified }
}

fn config_map(data: &Map<String, Value>, live: bool) -> Value {
    let mut cm = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "big-config", "namespace": "bench", "labels": {"app": "big"}},
        "data": data,
    });
    if live {
        let metadata = cm["metadata"].as_object_mut().expect("metadata is a map");
        metadata.insert("uid".into(), json!("0f5e8a52-5c1e-4f7b-a3c4-1d8e9b2c7a60"));
        metadata.insert("resourceVersion".into(), json!("98765"));
        metadata.insert("creationTimestamp".into(), json!("2025-01-01T00:00:00Z"));
    }
    cm
}

/// A ConfigMap of about 1 MB: 1,000 keys of 1,000 characters each.
fn config_map_case() -> Case {
    let value = |i: usize, tag: &str| -> String {
        let line = format!("{tag}-{i:04}: the quick brown fox jumps over the lazy dog 0123456789\n");
        line.repeat(1000 / line.len() + 1)[..1000].to_string()
    };
    let data: Map<String, Value> = (0..1000).map(|i| (format!("key-{i:04}.conf"), json!(value(i, "v1")))).collect();
    let original = config_map(&data, false);
    let live = config_map(&data, true);
    let mut edited = data.clone();
    let mut patch_data = Map::new();
    for i in (0..1000).step_by(100) {
        let key = format!("key-{i:04}.conf");
        edited.insert(key.clone(), json!(value(i, "v2")));
        patch_data.insert(key, json!(value(i, "v2")));
    }
    edited.insert("added.conf".into(), json!("added"));
    patch_data.insert("added.conf".into(), json!("added"));
    edited.shift_remove("key-0001.conf");
    patch_data.insert("key-0001.conf".into(), Value::Null);
    let modified = config_map(&edited, false);
    let strategic_patch = json!({"data": patch_data});
    let merge_patch = strategic_patch.clone();
    Case {
        name: "configmap-1m",
        description: "ConfigMap, ~1 MB (1,000 keys x 1,000 characters)",
        live,
        strategic_patch,
        merge_patch,
        original,
        modified,
    }
}
