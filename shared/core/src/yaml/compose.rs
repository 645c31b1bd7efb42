//! The node tree of one YAML document, built from libyaml's events the way
//! go-yaml v2's `parser` builds it: anchors known from the start of their node,
//! aliases pointing at the node they name, only the first document of the text.
//!
//! Why a tree and not values straight away: go-yaml v2 decodes an alias by
//! decoding its node again, and merges (`<<`) by decoding the merged node into
//! the map being built; keeping the nodes is what lets [`super::decode`] do
//! exactly the same, in the same order.
//!
//! The parser is libyaml's (the `libyaml-safer` port), the C library go-yaml v2
//! was translated from. Where go-yaml v2 changed libyaml, its behaviour is put
//! back here: it has no `\/` escape in double-quoted scalars but a `\'` one;
//! inside `[...]` and `{...}` a plain scalar ends at `?` (so `[a?b]` is an
//! error) and may end with `:` (`[a:, b]` holds `a:`).

use super::contained_panic::contain;
use libyaml_safer::{Event, EventData, MappingStyle, Parser, ScalarStyle, SequenceStyle};
use std::cell::Cell;
use std::collections::HashMap;

/// Collections nested deeper than this are refused (kubectl allows 10,000;
/// no Kubernetes object comes near 1,000, and refusing early keeps hostile
/// input cheap). Here, below every reader of a stream, so each takes it from one place.
pub const MAX_DEPTH: usize = 1000;

/// A node's index in [`Tree::nodes`].
pub(super) type NodeId = usize;

/// A position in the document's text, both counted from 0; the column in
/// characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Mark {
    pub line: usize,
    pub column: usize,
}

impl From<libyaml_safer::Mark> for Mark {
    fn from(mark: libyaml_safer::Mark) -> Self {
        Mark { line: mark.line as usize, column: mark.column as usize }
    }
}

/// One node, where it starts, and what it holds.
pub(super) struct Node {
    pub mark: Mark,
    pub body: Body,
}

pub(super) enum Body {
    Scalar {
        /// The resolved tag (`tag:yaml.org,2002:int` for `!!int`), if any.
        tag: Option<String>,
        value: String,
        /// Plain and untagged (or tagged `!`): the text decides the type.
        plain_implicit: bool,
    },
    Sequence {
        items: Vec<NodeId>,
    },
    /// Keys and values alternate, in document order.
    Mapping {
        entries: Vec<NodeId>,
    },
    Alias {
        anchor: String,
        target: NodeId,
    },
}

/// The first document of a text; `root` is `None` for a text with no document.
pub(super) struct Tree {
    pub nodes: Vec<Node>,
    pub root: Option<NodeId>,
}

/// Why a text is not a YAML document, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ComposeError {
    pub mark: Mark,
    pub problem: String,
}

/// How many times a text is patched to go-yaml's syntax and parsed again.
const MAX_PATCHES: usize = 64;

/// Builds the first document of `text`, refusing collections nested deeper than
/// `max_depth`.
pub(super) fn compose_first_document(text: &str, max_depth: usize) -> Result<Tree, ComposeError> {
    let mut patched: Option<String> = None;
    for _ in 0..=MAX_PATCHES {
        let current = patched.as_deref().unwrap_or(text);
        let reached = Cell::new(Mark::default());
        let composed = contain(|| Composer::new(current, max_depth).run(&reached))
            .unwrap_or_else(|message| Err(Failure::Other(parser_panic(reached.get(), &message))));
        match composed {
            Err(Failure::Syntax(error, patch)) => match patch.and_then(|patch| patch.apply(current)) {
                Some(next) => patched = Some(next),
                None => return Err(error),
            },
            Err(Failure::Other(error)) => return Err(error),
            Ok(tree) => return Ok(tree),
        }
    }
    Err(ComposeError {
        mark: Mark::default(),
        problem: format!("more than {MAX_PATCHES} `\\'` escapes or flow scalars ending in `:`"),
    })
}

