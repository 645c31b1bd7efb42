//! A set of field paths, stored as a trie, with upstream's set algebra.
//!
//! A [`Set`] node holds `members` (path elements that are themselves in the
//! set) and `children` (path elements under which deeper paths are in the
//! set). An element can be both: `f:labels` owned as a whole *and* `f:labels.f:app`.
//! This is the shape of FieldsV1, where `"."` marks "this node itself".

use super::element::PathElement;
use super::path::Path;

/// A set of field paths, as structured-merge-diff's `fieldpath.Set`.
///
/// Both vectors are kept sorted by [`PathElement`]'s order and child sets are never empty,
/// so derived equality is set equality.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Set::default()
    }

    /// A set holding these paths.
    pub fn from_paths<'p>(paths: impl IntoIterator<Item = &'p Path>) -> Self {
        let mut set = Set::new();
        for p in paths {
            set.insert(p.elements());
        }
        set
    }

    /// Elements directly in this node, sorted.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// Elements with deeper paths in the set, and their subsets, sorted.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// Adds one path. Its parents are not added. The empty path is ignored: nobody owns the whole object.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else { return };
        let mut node = self;
        for pe in parents {
            node = node.descend(pe);
        }
        if let Err(at) = node.members.binary_search(last) {
            node.members.insert(at, last.clone());
        }
    }

    /// Adds `pe` as a member of this node (the path of length one).
    pub fn insert_member(&mut self, pe: PathElement) {
        // Elements usually come in order (FieldsV1 documents are written sorted): append.
        if self.members.last().is_none_or(|last| *last < pe) {
            self.members.push(pe);
        } else if let Err(at) = self.members.binary_search(&pe) {
            self.members.insert(at, pe);
        }
    }

    /// The child node for `pe`, created if missing. Callers must leave it non-empty.
    pub(crate) fn descend(&mut self, pe: &PathElement) -> &mut Set {
        let at = match self.children.binary_search_by(|(c, _)| c.cmp(pe)) {
            Ok(at) => at,
            Err(at) => {
                self.children.insert(at, (pe.clone(), Set::new()));
                at
            }
        };
        &mut self.children[at].1
    }

    /// Sets the subtree under `pe`, replacing any; an empty subtree removes the child.
    pub(crate) fn set_child(&mut self, pe: PathElement, subset: Set) {
        if self.children.last().is_none_or(|(last, _)| *last < pe) {
            if !subset.is_empty() {
                self.children.push((pe, subset));
            }
            return;
        }
        match self.children.binary_search_by(|(c, _)| c.cmp(&pe)) {
            Ok(at) if subset.is_empty() => {
                self.children.remove(at);
            }
            Ok(at) => self.children[at].1 = subset,
            Err(_) if subset.is_empty() => {}
            Err(at) => self.children.insert(at, (pe, subset)),
        }
    }

    /// Whether the path is in the set (as a member, not merely as a prefix of one).
    pub fn has(&self, path: &[PathElement]) -> bool {
        let Some((last, parents)) = path.split_last() else { return false };
        let mut node = self;
        for pe in parents {
            match node.child(pe) {
                Some(next) => node = next,
                None => return false,
            }
        }
        node.members.binary_search(last).is_ok()
    }

    /// The subset under `pe`, if any path starts with it.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.binary_search_by(|(c, _)| c.cmp(pe)).ok().map(|at| &self.children[at].1)
    }

    /// The paths under `pe`, without `pe` (upstream's `WithPrefix`); empty when there are none.
    pub fn with_prefix(&self, pe: &PathElement) -> Set {
        self.child(pe).cloned().unwrap_or_default()
    }

    /// The paths under a longer prefix, without it: `set.under(&Path::fields(["spec"]))` is "everything under spec".
    pub fn under(&self, prefix: &Path) -> Set {
        let mut node = self;
        for pe in prefix.elements() {
            match node.child(pe) {
                Some(next) => node = next,
                None => return Set::new(),
            }
        }
        node.clone()
    }

    /// This set with every path prefixed by `prefix`.
    pub fn prefixed(&self, prefix: &Path) -> Set {
        let Some((last, parents)) = prefix.elements().split_last() else { return self.clone() };
        if self.is_empty() {
            return Set::new();
        }
        let mut out = Set::new();
        let mut node = &mut out;
        for pe in parents {
            node = node.descend(pe);
        }
        node.children.push((last.clone(), self.clone()));
        out
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, s)| s.is_empty())
    }

    /// How many paths the set holds.
    pub fn len(&self) -> usize {
        self.members.len() + self.children.iter().map(|(_, s)| s.len()).sum::<usize>()
    }

    /// Paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        Set {
            members: merge_sorted(&self.members, &other.members, true, true, true),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.union(b)),
                (a, b) => a.or(b).cloned(),
            }),
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        Set {
            members: merge_sorted(&self.members, &other.members, false, true, false),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.intersection(b)),
                _ => None,
            }),
        }
    }

    /// Paths in `self` and not in `other`. Removing a path does not remove the paths under it.
    pub fn difference(&self, other: &Set) -> Set {
        Set {
            members: merge_sorted(&self.members, &other.members, true, false, false),
            children: zip_children(&self.children, &other.children, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.difference(b)),
                (a, _) => a.cloned(),
            }),
        }
    }

    /// Paths in `self` that are neither in `other` nor under a path of `other` (upstream's `RecursiveDifference`).
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let children = self
            .children
            .iter()
            .filter(|(pe, _)| other.members.binary_search(pe).is_err())
            .filter_map(|(pe, sub)| {
                let rest = match other.child(pe) {
                    Some(o) => sub.recursive_difference(o),
                    None => sub.clone(),
                };
                (!rest.is_empty()).then(|| (pe.clone(), rest))
            })
            .collect();
        Set { members: merge_sorted(&self.members, &other.members, true, false, false), children }
    }

    /// Only the leaves: paths with no other path of the set under them.
    pub fn leaves(&self) -> Set {
        let members = self.members.iter().filter(|m| self.child(m).is_none()).cloned().collect();
        let children = self.children.iter().map(|(pe, s)| (pe.clone(), s.leaves())).collect();
        Set { members, children }
    }

    /// Every path, in upstream's order: a node's members first, then each child's paths.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    /// Iterates over every path in upstream's order (see [`Set::paths`]).
    pub fn iter(&self) -> impl Iterator<Item = Path> {
        self.paths().into_iter()
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(Path(p));
        }
        for (pe, sub) in &self.children {
            prefix.push(pe.clone());
            sub.collect_paths(prefix, out);
            prefix.pop();
        }
    }
}

