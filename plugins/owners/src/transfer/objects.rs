//! The objects a transfer acts on, read as they are now: chosen as kubectl chooses them
//! ([`selection::read_selected`]: `TYPE/NAME`, `TYPE -l SELECTOR [-A]`, `--all`, or `-f`),
//! the `-f` documents being the `--to` manager's configuration, which comes along for the
//! prediction of its next apply.

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::api::selection;
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
