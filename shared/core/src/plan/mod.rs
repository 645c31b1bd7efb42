//! Planning a patch: what it would do to one version of an object, worked out
//! locally before anything is sent. Values in, values out.
//!
//! The planner picks the engine per [`PatchType`] (JSON Patch, merge, strategic,
//! server-side apply), runs the lints that patch type has traps for, fills in the
//! identity a server-side apply configuration needs, and returns the change as a
//! [`Planned`]: the patch as it will be sent (after `--fix` and the position tests
//! of a JSON Patch), the object it produces and what the lints found. The glue
//! crate's write path adds the concurrency guard and sends it; this module knows
//! nothing of HTTP, flags or clients. [`patch_of_edit`] turns an edited object into
//! the patch of the chosen type, for `--edit`.
//!
//! ```
//! use fieldwise_core::plan::{plan, PatchType, PlanInput};
//! use fieldwise_core::schema::{builtin, Gvk};
//! use serde_json::json;
//!
//! let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
//!                   "metadata": {"name": "web"}, "spec": {"replicas": 1}});
//! let patch = json!({"spec": {"replicas": 3}});
//! let schema = builtin();
//! let planned = plan(&PlanInput {
//!     live: &live,
//!     patch: &patch,
//!     patch_type: PatchType::Strategic,
//!     schema,
//!     ty: schema.root(&Gvk::new("apps", "v1", "Deployment")),
//!     strategic: true,
//!     field_manager: "kubectl-safe-patch",
//!     fix: false,
//!     force: false,
//!     display: "deployment.apps/web",
//! })
//! .unwrap();
//! assert_eq!(planned.result["spec"]["replicas"], 3);
//! ```

mod edit;
mod error;
mod patch_type;

pub use edit::{patch_of_edit, EditPatchError};
pub use error::PlanError;
pub use patch_type::{PatchType, UnknownPatchType};

use serde_json::{Map, Value};

use crate::lint::one_of::Merging;
use crate::lint::{self, Finding, Severity};
use crate::schema::{deduced, Schema, TypeId};
use crate::{json_patch, merge_patch, ownership, strategic};

/// Everything the planner needs.
pub struct PlanInput<'a> {
    /// The live object, as read.
    pub live: &'a Value,
    /// The user's patch.
    pub patch: &'a Value,
    /// Its flavour.
    pub patch_type: PatchType,
    /// The schema of the object's type, as the server publishes it (the embedded one offline).
    pub schema: &'a Schema,
    /// The object's root type, if the schema knows it.
    pub ty: Option<TypeId>,
    /// Whether the server takes strategic merge patches for the kind (custom resources: no).
    pub strategic: bool,
    /// Our field manager.
    pub field_manager: &'a str,
    /// Use the lints' fixed patch.
    pub fix: bool,
    /// Server-side apply with force.
    pub force: bool,
    /// kubectl's name of the object, for messages.
    pub display: &'a str,
}

/// A change as a command plans it against one version of the object.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The flavour of the patch.
    pub patch_type: PatchType,
    /// The patch, without the concurrency guard (the write path adds it).
    pub patch: Value,
    /// The object the patch produces, computed locally.
    pub result: Value,
    /// What the lints found, for the command to show (the write path only carries them).
    pub findings: Vec<Finding>,
}

/// Refuses a `path` or `from` that is neither `""` nor starts with `/` (see
/// [`PlanError::PointerWithoutSlash`]).
fn refuse_pointers_without_slash(ops: &[json_patch::Operation]) -> Result<(), PlanError> {
    for (operation, op) in ops.iter().enumerate() {
        for (field, pointer) in [("path", Some(op.path())), ("from", op.from())] {
            let Some(pointer) = pointer else { continue };
            let text = pointer.as_str();
            if text.is_empty() || text.starts_with('/') {
                continue;
            }
            let (dropped, rest) = text.split_once('/').unwrap_or((text, ""));
            return Err(PlanError::PointerWithoutSlash {
                operation,
                field,
                pointer: text.to_string(),
                dropped: dropped.to_string(),
                used: if text.contains('/') { format!("/{rest}") } else { "no member at all".to_string() },
                meant: format!("/{text}"),
            });
        }
    }
    Ok(())
}

