//! Errors as a kubectl user expects to read them: one line, what went wrong,
//! where, and what to do. Never a panic or a backtrace.

use std::fmt;

/// Everything that can go wrong between the command line and the cluster.
#[derive(Debug)]
pub enum Error {
    /// The command line itself is wrong (flags, arguments, input files).
    Usage(String),
    /// The reader of stdout went away (`| head`): stop quietly, see [`crate::output::stdout`].
    StdoutClosed,
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
    /// The resource type is not served by this cluster.
    UnknownResourceType(String),
    /// The server answered 404 on the path of a type discovery named: the type is no longer
    /// served (its CustomResourceDefinition or APIService was removed after discovery was
    /// read). A command on that type fails with it; a listing of many types skips the type
    /// with it ([`Error::no_longer_served`]) and goes on.
    NoLongerServed {
        /// What the server answered.
        answer: Box<Error>,
        /// Whether this run's discovery came from the disk cache, now cleared so that the
        /// next run discovers again.
        cache_cleared: bool,
    },
    /// The object changed between the preview and the write, and the change would
    /// now do something other than what was approved: nothing was written (exit 3).
    ChangedSincePreview {
        /// kubectl's name of the object.
        object: String,
        /// Why the approved change no longer stands, in a few words.
        reason: String,
        /// What moved underneath, as a diff already redacted for printing.
        what_moved: Option<String>,
    },
    /// Server-side apply refused: other managers own fields this apply sets (exit 2).
    FieldManagerConflict {
        /// kubectl's name of the object.
        object: String,
        /// Our field manager.
        field_manager: String,
        /// One per conflicting field, as the server named them.
        conflicts: Vec<StatusCause>,
    },
    /// The connection broke after a write was sent, and the object could not be read
    /// again to learn whether the write landed.
    OutcomeUnknown {
        /// kubectl's name of the object.
        object: String,
        /// What the transport said.
        reason: String,
        /// The pre-image kept for this write, for `undo` if it did land.
        backup: Option<std::path::PathBuf>,
    },
    /// Every attempt lost a race with another writer until the time allowed ran out.
    KeptChanging {
        /// kubectl's name of the object.
        object: String,
        /// How many writes were sent.
        attempts: u32,
        /// How long the attempts took.
        waited: std::time::Duration,
    },
    /// A local file or directory could not be read, written, created or removed
    /// (backups, caches, `--edit` files, standard output).
    LocalIo {
        /// What was being done, as a verb phrase: `write the backup`.
        action: String,
        /// The file, when there is one.
        path: Option<std::path::PathBuf>,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// Bytes that should be a document (JSON, YAML, a schema) are not.
    Malformed {
        /// What they are and where they came from: `the backup /x/y.json`.
        what: String,
        /// The parser's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// One of the core's semantic operations failed on an object: a patch that does not
    /// apply, managedFields that cannot be read, an annotation that cannot be rebuilt.
    Semantics {
        /// kubectl's name of the object (or the file it came from).
        object: String,
        /// The core's error (boxed: some are large, and errors travel in every `Result`).
        source: Box<CoreError>,
    },
    /// A rule of fieldwise refused a write before anything was sent.
    Refused {
        /// kubectl's name of the object.
        object: String,
        /// Which rule, and the facts that broke it.
        rule: Refusal,
    },
    /// The server lacks something fieldwise needs (aggregated discovery, a resourceVersion
    /// to guard a write with, managedFields).
    Unsupported {
        /// What is missing, and what to do.
        what: String,
    },
    /// The object lacks what the command reads (its last-applied annotation, its managedFields).
    Missing {
        /// kubectl's name of the object.
        object: String,
        /// What it lacks: `a last-applied annotation`.
        what: String,
        /// What to do about it, or why it happens.
        hint: String,
    },
    /// An external program the user chose (the editor) could not run or failed.
    Program {
        /// The command line.
        command: String,
        /// Why: it could not start (`Some`), or it exited with a failure (the status).
        start_error: Option<std::io::Error>,
        /// Its exit status, when it ran.
        status: Option<std::process::ExitStatus>,
    },
    /// The Kubernetes client failed in a way that is neither the server's answer nor
    /// the transport (a request it could not build, an answer it could not decode).
    Client(Box<kube::Error>),
    /// `completion install|uninstall` could not manage the completer links.
    Completion(InstallError),
    /// `owners --conflicts --verify`: the apiserver's dry run found other conflicts than the
    /// prediction (both are printed above the error). A bug worth reporting.
    PredictionDisagrees,
    /// Work that was stopped from inside (the consumer of a stream went away, a limiter
    /// closed): never the user's fault, reported in case it is seen.
    Stopped(&'static str),
    /// An object reference could not be built from a manifest or owner reference
    /// (missing fields, a type the cluster does not serve, a namespace that differs from `-n`).
    Reference(ReferenceError),
    /// The kubeconfig user's exec credential plugin gave no credential.
    Credential(CredentialError),
    /// A stop signal (Ctrl-C, SIGTERM) came before the write of this object was sent:
    /// nothing was written (the command exits 130 or 143).
    Interrupted {
        /// kubectl's name of the object.
        object: String,
        /// The signal, as `kill -l` names it.
        signal: &'static str,
    },
}

/// Declares [`CoreError`] from one list of (variant, core error type, doc): the enum, its
/// `Display` and `source` (both the core error's own), and a `From` for each type.
macro_rules! core_errors {
    ($($(#[doc = $doc:literal])* $variant:ident($ty:ty),)*) => {
        /// The core's errors, kept whole so a caller can match on them and read their source.
        #[derive(Debug)]
        pub enum CoreError {
            $($(#[doc = $doc])* $variant($ty),)*
        }

        impl fmt::Display for CoreError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(CoreError::$variant(e) => e.fmt(f),)*
                }
            }
        }

        impl std::error::Error for CoreError {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(match self {
                    $(CoreError::$variant(e) => e,)*
                })
            }
        }

        $(impl From<$ty> for CoreError {
            fn from(e: $ty) -> Self {
                CoreError::$variant(e)
            }
        })*
    };
}

core_errors! {
    /// A JSON merge patch (RFC 7386) that cannot be applied.
    MergePatch(fieldwise_core::merge_patch::MergePatchError),
    /// A JSON Patch (RFC 6902) that cannot be parsed or applied.
    JsonPatch(fieldwise_core::json_patch::JsonPatchError),
    /// A strategic merge patch that cannot be computed or applied.
    Strategic(fieldwise_core::strategic::StrategicError),
    /// `metadata.managedFields` that cannot be read.
    ManagedFields(fieldwise_core::ownership::ManagedFieldsError),
    /// A last-applied configuration that cannot be rebuilt from the object.
    Rebuild(fieldwise_core::last_applied::IntentError),
    /// A field path that cannot be parsed or typed.
    FieldPath(fieldwise_core::fieldpath::TypedError),
    /// A migration to server-side apply that cannot be planned.
    Migration(fieldwise_core::last_applied::MigrationError),
    /// A transfer of ownership that cannot be planned.
    Transfer(fieldwise_core::ownership::TransferError),
}

/// The rules fieldwise refuses a write by, before sending it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The last-applied annotation would hold this many Secret values in clear text.
    SecretValues {
        /// How many values.
        values: usize,
    },
    /// The annotation would make the object's annotations larger than the server allows.
    AnnotationTooLarge {
        /// The annotations' size with it, in bytes.
        size: usize,
        /// The server's limit, in bytes.
        limit: usize,
    },
    /// The input writes these fields twice in one object (paths as the apiserver names
    /// them: `data.a`), which strict field validation refuses (exit 2).
    DuplicateFields {
        /// The fields, in the order they appear.
        fields: Vec<String>,
    },
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
        StatusCause {
            reason: cause.reason.clone(),
            message: crate::redact::server_message(&cause.message),
            field: cause.field.clone(),
        }
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
    ///
    /// Every server message and cause goes through the redaction boundary here
    /// ([`crate::redact::server_message`]), so no caller can print an object the
    /// server quoted (a refused patch of a Secret quotes its values).
    pub fn from_kube(err: kube::Error, server: &str) -> Self {
        match err {
            kube::Error::Api(status) => Error::Api {
                code: status.code,
                reason: if status.reason.is_empty() { format!("{}", status.code) } else { status.reason.clone() },
                message: crate::redact::server_message(&status.message),
                causes: status.details.iter().flat_map(|d| &d.causes).map(StatusCause::from).collect(),
            },
            kube::Error::HyperError(e) => {
                Error::Unreachable { server: server.into(), reason: root_cause(&e), maybe_sent: !never_connected(&e) }
            }
            kube::Error::Service(e) => match credential_error(e.as_ref()) {
                Some(credential) => Error::Credential(credential),
                None => Error::Unreachable {
                    server: server.into(),
                    reason: root_cause(e.as_ref()),
                    maybe_sent: !never_connected(e.as_ref()),
                },
            },
            kube::Error::Auth(e) => {
                Error::Kubeconfig(format!("cannot get credentials for the current user: {}", root_cause(&e)))
            }
            other => Error::Client(Box::new(other)),
        }
    }

    /// The failure of a listing of `answer`'s type, when it says the type is gone: a 404 on a
    /// collection is never about an object, so it means the server no longer serves the type
    /// (or the cache named one it does not: [`Error::NoLongerServed`]). Any other error is
    /// given back as it is.
    pub fn no_longer_served(answer: Error) -> std::result::Result<Error, Error> {
        match answer {
            Error::NoLongerServed { answer, .. } => Ok(Error::NoLongerServed { answer, cache_cleared: false }),
            answer @ Error::Api { code: 404, .. } => {
                Ok(Error::NoLongerServed { answer: Box::new(answer), cache_cleared: false })
            }
            other => Err(other),
        }
    }

    /// Whether the server said the object is not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Api { code: 404, .. })
    }

    /// Whether the server answered 409 Conflict (a resourceVersion precondition,
    /// or a server-side apply whose fields other managers own: see [`Error::causes`]).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Api { code: 409, .. })
    }

