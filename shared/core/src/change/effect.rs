//! What a change does to an object, field by field: the intent a user approves.
//!
//! A guarded write that loses the race against another writer must be planned
//! again against the fresh object. Whether the new plan may be sent without
//! asking the user again is a question about *intent*, not bytes: adding the
//! label `mine` to a `labels` map that another writer has just created is the
//! same change as adding it to a missing map, although the two patches and the
//! two results differ; setting `replicas` from 1 to 2 is not the same change as
//! setting it from 5 to 2, because the second overwrites somebody's decision.
//!
//! An [`Effect`] is the list of the deepest fields a change touches
//! ([`fieldpath::compare`](crate::fieldpath::compare), through the object's
//! schema so that list-map entries are told apart by key, then
//! [`Set::leaves`](crate::fieldpath::Set::leaves)), each with its value before
//! and after. Two plans have the same intent when their effects are equal. What
//! every write changes and nobody asks for (`metadata.resourceVersion`,
//! `metadata.generation`) is not part of an effect; `metadata.managedFields` is,
//! because a plan leaves it as it is unless changing it is the point (a migration
//! to server-side apply).
//!
//! ```
//! use fieldwise_core::change::effect::Effect;
//! use fieldwise_core::schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::new();
//! let approved = Effect::between(
//!     &json!({"metadata": {"name": "x"}}),
//!     &json!({"metadata": {"name": "x", "labels": {"mine": "y"}}}),
//!     &schema, None,
//! );
//! // Another writer created the map in between: re-planned, the change is the same.
//! let replanned = Effect::between(
//!     &json!({"metadata": {"name": "x", "labels": {"other": "x"}}}),
//!     &json!({"metadata": {"name": "x", "labels": {"other": "x", "mine": "y"}}}),
//!     &schema, None,
//! );
//! assert_eq!(approved, replanned);
//! assert!(approved.holds_in(&json!({"metadata": {"labels": {"mine": "y", "other": "x"}}})));
//! ```

use std::fmt;

use serde_json::Value;

use crate::fieldpath::{compare, value_at, Path, PathElement};
use crate::schema::{Schema, TypeId};

/// Metadata fields the server changes on every write; never part of an effect.
pub const SERVER_MANAGED_METADATA: [&str; 2] = ["resourceVersion", "generation"];

/// One field a change touches: where, and its value before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldEdit {
    /// The field.
    pub path: Path,
    /// Its value before the change.
    pub before: Option<Value>,
    /// Its value after the change.
    pub after: Option<Value>,
}

/// The fields a change touches, with their values before and after, in path order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effect {
    edits: Vec<FieldEdit>,
}

impl Effect {
    /// The effect of turning `before` into `after`, both of type `ty` in `schema`
    /// (`None`: untyped, so maps are compared key by key and lists whole).
    pub fn between(before: &Value, after: &Value, schema: &Schema, ty: Option<TypeId>) -> Effect {
        let comparison = compare(before, after, schema, ty);
        let touched = comparison.added.union(&comparison.modified).union(&comparison.removed).leaves();
        let mut edits: Vec<FieldEdit> = touched
            .iter()
            .filter(|path| !is_server_managed(path))
            .map(|path| FieldEdit {
                before: value_at(before, path.elements()).cloned(),
                after: value_at(after, path.elements()).cloned(),
                path,
            })
            .filter(|edit| edit.before != edit.after && !is_empty_metadata_map_toggle(edit))
            .collect();
        edits.sort_by_key(|edit| edit.path.to_string());
        Effect { edits }
    }

    /// Whether the change changes nothing.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// The fields, in path order.
    pub fn edits(&self) -> &[FieldEdit] {
        &self.edits
    }

    /// Whether `object` already has every value this change sets: after a write
    /// whose answer was lost, this tells whether it landed; after a re-plan that
    /// changes nothing, whether somebody else already made the same change.
    pub fn holds_in(&self, object: &Value) -> bool {
        self.first_not_holding_in(object).is_none()
    }

