//! Live blame: what changed between two versions of an object, field by field, and which
//! manager's `managedFields` entry moved with the change (`kubectl owners watch`).
//!
//! Why this exists: the apiserver records who owns a field, not who changed it last or
//! when. The only evidence of who wrote is the entry that moved in the write: a new entry,
//! a newer `time`, or fields it did not own before (an entry that only lost fields was
//! written over, it did not write). One request is written by one manager, so exactly one
//! entry moves. When none moves, a manager that already owned the field wrote again within
//! the second (`time` has seconds only): the field's one owner, if it has one. When the field
//! has several owners or none, or several entries moved (events merged by a relist), the
//! change is [`Attribution::Unattributed`] and nobody is guessed; so is the change whose one
//! moved entry claims the field only through a whole subtree above it while other managers
//! still own the field or leaves below it ([`Attribution::Restamped`]: kube-apiserver's
//! Update hands every field a write changes to the writer alone, so the entries contradict
//! the change). Tested below on the shapes kube-apiserver writes (kubectl label, kubectl patch,
//! server-side appliers forcing each other's fields).

use serde_json::{Map, Value};

use super::managers::{ManagedFieldsEntry, Operation};
use crate::fieldpath::{Path, PathElement};

/// Server-set bookkeeping every write changes; never reported as a change.
const BOOKKEEPING: [&str; 3] = ["resourceVersion", "generation", "managedFields"];

/// One field whose value differs between two versions of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// The field (lists are compared whole: a list that changed is one change).
    pub path: Path,
    /// Its value before; `None` when the field was absent.
    pub before: Option<Value>,
    /// Its value after; `None` when the field was removed.
    pub after: Option<Value>,
}

/// The fields that differ between `before` and `after`, in the order of `after`'s fields
/// (removed fields after the others of their map). Lists are compared as a whole; maps are
/// walked down to their leaves; `metadata.resourceVersion`, `metadata.generation` and
/// `metadata.managedFields` are left out (the server changes them on every write).
///
/// ```
/// use fieldwise_core::ownership::blame::changed_fields;
/// use serde_json::json;
///
/// let before = json!({"metadata": {"name": "x", "resourceVersion": "1"}, "data": {"a": "1"}});
/// let after = json!({"metadata": {"name": "x", "resourceVersion": "2", "labels": {"team": "a"}}, "data": {"a": "2"}});
/// let changes = changed_fields(&before, &after);
/// let paths: Vec<String> = changes.iter().map(|c| c.path.to_string()).collect();
/// assert_eq!(paths, [".metadata.labels.team", ".data.a"]);
/// ```
pub fn changed_fields(before: &Value, after: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    diff_at(&mut Vec::new(), Some(before), Some(after), &mut out);
    out
}

fn diff_at(at: &mut Vec<PathElement>, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<FieldChange>) {
    let empty = Map::new();
    match (fields_of(before), fields_of(after)) {
        (Some(old), Some(new)) if old.is_some() || new.is_some() => {
            let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
            let names = new.keys().chain(old.keys().filter(|k| !new.contains_key(*k)));
            for name in names {
                if at.len() == 1 && at[0] == PathElement::field("metadata") && BOOKKEEPING.contains(&name.as_str()) {
                    continue;
                }
                at.push(PathElement::field(name.clone()));
                diff_at(at, old.get(name), new.get(name), out);
                at.pop();
            }
        }
        _ if before != after => {
            out.push(FieldChange { path: Path(at.clone()), before: before.cloned(), after: after.cloned() })
        }
        _ => {}
    }
}

/// The fields of a side compared field by field: `Some(Some(map))` for a map with fields,
/// `Some(None)` for an absent field; `None` for a value compared whole (a scalar, a list,
/// an empty map).
fn fields_of(value: Option<&Value>) -> Option<Option<&Map<String, Value>>> {
    match value {
        None => Some(None),
        Some(Value::Object(map)) if !map.is_empty() => Some(Some(map)),
        Some(_) => None,
    }
}

/// Who wrote: a managedFields entry's manager, operation and subresource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Writer {
    /// The field manager.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The subresource written through (`status`, `scale`), empty for the main resource.
    pub subresource: String,
}

impl Writer {
    /// The writer of `entry`.
    pub fn of(entry: &ManagedFieldsEntry) -> Writer {
        Writer { manager: entry.manager.clone(), operation: entry.operation, subresource: entry.subresource.clone() }
    }

    /// `manager (Apply)`, `manager (Update, status)`: how text output names it.
    pub fn display(&self) -> String {
        match self.subresource.as_str() {
            "" => format!("{} ({})", self.manager, self.operation.as_str()),
            sub => format!("{} ({}, {sub})", self.manager, self.operation.as_str()),
        }
    }
}

