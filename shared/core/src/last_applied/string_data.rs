//! A Secret's `stringData` as the server stores it.
//!
//! `stringData` is write-only: the apiserver base64-encodes each of its values into
//! `data` and never returns `stringData`. An annotation written by
//! `kubectl apply` of a file with `stringData` therefore names fields the live object
//! never has; comparing them literally reports every such Secret as stale and
//! drifting, and a repair rewrites an annotation that was right. [`as_stored`] turns
//! the applied configuration into what the server made of it, key by key, so only a
//! `stringData` key whose text differs from the live `data` key stays a difference.

use base64::Engine as _;
use serde_json::{Map, Value};

/// Whether `object` is a core Secret.
pub fn is_secret(object: &Value) -> bool {
    object.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && object.get("kind").and_then(Value::as_str) == Some("Secret")
}

/// `applied` with each `stringData` key whose text is what `live.data` holds (base64 of
/// the same bytes) moved to `data`, as the server stored it. Keys that differ, and
/// objects that are not Secrets, are left as they are.
///
/// ```
/// use fieldwise_core::last_applied::string_data::as_stored;
/// use serde_json::json;
///
/// let applied = json!({"apiVersion": "v1", "kind": "Secret", "stringData": {"token": "abc", "pw": "new"}});
/// let live = json!({"apiVersion": "v1", "kind": "Secret", "data": {"token": "YWJj", "pw": "b2xk"}});
/// assert_eq!(
///     as_stored(&applied, &live),
///     json!({"apiVersion": "v1", "kind": "Secret", "stringData": {"pw": "new"}, "data": {"token": "YWJj"}})
/// );
/// ```
pub fn as_stored(applied: &Value, live: &Value) -> Value {
    let mut stored = applied.clone();
    if !is_secret(applied) {
        return stored;
    }
    let Some(Value::Object(string_data)) = stored.get("stringData").cloned() else {
        return stored;
    };
    let live_data = live.get("data").and_then(Value::as_object);
    let mut kept = Map::new();
    let mut moved = Map::new();
    for (key, text) in string_data {
        let live_value = live_data.and_then(|d| d.get(&key));
        match (text.as_str(), live_value.and_then(Value::as_str)) {
            (Some(text), Some(encoded)) if encodes(encoded, text) => {
                moved.insert(key, Value::String(encoded.to_string()));
            }
            _ => {
                kept.insert(key, text);
            }
        }
    }
    let Value::Object(map) = &mut stored else { return stored };
    if kept.is_empty() {
        map.remove("stringData");
    } else {
        map.insert("stringData".into(), Value::Object(kept));
    }
    if !moved.is_empty() {
        let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(data) = data {
            // stringData wins over data for the same key, as on the server.
            data.extend(moved);
        }
    }
    stored
}

/// Whether `encoded` is the base64 of `text`'s bytes.
fn encodes(encoded: &str, text: &str) -> bool {
    base64::engine::general_purpose::STANDARD.decode(encoded).is_ok_and(|bytes| bytes == text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_matching_keys_of_secrets_move() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "eA=="}, "stringData": {"t": "tok"}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "eA==", "t": "dG9r"}});
        assert_eq!(
            as_stored(&applied, &live),
            json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "eA==", "t": "dG9r"}})
        );
        let changed = json!({"apiVersion": "v1", "kind": "Secret", "data": {"t": "b3RoZXI="}});
        assert_eq!(as_stored(&applied, &changed), applied);
        let missing = json!({"apiVersion": "v1", "kind": "Secret"});
        assert_eq!(as_stored(&applied, &missing), applied);
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "stringData": {"t": "tok"}});
        assert_eq!(as_stored(&cm, &json!({"data": {"t": "dG9r"}})), cm);
    }
}
