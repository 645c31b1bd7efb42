//! Where a listing looks ([`Scope`]: kubectl's `-n` and `-A`) and which objects it keeps
//! ([`Selectors`]: `-l` and `--field-selector`), said once for every command that lists.

use crate::api::discovery::ResourceType;
use crate::api::request_url::Query;
use crate::conn::client::Connection;

/// Which namespaces a listing covers, as kubectl's `-n` and `-A` choose them.
///
/// A cluster-scoped type has no namespace: it is listed whole in every scope (a command
/// naming it with `-n` lists it whole, as `kubectl get nodes -n x` does). The scopes differ
/// in where namespaced types are listed and, when "every type" is asked for, in whether
/// cluster-scoped types are among them (see [`super::listable_types`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One namespace, and only namespaced types when every type is asked for
    /// (`kubectl last-applied scan -n prod`).
    Namespace(String),
    /// One namespace for namespaced types, and the cluster-scoped types too (the owners
    /// tree around a namespaced object: its owners and dependents may be cluster-scoped).
    NamespaceAndCluster(String),
    /// Every namespace, and the cluster-scoped types (`-A`).
    AllNamespaces,
}

impl Scope {
    /// `-A` when `all_namespaces`, else the connection's namespace (`-n`, the context's, `default`).
    pub fn of(conn: &Connection, all_namespaces: bool) -> Scope {
        if all_namespaces {
            Scope::AllNamespaces
        } else {
            Scope::Namespace(conn.namespace.clone())
        }
    }

    /// The namespace a list of `resource` names in its URL: `None` lists every namespace
    /// (or a cluster-scoped type, which has none).
    pub fn namespace_for(&self, resource: &ResourceType) -> Option<&str> {
        match self {
            Scope::Namespace(ns) | Scope::NamespaceAndCluster(ns) if resource.namespaced => Some(ns),
            _ => None,
        }
    }

    /// The one namespace of the scope; `None` with `-A`.
    pub fn namespace(&self) -> Option<&str> {
        match self {
            Scope::Namespace(ns) | Scope::NamespaceAndCluster(ns) => Some(ns),
            Scope::AllNamespaces => None,
        }
    }

    /// Whether "every type" in this scope includes `resource`: cluster-scoped types are left
    /// out of a plain namespace scope.
    pub fn includes(&self, resource: &ResourceType) -> bool {
        resource.namespaced || !matches!(self, Scope::Namespace(_))
    }

    /// Whether a list of `resource` spans several namespaces, so the engine may list it
    /// namespace by namespace instead.
    pub(crate) fn spans_namespaces(&self, resource: &ResourceType) -> bool {
        resource.namespaced && matches!(self, Scope::AllNamespaces)
    }
}

/// The server-side filters of a listing: kubectl's `-l` and `--field-selector`, sent as
/// they were typed (the server parses them and answers a bad one with a 400).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// `-l`: a label selector, e.g. `app=web,tier!=db`.
    pub label: Option<String>,
    /// `--field-selector`: e.g. `metadata.name=web`.
    pub field: Option<String>,
}

impl Selectors {
    /// Only a label selector (`-l`), when one was given.
    pub fn label(selector: Option<&str>) -> Selectors {
        Selectors { label: selector.map(str::to_string), field: None }
    }

    /// Whether nothing is filtered: the server then counts what a page leaves
    /// (`remainingItemCount`), which decides whether a large type is split by namespace.
    pub fn is_empty(&self) -> bool {
        self.label.is_none() && self.field.is_none()
    }

    /// The query parameters.
    pub(crate) fn query(&self) -> Query {
        let mut query = Query::new();
        if let Some(s) = &self.label {
            query.push("labelSelector", s.as_str());
        }
        if let Some(s) = &self.field {
            query.push("fieldSelector", s.as_str());
        }
        query
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(plural: &str, namespaced: bool) -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: plural.into(),
            singular: plural.trim_end_matches('s').into(),
            kind: plural.into(),
            short_names: vec![],
            namespaced,
            verbs: vec!["get".into(), "list".into()],
            subresources: vec![],
            preferred: true,
        }
    }

    #[test]
    fn namespaced_types_take_the_scopes_namespace_cluster_scoped_ones_none() {
        let (pods, nodes) = (rt("pods", true), rt("nodes", false));
        let ns = Scope::Namespace("prod".into());
        assert_eq!(ns.namespace_for(&pods), Some("prod"));
        assert_eq!(ns.namespace_for(&nodes), None);
        assert_eq!(Scope::NamespaceAndCluster("prod".into()).namespace_for(&pods), Some("prod"));
        assert_eq!(Scope::AllNamespaces.namespace_for(&pods), None);
        assert!(ns.includes(&pods) && !ns.includes(&nodes));
        assert!(Scope::NamespaceAndCluster("prod".into()).includes(&nodes));
        assert!(Scope::AllNamespaces.includes(&nodes));
        assert!(Scope::AllNamespaces.spans_namespaces(&pods));
        assert!(!Scope::AllNamespaces.spans_namespaces(&nodes) && !ns.spans_namespaces(&pods));
    }

    #[test]
    fn selectors_are_sent_percent_encoded() {
        let s = Selectors { label: Some("app in (a,b)".into()), field: Some("metadata.name=x".into()) };
        assert_eq!(s.query().on(""), "?labelSelector=app+in+%28a%2Cb%29&fieldSelector=metadata.name%3Dx");
        assert!(Selectors::default().is_empty() && !Selectors::label(Some("a=b")).is_empty());
    }
}
