//! Generated server-side apply scenarios: a base Deployment written by
//! client-side apply, `kubectl patch`, `kubectl scale` and server-side apply
//! by another manager, then an apply by manager B of a random subset of
//! fields. Each scenario compares `predict_apply_conflicts` with the
//! apiserver's answer to the same apply as a dry run.

use fieldwise_core::ownership::{managed_fields_of, predict_apply_conflicts};
use fieldwise_core::schema::{builtin, Gvk, Schema, TypeId};
use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::{self, FieldValidation, PatchRequest, PatchType};
use fieldwise_kube::Result;
use serde_json::{json, Value};

/// A small deterministic generator (SplitMix64), so a failing seed can be rerun.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability 1/`n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// `deployments.apps` at the cluster's preferred version, from discovery.
pub async fn deployments(conn: &Connection) -> ResourceType {
    let catalog = ResourceCatalog::fetch(conn).await.expect("discovery");
    catalog.resolve("deployments.apps").expect("deployments.apps is served").clone()
}

/// A PATCH of `body` as `field_manager`, through the glue crate's `write::patch` as the
/// plugins send it; set `force`, `dry_run` or `subresource` with struct update syntax.
pub fn request<'a>(patch_type: PatchType, body: &'a Value, field_manager: &'a str) -> PatchRequest<'a> {
    PatchRequest {
        patch_type,
        body,
        field_manager,
        dry_run: false,
        force: false,
        subresource: None,
        validation: FieldValidation::Strict,
    }
}

/// A server-side apply of `config` as `field_manager` (no force, no dry run).
pub fn apply<'a>(config: &'a Value, field_manager: &'a str) -> PatchRequest<'a> {
    request(PatchType::Apply, config, field_manager)
}

fn container(image: &str) -> Value {
    json!({"name": "main", "image": image, "args": ["sleep", "1000"],
        "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 80}]})
}

/// The base configuration of scenario `name`.
fn base(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}, "annotations": {"note": "base"}},
        "spec": {"replicas": 1, "paused": true, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container("busybox:1.28")]}}}})
}

/// Manager B's configuration: identity plus a random subset of changes (same value or new).
fn config_b(name: &str, rng: &mut Rng) -> Value {
    let mut spec = serde_json::Map::new();
    let mut meta = json!({"name": name});
    let mut main = json!({"name": "main"});
    let pick = |rng: &mut Rng, same: &str, new: &str| if rng.one_in(2) { same.to_string() } else { new.to_string() };
    if rng.one_in(2) {
        spec.insert("replicas".into(), json!(if rng.one_in(2) { 1 } else { 2 + rng.below(3) }));
    }
    if rng.one_in(2) {
        main["image"] = pick(rng, "busybox:1.28", "busybox:1.36").into();
    }
    if rng.one_in(3) {
        let env = if rng.one_in(2) {
            json!({"name": "A", "value": pick(rng, "1", "2")})
        } else {
            json!({"name": "B", "value": "b"})
        };
        main["env"] = json!([env]);
    }
    if rng.one_in(3) {
        main["args"] = if rng.one_in(2) { json!(["sleep", "1000"]) } else { json!(["sleep", "2000"]) };
    }
    if rng.one_in(3) {
        main["ports"] = if rng.one_in(2) {
            json!([{"containerPort": 80}])
        } else {
            json!([{"containerPort": 8080, "name": "alt"}])
        };
    }
    if rng.one_in(3) {
        meta["labels"] = if rng.one_in(2) { json!({"app": name}) } else { json!({"tier": pick(rng, "web", "db")}) };
    }
    if rng.one_in(3) {
        meta["annotations"] = json!({"note": pick(rng, "base", "b-was-here")});
    }
    let mut containers = Vec::new();
    if main.as_object().is_some_and(|m| m.len() > 1) || rng.one_in(4) {
        containers.push(main);
    }
    if rng.one_in(5) {
        containers.push(json!({"name": "side", "image": "busybox:1.36", "args": ["sleep", "1"]}));
    }
    if !containers.is_empty() {
        spec.insert("template".into(), json!({"spec": {"containers": containers}}));
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec})
}

/// The outcome of one scenario.
#[derive(Debug)]
pub struct Outcome {
    /// Scenario number.
    pub seed: u64,
    /// What happened before B's apply.
    pub history: Vec<String>,
    /// B's manager and configuration.
    pub applier: String,
    /// B's configuration.
    pub config: Value,
    /// The predicted causes (sorted).
    pub predicted: Vec<(String, String)>,
    /// The apiserver's causes (sorted); `Err` when it answered something other than 200/409.
    pub server: Result<Vec<(String, String)>, String>,
}

impl Outcome {
    /// Whether prediction and apiserver agree.
    pub fn agrees(&self) -> bool {
        self.server.as_ref().is_ok_and(|s| *s == self.predicted)
    }
}

/// The writes of one scenario on one object, each remembered as the command a user would
/// have typed; a write that fails ends the test, naming the scenario.
pub struct Writes<'a> {
    conn: &'a Connection,
    /// The object the scenario writes.
    pub target: ObjectRef,
    /// `scenario 12`, for failure messages.
    label: String,
    /// What happened, in order.
    pub history: Vec<String>,
}

impl<'a> Writes<'a> {
    /// A scenario named `label` on `target`.
    pub fn new(conn: &'a Connection, target: ObjectRef, label: String) -> Self {
        Writes { conn, target, label, history: Vec::new() }
    }

