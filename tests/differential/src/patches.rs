//! Patches: RFC 6902 operations aimed at a document's real paths (and some
//! that miss), merge patches derived from an edit of the document, and
//! strategic merge patches derived from an edit through the schema, with
//! directives (`$patch`, `$retainKeys`, `$setElementOrder`,
//! `$deleteFromPrimitiveList`) inserted as kubectl would and at random.

use crate::rng::Rng;
use crate::values;
use fieldwise_core::schema::{Field, Schema, TypeDef, TypeId};
use serde_json::{json, Map, Value};

/// Every JSON Pointer of a document (the root included), with its value.
pub fn pointers(doc: &Value) -> Vec<(String, Value)> {
    fn walk(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
        out.push((at.clone(), v.clone()));
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    walk(child, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    walk(child, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, String::new(), &mut out);
    out
}

/// A path to aim an operation at: mostly real, sometimes appended to,
/// negative, out of range, missing, or malformed.
fn target(rng: &mut Rng, paths: &[(String, Value)]) -> String {
    let base = rng.pick(paths).map(|(p, _)| p.clone()).unwrap_or_default();
    match rng.below(36) {
        0 => format!("{base}/-"),
        1 => format!("{base}/-1"),
        2 => format!("{base}/{}", rng.below(6)),
        3 => format!("{base}/missing"),
        4 => ["a/b", "/~2", "/a~", "", "/", "/01"][rng.below(6)].to_string(),
        5 => format!("{base}/{}", values::loose_key(rng).replace('~', "~0").replace('/', "~1")),
        _ => base,
    }
}

/// A JSON Patch of 1 to 3 operations against `doc`.
pub fn json_patch(rng: &mut Rng, doc: &Value) -> Value {
    let paths = pointers(doc);
    let count = rng.between(1, 3);
    let mut ops = Vec::with_capacity(count);
    for _ in 0..count {
        let kind = ["add", "remove", "replace", "move", "copy", "test", "add", "replace"][rng.below(8)];
        let mut op = Map::new();
        op.insert("op".into(), json!(kind));
        op.insert("path".into(), json!(target(rng, &paths)));
        match kind {
            "move" | "copy" => {
                op.insert("from".into(), json!(target(rng, &paths)));
            }
            "test" => {
                let existing = rng.pick(&paths).map(|(_, v)| v.clone()).unwrap_or(Value::Null);
                let value = if rng.percent(85) { existing } else { values::loose(rng, 2) };
                op.insert("value".into(), value);
            }
            "add" | "replace" => {
                if kind == "add" && rng.percent(40) {
                    // A new member or item under an existing container.
                    let parent = paths.iter().filter(|(_, v)| v.is_object() || v.is_array()).count();
                    let index = rng.below(parent);
                    if let Some((at, v)) = paths.iter().filter(|(_, v)| v.is_object() || v.is_array()).nth(index) {
                        let last = if v.is_array() { "-".to_string() } else { values::loose_key(rng) };
                        op.insert("path".into(), json!(format!("{at}/{}", last.replace('~', "~0").replace('/', "~1"))));
                    }
                }
                op.insert("value".into(), values::loose(rng, 2));
            }
            _ => {}
        }
        match rng.below(60) {
            0 => {
                op.remove("value");
            }
            1 => {
                op.insert("op".into(), json!(["bogus", "ADD", ""][rng.below(3)]));
            }
            2 => {
                op.remove("path");
            }
            3 => {
                op.insert("path".into(), json!(1));
            }
            _ => {}
        }
        ops.push(Value::Object(op));
    }
    if rng.percent(1) {
        return values::loose(rng, 1);
    }
    Value::Array(ops)
}

/// A merge patch taking `original` to `modified`, with noise: nulls for absent
/// keys, nested nulls, and now and then a patch that is not an object.
pub fn merge_patch(rng: &mut Rng, original: &Value, modified: &Value) -> Value {
    let mut patch = merge_diff(original, modified);
    if rng.percent(20) {
        add_noise(rng, &mut patch, 3);
    }
    if rng.percent(2) {
        return [Value::Null, json!([1, null]), json!("x"), json!(3)][rng.below(4)].clone();
    }
    patch
}

/// The plain RFC 7386 difference of two documents.
fn merge_diff(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = Map::new();
            for (k, va) in a {
                match b.get(k) {
                    None => {
                        out.insert(k.clone(), Value::Null);
                    }
                    Some(vb) if vb != va => {
                        out.insert(k.clone(), merge_diff(va, vb));
                    }
                    Some(_) => {}
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    out.insert(k.clone(), vb.clone());
                }
            }
            Value::Object(out)
        }
        _ => modified.clone(),
    }
}

