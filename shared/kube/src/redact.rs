//! The one redaction boundary: every string that came from the server or from a
//! Secret passes through here before it reaches stdout, stderr or a file that is
//! not a backup.
//!
//! Three tools, from the most structural to the last line of defence:
//! - [`redact`]: a Secret object as shown to people or scripts. The values of
//!   `data` and `stringData`, and of the copy of them in the last-applied
//!   annotation, become `*** (N bytes)`: key names and sizes stay, so output stays
//!   useful. ConfigMaps and every other kind are shown as they are.
//! - [`server_message`]: a server's Status message (or a cause's). The apiserver
//!   quotes the whole patched object in strict-validation and JSON Patch refusals
//!   (`Secret "db" is invalid: patch: Invalid value: "{\"apiVersion\":...}": strict
//!   decoding error: unknown field "dataa"`); such an object dump is cut out, leaving
//!   the reason and the field path a kubectl user expects to read.
//!   [`crate::Error::from_kube`] builds every API error through it, so no caller can
//!   forget.
//! - [`scrub`]: any text at all. Every Secret the process read from the server is
//!   remembered ([`remember`], called by the one read path,
//!   [`crate::api::objects::send`]); any of its values found in a text, in clear, in
//!   base64 or JSON-escaped, becomes `***`. Errors, diffs and progress lines go
//!   through it.
//!
//! `--show-secrets` ([`set_show_secrets`]) is the only way to see values: it turns
//! [`scrub`] off, and callers skip [`redact`].

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use base64::Engine as _;
use fieldwise_core::well_known::LAST_APPLIED_ANNOTATION;
use serde_json::Value;

/// What redacted values are replaced with.
pub const REDACTED: &str = "***";

/// Values shorter than this are not scrubbed from free text: replacing every
/// `a` or `1` would make messages unreadable. Structured redaction ([`redact`])
/// hides values of every length.
pub const MIN_SCRUBBED_LEN: usize = 4;

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
pub fn redact(object: &mut Value) {
    if !is_secret(object) {
        return;
    }
    redact_data(object);
    let annotation = object.pointer_mut("/metadata/annotations").and_then(|a| a.get_mut(LAST_APPLIED_ANNOTATION));
    if let Some(Value::String(text)) = annotation {
        *text = match serde_json::from_str::<Value>(text) {
            Ok(mut applied) => {
                redact_data(&mut applied);
                applied.to_string()
            }
            Err(_) => redacted(text.len()),
        };
    }
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
    scrub(&message)
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
    /// (so a value inside a longer one's spelling is not replaced first).
    spellings: Vec<String>,
    /// The same spellings, for finding duplicates in constant time (a scan reads thousands).
    seen: HashSet<String>,
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
    let mut values: Vec<Vec<u8>> = Vec::new();
    match answer.get("items").and_then(Value::as_array) {
        Some(items) => {
            for item in items {
                collect(item, list_of_secrets, &mut values);
            }
        }
        None => collect(answer, false, &mut values),
    }
    remember_values(values);
}

/// Remembers raw values (for values a command got elsewhere, e.g. from a file).
pub fn remember_values(values: Vec<Vec<u8>>) {
    if values.is_empty() {
        return;
    }
    let Ok(mut k) = known().lock() else { return };
    let before = k.spellings.len();
    for value in values {
        for spelling in spellings(&value) {
            if k.seen.insert(spelling.clone()) {
                k.spellings.push(spelling);
            }
        }
    }
    if k.spellings.len() != before {
        k.spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

fn collect(object: &Value, secret: bool, values: &mut Vec<Vec<u8>>) {
    if secret || is_secret(object) {
        data_values(object, values);
    }
    let annotation =
        object.pointer("/metadata/annotations").and_then(|a| a.get(LAST_APPLIED_ANNOTATION)).and_then(Value::as_str);
    // Parse only annotations that can be a Secret's: a scan reads thousands of them.
    if let Some(text) = annotation.filter(|t| t.contains("\"Secret\"")) {
        if let Ok(applied) = serde_json::from_str::<Value>(text) {
            if is_secret(&applied) {
                data_values(&applied, values);
            }
        }
    }
}

fn data_values(object: &Value, values: &mut Vec<Vec<u8>>) {
    if let Some(map) = object.get("data").and_then(Value::as_object) {
        for v in map.values().filter_map(Value::as_str) {
            values.push(decoded(v).unwrap_or_else(|| v.as_bytes().to_vec()));
        }
    }
    if let Some(map) = object.get("stringData").and_then(Value::as_object) {
        values.extend(map.values().filter_map(Value::as_str).map(|v| v.as_bytes().to_vec()));
    }
}

/// A value in clear, in base64, and each of those JSON-escaped once and twice (a
/// JSON document quoted inside a message) and Go-escaped (`<` as `\u003c`).
fn spellings(value: &[u8]) -> Vec<String> {
    let mut forms = vec![base64::engine::general_purpose::STANDARD.encode(value)];
    if let Ok(text) = std::str::from_utf8(value) {
        if text.len() >= MIN_SCRUBBED_LEN {
            forms.push(text.to_string());
        }
    }
    if value.len() < MIN_SCRUBBED_LEN.div_ceil(2) {
        forms.clear();
    }
    let mut all = Vec::new();
    for form in forms {
        let once = json_escaped(&form);
        let twice = json_escaped(&once);
        let go = once.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026");
        for s in [form, once, twice, go] {
            if !all.contains(&s) {
                all.push(s);
            }
        }
    }
    all
}

fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_string()
}

/// `text` with every remembered Secret value replaced by `***`, unless `--show-secrets`.
pub fn scrub(text: &str) -> String {
    let Ok(k) = known().lock() else { return text.to_string() };
    if k.show_secrets || k.spellings.is_empty() {
        return text.to_string();
    }
    let mut out = text.to_string();
    for spelling in &k.spellings {
        if out.contains(spelling.as_str()) {
            out = out.replace(spelling.as_str(), REDACTED);
        }
    }
    out
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
        set_show_secrets(true);
        assert!(scrub(clear).contains("canary"));
        set_show_secrets(false);
    }
}
