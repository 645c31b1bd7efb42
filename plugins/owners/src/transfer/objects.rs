//! The objects a transfer acts on, read as they are now: named (`TYPE/NAME`), selected
//! (`TYPE -l SELECTOR [-A]`), or described by the `--to` manager's configuration files
//! (`-f`), which then come along for the prediction of its next apply.

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::listing::{self, Scope, Selectors};
use fieldwise_kube::api::manifests;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::{Error, Result};
use serde_json::Value;

use super::TransferArgs;

/// One object to transfer.
#[derive(Debug, Clone)]
pub struct Subject {
    /// Where it is.
    pub target: ObjectRef,
    /// The object as read (the preview is planned against it; the write re-reads on a lost race).
    pub live: Value,
    /// The `--to` manager's configuration of it, from `-f`.
    pub config: Option<Value>,
    /// The file (and document) the configuration came from.
    pub source: Option<String>,
}

/// The objects the command line names, in its order.
pub async fn resolve(conn: &Connection, catalog: &ResourceCatalog, args: &TransferArgs) -> Result<Vec<Subject>> {
    let scope = NamespaceScope::of(conn);
    let subjects = match (args.targets.is_empty(), args.filenames.is_empty()) {
        (true, true) => {
            return Err(Error::usage(
                "you must specify the objects: TYPE/NAME, TYPE -l SELECTOR, or -f FILE (see kubectl owners transfer --help)",
            ))
        }
        (false, false) => return Err(Error::usage("give either objects (TYPE/NAME) or -f files, not both")),
        (true, false) => {
            if args.selector.is_some() || args.all_namespaces {
                return Err(Error::usage("-l and -A select objects of a TYPE; with -f the files name the objects"));
            }
            from_files(conn, catalog, &scope, args).await?
        }
        (false, true) => from_targets(conn, catalog, &scope, args).await?,
    };
    if let Some(s) = subjects.iter().find(|s| !s.target.resource.supports("patch")) {
        return Err(Error::usage(format!(
            "{} cannot be patched (the server does not allow it), so its managers cannot be changed",
            s.target.resource.display_name()
        )));
    }
    Ok(subjects)
}

async fn from_files(
    conn: &Connection,
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    args: &TransferArgs,
) -> Result<Vec<Subject>> {
    let manifests = manifests::read(&args.filenames, args.recursive)?;
    // Every file is checked before anything is read, so a bad one fails fast.
    let targets = manifests
        .iter()
        .map(|m| ObjectRef::from_manifest(&m.value, &m.source, catalog, scope))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for (manifest, target) in manifests.into_iter().zip(targets) {
        let live = objects::get(conn, &target, None).await?;
        out.push(Subject { target, live, config: Some(manifest.value), source: Some(manifest.source) });
    }
    Ok(out)
}

async fn from_targets(
    conn: &Connection,
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    args: &TransferArgs,
) -> Result<Vec<Subject>> {
    let refs = ObjectRef::from_args(&args.targets, catalog, scope)?;
    let named = refs.iter().any(|r| !r.name.is_empty());
    if named && (args.selector.is_some() || args.all_namespaces) {
        return Err(Error::usage("-l and -A select objects of a TYPE; they cannot be combined with object names"));
    }
    let mut out = Vec::new();
    for target in refs {
        if !target.name.is_empty() {
            let live = objects::get(conn, &target, None).await?;
            out.push(Subject { target, live, config: None, source: None });
            continue;
        }
        listing::require_listable(&target.resource)?;
        let scope = match &target.namespace {
            _ if args.all_namespaces => Scope::AllNamespaces,
            Some(namespace) => Scope::Namespace(namespace.clone()),
            None => Scope::of(conn, false), // a cluster-scoped type: listed whole
        };
        let selectors = Selectors::label(args.selector.as_deref());
        for live in listing::list(conn, &target.resource, &scope, &selectors).await? {
            let target = ObjectRef::of_object(&target.resource, &live);
            out.push(Subject { target, live, config: None, source: None });
        }
    }
    Ok(out)
}
