//! Writing JSON values as YAML that kubectl reads back to the same values.
//!
//! Why not a general YAML serializer: those write YAML 1.2 and leave `yes`,
//! `on`, `y`, `0777` and dates unquoted, which kubectl's YAML 1.1 reader turns
//! into booleans and numbers, so `kubectl apply -f` of their output changes
//! (or fails on) the object. Here every string is written in a style chosen
//! by [`super::style`], and the layout is kubectl's own: block mappings and
//! sequences, two spaces per level, sequences not indented under their key,
//! `{}` and `[]` for empty collections, literal blocks for multi-line text,
//! keys in the order the value holds them.

use super::style::{style_for, Style};
use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

/// A key longer than this (as written) uses the explicit `? key` form:
/// YAML readers give up on implicit keys of 1024 characters.
const LONG_KEY: usize = 1000;

/// Writes `value` as one YAML document (no `---`), ending in a newline.
///
/// ```
/// let value = serde_json::json!({"data": {"enabled": "yes", "mode": "0777", "name": "web"}});
/// assert_eq!(
///     fieldwise_core::yaml::to_yaml(&value),
///     "data:\n  enabled: \"yes\"\n  mode: \"0777\"\n  name: web\n"
/// );
/// ```
pub fn to_yaml(value: &Value) -> String {
    let mut writer = Writer { out: String::new() };
    writer.document(value);
    writer.out
}

/// Writes several documents as one stream, separated by `---` lines, the way
/// `kubectl get -o yaml` lists would be split for `kubectl apply -f`.
pub fn to_yaml_stream<'v>(values: impl IntoIterator<Item = &'v Value>) -> String {
    let mut out = String::new();
    for (i, value) in values.into_iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&to_yaml(value));
    }
    out
}

struct Writer {
    out: String,
}

impl Writer {
    fn document(&mut self, value: &Value) {
        match value {
            Value::Object(map) if !map.is_empty() => self.mapping(map, 0, false),
            Value::Array(items) if !items.is_empty() => self.sequence(items, 0, false),
            // A lone string is never a literal block: its lines would start at
            // column 0, where kubectl looks for `---`.
            scalar => self.scalar(scalar, None),
        }
    }

    fn indent(&mut self, width: usize) {
        self.out.extend(std::iter::repeat_n(' ', width));
    }

    /// The entries of `map` at column `indent`; with `inline`, the first entry
    /// goes where the cursor is (after a sequence's `- `).
    fn mapping(&mut self, map: &Map<String, Value>, indent: usize, inline: bool) {
        for (i, (key, value)) in map.iter().enumerate() {
            if i > 0 || !inline {
                self.indent(indent);
            }
            let written = self.key_text(key);
            if written.len() > LONG_KEY {
                self.out.push_str("? ");
                self.out.push_str(&written);
                self.out.push('\n');
                self.indent(indent);
            } else {
                self.out.push_str(&written);
            }
            self.value_after_key(value, indent);
        }
    }

    /// The `:` and value of an entry whose key sits at column `indent`.
    fn value_after_key(&mut self, value: &Value, indent: usize) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                self.out.push_str(":\n");
                self.mapping(map, indent + 2, false);
            }
            Value::Array(items) if !items.is_empty() => {
                self.out.push_str(":\n");
                self.sequence(items, indent, false);
            }
            scalar => {
                self.out.push_str(": ");
                self.scalar(scalar, Some(indent + 2));
            }
        }
    }

    /// The items of a sequence, `- ` at column `indent`.
    fn sequence(&mut self, items: &[Value], indent: usize, inline: bool) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 || !inline {
                self.indent(indent);
            }
            self.out.push_str("- ");
            match item {
                Value::Object(map) if !map.is_empty() => self.mapping(map, indent + 2, true),
                Value::Array(inner) if !inner.is_empty() => self.sequence(inner, indent + 2, true),
                scalar => self.scalar(scalar, Some(indent + 2)),
            }
        }
    }

    /// A scalar (or empty collection) and its newline; a literal block's
    /// lines go at `block_indent`, and `None` forbids literal blocks.
    fn scalar(&mut self, value: &Value, block_indent: Option<usize>) {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.out.push_str(&number_text(n)),
            Value::Object(_) => self.out.push_str("{}"),
            Value::Array(_) => self.out.push_str("[]"),
            Value::String(s) => match (style_for(s, block_indent.is_some()), block_indent) {
                (Style::Literal, Some(indent)) => return self.literal(s, indent),
                (style, _) => self.out.push_str(&quoted(s, style)),
            },
        }
        self.out.push('\n');
    }

    /// `|` block: `|-` without a final newline, `|+` to keep several.
    fn literal(&mut self, s: &str, indent: usize) {
        let body = s.trim_end_matches('\n');
        let chomp = match s.len() - body.len() {
            0 => "-",
            1 => "",
            _ => "+",
        };
        let _ = writeln!(self.out, "|{chomp}");
        for line in s.strip_suffix('\n').unwrap_or(s).split('\n') {
            if !line.is_empty() {
                self.indent(indent);
                self.out.push_str(line);
            }
            self.out.push('\n');
        }
    }

    fn key_text(&self, key: &str) -> String {
        quoted(key, style_for(key, false))
    }
}

