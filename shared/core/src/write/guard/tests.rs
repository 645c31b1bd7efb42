//! The guard of the changes the issues reproduced, and each reason for the whole-object guard.

use serde_json::{json, Value};

use super::{guard, taking_back, Guard, WholeObjectReason};
use crate::json_patch;
use crate::plan::{plan, PatchType, PlanInput, Planned};
use crate::schema::{builtin, Gvk, Schema, TypeId};
use crate::write::replan::Intent;

fn schema_and_type() -> (&'static Schema, Option<TypeId>) {
    let schema = builtin();
    (schema, schema.root(&Gvk::new("apps", "v1", "Deployment")))
}

fn deployment(init: &[&str]) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "41",
                        "annotations": {"docs": "https://x/?a=1&b=2"},
                        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
                                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
           "spec": {"replicas": 1, "template": {"spec": {
               "initContainers": init.iter().map(|n| json!({"name": n, "image": "busybox"})).collect::<Vec<_>>(),
               "containers": [{"name": "app", "image": "app:1",
                   "ports": [{"containerPort": 53, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]}]}}}})
}

/// The user's patch planned against `live`, as safe-patch plans it.
fn planned(live: &Value, patch: Value, patch_type: PatchType) -> Planned {
    let (schema, ty) = schema_and_type();
    plan(&PlanInput {
        live,
        patch: &patch,
        patch_type,
        schema,
        ty,
        strategic: true,
        field_manager: "kubectl-safe-patch",
        fix: false,
        force: false,
        display: "deployment.apps/web",
    })
    .expect("the patch plans")
}

fn guarded(live: &Value, planned: &Planned) -> Guard {
    let (schema, ty) = schema_and_type();
    guard(live, planned, Intent::Values, schema, ty)
}

fn fields(guard: Guard) -> Value {
    match guard {
        Guard::Fields(fields) => fields.patch,
        Guard::WholeObject(reason) => panic!("whole-object guard: {reason}"),
    }
}

fn tests_of(patch: &Value) -> Vec<String> {
    patch
        .as_array()
        .into_iter()
        .flatten()
        .filter(|op| op["op"] == "test")
        .map(|op| format!("{} {}", op["path"].as_str().unwrap_or_default(), op["value"]))
        .collect()
}

#[test]
fn an_index_insert_lands_where_previewed_or_fails() {
    // Issue #22.1: `add .../initContainers/1` previewed after migrate-db.
    let live = deployment(&["migrate-db", "warm-cache"]);
    let ops = json!([{"op": "add", "path": "/spec/template/spec/initContainers/1", "value": {"name": "backup-db", "image": "busybox"}}]);
    let p = planned(&live, ops, PatchType::Json);
    let patch = fields(guarded(&live, &p));
    assert_eq!(
        tests_of(&patch),
        [
            // The planner's position test of the index the user wrote, then the membership.
            "/spec/template/spec/initContainers/1/name \"warm-cache\"",
            "/spec/template/spec/initContainers/0/name \"migrate-db\"",
            "/spec/template/spec/initContainers/1/name \"warm-cache\"",
            "/spec/template/spec/initContainers/-1/name \"warm-cache\"",
        ]
    );
    assert_eq!(json_patch::apply(&live, &patch).unwrap(), p.result);
    // A concurrent insert anywhere in the list fails the guard: at 0, at the end, or the same name.
    for init in [
        &["hook-init", "migrate-db", "warm-cache"][..],
        &["migrate-db", "warm-cache", "late"],
        &["migrate-db", "warm-cache", "backup-db"],
    ] {
        assert!(json_patch::apply(&deployment(init), &patch).is_err(), "{init:?}");
    }
    // A change elsewhere (replicas, the app's image) does not.
    let mut elsewhere = live.clone();
    elsewhere["spec"]["replicas"] = json!(3);
    elsewhere["spec"]["template"]["spec"]["containers"][0]["image"] = json!("app:2");
    let written = json_patch::apply(&elsewhere, &patch).unwrap();
    assert_eq!(written["spec"]["replicas"], 3);
    assert_eq!(written["spec"]["template"]["spec"]["initContainers"][1]["name"], "backup-db");
}

