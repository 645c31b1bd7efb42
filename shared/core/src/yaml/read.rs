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
use super::duplicates::in_tree;
use super::frame::{self, JsonStep};
use super::json_value;
use serde_json::Value;

pub use super::compose::MAX_DEPTH;

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
    /// The fields it writes twice in one mapping, as [`super::duplicate_fields`] names them
    /// (the value read is the last one).
    pub duplicates: Vec<String>,
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
    documents(text).collect()
}

/// [`read_stream`] one document at a time: each step reads (cuts, parses, converts) one
/// document and no more, so a reader that stops after N documents never parses the rest
/// of the text, and reading the whole stream is linear in its length. Once an error is
/// returned, the stream ends. Collecting it is [`read_stream`].
///
/// ```
/// let mut docs = fieldwise_core::yaml::documents("a: 1\n---\nb: [\n");
/// assert_eq!(docs.next().unwrap().unwrap().value, serde_json::json!({"a": 1}));
/// assert!(docs.next().unwrap().is_err());
/// assert!(docs.next().is_none());
/// ```
pub fn documents(text: &str) -> Documents<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let state = if frame::looks_like_json(text) {
        Stage::Json { pos: 0 }
    } else {
        Stage::Yaml { chunks: frame::YamlChunks::new(text, 0, 0), json_error: None, decoded: 0 }
    };
    Documents { text, stage: state, count: 0, positions: Positions::default() }
}

/// The documents of a stream, read as they are asked for (see [`documents`]).
pub struct Documents<'t> {
    text: &'t str,
    stage: Stage<'t>,
    /// Documents read so far, empty ones included: the index of the last one.
    count: usize,
    positions: Positions,
}

/// Where a [`Documents`] is in its text.
enum Stage<'t> {
    /// Reading JSON values from byte `pos`.
    Json {
        pos: usize,
    },
    /// Reading YAML documents; after a JSON stream turned to YAML, the JSON error to
    /// report instead if no YAML document can be read (`decoded` of them were).
    Yaml {
        chunks: frame::YamlChunks<'t>,
        json_error: Option<ReadError>,
        decoded: usize,
    },
    Done,
}

impl Iterator for Documents<'_> {
    type Item = Result<Document, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let step = match &mut self.stage {
                Stage::Done => return None,
                Stage::Json { pos } => {
                    let pos = *pos;
                    self.json_step(pos)
                }
                Stage::Yaml { .. } => self.yaml_step(),
            };
            match step {
                Some(Ok(document)) if document.value.is_null() => continue,
                Some(Err(e)) => {
                    self.stage = Stage::Done;
                    return Some(Err(e));
                }
                None => {
                    if matches!(self.stage, Stage::Done) {
                        return None;
                    }
                }
                other => return other,
            }
        }
    }
}

