//! What a check could not read, and the gate that fails it for that: a CI gate that could
//! not look must not pass. `kubectl owners drift --policy P` run by an account that may read
//! nothing used to print "No violations in 0 objects" and exit 0; conftest and kubeconform
//! exit non-zero when they could not read what they were asked to check, and so do the
//! suite's checks (`owners drift`, `last-applied scan`, `owners plan`, `owners watch`).
//!
//! - [`Unread`]: one type or object not read, and why (the server's answer: forbidden, not
//!   found, no longer served, not listable). Made from the listing engine's
//!   [`TypeEvent::Skipped`](crate::api::listing::TypeEvent::Skipped) or from a read of one object.
//! - [`Unreadable`]: a run's unread things and the user's `--allow-unreadable`, with the one
//!   decision every check ends with ([`Unreadable::end`]): anything unread fails the run
//!   ([`Error::NotRead`], exit 1) unless allowed. It also gives what every output format says
//!   about them (the text line, the documents' list); JUnit and SARIF take them in
//!   [`crate::output::junit`] and [`crate::output::sarif`].
//!
//! Failures that are not the server's refusal to show something (a dropped connection, a
//! 500 in the middle of a list) are not "unread": they stay errors, which
//! `--allow-unreadable` never lets pass.

use std::process::ExitCode;

use serde_json::{json, Value};

use crate::api::discovery::ResourceType;
use crate::api::reference::ObjectRef;
use crate::conn::error::ConnError;
use crate::error::{Error, Result};
use crate::exit_code;

/// One type or object a check could not read, and the server's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    /// The type's `apiVersion` (`v1`, `apps/v1`).
    pub api_version: String,
    /// The type as `kubectl api-resources` names it: `plural.group` (`secrets`, `deployments.apps`).
    pub resource: String,
    /// The object's namespace (an object in a namespace), or the namespace a type was listed in.
    pub namespace: Option<String>,
    /// The object's name; `None` when a whole type was not read.
    pub name: Option<String>,
    /// Why: the server's reason and message (`Forbidden: secrets is forbidden: ...`),
    /// redacted as every server message is.
    pub reason: String,
}

impl Unread {
    /// A type the listing could not list (`namespace`: where it was listed; `None`: every
    /// namespace, or a cluster-scoped type).
    pub fn of_type(resource: &ResourceType, namespace: Option<&str>, error: &Error) -> Self {
        Unread {
            api_version: resource.api_version(),
            resource: resource.plural_group(),
            namespace: namespace.map(String::from),
            name: None,
            reason: reason(error),
        }
    }

    /// An object that could not be read.
    pub fn of_object(target: &ObjectRef, error: &Error) -> Self {
        Unread {
            api_version: target.resource.api_version(),
            resource: target.resource.plural_group(),
            namespace: target.namespace.clone(),
            name: Some(target.name.clone()),
            reason: reason(error),
        }
    }

    /// A named object that does not exist (found by a list, which says so by finding
    /// nothing), with the server's words for it: `NotFound: configmaps "x" not found`.
    pub fn not_found(target: &ObjectRef) -> Self {
        Unread {
            api_version: target.resource.api_version(),
            resource: target.resource.plural_group(),
            namespace: target.namespace.clone(),
            name: Some(target.name.clone()),
            reason: format!("NotFound: {} \"{}\" not found", target.resource.plural_group(), target.name),
        }
    }

    /// What was not read, as kubectl names it: `secrets` (a type), `configmaps/nosuch` (an
    /// object), with its namespace: `configmaps/nosuch in namespace shop`.
    pub fn what(&self) -> String {
        let what = match &self.name {
            Some(name) => format!("{}/{name}", self.resource),
            None => self.resource.clone(),
        };
        match (&self.namespace, &self.name) {
            (Some(ns), Some(_)) => format!("{what} in namespace {ns}"),
            _ => what,
        }
    }

