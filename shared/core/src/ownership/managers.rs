//! `metadata.managedFields` entries, and who their managers are.
//!
//! The apiserver identifies a manager by name, operation, subresource and,
//! for `Update` only, the API version: `kubectl` applying and `kubectl`
//! updating are two managers, and so are one controller's updates through
//! `apps/v1` and through `/status`. [`Manager`] is that identity; its class
//! (human, controller, applier) is [`super::classify`]'s.

use std::fmt;

use serde_json::{Map, Value};

use crate::fieldpath::{FieldsV1Error, PathElement, Set};
use crate::go_format::fmt::quote as go_quote;
use crate::go_format::json::write_string as write_go_string;

/// How a manager last wrote its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply (`PATCH` with `application/apply-patch+yaml`).
    Apply,
    /// Any other write: create, update, JSON/merge/strategic patch.
    Update,
}

impl Operation {
    /// The wire name: `Apply` or `Update`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One `metadata.managedFields` entry: a manager and the fields it owns.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedFieldsEntry {
    /// The field manager name (`kubectl`, `kube-controller-manager`, …).
    pub manager: String,
    /// Whether the fields were applied or updated.
    pub operation: Operation,
    /// The API version the fields are expressed in.
    pub api_version: String,
    /// When the entry last changed (RFC 3339), if recorded.
    pub time: Option<String>,
    /// Always `FieldsV1` for valid entries.
    pub fields_type: String,
    /// The owned fields.
    pub fields: Set,
    /// The subresource written through (`status`, `scale`), empty for the main resource.
    pub subresource: String,
}

/// A `metadata.managedFields` entry that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid managedFields entry{}: {reason}", context(*.index, .manager.as_deref()))]
pub struct ManagedFieldsError {
    /// Position of the entry in the list, when known.
    pub index: Option<usize>,
    /// The entry's manager, when it could be read.
    pub manager: Option<String>,
    /// What is wrong.
    pub reason: String,
}

fn context(index: Option<usize>, manager: Option<&str>) -> String {
    match (index, manager) {
        (Some(i), Some(m)) => format!(" {i} (manager {m:?})"),
        (Some(i), None) => format!(" {i}"),
        (None, Some(m)) => format!(" (manager {m:?})"),
        (None, None) => String::new(),
    }
}

impl ManagedFieldsEntry {
    /// Reads one entry, checking it as the apiserver's `DecodeManagedFields` does.
    pub fn from_value(entry: &Value) -> Result<Self, ManagedFieldsError> {
        let fail = |manager: Option<&str>, reason: String| ManagedFieldsError {
            index: None,
            manager: manager.map(str::to_string),
            reason,
        };
        let Value::Object(map) = entry else { return Err(fail(None, "expected an object".into())) };
        let text = |key: &str| -> Result<String, ManagedFieldsError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(fail(None, format!("{key} must be a string"))),
            }
        };
        let manager = text("manager")?;
        let m = Some(manager.as_str());
        let operation = match text("operation")?.as_str() {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err(fail(m, "operation must be `Apply` or `Update`".into())),
        };
        let api_version = text("apiVersion").map_err(|e| fail(m, e.reason))?;
        if api_version.is_empty() {
            return Err(fail(m, "apiVersion must not be empty".into()));
        }
        let fields_type = text("fieldsType").map_err(|e| fail(m, e.reason))?;
        match fields_type.as_str() {
            "FieldsV1" => {}
            "" => return Err(fail(m, "missing fieldsType".into())),
            other => return Err(fail(m, format!("invalid fieldsType {other:?}"))),
        }
        let time = Some(text("time").map_err(|e| fail(m, e.reason))?).filter(|t| !t.is_empty());
        let subresource = text("subresource").map_err(|e| fail(m, e.reason))?;
        let fields = match map.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(doc) => Set::from_fields_v1(doc).map_err(|e: FieldsV1Error| fail(m, e.to_string()))?,
        };
        Ok(ManagedFieldsEntry { manager, operation, api_version, time, fields_type, fields, subresource })
    }

    /// The entry as JSON, fields in the apiserver's order.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        if !self.manager.is_empty() {
            map.insert("manager".into(), self.manager.clone().into());
        }
        map.insert("operation".into(), self.operation.as_str().into());
        map.insert("apiVersion".into(), self.api_version.clone().into());
        if let Some(time) = &self.time {
            map.insert("time".into(), time.clone().into());
        }
        map.insert("fieldsType".into(), self.fields_type.clone().into());
        map.insert("fieldsV1".into(), self.fields.to_fields_v1());
        if !self.subresource.is_empty() {
            map.insert("subresource".into(), self.subresource.clone().into());
        }
        Value::Object(map)
    }

    /// The manager identity the apiserver keys this entry by.
    pub fn identity(&self) -> Manager {
        Manager {
            name: self.manager.clone(),
            operation: self.operation,
            api_version: (self.operation == Operation::Update).then(|| self.api_version.clone()),
            subresource: self.subresource.clone(),
        }
    }
}

