//! The independent check of a plan by `kubectl owners plan`: the test's own dry runs of the
//! same server-side apply, compared field by field with what the plan says. Shared by the
//! generated corpus and the real-world corpus (`tests/owners_plan/`).

use fieldwise_core::ownership::managed_fields_of;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::{self, FieldValidation, PatchRequest, PatchType};
use serde_json::Value;

/// The independent check of one object's plan (`report`, one entry of `owners plan -o json`'s
/// `objects`): server-side applies of `config` to `target` as `applier`, dry runs without and
/// with force, compared with the plan's conflicts, removed and surviving fields. Returns one
/// line per disagreement, each starting with `label`; empty when the plan agrees.
pub async fn check_plan(
    conn: &Connection,
    label: &str,
    target: &ObjectRef,
    config: &Value,
    applier: &str,
    report: &Value,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut planned: Vec<(String, String)> = report["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["field"].as_str().unwrap().to_string(), c["manager"].as_str().unwrap().to_string()))
        .collect();
    planned.sort();
    let dry = |force: bool| async move {
        let req = PatchRequest {
            patch_type: PatchType::Apply,
            body: config,
            field_manager: applier,
            dry_run: true,
            force,
            subresource: None,
            validation: FieldValidation::Strict,
        };
        write::patch(conn, target, &req).await
    };
    let accepted = match dry(false).await {
        Ok(object) => {
            if !planned.is_empty() {
                problems.push(format!("{label}: the plan has conflicts {planned:?}; the server accepted"));
            }
            object
        }
        Err(e) if e.is_conflict() => {
            let mut causes: Vec<(String, String)> = e
                .causes()
                .iter()
                .map(|c| {
                    let manager = c.message.trim_start_matches("conflict with \"");
                    (c.field.clone(), manager[..manager.find('"').unwrap_or(manager.len())].to_string())
                })
                .collect();
            causes.sort();
            if causes != planned {
                problems.push(format!("{label}: the server's conflicts {causes:?}, the plan's {planned:?}"));
            }
            match dry(true).await {
                Ok(object) => object,
                // Forcing can leave an object the schema refuses (a map whose every key was
                // pruned becomes null): the conflicts were compared, nothing more to check.
                Err(e) if e.server_code() == Some(422) => return problems,
                Err(e) => return vec![format!("{label}: the forced dry run failed: {e}")],
            }
        }
        Err(e) => return vec![format!("{label}: the dry run was refused: {e} (the corpus makes valid objects)")],
    };
    let managers = managed_fields_of(&accepted).expect("the server's managedFields");
    let owners_of = |field: &str| -> Vec<String> {
        managers
            .iter()
            .filter(|m| {
                m.fields.paths().iter().any(|p| {
                    p.to_string() == field
                        || p.to_string().starts_with(&format!("{field}."))
                        || p.to_string().starts_with(&format!("{field}["))
                })
            })
            .map(|m| m.manager.clone())
            .collect()
    };
    for removed in report["removed"].as_array().unwrap() {
        let field = removed["field"].as_str().unwrap();
        let owners = owners_of(field);
        if !owners.is_empty() {
            problems.push(format!("{label}: {field} is planned as removed; the server has it owned by {owners:?}"));
        }
    }
    for survivor in report["survives"].as_array().unwrap() {
        let field = survivor["field"].as_str().unwrap();
        let owners = owners_of(field);
        for o in survivor["owners"].as_array().into_iter().flatten() {
            let name = o["manager"].as_str().unwrap();
            if !owners.iter().any(|x| x == name) {
                problems.push(format!(
                    "{label}: {field} is planned to survive with {name}; the server's owners: {owners:?}"
                ));
            }
        }
        if owners.iter().any(|x| x == applier) {
            problems.push(format!("{label}: {field} is planned as released; {} still owns it on the server", applier));
        }
    }
    problems
}

/// The exit `owners plan` must end with on these objects of its `-o json` report under the default
/// `--fail-on` (conflicts, refusals): 3 when one has a conflict or was refused, else 0.
pub fn expected_plan_exit(objects: &[Value]) -> i32 {
    let failing =
        objects.iter().any(|o| o["conflicts"].as_array().is_some_and(|c| !c.is_empty()) || !o["refused"].is_null());
    if failing {
        3
    } else {
        0
    }
}