/// A one-line scalar in `style` (never [`Style::Literal`]).
fn quoted(s: &str, style: Style) -> String {
    match style {
        Style::Plain => s.to_string(),
        Style::SingleQuoted => format!("'{}'", s.replace('\'', "''")),
        Style::DoubleQuoted | Style::Literal => double_quoted(s),
    }
}

/// `"..."` with the escapes libyaml and go-yaml v2 both know.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            ' '..='~'
            | '\u{A0}'..='\u{2027}'
            | '\u{202A}'..='\u{D7FF}'
            | '\u{E000}'..='\u{FEFE}'
            | '\u{FF00}'..='\u{FFFD}'
            | '\u{10000}'.. => out.push(c),
            _ if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            _ => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// A number in a form every YAML version reads as that number: integers as
/// they are; floats always with a point, and with a signed exponent when very
/// large or small (YAML 1.1 needs both, go-yaml accepts them).
fn number_text(n: &Number) -> String {
    let Some(f) = n.as_f64().filter(|_| n.is_f64()) else { return n.to_string() };
    let abs = f.abs();
    if abs == 0.0 || (1e-4..1e16).contains(&abs) {
        let text = format!("{f}");
        return if text.contains('.') { text } else { format!("{text}.0") };
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    let exponent = if exponent.starts_with('-') { exponent.to_string() } else { format!("+{exponent}") };
    format!("{mantissa}e{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layout_is_kubectls() {
        let value = json!({
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {}},
            "spec": {"containers": [{"name": "web", "args": ["--port", "8080"], "ports": []}], "nested": [[1, 2], [], {}]},
            "n": null,
        });
        let expected = "apiVersion: v1\nmetadata:\n  name: x\n  labels: {}\nspec:\n  containers:\n  - name: web\n    args:\n    - --port\n    - \"8080\"\n    ports: []\n  nested:\n  - - 1\n    - 2\n  - []\n  - {}\n\"n\": null\n";
        assert_eq!(to_yaml(&value), expected);
    }

    #[test]
    fn multi_line_strings_are_literal_blocks_with_the_right_chomping() {
        let value = json!({"a": "x\n  y\n", "b": "x\ny", "c": "x\n\n", "d": ["p\nq\n"]});
        assert_eq!(to_yaml(&value), "a: |\n  x\n    y\nb: |-\n  x\n  y\nc: |+\n  x\n\nd:\n- |\n  p\n  q\n");
    }

    #[test]
    fn scalars_documents_and_streams() {
        assert_eq!(to_yaml(&json!("yes")), "\"yes\"\n");
        assert_eq!(to_yaml(&json!("a\nb")), "\"a\\nb\"\n");
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(to_yaml_stream(&[json!({"a": 1}), json!([true])]), "a: 1\n---\n- true\n");
    }

    #[test]
    fn numbers_keep_their_kind() {
        let value = json!([1, -2, 18446744073709551615u64, 1.5, 2.0, -0.0, 1e300, 1.5e-7, 0.0001]);
        assert_eq!(
            to_yaml(&value),
            "- 1\n- -2\n- 18446744073709551615\n- 1.5\n- 2.0\n- -0.0\n- 1.0e+300\n- 1.5e-7\n- 0.0001\n"
        );
    }

    #[test]
    fn keys_are_quoted_like_values_and_long_keys_are_explicit() {
        assert_eq!(to_yaml(&json!({"y": 2, "on": "off", "a: b": 1})), "\"y\": 2\n\"on\": \"off\"\n'a: b': 1\n");
        let long = "k".repeat(1200);
        assert_eq!(to_yaml(&json!({ long.clone(): [1] })), format!("? {long}\n:\n- 1\n"));
    }

    #[test]
    fn escapes_are_ones_both_parsers_know() {
        assert_eq!(double_quoted("q\"\\\u{7}\u{85}\u{2028}\u{FEFF}é"), "\"q\\\"\\\\\\x07\\N\\L\\uFEFFé\"");
    }
}
