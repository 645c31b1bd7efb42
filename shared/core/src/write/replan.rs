//! What to do after a write lost a race: the decision the write path makes
//! when the object moved between the preview and the write, pure.
//!
//! The preview showed one change, planned against one version of the object;
//! the user approved it ([`Approved`]: its [`Effect`] and its [`Placements`]).
//! The write was refused because the object moved, and the command planned the
//! same patch again against the fresh object. [`decide`] compares the two:
//! - [`Replan::Proceed`]: the new plan makes the approved change (the same
//!   fields from the same values to the same values, entries in the same place
//!   among the entries the preview showed), so it is sent without asking again;
//! - [`Replan::AlreadyDone`]: the new plan changes nothing and the object
//!   already is what the approved change makes it (somebody made the same
//!   change): the write is a success that writes nothing;
//! - [`Replan::Conflict`]: the preview no longer holds; nothing is written and
//!   the [`Conflict`] names the field.
//!
//! A change that follows a rule rather than values ([`Intent::Rule`]: rebuild an
//! annotation from the live fields) is whatever the rule makes of the fresh
//! object, so any re-plan proceeds, and one that changes nothing is done.
//!
//! ```
//! use fieldwise_core::write::replan::{decide, Approved, Intent, Replan};
//! use fieldwise_core::schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::new();
//! let live = json!({"spec": {"replicas": 1}, "metadata": {"labels": {"a": "1"}}});
//! let approved = Approved::new(Intent::Values, &live, &json!({"spec": {"replicas": 2}, "metadata": {"labels": {"a": "1"}}}), &schema, None);
//! // Another writer added a label: the re-plan makes the same change.
//! let fresh = json!({"spec": {"replicas": 1}, "metadata": {"labels": {"a": "1", "b": "2"}}});
//! let replanned = json!({"spec": {"replicas": 2}, "metadata": {"labels": {"a": "1", "b": "2"}}});
//! assert_eq!(decide(&approved, &fresh, &replanned, &schema, None), Replan::Proceed);
//! // Another writer set replicas to 5: setting 2 now overwrites their decision.
//! let fresh = json!({"spec": {"replicas": 5}, "metadata": {"labels": {"a": "1"}}});
//! let replanned = json!({"spec": {"replicas": 2}, "metadata": {"labels": {"a": "1"}}});
//! let Replan::Conflict(conflict) = decide(&approved, &fresh, &replanned, &schema, None) else { panic!() };
//! assert_eq!(conflict.to_string(), "the patch would now do something else at .spec.replicas");
//! ```

use std::fmt;

use serde_json::Value;

use crate::change::effect::Effect;
use crate::change::placement::{Misplaced, Placements};
use crate::fieldpath::Path;
use crate::schema::{Schema, TypeId};

/// What the user approved, and so which re-plans may be sent without asking again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// The values the preview showed (a patch): a re-plan is sent only when it makes the
    /// approved change.
    Values,
    /// A rule that derives the change from the object each time (rebuild the annotation
    /// from the live fields, move client-side managers to Apply): any re-plan follows the
    /// approved rule, so it is sent; one that changes nothing ends the write as done.
    Rule,
}

/// The change a user approved: what it does to each field, and where it puts list entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    intent: Intent,
    effect: Effect,
    placements: Placements,
    /// The `metadata.uid` of the object previewed: the change was approved for that object,
    /// not for another one created under the same name after it was deleted.
    uid: Option<String>,
}

impl Approved {
    /// The change from `live` to `result` (the previewed plan), both of type `ty` in `schema`.
    pub fn new(intent: Intent, live: &Value, result: &Value, schema: &Schema, ty: Option<TypeId>) -> Approved {
        Approved {
            intent,
            effect: Effect::between(live, result, schema, ty),
            placements: Placements::between(live, result, schema, ty),
            uid: uid_of(live).map(String::from),
        }
    }

    /// What the user approved.
    pub fn intent(&self) -> Intent {
        self.intent
    }

    /// The fields the change touches, with their values before and after.
    pub fn effect(&self) -> &Effect {
        &self.effect
    }

    /// Where the change puts entries of keyed lists.
    pub fn placements(&self) -> &Placements {
        &self.placements
    }