#[test]
fn composite_keys_are_tested_on_every_key_field() {
    // Issue #25.5: ports keyed by containerPort and protocol.
    let live = deployment(&[]);
    let ops = json!([{"op": "add", "path": "/spec/template/spec/containers/0/ports/1/name", "value": "dns-udp"}]);
    let patch = fields(guarded(&live, &planned(&live, ops, PatchType::Json)));
    let tests = tests_of(&patch);
    for expected in [
        "/spec/template/spec/containers/0/ports/1/containerPort 53",
        "/spec/template/spec/containers/0/ports/1/protocol \"UDP\"",
        "/spec/template/spec/containers/0/ports/1/name null",
    ] {
        assert!(tests.iter().any(|t| t == expected), "{expected} missing from {tests:?}");
    }
    let mut swapped = live.clone();
    swapped["spec"]["template"]["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53, "protocol": "TCP"}]);
    assert!(json_patch::apply(&swapped, &patch).is_err(), "same containerPort, other protocol at that index");
}

#[test]
fn a_strategic_patch_is_sent_as_the_json_patch_of_its_change_and_never_touches_server_fields() {
    let live = deployment(&["m"]);
    let p =
        planned(&live, json!({"spec": {"replicas": 3}, "metadata": {"labels": {"team": "a"}}}), PatchType::Strategic);
    let patch = fields(guarded(&live, &p));
    assert_eq!(
        patch,
        json!([
            {"op": "test", "path": "/metadata/labels", "value": null},
            {"op": "add", "path": "/metadata/labels", "value": {"team": "a"}},
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
        ])
    );
    for op in patch.as_array().unwrap() {
        let path = op["path"].as_str().unwrap();
        assert!(!path.starts_with("/metadata/managedFields") && !path.starts_with("/metadata/resourceVersion"));
    }
}

#[test]
fn two_writers_creating_the_same_map_conflict_once_then_the_re_plan_passes() {
    let live = json!({"metadata": {"name": "cm", "resourceVersion": "1"}});
    let schema = Schema::new();
    let ours = |live: &Value| {
        let mut result = live.clone();
        result["metadata"]["labels"]["mine"] = json!("y");
        let p = Planned { patch_type: PatchType::Merge, patch: json!({}), result, findings: vec![] };
        fields(guard(live, &p, Intent::Values, &schema, None))
    };
    let theirs = json!({"metadata": {"name": "cm", "resourceVersion": "2", "labels": {"other": "x"}}});
    assert!(json_patch::apply(&theirs, &ours(&live)).is_err(), "their map would be replaced");
    let written = json_patch::apply(&theirs, &ours(&theirs)).unwrap();
    assert_eq!(written["metadata"]["labels"], json!({"other": "x", "mine": "y"}));
}

#[test]
fn json_patch_reads_are_kept_before_the_change() {
    let live = deployment(&["m"]);
    // The user's own test comes first and stays; a copy right after it is pinned to the value it copies.
    let ops = json!([
        {"op": "test", "path": "/spec/replicas", "value": 1},
        {"op": "copy", "from": "/spec/template/spec/containers/0/image", "path": "/metadata/annotations/was"},
    ]);
    let patch = fields(guarded(&live, &planned(&live, ops, PatchType::Json)));
    let tests = tests_of(&patch);
    assert_eq!(tests[0], "/spec/template/spec/containers/0/name \"app\"", "the planner's position test");
    assert_eq!(tests[1], "/spec/replicas 1");
    assert_eq!(tests[2], "/spec/template/spec/containers/0/image \"app:1\"");
    let mut moved = live.clone();
    moved["spec"]["template"]["spec"]["containers"][0]["image"] = json!("app:2");
    assert!(json_patch::apply(&moved, &patch).is_err(), "the copied value moved");
}

#[test]
fn what_cannot_be_pinned_field_by_field_keeps_the_whole_object_guard() {
    let live = deployment(&["m"]);
    let (schema, ty) = schema_and_type();
    let reason = |p: &Planned, intent: Intent| match guard(&live, p, intent, schema, ty) {
        Guard::WholeObject(reason) => reason,
        Guard::Fields(fields) => panic!("field guard {}", fields.patch),
    };
    let replicas = planned(&live, json!({"spec": {"replicas": 2}}), PatchType::Merge);
    assert_eq!(reason(&replicas, Intent::Rule), WholeObjectReason::DerivedFromObject);
    let apply = planned(&live, json!({"spec": {"replicas": 2}}), PatchType::Apply);
    assert_eq!(reason(&apply, Intent::Values), WholeObjectReason::ServerSideApply);
    let versioned =
        planned(&live, json!({"metadata": {"resourceVersion": "41"}, "spec": {"replicas": 2}}), PatchType::Merge);
    assert_eq!(reason(&versioned, Intent::Values), WholeObjectReason::PatchNamesResourceVersion);
    let json_versioned =
        planned(&live, json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "41"}]), PatchType::Json);
    assert_eq!(reason(&json_versioned, Intent::Values), WholeObjectReason::PatchNamesResourceVersion);
    let reads_after = planned(
        &live,
        json!([{"op": "replace", "path": "/spec/replicas", "value": 2}, {"op": "test", "path": "/spec/replicas", "value": 2}]),
        PatchType::Json,
    );
    assert_eq!(reason(&reads_after, Intent::Values), WholeObjectReason::ReadsAfterWriting);
    // The annotation holds `&`, which the apiserver's JSON writes as \u0026: a test of it never passes.
    let escaped = planned(&live, json!({"metadata": {"annotations": {"docs": null}}}), PatchType::Merge);
    assert!(matches!(
        reason(&escaped, Intent::Values),
        WholeObjectReason::Untestable { pointer, .. } if pointer == "/metadata/annotations/docs"
    ));
    // An entry inserted into a list of 12,000 env entries pins them all: more operations than
    // the apiserver takes (one added at either end pins none).
    let mut long = live.clone();
    long["spec"]["template"]["spec"]["containers"][0]["env"] =
        (0..12_000).map(|i| json!({"name": format!("E{i}"), "value": "v"})).collect();
    let add = planned(
        &long,
        json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/1", "value": {"name": "NEW"}}]),
        PatchType::Json,
    );
    assert!(
        matches!(guard(&long, &add, Intent::Values, schema, ty), Guard::WholeObject(WholeObjectReason::TooManyOperations { count }) if count > 10_000)
    );
    // Adding beside it is fine: only the values tested matter.
    let beside = planned(&live, json!({"metadata": {"annotations": {"x": "&"}}}), PatchType::Merge);
    assert!(matches!(guarded(&live, &beside), Guard::Fields(_)));
}

