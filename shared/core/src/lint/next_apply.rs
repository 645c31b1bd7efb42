//! A field the patch changes that the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation records with another value. The next client-side `kubectl apply`
//! of the same file computes its three-way patch from that annotation (the
//! previous intent), the file and the live object, and sets the field back,
//! whichever manager `managedFields` names for it: the reverter is the
//! annotation, not the manager that last wrote the field.

use serde_json::Value;

use super::{short, summarize, Finding, Severity};
use crate::fieldpath::{compare, value_at, values_equal};
use crate::last_applied::check::recorded_leaves;
use crate::last_applied::{annotation_of, string_data, LAST_APPLIED_ANNOTATION};
use crate::schema::{Schema, TypeId};

/// One finding naming the fields changed between `live` and `result` that the
/// annotation on `live` records otherwise, with the value `kubectl apply` puts
/// back (not for Secrets: their values are never shown). `None` without an
/// annotation, with one that is not JSON, or when nothing it records changes.
pub fn next_apply_reverts(live: &Value, result: &Value, schema: &Schema, ty: Option<TypeId>) -> Option<Finding> {
    let applied: Value = serde_json::from_str(annotation_of(live)?).ok()?;
    // The server keeps a Secret's `stringData` in `data`: compare what it stored.
    let applied = string_data::as_stored(&applied, live);
    let secret = string_data::is_secret(live);
    let comparison = compare(live, result, schema, ty);
    let changed = comparison.added.union(&comparison.modified).union(&comparison.removed);
    let mut reverted = Vec::new();
    for path in recorded_leaves(&applied, schema, ty) {
        if !changed.has(path.elements()) {
            continue;
        }
        let recorded = value_at(&applied, path.elements());
        let same = match (recorded, value_at(result, path.elements())) {
            (Some(a), Some(b)) => values_equal(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            continue;
        }
        reverted.push(match recorded {
            Some(value) if !secret => format!("{path} (back to {})", short(value)),
            _ => path.to_string(),
        });
    }
    if reverted.is_empty() {
        return None;
    }
    let fields = summarize(&reverted);
    let (it, them) = if reverted.len() == 1 { ("it", "records it") } else { ("them", "records them") };
    Some(
        Finding::new(
            Severity::Warning,
            fields.clone(),
            format!(
                "the next `kubectl apply` of the same file sets {it} back: {fields}; the {LAST_APPLIED_ANNOTATION} annotation {them}"
            ),
        )
        .with_fix("make the change in the file too and `kubectl apply` it, so the annotation records the new value"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn deployment(annotation: Option<&str>) -> Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "ns", "annotations": {}},
            "spec": {"replicas": 3, "paused": false, "template": {"spec": {"containers": [
                {"name": "app", "image": "app:1"}]}}}});
        if let Some(text) = annotation {
            d["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = json!(text);
        }
        d
    }

    #[test]
    fn a_field_the_annotation_records_is_set_back_by_the_next_apply() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let applied = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns"},
            "spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"app:1"}]}}}}"#;
        let live = deployment(Some(applied));
        let mut result = live.clone();
        result["spec"]["replicas"] = json!(5);
        result["spec"]["template"]["spec"]["containers"][0]["image"] = json!("app:2");
        let finding = next_apply_reverts(&live, &result, schema, ty).expect("a finding");
        assert_eq!(finding.severity, Severity::Warning);
        assert_eq!(
            finding.message,
            "the next `kubectl apply` of the same file sets them back: .spec.replicas (back to 3), \
             .spec.template.spec.containers[name=\"app\"].image (back to \"app:1\"); the \
             kubectl.kubernetes.io/last-applied-configuration annotation records them"
        );
        // A field the annotation does not record is left alone by the next apply.
        let mut paused = live.clone();
        paused["spec"]["paused"] = json!(true);
        assert_eq!(next_apply_reverts(&live, &paused, schema, ty), None);
        // Without the annotation, nothing is reverted through it.
        assert_eq!(next_apply_reverts(&deployment(None), &result, schema, ty), None);
    }

    #[test]
    fn secret_values_are_never_shown() {
        let schema = builtin();
        let ty = schema.root(&Gvk::new("", "v1", "Secret"));
        let applied =
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2"}}"#;
        let live = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "annotations": {LAST_APPLIED_ANNOTATION: applied}},
            "data": {"password": "aHVudGVyMg=="}});
        let mut result = live.clone();
        result["data"]["password"] = json!("c2VjcmV0");
        let finding = next_apply_reverts(&live, &result, schema, ty).expect("a finding");
        assert!(finding.message.contains(".data.password;"), "{}", finding.message);
        assert!(!finding.message.contains("aHVudGVyMg") && !finding.message.contains("hunter2"), "{}", finding.message);
    }
}
