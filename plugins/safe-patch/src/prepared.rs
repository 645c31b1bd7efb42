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
    /// Why a finding stops this object from being written, if one does: a Secret's value put
    /// where it is not secret without `--allow-secret-exposure` (which `--force` does not
    /// cover), else a lint that needs `--force`. Counted, in the words of a refusal line
    /// (`error: not writing NAME: WHY`), for a run of many and for the run of one alike.
    pub fn refusal(&self, force: bool, allow_secret_exposure: bool) -> Option<String> {
        refusal(&self.findings, force, allow_secret_exposure)
    }
}

/// [`Prepared::refusal`] of `findings`.
pub fn refusal(findings: &[Finding], force: bool, allow_secret_exposure: bool) -> Option<String> {
    let count = |severity: Severity| findings.iter().filter(|f| f.severity == severity).count();
    let above = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 finding above {one}"),
        n => format!("{n} findings above {many}"),
    };
    let (exposing, needing_force) = (count(Severity::ExposesSecret), count(Severity::NeedsForce));
    if !allow_secret_exposure && exposing > 0 {
        Some(format!(
            "{} a Secret's value where it is not secret; nothing was written (--allow-secret-exposure writes it anyway)",
            above(exposing, "puts", "put")
        ))
    } else if !force && needing_force > 0 {
        Some(format!("{} --force", above(needing_force, "needs", "need")))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(severity: Severity) -> Finding {
        Finding::new(severity, "data.a", "a lint")
    }

    #[test]
    fn exposure_comes_first_and_force_does_not_cover_it() {
        let findings = [finding(Severity::NeedsForce), finding(Severity::ExposesSecret)];
        let why = refusal(&findings, true, false).expect("refused");
        assert!(why.starts_with("1 finding above puts a Secret's value"), "{why}");
        assert_eq!(refusal(&findings, false, true).as_deref(), Some("1 finding above needs --force"));
        assert_eq!(refusal(&findings, true, true), None);
        let two = [finding(Severity::NeedsForce), finding(Severity::NeedsForce)];
        assert_eq!(refusal(&two, false, false).as_deref(), Some("2 findings above need --force"));
        assert_eq!(refusal(&[], false, false), None);
    }
}
