//! A generated corpus of server-side applies, deterministic from a seed, planned by
//! `kubectl owners plan` and checked against the apiserver's dry runs.
//!
//! Each scenario builds one object with a history, then one manager applies a
//! configuration to it:
//! - kinds: a Deployment (list-maps with one and two keys, atomic lists and structs,
//!   granular maps, the scale and status subresources), a ConfigMap (a granular map), a
//!   Service (a list-map keyed by port and protocol) and a Gadget custom resource (two
//!   served versions, status and scale subresources, a set, an atomic list and map, a
//!   preserve-unknown-fields subtree);
//! - creators: client-side `kubectl apply`, `kubectl create`, server-side apply by a team
//!   or by `kubectl`, or a create whose managedFields are then cleared
//!   (`before-first-apply`);
//! - writes in between: a forced apply by another team (through the other served version
//!   for a Gadget), `kubectl edit` and `kubectl patch`, scaling by an autoscaler or
//!   `kubectl scale`, a status writer, and an earlier apply by the final applier;
//! - the final configuration keeps, changes or drops each field, so conflicts, shared
//!   fields, removals and survivors all occur.
//!
//! The plan of every scenario must be verified by the plugin against the apiserver's
//! dry run (its causes, and every manager's fields afterwards); independently, this test
//! sends the same dry runs and checks the plan's conflicts, removed and surviving fields.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use fieldwise_e2e::plan_check::check_plan;
use fieldwise_e2e::{run as run_command, text, Cluster};
use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::write::{self, PatchRequest, PatchType};
use serde_json::{json, Value};

use super::scenarios::{apply, request, Rng};

/// The appliers of the final configurations (one plan run each).
const APPLIERS: [&str; 3] = ["team-a", "team-b", "kubectl"];

/// The kinds of the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Deployment,
    ConfigMap,
    Service,
    Gadget,
}

/// One scenario, ready to be planned.
#[derive(Debug)]
struct Scenario {
    index: usize,
    kind: Kind,
    name: String,
    applier: &'static str,
    config: Value,
    history: Vec<String>,
    cross_version: bool,
    target: ObjectRef,
}

/// The resource types the corpus writes.
#[derive(Clone)]
struct Types {
    deployments: ResourceType,
    configmaps: ResourceType,
    services: ResourceType,
    gadgets_v1: ResourceType,
    gadgets_v1beta1: ResourceType,
}

