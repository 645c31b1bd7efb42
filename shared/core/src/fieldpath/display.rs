//! Human-readable text for path elements, exactly as upstream prints them.
//!
//! The apiserver puts `Path.String()` in the `field` of each 409 conflict
//! cause (`.spec.template.spec.containers[name="app"].image`), so the text of
//! keys and values follows Go's `fmt`: strings quoted with `%q`, numbers with
//! `%v` (floats decoded from FieldsV1 print as `80`, or `1e+06`).

use std::fmt::{self, Write as _};

use crate::go_format;

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
        Value::String(s) => go_format::fmt::quote(s),
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
        Some(x) => go_format::fmt::float_g(x),
        None => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
