//! A document's node tree as the JSON value kubectl makes of it: go-yaml v2's
//! decoder into `interface{}`, then sigs.k8s.io/yaml's conversion to JSON.
//!
//! Why it mirrors the Go step by step: the results depend on go-yaml's order
//! of work. A merge (`<<`) writes into the map at the point it appears, so keys
//! before it are overridden by it and keys after it override it; of a list of
//! merged maps the first wins; duplicate keys keep the last value; keys are
//! typed (`1`, `0x1` and `1.0` are the key 1, `y` and `yes` the key `true`)
//! and only become strings at the end; and go-yaml's guard against alias
//! bombs counts every node it decodes.
//!
//! Keys keep the order in which they first appear (Go's maps have none).

use super::compose::{Body, Mark, NodeId, Tree};
use super::resolve::{decode_scalar, tag, Scalar};
use crate::go_format;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Why a document cannot become JSON, and at which node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DecodeError(Box<(Mark, String)>);

impl DecodeError {
    pub fn mark(&self) -> Mark {
        self.0 .0
    }

    pub fn problem(&self) -> &str {
        &self.0 .1
    }
}

/// The JSON value of `tree`'s document (`null` for no document), with values
/// nested at most `max_depth` levels deep once aliases are expanded.
pub(super) fn decode_document(tree: &Tree, max_depth: usize) -> Result<Value, DecodeError> {
    let Some(root) = tree.root else { return Ok(Value::Null) };
    let mut decoder = Decoder {
        tree,
        max_depth,
        decode_count: 0,
        alias_count: 0,
        alias_depth: 0,
        active: vec![false; tree.nodes.len()],
    };
    decoder.count(root)?; // the document node
    decoder.count(root)?; // its one child
    let decoded = decoder.node(root, 0)?;
    decoder.to_json(decoded, root)
}

/// A node as go-yaml v2 decodes it into `interface{}`, before sigs.k8s.io/yaml
/// converts it: keys typed, NaN and infinities still possible (a value that a
/// later duplicate key replaces never reaches the conversion, which is where
/// kubectl fails on them).
enum GoValue {
    Scalar(Scalar),
    Sequence(Vec<(NodeId, GoValue)>),
    Mapping(GoMap),
}

struct Decoder<'t> {
    tree: &'t Tree,
    max_depth: usize,
    decode_count: usize,
    alias_count: usize,
    alias_depth: usize,
    /// Alias nodes being expanded: meeting one again means it contains itself.
    active: Vec<bool>,
}

