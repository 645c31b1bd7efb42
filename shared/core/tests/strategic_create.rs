//! Creating strategic merge patches: two-way (`kubectl edit`) and three-way
//! (`kubectl apply`), against the embedded built-in schema, with exact patches.

use fieldwise_core::schema::{builtin, Gvk, TypeId};
use fieldwise_core::strategic::{self, ErrorKind, Precondition};
use serde_json::{json, Value};

fn ty(group: &str, version: &str, kind: &str) -> TypeId {
    builtin().root(&Gvk::new(group, version, kind)).expect("built-in kind")
}

fn two_way(original: Value, modified: Value) -> Value {
    let patch = strategic::create_two_way(&original, &modified, builtin(), ty("", "v1", "Pod")).expect("creates");
    let applied = strategic::apply(&original, &patch, builtin(), ty("", "v1", "Pod")).expect("applies");
    assert_eq!(applied, modified, "the patch reproduces the modified object");
    patch
}

fn three_way(original: Value, modified: Value, current: Value, overwrite: bool) -> Result<Value, ErrorKind> {
    strategic::create_three_way(&original, &modified, &current, builtin(), ty("apps", "v1", "Deployment"), overwrite)
        .map_err(|e| e.kind)
}

#[test]
fn two_way_changed_container_sets_element_order() {
    let original = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
    let modified = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]}});
    assert_eq!(
        two_way(original, modified),
        json!({"spec": {"containers": [{"image": "b:2", "name": "b"}],
                        "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}]}})
    );
}

#[test]
fn two_way_removed_container_is_a_delete_directive() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
    let modified = json!({"spec": {"containers": [{"name": "a"}]}});
    assert_eq!(
        two_way(original, modified),
        json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}],
                        "$setElementOrder/containers": [{"name": "a"}]}})
    );
}

#[test]
fn two_way_reordered_containers_only_set_the_order() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
    let modified = json!({"spec": {"containers": [{"name": "b"}, {"name": "a"}]}});
    assert_eq!(
        two_way(original, modified),
        json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}})
    );
}

#[test]
fn two_way_primitive_set_uses_parallel_lists() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let modified = json!({"metadata": {"finalizers": ["b", "c"]}});
    assert_eq!(
        two_way(original, modified),
        json!({"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"],
                            "$setElementOrder/finalizers": ["b", "c"]}})
    );
}

#[test]
fn two_way_unsorted_unchanged_primitive_set_still_sets_order() {
    // Upstream compares the modified list with the *sorted* original.
    let original = json!({"metadata": {"finalizers": ["b", "a"]}});
    let patch = strategic::create_two_way(&original, &original, builtin(), ty("", "v1", "Pod")).expect("creates");
    assert_eq!(patch, json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"]}}));
}

#[test]
fn two_way_deleted_and_changed_fields() {
    let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"hostname": "x", "args": 1}});
    let modified = json!({"metadata": {"labels": {"a": "3"}}, "spec": {"hostname": "x"}});
    assert_eq!(
        two_way(original, modified),
        json!({"metadata": {"labels": {"a": "3", "b": null}}, "spec": {"args": null}})
    );
}

#[test]
fn two_way_replace_strategy_lists_are_sent_whole() {
    let original = json!({"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}});
    let modified = json!({"spec": {"containers": [{"name": "a", "args": ["y"]}]}});
    assert_eq!(
        two_way(original, modified),
        json!({"spec": {"containers": [{"name": "a", "args": ["y"]}], "$setElementOrder/containers": [{"name": "a"}]}})
    );
}

#[test]
fn two_way_retain_keys() {
    let deployment = ty("apps", "v1", "Deployment");
    let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let modified = json!({"spec": {"strategy": {"type": "Recreate"}}});
    let patch = strategic::create_two_way(&original, &modified, builtin(), deployment).expect("creates");
    assert_eq!(
        patch,
        json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null, "$retainKeys": ["type"]}}})
    );
    assert_eq!(strategic::apply(&original, &patch, builtin(), deployment).expect("applies"), modified);
}

#[test]
fn two_way_no_change_is_empty() {
    let object =
        json!({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}});
    assert_eq!(two_way(object.clone(), object), json!({}));
}

#[test]
fn two_way_preconditions() {
    let original = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}});
    let renamed = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}});
    let err = strategic::create_two_way_checked(
        &original,
        &renamed,
        builtin(),
        ty("", "v1", "Pod"),
        &Precondition::kubectl(),
    )
    .expect_err("name changed");
    assert!(matches!(err.kind, ErrorKind::PreconditionFailed(_)), "{err}");
    let relabeled = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"x": "1"}}});
    let patch = strategic::create_two_way_checked(
        &original,
        &relabeled,
        builtin(),
        ty("", "v1", "Pod"),
        &Precondition::kubectl(),
    )
    .expect("allowed");
    assert_eq!(patch, json!({"metadata": {"labels": {"x": "1"}}}));
}

