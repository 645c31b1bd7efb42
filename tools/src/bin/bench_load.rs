//! `scripts/bench scan`'s loader: creates N objects (ConfigMaps, Secrets, Deployments over
//! 10 namespaces) through the API with bounded concurrency, as `kubectl create` and
//! `kubectl apply` would have made them, far faster than one kubectl per object.
//!
//! Usage: `bench_load FROM TO PREFIX SAMPLE_DIR` (objects FROM..TO, so a larger size adds to
//! a smaller one; KUBECONFIG from the environment). Of every
//! 100 objects: 85 ConfigMaps, 10 Secrets, 5 Deployments; one in 10 is made as
//! `kubectl apply` makes it (the last-applied annotation kubectl writes, manager
//! `kubectl-client-side-apply`), the rest as `kubectl create` makes them (manager
//! `kubectl-create`, no annotation: `missing`); one ConfigMap in 1,000 holds 215 KB
//! (`oversized` once an annotation is added). The manifests of a sample of created
//! ConfigMaps and Secrets go to SAMPLE_DIR, for the byte-for-byte check against kubectl.

use std::time::Instant;

use fieldwise_core::last_applied::encode;
use fieldwise_kube::api::objects::send;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::flags::KubeFlags;
use futures::stream::{self, StreamExt};
use http::Request;
use serde_json::{json, Value};

const NAMESPACES: usize = 10;
const CONCURRENCY: usize = 16;
/// One manifest in this many created ConfigMaps and Secrets is kept for the sample.
const SAMPLE_EVERY: usize = 97;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, from, to, prefix, samples] = &args[..] else {
        return Err("usage: bench_load FROM TO PREFIX SAMPLE_DIR".into());
    };
    let from: usize = from.parse().map_err(|e| format!("FROM: {e}"))?;
    let to: usize = to.parse().map_err(|e| format!("TO: {e}"))?;
    let count = to.saturating_sub(from);
    std::fs::create_dir_all(samples).map_err(|e| format!("{samples}: {e}"))?;
    let flags = KubeFlags { request_timeout: "60s".into(), ..Default::default() };
    let conn = client::connect(&flags).await.map_err(|e| e.to_string())?;
    let started = Instant::now();
    for n in 0..NAMESPACES {
        let body = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": format!("{prefix}-{n}"), "labels": {"fieldwise-bench": "scan"}}});
        post(&conn, "/api/v1/namespaces", "kubectl-create", &body).await?;
    }
    let failures = stream::iter(from..to)
        .map(|i| {
            let conn = &conn;
            async move {
                let (path, manager, body, sample) = object(prefix, i);
                if sample {
                    let file = format!("{samples}/{}-{}.json", body["kind"].as_str().unwrap_or("x"), i);
                    std::fs::write(&file, serde_json::to_vec_pretty(&body).unwrap_or_default())
                        .map_err(|e| format!("{file}: {e}"))?;
                }
                post(conn, &path, manager, &with_annotation(body, manager)).await
            }
        })
        .buffer_unordered(CONCURRENCY)
        .filter_map(|r| async move { r.err() })
        .collect::<Vec<String>>()
        .await;
    if let Some(first) = failures.first() {
        return Err(format!("{} of {count} objects failed; first: {first}", failures.len()));
    }
    eprintln!("loaded {count} objects in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Object `i`: its collection path, the manager that makes it, the manifest (as a user's
/// file: every field the server would default for ConfigMaps and Secrets is spelled out),
/// and whether it belongs to the sample.
fn object(prefix: &str, i: usize) -> (String, &'static str, Value, bool) {
    let ns = format!("{prefix}-{}", i % NAMESPACES);
    let name = format!("obj-{i:06}");
    let manager = if i % 10 == 3 { "kubectl-client-side-apply" } else { "kubectl-create" };
    let labels = json!({"app": format!("a{}", i % 50)});
    let (path, body) = match i % 100 {
        0..=84 => {
            let mut data = json!({"num": i.to_string(), "settings.conf": "level=info\nport=8080\n"});
            if i % 1000 == 7 {
                data["blob"] = Value::String("x".repeat(215_000));
            }
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "labels": labels}, "data": data});
            (format!("/api/v1/namespaces/{ns}/configmaps"), body)
        }
        85..=94 => {
            let body = json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "type": "Opaque", "data": {"password": "c2VjcmV0"}});
            (format!("/api/v1/namespaces/{ns}/secrets"), body)
        }
        _ => {
            let app = format!("d{i}");
            let body = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns, "labels": labels},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": app}},
                    "template": {"metadata": {"labels": {"app": app}},
                        "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}}}});
            (format!("/apis/apps/v1/namespaces/{ns}/deployments"), body)
        }
    };
    let sample = manager == "kubectl-create" && i.is_multiple_of(SAMPLE_EVERY) && i % 100 < 95 && i % 1000 != 7;
    (path, manager, body, sample)
}

/// The manifest as sent: with kubectl's annotation when applied.
fn with_annotation(mut body: Value, manager: &str) -> Value {
    if manager == "kubectl-client-side-apply" {
        let ns = body.pointer("/metadata/namespace").and_then(Value::as_str).map(String::from);
        let text = encode(&body, ns.as_deref());
        body["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": text});
    }
    body
}

async fn post(conn: &client::Connection, path: &str, manager: &str, body: &Value) -> Result<(), String> {
    let request = Request::post(format!("{path}?fieldManager={manager}"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(body).map_err(|e| e.to_string())?);
    match send(conn, request).await {
        Ok(_) => Ok(()),
        Err(e) if e.server_code() == Some(409) => Ok(()), // already there
        Err(e) => Err(format!("{path}: {e}")),
    }
}
