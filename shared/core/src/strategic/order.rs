//! List ordering exactly as upstream computes it.
//!
//! A merged list's order comes from three sources, in precedence order: the
//! `$setElementOrder` list, the order in the patch, and the order in the live
//! object (`normalizeElementOrder`, `mergeSortedSlice`). Upstream sorts with
//! comparators that are not strict orders (an item missing from the order list
//! compares "less" than everything), so the result depends on the exact sort
//! algorithm: [`stable_sort`] reproduces Go's `sort.SliceStable`
//! (insertion-sorted blocks of 20, then `symMerge`), and [`sort_by_text`]
//! reproduces `sort.Sort` with the `<=` comparator for up to 12 items (Go's
//! insertion-sort range), which is where ties are common.

use std::cell::RefCell;

use serde_json::Value;

use super::errors::ErrorKind;
use super::go_types;
use super::key_index::{GoKey, OwnedKey, Positions};
use crate::go_format::fmt as go_fmt;
use crate::object::field as object_field;

/// The key an element is ordered and matched by: its merge key value, or itself.
pub(crate) fn element_key<'v>(item: &'v Value, merge_key: &str, is_map: bool) -> Option<&'v Value> {
    if is_map {
        object_field::get_in(item, merge_key)
    } else {
        Some(item)
    }
}

/// One entry of a live order: what the ordering of a merged list needs to keep of
/// an element of the live list after the merge has taken the element itself.
///
/// Upstream reads the live elements themselves. Ordering only asks each one for
/// its merge key, and whether it is an object that has one, so a keyed element
/// is kept as its key's value alone: one value per entry, where a copy of the
/// element (or a one-field object) would cost ten times the memory on a list of
/// 10,000 entries.
#[derive(Debug, Clone)]
pub(crate) enum OrderEntry {
    /// The merge-key value of an object element that has the merge key, as Go's `==` sees it.
    Key(OwnedKey),
    /// Any other element (a scalar, an object without the key), whole, for the
    /// checks and messages that read it.
    Element(Box<Value>),
}

impl OrderEntry {
    /// The entry for `item` of a list merged by `merge_key` (empty: by value).
    pub(crate) fn of(item: &Value, merge_key: &str) -> Self {
        match object_field::get_in(item, merge_key) {
            Some(key) if !merge_key.is_empty() => OrderEntry::Key(OwnedKey::of(key)),
            _ => OrderEntry::Element(Box::new(item.clone())),
        }
    }
}

/// An entry of an order list: an element (`&Value`, for the patch's and
/// `$setElementOrder`'s lists) or an [`OrderEntry`] (for the live order).
pub(crate) trait OrderItem {
    /// The element, or `None` for an object known only by its merge key.
    fn element(&self) -> Option<&Value>;
    /// What Go's `==` sees of what [`element_key`] answers for the element.
    fn key(&self, merge_key: &str, is_map: bool) -> Option<GoKey<'_>>;
}

impl OrderItem for &Value {
    fn element(&self) -> Option<&Value> {
        Some(self)
    }
    fn key(&self, merge_key: &str, is_map: bool) -> Option<GoKey<'_>> {
        element_key(self, merge_key, is_map).map(GoKey::of)
    }
}

impl OrderItem for OrderEntry {
    fn element(&self) -> Option<&Value> {
        match self {
            OrderEntry::Key(_) => None,
            OrderEntry::Element(item) => Some(item),
        }
    }
    /// A `Key` entry only stands in a list of objects (its list's elements have one
    /// Go type), where the key is what the element answers.
    fn key(&self, merge_key: &str, is_map: bool) -> Option<GoKey<'_>> {
        match self {
            OrderEntry::Key(key) => Some(key.as_go_key()),
            OrderEntry::Element(item) => element_key(item, merge_key, is_map).map(GoKey::of),
        }
    }
}

/// `index` of `normalizeElementOrder` for every item: the position of the first
/// element of `order` whose key equals an item's key by Go's `==` (a missing key
/// is `nil`); -1 when none does.
fn positions<'v, T: OrderItem>(order: &'v [T], merge_key: &str, is_map: bool) -> Positions<'v> {
    Positions::new(order, |candidate| candidate.key(merge_key, is_map))
}

fn position_of(positions: &Positions<'_>, item: &Value, merge_key: &str, is_map: bool) -> Result<isize, ErrorKind> {
    positions.of(element_key(item, merge_key, is_map).unwrap_or(&Value::Null))
}