    /// Whether the request failed in transport (no answer from the server).
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Unreachable { .. } | Error::OutcomeUnknown { .. })
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

    /// The process exit code: 3 when the object changed since the preview, 2 when
    /// the write was refused for a reason `--force` would override (or the input has
    /// duplicate fields under strict validation), 141 (what a shell
    /// reports for SIGPIPE) when stdout was closed, else 1 as kubectl uses for every failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::ChangedSincePreview { .. } => 3,
            Error::FieldManagerConflict { .. } => 2,
            Error::Refused { rule: Refusal::DuplicateFields { .. }, .. } => 2,
            Error::StdoutClosed => CLOSED_PIPE_EXIT,
            _ => 1,
        }
    }
}

/// The exit status after stdout (or stderr) was closed by the reader: what a shell reports
/// for a process ended by SIGPIPE, as `kubectl get ... | head` ends. Here, beside the other
/// exit codes, so that [`crate::output::stdout`] (which returns [`Error::StdoutClosed`]) is the only
/// one of the two modules that imports the other.
pub const CLOSED_PIPE_EXIT: u8 = 141;

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

impl Error {
    /// The error as the user sees it, kubectl's way: `error: ...`, or `Error from server
    /// (...): ...` for the server's own answers. The prefix is added here alone, where
    /// errors are printed; [`fmt::Display`] is the bare message, for embedding in others.
    pub fn printed(&self) -> String {
        match self {
            Error::Api { .. } => self.to_string(),
            _ => format!("error: {self}"),
        }
    }
}

