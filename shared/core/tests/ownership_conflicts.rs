//! Server-side apply conflict prediction, checked against what a real v1.33 apiserver answered.

#[path = "fieldpath_fixture_data.rs"]
mod fixture;

use fieldwise_core::fieldpath::{Path, Set};
use fieldwise_core::ownership::{parse_managed_fields, predict_apply, predict_apply_conflicts, ApplyOptions};
use fieldwise_core::schema::{
    Field, ListKind, ListType, MapKind, MapType, ScalarKind, Schema, StructType, TypeDef, TypeId,
};
use serde_json::{json, Value};

fn field(ty: TypeId) -> Field {
    Field::plain(ty)
}

/// A struct whose other keys are untyped (deduced), so the scenarios need not declare every field.
fn object(s: &mut Schema, fields: &[(&str, TypeId)], map_kind: MapKind) -> TypeId {
    let fields = fields.iter().map(|(n, t)| (n.to_string(), field(*t))).collect();
    let untyped = s.add(None, TypeDef::Untyped);
    s.add(None, TypeDef::Struct(StructType { fields, extra: Some(untyped), map_kind }))
}

/// The parts of apps/v1 Deployment the scenarios touch, with upstream's list and map types
/// and the default of the container port's `protocol` key.
/// Fields not listed are untyped (deduced).
fn deployment_schema() -> (Schema, TypeId) {
    let mut s = Schema::new();
    let string = s.add(None, TypeDef::Scalar(ScalarKind::String));
    let int = s.add(None, TypeDef::Scalar(ScalarKind::Integer));
    let strings = s.add(None, TypeDef::Map(MapType { values: string, map_kind: MapKind::Granular }));
    let set = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Set }));
    let args = s.add(None, TypeDef::List(ListType { items: string, list_kind: ListKind::Atomic }));
    let meta = object(
        &mut s,
        &[("name", string), ("namespace", string), ("labels", strings), ("annotations", strings), ("finalizers", set)],
        MapKind::Granular,
    );
    let port = object(&mut s, &[("containerPort", int), ("protocol", string), ("name", string)], MapKind::Granular);
    if let TypeDef::Struct(mut ports) = s.get(port).clone() {
        if let Some(protocol) = ports.fields.get_mut("protocol") {
            protocol.default = Some(json!("TCP"));
        }
        s.set(port, TypeDef::Struct(ports));
    }
    let ports = s.add(
        None,
        TypeDef::List(ListType {
            items: port,
            list_kind: ListKind::Map(vec!["containerPort".into(), "protocol".into()]),
        }),
    );
    let env_var = object(&mut s, &[("name", string), ("value", string)], MapKind::Granular);
    let env = s.add(None, TypeDef::List(ListType { items: env_var, list_kind: ListKind::Map(vec!["name".into()]) }));
    let container = object(
        &mut s,
        &[
            ("name", string),
            ("image", string),
            ("args", args),
            ("ports", ports),
            ("env", env),
            ("imagePullPolicy", string),
        ],
        MapKind::Granular,
    );
    let containers =
        s.add(None, TypeDef::List(ListType { items: container, list_kind: ListKind::Map(vec!["name".into()]) }));
    let pod_spec = object(&mut s, &[("containers", containers)], MapKind::Granular);
    let template = object(&mut s, &[("metadata", meta), ("spec", pod_spec)], MapKind::Granular);
    let selector = object(&mut s, &[("matchLabels", strings)], MapKind::Atomic);
    let spec = object(&mut s, &[("replicas", int), ("selector", selector), ("template", template)], MapKind::Granular);
    let root = object(
        &mut s,
        &[("apiVersion", string), ("kind", string), ("metadata", meta), ("spec", spec)],
        MapKind::Granular,
    );
    (s, root)
}

fn live() -> Value {
    serde_json::from_str(fixture::DEPLOYMENT_LIVE).unwrap()
}

fn config() -> Value {
    serde_json::from_str(fixture::DEPLOYMENT_APPLY).unwrap()
}

fn managed() -> Vec<fieldwise_core::ownership::ManagedFieldsEntry> {
    parse_managed_fields(&serde_json::from_str(fixture::DEPLOYMENT_MANAGED_FIELDS).unwrap()).unwrap()
}

