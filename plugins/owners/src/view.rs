//! What the annotated view leaves out by default, and the object as it is shown.
//!
//! Status is the controllers' business, `managedFields` is what the whole
//! view already explains, and `uid`, `resourceVersion`, `creationTimestamp`,
//! `generation` and `selfLink` are set by the server for every object (the core's
//! one list, `fieldwise_core::ownership::SERVER_SET_METADATA`). Secret
//! values are redacted unless asked for (`--show-secrets`); ConfigMaps are shown.

use fieldwise_core::fieldpath::{Path, PathElement};
use fieldwise_core::ownership::SERVER_SET_METADATA;
use fieldwise_kube::redact;
use serde_json::Value;

/// What to show beyond the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// Show `status`.
    pub show_status: bool,
    /// Show server-set metadata.
    pub show_metadata: bool,
    /// Show Secret values.
    pub show_values: bool,
}

impl ViewOptions {
    /// Whether a field path falls in a hidden part of the object.
    pub fn hides(&self, path: &Path) -> bool {
        let names: Vec<Option<&str>> = path.elements().iter().take(2).map(PathElement::as_field).collect();
        match names.as_slice() {
            [Some("status"), ..] => !self.show_status,
            [Some("metadata"), Some("managedFields")] => true,
            [Some("metadata"), Some(name)] => !self.show_metadata && SERVER_SET_METADATA.contains(name),
            _ => false,
        }
    }

    /// The object as shown, and the names of what was hidden (for a footer).
    pub fn prepare(&self, object: &Value) -> (Value, Vec<String>) {
        let mut shown = object.clone();
        let mut hidden = Vec::new();
        if !self.show_values {
            redact::redact(&mut shown);
        }
        if let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut) {
            if meta.remove("managedFields").is_some() {
                hidden.push("metadata.managedFields".to_string());
            }
            if !self.show_metadata {
                // managedFields went above; the rest are hidden unless `--show-metadata`.
                for name in SERVER_SET_METADATA {
                    if meta.remove(name).is_some() {
                        hidden.push(format!("metadata.{name}"));
                    }
                }
            }
        }
        if !self.show_status {
            if let Some(map) = shown.as_object_mut() {
                if map.remove("status").is_some() {
                    hidden.push("status".to_string());
                }
            }
        }
        (shown, hidden)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hides_noise_by_default() {
        let object = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "uid": "u", "managedFields": [], "resourceVersion": "1"},
            "data": {"k": "dmFsdWU="}, "status": {"x": 1}});
        let (shown, hidden) = ViewOptions::default().prepare(&object);
        assert_eq!(
            shown,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "*** (5 bytes)"}})
        );
        assert_eq!(hidden, ["metadata.managedFields", "metadata.uid", "metadata.resourceVersion", "status"]);
        let all = ViewOptions { show_status: true, show_metadata: true, show_values: true };
        assert_eq!(all.prepare(&object).0["data"]["k"], "dmFsdWU=");
        assert!(ViewOptions::default().hides(&Path::fields(["status", "replicas"])));
        assert!(!all.hides(&Path::fields(["status", "replicas"])));
        assert!(!ViewOptions::default().hides(&Path::fields(["metadata", "labels"])));
    }
}
