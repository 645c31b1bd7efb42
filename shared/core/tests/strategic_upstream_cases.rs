//! Cases where the differential test once found fieldwise and upstream
//! (k8s.io/apimachinery v0.33.13 `strategicpatch`) apart. Every expected value
//! was produced by the Go oracle in `tests/oracle`.

use fieldwise_core::schema::{builtin, Gvk, TypeId};
use fieldwise_core::strategic::{self, ErrorKind};
use serde_json::{json, Value};

fn ty(group: &str, version: &str, kind: &str) -> TypeId {
    builtin().root(&Gvk::new(group, version, kind)).expect("built-in kind")
}

fn deployment() -> TypeId {
    ty("apps", "v1", "Deployment")
}

fn pod() -> TypeId {
    ty("", "v1", "Pod")
}

fn service() -> TypeId {
    ty("", "v1", "Service")
}

fn apply(original: Value, patch: Value, ty: TypeId) -> Result<Value, ErrorKind> {
    strategic::apply(&original, &patch, builtin(), ty).map_err(|e| e.kind)
}

fn three_way(
    original: Value,
    modified: Value,
    current: Value,
    ty: TypeId,
    overwrite: bool,
) -> Result<Value, ErrorKind> {
    strategic::create_three_way(&original, &modified, &current, builtin(), ty, overwrite).map_err(|e| e.kind)
}

// Merging into a set of primitives: upstream appends the patch into the live
// list's spare capacity (as Go's JSON decoder sized it) and de-duplicates in
// place, so with duplicates in the live list the live order it reads back has
// changed.

#[test]
fn primitive_set_with_duplicates_orders_by_the_deduplicated_live_list() {
    let original = json!({"metadata": {"finalizers": ["TCP", "TCP", "UDP"]}});
    let patch = json!({"metadata": {"finalizers": ["nginx:1.27"]}});
    assert_eq!(
        apply(original, patch, deployment()),
        Ok(json!({"metadata": {"finalizers": ["TCP", "nginx:1.27", "UDP"]}}))
    );
}

#[test]
fn primitive_set_without_spare_capacity_keeps_the_live_order() {
    // Two decoded elements have capacity 2: the append reallocates.
    let original = json!({"metadata": {"finalizers": ["a", "a"]}});
    let patch = json!({"metadata": {"finalizers": ["b"]}});
    assert_eq!(apply(original, patch, deployment()), Ok(json!({"metadata": {"finalizers": ["b", "a"]}})));
}

#[test]
fn primitive_set_with_two_new_items_in_spare_capacity() {
    // Five decoded elements have capacity 8: both patch items fit.
    let original = json!({"metadata": {"finalizers": ["a", "a", "b", "c", "d"]}});
    let patch = json!({"metadata": {"finalizers": ["e", "f"]}});
    assert_eq!(
        apply(original, patch, deployment()),
        Ok(json!({"metadata": {"finalizers": ["e", "a", "f", "b", "c", "d"]}}))
    );
}

#[test]
fn primitive_set_with_element_order_reads_the_aliased_live_list() {
    let original = json!({"metadata": {"finalizers": ["x", "x", "y"]}});
    let patch = json!({"metadata": {"$setElementOrder/finalizers": ["z"], "finalizers": ["z"]}});
    assert_eq!(apply(original, patch, deployment()), Ok(json!({"metadata": {"finalizers": ["x", "z", "y"]}})));
}

#[test]
fn primitive_set_rebuilt_by_its_deletion_list_first_has_no_spare_capacity() {
    // Upstream visits the two keys in random order; this is its answer when the
    // deletion list comes first, as it does in the patch (see docs/strategic-deviations.md).
    let original = json!({"metadata": {"finalizers": ["a~b", "a~b", ""]}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [], "finalizers": ["80"]}});
    assert_eq!(apply(original, patch, service()), Ok(json!({"metadata": {"finalizers": ["80", "a~b", ""]}})));
}

#[test]
fn primitives_in_a_keyed_list_are_rejected() {
    let original = json!({"metadata": {"ownerReferences": ["b"]}});
    let patch = json!({"metadata": {"ownerReferences": []}});
    assert_eq!(
        apply(original, patch, pod()),
        Err(ErrorKind::BadArgType { expected: "map[string]interface {}", actual: "string" })
    );
}

// A list onto a field whose Go type is a pointer is taken as a plain value;
// onto a non-pointer struct or scalar it is an error.

#[test]
fn list_onto_a_pointer_field_replaces_it() {
    let original = json!({"spec": {"selector": []}});
    let patch = json!({"spec": {"selector": ["a"]}});
    assert_eq!(apply(original, patch, deployment()), Ok(json!({"spec": {"selector": ["a"]}})));

    let original = json!({"spec": {"containers": [{"livenessProbe": {"httpGet": []}, "name": "b"}]}});
    let patch = json!({"spec": {"containers": [{"livenessProbe": {"httpGet": [1]}, "name": "b"}]}});
    assert_eq!(
        apply(original, patch, pod()),
        Ok(json!({"spec": {"containers": [{"livenessProbe": {"httpGet": [1]}, "name": "b"}]}}))
    );
}

