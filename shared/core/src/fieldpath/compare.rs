//! Which fields differ between two values of one type (upstream's `TypedValue.Compare`).
//!
//! Leaves (scalars, atomic maps, structs and lists, and containers empty on
//! both sides) are compared by value: present only on the right is *added*,
//! only on the left *removed*, on both but unequal *modified*. Granular maps,
//! structs and list items present on one side only are added or removed
//! themselves, beside everything under them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::element::PathElement;
use super::order::values_equal;
use super::set::Set;
use super::shape::{is_empty_container, item_element, shape_of, Shape};
use crate::schema::{Schema, TypeId};

/// The difference between a left (old) and a right (new) value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Fields present only in the new value.
    pub added: Set,
    /// Fields present in both, with different values.
    pub modified: Set,
    /// Fields present only in the old value.
    pub removed: Set,
}

impl Comparison {
    /// Whether the two values were the same.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// This comparison without `fields` and everything under them (upstream's `FilterFields` with an exclude set).
    pub fn excluding(&self, fields: &Set) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            removed: self.removed.recursive_difference(fields),
        }
    }
}

/// Compares `old` and `new`, both of type `ty` (`None`: untyped).
pub fn compare(old: &Value, new: &Value, schema: &Schema, ty: Option<TypeId>) -> Comparison {
    let mut walker = Walker { schema, out: Comparison::default(), path: Vec::new() };
    walker.walk(ty, Some(old), Some(new));
    walker.out
}

struct Walker<'s> {
    schema: &'s Schema,
    out: Comparison,
    path: Vec<PathElement>,
}

impl Walker<'_> {
    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) {
        match (lhs, rhs) {
            (None, _) => self.out.added.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            (Some(l), Some(r)) if !values_equal(l, r) => self.out.modified.insert(&self.path),
            _ => {}
        }
    }

    fn after_container(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) {
        match (lhs, rhs) {
            (None, _) => self.out.added.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            _ => {}
        }
    }

    fn walk(&mut self, ty: Option<TypeId>, lhs: Option<&Value>, rhs: Option<&Value>) {
        let left = shape_of(self.schema, ty, lhs);
        let right = shape_of(self.schema, ty, rhs);
        // Untyped values of different kinds on each side: upstream walks both shapes; the
        // node is a modified leaf, and a map on either side adds or removes its contents.
        if lhs.is_some() && rhs.is_some() && std::mem::discriminant(&left) != std::mem::discriminant(&right) {
            self.leaf(lhs, rhs);
            if let Shape::Fields(_) = left {
                self.fields(ty, lhs, None, left);
            }
            if let Shape::Fields(_) = right {
                self.fields(ty, None, rhs, right);
            }
            return;
        }
        let shape = if rhs.is_some() { right } else { left };
        if matches!(shape, Shape::Leaf) || (is_empty_container(lhs) && is_empty_container(rhs)) {
            self.leaf(lhs, rhs);
            return;
        }
        match shape {
            Shape::Fields(_) => self.fields(ty, lhs, rhs, shape),
            Shape::List { items, keys } => self.list(items, keys, lhs, rhs),
            Shape::Leaf => {}
        }
        self.after_container(lhs, rhs);
    }

    fn fields(&mut self, _ty: Option<TypeId>, lhs: Option<&Value>, rhs: Option<&Value>, shape: Shape<'_>) {
        let Shape::Fields(fields) = shape else { return };
        let empty = Map::new();
        let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
        let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
        for (key, lv) in l {
            let (child_ty, _) = fields.child(key);
            self.path.push(PathElement::Field(key.clone()));
            self.walk(child_ty, Some(lv), r.get(key));
            self.path.pop();
        }
        for (key, rv) in r {
            if l.contains_key(key) {
                continue;
            }
            let (child_ty, _) = fields.child(key);
            self.path.push(PathElement::Field(key.clone()));
            self.walk(child_ty, None, Some(rv));
            self.path.pop();
        }
    }

    fn list(&mut self, items: Option<TypeId>, keys: Option<&[String]>, lhs: Option<&Value>, rhs: Option<&Value>) {
        let l = self.index(items, keys, lhs);
        let r = self.index(items, keys, rhs);
        // By name, so long lists (thousands of env entries) are matched in n log n, not n².
        let r_by_name: BTreeMap<&PathElement, &Value> = r.iter().map(|(p, v)| (p, *v)).collect();
        let l_names: BTreeSet<&PathElement> = l.iter().map(|(p, _)| p).collect();
        for (pe, lv) in &l {
            let rv = r_by_name.get(pe).copied();
            self.path.push(pe.clone());
            self.walk(items, Some(lv), rv);
            self.path.pop();
        }
        for (pe, rv) in &r {
            if l_names.contains(pe) {
                continue;
            }
            self.path.push(pe.clone());
            self.walk(items, None, Some(rv));
            self.path.pop();
        }
    }

    /// The items of a list by path element; unnamable items and repeats of a name are skipped, as upstream.
    fn index<'v>(
        &self,
        items: Option<TypeId>,
        keys: Option<&[String]>,
        list: Option<&'v Value>,
    ) -> Vec<(PathElement, &'v Value)> {
        let mut out: Vec<(PathElement, &'v Value)> = Vec::new();
        let mut seen: BTreeSet<PathElement> = BTreeSet::new();
        for item in list.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            if let Ok(pe) = item_element(self.schema, items, keys, item) {
                if seen.insert(pe.clone()) {
                    out.push((pe, item));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::from_value::tests::pod_schema;
    use crate::fieldpath::Path;
    use serde_json::json;

    fn paths(set: &Set) -> Vec<String> {
        set.paths().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn leaves_and_containers() {
        let (schema, root) = pod_schema();
        let old = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1,
            "containers": [{"name": "c", "image": "i1", "args": ["x"]}]}});
        let new = json!({"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"replicas": 2,
            "containers": [{"name": "c", "image": "i2", "args": ["x"]}, {"name": "d", "image": "j"}],
            "selector": {"matchLabels": {"x": "y"}}}});
        let c = compare(&old, &new, &schema, Some(root));
        assert_eq!(paths(&c.modified), [".spec.replicas", ".spec.containers[name=\"c\"].image"]);
        assert_eq!(
            paths(&c.added),
            [
                ".metadata.labels.c",
                ".spec.selector",
                ".spec.containers[name=\"d\"]",
                ".spec.containers[name=\"d\"].image",
                ".spec.containers[name=\"d\"].name"
            ]
        );
        assert_eq!(paths(&c.removed), [".metadata.labels.b"]);
        assert!(compare(&old, &old, &schema, Some(root)).is_same());
    }

    #[test]
    fn empty_on_both_sides_is_a_leaf_and_null_differs_from_absent() {
        let (schema, root) = pod_schema();
        let c = compare(&json!({"metadata": {}}), &json!({"metadata": {"labels": {}}}), &schema, Some(root));
        assert_eq!(paths(&c.added), [".metadata.labels"]);
        let c = compare(&json!({"spec": {"replicas": null}}), &json!({"spec": {}}), &schema, Some(root));
        assert_eq!(paths(&c.removed), [".spec.replicas"]);
        let c = compare(&json!({"spec": {"extra": {"a": 1}}}), &json!({"spec": {"extra": [1]}}), &schema, Some(root));
        assert_eq!(paths(&c.modified), [".spec.extra"]);
        assert_eq!(paths(&c.removed), [".spec.extra.a"]);
        let status = Set::from_paths([&Path::fields(["spec"])]);
        assert!(c.excluding(&status).is_same());
    }
}
