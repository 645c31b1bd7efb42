//! Hashed look-ups of list entries, with exactly the results of upstream's linear scans.
//!
//! Upstream finds list entries by scanning (`findMapInSliceBasedOnKeyValue`, `index`,
//! `partitionMapsByPresentInList`), which makes merging a patch of m entries into a
//! list of n entries cost m x n comparisons: seconds for a 10,000-entry env list. The
//! indexes here answer the same questions in constant time, including the answers
//! that are errors in upstream (a scan that meets a non-object entry, or compares two
//! maps or two slices, which panics in Go), so callers can swap a scan for a look-up
//! without changing a single result.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;

use serde_json::Value;

use super::errors::ErrorKind;
use super::go_types::GoType;
use crate::object::field as object_field;

/// A scalar as Go's `==` on `interface{}` values tells it apart: by dynamic type and
/// value (`1` as int64 differs from `1.0` as float64; `0.0` equals `-0.0`).
#[derive(Debug, Clone, Copy, Eq, Hash)]
pub(crate) enum ScalarKey<'v> {
    Nil,
    Bool(bool),
    Int(i64),
    /// The bits of the float64, with `-0.0` written as `0.0`.
    Float(u64),
    String(&'v str),
}

/// The derived equality, with strings compared by [`crate::str_eq`] (a hot path).
impl PartialEq for ScalarKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ScalarKey::Nil, ScalarKey::Nil) => true,
            (ScalarKey::Bool(a), ScalarKey::Bool(b)) => a == b,
            (ScalarKey::Int(a), ScalarKey::Int(b)) => a == b,
            (ScalarKey::Float(a), ScalarKey::Float(b)) => a == b,
            (ScalarKey::String(a), ScalarKey::String(b)) => crate::str_eq::equal(a, b),
            _ => false,
        }
    }
}

/// What Go's `==` sees of a value: a comparable scalar, or a map or slice (which
/// Go cannot compare, and panics on when both sides are of that type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GoKey<'v> {
    Scalar(ScalarKey<'v>),
    Uncomparable(GoType),
}

impl<'v> GoKey<'v> {
    /// The key of a value; two values are `==` in Go exactly when their keys are
    /// equal scalars (see [`go_eq`]).
    pub(crate) fn of(value: &'v Value) -> GoKey<'v> {
        GoKey::Scalar(match value {
            Value::Null => ScalarKey::Nil,
            Value::Bool(b) => ScalarKey::Bool(*b),
            Value::String(s) => ScalarKey::String(s),
            Value::Number(n) => match n.as_i64() {
                Some(i) => ScalarKey::Int(i),
                None => {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    ScalarKey::Float(if f == 0.0 { 0 } else { f.to_bits() })
                }
            },
            Value::Array(_) => return GoKey::Uncomparable(GoType::Slice),
            Value::Object(_) => return GoKey::Uncomparable(GoType::Map),
        })
    }
}

/// The earliest of two optional positions, with what happened there.
fn earliest<T>(a: Option<(usize, T)>, b: Option<(usize, T)>) -> Option<(usize, T)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// First positions of uncomparable keys, by type.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Uncomparables {
    slice: Option<usize>,
    map: Option<usize>,
}

impl Uncomparables {
    fn note(&mut self, ty: GoType, at: usize) {
        let slot = if ty == GoType::Slice { &mut self.slice } else { &mut self.map };
        *slot = Some(slot.map_or(at, |first| first.min(at)));
    }

    fn first(&self, ty: GoType) -> Option<usize> {
        if ty == GoType::Slice {
            self.slice
        } else {
            self.map
        }
    }
}

/// Lists up to this long are scanned: building a table costs more than it saves.
const SCAN_UP_TO: usize = 16;

/// Go's `==` on two `interface{}` values: equal when of the same dynamic type
/// and value. Comparing two maps or two slices panics in Go ("comparing
/// uncomparable type"); that is [`ErrorKind::Uncomparable`] here.
pub(crate) fn go_eq(left: &Value, right: &Value) -> Result<bool, ErrorKind> {
    GoKey::of(left).equals(GoKey::of(right))
}