/// Generates `total` scenarios from `seed`, plans them, and checks the plans.
pub fn run(cluster: &Cluster, namespace: &str, seed: u64, total: usize) {
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let scenarios = runtime.block_on(async {
        let conn = client::connect(&cluster.flags(namespace)).await.expect("connect");
        let catalog = ResourceCatalog::fetch(&conn).await.expect("discovery");
        let resolve = |name: &str| catalog.resolve(name).unwrap_or_else(|e| panic!("{name}: {e}")).clone();
        let gadget_v1beta1 = catalog
            .by_gvk(&fieldwise_core::schema::Gvk::new("fieldwise.test", "v1beta1", "Gadget"))
            .expect("Gadget v1beta1 is served")
            .clone();
        let types = Types {
            deployments: resolve("deployments.apps"),
            configmaps: resolve("configmaps"),
            services: resolve("services"),
            gadgets_v1: resolve("gadgets.v1.fieldwise.test"),
            gadgets_v1beta1: gadget_v1beta1,
        };
        let limit = Arc::new(tokio::sync::Semaphore::new(12));
        let mut tasks = tokio::task::JoinSet::new();
        for index in 0..total {
            let (conn, types, ns, limit) = (conn.clone(), types.clone(), namespace.to_string(), limit.clone());
            tasks.spawn(async move {
                let _permit = limit.acquire().await.unwrap();
                build(&conn, &types, &ns, seed, index).await
            });
        }
        let mut scenarios = Vec::new();
        while let Some(done) = tasks.join_next().await {
            scenarios.push(done.expect("scenario task"));
        }
        scenarios.sort_by_key(|s: &Scenario| s.index);
        scenarios
    });
    let built = started.elapsed();

    // The plugin plans each applier's configurations in one run, as CI would.
    let mut reports: BTreeMap<String, Value> = BTreeMap::new();
    for applier in APPLIERS {
        let dir = std::env::temp_dir().join(format!("fw-plan-corpus-{applier}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mine: Vec<&Scenario> = scenarios.iter().filter(|s| s.applier == applier).collect();
        for s in &mine {
            std::fs::write(dir.join(format!("{:04}.json", s.index)), s.config.to_string()).unwrap();
        }
        let out = run_command(cluster.plugin("kubectl-owners").args([
            "plan",
            "-n",
            namespace,
            "-f",
            dir.to_str().unwrap(),
            "--field-manager",
            applier,
            "-o",
            "json",
        ]));
        let stdout = text(&out.stdout);
        let doc: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("plan as {applier}: {e}: {stdout}\n{}", text(&out.stderr)));
        if out.status.code() == Some(1) {
            for o in doc["objects"].as_array().unwrap() {
                if o["verification"]["agrees"] != true {
                    let s = scenarios.iter().find(|s| s.name == o["name"]).unwrap();
                    eprintln!(
                        "DISAGREES {} ({:?}, {:?}) then {applier} applies {}\n{o:#}",
                        s.name, s.kind, s.history, s.config
                    );
                }
            }
        }
        // Exit 3 exactly when an object fails --fail-on (by default: a conflict or a refusal).
        let expected = fieldwise_e2e::plan_check::expected_plan_exit(doc["objects"].as_array().unwrap());
        assert_eq!(out.status.code(), Some(expected), "plan as {applier}: {}", text(&out.stderr));
        for o in doc["objects"].as_array().unwrap() {
            reports.insert(o["name"].as_str().unwrap().to_string(), o.clone());
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    let planned = started.elapsed() - built;

    // Independently: the same dry runs, compared with what the plan reported.
    let checks = runtime.block_on(async {
        let conn = client::connect(&cluster.flags(namespace)).await.expect("connect");
        let mut problems = Vec::new();
        for s in &scenarios {
            let report = reports.get(&s.name).unwrap_or_else(|| panic!("{} was not planned", s.name));
            let label = format!("{} ({:?}, {:?}, applied by {})", s.name, s.kind, s.history, s.applier);
            problems.extend(check_plan(&conn, &label, &s.target, &s.config, s.applier, report).await);
        }
        problems
    });
    for p in checks.iter().take(10) {
        eprintln!("{p}");
    }
    assert!(checks.is_empty(), "{} scenario(s) differ from the apiserver (first ones above)", checks.len());

    let count = |f: &dyn Fn(&Scenario, &Value) -> bool| scenarios.iter().filter(|s| f(s, &reports[&s.name])).count();
    let non_empty = |v: &Value, key: &str| v[key].as_array().is_some_and(|a| !a.is_empty());
    let verified = count(&|_, r| r["verification"]["agrees"] == true);
    let conflicting = count(&|_, r| non_empty(r, "conflicts"));
    let removed = count(&|_, r| non_empty(r, "removed"));
    let survives = count(&|_, r| non_empty(r, "survives"));
    let shared = count(&|_, r| non_empty(r, "shared"));
    let upgraded = count(&|_, r| non_empty(r, "upgraded"));
    let bfa = count(&|_, r| r["beforeFirstApply"] == true && non_empty(r, "conflicts"));
    let cross = count(&|s, _| s.cross_version);
    let by_kind: BTreeMap<String, usize> = scenarios.iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(format!("{:?}", s.kind)).or_default() += 1;
        m
    });
    eprintln!(
        "plan corpus (seed {}): {verified}/{} verified by the apiserver's dry run; {conflicting} conflicting, \
         {removed} with removals, {survives} with survivors, {shared} with shared fields, {upgraded} upgraded from \
         client-side apply, {bfa} conflicting with before-first-apply, {cross} across served versions; {by_kind:?}; \
         built in {built:?}, planned in {planned:?}",
        seed,
        scenarios.len()
    );
    assert_eq!(verified, scenarios.len(), "every plan is verified field for field");
    assert!(scenarios.len() >= 200, "at least 200 scenarios");
    assert!(by_kind.values().all(|n| *n >= 30), "every kind is well represented: {by_kind:?}");
    assert!(conflicting + 30 <= scenarios.len(), "a mix of conflicting and accepted applies: {conflicting}");
    for (what, n, at_least) in [
        ("conflicting", conflicting, 30),
        ("with removals", removed, 20),
        ("with survivors", survives, 10),
        ("with shared fields", shared, 30),
        ("before-first-apply conflicts", bfa, 10),
        ("across served versions", cross, 10),
    ] {
        assert!(n >= at_least, "{what}: {n} (want at least {at_least})");
    }
}

/// Builds scenario `index`: the object and its history; returns what to apply.
async fn build(conn: &Connection, types: &Types, namespace: &str, seed: u64, index: usize) -> Scenario {
    let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(index as u64));
    let kind = [Kind::Deployment, Kind::ConfigMap, Kind::Service, Kind::Gadget][rng.below(4) as usize];
    let name = format!("p{index}");
    let version_of_base = if kind == Kind::Gadget && rng.one_in(2) { "v1beta1" } else { "v1" };
    let resource = match kind {
        Kind::Deployment => &types.deployments,
        Kind::ConfigMap => &types.configmaps,
        Kind::Service => &types.services,
        Kind::Gadget if version_of_base == "v1beta1" => &types.gadgets_v1beta1,
        Kind::Gadget => &types.gadgets_v1,
    };
    let target = ObjectRef { resource: resource.clone(), namespace: Some(namespace.into()), name: name.clone() };
    let mut w =
        Writer { conn, target: target.clone(), label: format!("scenario {index} ({kind:?})"), history: Vec::new() };
    let base = base(kind, &name, version_of_base);

    let creator = rng.below(5);
    let mut appliers: Vec<&'static str> = vec!["team-b"];
    match creator {
        0 => {
            w.post(&with_last_applied(&base), "kubectl-client-side-apply", "kubectl apply (client-side)").await;
            appliers.push("kubectl");
        }
        1 => {
            w.patch(&apply(&base, "team-a"), "server-side apply by team-a").await;
            appliers.extend(["team-a", "team-a"]);
        }
        2 => {
            w.patch(&apply(&base, "kubectl"), "kubectl apply --server-side").await;
            appliers.extend(["kubectl", "kubectl"]);
        }
        3 => w.post(&base, "kubectl-create", "kubectl create").await,
        _ => {
            w.post(&base, "kubectl-create", "kubectl create").await;
            let clear = json!({"metadata": {"managedFields": [{}]}});
            w.patch(&request(PatchType::Merge, &clear, "kubectl-patch"), "managedFields cleared").await;
        }
    }
    if !appliers.contains(&"team-a") {
        appliers.push("team-a");
    }
    let applier = appliers[rng.below(appliers.len() as u64) as usize];
    let mut cross_version = false;
    if rng.one_in(3) {
        // An earlier apply by the final applier, which its last configuration then drops from.
        let earlier = config(kind, &name, version_of_base, &mut rng);
        let forced = PatchRequest { force: true, ..apply(&earlier, applier) };
        w.patch(&forced, &format!("earlier apply by {applier}")).await;
    }
    for _ in 0..rng.below(4) {
        match rng.below(5) {
            0 => {
                let other = if kind == Kind::Gadget {
                    cross_version = true;
                    if version_of_base == "v1" {
                        "v1beta1"
                    } else {
                        "v1"
                    }
                } else {
                    version_of_base
                };
                let partial = partial(kind, &name, other);
                let forced = PatchRequest { force: true, ..apply(&partial, "team-c") };
                let gadget_target = |v: &str| if v == "v1" { &types.gadgets_v1 } else { &types.gadgets_v1beta1 };
                if kind == Kind::Gadget {
                    let t = ObjectRef { resource: gadget_target(other).clone(), ..w.target.clone() };
                    w.patch_at(&t, &forced, &format!("forced apply by team-c through {other}")).await;
                } else {
                    w.patch(&forced, "forced apply by team-c").await;
                }
            }
            1 => {
                let edit = edit(kind, &mut rng);
                let manager = if rng.one_in(2) { "kubectl-edit" } else { "kubectl-patch" };
                w.patch(&request(PatchType::Merge, &edit, manager), &format!("{manager} {edit}")).await;
            }
            2 if matches!(kind, Kind::Deployment | Kind::Gadget) => {
                let replicas = 1 + rng.below(5);
                let manager = if rng.one_in(2) { "kube-controller-manager" } else { "kubectl" };
                let scale = json!({"spec": {"replicas": replicas}});
                let req = PatchRequest { subresource: Some("scale"), ..request(PatchType::Merge, &scale, manager) };
                w.patch(&req, &format!("scale to {replicas} by {manager}")).await;
            }
            3 if matches!(kind, Kind::Deployment | Kind::Gadget) => {
                let status = match kind {
                    Kind::Deployment => json!({"status": {"observedGeneration": 1, "replicas": 1}}),
                    _ => json!({"status": {"phase": "Ready", "replicas": 1}}),
                };
                let req =
                    PatchRequest { subresource: Some("status"), ..request(PatchType::Merge, &status, "status-writer") };
                w.patch(&req, "status written").await;
            }
            _ => {
                let label = json!({"metadata": {"labels": {"patched": "yes"}, "annotations": {"note": "edited"}}});
                w.patch(&request(PatchType::Merge, &label, "kubectl-label"), "kubectl label/annotate").await;
            }
        }
    }
    let version = if kind == Kind::Gadget && rng.one_in(2) {
        if version_of_base == "v1" {
            cross_version = true;
            "v1beta1"
        } else {
            cross_version = true;
            "v1"
        }
    } else {
        version_of_base
    };
    let final_config = config(kind, &name, version, &mut rng);
    let target = if kind == Kind::Gadget {
        let resource = if version == "v1" { &types.gadgets_v1 } else { &types.gadgets_v1beta1 };
        ObjectRef { resource: resource.clone(), ..target }
    } else {
        target
    };
    Scenario { index, kind, name, applier, config: final_config, history: w.history, cross_version, target }
}

