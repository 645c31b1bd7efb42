//! FieldsV1 text read exactly as upstream's `Set.FromJSON` reads it.
//!
//! Upstream streams the text through json-iterator instead of building a JSON
//! value first, and that shows: duplicate keys are all read (members are
//! merged, a later subtree replaces an earlier one), keys of unknown kinds are
//! skipped with their values, the value of `"."` is skipped whatever it is, and
//! nothing after the top-level object is looked at. This reader does the same
//! on bytes, with an explicit stack so that deep documents cannot overflow ours.

use serde_json::Value;

use super::super::element::{KeyFields, PathElement};
use super::super::set::Set;
use super::{floats, quote, FieldsV1Error, PathElementError};

/// json-iterator's nesting limit (objects and arrays, counted together).
const MAX_DEPTH: usize = 10_000;

/// Reads a FieldsV1 text. `strict` makes keys of unknown kinds errors.
pub(super) fn read(text: &str, strict: bool) -> Result<Set, FieldsV1Error> {
    let mut cursor = Cursor { bytes: text.as_bytes(), pos: 0, depth: 0 };
    match cursor.next_token() {
        Some(b'{') => {}
        Some(b'n') => {
            cursor.literal(b"ull").map_err(|reason| fail(&[], reason))?;
            return Ok(Set::new());
        }
        other => return Err(fail(&[], format!("expected an object, found {}", describe(other)))),
    }
    cursor.enter().map_err(|reason| fail(&[], reason))?;
    let mut stack = vec![Node::default()];
    let mut keys: Vec<String> = Vec::new();
    let mut first = true;
    loop {
        // At the start of an object's entries (`first`) or after one.
        let token = cursor.next_token();
        let at_key = match (first, token) {
            (true, Some(b'"')) | (false, Some(b',')) => true,
            (_, Some(b'}')) => false,
            (true, other) => return Err(fail(&keys, format!("expected a key or }}, found {}", describe(other)))),
            (false, other) => return Err(fail(&keys, format!("expected , or }}, found {}", describe(other)))),
        };
        first = false;
        if !at_key {
            cursor.depth -= 1;
            let Some(done) = stack.pop() else { return Err(fail(&keys, "unbalanced object".into())) };
            let (set, member) = done.finish();
            match stack.last_mut() {
                None => return Ok(set),
                Some(parent) => {
                    let pe = parent.open.take().ok_or_else(|| fail(&keys, "unbalanced object".into()))?;
                    parent.record(pe, set, member);
                    keys.pop();
                }
            }
            continue;
        }
        if token == Some(b',') && cursor.next_token() != Some(b'"') {
            return Err(fail(&keys, "expected a key after ,".into()));
        }
        let key = cursor.string().map_err(|reason| fail(&keys, reason))?;
        if cursor.next_token() != Some(b':') {
            return Err(fail(&keys, format!("expected : after key {}", quote(&key))));
        }
        let node = stack.last_mut().ok_or_else(|| fail(&keys, "unbalanced object".into()))?;
        if key == "." {
            node.member = true;
            cursor.skip_value().map_err(|reason| fail(&keys, reason))?;
            continue;
        }
        let pe = match super::parse_path_element(&key) {
            Ok(pe) => pe,
            Err(PathElementError::UnknownKind) if !strict => {
                cursor.skip_value().map_err(|reason| fail(&keys, reason))?;
                continue;
            }
            Err(PathElementError::UnknownKind) => {
                return Err(fail(&keys, format!("unknown path element {}", quote(&key))));
            }
            Err(PathElementError::Invalid(why)) => {
                return Err(fail(&keys, format!("invalid path element {}: {why}", quote(&key))));
            }
        };
        match cursor.next_token() {
            Some(b'{') => {
                cursor.enter().map_err(|reason| fail(&keys, reason))?;
                node.open = Some(pe);
                keys.push(key);
                stack.push(Node::default());
                first = true;
            }
            Some(b'n') => {
                cursor.literal(b"ull").map_err(|reason| fail(&keys, reason))?;
                node.record(pe, Set::new(), true);
            }
            other => {
                keys.push(key);
                return Err(fail(&keys, format!("expected an object, found {}", describe(other))));
            }
        }
    }
}

/// An object being read: what is under it so far, and whether `"."` was seen.
#[derive(Default)]
struct Node {
    set: Set,
    member: bool,
    /// The element whose object is being read below this one.
    open: Option<PathElement>,
}

impl Node {
    /// The subset under this node, and whether the node itself is a member:
    /// marked with `"."`, or nothing below it (`{}`).
    fn finish(self) -> (Set, bool) {
        let member = self.member || self.set.is_empty();
        (self.set, member)
    }

