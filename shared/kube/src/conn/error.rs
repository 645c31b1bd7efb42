//! The connection layer's errors, and the one classifier of the client library's errors:
//! the kubeconfig and the connection flags (wrong, missing, contradicting each other), a
//! server that cannot be reached (and whether a request may have reached it), the server's
//! own answer (a Status, with its causes), the exec credential plugin's failure.
//!
//! [`ConnError::from_kube`] is the only place a `kube::Error` becomes ours: every server
//! message and cause passes the redaction boundary there ([`crate::redact::server_message`]),
//! so no caller can print an object the server quoted (a refused patch of a Secret quotes
//! its values). The layers above keep these errors whole inside their own
//! (`crate::error::Error::Conn`).

use std::fmt;

/// What went wrong between the kubeconfig and the server's answer.
#[derive(Debug)]
pub enum ConnError {
    /// A connection flag (or a value the kubeconfig gives for one) is wrong: what, and what
    /// to do, in one line.
    Usage(String),
    /// The kubeconfig is missing, unreadable, or names something that is not there.
    Kubeconfig(String),
    /// The server could not be reached, or the connection failed during the request.
    Unreachable {
        /// The server URL from the kubeconfig.
        server: String,
        /// What the transport said.
        reason: String,
        /// Whether the request may have reached the server: false only when the
        /// connection was never made (refused, unresolvable, TLS handshake), so a
        /// write certainly did not happen; true when it broke or timed out later.
        maybe_sent: bool,
    },
    /// The server answered with an error Status.
    Api {
        /// HTTP status code.
        code: u16,
        /// The Status reason, e.g. `Forbidden`, `NotFound`, `Conflict`.
        reason: String,
        /// The server's message, through the redaction boundary
        /// ([`crate::redact::server_message`]): object dumps cut, Secret values hidden.
        message: String,
        /// The Status `details.causes`: for a server-side apply refused with
        /// 409, one per conflicting field; for a 422, one per invalid field.
        causes: Vec<StatusCause>,
    },
    /// The server answered 404 on the path of a type discovery named: the type is no longer
    /// served (its CustomResourceDefinition or APIService was removed after discovery was
    /// read). A command on that type fails with it; a listing of many types skips the type
    /// with it and goes on.
    NoLongerServed {
        /// What the server answered.
        answer: Box<ConnError>,
        /// Whether this run's discovery came from the disk cache, now cleared so that the
        /// next run discovers again.
        cache_cleared: bool,
    },
    /// The kubeconfig user's exec credential plugin gave no credential.
    Credential(CredentialError),
    /// The Kubernetes client failed in a way that is neither the server's answer nor
    /// the transport (a request it could not build, an answer it could not decode).
    Client(Box<kube::Error>),
}

/// Why a kubeconfig user's exec credential plugin gave no credential. Worded as kubectl
/// words it, and never quoting what the plugin printed on stdout: that is where a
/// credential would be (the plugin's stderr reaches the terminal directly, as with kubectl).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// The command is not there.
    #[error("exec: executable {command} not found{}", install_hint(.hint))]
    NotFound {
        /// The kubeconfig's `exec.command`.
        command: String,
        /// The kubeconfig's `exec.installHint`, if any.
        hint: Option<String>,
    },
    /// The command could not be started for another reason.
    #[error("exec: executable {command} could not be started: {reason}")]
    CannotStart {
        /// The kubeconfig's `exec.command`.
        command: String,
        /// What the operating system said.
        reason: String,
    },
    /// The command exited with a failure.
    #[error("exec: executable {command} failed with {status}")]
    Failed {
        /// The kubeconfig's `exec.command`.
        command: String,
        /// `exit code N`, or the signal that ended it.
        status: String,
    },
    /// The plugin needs a terminal (`interactiveMode: Always`) and standard input is not one.
    #[error("exec plugin {command} cannot support interactive mode: standard input is not a terminal")]
    NeedsTerminal {
        /// The kubeconfig's `exec.command`.
        command: String,
    },
    /// The kubeconfig's exec entry has no command.
    #[error("the kubeconfig user's exec entry has no command")]
    NoCommand,
    /// What the plugin printed is not a usable ExecCredential; `problem` never quotes it.
    #[error("exec plugin {command}: {problem}")]
    BadOutput {
        /// The kubeconfig's `exec.command`.
        command: String,
        /// What is wrong, without the output's content.
        problem: String,
    },
}

