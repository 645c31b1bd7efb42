//! Checking a simulated apply against what the apiserver answered to the same apply
//! sent as a dry run, field for field.
//!
//! - A 409 must carry exactly the predicted causes (field and manager).
//! - An accepted apply must record exactly the predicted managers, each owning exactly
//!   the predicted fields, and keep the fields predicted to survive.
//! - The fields that really leave the object in the server's result must be the ones
//!   predicted removed ([`verify_removals`], after the plan read the result for the fields
//!   the server sets again: [`super::apply_plan::ApplyPlan::settle`]).
//! - A refusal for another reason (schema, admission, a missing namespace) comes before
//!   ownership is decided: the prediction is then not checked, unless it predicted the
//!   refusal itself (a configuration that does not fit the schema).
//!
//! Every difference is returned as one sentence, never smoothed over.

use serde_json::Value;

use super::manager_fields::{live_managers, ManagerFields};
use super::managers::managed_fields_of;
use super::server_owned::without_write_noise;
use super::simulate::{ApplyOutcome, Fate};
use crate::fieldpath::{compare, value_at, Path, Set};
use crate::schema::{Schema, TypeId};

/// What the apiserver answered to a dry-run apply.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerAnswer {
    /// 200 or 201, with the object it would store.
    Accepted(Value),
    /// 409 Conflict, with its causes as `(field, message)`.
    Conflict(Vec<(String, String)>),
    /// Any other refusal: the HTTP status and the server's message.
    Refused {
        /// The HTTP status.
        code: u16,
        /// The server's message.
        message: String,
    },
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verification {
    /// Whether the answer could be compared with the prediction at all.
    pub checked: bool,
    /// Each difference, in one sentence; empty when the prediction holds.
    pub disagreements: Vec<String>,
}

impl Verification {
    /// Checked, and no difference.
    pub fn agrees(&self) -> bool {
        self.checked && self.disagreements.is_empty()
    }

    fn unchecked() -> Self {
        Verification { checked: false, disagreements: Vec::new() }
    }

    fn of(disagreements: Vec<String>) -> Self {
        Verification { checked: true, disagreements }
    }
}

/// How many paths a disagreement names before it says "and N more".
const SHOWN_PATHS: usize = 4;

/// Checks the apply without force: the answer to `dryRun=All&force=false`.
pub fn verify_unforced(outcome: &ApplyOutcome, answer: &ServerAnswer) -> Verification {
    let mut expected: Vec<(String, String)> = outcome.conflicts.iter().map(|c| (c.field(), c.message())).collect();
    expected.sort();
    match answer {
        ServerAnswer::Conflict(causes) => {
            let mut causes = causes.clone();
            causes.sort();
            if causes == expected {
                return Verification::of(Vec::new());
            }
            let mut out = vec![format!(
                "the server refused the apply with {} conflict(s), {} were predicted",
                causes.len(),
                expected.len()
            )];
            out.extend(
                causes.iter().filter(|c| !expected.contains(c)).map(|(f, m)| format!("not predicted: {f}: {m}")),
            );
            out.extend(
                expected.iter().filter(|c| !causes.contains(c)).map(|(f, m)| format!("not on the server: {f}: {m}")),
            );
            Verification::of(out)
        }
        ServerAnswer::Accepted(object) if !expected.is_empty() => Verification::of(vec![format!(
            "the server accepted the apply; {} conflict(s) were predicted ({})",
            expected.len(),
            expected.iter().map(|(f, _)| f.as_str()).collect::<Vec<_>>().join(", ")
        )])
        .and(compare_object(outcome, object)),
        ServerAnswer::Accepted(object) => Verification::of(compare_object(outcome, object)),
        ServerAnswer::Refused { .. } => refused(outcome),
    }
}

