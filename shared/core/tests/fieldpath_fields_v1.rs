//! FieldsV1 against real and realistic apiserver data: byte-exact round trips and set algebra.

#[path = "fieldpath_fixture_data.rs"]
mod fixture;

use fieldwise_core::fieldpath::{Path, PathElement, Set};
use fieldwise_core::ownership::{managed_fields_of, owners_of, parse_managed_fields, ManagerKind, Operation};
use serde_json::{json, Value};

fn entries() -> Vec<Value> {
    serde_json::from_str::<Vec<Value>>(fixture::DEPLOYMENT_MANAGED_FIELDS).unwrap()
}

/// What the apiserver writes for a Deployment applied server-side by `kubectl` and then
/// scaled by an HPA-like controller and updated by kube-controller-manager (hand-written
/// in the apiserver's format: `"."` first, then keys in path-element order).
const SSA_DEPLOYMENT: &str = r#"[
{"manager":"kubectl","operation":"Apply","apiVersion":"apps/v1","time":"2025-01-10T09:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},"f:tolerations":{}}}}}},
{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","time":"2025-01-10T09:00:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}},"subresource":"status"},
{"manager":"horizontal-pod-autoscaler","operation":"Update","apiVersion":"autoscaling/v1","time":"2025-01-10T09:10:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"subresource":"scale"},
{"manager":"kubectl-edit","operation":"Update","apiVersion":"apps/v1","time":"2025-01-11T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/guard\"":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}}
]"#;

#[test]
fn real_fields_v1_round_trips_byte_for_byte() {
    for entry in entries() {
        let original = entry["fieldsV1"].to_string();
        let set = Set::from_fields_v1(&entry["fieldsV1"]).unwrap();
        assert_eq!(set.to_fields_v1_string(), original, "manager {}", entry["manager"]);
    }
    // The whole managedFields list too, entry fields in the apiserver's order.
    let parsed = parse_managed_fields(&serde_json::from_str(fixture::DEPLOYMENT_MANAGED_FIELDS).unwrap()).unwrap();
    let again: Vec<Value> = parsed.iter().map(|e| e.to_value()).collect();
    assert_eq!(serde_json::to_string(&again).unwrap(), fixture::DEPLOYMENT_MANAGED_FIELDS);
}

#[test]
fn hand_written_apiserver_documents_round_trip() {
    let list: Value = serde_json::from_str(SSA_DEPLOYMENT).unwrap();
    for entry in list.as_array().unwrap() {
        let set = Set::from_fields_v1(&entry["fieldsV1"]).unwrap();
        assert_eq!(set.to_fields_v1_string(), entry["fieldsV1"].to_string());
    }
}

#[test]
fn keys_are_ordered_by_value_not_by_text() {
    // 80 < 443 numerically, though "4" < "8" as text: the apiserver writes 80 first.
    let doc = json!({"f:spec": {"f:ports": {
        "k:{\"port\":443,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}},
        "k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}
    }}});
    let text = Set::from_fields_v1(&doc).unwrap().to_fields_v1_string();
    assert_eq!(
        text,
        r#"{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}},"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}"#
    );
}

#[test]
fn ownership_queries_on_a_real_deployment() {
    let mut live: Value = serde_json::from_str(fixture::DEPLOYMENT_LIVE).unwrap();
    live["metadata"]["managedFields"] = serde_json::from_str(fixture::DEPLOYMENT_MANAGED_FIELDS).unwrap();
    let entries = managed_fields_of(&live).unwrap();
    assert_eq!(entries.len(), 2);
    let csa = entries.iter().find(|e| e.manager == "kubectl-client-side-apply").unwrap();
    let status = entries.iter().find(|e| e.subresource == "status").unwrap();
    assert_eq!(csa.kind(), ManagerKind::Applier);
    assert_eq!(csa.operation, Operation::Update);

    let replicas = Path::fields(["spec", "replicas"]);
    assert_eq!(owners_of(&entries, replicas.elements()).len(), 1);
    let port = Path::fields(["spec", "template", "spec", "containers"])
        .child(PathElement::key([("name", json!("nginx"))]))
        .child(PathElement::field("ports"))
        .child(PathElement::key([("containerPort", json!(80)), ("protocol", json!("TCP"))]));
    assert!(csa.fields.has(port.elements()), "integer 80 finds the decoded key");

    // The two managers share no field; everything is in their union.
    assert!(csa.fields.intersection(&status.fields).is_empty());
    let all = csa.fields.union(&status.fields);
    assert_eq!(all.len(), csa.fields.len() + status.fields.len());
    assert_eq!(all.difference(&csa.fields), status.fields);
    // "Everything under spec" belongs to client-side apply alone.
    let spec = all.under(&Path::fields(["spec"]));
    assert_eq!(spec, csa.fields.under(&Path::fields(["spec"])));
    assert!(status.fields.under(&Path::fields(["spec"])).is_empty());
    // Leaves drop the "." members of containers.
    assert!(!csa.fields.leaves().has(port.elements()));
    assert!(csa.fields.leaves().has(port.child(PathElement::field("protocol")).elements()));
}

#[test]
fn ssa_deployment_owners() {
    let entries = parse_managed_fields(&serde_json::from_str(SSA_DEPLOYMENT).unwrap()).unwrap();
    let owners =
        |p: &Path| -> Vec<String> { owners_of(&entries, p.elements()).iter().map(|e| e.manager.clone()).collect() };
    assert_eq!(owners(&Path::fields(["spec", "replicas"])), ["horizontal-pod-autoscaler"]);
    assert_eq!(owners(&Path::fields(["spec", "selector"])), ["kubectl"]);
    let finalizer = Path::fields(["metadata", "finalizers"]).child(PathElement::value(json!("example.com/guard")));
    assert_eq!(owners(&finalizer), ["kubectl-edit"]);
    assert_eq!(finalizer.to_string(), ".metadata.finalizers[=\"example.com/guard\"]");
    let hpa = &entries[2];
    assert_eq!(
        hpa.identity().to_string(),
        "\"horizontal-pod-autoscaler\" with subresource \"scale\" using autoscaling/v1"
    );
    assert_eq!(hpa.kind(), ManagerKind::Controller);
}