fn install_hint(hint: &Option<String>) -> String {
    hint.as_deref().map(str::trim).filter(|h| !h.is_empty()).map(|h| format!(" ({h})")).unwrap_or_default()
}

/// Result with [`ConnError`].
pub type ConnResult<T> = std::result::Result<T, ConnError>;

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
        StatusCause {
            reason: cause.reason.clone(),
            message: crate::redact::server_message(&cause.message),
            field: cause.field.clone(),
        }
    }
}

impl ConnError {
    /// A connection flag that is wrong.
    pub fn usage(message: impl Into<String>) -> Self {
        ConnError::Usage(message.into())
    }

    /// Converts a kube client error, naming the server for transport failures (see the
    /// module docs: every server message and cause is redacted here).
    pub fn from_kube(err: kube::Error, server: &str) -> Self {
        match err {
            kube::Error::Api(status) => ConnError::Api {
                code: status.code,
                reason: if status.reason.is_empty() { format!("{}", status.code) } else { status.reason.clone() },
                message: crate::redact::server_message(&status.message),
                causes: status.details.iter().flat_map(|d| &d.causes).map(StatusCause::from).collect(),
            },
            kube::Error::HyperError(e) => ConnError::Unreachable {
                server: server.into(),
                reason: root_cause(&e),
                maybe_sent: !never_connected(&e),
            },
            kube::Error::Service(e) => match credential_error(e.as_ref()) {
                Some(credential) => ConnError::Credential(credential),
                None => ConnError::Unreachable {
                    server: server.into(),
                    reason: root_cause(e.as_ref()),
                    maybe_sent: !never_connected(e.as_ref()),
                },
            },
            kube::Error::Auth(e) => {
                ConnError::Kubeconfig(format!("cannot get credentials for the current user: {}", root_cause(&e)))
            }
            other => ConnError::Client(Box::new(other)),
        }
    }

    /// The failure of a listing of `answer`'s type, when it says the type is gone: a 404 on a
    /// collection is never about an object, so it means the server no longer serves the type
    /// (or the cache named one it does not: [`ConnError::NoLongerServed`]). Any other error is
    /// given back as it is.
    pub fn no_longer_served(answer: ConnError) -> Result<ConnError, ConnError> {
        match answer {
            ConnError::NoLongerServed { answer, .. } => Ok(ConnError::NoLongerServed { answer, cache_cleared: false }),
            answer @ ConnError::Api { code: 404, .. } => {
                Ok(ConnError::NoLongerServed { answer: Box::new(answer), cache_cleared: false })
            }
            other => Err(other),
        }
    }