/// `validateMergeKeyInLists` for one list.
pub(crate) fn validate_merge_keys<'v>(
    list: impl IntoIterator<Item = &'v Value>,
    merge_key: &str,
) -> Result<(), ErrorKind> {
    for item in list {
        let Some(map) = item.as_object() else {
            return Err(ErrorKind::BadArgType {
                expected: "map[string]interface {}",
                actual: go_types::type_name(item),
            });
        };
        if object_field::get(map, merge_key).is_none() {
            return Err(ErrorKind::NoMergeKey { map: go_fmt::v(item), key: merge_key.to_string() });
        }
    }
    Ok(())
}

/// `normalizeElementOrder`: sorts `patch` by `patch_order` and `server_only` by
/// `server_order`, then interleaves them by `server_order`.
pub(crate) fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[&Value],
    server_order: &[impl OrderItem],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, ErrorKind> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    // The server order is indexed once, for the sort and for the merge.
    let (server_only, server_positions) = normalize_slice_order_by(server_only, server_order, merge_key, is_map)?;
    merge_sorted(server_only, patch, &server_positions, merge_key, is_map)
}

/// `normalizeSliceOrder`: a stable sort of `to_sort` by position in `order`, with
/// `$patch: delete` elements moved to the end.
pub(crate) fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[impl OrderItem],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, ErrorKind> {
    normalize_slice_order_by(to_sort, order, merge_key, is_map).map(|(sorted, _)| sorted)
}

/// [`normalize_slice_order`], also answering the positions of `order` it built.
fn normalize_slice_order_by<'o>(
    to_sort: Vec<Value>,
    order: &'o [impl OrderItem],
    merge_key: &str,
    is_map: bool,
) -> Result<(Vec<Value>, Positions<'o>), ErrorKind> {
    let mut to_delete = Vec::new();
    let mut to_sort = to_sort;
    if is_map {
        validate_merge_keys(&to_sort, merge_key)?;
        validate_merge_keys(order.iter().filter_map(OrderItem::element), merge_key)?;
        to_delete = take_where(&mut to_sort, super::directives::is_delete_element);
    }
    // A lookup that would panic in Go fails the sort only if the sort asks for
    // it, as upstream's comparator looks positions up lazily.
    let order = positions(order, merge_key, is_map);
    let mut failed = FailedLookups::default();
    let found: Vec<isize> = to_sort.iter().map(|v| failed.encode(position_of(&order, v, merge_key, is_map))).collect();
    let failure = RefCell::new(None);
    let position = |at: usize| match failed.decode(found[at]) {
        Ok(i) => Some(i),
        Err(e) => {
            failure.borrow_mut().get_or_insert(e);
            None
        }
    };
    // Sorting indices makes the same comparisons and moves as sorting the elements.
    let mut sorted: Vec<usize> = (0..to_sort.len()).collect();
    stable_sort(&mut sorted, |&a, &b| match position(a) {
        Some(ia) if ia >= 0 => match position(b) {
            Some(ib) if ib >= 0 => ia < ib,
            Some(_) => true,
            None => false,
        },
        Some(_) => true,
        None => false,
    });
    if let Some(e) = failure.into_inner() {
        return Err(e);
    }
    permute(&mut to_sort, sorted);
    to_sort.extend(to_delete);
    Ok((to_sort, order))
}

/// Moves the elements `take` picks (asked once each, in order) out of `list`, in
/// their order; the others stay in `list`'s own buffer, in theirs. A live list can be
/// long and what is taken out of it short.
pub(crate) fn take_where(list: &mut Vec<Value>, mut take: impl FnMut(&Value) -> bool) -> Vec<Value> {
    let mut taken = Vec::new();
    list.retain_mut(|item| {
        let picked = take(item);
        if picked {
            taken.push(std::mem::take(item));
        }
        !picked
    });
    taken
}

/// Reorders `items` in place so that `items[k]` is the old `items[order[k]]`
/// (`order` is a permutation), following each cycle once.
fn permute(items: &mut [Value], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..items.len() {
        if order[start] == DONE {
            continue;
        }
        let held = std::mem::take(&mut items[start]);
        let mut at = start;
        loop {
            let from = std::mem::replace(&mut order[at], DONE);
            if from == start {
                items[at] = held;
                break;
            }
            items[at] = std::mem::take(&mut items[from]);
            at = from;
        }
    }
}

/// Positions looked up ahead of a sort, one `isize` each: a position (-1 and up)
/// or, below -1, the index of a failed lookup's error, kept aside until the sort
/// reads it. (A `Result` per element would be seven times the size on long lists.)
#[derive(Default)]
struct FailedLookups(Vec<ErrorKind>);