    /// The first field (in path order) whose value in `object` is not the one this change
    /// sets: what to name when a change that should be there is not.
    pub fn first_not_holding_in(&self, object: &Value) -> Option<&Path> {
        self.edits.iter().find(|edit| value_at(object, edit.path.elements()) != edit.after.as_ref()).map(|e| &e.path)
    }

    /// The first field (in path order) that one change touches and the other does not, or
    /// touches from or to another value: what to name when a re-planned change is not the
    /// approved one. `None` when the effects are equal.
    pub fn first_difference<'a>(&'a self, other: &'a Effect) -> Option<&'a Path> {
        let (mut mine, mut theirs) = (self.edits.iter().peekable(), other.edits.iter().peekable());
        loop {
            match (mine.peek(), theirs.peek()) {
                (None, None) => return None,
                (Some(m), None) => return Some(&m.path),
                (None, Some(t)) => return Some(&t.path),
                (Some(m), Some(t)) => {
                    let (ms, ts) = (m.path.to_string(), t.path.to_string());
                    if ms < ts {
                        return Some(&m.path);
                    }
                    if ts < ms {
                        return Some(&t.path);
                    }
                    if m != t {
                        return Some(&m.path);
                    }
                    mine.next();
                    theirs.next();
                }
            }
        }
    }
}

impl fmt::Display for Effect {
    /// One field per line: `.spec.replicas: 1 -> 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Option<Value>| v.as_ref().map_or_else(|| "(absent)".to_string(), Value::to_string);
        for edit in &self.edits {
            writeln!(f, "{}: {} -> {}", edit.path, shown(&edit.before), shown(&edit.after))?;
        }
        Ok(())
    }
}

/// The maps of `metadata` that the apiserver stores the same whether empty or absent (Go's
/// `omitempty` on ObjectMeta, which every kind's metadata is decoded into, custom resources'
/// too): removing a map's last label leaves `labels: {}` in a merge patch's result and no
/// `labels` on the server.
const METADATA_MAPS_EMPTY_IS_ABSENT: [&str; 2] = ["labels", "annotations"];

/// Whether `edit` only creates or drops an empty `metadata.labels`/`annotations` map: no
/// key changes, and the server cannot tell the two apart, so it is not part of an intent.
fn is_empty_metadata_map_toggle(edit: &FieldEdit) -> bool {
    let is_metadata_map = matches!(edit.path.elements(), [PathElement::Field(m), PathElement::Field(f)]
        if m == "metadata" && METADATA_MAPS_EMPTY_IS_ABSENT.contains(&f.as_str()));
    let empty_or_absent = |v: &Option<Value>| v.as_ref().is_none_or(|v| v.as_object().is_some_and(|m| m.is_empty()));
    is_metadata_map && empty_or_absent(&edit.before) && empty_or_absent(&edit.after)
}

