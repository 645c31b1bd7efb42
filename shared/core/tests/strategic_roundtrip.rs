//! Property: applying the two-way patch from `a` to `b` onto `a` gives `b`, for
//! generated Pods and Deployments under the built-in schema.
//!
//! Upstream guarantees this when lists keyed by a merge key have unique keys,
//! primitive sets have no duplicates and objects hold no `null`s (a `null`
//! cannot survive a patch, duplicates are de-duplicated); the generators stay
//! within those bounds.
//!
//! One more exception is upstream's own: a primitive list with strategy
//! `merge` (e.g. `metadata.finalizers`) is compared against the *sorted*
//! original, so turning `[d, c]` into `[c, d]` yields an empty patch and the
//! order change is lost. The generators keep such lists sorted.

use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_core::strategic;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d", "e"]).prop_map(str::to_string)
}

fn labels() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(name(), prop::sample::select(vec!["1", "2"]), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k, Value::from(v))).collect::<Map<_, _>>()))
}

fn unique_names() -> impl Strategy<Value = Vec<String>> {
    prop::collection::btree_set(name(), 0..4)
        .prop_flat_map(|set| Just(set.into_iter().collect::<Vec<_>>()).prop_shuffle())
}

fn container() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["img:1", "img:2"]),
        unique_names(),
        prop::collection::btree_set(prop::sample::select(vec![80u16, 443, 8080]), 0..3),
        prop::option::of(prop::collection::vec(prop::sample::select(vec!["x", "y"]), 0..3)),
    )
        .prop_map(|(image, env, ports, args)| {
            let mut c = json!({"image": image});
            if !env.is_empty() {
                c["env"] = env.into_iter().map(|n| json!({"name": n, "value": "v"})).collect();
            }
            if !ports.is_empty() {
                c["ports"] = ports.into_iter().map(|p| json!({"containerPort": p})).collect();
            }
            if let Some(args) = args {
                c["args"] = json!(args);
            }
            c
        })
}

fn pod_spec() -> impl Strategy<Value = Value> {
    (unique_names(), prop::collection::vec(container(), 4), unique_names(), prop::option::of(labels())).prop_map(
        |(names, containers, volumes, selector)| {
            let containers: Vec<Value> = names
                .into_iter()
                .zip(containers)
                .map(|(n, mut c)| {
                    c["name"] = json!(n);
                    c
                })
                .collect();
            let mut spec = json!({"containers": containers});
            if !volumes.is_empty() {
                spec["volumes"] = volumes.into_iter().map(|n| json!({"name": n, "emptyDir": {}})).collect();
            }
            if let Some(selector) = selector {
                spec["nodeSelector"] = selector;
            }
            spec
        },
    )
}

fn metadata() -> impl Strategy<Value = Value> {
    let sorted_names = prop::collection::btree_set(name(), 0..4);
    (labels(), labels(), sorted_names).prop_map(|(l, a, finalizers)| {
        let mut m = json!({"name": "x", "labels": l, "annotations": a});
        if !finalizers.is_empty() {
            m["finalizers"] = json!(finalizers);
        }
        m
    })
}

fn pod() -> impl Strategy<Value = Value> {
    (metadata(), pod_spec()).prop_map(|(m, s)| json!({"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": s}))
}

fn deployment() -> impl Strategy<Value = Value> {
    (metadata(), pod_spec(), 0..3u8, prop::option::of(prop::bool::ANY)).prop_map(|(m, s, replicas, recreate)| {
        let mut spec = json!({"replicas": replicas, "template": {"metadata": {"labels": {"app": "x"}}, "spec": s}});
        match recreate {
            Some(true) => spec["strategy"] = json!({"type": "Recreate"}),
            Some(false) => spec["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}),
            None => {}
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": m, "spec": spec})
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn pods_round_trip(a in pod(), b in pod()) {
        let ty = builtin().root(&Gvk::new("", "v1", "Pod")).expect("Pod");
        let patch = strategic::create_two_way(&a, &b, builtin(), ty).expect("creates");
        let applied = strategic::apply(&a, &patch, builtin(), ty).expect("applies");
        prop_assert_eq!(applied, b);
    }

    #[test]
    fn deployments_round_trip(a in deployment(), b in deployment()) {
        let ty = builtin().root(&Gvk::new("apps", "v1", "Deployment")).expect("Deployment");
        let patch = strategic::create_two_way(&a, &b, builtin(), ty).expect("creates");
        let applied = strategic::apply(&a, &patch, builtin(), ty).expect("applies");
        prop_assert_eq!(applied, b);
    }

    #[test]
    fn three_way_with_unchanged_live_object_reaches_modified(a in deployment(), b in deployment()) {
        let ty = builtin().root(&Gvk::new("apps", "v1", "Deployment")).expect("Deployment");
        let patch = strategic::create_three_way(&a, &b, &a, builtin(), ty, true).expect("creates");
        let applied = strategic::apply(&a, &patch, builtin(), ty).expect("applies");
        prop_assert_eq!(applied, b);
    }
}