impl fmt::Display for Error {
    /// One line (the bare message, see [`Error::printed`]), through the redaction boundary
    /// ([`crate::redact::scrub`]): messages built from server answers or files may quote a
    /// Secret value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        self.write_unredacted(&mut text)?;
        f.write_str(&crate::redact::scrub(&text))
    }
}

impl Error {
    /// The message before the redaction boundary; only [`fmt::Display`] may print it.
    fn write_unredacted(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Error::Usage(m) => write!(f, "{m}"),
            Error::StdoutClosed => write!(f, "standard output was closed"),
            Error::Kubeconfig(m) => write!(f, "{m}"),
            Error::Unreachable { server, reason, .. } => write!(
                f,
                "cannot reach the Kubernetes API server at {server} ({reason}): is the cluster running, and do --kubeconfig/--context point at it?"
            ),
            Error::Api { reason, message, .. } => write!(f, "Error from server ({reason}): {message}"),
            Error::UnknownResourceType(t) => write!(
                f,
                "the server doesn't have a resource type \"{t}\" (see `kubectl api-resources` for the types it serves)"
            ),
            Error::NoLongerServed { answer, cache_cleared: true } => write!(
                f,
                "{answer}: the cached API discovery named a resource type the server no longer serves; the cache is cleared, run the command again"
            ),
            // Always a 404, whose body may be a Status or plain text ("404 page not found").
            Error::NoLongerServed { cache_cleared: false, .. } => write!(
                f,
                "the server no longer serves this resource type (404 Not Found): it was removed after discovery was read"
            ),
            Error::ChangedSincePreview { object, reason, what_moved } => {
                write!(f, "{object} changed since the preview, and {reason}; nothing was written. Review the change and run the command again.")?;
                match what_moved {
                    Some(diff) => write!(f, "\nWhat changed underneath:\n{}", diff.trim_end()),
                    None => Ok(()),
                }
            }
            Error::FieldManagerConflict { object, field_manager, conflicts } => {
                write!(f, "server-side apply of {object} as {field_manager:?} conflicts with other managers; nothing was written:")?;
                for c in conflicts {
                    let field = if c.field.is_empty() { "(field not named)" } else { c.field.as_str() };
                    write!(f, "\n  {field}: {}", c.message)?;
                }
                write!(f, "\nRe-run with --force to take these fields from their managers (their next apply will conflict with {field_manager:?} in turn), or leave them out of the patch.")
            }
            Error::OutcomeUnknown { object, reason, backup } => {
                write!(f, "the connection failed after the write of {object} was sent ({reason}), and the object could not be read again: the write may or may not have landed")?;
                match backup {
                    Some(file) => write!(f, "; its pre-image is kept in {}. Check with kubectl get, and run the command again (it is safe to repeat).", file.display()),
                    None => write!(f, ". Check with kubectl get, and run the command again (it is safe to repeat)."),
                }
            }
            Error::KeptChanging { object, attempts, waited } => write!(
                f,
                "{object} kept changing: {attempts} guarded write(s) in {:.1}s each lost the race against another writer; nothing was written. Raise --request-timeout to keep trying longer.",
                waited.as_secs_f64()
            ),
            Error::LocalIo { action, path: Some(path), source } => {
                write!(f, "cannot {action} {}: {source}", path.display())
            }
            Error::LocalIo { action, path: None, source } => write!(f, "cannot {action}: {source}"),
            Error::Malformed { what, source } => write!(f, "{what} cannot be read: {source}"),
            Error::Semantics { object, source } => write!(f, "{object}: {source}"),
            Error::Refused { object, rule: Refusal::SecretValues { values } } => write!(
                f,
                "{}",
                fieldwise_core::last_applied::secret_values::refusal_reason(object, *values)
            ),
            Error::Refused { object, rule: Refusal::AnnotationTooLarge { size, limit } } => write!(
                f,
                "{object}: the annotation would make the annotations {size} bytes, over the {limit}-byte limit; use `kubectl last-applied migrate {object} --drop-annotation` and server-side apply instead"
            ),
            Error::Refused { object, rule: Refusal::DuplicateFields { fields } } => {
                let quoted: Vec<String> = fields.iter().map(|field| format!("{field:?}")).collect();
                write!(
                    f,
                    "{object} has duplicate field{} {}: only its last value would be used, and the apiserver's strict field validation (--validate=strict, the default) refuses such a body; remove the duplicate, or pass --validate=warn to send the last value",
                    if fields.len() == 1 { "" } else { "s" },
                    quoted.join(", ")
                )
            }
            Error::Unsupported { what } => write!(f, "{what}"),
            Error::Missing { object, what, hint } => write!(f, "{object} has no {what}{hint}"),
            Error::Program { command, start_error: Some(e), .. } => write!(f, "cannot run {command:?}: {e}"),
            Error::Program { command, status, .. } => {
                let status = status.map_or_else(|| "failed".to_string(), |s| s.to_string());
                write!(f, "{command:?} failed ({status}); nothing was changed")
            }
            Error::Completion(e) => write!(f, "{e}"),
            Error::Client(e) => write!(f, "{}", root_cause(e.as_ref())),
            Error::Stopped(what) => write!(f, "{what} was stopped"),
            Error::PredictionDisagrees => {
                write!(f, "the apiserver's dry run disagrees with the predicted conflicts (see above)")
            }
            Error::Reference(e) => write!(f, "{e}"),
            Error::Credential(e) => write!(f, "cannot get credentials for the current user: {e}"),
            Error::Interrupted { object, signal } => {
                write!(f, "interrupted ({signal}) before the write of {object} was sent; nothing was written")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::LocalIo { source, .. } => Some(source),
            Error::Malformed { source, .. } => Some(source.as_ref()),
            Error::Semantics { source, .. } => Some(source.as_ref()),
            Error::Program { start_error: Some(source), .. } => Some(source),
            Error::Completion(source) => Some(source),
            Error::Client(source) => Some(source.as_ref()),
            Error::Reference(e) => Some(e),
            Error::Credential(e) => Some(e),
            Error::NoLongerServed { answer, .. } => Some(answer.as_ref()),
            _ => None,
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Malformed { what: "JSON from the server".into(), source: Box::new(e) }
    }
}

impl Error {
    /// A local file operation that failed: `action` is a verb phrase (`write the backup`).
    pub fn local_io(action: impl Into<String>, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::LocalIo { action: action.into(), path: Some(path.to_path_buf()), source }
    }

