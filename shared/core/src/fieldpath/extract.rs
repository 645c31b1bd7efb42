//! The part of an object a set of fields covers, as a value you could apply
//! (upstream's `TypedValue.ExtractItems`, without a schema: list-map items keep
//! the key fields of their path so that the result still names them).

use serde_json::{Map, Value};

use super::element::PathElement;
use super::locate::value_at;
use super::set::Set;

/// The subtree of `object` that `set` covers: members are copied whole, children are
/// descended into, list-map items keep their key fields. Fields the object lacks are left out.
///
/// ```
/// use fieldwise_core::fieldpath::{extract, Set};
/// use serde_json::json;
///
/// let object = json!({"spec": {"replicas": 2, "paused": false,
///     "containers": [{"name": "a", "image": "x", "args": ["1"]}, {"name": "b", "image": "y"}]}});
/// let owned = Set::from_fields_v1(&json!({"f:spec": {"f:replicas": {},
///     "f:containers": {"k:{\"name\":\"a\"}": {"f:image": {}}}}})).unwrap();
/// assert_eq!(extract(&object, &owned), json!({"spec": {"replicas": 2, "containers": [{"name": "a", "image": "x"}]}}));
/// ```
pub fn extract(object: &Value, set: &Set) -> Value {
    extract_node(object, set).unwrap_or_else(|| Value::Object(Map::new()))
}

fn extract_node(value: &Value, set: &Set) -> Option<Value> {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            // Keep the object's own key order.
            for (key, child) in map {
                let pe = PathElement::Field(key.clone());
                if let Some(sub) = set.child(&pe) {
                    if let Some(v) = extract_node(child, sub) {
                        out.insert(key.clone(), v);
                        continue;
                    }
                }
                if set.members().contains(&pe) {
                    out.insert(key.clone(), child.clone());
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                let named = set.members().iter().chain(set.children().iter().map(|(pe, _)| pe)).find(|pe| {
                    value_at(value, std::slice::from_ref(*pe)).is_some_and(|found| std::ptr::eq(found, item))
                });
                let Some(pe) = named else { continue };
                let mut entry = set.child(pe).and_then(|sub| extract_node(item, sub));
                if let (PathElement::Key(key), Some(Value::Object(fields))) = (pe, entry.as_mut()) {
                    for (name, _) in key.fields() {
                        if let Some(v) = item.get(name) {
                            fields.entry(name.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                if entry.is_none() && set.members().contains(pe) {
                    entry = Some(item.clone());
                }
                out.extend(entry);
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_keys_members_and_order() {
        let object = json!({"metadata": {"labels": {"b": "2", "a": "1"}, "finalizers": ["x", "y"]},
            "spec": {"ports": [{"port": 80, "protocol": "TCP", "name": "http"}, {"port": 81, "protocol": "TCP"}]}});
        let owned = Set::from_fields_v1(&json!({"f:metadata": {"f:labels": {".": {}, "f:b": {}, "f:a": {}},
            "f:finalizers": {"v:\"y\"": {}}},
            "f:spec": {"f:ports": {"k:{\"port\":81,\"protocol\":\"TCP\"}": {".": {}}}}}))
        .unwrap();
        assert_eq!(
            extract(&object, &owned),
            json!({"metadata": {"labels": {"b": "2", "a": "1"}, "finalizers": ["y"]},
                "spec": {"ports": [{"port": 81, "protocol": "TCP"}]}})
        );
        assert_eq!(extract(&object, &Set::new()), json!({}));
    }
}
