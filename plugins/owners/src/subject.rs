//! One object under examination: where it came from, its managers, and the
//! words and JSON used for them everywhere in the output.

use fieldwise_core::ownership::{managed_fields_of, ManagedFieldsEntry};
use fieldwise_kube::{Error, Result};
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::age::{self, TimeStyle};

/// An object and its parsed `metadata.managedFields`.
#[derive(Debug, Clone)]
pub struct Subject {
    /// kubectl's name for it: `deployment.apps/busybox-demo`.
    pub display: String,
    /// The object as read (from the cluster or a file).
    pub object: Value,
    /// The file it was read from, for `--local`.
    pub source: Option<String>,
}

impl Subject {
    /// A subject named from the object's own apiVersion, kind and name.
    pub fn from_object(object: Value, source: Option<String>) -> Self {
        Subject { display: fieldwise_kube::api::reference::display_name(&object), object, source }
    }

    /// The managers, or an error naming the object when an entry cannot be read.
    pub fn entries(&self) -> Result<Vec<ManagedFieldsEntry>> {
        managed_fields_of(&self.object).map_err(|e| Error::semantics(self.display.clone(), e))
    }

    /// The managers, requiring at least one: ownership of an object without them is unknown.
    pub fn required_entries(&self) -> Result<Vec<ManagedFieldsEntry>> {
        let entries = self.entries()?;
        if entries.is_empty() {
            let hint = if self.source.is_some() {
                "export it with `kubectl get -o yaml --show-managed-fields`"
            } else {
                "no writer has set a field the server tracks (an object made with nothing but a name, as `kubectl create serviceaccount NAME` makes one, has none), or its managedFields were cleared"
            };
            return Err(Error::Missing {
                object: self.display.clone(),
                what: "metadata.managedFields".into(),
                hint: format!(": {hint}"),
            });
        }
        Ok(entries)
    }

    /// `{apiVersion, kind, namespace, name, uid}` of the object, as the JSON output names it.
    pub fn reference(&self) -> Value {
        reference(&self.object)
    }
}

/// `{apiVersion, kind, namespace, name, uid}` of any object (absent parts left out).
pub fn reference(object: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for (key, pointer) in [
        ("apiVersion", "/apiVersion"),
        ("kind", "/kind"),
        ("namespace", "/metadata/namespace"),
        ("name", "/metadata/name"),
        ("uid", "/metadata/uid"),
    ] {
        if let Some(v) = object.pointer(pointer).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// How an owner is named beside a field: `kubectl-scale Update/scale 5m`.
pub fn owner_label(entry: &ManagedFieldsEntry, style: TimeStyle, now: Timestamp) -> String {
    let mut label = format!("{} {}", entry.manager, entry.operation.as_str());
    if !entry.subresource.is_empty() {
        label.push('/');
        label.push_str(&entry.subresource);
    }
    let time = age::show(entry.time.as_deref(), style, now);
    if !time.is_empty() {
        label.push(' ');
        label.push_str(&time);
    }
    label
}

/// An owner in JSON: `{manager, operation, subresource, apiVersion, time, kind}`.
pub fn owner_json(entry: &ManagedFieldsEntry) -> Value {
    json!({
        "manager": entry.manager,
        "operation": entry.operation.as_str(),
        "subresource": entry.subresource,
        "apiVersion": entry.api_version,
        "time": entry.time,
        "kind": entry.kind().name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_missing_managed_fields() {
        let s = Subject::from_object(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
            Some("f.yaml".into()),
        );
        assert_eq!(s.display, "deployment.apps/d");
        let err = s.required_entries().unwrap_err().to_string();
        assert!(
            err.contains("deployment.apps/d has no metadata.managedFields") && err.contains("--show-managed-fields"),
            "{err}"
        );
        let bad = Subject::from_object(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "managedFields": [{"manager": "x"}]}}),
            None,
        );
        let err = bad.entries().unwrap_err().printed();
        assert!(err.starts_with("error: pod/p: invalid managedFields entry 0"), "{err}");
    }
}