#[test]
fn list_onto_a_non_pointer_field_is_rejected() {
    let original = json!({"spec": {"template": []}});
    let patch = json!({"spec": {"template": ["a"]}});
    assert_eq!(apply(original, patch, deployment()), Err(ErrorKind::NotSlice { kind: "struct" }));

    let original = json!({"spec": {"containers": [{"image": [], "name": "b"}]}});
    let modified = json!({"spec": {"containers": [{"image": ["x"], "name": "b"}]}});
    let err = strategic::create_two_way(&original, &modified, builtin(), pod()).map_err(|e| e.kind);
    assert_eq!(err, Err(ErrorKind::NotSlice { kind: "struct" }));
}

#[test]
fn lists_onto_pointer_fields_in_created_patches() {
    let original = json!({"metadata": {"ownerReferences": [{"blockOwnerDeletion": [], "uid": "b"}]}});
    let modified = json!({"metadata": {"ownerReferences": [{"blockOwnerDeletion": ["nginx:1.27"], "uid": "b"}]}});
    assert_eq!(
        strategic::create_two_way(&original, &modified, builtin(), pod()).map_err(|e| e.kind),
        Ok(json!({"metadata": {
            "$setElementOrder/ownerReferences": [{"uid": "b"}],
            "ownerReferences": [{"blockOwnerDeletion": ["nginx:1.27"], "uid": "b"}]
        }}))
    );
    assert_eq!(
        three_way(
            json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": []}}}}),
            json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": ["日本語"]}}}}),
            json!({}),
            deployment(),
            true
        ),
        Ok(json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": ["日本語"]}}}}))
    );
    assert_eq!(
        three_way(
            json!({}),
            json!({"spec": {"loadBalancerClass": []}}),
            json!({"spec": {"loadBalancerClass": [""]}}),
            service(),
            true
        ),
        Ok(json!({"spec": {"loadBalancerClass": []}}))
    );
}

// Merge keys are compared with Go's `==`, which panics on two maps or two
// lists; upstream then fails the request, and so do we.

#[test]
fn list_merge_key_in_three_way_is_rejected() {
    let result = three_way(
        json!({"spec": {"ports": [{"port": 443}]}}),
        json!({"spec": {"ports": [{"port": []}]}}),
        json!({}),
        service(),
        true,
    );
    assert_eq!(result, Err(ErrorKind::Uncomparable("[]interface {}")));
}

#[test]
fn uncomparable_merge_keys_in_apply_are_rejected() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": {}}]}});
    let patch = json!({"spec": {"containers": [{"name": {}, "image": "x"}]}});
    assert_eq!(apply(original, patch, pod()), Err(ErrorKind::Uncomparable("map[string]interface {}")));

    let original = json!({"spec": {"containers": [{"name": "a"}]}});
    let patch = json!({"spec": {"containers": [{"name": [], "image": "x"}]}});
    assert_eq!(apply(original, patch, pod()), Err(ErrorKind::Uncomparable("[]interface {}")));
}

// Three-way conflicts (kubectl apply without --overwrite).

#[test]
fn three_way_conflict_on_a_field_changed_live() {
    let result = three_way(
        json!({"spec": {"replicas": 1}}),
        json!({"spec": {"replicas": 2}}),
        json!({"spec": {"replicas": 3}}),
        deployment(),
        false,
    );
    assert!(matches!(result, Err(ErrorKind::Conflict { .. })), "{result:?}");
    let result = three_way(
        json!({"spec": {"replicas": 1}}),
        json!({"spec": {"replicas": 2}}),
        json!({"spec": {"replicas": 1, "paused": true}}),
        deployment(),
        false,
    );
    assert_eq!(result, Ok(json!({"spec": {"replicas": 2}})));
}

#[test]
fn three_way_conflict_check_sorts_the_patch_lists_it_compares() {
    // Without --overwrite, upstream's conflict check de-duplicates and sorts the
    // patch's non-merging lists of scalars in place, and sends them that way.
    let modified = json!({"spec": {"containers": [{"args": ["日本語", "a", "$patch", "a/b"], "name": "web"}]}});
    let current = json!({"spec": {"containers": [{"args": ["日本語", "a/b", "a", "$patch"], "name": "web"}]}});
    assert_eq!(
        three_way(json!({}), modified, current, pod(), false),
        Ok(json!({"spec": {
            "$setElementOrder/containers": [{"name": "web"}],
            "containers": [{"args": ["$patch", "a", "a/b", "日本語"], "name": "web"}]
        }}))
    );
    // With a duplicate, the tail is what the in-place de-duplication left behind.
    let modified = json!({"spec": {"containers": [{"args": ["b", "a", "b"], "name": "web"}]}});
    let current = json!({"spec": {"containers": [{"args": ["a", "b", "a"], "name": "web"}]}});
    assert_eq!(
        three_way(json!({}), modified.clone(), current.clone(), pod(), false),
        Ok(json!({"spec": {
            "$setElementOrder/containers": [{"name": "web"}],
            "containers": [{"args": ["a", "b", "b"], "name": "web"}]
        }}))
    );
    // With --overwrite there is no check, and the list is sent as written.
    assert_eq!(
        three_way(json!({}), modified, current, pod(), true),
        Ok(json!({"spec": {
            "$setElementOrder/containers": [{"name": "web"}],
            "containers": [{"args": ["b", "a", "b"], "name": "web"}]
        }}))
    );
}