/// The error for a panic of the parser after the last event it gave ended at `reached`.
fn parser_panic(reached: Mark, message: &str) -> ComposeError {
    let problem = if message.starts_with("TODO") {
        // The one unported branch: a tag followed by `,` in a flow collection.
        "did not find expected whitespace or line break while scanning a tag".to_string()
    } else {
        format!("the YAML parser could not read on after this point ({message})")
    };
    ComposeError { mark: reached, problem }
}

/// A composer failure; a syntax error libyaml raises where go-yaml v2 reads
/// on carries the patch that makes libyaml read it the same way.
enum Failure {
    Syntax(ComposeError, Option<Patch>),
    Other(ComposeError),
}

/// A rewrite of the text into what libyaml reads as go-yaml v2 reads the original.
enum Patch {
    /// The `\'` escape at this byte (go-yaml has it, libyaml does not).
    QuoteEscape(usize),
    /// The plain scalar in these bytes ends with a `:` before a flow
    /// indicator: go-yaml takes the `:` into the scalar, libyaml refuses it.
    ColonInFlow(std::ops::Range<usize>),
}

impl Patch {
    fn apply(self, text: &str) -> Option<String> {
        match self {
            Patch::QuoteEscape(at) => patch_quote_escapes(text, at),
            Patch::ColonInFlow(range) => {
                let scalar = text.get(range.clone())?;
                // go-yaml ends a flow plain scalar at `?` too; it fails there.
                if scalar.contains('?') || scalar.starts_with(['\'', '"']) {
                    return None;
                }
                Some(format!("{}'{}'{}", &text[..range.start], scalar.replace('\'', "''"), &text[range.end..]))
            }
        }
    }
}

/// What the parser reads after a text that does not end on a line break.
///
/// Why: C libyaml, which go-yaml was translated from, pads its buffer with NULs
/// and reads past the end of the text as if at a line break that adds nothing
/// (a block scalar's last line, the character after a final `\` in a
/// double-quoted scalar); its `libyaml-safer` port has no padding and panics
/// there instead (`"a: |\n  x"` did). A real line break is read the same way
/// everywhere but in a block scalar's value, where it is kept as read; U+2028,
/// of all breaks, is the one libyaml keeps as itself, so a block scalar that
/// ends in it at the end of the text has it taken off again, and the value is
/// the one go-yaml reads.
const END_PADDING: char = '\u{2028}';

struct Composer<'t> {
    text: &'t str,
    max_depth: usize,
    nodes: Vec<Node>,
    anchors: HashMap<String, NodeId>,
    /// Open collections, innermost last.
    open: Vec<NodeId>,
    /// How many of them are flow collections (`[...]`, `{...}`).
    open_flow: usize,
}

impl<'t> Composer<'t> {
    fn new(text: &'t str, max_depth: usize) -> Self {
        Composer { text, max_depth, nodes: Vec::new(), anchors: HashMap::new(), open: Vec::new(), open_flow: 0 }
    }

    /// Composes the tree; `reached` follows where the last event read ended.
    fn run(mut self, reached: &Cell<Mark>) -> Result<Tree, Failure> {
        let text = self.text;
        let padded;
        let mut input = if text.ends_with(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
            text.as_bytes()
        } else {
            padded = format!("{text}{END_PADDING}");
            padded.as_bytes()
        };
        let mut parser = Parser::new();
        parser.set_input_string(&mut input);
        let mut next = || {
            let event = parser.parse().map_err(|e| syntax_failure(text, &e))?;
            reached.set(event.end_mark.into());
            Ok::<_, Failure>(event)
        };
        next()?; // stream start
        let document = next()?;
        let mut root = None;
        if let EventData::DocumentStart { .. } = document.data {
            loop {
                let event = next()?;
                if let Some(done) = self.add(event)? {
                    root = Some(done);
                    break;
                }
            }
            let end = next()?;
            if !matches!(end.data, EventData::DocumentEnd { .. }) {
                return Err(Failure::Other(error(end.start_mark.into(), "expected the end of the document")));
            }
        }
        Ok(Tree { nodes: self.nodes, root })
    }

