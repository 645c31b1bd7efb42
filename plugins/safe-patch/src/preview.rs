//! How one object's change is shown before it is written, on stderr: the diff (server
//! noise stripped, Secret values hidden) and each lint finding as a line. The single
//! patch ([`crate::flow`]) and the preview of a run ([`crate::run_preview`]) show them
//! the same way.

use colored::Colorize;
use fieldwise_core::lint::{Finding, Severity};
use fieldwise_kube::output::diff;
use serde_json::Value;

/// The diff a user is shown: server noise stripped, Secret values hidden unless
/// --show-secrets; with the managers when `managers` (the patch sets
/// `metadata.managedFields`, so they are the change).
pub fn show_diff(
    old_label: &str,
    new_label: &str,
    old: &Value,
    new: &Value,
    show_secrets: bool,
    managers: bool,
) -> Option<String> {
    if managers {
        diff::human_with_managers(old_label, new_label, old, new, show_secrets)
    } else {
        diff::human(old_label, new_label, old, new, show_secrets)
    }
}

/// One finding as printed: `warning: MESSAGE (fix: FIX)`, its label colored on a terminal.
pub fn finding_line(f: &Finding) -> String {
    let label = match f.severity {
        Severity::Info => "info".normal(),
        Severity::Warning => "warning".yellow(),
        Severity::NeedsForce => "needs --force".red().bold(),
        Severity::ExposesSecret => "exposes a Secret value".red().bold(),
    };
    match &f.fix {
        Some(fix) => format!("{label}: {} (fix: {fix})", f.message),
        None => format!("{label}: {}", f.message),
    }
}