fn deployment_with_env(names: &[&str]) -> Value {
    let mut live = deployment(&[]);
    live["spec"]["template"]["spec"]["containers"][0]["env"] =
        names.iter().map(|n| json!({"name": n, "value": "v"})).collect();
    live
}

#[test]
fn an_added_entry_pins_nothing_but_the_container_and_keeps_other_writers_entries() {
    // Issue #28.11: 20 writers appending their own env entry must not fail one another.
    let live = deployment_with_env(&["A", "B"]);
    let append = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "MINE", "value": "1"}]}]}}}});
    for (patch, patch_type) in [
        (append, PatchType::Strategic),
        (
            json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "MINE", "value": "1"}}]),
            PatchType::Json,
        ),
    ] {
        let p = planned(&live, patch, patch_type);
        let Guard::Fields(fields) = guarded(&live, &p) else { panic!("a field guard") };
        let mut tests = tests_of(&fields.patch);
        tests.dedup();
        assert_eq!(tests, ["/spec/template/spec/containers/0/name \"app\""], "{patch_type:?}");
        assert_eq!(json_patch::apply(&live, &fields.patch).unwrap(), p.result);
        // A strategic merge patch puts the new entry first; a JSON Patch's `-`, last.
        let (front, expected, copy) = match patch_type {
            PatchType::Strategic => (true, ["MINE", "O1", "A", "B", "O2"], 0),
            _ => (false, ["O1", "A", "B", "O2", "MINE"], 4),
        };
        // Others added entries at both ends meanwhile: the write keeps them, names MINE once.
        let moved = deployment_with_env(&["O1", "A", "B", "O2"]);
        let written = json_patch::apply(&moved, &fields.patch).unwrap();
        assert_eq!(env_names(&written), expected);
        assert_eq!(taking_back(&fields.appended, &written), None);
        // Somebody added MINE too: the write passes, and the check names this write's copy.
        let same = deployment_with_env(&["A", "MINE", "B"]);
        let written = json_patch::apply(&same, &fields.patch).unwrap();
        let copy = if front { copy } else { 3 };
        let at = format!("/spec/template/spec/containers/0/env/{copy}");
        assert_eq!(written.pointer(&at).unwrap()["value"], "1", "this write's copy");
        let back = taking_back(&fields.appended, &written).expect("named twice");
        assert_eq!(
            back,
            json!([{"op": "test", "path": at, "value": {"name": "MINE", "value": "1"}}, {"op": "remove", "path": at}])
        );
        assert_eq!(env_names(&json_patch::apply(&written, &back).unwrap()), env_names(&same));
    }
}

fn env_names(object: &Value) -> Vec<&str> {
    let env = object["spec"]["template"]["spec"]["containers"][0]["env"].as_array();
    env.into_iter().flatten().map(|e| e["name"].as_str().unwrap()).collect()
}

#[test]
fn an_insert_between_two_entries_still_pins_the_membership() {
    let live = deployment_with_env(&["A", "B"]);
    let ops = json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/1", "value": {"name": "MID", "value": "1"}}]);
    let p = planned(&live, ops, PatchType::Json);
    let Guard::Fields(fields) = guarded(&live, &p) else { panic!("a field guard") };
    assert!(fields.appended.is_empty());
    assert!(tests_of(&fields.patch).iter().any(|t| t.starts_with("/spec/template/spec/containers/0/env/-1/name")));
    assert!(json_patch::apply(&deployment_with_env(&["A", "B", "C"]), &fields.patch).is_err());
}

#[test]
fn an_added_entry_beside_another_change_pins_its_list() {
    // Taking back a write that named an entry twice must leave nothing of it: only a change
    // that is nothing but added entries goes without pins.
    let live = deployment_with_env(&["A"]);
    let ops = json!([
        {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "MINE", "value": "1"}},
        {"op": "replace", "path": "/spec/replicas", "value": 3},
    ]);
    let p = planned(&live, ops, PatchType::Json);
    let Guard::Fields(fields) = guarded(&live, &p) else { panic!("a field guard") };
    assert!(fields.appended.is_empty());
    assert!(json_patch::apply(&deployment_with_env(&["A", "B"]), &fields.patch).is_err());
    assert_eq!(json_patch::apply(&live, &fields.patch).unwrap(), p.result);
}
