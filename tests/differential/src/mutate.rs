//! Modified and current versions of an object: the same object with a few
//! fields removed, replaced, added, list items dropped, reordered or inserted,
//! scalars changed. Edits are made through the schema, so added fields and
//! items are of the right type and keyed list items keep their merge key.

use crate::objects::ObjectGen;
use crate::rng::Rng;
use crate::values;
use fieldwise_core::schema::{Field, TypeDef, TypeId};
use serde_json::{Map, Value};

/// Budget of JSON nodes of one added field or item.
const ADDED_NODES: usize = 12;

/// Edits objects through their schema.
pub struct Mutator<'g, 's> {
    gen: &'g mut ObjectGen<'s>,
    /// Percent chance of an edit at each position.
    rate: u32,
}

impl<'g, 's> Mutator<'g, 's> {
    /// A mutator that edits each position with probability `rate`%.
    pub fn new(gen: &'g mut ObjectGen<'s>, rate: u32) -> Self {
        Mutator { gen, rate }
    }

    /// A changed copy of `value`, whose type is `ty` (`None` when unknown).
    pub fn mutate(&mut self, rng: &mut Rng, value: &Value, ty: Option<TypeId>, depth: usize) -> Value {
        let def = ty.map(|t| self.gen.schema().get(t).clone());
        match (value, def) {
            (Value::Object(map), Some(TypeDef::Struct(st))) => {
                let fields: Vec<(String, Field)> = st.fields.into_iter().collect();
                self.object(
                    rng,
                    map,
                    depth,
                    |name| fields.iter().find(|(n, _)| n == name).map(|(_, f)| f.clone()),
                    &fields,
                )
            }
            (Value::Object(map), Some(TypeDef::Map(mt))) => {
                let field = plain_field(mt.values);
                let addable = [(values::map_key(rng), plain_field(mt.values))];
                self.object(rng, map, depth, |_| Some(field.clone()), &addable)
            }
            (Value::Object(map), _) => self.object(rng, map, depth, |_| None, &[]),
            (Value::Array(items), Some(TypeDef::List(lt))) => self.list(rng, items, Some(lt.items), None, depth),
            (Value::Array(items), _) => self.list(rng, items, None, None, depth),
            (scalar, Some(TypeDef::Scalar(_))) if rng.percent(self.rate) => {
                self.gen.set_budget(1);
                ty.map(|t| self.gen.value(rng, t, depth)).unwrap_or_else(|| scalar.clone())
            }
            (_, _) if rng.percent(self.rate) => values::any_scalar(rng),
            (scalar, _) => scalar.clone(),
        }
    }

    /// Edits an object whose field `name` has the type `field_of(name)`;
    /// `addable` lists fields that may be added.
    fn object(
        &mut self,
        rng: &mut Rng,
        map: &Map<String, Value>,
        depth: usize,
        field_of: impl Fn(&str) -> Option<Field>,
        addable: &[(String, Field)],
    ) -> Value {
        let mut out = Map::new();
        for (key, value) in map {
            let field = field_of(key);
            if key == "apiVersion" || key == "kind" {
                out.insert(key.clone(), value.clone());
            } else if rng.percent(self.rate) {
                continue; // removed
            } else if rng.percent(self.rate) {
                out.insert(key.clone(), self.fresh(rng, field.as_ref(), depth + 1));
            } else {
                let edited = match (&field, value) {
                    (Some(f), Value::Array(items)) => {
                        let items_ty = self.gen.schema().items(f.ty);
                        self.list(rng, items, items_ty, f.merge_key.as_deref(), depth + 1)
                    }
                    _ => self.mutate(rng, value, field.as_ref().map(|f| f.ty), depth + 1),
                };
                out.insert(key.clone(), edited);
            }
        }
        if !addable.is_empty() && rng.percent(self.rate * 2) {
            if let Some((name, field)) = rng.pick(addable) {
                if name != "apiVersion" && name != "kind" {
                    let value = self.fresh(rng, Some(field), depth + 1);
                    out.insert(name.clone(), value);
                }
            }
        }
        Value::Object(out)
    }

    /// Edits a list: drops, swaps, inserts items and edits the rest.
    fn list(
        &mut self,
        rng: &mut Rng,
        items: &[Value],
        items_ty: Option<TypeId>,
        merge_key: Option<&str>,
        depth: usize,
    ) -> Value {
        let mut out: Vec<Value> = Vec::with_capacity(items.len() + 1);
        for item in items {
            if !rng.percent(self.rate) {
                out.push(self.mutate(rng, item, items_ty, depth + 1));
            }
        }
        if out.len() >= 2 && rng.percent(self.rate * 2) {
            let (i, j) = (rng.below(out.len()), rng.below(out.len()));
            out.swap(i, j);
        }
        if rng.percent(self.rate * 2) {
            let mut item = match items_ty {
                Some(ty) => {
                    self.gen.set_budget(ADDED_NODES);
                    self.gen.value(rng, ty, depth + 1)
                }
                None => values::loose(rng, 1),
            };
            if let (Some(key), Value::Object(map)) = (merge_key, &mut item) {
                map.insert(key.to_string(), key_like(rng, items.first().and_then(|i| i.get(key))));
            }
            let at = rng.below(out.len() + 1);
            out.insert(at, item);
        }
        Value::Array(out)
    }

    /// A new value for a field (or an untyped position).
    fn fresh(&mut self, rng: &mut Rng, field: Option<&Field>, depth: usize) -> Value {
        match field {
            Some(f) => {
                self.gen.set_budget(ADDED_NODES);
                self.gen.field_value(rng, f, depth)
            }
            None => values::loose(rng, 1),
        }
    }
}

/// A field of type `ty` with no strategic metadata (map values).
fn plain_field(ty: TypeId) -> Field {
    Field { ty, patch_strategy: Default::default(), merge_key: None, default: None }
}

/// A merge key value shaped like an existing one (number or string), from a small pool.
fn key_like(rng: &mut Rng, existing: Option<&Value>) -> Value {
    match existing {
        Some(Value::Number(_)) => serde_json::json!([80, 443, 8080, 9090][rng.below(4)]),
        _ => serde_json::json!(["a", "b", "web", "new"][rng.below(4)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::Knobs;
    use crate::sample_schema;
    use fieldwise_core::schema::Gvk;

    #[test]
    fn mutation_changes_some_objects_and_keeps_kind() {
        let schema = sample_schema::workloads();
        let gvk = Gvk::new("apps", "v1", "Deployment");
        let root = schema.root(&gvk);
        let mut gen = ObjectGen::new(&schema, Knobs::default());
        let mut changed = 0;
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let obj = gen.object(&mut rng, &gvk).expect("known kind");
            let modified = Mutator::new(&mut gen, 10).mutate(&mut rng, &obj, root, 0);
            assert_eq!(modified["kind"], "Deployment");
            changed += usize::from(modified != obj);
        }
        assert!(changed > 120, "only {changed} of 200 objects changed");
    }
}
