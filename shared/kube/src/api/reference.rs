//! One object reference for every plugin: which object a command acts on, built
//! the way kubectl builds it from `TYPE/NAME` arguments, from a manifest object
//! (`apiVersion`, `kind`, `metadata`), or from an `ownerReferences` entry.
//!
//! The three sources differ only in how the type is named: arguments spell it as a
//! user types it (`deploy`, `deployments.apps`) and go through
//! [`ResourceCatalog::resolve`]; manifests and owner references carry a
//! group-version-kind ([`Gvk::of_object`]) and go through
//! [`ResourceCatalog::by_gvk`]. After that every reference follows the same
//! namespace rules ([`NamespaceScope`]) and prints the same display name
//! (`deployment.apps/x`, [`ObjectRef::display`]).
//!
//! ```
//! use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
//! use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
//!
//! let deployments = ResourceType {
//!     group: "apps".into(), version: "v1".into(), plural: "deployments".into(),
//!     singular: "deployment".into(), kind: "Deployment".into(), short_names: vec!["deploy".into()],
//!     namespaced: true, verbs: vec!["get".into()], subresources: vec![], preferred: true,
//! };
//! let catalog = ResourceCatalog::from_types(vec![deployments]);
//! let scope = NamespaceScope { namespace: "dev".into(), explicit: false };
//! let object = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}});
//! let target = ObjectRef::from_manifest(&object, "x.yaml", &catalog, &scope).unwrap();
//! assert_eq!(target.display(), "deployment.apps/x");
//! assert_eq!(target.namespace.as_deref(), Some("dev"));
//! ```

use fieldwise_core::schema::Gvk;
use serde_json::Value;

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::request_url::{self, SegmentKind};
use crate::api::target::TargetArgs;
use crate::conn::client::Connection;
use crate::error::{Error, ReferenceError, Result};

/// One object (or, with an empty name, one collection) in the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// Its resource type.
    pub resource: ResourceType,
    /// Its namespace; `None` for cluster-scoped types.
    pub namespace: Option<String>,
    /// Its name; empty for "all of this type".
    pub name: String,
}

impl ObjectRef {
    /// kubectl's name for the object: `deployment.apps/busybox-demo`.
    pub fn display(&self) -> String {
        format!("{}/{}", self.resource.display_name(), self.name)
    }