/// Who made the changes of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribution {
    /// Exactly one entry moved with the change: its writer made it.
    Writer(Writer),
    /// managedFields cannot settle it: no entry moved, or several did (their writers).
    Unattributed(Vec<Writer>),
    /// One entry moved, but it claims the field only through a whole subtree above it
    /// (`through`), while other managers (`owners`) still own the field or leaves below it:
    /// an Update that changed the field would have taken those leaves from them, so the
    /// entries contradict the change and nobody is guessed.
    Restamped {
        /// The entry that moved.
        moved: Writer,
        /// The field above the change that it owns whole.
        through: Path,
        /// The managers that own the field, or leaves below it, after the event.
        owners: Vec<Writer>,
    },
}

impl Attribution {
    /// Why managedFields cannot settle who made the change, in words; `None` when they do.
    pub fn unattributed_reason(&self) -> Option<String> {
        let names = |writers: &[Writer]| writers.iter().map(Writer::display).collect::<Vec<_>>().join(", ");
        match self {
            Attribution::Writer(_) => None,
            Attribution::Unattributed(moved) if moved.is_empty() => Some("no managedFields entry moved".into()),
            Attribution::Unattributed(moved) => {
                Some(format!("{} managedFields entries moved: {}", moved.len(), names(moved)))
            }
            Attribution::Restamped { moved, through, owners } => Some(format!(
                "the entry of {} moved but claims the field only through the whole of {through}, while {} still \
                 own(s) it: the write that changed it cannot be told",
                moved.display(),
                names(owners)
            )),
        }
    }
}

/// The entries of `after` that moved since `before`: new, with a newer `time`, or owning
/// fields they did not own. An entry that only lost fields did not write (it was written over).
pub fn moved_entries<'a>(
    before: &[ManagedFieldsEntry],
    after: &'a [ManagedFieldsEntry],
) -> Vec<&'a ManagedFieldsEntry> {
    after
        .iter()
        .filter(|entry| {
            let identity = entry.identity();
            match before.iter().find(|old| old.identity() == identity) {
                None => true,
                Some(old) => old.time != entry.time || !entry.fields.difference(&old.fields).is_empty(),
            }
        })
        .collect()
}

/// Who changed the field at `path` in the event that turned `before`'s entries into
/// `after`'s: the one entry that moved; when none moved, the field's one owner (before or
/// after), because a write by any other manager would have added the field to its entry
/// (the owner wrote again within the same second, which `time` cannot show); otherwise
/// [`Attribution::Unattributed`] with every entry that moved (several, or none with the
/// field owned by several managers or by none).
pub fn attribute(before: &[ManagedFieldsEntry], after: &[ManagedFieldsEntry], path: &Path) -> Attribution {
    match moved_entries(before, after).as_slice() {
        [one] => restamped(one, after, path).unwrap_or_else(|| Attribution::Writer(Writer::of(one))),
        [] => {
            let mut owners: Vec<Writer> = Vec::new();
            for entry in before.iter().chain(after) {
                let owns = entry.fields.has(path.elements()) || !entry.fields.under(path).is_empty();
                if owns && !owners.contains(&Writer::of(entry)) {
                    owners.push(Writer::of(entry));
                }
            }
            match owners.as_slice() {
                [owner] => Attribution::Writer(owner.clone()),
                _ => Attribution::Unattributed(Vec::new()),
            }
        }
        several => Attribution::Unattributed(several.iter().map(|e| Writer::of(e)).collect()),
    }
}

/// Whether `entry` owns the field at `path` or a field below it.
fn covers(entry: &ManagedFieldsEntry, path: &Path) -> bool {
    entry.fields.has(path.elements()) || !entry.fields.under(path).is_empty()
}

