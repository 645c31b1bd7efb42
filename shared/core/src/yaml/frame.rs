//! How kubectl cuts a file into documents before reading any of them:
//! k8s.io/apimachinery's `YAMLOrJSONDecoder`.
//!
//! Why it is its own step: kubectl does not let the YAML parser find the
//! documents. A text whose first 4096 bytes start (after whitespace) with `{`
//! is read as a stream of JSON values, and after at most one of them may turn
//! into YAML; any other text is cut at every line that starts with `---`
//! (which must be followed only by spaces or a comment), with `\r\n` read as
//! `\n`, and each piece goes to the YAML parser on its own.

use std::ops::Range;

/// How far kubectl looks for the `{` of a JSON stream.
const JSON_SNIFF_BYTES: usize = 4096;

/// Whether kubectl reads `text` as a JSON stream (`GuessJSONStream`).
pub(super) fn looks_like_json(text: &str) -> bool {
    let mut end = JSON_SNIFF_BYTES.min(text.len());
    // Go looks at bytes: a character cut by the limit is not whitespace.
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let trimmed = text[..end].trim_start_matches(char::is_whitespace);
    trimmed.starts_with('{')
}

/// Whether a whole text is JSON to kubectl's `yaml.ToJSON` (`IsJSONBuffer`).
pub(super) fn is_json_buffer(text: &str) -> bool {
    text.trim_start_matches(char::is_whitespace).starts_with('{')
}

/// The next step of Go's `json.Decoder` over a stream.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum JsonStep {
    /// Only whitespace is left.
    End,
    /// The text of the next value.
    Value(Range<usize>),
    /// The stream is not JSON at byte `at`.
    Invalid { at: usize, problem: String },
}

/// Finds the next JSON value at or after `pos` the way Go's decoder delimits
/// it: containers and strings to their end, numbers and `true`/`false`/`null`
/// as far as their grammar goes. Containers nested deeper than `max_depth`
/// are refused. The value's own syntax is checked by whoever parses it.
pub(super) fn next_json_value(text: &str, pos: usize, max_depth: usize) -> JsonStep {
    let b = text.as_bytes();
    let mut i = pos;
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    let start = i;
    let invalid = |at: usize, problem: &str| JsonStep::Invalid { at, problem: problem.to_string() };
    let Some(&first) = b.get(i) else { return JsonStep::End };
    match first {
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'{' | b'[' => {
                        depth += 1;
                        if depth > max_depth {
                            return invalid(i, &format!("JSON is nested more than {max_depth} levels deep"));
                        }
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return JsonStep::Value(start..i + 1);
                        }
                    }
                    b'"' => match string_end(b, i) {
                        Some(end) => i = end - 1,
                        None => return invalid(b.len(), "unexpected end of JSON input"),
                    },
                    _ => {}
                }
                i += 1;
            }
            invalid(b.len(), "unexpected end of JSON input")
        }
        b'"' => match string_end(b, i) {
            Some(end) => JsonStep::Value(start..end),
            None => invalid(b.len(), "unexpected end of JSON input"),
        },
        b'-' | b'0'..=b'9' => match number_end(b, i) {
            Ok(end) => JsonStep::Value(start..end),
            Err(at) => invalid(at, "invalid character in numeric literal"),
        },
        b't' | b'f' | b'n' => {
            let word: &[u8] = match first {
                b't' => b"true",
                b'f' => b"false",
                _ => b"null",
            };
            match b[i..].iter().zip(word).position(|(have, want)| have != want) {
                None if b.len() - i >= word.len() => JsonStep::Value(start..i + word.len()),
                None => invalid(b.len(), "unexpected end of JSON input"),
                Some(k) => invalid(i + k, "invalid character in literal"),
            }
        }
        _ => invalid(i, "invalid character looking for beginning of value"),
    }
}

/// Whether `text` is exactly one JSON number (whatever its size).
pub(super) fn is_json_number(text: &str) -> bool {
    matches!(text.as_bytes().first(), Some(b'-' | b'0'..=b'9')) && number_end(text.as_bytes(), 0) == Ok(text.len())
}

/// The byte after the closing quote of the string starting at `start`.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of the number at `start` by JSON's grammar; `Err` where Go's
/// scanner finds a character the grammar cannot take.
fn number_end(b: &[u8], start: usize) -> Result<usize, usize> {
    let mut i = start;
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if b[i] == b'-' {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while digit(i) {
                i += 1;
            }
        }
        _ => return Err(i),
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return Err(i);
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return Err(i);
        }
        while digit(i) {
            i += 1;
        }
    }
    Ok(i)
}

/// Where kubectl's YAML reading starts after a JSON value at `pos` could not
/// be followed by another (`consumeWhitespace`): past whitespace up to and
/// including the first newline. `None` where kubectl gives up and reports the
/// JSON error: its reader asks for four bytes at every step, so fewer than
/// four left before that point end it, and so does a U+FFFD (its sign of bad
/// UTF-8).
pub(super) fn after_json(text: &str, pos: usize) -> Option<usize> {
    let mut at = pos;
    loop {
        if text.len() - at < 4 {
            return None;
        }
        let c = text[at..].chars().next()?;
        if c == char::REPLACEMENT_CHARACTER {
            return None;
        }
        if !c.is_whitespace() {
            return Some(at);
        }
        at += c.len_utf8();
        if c == '\n' {
            return Some(at);
        }
    }
}

/// One YAML document of the stream, as the text kubectl gives the parser.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Chunk {
    /// The document's lines, each ending in `\n`, `\r\n` read as `\n`.
    pub text: String,
    /// Where its first line is in the whole text (both from 0).
    pub line: usize,
    pub column: usize,
}

