//! The ownerReferences tree below one object, with each object shown once.
//!
//! `metadata.ownerReferences` make a graph, not a tree: an object may name two
//! owners (a ConfigMap owned by a Deployment and by a ReplicaSet), and may be
//! reached from the root by two paths. A tree view that follows every edge
//! prints such an object twice, with its whole subtree. [`place`] picks one
//! parent for each object reachable from the root:
//!
//! - its **controller** owner (the reference with `controller: true`), when that
//!   owner is in the tree and choosing it closes no cycle, as the garbage
//!   collector and `kubectl describe` ("Controlled By") treat it;
//! - else the owner nearest to the root (breadth first), ties broken by the
//!   order the caller gave the objects in.
//!
//! The other owners are not lost: [`other_owners`] names them, for a note beside
//! the object. [`Placement::prune`] keeps only the objects a filter asks for and
//! the path from the root to them.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

/// One entry of `metadata.ownerReferences`, as much of it as a tree needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerReference {
    /// The owner's `apiVersion`.
    pub api_version: String,
    /// The owner's `kind`.
    pub kind: String,
    /// The owner's name (in the dependent's namespace, or cluster-scoped).
    pub name: String,
    /// The owner's uid: what links the two, names can be reused.
    pub uid: String,
    /// `controller: true`: the one owner that manages the dependent.
    pub controller: bool,
}

/// The owner references of an object, in the order it lists them (malformed entries skipped).
pub fn owner_references(object: &Value) -> Vec<OwnerReference> {
    let refs = object.pointer("/metadata/ownerReferences").and_then(Value::as_array).into_iter().flatten();
    refs.filter_map(|r| {
        let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let uid = text("uid");
        (!uid.is_empty()).then(|| OwnerReference {
            api_version: text("apiVersion"),
            kind: text("kind"),
            name: text("name"),
            uid,
            controller: r.get("controller").and_then(Value::as_bool).unwrap_or(false),
        })
    })
    .collect()
}

/// The owners of `object` other than the one it is shown under (`parent_uid`).
pub fn other_owners(object: &Value, parent_uid: &str) -> Vec<OwnerReference> {
    owner_references(object).into_iter().filter(|r| r.uid != parent_uid).collect()
}

fn uid_of(object: &Value) -> &str {
    object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
}

/// Where each object of a tree is shown: one parent each, children in the caller's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    root: String,
    /// uid -> the uids shown under it.
    children: HashMap<String, Vec<String>>,
    /// uid -> the uid it is shown under.
    parent: HashMap<String, String>,
}

impl Placement {
    /// The uid of the root.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The uids shown directly under `uid`, in the order the objects were given.
    pub fn children(&self, uid: &str) -> &[String] {
        self.children.get(uid).map(Vec::as_slice).unwrap_or_default()
    }

    /// The uid `uid` is shown under; `None` for the root and objects not in the tree.
    pub fn parent(&self, uid: &str) -> Option<&str> {
        self.parent.get(uid).map(String::as_str)
    }

    /// Whether `uid` is shown (the root, or placed under someone).
    pub fn contains(&self, uid: &str) -> bool {
        uid == self.root || self.parent.contains_key(uid)
    }

    /// The same tree with only the objects `keep` accepts and the path from the
    /// root to each of them (the root always stays).
    pub fn prune(&self, keep: impl Fn(&str) -> bool) -> Placement {
        let mut kept = HashSet::from([self.root.clone()]);
        for uid in self.parent.keys().filter(|uid| keep(uid)) {
            let mut here = uid.as_str();
            while kept.insert(here.to_string()) {
                match self.parent(here) {
                    Some(up) => here = up,
                    None => break,
                }
            }
        }
        let children = self
            .children
            .iter()
            .filter(|(uid, _)| kept.contains(*uid))
            .map(|(uid, list)| (uid.clone(), list.iter().filter(|c| kept.contains(*c)).cloned().collect::<Vec<_>>()))
            .filter(|(_, list)| !list.is_empty())
            .collect();
        let parent = self.parent.iter().filter(|(uid, _)| kept.contains(*uid)).map(|(k, v)| (k.clone(), v.clone()));
        Placement { root: self.root.clone(), children, parent: parent.collect() }
    }
}

/// Places every object reachable from `root_uid` through ownerReferences under
/// exactly one owner (see the module docs). `objects` may hold anything (the
/// root, unrelated objects); their order is the order of siblings.
pub fn place(root_uid: &str, objects: &[&Value]) -> Placement {
    let order: HashMap<&str, usize> =
        objects.iter().enumerate().map(|(i, o)| (uid_of(o), i)).filter(|(uid, _)| !uid.is_empty()).collect();
    let refs: HashMap<&str, Vec<OwnerReference>> =
        objects.iter().map(|o| (uid_of(o), owner_references(o))).filter(|(uid, _)| !uid.is_empty()).collect();
    // owner uid -> dependents, in the caller's order.
    let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
    for object in objects {
        let uid = uid_of(object);
        if uid.is_empty() {
            continue;
        }
        let mut seen = HashSet::new();
        for r in refs.get(uid).into_iter().flatten() {
            if seen.insert(r.uid.as_str()) {
                dependents.entry(r.uid.as_str()).or_default().push(uid);
            }
        }
    }
    // Breadth first: each object under the first owner that reaches it, the nearest one.
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut reached: Vec<&str> = Vec::new();
    let mut queue = VecDeque::from([root_uid]);
    while let Some(owner) = queue.pop_front() {
        for &dependent in dependents.get(owner).into_iter().flatten() {
            if dependent != root_uid && !parent.contains_key(dependent) {
                parent.insert(dependent.to_string(), owner.to_string());
                reached.push(dependent);
                queue.push_back(dependent);
            }
        }
    }
    // Then under its controller owner, when that one is in the tree and not below it.
    for &uid in &reached {
        let Some(controller) = refs.get(uid).into_iter().flatten().find(|r| r.controller) else { continue };
        let owner = controller.uid.as_str();
        let in_tree = owner == root_uid || parent.contains_key(owner);
        if !in_tree || parent.get(uid).map(String::as_str) == Some(owner) || is_below(&parent, owner, uid) {
            continue;
        }
        parent.insert(uid.to_string(), owner.to_string());
    }
    let mut children: HashMap<String, Vec<String>> = HashMap::new();
    for (child, owner) in &parent {
        children.entry(owner.clone()).or_default().push(child.clone());
    }
    for list in children.values_mut() {
        list.sort_by_key(|uid| order.get(uid.as_str()).copied().unwrap_or(usize::MAX));
    }
    Placement { root: root_uid.to_string(), children, parent }
}

