//! Scalars and keys: small pools, so independently generated documents collide
//! (the same container name, the same port) and the engines have to merge
//! them, with edge values mixed in (numbers at the limits of JSON and of
//! float64, unicode, characters JSON Pointer must escape).

use crate::rng::Rng;
use serde_json::{json, Number, Value};

/// Strings most scalar positions draw from.
const STRINGS: &[&str] = &[
    "a",
    "b",
    "web",
    "sidecar",
    "nginx:1.27",
    "",
    "ünïcødé",
    "日本語",
    "🚀",
    "a/b",
    "a~b",
    "$patch",
    "null",
    "80",
    "TCP",
    "UDP",
];

/// Keys of free-form maps (labels, annotations, data).
const MAP_KEYS: &[&str] =
    &["app", "tier", "app.kubernetes.io/name", "ключ", "a/b", "a~1b", "", "x", "y", "emoji🚀", "$x", "0"];

/// Keys used where the schema knows nothing (untyped values, unknown fields).
const LOOSE_KEYS: &[&str] = &["a", "b", "c", "ünknown", "x-extra", "n", "list", "0", "a/b", "~"];

/// A string from the shared pool.
pub fn string(rng: &mut Rng) -> Value {
    Value::String(rng.pick(STRINGS).copied().unwrap_or("a").to_string())
}

/// A key for a free-form map.
pub fn map_key(rng: &mut Rng) -> String {
    rng.pick(MAP_KEYS).copied().unwrap_or("app").to_string()
}

/// A key for an untyped object.
pub fn loose_key(rng: &mut Rng) -> String {
    rng.pick(LOOSE_KEYS).copied().unwrap_or("a").to_string()
}

/// An integer, mostly small and colliding, sometimes at the edges.
pub fn integer(rng: &mut Rng) -> Value {
    let edges: [Value; 12] = [
        json!(0),
        json!(-1),
        json!(1),
        json!(80),
        json!(443),
        json!(8080),
        json!(9_007_199_254_740_992_i64),
        json!(9_007_199_254_740_993_i64),
        json!(-9_007_199_254_740_992_i64),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(2_147_483_648_i64),
    ];
    if rng.percent(75) {
        edges[rng.below(4)].clone()
    } else {
        edges[rng.below(edges.len())].clone()
    }
}

/// A number that may be fractional or huge.
pub fn number(rng: &mut Rng) -> Value {
    let floats = [0.5, -0.5, 1.5, 1e308, -1e308, 1e-7, 3.0, 0.1, 2.5e10];
    if rng.percent(50) {
        integer(rng)
    } else {
        let f = floats[rng.below(floats.len())];
        Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// A boolean.
pub fn boolean(rng: &mut Rng) -> Value {
    Value::Bool(rng.percent(50))
}

/// Any scalar, null included.
pub fn any_scalar(rng: &mut Rng) -> Value {
    match rng.below(5) {
        0 => Value::Null,
        1 => boolean(rng),
        2 => number(rng),
        _ => string(rng),
    }
}

/// A small JSON tree of no particular shape, `depth` levels deep at most.
pub fn loose(rng: &mut Rng, depth: usize) -> Value {
    if depth == 0 || rng.percent(50) {
        return any_scalar(rng);
    }
    if rng.percent(50) {
        let n = rng.below(4);
        Value::Array((0..n).map(|_| loose(rng, depth - 1)).collect())
    } else {
        let mut map = serde_json::Map::new();
        for _ in 0..rng.below(4) {
            let key = loose_key(rng);
            let value = loose(rng, depth - 1);
            map.insert(key, value);
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loose_values_stay_shallow() {
        fn depth(v: &Value) -> usize {
            match v {
                Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
                Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        let mut rng = Rng::new(3);
        for _ in 0..500 {
            assert!(depth(&loose(&mut rng, 3)) <= 3);
        }
    }

    #[test]
    fn numbers_are_finite_json() {
        let mut rng = Rng::new(4);
        for _ in 0..500 {
            assert!(number(&mut rng).is_number());
        }
    }
}
