//! Reading one field of a decoded JSON object, fast for the small objects that
//! fill Kubernetes lists.
//!
//! `serde_json::Map::get` hashes the key with SipHash before probing, which costs
//! more than comparing the key with every field of an object of a few fields (an
//! env entry, a port, a volume mount). The patch engines read a merge key from
//! every entry of every list they merge, so they read fields through [`get`].
//! In a larger object (a container) the merge key is usually among the first
//! fields, so the first fields are compared before the key is hashed.

use serde_json::{Map, Value};

use crate::str_eq::equal as same;

/// The first this many fields are compared with the key before it is hashed.
const SCAN_UP_TO: usize = 8;

/// The value of `key` in `map`, as `map.get(key)`.
pub(crate) fn get<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    let found = map.iter().take(SCAN_UP_TO).find_map(|(k, v)| same(k, key).then_some(v));
    if found.is_some() || map.len() <= SCAN_UP_TO {
        found
    } else {
        map.get(key)
    }
}

/// The value of `key` in `map`, as `map.get_mut(key)`.
pub(crate) fn get_mut<'m>(map: &'m mut Map<String, Value>, key: &str) -> Option<&'m mut Value> {
    match map.iter().take(SCAN_UP_TO).position(|(k, _)| same(k, key)) {
        Some(at) => map.iter_mut().nth(at).map(|(_, v)| v),
        None if map.len() <= SCAN_UP_TO => None,
        None => map.get_mut(key),
    }
}

/// Whether `map` has field `key`, as `map.contains_key(key)`.
pub(crate) fn contains(map: &Map<String, Value>, key: &str) -> bool {
    get(map, key).is_some()
}

/// Reads fields of one object by key, expecting them in the object's own order.
///
/// Walking two objects that hold the same fields (a patch's original and modified
/// object, the live object and the applied one) usually finds each field right
/// after the previous one: one comparison instead of a scan or a hash.
pub(crate) struct InOrder<'m> {
    map: &'m Map<String, Value>,
    next: serde_json::map::Iter<'m>,
}

impl<'m> InOrder<'m> {
    pub(crate) fn new(map: &'m Map<String, Value>) -> Self {
        InOrder { map, next: map.iter() }
    }

    /// The value of `key`, as `map.get(key)`.
    pub(crate) fn get(&mut self, key: &str) -> Option<&'m Value> {
        let mut ahead = self.next.clone();
        match ahead.next() {
            Some((k, v)) if same(k, key) => {
                self.next = ahead;
                Some(v)
            }
            _ => get(self.map, key),
        }
    }
}

/// The value of `key` in `value` if it is an object, as `value.get(key)`.
pub(crate) fn get_in<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    get(value.as_object()?, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn agrees_with_map_get_for_small_and_large_objects() {
        let small = json!({"name": "a", "value": "b"});
        let large: Map<String, Value> = (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
        let large = Value::Object(large);
        for (object, keys) in [(&small, ["name", "value", "other"]), (&large, ["k0", "k19", "k20"])] {
            for key in keys {
                assert_eq!(get_in(object, key), object.get(key), "{key}");
            }
        }
        assert_eq!(get_in(&json!([1]), "name"), None);
        for mut object in [small.clone(), large.clone()] {
            let map = object.as_object_mut().unwrap();
            for key in ["name", "value", "other", "k0", "k19", "k20"] {
                assert_eq!(contains(map, key), map.contains_key(key), "{key}");
                let expected = map.get(key).cloned();
                assert_eq!(get_mut(map, key).map(|v| v.clone()), expected, "{key}");
            }
        }
        for object in [&small, &large] {
            let map = object.as_object().unwrap();
            let keys = ["name", "value", "other", "k0", "k1", "k19", "k20", "k2", "k3", "value", "k3", "k4"];
            let mut in_order = InOrder::new(map);
            for key in keys {
                assert_eq!(in_order.get(key), map.get(key), "{key}");
            }
        }
    }
}
