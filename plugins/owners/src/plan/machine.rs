//! The plan for machines: one `OwnersPlan` document (`-o json|yaml`, its shape in
//! docs/owners-output.md) or a JUnit report (`-o junit`, one test case per object).

use fieldwise_core::release::helm::Release;
use fieldwise_kube::api::object_prune::Prune;
use serde_json::{json, Map, Value};

use super::report::{ConflictRow, FailOn, ObjectReport, Owner, ReleasedRow, Shown, Summary};

/// The document's `apiVersion`.
pub const API_VERSION: &str = "fieldwise.dev/v1alpha1";

/// How the run was asked for, recorded in the document.
pub struct RunInfo<'a> {
    /// `--field-manager`.
    pub field_manager: &'a str,
    /// `--force-conflicts`.
    pub force: bool,
    /// `--fail-on`.
    pub fail_on: &'a [FailOn],
    /// `--helm-release`: the release revision read.
    pub helm_release: Option<&'a Release>,
}

/// The `OwnersPlan` document.
pub fn document(
    info: &RunInfo<'_>,
    objects: &[ObjectReport],
    input_errors: &[String],
    summary: &Summary,
    prunes: &[Prune],
) -> Value {
    let fail_on: Vec<&str> = info.fail_on.iter().map(|f| fail_on_name(*f)).collect();
    let mut doc = json!({
        "apiVersion": API_VERSION,
        "kind": "OwnersPlan",
        "fieldManager": info.field_manager,
        "forceConflicts": info.force,
        "failOn": fail_on,
        "objects": objects.iter().map(|o| object(o, info.fail_on)).collect::<Vec<_>>(),
        "prune": prunes.iter().map(prune).collect::<Vec<_>>(),
        "inputErrors": input_errors,
        "summary": {
            "objects": summary.objects,
            "conflicting": summary.conflicting,
            "refused": summary.refused,
            "new": summary.new,
            "withTakeovers": summary.takeovers,
            "withRemovals": summary.removals,
            "withDefaulted": summary.defaulted,
            "removalsUnverified": summary.unverified,
            "disagreements": summary.disagreements,
            "errors": summary.errors + input_errors.len(),
            "unread": summary.unread,
            "failing": summary.failing,
            "pruned": prunes.iter().filter(|p| !p.kept()).count(),
            "kept": prunes.iter().filter(|p| p.kept()).count(),
        },
    });
    if let Some(release) = &info.helm_release {
        doc["helmRelease"] = json!({"name": release.name, "namespace": release.namespace, "revision": release.version});
    }
    doc
}

/// One prune: the object, whether Helm deletes or keeps it, and its blockers.
fn prune(p: &Prune) -> Value {
    let blockers: Vec<Value> = p
        .blockers
        .iter()
        .map(|b| {
            let mut out = json!({"reason": b.reason()});
            if !b.names().is_empty() {
                out["names"] = b.names().into();
            }
            out
        })
        .collect();
    let mut out = Map::new();
    out.insert("apiVersion".into(), p.api_version.clone().into());
    out.insert("kind".into(), p.target.resource.kind.clone().into());
    if let Some(namespace) = &p.target.namespace {
        out.insert("namespace".into(), namespace.clone().into());
    }
    out.insert("name".into(), p.target.name.clone().into());
    out.insert("action".into(), if p.kept() { "keep" } else { "delete" }.into());
    out.insert("blockers".into(), blockers.into());
    Value::Object(out)
}

/// `--fail-on`'s words.
pub fn fail_on_name(f: FailOn) -> &'static str {
    match f {
        FailOn::Conflicts => "conflicts",
        FailOn::Takeovers => "takeovers",
        FailOn::Removals => "removals",
        FailOn::Refusals => "refusals",
        FailOn::Prunes => "prunes",
    }
}

