//! Finding the objects to examine: named or selected in the cluster, read
//! through the types of files given with -f, or read from files alone (`--local`).

use fieldwise_kube::client::Connection;
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::manifests::Manifest;
use fieldwise_kube::objects::{self, ListOptions};
use fieldwise_kube::target::TargetArgs;
use fieldwise_kube::{Error, Result};
use serde_json::Value;

use crate::subject::Subject;
use crate::tree::find_type;

/// Objects from files, as they are (`--local`).
pub fn local(manifests: Vec<Manifest>) -> Vec<Subject> {
    manifests.into_iter().map(|m| Subject::from_object(m.value, Some(m.source))).collect()
}

/// The live objects that the files describe (by apiVersion, kind, name and namespace).
pub async fn live_from_files(
    conn: &Connection,
    catalog: &ResourceCatalog,
    manifests: &[Manifest],
) -> Result<Vec<Subject>> {
    let mut out = Vec::new();
    for m in manifests {
        let text = |p: &str| m.value.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
        let resource = resource_of(catalog, &m.value, &m.source)?;
        let name = text("/metadata/name");
        if name.is_empty() {
            return Err(Error::usage(format!("{}: the object has no metadata.name", m.source)));
        }
        let namespace = text("/metadata/namespace");
        let namespace =
            resource.namespaced.then(|| if namespace.is_empty() { conn.namespace.clone() } else { namespace });
        let url = resource.object_path(namespace.as_deref(), &name, None);
        let object = objects::send(conn, http::Request::get(url).body(Vec::new())).await?;
        out.push(Subject { display: format!("{}/{name}", resource.display_name()), object, source: None });
    }
    Ok(out)
}

/// The served type of an object read from a file.
pub fn resource_of<'c>(
    catalog: &'c ResourceCatalog,
    object: &Value,
    source: &str,
) -> Result<&'c fieldwise_kube::discovery::ResourceType> {
    let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
    if api_version.is_empty() || kind.is_empty() {
        return Err(Error::usage(format!("{source}: the object has no apiVersion or kind")));
    }
    find_type(catalog, api_version, kind).ok_or_else(|| {
        Error::usage(format!("{source}: no matches for kind \"{kind}\" in version \"{api_version}\" on this cluster"))
    })
}

/// The objects named or selected on the command line.
pub async fn from_targets(
    conn: &Connection,
    catalog: &ResourceCatalog,
    targets: &[String],
    selector: Option<&str>,
    all_namespaces: bool,
) -> Result<Vec<Subject>> {
    let args = TargetArgs::parse(targets)?;
    let refs = args.resolve(catalog, &conn.namespace)?;
    let mut out = Vec::new();
    for target in &refs {
        if !target.name.is_empty() {
            if selector.is_some() {
                return Err(Error::usage("a label selector (-l) cannot be combined with object names"));
            }
            let object = objects::get(conn, target, None).await?;
            out.push(Subject { display: target.display(), object, source: None });
            continue;
        }
        let namespace = if all_namespaces { None } else { target.namespace.as_deref() };
        let options = ListOptions { label_selector: selector.map(str::to_string), ..Default::default() };
        for object in objects::list(conn, &target.resource, namespace, &options).await? {
            let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
            out.push(Subject { display: format!("{}/{name}", target.resource.display_name()), object, source: None });
        }
    }
    Ok(out)
}
