//! From paths to the values they name: one path ([`value_at`]), or a whole set in one walk
//! ([`locate`], [`for_each_located`]), so a printer can mark the lines a manager owns.
//!
//! List-map entries are matched by their key values compared as JSON values (`80`
//! matches `80.0`), set members by value. Looking a set up path by path would scan a list
//! once per path under it, and a Deployment with 180 containers of 40 variables has a set
//! naming 7,000 list entries: the walk descends the object and the set's trie together,
//! and indexes a list's entries by key (see [`items`](super::items)) when the set names many.

use serde_json::Value;

use super::element::PathElement;
use super::items::Items;
use super::path::Path;
use super::set::Set;

/// The value a path names inside `value`, if it is there.
///
/// A list-map key matches the entry whose key fields equal it; when none does, an
/// entry that omits some key fields (defaulted by the server, like `protocol: TCP`)
/// and agrees on the others. A set member matches the first equal item.
pub fn value_at<'v>(value: &'v Value, path: &[PathElement]) -> Option<&'v Value> {
    let mut here = value;
    for pe in path {
        here = Items::scanned(here).find(pe)?;
    }
    Some(here)
}

/// Every path of `set` with the value it names in `value` (`None` where the object lacks it), in set order.
///
/// The result is the same as [`value_at`] of each of [`Set::paths`], found in one walk.
pub fn locate<'v>(value: &'v Value, set: &Set) -> Vec<(Path, Option<&'v Value>)> {
    let mut out = Vec::with_capacity(set.len());
    locate_under(Some(value), set, &mut Vec::new(), &mut out);
    out
}

/// [`locate`] below `prefix`, whose value is `value`.
fn locate_under<'v>(
    value: Option<&'v Value>,
    set: &Set,
    prefix: &mut Vec<PathElement>,
    out: &mut Vec<(Path, Option<&'v Value>)>,
) {
    let mut items = value.map(|v| Items::for_set(v, set));
    let mut find = |pe: &PathElement| items.as_mut().and_then(|items| items.find(pe));
    for member in set.members() {
        let mut path = Vec::with_capacity(prefix.len() + 1);
        path.extend_from_slice(prefix);
        path.push(member.clone());
        out.push((Path(path), find(member)));
    }
    for (pe, sub) in set.children() {
        let found = find(pe);
        prefix.push(pe.clone());
        locate_under(found, sub, prefix, out);
        prefix.pop();
    }
}

/// Calls `found` with the value of every path of `set` that `value` holds, in set order.
///
/// This is [`locate`] without building the paths, for callers that only need the values
/// (an index of owners by value).
///
/// ```
/// use fieldwise_core::fieldpath::{for_each_located, Set};
/// use serde_json::json;
///
/// let object = json!({"spec": {"replicas": 2, "ports": [{"port": 80, "protocol": "TCP"}]}});
/// let owned = Set::from_fields_v1(&json!({"f:spec": {"f:replicas": {}, "f:paused": {},
///     "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {"f:port": {}}}}})).unwrap();
/// let mut values = Vec::new();
/// for_each_located(&object, &owned, |v| values.push(v.clone()));
/// assert_eq!(values, [json!(2), json!(80)]);
/// ```
pub fn for_each_located<'v>(value: &'v Value, set: &Set, mut found: impl FnMut(&'v Value)) {
    visit(value, set, &mut found);
}