#[test]
fn matches_the_real_409() {
    let (schema, root) = deployment_schema();
    let p = predict_apply_conflicts(&live(), &managed(), &config(), "tester", &schema, root, false);
    assert!(p.errors.is_empty(), "{:?}", p.errors);
    assert!(p.rejected);
    assert_eq!(p.message().as_deref(), Some(fixture::DEPLOYMENT_APPLY_409));
    let causes: Vec<(String, String)> = p.conflicts.iter().map(|c| (c.message(), c.field())).collect();
    assert_eq!(
        causes,
        [
            ("conflict with \"kubectl-client-side-apply\" using apps/v1".to_string(), ".spec.replicas".to_string()),
            (
                "conflict with \"kubectl-client-side-apply\" using apps/v1".to_string(),
                ".spec.template.spec.containers[name=\"nginx\"].image".to_string()
            ),
        ]
    );
    assert_eq!(p.conflicts[0].theirs, Some(json!(2)));
    assert_eq!(p.conflicts[0].yours, Some(json!(5)));
    // Equal values are shared, not conflicts: the selector, the labels, the port (whose
    // protocol the config leaves to its default).
    let shared: Vec<String> = p.shared.iter().map(|s| s.path.to_string()).collect();
    assert!(shared.contains(&".spec.selector".to_string()), "{shared:?}");
    assert!(
        shared.contains(
            &".spec.template.spec.containers[name=\"nginx\"].ports[containerPort=80,protocol=\"TCP\"]".to_string()
        ),
        "{shared:?}"
    );
    assert!(!shared.iter().any(|s| s == ".spec.replicas"));
}

#[test]
fn force_takes_the_fields() {
    let (schema, root) = deployment_schema();
    let p = predict_apply_conflicts(&live(), &managed(), &config(), "tester", &schema, root, true);
    assert!(!p.rejected);
    assert_eq!(p.conflicts.len(), 2);
}

#[test]
fn kubectl_upgrades_from_client_side_apply() {
    // The real apiserver accepted this apply as manager `kubectl`: the conflicting fields
    // still match the last-applied annotation, so they are taken without asking.
    let (schema, root) = deployment_schema();
    let p = predict_apply_conflicts(&live(), &managed(), &config(), "kubectl", &schema, root, false);
    assert!(!p.rejected);
    assert!(p.conflicts.is_empty());
    assert_eq!(p.upgraded.len(), 2);

    // When the live value no longer matches last-applied, that field is a real conflict.
    let mut drifted = live();
    drifted["spec"]["replicas"] = json!(3);
    let p = predict_apply_conflicts(&drifted, &managed(), &config(), "kubectl", &schema, root, false);
    assert!(p.rejected);
    let fields: Vec<String> = p.conflicts.iter().map(|c| c.field()).collect();
    assert_eq!(fields, [".spec.replicas"]);
}

#[test]
fn own_apply_entry_never_conflicts_but_own_update_entry_does() {
    let (schema, root) = deployment_schema();
    let live =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": 1}});
    let owned = json!({"f:spec": {"f:replicas": {}}});
    let entry = |op: &str| json!({"manager": "me", "operation": op, "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "fieldsV1": owned});
    let config =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": 2}});
    let apply = parse_managed_fields(&json!([entry("Apply")])).unwrap();
    assert!(!predict_apply_conflicts(&live, &apply, &config, "me", &schema, root, false).rejected);
    let update = parse_managed_fields(&json!([entry("Update")])).unwrap();
    let p = predict_apply_conflicts(&live, &update, &config, "me", &schema, root, false);
    assert_eq!(
        p.message().unwrap(),
        "Apply failed with 1 conflict: conflict with \"me\" using apps/v1: .spec.replicas"
    );
}

#[test]
fn reset_fields_and_additions() {
    let (schema, root) = deployment_schema();
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "labels": {"x": "1"}},
        "status": {"replicas": 1}});
    let managed = parse_managed_fields(&json!([
        {"manager": "ctrl", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:replicas": {}}}},
        {"manager": "labeler", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}}}
    ]))
    .unwrap();
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "labels": {"y": "2"}},
        "status": {"replicas": 9}});
    // Deployments reset status on the main resource: no conflict there; adding a label
    // to a map another manager owns ("." on labels) is not a conflict either.
    let p = predict_apply_conflicts(&live, &managed, &config, "me", &schema, root, false);
    assert!(p.conflicts.is_empty(), "{:?}", p.conflicts);
    assert!(!p.applied.has(Path::fields(["status", "replicas"]).elements()));
    // Without reset fields (e.g. a custom resource without a status subresource), status conflicts.
    let p = predict_apply(&live, &managed, &config, "me", &schema, root, false, &ApplyOptions::default());
    let fields: Vec<String> = p.conflicts.iter().map(|c| c.field()).collect();
    assert_eq!(fields, [".status.replicas"]);
    assert_eq!(p.conflicts[0].message(), "conflict with \"ctrl\" with subresource \"status\" using apps/v1");
    let _ = Set::new();
}
