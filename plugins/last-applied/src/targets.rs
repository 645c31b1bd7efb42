//! The objects a command acts on: `TYPE/NAME` arguments or the objects of `-f` files.

use fieldwise_kube::client::Connection;
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::manifests;
use fieldwise_kube::target::{ObjectRef, TargetArgs};
use serde_json::Value;

/// Resolves `TYPE/NAME` or `TYPE NAME...` arguments; every one needs a name.
pub fn from_args(args: &[String], catalog: &ResourceCatalog, conn: &Connection) -> Result<Vec<ObjectRef>> {
    let targets = TargetArgs::parse(args)?.resolve(catalog, &conn.namespace)?;
    if let Some(t) = targets.iter().find(|t| t.name.is_empty()) {
        return Err(Error::usage(format!("a name is required: {}/NAME", t.resource.display_name())));
    }
    Ok(targets)
}

/// The objects of `-f` files, each with the object it names in the cluster.
pub fn from_files(files: &[String], catalog: &ResourceCatalog, conn: &Connection) -> Result<Vec<(ObjectRef, Value)>> {
    let mut out = Vec::new();
    for manifest in manifests::read(files, false)? {
        let object = manifest.value;
        let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
        let (kind, api_version, name) = (text("/kind"), text("/apiVersion"), text("/metadata/name"));
        if kind.is_empty() || api_version.is_empty() || name.is_empty() {
            return Err(Error::usage(format!(
                "{}: the object needs apiVersion, kind and metadata.name",
                manifest.source
            )));
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let spelled = if group.is_empty() { kind.clone() } else { format!("{kind}.{version}.{group}") };
        let resource = catalog.resolve(&spelled)?.clone();
        let file_ns = text("/metadata/namespace");
        let namespace = resource.namespaced.then(|| if file_ns.is_empty() { conn.namespace.clone() } else { file_ns });
        out.push((ObjectRef { resource, namespace, name }, object));
    }
    if out.is_empty() {
        return Err(Error::usage(format!("no objects found in {}", files.join(", "))));
    }
    Ok(out)
}