    /// Adds one event's node; answers the root once the document's top node is complete.
    fn add(&mut self, event: Event) -> Result<Option<NodeId>, Failure> {
        let mark: Mark = event.start_mark.into();
        let mut flow = false;
        let (body, anchor, opens) = match event.data {
            EventData::Scalar { anchor, tag, value, plain_implicit, style, .. } => {
                if style == ScalarStyle::DoubleQuoted {
                    self.refuse_slash_escape(event.start_mark, event.end_mark)?;
                }
                if style == ScalarStyle::Plain && self.open_flow > 0 && value.contains('?') {
                    return Err(Failure::Other(self.question_mark(event.start_mark, event.end_mark)));
                }
                let mut value = value;
                let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
                if block && event.end_mark.index as usize > self.text.len() && value.ends_with(END_PADDING) {
                    value.pop();
                }
                (Body::Scalar { tag, value, plain_implicit }, anchor, false)
            }
            EventData::SequenceStart { anchor, style, .. } => {
                flow = style == SequenceStyle::Flow;
                (Body::Sequence { items: Vec::new() }, anchor, true)
            }
            EventData::MappingStart { anchor, style, .. } => {
                flow = style == MappingStyle::Flow;
                (Body::Mapping { entries: Vec::new() }, anchor, true)
            }
            EventData::Alias { anchor } => match self.anchors.get(&anchor) {
                Some(&target) => (Body::Alias { anchor, target }, None, false),
                None => return Err(Failure::Other(error(mark, &format!("unknown anchor '{anchor}' referenced")))),
            },
            EventData::SequenceEnd | EventData::MappingEnd => {
                let closed = self.open.pop().ok_or_else(|| Failure::Other(error(mark, "unbalanced collection end")))?;
                // Flow collections are always the innermost ones.
                self.open_flow = self.open_flow.saturating_sub(1);
                return Ok(self.open.is_empty().then_some(closed));
            }
            _ => return Err(Failure::Other(error(mark, "unexpected event inside a document"))),
        };
        if opens && self.open.len() >= self.max_depth {
            return Err(Failure::Other(error(
                mark,
                &format!("collections are nested more than {} levels deep", self.max_depth),
            )));
        }
        let id = self.nodes.len();
        self.nodes.push(Node { mark, body });
        if let Some(anchor) = anchor {
            self.anchors.insert(anchor, id);
        }
        if let Some(&parent) = self.open.last() {
            match &mut self.nodes[parent].body {
                Body::Sequence { items } => items.push(id),
                Body::Mapping { entries } => entries.push(id),
                _ => {}
            }
        }
        if opens {
            self.open.push(id);
            if flow || self.open_flow > 0 {
                self.open_flow += 1;
            }
            return Ok(None);
        }
        Ok(self.open.is_empty().then_some(id))
    }

    /// go-yaml v2 ends a plain scalar inside a flow collection at `?`, where
    /// it then finds a key indicator it cannot take: the error it reports.
    fn question_mark(&self, start: libyaml_safer::Mark, end: libyaml_safer::Mark) -> ComposeError {
        let source = self.text.get(start.index as usize..end.index as usize).unwrap_or_default();
        let before = source.split('?').next().unwrap_or_default();
        let line = before.matches('\n').count();
        let column = match before.rfind('\n') {
            Some(newline) => before[newline + 1..].chars().count(),
            None => start.column as usize + before.chars().count(),
        };
        ComposeError {
            mark: Mark { line: start.line as usize + line, column },
            problem: "did not find expected ',' or the end of the flow collection (go-yaml ends a plain scalar at '?' here; quote it)".into(),
        }
    }

