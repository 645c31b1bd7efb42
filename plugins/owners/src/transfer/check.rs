//! The `--to` manager's next apply of its configuration (`-f`): predicted on the object as
//! the transfer leaves it ([`predict`], the core's [`predict_next_apply`]), its removals
//! sorted by a server dry run of the object it would leave (which fields the server defaults
//! again), and once the transfer is written, checked by a server dry run of that very apply
//! ([`verify`]): which fields the server really removes, or which conflicts it answers with.

use fieldwise_core::fieldpath::Set;
use fieldwise_core::ownership::{managed_fields_of, predict_next_apply, NextApply, ServerAnswer};
use fieldwise_kube::api::openapi::{Schemas, TypeSchema};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::{self, ApplyDryRun};
use fieldwise_kube::{Error, Result};
use serde_json::{json, Value};

use super::field_list::{fields_json, fields_text};

/// The `--to` manager's next apply, predicted, with the schema it was predicted under and,
/// when the server could not say which removed fields it defaults again, why not.
#[derive(Debug, Clone)]
pub struct Predicted {
    /// The prediction, its removals sorted by the server's defaults ([`NextApply::settle`]).
    pub next: NextApply,
    /// The type's schema, as the server publishes it.
    pub typed: TypeSchema,
    /// Why the server's defaults are unknown (the removals are then as predicted).
    pub unsettled: Option<String>,
}

/// The prediction of the next apply of `config` by `manager` to `after` (the object as
/// the transfer leaves it), under the type's schema as the server publishes it; the fields
/// it removes are then sorted by a server dry run of the object it would leave (a merge
/// patch from `after`), which applies the server's defaults.
pub async fn predict(
    conn: &Connection,
    schemas: &mut Schemas,
    target: &ObjectRef,
    after: &Value,
    config: &Value,
    manager: &str,
) -> Result<Predicted> {
    let display = target.display();
    let typed = schemas.for_object(after).await?;
    let ty = typed.root.ok_or_else(|| Error::Unsupported {
        what: format!(
            "{display}: cannot predict the next apply: {} does not describe the type (a custom resource without a schema?)",
            typed.origin.describe()
        ),
    })?;
    let entries = managed_fields_of(after).map_err(|e| Error::semantics(display.clone(), e))?;
    let mut next = predict_next_apply(after, &entries, config, manager, &typed.schema, ty);
    let mut unsettled = None;
    if !next.removes.is_empty() {
        let left = next.object_after(after, config, &typed.schema, ty);
        match write::dry_run_left(conn, target, after, &left, super::WRITER).await {
            Ok(server) => next.settle(after, &server),
            Err(why) => unsettled = Some(why),
        }
    }
    Ok(Predicted { next, typed, unsettled })
}

/// What the server's dry run of the next apply answered.
#[derive(Debug, Clone)]
pub enum Checked {
    /// It would succeed; the fields it removes, and how they differ from the prediction.
    Applied {
        /// Leaves the dry run's result lacks.
        removed: Set,
        /// Predicted removals the server keeps (fields it defaults again, most often).
        kept_back: Set,
        /// Removals that were not predicted.
        unpredicted: Set,
    },
    /// It would be refused with 409 Conflict: `(field, message)` causes, and whether they are the predicted ones.
    Conflicts {
        /// The server's causes, sorted.
        causes: Vec<(String, String)>,
        /// Whether they equal the prediction's.
        as_predicted: bool,
    },
    /// The dry run could not be made (the transfer itself is written).
    Skipped(String),
}

/// A server-side apply of `config` by `manager` to `target` with `dryRun=All`, compared with
/// `next`, the prediction; `written` is the object as the transfer left it.
pub async fn verify(
    conn: &Connection,
    target: &ObjectRef,
    written: &Value,
    config: &Value,
    manager: &str,
    predicted: &Predicted,
) -> Checked {
    let (prediction, typed) = (&predicted.next, &predicted.typed);
    let request = ApplyDryRun { config, field_manager: manager };
    let answer = match request.send(conn, target, false, None).await {
        Ok(Some(answer)) => answer,
        // Unguarded: never "moved".
        Ok(None) => return Checked::Skipped(format!("{} changed while it was checked", target.display())),
        Err(e) => return Checked::Skipped(e.to_string().trim_start_matches("error: ").to_string()),
    };
    match &answer.answer {
        ServerAnswer::Accepted(result) => {
            let removed = NextApply::removed_by(written, result, &typed.schema, typed.root);
            let kept_back = prediction.removes.difference(&removed);
            let unpredicted = removed.difference(&prediction.removes);
            Checked::Applied { removed, kept_back, unpredicted }
        }
        ServerAnswer::Conflict(_) => {
            let causes = answer.sorted_causes();
            let mut predicted: Vec<(String, String)> =
                prediction.conflicts.iter().map(|c| (c.field(), c.message())).collect();
            predicted.sort();
            Checked::Conflicts { as_predicted: causes == predicted, causes }
        }
        ServerAnswer::Refused { .. } => Checked::Skipped(answer.refusal().map(|e| e.to_string()).unwrap_or_default()),
    }
}

/// The check for people, on stderr after the result line.
pub fn render(display: &str, manager: &str, checked: &Checked) -> String {
    let who = format!("{display}: a server dry run of {manager}'s next apply");
    match checked {
        Checked::Applied { removed, kept_back, unpredicted } => {
            let mut out = if removed.is_empty() {
                format!("{who} removes no field")
            } else {
                format!("{who} removes {}", fields_text(removed))
            };
            if kept_back.is_empty() && unpredicted.is_empty() {
                out.push_str(", as predicted\n");
                return out;
            }
            out.push('\n');
            if !kept_back.is_empty() {
                out.push_str(&format!("  the server keeps (it defaults them again): {}\n", fields_text(kept_back)));
            }
            if !unpredicted.is_empty() {
                out.push_str(&format!("  not predicted: {}\n", fields_text(unpredicted)));
            }
            out
        }
        Checked::Conflicts { causes, as_predicted } => {
            let mut out = format!(
                "{who} is refused with {} conflict{}{}:\n",
                causes.len(),
                if causes.len() == 1 { "" } else { "s" },
                if *as_predicted { ", as predicted" } else { " (not as predicted)" }
            );
            for (field, message) in causes {
                out.push_str(&format!("  {field}: {message}\n"));
            }
            out
        }
        Checked::Skipped(why) => format!("warning: {display}: the next apply was not checked: {why}\n"),
    }
}

/// The check in the JSON document.
pub fn json(checked: &Checked) -> Value {
    match checked {
        Checked::Applied { removed, kept_back, unpredicted } => json!({
            "status": 200,
            "removes": fields_json(removed),
            "keptByServer": fields_json(kept_back),
            "unpredicted": fields_json(unpredicted),
            "asPredicted": kept_back.is_empty() && unpredicted.is_empty(),
        }),
        Checked::Conflicts { causes, as_predicted } => json!({
            "status": 409,
            "conflicts": causes.iter().map(|(f, m)| json!({"field": f, "message": m})).collect::<Vec<_>>(),
            "asPredicted": as_predicted,
        }),
        Checked::Skipped(why) => json!({"status": null, "error": why}),
    }
}
