//! Where a change puts the entries of keyed lists: the order a preview shows.
//!
//! An [`Effect`](crate::change::effect::Effect) names list-map entries by key
//! (`initContainers[name="backup-db"]`), so it says nothing about order. Order
//! matters: init containers run one after the other, and an env entry can
//! refer to the ones before it. A JSON Patch `add .../initContainers/1`
//! previewed after `migrate-db` lands *before* it when another writer inserted
//! an entry at position 0 in between; re-planned, the effect is the same, the
//! order is not. So beside the effect, the approved intent keeps the
//! [`Placements`]: for each entry the change adds to a keyed list (a list map
//! or a set), the nearest entries already there before and after it; when the
//! change reorders the entries already there, all of their order.
//!
//! A re-plan keeps the placement when each placed entry still comes after its
//! previewed predecessor and before its previewed successor, among the entries
//! still present; entries somebody else added meanwhile do not matter.
//!
//! ```
//! use fieldwise_core::change::placement::Placements;
//! use fieldwise_core::schema::{builtin, Gvk};
//! use serde_json::json;
//!
//! let schema = builtin();
//! let ty = schema.root(&Gvk::new("", "v1", "Pod"));
//! let pod = |names: &[&str]| json!({"spec": {"initContainers":
//!     names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}});
//! let previewed = Placements::between(&pod(&["migrate", "warm"]), &pod(&["migrate", "backup", "warm"]), schema, ty);
//! // Re-planned after another writer inserted `hook` at position 0: `backup` now lands before `migrate`.
//! let misplaced = previewed.hold_in(&pod(&["hook", "backup", "migrate", "warm"]), schema).unwrap_err();
//! assert_eq!(misplaced.to_string(),
//!     r#".spec.initContainers: [name="backup"] would now come before [name="migrate"]; the preview put it after"#);
//! // Another writer's entry at the end does not move ours.
//! assert!(previewed.hold_in(&pod(&["migrate", "backup", "warm", "late"]), schema).is_ok());
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::fieldpath::shape::{item_element, shape_of, Shape};
use crate::fieldpath::{value_at, Path, PathElement};
use crate::schema::{Schema, TypeId};

/// Where one entry goes: after one entry that was there before the change and before another.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The entry placed.
    pub entry: PathElement,
    /// The nearest entry before it that was already in the list (`None`: it comes first).
    pub after: Option<PathElement>,
    /// The nearest entry after it that was already in the list (`None`: it comes last).
    pub before: Option<PathElement>,
}

/// The placements in one keyed list.
#[derive(Debug, Clone, PartialEq)]
struct ListPlacements {
    /// The list.
    list: Path,
    /// How its entries are named (item type and key fields; no keys: a set).
    items: Option<TypeId>,
    keys: Option<Vec<String>>,
    /// The entries placed, in list order.
    entries: Vec<Placement>,
}

/// The placements a change makes, list by list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placements {
    lists: Vec<ListPlacements>,
}

/// An entry that would land on the other side of a neighbour than the preview showed.
#[derive(Debug, Clone, PartialEq)]
pub struct Misplaced {
    /// The list.
    pub list: Path,
    /// The entry placed.
    pub entry: PathElement,
    /// The neighbour it is now on the other side of.
    pub neighbour: PathElement,
    /// Whether the preview put the entry after the neighbour (else before it).
    pub previewed_after: bool,
}

impl fmt::Display for Misplaced {
    /// `.spec.initContainers: [name="b"] would now come before [name="m"]; the preview put it after`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (now, then) = if self.previewed_after { ("before", "after") } else { ("after", "before") };
        write!(f, "{}: {} would now come {now} {}; the preview put it {then}", self.list, self.entry, self.neighbour)
    }
}

impl Placements {
    /// The placements of the change from `before` to `after`, both of type `ty` in `schema`.
    pub fn between(before: &Value, after: &Value, schema: &Schema, ty: Option<TypeId>) -> Placements {
        let mut walker = Walker { schema, path: Vec::new(), out: Vec::new() };
        walker.walk(ty, before, after);
        Placements { lists: walker.out }
    }

