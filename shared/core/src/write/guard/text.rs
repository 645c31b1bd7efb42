//! Which values the apiserver's `test` compares as we do.
//!
//! The apiserver applies a JSON Patch to its own JSON text of the object and
//! compares a `test` value with what it finds there by their compact JSON
//! text (evanphx/json-patch v4, `lazyNode.equal`), not by their meaning. Its
//! encoder escapes `<`, `>`, `&`, U+2028 and U+2029 (`\u0026`), and writes some
//! floats in another form than serde_json (`100000000000000000000`, not `1e+20`); a `test` we
//! write with such a value never passes, whatever the object holds. A list
//! holding `null` never passes either (upstream dereferences the nil element).
//! A change whose guard would need such a value is guarded by the whole
//! object's resourceVersion instead.

use serde_json::Value;

use crate::go_format::json::jsoniter_float as go_float;

/// Why the apiserver cannot be trusted to compare `value` as written: `None` when it can.
pub(super) fn untestable(value: &Value) -> Option<&'static str> {
    match value {
        Value::String(s) => {
            if s.chars().any(|c| matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}')) {
                Some("it holds <, > or &, which the apiserver's JSON escapes")
            } else if s.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
                Some("it holds control characters, which JSON encoders escape differently")
            } else {
                None
            }
        }
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()) {
            Some(x) if n.to_string() != go_float(x) => Some("a number the apiserver writes in another form"),
            _ => None,
        },
        Value::Array(items) => {
            if items.iter().any(Value::is_null) {
                Some("a list holding null, which the apiserver cannot compare")
            } else {
                items.iter().find_map(untestable)
            }
        }
        Value::Object(members) => members.values().find_map(untestable),
        Value::Null | Value::Bool(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_values_are_testable_and_escaped_or_reformatted_ones_are_not() {
        for ok in [
            json!("nginx:1.27"),
            json!("a\nb\"c\\é"),
            json!(80),
            json!(1.5),
            json!(-3),
            json!({"a": [1, "x"]}),
            json!(null),
        ] {
            assert_eq!(untestable(&ok), None, "{ok}");
        }
        for bad in [
            json!("a&b"),
            json!("<x>"),
            json!("a\u{2028}"),
            json!("\u{8}"),
            json!(1e20),
            json!(-0.0),
            json!(100.0),
            json!([1, null]),
        ] {
            assert!(untestable(&bad).is_some(), "{bad}");
        }
        assert!(untestable(&json!({"k": {"url": "https://x/?a=1&b=2"}})).is_some(), "found deep inside");
        assert_eq!(untestable(&json!({"a&b": 1})), None, "member names are compared decoded");
    }
}
