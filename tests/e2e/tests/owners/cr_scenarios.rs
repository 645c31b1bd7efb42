//! Generated server-side apply scenarios on a custom resource (the Widget of
//! `fixtures/widget-crd.yaml`): a base written by client-side apply or by
//! server-side apply, then merge patches, `kubectl scale` through the scale
//! subresource, a status writer and a forced apply by another manager, then an
//! apply by manager B of a random subset of fields touching every list and map
//! type (list-maps with one and two keys, sets, atomic lists, granular and
//! atomic maps, an atomic struct, keyed lists nested in keyed lists, a free-form
//! object). Each scenario compares `predict_apply_conflicts`, under the schema
//! `openapi::Schemas` read from the server, with the apiserver's answer to the
//! same apply as a dry run.

use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::openapi::TypeSchema;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::{PatchRequest, PatchType};
use serde_json::{json, Value};

use super::scenarios::{apply, request, Outcome, Rng, Writes};

/// `widgets.fieldwise.test` from discovery (install it first with `install_widget_crd`).
pub async fn widgets(conn: &Connection) -> ResourceType {
    let catalog = ResourceCatalog::fetch(conn).await.expect("discovery");
    catalog.resolve("widgets.fieldwise.test").expect("widgets.fieldwise.test is served").clone()
}

/// The base configuration of scenario `name`.
fn base(name: &str) -> Value {
    json!({"apiVersion": "fieldwise.test/v1", "kind": "Widget",
    "metadata": {"name": name, "labels": {"app": name}, "annotations": {"note": "base"}},
    "spec": {
        "replicas": 1, "mode": "a",
        "ports": [{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 53, "protocol": "UDP"}],
        "tags": ["a", "b"], "args": ["x", "y"], "notes": ["n1"],
        "labels": {"app": name}, "selector": {"app": name},
        "target": {"kind": "K", "name": "t"},
        "workers": [{"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}],
            "zones": ["z1"], "limits": {"cpu": "1"}}],
        "config": {"k": "v", "nested": {"deep": 1}}
    }})
}

/// Picks one of `choices`.
fn one_of(rng: &mut Rng, choices: &[Value]) -> Value {
    choices[rng.below(choices.len() as u64) as usize].clone()
}

/// Manager B's configuration: identity plus a random subset of fields (same value or new).
fn config_b(name: &str, rng: &mut Rng) -> Value {
    let mut spec = serde_json::Map::new();
    let mut meta = json!({"name": name});
    let mut put = |rng: &mut Rng, field: &str, odds: u64, choices: &[Value]| {
        if rng.one_in(odds) {
            spec.insert(field.into(), one_of(rng, choices));
        }
    };
    put(rng, "replicas", 3, &[json!(1), json!(4)]);
    put(rng, "mode", 3, &[json!("a"), json!("b")]);
    put(
        rng,
        "ports",
        3,
        &[
            json!([{"port": 80, "protocol": "TCP", "name": "http"}]),
            json!([{"port": 80, "protocol": "TCP", "name": "web"}]),
            json!([{"port": 53, "protocol": "UDP", "name": "dns"}]),
            json!([{"port": 443, "protocol": "TCP"}]),
        ],
    );
    put(rng, "tags", 3, &[json!(["a"]), json!(["c"]), json!(["a", "b"]), json!(["b", "d"])]);
    put(rng, "args", 4, &[json!(["x", "y"]), json!(["z"])]);
    put(rng, "notes", 4, &[json!(["n1"]), json!(["n2"])]);
    put(rng, "labels", 3, &[json!({"app": name}), json!({"tier": "web"}), json!({"owner": "b"})]);
    put(rng, "selector", 4, &[json!({"app": name}), json!({"app": "other"})]);
    put(
        rng,
        "target",
        4,
        &[json!({"kind": "K", "name": "t"}), json!({"kind": "K", "name": "u"}), json!({"name": "t"})],
    );
    put(rng, "config", 5, &[json!({"k": "v", "nested": {"deep": 1}}), json!({"k": "w"}), json!({"other": 1})]);
    let mut main = json!({"name": "main"});
    if rng.one_in(3) {
        main["image"] = one_of(rng, &[json!("img:1"), json!("img:2")]);
    }
    if rng.one_in(3) {
        main["env"] = one_of(
            rng,
            &[
                json!([{"name": "A", "value": "1"}]),
                json!([{"name": "A", "value": "2"}]),
                json!([{"name": "B", "value": "b"}]),
            ],
        );
    }
    if rng.one_in(3) {
        main["zones"] = one_of(rng, &[json!(["z1"]), json!(["z2"]), json!(["z1", "z2"])]);
    }
    if rng.one_in(4) {
        main["limits"] = one_of(rng, &[json!({"cpu": "1"}), json!({"cpu": "2"}), json!({"memory": "1Gi"})]);
    }
    let mut workers = Vec::new();
    if main.as_object().is_some_and(|m| m.len() > 1) || rng.one_in(5) {
        workers.push(main);
    }
    if rng.one_in(5) {
        workers.push(json!({"name": "side", "image": "img:side", "zones": ["z3"]}));
    }
    if !workers.is_empty() {
        spec.insert("workers".into(), Value::Array(workers));
    }
    if rng.one_in(4) {
        meta["labels"] = one_of(rng, &[json!({"app": name}), json!({"tier": "web"})]);
    }
    if rng.one_in(4) {
        meta["annotations"] = one_of(rng, &[json!({"note": "base"}), json!({"note": "b-was-here"})]);
    }
    json!({"apiVersion": "fieldwise.test/v1", "kind": "Widget", "metadata": meta, "spec": spec})
}