impl Decoder<'_> {
    fn mark(&self, id: NodeId) -> Mark {
        self.tree.nodes[id].mark
    }

    #[cold]
    #[inline(never)]
    fn fail(&self, id: NodeId, problem: impl Into<String>) -> DecodeError {
        DecodeError(Box::new((self.mark(id), problem.into())))
    }

    /// go-yaml v2's accounting at the top of `unmarshal`, and its refusal of
    /// documents that are mostly alias expansion.
    fn count(&mut self, id: NodeId) -> Result<(), DecodeError> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64 > allowed_alias_ratio(self.decode_count)
        {
            return Err(self.fail(id, "document contains excessive aliasing"));
        }
        Ok(())
    }

    /// Decodes a node whose `unmarshal` call has been counted.
    fn node(&mut self, id: NodeId, depth: usize) -> Result<GoValue, DecodeError> {
        match &self.tree.nodes[id].body {
            Body::Scalar { tag, value, plain_implicit } => decode_scalar(tag.as_deref(), *plain_implicit, value)
                .map(GoValue::Scalar)
                .map_err(|problem| self.fail(id, problem)),
            Body::Alias { .. } => self.alias(id, |decoder, target| decoder.node(target, depth)),
            Body::Sequence { items } => self.sequence(id, items, depth),
            Body::Mapping { .. } => self.mapping(id, depth),
        }
    }

    #[inline(never)]
    fn sequence(&mut self, id: NodeId, items: &[NodeId], depth: usize) -> Result<GoValue, DecodeError> {
        self.enter(id, depth)?;
        let mut values = Vec::with_capacity(items.len());
        for &item in items {
            self.count(item)?;
            values.push((item, self.node(item, depth + 1)?));
        }
        Ok(GoValue::Sequence(values))
    }

    #[inline(never)]
    fn mapping(&mut self, id: NodeId, depth: usize) -> Result<GoValue, DecodeError> {
        self.enter(id, depth)?;
        let mut map = GoMap::default();
        self.fill(id, &mut map, depth)?;
        Ok(GoValue::Mapping(map))
    }

    /// A collection at `depth` (0 for the top) opens level `depth + 1`.
    fn enter(&self, id: NodeId, depth: usize) -> Result<(), DecodeError> {
        if depth >= self.max_depth {
            return Err(self.too_deep(id));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self, id: NodeId) -> DecodeError {
        self.fail(id, format!("values are nested more than {} levels deep", self.max_depth))
    }

    /// Expands the alias node `id`: go-yaml's `decoder.alias`.
    fn alias<T>(
        &mut self,
        id: NodeId,
        expand: impl FnOnce(&mut Self, NodeId) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let Body::Alias { anchor, target } = &self.tree.nodes[id].body else {
            return Err(self.fail(id, "not an alias"));
        };
        if self.active[id] {
            return Err(self.contains_itself(id, anchor));
        }
        let target = *target;
        self.active[id] = true;
        self.alias_depth += 1;
        let result = self.count(target).and_then(|()| expand(self, target));
        self.alias_depth -= 1;
        self.active[id] = false;
        result
    }

    #[cold]
    #[inline(never)]
    fn contains_itself(&self, id: NodeId, anchor: &str) -> DecodeError {
        self.fail(id, format!("anchor '{anchor}' value contains itself"))
    }

    /// Decodes the entries of mapping `id` into `map`: go-yaml's `decoder.mapping`.
    fn fill(&mut self, id: NodeId, map: &mut GoMap, depth: usize) -> Result<(), DecodeError> {
        let Body::Mapping { entries } = &self.tree.nodes[id].body else { return Err(self.fail(id, "not a mapping")) };
        for pair in entries.chunks(2) {
            let [key, value] = *pair else { break };
            if self.is_merge(key) {
                self.merge(value, map, depth)?;
                continue;
            }
            self.count(key)?;
            let GoValue::Scalar(key_value) = self.node(key, depth + 1)? else {
                return Err(self.fail(key, "invalid map key: a mapping or a sequence cannot be a key"));
            };
            self.count(value)?;
            let decoded = self.node(value, depth + 1)?;
            map.insert(key_value, key, (value, decoded));
        }
        Ok(())
    }

    /// go-yaml's `isMerge`: a `<<` key that is plain or tagged `!!merge`.
    fn is_merge(&self, id: NodeId) -> bool {
        matches!(&self.tree.nodes[id].body, Body::Scalar { tag, value, plain_implicit }
            if value == "<<" && (*plain_implicit || tag.as_deref() == Some(tag::MERGE)))
    }

    /// go-yaml's `decoder.merge`: a mapping, an alias of one, or a sequence of
    /// those (the earlier ones winning) written into `map`.
    fn merge(&mut self, id: NodeId, map: &mut GoMap, depth: usize) -> Result<(), DecodeError> {
        const WANT_MAP: &str = "map merge requires map or sequence of maps as the value";
        match &self.tree.nodes[id].body {
            Body::Mapping { .. } => {
                self.count(id)?;
                self.fill(id, map, depth)
            }
            Body::Alias { target, .. } => {
                if !matches!(self.tree.nodes[*target].body, Body::Mapping { .. }) {
                    return Err(self.fail(id, WANT_MAP));
                }
                self.count(id)?;
                self.alias(id, |decoder, target| decoder.fill(target, map, depth))
            }
            Body::Sequence { items } => {
                for &item in items.iter().rev() {
                    match &self.tree.nodes[item].body {
                        Body::Alias { target, .. } if matches!(self.tree.nodes[*target].body, Body::Mapping { .. }) => {
                            self.count(item)?;
                            self.alias(item, |decoder, target| decoder.fill(target, map, depth))?;
                        }
                        Body::Mapping { .. } => {
                            self.count(item)?;
                            self.fill(item, map, depth)?;
                        }
                        _ => return Err(self.fail(item, WANT_MAP)),
                    }
                }
                Ok(())
            }
            _ => Err(self.fail(id, WANT_MAP)),
        }
    }

    /// sigs.k8s.io/yaml's `convertToJSONableObject` and `json.Marshal` of the
    /// decoded document (node `id`): keys become strings, floats must be
    /// finite. Iterative, so deep documents need no stack.
    fn to_json(&self, decoded: GoValue, id: NodeId) -> Result<Value, DecodeError> {
        enum Open {
            Array(std::vec::IntoIter<(NodeId, GoValue)>, Vec<Value>),
            Object(std::vec::IntoIter<(Scalar, NodeId, (NodeId, GoValue))>, Map<String, Value>, String),
        }
        let mut open: Vec<Open> = Vec::new();
        let mut next = (id, decoded);
        loop {
            let (id, decoded) = next;
            let mut value = match decoded {
                GoValue::Scalar(scalar) => self.scalar_json(scalar, id)?,
                GoValue::Sequence(items) => {
                    let mut items = items.into_iter();
                    match items.next() {
                        Some(first) => {
                            open.push(Open::Array(items, Vec::new()));
                            next = first;
                            continue;
                        }
                        None => Value::Array(Vec::new()),
                    }
                }
                GoValue::Mapping(map) => {
                    let mut entries = map.entries.into_iter();
                    match entries.next() {
                        Some((key, key_node, first)) => {
                            let key = self.key_text(key, key_node)?;
                            open.push(Open::Object(entries, Map::new(), key));
                            next = first;
                            continue;
                        }
                        None => Value::Object(Map::new()),
                    }
                }
            };
            // `value` is complete: add it to its parent, then move on to the
            // parent's next child, closing the parents that have none left.
            next = loop {
                match open.last_mut() {
                    None => return Ok(value),
                    Some(Open::Array(items, values)) => {
                        values.push(value);
                        if let Some(item) = items.next() {
                            break item;
                        }
                        value = Value::Array(std::mem::take(values));
                    }
                    Some(Open::Object(entries, object, key)) => {
                        // Two keys of different Go types with the same text (`1`
                        // and `"1"`) meet here; kubectl keeps either at random,
                        // this keeps the later one.
                        object.insert(std::mem::take(key), value);
                        if let Some((next_key, key_node, entry)) = entries.next() {
                            *key = self.key_text(next_key, key_node)?;
                            break entry;
                        }
                        value = Value::Object(std::mem::take(object));
                    }
                }
                open.pop();
            };
        }
    }

    /// A scalar value as JSON: `json.Marshal` refuses NaN and infinities.
    fn scalar_json(&self, scalar: Scalar, id: NodeId) -> Result<Value, DecodeError> {
        Ok(match scalar {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::from(i),
            Scalar::Uint(u) => Value::from(u),
            Scalar::Str(s) => Value::String(s),
            Scalar::Float(f) => match go_format::json::float_value(f) {
                Some(number) => number,
                None => return Err(self.not_finite(id, f)),
            },
        })
    }

    #[cold]
    fn not_finite(&self, id: NodeId, f: f64) -> DecodeError {
        let shown = if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        self.fail(id, format!("json: unsupported value: {shown} (JSON has no NaN or infinity; quote it)"))
    }

    /// A key's text: sigs.k8s.io/yaml's conversion, which null keys and
    /// integers above `i64::MAX` fail.
    fn key_text(&self, key: Scalar, key_node: NodeId) -> Result<String, DecodeError> {
        match key {
            Scalar::Str(s) => Ok(s),
            Scalar::Int(i) => Ok(i.to_string()),
            Scalar::Bool(b) => Ok(b.to_string()),
            Scalar::Float(f) => Ok(go_float32_key(f)),
            Scalar::Null => Err(self.fail(key_node, "unsupported map key: null (quote the key)")),
            Scalar::Uint(u) => {
                Err(self.fail(key_node, format!("unsupported map key of type uint64: {u} (quote the key)")))
            }
        }
    }
}

