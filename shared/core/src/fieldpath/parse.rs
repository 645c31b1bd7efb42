//! Field paths as people type them, read into [`Path`]s.
//!
//! Users name a field the way kubectl and JSONPath taught them:
//! `spec.replicas`, `.spec.replicas`, `{.spec.replicas}`,
//! `spec.template.spec.containers[name=busybox].image`,
//! `spec.template.spec.containers[0].image`,
//! `spec.template.spec.containers[?(@.name=="busybox")].image`,
//! `metadata.annotations['app.kubernetes.io/name']`, `metadata.finalizers[=x]`.
//! [`parse_field_path`] reads the text and resolves it against the object and
//! its schema, so that list positions and loosely typed key values (`port=80`)
//! become the list-map keys the apiserver uses in `managedFields`.

use serde_json::Value;

use super::element::{KeyFields, PathElement};
use super::path::Path;
use super::shape::{item_element, shape_of, Shape};
use crate::schema::{Schema, TypeId};

/// A field path that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid field path {text:?}: {reason}")]
pub struct FieldPathError {
    /// The path as typed.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

/// One step as typed, before it is resolved against the object.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
    Key(Vec<(String, String)>),
    Member(String),
}

/// Reads a field path typed by a person and resolves it against `object` (of type `ty` in `schema`).
///
/// List positions and key values are resolved through the object: `containers[0]` and
/// `containers[name=app]` both become `[name="app"]`, and `ports[containerPort=80]` matches
/// the number `80` and gets the defaulted `protocol` key too. A key that matches no item
/// is kept as typed (values read as JSON when they parse, as strings otherwise), so the
/// path can still name a field a manager owns but the object no longer has.
///
/// ```
/// use fieldwise_core::fieldpath::parse_field_path;
/// use fieldwise_core::schema::{builtin, Gvk};
/// use serde_json::json;
///
/// let schema = builtin();
/// let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
/// let object = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x"}]}}}});
/// let path = parse_field_path("{.spec.template.spec.containers[0].image}", &object, schema, ty).unwrap();
/// assert_eq!(path.to_string(), ".spec.template.spec.containers[name=\"app\"].image");
/// ```
pub fn parse_field_path(
    text: &str,
    object: &Value,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Result<Path, FieldPathError> {
    let fail = |reason: String| FieldPathError { text: text.to_string(), reason };
    let steps = tokenize(text).map_err(fail)?;
    if steps.is_empty() {
        return Err(fail("the path is empty; name a field, e.g. spec.replicas".into()));
    }
    let mut elements = Vec::with_capacity(steps.len());
    let mut here = Some(object);
    let mut ty = ty;
    for step in steps {
        let shape = shape_of(schema, ty, here);
        let (element, next_ty, next) = match step {
            Step::Field(name) => {
                let child_ty = match shape {
                    Shape::Fields(fields) => fields.child(&name).0,
                    _ => None,
                };
                let next = here.and_then(|v| v.get(&name));
                (PathElement::Field(name), child_ty, next)
            }
            Step::Index(i) => {
                let item = here
                    .and_then(Value::as_array)
                    .and_then(|items| items.get(i))
                    .ok_or_else(|| fail(format!("there is no item {i} at {}", describe(&elements))))?;
                match shape {
                    Shape::List { items, keys } => {
                        let pe = item_element(schema, items, keys, item).map_err(fail)?;
                        (pe, items, Some(item))
                    }
                    _ => (PathElement::Index(i as i64), None, Some(item)),
                }
            }
            Step::Key(pairs) => {
                let (items_ty, keys) = match shape {
                    Shape::List { items, keys } => (items, keys),
                    _ => (None, None),
                };
                let found = here
                    .and_then(Value::as_array)
                    .and_then(|list| list.iter().find(|item| pairs.iter().all(|(k, v)| loosely_equal(item.get(k), v))));
                let pe = match found {
                    Some(item) if keys.is_some() => item_element(schema, items_ty, keys, item).map_err(fail)?,
                    _ => PathElement::Key(KeyFields::new(pairs.iter().map(|(k, v)| (k.clone(), typed(v))))),
                };
                (pe, items_ty, found)
            }
            Step::Member(text) => {
                let items_ty = match shape {
                    Shape::List { items, .. } => items,
                    _ => None,
                };
                let found = here
                    .and_then(Value::as_array)
                    .and_then(|list| list.iter().find(|item| loosely_equal(Some(item), &text)));
                let member = found.cloned().unwrap_or_else(|| typed(&text));
                (PathElement::Value(member), items_ty, found)
            }
        };
        elements.push(element);
        ty = next_ty;
        here = next;
    }
    Ok(Path(elements))
}

/// A path as upstream prints it, or `<root>` for the empty path.
fn describe(elements: &[PathElement]) -> String {
    if elements.is_empty() {
        "<root>".to_string()
    } else {
        Path(elements.to_vec()).to_string()
    }
}

/// Whether a JSON value reads as `text` (strings without quotes, other scalars as JSON).
fn loosely_equal(value: Option<&Value>, text: &str) -> bool {
    match value {
        Some(Value::String(s)) => s == text,
        Some(v @ (Value::Number(_) | Value::Bool(_))) => typed(text) == *v || v.to_string().as_str() == text,
        _ => false,
    }
}

/// A typed key or member value: JSON when it parses as a scalar, a string otherwise.
fn typed(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::String(_))) => v,
        _ => Value::String(text.to_string()),
    }
}