    /// The object with its namespace, for lines about one object of a run over many (its
    /// failure, its refusal): `configmap/web in namespace shop`; a cluster-scoped object is
    /// its [`display`](Self::display) name alone.
    pub fn located(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} in namespace {ns}", self.display()),
            None => self.display(),
        }
    }

    /// The URL path of the object (or a subresource of it); a name, namespace or
    /// subresource no path segment can hold is refused ([`request_url`]).
    pub fn path(&self, subresource: Option<&str>) -> Result<String, ReferenceError> {
        request_url::object_path(&self.resource, self.namespace.as_deref(), &self.name, subresource)
    }

    /// The objects `TYPE/NAME ...` or `TYPE NAME ...` arguments name; a lone `TYPE`
    /// gives one reference with an empty name (a collection, for list-style commands).
    /// Namespaced types take the command's namespace; cluster-scoped types none.
    pub fn from_args(args: &[String], catalog: &ResourceCatalog, scope: &NamespaceScope) -> Result<Vec<ObjectRef>> {
        TargetArgs::parse(args)?
            .items
            .iter()
            .map(|(kind, name)| {
                let resource = catalog.resolve(kind)?.clone();
                if !name.is_empty() {
                    request_url::check_segment(SegmentKind::Name, name, None)?;
                }
                let namespace = resource.namespaced.then(|| scope.namespace.clone());
                Ok(ObjectRef { resource, namespace, name: name.clone() })
            })
            .collect()
    }

    /// [`ObjectRef::from_args`] for commands that act on named objects only: a lone
    /// `TYPE` is refused, naming the form to use.
    pub fn named_from_args(
        args: &[String],
        catalog: &ResourceCatalog,
        scope: &NamespaceScope,
    ) -> Result<Vec<ObjectRef>> {
        let targets = Self::from_args(args, catalog, scope)?;
        if let Some(t) = targets.iter().find(|t| t.name.is_empty()) {
            return Err(Error::usage(format!("a name is required: {}/NAME", t.resource.display_name())));
        }
        Ok(targets)
    }

    /// The object a manifest describes, found in the cluster's types by its
    /// group-version-kind, with kubectl's namespace rules ([`NamespaceScope::place`]).
    /// `source` names the manifest in errors (`deploy.yaml`, `stdin (document 2)`).
    pub fn from_manifest(
        object: &Value,
        source: &str,
        catalog: &ResourceCatalog,
        scope: &NamespaceScope,
    ) -> Result<ObjectRef> {
        let (resource, name) = typed_name(object, ("metadata.name", "/metadata/name"), source, catalog)?;
        let declared = object.pointer("/metadata/namespace").and_then(Value::as_str);
        let namespace = scope.place(resource, declared, source)?;
        // Refused before it is sent (see `conn::namespace`): a `/` in it would name another path.
        if let (Some(ns), Some(_)) = (&namespace, declared.filter(|ns| !ns.is_empty())) {
            crate::conn::namespace::check(ns, Some(&format!("metadata.namespace in {source}")))?;
        }
        Ok(ObjectRef { resource: resource.clone(), namespace, name })
    }

    /// The reference of an object the cluster returned (by GET or LIST) for `resource`:
    /// its own `metadata.name` and `metadata.namespace`.
    pub fn of_object(resource: &ResourceType, object: &Value) -> ObjectRef {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        ObjectRef {
            resource: resource.clone(),
            namespace: text("/metadata/namespace").filter(|_| resource.namespaced).map(str::to_string),
            name: text("/metadata/name").unwrap_or_default().to_string(),
        }
    }

    /// The owner an `ownerReferences` entry names. Owners live in their dependent's
    /// namespace (`dependent_namespace`) unless their type is cluster-scoped; an
    /// entry without `apiVersion`, `kind` or `name` is refused as a manifest would be.
    pub fn from_owner_reference(
        owner: &Value,
        dependent_namespace: Option<&str>,
        catalog: &ResourceCatalog,
    ) -> Result<ObjectRef, ReferenceError> {
        let source = owner_display_name(owner);
        let (resource, name) = typed_name(owner, ("name", "/name"), &source, catalog)?;
        let namespace = resource.namespaced.then(|| dependent_namespace.unwrap_or_default().to_string());
        Ok(ObjectRef { resource: resource.clone(), namespace, name })
    }
}

/// The served type of `object`'s `apiVersion` and `kind`, and the name at `name_at`
/// (`(field as named in messages, JSON pointer)`): what every reference read from a
/// document needs, refused with `source` named when missing or not served.
fn typed_name<'c>(
    object: &Value,
    name_at: (&'static str, &str),
    source: &str,
    catalog: &'c ResourceCatalog,
) -> Result<(&'c ResourceType, String), ReferenceError> {
    let missing = |what: &'static str| ReferenceError::MissingField { origin: source.to_string(), what };
    let gvk = Gvk::of_object(object).filter(|g| !g.kind.is_empty() && !g.version.is_empty());
    let gvk = gvk.ok_or_else(|| missing("apiVersion and kind"))?;
    let name = object.pointer(name_at.1).and_then(Value::as_str).filter(|n| !n.is_empty());
    let name = name.ok_or_else(|| missing(name_at.0))?;
    // Refused here, where the file is known, before any request names it.
    request_url::check_segment(SegmentKind::Name, name, Some(&format!("{} in {source}", name_at.0)))?;
    let resource = catalog.by_gvk(&gvk).ok_or_else(|| ReferenceError::NoMatchForKind {
        origin: source.to_string(),
        kind: gvk.kind.clone(),
        api_version: api_version(&gvk),
    })?;
    Ok((resource, name.to_string()))
}