    /// Whether the change places nothing (it adds no entry to a keyed list and reorders none).
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// Every placement, with the list it is in.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &Placement)> {
        self.lists.iter().flat_map(|l| l.entries.iter().map(move |p| (&l.list, p)))
    }

    /// Whether `object` has every placed entry on the previewed side of its previewed
    /// neighbours, among the entries it has: the first that is not, if any.
    pub fn hold_in(&self, object: &Value, schema: &Schema) -> Result<(), Box<Misplaced>> {
        for list in &self.lists {
            let Some(items) = value_at(object, list.list.elements()).and_then(Value::as_array) else { continue };
            let named = Named::of(schema, list.items, list.keys.as_deref(), items);
            let position = |pe: &PathElement| named.at.get(pe).copied();
            for placed in &list.entries {
                let Some(at) = position(&placed.entry) else { continue };
                let misplaced = |neighbour: &PathElement, previewed_after: bool| {
                    Box::new(Misplaced {
                        list: list.list.clone(),
                        entry: placed.entry.clone(),
                        neighbour: neighbour.clone(),
                        previewed_after,
                    })
                };
                if let Some(after) = &placed.after {
                    if position(after).is_some_and(|p| p > at) {
                        return Err(misplaced(after, true));
                    }
                }
                if let Some(before) = &placed.before {
                    if position(before).is_some_and(|p| p < at) {
                        return Err(misplaced(before, false));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The entries of a keyed list by name, in order, and the position of each name;
/// unnamable entries and repeats of a name are left out, as the effect's comparison
/// leaves them out.
struct Named<'v> {
    entries: Vec<(PathElement, &'v Value)>,
    at: BTreeMap<PathElement, usize>,
}

impl<'v> Named<'v> {
    fn of(schema: &Schema, items: Option<TypeId>, keys: Option<&[String]>, list: &'v [Value]) -> Self {
        let mut named = Named { entries: Vec::with_capacity(list.len()), at: BTreeMap::new() };
        for item in list {
            if let Ok(pe) = item_element(schema, items, keys, item) {
                if !named.at.contains_key(&pe) {
                    named.at.insert(pe.clone(), named.entries.len());
                    named.entries.push((pe, item));
                }
            }
        }
        named
    }

    fn has(&self, pe: &PathElement) -> bool {
        self.at.contains_key(pe)
    }
}

struct Walker<'s> {
    schema: &'s Schema,
    path: Vec<PathElement>,
    out: Vec<ListPlacements>,
}

impl Walker<'_> {
    fn walk(&mut self, ty: Option<TypeId>, before: &Value, after: &Value) {
        if before == after {
            return;
        }
        match (shape_of(self.schema, ty, Some(after)), before, after) {
            (Shape::Fields(fields), Value::Object(b), Value::Object(a)) => {
                for (key, av) in a {
                    let Some(bv) = b.get(key) else { continue };
                    self.path.push(PathElement::Field(key.clone()));
                    self.walk(fields.child(key).0, bv, av);
                    self.path.pop();
                }
            }
            (Shape::List { items, keys }, Value::Array(b), Value::Array(a)) => self.list(items, keys, b, a),
            _ => {}
        }
    }

    fn list(&mut self, items: Option<TypeId>, keys: Option<&[String]>, before: &[Value], after: &[Value]) {
        let b = Named::of(self.schema, items, keys, before);
        let a = Named::of(self.schema, items, keys, after);
        let kept_after = a.entries.iter().map(|(p, _)| p).filter(|p| b.has(p));
        let kept_before = b.entries.iter().map(|(p, _)| p).filter(|p| a.has(p));
        let reordered = !kept_after.eq(kept_before);
        // The nearest entry that was there before, on each side of each position: two passes.
        let kept_at: Vec<Option<&PathElement>> = a.entries.iter().map(|(p, _)| b.has(p).then_some(p)).collect();
        let mut previous: Vec<Option<&PathElement>> = Vec::with_capacity(kept_at.len());
        let mut last = None;
        for kept in &kept_at {
            previous.push(last);
            last = kept.or(last);
        }
        let mut next: Vec<Option<&PathElement>> = vec![None; kept_at.len()];
        let mut first = None;
        for (i, kept) in kept_at.iter().enumerate().rev() {
            next[i] = first;
            first = kept.or(first);
        }
        let mut entries = Vec::new();
        for (at, (pe, _)) in a.entries.iter().enumerate() {
            if kept_at[at].is_some() && !reordered {
                continue;
            }
            entries.push(Placement { entry: pe.clone(), after: previous[at].cloned(), before: next[at].cloned() });
        }
        if !entries.is_empty() {
            self.out.push(ListPlacements {
                list: Path(self.path.clone()),
                items,
                keys: keys.map(<[String]>::to_vec),
                entries,
            });
        }
        for (pe, av) in &a.entries {
            let Some(bv) = b.at.get(pe).map(|&i| b.entries[i].1) else { continue };
            self.path.push(pe.clone());
            self.walk(items, bv, av);
            self.path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn deployment(init: &[&str], env: &[&str]) -> Value {
        let named = |names: &[&str]| names.iter().map(|n| json!({"name": n, "value": "v"})).collect::<Vec<_>>();
        json!({"spec": {"template": {"spec": {
            "initContainers": init.iter().map(|n| json!({"name": n, "image": "i"})).collect::<Vec<_>>(),
            "containers": [{"name": "app", "env": named(env)}]}}}})
    }

    fn placements(before: &Value, after: &Value) -> Placements {
        let schema = builtin();
        Placements::between(before, after, schema, schema.root(&Gvk::new("apps", "v1", "Deployment")))
    }

    fn key(name: &str) -> PathElement {
        PathElement::key([("name", json!(name))])
    }

    #[test]
    fn an_added_entry_is_placed_between_its_previewed_neighbours() {
        let p = placements(&deployment(&["m", "w"], &[]), &deployment(&["m", "b", "w"], &[]));
        let all: Vec<_> = p.iter().collect();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0.to_string(), ".spec.template.spec.initContainers");
        assert_eq!(all[0].1, &Placement { entry: key("b"), after: Some(key("m")), before: Some(key("w")) });
        let schema = builtin();
        assert!(p.hold_in(&deployment(&["m", "b", "w"], &[]), schema).is_ok());
        assert!(
            p.hold_in(&deployment(&["m", "x", "b", "y", "w"], &[]), schema).is_ok(),
            "others' entries do not count"
        );
        assert!(p.hold_in(&deployment(&["b", "w"], &[]), schema).is_ok(), "a neighbour that is gone does not count");
        let err = p.hold_in(&deployment(&["h", "b", "m", "w"], &[]), schema).unwrap_err();
        assert_eq!((err.entry, err.neighbour, err.previewed_after), (key("b"), key("m"), true));
        let err = p.hold_in(&deployment(&["m", "w", "b"], &[]), schema).unwrap_err();
        assert_eq!((&err.neighbour, err.previewed_after), (&key("w"), false));
        assert!(err.to_string().ends_with("[name=\"b\"] would now come after [name=\"w\"]; the preview put it before"));
    }

    #[test]
    fn lists_inside_entries_removals_and_unchanged_lists_place_nothing_or_what_they_add() {
        let p = placements(&deployment(&["m"], &["A", "C"]), &deployment(&["m"], &["A", "B", "C"]));
        let all: Vec<_> = p.iter().collect();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].0.to_string(), ".spec.template.spec.containers[name=\"app\"].env");
        assert!(placements(&deployment(&["m", "w"], &["A"]), &deployment(&["w"], &["A"])).is_empty());
        let mut image = deployment(&["m"], &["A"]);
        image["spec"]["template"]["spec"]["initContainers"][0]["image"] = json!("j");
        assert!(placements(&deployment(&["m"], &["A"]), &image).is_empty());
        // First and last entries have one neighbour; an entry added to an empty list has none.
        let p = placements(&deployment(&["m"], &[]), &deployment(&["a", "m", "z"], &[]));
        let all: Vec<_> = p.iter().map(|(_, p)| p.clone()).collect();
        assert_eq!(all[0], Placement { entry: key("a"), after: None, before: Some(key("m")) });
        assert_eq!(all[1], Placement { entry: key("z"), after: Some(key("m")), before: None });
        let p = placements(&deployment(&[], &[]), &deployment(&["a"], &[]));
        assert_eq!(p.iter().next().map(|(_, p)| (p.after.clone(), p.before.clone())), Some((None, None)));
    }

    #[test]
    fn a_reorder_places_every_entry_and_sets_and_atomic_lists_follow_their_kind() {
        let p = placements(&deployment(&["a", "b", "c"], &[]), &deployment(&["c", "a", "b"], &[]));
        assert_eq!(p.iter().count(), 3);
        let schema = builtin();
        assert!(p.hold_in(&deployment(&["a", "b", "c"], &[]), schema).is_err());
        assert!(p.hold_in(&deployment(&["c", "x", "a", "b"], &[]), schema).is_ok());
        // finalizers are a set: members are placed by value.
        let p =
            placements(&json!({"metadata": {"finalizers": ["a"]}}), &json!({"metadata": {"finalizers": ["z", "a"]}}));
        assert_eq!(p.iter().next().map(|(_, p)| p.entry.clone()), Some(PathElement::value(json!("z"))));
        // args are atomic: the effect replaces them whole, nothing is placed.
        let with_args =
            |args: Value| json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "args": args}]}}}});
        assert!(placements(&with_args(json!(["a"])), &with_args(json!(["b", "a"]))).is_empty());
    }
}
