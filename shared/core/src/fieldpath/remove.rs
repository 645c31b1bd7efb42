//! Removing the fields a set names from a value (upstream's `TypedValue.RemoveItems`),
//! and the set of a value's fields with its struct fields spelled out
//! (upstream's `Set.EnsureNamedFieldsAreMembers`): the two steps of the pruning a
//! server-side apply does when a manager drops fields from its configuration
//! ([`crate::ownership::prune`], used for the plan of an apply and for an applier's next apply).

use serde_json::{Map, Value};

use super::element::PathElement;
use super::set::Set;
use super::shape::{item_element, resolve, shape_of, Shape};
use crate::schema::{Schema, TypeDef, TypeId};

/// `value` (of type `ty`) without the fields, map entries and list items `set` holds.
///
/// A path in the set removes what it names with everything under it; a path only
/// *under* an entry descends into it. A map or list left with no entry this way becomes
/// `null` (as structured-merge-diff v4.6 and v6.4, the engines of Kubernetes 1.33 to 1.37,
/// do: a custom resource's schema may then refuse the object). Atomic values are never
/// descended into: a set naming something inside one makes it `null` too.
///
/// ```
/// use fieldwise_core::fieldpath::{remove_items, Path, Set};
/// use fieldwise_core::schema::Schema;
/// use serde_json::json;
///
/// let object = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"x": 1}});
/// let set = Set::from_paths(&[Path::fields(["metadata", "labels", "a"]), Path::fields(["spec"])]);
/// let pruned = remove_items(&object, &set, &Schema::new(), None);
/// assert_eq!(pruned, json!({"metadata": {"labels": {"b": "2"}}}));
/// ```
pub fn remove_items(value: &Value, set: &Set, schema: &Schema, ty: Option<TypeId>) -> Value {
    remove_node(value, set, schema, ty).unwrap_or(Value::Null)
}

/// The result of removing `set` from `value`: `None` where upstream's walker yields nothing.
fn remove_node(value: &Value, set: &Set, schema: &Schema, ty: Option<TypeId>) -> Option<Value> {
    match shape_of(schema, ty, Some(value)) {
        Shape::Fields(fields) => {
            let Value::Object(map) = value else { return Some(value.clone()) };
            if map.is_empty() {
                return None;
            }
            let mut out = Map::new();
            for (key, child) in map {
                let pe = PathElement::Field(key.clone());
                if set.members().contains(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(subset) if !subset.is_empty() => {
                        let kept = remove_node(child, subset, schema, fields.child(key).0);
                        out.insert(key.clone(), kept.unwrap_or(Value::Null));
                    }
                    _ => {
                        out.insert(key.clone(), child.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Shape::List { items, keys } => {
            let Value::Array(list) = value else { return None };
            if list.is_empty() {
                return None;
            }
            let mut out = Vec::new();
            for item in list {
                let Ok(pe) = item_element(schema, items, keys, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.members().contains(&pe) {
                    continue;
                }
                match set.child(&pe) {
                    Some(subset) if !subset.is_empty() => {
                        out.push(remove_node(item, subset, schema, items).unwrap_or(Value::Null));
                    }
                    _ => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        // Scalars stay; an atomic map or list is not descended into: nothing of it remains.
        Shape::Leaf => match value {
            Value::Object(_) | Value::Array(_) => None,
            scalar => Some(scalar.clone()),
        },
    }
}

/// `set` with every struct field that has paths under it added as a member itself
/// (upstream's `EnsureNamedFieldsAreMembers`): `.spec.replicas` brings `.spec`, but
/// `.metadata.labels.app` does not bring `.metadata.labels.app`'s map key's parent
/// entries beyond the declared fields `.metadata` and `.metadata.labels`.
pub fn with_named_fields(set: &Set, schema: &Schema, ty: Option<TypeId>) -> Set {
    let def = resolve(schema, ty);
    let mut out = Set::new();
    for member in set.members() {
        out.insert_member(member.clone());
    }
    for (pe, subset) in set.children() {
        let declared = match (pe, def) {
            (PathElement::Field(name), Some(TypeDef::Struct(s))) => s.fields.get(name).map(|f| f.ty),
            _ => None,
        };
        if declared.is_some() {
            out.insert_member(pe.clone());
        }
        let child_ty = match (pe, def) {
            (PathElement::Field(_), Some(TypeDef::Struct(s))) => declared.or(s.extra),
            (PathElement::Field(_), Some(TypeDef::Map(m))) => Some(m.values),
            (PathElement::Key(_), Some(TypeDef::List(l))) => Some(l.items),
            _ => None,
        };
        let inner = with_named_fields(subset, schema, child_ty);
        if !inner.is_empty() {
            out.set_child(pe.clone(), inner);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use crate::fieldpath::Path;
    use serde_json::json;

    fn key(name: &str) -> PathElement {
        PathElement::key([("name", json!(name))])
    }

    #[test]
    fn removes_fields_and_items_and_an_emptied_container_becomes_null() {
        let (schema, root) = pod_schema();
        let object = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"replicas": 2,
            "containers": [{"name": "c", "image": "i", "args": ["x"]}, {"name": "d", "image": "j"}]}});
        let containers = Path::fields(["spec", "containers"]);
        let set = Set::from_paths(&[
            Path::fields(["metadata", "labels", "a"]),
            containers.child(key("d")),
            containers.child(key("c")).child(PathElement::field("args")),
        ]);
        assert_eq!(
            remove_items(&object, &set, &schema, Some(root)),
            json!({"metadata": {"labels": null}, "spec": {"replicas": 2, "containers": [{"name": "c", "image": "i"}]}})
        );
    }

    #[test]
    fn atomic_values_are_not_descended_into() {
        let (schema, root) = pod_schema();
        let object = json!({"spec": {"selector": {"matchLabels": {"a": "1"}}, "replicas": 1}});
        let set = Set::from_paths(&[Path::fields(["spec", "selector", "matchLabels"])]);
        assert_eq!(
            remove_items(&object, &set, &schema, Some(root)),
            json!({"spec": {"selector": null, "replicas": 1}})
        );
    }

    #[test]
    fn named_fields_become_members_map_keys_do_not_add_parents() {
        let (schema, root) = pod_schema();
        let set = Set::from_paths(&[
            Path::fields(["metadata", "labels", "a"]),
            Path::fields(["spec", "containers"]).child(key("c")).child(PathElement::field("image")),
        ]);
        let ensured = with_named_fields(&set, &schema, Some(root));
        let mut expected: Vec<String> = [
            ".metadata",
            ".metadata.labels",
            ".metadata.labels.a",
            ".spec",
            ".spec.containers",
            ".spec.containers[name=\"c\"].image",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        expected.sort();
        let mut got: Vec<String> = ensured.paths().iter().map(|p| p.to_string()).collect();
        got.sort();
        assert_eq!(got, expected);
    }
}
