//! One case per class of disagreement the differential tests found between
//! `fieldwise_core::fieldpath` and structured-merge-diff v4.6.0 (through
//! client-go's type converter). Every expected value is the Go oracle's answer
//! (`tests/oracle`), so these pin upstream behaviour without the oracle.

use fieldwise_core::fieldpath::{field_set, Set};
use fieldwise_core::schema::{builtin, Gvk};
use serde_json::{json, Value};

fn roundtrip(text: &str) -> Result<String, String> {
    Set::from_fields_v1_str(text).map(|s| s.to_fields_v1_string()).map_err(|e| e.to_string())
}

fn from_value(object: Value) -> Result<String, String> {
    let schema = builtin();
    let gvk = Gvk::of_object(&object).expect("object names its kind");
    let ty = schema.root(&gvk).expect("built-in kind");
    field_set(&object, schema, ty).map(|s| s.to_fields_v1_string()).map_err(|e| format!("{e:?}"))
}

#[test]
fn unknown_element_kinds_are_dropped() {
    assert_eq!(roundtrip(r#"{"x:nope":{}}"#).unwrap(), "{}");
    // A node left with nothing known below it is a member, as upstream reads it.
    assert_eq!(roundtrip(r#"{"f:a":{"x:y":{}}}"#).unwrap(), r#"{"f:a":{}}"#);
    assert!(Set::from_fields_v1_str_strict(r#"{"x:nope":{}}"#).is_err());
}

#[test]
fn duplicate_keys_merge_members_and_replace_subtrees() {
    assert_eq!(roundtrip(r#"{"f:a":{},"f:a":{"f:b":{}}}"#).unwrap(), r#"{"f:a":{".":{},"f:b":{}}}"#);
    // A later subtree replaces an earlier one; skipped values may be any JSON; text after the object is ignored.
    assert_eq!(
        roundtrip(r#"{"f:a":{"f:b":{}},"f:a":{"f:c":{}},"x:y":[1,{"z":null}],".":5} trailing"#).unwrap(),
        r#"{"f:a":{"f:c":{}}}"#
    );
    // Keys naming a field twice keep both; text after an embedded value is ignored; null is a member.
    assert_eq!(
        roundtrip(r#"{"k:{\"a\":1,\"a\":2}":{},"v:1 junk":{},"f:q":null}"#).unwrap(),
        r#"{"f:q":{},"k:{\"a\":1,\"a\":2}":{},"v:1":{}}"#
    );
    assert_eq!(roundtrip("null").unwrap(), "{}");
    assert_eq!(roundtrip(r#"{"f:\ud800x":{}}"#).unwrap(), "{\"f:\u{FFFD}x\":{}}");
    for bad in ["", "[]", "{", r#"{"f:a":[]}"#, r#"{"k:notjson":{}}"#, r#"{"f:a":{},}"#] {
        assert!(roundtrip(bad).is_err(), "{bad}");
    }
}

#[test]
fn empty_and_null_objects_are_set_fields() {
    let object = json!({"data": {}, "metadata": null, "apiVersion": "v1", "kind": "ConfigMap"});
    assert_eq!(from_value(object).unwrap(), r#"{"f:apiVersion":{},"f:data":{},"f:kind":{},"f:metadata":{}}"#);
}

#[test]
fn values_that_do_not_fit_the_schema_are_rejected() {
    let undeclared = json!({"spec": {"ünknown": []}, "apiVersion": "v1", "kind": "Pod"});
    let err = from_value(undeclared).unwrap_err();
    assert!(err.contains(".spec.ünknown") && err.contains("field not declared in schema"), "{err}");
    assert!(from_value(json!({"metadata": {"namespace": {}}, "apiVersion": "v1", "kind": "Pod"})).is_err());
}

#[test]
fn missing_list_map_keys_take_the_schema_default() {
    let pod = json!({"spec": {"containers": [{"name": "a", "ports": [{"name": "http"}, {"containerPort": 80}]}]},
                     "apiVersion": "v1", "kind": "Pod"});
    assert_eq!(
        from_value(pod).unwrap(),
        r#"{"f:apiVersion":{},"f:kind":{},"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:ports":{"k:{\"containerPort\":0,\"protocol\":\"TCP\"}":{".":{},"f:name":{}},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}"#
    );
    // Items sharing a key are recorded once, without their fields.
    let service =
        json!({"spec": {"ports": [{"port": 80}, {"port": 80, "name": "x"}]}, "apiVersion": "v1", "kind": "Service"});
    assert_eq!(
        from_value(service).unwrap(),
        r#"{"f:apiVersion":{},"f:kind":{},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{}}}}"#
    );
}

#[test]
fn formatted_strings_quantities_and_fields_v1_are_typed_as_upstream_converts_them() {
    // Time and Quantity are untyped scalars upstream (any scalar fits); FieldsV1 is a map.
    let deployment = json!({"metadata": {"creationTimestamp": false, "managedFields": [{"fieldsV1": {"f:a": {}}}]},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1}}}]}}},
        "apiVersion": "apps/v1", "kind": "Deployment"});
    assert_eq!(
        from_value(deployment).unwrap(),
        r#"{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:creationTimestamp":{},"f:managedFields":{}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:resources":{"f:limits":{"f:cpu":{}}}}}}}}}"#
    );
    let pod = json!({"metadata": {"managedFields": [{"fieldsV1": "x"}]}, "apiVersion": "v1", "kind": "Pod"});
    assert!(from_value(pod).is_err());
}

#[test]
fn integers_beyond_int64_in_keys_are_floats() {
    let service =
        json!({"spec": {"ports": [{"port": 18446744073709551615_u64}]}, "apiVersion": "v1", "kind": "Service"});
    assert_eq!(
        from_value(service).unwrap(),
        r#"{"f:apiVersion":{},"f:kind":{},"f:spec":{"f:ports":{"k:{\"port\":18446744073709552000,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}"#
    );
}
