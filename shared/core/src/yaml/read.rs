//! Reading YAML (or JSON) text into JSON values exactly as kubectl reads it.
//!
//! Why: kubectl reads manifests and patch files with YAML 1.1 rules through
//! go-yaml v2 (`y: 2` is `true: 2`, `on` is `true`, `0777` is 511), cuts
//! streams at `---` lines itself, and turns every document into JSON. A reader
//! with YAML 1.2 rules shows a user a different object than the one kubectl
//! would send. [`read_stream`] is `kubectl apply -f`'s reading of a file,
//! [`to_json`] is `kubectl patch --patch-file`'s reading of a patch.

use super::compose::{compose_first_document, Mark};
use super::decode::decode_document;
use super::frame::{self, JsonStep};
use super::json_value;
use serde_json::Value;

/// Collections nested deeper than this are refused (kubectl allows 10,000;
/// no Kubernetes object comes near 1,000, and refusing early keeps hostile
/// input cheap).
pub const MAX_DEPTH: usize = 1000;

/// One document of a stream, as kubectl goes on to map it to an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Which document of the stream it is, from 1, counting the empty ones
    /// kubectl skips (so error messages and this agree).
    pub index: usize,
    /// The line of the text it starts on, from 1.
    pub line: usize,
    /// Its JSON value; never `null` (kubectl skips null documents).
    pub value: Value,
}

/// Why a text cannot be read, and where: the document (from 1), and the line
/// and column (from 1, the column in characters) in the whole text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("document {document}, line {line}, column {column}: {problem}")]
pub struct ReadError {
    pub document: usize,
    pub line: usize,
    pub column: usize,
    /// What is wrong, in the parser's words.
    pub problem: String,
}

/// Reads a file the way `kubectl apply -f` and `kubectl create -f` do: a
/// stream of JSON values if it starts with `{`, else YAML documents separated
/// by `---` lines; each document is converted to JSON by go-yaml v2's rules;
/// empty and `null` documents are skipped. A leading byte-order mark is
/// ignored, as kubectl's file reader drops it.
///
/// ```
/// let docs = fieldwise_core::yaml::read_stream("a: on\n---\ny: 0777\n").unwrap();
/// assert_eq!(docs[0].value, serde_json::json!({"a": true}));
/// assert_eq!(docs[1].value, serde_json::json!({"true": 511}));
/// ```
pub fn read_stream(text: &str) -> Result<Vec<Document>, ReadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut documents = Vec::new();
    if !frame::looks_like_json(text) {
        read_yaml(text, 0, 0, &mut documents).map_err(|(error, _)| error)?;
        return Ok(documents);
    }
    let mut pos = 0;
    let mut count = 0;
    let json_error = loop {
        let (at, problem) = match frame::next_json_value(text, pos, MAX_DEPTH) {
            JsonStep::End => return Ok(documents),
            JsonStep::Value(range) => match json_value::parse(&text[range.clone()], MAX_DEPTH) {
                Ok(value) => {
                    count += 1;
                    if !value.is_null() {
                        documents.push(Document { index: count, line: position(text, range.start).0 + 1, value });
                    }
                    pos = range.end;
                    continue;
                }
                Err(e) if e.syntax => (range.start + e.at, e.problem),
                Err(e) => {
                    // Valid JSON to kubectl's decoder, but no object can hold it.
                    let (line, column) = position(text, range.start + e.at);
                    return Err(ReadError {
                        document: count + 1,
                        line: line + 1,
                        column: column + 1,
                        problem: e.problem,
                    });
                }
            },
            JsonStep::Invalid { at, problem } => (at, problem),
        };
        let (line, column) = position(text, at);
        break ReadError { document: count + 1, line: line + 1, column: column + 1, problem };
    };
    // kubectl's decoder turns to YAML after a bad JSON value only while it has
    // read at most one; if the YAML fails at once, the JSON error is the answer.
    if count > 1 {
        return Err(json_error);
    }
    let Some(start) = frame::after_json(text, pos) else { return Err(json_error) };
    match read_yaml(text, start, count, &mut documents) {
        Ok(()) => Ok(documents),
        Err((error, decoded)) => Err(if decoded == count { json_error } else { error }),
    }
}

/// Reads one document the way kubectl reads a patch (`yaml.ToJSON`): text
/// starting with `{` is JSON, anything else is YAML whose first document is
/// converted by go-yaml v2's rules (kubectl ignores the rest). No document is
/// `null`.
///
/// ```
/// let patch = fieldwise_core::yaml::to_json("spec:\n  paused: yes\n").unwrap();
/// assert_eq!(patch, serde_json::json!({"spec": {"paused": true}}));
/// ```
pub fn to_json(text: &str) -> Result<Value, ReadError> {
    if frame::is_json_buffer(text) {
        let at_error = |at: usize, problem: String| {
            let (line, column) = position(text, at);
            ReadError { document: 1, line: line + 1, column: column + 1, problem }
        };
        return match frame::next_json_value(text, 0, MAX_DEPTH) {
            JsonStep::Value(range) => {
                let rest = &text[range.end..];
                if let Some(extra) = rest.find(|c: char| !matches!(c, ' ' | '\t' | '\r' | '\n')) {
                    return Err(at_error(range.end + extra, "invalid character after the JSON value".into()));
                }
                json_value::parse(&text[range.clone()], MAX_DEPTH).map_err(|e| at_error(range.start + e.at, e.problem))
            }
            JsonStep::Invalid { at, problem } => Err(at_error(at, problem)),
            JsonStep::End => Err(at_error(text.len(), "unexpected end of JSON input".into())),
        };
    }
    read_document(text).map_err(|(mark, problem)| ReadError {
        document: 1,
        line: mark.line + 1,
        column: mark.column + 1,
        problem,
    })
}

/// The YAML documents of `text[start..]`, appended to `documents`; `count`
/// documents came before. On failure, also how many documents were decoded.
fn read_yaml(text: &str, start: usize, count: usize, documents: &mut Vec<Document>) -> Result<(), (ReadError, usize)> {
    let (line, column) = position(text, start);
    let (chunks, bad_separator) = frame::yaml_chunks(&text[start..], line, column);
    let mut index = count;
    for chunk in &chunks {
        index += 1;
        let value = read_document(&chunk.text).map_err(|(mark, problem)| {
            let column = if mark.line == 0 { chunk.column + mark.column } else { mark.column };
            (ReadError { document: index, line: chunk.line + mark.line + 1, column: column + 1, problem }, index - 1)
        })?;
        if !value.is_null() {
            documents.push(Document { index, line: chunk.line + 1, value });
        }
    }
    match bad_separator {
        None => Ok(()),
        Some(bad) => Err((
            ReadError {
                document: index + 1 + usize::from(bad.interrupted),
                line: bad.line + 1,
                column: 4,
                problem: format!(
                    "invalid document separator: only a comment may follow `---` on its line, found `{}`",
                    bad.rest
                ),
            },
            index,
        )),
    }
}

/// The JSON value of the first YAML document of `text` (`null` if none).
fn read_document(text: &str) -> Result<Value, (Mark, String)> {
    let tree = compose_first_document(text, MAX_DEPTH).map_err(|e| (e.mark, e.problem))?;
    decode_document(&tree, MAX_DEPTH).map_err(|e| (e.mark(), e.problem().to_string()))
}

/// The line and column (from 0, the column in characters) of byte `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count())
}