impl GoKey<'_> {
    /// Go's `==` on the two values ([`go_eq`]).
    fn equals(self, other: GoKey<'_>) -> Result<bool, ErrorKind> {
        match (self, other) {
            (GoKey::Scalar(a), GoKey::Scalar(b)) => Ok(a == b),
            (GoKey::Uncomparable(a), GoKey::Uncomparable(b)) if a == b => Err(ErrorKind::Uncomparable(a.name())),
            _ => Ok(false),
        }
    }
}

/// A [`GoKey`] that owns its string: what an order list keeps of an element that
/// has been moved away (24 bytes, where a copy of the value takes 80 and more).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OwnedKey {
    Nil,
    Bool(bool),
    Int(i64),
    Float(u64),
    String(Box<str>),
    Uncomparable(GoType),
}

impl OwnedKey {
    pub(crate) fn of(value: &Value) -> Self {
        match GoKey::of(value) {
            GoKey::Scalar(ScalarKey::Nil) => OwnedKey::Nil,
            GoKey::Scalar(ScalarKey::Bool(b)) => OwnedKey::Bool(b),
            GoKey::Scalar(ScalarKey::Int(i)) => OwnedKey::Int(i),
            GoKey::Scalar(ScalarKey::Float(bits)) => OwnedKey::Float(bits),
            GoKey::Scalar(ScalarKey::String(s)) => OwnedKey::String(s.into()),
            GoKey::Uncomparable(ty) => OwnedKey::Uncomparable(ty),
        }
    }

    pub(crate) fn as_go_key(&self) -> GoKey<'_> {
        GoKey::Scalar(match self {
            OwnedKey::Nil => ScalarKey::Nil,
            OwnedKey::Bool(b) => ScalarKey::Bool(*b),
            OwnedKey::Int(i) => ScalarKey::Int(*i),
            OwnedKey::Float(bits) => ScalarKey::Float(*bits),
            OwnedKey::String(s) => ScalarKey::String(s),
            OwnedKey::Uncomparable(ty) => return GoKey::Uncomparable(*ty),
        })
    }
}

/// `index(order, item)` of `normalizeElementOrder` for many items: the position of
/// the first order entry whose key is `==` to a given key, or -1.
pub(crate) enum Positions<'v> {
    Scan(Vec<GoKey<'v>>),
    Table { first: HashMap<ScalarKey<'v>, usize, RandomState>, uncomparable: Uncomparables },
}

impl<'v> Positions<'v> {
    /// Indexes `order` by each entry's key (`key_of`; `None` counts as `nil`).
    pub(crate) fn new<T>(order: &'v [T], key_of: impl Fn(&'v T) -> Option<GoKey<'v>>) -> Self {
        let keys = order.iter().map(|entry| key_of(entry).unwrap_or(GoKey::Scalar(ScalarKey::Nil)));
        if order.len() <= SCAN_UP_TO {
            return Positions::Scan(keys.collect());
        }
        let mut first = HashMap::with_capacity_and_hasher(order.len(), RandomState::default());
        let mut uncomparable = Uncomparables::default();
        for (i, key) in keys.enumerate() {
            match key {
                GoKey::Scalar(key) => {
                    first.entry(key).or_insert(i);
                }
                GoKey::Uncomparable(ty) => uncomparable.note(ty, i),
            }
        }
        Positions::Table { first, uncomparable }
    }

    /// The position of `key`, or -1; comparing a map (slice) key with an order
    /// that holds a map (slice) key is Go's panic, an error.
    pub(crate) fn of(&self, key: &Value) -> Result<isize, ErrorKind> {
        let (first, uncomparable) = match self {
            Positions::Scan(keys) => {
                let key = GoKey::of(key);
                for (i, candidate) in keys.iter().enumerate() {
                    if key.equals(*candidate)? {
                        return Ok(i as isize);
                    }
                }
                return Ok(-1);
            }
            Positions::Table { first, uncomparable } => (first, uncomparable),
        };
        match GoKey::of(key) {
            GoKey::Scalar(key) => Ok(first.get(&key).map_or(-1, |&i| i as isize)),
            GoKey::Uncomparable(ty) => match uncomparable.first(ty) {
                Some(_) => Err(ErrorKind::Uncomparable(ty.name())),
                None => Ok(-1),
            },
        }
    }
}

/// Why a scan of list entries by merge key stops before a match.
#[derive(Debug, Clone, Copy)]
enum Stop {
    NotAMap,
    Uncomparable(GoType),
}

