//! The inverse of [`super::redact`], for an editor: the user edits a Secret as it is shown
//! (values `*** (N bytes)`, copies of them elsewhere `***`), never in clear, and the edit is
//! merged back onto the object the server holds.
//!
//! The rule, field by field (a map entry, a list item, a string): what the user left exactly
//! as shown keeps its original value, whatever the mask hid; what the user changed is the new
//! value. A changed value that still holds the mask (`***`) where the original had none is
//! ambiguous: it cannot say whether the hidden value is meant to stay or to go, so it is
//! refused ([`Ambiguous`]), naming the field; the user writes the whole new value, keeps the
//! placeholder as it was, or edits with `--show-secrets`. The last-applied annotation is
//! merged the same way inside its JSON, so a label changed there keeps the values it masks.
//! List items are matched by their shown form first (an item removed or moved keeps its
//! value), then by position when the list kept its length.

use std::collections::HashMap;

use fieldwise_core::secret_text::MASK;
use fieldwise_core::well_known::LAST_APPLIED_ANNOTATION;
use serde_json::{Map, Value};

use super::{own_spellings, shown_keys};

/// An edit that cannot be merged back: a field holds the mask beside new text, or a mask
/// where no value was hidden.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path} holds the mask *** where it cannot stand for the value it hid ({why}): keep a masked value exactly as \
     it was shown to leave it unchanged, or replace it whole with the new value (base64 in data, clear in \
     stringData), or edit with --show-secrets"
)]
pub struct Ambiguous {
    /// The field, from the object's root: `metadata.labels.copy`, `data.password`.
    pub path: String,
    /// What makes it ambiguous.
    pub why: &'static str,
}

/// Merges `edited` (the user's edit of `shown`, which is [`super::redact`] of `original`)
/// back onto `original`: unchanged parts take their original value, changed ones their new
/// value (see the module docs).
///
/// ```
/// use fieldwise_kube::redact::{redact, restore};
/// use serde_json::json;
///
/// let original = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
///     "data": {"pw": "aHVudGVyMjI=", "user": "YWRtaW4="}});
/// let mut shown = original.clone();
/// redact(&mut shown);
/// let mut edited = shown.clone();
/// edited["data"]["user"] = json!("cm9vdA==");
/// let merged = restore(&original, &shown, &edited).unwrap();
/// assert_eq!(merged["data"], json!({"pw": "aHVudGVyMjI=", "user": "cm9vdA=="}));
/// ```
pub fn restore(original: &Value, shown: &Value, edited: &Value) -> Result<Value, Ambiguous> {
    let spellings = own_spellings(original);
    Merge { spellings: &spellings, path: Vec::new() }.value(Some(original), Some(shown), edited)
}

struct Merge<'s> {
    spellings: &'s [String],
    path: Vec<String>,
}

impl Merge<'_> {
    fn value(&mut self, original: Option<&Value>, shown: Option<&Value>, edited: &Value) -> Result<Value, Ambiguous> {
        let (Some(original), Some(shown)) = (original, shown) else { return self.fresh(None, edited) };
        if edited == shown {
            return Ok(original.clone());
        }
        match (original, shown, edited) {
            (Value::Object(o), Value::Object(s), Value::Object(e)) => self.map(o, s, e),
            (Value::Array(o), Value::Array(s), Value::Array(e)) => self.list(o, s, e),
            (Value::String(o), Value::String(s), Value::String(e)) if self.at_last_applied() => {
                match (parse(o), parse(s), parse(e)) {
                    (Some(o), Some(s), Some(e)) => Ok(Value::String(self.value(Some(&o), Some(&s), &e)?.to_string())),
                    _ => self.fresh(Some(original), edited),
                }
            }
            _ => self.fresh(Some(original), edited),
        }
    }

    fn map(
        &mut self,
        original: &Map<String, Value>,
        shown: &Map<String, Value>,
        edited: &Map<String, Value>,
    ) -> Result<Value, Ambiguous> {
        // A key shown as itself is itself (data's keys are never masked); else the mask's pairs.
        let original_key: HashMap<String, &str> = shown_keys(original, self.spellings)
            .into_iter()
            .map(|(key, masked)| if shown.contains_key(key) { (key.to_string(), key) } else { (masked, key) })
            .collect();
        let mut out = Map::new();
        for (key, value) in edited {
            let merged_key = match original_key.get(key) {
                Some(&k) => k.to_string(),
                None if key.contains(MASK) => return Err(self.ambiguous_at(key, "a new key holding the mask")),
                None => key.clone(),
            };
            self.path.push(key.clone());
            let merged = self.value(original.get(&merged_key), shown.get(key), value)?;
            self.path.pop();
            if out.insert(merged_key.clone(), merged).is_some() {
                return Err(self.ambiguous_at(key, "two keys stand for one"));
            }
        }
        Ok(Value::Object(out))
    }

    fn list(&mut self, original: &[Value], shown: &[Value], edited: &[Value]) -> Result<Value, Ambiguous> {
        let same_length = edited.len() == shown.len();
        let mut out = Vec::with_capacity(edited.len());
        for (i, item) in edited.iter().enumerate() {
            self.path.push(format!("[{i}]"));
            let merged = match shown.iter().position(|s| s == item) {
                Some(j) => self.value(original.get(j), shown.get(j), item),
                None if same_length => self.value(original.get(i), shown.get(i), item),
                None => self.fresh(None, item),
            };
            self.path.pop();
            out.push(merged?);
        }
        Ok(Value::Array(out))
    }

    /// A value the user wrote: taken as it is, unless it holds the mask where `original` (the
    /// value that was at its place, if a string) had none.
    fn fresh(&self, original: Option<&Value>, edited: &Value) -> Result<Value, Ambiguous> {
        let had_mask = matches!(original, Some(Value::String(o)) if o.contains(MASK));
        if !had_mask && holds_mask(edited) {
            let why = if original.is_some() { "the mask beside new text" } else { "the mask at a new place" };
            return Err(Ambiguous { path: self.display(), why });
        }
        Ok(edited.clone())
    }

    fn at_last_applied(&self) -> bool {
        self.path.len() == 3
            && self.path[0] == "metadata"
            && self.path[1] == "annotations"
            && self.path[2] == LAST_APPLIED_ANNOTATION
    }

    fn ambiguous_at(&self, key: &str, why: &'static str) -> Ambiguous {
        let mut path = self.display();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        Ambiguous { path, why }
    }

    /// The path as `metadata.labels.copy` (list indexes as `[0]`).
    fn display(&self) -> String {
        let mut out = String::new();
        for part in &self.path {
            if !out.is_empty() && !part.starts_with('[') {
                out.push('.');
            }
            out.push_str(part);
        }
        if out.is_empty() {
            out.push_str("the object");
        }
        out
    }
}