    /// The HTTP status code of the server's answer (`None` when there was none).
    pub fn code(&self) -> Option<u16> {
        match self {
            ConnError::Api { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The causes the server gave for an [`ConnError::Api`] refusal (empty for other errors).
    pub fn causes(&self) -> &[StatusCause] {
        match self {
            ConnError::Api { causes, .. } => causes,
            _ => &[],
        }
    }
}

impl fmt::Display for ConnError {
    /// One line, before the redaction boundary: these errors are printed through
    /// `crate::error::Error`, whose `Display` scrubs them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnError::Usage(m) | ConnError::Kubeconfig(m) => f.write_str(m),
            ConnError::Unreachable { server, reason, .. } => write!(
                f,
                "cannot reach the Kubernetes API server at {server} ({reason}): is the cluster running, and do --kubeconfig/--context point at it?"
            ),
            ConnError::Api { reason, message, .. } => write!(f, "Error from server ({reason}): {message}"),
            ConnError::NoLongerServed { answer, cache_cleared: true } => write!(
                f,
                "{answer}: the cached API discovery named a resource type the server no longer serves; the cache is cleared, run the command again"
            ),
            // Always a 404, whose body may be a Status or plain text ("404 page not found").
            ConnError::NoLongerServed { cache_cleared: false, .. } => write!(
                f,
                "the server no longer serves this resource type (404 Not Found): it was removed after discovery was read"
            ),
            ConnError::Credential(e) => write!(f, "cannot get credentials for the current user: {e}"),
            ConnError::Client(e) => write!(f, "{}", root_cause(e.as_ref())),
        }
    }
}

impl std::error::Error for ConnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnError::NoLongerServed { answer, .. } => Some(answer.as_ref()),
            ConnError::Credential(e) => Some(e),
            ConnError::Client(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// The exec credential plugin's failure in an error chain (the client's credential layer
/// fails a request with it before anything is sent).
fn credential_error(err: &(dyn std::error::Error + 'static)) -> Option<CredentialError> {
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(found) = e.downcast_ref::<CredentialError>() {
            return Some(found.clone());
        }
        next = e.source();
    }
    None
}

/// Whether an error chain says the connection was never made, so nothing was sent:
/// connection refused, an address that does not resolve or route, or hyper's
/// connect stage (which includes the TLS handshake).
fn never_connected(err: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if matches!(io.kind(), ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable) {
                return true;
            }
        }
        if e.to_string().starts_with("client error (Connect)") {
            return true;
        }
        next = e.source();
    }
    false
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The error of a Status answer `body`, as the client hands it over (also for the top
    /// error's tests).
    pub(crate) fn api_error(body: serde_json::Value) -> ConnError {
        let status: kube::core::Status = serde_json::from_value(body).expect("a Status");
        ConnError::from_kube(kube::Error::Api(status.boxed()), "https://127.0.0.1:6443")
    }

    #[test]
    fn an_apply_conflict_keeps_its_causes_and_its_one_line_message() {
        let err = api_error(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl\" using apps/v1", "field": ".spec.replicas"}]}
        }));
        assert_eq!(err.code(), Some(409));
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
        assert_eq!(err.code(), Some(404));
        assert!(err.causes().is_empty());
        assert!(ConnError::usage("x").causes().is_empty());
        assert_eq!(ConnError::usage("x").code(), None);
    }

    #[test]
    fn a_404_on_a_collection_is_a_type_no_longer_served_and_keeps_the_answer() {
        let answer = api_error(serde_json::json!({"status": "Failure", "code": 404, "reason": "NotFound",
            "message": "the server could not find the requested resource"}));
        let gone = ConnError::no_longer_served(answer).expect("a 404 is a type no longer served");
        assert!(matches!(&gone, ConnError::NoLongerServed { cache_cleared: false, .. }), "{gone:?}");
        let answer = std::error::Error::source(&gone).expect("the server's answer");
        assert_eq!(
            answer.to_string(),
            "Error from server (NotFound): the server could not find the requested resource"
        );
        let forbidden = api_error(serde_json::json!({"status": "Failure", "code": 403, "reason": "Forbidden",
            "message": "no"}));
        assert!(ConnError::no_longer_served(forbidden).is_err(), "a 403 is given back as it is");
    }

    /// Issue #13, problem 1: kube-apiserver v1.33 quotes the whole patched Secret (its
    /// data, and stringData through the last-applied annotation) when strict validation
    /// refuses a merge or JSON patch. The message keeps the reason and the field path only.
    #[test]
    fn a_strict_validation_refusal_of_a_secret_quotes_no_value() {
        let annotation = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "data": {"password": "Y2FuYXJ5LWRhdGEtMTIz"}, "stringData": {"token": "canary-string-456"}})
        .to_string();
        let patched = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "data": {"password": "Y2FuYXJ5LWRhdGEtMTIz", "token": "Y2FuYXJ5LXN0cmluZy00NTY="}, "dataa": {"x": "eA=="},
            "metadata": {"name": "dbcreds", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": annotation}}})
        .to_string();
        let quoted = serde_json::to_string(&patched).unwrap();
        let err = api_error(
            serde_json::json!({"kind": "Status", "status": "Failure", "code": 422, "reason": "Invalid",
            "message": format!(" \"\" is invalid: patch: Invalid value: {quoted}: strict decoding error: unknown field \"dataa\""),
            "details": {"causes": [{"reason": "FieldValueInvalid", "field": "patch",
                "message": format!("Invalid value: {quoted}: strict decoding error: unknown field \"dataa\"")}]}}),
        );
        assert_eq!(
            err.to_string(),
            "Error from server (Invalid): the patched object is invalid: patch: strict decoding error: unknown field \"dataa\""
        );
        assert_eq!(err.causes()[0].message, "strict decoding error: unknown field \"dataa\"");
        assert_eq!(err.causes()[0].field, "patch");
    }
}