/// Inserts nulls and loose values at random object positions of a patch.
fn add_noise(rng: &mut Rng, patch: &mut Value, depth: usize) {
    match patch {
        Value::Object(map) => {
            if rng.percent(30) {
                let value = if rng.percent(60) { Value::Null } else { values::loose(rng, 2) };
                map.insert(values::loose_key(rng), value);
            }
            if depth > 0 {
                for v in map.values_mut() {
                    if rng.percent(30) {
                        add_noise(rng, v, depth - 1);
                    }
                }
            }
        }
        Value::Array(items) if rng.percent(20) => items.push(Value::Null),
        _ => {}
    }
}

/// Builds strategic merge patches through a schema.
pub struct StrategicPatcher<'s> {
    schema: &'s Schema,
    /// Percent chance of a random (possibly invalid) directive at each map.
    pub noise: u32,
}

impl<'s> StrategicPatcher<'s> {
    /// A patcher over `schema`.
    pub fn new(schema: &'s Schema) -> Self {
        StrategicPatcher { schema, noise: 3 }
    }

    /// A strategic patch taking `original` (of type `ty`) to `modified`, written
    /// the way kubectl writes them but with directives chosen at random.
    pub fn patch(&self, rng: &mut Rng, original: &Value, modified: &Value, ty: TypeId) -> Value {
        let mut patch = self.diff(rng, original, modified, Some(ty), None);
        if let Value::Object(map) = &mut patch {
            for key in ["apiVersion", "kind"] {
                if let (Some(v), true) = (modified.get(key), rng.percent(30)) {
                    map.insert(key.into(), v.clone());
                }
            }
        }
        patch
    }

    fn struct_field(&self, ty: Option<TypeId>, key: &str) -> Option<Field> {
        let ty = ty?;
        match self.schema.get(ty) {
            TypeDef::Struct(st) => st.fields.get(key).cloned().or_else(|| st.extra.map(plain)),
            TypeDef::Map(mt) => Some(plain(mt.values)),
            _ => None,
        }
    }

    fn diff(
        &self,
        rng: &mut Rng,
        original: &Value,
        modified: &Value,
        ty: Option<TypeId>,
        field: Option<&Field>,
    ) -> Value {
        match (original, modified) {
            (Value::Object(a), Value::Object(b)) => self.diff_maps(rng, a, b, ty, field),
            (Value::Array(a), Value::Array(b)) => self.diff_lists(rng, a, b, ty, field).0,
            _ => modified.clone(),
        }
    }

    fn diff_maps(
        &self,
        rng: &mut Rng,
        a: &Map<String, Value>,
        b: &Map<String, Value>,
        ty: Option<TypeId>,
        field: Option<&Field>,
    ) -> Value {
        let mut out = Map::new();
        for (k, va) in a {
            if !b.contains_key(k) {
                out.insert(k.clone(), Value::Null);
            } else if let Some(vb) = b.get(k) {
                let f = self.struct_field(ty, k);
                match (va, vb) {
                    _ if va == vb && !rng.percent(5) => {}
                    (Value::Array(la), Value::Array(lb)) => {
                        let (list, extras) = self.diff_lists(rng, la, lb, f.as_ref().map(|f| f.ty), f.as_ref());
                        for (ek, ev) in extras {
                            out.insert(format!("{ek}/{k}"), ev);
                        }
                        out.insert(k.clone(), list);
                    }
                    _ => {
                        let d = self.diff(rng, va, vb, f.as_ref().map(|f| f.ty), f.as_ref());
                        out.insert(k.clone(), d);
                    }
                }
            }
        }
        for (k, vb) in b {
            if !a.contains_key(k) {
                out.insert(k.clone(), vb.clone());
            }
        }
        if field.is_some_and(|f| f.patch_strategy.retain_keys) && rng.percent(60) {
            let mut keys: Vec<Value> = b.keys().map(|k| json!(k)).collect();
            if rng.percent(10) {
                keys.pop();
            }
            out.insert("$retainKeys".into(), Value::Array(keys));
        }
        if rng.percent(self.noise) {
            let directive = ["replace", "delete", "merge", "bogus"][rng.below(4)];
            out.insert("$patch".into(), json!(directive));
        }
        Value::Object(out)
    }

