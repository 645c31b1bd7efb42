//! Applying strategic merge patches: cases in the spirit of upstream's patch_test.go,
//! against the embedded built-in schema. Every case asserts the exact result.

use fieldwise_core::schema::{builtin, Gvk, Schema, TypeDef, TypeId};
use fieldwise_core::strategic::{self, ErrorKind};
use serde_json::{json, Value};

fn ty(group: &str, version: &str, kind: &str) -> TypeId {
    builtin().root(&Gvk::new(group, version, kind)).expect("built-in kind")
}

fn pod() -> TypeId {
    ty("", "v1", "Pod")
}

fn apply_pod(original: Value, patch: Value) -> Value {
    strategic::apply(&original, &patch, builtin(), pod()).expect("patch applies")
}

fn apply_err(original: Value, patch: Value, ty: TypeId) -> ErrorKind {
    strategic::apply(&original, &patch, builtin(), ty).expect_err("patch fails").kind
}

#[test]
fn keyed_list_merges_by_name_patch_items_after_server_order() {
    let original = json!({"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
    let patch = json!({"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}});
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}})
    );
}

#[test]
fn null_deletes_a_field_and_unmatched_nulls_vanish() {
    let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    let patch = json!({"metadata": {"labels": {"a": null, "z": null}, "annotations": {"x": null, "y": "1"}}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"labels": {"b": "2"}, "annotations": {"y": "1"}}}));
}

#[test]
fn delete_directive_in_a_keyed_list() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}});
    let patch = json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}]}});
    assert_eq!(apply_pod(original, patch), json!({"spec": {"containers": [{"name": "a"}, {"name": "c"}]}}));
}

#[test]
fn replace_directive_in_a_keyed_list() {
    let original = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}});
    let patch = json!({"spec": {"containers": [{"name": "z"}, {"$patch": "replace"}]}});
    assert_eq!(apply_pod(original, patch), json!({"spec": {"containers": [{"name": "z"}]}}));
}

#[test]
fn replace_and_delete_directives_in_maps() {
    let original = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"nodeSelector": {"x": "1", "y": "2"}}});
    let patch = json!({"metadata": {"labels": {"$patch": "delete"}},
                       "spec": {"nodeSelector": {"$patch": "replace", "z": "3"}}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"labels": {}}, "spec": {"nodeSelector": {"z": "3"}}}));
}

#[test]
fn primitive_sets_merge_with_upstream_order() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let patch = json!({"metadata": {"finalizers": ["c", "a"]}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"finalizers": ["c", "a", "b"]}}));
}

#[test]
fn primitive_sets_deduplicate() {
    let original = json!({"metadata": {"finalizers": ["a", "a", "b"]}});
    let patch = json!({"metadata": {"finalizers": ["b"]}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"finalizers": ["a", "b"]}}));
}

#[test]
fn delete_from_primitive_list() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zz"]}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"finalizers": ["a", "c"]}}));
}

#[test]
fn delete_from_primitive_list_of_an_absent_field_is_ignored() {
    let original = json!({"metadata": {"name": "x"}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"name": "x"}}));
}

#[test]
fn set_element_order_reorders_keyed_lists() {
    let original = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}]}});
    let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                                "containers": [{"name": "a", "image": "2"}]}});
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"containers": [{"name": "b"}, {"name": "a", "image": "2"}]}})
    );
}

#[test]
fn set_element_order_keeps_server_only_items_in_place() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "s"}, {"name": "b"}]}});
    let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}, {"name": "c"}],
                                "containers": [{"name": "c"}]}});
    // Patch items follow the order list; the server-only `s` stays before the items that followed it live.
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"containers": [{"name": "s"}, {"name": "b"}, {"name": "a"}, {"name": "c"}]}})
    );
}

#[test]
fn set_element_order_for_primitive_lists() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$setElementOrder/finalizers": ["c", "b", "a"]}});
    assert_eq!(apply_pod(original, patch), json!({"metadata": {"finalizers": ["c", "b", "a"]}}));
}