fn object(report: &ObjectReport, fail_on: &[FailOn]) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), report.api_version.clone().into());
    out.insert("kind".into(), report.kind.clone().into());
    if let Some(namespace) = &report.namespace {
        out.insert("namespace".into(), namespace.clone().into());
    }
    out.insert("name".into(), report.name.clone().into());
    out.insert("source".into(), report.source.clone().into());
    match &report.result {
        Err(message) => {
            out.insert("error".into(), message.clone().into());
        }
        Ok(p) => {
            out.insert("new".into(), p.new.into());
            if let Some(namespace) = &p.namespace_created {
                out.insert("namespaceCreated".into(), namespace.clone().into());
            }
            out.insert("beforeFirstApply".into(), p.before_first_apply.into());
            let conversion = p.conversion.as_ref().map(|c| {
                json!({"manager": c.manager, "operation": "Update", "apiVersions": c.api_versions, "fields": c.fields})
            });
            out.insert("helmConversion".into(), conversion.unwrap_or(Value::Null));
            out.insert("conflicts".into(), p.conflicts.iter().map(conflict).collect());
            out.insert("takeovers".into(), p.takeovers.iter().map(conflict).collect());
            out.insert("upgraded".into(), p.upgraded.iter().map(conflict).collect());
            let shared: Vec<Value> =
                p.shared.iter().map(|s| json!({"field": s.field, "with": owner(&s.with)})).collect();
            out.insert("shared".into(), shared.into());
            out.insert("removed".into(), p.removed.iter().map(released).collect());
            out.insert("survives".into(), p.survives.iter().map(released).collect());
            out.insert("defaulted".into(), p.defaulted.iter().map(released).collect());
            out.insert("removalsVerified".into(), (!p.removals_unverified).into());
            let lints: Vec<Value> =
                p.lints.iter().map(|l| json!({"field": l.path, "message": l.message, "fix": l.fix})).collect();
            out.insert("lints".into(), lints.into());
            let refused = p.refused.as_ref().map(|r| json!({"code": r.code, "reason": r.reason, "message": r.message}));
            out.insert("refused".into(), refused.unwrap_or(Value::Null));
            out.insert(
                "verification".into(),
                json!({"checked": p.check.checked, "agrees": p.check.checked && p.check.disagreements.is_empty(),
                    "disagreements": p.check.disagreements}),
            );
        }
    }
    out.insert("failures".into(), report.failures(fail_on).into());
    Value::Object(out)
}

fn owner(o: &Owner) -> Value {
    let mut out = json!({"manager": o.name, "operation": o.operation, "subresource": o.subresource});
    if let Some(v) = &o.api_version {
        out["apiVersion"] = v.clone().into();
    }
    out
}

fn conflict(c: &ConflictRow) -> Value {
    let mut out = json!({
        "field": c.field,
        "manager": c.owner.name,
        "operation": c.owner.operation,
        "subresource": c.owner.subresource,
        "class": c.class.name(),
        "fix": c.fix.name(),
        "advice": c.advice,
    });
    if let Some(v) = &c.owner.api_version {
        out["apiVersion"] = v.clone().into();
    }
    put_value(&mut out, "live", &c.live);
    put_value(&mut out, "yours", &c.yours);
    out
}

fn released(r: &ReleasedRow) -> Value {
    let mut out = json!({"field": r.field});
    put_value(&mut out, "live", &r.live);
    if !r.owners.is_empty() {
        out["owners"] = r.owners.iter().map(owner).collect();
    }
    out
}

/// Sets `key` to the value; leaves it out when the field is unset.
fn put_value(out: &mut Value, key: &str, shown: &Shown) {
    let value = match shown {
        Shown::Unset => return,
        Shown::Value(v) => v.clone(),
    };
    out[key] = value;
}

/// The JUnit report: one test case per object (failed when it fails `--fail-on`, an error
/// when it could not be planned or the prediction disagrees with the server) and one per
/// input that could not be read.
pub fn junit(objects: &[ObjectReport], input_errors: &[String], fail_on: &[FailOn]) -> String {
    use fieldwise_kube::output::junit::{self, Outcome, TestCase};

    let error = |message: &str, body: String| Outcome::Error { message: message.to_string(), body };
    let mut cases: Vec<TestCase> = objects
        .iter()
        .map(|report| {
            let outcome = match &report.result {
                Err(message) => error(message, String::new()),
                Ok(p) if !p.check.disagreements.is_empty() => {
                    error("the apiserver's dry run disagrees with the prediction", p.check.disagreements.join("\n"))
                }
                Ok(_) => match report.failures(fail_on) {
                    failed if failed.is_empty() => Outcome::Passed,
                    failed => Outcome::Failed {
                        message: failed.join(", "),
                        kind: failure_type(report, fail_on).to_string(),
                        body: super::text::render(report, false, false),
                    },
                },
            };
            TestCase {
                classname: report.display.split('/').next().unwrap_or_default().to_string(),
                name: match &report.namespace {
                    Some(ns) => format!("{ns}/{}", report.name),
                    None => report.name.clone(),
                },
                file: Some(report.source.clone()),
                outcome,
            }
        })
        .collect();
    cases.extend(input_errors.iter().map(|message| TestCase {
        classname: "input".into(),
        name: message.clone(),
        file: None,
        outcome: error(message, String::new()),
    }));
    junit::report("kubectl owners plan", &cases)
}

fn failure_type(report: &ObjectReport, fail_on: &[FailOn]) -> &'static str {
    fail_on
        .iter()
        .find(|f| !report.failures(std::slice::from_ref(f)).is_empty())
        .map(|f| fail_on_name(*f))
        .unwrap_or("failure")
}