    /// The conflict when `object` is not the object the change was approved for: it was
    /// deleted and created again under the same name (another uid). Checked before anything
    /// is planned against it.
    pub fn recreated_as(&self, object: &Value) -> Option<Conflict> {
        let previewed = self.uid.as_deref()?;
        let now = uid_of(object);
        (now != Some(previewed))
            .then(|| Conflict::Recreated { previewed: previewed.to_string(), now: now.map(String::from) })
    }

    /// Whether the change changes nothing: no field, and no entry's place.
    pub fn is_no_change(&self) -> bool {
        self.effect.is_empty() && self.placements.is_empty()
    }

    /// Whether `object` already is what the change makes it, field by field and entry by
    /// entry: after a write whose answer was lost, whether it landed; after a re-plan that
    /// changes nothing, whether somebody else made the same change.
    pub fn holds_in(&self, object: &Value, schema: &Schema) -> bool {
        self.recreated_as(object).is_none()
            && self.effect.holds_in(object)
            && self.placements.hold_in(object, schema).is_ok()
    }
}

/// What the write path does with a re-planned change.
#[derive(Debug, Clone, PartialEq)]
pub enum Replan {
    /// Send the new plan: it makes the approved change.
    Proceed,
    /// Write nothing and succeed: the object already is what the approved change makes it.
    AlreadyDone,
    /// Write nothing and stop (exit 3): the preview no longer holds.
    Conflict(Conflict),
}

/// Why a preview no longer holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Conflict {
    /// The patch would now change nothing, yet the object does not hold what the preview
    /// showed at this field (somebody else changed it otherwise).
    NothingLeft {
        /// The first field that is not what the preview made it (`None`: an entry's place).
        field: Option<Path>,
    },
    /// The patch would now change something else: this field is the first where the new
    /// change and the approved one part (another starting value, or a field only one touches).
    Differs {
        /// The field.
        field: Path,
    },
    /// The patch would now put a list entry on the other side of a neighbour the preview showed.
    Misplaced(Box<Misplaced>),
    /// The object was deleted and created again under the same name: it is not the object
    /// the preview showed, whatever its fields hold.
    Recreated {
        /// The uid of the object previewed.
        previewed: String,
        /// The uid of the object there now (`None`: it has none).
        now: Option<String>,
    },
    /// The patch cannot be planned against the fresh object any more.
    NoLongerApplies {
        /// The planner's error, one line.
        reason: String,
    },
}

impl fmt::Display for Conflict {
    /// The reason in a few words, to follow "changed since the preview, and".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::NothingLeft { field: Some(field) } => {
                write!(f, "the patch would now change nothing else, but {field} is not what the preview made it")
            }
            Conflict::NothingLeft { field: None } => {
                write!(
                    f,
                    "the patch would now change nothing else, but the list entries are not where the preview put them"
                )
            }
            Conflict::Differs { field } => write!(f, "the patch would now do something else at {field}"),
            Conflict::Misplaced(m) => write!(f, "the patch would now place a list entry elsewhere: {m}"),
            Conflict::Recreated { previewed, now } => write!(
                f,
                "it was deleted and created again since the preview (uid {previewed}, now {})",
                now.as_deref().unwrap_or("none")
            ),
            Conflict::NoLongerApplies { reason } => write!(f, "the patch no longer applies ({reason})"),
        }
    }
}

/// Decides what to do with `replanned`, the result of the same patch planned against
/// `fresh`, the object as read after the write was refused (see the module docs).
pub fn decide(approved: &Approved, fresh: &Value, replanned: &Value, schema: &Schema, ty: Option<TypeId>) -> Replan {
    if let Some(recreated) = approved.recreated_as(fresh) {
        return Replan::Conflict(recreated);
    }
    let now = Approved::new(approved.intent, fresh, replanned, schema, ty);
    if now.is_no_change() {
        if approved.intent == Intent::Rule || approved.holds_in(fresh, schema) {
            return Replan::AlreadyDone;
        }
        let field = approved.effect.first_not_holding_in(fresh).cloned();
        return Replan::Conflict(Conflict::NothingLeft { field });
    }
    if approved.intent == Intent::Rule {
        return Replan::Proceed;
    }
    if let Some(field) = approved.effect.first_difference(&now.effect) {
        return Replan::Conflict(Conflict::Differs { field: field.clone() });
    }
    match approved.placements.hold_in(replanned, schema) {
        Ok(()) => Replan::Proceed,
        Err(misplaced) => Replan::Conflict(Conflict::Misplaced(misplaced)),
    }
}

