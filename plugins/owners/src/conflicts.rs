//! `--conflicts -f FILE`: what a server-side apply of FILE would conflict with,
//! predicted from the live object's managedFields; `--verify` asks the
//! apiserver with a dry run and checks that the prediction matches.

use fieldwise_core::ownership::{managed_fields_of, predict_apply, ApplyOptions, ApplyPrediction, Conflict};
use fieldwise_core::schema::Gvk;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::output::values;
use fieldwise_kube::write::{self, FieldValidation, PatchRequest, PatchType};
use fieldwise_kube::{redact, Error, Result};
use serde_json::{json, Value};

use crate::summary::table;

/// One `(field, message)` pair, as the apiserver's 409 causes carry them.
pub type Cause = (String, String);

/// What the apiserver answered to the dry run.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The HTTP status: 200/201 for success, 409 for conflicts.
    pub status: u16,
    /// The conflict causes, sorted.
    pub causes: Vec<Cause>,
    /// Whether they equal the predicted ones.
    pub matches: bool,
}

/// The prediction for one configuration.
#[derive(Debug, Clone)]
pub struct ConflictReport {
    /// kubectl's name of the object.
    pub display: String,
    /// The applying manager.
    pub field_manager: String,
    /// Whether the object exists (an apply that creates it never conflicts).
    pub exists: bool,
    /// The prediction (empty when the object does not exist).
    pub prediction: ApplyPrediction,
    /// The dry run's answer, with `--verify`.
    pub verification: Option<Verification>,
    /// Whether the object is a Secret, whose values are shown by the redaction boundary's
    /// path-level policy ([`redact::field_value`]).
    pub secret: bool,
}

impl ConflictReport {
    /// The predicted causes, sorted, in the apiserver's words.
    pub fn predicted_causes(&self) -> Vec<Cause> {
        causes_of(&self.prediction.conflicts)
    }
}

/// The conflicts as sorted `(field, message)` pairs.
pub fn causes_of(conflicts: &[Conflict]) -> Vec<Cause> {
    let mut causes: Vec<Cause> = conflicts.iter().map(|c| (c.field(), c.message())).collect();
    causes.sort();
    causes
}

/// How to check one configuration.
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions<'a> {
    /// The applying manager (`--field-manager`).
    pub field_manager: &'a str,
    /// Ask the apiserver with a dry run too (`--verify`).
    pub verify: bool,
}

/// Predicts the apply of `config` to `target` (the object it names, see
/// [`ObjectRef::from_manifest`]) and verifies it, under the type's schema as the server
/// publishes it (built-in types and custom resources alike).
pub async fn check(
    conn: &Connection,
    schemas: &mut Schemas,
    target: &ObjectRef,
    config: &Value,
    options: &CheckOptions<'_>,
) -> Result<ConflictReport> {
    let CheckOptions { field_manager, verify } = *options;
    let resource = &target.resource;
    let display = target.display();
    let gvk =
        Gvk::of_object(config).ok_or_else(|| Error::usage(format!("{display}: the file has no apiVersion/kind")))?;
    let typed = schemas.for_gvk(&gvk).await?;
    let ty = typed.root.ok_or_else(|| {
        Error::Unsupported {
            what: format!(
                "{display}: cannot predict conflicts for {} {}: {} does not describe it (a custom resource without a schema?)",
                gvk.kind,
                resource.api_version(),
                typed.origin.describe()
            ),
        }
    })?;
    let live = match objects::get(conn, target, None).await {
        Ok(v) => Some(v),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e),
    };
    let prediction = match &live {
        Some(live) => {
            let managed = managed_fields_of(live).map_err(|e| Error::semantics(display.clone(), e))?;
            // Status is reset on the main resource of any type with a status subresource
            // (custom resources included), as discovery lists them.
            let mut options = ApplyOptions::for_main_resource_of(&resource.subresources);
            if typed.strategic == Some(false) {
                options = options.for_custom_resource(&resource.api_version());
            }
            predict_apply(live, &managed, config, field_manager, &typed.schema, ty, false, &options)
        }
        None => ApplyPrediction::default(),
    };
    let mut report = ConflictReport {
        display,
        field_manager: field_manager.to_string(),
        exists: live.is_some(),
        prediction,
        verification: None,
        secret: redact::is_secret(config),
    };
    if verify {
        let (status, causes) = dry_run(conn, target, config, field_manager).await?;
        let matches = causes == report.predicted_causes();
        report.verification = Some(Verification { status, causes, matches });
    }
    Ok(report)
}

