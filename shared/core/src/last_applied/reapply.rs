//! What the next `kubectl apply` of the annotation itself would change in the live object:
//! the one meaning of "stale".
//!
//! An annotation is stale when applying the configuration it records again (client-side,
//! as `kubectl apply -f` of that same file does) would change the object. kubectl decides
//! that with its three-way patch: original = the annotation, modified = the file (here the
//! annotation again, with the annotation kubectl would write, which is the one there),
//! current = the live object; a strategic merge patch for the built-in kinds, a JSON merge
//! patch for the others ([`crate::strategic::create_three_way`],
//! [`crate::merge_patch::create_three_way`]). [`reapply`] computes that patch, applies it to
//! the live object, and names the fields that differ.
//!
//! A field-by-field comparison of the annotation with the live object is wrong both ways
//! (issue 32, defect 4): `readOnly: false`, `env: []`, `minReadySeconds: 0` are values the
//! server never stores, `data: null` deletes what is absent already, and a value the server
//! defaults inside a list kubectl replaces whole (`fieldRef.apiVersion`) is there live and
//! not in the file. None of them is a change. Only the server knows what it stores, so two
//! rules stand in for what `kubectl apply --dry-run=server` would answer, each erring toward
//! "no change":
//! - in a built-in kind, a field the patch adds with Go's zero value (`false`, `0`, `""`,
//!   `[]`, `{}`, `null`) is dropped by the server (`omitempty`), unless the Go field is a
//!   pointer ([`crate::schema::go_pointers`]), which keeps the zero;
//! - a value the patch replaces whole is unchanged when every field it sets holds the same
//!   value live: fields only the live value has are ones the server defaulted and would
//!   default again. A field someone added by hand inside such a value (an atomic list's
//!   entry) is therefore not reported, while a changed, added or removed entry is.
//!
//! ```
//! use fieldwise_core::last_applied::{reapply, LAST_APPLIED_ANNOTATION};
//! use fieldwise_core::schema::builtin;
//! use serde_json::json;
//!
//! let annotation = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}"#;
//! let live = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "c", "annotations": {LAST_APPLIED_ANNOTATION: annotation}}, "data": {"k": v}});
//! assert!(reapply(&live("v"), builtin()).unwrap().is_empty());
//! let changes = reapply(&live("edited"), builtin()).unwrap();
//! assert_eq!(changes[0].path.to_string(), ".data.k");
//! ```

use serde_json::Value;

use super::{annotation_of, string_data, LAST_APPLIED_ANNOTATION};
use crate::change::effect::{Effect, FieldEdit};
use crate::fieldpath::{values_equal, PathElement};
use crate::schema::go_pointers::is_go_pointer;
use crate::schema::{Gvk, Schema, TypeDef, TypeId};
use crate::{merge_patch, strategic};

/// Why the next apply of the annotation cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReapplyError {
    /// The annotation is not a JSON object.
    NotJson,
    /// kubectl could not create or apply its patch (the message says why; never a value).
    Patch(String),
}

/// The fields the next `kubectl apply` of `live`'s annotation would change, each with its
/// live value and the value after that apply, in path order; empty when it changes nothing
/// or there is no annotation. `schema` is how `kubectl apply` merges the kind (an empty one
/// for custom resources, merged with a JSON merge patch).
pub fn reapply(live: &Value, schema: &Schema) -> Result<Vec<FieldEdit>, ReapplyError> {
    let Some(text) = annotation_of(live) else { return Ok(Vec::new()) };
    let applied: Value = serde_json::from_str(text).map_err(|_| ReapplyError::NotJson)?;
    if !applied.is_object() {
        return Err(ReapplyError::NotJson);
    }
    // The server keeps a Secret's `stringData` in `data`: what it stored is what kubectl compares.
    let original = string_data::as_stored(&applied, live);
    let mut modified = original.clone();
    with_annotation(&mut modified, text);
    let ty = Gvk::of_object(live).and_then(|g| schema.root(&g));
    let typed = ty.filter(|t| matches!(schema.try_get(*t), Some(TypeDef::Struct(_))));
    let after = match typed {
        Some(ty) => strategic::create_three_way(&original, &modified, live, schema, ty, true)
            .and_then(|patch| strategic::apply(live, &patch, schema, ty))
            .map_err(|e| ReapplyError::Patch(e.to_string()))?,
        None => merge_patch::create_three_way(&original, &modified, live)
            .map(|patch| merge_patch::apply(live, &patch))
            .map_err(|e| ReapplyError::Patch(e.to_string()))?,
    };
    let effect = Effect::between(live, &after, schema, typed);
    Ok(effect.edits().iter().filter(|edit| server_keeps(edit, &original, schema, typed)).cloned().collect())
}

