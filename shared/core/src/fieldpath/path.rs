//! A path into an object: a sequence of [`PathElement`]s from the root.

use std::fmt;

use super::element::PathElement;

/// A path from an object's root to one field, e.g. `.spec.containers[name="app"].image`.
///
/// The empty path is the object itself, which no manager ever owns.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    /// The empty path (the object itself).
    pub fn root() -> Self {
        Path(Vec::new())
    }

    /// A path of field names, e.g. `Path::fields(["spec", "replicas"])`.
    pub fn fields<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        Path(names.into_iter().map(|n| PathElement::Field(n.into())).collect())
    }

    /// This path with one more element.
    pub fn child(&self, element: PathElement) -> Self {
        let mut elements = self.0.clone();
        elements.push(element);
        Path(elements)
    }

    /// The elements of the path.
    pub fn elements(&self) -> &[PathElement] {
        &self.0
    }

    /// How many elements the path has.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether this is the empty path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `prefix` is a (not necessarily strict) prefix of this path.
    pub fn starts_with(&self, prefix: &[PathElement]) -> bool {
        self.0.len() >= prefix.len() && self.0.iter().zip(prefix).all(|(a, b)| a == b)
    }
}

impl From<Vec<PathElement>> for Path {
    fn from(elements: Vec<PathElement>) -> Self {
        Path(elements)
    }
}

impl fmt::Display for Path {
    /// Upstream's `Path.String()`: the concatenation of each element's text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            write!(f, "{element}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn displays_like_upstream() {
        let p = Path::fields(["spec", "template", "spec", "containers"])
            .child(PathElement::key([("name", json!("nginx"))]))
            .child(PathElement::field("image"));
        assert_eq!(p.to_string(), ".spec.template.spec.containers[name=\"nginx\"].image");
        let q = Path::fields(["spec", "ports"])
            .child(PathElement::key([("protocol", json!("TCP")), ("port", json!(80.0))]))
            .child(PathElement::field("targetPort"));
        assert_eq!(q.to_string(), ".spec.ports[port=80,protocol=\"TCP\"].targetPort");
        let r = Path::fields(["metadata", "finalizers"]).child(PathElement::value(json!("a/b")));
        assert_eq!(r.to_string(), ".metadata.finalizers[=\"a/b\"]");
        assert_eq!(Path::fields(["x"]).child(PathElement::Index(3)).to_string(), ".x[3]");
    }

    #[test]
    fn prefixes() {
        let p = Path::fields(["spec", "replicas"]);
        assert!(p.starts_with(Path::fields(["spec"]).elements()));
        assert!(!p.starts_with(Path::fields(["status"]).elements()));
        assert!(Path::root().is_empty());
    }
}
