//! An object without the fields of a set (upstream's `TypedValue.RemoveItems`, without a
//! schema): what a server-side apply's pruning leaves, when the set is the fields the
//! applier gives up. List entries are found as [`value_at`](super::value_at) finds them
//! (list-map entries by key, set members by value, indices by position).

use serde_json::Value;

use super::element::PathElement;
use super::items::Items;
use super::set::Set;

/// `object` without every path of `set`: a member goes with everything under it; a child
/// set is removed inside its value. Paths the object lacks are ignored.
///
/// ```
/// use fieldwise_core::fieldpath::{remove, Set};
/// use serde_json::json;
///
/// let object = json!({"metadata": {"labels": {"app": "web", "tier": "x"}},
///     "spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"}], "tags": ["a", "b"]}});
/// let gone = Set::from_fields_v1(&json!({"f:metadata": {"f:labels": {"f:tier": {}}},
///     "f:spec": {"f:ports": {"k:{\"port\":81,\"protocol\":\"TCP\"}": {}}, "f:tags": {"v:\"b\"": {}}}})).unwrap();
/// assert_eq!(remove(&object, &gone), json!({"metadata": {"labels": {"app": "web"}},
///     "spec": {"ports": [{"port": 80, "protocol": "TCP"}], "tags": ["a"]}}));
/// ```
pub fn remove(object: &Value, set: &Set) -> Value {
    let mut out = object.clone();
    remove_in(&mut out, set);
    out
}

fn remove_in(value: &mut Value, set: &Set) {
    for (pe, sub) in set.children() {
        if set.members().contains(pe) {
            continue; // removed whole below
        }
        if let Some(child) = child_mut(value, pe) {
            remove_in(child, sub);
        }
    }
    for member in set.members() {
        match (member, &mut *value) {
            (PathElement::Field(name), Value::Object(map)) => {
                map.remove(name);
            }
            (_, Value::Array(_)) => {
                if let Some(at) = position(value, member) {
                    if let Value::Array(items) = value {
                        items.remove(at);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The index of the list entry `pe` names in `list`, found as [`super::value_at`] finds it.
fn position(list: &Value, pe: &PathElement) -> Option<usize> {
    let found = Items::scanned(list).find(pe)?;
    list.as_array()?.iter().position(|item| std::ptr::eq(item, found))
}

fn child_mut<'v>(value: &'v mut Value, pe: &PathElement) -> Option<&'v mut Value> {
    match pe {
        PathElement::Field(name) => value.as_object_mut()?.get_mut(name),
        _ => {
            let at = position(value, pe)?;
            value.as_array_mut()?.get_mut(at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::Path;
    use serde_json::json;

    #[test]
    fn members_go_whole_children_go_inside_and_missing_paths_are_ignored() {
        let object = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "containers": [{"name": "app", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}],
            "args": ["x", "y"]}});
        let mut set = Set::new();
        set.insert(Path::fields(["spec", "strategy"]).elements());
        set.insert(Path::fields(["spec", "strategy", "type"]).elements());
        let env_b = Path::fields(["spec", "containers"])
            .child(PathElement::key([("name", json!("app"))]))
            .child(PathElement::Field("env".into()))
            .child(PathElement::key([("name", json!("B"))]));
        set.insert(env_b.elements());
        set.insert(Path::fields(["spec", "args"]).child(PathElement::Index(0)).elements());
        set.insert(Path::fields(["spec", "missing", "deeper"]).elements());
        assert_eq!(
            remove(&object, &set),
            json!({"spec": {"containers": [{"name": "app", "env": [{"name": "A", "value": "1"}]}], "args": ["y"]}})
        );
        assert_eq!(remove(&object, &Set::new()), object);
    }
}