/// go-yaml v2's `allowedAliasRatio`.
fn allowed_alias_ratio(decode_count: usize) -> f64 {
    const LOW: usize = 400_000;
    const HIGH: usize = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decode_count - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

/// A map key as go-yaml v2 holds it in `map[interface{}]interface{}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyIdentity {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// The bits of a float, with -0 as 0 (Go's `==`); NaN has no identity.
    Float(u64),
    Str(String),
}

fn identity(key: &Scalar) -> Option<KeyIdentity> {
    Some(match key {
        Scalar::Null => KeyIdentity::Null,
        Scalar::Bool(b) => KeyIdentity::Bool(*b),
        Scalar::Int(i) => KeyIdentity::Int(*i),
        Scalar::Uint(u) => KeyIdentity::Uint(*u),
        Scalar::Float(f) if f.is_nan() => return None,
        Scalar::Float(f) => KeyIdentity::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
        Scalar::Str(s) => KeyIdentity::Str(s.clone()),
    })
}

/// The Go map being decoded: typed keys, the last value of a key wins (and,
/// as Go's runtime does for interface keys, the last spelling of the key).
#[derive(Default)]
struct GoMap {
    /// Key, key node, value node, value.
    entries: Vec<(Scalar, NodeId, (NodeId, GoValue))>,
    index: HashMap<KeyIdentity, usize>,
}

impl GoMap {
    fn insert(&mut self, key: Scalar, key_node: NodeId, value: (NodeId, GoValue)) {
        match identity(&key) {
            Some(id) => match self.index.get(&id) {
                Some(&at) => self.entries[at] = (key, key_node, value),
                None => {
                    self.index.insert(id, self.entries.len());
                    self.entries.push((key, key_node, value));
                }
            },
            None => self.entries.push((key, key_node, value)),
        }
    }
}

/// A float key as sigs.k8s.io/yaml writes it: Go's
/// `strconv.FormatFloat(f, 'g', -1, 32)`, with YAML's names for the specials.
pub(super) fn go_float32_key(f: f64) -> String {
    let single = f as f32;
    if single.is_nan() {
        ".nan".into()
    } else if single.is_infinite() {
        if single > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        }
    } else {
        go_format::fmt::float32_g(single)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_print_as_go_float32() {
        assert_eq!(go_float32_key(1.5), "1.5");
        assert_eq!(go_float32_key(1_000_000.0), "1e+06");
        assert_eq!(go_float32_key(123_456.0), "123456");
        assert_eq!(go_float32_key(1.234_567_891_2), "1.2345679");
        assert_eq!(go_float32_key(-0.0), "-0");
        assert_eq!(go_float32_key(0.0001), "0.0001");
        assert_eq!(go_float32_key(0.00001), "1e-05");
        assert_eq!(go_float32_key(1e300), ".inf");
        assert_eq!(go_float32_key(f64::NAN), ".nan");
        assert_eq!(go_float32_key(1.25e-120), "0");
    }
}
