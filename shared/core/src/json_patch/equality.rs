//! How `test` compares values, as the apiserver does it.
//!
//! Upstream compares objects member by member (order does not matter), arrays
//! element by element, and scalars by their compact JSON text. Two quirks show
//! through and are kept here:
//! - comparing an array that holds `null` dereferences a nil node and panics;
//!   the apiserver turns the panic into an internal error, so such a `test`
//!   never succeeds ([`Failure::TestNullInArray`]);
//! - scalars compare by text, so `1` and `1.0` differ. Values here are parsed
//!   JSON, so numbers compare as [`serde_json::Number`]: integers and floats
//!   differ, as the texts do when written the usual way.

use serde_json::Value;

use super::error::Failure;

/// Whether `test` with `expected` passes against `actual`, the value found in the document.
pub(crate) fn test_passes(actual: &Value, expected: &Value) -> Result<(), Failure> {
    if actual.is_null() {
        // A missing member or a null: upstream passes only when the expected value is null too.
        return if expected.is_null() { Ok(()) } else { Err(Failure::TestFailed) };
    }
    if actual != expected {
        return Err(Failure::TestFailed);
    }
    // Equal values are compared all the way down, so a null in any array is reached.
    if holds_null_in_array(expected) {
        return Err(Failure::TestNullInArray);
    }
    Ok(())
}

/// Whether `test` of the whole document passes: upstream has no null shortcut there.
pub(crate) fn test_root_passes(document: &Value, expected: &Value) -> Result<(), Failure> {
    if expected.is_null() {
        return Err(Failure::TestFailed);
    }
    test_passes(document, expected)
}

fn holds_null_in_array(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| item.is_null() || holds_null_in_array(item)),
        Value::Object(members) => members.values().any(holds_null_in_array),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_compare_without_order() {
        assert_eq!(test_passes(&json!({"a": 1, "b": [1, 2]}), &json!({"b": [1, 2], "a": 1})), Ok(()));
        assert_eq!(test_passes(&json!({"a": 1}), &json!({"a": 1, "b": null})), Err(Failure::TestFailed));
        assert_eq!(test_passes(&json!({"a": null}), &json!({"a": null})), Ok(()));
    }

    #[test]
    fn integers_and_floats_differ() {
        assert_eq!(test_passes(&json!(1), &json!(1.0)), Err(Failure::TestFailed));
    }

    #[test]
    fn null_or_missing_matches_null_only() {
        assert_eq!(test_passes(&Value::Null, &Value::Null), Ok(()));
        assert_eq!(test_passes(&Value::Null, &json!(0)), Err(Failure::TestFailed));
        assert_eq!(test_passes(&json!(0), &Value::Null), Err(Failure::TestFailed));
    }

    #[test]
    fn arrays_with_null_never_pass() {
        assert_eq!(test_passes(&json!([1, null]), &json!([1, null])), Err(Failure::TestNullInArray));
        assert_eq!(test_passes(&json!({"a": [[null]]}), &json!({"a": [[null]]})), Err(Failure::TestNullInArray));
        assert_eq!(test_passes(&json!([1, null]), &json!([2, null])), Err(Failure::TestFailed));
    }

    #[test]
    fn whole_document_never_equals_null() {
        assert_eq!(test_root_passes(&json!({}), &Value::Null), Err(Failure::TestFailed));
        assert_eq!(test_root_passes(&json!({"a": 1}), &json!({"a": 1})), Ok(()));
    }
}
