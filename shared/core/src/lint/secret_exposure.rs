//! A Secret's values are secret in `data` and `stringData` only. Copied into a label, an
//! annotation, a finalizer or any other field (a JSON Patch `copy` or `move` from `/data/pw`,
//! or the value pasted into a merge patch, whole or inside a longer value: `v-VALUE`,
//! `password=BASE64`), a value is readable by anyone who may read the Secret's metadata
//! (`kubectl get secrets` lists labels), and printed in clear by every tool. A diff that
//! masks Secret values cannot show the reviewer that it happens (`note: v-***`), so this
//! lint says where each value would land and whose value it is; the write is refused unless
//! the user allows it explicitly. What counts as "holding a value" is the redaction
//! boundary's own rule ([`crate::secret_text`]): whatever a diff masks in a field that is
//! not secret is reported here.

use std::borrow::Cow;

use serde_json::Value;

use super::{Finding, Severity};
use crate::json_patch::{JsonPointer, Operation};
use crate::last_applied::string_data::is_secret;
use crate::secret_text::{self, SecretValue};
use crate::well_known::LAST_APPLIED_ANNOTATION;

/// Where the patch puts a value of the Secret's `data` or `stringData` (or of the copy its
/// last-applied annotation records) outside them: one finding per place,
/// [`Severity::ExposesSecret`]. A value is found in a field exactly when printing the field
/// would mask it ([`secret_text::mask`]): whole, inside a longer value, in clear or in
/// base64; values shorter than [`secret_text::MIN_VALUE_LEN`] only when a JSON Patch moves
/// or copies them. `ops` are the JSON Patch operations (empty for other patch types). Objects
/// that are not Secrets have nothing to expose.
pub fn secret_exposures(live: &Value, result: &Value, ops: &[Operation]) -> Vec<Finding> {
    if !is_secret(live) && !is_secret(result) {
        return Vec::new();
    }
    let mut findings: Vec<Finding> = Vec::new();
    let mut add = |path: String, key: &str, how: &str, recorded: bool| {
        if findings.iter().any(|f| f.path == path) {
            return;
        }
        let whence = if recorded { " (the value its last-applied annotation records)" } else { "" };
        findings.push(
            Finding::new(
                Severity::ExposesSecret,
                path.clone(),
                format!("{how} the value of the Secret's {key} into {path}{whence}, where it is not secret: anyone who can read the Secret's metadata reads it in clear (the diff masks it)"),
            )
            .with_fix("keep Secret values in data or stringData; add --allow-secret-exposure if it must be exposed"),
        );
    };
    for op in ops {
        let (from, to, how) = match op {
            Operation::Copy { from, path } => (from, path, "copies"),
            Operation::Move { from, path } => (from, path, "moves"),
            _ => continue,
        };
        if let (Some(key), false) = (secret_key(from), inside_secret_fields(to.as_str())) {
            add(display_path(result, to), &key, how, false);
        }
    }
    let values = known_values(live, result);
    let mut places = Vec::new();
    places_outside_secret_fields(result, &Place::root(), &mut places);
    for place in places {
        if is_unchanged(live, &place) {
            continue;
        }
        let text = match !place.is_key && is_last_applied(&place.pointer) {
            true => without_secret_fields(place.text),
            false => Cow::Borrowed(place.text),
        };
        let found = values.iter().find(|(_, spellings)| matches!(secret_text::mask(&text, spellings), Cow::Owned(_)));
        if let Some((value, _)) = found {
            add(place.display, &value.key, "puts", value.from_last_applied);
        }
    }
    findings
}

/// Whether a pointer is the last-applied annotation's, which holds a copy of the Secret's fields.
fn is_last_applied(pointer: &str) -> bool {
    pointer.strip_prefix("/metadata/annotations/") == Some(LAST_APPLIED_ANNOTATION.replace('/', "~1").as_str())
}