/// The file kubectl would apply: the configuration with the annotation it writes, here the one
/// there (so the patch never touches it). A `metadata` or `annotations` that is not an object
/// is left alone: the patch then says what kubectl would do with it.
fn with_annotation(config: &mut Value, text: &str) {
    let Value::Object(root) = config else { return };
    let metadata = root.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(metadata) = metadata else { return };
    let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Default::default()));
    if annotations.is_null() {
        *annotations = Value::Object(Default::default());
    }
    if let Value::Object(annotations) = annotations {
        annotations.insert(LAST_APPLIED_ANNOTATION.to_string(), Value::String(text.to_string()));
    }
}

/// Whether the server would store `edit` as the patch makes it (see the module docs).
fn server_keeps(edit: &FieldEdit, applied: &Value, schema: &Schema, ty: Option<TypeId>) -> bool {
    if let [PathElement::Field(top)] = edit.path.elements() {
        if top == "apiVersion" || top == "kind" {
            return false; // kubectl reads the object in the file's version: not a change.
        }
    }
    match (&edit.before, &edit.after) {
        (None, Some(added)) => !(is_go_zero(added) && ty.is_some_and(|t| omitted_when_zero(schema, t, &edit.path))),
        (Some(live), Some(patched)) => !holds(patched, live),
        (Some(_), None) => removed_by_annotation(applied, edit.path.elements()),
        (None, None) => false,
    }
}

/// Go's zero value of a field's type, as JSON.
fn is_go_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// Whether the field at `path` of a built-in kind is a struct field the server omits when
/// it holds its zero value: any field but a Go pointer (maps and slices never are).
fn omitted_when_zero(schema: &Schema, root: TypeId, path: &crate::fieldpath::Path) -> bool {
    let Some((PathElement::Field(name), parents)) = path.elements().split_last() else { return false };
    let mut ty = root;
    for element in parents {
        let next = match element {
            PathElement::Field(f) => schema.field(ty, f).map(|f| f.ty).or_else(|| schema.values(ty)),
            _ => schema.items(ty),
        };
        let Some(next) = next else { return false };
        ty = next;
    }
    match schema.try_get(ty) {
        Some(TypeDef::Struct(s)) if s.fields.contains_key(name) => {
            schema.name_of(ty).is_some_and(|parent| !is_go_pointer(parent, name))
        }
        // A map's values are stored whatever they are (`data: {k: ""}`).
        _ => false,
    }
}

/// Whether `live` holds every field `patched` sets, with the same value (a zero value may be
/// absent live): the server would store `live` again, its extra fields being defaults.
fn holds(patched: &Value, live: &Value) -> bool {
    match (patched, live) {
        (Value::Object(p), Value::Object(l)) => {
            p.iter().all(|(k, v)| l.get(k).map_or_else(|| is_go_zero(v), |w| holds(v, w)))
        }
        (Value::Array(p), Value::Array(l)) => p.len() == l.len() && p.iter().zip(l).all(|(v, w)| holds(v, w)),
        _ => values_equal(patched, live),
    }
}

