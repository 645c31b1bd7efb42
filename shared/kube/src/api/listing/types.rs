//! "Every type": the one place that decides which of the types a cluster serves a command
//! over everything visits (`last-applied scan` without `--kinds`, the owners tree, the
//! resource types completion offers, bulk commands).

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::listing::Scope;
use crate::error::{Error, Result};

/// Whether `resource` is a type a user can list and read: its preferred version (the
/// group's preferred one, else the first that serves it: [`ResourceType::preferred`]),
/// the server allows `list` and `get` (what `kubectl api-resources --verbs=list,get` shows),
/// and it is not a subresource (`pods/log`). Every listable type, aliases included, is a
/// name completion offers.
pub fn is_listable(resource: &ResourceType) -> bool {
    resource.preferred && resource.supports("list") && resource.supports("get") && !resource.plural.contains('/')
}

/// Refuses a type the user named that the server does not list (no `list` verb: `bindings`,
/// `tokenreviews`), so a selection of it (`-l`, `--all`) or a scan of it (`--kinds`) says
/// so instead of sending a LIST the server answers with 405. Unlike [`is_listable`], any version the user names is
/// listed: only "every type" keeps to the preferred one.
pub fn require_listable(resource: &ResourceType) -> Result<()> {
    if resource.supports("list") {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "{} cannot be listed (the server does not allow it): leave it out, or name its objects (TYPE/NAME)",
            resource.display_name()
        )))
    }
}

/// Resource types the apiserver serves twice, under two groups, as the same objects:
/// `(group, plural)` of the alias, and the group of the type it aliases (same plural).
const SAME_OBJECTS_AS: [(&str, &str, &str); 1] = [("events.k8s.io", "events", "")];

/// The types to list for "everything" in `scope`, in discovery's order: the listable ones
/// ([`is_listable`]) the scope includes ([`Scope::includes`]: a plain namespace scope leaves
/// cluster-scoped types out), and of two types that serve the same objects only the first
/// (`events` and `events.events.k8s.io`: listing both would report every event twice). Two
/// custom resource groups with the same plural and kind hold different objects: both are listed.
pub fn listable_types(catalog: &ResourceCatalog, scope: &Scope) -> Vec<ResourceType> {
    let listable: Vec<&ResourceType> = catalog.types().iter().filter(|t| is_listable(t) && scope.includes(t)).collect();
    let served = |group: &str, plural: &str| listable.iter().any(|t| t.group == group && t.plural == plural);
    let alias = |t: &ResourceType| {
        SAME_OBJECTS_AS.iter().any(|(group, plural, of)| t.group == *group && t.plural == *plural && served(of, plural))
    };
    listable.iter().filter(|t| !alias(t)).map(|t| (*t).clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(group: &str, plural: &str, kind: &str, namespaced: bool, verbs: &[&str], preferred: bool) -> ResourceType {
        ResourceType {
            group: group.into(),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            preferred,
            ..ResourceType::core_v1(plural, kind, namespaced)
        }
    }

    fn catalog() -> ResourceCatalog {
        let rw = ["get", "list", "watch", "patch"];
        ResourceCatalog::from_types(vec![
            rt("", "pods", "Pod", true, &rw, true),
            rt("", "events", "Event", true, &rw, true),
            rt("", "bindings", "Binding", true, &["create"], true),
            rt("", "nodes", "Node", false, &rw, true),
            rt("", "pods/log", "Pod", true, &["get", "list"], true),
            rt("events.k8s.io", "events", "Event", true, &rw, true),
            rt("example.com", "widgets", "Widget", true, &rw, true),
            rt("example.com", "widgets", "Widget", true, &rw, false),
            rt("example.com", "readonly", "ReadOnly", true, &["get"], true),
        ])
    }

    fn names(types: &[ResourceType]) -> Vec<String> {
        types.iter().map(ResourceType::plural_group).collect()
    }

    #[test]
    fn two_custom_groups_with_the_same_plural_and_kind_are_both_listed() {
        let mut types = catalog().types().to_vec();
        let mut other = types.iter().find(|t| t.plural == "widgets" && t.preferred).unwrap().clone();
        other.group = "other.example.com".into();
        types.push(other);
        let catalog = ResourceCatalog::from_types(types);
        assert_eq!(
            names(&listable_types(&catalog, &Scope::AllNamespaces)),
            ["pods", "events", "nodes", "widgets.example.com", "widgets.other.example.com"]
        );
    }

    #[test]
    fn every_type_once_preferred_listable_and_readable() {
        assert_eq!(
            names(&listable_types(&catalog(), &Scope::AllNamespaces)),
            ["pods", "events", "nodes", "widgets.example.com"]
        );
        assert_eq!(
            names(&listable_types(&catalog(), &Scope::NamespaceAndCluster("x".into()))),
            ["pods", "events", "nodes", "widgets.example.com"]
        );
    }

    #[test]
    fn a_namespace_scope_leaves_cluster_scoped_types_out() {
        assert_eq!(
            names(&listable_types(&catalog(), &Scope::Namespace("x".into()))),
            ["pods", "events", "widgets.example.com"]
        );
    }

    #[test]
    fn a_named_type_without_the_list_verb_is_refused_with_what_to_do() {
        let c = catalog();
        let bindings = c.types().iter().find(|t| t.plural == "bindings").unwrap();
        let err = require_listable(bindings).unwrap_err().to_string();
        assert!(err.contains("cannot be listed") && err.contains("name its objects"), "{err}");
        let old_widgets = c.types().iter().find(|t| t.plural == "widgets" && !t.preferred).unwrap();
        assert!(require_listable(old_widgets).is_ok() && !is_listable(old_widgets));
    }

    #[test]
    fn every_resource_of_a_group_once_in_its_preferred_version_or_the_first_that_serves_it() {
        let listed: Vec<String> = listable_types(&ResourceCatalog::metallb_fixture(), &Scope::AllNamespaces)
            .iter()
            .map(|t| format!("{} {}", t.plural_group(), t.api_version()))
            .collect();
        assert_eq!(
            listed,
            [
                "deployments.apps apps/v1",
                "bgppeers.metallb.io metallb.io/v1beta2",
                "ipaddresspools.metallb.io metallb.io/v1beta1",
                "l2advertisements.metallb.io metallb.io/v1beta1"
            ]
        );
    }

    #[test]
    fn aliases_of_the_same_objects_are_listable_names() {
        let all: Vec<String> =
            catalog().types().iter().filter(|t| is_listable(t)).map(ResourceType::plural_group).collect();
        assert_eq!(all, ["pods", "events", "nodes", "events.events.k8s.io", "widgets.example.com"]);
    }
}
