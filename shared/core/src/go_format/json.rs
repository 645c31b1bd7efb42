//! JSON text exactly as the apiserver's Go encoders write it, and numbers as Go's
//! `encoding/json` hands them back.
//!
//! FieldsV1 keys embed JSON (`k:{"name":"a"}`, `v:"x"`) and kubectl's last-applied
//! annotation is Go's JSON, so byte-exact encoding needs Go's rules, which differ from
//! serde_json's: `<`, `>`, `&`, U+2028 and U+2029 are escaped as `\u003c`…, map keys are
//! sorted, and floats are written by json-iterator (`80`, `1.5`, `1e+21`, `1e-7`).

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// Appends `value` as compact JSON, as json-iterator's standard-library-compatible config writes it.
pub(crate) fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s, true),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key, true);
                out.push(':');
                write_value(out, &map[key.as_str()]);
            }
            out.push('}');
        }
    }
}

/// Integers as digits; floats as json-iterator's `WriteFloat64`.
fn write_number(out: &mut String, n: &Number) {
    match n.as_f64().filter(|_| n.is_f64()) {
        Some(x) => out.push_str(&jsoniter_float(x)),
        None => {
            let _ = write!(out, "{n}");
        }
    }
}

/// json-iterator's `WriteFloat64`: shortest digits, `'e'` form below 1e-6 and from 1e21, `e-07` trimmed to `e-7`.
pub(crate) fn jsoniter_float(x: f64) -> String {
    let abs = x.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let sci = format!("{x:e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        if exp < 0 {
            format!("{mantissa}e-{}", -exp)
        } else {
            format!("{mantissa}e+{exp:02}")
        }
    } else {
        format!("{x}")
    }
}

/// Appends a quoted string. `html` selects json-iterator's HTML-safe escaping (used for
/// values); without it only quotes, backslashes and control characters are escaped (used
/// for object keys written with `WriteObjectField`).
pub(crate) fn write_string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A `float64` as upstream hands it on after `encoding/json` wrote it, read back as
/// serde_json reads that text: an integral value under 1e21 is written without a point
/// and so becomes a JSON integer (`1000`, not `1000.0`). `None` for NaN and infinities,
/// which Go refuses to write.
pub(crate) fn float_value(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Rust's shortest digits padded with zeros are Go's 'f' format.
        return serde_json::from_str(&format!("{f}")).ok();
    }
    Number::from_f64(f).map(Value::Number)
}

/// `value` as compact Go JSON text.
pub(crate) fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_like_go() {
        assert_eq!(to_string(&json!({"b": 1, "a": "<&>"})), r#"{"a":"\u003c\u0026\u003e","b":1}"#);
        assert_eq!(to_string(&Value::from(80.0)), "80");
        assert_eq!(to_string(&Value::from(1.5)), "1.5");
        assert_eq!(to_string(&Value::from(1e21)), "1e+21");
        assert_eq!(to_string(&Value::from(1.5e-7)), "1.5e-7");
        assert_eq!(to_string(&json!("a\u{1}\"\\")), r#""a\u0001\"\\""#);
    }

    #[test]
    fn floats_come_back_as_go_wrote_them() {
        assert_eq!(float_value(1000.0), Some(Value::from(1000u64)));
        assert_eq!(float_value(-3.0), Some(Value::from(-3i64)));
        assert_eq!(float_value(1.5), Some(Value::from(1.5)));
        assert_eq!(float_value(1e21), Some(Value::from(1e21)));
        assert_eq!(float_value(9_223_372_036_854_775_808.0), Some(json!(9223372036854776000u64)));
        assert_eq!(float_value(f64::INFINITY), None);
    }
}
