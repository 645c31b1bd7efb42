//! Human-readable text for path elements, exactly as upstream prints them.
//!
//! The apiserver puts `Path.String()` in the `field` of each 409 conflict
//! cause (`.spec.template.spec.containers[name="app"].image`), so the text of
//! keys and values follows Go's `fmt`: strings quoted with `%q`, numbers with
//! `%v` (floats decoded from FieldsV1 print as `80`, or `1e+06`).

use std::fmt::{self, Write as _};

use serde_json::{Number, Value};

use super::element::PathElement;

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(key) => {
                f.write_char('[')?;
                for (i, (name, value)) in key.fields().iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    write!(f, "{name}={}", go_value_string(value))?;
                }
                f.write_char(']')
            }
            PathElement::Value(value) => write!(f, "[={}]", go_value_string(value)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Upstream's `value.ToString`: Go `%q` for strings, `%v` for numbers and booleans.
pub(crate) fn go_value_string(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_number_v(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_value_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.iter().map(|k| format!("{k}={}", go_value_string(&map[k.as_str()]))).collect()
        }
    }
}

/// Go's `%v` for a number: integers as digits, floats with `%g` at shortest precision.
fn go_number_v(n: &Number) -> String {
    match n.as_f64().filter(|_| n.is_f64()) {
        Some(x) => go_float_g(x),
        None => n.to_string(),
    }
}

/// Go's `%v` for a float (`'g'` at shortest precision): exponent form when the exponent is < -4 or >= 6.
pub(crate) fn go_float_g(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{x}")
    }
}

/// Go's `strconv.Quote`: double quotes, backslash escapes for quotes, backslashes and non-printables.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                if (c as u32) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go_percent_v() {
        assert_eq!(go_float_g(80.0), "80");
        assert_eq!(go_float_g(1.5), "1.5");
        assert_eq!(go_float_g(1e6), "1e+06");
        assert_eq!(go_float_g(123456.0), "123456");
        assert_eq!(go_float_g(0.0001), "0.0001");
        assert_eq!(go_float_g(0.00001), "1e-05");
        assert_eq!(go_float_g(-2.5e21), "-2.5e+21");
        assert_eq!(go_float_g(123456789.0), "1.23456789e+08");
    }

    #[test]
    fn values_print_like_upstream_to_string() {
        assert_eq!(go_value_string(&json!("a\"b\n")), "\"a\\\"b\\n\"");
        assert_eq!(go_value_string(&json!(80)), "80");
        assert_eq!(go_value_string(&Value::from(1e6)), "1e+06");
        assert_eq!(go_value_string(&json!(true)), "true");
        assert_eq!(go_value_string(&json!(null)), "null");
        assert_eq!(go_value_string(&json!([1, "x"])), "[1,\"x\"]");
    }
}
