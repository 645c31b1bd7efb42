//! What a refused or failed write means for the next step, the way client-go's
//! `retry.RetryOnConflict` reads answers: only a lost race is worth planning
//! again; a refusal is reported at once; a broken connection must be looked
//! into before anything is decided, because the write may have landed.

use crate::conn::error::ConnError;
use crate::error::{Error, StatusCause};

use super::request::PatchType;

/// The meaning of a failed write.
#[derive(Debug)]
pub enum Answer {
    /// The object may have moved since it was read (409 on a resourceVersion
    /// precondition, or a JSON Patch that does not apply to the object as it is now,
    /// which a failed `test` of its guard is: 422): read it again; plan again if it
    /// moved, else the refusal stands.
    Moved(Error),
    /// Server-side apply refused because other managers own fields it sets: only
    /// the user can decide (`--force`), so never retried.
    FieldManagerConflict(Vec<StatusCause>),
    /// The server is overloaded (429): wait and try the same again.
    Throttled(Error),
    /// The server refused the write (validation, admission, RBAC, not found): final.
    Refused(Error),
    /// The request never reached the server: nothing was written.
    NotSent(Error),
    /// The request may have reached the server (the connection broke after it was
    /// sent, or the server failed with 5xx): read the object to learn whether it landed.
    MaybeSent(Error),
}

/// Whether `err` is a failure to reach the server rather than its answer about one object:
/// no answer at all, or a gateway's 502, 503 or 504. A run over many objects stops after a
/// few in a row ([`super::bulk`]); one object's check reports it instead of judging the object.
pub fn is_transport_failure(err: &Error) -> bool {
    err.is_transport() || matches!(err, Error::Conn(ConnError::Api { code: 502..=504, .. }))
}

/// Classifies the error a write of `patch_type` failed with.
pub fn classify(err: Error, patch_type: PatchType) -> Answer {
    match &err {
        Error::Conn(ConnError::Api { code: 409, causes, .. })
            if causes.iter().any(|c| c.reason == "FieldManagerConflict") =>
        {
            Answer::FieldManagerConflict(causes.clone())
        }
        Error::Conn(ConnError::Api { code: 409, .. }) => Answer::Moved(err),
        // The apiserver applies a JSON Patch to the current object; one that does not
        // apply (a failed `test` of the guard, a position test, a missing path) comes back
        // as 422 "the server rejected our request due to an error in our request", with no
        // causes. A refusal of the patched object by validation names its fields in causes:
        // final. (A 500: upstream panics on a `test` of a list holding null.) The write path
        // still reads the object again to tell a race from a patch that never applied.
        Error::Conn(ConnError::Api { code: 422, causes, .. }) if patch_type == PatchType::Json && causes.is_empty() => {
            Answer::Moved(err)
        }
        Error::Conn(ConnError::Api { code: 500, .. }) if patch_type == PatchType::Json => Answer::Moved(err),
        Error::Conn(ConnError::Api { code: 429, .. }) => Answer::Throttled(err),
        Error::Conn(ConnError::Api { code, .. }) if *code >= 500 => Answer::MaybeSent(err),
        Error::Conn(ConnError::Unreachable { maybe_sent: false, .. }) => Answer::NotSent(err),
        Error::Conn(ConnError::Unreachable { maybe_sent: true, .. }) => Answer::MaybeSent(err),
        _ => Answer::Refused(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, message: &str, causes: Vec<StatusCause>) -> Error {
        Error::Conn(ConnError::Api { code, reason: "X".into(), message: message.into(), causes })
    }

    #[test]
    fn answers_by_meaning() {
        let cause = StatusCause {
            reason: "FieldManagerConflict".into(),
            message: "conflict with \"kubectl\"".into(),
            field: ".spec.replicas".into(),
        };
        assert!(matches!(
            classify(api(409, "Apply failed with 1 conflict", vec![cause]), PatchType::Apply),
            Answer::FieldManagerConflict(c) if c.len() == 1
        ));
        assert!(matches!(
            classify(api(409, "the object has been modified", vec![]), PatchType::Merge),
            Answer::Moved(_)
        ));
        let test = "testing value /metadata/resourceVersion failed: test failed";
        assert!(matches!(classify(api(422, test, vec![]), PatchType::Json), Answer::Moved(_)));
        assert!(matches!(classify(api(422, test, vec![]), PatchType::Merge), Answer::Refused(_)));
        let generic = "the server rejected our request due to an error in our request";
        assert!(matches!(classify(api(422, generic, vec![]), PatchType::Json), Answer::Moved(_)));
        // Validation of the patched object names the field: refused at once, whatever the patch type.
        let invalid = StatusCause {
            reason: "FieldValueInvalid".into(),
            message: "Invalid value: -1".into(),
            field: "spec.replicas".into(),
        };
        let validation = "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1";
        assert!(matches!(classify(api(422, validation, vec![invalid]), PatchType::Json), Answer::Refused(_)));
        assert!(matches!(
            classify(api(422, "spec.replicas: Invalid value", vec![]), PatchType::Merge),
            Answer::Refused(_)
        ));
        assert!(matches!(classify(api(403, "forbidden", vec![]), PatchType::Merge), Answer::Refused(_)));
        assert!(matches!(classify(api(429, "slow down", vec![]), PatchType::Merge), Answer::Throttled(_)));
        assert!(matches!(classify(api(504, "timeout", vec![]), PatchType::Merge), Answer::MaybeSent(_)));
        let refused = Error::Conn(ConnError::Unreachable {
            server: "s".into(),
            reason: "connection refused".into(),
            maybe_sent: false,
        });
        assert!(matches!(classify(refused, PatchType::Merge), Answer::NotSent(_)));
        let reset = Error::Conn(ConnError::Unreachable {
            server: "s".into(),
            reason: "connection reset".into(),
            maybe_sent: true,
        });
        assert!(matches!(classify(reset, PatchType::Merge), Answer::MaybeSent(_)));
    }

    #[test]
    fn transport_failures_are_no_answer_or_a_gateways() {
        let unreachable =
            Error::Conn(ConnError::Unreachable { server: "s".into(), reason: "refused".into(), maybe_sent: false });
        assert!(is_transport_failure(&unreachable));
        assert!(is_transport_failure(&api(503, "unavailable", vec![])));
        assert!(!is_transport_failure(&api(500, "internal", vec![])));
        assert!(!is_transport_failure(&api(422, "invalid", vec![])));
    }
}
