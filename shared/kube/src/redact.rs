//! The one redaction boundary: every string that came from the server or from a
//! Secret passes through here before it reaches stdout, stderr or a file that is
//! not a backup.
//!
//! Three tools, from the most structural to the last line of defence:
//! - [`redact`]: a Secret object as shown to people or scripts, by every output of every
//!   command (`-o json|yaml`, the owners view and its `--field` and `--manager`, the diff,
//!   the editor's file). The values of `data` and `stringData`, and of the copy of them in
//!   the last-applied annotation, become `*** (N bytes)`: key names and sizes stay, so
//!   output stays useful. Any of the Secret's own values found anywhere else in it (a
//!   label, an annotation, managedFields, the rest of the last-applied annotation; values
//!   and map keys; in clear, in base64 or escaped) becomes `***`, by the same rule as
//!   [`scrub`]. The object carries its values, so this needs nothing remembered: a dry
//!   run's answer holding a value never read before is masked too. ConfigMaps and every
//!   other kind are shown as they are. [`restore`] is its inverse for an editor: what the
//!   user left masked keeps its value.
//! - [`server_message`]: a server's Status message (or a cause's). The apiserver
//!   quotes the whole patched object in strict-validation and JSON Patch refusals
//!   (`Secret "db" is invalid: patch: Invalid value: "{\"apiVersion\":...}": strict
//!   decoding error: unknown field "dataa"`); such an object dump is cut out, leaving
//!   the reason and the field path a kubectl user expects to read. An admission message
//!   may quote part of a value (a policy's `substring(0, 16)`): runs of at least
//!   [`fieldwise_core::secret_text::MIN_FRAGMENT_LEN`] characters of a remembered value
//!   are masked too. [`crate::conn::error::ConnError::from_kube`] builds every API error through it, so no
//!   caller can forget.
//! - [`scrub`]: any text at all. Every Secret the process read from the server is
//!   remembered ([`remember`], called by the one read path,
//!   [`crate::api::objects::send`]); any of its values found in a text, in clear, in
//!   base64 or JSON-escaped, becomes `***`. Errors, diffs and progress lines go
//!   through it. What counts as "a value found in a text" is the core's one rule
//!   ([`fieldwise_core::secret_text`]), which the exposure lint reports by too: what
//!   a diff masks inside a field that is not secret, safe-patch refuses to write.
//! - [`field_value`]: one field's value of an object, shown alone (a table cell): the
//!   path-level policy. Only a Secret's `data` and `stringData` values (and their copy in
//!   the last-applied annotation) are secret as a whole; any other value is shown, with
//!   the Secret values inside it masked by [`scrub`].
//!
//! `--show-secrets` ([`set_show_secrets`]) is the only way to see values: it turns
//! [`scrub`] off, and callers skip [`redact`].
//!
//! **Short values.** Outside `data` and `stringData`, a value is searched for only when it is
//! at least [`fieldwise_core::secret_text::MIN_VALUE_LEN`] (4) bytes long, in [`redact`] as in
//! [`scrub`]: a Secret holding `1` or `on` is no evidence that every `1` or `on` in its labels
//! is it, and masking them would make the output useless. `data` and `stringData` themselves
//! are hidden whatever the length. **Identity.** `metadata.name` and `metadata.namespace` are
//! never masked: every result line and error names the object by them already.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

pub mod restore;
pub use restore::restore;

use base64::Engine as _;
use fieldwise_core::secret_text::{self, SecretValue};
use fieldwise_core::well_known::LAST_APPLIED_ANNOTATION;
use serde_json::Value;

/// What redacted values are replaced with.
pub const REDACTED: &str = secret_text::MASK;

/// Whether `object` is a core Secret, whose values are redacted (the core's one test).
/// ConfigMaps are not: they are meant for configuration that may be read, and scripts need them.
pub use fieldwise_core::last_applied::string_data::is_secret;

