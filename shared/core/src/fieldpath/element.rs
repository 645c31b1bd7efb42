//! One step of a field path: a field name, a list-map key, a set member or a list index.
//!
//! The order of path elements is structured-merge-diff's `PathElement.Compare`:
//! field names first (byte order), then keys, then values, then indices. It
//! decides the order of keys in the FieldsV1 encoding, so it is exactly upstream's.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::Value;

use super::order::compare_values;

/// The key of an entry of a list map (`x-kubernetes-list-type: map`): each key
/// field's name and value, sorted by field name.
///
/// Keys are shared, not copied, when cloned: a set holds the key of every list-map
/// entry it names twice (the entry itself and the fields under it), and paths repeat it.
#[derive(Debug, Clone)]
pub struct KeyFields(Arc<[(String, Value)]>);

impl KeyFields {
    /// Builds a key from name/value pairs, sorting them by name (stable, like upstream's `FieldList.Sort`).
    pub fn new(fields: impl IntoIterator<Item = (String, Value)>) -> Self {
        let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
        fields.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        KeyFields(fields.into())
    }

    /// A key of one field, the usual case (`name`), built with one allocation.
    pub(crate) fn single(name: String, value: Value) -> Self {
        KeyFields(Arc::new([(name, value)]))
    }

    /// The key fields, sorted by name.
    pub fn fields(&self) -> &[(String, Value)] {
        &self.0
    }

    /// The value of one key field.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Whether a list entry (an object) carries exactly these key values, compared as JSON values.
    pub fn matches(&self, entry: &Value) -> bool {
        self.0.iter().all(|(name, want)| entry.get(name).is_some_and(|got| super::order::values_equal(got, want)))
    }

    /// Upstream's `FieldList.Compare`: field by field (name, then value); a prefix sorts first.
    fn compare(&self, other: &KeyFields) -> Ordering {
        for ((an, av), (bn, bv)) in self.0.iter().zip(other.0.iter()) {
            let c = an.as_bytes().cmp(bn.as_bytes()).then_with(|| compare_values(av, bv));
            if c != Ordering::Equal {
                return c;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

/// One step of a [`Path`](super::Path) into an object.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A field of an object or a key of a map (`f:name` in FieldsV1).
    Field(String),
    /// The entry of a list map with these key values (`k:{"name":"x"}`).
    Key(KeyFields),
    /// The member of a set list with this value (`v:"x"`).
    Value(Value),
    /// A list position (`i:0`); only seen in old or hand-written data.
    Index(i64),
}

impl PathElement {
    /// A field-name element.
    pub fn field(name: impl Into<String>) -> Self {
        PathElement::Field(name.into())
    }

    /// A list-map key element; the pairs are sorted by name.
    pub fn key<N: Into<String>>(fields: impl IntoIterator<Item = (N, Value)>) -> Self {
        PathElement::Key(KeyFields::new(fields.into_iter().map(|(n, v)| (n.into(), v))))
    }

    /// A set-member element.
    pub fn value(value: Value) -> Self {
        PathElement::Value(value)
    }

    /// The field name, if this is a field element.
    pub fn as_field(&self) -> Option<&str> {
        match self {
            PathElement::Field(name) => Some(name),
            _ => None,
        }
    }

    /// Rank of the variant in upstream's order.
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => a.compare(b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Equality is upstream's: numbers in keys and values compare numerically (`80 == 80.0`).
impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variants_are_ordered_field_key_value_index() {
        let ordered = [
            PathElement::field("a"),
            PathElement::field("b"),
            PathElement::key([("name", json!("a"))]),
            PathElement::value(json!("a")),
            PathElement::Index(0),
        ];
        for w in ordered.windows(2) {
            assert!(w[0] < w[1], "{:?} < {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn field_names_sort_by_bytes() {
        assert!(PathElement::field("Z") < PathElement::field("a"));
        assert!(PathElement::field("a") < PathElement::field("a.b"));
    }

    #[test]
    fn keys_are_sorted_by_name_and_compared_field_by_field() {
        let k = PathElement::key([("protocol", json!("TCP")), ("containerPort", json!(80))]);
        let PathElement::Key(fields) = &k else { panic!("not a key") };
        assert_eq!(fields.fields()[0].0, "containerPort");
        let shorter = PathElement::key([("containerPort", json!(80))]);
        assert!(shorter < k);
        assert!(PathElement::key([("containerPort", json!(80.0)), ("protocol", json!("TCP"))]) == k);
        assert!(fields.matches(&json!({"containerPort": 80, "protocol": "TCP", "name": "http"})));
        assert!(!fields.matches(&json!({"containerPort": "80", "protocol": "TCP"})));
    }
}
