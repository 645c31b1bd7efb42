//! The plan for people: a header line and a table of findings per object, then the
//! summary line.

use colored::Colorize;
use fieldwise_core::ownership::Fix;
use fieldwise_core::release::prune::Blocker;
use fieldwise_kube::api::object_prune::Prune;
use fieldwise_kube::output::values;

use super::report::{ConflictRow, ObjectReport, Planned, ReleasedRow, Shown};
use crate::summary::table;

/// One object's section: `deployment.apps/web (deploy.yaml): <status>`, its findings, the
/// check; the fields the server sets again to the same value are listed with `show_defaulted`.
pub fn render(report: &ObjectReport, force: bool, show_defaulted: bool) -> String {
    let name = format!("{} ({})", report.display, report.source);
    let planned = match &report.result {
        Err(message) => return format!("{}: {} {message}\n", name.bold(), "error:".red().bold()),
        Ok(planned) => planned,
    };
    let mut out = format!("{}: {}\n", name.bold(), status(planned, force));
    if let Some(conversion) = &planned.conversion {
        out.push_str(&format!(
            "  first, Helm 4 converts {}'s client-side fields ({} field{}, Update {}) into its Apply entry; then it applies:\n",
            conversion.manager,
            conversion.fields,
            plural(conversion.fields),
            conversion.api_versions.join(", ")
        ));
    }
    if planned.before_first_apply {
        out.push_str(
            "  the object has no managedFields: the apiserver attributes everything it holds to \"before-first-apply\" first\n",
        );
    }
    let mut rows: Vec<[String; 5]> = Vec::new();
    for (finding, list) in [("conflict", &planned.conflicts), ("takeover", &planned.takeovers)] {
        rows.extend(list.iter().map(|c| conflict_row(finding, c)));
    }
    rows.extend(planned.upgraded.iter().map(|c| conflict_row("upgrade", c)));
    rows.extend(planned.removed.iter().map(|r| released_row("removed", r)));
    rows.extend(planned.survives.iter().map(|r| released_row("survives", r)));
    if show_defaulted {
        rows.extend(planned.defaulted.iter().map(|r| released_row("defaulted", r)));
    }
    if !rows.is_empty() {
        let header = ["FINDING", "FIELD", "OWNER", "LIVE", "YOURS"].map(String::from);
        out.push_str(&indent(&table(&header, &rows)));
    }
    for advice in advice_lines(planned) {
        out.push_str(&format!("  fix: {advice}\n"));
    }
    if planned.survives.iter().any(|r| !r.owners.is_empty()) {
        out.push_str(
            "  note: a surviving field stays in the cluster with its value after it leaves your file: its co-owner keeps it\n",
        );
    }
    if !planned.defaulted.is_empty() {
        let n = planned.defaulted.len();
        out.push_str(&format!(
            "  defaulted: {n} field{} no longer in the file that the server sets again to the value {} (no change{})\n",
            plural(n),
            if n == 1 { "it has" } else { "they have" },
            if show_defaulted { "" } else { "; --show-defaulted lists them" }
        ));
    }
    if planned.removals_unverified {
        out.push_str(&format!(
            "  {} the server returned no object to check them against: some may be fields it sets again to the same value\n",
            "removals unverified:".yellow()
        ));
    }
    for lint in &planned.lints {
        let fix = lint.fix.as_deref().map(|f| format!(" ({f})")).unwrap_or_default();
        out.push_str(&format!("  {} {}{fix}\n", "lint:".yellow(), lint.message));
    }
    if !planned.shared.is_empty() {
        let mut owners: Vec<String> = planned.shared.iter().map(|s| s.with.label()).collect();
        owners.sort();
        owners.dedup();
        let n = planned.shared.len();
        out.push_str(&format!(
            "  shared: {n} field{} set to the value {} already {} ({}; -o json lists them)\n",
            plural(n),
            if owners.len() == 1 { "its owner" } else { "their owners" },
            if owners.len() == 1 { "has" } else { "have" },
            owners.join(", ")
        ));
    }
    out.push_str(&check_line(planned));
    out
}