/// Checks the conflicts of an apply planned on the object as a conversion leaves it
/// (Helm 4's first server-side upgrade: [`super::csa_upgrade::helm_conversion`] moves
/// `converted`'s client-side `Update` entries into its `Apply` entry) against the server's
/// dry run of the same apply on the object before it, since a dry run cannot see a
/// conversion that is not stored. The server's causes naming `converted`'s main-resource
/// `Update` entry (`conflict with "helm" using apps/v1`) are the ones the conversion ends;
/// every other cause must be a predicted conflict, and every predicted conflict a cause.
/// The object the server answers with holds no conversion: it is not compared.
pub fn verify_after_conversion(outcome: &ApplyOutcome, answer: &ServerAnswer, converted: &str) -> Verification {
    match answer {
        ServerAnswer::Conflict(causes) => {
            verify_unforced(outcome, &ServerAnswer::Conflict(causes_after_conversion(causes, converted)))
        }
        ServerAnswer::Accepted(_) if !outcome.conflicts.is_empty() => {
            verify_unforced(outcome, &ServerAnswer::Conflict(Vec::new()))
        }
        ServerAnswer::Accepted(_) => Verification::of(Vec::new()),
        ServerAnswer::Refused { .. } => refused(outcome),
    }
}

/// The server's causes of a dry run on the object before `converted`'s conversion, less the
/// ones the conversion ends ([`verify_after_conversion`]): the conflicts the apply after it meets.
pub fn causes_after_conversion(causes: &[(String, String)], converted: &str) -> Vec<(String, String)> {
    let ended = format!("conflict with {} using ", crate::go_format::fmt::quote(converted));
    causes.iter().filter(|(_, m)| !m.starts_with(&ended)).cloned().collect()
}

/// Checks the forced apply: the answer to `dryRun=All&force=true`.
pub fn verify_forced(outcome: &ApplyOutcome, answer: &ServerAnswer) -> Verification {
    match answer {
        ServerAnswer::Accepted(object) => Verification::of(compare_object(outcome, object)),
        ServerAnswer::Conflict(causes) => {
            Verification::of(vec![format!("the server answered 409 to a forced apply ({} cause(s))", causes.len())])
        }
        ServerAnswer::Refused { .. } => refused(outcome),
    }
}

/// The fields that leave `live` in `server` (the accepted dry run's result) without being
/// predicted removed, one sentence naming them; none when every field that leaves is a
/// predicted removal (or under one). A predicted removal present in `server` is no
/// disagreement: it is removed when its value changes there, and defaulted when it does not.
pub fn verify_removals(
    outcome: &ApplyOutcome,
    live: &Value,
    server: &Value,
    schema: &Schema,
    ty: TypeId,
) -> Vec<String> {
    let (before, after) = (without_write_noise(live), without_write_noise(server));
    let left = compare(&before, &after, schema, Some(ty)).removed.leaves();
    let predicted =
        |path: &Path| outcome.released.iter().any(|r| r.fate == Fate::Removed && path.starts_with(r.path.elements()));
    let mut unpredicted = Set::new();
    for path in left.iter().filter(|p| !predicted(p)) {
        unpredicted.insert(path.elements());
    }
    if unpredicted.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "the server removes {} field(s) that were not predicted removed: {}",
        unpredicted.len(),
        listed(&unpredicted)
    )]
}

impl Verification {
    fn and(mut self, more: Vec<String>) -> Self {
        self.disagreements.extend(more);
        self
    }
}

fn refused(outcome: &ApplyOutcome) -> Verification {
    if outcome.errors.is_empty() {
        Verification::unchecked()
    } else {
        Verification::of(Vec::new())
    }
}

/// The differences between the predicted managers and survivors and the server's object.
fn compare_object(outcome: &ApplyOutcome, object: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let server = match managed_fields_of(object) {
        Ok(entries) => live_managers(&entries),
        Err(e) => return vec![format!("the server's managedFields cannot be read: {e}")],
    };
    for predicted in &outcome.managers {
        match server.iter().find(|s| s.manager == predicted.manager) {
            None => out.push(format!(
                "{} was predicted to own {} field(s); the server records no such manager",
                predicted.manager,
                predicted.fields.len()
            )),
            Some(actual) => out.extend(compare_manager(predicted, actual)),
        }
    }
    for actual in server.iter().filter(|s| !outcome.managers.iter().any(|p| p.manager == s.manager)) {
        out.push(format!(
            "the server records {} owning {} field(s); it was predicted to own none ({})",
            actual.manager,
            actual.fields.len(),
            listed(&actual.fields)
        ));
    }
    // A removed field is checked by ownership above (the server may set it again by default).
    for released in &outcome.released {
        let kept = value_at(object, released.path.elements()).is_some_and(|v| !v.is_null());
        if matches!(released.fate, Fate::Survives(_)) && !kept {
            out.push(format!("{} was predicted to survive; the server removes it", released.path));
        }
    }
    out
}

