//! Lints for a patch before it is sent: the traps users fall into every day,
//! each explained in one line with the fix.
//!
//! - [`nulls`]: `null` does not remove a field that has a server default, it resets it;
//! - [`lists`]: a JSON merge patch replaces a whole list, dropping entries, and
//!   the fields of the entries it keeps that its entries do not carry;
//! - [`positions`]: a JSON Patch index into a keyed list can hit the wrong
//!   entry after someone else changed the list, so a `test` guard is added;
//! - [`one_of`]: switching a one-of member (a probe from `tcpSocket` to
//!   `httpGet`, a strategy to `Recreate`) with a merge keeps both, which the
//!   server rejects;
//! - [`foreign`]: fields the patch changes that another manager owns, when
//!   that manager writes again (a controller, an applier, a tool);
//! - [`next_apply`]: fields the last-applied annotation records otherwise, which
//!   the next `kubectl apply` of the same file sets back;
//! - [`secret_exposure`]: a Secret's value copied, moved or pasted out of `data` into a
//!   label, an annotation or any other field (whole or inside a longer value), where it is
//!   not secret.
//!
//! Every lint is pure: values in, findings out. The plugin decides what to
//! show and whether a finding blocks the write.

pub mod foreign;
pub mod lists;
pub mod next_apply;
pub mod nulls;
pub mod one_of;
pub mod positions;
pub mod secret_exposure;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing; nothing to do.
    Info,
    /// Probably not what was meant; the write may go ahead.
    Warning,
    /// Writing would fight another owner; only with `--force`.
    NeedsForce,
    /// Writing would put a Secret's value where it is not secret; only with
    /// `--allow-secret-exposure` (`--force` does not cover it).
    ExposesSecret,
}

/// One thing a lint found.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// Where, as a dotted field path (`spec.replicas`, `spec.template.spec.containers[name=busybox]`).
    pub path: String,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do instead, when there is something to do.
    pub fix: Option<String>,
}

impl Finding {
    /// A finding without a fix.
    pub fn new(severity: Severity, path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding { severity, path: path.into(), message: message.into(), fix: None }
    }

    /// The same finding with a fix.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// Whether one of `findings` puts a Secret's value where it is not secret
/// ([`Severity::ExposesSecret`]): such a change is refused before anything is sent, even a
/// dry run, unless `--allow-secret-exposure`.
pub fn exposes_secret(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::ExposesSecret)
}

/// Joins field names into kubectl's dotted form.
pub(crate) fn dotted(path: &[String]) -> String {
    let mut out = String::new();
    for part in path {
        if part.starts_with('[') {
            out.push_str(part);
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// A compact one-line rendering of a JSON value for messages.
pub(crate) fn short(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// At most three paths, then how many more: a message is one line.
pub(crate) fn summarize(paths: &[String]) -> String {
    match paths.len() {
        0..=3 => paths.join(", "),
        n => format!("{} and {} more fields", paths[..3].join(", "), n - 3),
    }
}