/// The writes of one scenario, each remembered; a write that fails ends the test.
struct Writer<'a> {
    conn: &'a Connection,
    target: ObjectRef,
    label: String,
    history: Vec<String>,
}

impl Writer<'_> {
    async fn patch(&mut self, req: &PatchRequest<'_>, what: &str) {
        let target = self.target.clone();
        self.patch_at(&target, req, what).await;
    }

    async fn patch_at(&mut self, target: &ObjectRef, req: &PatchRequest<'_>, what: &str) {
        if let Err(e) = write::patch(self.conn, target, req).await {
            panic!("{}: {what} failed: {e} (after {:?})", self.label, self.history);
        }
        self.history.push(what.to_string());
    }

    /// Creates the object with a POST, as `kubectl create` and client-side `kubectl apply` do.
    async fn post(&mut self, object: &Value, manager: &str, what: &str) {
        let collection =
            fieldwise_kube::api::request_url::collection_path(&self.target.resource, self.target.namespace.as_deref())
                .expect("a valid path");
        let post = http::Request::post(format!("{collection}?fieldManager={manager}"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(object).expect("JSON"));
        if let Err(e) = objects::send(self.conn, post).await {
            panic!("{}: {what} failed: {e}", self.label);
        }
        self.history.push(what.to_string());
    }
}

