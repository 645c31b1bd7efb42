//! The requests the apiserver answered, read from the harness's audit log
//! (`$FIELDWISE_CLUSTER_DIR/audit.log`, one JSON event per line).
//!
//! Exit codes and output say what a command claims; the audit log says what
//! it did: how many times it read and wrote an object, whether it retried,
//! which subresource a write went to. Tests take a [`Cluster::audit_mark`]
//! before a command and read only the events after it.

use serde_json::Value;

use crate::Cluster;

/// One answered request (`stage: ResponseComplete`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// `get`, `list`, `patch`, `update`, `create`, `delete`, ...
    pub verb: String,
    /// The resource (plural), e.g. `deployments`.
    pub resource: String,
    /// The subresource (`scale`, `status`), empty for the object itself.
    pub subresource: String,
    /// The namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's name, empty for collections.
    pub name: String,
    /// Whether the request was a dry-run (`dryRun=All`): nothing was stored.
    pub dry_run: bool,
    /// The HTTP status code of the answer, 0 when the log has none.
    pub code: u16,
    /// Who sent it (`user.username`): tells the command under test from controllers.
    pub user: String,
    /// The program that sent it (`userAgent`: `kubectl-safe_patch/v0.1.0 ...`, `kubectl/v1.33.0 ...`).
    pub user_agent: String,
}

impl AuditEvent {
    /// Whether a controller or the apiserver itself sent it, not a user's command.
    pub fn is_from_system(&self) -> bool {
        self.user.starts_with("system:serviceaccount:")
            || self.user.starts_with("system:kube-")
            || self.user == "system:apiserver"
    }

    /// Whether `program` sent it (its User-Agent starts with `program/`): tells a plugin
    /// from the kubectl a test plays the concurrent writer with.
    pub fn is_from(&self, program: &str) -> bool {
        self.user_agent.strip_prefix(program).is_some_and(|rest| rest.starts_with('/'))
    }

    /// Whether this is a request that could change stored state.
    pub fn is_write(&self) -> bool {
        matches!(self.verb.as_str(), "patch" | "update" | "create" | "delete")
    }

    fn from_json(event: &Value) -> Option<Self> {
        if event["stage"] != "ResponseComplete" {
            return None;
        }
        let field = |pointer: &str| event.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
        Some(Self {
            verb: field("/verb"),
            resource: field("/objectRef/resource"),
            subresource: field("/objectRef/subresource"),
            namespace: field("/objectRef/namespace"),
            name: field("/objectRef/name"),
            dry_run: field("/requestURI").contains("dryRun=All"),
            code: event.pointer("/responseStatus/code").and_then(Value::as_u64).unwrap_or(0) as u16,
            user: field("/user/username"),
            user_agent: field("/userAgent"),
        })
    }
}

/// A position in the audit log: events after it belong to what ran after it.
#[derive(Debug, Clone, Copy)]
pub struct AuditMark(u64);

impl AuditMark {
    /// The beginning of the log: everything the cluster was ever sent.
    pub fn start() -> Self {
        AuditMark(0)
    }
}

impl Cluster {
    /// The end of the audit log now.
    pub fn audit_mark(&self) -> AuditMark {
        AuditMark(std::fs::metadata(self.dir.join("audit.log")).map(|m| m.len()).unwrap_or(0))
    }

    /// Every answered request logged after `mark`. The log is written in
    /// blocking mode, but a test should still wait a moment after a command
    /// before reading, as the last event of a request follows its answer.
    pub fn audit_since(&self, mark: AuditMark) -> Vec<AuditEvent> {
        let bytes = std::fs::read(self.dir.join("audit.log")).unwrap_or_default();
        let start = (mark.0 as usize).min(bytes.len());
        String::from_utf8_lossy(&bytes[start..])
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter_map(|event| AuditEvent::from_json(&event))
            .collect()
    }

    /// The requests about one object (any subresource) logged after `mark`.
    pub fn audit_of(&self, mark: AuditMark, resource: &str, namespace: &str, name: &str) -> Vec<AuditEvent> {
        self.audit_since(mark)
            .into_iter()
            .filter(|e| e.resource == resource && e.namespace == namespace && e.name == name)
            .collect()
    }
}