    /// Records a child: upstream merges members and replaces subtrees.
    fn record(&mut self, pe: PathElement, subset: Set, member: bool) {
        match (member, subset.is_empty()) {
            (true, false) => {
                self.set.insert_member(pe.clone());
                self.set.set_child(pe, subset);
            }
            (true, true) => self.set.insert_member(pe),
            (false, false) => self.set.set_child(pe, subset),
            (false, true) => {}
        }
    }
}

fn fail(keys: &[String], reason: String) -> FieldsV1Error {
    FieldsV1Error { at: keys.join("."), reason }
}

fn describe(token: Option<u8>) -> String {
    match token {
        None => "the end of the text".into(),
        Some(b) if b.is_ascii_graphic() => format!("{:?}", b as char),
        Some(b) => format!("byte {b:#04x}"),
    }
}

/// Bytes read as json-iterator reads them.
pub(super) struct Cursor<'t> {
    bytes: &'t [u8],
    pos: usize,
    depth: usize,
}

impl<'t> Cursor<'t> {
    /// A cursor over one embedded JSON text (its own nesting count, as upstream borrows a fresh iterator).
    pub(super) fn new(text: &'t str) -> Self {
        Cursor { bytes: text.as_bytes(), pos: 0, depth: 0 }
    }

    /// The next byte that is not JSON whitespace, consumed.
    pub(super) fn next_token(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
        }
        None
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    fn literal(&mut self, rest: &[u8]) -> Result<(), String> {
        if self.bytes.get(self.pos..self.pos + rest.len()) == Some(rest) {
            self.pos += rest.len();
            Ok(())
        } else {
            Err("invalid literal".into())
        }
    }

    /// A string whose opening quote was just consumed, decoded as json-iterator
    /// decodes it (a lone surrogate escape becomes U+FFFD).
    pub(super) fn string(&mut self) -> Result<String, String> {
        // Most strings have no escape: copy them in one piece.
        let rest = &self.bytes[self.pos..];
        if let Some(end) = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < b' ') {
            if rest[end] == b'"' {
                let text = std::str::from_utf8(&rest[..end]).map_err(|_| "invalid UTF-8 in string".to_string())?;
                self.pos += end + 1;
                return Ok(text.to_string());
            }
        }
        let mut out: Vec<u8> = Vec::new();
        let mut escaped = false;
        loop {
            let Some(&b) = self.bytes.get(self.pos) else { return Err("unterminated string".into()) };
            self.pos += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|_| "invalid UTF-8 in string".to_string()),
                b'\\' => {
                    escaped = true;
                    self.escape(&mut out)?;
                }
                // Only the fast path (no escape yet) rejects raw control characters.
                b if b < b' ' && !escaped => return Err(format!("invalid control character {b} in string")),
                b => out.push(b),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let Some(&c) = self.bytes.get(self.pos) else { return Err("unterminated escape".into()) };
        self.pos += 1;
        let simple = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => return self.unicode_escape(out),
            _ => return Err("invalid escape character after \\".into()),
        };
        out.push(simple);
        Ok(())
    }

    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let first = self.hex4()?;
        if !(0xD800..0xE000).contains(&first) {
            push_char(out, first);
            return Ok(());
        }
        // A surrogate: combined with a following `\uXXXX` when that forms a pair.
        if self.bytes.get(self.pos) != Some(&b'\\') {
            push_char(out, first);
            return Ok(());
        }
        if self.bytes.get(self.pos + 1) != Some(&b'u') {
            push_char(out, first);
            self.pos += 1;
            return self.escape(out);
        }
        self.pos += 2;
        let second = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) && (0xDC00..0xE000).contains(&second) {
            push_char(out, 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00));
        } else {
            push_char(out, first);
            push_char(out, second);
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.bytes.get(self.pos..self.pos + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "invalid \\u escape")?;
        let value = u32::from_str_radix(text, 16).map_err(|_| "invalid \\u escape")?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("invalid \\u escape".into());
        }
        self.pos += 4;
        Ok(value)
    }

    /// Skips one JSON value (checking that it is well-formed), counting its nesting.
    pub(super) fn skip_value(&mut self) -> Result<(), String> {
        let start_depth = self.depth;
        // Open containers: true for objects.
        let mut open: Vec<bool> = Vec::new();
        loop {
            // Expecting a value.
            match self.next_token() {
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'n') => self.literal(b"ull")?,
                Some(b't') => self.literal(b"rue")?,
                Some(b'f') => self.literal(b"alse")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b'[') => {
                    self.enter()?;
                    if self.peek_token() == Some(b']') {
                        self.next_token();
                        self.depth -= 1;
                    } else {
                        open.push(false);
                        continue;
                    }
                }
                Some(b'{') => {
                    self.enter()?;
                    match self.next_token() {
                        Some(b'}') => self.depth -= 1,
                        Some(b'"') => {
                            self.string()?;
                            if self.next_token() != Some(b':') {
                                return Err("expected : in object".into());
                            }
                            open.push(true);
                            continue;
                        }
                        _ => return Err("expected a key or } in object".into()),
                    }
                }
                other => return Err(format!("expected a value, found {}", describe(other))),
            }
            // After a complete value: close containers or go on to the next entry.
            loop {
                let Some(&is_object) = open.last() else {
                    debug_assert_eq!(self.depth, start_depth);
                    return Ok(());
                };
                match self.next_token() {
                    Some(b',') if is_object => {
                        if self.next_token() != Some(b'"') {
                            return Err("expected a key after , in object".into());
                        }
                        self.string()?;
                        if self.next_token() != Some(b':') {
                            return Err("expected : in object".into());
                        }
                        break;
                    }
                    Some(b',') => break,
                    Some(b'}') if is_object => {}
                    Some(b']') if !is_object => {}
                    other => return Err(format!("unexpected {} in a container", describe(other))),
                }
                open.pop();
                self.depth -= 1;
            }
        }
    }

    fn peek_token(&mut self) -> Option<u8> {
        let at = self.pos;
        let token = self.next_token();
        self.pos = at;
        token
    }

    /// A JSON number whose first byte was just consumed.
    fn number(&mut self) -> Result<(), String> {
        let start = self.pos - 1;
        let mut end = self.pos;
        while let Some(&b) = self.bytes.get(end) {
            if matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                end += 1;
            } else {
                break;
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..end]).map_err(|_| "invalid number")?;
        if !is_json_number(text) {
            return Err(format!("invalid number {text}"));
        }
        self.pos = end;
        Ok(())
    }

    /// The text of the next value (after whitespace), checked well-formed.
    pub(super) fn value_text(&mut self) -> Result<&'t str, String> {
        while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
        let start = self.pos;
        self.skip_value()?;
        std::str::from_utf8(&self.bytes[start..self.pos]).map_err(|_| "invalid UTF-8".to_string())
    }
}