/// A `---` line followed by something other than a comment.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct BadSeparator {
    /// Its line in the whole text, from 0.
    pub line: usize,
    /// Whether it cut a document short (that document is never read).
    pub interrupted: bool,
    pub rest: String,
}

/// Cuts YAML text (which starts at `line`, `column` of the whole text) into
/// documents as apimachinery's `YAMLReader` does. A separator line ends the
/// document before it; when there is none (at the start, or after another
/// separator) it is kept as the first line of the next one. A bad separator ends the
/// stream there: the documents before it, and it (the document it interrupts
/// is never read).
pub(super) fn yaml_chunks(text: &str, line: usize, column: usize) -> (Vec<Chunk>, Option<BadSeparator>) {
    let mut chunks = Vec::new();
    for step in YamlChunks::new(text, line, column) {
        match step {
            Ok(chunk) => chunks.push(chunk),
            Err(bad) => return (chunks, Some(bad)),
        }
    }
    (chunks, None)
}

/// [`yaml_chunks`] one document at a time, so that a reader that stops early never
/// looks at the rest of the text: each step reads the lines of one document, and a
/// bad separator is the last item.
pub(super) struct YamlChunks<'t> {
    lines: std::iter::Enumerate<std::str::SplitInclusive<'t, char>>,
    line: usize,
    column: usize,
    current: Option<Chunk>,
    done: bool,
}

impl<'t> YamlChunks<'t> {
    /// The documents of `text`, which starts at `line`, `column` of the whole text.
    pub(super) fn new(text: &'t str, line: usize, column: usize) -> Self {
        YamlChunks { lines: text.split_inclusive('\n').enumerate(), line, column, current: None, done: false }
    }
}

impl Iterator for YamlChunks<'_> {
    type Item = Result<Chunk, BadSeparator>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        for (n, raw) in self.lines.by_ref() {
            let content = raw.strip_suffix('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).unwrap_or(raw);
            if let Some(rest) = content.strip_prefix("---") {
                let trimmed = rest.trim_matches(char::is_whitespace);
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    self.done = true;
                    let interrupted = self.current.take().is_some();
                    return Some(Err(BadSeparator { line: self.line + n, interrupted, rest: trimmed.to_string() }));
                }
                if let Some(chunk) = self.current.take() {
                    return Some(Ok(chunk));
                }
            }
            let (line, column) = (self.line, self.column);
            let chunk = self.current.get_or_insert_with(|| Chunk {
                text: String::new(),
                line: line + n,
                column: if n == 0 { column } else { 0 },
            });
            chunk.text.push_str(content);
            chunk.text.push('\n');
        }
        self.done = true;
        self.current.take().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_sniffed_in_the_first_4096_bytes() {
        assert!(looks_like_json("  \n {\"a\": 1}"));
        assert!(!looks_like_json("a: {}"));
        assert!(!looks_like_json(&format!("{}{{}}", " ".repeat(4096))));
        assert!(looks_like_json(&format!("{}{{}}", " ".repeat(4095))));
    }

    #[test]
    fn json_values_end_where_go_ends_them() {
        let text = r#"{"a": "}"} [1, [2]] 0123 -1.5e3x "s\"" true null"#;
        let mut pos = 0;
        let mut seen = Vec::new();
        loop {
            match next_json_value(text, pos, 10) {
                JsonStep::End => break,
                JsonStep::Value(range) => {
                    seen.push(&text[range.clone()]);
                    pos = range.end;
                }
                JsonStep::Invalid { at, .. } => {
                    seen.push("!");
                    pos = at + 1;
                }
            }
        }
        assert_eq!(seen, [r#"{"a": "}"}"#, "[1, [2]]", "0", "123", "-1.5e3", "!", r#""s\"""#, "true", "null"]);
        assert!(matches!(next_json_value("1.x", 0, 10), JsonStep::Invalid { at: 2, .. }));
        assert!(matches!(next_json_value("[[[]]]", 0, 2), JsonStep::Invalid { at: 2, .. }));
        assert!(matches!(next_json_value("tru", 0, 2), JsonStep::Invalid { at: 3, .. }));
    }

    #[test]
    fn yaml_is_cut_at_separator_lines() {
        let (chunks, bad) = yaml_chunks("---\n---\na: 1\r\n--- # c\n\n---\nb: |\n  ---x\n", 0, 0);
        assert_eq!(bad, None);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["---\n", "a: 1\n", "\n", "b: |\n  ---x\n"]);
        assert_eq!(chunks[1], Chunk { text: "a: 1\n".into(), line: 2, column: 0 });
        let (chunks, _) = yaml_chunks("---\n\n...\n---\nb: 1\n", 0, 0);
        assert_eq!(chunks[0], Chunk { text: "---\n\n...\n".into(), line: 0, column: 0 });
        let (before, bad) = yaml_chunks("a: 1\n---\nb: 1\n--- b: 2\n", 3, 0);
        assert_eq!(before, [Chunk { text: "a: 1\n".into(), line: 3, column: 0 }]);
        assert_eq!(bad, Some(BadSeparator { line: 6, interrupted: true, rest: "b: 2".into() }));
        assert_eq!(yaml_chunks("a: 1", 0, 7).0[0], Chunk { text: "a: 1\n".into(), line: 0, column: 7 });
    }

    #[test]
    fn yaml_starts_after_the_json_values_line() {
        assert_eq!(after_json("{}  \n  x", 2), Some(5));
        assert_eq!(after_json("{} x: 1", 2), Some(3));
        assert_eq!(after_json("{}   ", 2), None);
        // Fewer than four bytes left at any step: kubectl reports the JSON error.
        assert_eq!(after_json("{}\nn\n", 2), None);
        assert_eq!(after_json("{}   \nx", 2), None);
        assert_eq!(after_json("{}\nno\n", 2), Some(3));
    }
}
