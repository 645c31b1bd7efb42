//! What a patch would do, worked out locally before anything is sent: the
//! result, the lints, and the exact request body with its concurrency guard.

use fieldwise_core::lint::{self, Finding, Severity};
use fieldwise_core::schema::{Schema, TypeId};
use fieldwise_core::{json_patch, merge_patch, ownership, strategic};
use fieldwise_kube::diff::without_server_noise;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::write::PatchType;
use serde_json::{json, Map, Value};

/// Everything the planner needs.
pub struct PlanInput<'a> {
    /// The live object, as read.
    pub live: &'a Value,
    /// The user's patch.
    pub patch: &'a Value,
    /// Its flavour.
    pub patch_type: PatchType,
    /// The schema (built-in types).
    pub schema: &'a Schema,
    /// The object's root type, if the schema knows it.
    pub ty: Option<TypeId>,
    /// Our field manager.
    pub field_manager: &'a str,
    /// Use the lints' fixed patch.
    pub fix: bool,
    /// Server-side apply with force.
    pub force: bool,
    /// kubectl's name of the object, for messages.
    pub display: &'a str,
}

/// The outcome of planning.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The patch as it will be sent, without the guard (after `--fix`).
    pub patch: Value,
    /// The request body: the patch plus its resourceVersion guard.
    pub body: Value,
    /// The object the patch produces, computed locally.
    pub result: Value,
    /// What the lints found.
    pub findings: Vec<Finding>,
}

impl Plan {
    /// Whether the write would change nothing a user can see.
    pub fn is_no_change(&self, live: &Value) -> bool {
        without_server_noise(live) == without_server_noise(&self.result)
    }
}

/// Plans a patch; errors are the user's (a patch that cannot apply to this object).
pub fn plan(input: &PlanInput<'_>) -> Result<Plan> {
    let resource_version = input
        .live
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Error::Other(format!("{} has no metadata.resourceVersion to guard the write with", input.display))
        })?
        .to_string();
    let mut findings = Vec::new();
    let (patch, body, result) = match input.patch_type {
        PatchType::Json => {
            let ops = json_patch::parse(input.patch).map_err(|e| Error::usage(format!("invalid JSON Patch: {e}")))?;
            let guarded = lint::positions::guard_positions(&ops, input.live, input.schema, input.ty);
            findings.extend(guarded.findings);
            let mut body = vec![json!({"op": "test", "path": "/metadata/resourceVersion", "value": resource_version})];
            body.extend(guarded.operations);
            let body = Value::Array(body);
            let result = json_patch::apply(input.live, &body)
                .map_err(|e| Error::usage(format!("the JSON Patch does not apply to {}: {e}", input.display)))?;
            (input.patch.clone(), body, result)
        }
        PatchType::Merge | PatchType::Strategic => {
            require_object(input.patch, input.patch_type)?;
            let one_of = lint::one_of::one_of_switches(input.live, input.patch, input.schema, input.ty);
            let patch = if input.fix { one_of.fixed_patch.clone() } else { input.patch.clone() };
            findings.extend(one_of.findings.into_iter().map(|f| {
                if input.fix {
                    Finding { severity: Severity::Info, fix: Some("applied (--fix)".into()), ..f }
                } else {
                    f
                }
            }));
            let result = if input.patch_type == PatchType::Merge {
                findings.extend(lint::lists::merge_patch_list_losses(input.live, &patch, input.schema, input.ty));
                merge_patch::try_apply(input.live, &patch)
                    .map_err(|e| Error::usage(format!("the merge patch does not apply to {}: {e}", input.display)))?
            } else {
                let ty = input.ty.ok_or_else(|| {
                    Error::usage(format!(
                        "{} has no strategic merge metadata (a custom resource?): use --type merge, or --type apply for server-side apply",
                        input.display
                    ))
                })?;
                strategic::apply(input.live, &patch, input.schema, ty).map_err(|e| {
                    Error::usage(format!("the strategic merge patch does not apply to {}: {e}", input.display))
                })?
            };
            (patch.clone(), with_resource_version(&patch, &resource_version), result)
        }
        PatchType::Apply => {
            require_object(input.patch, input.patch_type)?;
            let config = with_identity(input.patch, input.live);
            let managed = ownership::managed_fields_of(input.live)
                .map_err(|e| Error::Other(format!("{}: {e}", input.display)))?;
            let ty = input.ty.ok_or_else(|| {
                Error::usage(format!(
                    "{}: no schema to predict a server-side apply with; try --dry-run=server",
                    input.display
                ))
            })?;
            let prediction = ownership::predict_apply_conflicts(
                input.live,
                &managed,
                &config,
                input.field_manager,
                input.schema,
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
            (config.clone(), with_resource_version(&config, &resource_version), prediction.merged)
        }
    };
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
    Ok(Plan { patch, body, result, findings })
}

