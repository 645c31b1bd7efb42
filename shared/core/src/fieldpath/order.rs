//! The total order and the equality structured-merge-diff uses for JSON values.
//!
//! Set members (`v:`) and list-map keys (`k:`) are sorted with this order, and
//! the sort decides the order of keys in FieldsV1, so it must be upstream's
//! exactly: numbers first (integers and floats compared numerically), then
//! strings, booleans, lists, maps, and `null` last.

use std::cmp::Ordering;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Number, Value};

/// Rank of a value's kind in upstream's order (`value.Compare`).
fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// Compares two numbers as upstream does: integers exactly, a float against anything numerically.
pub(crate) fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    if a.is_f64() || b.is_f64() {
        let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
        return x.partial_cmp(&y).unwrap_or(Ordering::Equal);
    }
    let x = a.as_i64().map(i128::from).or_else(|| a.as_u64().map(i128::from)).unwrap_or(0);
    let y = b.as_i64().map(i128::from).or_else(|| b.as_u64().map(i128::from)).unwrap_or(0);
    x.cmp(&y)
}

/// Upstream's `value.Compare`: a total order over JSON values of any kinds.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => compare_lists(x, y),
        (Value::Object(x), Value::Object(y)) => compare_maps(x, y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Lexical comparison of lists; a prefix sorts first.
fn compare_lists(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let c = compare_values(x, y);
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

/// Upstream's `MapCompare`: zip both maps in lexical key order; a key only on one side decides.
fn compare_maps(a: &Map<String, Value>, b: &Map<String, Value>) -> Ordering {
    let mut ka: Vec<&String> = a.keys().collect();
    let mut kb: Vec<&String> = b.keys().collect();
    ka.sort();
    kb.sort();
    let (mut i, mut j) = (0, 0);
    while i < ka.len() && j < kb.len() {
        match ka[i].cmp(kb[j]) {
            // A key present only in `a` sorts `a` first: upstream sees rhs missing (-1).
            Ordering::Less => return Ordering::Less,
            Ordering::Greater => return Ordering::Greater,
            Ordering::Equal => {
                let c = compare_values(&a[ka[i].as_str()], &b[kb[j].as_str()]);
                if c != Ordering::Equal {
                    return c;
                }
                i += 1;
                j += 1;
            }
        }
    }
    // All shared keys equal: the map with keys left over is the greater.
    (ka.len() - i).cmp(&(kb.len() - j))
}

/// Upstream's `value.Equals`: numbers compare numerically across integer and float.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Feeds `value` to `state` so that values equal by [`values_equal`] hash alike: numbers by
/// their float value (`80` and `80.0`, and `0.0` and `-0.0`, are equal), maps whatever their key order.
pub(crate) fn hash_value<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => {
            state.write_u8(1);
            b.hash(state);
        }
        Value::Number(n) => {
            state.write_u8(2);
            // Integers compare exactly and floats numerically, so equal numbers have equal floats;
            // distinct integers sharing a float only collide.
            let x = n.as_f64().unwrap_or(0.0);
            state.write_u64(if x == 0.0 { 0 } else { x.to_bits() });
        }
        Value::String(s) => {
            state.write_u8(3);
            s.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items {
                hash_value(item, state);
            }
        }
        Value::Object(map) => {
            state.write_u8(5);
            state.write_usize(map.len());
            // Summing the entries' hashes ignores their order, as equality does.
            let mut sum = 0u64;
            for (key, item) in map {
                let mut entry = DefaultHasher::new();
                key.hash(&mut entry);
                hash_value(item, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            state.write_u64(sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_are_ordered_like_upstream() {
        let ordered =
            [json!(1), json!(2.5), json!("a"), json!(false), json!(true), json!([1]), json!({"a": 1}), json!(null)];
        for w in ordered.windows(2) {
            assert_eq!(compare_values(&w[0], &w[1]), Ordering::Less, "{} < {}", w[0], w[1]);
            assert_eq!(compare_values(&w[1], &w[0]), Ordering::Greater);
        }
    }

    #[test]
    fn integers_and_floats_compare_numerically() {
        assert_eq!(compare_values(&json!(80), &json!(80.0)), Ordering::Equal);
        assert!(values_equal(&json!(80), &json!(80.0)));
        assert_eq!(compare_values(&json!(79.5), &json!(80)), Ordering::Less);
        assert_eq!(compare_values(&json!(-1), &json!(u64::MAX)), Ordering::Less);
    }

    #[test]
    fn lists_and_maps_compare_lexically() {
        assert_eq!(compare_values(&json!([1]), &json!([1, 2])), Ordering::Less);
        assert_eq!(compare_values(&json!([2]), &json!([1, 2])), Ordering::Greater);
        assert_eq!(compare_values(&json!({"a": 1}), &json!({"a": 1, "b": 1})), Ordering::Less);
        assert_eq!(compare_values(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})), Ordering::Equal);
        assert_eq!(compare_values(&json!({"a": 2}), &json!({"b": 1})), Ordering::Less);
    }

    fn hash(value: &Value) -> u64 {
        let mut state = DefaultHasher::new();
        hash_value(value, &mut state);
        state.finish()
    }

    #[test]
    fn equal_values_hash_alike() {
        for (a, b) in [
            (json!(80), json!(80.0)),
            (json!(0.0), json!(-0.0)),
            (json!(u64::MAX), json!(u64::MAX)),
            (json!({"a": 1, "b": [2, "x"]}), json!({"b": [2.0, "x"], "a": 1.0})),
        ] {
            assert!(values_equal(&a, &b), "{a} == {b}");
            assert_eq!(hash(&a), hash(&b), "{a} and {b}");
        }
        assert_ne!(hash(&json!("80")), hash(&json!(80)));
        assert_ne!(hash(&json!([1, 2])), hash(&json!([2, 1])));
    }
}