/// The replacement for one value of `len` bytes: `*** (12 bytes)`.
pub fn redacted(len: usize) -> String {
    format!("{REDACTED} ({len} bytes)")
}

/// Replaces the values of a Secret's `data` and `stringData` (and of their copy in its
/// last-applied annotation) with `*** (N bytes)`; N is the size of the decoded value.
/// Other objects are left alone.
///
/// ```
/// use fieldwise_kube::redact::redact;
/// use serde_json::json;
///
/// let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMg=="}});
/// redact(&mut secret);
/// assert_eq!(secret["data"]["pw"], "*** (7 bytes)");
/// ```
///
/// The Secret's own values elsewhere in it are masked too (`v-hunter22` becomes `v-***`):
///
/// ```
/// use fieldwise_kube::redact::redact;
/// use serde_json::json;
///
/// let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMjI="},
///     "metadata": {"name": "db", "labels": {"copy": "hunter22"}, "annotations": {"b64": "aHVudGVyMjI="}}});
/// redact(&mut secret);
/// assert_eq!(secret["metadata"]["labels"]["copy"], "***");
/// assert_eq!(secret["metadata"]["annotations"]["b64"], "***");
/// ```
pub fn redact(object: &mut Value) {
    if !is_secret(object) {
        return;
    }
    let spellings = own_spellings(object);
    redact_data(object);
    mask_outside_values(object, &spellings, 0);
    let annotation = object.pointer_mut("/metadata/annotations").and_then(|a| a.get_mut(LAST_APPLIED_ANNOTATION));
    if let Some(Value::String(text)) = annotation {
        *text = match serde_json::from_str::<Value>(text) {
            Ok(mut applied) => {
                redact_data(&mut applied);
                mask_outside_values(&mut applied, &spellings, 0);
                applied.to_string()
            }
            Err(_) => redacted(text.len()),
        };
    }
}

/// Every spelling of every value `object` carries (its `data`, `stringData` and the copy of
/// them in its last-applied annotation), longest first, as [`secret_text::mask`] wants them.
pub fn own_spellings(object: &Value) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut spellings: Vec<String> = secret_text::values_of(object)
        .iter()
        .flat_map(SecretValue::spellings)
        .filter(|s| seen.insert(s.clone()))
        .collect();
    spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
    spellings
}

/// Masks `spellings` in every string and map key of a Secret (`depth` 0: the object's root)
/// but where [`redact`] deals with the values structurally (`data`, `stringData`, the
/// last-applied annotation, which [`mask_map`] leaves alone) and its identity
/// (`metadata.name`, `metadata.namespace`).
fn mask_outside_values(object: &mut Value, spellings: &[String], depth: usize) {
    if spellings.is_empty() {
        return;
    }
    let Value::Object(map) = object else { return };
    for (key, value) in map.iter_mut() {
        match (depth, key.as_str()) {
            (0, "data" | "stringData") | (1, "name" | "namespace") => {}
            (0, "metadata") => mask_outside_values(value, spellings, 1),
            _ => *value = mask_value(value, spellings),
        }
    }
}

/// `value` with `spellings` masked in each of its strings and map keys.
fn mask_value(value: &Value, spellings: &[String]) -> Value {
    match value {
        Value::String(text) => Value::String(secret_text::mask(text, spellings).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(|v| mask_value(v, spellings)).collect()),
        Value::Object(map) => Value::Object(mask_map(map, spellings)),
        other => other.clone(),
    }
}

/// A map with its keys ([`shown_keys`]) and values masked; the last-applied annotation's
/// value is left alone (its own JSON is redacted as a whole by [`redact`]).
fn mask_map(map: &serde_json::Map<String, Value>, spellings: &[String]) -> serde_json::Map<String, Value> {
    shown_keys(map, spellings)
        .into_iter()
        .map(|(key, shown)| match key {
            LAST_APPLIED_ANNOTATION => (shown, map[key].clone()),
            _ => (shown, mask_value(&map[key], spellings)),
        })
        .collect()
}

