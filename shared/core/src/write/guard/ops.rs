//! The operations of a field guard: from the live object to the expected result,
//! each preceded by the `test`s of exactly what it depends on.
//!
//! The two values are walked together through the schema, as the effect compares
//! them ([`shape_of`]: granular maps key by key, keyed lists entry by entry,
//! everything else whole):
//! - a value replaced or removed: `test` its old value, then `replace`/`remove`;
//! - a member added to a map: `test` that it is absent (`null`: a missing member
//!   passes), then `add`;
//! - an entry of a keyed list (list map or set) changed in place: `test` its key
//!   fields (the value, for a set) at its index, then the changes inside it;
//! - an entry removed: `test` the whole entry at its index, then `remove`;
//! - entries added only before and after all the entries there (none removed, the
//!   same order): `add` at the front (`/0`, `/1`, ...: a strategic merge patch puts
//!   new entries first) or at the end (`/-`), with no `test` of the other entries, so
//!   writers adding to the same list never make each other fail; what the guard
//!   cannot pin, that nobody added the same entry meanwhile, is checked on the
//!   written object ([`Appended`]);
//! - entries inserted elsewhere: `test` the identity of every entry of the list and
//!   of the last one (`/-1`), which pins its membership and length, so the new entry
//!   cannot already be there and lands exactly between the neighbours the preview showed;
//! - a keyed list whose entries are reordered, with repeated or unnamable entries,
//!   and every atomic value: `test` the whole old value, then `replace` it.
//!
//! Removals go from the last index to the first, and the rest in the order of the
//! result, so every index is the one the server sees when it gets there.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::text::untestable;
use crate::fieldpath::shape::{item_element, shape_of, Fields, Shape};
use crate::fieldpath::PathElement;
use crate::json_patch::escape_token;
use crate::schema::{Schema, TypeId};

/// A value the guard would have to `test` but the apiserver cannot compare reliably.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Untestable {
    /// Where, as a JSON Pointer.
    pub(super) pointer: String,
    /// Why, in a few words.
    pub(super) why: &'static str,
}

/// An entry the guard appends to a list without pinning the list (`add .../-`): nothing in a
/// JSON Patch can test that no entry of the same name is there, so another writer appending
/// the same entry between the read and the write is seen afterwards, on the written object,
/// as the entry named twice ([`Appended::occurrences`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Appended {
    /// The list, as a JSON Pointer.
    pub list: String,
    /// What names the entry: each key field's value (`null`: absent) of a list map, or the
    /// whole value of a set member.
    pub identity: Identity,
    /// Added at the front of the list (`add .../0`, as a strategic merge patch puts new
    /// entries), rather than at the end (`add .../-`).
    pub at_front: bool,
    /// The entry as written.
    pub entry: Value,
}

/// What names an entry of a keyed list.
#[derive(Debug, Clone, PartialEq)]
pub enum Identity {
    /// The key fields of a list map and their values.
    Keys(Vec<(String, Value)>),
    /// A set member's value.
    Value(Value),
}

impl Appended {
    /// The indices of the entries of `object`'s list that this entry's identity names.
    pub fn occurrences(&self, object: &Value) -> Vec<usize> {
        let Some(list) = object.pointer(&self.list).and_then(Value::as_array) else { return Vec::new() };
        let named = |entry: &Value| match &self.identity {
            Identity::Keys(keys) => keys.iter().all(|(k, v)| entry.get(k).unwrap_or(&Value::Null) == v),
            Identity::Value(v) => entry == v,
        };
        list.iter().enumerate().filter(|(_, e)| named(e)).map(|(i, _)| i).collect()
    }

    /// When `written` (the object as the write left it) names this entry more than once
    /// (somebody else added the same entry between the read and the write): the index of
    /// the write's own copy, the first one for an entry added at the front, the last for
    /// one added at the end (where the write put it, on the list as it was then).
    pub fn copy_in(&self, written: &Value) -> Option<usize> {
        match self.occurrences(written).as_slice() {
            [first, .., last] => Some(if self.at_front { *first } else { *last }),
            _ => None,
        }
    }
}

/// When `written` names an entry of `appended` twice: the JSON Patch that takes the write's
/// copies out again, each `test`ed first. `None` when every added entry is there once. The
/// guard adds entries without a pin only when adding them is the whole change, so taking
/// them out leaves nothing of the write.
pub fn taking_back(appended: &[Appended], written: &Value) -> Option<Value> {
    let mut copies: Vec<(&str, usize)> =
        appended.iter().filter_map(|a| Some((a.list.as_str(), a.copy_in(written)?))).collect();
    if copies.is_empty() {
        return None;
    }
    // From the last index to the first, so each index is the one the server sees.
    copies.sort_by(|a, b| b.cmp(a));
    copies.dedup();
    let mut ops = Vec::new();
    for (list, index) in copies {
        let at = format!("{list}/{index}");
        let entry = written.pointer(&at).cloned().unwrap_or(Value::Null);
        ops.push(json!({"op": "test", "path": at, "value": entry}));
        ops.push(json!({"op": "remove", "path": at}));
    }
    Some(Value::Array(ops))
}