    /// go-yaml v2 has no `\/` escape: a double-quoted scalar using it is an error there.
    fn refuse_slash_escape(&self, start: libyaml_safer::Mark, end: libyaml_safer::Mark) -> Result<(), Failure> {
        let Some(source) = self.text.get(start.index as usize..end.index as usize) else { return Ok(()) };
        let mut mark = Mark::from(start);
        let mut chars = source.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let escaped = chars.next();
                    if escaped == Some('/') {
                        return Err(Failure::Other(error(
                            mark,
                            "found unknown escape character while parsing a quoted scalar",
                        )));
                    }
                    mark.column += 2;
                    if escaped == Some('\n') {
                        mark.line += 1;
                        mark.column = 0;
                    }
                }
                '\n' => {
                    mark.line += 1;
                    mark.column = 0;
                }
                _ => mark.column += 1,
            }
        }
        Ok(())
    }
}

fn error(mark: Mark, problem: &str) -> ComposeError {
    ComposeError { mark, problem: problem.to_string() }
}

/// libyaml's error in go-yaml's words: the problem, then what was being parsed.
fn syntax_failure(text: &str, e: &libyaml_safer::Error) -> Failure {
    let mark = match e.problem_mark() {
        // Found in the padding: where C libyaml finds it, at the end of the text.
        Some(mark) if mark.index as usize > text.len() => end_of(text),
        Some(mark) => Mark::from(mark),
        None => first_unreadable(text),
    };
    let problem = match e.context() {
        Some(context) => format!("{} {context}", e.problem()),
        None => e.problem().to_string(),
    };
    let patch = match e.problem() {
        "found unknown escape character" => e.problem_mark().map(|m| Patch::QuoteEscape(m.index as usize)),
        "found unexpected ':'" => match (e.context_mark(), e.problem_mark()) {
            (Some(start), Some(colon)) => Some(Patch::ColonInFlow(start.index as usize..colon.index as usize + 1)),
            _ => None,
        },
        _ => None,
    };
    Failure::Syntax(ComposeError { mark, problem }, patch)
}

/// The position just after the last character of `text`.
fn end_of(text: &str) -> Mark {
    let last_line = text.rsplit('\n').next().unwrap_or_default();
    Mark { line: text.matches('\n').count(), column: last_line.chars().count() }
}

/// Where libyaml's reader stops: the first character YAML does not allow in a stream.
fn first_unreadable(text: &str) -> Mark {
    let mut mark = Mark::default();
    for c in text.chars() {
        let allowed = matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
        if !allowed {
            break;
        }
        if c == '\n' {
            mark.line += 1;
            mark.column = 0;
        } else {
            mark.column += 1;
        }
    }
    mark
}

