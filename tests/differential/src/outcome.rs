//! What an engine answered for a case, and whether two answers agree.

use serde_json::Value;

/// One engine's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Accepted, with the resulting document, patch or FieldsV1 text.
    Accepted(Value),
    /// Rejected, with the error text (texts are never compared).
    Rejected(String),
    /// The Rust engine panicked: always a bug, whatever upstream says.
    Panicked(String),
}

/// How accepted results are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// As JSON values: key order ignored, numbers compared by value.
    Json,
    /// Results are texts compared byte for byte (FieldsV1 round trips).
    Bytes,
    /// Results are texts of JSON, compared as JSON values.
    JsonText,
}

/// How two answers relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Same decision and, when accepted, the same result.
    Identical,
    /// Both accepted, with different results.
    DifferentResult,
    /// One accepted and the other rejected, or the Rust engine panicked.
    DifferentDecision,
}

/// Reads the oracle's answer line. `Err` means the oracle could not use the
/// case at all (a generator or harness bug, never an engine verdict).
pub fn from_oracle(answer: &Value) -> Result<Outcome, String> {
    if answer.get("bad_case").and_then(Value::as_bool) == Some(true) {
        return Err(answer.get("error").and_then(Value::as_str).unwrap_or("bad case").to_string());
    }
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        // An upstream panic is recovered by the apiserver and answered as an error.
        return Ok(Outcome::Rejected(error.to_string()));
    }
    for field in ["result", "encoded", "fieldsV1"] {
        if let Some(value) = answer.get(field) {
            return Ok(Outcome::Accepted(value.clone()));
        }
    }
    Err(format!("oracle answer has neither result nor error: {answer}"))
}

/// Compares the Rust answer with upstream's.
pub fn judge(rust: &Outcome, upstream: &Outcome, compare: Compare) -> Verdict {
    match (rust, upstream) {
        (Outcome::Panicked(_), _) => Verdict::DifferentDecision,
        (Outcome::Rejected(_), Outcome::Rejected(_)) => Verdict::Identical,
        (Outcome::Accepted(a), Outcome::Accepted(b)) => {
            if same_result(a, b, compare) {
                Verdict::Identical
            } else {
                Verdict::DifferentResult
            }
        }
        _ => Verdict::DifferentDecision,
    }
}

fn same_result(a: &Value, b: &Value, compare: Compare) -> bool {
    match compare {
        Compare::Json => same_json(a, b),
        Compare::Bytes => a == b,
        Compare::JsonText => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => match (serde_json::from_str::<Value>(x), serde_json::from_str::<Value>(y)) {
                (Ok(x), Ok(y)) => same_json(&x, &y),
                _ => x == y,
            },
            _ => same_json(a, b),
        },
    }
}

/// JSON equality: objects ignore key order; numbers are equal when they are
/// the same integer, or otherwise the same float64 (Go decodes numbers into
/// float64 in several engines, so `1.0` and `1` are one value there).
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                return x == y;
            }
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert!(same_json(&json!({"a": 1.0, "b": [2]}), &json!({"b": [2], "a": 1})));
        assert!(!same_json(&json!(9007199254740993_i64), &json!(9007199254740992_i64)));
        assert!(!same_json(&json!([1, 2]), &json!([2, 1])));
    }

    #[test]
    fn oracle_answers_read() {
        assert_eq!(from_oracle(&json!({"result": {"a": 1}})), Ok(Outcome::Accepted(json!({"a": 1}))));
        assert_eq!(from_oracle(&json!({"error": "x"})), Ok(Outcome::Rejected("x".into())));
        assert!(from_oracle(&json!({"error": "x", "bad_case": true})).is_err());
        assert_eq!(from_oracle(&json!({"encoded": "{}"})), Ok(Outcome::Accepted(json!("{}"))));
    }

    #[test]
    fn verdicts() {
        let ok = Outcome::Accepted(json!(1));
        let no = Outcome::Rejected("e".into());
        assert_eq!(judge(&no, &Outcome::Rejected("other".into()), Compare::Json), Verdict::Identical);
        assert_eq!(judge(&ok, &no, Compare::Json), Verdict::DifferentDecision);
        assert_eq!(judge(&ok, &Outcome::Accepted(json!(2)), Compare::Json), Verdict::DifferentResult);
        assert_eq!(judge(&Outcome::Panicked("p".into()), &no, Compare::Json), Verdict::DifferentDecision);
        let text = |s: &str| Outcome::Accepted(json!(s));
        assert_eq!(judge(&text(r#"{"a":1}"#), &text(r#"{ "a": 1 }"#), Compare::JsonText), Verdict::Identical);
        assert_eq!(judge(&text(r#"{"a":1}"#), &text(r#"{ "a": 1 }"#), Compare::Bytes), Verdict::DifferentResult);
    }
}
