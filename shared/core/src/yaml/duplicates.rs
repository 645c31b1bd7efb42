//! Fields written twice in one mapping of a YAML (or JSON) text: go-yaml v2 keeps the
//! last value, as [`super::to_json`] does, so the first is lost without a word. The
//! apiserver's strict decoding refuses a body with a duplicate field (`duplicate field
//! "data.a"`) and its warn level warns; a plugin that decodes the text itself can only say
//! so if it is told where. JSON text is scanned by [`crate::json::duplicate_fields`];
//! YAML documents are composed as [`super::read_stream`] cuts and composes them, and
//! keys compared as go-yaml types them (`y` and `yes` are both the key `true`). A merge
//! (`<<`) is not a duplicate: its keys give way to the mapping's own by design.

use super::compose::{compose_first_document, Body, NodeId, Tree, MAX_DEPTH};
use super::frame;
use super::resolve::{decode_scalar, Scalar};

/// The duplicate fields of `text` (a stream, as [`super::read_stream`] reads it, or one
/// patch, as [`super::to_json`] reads it), each with the document it is in (from 1) and its
/// path (`spec.containers[0].name`), in the order they appear. Text that cannot be read
/// gives what was found before the error (reading it fails elsewhere, with its own message).
///
/// ```
/// let found = fieldwise_core::yaml::duplicate_fields("data:\n  a: 1\n  a: 2\n---\nb: [{k: 1, k: 2}]\n");
/// assert_eq!(found, [(1, "data.a".to_string()), (2, "b[0].k".to_string())]);
/// ```
pub fn duplicate_fields(text: &str) -> Vec<(usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if frame::looks_like_json(text) {
        return crate::json::duplicate_fields(text);
    }
    let (chunks, _) = frame::yaml_chunks(text, 0, 0);
    let mut found = Vec::new();
    for (index, chunk) in chunks.iter().enumerate() {
        if let Ok(tree) = compose_first_document(&chunk.text, MAX_DEPTH) {
            found.extend(in_tree(&tree).into_iter().map(|path| (index + 1, path)));
        }
    }
    found
}

/// The duplicate fields of one composed document (aliases are not followed: what they
/// repeat is reported where it is written).
pub(super) fn in_tree(tree: &Tree) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    // Each duplicate once, found in constant time (a text of many duplicates stays linear).
    let mut reported = std::collections::HashSet::new();
    let mut pending: Vec<(NodeId, String)> = tree.root.map(|root| (root, String::new())).into_iter().collect();
    while let Some((id, path)) = pending.pop() {
        match &tree.nodes[id].body {
            Body::Sequence { items } => {
                pending.extend(items.iter().enumerate().rev().map(|(i, &item)| (item, format!("{path}[{i}]"))));
            }
            Body::Mapping { entries } => {
                let mut seen = std::collections::HashSet::new();
                let mut children = Vec::new();
                for pair in entries.chunks(2) {
                    let [key, value] = *pair else { break };
                    let Some(name) = key_text(tree, key) else { continue };
                    let full = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                    if !seen.insert(name) && reported.insert(full.clone()) {
                        found.push(full.clone());
                    }
                    children.push((value, full));
                }
                pending.extend(children.into_iter().rev());
            }
            Body::Scalar { .. } | Body::Alias { .. } => {}
        }
    }
    found
}

/// A scalar key's text as the JSON conversion gives it; `None` for a merge key (`<<`) and
/// for keys that are not scalars (the conversion refuses those).
pub(super) fn key_text(tree: &Tree, key: NodeId) -> Option<String> {
    let Body::Scalar { tag, value, plain_implicit } = &tree.nodes[key].body else { return None };
    if value == "<<" && (*plain_implicit || tag.as_deref() == Some(super::resolve::tag::MERGE)) {
        return None;
    }
    Some(match decode_scalar(tag.as_deref(), *plain_implicit, value) {
        Ok(Scalar::Str(s)) => s,
        Ok(Scalar::Int(i)) => i.to_string(),
        Ok(Scalar::Uint(u)) => u.to_string(),
        Ok(Scalar::Bool(b)) => b.to_string(),
        Ok(Scalar::Float(f)) => f.to_string(),
        Ok(Scalar::Null) => "null".to_string(),
        Err(_) => value.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<String> {
        duplicate_fields(text).into_iter().map(|(_, path)| path).collect()
    }

    #[test]
    fn json_and_yaml_duplicates_are_found_with_their_paths() {
        assert_eq!(paths(r#"{"data": {"a": "1", "a": "2"}}"#), ["data.a"]);
        assert_eq!(paths(r#"{"a": 1, "b": {"a": 2}}"#), Vec::<String>::new(), "one key in two objects is no duplicate");
        assert_eq!(
            paths(r#"{"spec": {"containers": [{"name": "a", "image": "x", "na\u006de": "b"}]}, "spec": null}"#),
            ["spec.containers[0].name", "spec"],
            "escaped keys are compared decoded"
        );
        assert_eq!(paths("a: 1\nb:\n  c: [1, {d: 1, d: 2}]\na: 3\n"), ["a", "b.c[1].d"]);
        assert_eq!(paths("y: 1\nyes: 2\n"), ["true"], "go-yaml's typed keys: y and yes are both true");
        assert_eq!(paths("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n"), Vec::<String>::new(), "a merge is no duplicate");
        assert_eq!(paths("a: [\n"), Vec::<String>::new(), "unreadable text: its reader says why");
    }

    #[test]
    fn documents_of_a_stream_are_numbered_as_read_stream_numbers_them() {
        assert_eq!(duplicate_fields("a: 1\n---\nb: 1\nb: 2\n"), [(2, "b".to_string())]);
        assert_eq!(duplicate_fields("{\"a\": 1}\n{\"b\": 1, \"b\": 2}"), [(2, "b".to_string())]);
    }
}
