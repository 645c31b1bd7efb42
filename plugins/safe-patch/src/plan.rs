//! What a patch would do, worked out locally before anything is sent: planned by
//! the core ([`fieldwise_core::plan`]: engine per patch type, lints, server-side
//! apply identity); this module chooses the patch type, builds the core's input from
//! the command line, and turns the core's errors (and the server's refusal of the
//! planned result) into the command's. The write path guards and sends the plan.
//! Both the single patch ([`crate::flow`]) and the patch of many objects
//! ([`crate::many`]) plan through it.

use fieldwise_core::plan::PlanError;
pub use fieldwise_core::plan::PlanInput;
use fieldwise_core::schema::Gvk;
use fieldwise_kube::api::openapi::{Schemas, TypeSchema};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::write::{PatchType, Planned};
use fieldwise_kube::ConnError;
use serde_json::Value;

use crate::PatchArgs;

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

/// The patch type: the flag, else strategic where the server takes it (built-in types), else merge.
pub fn choose_type(requested: Option<PatchType>, strategic: bool, display: &str) -> PatchType {
    match requested {
        Some(t) => t,
        None if strategic => PatchType::Strategic,
        None => {
            eprintln!(
                "note: {display} takes no strategic merge patch (a custom resource): using --type merge (--type apply for server-side apply)"
            );
            PatchType::Merge
        }
    }
}

/// Whether the server takes a strategic merge patch of `target` through `subresource`:
/// it must for the object read (the `Scale` of the scale subresource, `typed`) and for
/// the type that serves it, since a custom resource refuses strategic merge on every
/// subresource (415), although its `Scale` is a built-in type.
pub async fn takes_strategic(
    schemas: &mut Schemas,
    typed: &TypeSchema,
    target: &ObjectRef,
    subresource: Option<&str>,
) -> Result<bool> {
    if !typed.takes_strategic() {
        return Ok(false);
    }
    if subresource.is_none() {
        return Ok(true);
    }
    let resource = &target.resource;
    let served = schemas.for_gvk(&Gvk::new(&resource.group, &resource.version, &resource.kind)).await?;
    Ok(served.takes_strategic())
}

/// The planner's input from the command line's choices and the object's schema;
/// `strategic`: whether the server takes strategic merge patches here ([`takes_strategic`]).
pub fn plan_input<'a>(
    live: &'a Value,
    patch: &'a Value,
    patch_type: PatchType,
    typed: &'a TypeSchema,
    strategic: bool,
    args: &'a PatchArgs,
    display: &'a str,
) -> PlanInput<'a> {
    PlanInput {
        live,
        patch,
        patch_type,
        schema: &typed.schema,
        ty: typed.root,
        strategic,
        field_manager: &args.field_manager,
        fix: args.fix,
        force: args.force,
        display,
    }
}

/// A server refusal with what to do about it.
pub fn explain_rejection(err: Error, display: &str) -> Error {
    match err {
        Error::Conn(ConnError::Api { code: 422, reason, message, causes }) => Error::Conn(ConnError::Api {
            code: 422,
            reason,
            message: format!(
                "{message} (the server validated the patched {display} and refused it; nothing was written)"
            ),
            causes,
        }),
        other => other,
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