/// Reads a `metadata.managedFields` list; an absent list (`null`) is empty.
pub fn parse_managed_fields(list: &Value) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    let items = match list {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err(ManagedFieldsError { index: None, manager: None, reason: "expected a list".into() }),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| ManagedFieldsEntry::from_value(item).map_err(|e| ManagedFieldsError { index: Some(i), ..e }))
        .collect()
}

/// Reads `metadata.managedFields` of an object.
pub fn managed_fields_of(object: &Value) -> Result<Vec<ManagedFieldsEntry>, ManagedFieldsError> {
    parse_managed_fields(object.get("metadata").and_then(|m| m.get("managedFields")).unwrap_or(&Value::Null))
}

/// The entries that own `path` (as a member of their field set), in list order.
pub fn owners_of<'e>(entries: &'e [ManagedFieldsEntry], path: &[PathElement]) -> Vec<&'e ManagedFieldsEntry> {
    entries.iter().filter(|e| e.fields.has(path)).collect()
}

/// A manager as the apiserver counts them: name, operation, subresource, and the API version for updates.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Manager {
    /// The field manager name.
    pub name: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version, part of the identity for `Update` only.
    pub api_version: Option<String>,
    /// The subresource, empty for the main resource.
    pub subresource: String,
}

impl Manager {
    /// The identity of `name` applying to the main resource.
    pub fn applier(name: &str) -> Self {
        Manager { name: name.into(), operation: Operation::Apply, api_version: None, subresource: String::new() }
    }

    /// The apiserver's internal key: the entry's JSON without fields and time, e.g.
    /// `{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1"}`.
    pub fn identifier(&self) -> String {
        let mut out = String::from("{");
        let mut sep = "";
        let mut field = |out: &mut String, key: &str, value: &str| {
            out.push_str(sep);
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
            write_go_string(out, value, true);
            sep = ",";
        };
        if !self.name.is_empty() {
            field(&mut out, "manager", &self.name);
        }
        field(&mut out, "operation", self.operation.as_str());
        if let Some(v) = self.api_version.as_deref().filter(|v| !v.is_empty()) {
            field(&mut out, "apiVersion", v);
        }
        if !self.subresource.is_empty() {
            field(&mut out, "subresource", &self.subresource);
        }
        out.push('}');
        out
    }
}

impl fmt::Display for Manager {
    /// The apiserver's conflict wording: `"name" with subresource "scale" using apps/v1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", go_quote(&self.name))?;
        if !self.subresource.is_empty() {
            write!(f, " with subresource {}", go_quote(&self.subresource))?;
        }
        if self.operation == Operation::Update {
            write!(f, " using {}", self.api_version.as_deref().unwrap_or(""))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_writes_entries() {
        let entry = json!({"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
            "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:replicas": {}}}, "subresource": "status"});
        let e = ManagedFieldsEntry::from_value(&entry).unwrap();
        assert_eq!(e.to_value(), entry);
        assert_eq!(
            e.identity().identifier(),
            r#"{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
        assert_eq!(e.identity().to_string(), r#""kube-controller-manager" with subresource "status" using apps/v1"#);
        assert_eq!(Manager::applier("kubectl").identifier(), r#"{"manager":"kubectl","operation":"Apply"}"#);
        assert_eq!(Manager::applier("kubectl").to_string(), r#""kubectl""#);
        assert_eq!(e.kind(), crate::ownership::ManagerKind::Controller);
    }

    #[test]
    fn rejects_malformed_entries_with_context() {
        let list = json!([{"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1"},
            {"manager": "b", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]);
        let err = parse_managed_fields(&list).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"invalid managedFields entry 1 (manager "b"): operation must be `Apply` or `Update`"#
        );
        let bad = json!({"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:template": {"k:notjson": {}}}}});
        let err = ManagedFieldsEntry::from_value(&bad).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(r#"invalid managedFields entry (manager "a"): invalid path element "k:notjson": "#),
            "{err}"
        );
        // Keys of unknown kinds are dropped, as the apiserver drops them.
        let future = json!({"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:template": {"x:y": {}}}}});
        let entry = ManagedFieldsEntry::from_value(&future).unwrap();
        assert_eq!(entry.fields.to_fields_v1_string(), r#"{"f:spec":{"f:template":{}}}"#);
        for (key, value) in [("apiVersion", json!("")), ("fieldsType", json!("FieldsV2")), ("manager", json!(3))] {
            let mut e = json!({"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1"});
            e[key] = value;
            assert!(ManagedFieldsEntry::from_value(&e).is_err(), "{key}");
        }
        assert!(managed_fields_of(&json!({"metadata": {}})).unwrap().is_empty());
    }
}
