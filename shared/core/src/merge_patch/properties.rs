//! Properties of merge patch creation and application, checked on generated documents.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{apply, create_three_way, create_two_way, try_apply};

/// Values without null (a null cannot be set through a merge patch) and with integers only
/// (created patches carry Go float64 numbers).
fn value(nulls: bool) -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(|n| json!(n)),
        "[xy]{0,2}".prop_map(Value::String),
    ];
    let leaf = if nulls { prop_oneof![4 => scalar, 1 => Just(Value::Null)].boxed() } else { scalar.boxed() };
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object(nulls: bool) -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-d]", value(nulls), 0..5).prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Whether an object member is null, at any depth outside arrays.
fn null_member_outside_arrays(value: &Value) -> bool {
    value.as_object().is_some_and(|m| m.values().any(|v| v.is_null() || null_member_outside_arrays(v)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A two-way patch takes the original to the modified document.
    #[test]
    fn two_way_patch_reaches_modified(a in object(true), b in object(false)) {
        let patch = create_two_way(&a, &b);
        prop_assert!(patch.is_ok());
        if let Ok(patch) = patch {
            prop_assert_eq!(try_apply(&a, &patch), Ok(b));
        }
    }

    /// No change is the empty patch.
    #[test]
    fn no_change_is_empty(a in object(true)) {
        prop_assert_eq!(create_two_way(&a, &a), Ok(json!({})));
    }

    /// When the live object still equals the last applied configuration, the three-way patch
    /// reaches the modified configuration.
    #[test]
    fn three_way_from_unchanged_live_reaches_modified(o in object(false), m in object(false)) {
        let patch = create_three_way(&o, &m, &o);
        prop_assert!(patch.is_ok());
        if let Ok(patch) = patch {
            prop_assert_eq!(try_apply(&o, &patch), Ok(m));
        }
    }

    /// A three-way patch always sets the configured fields, whatever happened live; fields that
    /// only live has keep their value.
    #[test]
    fn three_way_sets_configured_fields(o in object(false), m in object(false), c in object(false)) {
        let Ok(patch) = create_three_way(&o, &m, &c) else { return Err(TestCaseError::fail("no patch")) };
        let result = apply(&c, &patch);
        for (key, wanted) in m.as_object().into_iter().flatten() {
            // A configured object merges into a live object: check its members only.
            if let (Value::Object(w), Some(Value::Object(got))) = (wanted, result.get(key)) {
                for (k, v) in w {
                    if !v.is_object() {
                        prop_assert_eq!(got.get(k), Some(v));
                    }
                }
            } else {
                prop_assert_eq!(result.get(key), Some(wanted));
            }
        }
        for (key, live) in c.as_object().into_iter().flatten() {
            let configured = m.get(key).is_some() || o.get(key).is_some();
            if !configured {
                prop_assert_eq!(result.get(key), Some(live));
            }
        }
    }

    /// Applying to a document without nulls never leaves a null member (outside arrays, which are
    /// values and may be sent with nulls inside).
    #[test]
    fn apply_leaves_no_null_members(doc in object(false), patch in object(true)) {
        prop_assert!(!null_member_outside_arrays(&apply(&doc, &patch)));
    }
}
