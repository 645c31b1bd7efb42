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
    match err {
        PlanError::ManagedFields { object, source } => Error::semantics(object, *source),
        usage => Error::usage(usage.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::json_patch;
    use fieldwise_core::ownership::parse_managed_fields;
    use serde_json::json;

    #[test]
    fn bad_patches_are_usage_errors_and_bad_objects_are_not() {
        let invalid = json_patch::parse(&json!({"op": "replace"})).unwrap_err();
        let err = command_error(PlanError::InvalidJsonPatch(Box::new(invalid)));
        assert!(matches!(err, Error::Usage(_)), "{err:?}");
        assert!(err.printed().starts_with("error: invalid JSON Patch"), "{err}");
        let unreadable = parse_managed_fields(&json!([{"manager": "x"}])).unwrap_err();
        let err = command_error(PlanError::ManagedFields { object: "pod/p".into(), source: Box::new(unreadable) });
        assert!(matches!(err, Error::Semantics { .. }), "{err:?}");
        assert!(err.printed().starts_with("error: pod/p: invalid managedFields entry 0"), "{err}");
    }
}