/// Each key of `map` (in the map's order) with the key as shown: masked by `spellings`, and
/// when two keys mask alike, the later ones numbered (`***`, `*** (2)`), so no entry hides
/// another. [`restore`] finds the original key of a shown one by the same pairs. The
/// last-applied annotation's name is a well-known name, never masked.
pub fn shown_keys<'m>(map: &'m serde_json::Map<String, Value>, spellings: &[String]) -> Vec<(&'m str, String)> {
    let masked_key = |key: &'m str| match key {
        LAST_APPLIED_ANNOTATION => std::borrow::Cow::Borrowed(key),
        _ => secret_text::mask(key, spellings),
    };
    let mut taken: HashSet<String> = map.keys().filter(|k| masked_key(k.as_str()) == k.as_str()).cloned().collect();
    map.keys()
        .map(|key| {
            let masked = masked_key(key.as_str());
            if masked == key.as_str() {
                return (key.as_str(), key.clone());
            }
            let mut shown = masked.into_owned();
            let base = shown.clone();
            let mut n = 2;
            while !taken.insert(shown.clone()) {
                shown = format!("{base} ({n})");
                n += 1;
            }
            (key.as_str(), shown)
        })
        .collect()
}

fn redact_data(object: &mut Value) {
    if let Some(Value::Object(map)) = object.get_mut("data") {
        for value in map.values_mut() {
            let len = value.as_str().map_or(0, |v| decoded(v).map_or(v.len(), |b| b.len()));
            *value = Value::String(redacted(len));
        }
    }
    if let Some(Value::Object(map)) = object.get_mut("stringData") {
        for value in map.values_mut() {
            *value = Value::String(redacted(value.as_str().map_or(0, str::len)));
        }
    }
}

fn decoded(base64_text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(base64_text).ok()
}

/// Whether the field at `path` (field names from the object's root) of a Secret holds its
/// values: `data`, `stringData`, anything below them, the last-applied annotation (the
/// copy of them `kubectl apply` keeps), and `metadata` or `metadata.annotations` taken
/// whole (they hold that annotation). What [`redact`] hides, path by path.
pub fn holds_secret_values(path: &[&str]) -> bool {
    matches!(
        path,
        ["data" | "stringData", ..]
            | ["metadata", "annotations", LAST_APPLIED_ANNOTATION, ..]
            | ["metadata"]
            | ["metadata", "annotations"]
    )
}

/// [`field_value`] of the field at `path` (its leading field names; list entries and what
/// follows them are inside those fields).
pub fn value_at_path(object_is_secret: bool, path: &fieldwise_core::fieldpath::Path, value: &Value) -> Value {
    let names: Vec<&str> = path.elements().iter().map_while(fieldwise_core::fieldpath::PathElement::as_field).collect();
    field_value(object_is_secret, &names, value)
}

/// One field's value, shown alone (a table cell, a report entry): in a Secret
/// (`object_is_secret`), a field that [`holds_secret_values`] becomes `*** (N bytes)`; every
/// other value is kept, with the remembered Secret values inside its strings masked by
/// [`scrub`] (`v-***`). Unless `--show-secrets`, which shows everything.
///
/// ```
/// use fieldwise_kube::redact::field_value;
/// use serde_json::json;
///
/// assert_eq!(field_value(true, &["data", "pw"], &json!("aHVudGVyMg==")), json!("*** (7 bytes)"));
/// assert_eq!(field_value(true, &["metadata", "labels", "tier"], &json!("db")), json!("db"));
/// ```
pub fn field_value(object_is_secret: bool, path: &[&str], value: &Value) -> Value {
    if showing_secrets() {
        return value.clone();
    }
    if object_is_secret && holds_secret_values(path) {
        let len = match value {
            Value::String(text) if path.first() == Some(&"data") => decoded(text).map_or(text.len(), |b| b.len()),
            Value::String(text) => text.len(),
            other => other.to_string().len(),
        };
        return Value::String(redacted(len));
    }
    scrub_strings(value)
}