fn with_last_applied(base: &Value) -> Value {
    let mut object = base.clone();
    object["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = base.to_string().into();
    object
}

fn api_version(kind: Kind, version: &str) -> String {
    match kind {
        Kind::Deployment => "apps/v1".into(),
        Kind::ConfigMap | Kind::Service => "v1".into(),
        Kind::Gadget => format!("fieldwise.test/{version}"),
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Deployment => "Deployment",
        Kind::ConfigMap => "ConfigMap",
        Kind::Service => "Service",
        Kind::Gadget => "Gadget",
    }
}

/// The object every scenario of `kind` starts from.
fn base(kind: Kind, name: &str, version: &str) -> Value {
    let meta = json!({"name": name, "labels": {"app": name, "tier": "web"}, "annotations": {"note": "base"}});
    let spec = match kind {
        Kind::Deployment => json!({"replicas": 1, "paused": true, "minReadySeconds": 5,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "nodeSelector": {"disk": "ssd"},
                "containers": [{"name": "main", "image": "busybox:1.36", "args": ["sleep", "1000"],
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
                    "resources": {"limits": {"cpu": "1"}}}]}}}),
        Kind::Service => json!({"selector": {"app": name, "tier": "web"}, "ports": [
            {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
            {"name": "dns", "port": 53, "protocol": "UDP"}]}),
        Kind::Gadget => json!({"replicas": 1, "mode": "a",
            "ports": [{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 53, "protocol": "UDP"}],
            "tags": ["a", "b"], "args": ["x", "y"], "labels": {"app": name}, "selector": {"app": name},
            "workers": [{"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}]}],
            "config": {"k": "v", "nested": {"deep": 1}}}),
        Kind::ConfigMap => Value::Null,
    };
    let mut object = json!({"apiVersion": api_version(kind, version), "kind": kind_name(kind), "metadata": meta});
    if kind == Kind::ConfigMap {
        object["data"] = json!({"a": "1", "b": "2", "c": "3"});
    } else {
        object["spec"] = spec;
    }
    object
}

/// A partial configuration another team applies with force.
fn partial(kind: Kind, name: &str, version: &str) -> Value {
    let meta = json!({"name": name, "labels": {"owner": "team-c"}});
    let mut object = json!({"apiVersion": api_version(kind, version), "kind": kind_name(kind), "metadata": meta});
    match kind {
        Kind::Deployment => {
            object["spec"] = json!({"template": {"spec": {"containers": [{"name": "main",
                "env": [{"name": "C", "value": "c"}, {"name": "A", "value": "1"}]}]}}})
        }
        Kind::ConfigMap => object["data"] = json!({"c": "team-c", "d": "4"}),
        Kind::Service => {
            object["spec"] = json!({"ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]})
        }
        Kind::Gadget => {
            object["spec"] = json!({"tags": ["c"], "labels": {"owner": "c"}, "ports": [{"port": 443, "protocol": "TCP"}],
                "workers": [{"name": "main", "env": [{"name": "C", "value": "c"}]}], "config": {"c": 1}})
        }
    }
    object
}

/// A merge patch as `kubectl edit` or `kubectl patch` would send.
fn edit(kind: Kind, rng: &mut Rng) -> Value {
    match (kind, rng.below(2)) {
        (Kind::Deployment, 0) => json!({"spec": {"minReadySeconds": 9}}),
        (Kind::Deployment, _) => json!({"spec": {"template": {"spec": {"nodeSelector": {"zone": "b"}}}}}),
        (Kind::ConfigMap, 0) => json!({"data": {"b": "edited"}}),
        (Kind::ConfigMap, _) => json!({"data": {"e": "5"}}),
        (Kind::Service, 0) => json!({"spec": {"selector": {"tier": "edited"}}}),
        (Kind::Service, _) => json!({"spec": {"sessionAffinity": "ClientIP"}}),
        (Kind::Gadget, 0) => json!({"spec": {"mode": "edited", "args": ["z"]}}),
        (Kind::Gadget, _) => json!({"spec": {"labels": {"tier": "edited"}, "config": {"k": "edited"}}}),
    }
}

/// Keeps a field as it is in the base (`same`, one time in two), changes it (`changed`,
/// one in four), or leaves it out (one in four).
fn pick(rng: &mut Rng, into: &mut serde_json::Map<String, Value>, key: &str, same: Value, changed: Value) {
    match rng.below(4) {
        0 | 1 => {
            into.insert(key.into(), same);
        }
        2 => {
            into.insert(key.into(), changed);
        }
        _ => {}
    }
}

/// A configuration of `kind` keeping, changing or dropping each field of the base, with the
/// fields a valid object needs.
fn config(kind: Kind, name: &str, version: &str, rng: &mut Rng) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("name".into(), name.into());
    let mut labels = serde_json::Map::new();
    pick(rng, &mut labels, "app", json!(name), json!("other"));
    pick(rng, &mut labels, "tier", json!("web"), json!("db"));
    if !labels.is_empty() {
        meta.insert("labels".into(), labels.into());
    }
    let mut annotations = serde_json::Map::new();
    pick(rng, &mut annotations, "note", json!("base"), json!("final"));
    if !annotations.is_empty() {
        meta.insert("annotations".into(), annotations.into());
    }
    let mut object = json!({"apiVersion": api_version(kind, version), "kind": kind_name(kind), "metadata": meta});
    let mut spec = serde_json::Map::new();
    match kind {
        Kind::Deployment => {
            pick(rng, &mut spec, "replicas", json!(1), json!(3));
            pick(rng, &mut spec, "paused", json!(true), json!(true));
            pick(rng, &mut spec, "minReadySeconds", json!(5), json!(7));
            spec.insert("selector".into(), json!({"matchLabels": {"app": name}}));
            let mut main = serde_json::Map::new();
            main.insert("name".into(), "main".into());
            main.insert("image".into(), if rng.one_in(3) { "busybox:1.37" } else { "busybox:1.36" }.into());
            pick(rng, &mut main, "args", json!(["sleep", "1000"]), json!(["sleep", "2000"]));
            pick(
                rng,
                &mut main,
                "env",
                json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                json!([{"name": "A", "value": "9"}]),
            );
            pick(
                rng,
                &mut main,
                "ports",
                json!([{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]),
                json!([{"containerPort": 8080, "protocol": "TCP"}]),
            );
            pick(rng, &mut main, "resources", json!({"limits": {"cpu": "1"}}), json!({"limits": {"memory": "1Gi"}}));
            let mut pod = serde_json::Map::new();
            pod.insert("containers".into(), json!([main]));
            pick(rng, &mut pod, "nodeSelector", json!({"disk": "ssd"}), json!({"disk": "hdd"}));
            spec.insert("template".into(), json!({"metadata": {"labels": {"app": name}}, "spec": pod}));
        }
        Kind::ConfigMap => {
            let mut data = serde_json::Map::new();
            pick(rng, &mut data, "a", json!("1"), json!("10"));
            pick(rng, &mut data, "b", json!("2"), json!("20"));
            pick(rng, &mut data, "c", json!("3"), json!("30"));
            if rng.one_in(3) {
                data.insert("f".into(), "6".into());
            }
            if !data.is_empty() {
                object["data"] = data.into();
            }
            return object;
        }
        Kind::Service => {
            pick(rng, &mut spec, "selector", json!({"app": name, "tier": "web"}), json!({"app": name}));
            let http = json!({"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080});
            let mut ports = vec![if rng.one_in(3) {
                json!({"name": "http", "port": 80, "protocol": "TCP", "targetPort": 9090})
            } else {
                http
            }];
            if rng.one_in(2) {
                ports.push(json!({"name": "dns", "port": 53, "protocol": "UDP"}));
            }
            if rng.one_in(4) {
                ports.push(json!({"name": "dns-tcp", "port": 53, "protocol": "TCP"}));
            }
            spec.insert("ports".into(), ports.into());
        }
        Kind::Gadget => {
            pick(rng, &mut spec, "replicas", json!(1), json!(4));
            pick(rng, &mut spec, "mode", json!("a"), json!("b"));
            pick(
                rng,
                &mut spec,
                "ports",
                json!([{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 53, "protocol": "UDP"}]),
                json!([{"port": 80, "protocol": "TCP", "name": "web"}]),
            );
            pick(rng, &mut spec, "tags", json!(["a", "b"]), json!(["b", "d"]));
            pick(rng, &mut spec, "args", json!(["x", "y"]), json!(["z"]));
            pick(rng, &mut spec, "labels", json!({"app": name}), json!({"app": "other", "x": "y"}));
            pick(rng, &mut spec, "selector", json!({"app": name}), json!({"app": "other"}));
            pick(
                rng,
                &mut spec,
                "workers",
                json!([{"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}]}]),
                json!([{"name": "main", "image": "img:2"}, {"name": "side", "image": "img:s"}]),
            );
            pick(
                rng,
                &mut spec,
                "config",
                json!({"k": "v", "nested": {"deep": 1}}),
                json!({"k": "w", "other": [1, 2]}),
            );
            if rng.one_in(4) {
                object["status"] = json!({"phase": "Planned", "replicas": 9});
            }
        }
    }
    if !spec.is_empty() {
        object["spec"] = spec.into();
    }
    object
}
