//! Which resource types the cluster serves, and what a user means by
//! `deploy`, `deployments.apps` or `Deployment.v1.apps`.
//!
//! Read from aggregated discovery (`/api` and `/apis`, two requests, as kubectl
//! 1.30+ reads it), which carries what kubectl's RESTMapper uses: plural,
//! singular, kind, short names, scope, verbs and subresources, with versions in
//! preference order.
//!
//! Paid once: the two documents are kept in the server's disk cache
//! ([`crate::local::cache::ServerCache`], `discovery/api.json` and `discovery/apis.json`)
//! and trusted for [`DISCOVERY_TTL`], kubectl's 6 hours, so a warm command sends
//! only its own requests. As kubectl's deferred RESTMapper does, a type the user
//! names that the cached documents lack triggers one refetch in the same run
//! (the type may have been added since); and a 404 on a path the cache named
//! drops the cache ([`crate::conn::client::Connection::error`]).
//!
//! Names resolve as kubectl's RESTMapper resolves them (client-go's
//! `restmapper.NewDiscoveryRESTMapper` under apimachinery's `PriorityRESTMapper`): every
//! served version of every group is a candidate, tried in discovery's priority order
//! (the core group first, then group by group, each group's preferred version before its
//! others), and the first that answers to the name wins. So a kind served only in a
//! version the group does not prefer (MetalLB's `IPAddressPool` in `metallb.io/v1beta1`
//! beside `v1beta2`) is found, and a kind served in several versions is found in the
//! preferred one. [`ResourceType::preferred`] marks the one version "every type" lists
//! each resource in, so a scan lists it once.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::Duration;

use fieldwise_core::schema::Gvk;
use kube::client::{APIGroupDiscoveryList, APIResourceDiscovery};

use crate::conn::client::Connection;
use crate::error::{Error, Result};
use crate::local::cache::{ServerCache, CORE_DISCOVERY, GROUPS_DISCOVERY};
use crate::local::error::LocalError;

/// How long cached discovery is trusted: kubectl's disk cache uses 6 hours.
pub const DISCOVERY_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// One resource type at one version, as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Plural resource name used in URLs, e.g. `deployments`.
    pub plural: String,
    /// Singular name, e.g. `deployment`.
    pub singular: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
    /// Short names, e.g. `deploy`.
    pub short_names: Vec<String>,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Verbs the server allows on it.
    pub verbs: Vec<String>,
    /// Subresources, e.g. `status`, `scale`.
    pub subresources: Vec<String>,
    /// Whether this is the resource's preferred version, the one "every type" lists it in:
    /// its group's preferred version when that version serves it, else the first of the
    /// group's versions (in preference order) that does, as `kubectl api-resources` shows
    /// it (client-go's `ServerPreferredResources`, keyed by group and resource).
    pub preferred: bool,
}

impl ResourceType {
    /// A type of the core group (`v1`) that the glue reads by itself, without discovery
    /// (namespaces, Helm's release Secrets and ConfigMaps): `get` and `list`, as every served
    /// core type allows, with no short names and no subresources.
    pub fn core_v1(plural: &str, kind: &str, namespaced: bool) -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            short_names: vec![],
            namespaced,
            verbs: vec!["get".into(), "list".into()],
            subresources: vec![],
            preferred: true,
        }
    }

    /// Refuses a subresource the type does not have, as aggregated discovery lists them
    /// (a type with none lists none): sent, the server's 404 would read like a type it no
    /// longer serves.
    pub fn check_subresource(&self, name: &str) -> Result<()> {
        if self.subresources.iter().any(|s| s == name) {
            return Ok(());
        }
        let has = if self.subresources.is_empty() {
            "it has none".to_string()
        } else {
            format!("it has: {}", self.subresources.join(", "))
        };
        Err(Error::usage(format!("{} has no subresource \"{name}\" ({has})", self.display_name())))
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// kubectl's name for the type in messages: `deployment.apps`, `pod`.
    pub fn display_name(&self) -> String {
        let kind = self.kind.to_lowercase();
        if self.group.is_empty() {
            kind
        } else {
            format!("{kind}.{}", self.group)
        }
    }

    /// `plural.group`, as in RBAC messages and `kubectl api-resources`.
    pub fn plural_group(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether the server allows `verb` on this type.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether `word` names this type by plural, singular, short name or kind (case-insensitive).
    fn answers_to(&self, word: &str) -> bool {
        let word = word.to_lowercase();
        self.plural == word
            || self.singular == word
            || self.kind.to_lowercase() == word
            || self.short_names.contains(&word)
    }
}

/// Every resource type the cluster serves, in discovery's priority order.
#[derive(Debug, Clone, Default)]
pub struct ResourceCatalog {
    types: Vec<ResourceType>,
    /// Set when `types` came from the disk cache: how to ask the server again.
    refetch: Option<Refetch>,
    /// The server's fresh answer, once a cached catalog had to ask again.
    refetched: OnceLock<Vec<ResourceType>>,
}

/// The connection a cached catalog refetches through.
#[derive(Clone)]
struct Refetch(Connection);

impl std::fmt::Debug for Refetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Refetch({})", self.0.server)
    }
}

