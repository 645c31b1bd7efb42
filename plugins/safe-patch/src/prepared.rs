//! One object read, planned and dry-run, waiting for the run's one confirmation: what
//! the preview of a run ([`crate::run_preview`]) shows and the write then sends. The
//! patch of many objects ([`crate::many`]) and the undo of a run ([`crate::undo_run`])
//! both prepare their objects as these.

use fieldwise_core::lint::{Finding, Severity};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::write::Preview;

/// One object, read, planned and dry-run: what the preview shows and the write sends.
pub struct Prepared {
    /// The object.
    pub target: ObjectRef,
    /// The approved change, with the server's dry-run result.
    pub preview: Preview,
    /// What the lints found (and the server's null resets).
    pub findings: Vec<Finding>,
    /// Objects with the same key get the same change (their effect, server noise aside).
    pub change_key: String,
}

impl Prepared {
    /// Why a finding stops this object from being written, if one does: a lint that needs
    /// `--force`, or a Secret's value put where it is not secret without
    /// `--allow-secret-exposure` (which `--force` does not cover), as the single write refuses.
    pub fn refusal(&self, force: bool, allow_secret_exposure: bool) -> Option<&'static str> {
        let any = |severity: Severity| self.findings.iter().any(|f| f.severity == severity);
        if !allow_secret_exposure && fieldwise_core::lint::exposes_secret(&self.findings) {
            Some("a finding above puts a Secret's value where it is not secret (--allow-secret-exposure writes it anyway)")
        } else if !force && any(Severity::NeedsForce) {
            Some("a finding above needs --force")
        } else {
            None
        }
    }
}