/// `findMapInSliceBasedOnKeyValue` for many values over a list that grows and
/// changes as a patch is merged into it: the first entry whose `merge_key` is `==`
/// to a value, with the scan's errors. Entries are bucketed by the hash of their
/// key and confirmed against the list, so the index borrows nothing.
pub(crate) struct EntryIndex {
    hasher: RandomState,
    merge_key: String,
    /// Ascending positions of the entries whose key hashes to the bucket; `None`
    /// for a list short enough to scan.
    buckets: Option<HashMap<u64, Vec<usize>, RandomState>>,
    not_a_map: Option<usize>,
    uncomparable: Uncomparables,
}

impl EntryIndex {
    /// Indexes the entries of `list` by `merge_key`.
    pub(crate) fn new<T: Borrow<Value>>(list: &[T], merge_key: &str) -> Self {
        let mut index = EntryIndex {
            hasher: RandomState::default(),
            merge_key: merge_key.to_string(),
            buckets: (list.len() > SCAN_UP_TO)
                .then(|| HashMap::with_capacity_and_hasher(list.len(), RandomState::default())),
            not_a_map: None,
            uncomparable: Uncomparables::default(),
        };
        for (i, entry) in list.iter().enumerate() {
            index.add(entry.borrow(), i);
        }
        index
    }

    fn key_of<'v>(&self, entry: &'v Value) -> Option<GoKey<'v>> {
        object_field::get_in(entry, &self.merge_key).map(GoKey::of)
    }

    /// Notes `entry` at position `at`, which no indexed entry holds yet.
    fn add(&mut self, entry: &Value, at: usize) {
        if !entry.is_object() {
            self.not_a_map = Some(self.not_a_map.map_or(at, |n| n.min(at)));
            return;
        }
        match self.key_of(entry) {
            Some(GoKey::Scalar(key)) => {
                let Some(buckets) = &mut self.buckets else { return };
                let bucket = buckets.entry(self.hasher.hash_one(key)).or_default();
                let slot = bucket.partition_point(|&i| i < at);
                bucket.insert(slot, at);
            }
            Some(GoKey::Uncomparable(ty)) => self.uncomparable.note(ty, at),
            None => {}
        }
    }

    /// Indexes the entry just pushed onto the end of `list`.
    pub(crate) fn appended<T: Borrow<Value>>(&mut self, list: &[T]) {
        if let Some(last) = list.len().checked_sub(1) {
            self.add(list[last].borrow(), last);
        }
    }

    /// Re-indexes entry `at` after it was changed in place; `value` is the key it
    /// was found by (so its old key is `==` to `value`).
    pub(crate) fn changed<T: Borrow<Value>>(&mut self, list: &[T], at: usize, value: &Value) {
        let entry = list[at].borrow();
        if self.key_of(entry) == Some(GoKey::of(value)) {
            return;
        }
        if let (GoKey::Scalar(old), Some(buckets)) = (GoKey::of(value), &mut self.buckets) {
            if let Some(bucket) = buckets.get_mut(&self.hasher.hash_one(old)) {
                bucket.retain(|&i| i != at);
            }
        }
        self.add(entry, at);
    }

    /// What the scan of `list` for `value` returns: the first matching entry, none,
    /// or the error of the first entry that stops the scan before a match.
    pub(crate) fn find<T: Borrow<Value>>(&self, list: &[T], value: &Value) -> Result<Option<usize>, ErrorKind> {
        let Some(buckets) = &self.buckets else { return find_by_key(list, &self.merge_key, value) };
        let (found, stop) = match GoKey::of(value) {
            GoKey::Scalar(key) => {
                let bucket = buckets.get(&self.hasher.hash_one(key)).map_or(&[][..], Vec::as_slice);
                let found = bucket.iter().copied().find(|&i| self.key_of(list[i].borrow()) == Some(GoKey::Scalar(key)));
                (found, None)
            }
            GoKey::Uncomparable(ty) => (None, self.uncomparable.first(ty).map(|i| (i, Stop::Uncomparable(ty)))),
        };
        let stop = earliest(self.not_a_map.map(|i| (i, Stop::NotAMap)), stop);
        match (stop, found) {
            (Some((at, why)), found) if found.is_none_or(|f| at < f) => Err(match why {
                Stop::NotAMap => ErrorKind::NotAMapInList(at),
                Stop::Uncomparable(ty) => ErrorKind::Uncomparable(ty.name()),
            }),
            (_, found) => Ok(found),
        }
    }
}

