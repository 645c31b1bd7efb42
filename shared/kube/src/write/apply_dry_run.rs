//! A server-side apply sent as a dry run, to check a prediction against the apiserver:
//! `owners plan`, `owners --conflicts --verify` and the next apply `owners transfer -f`
//! previews all ask through here. One request shape (strict validation, `dryRun=All`),
//! guarded by the resourceVersion the prediction was made on; one reading of the answer
//! (accepted with the object the server would store, 409 with its causes, refused with
//! its code and reason, the object moved, or the server unreachable); and, in
//! [`ApplyDryRun::checked`], the read, dry-run, judge cycle made again when the object
//! moves under it, as client-go's `RetryOnConflict` re-reads on a lost race.

use fieldwise_core::ownership::ServerAnswer;
use serde_json::Value;

use super::classify::is_transport_failure;
use super::request::{patch, FieldValidation, PatchRequest, PatchType};
use crate::api::objects;
use crate::api::reference::ObjectRef;
use crate::conn::client::Connection;
use crate::conn::error::ConnError;
use crate::error::{Error, Result};

/// How many times [`ApplyDryRun::checked`] reads and asks again when the object keeps moving.
pub const MAX_ATTEMPTS: u32 = 5;

/// The apiserver's answer to one dry run.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRunAnswer {
    /// Accepted, refused with conflicts, or refused for another reason.
    pub answer: ServerAnswer,
    /// The Status reason of a refusal for another reason (`Invalid`, `NotFound`, ..., the
    /// HTTP status's name when the server gave none); empty otherwise.
    pub reason: String,
}

impl DryRunAnswer {
    /// The 409's causes as `(field, message)`, sorted; empty for any other answer.
    pub fn sorted_causes(&self) -> Vec<(String, String)> {
        match &self.answer {
            ServerAnswer::Conflict(causes) => {
                let mut causes = causes.clone();
                causes.sort();
                causes
            }
            _ => Vec::new(),
        }
    }

    /// A refusal as kubectl prints it (`Error from server (Invalid): ...`); `None` otherwise.
    pub fn refusal(&self) -> Option<Error> {
        match &self.answer {
            ServerAnswer::Refused { code, message } => Some(Error::Conn(ConnError::Api {
                code: *code,
                reason: self.reason.clone(),
                message: message.clone(),
                causes: Vec::new(),
            })),
            _ => None,
        }
    }
}

/// Which dry runs [`ApplyDryRun::checked`] sends on each read of the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DryRuns {
    /// None: the prediction alone (`owners --conflicts` without `--verify`).
    None,
    /// The apply without force.
    Unforced,
    /// The apply without force, and when it conflicts, forced too (what `--force-conflicts`
    /// would do, and the managers it leaves).
    UnforcedThenForced,
}

/// The answers to the dry runs of one read of the object.
#[derive(Debug, Clone, PartialEq)]
pub struct Answers {
    /// The apply without force.
    pub unforced: DryRunAnswer,
    /// The forced apply, sent when the unforced one conflicted and [`DryRuns::UnforcedThenForced`].
    pub forced: Option<DryRunAnswer>,
}

/// What the caller made of a read and its answers.
#[derive(Debug)]
pub struct Judged<T> {
    /// The result to return.
    pub value: T,
    /// Whether the answers agreed with the prediction. A disagreement may be a race (a 409's
    /// causes come before the resourceVersion is compared): the object is read again, and
    /// the cycle made again when it moved.
    pub agrees: bool,
}

/// A server-side apply of `config` by `field_manager`, to be sent as a dry run.
#[derive(Debug, Clone, Copy)]
pub struct ApplyDryRun<'a> {
    /// The configuration, as the apply would send it.
    pub config: &'a Value,
    /// `--field-manager`.
    pub field_manager: &'a str,
}