fn push_char(out: &mut Vec<u8>, code: u32) {
    let c = char::from_u32(code).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// RFC 8259 number grammar.
fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    i == b.len()
}

/// One JSON value embedded in a path element (`v:…`, and each value of `k:{…}`),
/// read as upstream's `value.ReadJSONIter`: numbers become floats, later
/// duplicate keys of objects win, and anything after the value is ignored.
pub(super) fn embedded_value(cursor: &mut Cursor<'_>) -> Result<Value, String> {
    let text = cursor.value_text()?;
    if let Some(plain) = plain_string(text) {
        return Ok(Value::String(plain.to_string()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if has_infinite(&value) {
        return Err("number out of range".into());
    }
    Ok(floats(value))
}

/// The contents of a JSON string without escapes or control characters (the usual key
/// value, read as the JSON parser would read it, only faster).
fn plain_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    inner.bytes().all(|b| b != b'"' && b != b'\\' && b >= b' ').then_some(inner)
}

fn has_infinite(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|x| !x.is_finite()),
        Value::Array(items) => items.iter().any(has_infinite),
        Value::Object(map) => map.values().any(has_infinite),
        _ => false,
    }
}

/// The fields of a `k:{…}` element, every one kept (duplicates too), sorted by name.
pub(super) fn key_fields(body: &str) -> Result<KeyFields, String> {
    let mut cursor = Cursor::new(body);
    match cursor.next_token() {
        Some(b'n') => {
            cursor.literal(b"ull")?;
            return Ok(KeyFields::new([]));
        }
        Some(b'{') => {}
        _ => return Err("key is not a JSON object".into()),
    }
    let mut fields = Vec::new();
    match cursor.next_token() {
        Some(b'}') => return Ok(KeyFields::new(fields)),
        Some(b'"') => {}
        _ => return Err("expected a key in k:{…}".into()),
    }
    loop {
        let name = cursor.string()?;
        if cursor.next_token() != Some(b':') {
            return Err("expected : in k:{…}".into());
        }
        let value = embedded_value(&mut cursor)?;
        match cursor.next_token() {
            Some(b'}') if fields.is_empty() => return Ok(KeyFields::single(name, value)),
            Some(b'}') => {
                fields.push((name, value));
                return Ok(KeyFields::new(fields));
            }
            Some(b',') if cursor.next_token() == Some(b'"') => fields.push((name, value)),
            _ => return Err("expected , or } in k:{…}".into()),
        }
    }
}