/// Plans a patch; errors are the user's (a patch that cannot apply to this object),
/// except [`PlanError::ManagedFields`] (see [`PlanError::is_usage`]).
///
/// The planned patch carries no concurrency guard: the write path adds it.
pub fn plan(input: &PlanInput<'_>) -> Result<Planned, PlanError> {
    let mut findings = Vec::new();
    let mut json_ops = Vec::new();
    let (patch, result) = match input.patch_type {
        PatchType::Json => {
            let ops = json_patch::parse(input.patch).map_err(|e| PlanError::InvalidJsonPatch(Box::new(e)))?;
            refuse_pointers_without_slash(&ops)?;
            // The result of the user's operations, so errors number them as the user wrote them; the
            // position tests added ahead of them pass on this object by construction.
            let result =
                json_patch::apply_operations(input.live, &ops, json_patch::Limits::default()).map_err(|source| {
                    PlanError::JsonPatchDoesNotApply { object: input.display.into(), source: Box::new(source) }
                })?;
            let guarded = lint::positions::guard_positions(&ops, input.live, input.schema, input.ty);
            findings.extend(guarded.findings);
            json_ops = ops;
            (Value::Array(guarded.operations), result)
        }
        PatchType::Merge | PatchType::Strategic => {
            require_object(input.patch, input.patch_type)?;
            let merging = if input.patch_type == PatchType::Merge { Merging::Merge } else { Merging::Strategic };
            let one_of = lint::one_of::one_of_switches(input.live, input.patch, input.schema, input.ty, merging);
            let patch = if input.fix { one_of.fixed_patch.clone() } else { input.patch.clone() };
            findings.extend(one_of.findings.into_iter().map(|f| {
                if input.fix {
                    Finding { severity: Severity::Info, fix: Some("applied (--fix)".into()), ..f }
                } else {
                    f
                }
            }));
            let result = if input.patch_type == PatchType::Merge {
                findings.extend(lint::lists::merge_patch_list_losses(
                    input.live,
                    &patch,
                    input.schema,
                    input.ty,
                    input.strategic,
                ));
                merge_patch::try_apply(input.live, &patch).map_err(|source| PlanError::MergePatchDoesNotApply {
                    object: input.display.into(),
                    source: Box::new(source),
                })?
            } else {
                let refuse = || PlanError::NoStrategicMergePatch { object: input.display.into() };
                let ty = input.ty.filter(|_| input.strategic).ok_or_else(refuse)?;
                strategic::apply(input.live, &patch, input.schema, ty).map_err(|source| {
                    PlanError::StrategicDoesNotApply { object: input.display.into(), source: Box::new(source) }
                })?
            };
            (patch, result)
        }
        PatchType::Apply => {
            require_object(input.patch, input.patch_type)?;
            let config = with_identity(input.patch, input.live);
            let managed = ownership::managed_fields_of(input.live).map_err(|source| PlanError::ManagedFields {
                object: input.display.into(),
                source: Box::new(source),
            })?;
            // A kind without a published schema is applied by the server under the type it deduces
            // from the object; predict under the same one rather than refuse.
            let (schema, ty) = match input.ty {
                Some(ty) => (input.schema, ty),
                None => deduced(),
            };
            let prediction = ownership::predict_apply_conflicts(
                input.live,
                &managed,
                &config,
                input.field_manager,
                schema,
                ty,
                input.force,
            );
            for conflict in &prediction.conflicts {
                findings.push(Finding::new(
                    if input.force { Severity::Info } else { Severity::NeedsForce },
                    conflict.field(),
                    format!("server-side apply conflicts with {} on {}", conflict.manager.name, conflict.path),
                ));
            }
            (config, prediction.merged)
        }
    };
    findings.extend(lint::secret_exposure::secret_exposures(input.live, &result, &json_ops));
    findings.extend(lint::next_apply::next_apply_reverts(input.live, &result, input.schema, input.ty));
    if let Ok(managed) = ownership::managed_fields_of(input.live) {
        findings.extend(lint::foreign::foreign_owners(
            input.live,
            &result,
            &managed,
            input.schema,
            input.ty,
            input.field_manager,
        ));
    }
    Ok(Planned { patch_type: input.patch_type, patch, result, findings })
}