impl ResourceCatalog {
    /// Builds a catalog from resource types already in priority order.
    pub fn from_types(types: Vec<ResourceType>) -> Self {
        ResourceCatalog { types, ..Default::default() }
    }

    /// The cluster's types: from the disk cache when it is younger than
    /// [`DISCOVERY_TTL`], else from the server (and then cached).
    pub async fn fetch(conn: &Connection) -> Result<Self> {
        let cache = conn.discovery_cache();
        if let Some(types) = cache.as_ref().and_then(read_cache) {
            conn.set_discovery_from_cache(true);
            return Ok(ResourceCatalog { types, refetch: Some(Refetch(conn.clone())), refetched: OnceLock::new() });
        }
        conn.set_discovery_from_cache(false);
        Ok(Self::from_types(download(conn, &conn.client, cache.as_ref()).await?))
    }

    /// Whether the types came from the disk cache (and the server was not asked).
    pub fn is_cached(&self) -> bool {
        self.refetch.is_some() && self.refetched.get().is_none()
    }

    /// Every type, every version.
    pub fn types(&self) -> &[ResourceType] {
        self.refetched.get().unwrap_or(&self.types)
    }

    /// Resolves what a user typed, the way kubectl does: `deploy`,
    /// `deployment`, `deployments`, `Deployment`, `deployments.apps`,
    /// `deployments.v1.apps`, `Deployment.v1.apps`. A type a cached catalog
    /// lacks makes it ask the server once (see the module docs).
    pub fn resolve(&self, text: &str) -> Result<&ResourceType> {
        match resolve_in(self.types(), text) {
            Err(Error::UnknownResourceType(_)) if self.is_cached() => {
                let Some(Refetch(conn)) = &self.refetch else { unreachable!("is_cached checks refetch") };
                let fresh = refetch_blocking(conn)?;
                resolve_in(self.refetched.get_or_init(|| fresh), text)
            }
            other => other,
        }
    }
}

impl ResourceCatalog {
    /// The type serving exactly this group, version and kind (any version, preferred or
    /// not: a manifest names the version it was written for), as kubectl's RESTMapper
    /// maps the `apiVersion` and `kind` of a manifest. A cached catalog that lacks it asks
    /// the server once, as [`ResourceCatalog::resolve`] does.
    pub fn by_gvk(&self, gvk: &Gvk) -> Option<&ResourceType> {
        let find = |types: &'_ [ResourceType]| -> Option<usize> {
            types.iter().position(|t| t.group == gvk.group && t.version == gvk.version && t.kind == gvk.kind)
        };
        if let Some(i) = find(self.types()) {
            return self.types().get(i);
        }
        if !self.is_cached() {
            return None;
        }
        let Some(Refetch(conn)) = &self.refetch else { return None };
        // A refetch that fails leaves the answer "not served", which the caller reports.
        let fresh = refetch_blocking(conn).ok()?;
        let types = self.refetched.get_or_init(|| fresh);
        find(types).and_then(|i| types.get(i))
    }
}