/// Runs scenario `seed` on a Widget in `namespace`, predicting under `schema`.
pub async fn run(
    conn: &Connection,
    widgets: &ResourceType,
    schema: &TypeSchema,
    namespace: &str,
    seed: u64,
) -> Outcome {
    let mut rng = Rng::new(seed ^ 0x0c0f_fee0);
    let name = format!("cr-{seed}");
    let target = ObjectRef { resource: widgets.clone(), namespace: Some(namespace.into()), name: name.clone() };
    let mut writes = Writes::new(conn, target, format!("custom-resource scenario {seed}"));
    let base = base(&name);
    writes.create(&mut rng, &base).await;
    for _ in 0..rng.below(4) {
        match rng.below(5) {
            0 => writes.scale(&mut rng).await,
            1 => {
                let patch = one_of(
                    &mut rng,
                    &[
                        json!({"spec": {"mode": "patched"}}),
                        json!({"spec": {"labels": {"tier": "patched"}}}),
                        json!({"spec": {"tags": ["a", "b", "c"]}}),
                        json!({"spec": {"selector": {"app": name, "x": "y"}}}),
                        json!({"metadata": {"labels": {"tier": "patched"}}}),
                    ],
                );
                let request = request(PatchType::Merge, &patch, "kubectl-patch");
                writes.patch(&request, "kubectl patch", format!("kubectl patch --type merge {patch}")).await;
            }
            2 => {
                let partial = json!({"apiVersion": "fieldwise.test/v1", "kind": "Widget",
                    "metadata": {"name": name, "annotations": {"owner": "team-c"}},
                    "spec": {"workers": [{"name": "main", "env": [{"name": "C", "value": "c"}], "zones": ["z2"]}],
                        "ports": [{"port": 443, "protocol": "TCP"}], "labels": {"owner": "c"}}});
                let request = PatchRequest { force: true, ..apply(&partial, "team-c") };
                let command = "server-side apply by team-c (env C, zone z2, port 443, label owner)";
                writes.patch(&request, "server-side apply by team-c", command).await;
            }
            3 => {
                let patch = json!({"spec": {"args": ["x", "z"], "target": {"kind": "K", "name": "e"}, "config": {"k": "edited"}}});
                let request = request(PatchType::Merge, &patch, "kubectl-edit");
                writes.patch(&request, "kubectl edit", "kubectl edit (args, target, config)").await;
            }
            _ => {
                let status = json!({"status": {"phase": "Ready", "replicas": 1}});
                let request = PatchRequest {
                    subresource: Some("status"),
                    ..request(PatchType::Merge, &status, "widget-controller")
                };
                writes.patch(&request, "status update", "status update by widget-controller").await;
            }
        }
    }
    let appliers = ["team-b", "kubectl", "team-a"];
    let applier = appliers[rng.below(appliers.len() as u64) as usize].to_string();
    let config = config_b(&name, &mut rng);
    let ty = schema.root.expect("the server's schema describes Widget");
    writes.outcome(seed, applier, config, &schema.schema, ty).await
}