impl FailedLookups {
    fn encode(&mut self, position: Result<isize, ErrorKind>) -> isize {
        match position {
            Ok(p) => p,
            Err(e) => {
                self.0.push(e);
                -1 - self.0.len() as isize
            }
        }
    }

    fn decode(&self, encoded: isize) -> Result<isize, ErrorKind> {
        if encoded >= -1 {
            Ok(encoded)
        } else {
            Err(self.0[(-2 - encoded) as usize].clone())
        }
    }
}

/// `mergeSortedSlice`: interleaves two sorted lists, taking from `left` only when
/// both heads are in `server_order` and `left`'s comes first.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &Positions<'_>,
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>, ErrorKind> {
    let mut failed = FailedLookups::default();
    let mut position = |v: &Value| failed.encode(position_of(server_order, v, merge_key, is_map));
    let left_pos: Vec<isize> = left.iter().map(&mut position).collect();
    let right_pos: Vec<isize> = right.iter().map(&mut position).collect();
    let (left_len, right_len) = (left_pos.len(), right_pos.len());
    // Which list each place of the result takes from: it depends on positions only.
    let mut from_left = Vec::with_capacity(left_len + right_len);
    let (mut i, mut j) = (0, 0);
    for _ in 0..left_len + right_len {
        let take_left = if i >= left_len {
            false
        } else if j >= right_len {
            true
        } else {
            let (l, r) = (failed.decode(left_pos[i])?, failed.decode(right_pos[j])?);
            l >= 0 && r >= 0 && l < r
        };
        if take_left {
            i += 1;
        } else {
            j += 1;
        }
        from_left.push(take_left);
    }
    Ok(interleave(left, right, &from_left))
}

/// The result of merging `left` and `right` as `from_left` says, filled from the
/// back in `left`'s own buffer: the live list can be long, the patch list short.
fn interleave(left: Vec<Value>, mut right: Vec<Value>, from_left: &[bool]) -> Vec<Value> {
    let mut out = left;
    let (mut i, mut j) = (out.len(), right.len());
    out.resize_with(from_left.len(), Value::default);
    for (k, &take_left) in from_left.iter().enumerate().rev() {
        if take_left {
            // Unread elements of `left` are all before `i - 1 <= k`.
            i -= 1;
            out.swap(k, i);
        } else {
            j -= 1;
            out[k] = std::mem::take(&mut right[j]);
        }
    }
    out
}