    /// The entry of a document's list (`-o json|yaml`): `apiVersion`, `resource`,
    /// `namespace` and `name` (objects), `reason`.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"apiVersion": self.api_version, "resource": self.resource});
        if self.name.is_some() {
            out["namespace"] = json!(self.namespace);
            out["name"] = json!(self.name);
        }
        out["reason"] = json!(self.reason);
        out
    }
}

/// The server's reason for not showing something, in one line: `Forbidden: secrets is
/// forbidden: ...` (its reason and message), or the error as printed.
pub fn reason(error: &Error) -> String {
    match error {
        Error::Conn(ConnError::Api { reason, message, .. }) if !reason.is_empty() => format!("{reason}: {message}"),
        other => other.to_string(),
    }
}

/// Whether `error` is the server declining to show something (so the check goes on without
/// it and names it), rather than a failure that ends the check: forbidden (403), not found
/// (404, a type no longer served included), or a type the server will not list (405, 406).
pub fn is_refusal_to_read(error: &Error) -> bool {
    matches!(error.server_code(), Some(403..=406)) || matches!(error, Error::Conn(ConnError::NoLongerServed { .. }))
}

/// Whether `error` says a type is gone: the server no longer serves it (a
/// CustomResourceDefinition deleted since discovery was read), so it has no objects left to
/// read. Of every type, such a type is noted and left out, not unread; a type the user named
/// is unread all the same.
pub fn is_gone(error: &Error) -> bool {
    matches!(error, Error::Conn(ConnError::NoLongerServed { .. }))
}

/// A run's unread types and objects, and whether the user allows them
/// (`--allow-unreadable`): the gate every check ends with.
#[derive(Debug, Clone, Default)]
pub struct Unreadable {
    items: Vec<Unread>,
    allowed: bool,
}

impl Unreadable {
    /// Nothing unread yet; `allowed`: `--allow-unreadable` was given.
    pub fn new(allowed: bool) -> Self {
        Unreadable { items: Vec::new(), allowed }
    }

    /// Notes one more thing not read.
    pub fn add(&mut self, unread: Unread) {
        self.items.push(unread);
    }

    /// What was not read, in the order met.
    pub fn items(&self) -> &[Unread] {
        &self.items
    }

    /// Whether everything asked for was read.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether `--allow-unreadable` was given.
    pub fn allowed(&self) -> bool {
        self.allowed
    }

    /// Whether the run fails for what it could not read.
    pub fn fails(&self) -> bool {
        !self.items.is_empty() && !self.allowed
    }

    /// `2 types and 1 object`: how much was not read.
    pub fn count_text(&self) -> String {
        let types = self.items.iter().filter(|u| u.name.is_none()).count();
        let objects = self.items.len() - types;
        let part = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match (types, objects) {
            (t, 0) => part(t, "type", "types"),
            (0, o) => part(o, "object", "objects"),
            (t, o) => format!("{} and {}", part(t, "type", "types"), part(o, "object", "objects")),
        }
    }

    /// The text report's line, `None` when everything was read: `Not read (2 types): secrets
    /// (Forbidden), configmaps (Forbidden).`, and whether that fails the run.
    pub fn text_line(&self) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        let names: Vec<String> = self.items.iter().map(|u| format!("{} ({})", u.what(), short_reason(u))).collect();
        let verdict = if self.allowed { "allowed by --allow-unreadable" } else { "the check is incomplete" };
        Some(format!("Not read ({}): {}; {verdict}.", self.count_text(), names.join(", ")))
    }

    /// The documents' list (`-o json|yaml`): one [`Unread::to_json`] entry each.
    pub fn to_json(&self) -> Value {
        Value::Array(self.items.iter().map(Unread::to_json).collect())
    }

    /// The gate: ends a check that would exit `code`. Anything unread fails it
    /// ([`Error::NotRead`], exit [`exit_code::ERROR`], named on stderr) unless allowed; an
    /// error `code` stays the error it is.
    pub fn end(&self, code: u8) -> Result<ExitCode> {
        if self.fails() {
            return Err(Error::NotRead {
                count: self.count_text(),
                names: self.items.iter().map(Unread::what).collect(),
            });
        }
        Ok(exit_code::exit(code))
    }
}

