//! FieldsV1 texts: the JSON form of a field set in `metadata.managedFields`,
//! `{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{}}}}}`.
//!
//! Mostly well-formed sets with members in random order (the encoder must
//! sort them), keys of every path element kind (`f:`, `k:`, `v:`, `i:`, `.`),
//! and a few percent of malformed texts the decoder must reject as upstream does.

use crate::rng::Rng;
use serde_json::{json, Map, Value};

/// Field names, some needing JSON escapes.
const NAMES: &[&str] =
    &["spec", "containers", "name", "image", "metadata", "labels", "a.b", "é", "🚀", "", "x\"y", "a/b"];

/// A path element key of any kind.
fn element(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=4 => format!("f:{}", rng.pick(NAMES).copied().unwrap_or("a")),
        5 | 6 => {
            let keys = [
                json!({"name": "a"}),
                json!({"name": "b"}),
                json!({"containerPort": 80, "protocol": "TCP"}),
                json!({"protocol": "UDP", "containerPort": 53}),
                json!({"port": 443, "protocol": "TCP"}),
                json!({"uid": "ü"}),
            ];
            format!("k:{}", keys[rng.below(keys.len())])
        }
        7 => {
            let vals = [json!("a"), json!("b"), json!(1), json!(true), json!(1.5), json!("x/y"), json!(null)];
            format!("v:{}", vals[rng.below(vals.len())])
        }
        8 => format!("i:{}", rng.below(4)),
        _ => ".".to_string(),
    }
}

/// A set as a JSON tree, `depth` levels deep at most.
pub fn set_tree(rng: &mut Rng, depth: usize) -> Value {
    let mut map = Map::new();
    if depth == 0 {
        return Value::Object(map);
    }
    for _ in 0..rng.below(4) {
        let key = element(rng);
        let child = if key == "." { json!({}) } else { set_tree(rng, depth - 1) };
        map.insert(key, child);
    }
    Value::Object(map)
}

/// A FieldsV1 text, well-formed about 94% of the time.
pub fn text(rng: &mut Rng) -> String {
    let tree = set_tree(rng, 4);
    match rng.below(50) {
        0 => "x:nope".to_string() + "",
        1 => r#"{"x:nope":{}}"#.to_string(),
        2 => r#"{"k:notjson":{}}"#.to_string(),
        3 => r#"{"i:abc":{}}"#.to_string(),
        4 => [r#"[]"#, "null", "", "{", r#"{"f:a":null}"#, r#"{"f:a":[]}"#][rng.below(6)].to_string(),
        5 => format!(" {tree} "),
        6 => r#"{"f:a":{},"f:a":{"f:b":{}}}"#.to_string(),
        7 => r#"{".":{"f:a":{}}}"#.to_string(),
        8 => r#"{"f:\u00e9":{},"v:1.0":{},"v:1":{}}"#.to_string(),
        _ => tree.to_string(),
    }
}

/// A second set overlapping `first`: some members dropped, some added.
pub fn overlapping(rng: &mut Rng, first: &Value) -> Value {
    match first {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                if !rng.percent(25) {
                    out.insert(k.clone(), overlapping(rng, v));
                }
            }
            if rng.percent(30) {
                let key = element(rng);
                out.insert(key, set_tree(rng, 2));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_texts_are_json_objects() {
        let mut rng = Rng::new(11);
        let ok = (0..1000)
            .filter(|_| serde_json::from_str::<Value>(&text(&mut rng)).map(|v| v.is_object()).unwrap_or(false))
            .count();
        assert!(ok > 900, "{ok}");
    }

    #[test]
    fn dot_members_are_leaves() {
        let mut rng = Rng::new(12);
        for _ in 0..200 {
            let tree = set_tree(&mut rng, 4);
            let text = tree.to_string();
            assert!(!text.contains(r#"".":{"#) || text.contains(r#"".":{}"#));
        }
    }
}
