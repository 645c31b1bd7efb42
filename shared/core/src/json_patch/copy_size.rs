//! How many bytes a `copy` adds, as the apiserver counts them.
//!
//! The apiserver caps the total size of the values that the `copy` operations
//! of one patch duplicate (`--json-patch-max-copy-bytes`, 3 MiB by default),
//! which stops a small patch from growing an object exponentially. It counts
//! the length of the value encoded by Go's `encoding/json`: compact, with `<`,
//! `>`, `&`, U+2028 and U+2029 escaped as `\u00XX`. This module computes that
//! length without building the text.
//!
//! Numbers are counted as serde_json writes them; Go writes the copied text as
//! it was received, which differs only for unusual spellings (`1E2`, `1.50`).

use serde_json::Value;

/// Length in bytes of `value` encoded the way Go's `json.Marshal` encodes it. A null copies as 0 bytes upstream.
pub(crate) fn copied_bytes(value: &Value) -> u64 {
    if value.is_null() {
        0
    } else {
        encoded_len(value)
    }
}

fn encoded_len(value: &Value) -> u64 {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => n.to_string().len() as u64,
        Value::String(s) => string_len(s),
        Value::Array(items) => 2 + items.iter().map(encoded_len).sum::<u64>() + items.len().saturating_sub(1) as u64,
        Value::Object(members) => {
            let entries: u64 = members.iter().map(|(k, v)| string_len(k) + 1 + encoded_len(v)).sum();
            2 + entries + members.len().saturating_sub(1) as u64
        }
    }
}

fn string_len(s: &str) -> u64 {
    let body: u64 = s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => 6,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8() as u64,
        })
        .sum();
    2 + body
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_compact_encoding() {
        for v in [json!({"a": [1, true, null, "x"], "b": {}}), json!("plain"), json!([]), json!(-1.5)] {
            assert_eq!(copied_bytes(&v), v.to_string().len() as u64, "{v}");
        }
    }

    #[test]
    fn html_characters_count_escaped() {
        assert_eq!(copied_bytes(&json!("<a&b>")), 2 + 6 * 3 + 2);
        assert_eq!(copied_bytes(&json!("\u{1}")), 8);
        assert_eq!(copied_bytes(&Value::Null), 0);
    }
}