/// kubectl's display name of an object from its own `apiVersion`, `kind` and
/// `metadata.name`, without asking the cluster (`--local`, objects read from files):
/// `deployment.apps/x`, `configmap/y`. The same words as [`ObjectRef::display`] for
/// any type whose kind lowercases to its singular name, as every built-in type does.
pub fn display_name(object: &Value) -> String {
    display_name_of(object, object.pointer("/metadata/name"))
}

/// [`display_name`] of the owner an `ownerReferences` entry names (its name is at `name`,
/// not `metadata.name`), for messages about owners that cannot be read.
pub fn owner_display_name(owner: &Value) -> String {
    display_name_of(owner, owner.get("name"))
}

/// `kind.group/name` from the `apiVersion` and `kind` of `object` and the given name.
fn display_name_of(object: &Value, name: Option<&Value>) -> String {
    let name = name.and_then(Value::as_str).unwrap_or_default();
    let Some(gvk) = Gvk::of_object(object) else { return format!("object/{name}") };
    let kind = if gvk.kind.is_empty() { "object".to_string() } else { gvk.kind.to_lowercase() };
    if gvk.group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{}/{name}", gvk.group)
    }
}

/// `group/version`, or `version` for the core group.
fn api_version(gvk: &Gvk) -> String {
    if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    }
}

/// The namespace a command works in, and whether the user chose it with `-n`:
/// kubectl refuses a manifest in another namespace only when the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceScope {
    /// `-n`, else the context's namespace, else `default`.
    pub namespace: String,
    /// Whether `-n`/`--namespace` was given.
    pub explicit: bool,
}

impl NamespaceScope {
    /// The scope of a connection: its namespace, and whether `-n` chose it.
    pub fn of(conn: &Connection) -> Self {
        NamespaceScope { namespace: conn.namespace.clone(), explicit: conn.namespace_from_flag }
    }

    /// kubectl's namespace rules for an object that declares `declared` (its
    /// `metadata.namespace`, if any): cluster-scoped types have no namespace whatever is
    /// declared; an object without one takes the command's; an object with one keeps it,
    /// unless `-n` named another, which is refused (kubectl's `RequireNamespace`).
    pub fn place(
        &self,
        resource: &ResourceType,
        declared: Option<&str>,
        source: &str,
    ) -> Result<Option<String>, ReferenceError> {
        if !resource.namespaced {
            return Ok(None);
        }
        match declared.filter(|ns| !ns.is_empty()) {
            None => Ok(Some(self.namespace.clone())),
            Some(ns) if self.explicit && ns != self.namespace => Err(ReferenceError::NamespaceMismatch {
                origin: source.to_string(),
                object: ns.to_string(),
                flag: self.namespace.clone(),
            }),
            Some(ns) => Ok(Some(ns.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rt(group: &str, version: &str, plural: &str, kind: &str, namespaced: bool, preferred: bool) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            short_names: vec![],
            namespaced,
            verbs: vec!["get".into(), "patch".into(), "list".into()],
            subresources: vec![],
            preferred,
        }
    }

    fn catalog() -> ResourceCatalog {
        ResourceCatalog::from_types(vec![
            rt("", "v1", "configmaps", "ConfigMap", true, true),
            rt("", "v1", "namespaces", "Namespace", false, true),
            rt("apps", "v1", "deployments", "Deployment", true, true),
            rt("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, true),
            rt("stable.example.com", "v1", "crontabs", "CronTab", true, true),
            rt("stable.example.com", "v1beta1", "crontabs", "CronTab", true, false),
        ])
    }

    fn scope(namespace: &str, explicit: bool) -> NamespaceScope {
        NamespaceScope { namespace: namespace.into(), explicit }
    }

    fn deployment(namespace: Option<&str>) -> Value {
        let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
        if let Some(ns) = namespace {
            object["metadata"]["namespace"] = ns.into();
        }
        object
    }

    #[test]
    fn a_manifest_is_found_by_group_version_kind() {
        let c = catalog();
        let r = ObjectRef::from_manifest(&deployment(None), "d.yaml", &c, &scope("dev", false)).unwrap();
        assert_eq!((r.resource.group.as_str(), r.resource.plural.as_str()), ("apps", "deployments"));
        assert_eq!(r.display(), "deployment.apps/web");
        assert_eq!(r.path(None).unwrap(), "/apis/apps/v1/namespaces/dev/deployments/web");
        // The version in the manifest is the version used, preferred or not.
        let beta = json!({"apiVersion": "stable.example.com/v1beta1", "kind": "CronTab", "metadata": {"name": "c"}});
        let r = ObjectRef::from_manifest(&beta, "c.yaml", &c, &scope("dev", false)).unwrap();
        assert_eq!(r.resource.version, "v1beta1");
        assert_eq!(r.display(), "crontab.stable.example.com/c");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}});
        assert_eq!(ObjectRef::from_manifest(&cm, "m.yaml", &c, &scope("dev", false)).unwrap().display(), "configmap/m");
    }

