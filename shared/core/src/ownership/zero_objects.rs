//! The empty object of each built-in kind, as the apiserver's field manager reads it.
//!
//! An object without `managedFields` is attributed to `before-first-apply` by comparing
//! it with the empty object of its kind: what the empty object already holds (the Go
//! zero value's non-omitted structs, `null` for non-omitted pointers and slices) is not
//! attributed. OpenAPI does not say which fields those are, so `go_zero_objects.json`
//! (written by `go_zero_objects.go` from the Go types, run by `scripts/gen-zero-objects`,
//! which `scripts/test` checks) records the empty object of
//! every built-in kind. A custom resource's empty object holds nothing.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::schema::Gvk;

const DATA: &str = include_str!("go_zero_objects.json");

static TABLE: OnceLock<HashMap<String, Value>> = OnceLock::new();

fn table() -> &'static HashMap<String, Value> {
    TABLE.get_or_init(|| serde_json::from_str(DATA).unwrap_or_default())
}

/// The empty object of `gvk`: the Go zero value of a built-in kind, `{}` for any other.
pub fn empty_object(gvk: &Gvk) -> Value {
    let mut key = format!("{}.{}", gvk.kind, gvk.version);
    if !gvk.group.is_empty() {
        key.push('.');
        key.push_str(&gvk.group);
    }
    table().get(&key).cloned().unwrap_or_else(|| Value::Object(Map::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn knows_the_zero_values_of_built_in_kinds() {
        assert_eq!(
            empty_object(&Gvk::new("apps", "v1", "Deployment")),
            json!({"metadata": {}, "spec": {"selector": null, "strategy": {},
                "template": {"metadata": {}, "spec": {"containers": null}}}, "status": {}})
        );
        assert_eq!(empty_object(&Gvk::new("", "v1", "ConfigMap")), json!({"metadata": {}}));
        assert_eq!(empty_object(&Gvk::new("fieldwise.test", "v1", "Widget")), json!({}));
        assert!(table().len() > 150, "{}", table().len());
    }
}