/// `value` with [`scrub`] applied to each of its strings and map keys.
fn scrub_strings(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(scrub(text)),
        Value::Array(items) => Value::Array(items.iter().map(scrub_strings).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (scrub(k), scrub_strings(v))).collect()),
        other => other.clone(),
    }
}

/// Shortens a server message (a Status `message` or a cause's): an object the server
/// quoted after `Invalid value: ` is cut out with its separator, and any other JSON
/// object dump becomes `{...}`; then the result is [`scrub`]bed.
///
/// Shapes seen from kube-apiserver v1.33 with `fieldValidation=Strict`: a merge or JSON
/// patch adding an unknown field answers 422 `Invalid` with ` "" is invalid: patch:
/// Invalid value: "<the whole patched object as escaped JSON, Secret data and
/// last-applied annotation included>": strict decoding error: unknown field "dataa"`
/// (and the same text in the `patch` cause); a strategic patch quotes the patch itself
/// as a Go map (`Invalid value: "map[dataa:map[x:eA==]]"`).
///
/// ```
/// use fieldwise_kube::redact::server_message;
///
/// let message = r#"Secret "db" is invalid: patch: Invalid value: "{\"apiVersion\":\"v1\",\"data\":{\"pw\":\"aHVudGVyMg==\"}}": strict decoding error: unknown field "dataa""#;
/// assert_eq!(server_message(message), r#"Secret "db" is invalid: patch: strict decoding error: unknown field "dataa""#);
/// ```
pub fn server_message(message: &str) -> String {
    let message = cut_object_dumps(message);
    // A refused patch names neither kind nor name (` "" is invalid: patch: ...`).
    let message = match message.strip_prefix(" \"\" is invalid: ") {
        Some(rest) => format!("the patched object is invalid: {rest}"),
        None => message,
    };
    scrub_fragments(&scrub(&message))
}

/// The message with embedded object dumps removed (see [`server_message`]).
fn cut_object_dumps(message: &str) -> String {
    const INVALID: &str = "Invalid value: ";
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while !rest.is_empty() {
        let invalid_at = rest.find(INVALID);
        let object_at = find_object_start(rest);
        let invalid_first = match (invalid_at, object_at) {
            (Some(i), Some(o)) => i <= o,
            (i, _) => i.is_some(),
        };
        if let (true, Some(i)) = (invalid_first, invalid_at) {
            let after = &rest[i + INVALID.len()..];
            match value_token_len(after).filter(|&n| is_object_dump(&after[..n])) {
                Some(n) => {
                    out.push_str(&rest[..i]);
                    rest = after[n..].strip_prefix(": ").unwrap_or(&after[n..]);
                }
                None => {
                    out.push_str(&rest[..i + INVALID.len()]);
                    rest = after;
                }
            }
        } else if let Some(o) = object_at {
            let len = balanced_len(&rest[o..]).unwrap_or(rest.len() - o);
            out.push_str(&rest[..o]);
            out.push_str("{...}");
            rest = &rest[o + len..];
        } else {
            out.push_str(rest);
            rest = "";
        }
    }
    out
}

/// Where a JSON object with a `"kind"`, `"metadata"` or `"data"` key starts, if any.
fn find_object_start(text: &str) -> Option<usize> {
    ["{\"apiVersion\"", "{\"kind\"", "{\"metadata\"", "{\"data\"", "{\\\"apiVersion\\\"", "{\\\"kind\\\""]
        .iter()
        .filter_map(|p| text.find(p))
        .min()
}

/// Whether a value token quotes an object (a JSON or Go structure, or a string holding one).
fn is_object_dump(token: &str) -> bool {
    let inner = token.strip_prefix('"').unwrap_or(token).trim_start();
    inner.starts_with('{') || inner.starts_with('[') || inner.starts_with("map[") || inner.starts_with('&')
}

