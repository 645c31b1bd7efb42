//! The object as YAML, each line marked with the managers that own it.
//!
//! Ownership is found by address: each manager's field set is walked together
//! with the shown object (`ownership::owners_by_value`, one walk per manager rather
//! than one look-up per path), and every value a set lands on is remembered. The YAML is then written line by line, each line knowing the
//! value it prints, so the owners of that value go at the end of the line as a
//! YAML comment: the output stays valid YAML.

use colored::Colorize;
use fieldwise_core::ownership::ManagedFieldsEntry;
use fieldwise_kube::output::color::palette;
use fieldwise_kube::output::values;
use serde_json::Value;

/// One printed line and the indices (into the entries) of its owners.
struct Line {
    text: String,
    owners: Vec<usize>,
}

/// Renders `shown` with the owners of each line; `labels[i]` names entry `i`.
pub fn render(shown: &Value, entries: &[ManagedFieldsEntry], labels: &[String]) -> String {
    let owners = fieldwise_core::ownership::owners_by_value(shown, entries);
    let mut lines = Vec::new();
    let at = |v: &Value| owners.get(&(v as *const Value)).cloned().unwrap_or_default();
    write_value(shown, 0, &at, &mut lines);
    let width = lines.iter().map(|l| l.text.chars().count()).max().unwrap_or(0).min(72);
    let colors = manager_colors(entries);
    let mut out = String::new();
    for line in lines {
        if line.owners.is_empty() {
            out.push_str(line.text.trim_end());
            out.push('\n');
            continue;
        }
        let names: Vec<String> = line.owners.iter().map(|&i| labels[i].color(colors[i]).to_string()).collect();
        let text = line.text.color(colors[line.owners[0]]).to_string();
        let pad = width.saturating_sub(line.text.chars().count());
        out.push_str(&format!("{text}{}  # {}\n", " ".repeat(pad), names.join(", ")));
    }
    out
}

/// One color per manager name (entries of the same manager share it).
fn manager_colors(entries: &[ManagedFieldsEntry]) -> Vec<colored::Color> {
    let mut names: Vec<&str> = Vec::new();
    entries
        .iter()
        .map(|e| {
            let index = names.iter().position(|n| *n == e.manager).unwrap_or_else(|| {
                names.push(&e.manager);
                names.len() - 1
            });
            palette(index)
        })
        .collect()
}

fn write_value(value: &Value, indent: usize, at: &dyn Fn(&Value) -> Vec<usize>, out: &mut Vec<Line>) {
    match value {
        Value::Object(map) if !map.is_empty() => write_map(map, indent, None, at, out),
        Value::Array(items) if !items.is_empty() => write_list(items, indent, at, out),
        scalar => {
            out.push(Line { text: format!("{}{}", " ".repeat(indent), values::scalar(scalar)), owners: at(value) })
        }
    }
}

/// Writes a map's entries; the first line starts with `first_prefix` (`- `) when it opens a list item.
fn write_map(
    map: &serde_json::Map<String, Value>,
    indent: usize,
    mut first_prefix: Option<(String, Vec<usize>)>,
    at: &dyn Fn(&Value) -> Vec<usize>,
    out: &mut Vec<Line>,
) {
    for (key, child) in map {
        let (lead, mut owners) = match first_prefix.take() {
            Some((prefix, owners)) => (prefix, owners),
            None => (" ".repeat(indent), Vec::new()),
        };
        for o in at(child) {
            if !owners.contains(&o) {
                owners.push(o);
            }
        }
        let key = key_text(key);
        match child {
            Value::Object(m) if !m.is_empty() => {
                out.push(Line { text: format!("{lead}{key}:"), owners });
                write_map(m, indent + 2, None, at, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push(Line { text: format!("{lead}{key}:"), owners });
                write_list(items, indent, at, out);
            }
            scalar => out.push(Line { text: format!("{lead}{key}: {}", values::scalar(scalar)), owners }),
        }
    }
}

fn write_list(items: &[Value], indent: usize, at: &dyn Fn(&Value) -> Vec<usize>, out: &mut Vec<Line>) {
    let pad = " ".repeat(indent);
    for item in items {
        match item {
            Value::Object(map) if !map.is_empty() => {
                write_map(map, indent + 2, Some((format!("{pad}- "), at(item))), at, out);
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push(Line { text: format!("{pad}-"), owners: at(item) });
                write_list(inner, indent + 2, at, out);
            }
            scalar => out.push(Line { text: format!("{pad}- {}", values::scalar(scalar)), owners: at(item) }),
        }
    }
}

/// A map key as YAML writes it (quoted when it must be).
fn key_text(key: &str) -> String {
    values::scalar(&Value::String(key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::ownership::parse_managed_fields;
    use serde_json::json;

    #[test]
    fn marks_lines_with_their_owners_and_stays_yaml() {
        colored::control::set_override(false);
        let entries = parse_managed_fields(&json!([
            {"manager": "a", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}},
            {"manager": "b", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "subresource": "scale",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}
        ]))
        .unwrap();
        let shown = json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "c", "image": "x:1", "args": ["a: b", "multi\nline"]}]}}}});
        let labels = vec!["a Apply".to_string(), "b Update/scale".to_string()];
        let text = render(&shown, &entries, &labels);
        let expected = "spec:
  replicas: 2            # a Apply, b Update/scale
  template:
    spec:
      containers:
      - name: c          # a Apply
        image: x:1       # a Apply
        args:
        - 'a: b'
        - \"multi\\nline\"
";
        assert_eq!(text, expected);
        let reparsed: Value = serde_json::to_value(
            fieldwise_kube::api::manifests::parse_documents(&text, "out").unwrap()[0].value.clone(),
        )
        .unwrap();
        assert_eq!(reparsed, shown);
    }
}