/// Whether the annotation itself removes the field (it or a field above it is `null` there);
/// otherwise a removal is a side effect of a value replaced whole, which the server defaults again.
fn removed_by_annotation(applied: &Value, path: &[PathElement]) -> bool {
    let mut here = applied;
    for element in path {
        let next = match element {
            PathElement::Field(name) => here.get(name),
            _ => return false,
        };
        match next {
            Some(Value::Null) => return true,
            Some(value) => here = value,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::builtin;
    use serde_json::json;

    /// A live object whose annotation is `applied`, with `live_fields` merged over `applied`.
    fn object(applied: Value, live: Value) -> Value {
        let mut object = live;
        object["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = json!(applied.to_string());
        object
    }

    fn changed(live: &Value) -> Vec<String> {
        reapply(live, builtin()).unwrap().iter().map(|e| e.path.to_string()).collect()
    }

    fn deployment(spec_extra: Value, pod_spec: Value) -> Value {
        let mut spec = json!({"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}});
        for (k, v) in spec_extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}, "spec": spec})
    }

    #[test]
    fn zero_values_the_server_never_stores_are_not_changes() {
        let pod = |mount: Value, env: Option<Value>| {
            let mut c = json!({"name": "app", "image": "app:1", "volumeMounts": [mount]});
            if let Some(env) = env {
                c["env"] = env;
            }
            json!({"containers": [c], "volumes": [{"name": "v", "emptyDir": {}}]})
        };
        let applied = deployment(
            json!({"minReadySeconds": 0}),
            pod(json!({"name": "v", "mountPath": "/v", "readOnly": false}), Some(json!([]))),
        );
        let live = object(applied, deployment(json!({}), pod(json!({"name": "v", "mountPath": "/v"}), None)));
        assert_eq!(changed(&live), Vec::<String>::new());
    }

    #[test]
    fn an_empty_value_in_a_map_is_a_change() {
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": ""}});
        let live = object(applied, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}));
        assert_eq!(changed(&live), vec![".data.k"]);
    }

    #[test]
    fn a_null_for_an_absent_field_is_not_a_change() {
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": null});
        let live = object(applied, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}));
        assert_eq!(changed(&live), Vec::<String>::new());
    }

    #[test]
    fn a_value_the_server_defaulted_inside_a_list_replaced_whole_is_not_a_change() {
        let volume = |field_ref: Value| {
            json!({"containers": [{"name": "app", "image": "app:1"}],
                "volumes": [{"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": field_ref}]}}]})
        };
        let applied = deployment(json!({}), volume(json!({"fieldPath": "metadata.labels"})));
        let defaulted = deployment(json!({}), volume(json!({"apiVersion": "v1", "fieldPath": "metadata.labels"})));
        assert_eq!(changed(&object(applied.clone(), defaulted)), Vec::<String>::new());
        // A different value in that list is a change.
        let edited = deployment(json!({}), volume(json!({"apiVersion": "v1", "fieldPath": "metadata.name"})));
        assert_eq!(
            changed(&object(applied, edited)),
            vec![".spec.template.spec.volumes[name=\"info\"].downwardAPI.items"]
        );
    }

    #[test]
    fn an_edited_field_is_a_change_and_a_field_the_annotation_does_not_set_is_not() {
        let pod = |image: &str| json!({"containers": [{"name": "app", "image": image}]});
        let applied = deployment(json!({}), pod("app:1"));
        let mut edited = deployment(json!({"paused": true}), pod("app:2"));
        edited["spec"]["replicas"] = json!(3);
        let edits = reapply(&object(applied, edited), builtin()).unwrap();
        let shown: Vec<String> = edits.iter().map(|e| format!("{} {:?} {:?}", e.path, e.before, e.after)).collect();
        assert_eq!(
            shown,
            vec![
                ".spec.replicas Some(Number(3)) Some(Number(1))",
                ".spec.template.spec.containers[name=\"app\"].image Some(String(\"app:2\")) Some(String(\"app:1\"))",
            ]
        );
    }

    #[test]
    fn a_pointer_field_keeps_its_zero_value() {
        // `replicas` is `*int32`: 0 is stored, so adding it is a change.
        let applied = deployment(json!({"replicas": 0}), json!({"containers": [{"name": "app", "image": "a"}]}));
        let mut live = deployment(json!({}), json!({"containers": [{"name": "app", "image": "a"}]}));
        live["spec"].as_object_mut().unwrap().remove("replicas");
        assert_eq!(changed(&object(applied, live)), vec![".spec.replicas"]);
    }

    #[test]
    fn custom_resources_merge_with_a_json_merge_patch_and_keep_zero_values() {
        let applied = json!({"apiVersion": "x.test/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"enabled": false, "workers": [{"name": "main"}]}});
        let same = json!({"apiVersion": "x.test/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"enabled": false, "workers": [{"name": "main", "size": 1}], "extra": 1}});
        let untyped = Schema::new();
        assert!(reapply(&object(applied.clone(), same), &untyped).unwrap().is_empty());
        let edited = json!({"apiVersion": "x.test/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"workers": [{"name": "main"}, {"name": "side"}]}});
        let paths: Vec<String> =
            reapply(&object(applied, edited), &untyped).unwrap().iter().map(|e| e.path.to_string()).collect();
        assert_eq!(paths, vec![".spec.enabled", ".spec.workers"]);
    }

    #[test]
    fn odd_metadata_in_the_annotation_is_no_panic() {
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": "odd", "data": {"k": "v"}});
        let live = object(
            applied,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}),
        );
        assert_eq!(reapply(&live, builtin()), Ok(Vec::new()));
    }

    #[test]
    fn an_annotation_that_is_not_json_is_an_error() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
            "annotations": {LAST_APPLIED_ANNOTATION: "{not json"}}});
        assert_eq!(reapply(&live, builtin()), Err(ReapplyError::NotJson));
    }
}
