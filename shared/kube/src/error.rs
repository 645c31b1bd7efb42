//! Errors as a kubectl user expects to read them: one line, what went wrong,
//! where, and what to do. Never a panic or a backtrace.

use std::fmt;

/// Everything that can go wrong between the command line and the cluster.
#[derive(Debug)]
pub enum Error {
    /// The command line itself is wrong (flags, arguments, input files).
    Usage(String),
    /// The reader of stdout went away (`| head`): stop quietly, see [`crate::stdout`].
    StdoutClosed,
    /// The kubeconfig is missing, unreadable, or names something that is not there.
    Kubeconfig(String),
    /// The server could not be reached at all.
    Unreachable {
        /// The server URL from the kubeconfig.
        server: String,
        /// What the transport said.
        reason: String,
    },
    /// The server answered with an error Status.
    Api {
        /// HTTP status code.
        code: u16,
        /// The Status reason, e.g. `Forbidden`, `NotFound`, `Conflict`.
        reason: String,
        /// The server's message, passed through as kubectl does.
        message: String,
        /// The Status `details.causes`: for a server-side apply refused with
        /// 409, one per conflicting field; for a 422, one per invalid field.
        causes: Vec<StatusCause>,
    },
    /// The resource type is not served by this cluster.
    UnknownResourceType(String),
    /// Anything else, already phrased for the user.
    Other(String),
}

/// One cause of a refusal, from the server's Status `details.causes`.
///
/// A server-side apply refused with 409 Conflict carries one per field another
/// manager owns: reason `FieldManagerConflict`, message
/// `conflict with "kubectl" using apps/v1`, field `.spec.replicas`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCause {
    /// Machine-readable, e.g. `FieldManagerConflict`, `FieldValueInvalid`; may be empty.
    pub reason: String,
    /// Human-readable, meant to be shown as is.
    pub message: String,
    /// The field, as the server names it (`.spec.replicas`); may be empty.
    pub field: String,
}

impl From<&kube::core::response::StatusCause> for StatusCause {
    fn from(cause: &kube::core::response::StatusCause) -> Self {
        StatusCause { reason: cause.reason.clone(), message: cause.message.clone(), field: cause.field.clone() }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A command-line error.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// Converts a kube client error, naming the server for transport failures.
    pub fn from_kube(err: kube::Error, server: &str) -> Self {
        match err {
            kube::Error::Api(status) => Error::Api {
                code: status.code,
                reason: if status.reason.is_empty() { format!("{}", status.code) } else { status.reason.clone() },
                message: status.message.clone(),
                causes: status.details.iter().flat_map(|d| &d.causes).map(StatusCause::from).collect(),
            },
            kube::Error::HyperError(e) => Error::Unreachable { server: server.into(), reason: root_cause(&e) },
            kube::Error::Service(e) => Error::Unreachable { server: server.into(), reason: root_cause(e.as_ref()) },
            kube::Error::Auth(e) => {
                Error::Kubeconfig(format!("cannot get credentials for the current user: {}", root_cause(&e)))
            }
            other => Error::Other(root_cause(&other)),
        }
    }

    /// Whether the server said the object is not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Api { code: 404, .. })
    }

    /// Whether the server refused an optimistic-concurrency precondition.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Api { code: 409, .. })
    }

    /// The causes the server gave for an [`Error::Api`] refusal (empty for other errors).
    pub fn causes(&self) -> &[StatusCause] {
        match self {
            Error::Api { causes, .. } => causes,
            _ => &[],
        }
    }

    /// Whether the server said the user may not do this.
    pub fn is_forbidden(&self) -> bool {
        matches!(self, Error::Api { code: 403, .. })
    }

    /// The process exit code for this error: 1, as kubectl uses for every failure; 141 (what a
    /// shell reports for SIGPIPE) when stdout was closed.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::StdoutClosed => crate::stdout::CLOSED_PIPE_EXIT,
            _ => 1,
        }
    }
}

/// The innermost message of an error chain: "connection refused" beats
/// "client error (Connect)".
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut messages = vec![err.to_string()];
    let mut source = err.source();
    while let Some(s) = source {
        messages.push(s.to_string());
        source = s.source();
    }
    // Prefer the deepest message, but keep one level of context when the
    // deepest is a bare OS error like "Connection refused (os error 111)".
    let deepest = messages.last().cloned().unwrap_or_default();
    deepest.replace(" (os error 111)", "").to_lowercase()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) => write!(f, "error: {m}"),
            Error::StdoutClosed => write!(f, "error: standard output was closed"),
            Error::Kubeconfig(m) => write!(f, "error: {m}"),
            Error::Unreachable { server, reason } => write!(
                f,
                "error: cannot reach the Kubernetes API server at {server} ({reason}): is the cluster running, and do --kubeconfig/--context point at it?"
            ),
            Error::Api { reason, message, .. } => write!(f, "Error from server ({reason}): {message}"),
            Error::UnknownResourceType(t) => write!(
                f,
                "error: the server doesn't have a resource type \"{t}\" (see `kubectl api-resources` for the types it serves)"
            ),
            Error::Other(m) => write!(f, "error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Other(format!("invalid JSON from the server: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(body: serde_json::Value) -> Error {
        let status: kube::core::Status = serde_json::from_value(body).expect("a Status");
        Error::from_kube(kube::Error::Api(status.boxed()), "https://127.0.0.1:6443")
    }

    #[test]
    fn an_apply_conflict_keeps_its_causes_and_its_one_line_message() {
        let err = api_error(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl\" using apps/v1", "field": ".spec.replicas"}]}
        }));
        assert!(err.is_conflict());
        assert_eq!(
            err.causes(),
            [StatusCause {
                reason: "FieldManagerConflict".into(),
                message: "conflict with \"kubectl\" using apps/v1".into(),
                field: ".spec.replicas".into(),
            }]
        );
        assert_eq!(
            err.to_string(),
            "Error from server (Conflict): Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas"
        );
    }

    #[test]
    fn a_status_without_details_has_no_causes() {
        let err = api_error(serde_json::json!({"status": "Failure", "code": 404, "reason": "NotFound",
            "message": "deployments.apps \"gone\" not found"}));
        assert!(err.is_not_found());
        assert!(err.causes().is_empty());
        assert!(Error::Other("x".into()).causes().is_empty());
    }
}