/// kubectl's resolution over `types`, which are in discovery's priority order: the first
/// type, any version, that answers to the name (see the module docs).
fn resolve_in<'t>(types: &'t [ResourceType], text: &str) -> Result<&'t ResourceType> {
    if text.is_empty() {
        return Err(Error::usage("a resource type is required, e.g. deployment/NAME"));
    }
    if let Some((head, rest)) = text.split_once('.') {
        // `kind.version.group`: the version is explicit.
        if let Some((version, group)) = rest.split_once('.') {
            if let Some(t) = types.iter().find(|t| t.group == group && t.version == version && t.answers_to(head)) {
                return Ok(t);
            }
        }
        // `resource.group`: the first of the group's versions that serves it.
        if let Some(t) = types.iter().find(|t| t.group == rest && t.answers_to(head)) {
            return Ok(t);
        }
    }
    let lower = text.to_lowercase();
    // kubectl expands short names first, then matches resources, then kinds.
    let by = |pred: &dyn Fn(&ResourceType) -> bool| types.iter().find(|t| pred(t));
    by(&|t| t.short_names.contains(&lower))
        .or_else(|| by(&|t| t.plural == lower || t.singular == lower))
        .or_else(|| by(&|t| t.kind.to_lowercase() == lower))
        .ok_or_else(|| Error::UnknownResourceType(text.to_string()))
}

/// The cached types, if both documents are there, younger than the TTL and readable.
fn read_cache(cache: &ServerCache) -> Option<Vec<ResourceType>> {
    let mut types = Vec::new();
    for entry in [CORE_DISCOVERY, GROUPS_DISCOVERY] {
        if cache.age(entry)? >= DISCOVERY_TTL {
            return None;
        }
        let list: APIGroupDiscoveryList = serde_json::from_slice(&cache.read(entry)?).ok()?;
        collect(&list, &mut types);
    }
    Some(types)
}

/// Asks the server for both aggregated documents and caches them.
async fn download(conn: &Connection, client: &kube::Client, cache: Option<&ServerCache>) -> Result<Vec<ResourceType>> {
    let mut types = Vec::new();
    let mut documents = Vec::new();
    for (path, entry) in [("/api", CORE_DISCOVERY), ("/apis", GROUPS_DISCOVERY)] {
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, kube::core::discovery::v2::ACCEPT_AGGREGATED_DISCOVERY_V2)
            .body(Vec::new())
            .map_err(|e| Error::malformed(format!("the discovery request for {path}"), e))?;
        let text = client.request_text(request).await.map_err(|e| conn.error(e))?;
        let list: APIGroupDiscoveryList = serde_json::from_str(&text).map_err(|e| {
            Error::Unsupported {
                what: format!(
                    "the server at {} answered {path} without aggregated discovery ({e}); Kubernetes 1.30 or newer is needed",
                    conn.server
                ),
            }
        })?;
        if list.items.is_empty() && path == "/api" {
            return Err(Error::Unsupported {
                what: format!(
                    "the server at {} answered /api without aggregated discovery; Kubernetes 1.30 or newer is needed",
                    conn.server
                ),
            });
        }
        collect(&list, &mut types);
        documents.push((entry, text));
    }
    if let Some(cache) = cache {
        // A cache that cannot be written costs speed, never the command.
        for (entry, text) in documents {
            cache.write(entry, text.as_bytes()).ok();
        }
    }
    Ok(types)
}

/// Refetches from a synchronous caller inside the plugin's async runtime: on
/// its own thread, runtime and client, so it never waits on the runtime it is
/// called from (a `kube::Client` serves requests on the runtime it was made on).
fn refetch_blocking(conn: &Connection) -> Result<Vec<ResourceType>> {
    let conn = conn.clone();
    let worker = std::thread::spawn(move || -> Result<Vec<ResourceType>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LocalError::io_without_path("start the async runtime", e))?;
        runtime.block_on(async {
            let client = conn.fresh_client()?;
            let cache = conn.discovery_cache();
            let types = download(&conn, &client, cache.as_ref()).await;
            conn.set_discovery_from_cache(false);
            types
        })
    });
    worker.join().map_err(|_| Error::Stopped("the discovery refetch"))?
}

