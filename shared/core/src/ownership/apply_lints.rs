//! Traps in a configuration about to be applied server-side, found before the apply:
//!
//! - [`duplicate_keys`]: two entries of one list-map (or set) with the same key: the
//!   apiserver refuses the apply (`duplicate entries for key`), and other writes keep
//!   both entries, which later merges cannot tell apart;
//! - [`scaled_fields`]: a field the configuration sets that something writes through the
//!   `scale` subresource (`spec.replicas` under an HPA or after `kubectl scale`): every
//!   apply resets the replica count, and the next scale conflicts with the file.

use serde_json::Value;

use super::manager_fields::ManagerFields;
use super::managers::Manager;
use crate::fieldpath::shape::{item_element, shape_of, Shape};
use crate::fieldpath::{Path, PathElement, Set};
use crate::lint::{Finding, Severity};
use crate::schema::{Schema, TypeId};

/// Every list-map or set in `config` with two entries of one key.
pub fn duplicate_keys(config: &Value, schema: &Schema, ty: TypeId) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(config, schema, Some(ty), &mut Vec::new(), &mut out);
    out
}

fn walk(value: &Value, schema: &Schema, ty: Option<TypeId>, path: &mut Vec<PathElement>, out: &mut Vec<Finding>) {
    match (shape_of(schema, ty, Some(value)), value) {
        (Shape::Fields(fields), Value::Object(map)) => {
            for (key, child) in map {
                path.push(PathElement::Field(key.clone()));
                walk(child, schema, fields.child(key).0, path, out);
                path.pop();
            }
        }
        (Shape::List { items, keys }, Value::Array(list)) => {
            let mut seen: Vec<PathElement> = Vec::new();
            let mut reported: Vec<PathElement> = Vec::new();
            for item in list {
                let Ok(pe) = item_element(schema, items, keys, item) else { continue };
                if seen.contains(&pe) {
                    if !reported.contains(&pe) {
                        let list_path = Path::from(path.clone());
                        out.push(
                            Finding::new(
                                Severity::Warning,
                                list_path.child(pe.clone()).to_string(),
                                format!(
                                    "{list_path} has two entries for {pe}: server-side apply refuses the file (duplicate entries for key), and other writes keep both entries"
                                ),
                            )
                            .with_fix("merge the two entries into one"),
                        );
                        reported.push(pe.clone());
                    }
                    continue;
                }
                path.push(pe.clone());
                walk(item, schema, items, path, out);
                path.pop();
                seen.push(pe);
            }
        }
        _ => {}
    }
}

/// Fields `applied` (the configuration's fields) sets that a manager writing through the
/// `scale` subresource owns in the live object.
pub fn scaled_fields(applied: &Set, live_managers: &[ManagerFields]) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in live_managers.iter().filter(|m| m.manager.subresource == "scale") {
        for path in m.fields.intersection(applied).paths() {
            out.push(scaled(&path, &m.manager));
        }
    }
    out
}

fn scaled(path: &Path, owner: &Manager) -> Finding {
    Finding::new(
        Severity::Warning,
        path.to_string(),
        format!(
            "{path} is written through the scale subresource by {:?} (an autoscaler or kubectl scale): every apply of the file resets it, and the next scale conflicts with the file",
            owner.name
        ),
    )
    .with_fix(format!("drop {path} from the file and let the scaler own it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fieldpath::tests_support::pod_schema;
    use crate::ownership::Operation;
    use serde_json::json;

    #[test]
    fn finds_duplicate_keys_once_each() {
        let (schema, root) = pod_schema();
        let config = json!({"spec": {"containers": [
            {"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]},
            {"name": "a"}, {"name": "a"}, {"name": "b"}]}});
        let found = duplicate_keys(&config, &schema, root);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [".spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"]", ".spec.containers[name=\"a\"]"]
        );
        assert!(found[1].message.contains("refuses"), "{}", found[1].message);
        assert!(duplicate_keys(&json!({"spec": {"containers": [{"name": "a"}]}}), &schema, root).is_empty());
    }

    #[test]
    fn flags_fields_the_scale_subresource_writes() {
        let replicas = Path::fields(["spec", "replicas"]);
        let scaler = ManagerFields {
            manager: Manager {
                name: "kube-controller-manager".into(),
                operation: Operation::Update,
                api_version: Some("apps/v1".into()),
                subresource: "scale".into(),
            },
            api_version: "apps/v1".into(),
            fields: Set::from_paths(std::slice::from_ref(&replicas)),
        };
        let found = scaled_fields(&Set::from_paths(std::slice::from_ref(&replicas)), std::slice::from_ref(&scaler));
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("kube-controller-manager"), "{}", found[0].message);
        assert!(scaled_fields(&Set::from_paths(&[Path::fields(["spec", "paused"])]), &[scaler]).is_empty());
    }
}
