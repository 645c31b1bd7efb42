//! An ApplySet read from the cluster as `kubectl apply --prune --applyset` reads it: its
//! parent (`[TYPE[.GROUP]/]NAME`, a Secret by default), and the members an apply of a new
//! set prunes (every object of the parent's group-kinds, in its namespaces, labelled as a
//! member, that the new set does not hold), each with what its live object says about
//! deleting it. The rules are [`fieldwise_core::release::applyset`]'s; this module resolves, lists
//! and hands over.

use fieldwise_core::release::applyset::{self, ParentRef};
use fieldwise_core::release::prune::{self, Blocker, PruneKey};
use futures::StreamExt;
use serde_json::Value;

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::listing::{ListOptions, Lister, Representation, Scope, Selectors};
use crate::api::manifests::Manifest;
use crate::api::object_prune::{key, Prune};
use crate::api::objects;
use crate::api::reference::{NamespaceScope, ObjectRef};
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// The set `--applyset` names.
#[derive(Debug, Clone)]
pub struct ApplySet {
    /// The parent object.
    pub parent: ObjectRef,
    /// The set's ID: the members' `applyset.kubernetes.io/part-of` label.
    pub id: String,
}

impl ApplySet {
    /// The parent `[TYPE[.GROUP]/]NAME` names, as kubectl's `--applyset` reads it (a Secret
    /// when no type is given; a namespaced parent in `namespace`).
    pub fn resolve(text: &str, catalog: &ResourceCatalog, namespace: &str) -> Result<ApplySet> {
        let (kind, name) = text.split_once('/').unwrap_or(("secrets", text));
        if name.is_empty() || kind.is_empty() {
            return Err(Error::usage(format!("--applyset {text}: give [TYPE[.GROUP]/]NAME, e.g. configmaps/web-set")));
        }
        let resource = catalog.resolve(kind)?.clone();
        let namespace = resource.namespaced.then(|| namespace.to_string());
        let reference = ParentRef {
            group: resource.group.clone(),
            kind: resource.kind.clone(),
            name: name.to_string(),
            namespace: namespace.clone(),
        };
        let id = applyset::id(&reference);
        Ok(ApplySet { parent: ObjectRef { resource, namespace, name: name.to_string() }, id })
    }

    /// The members an apply of `next` prunes, sorted by group, kind, namespace and name, for
    /// `manager`: none while the parent does not exist (the apply creates it).
    pub async fn prunes(
        &self,
        conn: &Connection,
        catalog: &ResourceCatalog,
        scope: &NamespaceScope,
        next: &[Manifest],
        manager: &str,
    ) -> Result<Vec<Prune>> {
        self.require_parent_type(conn, catalog).await?;
        let live = match objects::get(conn, &self.parent, None).await {
            Ok(live) => live,
            Err(e) if e.is_not_found() => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let reference = ParentRef {
            group: self.parent.resource.group.clone(),
            kind: self.parent.resource.kind.clone(),
            name: self.parent.name.clone(),
            namespace: self.parent.namespace.clone(),
        };
        let parent = applyset::read_parent(&reference, &live)
            .map_err(|e| Error::usage(format!("the ApplySet parent {} cannot be used: {e}", self.parent.located())))?;
        let next_keys: Vec<PruneKey> = next
            .iter()
            .filter_map(|m| ObjectRef::from_manifest(&m.value, &m.source, catalog, scope).ok())
            .map(|r| key(&r))
            .collect();
        let selector = format!("{}={}", applyset::PART_OF_LABEL, parent.id);
        let mut out = Vec::new();
        for gk in &parent.group_kinds {
            let types = catalog.types().iter().filter(|t| t.group == gk.group && t.kind == gk.kind);
            let resource = types.clone().find(|t| t.preferred).or_else(|| types.clone().next()).ok_or_else(|| {
                Error::usage(format!(
                    "the ApplySet parent {} lists {}.{} in {}, which the server does not serve",
                    self.parent.located(),
                    gk.kind,
                    gk.group,
                    applyset::GROUP_KINDS_ANNOTATION
                ))
            })?;
            let namespaces: Vec<Option<&str>> = if resource.namespaced {
                parent.namespaces.iter().map(|n| Some(n.as_str())).collect()
            } else {
                vec![None]
            };
            for namespace in namespaces {
                // Through the one listing engine: paged, the member label as its selector.
                let scope = match namespace {
                    Some(namespace) => Scope::Namespace(namespace.to_string()),
                    None => Scope::AllNamespaces,
                };
                let lister = Lister::new(conn, scope, Selectors::label(Some(&selector)), ListOptions::default());
                let mut items = Vec::new();
                let mut pages = std::pin::pin!(lister.pages(resource, Representation::Full));
                while let Some(page) = pages.next().await {
                    items.extend(page?);
                }
                for item in items {
                    let target = ObjectRef::of_object(resource, &item);
                    if next_keys.contains(&key(&target)) {
                        continue;
                    }
                    // kubectl deletes every member it did not apply: Helm's keep policy is Helm's.
                    let blockers: Vec<Blocker> = prune::blockers(&item, manager)
                        .into_iter()
                        .filter(|b| *b != Blocker::ResourcePolicyKeep)
                        .collect();
                    out.push(Prune { target, api_version: resource.api_version(), blockers });
                }
            }
        }
        out.sort_by_key(|p| key(&p.target));
        Ok(out)
    }

    /// kubectl's rule for the parent's type: a Secret or a ConfigMap, or a custom resource
    /// whose CustomResourceDefinition carries `applyset.kubernetes.io/is-parent-type: "true"`;
    /// anything else is refused with kubectl's words.
    async fn require_parent_type(&self, conn: &Connection, catalog: &ResourceCatalog) -> Result<()> {
        let parent = &self.parent.resource;
        if parent.group.is_empty() && matches!(parent.plural.as_str(), "secrets" | "configmaps") {
            return Ok(());
        }
        let crds: &ResourceType = catalog.resolve("customresourcedefinitions.apiextensions.k8s.io")?;
        let crd =
            ObjectRef { resource: crds.clone(), namespace: None, name: format!("{}.{}", parent.plural, parent.group) };
        let permitted = match objects::get(conn, &crd, None).await {
            Ok(definition) => {
                definition.pointer(&format!("/metadata/labels/{}", applyset::PARENT_TYPE_LABEL.replace('/', "~1")))
                    == Some(&Value::String("true".into()))
            }
            Err(e) if e.is_not_found() => false,
            Err(e) => return Err(e),
        };
        if permitted {
            return Ok(());
        }
        Err(Error::usage(format!(
            "resource \"{}/{}, Resource={}\" is not permitted as an ApplySet parent (its CustomResourceDefinition needs the label {}=true)",
            parent.group, parent.version, parent.plural, applyset::PARENT_TYPE_LABEL
        )))
    }
}