fn is_server_managed(path: &Path) -> bool {
    matches!(path.elements(), [PathElement::Field(m), PathElement::Field(f), ..]
        if m == "metadata" && SERVER_MANAGED_METADATA.contains(&f.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    fn deployment(replicas: i64, image: &str, env: Option<Value>) -> Value {
        let mut container = json!({"name": "app", "image": image});
        if let Some(env) = env {
            container["env"] = env;
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "resourceVersion": "1", "generation": 1},
               "spec": {"replicas": replicas, "template": {"spec": {"containers": [container, {"name": "side", "image": "s:1"}]}}}})
    }

    fn effect(before: &Value, after: &Value) -> Effect {
        let schema = builtin();
        Effect::between(before, after, schema, schema.root(&Gvk::new("apps", "v1", "Deployment")))
    }

    #[test]
    fn the_same_change_on_a_moved_object_has_the_same_effect() {
        let approved = effect(&deployment(1, "a:1", None), &deployment(2, "a:1", None));
        // Somebody added env to the container meanwhile: a keyed list entry's other field.
        let env = Some(json!([{"name": "X", "value": "1"}]));
        let mut fresh = deployment(1, "a:1", env.clone());
        fresh["metadata"]["resourceVersion"] = json!("9");
        let replanned = effect(&fresh, &deployment(2, "a:1", env));
        assert_eq!(approved, replanned);
        assert_eq!(approved.to_string(), ".spec.replicas: 1 -> 2\n");
    }

    #[test]
    fn a_different_starting_value_is_a_different_change() {
        let approved = effect(&deployment(1, "a:1", None), &deployment(2, "a:1", None));
        let replanned = effect(&deployment(5, "a:1", None), &deployment(2, "a:1", None));
        assert_ne!(approved, replanned);
        let image = effect(&deployment(1, "a:1", None), &deployment(1, "a:2", None));
        assert_eq!(image.edits().len(), 1);
        assert_eq!(image.edits()[0].path.to_string(), ".spec.template.spec.containers[name=\"app\"].image");
    }

    #[test]
    fn server_managed_metadata_is_not_an_effect_and_no_change_is_empty() {
        let mut moved = deployment(1, "a:1", None);
        moved["metadata"]["resourceVersion"] = json!("2");
        moved["metadata"]["generation"] = json!(2);
        assert!(effect(&deployment(1, "a:1", None), &moved).is_empty());
        moved["metadata"]["managedFields"] = json!([{"manager": "m"}]);
        assert_eq!(effect(&deployment(1, "a:1", None), &moved).edits().len(), 1, "a migration's change is an effect");
    }

    #[test]
    fn holds_in_tells_whether_the_values_are_there() {
        let approved = effect(&deployment(1, "a:1", None), &deployment(2, "a:1", None));
        assert!(approved.holds_in(&deployment(2, "a:1", None)));
        assert!(!approved.holds_in(&deployment(3, "a:1", None)));
        let removal = Effect::between(
            &json!({"metadata": {"labels": {"a": "1", "b": "2"}}}),
            &json!({"metadata": {"labels": {"b": "2"}}}),
            &Schema::new(),
            None,
        );
        assert!(removal.holds_in(&json!({"metadata": {"labels": {"b": "2"}}})));
        assert!(removal.holds_in(&json!({"metadata": {}})));
        assert!(!removal.holds_in(&json!({"metadata": {"labels": {"a": "1"}}})));
        assert_eq!(
            approved.first_not_holding_in(&deployment(3, "a:1", None)).map(ToString::to_string).as_deref(),
            Some(".spec.replicas")
        );
    }

    #[test]
    fn an_empty_label_map_is_no_label_map() {
        // Issue #28.6: another writer removed the last label too; re-planned, the merge patch
        // leaves `labels: {}` where the server has no `labels`: the same (empty) effect.
        let untyped = |before: Value, after: Value| Effect::between(&before, &after, &Schema::new(), None);
        assert!(untyped(json!({"metadata": {}}), json!({"metadata": {"labels": {}}})).is_empty());
        assert!(untyped(json!({"metadata": {"annotations": {}}}), json!({"metadata": {}})).is_empty());
        // A key removed is still a change, and so is an empty map anywhere else (`emptyDir: {}`).
        assert_eq!(
            untyped(json!({"metadata": {"labels": {"a": "1"}}}), json!({"metadata": {"labels": {}}})).edits().len(),
            1
        );
        assert_eq!(untyped(json!({"spec": {}}), json!({"spec": {"emptyDir": {}}})).edits().len(), 1);
    }

    #[test]
    fn the_first_difference_names_the_field_where_two_changes_part() {
        let approved = effect(&deployment(1, "a:1", None), &deployment(2, "a:2", None));
        assert_eq!(approved.first_difference(&approved), None);
        let name = |e: &Effect| approved.first_difference(e).map(ToString::to_string);
        // Another starting value of one field; one field fewer; one field more.
        assert_eq!(
            name(&effect(&deployment(5, "a:1", None), &deployment(2, "a:2", None))).as_deref(),
            Some(".spec.replicas")
        );
        let image_only = effect(&deployment(2, "a:1", None), &deployment(2, "a:2", None));
        assert_eq!(name(&image_only).as_deref(), Some(".spec.replicas"));
        let env = Some(json!([{"name": "X", "value": "1"}]));
        let more = effect(&deployment(1, "a:1", None), &deployment(2, "a:2", env));
        assert_eq!(name(&more).as_deref(), Some(".spec.template.spec.containers[name=\"app\"].env[name=\"X\"].name"));
    }
}
