//! Property tests: FieldsV1 round trips and the laws of the set algebra.

use fieldwise_core::fieldpath::{Path, PathElement, Set};
use proptest::prelude::*;
use serde_json::{json, Value};

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..1000).prop_map(Value::from),
        "[a-c<&\"]{0,3}".prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        (0u32..4).prop_map(|n| Value::from(f64::from(n) + 0.5)),
    ]
}

fn element() -> impl Strategy<Value = PathElement> {
    prop_oneof![
        4 => "[a-e]{1,2}".prop_map(PathElement::Field),
        2 => (scalar(), proptest::option::of(scalar())).prop_map(|(a, b)| {
            let mut fields = vec![("name", a)];
            if let Some(b) = b { fields.push(("port", b)); }
            PathElement::key(fields)
        }),
        1 => scalar().prop_map(PathElement::Value),
        1 => (0i64..5).prop_map(PathElement::Index),
    ]
}

fn set() -> impl Strategy<Value = Set> {
    proptest::collection::vec(proptest::collection::vec(element(), 1..5), 0..12)
        .prop_map(|paths| paths.into_iter().map(Path).collect())
}

proptest! {
    #[test]
    fn fields_v1_round_trips(s in set()) {
        let doc = s.to_fields_v1();
        let back = Set::from_fields_v1(&doc).unwrap();
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(back.to_fields_v1_string(), s.to_fields_v1_string());
        let text = s.to_fields_v1_string();
        prop_assert_eq!(Set::from_fields_v1_str(&text).unwrap().to_fields_v1_string(), text);
    }

    #[test]
    fn algebra_laws(a in set(), b in set(), c in set()) {
        prop_assert_eq!(a.union(&b), b.union(&a));
        prop_assert_eq!(a.intersection(&b), b.intersection(&a));
        prop_assert_eq!(a.union(&a), a.clone());
        prop_assert_eq!(a.intersection(&a), a.clone());
        prop_assert!(a.difference(&a).is_empty());
        prop_assert_eq!(a.union(&b).union(&c), a.union(&b.union(&c)));
        prop_assert_eq!(a.intersection(&b.union(&c)), a.intersection(&b).union(&a.intersection(&c)));
        prop_assert_eq!(a.difference(&b).union(&a.intersection(&b)), a.clone());
        prop_assert!(a.difference(&b).intersection(&b).is_empty());
        prop_assert_eq!(a.union(&b).len(), a.len() + b.len() - a.intersection(&b).len());
        for p in a.paths() {
            prop_assert!(a.has(p.elements()));
            prop_assert_eq!(b.has(p.elements()), a.intersection(&b).has(p.elements()));
        }
        // Recursive difference removes at least what difference removes, and never adds.
        prop_assert!(a.recursive_difference(&b).difference(&a.difference(&b)).is_empty());
        // Leaves are a subset, and no leaf has a path of the set under it.
        let leaves = a.leaves();
        prop_assert!(leaves.difference(&a).is_empty());
        for p in leaves.paths() {
            prop_assert!(a.under(&p).is_empty());
        }
    }

    #[test]
    fn decoding_never_panics(text in "[{}\":.fkvi0-9a\\[\\], ]{0,40}") {
        let _ = Set::from_fields_v1_str(&text);
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            let _ = Set::from_fields_v1_lenient(&v);
        }
    }
}

#[test]
fn paths_iterate_members_before_children() {
    let s: Set = [Path::fields(["b"]), Path::fields(["a", "x"]), Path::fields(["a"])].into_iter().collect();
    let order: Vec<String> = s.iter().map(|p| p.to_string()).collect();
    assert_eq!(order, [".a", ".b", ".a.x"]);
    assert_eq!(s.to_fields_v1(), json!({"f:a": {".": {}, "f:x": {}}, "f:b": {}}));
}