/// `findMapInSliceBasedOnKeyValue`: the index of the first object whose `key` equals
/// `value` (Go's `==`), scanning; what [`EntryIndex`] answers without scanning.
pub(crate) fn find_by_key<T: Borrow<Value>>(list: &[T], key: &str, value: &Value) -> Result<Option<usize>, ErrorKind> {
    for (i, item) in list.iter().enumerate() {
        let Some(map) = item.borrow().as_object() else { return Err(ErrorKind::NotAMapInList(i)) };
        if let Some(candidate) = object_field::get(map, key) {
            if go_eq(candidate, value)? {
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(v: Value) -> Vec<Value> {
        match v {
            Value::Array(items) => items,
            _ => Vec::new(),
        }
    }

    #[test]
    fn go_equality_panics_on_maps_and_slices() {
        assert_eq!(go_eq(&json!(1), &json!(1)), Ok(true));
        assert_eq!(go_eq(&json!(1), &json!(1.0)), Ok(false));
        assert_eq!(go_eq(&json!([]), &json!(1)), Ok(false));
        assert_eq!(go_eq(&json!([]), &json!([])), Err(ErrorKind::Uncomparable("[]interface {}")));
        assert_eq!(go_eq(&json!({}), &json!({"a": 1})), Err(ErrorKind::Uncomparable("map[string]interface {}")));
    }

    /// Go's `==` on `interface{}` values as the Go spec words it, by dynamic type.
    fn go_spec_eq(left: &Value, right: &Value) -> Result<bool, ErrorKind> {
        let ty = GoType::of(left);
        if ty != GoType::of(right) {
            return Ok(false);
        }
        match (left, right) {
            (Value::Array(_), _) | (Value::Object(_), _) => Err(ErrorKind::Uncomparable(ty.name())),
            (Value::Number(l), Value::Number(r)) if ty == GoType::Float => Ok(l.as_f64() == r.as_f64()),
            _ => Ok(left == right),
        }
    }

    /// `index` as upstream scans it.
    fn index(order: &[Value], key: &Value, merge_key: &str) -> Result<isize, ErrorKind> {
        for (i, candidate) in order.iter().enumerate() {
            let candidate = candidate.as_object().and_then(|m| m.get(merge_key)).unwrap_or(&Value::Null);
            if go_eq(key, candidate)? {
                return Ok(i as isize);
            }
        }
        Ok(-1)
    }

    /// A list as given, and padded past [`SCAN_UP_TO`] before and after (so that
    /// both the scan and the table answer).
    fn variants(list: Value) -> Vec<Vec<Value>> {
        let list = values(list);
        let filler: Vec<Value> = (0..SCAN_UP_TO + 2).map(|i| json!({"k": format!("filler-{i}")})).collect();
        let after: Vec<Value> = list.iter().cloned().chain(filler.iter().cloned()).collect();
        let before: Vec<Value> = filler.iter().cloned().chain(list.iter().cloned()).collect();
        vec![list, after, before]
    }

    fn probes() -> Vec<Value> {
        values(
            json!([null, true, false, 1, 1.0, -0.0, 0, 0.0, "1", "a", "b", [], {}, [1], {"a": 1}, 1e300, 18446744073709551615u64]),
        )
    }

    #[test]
    fn entry_index_answers_as_the_scan_does() {
        let lists = [
            json!([{"k": "a"}, {"k": "b"}, {"k": "a"}]),
            json!([{"k": 1}, {"k": 1.0}, {"k": -0.0}, {"k": 0}, {"k": null}, {"x": 1}]),
            json!([{"k": "a"}, "not a map", {"k": "b"}]),
            json!([{"k": [1]}, {"k": "a"}, {"k": {"a": 1}}, {"k": true}]),
            json!([{"k": "b"}, {"k": {}}, 3, {"k": []}]),
            json!([{"k": 18446744073709551615u64}, {"k": 1e300}]),
            json!([]),
        ];
        for list in lists.into_iter().flat_map(variants) {
            let refs: Vec<&Value> = list.iter().collect();
            let index = EntryIndex::new(&refs, "k");
            for probe in probes() {
                assert_eq!(
                    format!("{:?}", index.find(&refs, &probe)),
                    format!("{:?}", find_by_key(&list, "k", &probe)),
                    "list {list:?}, value {probe}"
                );
            }
        }
    }

    #[test]
    fn entry_index_follows_appends_and_changes() {
        let mut list = values(json!([{"k": "a"}, {"k": 1}, {"k": "b"}]));
        list.extend((0..SCAN_UP_TO).map(|i| json!({"k": format!("filler-{i}")})));
        let mut index = EntryIndex::new(&list, "k");
        let check = |list: &[Value], index: &EntryIndex| {
            for probe in probes() {
                assert_eq!(
                    format!("{:?}", index.find(list, &probe)),
                    format!("{:?}", find_by_key(list, "k", &probe)),
                    "list {list:?}, value {probe}"
                );
            }
        };
        list.push(json!({"k": "a"}));
        index.appended(&list);
        check(&list, &index);
        list[0] = json!({"k": "z"});
        index.changed(&list, 0, &json!("a"));
        check(&list, &index);
        list[1] = json!({"other": 1});
        index.changed(&list, 1, &json!(1));
        check(&list, &index);
        list[2] = json!({"k": [1]});
        index.changed(&list, 2, &json!("b"));
        check(&list, &index);
        list.push(json!({"k": {"a": 1}}));
        index.appended(&list);
        check(&list, &index);
    }

    #[test]
    fn positions_answer_as_the_scan_does() {
        let orders = [
            json!([{"k": "a"}, {"k": "b"}, {"k": "a"}, "plain", {"x": 1}]),
            json!([{"k": 1}, {"k": 1.0}, {"k": [1]}, {"k": 0}]),
            json!([{"k": {"a": 1}}, {"k": "b"}]),
            json!([]),
        ];
        for order in orders.into_iter().flat_map(variants) {
            let refs: Vec<&Value> = order.iter().collect();
            let positions = Positions::new(&refs, |v| v.as_object().and_then(|m| m.get("k")).map(GoKey::of));
            for probe in probes() {
                assert_eq!(
                    format!("{:?}", positions.of(&probe)),
                    format!("{:?}", index(&order, &probe, "k")),
                    "order {order:?}, key {probe}"
                );
            }
        }
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        /// Keys from a small pool, so that lists hold duplicates, near misses (`1`
        /// and `1.0`, `"1"`) and uncomparable keys.
        fn key() -> impl Strategy<Value = Value> {
            prop::sample::select(values(json!([null, true, 1, 1.0, -0.0, 0, "1", "a", "b", "c", "d", [], {}, [1]])))
        }

        /// A list entry: mostly objects with the key, some without it, a few non-objects.
        fn entry() -> impl Strategy<Value = Value> {
            prop_oneof![
                8 => key().prop_map(|k| json!({"k": k, "v": 1})),
                1 => Just(json!({"other": 1})),
                1 => key(),
            ]
        }

        proptest! {
            #[test]
            fn go_keys_compare_as_go_does(a in key(), b in key()) {
                let owned = OwnedKey::of(&a);
                prop_assert_eq!(owned.as_go_key(), GoKey::of(&a));
                let expected = format!("{:?}", go_spec_eq(&a, &b));
                prop_assert_eq!(format!("{:?}", go_eq(&a, &b)), expected.clone());
                prop_assert_eq!(format!("{:?}", GoKey::of(&a).equals(GoKey::of(&b))), expected.clone());
                prop_assert_eq!(format!("{:?}", owned.as_go_key().equals(GoKey::of(&b))), expected);
            }

            #[test]
            fn entry_index_equals_the_scan(list in prop::collection::vec(entry(), 0..30), probe in key()) {
                let index = EntryIndex::new(&list, "k");
                prop_assert_eq!(format!("{:?}", index.find(&list, &probe)), format!("{:?}", find_by_key(&list, "k", &probe)));
            }

            #[test]
            fn positions_equal_the_scan(order in prop::collection::vec(entry(), 0..30), probe in key()) {
                let refs: Vec<&Value> = order.iter().collect();
                let positions = Positions::new(&refs, |v| v.as_object().and_then(|m| m.get("k")).map(GoKey::of));
                prop_assert_eq!(format!("{:?}", positions.of(&probe)), format!("{:?}", index(&order, &probe, "k")));
            }
        }
    }
}
