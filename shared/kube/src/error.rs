//! Errors as a kubectl user expects to read them: one line, what went wrong,
//! where, and what to do. Never a panic or a backtrace.
//!
//! [`Error`] is what the layers above the connection return (api, output, write, cli) and
//! what the plugins print. The two layers below own their errors and are kept whole here,
//! each as the [`std::error::Error::source`] of its variant, as kube-client wraps its
//! layers' errors: [`LocalError`] (`Error::Local`: a file, input not taken) and
//! [`ConnError`] (`Error::Conn`: the kubeconfig and connection flags, the transport, the
//! server's answer, classified and redacted in one place). Every message passes the redaction
//! boundary in [`Error`]'s `Display`.

use std::fmt;

use crate::conn::error::ConnError;
pub use crate::conn::error::StatusCause;
use crate::exit_code;
use crate::local::error::LocalError;

/// Everything that can go wrong between the command line and the cluster.
#[derive(Debug)]
pub enum Error {
    /// The command line itself is wrong (flags, arguments); the connection flags' own
    /// errors are [`ConnError::Usage`], input that is not taken [`LocalError::Input`].
    Usage(String),
    /// The reader of stdout went away (`| head`): stop quietly, see [`crate::output::stdout`].
    StdoutClosed,
    /// The connection layer failed: the kubeconfig or a connection flag, the transport, or
    /// the server's answer (a Status with its causes, a type no longer served), kept whole.
    Conn(ConnError),
    /// The local layer failed: a file could not be read or written, or input is not taken.
    Local(LocalError),
    /// The resource type is not served by this cluster.
    UnknownResourceType(String),
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
    /// The write landed, and named an entry it added twice (somebody else added the same
    /// entry at the same time), and taking this write's copy out again failed: the object
    /// keeps both.
    AddedTwice {
        /// kubectl's name of the object.
        object: String,
        /// The lists that name an entry twice, as JSON Pointers.
        lists: Vec<String>,
        /// Why taking the copy back failed.
        reason: String,
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
    /// A check could not read all it was asked to check (forbidden, not found, no longer
    /// served) and `--allow-unreadable` was not given: it fails, as a gate that could not
    /// look must (see [`crate::api::unread`]).
    NotRead {
        /// How much: `31 types`, `1 type and 2 objects`.
        count: String,
        /// Each, as kubectl names it (`secrets`, `configmaps/web in namespace shop`).
        names: Vec<String>,
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
    /// The selection holds more objects than the command takes (`--max-objects`): refused
    /// before anything is read or written (exit 2).
    OverLimit {
        /// How many objects were counted.
        found: usize,
        /// Whether they are all the selection holds; else the reading stopped once the
        /// limit was passed, and the selection holds at least `found`.
        complete: bool,
        /// The most objects the command takes.
        limit: usize,
        /// The flag that raises it.
        flag: &'static str,
    },
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

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A command-line error.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// The failure of a listing of `answer`'s type, when it says the type is gone (see
    /// [`ConnError::no_longer_served`]). Any other error is given back as it is.
    pub fn no_longer_served(answer: Error) -> std::result::Result<Error, Error> {
        match answer {
            Error::Conn(answer) => ConnError::no_longer_served(answer).map(Error::Conn).map_err(Error::Conn),
            other => Err(other),
        }
    }

    /// The server's answer, when the error is one ([`ConnError::Api`]).
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Conn(e) => e.code(),
            _ => None,
        }
    }

    /// Whether the server said the object is not there.
    pub fn is_not_found(&self) -> bool {
        self.server_code() == Some(404)
    }

    /// Whether the server answered 409 Conflict (a resourceVersion precondition,
    /// or a server-side apply whose fields other managers own: see [`Error::causes`]).
    pub fn is_conflict(&self) -> bool {
        self.server_code() == Some(409)
    }

    /// Whether the request failed in transport (no answer from the server).
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Conn(ConnError::Unreachable { .. }) | Error::OutcomeUnknown { .. })
    }

    /// The causes the server gave for a refusal ([`ConnError::Api`]; empty for other errors).
    pub fn causes(&self) -> &[StatusCause] {
        match self {
            Error::Conn(e) => e.causes(),
            _ => &[],
        }
    }

    /// Whether the server said the user may not do this.
    pub fn is_forbidden(&self) -> bool {
        self.server_code() == Some(403)
    }

    /// The process exit code: 3 when the object changed since the preview, 2 when
    /// the write was refused for a reason `--force` would override (or the input has
    /// duplicate fields under strict validation), 141 (what a shell
    /// reports for SIGPIPE) when stdout was closed, else 1 as kubectl uses for every failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::ChangedSincePreview { .. } => exit_code::FOUND,
            Error::FieldManagerConflict { .. } => exit_code::REFUSED,
            Error::OverLimit { .. } => exit_code::REFUSED,
            Error::Refused { rule: Refusal::DuplicateFields { .. }, .. } => exit_code::REFUSED,
            Error::StdoutClosed => exit_code::CLOSED_PIPE,
            _ => exit_code::ERROR,
        }
    }
}

