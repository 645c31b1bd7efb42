//! `--tree`: the ownerReferences chain up to the root, and everything owned below it.
//!
//! Up: each owner is read by its apiVersion, kind and name (in the object's
//! namespace, or cluster-wide for cluster-scoped owners). Down: every listable
//! type is listed once through the glue's listing engine (namespaced types in the
//! object's namespace, or in all namespaces for a cluster-scoped object, and
//! cluster-scoped types; a few at a time), and objects are attached to their
//! owners by uid. Types the user may not list are skipped and named. How the tree
//! is shown: `tree_view`.

use std::collections::{HashMap, HashSet};

use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::listing::{listable_types, ListOptions, Lister, Scope, Selectors};
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::{owner_display_name, ObjectRef};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::ReferenceError;
use fieldwise_kube::{ConnError, Error, Result};
use serde_json::Value;

use crate::subject::Subject;

/// A type that could not be searched, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// `plural.group`.
    pub resource: String,
    /// Why (e.g. `forbidden`).
    pub reason: String,
}

/// The ownership tree around one object.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The root object (the target itself when it has no owners).
    pub root: Value,
    /// uid -> (child, whether the reference is the controller one), in a stable order.
    pub children: HashMap<String, Vec<(Value, bool)>>,
    /// The uid of the object asked about.
    pub target_uid: String,
    /// Owners that could not be read on the way up.
    pub missing_owners: Vec<String>,
    /// Types not searched on the way down.
    pub skipped: Vec<Skipped>,
}

/// Builds the tree around `subject`.
pub async fn build(conn: &Connection, catalog: &ResourceCatalog, subject: &Subject) -> Result<Tree> {
    let target_uid = uid(&subject.object).to_string();
    let (root, missing_owners) = walk_up(conn, catalog, &subject.object).await;
    let namespace = subject.object.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_string);
    let (all, skipped) = list_everything(conn, catalog, namespace.as_deref()).await;
    let mut children: HashMap<String, Vec<(Value, bool)>> = HashMap::new();
    for object in all {
        for r in object.pointer("/metadata/ownerReferences").and_then(Value::as_array).into_iter().flatten() {
            let owner = r.get("uid").and_then(Value::as_str).unwrap_or_default().to_string();
            let controller = r.get("controller").and_then(Value::as_bool).unwrap_or(false);
            children.entry(owner).or_default().push((object.clone(), controller));
        }
    }
    for list in children.values_mut() {
        list.sort_by_key(|(o, _)| sort_key(o));
    }
    Ok(Tree { root, children, target_uid, missing_owners, skipped })
}

fn uid(object: &Value) -> &str {
    object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
}

fn sort_key(object: &Value) -> (String, String, String) {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    (text("/kind"), text("/metadata/namespace"), text("/metadata/name"))
}

/// Follows the controller reference (else the first one) up to an object with no owners.
async fn walk_up(conn: &Connection, catalog: &ResourceCatalog, object: &Value) -> (Value, Vec<String>) {
    let mut here = object.clone();
    let mut missing = Vec::new();
    let mut seen = HashSet::new();
    while seen.insert(uid(&here).to_string()) && seen.len() < 32 {
        let refs = here.pointer("/metadata/ownerReferences").and_then(Value::as_array).cloned().unwrap_or_default();
        let Some(owner) = refs.iter().find(|r| r["controller"] == true).or(refs.first()) else { break };
        let name = owner_display_name(owner);
        let namespace = here.pointer("/metadata/namespace").and_then(Value::as_str);
        let target = match ObjectRef::from_owner_reference(owner, namespace, catalog) {
            Ok(target) => target,
            Err(ReferenceError::NoMatchForKind { api_version, .. }) => {
                missing.push(format!("{name} (type {api_version} not served)"));
                break;
            }
            Err(e) => {
                missing.push(e.to_string());
                break;
            }
        };
        let resource = &target.resource;
        let owner_uid = owner.get("uid").and_then(Value::as_str).unwrap_or_default();
        match objects::get(conn, &target, None).await {
            Ok(mut parent) if uid(&parent) == owner_uid => {
                restore_type(&mut parent, resource);
                here = parent;
            }
            Ok(_) => {
                missing.push(format!("{name} (replaced by a newer object with another uid)"));
                break;
            }
            Err(e) => {
                missing.push(format!("{name} ({})", short_reason(&e)));
                break;
            }
        }
    }
    (here, missing)
}

fn restore_type(object: &mut Value, resource: &ResourceType) {
    if let Value::Object(map) = object {
        map.entry("apiVersion").or_insert_with(|| resource.api_version().into());
        map.entry("kind").or_insert_with(|| resource.kind.clone().into());
    }
}

fn short_reason(err: &Error) -> String {
    match err {
        Error::Conn(ConnError::Api { code: 403, .. }) => "forbidden".into(),
        Error::Conn(ConnError::Api { code: 404, .. }) => "not found".into(),
        Error::Conn(ConnError::NoLongerServed { .. }) => "no longer served".into(),
        Error::Conn(ConnError::Api { reason, .. }) => reason.to_lowercase(),
        other => other.to_string(),
    }
}

/// Lists every listable type around `namespace` (see the module docs), a few at a time.
async fn list_everything(
    conn: &Connection,
    catalog: &ResourceCatalog,
    namespace: Option<&str>,
) -> (Vec<Value>, Vec<Skipped>) {
    let scope = match namespace {
        Some(ns) => Scope::NamespaceAndCluster(ns.to_string()),
        None => Scope::AllNamespaces,
    };
    // Events name objects but are never owned by them; skip the noise.
    let types = listable_types(catalog, &scope).into_iter().filter(|t| t.plural != "events").collect();
    let lister = Lister::new(conn, scope, Selectors::default(), ListOptions::default());
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    for (resource, listed) in lister.list_each(types).await {
        match listed {
            Ok(items) => all.extend(items),
            Err(e) => skipped.push(Skipped { resource: resource.plural_group(), reason: short_reason(&e) }),
        }
    }
    skipped.sort_by(|a, b| a.resource.cmp(&b.resource));
    (all, skipped)
}