    /// Bytes described by `what` that do not parse.
    pub fn malformed(what: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Malformed { what: what.into(), source: Box::new(source) }
    }

    /// A core error about `object`.
    pub fn semantics(object: impl Into<String>, source: impl Into<CoreError>) -> Self {
        Error::Semantics { object: object.into(), source: Box::new(source.into()) }
    }
}

/// Why an object reference could not be built from a manifest or owner reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    /// The object lacks a field every reference needs.
    #[error("{origin}: the object has no {what}; every object needs apiVersion, kind and metadata.name")]
    MissingField {
        /// The manifest (or owner) it came from.
        origin: String,
        /// What is missing, e.g. `metadata.name`.
        what: &'static str,
    },
    /// The cluster serves no type with this group-version-kind (kubectl's `NoKindMatchError`).
    #[error(
        "{origin}: no matches for kind \"{kind}\" in version \"{api_version}\" on this cluster (is its CustomResourceDefinition installed? `kubectl api-resources` lists the served types)"
    )]
    NoMatchForKind {
        /// The manifest (or owner) it came from.
        origin: String,
        /// The kind asked for.
        kind: String,
        /// The `apiVersion` asked for.
        api_version: String,
    },
    /// The manifest's namespace differs from the one given with `-n`: kubectl refuses, and
    /// so do the plugins, rather than act on an object in a namespace the user did not mean.
    #[error(
        "{origin}: the namespace from the provided object \"{object}\" does not match the namespace \"{flag}\". You must pass '--namespace={object}' to perform this operation."
    )]
    NamespaceMismatch {
        /// The manifest it came from.
        origin: String,
        /// The manifest's `metadata.namespace`.
        object: String,
        /// The namespace given with `-n`.
        flag: String,
    },
}

