//! The annotation text exactly as kubectl writes it.
//!
//! kubectl's `util.GetModifiedConfiguration` takes the object read from the file
//! (namespace already set by the resource builder when the type is namespaced),
//! removes the annotation itself from `metadata.annotations` (leaving an empty map
//! when it was the only one, or when there were none), and encodes it with
//! `unstructured.UnstructuredJSONScheme`: Go's `encoding/json` encoder, so map keys
//! sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped, floats in Go's shortest form,
//! and a trailing newline.

use serde_json::{Map, Value};

use super::LAST_APPLIED_ANNOTATION;
use crate::go_format;

/// The annotation `kubectl apply` stores for `config`, with `metadata.namespace` set to
/// `namespace` when given (pass the namespace for namespaced types, `None` otherwise).
pub fn encode(config: &Value, namespace: Option<&str>) -> String {
    let mut copy = config.clone();
    if let Value::Object(root) = &mut copy {
        let meta = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            if let Some(ns) = namespace {
                meta.insert("namespace".into(), Value::String(ns.into()));
            }
            let mut annotations = match meta.remove("annotations") {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            annotations.remove(LAST_APPLIED_ANNOTATION);
            meta.insert("annotations".into(), Value::Object(annotations));
        }
    }
    let mut out = go_json(&copy);
    out.push('\n');
    out
}

/// `value` as compact JSON the way Go's `encoding/json` writes it (see the module docs).
pub fn go_json(value: &Value) -> String {
    go_format::json::to_string(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_kubectl_bytes() {
        // What kubectl v1.33 stored for this Deployment (namespaced, with a label and a foreign annotation).
        let file = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"},
                "annotations": {"team": "a&b", LAST_APPLIED_ANNOTATION: "old"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx", "args": ["1.5"]}]}}}});
        assert_eq!(
            encode(&file, Some("ns")),
            concat!(
                r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"team":"a\u0026b"},"#,
                r#""labels":{"app":"web"},"name":"web","namespace":"ns"},"spec":{"replicas":2,"template":{"spec":"#,
                r#"{"containers":[{"args":["1.5"],"image":"nginx","name":"c"}]}}}}"#,
                "\n"
            )
        );
        let cluster_scoped = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}});
        assert_eq!(
            encode(&cluster_scoped, None),
            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"annotations\":{},\"name\":\"n\"}}\n"
        );
    }

    #[test]
    fn numbers_like_go() {
        assert_eq!(
            go_json(&json!([1, 1.0, 1.5, 1e21, 1.5e-7, -3])),
            "[1,1,1.5,1e+21,1.5e-07,-3]".replace("e-07", "e-7")
        );
    }
}