/// The length of the value token at the start of `text`: a Go-quoted string, or a
/// balanced `{...}`/`[...]`/`map[...]`/`&Kind{...}` structure.
fn value_token_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    match bytes.first()? {
        b'"' => {
            let mut escaped = false;
            for (i, &b) in bytes.iter().enumerate().skip(1) {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => return Some(i + 1),
                    _ => {}
                }
            }
            None
        }
        b'{' | b'[' => balanced_len(text),
        _ => {
            let open = text.find(['{', '['])?;
            let head = &text[..open];
            let structural = head == "map" || (head.starts_with('&') && !head.contains(' '));
            structural.then(|| balanced_len(&text[open..]).map(|n| open + n)).flatten()
        }
    }
}

/// The length of the balanced bracket structure at the start of `text` (strings respected).
fn balanced_len(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// What the process knows must not be printed.
#[derive(Default)]
struct Known {
    show_secrets: bool,
    /// Each remembered value in every spelling it may take in a text, longest first
    /// (so a value inside a longer one's spelling is not replaced first) once sorted.
    spellings: Vec<String>,
    /// Whether spellings were added since the last sort: sorted when next used, not at
    /// every value remembered (a file of thousands of Secrets would sort thousands of times).
    unsorted: bool,
    /// The same spellings, for finding duplicates in constant time (a scan reads thousands).
    seen: HashSet<String>,
}

impl Known {
    /// The spellings, longest first.
    fn longest_first(&mut self) -> &[String] {
        if std::mem::take(&mut self.unsorted) {
            self.spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        &self.spellings
    }
}

fn known() -> &'static Mutex<Known> {
    // Process-wide: a CLI reads Secrets in one place (objects::send) and prints in many.
    static KNOWN: OnceLock<Mutex<Known>> = OnceLock::new();
    KNOWN.get_or_init(Mutex::default)
}

/// `--show-secrets`: the user asked to see values, so [`scrub`] leaves text alone.
pub fn set_show_secrets(show: bool) {
    if let Ok(mut k) = known().lock() {
        k.show_secrets = show;
    }
}

/// Whether `--show-secrets` was given.
pub fn showing_secrets() -> bool {
    known().lock().map(|k| k.show_secrets).unwrap_or(false)
}

/// Remembers the Secret values in a server answer: a Secret, a list of them, or any
/// object (full or metadata-only) whose last-applied annotation is a Secret's.
pub fn remember(answer: &Value) {
    let list_of_secrets = answer.get("kind").and_then(Value::as_str) == Some("SecretList");
    let mut values: Vec<SecretValue> = Vec::new();
    match answer.get("items").and_then(Value::as_array) {
        Some(items) => {
            for item in items {
                if list_of_secrets {
                    values.extend(secret_text::values_of_secret(item));
                }
                values.extend(secret_text::values_of(item));
            }
        }
        None => values.extend(secret_text::values_of(answer)),
    }
    remember_values(values.into_iter().map(|v| v.bytes).collect());
}

/// Remembers raw values (for values a command got elsewhere, e.g. from a file).
pub fn remember_values(values: Vec<Vec<u8>>) {
    if values.is_empty() {
        return;
    }
    let Ok(mut k) = known().lock() else { return };
    let before = k.spellings.len();
    for value in values {
        for spelling in secret_text::spellings(&value) {
            if k.seen.insert(spelling.clone()) {
                k.spellings.push(spelling);
            }
        }
    }
    if k.spellings.len() != before {
        k.unsorted = true;
    }
}

/// `text` with every remembered Secret value replaced by `***` ([`secret_text::mask`], the
/// rule the exposure lint reports by), unless `--show-secrets`.
pub fn scrub(text: &str) -> String {
    let Ok(mut k) = known().lock() else { return text.to_string() };
    if k.show_secrets || k.spellings.is_empty() {
        return text.to_string();
    }
    secret_text::mask(text, k.longest_first()).into_owned()
}

/// `text` with every run of a remembered value's spelling at least
/// [`secret_text::MIN_FRAGMENT_LEN`] characters long replaced by `***`, unless
/// `--show-secrets`: for server messages, which may quote part of a value.
fn scrub_fragments(text: &str) -> String {
    let Ok(mut k) = known().lock() else { return text.to_string() };
    if k.show_secrets || k.spellings.is_empty() {
        return text.to_string();
    }
    secret_text::mask_fragments(text, k.longest_first()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_only_with_key_names_and_sizes() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "c2VjcmV0"}}).to_string();
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"annotations": {LAST_APPLIED_ANNOTATION: applied}},
            "data": {"k": "c2VjcmV0"}, "stringData": {"p": "secret"}});
        redact(&mut secret);
        assert!(!secret.to_string().contains("c2VjcmV0") && !secret.to_string().contains("\"secret\""), "{secret}");
        assert_eq!(secret["data"]["k"], "*** (6 bytes)");
        assert_eq!(secret["stringData"]["p"], "*** (6 bytes)");
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"c": "5"}, "binaryData": {"b": "AAE="}});
        redact(&mut cm);
        assert_eq!(
            cm,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"c": "5"}, "binaryData": {"b": "AAE="}})
        );
    }

    /// Issue #44, point 4: a Secret's own values copied into its metadata are masked by the
    /// structural redaction every output uses, with nothing remembered beforehand.
    #[test]
    fn a_secrets_own_values_are_masked_wherever_they_are_copied() {
        use base64::Engine as _;
        let (value, token) = ("cnry-own-0f3a", "tok<&>en-9c2d");
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db",
            "labels": {"copy": value}}, "stringData": {"token": token}});
        let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "namespace": "ns",
                "labels": {"copy": value, "short": "on", value: "as-key"},
                "annotations": {"note": format!("v-{value}"), "b64": b64(value), "sd": format!("[{token}]"),
                    LAST_APPLIED_ANNOTATION: applied.to_string()},
                "finalizers": [format!("example.com/{value}")],
                "managedFields": [{"manager": "m", "fieldsV1": {"f:metadata": {"f:finalizers": {format!("v:\"example.com/{value}\""): {}}}}}]},
            "data": {"pw": b64(value), "token": b64(token), "one": b64("on")}});
        redact(&mut secret);
        let text = secret.to_string();
        for spelling in secret_text::spellings(value.as_bytes()).iter().chain(&secret_text::spellings(token.as_bytes()))
        {
            assert!(!text.contains(spelling.as_str()), "{spelling} in {text}");
        }
        let meta = &secret["metadata"];
        assert_eq!(meta["labels"], json!({"copy": "***", "short": "on", "***": "as-key"}), "short values stay");
        assert_eq!(meta["annotations"]["note"], "v-***");
        assert_eq!(meta["annotations"]["b64"], "***");
        assert_eq!(meta["annotations"]["sd"], "[***]");
        assert_eq!(meta["finalizers"][0], "example.com/***");
        assert!(meta["managedFields"].to_string().contains("example.com/***"), "{}", meta["managedFields"]);
        let applied: Value =
            serde_json::from_str(meta["annotations"][LAST_APPLIED_ANNOTATION].as_str().unwrap()).unwrap();
        assert_eq!(applied["metadata"]["labels"]["copy"], "***");
        assert_eq!(applied["stringData"]["token"], "*** (13 bytes)");
        assert_eq!(secret["data"]["one"], "*** (2 bytes)", "data is hidden whatever the length");
        // The identity is never masked: every result line names the object by it anyway.
        let mut named =
            json!({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": value}, "data": {"pw": b64(value)}});
        redact(&mut named);
        assert_eq!(named["metadata"]["name"], value);
        // Two keys masking alike stay two keys.
        let mut twice = json!({"kind": "Secret", "apiVersion": "v1", "data": {"a": b64("abcd")},
            "metadata": {"labels": {"x-abcd": "1", "y-abcd": "2", "x-***": "3"}}});
        redact(&mut twice);
        assert_eq!(twice["metadata"]["labels"], json!({"x-***": "3", "x-*** (2)": "1", "y-***": "2"}));
    }

    #[test]
    fn object_dumps_are_cut_from_server_messages() {
        // The shape kube-apiserver v1.33 answers a strict merge patch of a Secret with.
        let dump = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMg=="}}).to_string();
        let message = format!(
            "Secret \"db\" is invalid: patch: Invalid value: {}: strict decoding error: unknown field \"dataa\"",
            serde_json::to_string(&dump).unwrap()
        );
        assert_eq!(
            cut_object_dumps(&message),
            "Secret \"db\" is invalid: patch: strict decoding error: unknown field \"dataa\""
        );
        // A Go map dump (a strategic patch is quoted so, in quotes) and a bare JSON object.
        let strategic = r#" "" is invalid: patch: Invalid value: "map[dataa:map[x:eA==]]": strict decoding error: unknown field "dataa""#;
        assert_eq!(
            server_message(strategic),
            r#"the patched object is invalid: patch: strict decoding error: unknown field "dataa""#
        );
        let go = "x: Invalid value: map[data:map[pw:aHVudGVyMg==]]: bad";
        assert_eq!(cut_object_dumps(go), "x: bad");
        let bare = format!("error applying patch: {dump} is not valid");
        assert_eq!(cut_object_dumps(&bare), "error applying patch: {...} is not valid");
        // Short values stay: they are what the user needs to read.
        let short = "spec.replicas: Invalid value: -1: must be greater than or equal to 0";
        assert_eq!(cut_object_dumps(short), short);
        let quoted = "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain";
        assert_eq!(cut_object_dumps(quoted), quoted);
    }

    #[test]
    fn remembered_values_are_scrubbed_in_every_spelling() {
        let secret = json!({"kind": "SecretList", "items": [{"data": {"pw": "czNjcjN0LTxjYW5hcnk+"}}]});
        remember(&secret);
        let clear = "s3cr3t-<canary>";
        for text in [
            clear.to_string(),
            "czNjcjN0LTxjYW5hcnk+".to_string(),
            "s3cr3t-\\u003ccanary\\u003e".to_string(),
            serde_json::to_string(&serde_json::to_string(clear).unwrap()).unwrap(),
        ] {
            assert!(!scrub(&format!("before {text} after")).contains("canary"), "{text}");
        }
        assert_eq!(scrub("nothing here"), "nothing here");
        // A server message quoting part of a value (an admission policy's `substring(0, 16)`).
        remember(&json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "ZnJhZzAxMjM0NTY3ODlhYmNkZWY="}}));
        assert_eq!(
            server_message("admission denied the request: refused for frag0123456789ab"),
            "admission denied the request: refused for ***"
        );
        assert_eq!(server_message("refused for frag012"), "refused for frag012");
        // The path-level policy: a Secret's data is hidden whole, other fields shown, values inside them masked.
        assert_eq!(field_value(true, &["data", "pw"], &json!("ZnJhZzAxMjM0NTY3ODlhYmNkZWY=")), "*** (20 bytes)");
        assert_eq!(field_value(true, &["metadata", "labels", "tier"], &json!("db")), "db");
        assert_eq!(field_value(true, &["metadata", "annotations", "note"], &json!("v-frag0123456789abcdef")), "v-***");
        assert_eq!(field_value(false, &["data", "pw"], &json!("shown")), "shown");
        // A map holding the last-applied annotation, taken whole, is hidden whole.
        let annotations = json!({LAST_APPLIED_ANNOTATION: "{}", "note": "x"});
        assert_eq!(field_value(true, &["metadata", "annotations"], &annotations), json!("*** (68 bytes)"));
        set_show_secrets(true);
        assert!(scrub(clear).contains("canary"));
        set_show_secrets(false);
    }
}
