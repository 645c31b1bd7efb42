//! `--conflicts -f FILE`: what a server-side apply of FILE would conflict with. A view
//! of `owners plan` ([`crate::plan::object::Planner`]) without force: the same
//! prediction, and with `--verify` the same check against the apiserver's dry run.

use fieldwise_kube::output::values;
use fieldwise_kube::Result;
use serde_json::{json, Value};

use crate::plan::report::{ConflictRow, Planned, Shown};
use crate::summary::table;

/// The prediction for one configuration.
#[derive(Debug, Clone)]
pub struct ConflictReport {
    /// kubectl's name of the object.
    pub display: String,
    /// The applying manager.
    pub field_manager: String,
    /// The plan of the apply, without force.
    pub planned: Planned,
    /// Whether the apiserver was asked (`--verify`).
    pub verified: bool,
}

impl ConflictReport {
    /// The report of `planned`, refused with the server's error when the dry run was refused
    /// for another reason than conflicts (as kubectl's would be).
    pub fn of(display: String, field_manager: &str, planned: Planned, verified: bool) -> Result<Self> {
        if let Some(refusal) = &planned.refused {
            return Err(refusal.error());
        }
        Ok(ConflictReport { display, field_manager: field_manager.to_string(), planned, verified })
    }

    /// The apiserver's HTTP status: 409 with conflicts, 200 without.
    fn status(&self) -> u16 {
        if self.planned.server_causes.is_empty() {
            200
        } else {
            409
        }
    }

    /// Whether the apiserver's answer agrees with the prediction.
    pub fn matches(&self) -> bool {
        self.planned.check.checked && self.planned.check.disagreements.is_empty()
    }
}

/// The human report.
pub fn render(report: &ConflictReport) -> String {
    let p = &report.planned;
    let who = format!("a server-side apply as {:?}", report.field_manager);
    let mut out = if p.new {
        format!("{}: does not exist; {who} would create it without conflicts\n", report.display)
    } else if p.conflicts.is_empty() {
        format!("{}: no conflicts: {who} would succeed\n", report.display)
    } else {
        let n = p.conflicts.len();
        format!(
            "{}: {who} would conflict on {n} field{} (the apiserver refuses it with 409 Conflict unless --force-conflicts):\n",
            report.display,
            if n == 1 { "" } else { "s" }
        )
    };
    if !p.conflicts.is_empty() {
        out.push_str(&indent(&conflict_table(&p.conflicts)));
    }
    if !p.upgraded.is_empty() {
        out.push_str(&format!(
            "  {} field{} set by client-side apply would be taken over without conflict (last-applied still matches)\n",
            p.upgraded.len(),
            if p.upgraded.len() == 1 { "" } else { "s" }
        ));
    }
    if !p.shared.is_empty() {
        out.push_str(&format!(
            "  {} field{} would become shared with other managers (same value)\n",
            p.shared.len(),
            if p.shared.len() == 1 { "" } else { "s" }
        ));
    }
    if report.verified {
        let causes = &p.server_causes;
        let answer = if report.status() == 409 {
            format!("409 Conflict with {} cause{}", causes.len(), if causes.len() == 1 { "" } else { "s" })
        } else {
            "success".to_string()
        };
        if report.matches() {
            out.push_str(&format!("  verified: the apiserver's dry run answered {answer}, as predicted\n"));
        } else {
            out.push_str(&format!("  MISMATCH: the apiserver's dry run answered {answer}, not what was predicted\n"));
            for disagreement in &p.check.disagreements {
                out.push_str(&format!("    {disagreement}\n"));
            }
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn conflict_table(conflicts: &[ConflictRow]) -> String {
    let shown = |v: &Shown| match v {
        Shown::Value(v) => values::one_line(v),
        Shown::Unset => "(unset)".to_string(),
    };
    // Both values elided alike around their first difference, so it shows in both cells.
    let cells = |c: &ConflictRow| match (&c.live, &c.yours) {
        (Shown::Value(_), Shown::Value(_)) => values::contrast(&shown(&c.live), &shown(&c.yours)),
        _ => (values::cut(&shown(&c.live)), values::cut(&shown(&c.yours))),
    };
    let header = ["FIELD", "OWNER", "LIVE", "YOURS"].map(String::from);
    let rows: Vec<[String; 4]> = conflicts
        .iter()
        .map(|c| {
            let (live, yours) = cells(c);
            [c.field.clone(), c.manager.to_string(), live, yours]
        })
        .collect();
    table(&header, &rows)
}

/// The `conflicts` section of the JSON output.
pub fn json(report: &ConflictReport) -> Value {
    let list = |conflicts: &[ConflictRow]| -> Value {
        conflicts
            .iter()
            .map(|c| {
                let shown = |v: &Shown| match v {
                    Shown::Value(v) => v.clone(),
                    Shown::Unset => Value::Null,
                };
                json!({
                    "field": c.field,
                    "message": c.message,
                    "manager": {
                        "manager": c.manager.name,
                        "operation": c.manager.operation.as_str(),
                        "subresource": c.manager.subresource,
                        "apiVersion": c.manager.api_version,
                    },
                    "class": c.class.name(),
                    "live": shown(&c.live),
                    "applied": shown(&c.yours),
                })
            })
            .collect()
    };
    let p = &report.planned;
    let mut out = json!({
        "fieldManager": report.field_manager,
        "exists": !p.new,
        "rejected": !p.conflicts.is_empty(),
        "conflicts": list(&p.conflicts),
        "upgraded": list(&p.upgraded),
        "shared": p.shared.len(),
    });
    if report.verified {
        let causes: Vec<Value> = p.server_causes.iter().map(|(f, m)| json!({"field": f, "message": m})).collect();
        out["verification"] = json!({"status": report.status(), "causes": causes, "matches": report.matches()});
    }
    out
}
