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
//! - entries added: `test` the identity of every entry of the list and of the last
//!   one (`/-1`), which pins its membership and length, so the new entry cannot
//!   already be there and lands exactly between the neighbours the preview showed;
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

/// The guarded operations that turn `live` into `result`, both objects of type `ty`.
pub(super) fn operations(
    live: &Value,
    result: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Result<Vec<Value>, Untestable> {
    let mut ops = Ops { schema, out: Vec::new() };
    ops.walk("", ty, live, result)?;
    Ok(ops.out)
}

struct Ops<'s> {
    schema: &'s Schema,
    out: Vec<Value>,
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
        if adds {
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
            match o_at.get(pe).copied() {
                Some(i) if old[i] != new[j] => {
                    if !adds {
                        self.identity(&here, keys, &old[i])?;
                    }
                    self.walk(&here, items, &old[i], &new[j])?;
                }
                Some(_) => {}
                None => self.write("add", &here, Some(&new[j])),
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