#[test]
fn set_element_order_with_deletions_and_additions() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}});
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "d"}, {"name": "a"}],
        "containers": [{"name": "d"}, {"name": "b", "$patch": "delete"}]}});
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"containers": [{"name": "c"}, {"name": "d"}, {"name": "a"}]}})
    );
}

#[test]
fn retain_keys_clears_other_fields() {
    let deployment = ty("apps", "v1", "Deployment");
    let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let out = strategic::apply(&original, &patch, builtin(), deployment).expect("applies");
    assert_eq!(out, json!({"spec": {"strategy": {"type": "Recreate"}}}));
}

#[test]
fn retain_keys_in_keyed_list_elements() {
    let original =
        json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "secret": {"secretName": "s"}}]}});
    let patch =
        json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "c"}}]}});
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"volumes": [{"name": "v", "configMap": {"name": "c"}}, {"name": "w", "secret": {"secretName": "s"}}]}})
    );
}

#[test]
fn new_fields_lose_directive_objects_and_nulls() {
    let original = json!({"spec": {}});
    let patch = json!({"spec": {"affinity": {"nodeAffinity": {"$patch": "replace"}, "podAffinity": {"x": null}}}});
    assert_eq!(apply_pod(original, patch), json!({"spec": {"affinity": {"podAffinity": {}}}}));
}

#[test]
fn replace_strategy_fields_and_type_changes_take_the_patch() {
    let original = json!({"spec": {"containers": [{"name": "a", "args": ["x", "y"]}], "hostname": {"odd": 1}}});
    let patch = json!({"spec": {"containers": [{"name": "a", "args": ["z"]}], "hostname": "h"}});
    assert_eq!(
        apply_pod(original, patch),
        json!({"spec": {"containers": [{"name": "a", "args": ["z"]}], "hostname": "h"}})
    );
}

#[test]
fn null_documents_are_empty_objects() {
    assert_eq!(apply_pod(Value::Null, json!({"a": 1})), json!({"a": 1}));
    assert_eq!(apply_pod(json!({"a": 1}), Value::Null), json!({"a": 1}));
}

#[test]
fn error_bad_primitive_list_directive() {
    let kind = apply_err(json!({"metadata": {}}), json!({"metadata": {"$deleteFromPrimitiveList": ["a"]}}), pod());
    assert_eq!(kind, ErrorKind::BadPatchFormatForPrimitiveList);
}

#[test]
fn error_bad_set_element_order_directive() {
    let kind = apply_err(json!({"metadata": {}}), json!({"metadata": {"$setElementOrder": ["a"]}}), pod());
    assert_eq!(kind, ErrorKind::BadPatchFormatForSetElementOrderList);
}

#[test]
fn error_set_element_order_not_a_list() {
    let kind = apply_err(json!({"metadata": {}}), json!({"metadata": {"$setElementOrder/finalizers": "a"}}), pod());
    assert_eq!(kind, ErrorKind::BadArgType { expected: "[]interface {}", actual: "string" });
}

#[test]
fn error_set_element_order_mismatch() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
    let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "b"}]}});
    let err = strategic::apply(&original, &patch, builtin(), pod()).expect_err("mismatch");
    assert!(matches!(err.kind, ErrorKind::SetElementOrderMismatch { .. }), "{err}");
    assert_eq!(err.path(), ".spec.containers");
}

#[test]
fn error_retain_keys_not_a_list_or_missing_a_field() {
    let deployment = ty("apps", "v1", "Deployment");
    let original = json!({"spec": {"strategy": {"type": "RollingUpdate"}}});
    let not_list = json!({"spec": {"strategy": {"$retainKeys": "type"}}});
    assert_eq!(apply_err(original.clone(), not_list, deployment), ErrorKind::BadPatchFormatForRetainKeys);
    let missing = json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}});
    let err = strategic::apply(&original, &missing, builtin(), deployment).expect_err("fails");
    assert_eq!(err.kind, ErrorKind::BadPatchFormatForRetainKeys);
    assert_eq!(err.path(), ".spec.strategy.rollingUpdate");
}

