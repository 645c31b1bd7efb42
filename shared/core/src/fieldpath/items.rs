//! The child a path element names in a value, and the index that makes many such lookups
//! in one long list cheap.
//!
//! A list-map entry is the first whose key fields equal the key's, compared as JSON
//! values; failing that, the first object that omits some key fields (the server
//! defaulted them, like `protocol: TCP`) and agrees on the others. A set member is the
//! first equal item. Scanning the list for each is quadratic when a set names thousands
//! of entries of one list, so [`Items::for_set`] hashes the entries once instead; the
//! index answers exactly as the scan does (it only narrows the candidates).

use std::hash::{DefaultHasher, Hasher};

use serde_json::Value;

use super::element::{KeyFields, PathElement};
use super::order::{hash_value, values_equal};
use super::set::Set;
use crate::object::field as object_field;

/// From this many list entries named at one node of a set, the list is indexed rather than scanned.
const INDEX_FROM: usize = 8;

/// One value, and how to find its children by path element.
pub(super) struct Items<'v> {
    value: &'v Value,
    /// Whether to index the list rather than scan it.
    indexed: bool,
    /// The indices of list-map entries, one per list of key field names seen (usually one).
    by_key: Vec<KeyIndex>,
    /// The index of set members by value, once built.
    by_value: Option<HashIndex>,
}

impl<'v> Items<'v> {
    /// Finds children by scanning: for one lookup.
    pub(super) fn scanned(value: &'v Value) -> Self {
        Items { value, indexed: false, by_key: Vec::new(), by_value: None }
    }

    /// Finds the children `set` names, indexing a list when the set names many of its entries.
    pub(super) fn for_set(value: &'v Value, set: &Set) -> Self {
        let named = |pe: &&PathElement| matches!(pe, PathElement::Key(_) | PathElement::Value(_));
        let indexed = value.is_array()
            && set.members().iter().chain(set.children().iter().map(|(pe, _)| pe)).filter(named).count() >= INDEX_FROM;
        Items { indexed, ..Items::scanned(value) }
    }

    /// The child `pe` names, if the value has it.
    pub(super) fn find(&mut self, pe: &PathElement) -> Option<&'v Value> {
        let value = self.value;
        match pe {
            PathElement::Field(name) => object_field::get_in(value, name),
            PathElement::Index(i) => value.as_array()?.get(usize::try_from(*i).ok()?),
            // A key without fields matches any item, even a non-object: nothing to index.
            PathElement::Key(key) if self.indexed && !key.fields().is_empty() => {
                self.find_key_indexed(value.as_array()?, key)
            }
            PathElement::Key(key) => {
                let items = value.as_array()?;
                items.iter().find(|item| key.matches(item)).or_else(|| items.iter().find(|item| defaulted(key, item)))
            }
            PathElement::Value(want) if self.indexed => {
                let items = value.as_array()?;
                let index = self.by_value.get_or_insert_with(|| {
                    HashIndex::new(items.iter().enumerate().map(|(i, item)| (hash_all([item]), i)).collect())
                });
                index.candidates(hash_all([want])).map(|i| &items[i]).find(|item| values_equal(item, want))
            }
            PathElement::Value(want) => value.as_array()?.iter().find(|item| values_equal(item, want)),
        }
    }

    fn find_key_indexed(&mut self, items: &'v [Value], key: &KeyFields) -> Option<&'v Value> {
        let at = match self.by_key.iter().position(|index| index.serves(key)) {
            Some(at) => at,
            None => {
                self.by_key.push(KeyIndex::new(items, key));
                self.by_key.len() - 1
            }
        };
        let index = &self.by_key[at];
        let want = hash_all(key.fields().iter().map(|(_, v)| v));
        index
            .complete
            .candidates(want)
            .map(|i| &items[i])
            .find(|item| key.matches(item))
            // Without an exact match, an entry that has every key field cannot match either.
            .or_else(|| index.partial.iter().map(|&i| &items[i]).find(|item| defaulted(key, item)))
    }
}

/// Whether `item` is an object that agrees with `key` on every key field it has.
fn defaulted(key: &KeyFields, item: &Value) -> bool {
    item.is_object() && key.fields().iter().all(|(n, v)| item.get(n).is_none_or(|got| values_equal(got, v)))
}

/// The list-map entries of one list, by the values of one list of key fields.
struct KeyIndex {
    /// The key field names, in key order (duplicates kept).
    names: Vec<String>,
    /// Entries having every key field, by the hash of their values.
    complete: HashIndex,
    /// Objects lacking some key field, in list order: the only ones a defaulted key can match.
    partial: Vec<usize>,
}

impl KeyIndex {
    fn new(items: &[Value], key: &KeyFields) -> Self {
        let names: Vec<String> = key.fields().iter().map(|(n, _)| n.clone()).collect();
        let mut complete = Vec::with_capacity(items.len());
        let mut partial = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Some(map) = item.as_object() else { continue };
            let mut state = DefaultHasher::new();
            if names.iter().all(|n| map.get(n).map(|v| hash_value(v, &mut state)).is_some()) {
                complete.push((state.finish(), i));
            } else {
                partial.push(i);
            }
        }
        KeyIndex { names, complete: HashIndex::new(complete), partial }
    }

    /// Whether the index is by the fields of `key`.
    fn serves(&self, key: &KeyFields) -> bool {
        self.names.len() == key.fields().len() && self.names.iter().zip(key.fields()).all(|(a, (b, _))| a == b)
    }
}

/// List positions sorted by a hash of what identifies them; equal values have equal hashes.
struct HashIndex(Vec<(u64, usize)>);

impl HashIndex {
    fn new(mut entries: Vec<(u64, usize)>) -> Self {
        entries.sort_unstable();
        HashIndex(entries)
    }

    /// The positions whose hash is `hash`, in list order.
    fn candidates(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        let start = self.0.partition_point(|(h, _)| *h < hash);
        self.0[start..].iter().take_while(move |(h, _)| *h == hash).map(|(_, i)| *i)
    }
}

/// The hash of a sequence of values (a key's, in key field order), as [`KeyIndex::new`] computes it.
fn hash_all<'a>(values: impl IntoIterator<Item = &'a Value>) -> u64 {
    let mut state = DefaultHasher::new();
    for v in values {
        hash_value(v, &mut state);
    }
    state.finish()
}
