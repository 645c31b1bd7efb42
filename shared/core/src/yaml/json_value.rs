//! One JSON value decoded without recursion, for the JSON documents of a
//! stream.
//!
//! Why not `serde_json::from_str`: it recurses once per nesting level, and a
//! document 1,000 levels deep (which the reader accepts) overflows a 2 MiB
//! thread stack in a debug build. Strings and numbers are still decoded by
//! serde_json, from their exact text, so every leaf is what it would give.

use serde_json::{Map, Value};

/// Why a text is not one JSON value: the byte it fails at and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JsonError {
    pub at: usize,
    pub problem: String,
    /// False for a number out of range: valid JSON to kubectl's stream
    /// decoder, which fails only later, on the object.
    pub syntax: bool,
}

/// A container being filled, innermost last.
enum Open {
    Array(Vec<Value>),
    /// The object so far and the key whose value comes next.
    Object(Map<String, Value>, Option<String>),
}

/// Decodes `text` (one value, whitespace around it allowed), refusing
/// containers nested deeper than `max_depth`.
pub(super) fn parse(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    let mut p = Cursor { text, b: text.as_bytes(), i: 0, out_of_range: None };
    let mut open: Vec<Open> = Vec::new();
    let value = 'done: loop {
        // Here a value is expected.
        p.skip_ws();
        let mut value = match p.peek() {
            Some(b'{') | Some(b'[') => {
                if open.len() >= max_depth {
                    return Err(p.error(&format!("JSON is nested more than {max_depth} levels deep")));
                }
                let object = p.peek() == Some(b'{');
                p.i += 1;
                p.skip_ws();
                if object && p.peek() == Some(b'}') || !object && p.peek() == Some(b']') {
                    p.i += 1;
                    if object {
                        Value::Object(Map::new())
                    } else {
                        Value::Array(Vec::new())
                    }
                } else if object {
                    let key = p.key()?;
                    open.push(Open::Object(Map::new(), Some(key)));
                    continue;
                } else {
                    open.push(Open::Array(Vec::new()));
                    continue;
                }
            }
            _ => p.leaf()?,
        };
        // A value is complete: put it in its container, and close what ends.
        loop {
            match open.last_mut() {
                None => break 'done value,
                Some(Open::Array(items)) => {
                    items.push(value);
                    p.skip_ws();
                    match p.next() {
                        Some(b',') => continue 'done,
                        Some(b']') => {}
                        _ => return Err(p.error_before("expected ',' or ']' after an array element")),
                    }
                }
                Some(Open::Object(map, key)) => {
                    map.insert(key.take().unwrap_or_default(), value);
                    p.skip_ws();
                    match p.next() {
                        Some(b',') => {
                            p.skip_ws();
                            *key = Some(p.key()?);
                            continue 'done;
                        }
                        Some(b'}') => {}
                        _ => return Err(p.error_before("expected ',' or '}' after an object entry")),
                    }
                }
            }
            value = match open.pop() {
                Some(Open::Array(items)) => Value::Array(items),
                Some(Open::Object(map, _)) => Value::Object(map),
                None => return Err(p.error("unbalanced JSON")),
            };
        }
    };
    p.skip_ws();
    if p.i != text.len() {
        return Err(p.error("invalid character after the JSON value"));
    }
    // Syntax first, as Go's decoder checks it; then the numbers no f64 holds.
    match p.out_of_range {
        Some(error) => Err(error),
        None => Ok(value),
    }
}

struct Cursor<'t> {
    text: &'t str,
    b: &'t [u8],
    i: usize,
    /// The first number too large for an f64, reported if the syntax holds.
    out_of_range: Option<JsonError>,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn error(&self, problem: &str) -> JsonError {
        JsonError { at: self.i, problem: problem.to_string(), syntax: true }
    }

    fn error_before(&self, problem: &str) -> JsonError {
        JsonError { at: self.i.saturating_sub(1), problem: problem.to_string(), syntax: true }
    }

    /// An object key and its `:`.
    fn key(&mut self) -> Result<String, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string key"));
        }
        let Value::String(key) = self.leaf()? else { return Err(self.error("expected a string key")) };
        self.skip_ws();
        if self.next() != Some(b':') {
            return Err(self.error_before("expected ':' after an object key"));
        }
        Ok(key)
    }

    /// A string, number, `true`, `false` or `null`, decoded by serde_json.
    fn leaf(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                loop {
                    match self.next() {
                        Some(b'\\') => self.i += 1,
                        Some(b'"') => break,
                        Some(_) => {}
                        None => return Err(self.error("unexpected end of JSON input in a string")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
                while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')) {
                    self.i += 1;
                }
            }
            None => return Err(self.error("unexpected end of JSON input")),
            Some(_) => return Err(self.error("invalid character looking for the beginning of a value")),
        }
        let leaf = self.text.get(start..self.i).unwrap_or_default();
        match serde_json::from_str(leaf) {
            Ok(value) => Ok(value),
            Err(e) if super::frame::is_json_number(leaf) => {
                self.out_of_range.get_or_insert(JsonError { at: start, problem: e.to_string(), syntax: false });
                Ok(Value::Null)
            }
            Err(e) => Err(JsonError { at: start, problem: e.to_string(), syntax: true }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_serde_jsons() {
        for text in
            [r#"{"a": [1, 2.5, -0, 1e400, "x\"\u00e9", true, null, {}], "b": {"c": []}, "a": 3}"#, "[]", " 7 ", "\"s\""]
        {
            let ours = parse(text, 10);
            let serde: Result<Value, _> = serde_json::from_str(text);
            match serde {
                Ok(v) => assert_eq!(ours, Ok(v), "{text}"),
                Err(_) => assert!(ours.is_err(), "{text}"),
            }
        }
        assert_eq!(parse(r#"{"a": 1, "a": 2}"#, 10), Ok(json!({"a": 2})));
    }

    #[test]
    fn bad_json_is_refused_where_it_breaks() {
        for (text, at) in [
            ("{\"a\" 1}", 5),
            ("[1 2]", 3),
            ("[1,]", 3),
            ("{\"a\":1,}", 7),
            ("{1:2}", 1),
            ("[tru]", 1),
            ("[1] x", 4),
            ("[\"x", 3),
        ] {
            assert_eq!(parse(text, 10).map_err(|e| e.at), Err(at), "{text}");
        }
        assert!(parse(&"[".repeat(11), 10).unwrap_err().problem.contains("nested more than 10"));
        assert!(!parse("[1e400]", 10).unwrap_err().syntax);
        assert!(parse("[1e4x]", 10).unwrap_err().syntax);
        assert!(parse("[1e400, ~]", 10).unwrap_err().syntax);
    }

    #[test]
    fn deep_values_need_no_stack() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let value = parse(&deep, 100_000).unwrap();
        // Dropping is recursive in serde_json; unwind it here by hand.
        let mut value = value;
        while let Value::Array(mut items) = value {
            value = items.pop().unwrap_or(Value::Null);
        }
    }
}