/// The object's status, one phrase.
fn status(planned: &Planned, force: bool) -> String {
    // The apiserver's own words on the verdict's line, as kubectl prints
    // `Error from server (NotFound): namespaces "x" not found`.
    if let Some(refusal) = &planned.refused {
        let status = format!("{} ({} {})", "refused by the server".red().bold(), refusal.code, refusal.reason);
        return if refusal.message.is_empty() { status } else { format!("{status}: {}", refusal.message) };
    }
    if planned.is_conflicting() {
        let n = planned.conflicts.len().max(planned.server_causes.len());
        return format!(
            "{} on {n} field{}: the apply is refused (409) unless --force-conflicts",
            "conflicts".red().bold(),
            plural(n)
        );
    }
    let mut parts = Vec::new();
    match &planned.namespace_created {
        Some(namespace) => parts.push(
            format!("new: the apply creates it, in namespace {namespace} created by this apply").green().to_string(),
        ),
        None if planned.new => parts.push("new: the apply creates it".green().to_string()),
        None => {}
    }
    if !planned.takeovers.is_empty() {
        let n = planned.takeovers.len();
        parts.push(format!("{} {n} field{} from other managers", "--force-conflicts takes".yellow(), plural(n)));
    }
    let released = planned.removed.len() + planned.survives.len();
    if released > 0 {
        parts.push(format!("{} {released} field{} no longer in the file", "stops owning".yellow(), plural(released)));
    }
    if parts.is_empty() {
        parts.push(if force { "clean".green().to_string() } else { "clean: no conflict".green().to_string() });
    }
    parts.join("; ")
}

fn conflict_row(finding: &str, c: &ConflictRow) -> [String; 5] {
    // Both values elided alike around their first difference, so it shows in both cells.
    let (live, yours) = match (&c.live, &c.yours) {
        (Shown::Value(live), Shown::Value(yours)) => {
            values::contrast(&values::one_line(live), &values::one_line(yours))
        }
        _ => (value(&c.live), value(&c.yours)),
    };
    [finding.to_string(), c.field.clone(), format!("{} [{}]", c.owner.label(), c.class.name()), live, yours]
}

fn released_row(finding: &str, r: &ReleasedRow) -> [String; 5] {
    let owners = if r.owners.is_empty() {
        "-".to_string()
    } else {
        r.owners.iter().map(|o| o.label()).collect::<Vec<_>>().join(", ")
    };
    // Your file no longer sets it: the apply unsets a removed field, leaves a surviving
    // one as LIVE shows it (its co-owner keeps it), so YOURS has no value to show there, and
    // the server sets a defaulted one again to the value LIVE shows.
    let after = match finding {
        "removed" => "unset",
        "defaulted" => "(same default)",
        _ => "-",
    }
    .to_string();
    [finding.to_string(), r.field.clone(), owners, value(&r.live), after]
}

/// One line per owner and fix: its fields, and what to do.
fn advice_lines(planned: &Planned) -> Vec<String> {
    let mut groups: Vec<(&str, Fix, Vec<&str>)> = Vec::new();
    for c in planned.conflicts.iter().chain(&planned.takeovers) {
        match groups.iter_mut().find(|(owner, fix, _)| *owner == c.owner.name && *fix == c.fix) {
            Some((_, _, fields)) => fields.push(&c.field),
            None => groups.push((&c.owner.name, c.fix, vec![&c.field])),
        }
    }
    groups.into_iter().map(|(owner, fix, fields)| fix.advice(&fields.join(", "), owner)).collect()
}

fn check_line(planned: &Planned) -> String {
    let check = &planned.check;
    if !check.disagreements.is_empty() {
        let mut out =
            format!("  {} the apiserver's dry run disagrees with the prediction:\n", "DISAGREES:".red().bold());
        for d in &check.disagreements {
            out.push_str(&format!("    - {d}\n"));
        }
        return out;
    }
    if check.checked {
        "  checked: the apiserver's dry run agrees\n".to_string()
    } else if let Some(namespace) = &planned.namespace_created {
        format!(
            "  not checked: the apiserver cannot dry-run it before namespace {namespace} exists (this apply creates it first)\n"
        )
    } else {
        "  not checked: the server refused the apply before deciding ownership\n".to_string()
    }
}

/// A value for a table cell.
pub fn value(shown: &Shown) -> String {
    match shown {
        Shown::Unset => "unset".to_string(),
        Shown::Value(v) => values::cut(&values::one_line(v)),
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The prunes, after the objects: what the apply deletes, and what the keep policy keeps.
pub fn prunes(prunes: &[Prune]) -> String {
    let mut out = String::new();
    for prune in prunes {
        let what = if prune.kept() {
            "kept (helm.sh/resource-policy: keep): the release no longer has it, Helm leaves it".green().to_string()
        } else {
            "deleted: the new render no longer has it".yellow().to_string()
        };
        out.push_str(&format!("{} {}: {what}\n", "prune".bold(), prune.target.located()));
        for blocker in prune.blockers.iter().filter(|b| !b.names().is_empty()) {
            let why = match blocker {
                Blocker::Managers(_) => "other managers own fields in it",
                Blocker::OwnerReferences(_) => "it has owners",
                Blocker::Finalizers(_) => "it has finalizers (the delete waits for them)",
                Blocker::ResourcePolicyKeep => continue,
            };
            out.push_str(&format!("  {why}: {}\n", blocker.names().join(", ")));
        }
    }
    out
}
