//! Which fields a server-side apply removes when the applier drops them from its
//! configuration (upstream's `Updater.prune`, `addBackOwnedItems` and
//! `addBackDanglingItems`).
//!
//! A field leaves the object only if the applier applied it last time, does not
//! apply it now, and no manager (another applier *or* an updater such as
//! `kubectl-client-side-apply`, `kubectl-edit` or a controller) owns it. A field
//! another manager co-owns stays: removing it from a file does not remove it from
//! the cluster (kubernetes#99003).

use serde_json::Value;

use crate::fieldpath::{field_set_lossy, remove_items, with_named_fields, Set};
use crate::schema::{Schema, TypeId};

/// `merged` with the fields in `last` (the applier's previous set) that no set of
/// `owned` claims removed. `owned` holds every manager's fields after the apply: the
/// other managers' and the applier's new set.
pub fn prune(merged: &Value, last: &Set, owned: &[&Set], schema: &Schema, ty: TypeId) -> Value {
    if last.is_empty() {
        return merged.clone();
    }
    let ty = Some(ty);
    let named = |set: &Set| with_named_fields(set, schema, ty);
    let fields_of = |value: &Value| named(&field_set_lossy(value, schema, ty).0);
    let last = named(last);
    let everything = fields_of(merged);

    let pruned = remove_items(merged, &last, schema, ty);
    // Add back what any manager owns.
    let managed = owned.iter().fold(Set::new(), |all, set| all.union(set));
    let unowned = everything.difference(&fields_of(&pruned).union(&named(&managed)));
    let pruned = remove_items(merged, &unowned, schema, ty);
    // Add back what the applier did not own last time (unowned fields, items only updaters own).
    let dropped = everything.difference(&fields_of(&pruned)).intersection(&last);
    remove_items(merged, &dropped, schema, ty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use crate::fieldpath::Path;
    use serde_json::json;

    #[test]
    fn removes_only_what_the_applier_alone_owned() {
        let (schema, root) = pod_schema();
        let merged = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}, "spec": {"replicas": 2}});
        let label = |k: &str| Path::fields(["metadata", "labels", k]);
        let last = Set::from_paths(&[label("a"), label("b"), Path::fields(["spec", "replicas"])]);
        let now = Set::from_paths(&[label("a")]);
        let other = Set::from_paths(&[label("b")]);
        // b is co-owned: it survives; replicas was the applier's alone: removed, and spec with
        // it (nobody owns anything under it); c was never the applier's: it stays.
        let pruned = prune(&merged, &last, &[&other, &now], &schema, root);
        assert_eq!(pruned, json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}}));
        let pruned = prune(&merged, &last, &[&now], &schema, root);
        assert_eq!(pruned, json!({"metadata": {"labels": {"a": "1", "c": "3"}}}));
        assert_eq!(prune(&merged, &Set::new(), &[&now], &schema, root), merged);
    }
}