/// Splits the text into steps.
fn tokenize(text: &str) -> Result<Vec<Step>, String> {
    let mut rest = text.trim();
    if let Some(inner) = rest.strip_prefix('{') {
        rest = inner.strip_suffix('}').ok_or("a JSONPath template opened with `{` must close with `}`")?.trim();
    }
    rest = rest.strip_prefix('$').unwrap_or(rest);
    let chars: Vec<char> = rest.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => i += 1,
            '[' => {
                let close = find_close(&chars, i).ok_or("an opening `[` has no closing `]`")?;
                let inner: String = chars[i + 1..close].iter().collect();
                steps.push(bracket(inner.trim())?);
                i = close + 1;
            }
            _ => {
                let mut name = String::new();
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    name.push(chars[i]);
                    i += 1;
                }
                steps.push(Step::Field(name));
            }
        }
    }
    Ok(steps)
}

/// The index of the `]` closing the `[` at `open`, skipping quoted text.
fn find_close(chars: &[char], open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate().skip(open + 1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ']') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Reads the inside of one `[...]`.
fn bracket(inner: &str) -> Result<Step, String> {
    if let Some(name) = unquote(inner) {
        return Ok(Step::Field(name));
    }
    if let Ok(i) = inner.parse::<usize>() {
        return Ok(Step::Index(i));
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        let mut pairs = Vec::new();
        for condition in filter.split("&&") {
            let (lhs, rhs) = condition.split_once("==").ok_or_else(|| {
                format!("the filter {inner:?} must compare fields with ==, e.g. [?(@.name==\"app\")]")
            })?;
            let key = lhs.trim().strip_prefix("@.").ok_or_else(|| format!("the filter {inner:?} must use @.FIELD"))?;
            pairs.push((key.to_string(), unquote(rhs.trim()).unwrap_or_else(|| rhs.trim().to_string())));
        }
        return Ok(Step::Key(pairs));
    }
    if let Some(member) = inner.strip_prefix('=') {
        let member = member.trim();
        return Ok(Step::Member(unquote(member).unwrap_or_else(|| member.to_string())));
    }
    if inner.contains('=') {
        let mut pairs = Vec::new();
        for pair in inner.split(',') {
            let (key, value) = pair.split_once('=').ok_or_else(|| format!("expected KEY=VALUE in [{inner}]"))?;
            let value = value.trim();
            pairs.push((key.trim().to_string(), unquote(value).unwrap_or_else(|| value.to_string())));
        }
        return Ok(Step::Key(pairs));
    }
    Err(format!(
        "cannot read [{inner}]: use an index ([0]), a key ([name=app]), a filter ([?(@.name==\"app\")]) or a quoted name (['a.b'])"
    ))
}

/// The text between matching single or double quotes.
fn unquote(text: &str) -> Option<String> {
    for q in ['\'', '"'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            if text.len() >= 2 {
                return Some(inner.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn deployment() -> Value {
        json!({"metadata": {"annotations": {"app.kubernetes.io/name": "x"}, "finalizers": ["a/b"]},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "busybox", "image": "busybox:1.28", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
        ]}}}})
    }

    fn parse(text: &str) -> Result<String, FieldPathError> {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        parse_field_path(text, &deployment(), schema, ty).map(|p| p.to_string())
    }

    #[test]
    fn kubectl_and_jsonpath_spellings() {
        for text in ["spec.replicas", ".spec.replicas", "{.spec.replicas}", "$.spec.replicas", "spec['replicas']"] {
            assert_eq!(parse(text).unwrap(), ".spec.replicas", "{text}");
        }
        let image = ".spec.template.spec.containers[name=\"busybox\"].image";
        for text in [
            "spec.template.spec.containers[name=busybox].image",
            "spec.template.spec.containers[name=\"busybox\"].image",
            "spec.template.spec.containers[0].image",
            "{.spec.template.spec.containers[?(@.name==\"busybox\")].image}",
            "spec.template.spec.containers[?(@.name=='busybox')].image",
        ] {
            assert_eq!(parse(text).unwrap(), image, "{text}");
        }
    }

    #[test]
    fn keys_take_their_types_and_defaults_from_the_object() {
        let port = parse("spec.template.spec.containers[name=busybox].ports[containerPort=80]").unwrap();
        assert_eq!(port, ".spec.template.spec.containers[name=\"busybox\"].ports[containerPort=80,protocol=\"TCP\"]");
        assert_eq!(
            parse("metadata.annotations['app.kubernetes.io/name']").unwrap(),
            ".metadata.annotations.app.kubernetes.io/name"
        );
        assert_eq!(parse("metadata.finalizers[=a/b]").unwrap(), ".metadata.finalizers[=\"a/b\"]");
        assert_eq!(
            parse("spec.template.spec.containers[name=gone].image").unwrap(),
            ".spec.template.spec.containers[name=\"gone\"].image"
        );
    }

    #[test]
    fn bad_paths_name_the_path() {
        for text in ["", "{.spec", "spec[", "spec.template.spec.containers[9]", "spec[what]", "spec[?(@.name!=1)]"] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with(&format!("invalid field path {text:?}")), "{err}");
        }
    }
}