    /// A list patch and the directive entries (`$setElementOrder`,
    /// `$deleteFromPrimitiveList`) its parent map needs, by prefix.
    fn diff_lists(
        &self,
        rng: &mut Rng,
        a: &[Value],
        b: &[Value],
        ty: Option<TypeId>,
        field: Option<&Field>,
    ) -> (Value, Vec<(&'static str, Value)>) {
        let merging = field.is_some_and(|f| f.patch_strategy.merge);
        let items_ty = ty.and_then(|t| self.schema.items(t));
        let mut extras = Vec::new();
        if !merging || rng.percent(5) {
            return (Value::Array(b.to_vec()), extras);
        }
        if rng.percent(4) {
            let mut list = b.to_vec();
            list.push(json!({"$patch": "replace"}));
            return (Value::Array(list), extras);
        }
        match field.and_then(|f| f.merge_key.clone()) {
            Some(key) => {
                let key_of = |v: &Value| v.get(&key).cloned();
                let mut list = Vec::new();
                for item in b {
                    match a.iter().find(|x| key_of(x).is_some() && key_of(x) == key_of(item)) {
                        Some(old) if old == item && !rng.percent(10) => {}
                        Some(old) => {
                            let mut d = self.diff(rng, old, item, items_ty, None);
                            if let (Value::Object(m), Some(k)) = (&mut d, key_of(item)) {
                                m.insert(key.clone(), k);
                            }
                            list.push(d);
                        }
                        None => list.push(item.clone()),
                    }
                }
                for old in a {
                    let gone = key_of(old).is_some() && !b.iter().any(|x| key_of(x) == key_of(old));
                    if gone {
                        list.push(json!({ key.clone(): key_of(old), "$patch": "delete" }));
                    }
                }
                if rng.percent(50) {
                    let order: Vec<Value> =
                        b.iter().filter_map(|x| key_of(x).map(|k| json!({ key.clone(): k }))).collect();
                    extras.push(("$setElementOrder", Value::Array(order)));
                }
                (Value::Array(list), extras)
            }
            None => {
                let added: Vec<Value> = b.iter().filter(|x| !a.contains(x)).cloned().collect();
                let removed: Vec<Value> = a.iter().filter(|x| !b.contains(x)).cloned().collect();
                if !removed.is_empty() || rng.percent(5) {
                    extras.push(("$deleteFromPrimitiveList", Value::Array(removed)));
                }
                if rng.percent(50) {
                    extras.push(("$setElementOrder", Value::Array(b.to_vec())));
                }
                (Value::Array(added), extras)
            }
        }
    }
}

/// A field of type `ty` without strategic metadata.
fn plain(ty: TypeId) -> Field {
    Field { ty, patch_strategy: Default::default(), merge_key: None, default: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_schema;
    use fieldwise_core::schema::Gvk;

    #[test]
    fn pointers_escape_keys() {
        let doc = json!({"a/b": {"c~d": [1]}});
        let paths: Vec<String> = pointers(&doc).into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, vec!["", "/a~1b", "/a~1b/c~0d", "/a~1b/c~0d/0"]);
    }

    #[test]
    fn json_patches_are_mostly_operation_lists() {
        let doc = json!({"a": [1, 2], "b": {"c": "d"}});
        let mut rng = Rng::new(5);
        let lists = (0..200).filter(|_| json_patch(&mut rng, &doc).is_array()).count();
        assert!(lists > 190);
    }

    #[test]
    fn merge_diff_nulls_removed_keys() {
        assert_eq!(
            merge_diff(&json!({"a": 1, "b": {"c": 1}}), &json!({"b": {"c": 2}})),
            json!({"a": null, "b": {"c": 2}})
        );
    }

    #[test]
    fn strategic_patch_deletes_keyed_items_and_orders() {
        let schema = sample_schema::workloads();
        let pod = schema.root(&Gvk::new("", "v1", "Pod")).expect("pod");
        let a = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let b = json!({"spec": {"containers": [{"name": "b", "image": "x"}]}});
        let patcher = StrategicPatcher { schema: &schema, noise: 0 };
        let mut saw_delete = false;
        for seed in 0..50 {
            let patch = patcher.patch(&mut Rng::new(seed), &a, &b, pod);
            let text = patch.to_string();
            saw_delete |= text.contains(r#""$patch":"delete""#) && text.contains(r#""name":"a""#);
        }
        assert!(saw_delete);
    }
}
