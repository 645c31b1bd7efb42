//! Whole cases for each oracle op, in the oracle's JSON form, built from one
//! seeded random stream: realistic objects of the five workload kinds and
//! patches, edits and field sets derived from them.

use crate::fields_v1;
use crate::mutate::Mutator;
use crate::objects::{Knobs, ObjectGen};
use crate::patches::{self, StrategicPatcher};
use crate::rng::Rng;
use crate::values;
use fieldwise_core::schema::{Gvk, Schema, TypeId};
use serde_json::{json, Value};

/// The kinds cases are drawn from.
pub fn kinds() -> Vec<Gvk> {
    vec![
        Gvk::new("apps", "v1", "Deployment"),
        Gvk::new("", "v1", "Pod"),
        Gvk::new("", "v1", "Service"),
        Gvk::new("", "v1", "ConfigMap"),
        Gvk::new("apps", "v1", "StatefulSet"),
    ]
}

/// Builds cases over one schema.
pub struct CaseGen<'s> {
    schema: &'s Schema,
    kinds: Vec<(Gvk, TypeId)>,
}

impl<'s> CaseGen<'s> {
    /// A case generator over the kinds of [`kinds`] that `schema` knows.
    pub fn new(schema: &'s Schema) -> Self {
        let kinds = kinds().into_iter().filter_map(|g| schema.root(&g).map(|t| (g, t))).collect();
        CaseGen { schema, kinds }
    }

    /// A case generator over the built-in schema of fieldwise-core.
    pub fn builtin() -> CaseGen<'static> {
        CaseGen::new(fieldwise_core::schema::builtin())
    }

    /// How many of the workload kinds the schema knows.
    pub fn kind_count(&self) -> usize {
        self.kinds.len()
    }

    /// A kind, an object of it, and a generator positioned for further edits.
    fn object(&self, rng: &mut Rng) -> Option<(Gvk, TypeId, Value, ObjectGen<'s>)> {
        let (gvk, ty) = rng.pick(&self.kinds)?.clone();
        let mut gen = ObjectGen::new(self.schema, Knobs::default());
        let obj = gen.object(rng, &gvk)?;
        Some((gvk, ty, obj, gen))
    }

    /// An edited copy of `obj`, edited lightly or heavily.
    fn edit(rng: &mut Rng, gen: &mut ObjectGen<'s>, obj: &Value, ty: TypeId) -> Value {
        let rate = [3, 6, 12, 25][rng.below(4)];
        Mutator::new(gen, rate).mutate(rng, obj, Some(ty), 0)
    }

    /// `json_patch.apply`: an object and operations aimed at its paths.
    pub fn json_patch_apply(&self, rng: &mut Rng) -> Option<Value> {
        let (_, _, doc, _) = self.object(rng)?;
        let patch = patches::json_patch(rng, &doc);
        Some(json!({"op": "json_patch.apply", "doc": doc, "patch": patch}))
    }

    /// `merge_patch.apply`: an object and a merge patch towards an edit of it.
    pub fn merge_patch_apply(&self, rng: &mut Rng) -> Option<Value> {
        let (_, ty, doc, mut gen) = self.object(rng)?;
        let modified = Self::edit(rng, &mut gen, &doc, ty);
        let patch = patches::merge_patch(rng, &doc, &modified);
        Some(json!({"op": "merge_patch.apply", "doc": doc, "patch": patch}))
    }

    /// `merge_patch.create_two_way`: an object and an edit of it.
    pub fn merge_patch_two_way(&self, rng: &mut Rng) -> Option<Value> {
        let (_, ty, original, mut gen) = self.object(rng)?;
        let modified = Self::edit(rng, &mut gen, &original, ty);
        Some(json!({"op": "merge_patch.create_two_way", "original": original, "modified": modified}))
    }

    /// The (original, modified, current) triple of a client-side apply: the
    /// last applied object, the new configuration, and the live object that
    /// others have changed since.
    fn triple(&self, rng: &mut Rng) -> Option<(Gvk, Value, Value, Value)> {
        let (gvk, ty, original, mut gen) = self.object(rng)?;
        let modified = Self::edit(rng, &mut gen, &original, ty);
        let base = if rng.percent(70) { &original } else { &modified };
        let current = Self::edit(rng, &mut gen, base, ty);
        Some((gvk, original, modified, current))
    }

    /// `merge_patch.create_three_way`.
    pub fn merge_patch_three_way(&self, rng: &mut Rng) -> Option<Value> {
        let (_, original, modified, current) = self.triple(rng)?;
        Some(
            json!({"op": "merge_patch.create_three_way", "original": original, "modified": modified, "current": current}),
        )
    }

    /// `strategic.apply`: an object and a strategic patch towards an edit of it.
    pub fn strategic_apply(&self, rng: &mut Rng) -> Option<Value> {
        let (gvk, ty, original, mut gen) = self.object(rng)?;
        let modified = Self::edit(rng, &mut gen, &original, ty);
        let patch = StrategicPatcher::new(self.schema).patch(rng, &original, &modified, ty);
        Some(json!({"op": "strategic.apply", "gvk": gvk_json(&gvk), "original": original, "patch": patch}))
    }

    /// `strategic.create_two_way`.
    pub fn strategic_two_way(&self, rng: &mut Rng) -> Option<Value> {
        let (gvk, ty, original, mut gen) = self.object(rng)?;
        let modified = Self::edit(rng, &mut gen, &original, ty);
        Some(
            json!({"op": "strategic.create_two_way", "gvk": gvk_json(&gvk), "original": original, "modified": modified}),
        )
    }

    /// `strategic.create_three_way`. Without overwrite, the live object is often
    /// changed on the same fields as the new configuration, so that conflict
    /// detection is compared too.
    pub fn strategic_three_way(&self, rng: &mut Rng) -> Option<Value> {
        let (gvk, original, modified, mut current) = self.triple(rng)?;
        let overwrite = rng.percent(50);
        if !overwrite && rng.percent(60) {
            contend(rng, &original, &modified, &mut current);
        }
        Some(json!({
            "op": "strategic.create_three_way", "gvk": gvk_json(&gvk), "original": original,
            "modified": modified, "current": current, "overwrite": overwrite
        }))
    }

    /// `fieldpath.from_value`: an object of a kind.
    pub fn fieldpath_from_value(&self, rng: &mut Rng) -> Option<Value> {
        let (gvk, _, object, _) = self.object(rng)?;
        Some(json!({"op": "fieldpath.from_value", "gvk": gvk_json(&gvk), "object": object}))
    }
}