fn require_object(patch: &Value, patch_type: PatchType) -> Result<(), PlanError> {
    if patch.is_object() {
        Ok(())
    } else {
        Err(PlanError::NotAnObject {
            patch_type,
            got: match patch {
                Value::Array(_) => "an array (did you mean --type json?)",
                Value::Null => "null",
                _ => "a scalar",
            },
        })
    }
}

/// A server-side apply configuration needs apiVersion, kind and name; take them from the live object.
fn with_identity(patch: &Value, live: &Value) -> Value {
    let mut config = patch.clone();
    if let Value::Object(map) = &mut config {
        for key in ["apiVersion", "kind"] {
            if let (false, Some(v)) = (map.contains_key(key), live.get(key)) {
                map.insert(key.into(), v.clone());
            }
        }
        let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            for key in ["name", "namespace"] {
                if let (false, Some(v)) = (meta.contains_key(key), live.pointer(&format!("/metadata/{key}"))) {
                    meta.insert(key.into(), v.clone());
                }
            }
        }
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "namespace": "ns", "resourceVersion": "7"},
               "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "busybox", "image": "busybox:1.28"}]}}}})
    }

    /// Plans `patch` against `live` (a Deployment), for a server that takes strategic merge
    /// patches for the kind when `strategic`.
    fn plan_against(live: &Value, patch: Value, patch_type: PatchType, strategic: bool) -> Result<Planned, PlanError> {
        let schema = builtin();
        plan(&PlanInput {
            live,
            patch: &patch,
            patch_type,
            schema,
            ty: schema.root(&Gvk::new("apps", "v1", "Deployment")),
            strategic,
            field_manager: "kubectl-safe-patch",
            fix: false,
            force: false,
            display: "deployment.apps/d",
        })
    }

    fn plan_for(patch: Value, patch_type: PatchType) -> Result<Planned, PlanError> {
        plan_against(&deployment(), patch, patch_type, true)
    }

    #[test]
    fn merge_and_strategic_patches_are_sent_as_given() {
        let p = plan_for(json!({"spec": {"replicas": 2}}), PatchType::Strategic).unwrap();
        assert_eq!(p.patch, json!({"spec": {"replicas": 2}}));
        assert_eq!(p.result["spec"]["replicas"], 2);
        let same = plan_for(json!({"spec": {"replicas": 1}}), PatchType::Merge).unwrap();
        assert_eq!(same.result, deployment());
    }

    #[test]
    fn json_patch_indexes_into_keyed_lists_get_a_test_of_the_key() {
        let patch =
            json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.36"}]);
        let p = plan_for(patch, PatchType::Json).unwrap();
        assert_eq!(p.patch[0]["op"], "test");
        assert_eq!(p.patch[0]["path"], "/spec/template/spec/containers/0/name");
        assert_eq!(p.result.pointer("/spec/template/spec/containers/0/image"), Some(&json!("busybox:1.36")));
    }

    #[test]
    fn bad_patches_are_usage_errors() {
        let err = plan_for(json!([1]), PatchType::Merge).unwrap_err();
        assert!(err.is_usage() && matches!(err, PlanError::NotAnObject { .. }));
        assert!(err.to_string().contains("did you mean --type json?"), "{err}");
        let err = plan_for(json!({"op": "replace", "path": "/spec"}), PatchType::Json).unwrap_err().to_string();
        assert!(err.starts_with("invalid JSON Patch"), "{err}");
        let err = plan_for(json!([{"op": "replace", "path": "/nope/x", "value": 1}]), PatchType::Json)
            .unwrap_err()
            .to_string();
        assert!(err.contains("operation 0 (replace /nope/x)"), "{err}");
        // Operations are numbered as the user wrote them: the position test added ahead is not counted,
        // neither for an operation that does not apply nor for one that cannot be read.
        let guarded_then_bad = json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.36"},
            {"op": "remove", "path": "/spec/paused"}]);
        let err = plan_for(guarded_then_bad, PatchType::Json).unwrap_err().to_string();
        assert!(err.contains("operation 1 (remove /spec/paused): no member \"paused\" to remove"), "{err}");
        let unreadable = json!([
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.36"},
            {"op": "move", "path": "/spec/x"}]);
        let err = plan_for(unreadable, PatchType::Json).unwrap_err().to_string();
        assert!(err.contains("operation 1 (move /spec/x): missing \"from\""), "{err}");
        let err =
            plan_for(json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}), PatchType::Strategic)
                .unwrap_err();
        assert!(matches!(err, PlanError::StrategicDoesNotApply { .. }));
        let err = err.to_string();
        assert!(err.contains("does not apply") && err.contains("merge key"), "{err}");
    }

    #[test]
    fn pointers_without_a_leading_slash_are_refused_naming_what_was_meant() {
        let patch = json!([{"op": "add", "path": "metadata/labels/x", "value": "1"}]);
        let err = plan_for(patch, PatchType::Json).unwrap_err();
        assert!(err.is_usage());
        let err = err.to_string();
        assert!(
            err.contains("operation 0: its path \"metadata/labels/x\" does not start with \"/\"")
                && err.contains("ignore \"metadata\" and use \"/labels/x\"")
                && err.contains("write \"/metadata/labels/x\""),
            "{err}"
        );
        assert!(!err.contains("not found"), "{err}");
        let patch =
            json!([{"op": "test", "path": "", "value": {}}, {"op": "move", "from": "spec/paused", "path": "/x"}]);
        let err = plan_for(patch, PatchType::Json).unwrap_err().to_string();
        assert!(err.contains("operation 1: its from \"spec/paused\""), "{err}");
    }

    #[test]
    fn apply_configurations_get_the_live_identity_and_unreadable_managed_fields_are_the_objects_fault() {
        let p = plan_for(json!({"spec": {"replicas": 2}}), PatchType::Apply).unwrap();
        assert_eq!(p.patch["apiVersion"], "apps/v1");
        assert_eq!(p.patch["kind"], "Deployment");
        assert_eq!(p.patch["metadata"], json!({"name": "d", "namespace": "ns"}));
        assert_eq!(p.result["spec"]["replicas"], 2);

        let mut live = deployment();
        live["metadata"]["managedFields"] = json!([{"manager": "x"}]);
        let err = plan_against(&live, json!({"spec": {"replicas": 2}}), PatchType::Apply, true).unwrap_err();
        assert!(!err.is_usage());
        assert!(err.to_string().starts_with("deployment.apps/d: invalid managedFields entry 0"), "{err}");
    }

    #[test]
    fn custom_resources_take_no_strategic_merge_patch() {
        let err =
            plan_against(&deployment(), json!({"spec": {"replicas": 2}}), PatchType::Strategic, false).unwrap_err();
        assert!(matches!(err, PlanError::NoStrategicMergePatch { .. }));
        assert!(err.to_string().contains("use --type merge"), "{err}");
        let merge = plan_against(&deployment(), json!({"spec": {"replicas": 2}}), PatchType::Merge, false).unwrap();
        assert_eq!(merge.result["spec"]["replicas"], 2);
    }
}
