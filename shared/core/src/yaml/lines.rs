//! Where each field of a YAML document is written: the line of every mapping key and
//! sequence item, by path, so that a checker of the decoded value (a policy file, a
//! configuration) can name the line a problem is on. The document is composed exactly as
//! [`super::read_stream`] composes it and keys are spelled as [`super::duplicate_fields`]
//! spells them (`rules[0].match.kinds[1]`); aliases are not followed (what they repeat is
//! located where it is written).

use std::collections::HashMap;

use super::compose::{compose_first_document, Body, NodeId, Tree, MAX_DEPTH};
use super::duplicates::key_text;
use super::frame;

/// The lines (from 1) of the fields of the first YAML document of a text, by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldLines {
    lines: HashMap<String, usize>,
}

impl FieldLines {
    /// The line of `path` (`a.b[2].c`, the empty path for the document), or of the closest
    /// field above it that is written; `None` when nothing of it is (JSON text, or a
    /// document that cannot be read).
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let mut path = path;
        loop {
            if let Some(line) = self.lines.get(path) {
                return Some(*line);
            }
            let cut = path.rfind(['.', '['])?;
            path = &path[..cut];
        }
    }
}

/// Locates the fields of the first document of a YAML `text` that is not empty.
///
/// ```
/// let lines = fieldwise_core::yaml::field_lines("a: 1\nrules:\n- name: x\n  kinds: [A, B]\n");
/// assert_eq!(lines.line_of("rules[0].name"), Some(3));
/// assert_eq!(lines.line_of("rules[0].kinds[1]"), Some(4));
/// assert_eq!(lines.line_of("rules[0].missing"), Some(3));
/// ```
pub fn field_lines(text: &str) -> FieldLines {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = HashMap::new();
    if frame::looks_like_json(text) {
        return FieldLines { lines };
    }
    let (chunks, _) = frame::yaml_chunks(text, 0, 0);
    // The first document with something in it, as read_stream skips the empty ones.
    for chunk in &chunks {
        match compose_first_document(&chunk.text, MAX_DEPTH) {
            Ok(tree) if tree.root.is_none() => continue,
            Ok(tree) => locate(&tree, chunk.line, &mut lines),
            Err(_) => {}
        }
        break;
    }
    FieldLines { lines }
}

fn locate(tree: &Tree, first_line: usize, lines: &mut HashMap<String, usize>) {
    let Some(root) = tree.root else { return };
    let line = |id: NodeId| first_line + tree.nodes[id].mark.line + 1;
    lines.insert(String::new(), line(root));
    let mut pending: Vec<(NodeId, String)> = vec![(root, String::new())];
    while let Some((id, path)) = pending.pop() {
        match &tree.nodes[id].body {
            Body::Sequence { items } => {
                for (i, &item) in items.iter().enumerate() {
                    let full = format!("{path}[{i}]");
                    lines.insert(full.clone(), line(item));
                    pending.push((item, full));
                }
            }
            Body::Mapping { entries } => {
                for pair in entries.chunks(2) {
                    let [key, value] = *pair else { break };
                    let Some(name) = key_text(tree, key) else { continue };
                    let full = if path.is_empty() { name } else { format!("{path}.{name}") };
                    lines.entry(full.clone()).or_insert(line(key));
                    pending.push((value, full));
                }
            }
            Body::Scalar { .. } | Body::Alias { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_items_are_located_after_comments_and_separators() {
        let text = "# a policy\n---\nkind: X\nrules:\n  - name: a\n    managers:\n      - ci\n      - argocd\n";
        let lines = field_lines(text);
        assert_eq!(lines.line_of(""), Some(3));
        assert_eq!(lines.line_of("kind"), Some(3));
        assert_eq!(lines.line_of("rules[0]"), Some(5));
        assert_eq!(lines.line_of("rules[0].managers[1]"), Some(8));
        assert_eq!(lines.line_of("rules[3].name"), Some(4), "an item not written: its list's line");
        assert_eq!(field_lines("{\"a\": 1}").line_of("a"), None, "JSON text has no lines recorded");
    }
}