/// Whether `uid` is `ancestor` or below it in the current placement.
fn is_below(parent: &HashMap<String, String>, uid: &str, ancestor: &str) -> bool {
    let mut here = uid;
    let mut steps = 0;
    loop {
        if here == ancestor {
            return true;
        }
        match parent.get(here) {
            Some(up) if steps <= parent.len() => {
                here = up;
                steps += 1;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(uid: &str, owners: &[(&str, bool)]) -> Value {
        let refs: Vec<Value> = owners
            .iter()
            .map(|(o, c)| json!({"apiVersion": "v1", "kind": "Thing", "name": format!("n-{o}"), "uid": o, "controller": c}))
            .collect();
        json!({"metadata": {"uid": uid, "name": format!("n-{uid}"), "ownerReferences": refs}})
    }

    fn placed(objects: &[Value]) -> Placement {
        place("d", &objects.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_plain_chain() {
        let p = placed(&[object("d", &[]), object("rs", &[("d", true)]), object("p1", &[("rs", true)])]);
        assert_eq!(p.children("d"), ["rs"]);
        assert_eq!(p.children("rs"), ["p1"]);
        assert_eq!(p.parent("p1"), Some("rs"));
        assert!(p.contains("d") && !p.contains("stranger"));
    }

    #[test]
    fn two_owners_one_place_under_the_controller() {
        // cm is owned by d (not controller) and by rs (controller): shown once, under rs.
        let objects =
            [object("rs", &[("d", true)]), object("cm", &[("d", false), ("rs", true)]), object("p1", &[("rs", true)])];
        let p = placed(&objects);
        assert_eq!(p.children("d"), ["rs"]);
        assert_eq!(p.children("rs"), ["cm", "p1"]);
        let others = other_owners(&objects[1], p.parent("cm").unwrap());
        assert_eq!(others.iter().map(|r| r.uid.as_str()).collect::<Vec<_>>(), ["d"]);
        assert_eq!(others[0].name, "n-d");
    }

    #[test]
    fn two_owners_without_a_controller_go_to_the_nearest() {
        // cm is owned by p1 (depth 2) first and by d (the root) second: shown under d.
        let objects =
            [object("rs", &[("d", true)]), object("p1", &[("rs", true)]), object("cm", &[("p1", false), ("d", false)])];
        let p = placed(&objects);
        assert_eq!(p.children("d"), ["rs", "cm"]);
        assert_eq!(p.children("p1"), [] as [String; 0]);
        // Every object exactly once.
        let mut all: Vec<&String> = ["d", "rs", "p1"].iter().flat_map(|u| p.children(u)).collect();
        all.sort();
        assert_eq!(all, ["cm", "p1", "rs"]);
    }

    #[test]
    fn cycles_and_self_references_end() {
        // a and b own each other (b's controller is a, a's controller is b), both owned by the root.
        let objects = [
            object("a", &[("d", false), ("b", true)]),
            object("b", &[("d", false), ("a", true)]),
            object("self", &[("self", true), ("d", false)]),
            object("d", &[("a", true)]),
        ];
        let p = placed(&objects);
        // The root stays the root; a goes under its controller b, and b, whose
        // controller a is now below it, stays under the root: each once, no cycle.
        assert_eq!(p.parent("d"), None);
        assert_eq!(p.children("d"), ["b", "self"]);
        assert_eq!(p.children("b"), ["a"]);
        assert!(p.children("a").is_empty());
        assert_eq!(p.parent("self"), Some("d"));
        // Duplicate references to one owner count once.
        let dup = placed(&[object("x", &[("d", false), ("d", true)])]);
        assert_eq!(dup.children("d"), ["x"]);
    }

    #[test]
    fn prune_keeps_the_path_to_what_is_asked() {
        let objects = [
            object("rs", &[("d", true)]),
            object("cm", &[("d", false)]),
            object("p1", &[("rs", true)]),
            object("p2", &[("rs", true)]),
        ];
        let p = placed(&objects).prune(|uid| uid.starts_with('p'));
        assert_eq!(p.children("d"), ["rs"]);
        assert_eq!(p.children("rs"), ["p1", "p2"]);
        assert!(!p.contains("cm"));
        let nothing = placed(&objects).prune(|_| false);
        assert!(nothing.children("d").is_empty() && nothing.contains("d"));
    }

    #[test]
    fn malformed_references_are_skipped() {
        let odd = json!({"metadata": {"uid": "x", "ownerReferences": [{"name": "no-uid"}, 3, {"uid": "d"}]}});
        assert_eq!(owner_references(&odd).len(), 1);
        assert!(!owner_references(&odd)[0].controller);
        assert_eq!(place("d", &[&odd]).children("d"), ["x"]);
    }
}