impl ApplyDryRun<'_> {
    /// Sends the apply once with `dryRun=All`, forced or not, guarded by `version` (the
    /// resourceVersion the prediction read) when given. `None` when the guard failed: the
    /// object moved. A failure to reach the server is an `Err` ([`is_transport_failure`]);
    /// every answer of the server is a [`DryRunAnswer`].
    pub async fn send(
        &self,
        conn: &Connection,
        target: &ObjectRef,
        force: bool,
        version: Option<&str>,
    ) -> Result<Option<DryRunAnswer>> {
        let guarded;
        let body = match version {
            Some(version) => {
                let mut copy = self.config.clone();
                copy["metadata"]["resourceVersion"] = version.into();
                guarded = copy;
                &guarded
            }
            None => self.config,
        };
        let request = PatchRequest {
            patch_type: PatchType::Apply,
            body,
            field_manager: self.field_manager,
            dry_run: true,
            force,
            subresource: None,
            validation: FieldValidation::Strict,
        };
        let answered = |answer| Ok(Some(DryRunAnswer { answer, reason: String::new() }));
        match patch(conn, target, &request).await {
            Ok(object) => answered(ServerAnswer::Accepted(object)),
            Err(e) if e.is_conflict() && !e.causes().is_empty() => answered(ServerAnswer::Conflict(
                e.causes().iter().map(|c| (c.field.clone(), c.message.clone())).collect(),
            )),
            // The resourceVersion guard: the object moved.
            Err(e) if e.is_conflict() => Ok(None),
            Err(e) if is_transport_failure(&e) => Err(e),
            Err(Error::Conn(ConnError::Api { code, reason, message, .. })) => Ok(Some(DryRunAnswer {
                answer: ServerAnswer::Refused { code, message },
                reason: reason_or_status(reason, code),
            })),
            Err(e) => Err(e),
        }
    }

    /// Reads `target`, sends `dry_runs` guarded by the resourceVersion read, and hands the
    /// live object (`None`: absent) and the answers (`None` with [`DryRuns::None`]) to
    /// `judge`; made again, up to [`MAX_ATTEMPTS`] times, when the object moved in between.
    pub async fn checked<T>(
        &self,
        conn: &Connection,
        target: &ObjectRef,
        dry_runs: DryRuns,
        mut judge: impl FnMut(Option<&Value>, Option<&Answers>) -> Result<Judged<T>>,
    ) -> Result<T> {
        for _ in 0..MAX_ATTEMPTS {
            let live = match objects::get(conn, target, None).await {
                Ok(live) => Some(live),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(e),
            };
            let version = live.as_ref().and_then(|l| l.pointer("/metadata/resourceVersion")).and_then(Value::as_str);
            let answers = match dry_runs {
                DryRuns::None => None,
                _ => match self.answers(conn, target, dry_runs, version).await? {
                    Some(answers) => Some(answers),
                    None => continue,
                },
            };
            let judged = judge(live.as_ref(), answers.as_ref())?;
            if !judged.agrees && answers.is_some() && version.is_some() {
                let now = objects::get(conn, target, None).await?;
                if now.pointer("/metadata/resourceVersion").and_then(Value::as_str) != version {
                    continue;
                }
            }
            return Ok(judged.value);
        }
        Err(Error::usage(format!(
            "{} kept changing while it was planned ({MAX_ATTEMPTS} attempts): plan it again",
            target.display()
        )))
    }

    /// The dry runs of one read; `None` when the object moved.
    async fn answers(
        &self,
        conn: &Connection,
        target: &ObjectRef,
        dry_runs: DryRuns,
        version: Option<&str>,
    ) -> Result<Option<Answers>> {
        let Some(unforced) = self.send(conn, target, false, version).await? else { return Ok(None) };
        let forced = match (&unforced.answer, dry_runs) {
            (ServerAnswer::Conflict(_), DryRuns::UnforcedThenForced) => {
                match self.send(conn, target, true, version).await? {
                    Some(answer) => Some(answer),
                    None => return Ok(None),
                }
            }
            _ => None,
        };
        Ok(Some(Answers { unforced, forced }))
    }
}

/// The Status reason, or the name of the HTTP status when the server gave none.
fn reason_or_status(reason: String, code: u16) -> String {
    if !reason.is_empty() && !reason.bytes().all(|b| b.is_ascii_digit()) {
        return reason;
    }
    match code {
        400 => "BadRequest",
        403 => "Forbidden",
        404 => "NotFound",
        422 => "Invalid",
        500 => "InternalError",
        _ => "Refused",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_the_servers_reason_or_names_the_status() {
        assert_eq!(reason_or_status("Invalid".into(), 422), "Invalid");
        assert_eq!(reason_or_status(String::new(), 404), "NotFound");
        assert_eq!(reason_or_status("500".into(), 500), "InternalError");
        assert_eq!(reason_or_status(String::new(), 418), "Refused");
        let refused = DryRunAnswer {
            answer: ServerAnswer::Refused { code: 422, message: "spec.replicas: Invalid value".into() },
            reason: "Invalid".into(),
        };
        assert_eq!(
            refused.refusal().map(|e| e.to_string()),
            Some("Error from server (Invalid): spec.replicas: Invalid value".to_string())
        );
        let conflict = DryRunAnswer {
            answer: ServerAnswer::Conflict(vec![("b".into(), "m".into()), ("a".into(), "m".into())]),
            reason: String::new(),
        };
        assert_eq!(conflict.sorted_causes(), [("a".to_string(), "m".to_string()), ("b".to_string(), "m".to_string())]);
        assert!(conflict.refusal().is_none());
    }
}