/// [`Attribution::Restamped`] when the one entry that `moved` owns nothing at or below
/// `path`, only a field above it whole, while other entries of `after` own `path` or
/// fields below it. kube-apiserver's Update (structured-merge-diff's `Updater.Update`)
/// gives the writer every field its write added or modified and takes them from every
/// other manager, so a write that changed the field leaves it to the writer alone; an
/// Apply takes the fields of its configuration, the field among them. Either way the
/// entries say the mover did not write the field.
fn restamped(moved: &ManagedFieldsEntry, after: &[ManagedFieldsEntry], path: &Path) -> Option<Attribution> {
    if covers(moved, path) {
        return None;
    }
    let elements = path.elements();
    let through = (1..elements.len()).rev().map(|n| &elements[..n]).find(|above| moved.fields.has(above))?;
    let identity = moved.identity();
    let mut owners: Vec<Writer> = Vec::new();
    for entry in after.iter().filter(|e| e.identity() != identity && covers(e, path)) {
        if !owners.contains(&Writer::of(entry)) {
            owners.push(Writer::of(entry));
        }
    }
    (!owners.is_empty()).then(|| Attribution::Restamped {
        moved: Writer::of(moved),
        through: Path(through.to_vec()),
        owners,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    fn entry(manager: &str, operation: &str, time: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "v1", "time": time,
               "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    fn entries(list: Vec<Value>) -> Vec<ManagedFieldsEntry> {
        managed_fields_of(&json!({"metadata": {"managedFields": list}})).unwrap()
    }

    #[test]
    fn leaves_added_changed_and_removed_are_each_one_change() {
        let before = json!({"metadata": {"name": "x", "generation": 1, "annotations": {"gone": "1"}},
                            "data": {"a": "1", "b": "2"}, "spec": {"ports": [1, 2]}});
        let after = json!({"metadata": {"name": "x", "generation": 2, "labels": {"team": "a"}},
                           "data": {"a": "1", "b": "3"}, "spec": {"ports": [1]}});
        let changes: Vec<(String, Option<Value>, Option<Value>)> =
            changed_fields(&before, &after).into_iter().map(|c| (c.path.to_string(), c.before, c.after)).collect();
        assert_eq!(
            changes,
            [
                (".metadata.labels.team".into(), None, Some(json!("a"))),
                (".metadata.annotations.gone".into(), Some(json!("1")), None),
                (".data.b".into(), Some(json!("2")), Some(json!("3"))),
                (".spec.ports".into(), Some(json!([1, 2])), Some(json!([1]))),
            ]
        );
        assert!(changed_fields(&after, &after).is_empty());
    }

    #[test]
    fn a_map_replaced_by_a_scalar_is_one_change_and_an_empty_map_is_a_value() {
        let changes = changed_fields(&json!({"a": {"b": 1}}), &json!({"a": 2, "c": {}}));
        let paths: Vec<String> = changes.iter().map(|c| c.path.to_string()).collect();
        assert_eq!(paths, [".a", ".c"]);
        assert_eq!(changes[1].after, Some(json!({})));
    }

    #[test]
    fn the_one_entry_that_moved_wrote_and_the_one_written_over_did_not() {
        let before = entries(vec![
            entry("a", "Apply", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}})),
            entry("kubectl-create", "Update", "2026-01-01T00:00:00Z", json!({"f:data": {"f:y": {}}})),
        ]);
        // b forces data.x away from a: a loses the field (no move), b is new.
        let after = entries(vec![
            entry("a", "Apply", "2026-01-01T00:00:00Z", json!({})),
            entry("kubectl-create", "Update", "2026-01-01T00:00:00Z", json!({"f:data": {"f:y": {}}})),
            entry("b", "Apply", "2026-01-01T00:00:05Z", json!({"f:data": {"f:x": {}}})),
        ]);
        let b = Writer { manager: "b".into(), operation: Operation::Apply, subresource: String::new() };
        assert_eq!(attribute(&before, &after, &x()), Attribution::Writer(b.clone()));
        assert_eq!(b.display(), "b (Apply)");
        // a takes it back within the same second as its last write: its fields grew.
        let back = entries(vec![
            entry("a", "Apply", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}})),
            entry("kubectl-create", "Update", "2026-01-01T00:00:00Z", json!({"f:data": {"f:y": {}}})),
            entry("b", "Apply", "2026-01-01T00:00:05Z", json!({})),
        ]);
        let a = Writer { manager: "a".into(), operation: Operation::Apply, subresource: String::new() };
        assert_eq!(attribute(&after, &back, &x()), Attribution::Writer(a));
    }

    fn x() -> Path {
        Path::fields(["data", "x"])
    }

    #[test]
    fn with_no_entry_moving_the_fields_one_owner_wrote_again_within_the_second() {
        // kubectl patch of data.x twice in one second: its entry is the same, and it alone owns the field.
        let one = entries(vec![
            entry("kubectl-patch", "Update", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}})),
            entry("kubectl-create", "Update", "2026-01-01T00:00:00Z", json!({"f:data": {"f:y": {}}})),
        ]);
        let patch =
            Writer { manager: "kubectl-patch".into(), operation: Operation::Update, subresource: String::new() };
        assert_eq!(attribute(&one, &one, &x()), Attribution::Writer(patch));
        // A map whose fields two managers own, changed whole: nobody is guessed.
        let map = Path::fields(["data"]);
        assert_eq!(attribute(&one, &one, &map), Attribution::Unattributed(vec![]), "two owners under .data");
    }

    #[test]
    fn no_entry_moving_with_no_or_several_owners_or_two_entries_moving_is_unattributed() {
        let one = entries(vec![entry("a", "Apply", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}}))]);
        let nobody = Path::fields(["data", "z"]);
        assert_eq!(attribute(&one, &one, &nobody), Attribution::Unattributed(vec![]));
        let shared = entries(vec![
            entry("a", "Apply", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}})),
            entry("b", "Apply", "2026-01-01T00:00:00Z", json!({"f:data": {"f:x": {}}})),
        ]);
        assert_eq!(attribute(&shared, &shared, &x()), Attribution::Unattributed(vec![]));
        let two = entries(vec![
            entry("a", "Apply", "2026-01-01T00:00:09Z", json!({"f:data": {"f:x": {}}})),
            entry("ctl", "Update", "2026-01-01T00:00:09Z", json!({"f:status": {}})),
        ]);
        let Attribution::Unattributed(moved) = attribute(&one, &two, &x()) else { panic!("two moved") };
        assert_eq!(moved.iter().map(|w| w.display()).collect::<Vec<_>>(), ["a (Apply)", "ctl (Update)"]);
    }

    #[test]
    fn a_subresource_entry_is_its_own_writer() {
        let before = entries(vec![]);
        let mut status = entry("kubelet", "Update", "2026-01-01T00:00:01Z", json!({"f:status": {"f:phase": {}}}));
        status["subresource"] = json!("status");
        let after = entries(vec![status]);
        let status = Path::fields(["status", "phase"]);
        let Attribution::Writer(writer) = attribute(&before, &after, &status) else { panic!("one moved") };
        assert_eq!(writer.display(), "kubelet (Update, status)");
    }

    #[test]
    fn an_entry_that_moved_claiming_the_field_only_through_a_whole_subtree_is_not_guessed() {
        // ctl owns .metadata.labels itself (the map, "."); team-a owns the label below it.
        let before = entries(vec![
            entry("ctl", "Update", "2026-01-01T00:00:00Z", json!({"f:metadata": {"f:labels": {".": {}}}})),
            entry("team-a", "Apply", "2026-01-01T00:00:00Z", json!({"f:metadata": {"f:labels": {"f:team": {}}}})),
        ]);
        // ctl's entry is stamped again, yet team-a still owns the label that changed.
        let after = entries(vec![
            entry("ctl", "Update", "2026-01-01T00:00:07Z", json!({"f:metadata": {"f:labels": {".": {}}}})),
            entry("team-a", "Apply", "2026-01-01T00:00:00Z", json!({"f:metadata": {"f:labels": {"f:team": {}}}})),
        ]);
        let team = Path::fields(["metadata", "labels", "team"]);
        let ctl = Writer { manager: "ctl".into(), operation: Operation::Update, subresource: String::new() };
        let team_a = Writer { manager: "team-a".into(), operation: Operation::Apply, subresource: String::new() };
        let restamped = attribute(&before, &after, &team);
        assert_eq!(
            restamped,
            Attribution::Restamped {
                moved: ctl.clone(),
                through: Path::fields(["metadata", "labels"]),
                owners: vec![team_a]
            }
        );
        assert_eq!(
            restamped.unattributed_reason().unwrap(),
            "the entry of ctl (Update) moved but claims the field only through the whole of .metadata.labels, \
             while team-a (Apply) still own(s) it: the write that changed it cannot be told"
        );
        // A label nobody else owns: the one entry that moved wrote it, as everywhere.
        let other = Path::fields(["metadata", "labels", "new"]);
        assert_eq!(attribute(&before, &after, &other), Attribution::Writer(ctl.clone()));
        // When ctl's write took the label (Update semantics), it is ctl's.
        let took = entries(vec![
            entry(
                "ctl",
                "Update",
                "2026-01-01T00:00:07Z",
                json!({"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}),
            ),
            entry("team-a", "Apply", "2026-01-01T00:00:00Z", json!({})),
        ]);
        assert_eq!(attribute(&before, &took, &team), Attribution::Writer(ctl));
    }

    #[test]
    fn reasons_say_why_nobody_is_named() {
        let a = Writer { manager: "a".into(), operation: Operation::Apply, subresource: String::new() };
        assert_eq!(Attribution::Writer(a.clone()).unattributed_reason(), None);
        assert_eq!(Attribution::Unattributed(vec![]).unattributed_reason().unwrap(), "no managedFields entry moved");
        let two = Attribution::Unattributed(vec![a.clone(), a]);
        assert_eq!(two.unattributed_reason().unwrap(), "2 managedFields entries moved: a (Apply), a (Apply)");
    }
}