/// The values of the Secret before and after the patch (a value the patch writes into
/// `data` or `stringData` and pastes elsewhere too is exposed as well), each once, with
/// their spellings; the object's own before those only its last-applied annotation records.
fn known_values(live: &Value, result: &Value) -> Vec<(SecretValue, Vec<String>)> {
    let mut all: Vec<SecretValue> = secret_text::values_of(live);
    all.extend(secret_text::values_of(result));
    all.sort_by_key(|v| v.from_last_applied);
    let mut out: Vec<(SecretValue, Vec<String>)> = Vec::new();
    for value in all {
        if !out.iter().any(|(v, _)| v.bytes == value.bytes) {
            let spellings = value.spellings();
            out.push((value, spellings));
        }
    }
    out
}

/// The last-applied annotation's text without the Secret's own fields (the copy of `data`
/// and `stringData` that kubectl records there is not an exposure by this patch).
fn without_secret_fields(text: &str) -> Cow<'_, str> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut applied)) => {
            applied.remove("data");
            applied.remove("stringData");
            Cow::Owned(Value::Object(applied).to_string())
        }
        _ => Cow::Borrowed(text),
    }
}

/// `data.KEY` or `stringData.KEY` for a pointer into them.
fn secret_key(pointer: &JsonPointer) -> Option<String> {
    match pointer.tokens()? {
        [field, key, ..] if field == "data" || field == "stringData" => Some(format!("{field}.{key}")),
        _ => None,
    }
}

fn inside_secret_fields(pointer: &str) -> bool {
    ["/data", "/stringData"].iter().any(|field| pointer == *field || pointer.starts_with(&format!("{field}/")))
}

/// A text of the patched object outside the Secret's fields: a string value, or a map key.
struct Place<'v> {
    /// The JSON Pointer of the value (of the map, for a key).
    pointer: String,
    /// Where, as the finding names it: `metadata.annotations.note`, `metadata.finalizers[0]`;
    /// `a key of metadata.labels` for a key (never the key itself: it is the value).
    display: String,
    /// Whether the text is a key of the map at `pointer`.
    is_key: bool,
    text: &'v str,
}

impl Place<'_> {
    fn root() -> Place<'static> {
        Place { pointer: String::new(), display: String::new(), is_key: false, text: "" }
    }

    fn child(&self, token: &str, display: String) -> Place<'static> {
        let token = token.replace('~', "~0").replace('/', "~1");
        Place { pointer: format!("{}/{token}", self.pointer), display, is_key: false, text: "" }
    }
}