/// The guarded operations that turn `live` into `result`, both objects of type `ty`, and
/// the entries appended without a pin.
///
/// Entries are added without a pin only when adding them is the whole change: a write that
/// named an added entry twice is then undone by taking its copies out again, and nothing
/// else of it stays behind. A change that also does something else pins its lists.
pub(super) fn operations(
    live: &Value,
    result: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Result<(Vec<Value>, Vec<Appended>), Untestable> {
    let mut ops = Ops { schema, out: Vec::new(), appended: Vec::new(), unpinned_adds: true };
    ops.walk("", ty, live, result)?;
    let adds_only = ops.out.iter().all(|op| {
        op["op"] == "test" || (op["op"] == "add" && ops.appended.iter().any(|a| Some(&a.entry) == op.get("value")))
    });
    if ops.appended.is_empty() || adds_only {
        return Ok((ops.out, ops.appended));
    }
    let mut pinned = Ops { schema, out: Vec::new(), appended: Vec::new(), unpinned_adds: false };
    pinned.walk("", ty, live, result)?;
    Ok((pinned.out, pinned.appended))
}

struct Ops<'s> {
    schema: &'s Schema,
    out: Vec<Value>,
    appended: Vec<Appended>,
    /// Whether entries added at either end of a list may go without a pin of the list.
    unpinned_adds: bool,
}

fn child(at: &str, token: &str) -> String {
    format!("{at}/{}", escape_token(token))
}

