//! Properties of JSON Patch application, checked on generated documents and patches.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{apply, parse, JsonPointer};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(|n| json!(n)),
        "[a-c~/]{0,2}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-c~/]{0,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-c]{1,2}", value(), 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn pointer() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof!["[a-c~/]{0,2}", "-?[0-3]", Just("-".to_string())], 0..4)
        .prop_map(|tokens| JsonPointer::from_tokens(tokens).as_str().to_string())
}

fn operation() -> impl Strategy<Value = Value> {
    let op = prop_oneof![
        Just("add"),
        Just("remove"),
        Just("replace"),
        Just("move"),
        Just("copy"),
        Just("test"),
        Just("bogus")
    ];
    (op, pointer(), pointer(), value()).prop_map(|(op, path, from, value)| match op {
        "move" | "copy" => json!({"op": op, "path": path, "from": from}),
        "remove" => json!({"op": op, "path": path}),
        _ => json!({"op": op, "path": path, "value": value}),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Never panics, and an error leaves nothing half-applied: the input is borrowed, and the
    /// patch up to the failing operation still applies on its own.
    #[test]
    fn failures_are_atomic_and_named(doc in document(), ops in prop::collection::vec(operation(), 0..6)) {
        let before = doc.clone();
        let result = apply(&doc, &Value::Array(ops.clone()));
        prop_assert_eq!(&doc, &before);
        if let Err(super::JsonPatchError::Operation { index, .. }) = result {
            prop_assert!(index < ops.len());
            let prefix = Value::Array(ops[..index].to_vec());
            prop_assert!(apply(&doc, &prefix).is_ok(), "operations before {} apply", index);
        }
    }

    /// Applying a patch in two halves is the same as applying it whole.
    #[test]
    fn patches_compose(doc in document(), ops in prop::collection::vec(operation(), 0..6), split in 0usize..6) {
        let split = split.min(ops.len());
        let whole = apply(&doc, &Value::Array(ops.clone()));
        let halves = apply(&doc, &Value::Array(ops[..split].to_vec()))
            .and_then(|mid| apply(&mid, &Value::Array(ops[split..].to_vec())));
        prop_assert_eq!(whole.is_ok(), halves.is_ok());
        if let (Ok(a), Ok(b)) = (whole, halves) {
            prop_assert_eq!(a, b);
        }
    }

    /// An add followed by a test of the same value at the same object path always passes,
    /// unless the value holds null inside an array (the apiserver cannot compare those).
    #[test]
    fn added_values_test_equal(doc in document(), key in "[a-c~/]{1,3}", value in value()) {
        let path = JsonPointer::from_tokens([key.as_str()]).as_str().to_string();
        let patch = json!([{"op": "add", "path": path, "value": value}, {"op": "test", "path": path, "value": value}]);
        let nulls_in_arrays = value.to_string().contains("[null") || value.to_string().contains(",null");
        prop_assert_eq!(apply(&doc, &patch).is_ok(), !nulls_in_arrays);
    }

    /// What `parse` accepts round-trips through the typed operations.
    #[test]
    fn parsed_operations_round_trip(ops in prop::collection::vec(operation(), 0..6)) {
        if let Ok(parsed) = parse(&Value::Array(ops)) {
            let again: Vec<Value> = parsed.iter().map(|op| op.to_value()).collect();
            prop_assert_eq!(parse(&Value::Array(again)), Ok(parsed));
        }
    }

    /// Pointers built from tokens parse back to the same tokens.
    #[test]
    fn pointers_round_trip(tokens in prop::collection::vec("[a-c~/01]{0,3}", 1..4)) {
        let pointer = JsonPointer::from_tokens(&tokens);
        prop_assert!(pointer.is_rfc6901());
        let parsed = JsonPointer::parse(pointer.as_str());
        prop_assert_eq!(parsed.tokens(), Some(tokens.as_slice()));
    }
}
