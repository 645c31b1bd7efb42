//! The objects a transfer acts on, read as they are now: chosen as kubectl chooses them
//! ([`selection::read_selected`]: `TYPE/NAME`, `TYPE -l SELECTOR [-A]`, `--all`, or `-f`),
//! the `-f` documents being the `--to` manager's configuration, which comes along for the
//! prediction of its next apply; or the objects of a Helm release (`--helm-release`), its
//! manifest as Helm sends it being the configuration.

use fieldwise_core::release::helm::with_release_metadata;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::api::{helm_release, objects, selection};
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
    if let Some(name) = &args.helm_release {
        return of_helm_release(conn, catalog, name, args.revision).await;
    }
    let selection = args.selection.for_writing();
    let selected = selection::read_selected(conn, catalog, &selection).await?;
    if let Some(s) = selected.iter().find(|s| !s.target.resource.supports("patch")) {
        return Err(Error::usage(format!(
            "{} cannot be patched (the server does not allow it), so its managers cannot be changed",
            s.target.resource.display_name()
        )));
    }
    Ok(selected
        .into_iter()
        .map(|s| {
            let (config, source) = s.manifest.map(|m| (m.value, m.source)).unzip();
            Subject { target: s.target, live: s.live, config, source }
        })
        .collect())
}

/// The objects of Helm release `name` (the connection's namespace), in its manifest's order,
/// each with its configuration as Helm sends it (its label and release annotations added,
/// the release's namespace where it names none). An object the cluster no longer has has
/// nothing to transfer: it is named on stderr and left out.
async fn of_helm_release(
    conn: &Connection,
    catalog: &ResourceCatalog,
    name: &str,
    revision: Option<u64>,
) -> Result<Vec<Subject>> {
    let release = helm_release::read(conn, &conn.namespace, name, revision).await?;
    let scope = NamespaceScope { namespace: release.namespace.clone(), explicit: false };
    let mut subjects = Vec::new();
    for manifest in helm_release::objects(&release)? {
        let mut config = with_release_metadata(manifest.value, &release.name, &release.namespace);
        let target = ObjectRef::from_manifest(&config, &manifest.source, catalog, &scope)?;
        if let Some(namespace) = &target.namespace {
            config["metadata"]["namespace"] = namespace.clone().into();
        }
        if !target.resource.supports("patch") {
            return Err(Error::usage(format!(
                "{} cannot be patched (the server does not allow it), so its managers cannot be changed",
                target.resource.display_name()
            )));
        }
        match objects::get(conn, &target, None).await {
            Ok(live) => subjects.push(Subject { target, live, config: Some(config), source: Some(manifest.source) }),
            Err(e) if e.is_not_found() => {
                eprintln!("warning: {} ({}) does not exist: nothing to transfer", target.display(), manifest.source)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(subjects)
}
