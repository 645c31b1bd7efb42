//! Objects a controller made whose last-applied annotation is a copy of their owner's: not
//! applied objects, so a scan leaves them out (and counts them) and nothing offers to repair
//! or migrate them.
//!
//! Why this exists: the DaemonSet and StatefulSet controllers (kube-controller-manager's
//! `controller/history`) copy every annotation of the owner onto each ControllerRevision they
//! make, the last-applied one included. The revision then looks like a client-side applied
//! object whose annotation names fields it does not have (stale), and kube-controller-manager
//! looks like a client-side applier (its `Update` entry owns the annotation) whose fields a
//! migration would hand to kubectl. Neither is true: nobody applied the revision.
//!
//! The rule reads the object alone, so a scan decides from a metadata list without reading the
//! owner: the object has an `ownerReferences` entry with `controller: true`, and its annotation
//! describes that owner (the same API group, kind and name) rather than the object itself. An
//! object someone did apply (its annotation names the object) stays an applied object even when
//! a controller owns it. The version is not compared: the owner may have been applied as an
//! older version of its group.

use serde_json::Value;

use super::annotation_of;
use crate::schema::Gvk;

/// Whether `object` was made by a controller and carries a copy of that owner's annotation
/// (see the module docs).
pub fn is_controller_copy(object: &Value) -> bool {
    copied_from_controller(object).is_some()
}

fn copied_from_controller(object: &Value) -> Option<()> {
    let owner = object
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|reference| reference.get("controller").and_then(Value::as_bool) == Some(true))?;
    let applied: Value = serde_json::from_str(annotation_of(object)?).ok()?;
    let (owner_type, applied_type) = (Gvk::of_object(owner)?, Gvk::of_object(&applied)?);
    let owner_name = owner.get("name").and_then(Value::as_str)?;
    let applied_name = applied.pointer("/metadata/name").and_then(Value::as_str)?;
    let same = owner_type.group == applied_type.group && owner_type.kind == applied_type.kind;
    (same && owner_name == applied_name).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_applied::LAST_APPLIED_ANNOTATION;
    use serde_json::json;

    fn revision(annotation: &str, controller: Option<bool>) -> Value {
        let mut owner = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u1"});
        if let Some(controller) = controller {
            owner["controller"] = json!(controller);
        }
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": "web-5d8f", "namespace": "ns", "ownerReferences": [owner],
                "annotations": {LAST_APPLIED_ANNOTATION: annotation}}})
    }

    const OWNERS: &str = r#"{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"replicas":1}}
"#;

    #[test]
    fn a_revision_carrying_its_controllers_annotation_is_a_copy() {
        assert!(is_controller_copy(&revision(OWNERS, Some(true))));
        // Applied as an older version of the same group: still the owner's.
        let older = OWNERS.replace("apps/v1", "apps/v1beta2");
        assert!(is_controller_copy(&revision(&older, Some(true))));
    }

    #[test]
    fn an_applied_object_a_controller_owns_or_an_owner_that_is_no_controller_is_not() {
        // The annotation names the object itself: someone applied it.
        let own =
            r#"{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-5d8f","namespace":"ns"}}"#;
        assert!(!is_controller_copy(&revision(own, Some(true))));
        // Owned, but not by a controller (or the flag is false).
        assert!(!is_controller_copy(&revision(OWNERS, None)));
        assert!(!is_controller_copy(&revision(OWNERS, Some(false))));
        // Another owner of the same kind, another group, no annotation, an unreadable one.
        assert!(!is_controller_copy(&revision(&OWNERS.replace("\"web\"", "\"db\""), Some(true))));
        assert!(!is_controller_copy(&revision(&OWNERS.replace("apps/v1", "example.com/v1"), Some(true))));
        assert!(!is_controller_copy(&revision("{not json", Some(true))));
        let mut bare = revision(OWNERS, Some(true));
        bare["metadata"]["annotations"] = json!({});
        assert!(!is_controller_copy(&bare));
    }
}