impl Documents<'_> {
    /// The next JSON value from `pos`: a document (maybe null), an error, or `None` when
    /// the stream turned to YAML (the next step reads it) or ended.
    fn json_step(&mut self, pos: usize) -> Option<Result<Document, ReadError>> {
        let text = self.text;
        let (at, problem) = match frame::next_json_value(text, pos, MAX_DEPTH) {
            JsonStep::End => {
                self.stage = Stage::Done;
                return None;
            }
            JsonStep::Value(range) => match json_value::parse(&text[range.clone()], MAX_DEPTH) {
                Ok(value) => {
                    self.count += 1;
                    self.stage = Stage::Json { pos: range.end };
                    let line = self.positions.of(text, range.start).0 + 1;
                    let duplicates = if value.is_null() {
                        Vec::new()
                    } else {
                        crate::json::duplicate_fields(&text[range]).into_iter().map(|(_, path)| path).collect()
                    };
                    return Some(Ok(Document { index: self.count, line, value, duplicates }));
                }
                Err(e) if e.syntax => (range.start + e.at, e.problem),
                Err(e) => {
                    // Valid JSON to kubectl's decoder, but no object can hold it.
                    let (line, column) = self.positions.of(text, range.start + e.at);
                    return Some(Err(ReadError {
                        document: self.count + 1,
                        line: line + 1,
                        column: column + 1,
                        problem: e.problem,
                    }));
                }
            },
            JsonStep::Invalid { at, problem } => (at, problem),
        };
        let (line, column) = self.positions.of(text, at);
        let json_error = ReadError { document: self.count + 1, line: line + 1, column: column + 1, problem };
        // kubectl's decoder turns to YAML after a bad JSON value only while it has
        // read at most one; if the YAML fails at once, the JSON error is the answer.
        if self.count > 1 {
            return Some(Err(json_error));
        }
        let Some(start) = frame::after_json(text, pos) else { return Some(Err(json_error)) };
        let (line, column) = self.positions.of(text, start);
        self.stage = Stage::Yaml {
            chunks: frame::YamlChunks::new(&text[start..], line, column),
            json_error: Some(json_error),
            decoded: 0,
        };
        None
    }

    /// The next YAML document: a document (maybe null), an error, or `None` at the end.
    fn yaml_step(&mut self) -> Option<Result<Document, ReadError>> {
        let Stage::Yaml { chunks, json_error, decoded } = &mut self.stage else { return None };
        let error = match chunks.next() {
            None => {
                self.stage = Stage::Done;
                return None;
            }
            Some(Ok(chunk)) => {
                self.count += 1;
                match read_document(&chunk.text) {
                    Ok((value, duplicates)) => {
                        *decoded += 1;
                        return Some(Ok(Document { index: self.count, line: chunk.line + 1, value, duplicates }));
                    }
                    Err((mark, problem)) => {
                        let column = if mark.line == 0 { chunk.column + mark.column } else { mark.column };
                        ReadError {
                            document: self.count,
                            line: chunk.line + mark.line + 1,
                            column: column + 1,
                            problem,
                        }
                    }
                }
            }
            Some(Err(bad)) => ReadError {
                document: self.count + 1 + usize::from(bad.interrupted),
                line: bad.line + 1,
                column: 4,
                problem: format!(
                    "invalid document separator: only a comment may follow `---` on its line, found `{}`",
                    bad.rest
                ),
            },
        };
        Some(Err(match json_error.take() {
            Some(json_error) if *decoded == 0 => json_error,
            _ => error,
        }))
    }
}

/// Line and column of byte offsets asked for in increasing order, each found by reading
/// only the text since the last one (a stream of many JSON values on one line stays
/// linear); an offset before the last is counted from the start.
#[derive(Debug, Default)]
struct Positions {
    at: usize,
    line: usize,
    column: usize,
}

impl Positions {
    fn of(&mut self, text: &str, at: usize) -> (usize, usize) {
        let at = at.min(text.len());
        if at < self.at || !text.is_char_boundary(at) {
            return position(text, at);
        }
        for c in text[self.at..at].chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 0;
            } else {
                self.column += 1;
            }
        }
        self.at = at;
        (self.line, self.column)
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
    read_document(text).map(|(value, _)| value).map_err(|(mark, problem)| ReadError {
        document: 1,
        line: mark.line + 1,
        column: mark.column + 1,
        problem,
    })
}

/// The JSON value of the first YAML document of `text` (`null` if none), and the fields
/// it writes twice (read from the same composed document).
fn read_document(text: &str) -> Result<(Value, Vec<String>), (Mark, String)> {
    let tree = compose_first_document(text, MAX_DEPTH).map_err(|e| (e.mark, e.problem))?;
    let value = decode_document(&tree, MAX_DEPTH).map_err(|e| (e.mark(), e.problem().to_string()))?;
    let duplicates = if value.is_null() { Vec::new() } else { in_tree(&tree) };
    Ok((value, duplicates))
}

/// The line and column (from 0, the column in characters) of byte `at`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count())
}