/// Go's `sort.SliceStable` with an arbitrary (possibly inconsistent) `less`.
pub(crate) fn stable_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &less);
    while block < n {
        a = 0;
        b = 2 * block;
        while b <= n {
            sym_merge(data, a, a + block, b, &less);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(data, a, m, n, &less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(data: &mut [T], a: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1]) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(data: &mut [T], a: usize, m: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        data[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

/// Go's `sort.Sort` of items by their `%v` text with the comparator `a <= b`.
///
/// Exact for up to 12 items (Go's insertion sort, which puts later equal items
/// first); for longer lists equal texts are ordered the same way, which matches
/// Go whenever the texts are distinct.
pub(crate) fn sort_by_text<T, S: Ord>(items: Vec<T>, text: impl Fn(&T) -> S) -> Vec<T> {
    sort_by_text_keeping(items, text).into_iter().map(|(_, item)| item).collect()
}

/// [`sort_by_text`], keeping each item's text.
pub(crate) fn sort_by_text_keeping<T, S: Ord>(items: Vec<T>, text: impl Fn(&T) -> S) -> Vec<(S, T)> {
    let mut keyed: Vec<(S, T)> = items.into_iter().map(|item| (text(&item), item)).collect();
    if keyed.len() <= 12 {
        let n = keyed.len();
        insertion_sort(&mut keyed, 0, n, &|a: &(S, T), b: &(S, T)| a.0 <= b.0);
    } else {
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len() && keyed[end].0 == keyed[start].0 {
                end += 1;
            }
            keyed[start..end].reverse();
            start = end;
        }
    }
    keyed
}

/// `sortScalars`.
pub(crate) fn sort_scalars(items: Vec<Value>) -> Vec<Value> {
    sort_by_text(items, go_fmt::v)
}

/// `deduplicateScalars`: removes later duplicates by moving the last element into
/// their place (so the order changes, as upstream's does).
pub(crate) fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let len = deduplicate_in_place(&mut s);
    s.truncate(len);
    s
}

/// `deduplicateScalars` on a backing array: returns the new length and leaves
/// the slots past it as Go leaves them (upstream may read them through
/// another slice header).
pub(crate) fn deduplicate_in_place(s: &mut [Value]) -> usize {
    if s.is_empty() {
        return 0;
    }
    let mut length = s.len() - 1;
    let mut i = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if s[i] == s[j] {
                s[j] = s[length].clone();
                length -= 1;
                // Re-examine position j, which now holds the former last element.
                continue;
            }
            j += 1;
        }
        i += 1;
    }
    length + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vals(v: Value) -> Vec<Value> {
        match v {
            Value::Array(items) => items,
            _ => Vec::new(),
        }
    }

    #[test]
    fn deduplicates_like_upstream() {
        assert_eq!(deduplicate_scalars(vals(json!(["a", "b", "a", "c"]))), vals(json!(["a", "b", "c"])));
        assert_eq!(deduplicate_scalars(vals(json!(["a", "a", "b", "c"]))), vals(json!(["a", "c", "b"])));
        assert_eq!(deduplicate_scalars(vals(json!([1, 1, 1]))), vals(json!([1])));
    }

    #[test]
    fn sorts_scalars_by_text() {
        assert_eq!(sort_scalars(vals(json!(["b", 10, "a", 9]))), vals(json!([10, 9, "a", "b"])));
    }

    #[test]
    fn normalizes_by_patch_then_server_order() {
        let patch = vals(json!([{"name": "b"}, {"name": "a"}]));
        let server_only = vals(json!([{"name": "c"}]));
        let patch_order = vals(json!([{"name": "a"}, {"name": "b"}]));
        let server_order = vals(json!([{"name": "a"}, {"name": "c"}, {"name": "b"}]));
        let patch_order: Vec<&Value> = patch_order.iter().collect();
        let server_order: Vec<&Value> = server_order.iter().collect();
        let out = normalize_element_order(patch, server_only, &patch_order, &server_order, "name", true).expect("ok");
        assert_eq!(out, vals(json!([{"name": "a"}, {"name": "c"}, {"name": "b"}])));
    }

    #[test]
    fn take_where_keeps_both_orders() {
        let mut list = vals(json!([1, "a", 2, "b", 3]));
        let taken = take_where(&mut list, Value::is_string);
        assert_eq!((list, taken), (vals(json!([1, 2, 3])), vals(json!(["a", "b"]))));
        let mut none = vals(json!([1, 2]));
        assert_eq!(take_where(&mut none, Value::is_string), Vec::<Value>::new());
        assert_eq!(none, vals(json!([1, 2])));
    }

    proptest::proptest! {
        #[test]
        fn permute_moves_each_element_to_its_place(keys in proptest::collection::vec(0u8..20, 0..40)) {
            let items: Vec<Value> = (0..keys.len()).map(|i| json!(i)).collect();
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.sort_by_key(|&i| keys[i]);
            let expected: Vec<Value> = order.iter().map(|&i| items[i].clone()).collect();
            let mut moved = items;
            permute(&mut moved, order);
            proptest::prop_assert_eq!(moved, expected);
        }

        #[test]
        fn interleave_keeps_each_list_in_order(left_len in 0usize..30, picks in proptest::collection::vec(proptest::bool::ANY, 0..60)) {
            let right_len = picks.iter().filter(|&&left| !left).count();
            let taken_left = picks.len() - right_len;
            let left: Vec<Value> = (0..taken_left.min(left_len)).map(|i| json!(format!("l{i}"))).collect();
            // Places beyond what `left` holds take from `right`.
            let mut from_left = Vec::new();
            let mut remaining_left = left.len();
            for &pick in &picks {
                let take = pick && remaining_left > 0;
                remaining_left -= usize::from(take);
                from_left.push(take);
            }
            from_left.extend(std::iter::repeat_n(true, remaining_left));
            let right: Vec<Value> = (0..from_left.iter().filter(|&&l| !l).count()).map(|i| json!(i)).collect();
            let (mut l, mut r) = (left.clone().into_iter(), right.clone().into_iter());
            let expected: Vec<Value> =
                from_left.iter().map(|&take| if take { l.next() } else { r.next() }.unwrap()).collect();
            proptest::prop_assert_eq!(interleave(left, right, &from_left), expected);
        }
    }

    #[test]
    fn stable_sort_matches_a_real_sort_for_consistent_comparators() {
        let mut data: Vec<u32> = (0..100).map(|i| (i * 37) % 101).collect();
        stable_sort(&mut data, |a, b| a < b);
        let mut expected = data.clone();
        expected.sort();
        assert_eq!(data, expected);
    }
}