    #[test]
    fn a_manifests_namespace_no_request_can_name_is_refused() {
        let err = ObjectRef::from_manifest(&deployment(Some("a/b")), "d.yaml", &catalog(), &scope("dev", false));
        assert_eq!(
            err.unwrap_err().printed(),
            "error: invalid namespace \"a/b\" (metadata.namespace in d.yaml): [may not contain '/']"
        );
    }

    #[test]
    fn a_manifest_without_a_namespace_takes_the_commands() {
        let c = catalog();
        for explicit in [false, true] {
            let r = ObjectRef::from_manifest(&deployment(None), "d.yaml", &c, &scope("dev", explicit)).unwrap();
            assert_eq!(r.namespace.as_deref(), Some("dev"));
            let r = ObjectRef::from_manifest(&deployment(Some("")), "d.yaml", &c, &scope("dev", explicit)).unwrap();
            assert_eq!(r.namespace.as_deref(), Some("dev"));
        }
    }

    #[test]
    fn a_manifests_namespace_wins_over_the_contexts_but_not_over_dash_n() {
        let c = catalog();
        let r = ObjectRef::from_manifest(&deployment(Some("a")), "d.yaml", &c, &scope("b", false)).unwrap();
        assert_eq!(r.namespace.as_deref(), Some("a"));
        let r = ObjectRef::from_manifest(&deployment(Some("a")), "d.yaml", &c, &scope("a", true)).unwrap();
        assert_eq!(r.namespace.as_deref(), Some("a"));
        let err = ObjectRef::from_manifest(&deployment(Some("a")), "d.yaml", &c, &scope("b", true)).unwrap_err();
        assert_eq!(
            err.printed(),
            "error: d.yaml: the namespace from the provided object \"a\" does not match the namespace \"b\". You must pass '--namespace=a' to perform this operation."
        );
        assert!(matches!(err, Error::Reference(ReferenceError::NamespaceMismatch { .. })));
    }

    #[test]
    fn cluster_scoped_types_ignore_every_namespace() {
        let c = catalog();
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader", "namespace": "a"}});
        for explicit in [false, true] {
            let r = ObjectRef::from_manifest(&role, "r.yaml", &c, &scope("b", explicit)).unwrap();
            assert_eq!(r.namespace, None);
            assert_eq!(r.display(), "clusterrole.rbac.authorization.k8s.io/reader");
            assert_eq!(r.path(None).unwrap(), "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader");
        }
        let ns = ObjectRef::from_args(&["namespace/x".to_string()], &c, &scope("b", true)).unwrap();
        assert_eq!(ns[0].namespace, None);
    }

