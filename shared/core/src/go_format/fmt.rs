//! Text as Go's `fmt` and `strconv` write it: quoted strings (`%q`) and floats in the
//! shortest `'g'` form (`%v`). Upstream puts them in the messages users read (a conflict's
//! field path, `conflict with "kubectl"`) and sigs.k8s.io/yaml in map keys, so the text
//! must be Go's to the byte.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Number, Value};

/// Go's `strconv.Quote`: double quotes, backslash escapes for quotes, backslashes and non-printables.
pub(crate) fn quote(s: &str) -> String {
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

/// [`v`], borrowing the text of a string (its own `%v`).
pub(crate) fn text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(v(other)),
    }
}

/// `fmt.Sprintf("%v", value)` of a value decoded into `interface{}`: `<nil>`, `map[a:1 b:[x y]]`;
/// upstream compares list elements and merge keys by it, and its errors quote it.
pub(crate) fn v(value: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, value);
    out
}

fn write_v(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                if let Some(item) = map.get(key) {
                    write_v(out, item);
                }
            }
            out.push(']');
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&float_g(f));
    }
}

/// Go's `%v` of a `float64` (`strconv.FormatFloat(x, 'g', -1, 64)`): `80`, `1.5`, `1e+06`.
pub(crate) fn float_g(x: f64) -> String {
    shortest_g(x.is_sign_negative(), x == 0.0, &format!("{:e}", x.abs()))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` of a finite `float32`.
pub(crate) fn float32_g(f: f32) -> String {
    shortest_g(f.is_sign_negative(), f == 0.0, &format!("{:e}", f.abs()))
}

/// The `'g'` form at shortest precision from Rust's `{:e}` of the absolute value (the
/// shortest digits that read back as the same value of its width): exponent form when the
/// exponent is below -4 or from 6 on (`1e+06`, `1e-05`), positional otherwise.
fn shortest_g(negative: bool, zero: bool, scientific: &str) -> String {
    let sign = if negative { "-" } else { "" };
    if zero {
        return format!("{sign}0");
    }
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{point}e{exp_sign}{:02}", exponent.abs());
    }
    let point = exponent + 1; // digits before the decimal point
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{sign}{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        format!("{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go_percent_v() {
        assert_eq!(float_g(80.0), "80");
        assert_eq!(float_g(1.5), "1.5");
        assert_eq!(float_g(1e6), "1e+06");
        assert_eq!(float_g(123456.0), "123456");
        assert_eq!(float_g(0.0001), "0.0001");
        assert_eq!(float_g(0.00001), "1e-05");
        assert_eq!(float_g(-2.5e21), "-2.5e+21");
        assert_eq!(float_g(123456789.0), "1.23456789e+08");
        assert_eq!(float_g(-0.0), "-0");
        assert_eq!(float_g(0.1 + 0.2), "0.30000000000000004");
    }

    #[test]
    fn formats_like_go_percent_v() {
        assert_eq!(v(&json!("a")), "a");
        assert_eq!(v(&json!(80)), "80");
        assert_eq!(v(&json!(-3)), "-3");
        assert_eq!(v(&json!(1.5)), "1.5");
        assert_eq!(v(&json!(100.0)), "100");
        assert_eq!(v(&json!(1000000.0)), "1e+06");
        assert_eq!(v(&json!(123456789.0)), "1.23456789e+08");
        assert_eq!(v(&json!(0.0001)), "0.0001");
        assert_eq!(v(&json!(0.00001)), "1e-05");
        assert_eq!(v(&json!(null)), "<nil>");
        assert_eq!(v(&json!({"b": 1, "a": [true, "x"]})), "map[a:[true x] b:1]");
    }

    #[test]
    fn float32s_print_at_their_own_precision() {
        assert_eq!(float32_g(1.5), "1.5");
        assert_eq!(float32_g(1_000_000.0), "1e+06");
        assert_eq!(float32_g(123_456.0), "123456");
        assert_eq!(float32_g(1.234_567_891_2_f64 as f32), "1.2345679");
        assert_eq!(float32_g(-0.0), "-0");
        assert_eq!(float32_g(0.00001), "1e-05");
    }

    #[test]
    fn strings_quote_like_strconv_quote() {
        assert_eq!(quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(quote("\u{7f}\u{0}"), "\"\\x7f\\x00\"");
    }
}