fn visit<'v>(value: &'v Value, set: &Set, found: &mut impl FnMut(&'v Value)) {
    let mut items = Items::for_set(value, set);
    for member in set.members() {
        if let Some(v) = items.find(member) {
            found(v);
        }
    }
    for (pe, sub) in set.children() {
        if let Some(v) = items.find(pe) {
            visit(v, sub, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The definition: every path of the set, looked up one by one.
    fn located_path_by_path<'v>(value: &'v Value, set: &Set) -> Vec<(Path, Option<&'v Value>)> {
        set.paths()
            .into_iter()
            .map(|p| {
                let found = value_at(value, p.elements());
                (p, found)
            })
            .collect()
    }

    /// `locate` and `for_each_located` agree with the definition, value for value (by address).
    fn assert_walks_agree(value: &Value, set: &Set) {
        let expected = located_path_by_path(value, set);
        let walked = locate(value, set);
        assert_eq!(walked.len(), expected.len());
        for ((p, a), (q, b)) in walked.iter().zip(&expected) {
            assert_eq!(p, q);
            assert_eq!(a.map(|v| v as *const Value), b.map(|v| v as *const Value), "at {p}");
        }
        let mut found = Vec::new();
        for_each_located(value, set, |v| found.push(v as *const Value));
        let present: Vec<*const Value> = expected.iter().filter_map(|(_, v)| v.map(|v| v as *const Value)).collect();
        assert_eq!(found, present);
    }

    fn fields_v1(doc: Value) -> Set {
        Set::from_fields_v1(&doc).unwrap()
    }

    #[test]
    fn locates_values_by_key_values() {
        let obj = json!({"spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}, {"port": 443}]}});
        let k = PathElement::key([("port", Value::from(80.0)), ("protocol", json!("TCP"))]);
        let p = Path::fields(["spec", "ports"]).child(k).child(PathElement::field("targetPort"));
        assert_eq!(value_at(&obj, p.elements()), Some(&json!(8080)));
        let k443 = PathElement::key([("port", json!(443)), ("protocol", json!("TCP"))]);
        assert_eq!(value_at(&obj, Path::fields(["spec", "ports"]).child(k443).elements()), Some(&json!({"port": 443})));
        let set: Set = [p.clone(), Path::fields(["nope"])].into_iter().collect();
        let found = locate(&obj, &set);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].1, None);
        assert_eq!(found[1].1, Some(&json!(8080)));
        assert_walks_agree(&obj, &set);
    }

    /// A list long enough to be indexed, with every kind of element the set can name.
    fn many_items() -> (Value, Set) {
        let mut ports = Vec::new();
        let mut keys = serde_json::Map::new();
        for i in 0..40 {
            // Every fifth entry omits its protocol, as objects do when the server defaults it.
            let port = if i % 5 == 0 { json!({"port": i}) } else { json!({"port": i, "protocol": "TCP", "n": i}) };
            ports.push(port);
            keys.insert(format!("k:{{\"port\":{i},\"protocol\":\"TCP\"}}"), json!({".": {}, "f:n": {}}));
        }
        // Multi-key entries matched as JSON values (80.0 is 80), duplicates (the first wins),
        // an entry that is not there, and an UDP twin that only matches exactly.
        ports.push(json!({"port": 7, "protocol": "TCP", "n": "duplicate"}));
        ports.push(json!({"port": 5, "protocol": "UDP", "n": "udp"}));
        ports.push(json!("not an object"));
        keys.insert("k:{\"port\":5.0,\"protocol\":\"UDP\"}".into(), json!({"f:n": {}}));
        keys.insert("k:{\"port\":999,\"protocol\":\"TCP\"}".into(), json!({"f:n": {}}));
        keys.insert("k:{\"port\":3}".into(), json!({".": {}}));
        keys.insert("k:{}".into(), json!({".": {}}));
        let mut members = serde_json::Map::new();
        let mut finalizers = Vec::new();
        for i in 0..30 {
            finalizers.push(json!(format!("f{i}")));
            members.insert(format!("v:\"f{i}\""), json!({}));
        }
        finalizers.extend([json!(1), json!({"b": 2, "a": [1]}), json!(null), json!("f3")]);
        members.insert("v:1.0".into(), json!({}));
        members.insert("v:{\"a\":[1.0],\"b\":2}".into(), json!({}));
        members.insert("v:null".into(), json!({}));
        members.insert("v:\"missing\"".into(), json!({}));
        members.insert("i:2".into(), json!({}));
        members.insert("i:-1".into(), json!({}));
        members.insert("i:99".into(), json!({}));
        let object = json!({"spec": {"ports": ports, "finalizers": finalizers, "replicas": 3}});
        let set = fields_v1(json!({"f:spec": {"f:ports": keys, "f:finalizers": members, "f:replicas": {},
            "f:absent": {"f:x": {}}}}));
        (object, set)
    }

    #[test]
    fn walking_an_indexed_list_agrees_with_path_by_path_lookup() {
        let (object, set) = many_items();
        assert_walks_agree(&object, &set);
        let found = locate(&object, &set);
        let at = |path: &str| found.iter().find(|(p, _)| p.to_string() == path).and_then(|(_, v)| *v);
        assert_eq!(at(r#".spec.ports[port=7,protocol="TCP"].n"#), Some(&json!(7)));
        assert_eq!(at(r#".spec.ports[port=5,protocol="UDP"].n"#), Some(&json!("udp")));
        assert_eq!(at(r#".spec.ports[port=0,protocol="TCP"]"#), Some(&json!({"port": 0})));
        assert_eq!(at(r#".spec.ports[port=999,protocol="TCP"].n"#), None);
        assert_eq!(at(".spec.finalizers[=1]"), Some(&json!(1)));
        assert_eq!(at(".spec.finalizers[2]"), Some(&json!("f2")));
        // The first of equal members, as a scan finds it.
        let first = &object["spec"]["finalizers"][3];
        assert!(at(r#".spec.finalizers[="f3"]"#).is_some_and(|v| std::ptr::eq(v, first)));
        let first = &object["spec"]["ports"][7];
        assert!(at(r#".spec.ports[port=7,protocol="TCP"]"#).is_some_and(|v| std::ptr::eq(v, first)));
    }

    #[test]
    fn walking_a_generated_object_agrees_with_path_by_path_lookup() {
        // Containers keyed by name, each with variables keyed by name and ports keyed by
        // port and protocol, some of them defaulted; the set is the whole object's, plus paths
        // to entries the object lacks.
        let mut containers = Vec::new();
        let mut owned = serde_json::Map::new();
        for c in 0..24 {
            let name = format!("c{c:02}");
            let env: Vec<Value> =
                (0..12).map(|e| json!({"name": format!("V{e}"), "value": format!("{c}-{e}")})).collect();
            let mut env_set = serde_json::Map::new();
            for e in 0..14 {
                env_set.insert(format!("k:{{\"name\":\"V{e}\"}}"), json!({".": {}, "f:name": {}, "f:value": {}}));
            }
            let ports = json!([{"containerPort": 80 + c}, {"containerPort": 80 + c, "protocol": "UDP"}]);
            let mut port_set = serde_json::Map::new();
            for protocol in ["TCP", "UDP"] {
                port_set.insert(
                    format!("k:{{\"containerPort\":{},\"protocol\":\"{protocol}\"}}", 80 + c),
                    json!({".": {}}),
                );
            }
            containers.push(json!({"name": name, "image": "x", "env": env, "ports": ports}));
            owned.insert(
                format!("k:{{\"name\":\"{name}\"}}"),
                json!({".": {}, "f:image": {}, "f:env": env_set, "f:ports": port_set}),
            );
        }
        owned.insert("k:{\"name\":\"gone\"}".into(), json!({"f:image": {}}));
        let object = json!({"spec": {"template": {"spec": {"containers": containers}}}});
        let set = fields_v1(json!({"f:spec": {"f:template": {"f:spec": {"f:containers": owned}}}}));
        assert_walks_agree(&object, &set);
        assert_eq!(locate(&object, &set).iter().filter(|(_, v)| v.is_none()).count(), 2 * 24 * 3 + 1);
    }

    mod random {
        use super::*;
        use proptest::prelude::*;

        /// Key values drawn from a few, so that entries collide, omit keys, and match as numbers.
        fn key_value() -> impl Strategy<Value = Value> {
            prop_oneof![
                (0i64..3).prop_map(Value::from),
                (0u32..3).prop_map(|n| Value::from(f64::from(n))),
                Just(json!("x"))
            ]
        }

        fn item() -> impl Strategy<Value = Value> {
            prop_oneof![
                4 => (proptest::option::of(key_value()), proptest::option::of(key_value()), 0i64..100).prop_map(
                    |(a, b, n)| {
                        let mut map = serde_json::Map::new();
                        map.extend(a.map(|a| ("a".to_string(), a)));
                        map.extend(b.map(|b| ("b".to_string(), b)));
                        map.insert("n".into(), json!(n));
                        Value::Object(map)
                    }
                ),
                1 => key_value(),
                1 => Just(json!(null)),
            ]
        }

        /// Elements naming list items, each maybe with a field under it.
        fn named() -> impl Strategy<Value = Vec<PathElement>> {
            let element = prop_oneof![
                3 => (key_value(), key_value()).prop_map(|(a, b)| PathElement::key([("a", a), ("b", b)])),
                2 => key_value().prop_map(|a| PathElement::key([("a", a)])),
                1 => Just(PathElement::key(Vec::<(String, Value)>::new())),
                2 => key_value().prop_map(PathElement::Value),
                1 => (0i64..25).prop_map(PathElement::Index),
            ];
            (element, proptest::option::of(prop_oneof![Just("n"), Just("a"), Just("zz")]))
                .prop_map(|(pe, field)| [pe].into_iter().chain(field.map(PathElement::field)).collect())
        }

        proptest! {
            #[test]
            fn walks_agree_with_path_by_path_lookup(
                items in proptest::collection::vec(item(), 0..24),
                paths in proptest::collection::vec(named(), 0..30),
            ) {
                let object = json!({"list": items});
                let set: Set = paths
                    .into_iter()
                    .map(|rest| Path([PathElement::field("list")].into_iter().chain(rest).collect()))
                    .collect();
                assert_walks_agree(&object, &set);
            }
        }
    }
}