    /// Sends `request` (`what` names it in a failure) and records `command`.
    pub async fn patch(&mut self, request: &PatchRequest<'_>, what: &str, command: impl Into<String>) {
        if let Err(e) = write::patch(self.conn, &self.target, request).await {
            panic!("{}: {what} failed: {e}", self.label);
        }
        self.history.push(command.into());
    }

    /// `kubectl scale --replicas=N` (1 to 4 at random), through the scale subresource.
    pub async fn scale(&mut self, rng: &mut Rng) {
        let n = 1 + rng.below(4);
        let scale = json!({"spec": {"replicas": n}});
        let request = PatchRequest { subresource: Some("scale"), ..request(PatchType::Merge, &scale, "kubectl") };
        self.patch(&request, "kubectl scale", format!("kubectl scale --replicas={n}")).await;
    }

    /// The first write, one of three at random: `kubectl apply` of a new object (a create
    /// with the annotation, as kubectl sends it: not a patch), a server-side apply by team-a,
    /// or `kubectl apply --server-side`. Returns which (0, 1 or 2).
    pub async fn create(&mut self, rng: &mut Rng, base: &Value) -> u64 {
        let creator = rng.below(3);
        match creator {
            0 => {
                let mut object = base.clone();
                object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] =
                    base.to_string().into();
                let collection = fieldwise_kube::api::request_url::collection_path(
                    &self.target.resource,
                    self.target.namespace.as_deref(),
                )
                .expect("a valid path");
                let post = http::Request::post(format!("{collection}?fieldManager=kubectl-client-side-apply"))
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(serde_json::to_vec(&object).expect("JSON"));
                if let Err(e) = objects::send(self.conn, post).await {
                    panic!("{}: client-side apply failed: {e}", self.label);
                }
                self.history.push("kubectl apply (client-side)".into());
            }
            1 => self.patch(&apply(base, "team-a"), "server-side apply by team-a", "server-side apply by team-a").await,
            _ => {
                let what = "kubectl apply --server-side";
                self.patch(&apply(base, "kubectl"), what, what).await;
            }
        }
        creator
    }

    /// Ends the scenario: `applier`'s apply of `config`, as predicted under `schema` and as
    /// the apiserver answers it in a dry run.
    pub async fn outcome(self, seed: u64, applier: String, config: Value, schema: &Schema, ty: TypeId) -> Outcome {
        let live = objects::get(self.conn, &self.target, None).await.expect("read the live object");
        let managed = managed_fields_of(&live).expect("managedFields");
        let prediction = predict_apply_conflicts(&live, &managed, &config, &applier, schema, ty, false);
        let mut predicted: Vec<(String, String)> =
            prediction.conflicts.iter().map(|c| (c.field(), c.message())).collect();
        predicted.sort();
        let dry =
            write::patch(self.conn, &self.target, &PatchRequest { dry_run: true, ..apply(&config, &applier) }).await;
        let server = match dry {
            Ok(_) => Ok(Vec::new()),
            Err(e) if e.is_conflict() => {
                let mut causes: Vec<(String, String)> =
                    e.causes().iter().map(|c| (c.field.clone(), c.message.clone())).collect();
                causes.sort();
                Ok(causes)
            }
            Err(e) => Err(e.to_string()),
        };
        Outcome { seed, history: self.history, applier, config, predicted, server }
    }
}

/// Runs scenario `seed` on a Deployment (of type `deployments`) in `namespace`.
pub async fn run(conn: &Connection, deployments: &ResourceType, namespace: &str, seed: u64) -> Outcome {
    let mut rng = Rng::new(seed);
    let name = format!("sc-{seed}");
    let target = ObjectRef { resource: deployments.clone(), namespace: Some(namespace.into()), name: name.clone() };
    let mut writes = Writes::new(conn, target, format!("scenario {seed}"));
    let base = base(&name);
    let creator = writes.create(&mut rng, &base).await;
    for _ in 0..rng.below(4) {
        match rng.below(4) {
            0 => writes.scale(&mut rng).await,
            1 => {
                let patch = match rng.below(3) {
                    0 => {
                        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.29"}]}}}})
                    }
                    1 => json!({"metadata": {"labels": {"tier": "patched"}}}),
                    _ => json!({"spec": {"replicas": 3}}),
                };
                let request = request(PatchType::Strategic, &patch, "kubectl-patch");
                writes.patch(&request, "kubectl patch", format!("kubectl patch {patch}")).await;
            }
            2 => {
                let partial = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "annotations": {"owner": "team-c"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "main", "env": [{"name": "C", "value": "c"}]}]}}}});
                let request = PatchRequest { force: true, ..apply(&partial, "team-c") };
                let command = "server-side apply by team-c (annotation owner, env C)";
                writes.patch(&request, "server-side apply by team-c", command).await;
            }
            _ => {
                let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "args": ["sleep", "3000"]}]}}}});
                let request = request(PatchType::Strategic, &patch, "kubectl-edit");
                writes.patch(&request, "kubectl edit", "kubectl edit (args)").await;
            }
        }
    }
    // B is never the manager that applied the base: re-applying a partial configuration as the
    // same manager would prune the selector and be refused as invalid, which is not a conflict.
    let appliers: &[&str] = match creator {
        0 => &["team-b", "kubectl", "team-a"],
        1 => &["team-b", "kubectl"],
        _ => &["team-b", "team-a"],
    };
    let applier = appliers[rng.below(appliers.len() as u64) as usize].to_string();
    let config = config_b(&name, &mut rng);
    let schema = builtin();
    let ty = schema.root(&Gvk::new("apps", "v1", "Deployment")).expect("Deployment schema");
    writes.outcome(seed, applier, config, schema, ty).await
}