/// The text with the `\'` at byte `at` (and every other one up to the end of
/// that double-quoted scalar) written as `\x27`, which libyaml knows; `None`
/// when the unknown escape at `at` is not `\'`.
fn patch_quote_escapes(text: &str, at: usize) -> Option<String> {
    if !text.get(at..)?.starts_with("\\'") {
        return None;
    }
    let mut patched = String::with_capacity(text.len() + 8);
    patched.push_str(&text[..at]);
    let mut chars = text[at..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                patched.push_str(&text[at + i..]);
                return Some(patched);
            }
            '\\' => match chars.next() {
                Some((_, '\'')) => patched.push_str("\\x27"),
                Some((_, escaped)) => {
                    patched.push('\\');
                    patched.push(escaped);
                }
                None => patched.push('\\'),
            },
            _ => patched.push(c),
        }
    }
    Some(patched)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_scalar(text: &str) -> String {
        let tree = compose_first_document(text, 10).unwrap();
        match &tree.nodes[tree.root.unwrap()].body {
            Body::Scalar { value, .. } => value.clone(),
            _ => panic!("not a scalar"),
        }
    }

    #[test]
    fn only_the_first_document_is_read() {
        let tree = compose_first_document("a: 1\n...\n: : bad\n", 10).unwrap();
        assert!(matches!(tree.nodes[tree.root.unwrap()].body, Body::Mapping { .. }));
        assert!(compose_first_document("# nothing\n", 10).unwrap().root.is_none());
    }

    #[test]
    fn the_end_of_a_text_without_a_line_break_reads_as_go_yaml_reads_it() {
        // Block scalars keep no break that is not in the text.
        assert_eq!(root_scalar("|\n  x"), "x");
        assert_eq!(root_scalar("|+\n  x"), "x");
        assert_eq!(root_scalar(">\n  x\n  y"), "x y");
        assert_eq!(root_scalar("|+\n  x\n  "), "x\n");
        assert_eq!(root_scalar("|\n  x\n"), "x\n");
        assert_eq!(root_scalar("a\\"), "a\\");
        // A double-quoted scalar running to the end on a `\`: an error at the end, no panic.
        for text in ["\"\\", "a: \"x\\", "[\"\\", "a:\n  - \"it\\'s\\"] {
            let e = compose_first_document(text, 10).err().unwrap_or_else(|| panic!("{text:?} parsed"));
            assert!(e.problem.contains("end of stream"), "{text:?}: {}", e.problem);
        }
        let e = compose_first_document("a: \"x\\", 10).err().unwrap();
        assert_eq!(e.mark, Mark { line: 0, column: 6 });
        let e = compose_first_document("a: [b", 10).err().unwrap();
        assert_eq!(e.mark, Mark { line: 0, column: 5 }, "{}", e.problem);
    }

    #[test]
    fn the_parsers_unported_branch_is_an_error_where_it_stopped() {
        // libyaml-safer panics with "TODO" on a tag followed by `,` in a flow collection.
        let e = compose_first_document("a: [!t,x]\n", 10).err().unwrap();
        assert!(e.problem.contains("scanning a tag"), "{}", e.problem);
        assert_eq!(e.mark.line, 0);
    }

    #[test]
    fn go_yaml_escapes() {
        assert_eq!(root_scalar(r#""it\'s \"x\"""#), "it's \"x\"");
        let e = compose_first_document(r#"a: "x\/y""#, 10).err().unwrap();
        assert_eq!(e.mark, Mark { line: 0, column: 5 });
        assert!(e.problem.contains("unknown escape"), "{}", e.problem);
    }

    #[test]
    fn go_yaml_flow_scalars() {
        let e = compose_first_document("a: [b, c?d]\n", 10).err().unwrap();
        assert_eq!(e.mark, Mark { line: 0, column: 8 });
        let tree = compose_first_document("a: [b:, c]\n", 10).unwrap();
        let values: Vec<&str> = tree
            .nodes
            .iter()
            .filter_map(|n| match &n.body {
                Body::Scalar { value, .. } => Some(value.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(values, ["a", "b:", "c"]);
        // After the flow collection closes, `?` is ordinary again.
        assert!(compose_first_document("a: [b]\nc: d?e\n", 10).is_ok());
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("{}{}", "[".repeat(11), "]".repeat(11));
        let e = compose_first_document(&deep, 10).err().unwrap();
        assert!(e.problem.contains("nested more than 10"), "{}", e.problem);
        assert_eq!(e.mark.column, 10);
        assert!(compose_first_document(&format!("{}{}", "[".repeat(10), "]".repeat(10)), 10).is_ok());
    }

    #[test]
    fn unknown_anchor_is_an_error() {
        let e = compose_first_document("a: *nope\n", 10).err().unwrap();
        assert_eq!(e.problem, "unknown anchor 'nope' referenced");
        assert_eq!(e.mark, Mark { line: 0, column: 3 });
    }

    #[test]
    fn syntax_errors_name_their_place() {
        let e = compose_first_document("a: 1\nb: [\n", 10).err().unwrap();
        assert_eq!(e.mark.line, 2);
        let e = compose_first_document("a: b: c\n", 10).err().unwrap();
        assert_eq!(e.mark, Mark { line: 0, column: 4 });
        assert_eq!(e.problem, "mapping values are not allowed in this context");
    }
}