fn require_object(patch: &Value, patch_type: PatchType) -> Result<()> {
    if patch.is_object() {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "a {} patch must be a JSON object, got {}",
            patch_type.name(),
            match patch {
                Value::Array(_) => "an array (did you mean --type json?)",
                Value::Null => "null",
                _ => "a scalar",
            }
        )))
    }
}

/// The patch with `metadata.resourceVersion` set: the apiserver then refuses
/// the write with 409 Conflict if the object changed since it was read.
fn with_resource_version(patch: &Value, resource_version: &str) -> Value {
    let mut body = patch.clone();
    if let Value::Object(map) = &mut body {
        let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert("resourceVersion".into(), Value::String(resource_version.into()));
        }
    }
    body
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

/// What a plan changes, as two merge patches (forward and back): equal
/// signatures mean the same fields go from the same old values to the same
/// new values, so a retry after a conflict writes exactly what was approved.
pub fn change_signature(live: &Value, result: &Value) -> (Value, Value) {
    let (before, after) = (without_server_noise(live), without_server_noise(result));
    let forward = merge_patch::create_two_way(&before, &after).unwrap_or(Value::Null);
    let back = merge_patch::create_two_way(&after, &before).unwrap_or(Value::Null);
    (forward, back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::schema::{builtin, Gvk};

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "namespace": "ns", "resourceVersion": "7"},
               "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "busybox", "image": "busybox:1.28"}]}}}})
    }

    fn plan_for(patch: Value, patch_type: PatchType) -> Result<Plan> {
        let live = deployment();
        let schema = builtin();
        let input = PlanInput {
            live: &live,
            patch: &patch,
            patch_type,
            schema,
            ty: schema.root(&Gvk::new("apps", "v1", "Deployment")),
            field_manager: "kubectl-safe-patch",
            fix: false,
            force: false,
            display: "deployment.apps/d",
        };
        plan(&input)
    }

    #[test]
    fn merge_and_strategic_bodies_carry_the_resource_version() {
        let p = plan_for(json!({"spec": {"replicas": 2}}), PatchType::Strategic).unwrap();
        assert_eq!(p.body, json!({"spec": {"replicas": 2}, "metadata": {"resourceVersion": "7"}}));
        assert_eq!(p.result["spec"]["replicas"], 2);
        assert!(!p.is_no_change(&deployment()));
        let same = plan_for(json!({"spec": {"replicas": 1}}), PatchType::Merge).unwrap();
        assert!(same.is_no_change(&deployment()));
    }

    #[test]
    fn json_patch_bodies_start_with_a_resource_version_test() {
        let patch =
            json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "busybox:1.36"}]);
        let p = plan_for(patch, PatchType::Json).unwrap();
        assert_eq!(p.body[0], json!({"op": "test", "path": "/metadata/resourceVersion", "value": "7"}));
        assert_eq!(p.body[1]["path"], "/spec/template/spec/containers/0/name");
        assert_eq!(p.result.pointer("/spec/template/spec/containers/0/image"), Some(&json!("busybox:1.36")));
    }

    #[test]
    fn bad_patches_are_usage_errors() {
        let err = plan_for(json!([1]), PatchType::Merge).unwrap_err().to_string();
        assert!(err.contains("did you mean --type json?"), "{err}");
        let err = plan_for(json!({"op": "replace", "path": "/spec"}), PatchType::Json).unwrap_err().to_string();
        assert!(err.starts_with("error: invalid JSON Patch"), "{err}");
        let err = plan_for(json!([{"op": "replace", "path": "/nope/x", "value": 1}]), PatchType::Json)
            .unwrap_err()
            .to_string();
        assert!(err.contains("operation 1 (replace /nope/x)"), "{err}");
        let err =
            plan_for(json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}), PatchType::Strategic)
                .unwrap_err()
                .to_string();
        assert!(err.contains("does not apply") && err.contains("merge key"), "{err}");
    }

    #[test]
    fn identical_changes_have_identical_signatures() {
        let live = deployment();
        let mut result = live.clone();
        result["spec"]["replicas"] = json!(2);
        let mut moved_live = live.clone();
        moved_live["metadata"]["resourceVersion"] = json!("8");
        moved_live["metadata"]["labels"] = json!({"other": "writer"});
        let mut moved_result = moved_live.clone();
        moved_result["spec"]["replicas"] = json!(2);
        assert_eq!(change_signature(&live, &result), change_signature(&moved_live, &moved_result));
        moved_live["spec"]["replicas"] = json!(5);
        moved_result = moved_live.clone();
        moved_result["spec"]["replicas"] = json!(2);
        assert_ne!(change_signature(&live, &result), change_signature(&moved_live, &moved_result));
    }
}
