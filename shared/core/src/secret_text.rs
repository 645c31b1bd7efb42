//! A Secret's values, and where they appear in a text: the one rule by which Secret values
//! are masked for printing (`fieldwise_kube::redact::scrub`, the last line of the redaction
//! boundary) and by which a patch is found to expose one ([`crate::lint::secret_exposure`]).
//! Because both call [`mask`], whatever a diff would hide inside a field that is not secret
//! is exactly what the lint reports: a reviewer is never shown `v-***` without being told.
//!
//! A value is searched for in every spelling it takes in a text ([`spellings`]): in clear,
//! in base64 (as `data` stores it), and each of those JSON-escaped once and twice (a JSON
//! document quoted inside a message or an annotation) and Go-escaped (`<` as `\u003c`),
//! anywhere inside a longer text (`v-VALUE`, `password=BASE64`).
//!
//! **The one length rule**: a value shorter than [`MIN_VALUE_LEN`] bytes is never searched
//! for in text, in any spelling: a Secret holding `1` or `on` is no evidence that every `1`
//! in a message or every `on` in a label is it. (Structured redaction, which knows which
//! fields are a Secret's, hides values of every length, and a JSON Patch that copies a value
//! out of `data` is caught by its `from`, whatever the length.)
//!
//! **Fragments** ([`mask_fragments`]): a server's admission or validation message can quote
//! part of a value (a policy's `messageExpression` with `substring(0, 16)`). Runs of at least
//! [`MIN_FRAGMENT_LEN`] characters of any spelling are masked there too; shorter runs are
//! ordinary text too often (a value `kubernetes-token` shares `kube` with every message).
//! Fragments are masked only in server messages: a field that holds a fragment of a value is
//! not reported as an exposure.

use std::borrow::Cow;
use std::collections::HashSet;

use base64::Engine as _;
use serde_json::Value;

use crate::last_applied::string_data::is_secret;
use crate::well_known::LAST_APPLIED_ANNOTATION;

/// What a masked value is replaced with.
pub const MASK: &str = "***";

/// Values shorter than this (in bytes) are never searched for in text (see the module docs).
pub const MIN_VALUE_LEN: usize = 4;

/// The shortest run of a value's spelling that [`mask_fragments`] masks in a server message.
pub const MIN_FRAGMENT_LEN: usize = 8;

/// One value of a Secret, named by where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretValue {
    /// `data.KEY` or `stringData.KEY`.
    pub key: String,
    /// Whether it was read from the object's last-applied annotation (the copy of the
    /// Secret that `kubectl apply` recorded), not from the object's own fields.
    pub from_last_applied: bool,
    /// The value's bytes (decoded from base64 for `data`).
    pub bytes: Vec<u8>,
}

impl SecretValue {
    /// The spellings of this value ([`spellings`]).
    pub fn spellings(&self) -> Vec<String> {
        spellings(&self.bytes)
    }
}

/// The Secret values an object carries: its own `data` and `stringData` when it is a Secret,
/// and those of the Secret recorded in its last-applied annotation (of any object: a copy of
/// a Secret's annotation is still a Secret's values).
pub fn values_of(object: &Value) -> Vec<SecretValue> {
    let mut values = if is_secret(object) { values_of_secret(object) } else { Vec::new() };
    values.extend(last_applied_values(object));
    values
}

/// The values of `data` and `stringData` of an object known to be a Secret, whatever it says
/// its kind is (the items of a `SecretList` carry none).
pub fn values_of_secret(object: &Value) -> Vec<SecretValue> {
    let mut out = Vec::new();
    for (field, encoded) in [("data", true), ("stringData", false)] {
        let Some(Value::Object(map)) = object.get(field) else { continue };
        for (key, value) in map {
            let Some(text) = value.as_str() else { continue };
            let bytes = match encoded {
                true => base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_else(|_| text.into()),
                false => text.as_bytes().to_vec(),
            };
            out.push(SecretValue { key: format!("{field}.{key}"), from_last_applied: false, bytes });
        }
    }
    out
}