impl Error {
    /// The error as the user sees it, kubectl's way: `error: ...`, or `Error from server
    /// (...): ...` for the server's own answers. The prefix is added here alone, where
    /// errors are printed; [`fmt::Display`] is the bare message, for embedding in others.
    pub fn printed(&self) -> String {
        match self {
            Error::Conn(ConnError::Api { .. }) => self.to_string(),
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
            Error::Conn(e) => write!(f, "{e}"),
            Error::Local(e) => write!(f, "{e}"),
            Error::UnknownResourceType(t) => write!(
                f,
                "the server doesn't have a resource type \"{t}\" (see `kubectl api-resources` for the types it serves)"
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
            Error::AddedTwice { object, lists, reason } => write!(
                f,
                "{object}: another writer added the same entry to {} at the same time as this write, and taking this write's copy out again failed ({reason}): the list names it twice now. Look at it with kubectl get, and remove one copy (kubectl safe-patch undo restores the object as it was before this write).",
                lists.join(", ")
            ),
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
            Error::NotRead { count, names } => {
                const SHOWN: usize = 10;
                let mut listed = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
                if names.len() > SHOWN {
                    listed.push_str(&format!(" and {} more", names.len() - SHOWN));
                }
                write!(
                    f,
                    "could not read {count}: {listed}; the check is incomplete (the report names why each was not read; --allow-unreadable lets it pass without them)"
                )
            }
            Error::Program { command, start_error: Some(e), .. } => write!(f, "cannot run {command:?}: {e}"),
            Error::Program { command, status, .. } => {
                let status = status.map_or_else(|| "failed".to_string(), |s| s.to_string());
                write!(f, "{command:?} failed ({status}); nothing was changed")
            }
            Error::Completion(e) => write!(f, "{e}"),
            Error::Stopped(what) => write!(f, "{what} was stopped"),
            Error::PredictionDisagrees => {
                write!(f, "the apiserver's dry run disagrees with the predicted conflicts (see above)")
            }
            Error::Reference(e) => write!(f, "{e}"),
            Error::OverLimit { found, complete: true, limit, flag } => write!(
                f,
                "the selection holds {found} objects, more than {flag} ({limit}); nothing was written. \
                 Narrow it (-l, --field-selector, -n), or raise the limit: {flag} {found}"
            ),
            // The rest was not read: how many there are is not known, only that it is more.
            Error::OverLimit { complete: false, limit, flag, .. } => write!(
                f,
                "the selection holds more than {flag} ({limit}) objects (it was read only until it passed the limit); \
                 nothing was written. Narrow it (-l, --field-selector, -n, fewer files), or raise the limit: {flag} N"
            ),
            Error::Interrupted { object, signal } => {
                write!(f, "interrupted ({signal}) before the write of {object} was sent; nothing was written")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Conn(e) => Some(e),
            Error::Local(e) => Some(e),
            Error::Malformed { source, .. } => Some(source.as_ref()),
            Error::Semantics { source, .. } => Some(source.as_ref()),
            Error::Program { start_error: Some(source), .. } => Some(source),
            Error::Completion(source) => Some(source),
            Error::Reference(e) => Some(e),
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
        Error::Local(LocalError::io(action, path, source))
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
    /// A name, namespace or subresource no request can name: client-go refuses it before
    /// building a URL ([`crate::api::request_url`]), since sent as it is it would reach
    /// another path, another object or the query.
    #[error("invalid {what} {text:?}{}: [{problems}]", origin.as_ref().map(|o| format!(" ({o})")).unwrap_or_default())]
    InvalidSegment {
        /// client-go's word for the part: `resource name`, `namespace`, `subresource`.
        what: &'static str,
        /// The text as given.
        text: String,
        /// Where it came from, when not an argument (`metadata.name in d.yaml`).
        origin: Option<String>,
        /// apimachinery's problems, space-separated as Go prints a slice.
        problems: String,
    },
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

impl From<ConnError> for Error {
    fn from(err: ConnError) -> Self {
        Error::Conn(err)
    }
}

impl From<LocalError> for Error {
    fn from(err: LocalError) -> Self {
        Error::Local(err)
    }
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
        crate::conn::error::tests::api_error(body).into()
    }

    #[test]
    fn the_server_s_answer_is_kept_whole_and_printed_as_kubectl_prints_it() {
        let err = api_error(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409, "reason": "Conflict",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl\" using apps/v1", "field": ".spec.replicas"}]}
        }));
        assert!(err.is_conflict() && !err.is_not_found() && !err.is_forbidden());
        assert_eq!(err.server_code(), Some(409));
        assert_eq!(err.causes()[0].field, ".spec.replicas");
        let printed = "Error from server (Conflict): Apply failed with 1 conflict: conflict with \"kubectl\" using apps/v1: .spec.replicas";
        assert_eq!(err.printed(), printed, "kubectl's own prefix, no `error: `");
        let source = std::error::Error::source(&err).expect("the connection layer's error");
        assert!(matches!(source.downcast_ref::<ConnError>(), Some(ConnError::Api { code: 409, .. })), "{source:?}");
    }

    #[test]
    fn a_local_error_is_kept_whole_with_the_system_error_below_it() {
        let err = Error::local_io("write the backup", std::path::Path::new("/b"), std::io::Error::other("full"));
        assert_eq!(err.printed(), "error: cannot write the backup /b: full");
        let local = std::error::Error::source(&err).expect("the local layer's error");
        assert!(local.downcast_ref::<LocalError>().is_some(), "{local:?}");
        assert!(std::error::Error::source(local).and_then(|e| e.downcast_ref::<std::io::Error>()).is_some());
    }

    #[test]
    fn a_type_no_longer_served_is_told_apart_from_other_answers() {
        let gone = api_error(serde_json::json!({"status": "Failure", "code": 404, "reason": "NotFound",
            "message": "the server could not find the requested resource"}));
        let gone = Error::no_longer_served(gone).expect("a 404 on a collection");
        assert!(matches!(gone, Error::Conn(ConnError::NoLongerServed { .. })), "{gone:?}");
        assert!(Error::no_longer_served(Error::usage("x")).is_err());
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
}