    #[test]
    fn incomplete_or_unknown_manifests_are_one_line_errors_naming_the_source() {
        let c = catalog();
        let s = scope("dev", false);
        for (object, expected) in [
            (json!({"kind": "Deployment", "metadata": {"name": "x"}}), "x.yaml: the object has no apiVersion and kind"),
            (
                json!({"apiVersion": "apps/v1", "metadata": {"name": "x"}}),
                "x.yaml: the object has no apiVersion and kind",
            ),
            (json!({"apiVersion": "apps/v1", "kind": "Deployment"}), "x.yaml: the object has no metadata.name"),
            (
                json!({"apiVersion": "apps/v2", "kind": "Deployment", "metadata": {"name": "x"}}),
                "x.yaml: no matches for kind \"Deployment\" in version \"apps/v2\"",
            ),
            (
                json!({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "x"}}),
                "x.yaml: no matches for kind \"Deployment\" in version \"v1\"",
            ),
        ] {
            let err = ObjectRef::from_manifest(&object, "x.yaml", &c, &s).unwrap_err().printed();
            assert!(err.starts_with(&format!("error: {expected}")), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn arguments_resolve_and_named_commands_need_names() {
        let c = catalog();
        let s = scope("dev", false);
        let refs = ObjectRef::from_args(&["deployment".into(), "a".into(), "b".into()], &c, &s).unwrap();
        assert_eq!(refs.iter().map(ObjectRef::display).collect::<Vec<_>>(), ["deployment.apps/a", "deployment.apps/b"]);
        assert_eq!(refs[0].namespace.as_deref(), Some("dev"));
        assert_eq!(ObjectRef::from_args(&["deployments".into()], &c, &s).unwrap()[0].name, "");
        let err = ObjectRef::named_from_args(&["deployments".into()], &c, &s).unwrap_err().printed();
        assert_eq!(err, "error: a name is required: deployment.apps/NAME");
    }

    #[test]
    fn owner_references_live_in_their_dependents_namespace() {
        let c = catalog();
        let owner = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u"});
        let r = ObjectRef::from_owner_reference(&owner, Some("dev"), &c).unwrap();
        assert_eq!((r.display(), r.namespace.as_deref()), ("deployment.apps/web".to_string(), Some("dev")));
        let cluster = json!({"apiVersion": "v1", "kind": "Namespace", "name": "dev"});
        assert_eq!(ObjectRef::from_owner_reference(&cluster, Some("dev"), &c).unwrap().namespace, None);
        let gone = json!({"apiVersion": "example.com/v1", "kind": "Gone", "name": "g"});
        let err = ObjectRef::from_owner_reference(&gone, Some("dev"), &c).unwrap_err();
        assert!(err.to_string().starts_with("gone.example.com/g: no matches for kind \"Gone\""), "{err}");
    }

    #[test]
    fn listed_objects_name_themselves() {
        let c = catalog();
        let deployments = c.by_gvk(&Gvk::new("apps", "v1", "Deployment")).unwrap();
        let listed = ObjectRef::of_object(deployments, &deployment(Some("dev")));
        assert_eq!((listed.display(), listed.namespace.as_deref()), ("deployment.apps/web".to_string(), Some("dev")));
        let namespaces = c.by_gvk(&Gvk::new("", "v1", "Namespace")).unwrap();
        assert_eq!(ObjectRef::of_object(namespaces, &json!({"metadata": {"name": "dev"}})).display(), "namespace/dev");
    }

    #[test]
    fn offline_display_names_carry_the_group() {
        assert_eq!(display_name(&deployment(None)), "deployment.apps/web");
        assert_eq!(display_name(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})), "secret/s");
        assert_eq!(display_name(&json!({"metadata": {"name": "s"}})), "object/s");
    }
}
