//! Prunes read from the cluster: which objects of a previous set (a Helm release's
//! manifest) an apply of the next set deletes, each with what its live object says about
//! deleting it. The rule is [`fieldwise_core::release::prune`]'s; this module resolves the objects'
//! types, reads the live objects and hands over.

use fieldwise_core::release::prune::{self, Blocker, PruneKey};

use crate::api::discovery::ResourceCatalog;
use crate::api::manifests::Manifest;
use crate::api::objects;
use crate::api::reference::{NamespaceScope, ObjectRef};
use crate::conn::client::Connection;
use crate::error::Result;

/// One object the apply deletes (or would, but for a keep policy).
#[derive(Debug, Clone)]
pub struct Prune {
    /// The object.
    pub target: ObjectRef,
    /// `apiVersion` as the previous set wrote it.
    pub api_version: String,
    /// What deleting it may surprise with.
    pub blockers: Vec<Blocker>,
}

impl Prune {
    /// Whether it is kept (`helm.sh/resource-policy: keep`) rather than deleted.
    pub fn kept(&self) -> bool {
        prune::kept(&self.blockers)
    }
}

/// The key prunes match objects by.
pub fn key(target: &ObjectRef) -> PruneKey {
    PruneKey {
        group: target.resource.group.clone(),
        kind: target.resource.kind.clone(),
        namespace: target.namespace.clone(),
        name: target.name.clone(),
    }
}

/// The objects of `previous` that `next` no longer has and that exist, read live, for
/// `manager`. Objects whose type the server does not serve cannot exist and are skipped, as
/// are objects already gone.
pub async fn prunes(
    conn: &Connection,
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    previous: &[Manifest],
    next: &[Manifest],
    manager: &str,
) -> Result<Vec<Prune>> {
    let resolve = |m: &Manifest| ObjectRef::from_manifest(&m.value, &m.source, catalog, scope).ok();
    let old: Vec<(ObjectRef, &Manifest)> = previous.iter().filter_map(|m| resolve(m).map(|r| (r, m))).collect();
    let old_keys: Vec<PruneKey> = old.iter().map(|(r, _)| key(r)).collect();
    let new_keys: Vec<PruneKey> = next.iter().filter_map(resolve).map(|r| key(&r)).collect();
    let mut out = Vec::new();
    for gone in prune::pruned(&old_keys, &new_keys) {
        let Some((target, manifest)) = old.iter().find(|(r, _)| &key(r) == gone) else { continue };
        let live = match objects::get(conn, target, None).await {
            Ok(live) => live,
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        let api_version = manifest.value.get("apiVersion").and_then(|v| v.as_str()).unwrap_or_default().to_string();
        out.push(Prune { target: target.clone(), api_version, blockers: prune::blockers(&live, manager) });
    }
    Ok(out)
}
