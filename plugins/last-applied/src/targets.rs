//! The objects a command acts on: `TYPE/NAME` arguments or the objects of `-f` files (or of a
//! `-k` kustomization), with the configuration each document holds.

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::api::selection::{self, Selection};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::Result;
use serde_json::Value;

/// Resolves `TYPE/NAME` or `TYPE NAME...` arguments; every one needs a name.
pub fn from_args(args: &[String], catalog: &ResourceCatalog, conn: &Connection) -> Result<Vec<ObjectRef>> {
    ObjectRef::named_from_args(args, catalog, &NamespaceScope::of(conn))
}

/// The objects of the selection's documents (`-f`, `-R`, `-k`), each with the object it names
/// in the cluster (files without objects are refused by [`selection::documents`]).
pub fn from_documents(
    selection: &Selection<'_>,
    catalog: &ResourceCatalog,
    conn: &Connection,
) -> Result<Vec<(ObjectRef, Value)>> {
    let scope = NamespaceScope::of(conn);
    selection::documents(selection)?
        .into_iter()
        .map(|manifest| {
            let target = ObjectRef::from_manifest(&manifest.value, &manifest.source, catalog, &scope)?;
            Ok((target, manifest.value))
        })
        .collect()
}
