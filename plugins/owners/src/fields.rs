//! Field by field: every owned field with its owners (the `fields` section of
//! the JSON output), and `--field PATH`: who owns one field, and since when (who
//! owns it is the core's answer, [`fieldwise_core::ownership::owners_at`]).

use fieldwise_core::fieldpath::{parse_field_path, value_at, Path, Set};
use fieldwise_core::ownership::{owners_at, ManagedFieldsEntry, PathOwners, Relation};
use fieldwise_kube::api::openapi::TypeSchema;
use fieldwise_kube::{Error, Result};
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::age::{self, TimeStyle};
use crate::subject::{owner_json, Subject};
use crate::summary::table;
use crate::view::ViewOptions;

/// Every field some manager owns (not hidden by `view`), in set order, with its value in
/// `shown` and its owners.
pub fn all_json(shown: &Value, entries: &[ManagedFieldsEntry], view: &ViewOptions) -> Value {
    let all = entries.iter().fold(Set::new(), |acc, e| acc.union(&e.fields));
    let mut out = Vec::new();
    for path in all.paths() {
        if view.hides(&path) {
            continue;
        }
        let owners: Vec<Value> = entries.iter().filter(|e| e.fields.has(path.elements())).map(owner_json).collect();
        let mut field = json!({"path": path.to_string(), "owners": owners});
        if let Some(v) = value_at(shown, path.elements()) {
            field["value"] = v.clone();
        }
        out.push(field);
    }
    Value::Array(out)
}

/// The answer to `--field`.
#[derive(Debug, Clone)]
pub struct FieldAnswer {
    /// The path as the apiserver spells it.
    pub path: Path,
    /// Its current value, when the object has it.
    pub value: Option<Value>,
    /// How the owners relate to it (all owners share one relation: the closest there is).
    pub relation: Relation,
    /// Owners: the entry and the path it owns.
    pub owners: Vec<(usize, Path)>,
}

/// Answers `--field TEXT` for `subject`, reading values from `shown`; `schema` (the
/// object's type, from the server) tells keyed lists (`[name=x]`) from atomic ones.
pub fn query(
    subject: &Subject,
    entries: &[ManagedFieldsEntry],
    shown: &Value,
    text: &str,
    schema: &TypeSchema,
) -> Result<FieldAnswer> {
    let path = parse_field_path(text, &subject.object, &schema.schema, schema.root)
        .map_err(|e| Error::usage(e.to_string()))?;
    let value = value_at(shown, path.elements()).cloned();
    let PathOwners { relation, owners } = owners_at(entries, &path);
    if owners.is_empty() && value.is_none() {
        return Err(Error::usage(format!(
            "field {text:?} ({path}) not found in {}: the object has no such field and no manager owns it",
            subject.display
        )));
    }
    Ok(FieldAnswer { path, value, relation, owners })
}

/// The human answer: the field, its value, and a table of owners.
pub fn render(
    subject: &Subject,
    entries: &[ManagedFieldsEntry],
    answer: &FieldAnswer,
    style: TimeStyle,
    now: Timestamp,
) -> String {
    let value = match &answer.value {
        Some(v) => fieldwise_kube::output::values::one_line(v),
        None => "(not set)".to_string(),
    };
    let mut out = format!("{} {}: {value}\n", subject.display, answer.path);
    if answer.owners.is_empty() {
        out.push_str("no manager owns this field\n");
        return out;
    }
    match answer.relation {
        Relation::Exact => {}
        Relation::Under => out.push_str("no manager owns the field itself; these own fields under it:\n"),
        Relation::Within => out.push_str("owned as part of a larger field (replaced as a whole):\n"),
    }
    let header = ["MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION", "SINCE", "CLASS", "FIELD"].map(String::from);
    let rows: Vec<[String; 7]> = answer
        .owners
        .iter()
        .map(|(i, path)| {
            let e = &entries[*i];
            let field = if answer.relation == Relation::Exact { String::new() } else { path.to_string() };
            let since = match age::show(e.time.as_deref(), style, now) {
                t if t.is_empty() && e.time.is_none() => "<unknown>".to_string(),
                t => t,
            };
            [
                e.manager.clone(),
                e.operation.as_str().into(),
                e.subresource.clone(),
                e.api_version.clone(),
                since,
                e.kind().name().into(),
                field,
            ]
        })
        .collect();
    if answer.relation == Relation::Exact {
        let header: [String; 6] = std::array::from_fn(|i| header[i].clone());
        let rows: Vec<[String; 6]> = rows.iter().map(|r| std::array::from_fn(|i| r[i].clone())).collect();
        out.push_str(&table(&header, &rows));
        return out;
    }
    out.push_str(&table(&header, &rows));
    out
}

/// The `field` section of the JSON output.
pub fn json(entries: &[ManagedFieldsEntry], answer: &FieldAnswer, query: &str) -> Value {
    let owners: Vec<Value> = answer
        .owners
        .iter()
        .map(|(i, path)| {
            let mut owner = owner_json(&entries[*i]);
            owner["path"] = path.to_string().into();
            owner
        })
        .collect();
    let mut out = json!({"query": query, "path": answer.path.to_string(), "relation": answer.relation.as_str(), "owners": owners});
    if let Some(v) = &answer.value {
        out["value"] = v.clone();
    }
    out
}