/// The types of an aggregated discovery document, in its priority order: groups as listed,
/// each group's versions in preference order (the preferred first), each version's resources.
/// A resource is [`ResourceType::preferred`] in the first version that serves it.
fn collect(list: &APIGroupDiscoveryList, out: &mut Vec<ResourceType>) {
    for group in &list.items {
        let group_name = group.metadata.as_ref().and_then(|m| m.name.clone()).unwrap_or_default();
        let mut listed = HashSet::new();
        for version in &group.versions {
            let version_name = version.version.clone().unwrap_or_default();
            for resource in &version.resources {
                let preferred = listed.insert(resource.resource.clone().unwrap_or_default());
                out.push(resource_type(&group_name, &version_name, preferred, resource));
            }
        }
    }
}

fn resource_type(group: &str, version: &str, preferred: bool, r: &APIResourceDiscovery) -> ResourceType {
    let plural = r.resource.clone().unwrap_or_default();
    let kind = r.response_kind.as_ref().and_then(|k| k.kind.clone()).unwrap_or_default();
    ResourceType {
        group: group.to_string(),
        version: version.to_string(),
        singular: r.singular_resource.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| kind.to_lowercase()),
        plural,
        kind,
        short_names: r.short_names.clone(),
        namespaced: r.scope.as_deref() == Some("Namespaced"),
        verbs: r.verbs.clone(),
        subresources: r.subresources.iter().filter_map(|s| s.subresource.clone()).collect(),
        preferred,
    }
}

