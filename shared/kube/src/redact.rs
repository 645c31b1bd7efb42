//! Secret and ConfigMap values hidden before anything is printed: `data`,
//! `stringData` and `binaryData` values become `***`, keys stay visible, and the
//! copy kubectl keeps in the last-applied annotation is redacted the same way.

use serde_json::Value;

/// What redacted values are replaced with.
pub const REDACTED: &str = "***";

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether `object` is a core Secret or ConfigMap, whose values are redacted.
pub fn is_sensitive(object: &Value) -> bool {
    let core = object.get("apiVersion").and_then(Value::as_str) == Some("v1");
    core && matches!(object.get("kind").and_then(Value::as_str), Some("Secret" | "ConfigMap"))
}

/// Replaces the values of a Secret's or ConfigMap's data maps (and of its last-applied
/// annotation) with `***`. Other objects are left alone.
pub fn redact(object: &mut Value) {
    if !is_sensitive(object) {
        return;
    }
    redact_data(object);
    let annotation = object.pointer_mut("/metadata/annotations").and_then(|a| a.get_mut(LAST_APPLIED));
    if let Some(Value::String(text)) = annotation {
        *text = match serde_json::from_str::<Value>(text) {
            Ok(mut applied) => {
                redact_data(&mut applied);
                applied.to_string()
            }
            Err(_) => REDACTED.to_string(),
        };
    }
}

fn redact_data(object: &mut Value) {
    for key in ["data", "stringData", "binaryData"] {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            for value in map.values_mut() {
                *value = Value::String(REDACTED.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_and_configmaps_only() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "c2VjcmV0"}}).to_string();
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"annotations": {LAST_APPLIED: applied}},
            "data": {"k": "c2VjcmV0"}, "stringData": {"p": "secret"}});
        redact(&mut secret);
        assert!(!secret.to_string().contains("c2VjcmV0") && !secret.to_string().contains("\"secret\""), "{secret}");
        assert_eq!(secret["data"]["k"], REDACTED);
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"b": "AAE="}});
        redact(&mut cm);
        assert_eq!(cm["binaryData"]["b"], REDACTED);
        let mut other = json!({"apiVersion": "apps/v1", "kind": "Deployment", "data": {"k": "v"}});
        redact(&mut other);
        assert_eq!(other["data"]["k"], "v");
    }
}