/// The values of the Secret recorded in `object`'s last-applied annotation, if it is one.
fn last_applied_values(object: &Value) -> Vec<SecretValue> {
    let annotation =
        object.pointer("/metadata/annotations").and_then(|a| a.get(LAST_APPLIED_ANNOTATION)).and_then(Value::as_str);
    // Parse only annotations that can be a Secret's: a scan reads thousands of them.
    let Some(text) = annotation.filter(|t| t.contains("\"Secret\"")) else { return Vec::new() };
    match serde_json::from_str::<Value>(text) {
        Ok(applied) if is_secret(&applied) => values_of_secret(&applied)
            .into_iter()
            .map(|value| SecretValue { from_last_applied: true, ..value })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every spelling of `value` searched for in text: in clear (when it is UTF-8), in base64,
/// and each JSON-escaped once and twice and Go-escaped; none for a value shorter than
/// [`MIN_VALUE_LEN`].
///
/// ```
/// use fieldwise_core::secret_text::spellings;
///
/// assert_eq!(spellings(b"a<b>"), ["YTxiPg==", "a<b>", "a\\u003cb\\u003e"]);
/// assert!(spellings(b"on").is_empty());
/// ```
pub fn spellings(value: &[u8]) -> Vec<String> {
    if value.len() < MIN_VALUE_LEN {
        return Vec::new();
    }
    let mut forms = vec![base64::engine::general_purpose::STANDARD.encode(value)];
    if let Ok(text) = std::str::from_utf8(value) {
        forms.push(text.to_string());
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

/// `text` with every occurrence of each spelling replaced by [`MASK`], in the order given
/// (give the longest first, so a value inside a longer one's spelling is not replaced
/// first); borrowed when nothing was masked. This is the one test of "a Secret value appears
/// in this text".
///
/// ```
/// use fieldwise_core::secret_text::{mask, spellings};
///
/// assert_eq!(mask("note: v-hunter22", &spellings(b"hunter22")), "note: v-***");
/// assert_eq!(mask("password=aHVudGVyMjI=", &spellings(b"hunter22")), "password=***");
/// ```
pub fn mask<'t>(text: &'t str, spellings: &[String]) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    for spelling in spellings {
        if !spelling.is_empty() && out.contains(spelling.as_str()) {
            out = Cow::Owned(out.replace(spelling.as_str(), MASK));
        }
    }
    out
}

/// `text` with every run of at least [`MIN_FRAGMENT_LEN`] bytes that also occurs in one of
/// the spellings replaced by [`MASK`] (one mask per run, whole characters). Meant for server
/// messages, which may quote part of a value; [`mask`] first, so whole values stay `***`.
///
/// ```
/// use fieldwise_core::secret_text::{mask_fragments, spellings};
///
/// let message = "denied: the password starts with 0f3a9c2d7b1e";
/// assert_eq!(mask_fragments(message, &spellings(b"0f3a9c2d7b1e4f5a6b7c")), "denied: the password starts with ***");
/// ```
pub fn mask_fragments<'t>(text: &'t str, spellings: &[String]) -> Cow<'t, str> {
    let bytes = text.as_bytes();
    if bytes.len() < MIN_FRAGMENT_LEN {
        return Cow::Borrowed(text);
    }
    // The text's windows, found in each spelling's windows: linear in the spellings' length.
    let windows: HashSet<&[u8]> = bytes.windows(MIN_FRAGMENT_LEN).collect();
    let mut masked = vec![false; bytes.len()];
    let mut any = false;
    for spelling in spellings {
        for window in spelling.as_bytes().windows(MIN_FRAGMENT_LEN).filter(|w| windows.contains(w)) {
            for (at, _) in bytes.windows(MIN_FRAGMENT_LEN).enumerate().filter(|(_, w)| *w == window) {
                masked[at..at + MIN_FRAGMENT_LEN].iter_mut().for_each(|m| *m = true);
                any = true;
            }
        }
    }
    if !any {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for (at, c) in text.char_indices() {
        if masked[at..at + c.len_utf8()].iter().any(|&m| m) {
            if !in_run {
                out.push_str(MASK);
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_come_from_data_string_data_and_the_last_applied_annotation() {
        let applied = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "b2xkLXZhbHVl"}}).to_string();
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"annotations": {LAST_APPLIED_ANNOTATION: applied}},
            "data": {"pw": "bmV3LXZhbHVl"}, "stringData": {"token": "tok-123"}});
        let found: Vec<(String, bool, Vec<u8>)> =
            values_of(&secret).into_iter().map(|v| (v.key, v.from_last_applied, v.bytes)).collect();
        assert_eq!(
            found,
            [
                ("data.pw".to_string(), false, b"new-value".to_vec()),
                ("stringData.token".to_string(), false, b"tok-123".to_vec()),
                ("data.pw".to_string(), true, b"old-value".to_vec()),
            ]
        );
        // A ConfigMap's data is not secret; a SecretList item (no kind) is read as a Secret when asked.
        assert!(values_of(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"pw": "value"}})).is_empty());
        assert_eq!(values_of_secret(&json!({"data": {"pw": "dmFsdWU="}}))[0].bytes, b"value");
    }

    #[test]
    fn a_value_is_masked_inside_longer_text_in_every_spelling_unless_too_short() {
        let s = spellings(b"s3cr3t-<x>");
        for (text, masked) in [
            ("v-s3cr3t-<x>", "v-***"),
            ("prefix-s3cr3t-<x>-suffix", "prefix-***-suffix"),
            ("password=czNjcjN0LTx4Pg==", "password=***"),
            (r#"{"note":"s3cr3t-\u003cx\u003e"}"#, r#"{"note":"***"}"#),
            ("nothing here", "nothing here"),
        ] {
            assert_eq!(mask(text, &s), masked, "{text}");
        }
        assert!(matches!(mask("nothing", &s), Cow::Borrowed(_)));
        // The one length rule: three bytes are never searched for, four are.
        assert!(spellings(b"abc").is_empty());
        assert_eq!(mask("x-abcd", &spellings(b"abcd")), "x-***");
    }

    #[test]
    fn fragments_of_at_least_the_minimum_length_are_masked() {
        let s = spellings(b"frag0123456789abcdef");
        assert_eq!(mask_fragments("refused for frag01234567: no", &s), "refused for ***: no");
        assert_eq!(mask_fragments("tail 6789abcdef and head frag0123", &s), "tail *** and head ***");
        // Seven characters are not enough, and other text is left alone.
        assert_eq!(mask_fragments("refused for frag012: no", &s), "refused for frag012: no");
        // Base64 fragments too; multi-byte characters are masked whole.
        let b64 = base64::engine::general_purpose::STANDARD.encode("frag0123456789abcdef");
        assert_eq!(mask_fragments(&format!("é{}é", &b64[..10]), &s), "é***é");
    }
}
