//! The object a server-side apply would produce, before pruning (upstream's `TypedValue.Merge`).
//!
//! The applied configuration wins on every leaf it sets; granular maps and
//! structs are merged key by key; associative lists item by item (live order
//! first, new items after); atomic values are replaced whole. A `null` for a
//! non-empty granular map keeps the live content, as upstream does.

use serde_json::{Map, Value};

use crate::fieldpath::shape::{is_empty_container, item_element, shape_of, Shape};
use crate::fieldpath::PathElement;
use crate::schema::{Schema, TypeId};

/// Merges `config` into `live` (both of type `ty`) as server-side apply does before pruning.
pub fn merge(live: &Value, config: &Value, schema: &Schema, ty: TypeId) -> Value {
    merge_node(schema, Some(ty), Some(live), Some(config)).unwrap_or(Value::Null)
}

fn merge_node(schema: &Schema, ty: Option<TypeId>, lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    let shape = shape_of(schema, ty, rhs.or(lhs));
    let lhs_shape = shape_of(schema, ty, lhs);
    let kinds_differ = lhs.is_some() && std::mem::discriminant(&shape) != std::mem::discriminant(&lhs_shape);
    if kinds_differ || matches!(shape, Shape::Leaf) || (is_empty_container(lhs) && is_empty_container(rhs)) {
        return rhs.or(lhs).cloned();
    }
    match shape {
        Shape::Fields(fields) => {
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut out = Map::new();
            for (key, lv) in l {
                if let Some(v) = merge_node(schema, fields.child(key).0, Some(lv), r.get(key)) {
                    out.insert(key.clone(), v);
                }
            }
            for (key, rv) in r.iter().filter(|(k, _)| !l.contains_key(*k)) {
                if let Some(v) = merge_node(schema, fields.child(key).0, None, Some(rv)) {
                    out.insert(key.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Shape::List { items, keys } => {
            let index = |list: Option<&Value>| -> Vec<(PathElement, Value)> {
                let mut out: Vec<(PathElement, Value)> = Vec::new();
                for item in list.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
                    if let Ok(pe) = item_element(schema, items, keys, item) {
                        if !out.iter().any(|(p, _)| *p == pe) {
                            out.push((pe, item.clone()));
                        }
                    }
                }
                out
            };
            let (l, r) = (index(lhs), index(rhs));
            let mut out = Vec::new();
            for (pe, lv) in &l {
                let rv = r.iter().find(|(p, _)| p == pe).map(|(_, v)| v);
                out.extend(merge_node(schema, items, Some(lv), rv));
            }
            for (pe, rv) in &r {
                if !l.iter().any(|(p, _)| p == pe) {
                    out.extend(merge_node(schema, items, None, Some(rv)));
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Shape::Leaf => rhs.or(lhs).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use serde_json::json;

    #[test]
    fn config_wins_on_leaves_and_merges_containers() {
        let (schema, root) = pod_schema();
        let live = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"replicas": 1,
            "containers": [{"name": "c", "image": "i1", "args": ["x", "y"]}, {"name": "d", "image": "j"}],
            "selector": {"matchLabels": {"a": "1", "b": "2"}}}});
        let config = json!({"metadata": {"labels": {"b": "2"}}, "spec": {"replicas": 3,
            "containers": [{"name": "e", "image": "k"}, {"name": "c", "args": ["z"]}],
            "selector": {"matchLabels": {"a": "1"}}}});
        let merged = merge(&live, &config, &schema, root);
        assert_eq!(
            merged,
            json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 3,
                "containers": [{"name": "c", "image": "i1", "args": ["z"]}, {"name": "d", "image": "j"}, {"name": "e", "image": "k"}],
                "selector": {"matchLabels": {"a": "1"}}}})
        );
    }
}
