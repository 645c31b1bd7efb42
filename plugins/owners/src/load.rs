//! Finding the objects to examine: named or selected in the cluster, read
//! through the types of files given with -f, or read from files alone (`--local`).

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::listing::{self, Scope, Selectors};
use fieldwise_kube::api::manifests::Manifest;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::{Error, Result};

use crate::subject::Subject;

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
    let scope = NamespaceScope::of(conn);
    let mut out = Vec::new();
    for m in manifests {
        let target = ObjectRef::from_manifest(&m.value, &m.source, catalog, &scope)?;
        let object = objects::get(conn, &target, None).await?;
        out.push(Subject { display: target.display(), object, source: None });
    }
    Ok(out)
}

/// The objects named or selected on the command line.
pub async fn from_targets(
    conn: &Connection,
    catalog: &ResourceCatalog,
    targets: &[String],
    selector: Option<&str>,
    all_namespaces: bool,
) -> Result<Vec<Subject>> {
    let refs = ObjectRef::from_args(targets, catalog, &NamespaceScope::of(conn))?;
    let mut out = Vec::new();
    for target in &refs {
        if !target.name.is_empty() {
            if selector.is_some() {
                return Err(Error::usage("a label selector (-l) cannot be combined with object names"));
            }
            if all_namespaces {
                // kubectl's refusal: a name means one namespace, and -A says there is none.
                return Err(Error::usage(
                    "a resource cannot be retrieved by name across all namespaces: drop -A, and give -n NAMESPACE",
                ));
            }
            let object = objects::get(conn, target, None).await?;
            out.push(Subject { display: target.display(), object, source: None });
            continue;
        }
        let scope = match &target.namespace {
            _ if all_namespaces => Scope::AllNamespaces,
            Some(namespace) => Scope::Namespace(namespace.clone()),
            None => Scope::of(conn, false), // a cluster-scoped type: listed whole
        };
        for object in listing::list(conn, &target.resource, &scope, &Selectors::label(selector)).await? {
            let display = ObjectRef::of_object(&target.resource, &object).display();
            out.push(Subject { display, object, source: None });
        }
    }
    Ok(out)
}