#[test]
fn three_way_deletes_what_was_applied_and_keeps_what_others_added() {
    let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    let modified = json!({"metadata": {"labels": {"a": "1"}}});
    let current = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}});
    assert_eq!(three_way(original, modified, current, true), Ok(json!({"metadata": {"labels": {"b": null}}})));
}

#[test]
fn three_way_updates_from_live_and_orders_containers() {
    let tpl = |containers: Value| json!({"spec": {"template": {"spec": {"containers": containers}}}});
    let original = tpl(json!([{"name": "app", "image": "app:1"}]));
    let modified = tpl(json!([{"name": "app", "image": "app:2"}]));
    let current = tpl(json!([{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "s:1"}]));
    assert_eq!(
        three_way(original, modified, current, true),
        Ok(tpl(json!([{"name": "app", "image": "app:2"}]))
            .pointer("/spec")
            .map(|spec| {
                let mut spec = spec.clone();
                spec["template"]["spec"]["$setElementOrder/containers"] = json!([{"name": "app"}]);
                json!({"spec": spec})
            })
            .unwrap_or_default())
    );
}

#[test]
fn three_way_removed_container_combines_deletion_and_order() {
    let tpl = |containers: Value| json!({"spec": {"template": {"spec": {"containers": containers}}}});
    let original = tpl(json!([{"name": "a"}, {"name": "b"}]));
    let modified = tpl(json!([{"name": "a"}]));
    let current = tpl(json!([{"name": "a"}, {"name": "b"}]));
    assert_eq!(
        three_way(original, modified, current, true),
        Ok(json!({"spec": {"template": {"spec": {
            "containers": [{"name": "b", "$patch": "delete"}],
            "$setElementOrder/containers": [{"name": "a"}]}}}}))
    );
}

#[test]
fn three_way_primitive_deletions_stay_parallel_lists() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let modified = json!({"metadata": {"finalizers": ["a"]}});
    let current = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    assert_eq!(
        three_way(original, modified, current, true),
        Ok(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"], "$setElementOrder/finalizers": ["a"]}}))
    );
}

#[test]
fn three_way_conflict_without_overwrite() {
    let original = json!({"spec": {"replicas": 1}});
    let modified = json!({"spec": {"replicas": 2}});
    let current = json!({"spec": {"replicas": 3}});
    assert_eq!(
        three_way(original.clone(), modified.clone(), current.clone(), true),
        Ok(json!({"spec": {"replicas": 2}}))
    );
    let err = three_way(original, modified, current, false).expect_err("conflict");
    assert_eq!(
        err,
        ErrorKind::Conflict {
            patch: r#"{"spec":{"replicas":2}}"#.into(),
            changes: r#"{"spec":{"replicas":3}}"#.into()
        }
    );
}

#[test]
fn three_way_no_conflict_when_changes_agree() {
    let original = json!({"spec": {"replicas": 1}});
    let modified = json!({"spec": {"replicas": 2}});
    let current = json!({"spec": {"replicas": 1, "paused": true}});
    assert_eq!(three_way(original, modified, current, false), Ok(json!({"spec": {"replicas": 2}})));
    // Setting a field back that the live object changed is a conflict.
    let original = json!({"spec": {"paused": false}});
    let current = json!({"spec": {"paused": true}});
    let modified = json!({"spec": {"paused": false, "replicas": 2}});
    assert!(matches!(three_way(original, modified, current, false), Err(ErrorKind::Conflict { .. })));
}

#[test]
fn three_way_retain_keys_directive() {
    let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let modified = json!({"spec": {"strategy": {"type": "Recreate"}}});
    let current = original.clone();
    assert_eq!(
        three_way(original, modified, current, true),
        Ok(json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": null, "type": "Recreate"}}}))
    );
}

/// apimachinery v0.33 looks up an object's fields only in a struct: an object held
/// in a map-typed field (here a label) fails upstream's diff and merge alike,
/// unless the two objects are equal.
#[test]
fn an_object_inside_a_map_field_is_refused_as_upstream_refuses_it() {
    let modified = json!({"metadata": {"labels": {"x": {"c": null}}}});
    let current = json!({"metadata": {"labels": {"x": {}}}});
    let refused = ErrorKind::NotMapOrStruct { kind: "map" };
    assert_eq!(three_way(json!({}), modified.clone(), current.clone(), true), Err(refused.clone()));
    let applied = strategic::apply(&current, &modified, builtin(), ty("apps", "v1", "Deployment"));
    assert_eq!(applied.map_err(|e| e.kind), Err(refused));
    assert_eq!(three_way(json!({}), current.clone(), current, true), Ok(json!({})));
}