#[test]
fn error_missing_merge_key() {
    let original = json!({"spec": {"containers": [{"name": "a"}]}});
    let err = strategic::apply(&original, &json!({"spec": {"containers": [{"image": "x"}]}}), builtin(), pod())
        .expect_err("no merge key");
    assert_eq!(err.kind, ErrorKind::NoMergeKey { map: "map[image:x]".into(), key: "name".into() });
    assert_eq!(err.to_string(), ".spec.containers: map: map[image:x] does not contain declared merge key: name");
}

#[test]
fn error_invalid_patch_directive_values() {
    let kind =
        apply_err(json!({"metadata": {"labels": {}}}), json!({"metadata": {"labels": {"$patch": "nope"}}}), pod());
    assert_eq!(kind, ErrorKind::BadPatchType { directive: "nope".into(), map: "map[$patch:nope]".into() });
    let list = json!({"spec": {"containers": [{"name": "a"}]}});
    let kind = apply_err(list.clone(), json!({"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}), pod());
    assert_eq!(kind, ErrorKind::MergeDirectiveInList);
    let kind = apply_err(list, json!({"spec": {"containers": [{"name": "a", "$patch": 1}]}}), pod());
    assert_eq!(kind, ErrorKind::BadPatchType { directive: "1".into(), map: "map[$patch:1 name:a]".into() });
    let kind = apply_err(json!({"spec": {}}), json!({"spec": {"$patch": "merge"}}), pod());
    assert_eq!(kind, ErrorKind::BadPatchType { directive: "merge".into(), map: "map[$patch:merge]".into() });
}

#[test]
fn error_unknown_field_when_both_sides_are_objects() {
    let err = strategic::apply(
        &json!({"spec": {"bogus": {"a": 1}}}),
        &json!({"spec": {"bogus": {"b": 2}}}),
        builtin(),
        pod(),
    )
    .expect_err("unknown field");
    assert_eq!(err.kind, ErrorKind::FieldNotFound { structure: "PodSpec".into(), field: "bogus".into() });
    assert_eq!(err.to_string(), ".spec.bogus: unable to find api field in struct PodSpec for the json field \"bogus\"");
    // A scalar on either side needs no metadata, like upstream.
    assert_eq!(
        apply_pod(json!({"spec": {"bogus": 1}}), json!({"spec": {"bogus": {"b": 2}}})),
        json!({"spec": {"bogus": {"b": 2}}})
    );
}

#[test]
fn error_mixed_element_types() {
    let kind = apply_err(json!({"metadata": {"finalizers": ["a"]}}), json!({"metadata": {"finalizers": [1]}}), pod());
    assert!(matches!(kind, ErrorKind::ElementTypesDiffer(_)), "{kind:?}");
    let kind = apply_err(json!({"metadata": {"finalizers": [[1]]}}), json!({"metadata": {"finalizers": [[2]]}}), pod());
    assert_eq!(kind, ErrorKind::NoListOfLists);
}

#[test]
fn error_documents_must_be_objects() {
    assert_eq!(apply_err(json!([1]), json!({}), pod()), ErrorKind::BadJsonDoc);
    assert_eq!(apply_err(json!({}), json!("x"), pod()), ErrorKind::BadJsonDoc);
}

#[test]
fn error_untyped_roots_suggest_merge_patch() {
    let mut schema = Schema::new();
    let id = schema.add(Some("com.example.v1.Widget"), TypeDef::Untyped);
    let err = strategic::apply(&json!({}), &json!({}), &schema, id).expect_err("untyped");
    assert!(err.to_string().contains("--type merge"), "{err}");
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget"});
    let err = strategic::root_type(builtin(), &widget).expect_err("unknown kind");
    assert_eq!(err.kind, ErrorKind::Untyped { type_name: "Widget.example.com/v1".into() });
}

#[test]
fn error_root_must_be_a_struct() {
    let mut schema = Schema::new();
    let string = schema.add(None, TypeDef::Scalar(fieldwise_core::schema::ScalarKind::String));
    let err = strategic::apply(&json!({}), &json!({}), &schema, string).expect_err("not a struct");
    assert_eq!(err.kind, ErrorKind::BadArgKind { expected: "struct", actual: "string" });
}