#[cfg(test)]
impl ResourceCatalog {
    /// Test fixture: `apps/v1` deployments, and a group as MetalLB serves it: `v1beta2`
    /// preferred, with one kind; `v1beta1` with that kind again and two kinds only it serves.
    pub(crate) fn metallb_fixture() -> ResourceCatalog {
        let resource = |version: &str, plural: &str, kind: &str| {
            serde_json::json!({"resource": plural, "singularResource": kind.to_lowercase(), "scope": "Namespaced",
                "responseKind": {"group": "metallb.io", "version": version, "kind": kind},
                "verbs": ["get", "list", "patch"]})
        };
        let document = serde_json::json!({"kind": "APIGroupDiscoveryList", "items": [
            {"metadata": {"name": "apps"}, "versions": [
                {"version": "v1", "resources": [{"resource": "deployments", "singularResource": "deployment",
                    "shortNames": ["deploy"], "scope": "Namespaced", "verbs": ["get", "list"],
                    "responseKind": {"group": "apps", "version": "v1", "kind": "Deployment"}}]}]},
            {"metadata": {"name": "metallb.io"}, "versions": [
                {"version": "v1beta2", "resources": [resource("v1beta2", "bgppeers", "BGPPeer")]},
                {"version": "v1beta1", "resources": [
                    resource("v1beta1", "bgppeers", "BGPPeer"),
                    resource("v1beta1", "ipaddresspools", "IPAddressPool"),
                    resource("v1beta1", "l2advertisements", "L2Advertisement")]}]}]});
        let list: APIGroupDiscoveryList = serde_json::from_value(document).expect("an aggregated discovery document");
        let mut types = Vec::new();
        collect(&list, &mut types);
        ResourceCatalog::from_types(types)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(group: &str, version: &str, plural: &str, kind: &str, short: &[&str], preferred: bool) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            namespaced: true,
            verbs: vec!["get".into(), "patch".into()],
            subresources: vec![],
            preferred,
        }
    }

    fn catalog() -> ResourceCatalog {
        ResourceCatalog::from_types(vec![
            rt("", "v1", "pods", "Pod", &["po"], true),
            rt("", "v1", "events", "Event", &["ev"], true),
            rt("apps", "v1", "deployments", "Deployment", &["deploy"], true),
            rt("events.k8s.io", "v1", "events", "Event", &["ev"], true),
            rt("stable.example.com", "v1", "crontabs", "CronTab", &["ct"], true),
            rt("stable.example.com", "v1beta1", "crontabs", "CronTab", &["ct"], false),
        ])
    }

    #[test]
    fn resolves_every_kubectl_spelling() {
        let c = catalog();
        for text in [
            "deploy",
            "deployment",
            "deployments",
            "Deployment",
            "DEPLOYMENT",
            "deployments.apps",
            "deployment.apps",
            "deployments.v1.apps",
            "Deployment.v1.apps",
        ] {
            let t = c.resolve(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((t.group.as_str(), t.plural.as_str()), ("apps", "deployments"), "{text}");
        }
        for text in ["ct", "crontab", "crontabs", "CronTab", "crontabs.stable.example.com"] {
            assert_eq!(c.resolve(text).unwrap().version, "v1", "{text}");
        }
        assert_eq!(c.resolve("crontabs.v1beta1.stable.example.com").unwrap().version, "v1beta1");
    }

    #[test]
    fn core_group_wins_ties_like_kubectl() {
        assert_eq!(catalog().resolve("events").unwrap().group, "");
        assert_eq!(catalog().resolve("events.events.k8s.io").unwrap().group, "events.k8s.io");
    }

    #[test]
    fn unknown_type_reads_like_kubectl() {
        let err = catalog().resolve("frobnicators").unwrap_err().printed();
        assert!(err.starts_with("error: the server doesn't have a resource type \"frobnicators\""), "{err}");
        assert!(catalog().resolve("deployments.nosuchgroup").is_err());
    }

    #[test]
    fn finds_a_type_by_group_version_kind_preferred_or_not() {
        let c = catalog();
        assert_eq!(c.by_gvk(&Gvk::new("apps", "v1", "Deployment")).map(|t| t.plural.as_str()), Some("deployments"));
        assert_eq!(c.by_gvk(&Gvk::new("stable.example.com", "v1beta1", "CronTab")).map(|t| t.preferred), Some(false));
        assert_eq!(
            c.by_gvk(&Gvk::new("events.k8s.io", "v1", "Event")).map(|t| t.group.as_str()),
            Some("events.k8s.io")
        );
        // Exact: kind is case-sensitive as in a manifest, and the group must match.
        assert!(c.by_gvk(&Gvk::new("apps", "v1", "deployment")).is_none());
        assert!(c.by_gvk(&Gvk::new("", "v1", "Deployment")).is_none());
    }

    fn metallb() -> ResourceCatalog {
        ResourceCatalog::metallb_fixture()
    }

    #[test]
    fn a_kind_only_a_non_preferred_version_serves_resolves_like_kubectl() {
        let c = metallb();
        for text in [
            "ipaddresspool",
            "ipaddresspools",
            "IPAddressPool",
            "ipaddresspools.metallb.io",
            "IPAddressPool.metallb.io",
            "ipaddresspools.v1beta1.metallb.io",
        ] {
            let t = c.resolve(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((t.api_version().as_str(), t.plural.as_str()), ("metallb.io/v1beta1", "ipaddresspools"));
        }
        assert_eq!(c.resolve("l2advertisements").unwrap().api_version(), "metallb.io/v1beta1");
        // A kind both versions serve resolves in the preferred one, unless the version is named.
        for text in ["bgppeer", "bgppeers.metallb.io", "BGPPeer"] {
            assert_eq!(c.resolve(text).unwrap().api_version(), "metallb.io/v1beta2", "{text}");
        }
        assert_eq!(c.resolve("bgppeers.v1beta1.metallb.io").unwrap().api_version(), "metallb.io/v1beta1");
        assert!(matches!(c.resolve("ipaddresspools.v1beta2.metallb.io"), Err(Error::UnknownResourceType(_))));
    }

    #[test]
    fn each_resource_is_preferred_in_one_version_the_first_that_serves_it() {
        let preferred: Vec<String> =
            metallb().types().iter().filter(|t| t.preferred).map(|t| format!("{} {}", t.plural, t.version)).collect();
        assert_eq!(
            preferred,
            ["deployments v1", "bgppeers v1beta2", "ipaddresspools v1beta1", "l2advertisements v1beta1"]
        );
    }

    #[test]
    fn paths_and_names() {
        let c = catalog();
        let d = c.resolve("deploy").unwrap();
        assert_eq!(
            crate::api::request_url::object_path(d, Some("ns"), "x", Some("scale")).unwrap(),
            "/apis/apps/v1/namespaces/ns/deployments/x/scale"
        );
        assert_eq!(d.display_name(), "deployment.apps");
        let p = c.resolve("po").unwrap();
        assert_eq!(crate::api::request_url::collection_path(p, None).unwrap(), "/api/v1/pods");
        assert_eq!(p.display_name(), "pod");
    }
}