/// A real server-side apply with `dryRun=All` and `force=false`: the status and the 409 causes.
pub async fn dry_run(
    conn: &Connection,
    target: &ObjectRef,
    config: &Value,
    field_manager: &str,
) -> Result<(u16, Vec<Cause>)> {
    let request = PatchRequest {
        patch_type: PatchType::Apply,
        body: config,
        field_manager,
        dry_run: true,
        force: false,
        subresource: None,
        validation: FieldValidation::Strict,
    };
    match write::patch(conn, target, &request).await {
        Ok(_) => Ok((200, Vec::new())),
        Err(e) if e.is_conflict() => {
            let mut causes: Vec<Cause> = e.causes().iter().map(|c| (c.field.clone(), c.message.clone())).collect();
            causes.sort();
            Ok((409, causes))
        }
        Err(e) => Err(e),
    }
}

/// The human report.
pub fn render(report: &ConflictReport) -> String {
    let p = &report.prediction;
    let who = format!("a server-side apply as {:?}", report.field_manager);
    let mut out = if !report.exists {
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
        out.push_str(&indent(&conflict_table(&p.conflicts, report.secret)));
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
    if let Some(v) = &report.verification {
        let answer = if v.status == 409 {
            format!("409 Conflict with {} cause{}", v.causes.len(), if v.causes.len() == 1 { "" } else { "s" })
        } else {
            "success".to_string()
        };
        if v.matches {
            out.push_str(&format!("  verified: the apiserver's dry run answered {answer}, as predicted\n"));
        } else {
            out.push_str(&format!("  MISMATCH: the apiserver's dry run answered {answer}, not what was predicted\n"));
            for (field, message) in &v.causes {
                out.push_str(&format!("    server: {field}: {message}\n"));
            }
            for (field, message) in report.predicted_causes() {
                out.push_str(&format!("    predicted: {field}: {message}\n"));
            }
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn conflict_table(conflicts: &[Conflict], secret: bool) -> String {
    let shown = |c: &Conflict, v: &Option<Value>| match v {
        Some(v) => values::one_line(&shown_value(secret, c, v)),
        None => "(unset)".to_string(),
    };
    // Both values elided alike around their first difference, so it shows in both cells.
    let cells = |c: &Conflict| match (&c.theirs, &c.yours) {
        (Some(_), Some(_)) => values::contrast(&shown(c, &c.theirs), &shown(c, &c.yours)),
        _ => (values::cut(&shown(c, &c.theirs)), values::cut(&shown(c, &c.yours))),
    };
    let header = ["FIELD", "OWNER", "LIVE", "YOURS"].map(String::from);
    let rows: Vec<[String; 4]> = conflicts
        .iter()
        .map(|c| {
            let (live, yours) = cells(c);
            [c.field(), c.manager.to_string(), live, yours]
        })
        .collect();
    table(&header, &rows)
}

/// A conflicting field's value as shown, by the redaction boundary's path-level policy: a
/// Secret's data hidden, any other value shown with the Secret values inside it masked.
fn shown_value(secret: bool, conflict: &Conflict, value: &Value) -> Value {
    redact::value_at_path(secret, &conflict.path, value)
}

/// The `conflicts` section of the JSON output.
pub fn json(report: &ConflictReport) -> Value {
    let list = |conflicts: &[Conflict]| -> Value {
        conflicts
            .iter()
            .map(|c| {
                let mut out = json!({
                    "field": c.field(),
                    "message": c.message(),
                    "manager": {
                        "manager": c.manager.name,
                        "operation": c.manager.operation.as_str(),
                        "subresource": c.manager.subresource,
                        "apiVersion": c.manager.api_version,
                    },
                });
                let shown = |v: &Option<Value>| v.as_ref().map_or(Value::Null, |v| shown_value(report.secret, c, v));
                out["live"] = shown(&c.theirs);
                out["applied"] = shown(&c.yours);
                out
            })
            .collect()
    };
    let p = &report.prediction;
    let mut out = json!({
        "fieldManager": report.field_manager,
        "exists": report.exists,
        "rejected": p.rejected,
        "conflicts": list(&p.conflicts),
        "upgraded": list(&p.upgraded),
        "shared": p.shared.len(),
    });
    if let Some(v) = &report.verification {
        let causes: Vec<Value> = v.causes.iter().map(|(f, m)| json!({"field": f, "message": m})).collect();
        out["verification"] = json!({"status": v.status, "causes": causes, "matches": v.matches});
    }
    out
}