/// Changes `current` on some of the fields `modified` changes from `original`,
/// to other values, as someone editing the live object at the same time would.
fn contend(rng: &mut Rng, original: &Value, modified: &Value, current: &mut Value) {
    match (original, modified, current) {
        (Value::Object(before), Value::Object(after), Value::Object(live)) => {
            for (key, wanted) in after {
                let old = before.get(key).unwrap_or(&Value::Null);
                if old == wanted {
                    continue;
                }
                let Some(slot) = live.get_mut(key) else {
                    if rng.percent(30) {
                        live.insert(key.clone(), values::any_scalar(rng));
                    }
                    continue;
                };
                if wanted.is_object() || wanted.is_array() {
                    contend(rng, old, wanted, slot);
                } else if rng.percent(50) {
                    *slot = values::any_scalar(rng);
                }
            }
        }
        (Value::Array(before), Value::Array(after), Value::Array(live)) => {
            for (i, wanted) in after.iter().enumerate().take(live.len()) {
                contend(rng, before.get(i).unwrap_or(&Value::Null), wanted, &mut live[i]);
            }
        }
        _ => {}
    }
}

/// `fieldpath.roundtrip`: a FieldsV1 text.
pub fn fieldpath_roundtrip(rng: &mut Rng) -> Value {
    json!({"op": "fieldpath.roundtrip", "fieldsV1": fields_v1::text(rng)})
}

/// `fieldpath.set_op`: two overlapping sets and an operation.
pub fn fieldpath_set_op(rng: &mut Rng) -> Value {
    let a = fields_v1::set_tree(rng, 4);
    let b = if rng.percent(70) { fields_v1::overlapping(rng, &a) } else { fields_v1::set_tree(rng, 4) };
    let op = ["union", "intersection", "difference"][rng.below(3)];
    json!({"op": "fieldpath.set_op", "a": a.to_string(), "b": b.to_string(), "set_op": op})
}

/// A Gvk in the oracle's form.
pub fn gvk_json(gvk: &Gvk) -> Value {
    json!({"group": gvk.group, "version": gvk.version, "kind": gvk.kind})
}

/// A Gvk read back from a case.
pub fn gvk_of(case: &Value) -> Option<Gvk> {
    let g = case.get("gvk")?;
    Some(Gvk::new(g.get("group")?.as_str()?, g.get("version")?.as_str()?, g.get("kind")?.as_str()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_schema;

    #[test]
    fn every_op_generates_from_the_sample_schema() {
        let schema = sample_schema::workloads();
        let gen = CaseGen::new(&schema);
        let mut rng = Rng::new(21);
        for _ in 0..50 {
            for case in [
                gen.json_patch_apply(&mut rng),
                gen.merge_patch_apply(&mut rng),
                gen.merge_patch_two_way(&mut rng),
                gen.merge_patch_three_way(&mut rng),
                gen.strategic_apply(&mut rng),
                gen.strategic_two_way(&mut rng),
                gen.strategic_three_way(&mut rng),
                gen.fieldpath_from_value(&mut rng),
            ] {
                let case = case.expect("sample schema has pods and deployments");
                assert!(case["op"].is_string());
            }
            assert!(fieldpath_set_op(&mut rng)["a"].is_string());
        }
    }
}
