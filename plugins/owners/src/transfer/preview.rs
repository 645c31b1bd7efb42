//! The preview a transfer shows before it asks: per object, the fields that move (from
//! which manager), the moved fields other managers keep owning, the selected entries left
//! alone, and with `-f` what the target's next apply keeps, removes, releases and
//! conflicts on. Field paths only, never values: the object may be a Secret.

use colored::Colorize;
use fieldwise_core::ownership::{Manager, NextApply, Operation, StillShared, Transfer, TransferTarget, ValueChange};
use fieldwise_kube::output::values;
use fieldwise_kube::redact;
use serde_json::{json, Value};

use super::check::Predicted;
use super::field_list::{fields_json, fields_text, SHOWN};
use super::objects::Subject;

/// One object's transfer as planned against the object read.
#[derive(Debug, Clone)]
pub struct ObjectPlan {
    /// The object.
    pub subject: Subject,
    /// The core's plan, patch and result.
    pub transfer: Transfer,
    /// With `-f`: the target's next apply, predicted.
    pub next: Option<Predicted>,
}

/// A manager as the preview names it: `kubectl-patch (Update)`, `kubectl-scale (Update, /scale)`.
pub fn manager_label(m: &Manager) -> String {
    let mut label = format!("{} ({}", m.name, m.operation.as_str());
    if !m.subresource.is_empty() {
        label.push_str(&format!(", /{}", m.subresource));
    }
    label.push(')');
    label
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn shared_text(shared: &[StillShared]) -> String {
    let items: Vec<String> = shared
        .iter()
        .take(SHOWN)
        .map(|s| format!("{} ({})", s.path, s.with.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")))
        .collect();
    let mut text = items.join(", ");
    if shared.len() > SHOWN {
        text.push_str(&format!(" and {} more", shared.len() - SHOWN));
    }
    text
}

/// The preview of every object, then a total when there are several.
pub fn render(plans: &[ObjectPlan], to: &TransferTarget) -> String {
    let mut out = String::new();
    for plan in plans {
        out.push_str(&render_one(plan, to));
    }
    let moving: Vec<&ObjectPlan> = plans.iter().filter(|p| !p.transfer.plan.is_empty()).collect();
    if plans.len() > 1 {
        let fields: usize = moving.iter().map(|p| p.transfer.plan.moved_fields().leaves().len()).sum();
        out.push_str(&format!(
            "{} of {}: {} {} to {} ({})\n",
            plural(moving.len(), "object", "objects"),
            plans.len(),
            plural(fields, "field", "fields"),
            if fields == 1 { "moves" } else { "move" },
            to.manager,
            to.operation.as_str()
        ));
    }
    out
}

fn render_one(plan: &ObjectPlan, to: &TransferTarget) -> String {
    let display = plan.subject.target.display();
    let p = &plan.transfer.plan;
    let target = format!("{} ({})", to.manager, to.operation.as_str());
    let mut out = if p.is_empty() {
        format!("{}: nothing to transfer to {target}\n", display.bold())
    } else {
        let fields = p.moved_fields().leaves().len();
        let entry = if p.created { "a new entry" } else { "its entry" };
        format!(
            "{}: {} from {} {} to {target}, into {entry}\n",
            display.bold(),
            plural(fields, "field", "fields"),
            plural(p.moved.len(), "entry", "entries"),
            if fields == 1 { "moves" } else { "move" },
        )
    };
    for moved in &p.moved {
        let leaves = moved.fields.leaves();
        let what =
            if leaves.is_empty() { "(no fields; the entry is dropped)".to_string() } else { fields_text(&leaves) };
        out.push_str(&format!("  from {}: {what}\n", manager_label(&moved.from)));
    }
    if !p.shared.is_empty() {
        out.push_str(&format!(
            "  {} stay shared with other managers ({}'s apply cannot delete them): {}\n",
            plural(p.shared.len(), "field", "fields"),
            to.manager,
            shared_text(&p.shared)
        ));
    }
    for kept in &p.kept {
        out.push_str(&format!(
            "  left alone: {}, written as {} (the fields move only within {})\n",
            manager_label(&kept.manager),
            kept.api_version,
            p.api_version
        ));
    }
    if let Some(predicted) = &plan.next {
        let source = plan.subject.source.as_deref().unwrap_or("-f");
        let secret = redact::is_secret(&plan.subject.live);
        out.push_str(&render_next(&predicted.next, source, &to.manager, predicted.unsettled.as_deref(), secret));
    } else if plan.subject.config.is_some() && to.operation == Operation::Update {
        out.push_str("  (no next apply predicted: an Update manager does not apply)\n");
    }
    out
}

fn render_next(next: &NextApply, source: &str, manager: &str, unsettled: Option<&str>, secret: bool) -> String {
    let mut out = format!("  {manager}'s next apply of {source}:\n");
    out.push_str(&format!("    keeps {}\n", plural(next.keeps.len(), "field", "fields")));
    if !next.changes.is_empty() {
        let changes: Vec<String> = next
            .changes
            .iter()
            .map(|c| {
                let (live, applied) = change_values(c, secret);
                format!("{} ({live} -> {applied})", c.path)
            })
            .collect();
        let line = format!(
            "    changes the value of {} of them: {}",
            plural(next.changes.len(), "field", "fields"),
            changes.join(", ")
        );
        out.push_str(&format!("{}\n", line.yellow()));
    }
    if next.removes.is_empty() {
        out.push_str("    removes no field\n");
    } else {
        let line = format!(
            "    removes {} it would own that its configuration does not set: {}",
            plural(next.removes.len(), "field", "fields"),
            fields_text(&next.removes)
        );
        out.push_str(&format!("{}\n", line.yellow()));
    }
    if !next.reset.is_empty() {
        let line = format!(
            "    resets {} it does not set to the server's default: {}",
            plural(next.reset.len(), "field", "fields"),
            fields_text(&next.reset)
        );
        out.push_str(&format!("{}\n", line.yellow()));
    }
    if !next.defaulted.is_empty() {
        out.push_str(&format!(
            "    leaves {} at the server's default they already have (it drops them, the server sets them again)\n",
            plural(next.defaulted.len(), "field", "fields"),
        ));
    }
    if let Some(why) = unsettled {
        out.push_str(&format!("    (the server's defaults are unknown, so some removals may come back: {why})\n"));
    }
    if !next.releases.is_empty() {
        out.push_str(&format!(
            "    leaves {} to the other managers that own them too: {}\n",
            plural(next.releases.len(), "field", "fields"),
            shared_text(&next.releases)
        ));
    }
    if next.conflicts.is_empty() {
        out.push_str("    no conflicts\n");
    } else {
        let causes: Vec<String> = next.conflicts.iter().map(|c| format!("{} ({})", c.field(), c.message())).collect();
        let line = format!(
            "    conflicts on {} (the apiserver refuses it without --force-conflicts): {}",
            plural(next.conflicts.len(), "field", "fields"),
            causes.join(", ")
        );
        out.push_str(&format!("{}\n", line.red()));
    }
    for e in &next.errors {
        out.push_str(&format!("    note: {e}\n"));
    }
    out
}

/// A changed field's live and applied values as they are shown: through the redaction
/// boundary's path-level policy (a Secret's data masked), on one line, elided alike around
/// their first difference.
fn change_values(change: &ValueChange, secret: bool) -> (String, String) {
    let shown = |v: &Value| values::one_line(&redact::value_at_path(secret, &change.path, v));
    let live = change.live.as_ref().map_or_else(|| "(unset)".to_string(), shown);
    values::contrast(&live, &shown(&change.applied))
}

fn manager_json(m: &Manager) -> Value {
    json!({"manager": m.name, "operation": m.operation.as_str(), "subresource": m.subresource,
           "apiVersion": m.api_version})
}

fn shared_json(shared: &[StillShared]) -> Value {
    shared
        .iter()
        .map(|s| json!({"field": s.path.to_string(), "with": s.with.iter().map(manager_json).collect::<Vec<_>>()}))
        .collect()
}

/// One object's item of the JSON document (without its outcome).
pub fn json(plan: &ObjectPlan) -> Value {
    let p = &plan.transfer.plan;
    let mut item = json!({
        "object": crate::subject::reference(&plan.subject.live),
        "to": manager_json(&p.target),
        "apiVersion": p.api_version,
        "createsEntry": p.created && !p.is_empty(),
        "moved": p.moved.iter().map(|m| json!({"from": manager_json(&m.from), "fields": fields_json(&m.fields.leaves())})).collect::<Vec<_>>(),
        "stillShared": shared_json(&p.shared),
        "leftAlone": p.kept.iter().map(|k| json!({"manager": manager_json(&k.manager), "apiVersion": k.api_version})).collect::<Vec<_>>(),
    });
    if let Some(source) = &plan.subject.source {
        item["source"] = source.clone().into();
    }
    if let Some(predicted) = &plan.next {
        let next = &predicted.next;
        let secret = redact::is_secret(&plan.subject.live);
        item["nextApply"] = json!({
            "keeps": fields_json(&next.keeps),
            "changes": next.changes.iter().map(|c| {
                let shown = |v: &Value| redact::value_at_path(secret, &c.path, v);
                json!({"field": c.path.to_string(), "live": c.live.as_ref().map(shown), "applied": shown(&c.applied)})
            }).collect::<Vec<_>>(),
            "removes": fields_json(&next.removes),
            "resetToDefault": fields_json(&next.reset),
            "defaultedAgain": fields_json(&next.defaulted),
            "defaultsUnknown": predicted.unsettled,
            "releases": shared_json(&next.releases),
            "conflicts": next.conflicts.iter().map(|c| json!({"field": c.field(), "message": c.message()})).collect::<Vec<_>>(),
        });
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::ownership::{managed_fields_of, predict_next_apply};
    use fieldwise_core::schema::{builtin, Gvk};

    #[test]
    fn the_next_apply_names_what_it_removes_and_who_keeps_the_rest() {
        colored::control::set_override(false);
        let entry = |manager: &str, operation: &str, fields: Value| json!({"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "managedFields": [
            entry("argocd", "Apply", json!({"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}})),
            entry("helm", "Update", json!({"f:data": {"f:c": {}}}))]}, "data": {"a": "1", "b": "2", "c": "3"}});
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}});
        let schema = builtin();
        let ty = schema.root(&Gvk::new("", "v1", "ConfigMap")).unwrap();
        let next = predict_next_apply(&live, &managed_fields_of(&live).unwrap(), &config, "argocd", schema, ty);
        assert_eq!(
            render_next(&next, "x.yaml", "argocd", None, false),
            "  argocd's next apply of x.yaml:
    keeps 1 field
    removes 1 field it would own that its configuration does not set: .data.b
    leaves 1 field to the other managers that own them too: .data.c (helm)
    no conflicts
"
        );
        let scale = Manager {
            name: "kubectl-scale".into(),
            operation: Operation::Update,
            api_version: Some("apps/v1".into()),
            subresource: "scale".into(),
        };
        assert_eq!(manager_label(&scale), "kubectl-scale (Update, /scale)");
    }
}