/// The server's reason word (`Forbidden`, `NotFound`), or the reason whole when it has none.
fn short_reason(unread: &Unread) -> &str {
    match unread.reason.split_once(':') {
        Some((word, _)) if !word.contains(' ') => word,
        _ => &unread.reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: "secrets".into(),
            singular: "secret".into(),
            kind: "Secret".into(),
            short_names: vec![],
            namespaced: true,
            verbs: vec!["get".into(), "list".into()],
            subresources: vec![],
            preferred: true,
        }
    }

    fn forbidden() -> Error {
        Error::Conn(ConnError::Api {
            code: 403,
            reason: "Forbidden".into(),
            message: "secrets is forbidden: User \"x\" cannot list resource \"secrets\"".into(),
            causes: vec![],
        })
    }

    #[test]
    fn nothing_unread_passes_with_the_code_asked() {
        let gate = Unreadable::new(false);
        assert!(!gate.fails());
        assert_eq!(gate.text_line(), None);
        assert_eq!(gate.end(exit_code::FOUND).unwrap(), exit_code::exit(exit_code::FOUND));
    }

    #[test]
    fn anything_unread_fails_the_gate_unless_allowed() {
        let mut gate = Unreadable::new(false);
        gate.add(Unread::of_type(&secrets(), None, &forbidden()));
        assert!(gate.fails());
        let err = gate.end(exit_code::DONE).unwrap_err();
        assert_eq!(err.exit_code(), exit_code::ERROR);
        let printed = err.to_string();
        assert!(printed.contains("could not read 1 type: secrets"), "{printed}");
        assert!(printed.contains("--allow-unreadable"), "{printed}");

        let mut allowed = Unreadable::new(true);
        allowed.add(Unread::of_type(&secrets(), None, &forbidden()));
        assert!(!allowed.fails());
        assert_eq!(allowed.end(exit_code::DONE).unwrap(), exit_code::exit(exit_code::DONE));
        // Allowed, and still named.
        let line = allowed.text_line().unwrap();
        assert!(line.starts_with("Not read (1 type): secrets (Forbidden)"), "{line}");
        assert!(line.ends_with("allowed by --allow-unreadable."), "{line}");
    }

    #[test]
    fn objects_are_named_with_their_namespace_and_counted_apart() {
        let target = ObjectRef { resource: secrets(), namespace: Some("shop".into()), name: "db".into() };
        let mut gate = Unreadable::new(false);
        gate.add(Unread::of_type(&secrets(), None, &forbidden()));
        gate.add(Unread::of_object(&target, &forbidden()));
        assert_eq!(gate.count_text(), "1 type and 1 object");
        assert_eq!(gate.items()[1].what(), "secrets/db in namespace shop");
        let listed = gate.to_json();
        assert_eq!(listed[0], json!({"apiVersion": "v1", "resource": "secrets", "reason": reason(&forbidden())}));
        assert_eq!(listed[1]["name"], "db");
        assert_eq!(listed[1]["namespace"], "shop");
        assert!(listed[1]["reason"].as_str().unwrap().starts_with("Forbidden: secrets is forbidden"));
    }

    #[test]
    fn refusals_to_read_are_told_from_failures() {
        assert!(is_refusal_to_read(&forbidden()));
        let not_found = Error::Conn(ConnError::Api {
            code: 404,
            reason: "NotFound".into(),
            message: "configmaps \"x\" not found".into(),
            causes: vec![],
        });
        assert!(is_refusal_to_read(&not_found));
        let internal = Error::Conn(ConnError::Api {
            code: 500,
            reason: "InternalError".into(),
            message: "etcd".into(),
            causes: vec![],
        });
        assert!(!is_refusal_to_read(&internal));
        assert!(!is_refusal_to_read(&Error::usage("bad flag")));
    }
}
