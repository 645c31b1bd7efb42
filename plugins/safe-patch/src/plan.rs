//! What a patch would do, worked out locally before anything is sent: planned by
//! the core ([`fieldwise_core::plan`]: engine per patch type, lints, server-side
//! apply identity); this module only turns the core's errors into the command's.
//! The write path guards and sends the plan.

use fieldwise_core::plan::PlanError;
pub use fieldwise_core::plan::PlanInput;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::write::Planned;

/// Plans a patch; errors are the user's (a patch that cannot apply to this object),
/// but for an object whose managedFields cannot be read.
///
/// The planned patch carries no concurrency guard: the write path adds it.
pub fn plan(input: &PlanInput<'_>) -> Result<Planned> {
    fieldwise_core::plan::plan(input).map_err(command_error)
}

/// A usage error (exit 1, `error: ...`) for the user's patch, else an error about the object.
fn command_error(err: PlanError) -> Error {
    if err.is_usage() {
        Error::usage(err.to_string())
    } else {
        Error::Other(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::plan::PatchType;
    use fieldwise_core::schema::{builtin, Gvk};
    use serde_json::{json, Value};

    fn plan_for(live: Value, patch: Value, patch_type: PatchType) -> Result<Planned> {
        let schema = builtin();
        plan(&PlanInput {
            live: &live,
            patch: &patch,
            patch_type,
            schema,
            ty: schema.root(&Gvk::new("apps", "v1", "Deployment")),
            strategic: true,
            field_manager: "kubectl-safe-patch",
            fix: false,
            force: false,
            display: "deployment.apps/d",
        })
    }

    #[test]
    fn bad_patches_are_usage_errors_and_bad_objects_are_not() {
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let err = plan_for(live.clone(), json!({"op": "replace", "path": "/spec"}), PatchType::Json).unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert!(err.to_string().starts_with("error: invalid JSON Patch"), "{err}");
        let mut broken = live;
        broken["metadata"]["managedFields"] = json!([{"manager": "x"}]);
        let err = plan_for(broken, json!({"spec": {}}), PatchType::Apply).unwrap_err();
        assert!(matches!(err, Error::Other(_)), "{err:?}");
        assert!(err.to_string().starts_with("error: deployment.apps/d: invalid managedFields entry 0"), "{err}");
    }
}