impl From<ReferenceError> for Error {
    fn from(err: ReferenceError) -> Self {
        Error::Reference(err)
    }
}

/// Why the completer could not be installed or removed; keeps the I/O error.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The directory of the running binary could not be found.
    #[error("cannot tell where this plugin is installed: {0}")]
    NoBinary(#[source] std::io::Error),
    /// A file of the completer's name exists and is not one we made.
    #[error("{} exists and is not a completer link made by `completion install`; remove it and run the command again", .0.display())]
    Foreign(std::path::PathBuf),
    /// The file system refused.
    #[error("cannot {action} {}: {source} (check the directory's permissions)", path.display())]
    Io {
        /// What we tried: `create`, `remove`, `read`.
        action: &'static str,
        /// The file we tried it on.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
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
    fn core_errors_keep_their_source_and_print_as_one_line() {
        let managed = serde_json::json!({"metadata": {"managedFields": [{"manager": "x"}]}});
        let core = fieldwise_core::ownership::managed_fields_of(&managed).unwrap_err();
        let core_text = core.to_string();
        let err = Error::semantics("configmap/x", core);
        assert_eq!(err.to_string(), format!("configmap/x: {core_text}"));
        assert_eq!(err.printed(), format!("error: configmap/x: {core_text}"));
        let source = std::error::Error::source(&err).expect("the core error");
        assert!(matches!(source.downcast_ref::<CoreError>(), Some(CoreError::ManagedFields(_))), "{source:?}");
        assert_eq!(source.to_string(), core_text);
        assert!(std::error::Error::source(source).is_some(), "the core's own error is the next link");
    }

    #[test]
    fn a_status_without_details_has_no_causes() {
        let err = api_error(serde_json::json!({"status": "Failure", "code": 404, "reason": "NotFound",
            "message": "deployments.apps \"gone\" not found"}));
        assert!(err.is_not_found());
        assert!(err.causes().is_empty());
        assert!(Error::Stopped("x").causes().is_empty());
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
