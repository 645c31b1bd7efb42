//! PATCH requests, in all four flavours, with dry-run and field manager as
//! the apiserver expects them. This module sends exactly what it is given:
//! guards are added by [`super::guard`], and a write that is not a dry run goes
//! through [`super::GuardedWrite`], never through [`patch`] directly.

use http::Request;
use serde_json::Value;

use crate::api::objects::send;
use crate::api::reference::ObjectRef;
use crate::api::request_url::Query;
use crate::conn::client::Connection;
use crate::error::{Error, Refusal, Result};

pub use crate::api::media_type::{content_type, STRATEGIC_MERGE_PATCH};
/// The four ways to change part of an object; defined (without HTTP or flags) in the core crate.
pub use fieldwise_core::plan::PatchType;

/// How the server treats fields the object's type does not have (the `fieldValidation`
/// query parameter, kubectl's `--validate`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FieldValidation {
    /// Refuse the request (a patch meant for another kind, a typo): the default.
    #[default]
    Strict,
    /// Accept it, drop the unknown fields, and answer with warnings.
    Warn,
    /// Accept it and drop the unknown fields silently.
    Ignore,
}

impl FieldValidation {
    /// The query parameter's value.
    pub fn query_value(self) -> &'static str {
        match self {
            FieldValidation::Strict => "Strict",
            FieldValidation::Warn => "Warn",
            FieldValidation::Ignore => "Ignore",
        }
    }

    /// What this level does with the fields `text` (a patch, read by the plugin itself and
    /// described as `source`: `the patch from -p`) writes twice in one object, as the
    /// apiserver's strict decoding does with a body it reads: strict refuses it (exit 2,
    /// [`Refusal::DuplicateFields`]), warn says so on stderr, ignore keeps quiet. The value
    /// kept is the last, as decoding keeps it; the server never sees the first.
    pub fn on_duplicate_fields(self, text: &str, source: &str) -> Result<()> {
        let fields: Vec<String> =
            fieldwise_core::yaml::duplicate_fields(text).into_iter().map(|(_, path)| path).collect();
        if fields.is_empty() {
            return Ok(());
        }
        match self {
            FieldValidation::Strict => {
                Err(Error::Refused { object: source.to_string(), rule: Refusal::DuplicateFields { fields } })
            }
            FieldValidation::Warn => {
                for field in fields {
                    eprintln!("warning: {source}: duplicate field \"{field}\": only its last value is used");
                }
                Ok(())
            }
            FieldValidation::Ignore => Ok(()),
        }
    }
}

/// How to send a patch.
#[derive(Debug, Clone)]
pub struct PatchRequest<'a> {
    /// Which flavour the body is.
    pub patch_type: PatchType,
    /// The patch document.
    pub body: &'a Value,
    /// The field manager recorded in managedFields.
    pub field_manager: &'a str,
    /// `dryRun=All`: validated and admitted, not stored.
    pub dry_run: bool,
    /// For server-side apply: take conflicting fields.
    pub force: bool,
    /// `status`, `scale`, ... or the main resource.
    pub subresource: Option<&'a str>,
    /// What the server does with fields the type does not have.
    pub validation: FieldValidation,
}

/// Sends one PATCH and returns the object the server answered with.
///
/// A refusal is a [`ConnError::Api`](crate::conn::error::ConnError::Api) that keeps the Status `details.causes`: a
/// server-side apply refused with 409 Conflict names each conflicting field
/// there ([`Error::causes`]), for callers that compare or explain them.
pub async fn patch(conn: &Connection, target: &ObjectRef, request: &PatchRequest<'_>) -> Result<Value> {
    // Strict unless asked otherwise: a field the type does not have (a patch meant for
    // another kind, a typo) is refused, not dropped.
    if let Some(name) = request.subresource {
        target.resource.check_subresource(name)?;
    }
    let mut query = Query::new();
    query.push("fieldManager", request.field_manager).push("fieldValidation", request.validation.query_value());
    if request.dry_run {
        query.push("dryRun", "All");
    }
    if request.force && request.patch_type == PatchType::Apply {
        query.push("force", "true");
    }
    let url = query.on(&target.path(request.subresource)?);
    let body = serde_json::to_vec(request.body).map_err(|e| Error::malformed("the patch (encoding it)", e))?;
    let http = Request::patch(url).header(http::header::CONTENT_TYPE, content_type(request.patch_type)).body(body);
    send(conn, http).await
}

/// The object a JSON merge patch of `target` would leave, as the server would store it
/// (its defaults and admission applied): the patch sent with `dryRun=All` and strict
/// validation. What a prediction asks to learn which fields the server sets again.
pub async fn dry_run_merge_patch(
    conn: &Connection,
    target: &ObjectRef,
    body: &Value,
    field_manager: &str,
) -> Result<Value> {
    let request = PatchRequest {
        patch_type: PatchType::Merge,
        body,
        field_manager,
        dry_run: true,
        force: false,
        subresource: None,
        validation: FieldValidation::Strict,
    };
    patch(conn, target, &request).await
}

/// The object `live` becomes when turned into `left` (a prediction of what an apply leaves),
/// as the server would store it, its defaults and admission applied: a JSON merge patch from
/// `live` to `left` (lists whole, the write noise of both left out) sent with `dryRun=All`.
/// Which fields an apply drops the server sets again. `Err` says why it could not be had.
pub async fn dry_run_left(
    conn: &Connection,
    target: &ObjectRef,
    live: &Value,
    left: &Value,
    field_manager: &str,
) -> std::result::Result<Value, String> {
    use fieldwise_core::ownership::without_write_noise;
    let patch = fieldwise_core::merge_patch::create_two_way(&without_write_noise(live), &without_write_noise(left))
        .map_err(|e| e.to_string())?;
    dry_run_merge_patch(conn, target, &patch, field_manager)
        .await
        .map_err(|e| e.to_string().trim_start_matches("error: ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_fields_are_refused_warned_or_ignored_as_the_validation_says() {
        let text = r#"{"data": {"a": "1", "a": "2"}}"#;
        let err = FieldValidation::Strict.on_duplicate_fields(text, "the patch from -p").unwrap_err();
        assert_eq!(err.exit_code(), 2, "refused, as the exit-code table says");
        assert_eq!(
            err.printed(),
            "error: the patch from -p has duplicate field \"data.a\": only its last value would be used, and the apiserver's strict field validation (--validate=strict, the default) refuses such a body; remove the duplicate, or pass --validate=warn to send the last value"
        );
        assert!(FieldValidation::Warn.on_duplicate_fields(text, "the patch from -p").is_ok());
        assert!(FieldValidation::Ignore.on_duplicate_fields(text, "the patch from -p").is_ok());
        assert!(FieldValidation::Strict.on_duplicate_fields(r#"{"data": {"a": "1"}}"#, "p").is_ok());
    }
}