/// An object's `metadata.uid`, if it has one.
pub fn uid_of(object: &Value) -> Option<&str> {
    object.pointer("/metadata/uid").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_patch;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn schema_and_type() -> (&'static Schema, Option<TypeId>) {
        let schema = builtin();
        (schema, schema.root(&Gvk::new("apps", "v1", "Deployment")))
    }

    fn deployment(replicas: i64, init: &[&str], env: &[(&str, &str)]) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "resourceVersion": "1"},
               "spec": {"replicas": replicas, "template": {"spec": {
                   "initContainers": init.iter().map(|n| json!({"name": n, "image": "busybox"})).collect::<Vec<_>>(),
                   "containers": [{"name": "app", "image": "app:1",
                       "env": env.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>()}]}}}})
    }

    fn approve(intent: Intent, live: &Value, result: &Value) -> Approved {
        let (schema, ty) = schema_and_type();
        Approved::new(intent, live, result, schema, ty)
    }

    fn replan(approved: &Approved, fresh: &Value, replanned: &Value) -> Replan {
        let (schema, ty) = schema_and_type();
        decide(approved, fresh, replanned, schema, ty)
    }

    /// The user's JSON Patch, planned (applied) against `live`.
    fn json_patch_result(live: &Value, ops: Value) -> Value {
        json_patch::apply(live, &ops).expect("the patch applies")
    }

    #[test]
    fn an_index_insert_into_a_keyed_list_stops_when_another_insert_moves_it() {
        // Issue #22.1: `add .../initContainers/1` previewed after migrate-db.
        let ops = json!([{"op": "add", "path": "/spec/template/spec/initContainers/1",
                          "value": {"name": "backup-db", "image": "busybox"}}]);
        let live = deployment(1, &["migrate-db", "warm-cache"], &[]);
        let approved = approve(Intent::Values, &live, &json_patch_result(&live, ops.clone()));
        // Another writer inserted hook-init at 0: re-planned, backup-db would land before migrate-db.
        let fresh = deployment(1, &["hook-init", "migrate-db", "warm-cache"], &[]);
        let Replan::Conflict(Conflict::Misplaced(m)) =
            replan(&approved, &fresh, &json_patch_result(&fresh, ops.clone()))
        else {
            panic!("expected a misplaced entry")
        };
        assert_eq!(m.list.to_string(), ".spec.template.spec.initContainers");
        assert_eq!(
            Conflict::Misplaced(m).to_string(),
            "the patch would now place a list entry elsewhere: .spec.template.spec.initContainers: [name=\"backup-db\"] would now come before [name=\"migrate-db\"]; the preview put it after"
        );
        // Another writer appended: backup-db still lands between migrate-db and warm-cache.
        let fresh = deployment(1, &["migrate-db", "warm-cache", "late"], &[]);
        assert_eq!(replan(&approved, &fresh, &json_patch_result(&fresh, ops)), Replan::Proceed);
    }

    #[test]
    fn env_lists_are_placed_like_init_containers() {
        let ops = json!([{"op": "add", "path": "/spec/template/spec/containers/0/env/1", "value": {"name": "B", "value": "b"}}]);
        let live = deployment(1, &[], &[("A", "a"), ("C", "$(B)")]);
        let approved = approve(Intent::Values, &live, &json_patch_result(&live, ops.clone()));
        let fresh = deployment(1, &[], &[("Z", "z"), ("A", "a"), ("C", "$(B)")]);
        assert!(matches!(
            replan(&approved, &fresh, &json_patch_result(&fresh, ops)),
            Replan::Conflict(Conflict::Misplaced(m)) if m.entry.to_string() == "[name=\"B\"]"
        ));
    }

    #[test]
    fn the_same_change_proceeds_and_another_change_names_the_field() {
        let live = deployment(1, &["m"], &[]);
        let approved = approve(Intent::Values, &live, &deployment(2, &["m"], &[]));
        // Disjoint concurrent change (an env entry added): the same effect.
        let fresh = deployment(1, &["m"], &[("X", "1")]);
        assert_eq!(replan(&approved, &fresh, &deployment(2, &["m"], &[("X", "1")])), Replan::Proceed);
        // Overlapping: replicas moved to 5.
        let fresh = deployment(5, &["m"], &[]);
        assert_eq!(
            replan(&approved, &fresh, &deployment(2, &["m"], &[])),
            Replan::Conflict(Conflict::Differs { field: Path::fields(["spec", "replicas"]) })
        );
        // A rule follows the object: any re-plan proceeds.
        let rule = approve(Intent::Rule, &live, &deployment(2, &["m"], &[]));
        assert_eq!(replan(&rule, &fresh, &deployment(2, &["m"], &[])), Replan::Proceed);
    }

    #[test]
    fn a_re_plan_that_changes_nothing_is_done_only_when_the_approved_change_is_there() {
        let live = deployment(1, &["m", "w"], &[]);
        let approved = approve(Intent::Values, &live, &deployment(2, &["m", "b", "w"], &[]));
        let done = deployment(2, &["m", "b", "w"], &[]);
        assert_eq!(replan(&approved, &done, &done), Replan::AlreadyDone);
        // Somebody else set replicas to 3: the patch (replicas 2) would change it, another starting value.
        let other = deployment(3, &["m", "b", "w"], &[]);
        assert!(matches!(
            replan(&approved, &other, &deployment(2, &["m", "b", "w"], &[])),
            Replan::Conflict(Conflict::Differs { .. })
        ));
        // A merge patch with the same values would change nothing, but b sits elsewhere than previewed.
        let elsewhere = deployment(2, &["b", "m", "w"], &[]);
        assert_eq!(replan(&approved, &elsewhere, &elsewhere), Replan::Conflict(Conflict::NothingLeft { field: None }));
        // A re-plan that changes nothing while the approved value is not there: the field is named.
        let rule_free = approve(Intent::Values, &deployment(1, &["m"], &[]), &deployment(2, &["m"], &[]));
        let moved = deployment(3, &["m"], &[]);
        let Replan::Conflict(conflict) = replan(&rule_free, &moved, &moved) else { panic!("expected a conflict") };
        assert_eq!(
            conflict.to_string(),
            "the patch would now change nothing else, but .spec.replicas is not what the preview made it"
        );
        // A rule that now changes nothing is done.
        let rule = approve(Intent::Rule, &deployment(1, &["m"], &[]), &deployment(2, &["m"], &[]));
        assert_eq!(replan(&rule, &moved, &moved), Replan::AlreadyDone);
    }

    #[test]
    fn an_object_deleted_and_created_again_is_not_the_one_approved() {
        // Issue #28.2: the same name, the same fields, a new uid.
        let with_uid = |uid: &str, replicas: i64| {
            let mut d = deployment(replicas, &["m"], &[]);
            d["metadata"]["uid"] = json!(uid);
            d
        };
        let approved = approve(Intent::Values, &with_uid("u1", 1), &with_uid("u1", 2));
        let conflict = Conflict::Recreated { previewed: "u1".into(), now: Some("u2".into()) };
        assert_eq!(replan(&approved, &with_uid("u2", 1), &with_uid("u2", 2)), Replan::Conflict(conflict.clone()));
        // Even when the new object already holds the approved values: it is not the object written.
        assert_eq!(replan(&approved, &with_uid("u2", 2), &with_uid("u2", 2)), Replan::Conflict(conflict.clone()));
        assert!(!approved.holds_in(&with_uid("u2", 2), builtin()));
        assert!(approved.holds_in(&with_uid("u1", 2), builtin()));
        assert_eq!(conflict.to_string(), "it was deleted and created again since the preview (uid u1, now u2)");
        // A rule is approved for one object too.
        let rule = approve(Intent::Rule, &with_uid("u1", 1), &with_uid("u1", 2));
        assert!(matches!(
            replan(&rule, &with_uid("u2", 1), &with_uid("u2", 2)),
            Replan::Conflict(Conflict::Recreated { .. })
        ));
        // The same object moved: decided as before.
        assert_eq!(replan(&approved, &with_uid("u1", 1), &with_uid("u1", 2)), Replan::Proceed);
    }

    #[test]
    fn a_reorder_alone_is_a_change() {
        let approved = approve(Intent::Values, &deployment(1, &["a", "b"], &[]), &deployment(1, &["b", "a"], &[]));
        assert!(approved.effect().is_empty() && !approved.is_no_change());
        assert!(approved.holds_in(&deployment(1, &["b", "a"], &[]), builtin()));
        assert!(!approved.holds_in(&deployment(1, &["a", "b"], &[]), builtin()));
    }
}
