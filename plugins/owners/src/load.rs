//! Finding the objects to examine: named or selected in the cluster, read
//! through the types of files given with -f, or read from files alone (`--local`).

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::manifests::Manifest;
use fieldwise_kube::api::selection;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::Result;

use crate::subject::Subject;
use crate::Cli;

/// Objects from files, as they are (`--local`).
pub fn local(manifests: Vec<Manifest>) -> Vec<Subject> {
    manifests.into_iter().map(|m| Subject::from_object(m.value, Some(m.source))).collect()
}

/// The live objects the command line names or selects, or that the `-f` files describe,
/// chosen as `kubectl get` chooses them (a TYPE alone lists every object of it).
pub async fn live(conn: &Connection, catalog: &ResourceCatalog, cli: &Cli) -> Result<Vec<Subject>> {
    let selection = cli.selection.for_reading();
    let selected = selection::read_selected(conn, catalog, &selection).await?;
    Ok(selected.into_iter().map(|s| Subject { display: s.target.display(), object: s.live, source: None }).collect())
}
