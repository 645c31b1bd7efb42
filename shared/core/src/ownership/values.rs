//! Which managers own each value of an object: the core of a blame view.

use std::collections::HashMap;

use serde_json::Value;

use super::ManagedFieldsEntry;
use crate::fieldpath::for_each_located;

/// For every value of `shown` that some entry owns, the indices (into `entries`) of its
/// owners, in ascending order, keyed by the value's address in `shown`. Addresses identify
/// values without copying them; they are only meaningful while `shown` is alive and unchanged.
pub fn owners_by_value(shown: &Value, entries: &[ManagedFieldsEntry]) -> HashMap<*const Value, Vec<usize>> {
    // The largest set bounds the number of values well enough: managers mostly own disjoint fields.
    let largest = entries.iter().map(|e| e.fields.len()).max().unwrap_or(0);
    let mut owners: HashMap<*const Value, Vec<usize>> = HashMap::with_capacity(largest);
    for (index, entry) in entries.iter().enumerate() {
        // The paths themselves are not needed: walk the object and the set together.
        for_each_located(shown, &entry.fields, |value| {
            let list = owners.entry(value as *const Value).or_default();
            // Two paths of one set can name one value (a defaulted key and an exact one).
            if list.last() != Some(&index) {
                list.push(index);
            }
        });
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    #[test]
    fn shared_fields_list_every_owner() {
        let object = json!({"metadata": {"managedFields": [
            {"manager": "a", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:paused": {}}}},
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
            "spec": {"replicas": 2, "paused": false, "other": 1}});
        let entries = managed_fields_of(&object).unwrap();
        let owners = owners_by_value(&object, &entries);
        assert_eq!(owners[&(&object["spec"]["replicas"] as *const Value)], vec![0, 1]);
        assert_eq!(owners[&(&object["spec"]["paused"] as *const Value)], vec![0]);
        assert!(!owners.contains_key(&(&object["spec"]["other"] as *const Value)));
    }
}
