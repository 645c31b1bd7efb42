//! Who owns one field: the managers that own exactly that path, else the ones
//! that own fields under it, else the ones that own a field it is part of (an
//! atomic list or map, replaced as a whole). The answer to `owners --field`.

use super::managers::ManagedFieldsEntry;
use crate::fieldpath::Path;

/// How the owners relate to the field asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// They own exactly that field.
    Exact,
    /// They own fields under it.
    Under,
    /// They own a field the asked one is part of (an atomic list or map).
    Within,
}

impl Relation {
    /// The word for it in JSON output: `exact`, `under`, `within`.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Exact => "exact",
            Relation::Under => "under",
            Relation::Within => "within",
        }
    }
}

/// The owners of one path and how they relate to it.
#[derive(Debug, Clone, PartialEq)]
pub struct PathOwners {
    /// The closest relation any owner has (all owners listed share it).
    pub relation: Relation,
    /// Each owner: its index in the entries, and the path it owns.
    pub owners: Vec<(usize, Path)>,
}

/// The owners of `path` among `entries` (`metadata.managedFields`), closest first: exact
/// owners; if none, the owners of fields under it; if none, the owners of the longest
/// prefix someone owns. `owners` is empty (with [`Relation::Within`]) when nobody owns
/// anything there.
pub fn owners_at(entries: &[ManagedFieldsEntry], path: &Path) -> PathOwners {
    let exact: Vec<(usize, Path)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.fields.has(path.elements()))
        .map(|(i, _)| (i, path.clone()))
        .collect();
    if !exact.is_empty() {
        return PathOwners { relation: Relation::Exact, owners: exact };
    }
    let mut under = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for sub in e.fields.under(path).paths() {
            under.push((i, Path([path.elements(), sub.elements()].concat())));
        }
    }
    if !under.is_empty() {
        return PathOwners { relation: Relation::Under, owners: under };
    }
    let mut within = Vec::new();
    for len in (1..path.len()).rev() {
        let prefix = &path.elements()[..len];
        for (i, e) in entries.iter().enumerate() {
            if e.fields.has(prefix) {
                within.push((i, Path(prefix.to_vec())));
            }
        }
        if !within.is_empty() {
            break;
        }
    }
    PathOwners { relation: Relation::Within, owners: within }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::PathElement;
    use crate::ownership::managed_fields_of;
    use serde_json::json;

    fn entries() -> Vec<ManagedFieldsEntry> {
        managed_fields_of(&json!({"metadata": {"managedFields": [
            {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:selector": {}}}},
            {"manager": "hpa", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "subresource": "scale", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]}}))
        .unwrap()
    }

    #[test]
    fn exact_owners_come_first() {
        let answer = owners_at(&entries(), &Path::fields(["spec", "replicas"]));
        assert_eq!(answer.relation, Relation::Exact);
        assert_eq!(answer.owners.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn then_owners_under_it_then_owners_of_a_field_it_is_part_of() {
        let answer = owners_at(&entries(), &Path::fields(["spec"]));
        assert_eq!(answer.relation, Relation::Under);
        assert_eq!(answer.owners.len(), 3);
        assert!(answer.owners.iter().all(|(_, p)| p.elements()[0] == PathElement::Field("spec".into())));

        let inside = Path::fields(["spec", "selector", "matchLabels", "app"]);
        let answer = owners_at(&entries(), &inside);
        assert_eq!(answer.relation, Relation::Within);
        assert_eq!(answer.owners, vec![(0, Path::fields(["spec", "selector"]))]);
        assert_eq!(answer.relation.as_str(), "within");

        let nobody = owners_at(&entries(), &Path::fields(["status", "x"]));
        assert!(nobody.owners.is_empty());
    }
}
