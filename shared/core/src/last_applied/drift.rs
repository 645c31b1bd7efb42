//! How the live object drifted from its annotation, as `kubectl last-applied view --diff`
//! shows it: the annotation beside the live values of the fields it sets, and the verdict.
//!
//! The verdict is the scan's own ([`super::check::stale_candidate`], then
//! [`super::check::stale`]), so `view --diff` and `scan` never disagree about an object.

use serde_json::Value;

use super::check::{stale, stale_candidate, Finding};
use super::{annotation_of, string_data};
use crate::fieldpath::{extract, field_set_lossy};
use crate::schema::{Schema, TypeId};

/// The annotation and the live object, side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The annotation's configuration, with an applied `stringData` as the server stored it.
    pub applied: Value,
    /// The live object restricted to the fields the annotation sets (its own empty
    /// annotations map kept, as kubectl encodes it: that is not drift).
    pub live: Value,
    /// What `scan` reports for the object: `Some` exactly when it calls it stale.
    pub finding: Option<Finding>,
}

/// The drift of `live` from its annotation under `schema` (the type `ty` in it, as
/// client-side apply merges the kind); `None` when the object has no readable annotation.
pub fn drift(live: &Value, schema: &Schema, ty: Option<TypeId>) -> Option<Drift> {
    let applied: Value = serde_json::from_str(annotation_of(live)?).ok()?;
    let applied = string_data::as_stored(&applied, live);
    let (fields, _) = field_set_lossy(&applied, schema, ty);
    let mut current = extract(live, &fields);
    if let (Value::Object(map), Some(meta)) = (&mut current, applied.get("metadata")) {
        let mut meta_live = map.get("metadata").cloned().unwrap_or_else(|| Value::Object(Default::default()));
        if let (Value::Object(m), Some(annotations)) = (&mut meta_live, meta.get("annotations")) {
            m.insert("annotations".into(), annotations.clone());
        }
        map.insert("metadata".into(), meta_live);
    }
    let finding = if stale_candidate(live, schema) { stale(live, schema) } else { None };
    Some(Drift { applied, live: current, finding })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::last_applied::LAST_APPLIED_ANNOTATION;
    use crate::schema::{builtin, Gvk};

    fn deployment(replicas: i64, manager: &str) -> Value {
        let annotation = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"replicas":3}}"#;
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ns", "annotations": {LAST_APPLIED_ANNOTATION: annotation},
                "managedFields": [{"manager": manager, "operation": "Update", "apiVersion": "apps/v1",
                    "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
            "spec": {"replicas": replicas, "paused": false}})
    }

    fn drift_of(live: &Value) -> Drift {
        let ty = Gvk::of_object(live).and_then(|g| builtin().root(&g));
        drift(live, builtin(), ty).unwrap()
    }

    #[test]
    fn an_edited_field_is_shown_and_is_stale_like_the_scan_says() {
        let edited = deployment(5, "kubectl-edit");
        let d = drift_of(&edited);
        assert_eq!(d.applied["spec"], json!({"replicas": 3}));
        assert_eq!(d.live["spec"], json!({"replicas": 5}), "only the fields the annotation sets");
        assert_eq!(d.finding, stale(&edited, builtin()));
        assert!(d.finding.is_some());
    }

    #[test]
    fn an_applied_object_has_no_drift() {
        let clean = deployment(3, "kubectl-client-side-apply");
        let d = drift_of(&clean);
        assert_eq!(d.applied["spec"], d.live["spec"]);
        assert_eq!(d.live["metadata"]["annotations"], json!({}), "kubectl's empty map is not drift");
        assert_eq!(d.finding, None);
    }

    #[test]
    fn no_annotation_no_drift() {
        let mut bare = deployment(3, "kubectl-edit");
        bare["metadata"].as_object_mut().unwrap().remove("annotations");
        assert_eq!(drift(&bare, builtin(), None), None);
    }
}