impl Ops<'_> {
    fn test(&mut self, pointer: &str, value: &Value) -> Result<(), Untestable> {
        if let Some(why) = untestable(value) {
            return Err(Untestable { pointer: pointer.to_string(), why });
        }
        self.out.push(json!({"op": "test", "path": pointer, "value": value}));
        Ok(())
    }

    fn write(&mut self, op: &str, pointer: &str, value: Option<&Value>) {
        let mut written = json!({"op": op, "path": pointer});
        if let Some(value) = value {
            written["value"] = value.clone();
        }
        self.out.push(written);
    }

    fn walk(&mut self, at: &str, ty: Option<TypeId>, old: &Value, new: &Value) -> Result<(), Untestable> {
        if old == new {
            return Ok(());
        }
        match (shape_of(self.schema, ty, Some(old)), shape_of(self.schema, ty, Some(new)), old, new) {
            (Shape::Fields(fields), Shape::Fields(_), Value::Object(o), Value::Object(n)) => {
                self.fields(at, fields, o, n)
            }
            (Shape::List { items, keys }, Shape::List { .. }, Value::Array(o), Value::Array(n)) => {
                self.list(at, items, keys, o, n).unwrap_or_else(|| self.replace(at, old, new))
            }
            _ => self.replace(at, old, new),
        }
    }

    /// `test` the old value, then `replace` it: the value is one whole.
    fn replace(&mut self, at: &str, old: &Value, new: &Value) -> Result<(), Untestable> {
        if at.is_empty() {
            return Err(Untestable { pointer: String::new(), why: "the whole object would be replaced" });
        }
        self.test(at, old)?;
        self.write("replace", at, Some(new));
        Ok(())
    }

    fn fields(
        &mut self,
        at: &str,
        fields: Fields<'_>,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Result<(), Untestable> {
        for (key, ov) in old {
            let here = child(at, key);
            match new.get(key) {
                Some(nv) => self.walk(&here, fields.child(key).0, ov, nv)?,
                None => {
                    self.test(&here, ov)?;
                    self.write("remove", &here, None);
                }
            }
        }
        for (key, nv) in new {
            if !old.contains_key(key) {
                let here = child(at, key);
                self.test(&here, &Value::Null)?;
                self.write("add", &here, Some(nv));
            }
        }
        Ok(())
    }

    /// The operations for a keyed list, or `None` when it must be replaced whole (entries
    /// without a name or named twice, or the entries both sides have in another order).
    fn list(
        &mut self,
        at: &str,
        items: Option<TypeId>,
        keys: Option<&[String]>,
        old: &[Value],
        new: &[Value],
    ) -> Option<Result<(), Untestable>> {
        let (o, o_at) = strict_names(self.schema, items, keys, old)?;
        let (n, n_at) = strict_names(self.schema, items, keys, new)?;
        let kept_old = o.iter().filter(|pe| n_at.contains_key(pe));
        let kept_new = n.iter().filter(|pe| o_at.contains_key(pe));
        if !kept_old.eq(kept_new) {
            return None;
        }
        let keys = keys.filter(|k| !k.is_empty());
        Some(self.list_entries(at, items, keys, (old, &o, &o_at), (new, &n, &n_at)))
    }

    fn list_entries(
        &mut self,
        at: &str,
        items: Option<TypeId>,
        keys: Option<&[String]>,
        (old, o, o_at): (&[Value], &[PathElement], &Positions),
        (new, n, n_at): (&[Value], &[PathElement], &Positions),
    ) -> Result<(), Untestable> {
        let adds = n.iter().any(|pe| !o_at.contains_key(pe));
        let block = (adds && self.unpinned_adds).then(|| unpinned_block(o, n, n_at)).flatten();
        if adds && block.is_none() {
            self.pin_membership(at, keys, old)?;
        }
        for (i, pe) in o.iter().enumerate().rev() {
            if !n_at.contains_key(pe) {
                let here = format!("{at}/{i}");
                self.test(&here, &old[i])?;
                self.write("remove", &here, None);
            }
        }
        for (j, pe) in n.iter().enumerate() {
            let here = format!("{at}/{j}");
            match (o_at.get(pe).copied(), block) {
                (Some(i), _) if old[i] != new[j] => {
                    if !adds || block.is_some() {
                        self.identity(&here, keys, &old[i])?;
                    }
                    self.walk(&here, items, &old[i], &new[j])?;
                }
                (Some(_), _) => {}
                (None, Some(start)) => {
                    let at_front = j < start;
                    let pointer = if at_front { here } else { format!("{at}/-") };
                    self.write("add", &pointer, Some(&new[j]));
                    self.appended.push(Appended {
                        list: at.to_string(),
                        identity: identity_of(keys, &new[j]),
                        at_front,
                        entry: new[j].clone(),
                    });
                }
                (None, None) => self.write("add", &here, Some(&new[j])),
            }
        }
        Ok(())
    }

    /// `test`s that the list holds exactly its entries, in order: each entry's identity
    /// at its index, and the last one's at `-1` (so nothing follows it).
    fn pin_membership(&mut self, at: &str, keys: Option<&[String]>, old: &[Value]) -> Result<(), Untestable> {
        let Some(last) = old.last() else { return self.test(at, &json!([])) };
        for (i, entry) in old.iter().enumerate() {
            self.identity(&format!("{at}/{i}"), keys, entry)?;
        }
        self.identity(&format!("{at}/-1"), keys, last)
    }

    /// `test`s of what names `entry` at `here`: every key field (`null`: absent), or the value of a set member.
    fn identity(&mut self, here: &str, keys: Option<&[String]>, entry: &Value) -> Result<(), Untestable> {
        match keys {
            Some(keys) => {
                for key in keys {
                    self.test(&child(here, key), entry.get(key).unwrap_or(&Value::Null))?;
                }
                Ok(())
            }
            None => self.test(here, entry),
        }
    }
}

/// Where the entries already there start in the new list, when the change only adds entries
/// before all of them and after all of them (none removed, none between two of them, the
/// same order): those adds need no pin of the list (see the module docs). `None` otherwise.
fn unpinned_block(o: &[PathElement], n: &[PathElement], n_at: &Positions) -> Option<usize> {
    let start = match o.first() {
        Some(first) => *n_at.get(first)?,
        None => 0,
    };
    (n.get(start..start + o.len())? == o).then_some(start)
}

/// What names `entry`: its key fields' values, or (a set member) itself.
fn identity_of(keys: Option<&[String]>, entry: &Value) -> Identity {
    match keys {
        Some(keys) => {
            Identity::Keys(keys.iter().map(|k| (k.clone(), entry.get(k).cloned().unwrap_or(Value::Null))).collect())
        }
        None => Identity::Value(entry.clone()),
    }
}

/// The index of each entry by name.
type Positions = BTreeMap<PathElement, usize>;

/// The name of every entry, and its index by name; `None` if one has none or two share one.
fn strict_names(
    schema: &Schema,
    items: Option<TypeId>,
    keys: Option<&[String]>,
    list: &[Value],
) -> Option<(Vec<PathElement>, Positions)> {
    let mut names: Vec<PathElement> = Vec::with_capacity(list.len());
    let mut at = BTreeMap::new();
    for (i, item) in list.iter().enumerate() {
        let pe = item_element(schema, items, keys, item).ok()?;
        if at.insert(pe.clone(), i).is_some() {
            return None;
        }
        names.push(pe);
    }
    Some((names, at))
}