/// Every string and map key in `value` outside `/data` and `/stringData` (and outside
/// `metadata.managedFields`, which names fields, holds no values, and no diff shows).
fn places_outside_secret_fields<'v>(value: &'v Value, at: &Place<'_>, out: &mut Vec<Place<'v>>) {
    if inside_secret_fields(&at.pointer) || at.pointer == "/metadata/managedFields" {
        return;
    }
    match value {
        Value::String(text) => {
            out.push(Place { text, pointer: at.pointer.clone(), display: at.display.clone(), ..Place::root() })
        }
        Value::Object(map) => {
            for (key, child) in map {
                if !at.pointer.is_empty() {
                    let display = format!("a key of {}", at.display);
                    out.push(Place { pointer: at.pointer.clone(), display, is_key: true, text: key });
                }
                places_outside_secret_fields(child, &at.child(key, field_display(&at.display, key)), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let display = format!("{}[{index}]", at.display);
                places_outside_secret_fields(child, &at.child(&index.to_string(), display), out);
            }
        }
        _ => {}
    }
}

/// Whether the live object has the same text at the same place (the patch exposes nothing new there).
fn is_unchanged(live: &Value, place: &Place<'_>) -> bool {
    let there = live.pointer(&place.pointer);
    match place.is_key {
        true => there.and_then(Value::as_object).is_some_and(|map| map.contains_key(place.text)),
        false => there.and_then(Value::as_str) == Some(place.text),
    }
}

/// `parent.name`, or `parent[name]` for a name with dots or slashes
/// (`metadata.annotations[example.com/a]`).
fn field_display(parent: &str, name: &str) -> String {
    match (name.contains('.') || name.contains('/'), parent.is_empty()) {
        (true, _) => format!("{parent}[{name}]"),
        (false, true) => name.to_string(),
        (false, false) => format!("{parent}.{name}"),
    }
}

/// How a finding names the place a JSON Pointer points to in `result`: array indices as `[i]`.
fn display_path(result: &Value, pointer: &JsonPointer) -> String {
    let tokens = pointer.tokens().map(<[String]>::to_vec).unwrap_or_default();
    let mut out = String::new();
    let mut at = Some(result);
    for token in tokens {
        out = match at {
            Some(Value::Array(_)) => format!("{out}[{token}]"),
            _ => field_display(&out, &token),
        };
        at = at.and_then(|v| match v {
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Value::Object(map) => map.get(&token),
            _ => None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_patch;
    use serde_json::json;

    fn secret() -> Value {
        // pw: hunter22, short: "1"
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"app": "web"}},
               "data": {"pw": "aHVudGVyMjI=", "short": "MQ=="}})
    }

    #[test]
    fn a_json_patch_copy_or_move_into_metadata_is_found() {
        let live = secret();
        for (op, how) in [("copy", "copies"), ("move", "moves")] {
            let patch = json!([{"op": op, "from": "/data/pw", "path": "/metadata/labels/x"}]);
            let ops = json_patch::parse(&patch).unwrap();
            let result = json_patch::apply(&live, &patch).unwrap();
            let findings = secret_exposures(&live, &result, &ops);
            assert_eq!(findings.len(), 1, "{findings:?}");
            assert_eq!(findings[0].severity, Severity::ExposesSecret);
            assert_eq!(findings[0].path, "metadata.labels.x");
            assert!(
                findings[0].message.starts_with(&format!("{how} the value of the Secret's data.pw")),
                "{findings:?}"
            );
        }
        // Even a value too short to match by text is found when a patch copies it.
        let patch = json!([{"op": "copy", "from": "/data/short", "path": "/metadata/annotations"}]);
        let result = json_patch::apply(&live, &patch).unwrap();
        assert_eq!(secret_exposures(&live, &result, &json_patch::parse(&patch).unwrap()).len(), 1);
    }

    #[test]
    fn a_pasted_value_decoded_or_not_is_found_and_ordinary_changes_are_not() {
        let live = secret();
        for pasted in ["hunter22", "aHVudGVyMjI="] {
            let mut result = live.clone();
            result["metadata"]["annotations"] = json!({"example.com/pw": pasted});
            let findings = secret_exposures(&live, &result, &[]);
            assert_eq!(findings.len(), 1, "{pasted}: {findings:?}");
            assert_eq!(findings[0].path, "metadata.annotations[example.com/pw]");
        }
        // Changing the data itself, or labels unrelated to it, exposes nothing; nor does a ConfigMap.
        let mut result = live.clone();
        result["data"]["pw"] = json!("bmV3");
        result["metadata"]["labels"]["tier"] = json!("1");
        result["stringData"] = json!({"token": "abcdef"});
        assert!(secret_exposures(&live, &result, &[]).is_empty());
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"pw": "hunter22"}});
        let mut copied = cm.clone();
        copied["metadata"] = json!({"labels": {"x": "hunter22"}});
        assert!(secret_exposures(&cm, &copied, &[]).is_empty());
        // A stringData value written in the same patch and pasted into a label is found too.
        let mut result = live.clone();
        result["stringData"] = json!({"token": "s3cr3t-token"});
        result["metadata"]["labels"]["token"] = json!("s3cr3t-token");
        assert_eq!(secret_exposures(&live, &result, &[])[0].path, "metadata.labels.token");
    }

    /// The paths the findings name, with the key named in each message.
    fn found(live: &Value, result: &Value) -> Vec<(String, String)> {
        secret_exposures(live, result, &[])
            .into_iter()
            .map(|f| {
                let key = f.message.split("the Secret's ").nth(1).and_then(|m| m.split(' ').next()).unwrap_or("");
                (f.path.clone(), key.to_string())
            })
            .collect()
    }

    fn pair(path: &str, key: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), key.to_string())]
    }

    #[test]
    fn a_value_inside_a_longer_value_in_clear_or_base64_is_found() {
        let live = secret();
        for note in ["v-hunter22", "password=aHVudGVyMjI=", "prefix-hunter22-suffix", "{\"pw\":\"hunter22\"}"] {
            let mut result = live.clone();
            result["metadata"]["annotations"] = json!({"note": note});
            assert_eq!(found(&live, &result), pair("metadata.annotations.note", "data.pw"), "{note}");
        }
        // The message names the field and the key, never the value.
        let mut result = live.clone();
        result["metadata"]["annotations"] = json!({"note": "v-hunter22"});
        let finding = &secret_exposures(&live, &result, &[])[0];
        assert!(!finding.message.contains("hunter22") && !finding.message.contains("aHVudGVyMjI="), "{finding:?}");
    }

    #[test]
    fn finalizers_generate_name_and_map_keys_are_fields_too() {
        let live = secret();
        let mut result = live.clone();
        result["metadata"]["finalizers"] = json!(["example.com/keep", "example.com/hunter22"]);
        assert_eq!(found(&live, &result), pair("metadata.finalizers[1]", "data.pw"));
        let mut result = live.clone();
        result["metadata"]["generateName"] = json!("g-hunter22-");
        assert_eq!(found(&live, &result), pair("metadata.generateName", "data.pw"));
        // A value used as a key is found without being named: the key is the value.
        let mut result = live.clone();
        result["metadata"]["labels"]["hunter22"] = json!("x");
        assert_eq!(found(&live, &result), pair("a key of metadata.labels", "data.pw"));
        // A JSON Patch copy into a list names the index.
        let patch = json!([{"op": "add", "path": "/metadata/finalizers", "value": ["a"]},
                           {"op": "copy", "from": "/data/short", "path": "/metadata/finalizers/0"}]);
        let result = json_patch::apply(&live, &patch).unwrap();
        let findings = secret_exposures(&live, &result, &json_patch::parse(&patch).unwrap());
        let paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["metadata.finalizers[0]"]);
    }

    #[test]
    fn a_value_only_the_last_applied_annotation_records_is_found() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "b2xkLXNlY3JldA=="}}).to_string();
        let mut live = secret();
        live["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: applied});
        let mut result = live.clone();
        result["metadata"]["annotations"]["note"] = json!("v-old-secret");
        let findings = secret_exposures(&live, &result, &[]);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].message.starts_with("puts the value of the Secret's data.pw into metadata.annotations.note (the value its last-applied annotation records)"),
            "{findings:?}"
        );
        // The annotation's own copy of the data is not an exposure by a patch that rewrites it,
        // but a value put elsewhere in it is.
        let rewritten = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMjI="}}).to_string();
        let mut result = live.clone();
        result["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = json!(rewritten);
        assert!(found(&live, &result).is_empty());
        let leaking =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"labels": {"x": "hunter22"}}}).to_string();
        result["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = json!(leaking);
        assert_eq!(found(&live, &result), pair(&format!("metadata.annotations[{LAST_APPLIED_ANNOTATION}]"), "data.pw"));
    }

    #[test]
    fn the_lint_reports_exactly_what_printing_masks() {
        // One rule: a field is reported when, and only when, the redaction boundary's mask changes it.
        let live = secret();
        let values = secret_text::values_of(&live);
        for note in ["hunter22", "x-hunter22", "hunte", "aHVudGVy", "1", "MQ==", "plain"] {
            let masked = values.iter().any(|v| matches!(secret_text::mask(note, &v.spellings()), Cow::Owned(_)));
            let mut result = live.clone();
            result["metadata"]["annotations"] = json!({"note": note});
            assert_eq!(!found(&live, &result).is_empty(), masked, "{note}");
        }
        // Unchanged fields are not this patch's doing.
        let mut exposed = live.clone();
        exposed["metadata"]["annotations"] = json!({"note": "v-hunter22"});
        let mut result = exposed.clone();
        result["metadata"]["labels"]["tier"] = json!("db");
        assert!(found(&exposed, &result).is_empty());
    }
}