fn compare_manager(predicted: &ManagerFields, actual: &ManagerFields) -> Vec<String> {
    let mut out = Vec::new();
    if predicted.api_version != actual.api_version {
        out.push(format!(
            "{} records its fields in {}; {} was predicted",
            actual.manager, actual.api_version, predicted.api_version
        ));
    }
    if predicted.fields != actual.fields {
        let only_predicted = predicted.fields.difference(&actual.fields);
        let only_server = actual.fields.difference(&predicted.fields);
        let mut parts = Vec::new();
        if !only_predicted.is_empty() {
            parts.push(format!("predicted only: {}", listed(&only_predicted)));
        }
        if !only_server.is_empty() {
            parts.push(format!("on the server only: {}", listed(&only_server)));
        }
        out.push(format!("{} owns other fields than predicted ({})", actual.manager, parts.join("; ")));
    }
    out
}

fn listed(set: &Set) -> String {
    let paths = set.paths();
    let mut shown: Vec<String> = paths.iter().take(SHOWN_PATHS).map(|p| p.to_string()).collect();
    if paths.len() > SHOWN_PATHS {
        shown.push(format!("and {} more", paths.len() - SHOWN_PATHS));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::apply_conflict::Conflict;
    use crate::ownership::managers::{Manager, Operation};

    fn outcome_conflicting_with(managers: &[Manager]) -> ApplyOutcome {
        let conflicts = managers
            .iter()
            .map(|m| Conflict {
                path: Path::fields(["spec", "replicas"]),
                manager: m.clone(),
                theirs: Some(5.into()),
                yours: Some(2.into()),
            })
            .collect();
        ApplyOutcome { conflicts, ..ApplyOutcome::default() }
    }

    fn scale() -> Manager {
        Manager {
            name: "kubectl".into(),
            operation: Operation::Update,
            api_version: Some("apps/v1".into()),
            subresource: "scale".into(),
        }
    }

    #[test]
    fn after_helms_conversion_its_own_update_causes_are_ended_and_the_others_must_match() {
        let helm_update = "conflict with \"helm\" using apps/v1".to_string();
        let replicas = (".spec.replicas".to_string(), format!("conflict with {}", scale()));
        let causes = vec![(".spec.template".into(), helm_update.clone()), replicas.clone()];
        assert_eq!(
            causes_after_conversion(&causes, "helm"),
            vec![replicas.clone()],
            "helm's Update cause goes; kubectl's scale stays"
        );
        let agreed = verify_after_conversion(
            &outcome_conflicting_with(&[scale()]),
            &ServerAnswer::Conflict(causes.clone()),
            "helm",
        );
        assert_eq!(agreed, Verification::of(Vec::new()));
        // Helm's own Apply entry is never converted: a conflict with it is not ended.
        let apply = vec![(".spec.replicas".to_string(), "conflict with \"helm\"".to_string())];
        assert_eq!(causes_after_conversion(&apply, "helm"), apply);
        // Only helm's causes: after the conversion the apply goes through, and nothing was predicted.
        let only_helm = ServerAnswer::Conflict(vec![(".spec.template".into(), helm_update)]);
        assert_eq!(verify_after_conversion(&ApplyOutcome::default(), &only_helm, "helm"), Verification::of(Vec::new()));
        // A predicted conflict the server does not name is a disagreement, accepted or not.
        let missed = verify_after_conversion(&outcome_conflicting_with(&[scale()]), &only_helm, "helm");
        assert!(!missed.agrees());
        let accepted = verify_after_conversion(
            &outcome_conflicting_with(&[scale()]),
            &ServerAnswer::Accepted(serde_json::json!({})),
            "helm",
        );
        assert!(!accepted.agrees(), "{accepted:?}");
        // An object accepted without conflicts agrees: its managers hold no conversion to compare.
        let clean =
            verify_after_conversion(&ApplyOutcome::default(), &ServerAnswer::Accepted(serde_json::json!({})), "helm");
        assert_eq!(clean, Verification::of(Vec::new()));
    }
}