impl FromIterator<Path> for Set {
    fn from_iter<I: IntoIterator<Item = Path>>(iter: I) -> Self {
        let mut set = Set::new();
        for p in iter {
            set.insert(p.elements());
        }
        set
    }
}

/// Merges two sorted element lists, keeping elements only in `a`, in both, or only in `b` as asked.
fn merge_sorted(a: &[PathElement], b: &[PathElement], only_a: bool, both: bool, only_b: bool) -> Vec<PathElement> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match ord {
            std::cmp::Ordering::Less => {
                if only_a {
                    out.push(a[i].clone());
                }
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                if only_b {
                    out.push(b[j].clone());
                }
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if both {
                    out.push(a[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Zips two sorted child lists; `f` decides each subtree, and empty results are dropped.
fn zip_children(
    a: &[(PathElement, Set)],
    b: &[(PathElement, Set)],
    f: impl Fn(Option<&Set>, Option<&Set>) -> Option<Set>,
) -> Vec<(PathElement, Set)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ord = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (pe, result) = match ord {
            std::cmp::Ordering::Less => {
                i += 1;
                (&a[i - 1].0, f(Some(&a[i - 1].1), None))
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (&b[j - 1].0, f(None, Some(&b[j - 1].1)))
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (&a[i - 1].0, f(Some(&a[i - 1].1), Some(&b[j - 1].1)))
            }
        };
        if let Some(set) = result.filter(|s| !s.is_empty()) {
            out.push((pe.clone(), set));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(names: &[&str]) -> Path {
        Path::fields(names.iter().copied())
    }

    #[test]
    fn insert_and_has() {
        let mut s = Set::new();
        s.insert(p(&["spec", "replicas"]).elements());
        s.insert(p(&[]).elements());
        assert!(s.has(p(&["spec", "replicas"]).elements()));
        assert!(!s.has(p(&["spec"]).elements()));
        assert!(!s.has(p(&[]).elements()));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn difference_keeps_parents_and_drops_children_of_removed_leaves_only_recursively() {
        let s: Set = [p(&["a"]), p(&["a", "b", "c"])].into_iter().collect();
        let t: Set = [p(&["a", "b"])].into_iter().collect();
        assert_eq!(s.difference(&t), s);
        assert_eq!(s.recursive_difference(&t), [p(&["a"])].into_iter().collect());
        let u: Set = [p(&["a"])].into_iter().collect();
        assert_eq!(t.difference(&u), t);
        assert_eq!(t.recursive_difference(&u), Set::new());
    }

    #[test]
    fn intersection_prunes_empty_children() {
        let s: Set = [p(&["a", "b"]), p(&["c"])].into_iter().collect();
        let t: Set = [p(&["a", "x"]), p(&["c"])].into_iter().collect();
        let i = s.intersection(&t);
        assert_eq!(i, [p(&["c"])].into_iter().collect());
        assert!(i.child(&PathElement::field("a")).is_none());
    }

    #[test]
    fn leaves_and_order() {
        let k = PathElement::key([("name", json!("x"))]);
        let s: Set =
            [p(&["spec"]), p(&["spec", "x"]), p(&["a"]), p(&["spec", "list"]).child(k.clone())].into_iter().collect();
        let paths: Vec<String> = s.paths().iter().map(ToString::to_string).collect();
        assert_eq!(paths, [".a", ".spec", ".spec.x", ".spec.list[name=\"x\"]"]);
        let leaves: Vec<String> = s.leaves().paths().iter().map(ToString::to_string).collect();
        assert_eq!(leaves, [".a", ".spec.x", ".spec.list[name=\"x\"]"]);
    }

    #[test]
    fn prefixes() {
        let s: Set =
            [p(&["spec", "replicas"]), p(&["spec", "template", "x"]), p(&["status", "y"])].into_iter().collect();
        let spec = s.under(&p(&["spec"]));
        assert_eq!(spec.len(), 2);
        assert_eq!(spec.prefixed(&p(&["spec"])), s.intersection(&spec.prefixed(&p(&["spec"]))));
        assert_eq!(s.with_prefix(&PathElement::field("nope")), Set::new());
    }
}