fn parse(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

/// Whether any string or map key inside `value` holds the mask.
fn holds_mask(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains(MASK),
        Value::Array(items) => items.iter().any(holds_mask),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains(MASK) || holds_mask(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::redact;
    use serde_json::json;

    /// A Secret whose value `hunter22` (base64 `aHVudGVyMjI=`) is also in a label, an
    /// annotation (in base64), a label key and its last-applied annotation.
    fn secret() -> Value {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "labels": {"copy": "hunter22"}},
            "stringData": {"pw": "hunter22"}});
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "labels": {"copy": "hunter22", "tier": "db", "hunter22": "k"},
                "annotations": {"b64": "x-aHVudGVyMjI=", LAST_APPLIED_ANNOTATION: applied.to_string()}},
            "data": {"pw": "aHVudGVyMjI=", "user": "YWRtaW4="}})
    }

    fn shown(original: &Value) -> Value {
        let mut shown = original.clone();
        redact(&mut shown);
        shown
    }

    #[test]
    fn the_shown_form_holds_no_value_and_restores_to_the_original() {
        let original = secret();
        let shown = shown(&original);
        let text = shown.to_string();
        assert!(!text.contains("hunter22") && !text.contains("aHVudGVyMjI"), "{text}");
        assert_eq!(shown["metadata"]["labels"], json!({"copy": "***", "tier": "db", "***": "k"}));
        assert_eq!(shown["metadata"]["annotations"]["b64"], "x-***");
        assert_eq!(restore(&original, &shown, &shown).unwrap(), original);
    }

    #[test]
    fn a_replaced_value_is_new_and_kept_masks_keep_theirs() {
        let original = secret();
        let shown = shown(&original);
        let mut edited = shown.clone();
        edited["data"]["pw"] = json!("bmV3LXZhbHVl");
        edited["metadata"]["labels"]["tier"] = json!("cache");
        edited["metadata"]["labels"].as_object_mut().unwrap().remove("copy");
        let merged = restore(&original, &shown, &edited).unwrap();
        assert_eq!(merged["data"], json!({"pw": "bmV3LXZhbHVl", "user": "YWRtaW4="}));
        assert_eq!(merged["metadata"]["labels"], json!({"tier": "cache", "hunter22": "k"}));
        assert_eq!(merged["metadata"]["annotations"], original["metadata"]["annotations"]);
    }

    #[test]
    fn the_last_applied_annotation_is_merged_inside_its_json() {
        let original = secret();
        let shown = shown(&original);
        let key = LAST_APPLIED_ANNOTATION;
        let mut applied: Value = serde_json::from_str(shown["metadata"]["annotations"][key].as_str().unwrap()).unwrap();
        assert_eq!(applied["stringData"]["pw"], "*** (8 bytes)");
        applied["metadata"]["labels"]["tier"] = json!("db");
        let mut edited = shown.clone();
        edited["metadata"]["annotations"][key] = json!(applied.to_string());
        let merged = restore(&original, &shown, &edited).unwrap();
        let merged: Value = serde_json::from_str(merged["metadata"]["annotations"][key].as_str().unwrap()).unwrap();
        assert_eq!(merged["stringData"]["pw"], "hunter22");
        assert_eq!(merged["metadata"]["labels"], json!({"copy": "hunter22", "tier": "db"}));
    }

    #[test]
    fn a_mask_beside_new_text_or_at_a_new_place_is_refused_naming_the_field() {
        let original = secret();
        let shown = shown(&original);
        for (pointer, value, path) in [
            ("/metadata/labels/copy", json!("v2-***"), "metadata.labels.copy"),
            ("/data/pw", json!("*** (9 bytes)"), "data.pw"),
            ("/data/renamed", json!("*** (8 bytes)"), "data.renamed"),
        ] {
            let mut edited = shown.clone();
            match edited.pointer_mut(pointer) {
                Some(slot) => *slot = value,
                None => {
                    edited["data"]["renamed"] = value;
                }
            }
            let err = restore(&original, &shown, &edited).unwrap_err();
            assert_eq!(err.path, path, "{err}");
            assert!(err.to_string().contains("--show-secrets"), "{err}");
        }
        // A mask the original held itself is text like any other.
        let plain = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "p", "labels": {"a": "x***y"}}});
        let mut edited = plain.clone();
        edited["metadata"]["labels"]["a"] = json!("z***y");
        assert_eq!(restore(&plain, &plain, &edited).unwrap(), edited);
    }
}
