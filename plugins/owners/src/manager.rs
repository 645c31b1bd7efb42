//! `--manager NAME`: only the fields one manager owns, as a configuration it could apply.

use fieldwise_core::fieldpath::{extract, Set};
use fieldwise_core::ownership::ManagedFieldsEntry;
use fieldwise_kube::{Error, Result};
use serde_json::{Map, Value};

use crate::subject::Subject;

/// The subtree of `shown` that the entries of manager `name` own (all its operations and
/// subresources together), with the apiVersion, kind, name and namespace an apply needs.
pub fn subtree(subject: &Subject, entries: &[ManagedFieldsEntry], shown: &Value, name: &str) -> Result<Value> {
    let mine: Vec<&ManagedFieldsEntry> = entries.iter().filter(|e| e.manager == name).collect();
    if mine.is_empty() {
        let mut names: Vec<&str> = entries.iter().map(|e| e.manager.as_str()).collect();
        names.dedup();
        return Err(Error::usage(format!(
            "no manager {name:?} in {} (its managers: {})",
            subject.display,
            names.join(", ")
        )));
    }
    let owned = mine.iter().fold(Set::new(), |acc, e| acc.union(&e.fields));
    let body = extract(shown, &owned);
    let mut out = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(v) = shown.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    let mut metadata = Map::new();
    for key in ["name", "namespace"] {
        if let Some(v) = subject.object.pointer(&format!("/metadata/{key}")) {
            metadata.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Object(owned_meta)) = body.get("metadata") {
        for (k, v) in owned_meta {
            metadata.insert(k.clone(), v.clone());
        }
    }
    out.insert("metadata".into(), Value::Object(metadata));
    if let Value::Object(rest) = body {
        for (k, v) in rest.into_iter().filter(|(k, _)| k != "metadata") {
            out.insert(k, v);
        }
    }
    Ok(Value::Object(out))
}
