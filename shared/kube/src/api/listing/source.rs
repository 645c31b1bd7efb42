//! The two requests the engine sends (one page of a list, one object) behind a seam:
//! a [`Connection`] answers them for real, the engine's unit tests answer from memory
//! (and count what was asked, and how much at once).

use futures::future::LocalBoxFuture;
use http::Request;
use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::listing::Selectors;
use crate::api::objects::{self, send};
use crate::api::reference::ObjectRef;
use crate::api::request_url;
use crate::conn::client::Connection;
use crate::error::Result;

/// The Accept header that asks the apiserver for metadata-only lists
/// (`PartialObjectMetadataList`): names, labels, annotations and managedFields without the
/// bodies, a fraction of the bytes of a full list.
pub const PARTIAL_METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// How a page is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// Metadata only (`PartialObjectMetadataList`); items get the type's `apiVersion` and
    /// `kind` back, so they read like full objects without bodies.
    Metadata,
    /// Full objects.
    Full,
}

/// One page request: a type, where, which objects, how many, from where.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRequest<'a> {
    /// The type listed.
    pub resource: &'a ResourceType,
    /// Its namespace; `None` for all namespaces or a cluster-scoped type.
    pub namespace: Option<&'a str>,
    /// `-l` and `--field-selector`.
    pub selectors: &'a Selectors,
    /// Page size; `None` lets the server choose (usually everything).
    pub limit: Option<u32>,
    /// The `continue` token; `None` for the first page.
    pub token: Option<&'a str>,
    /// Metadata only, or full objects.
    pub representation: Representation,
}

/// One page of a list.
#[derive(Debug, Default)]
pub(crate) struct Page {
    /// Its objects, with `apiVersion` and `kind` restored.
    pub items: Vec<Value>,
    /// The token of the next page; `None` after the last.
    pub next: Option<String>,
    /// How many objects the following pages hold, when the server counts them (it does
    /// not when a selector filters the list).
    pub remaining: Option<u64>,
    /// The list's `resourceVersion`: a watch from it misses no change after the list.
    pub resource_version: Option<String>,
}

/// What the engine asks of a server.
pub(crate) trait Source {
    /// One page of a list.
    fn page<'a>(&'a self, request: PageRequest<'a>) -> LocalBoxFuture<'a, Result<Page>>;
    /// One whole object.
    fn get<'a>(&'a self, target: &'a ObjectRef) -> LocalBoxFuture<'a, Result<Value>>;
}

impl Source for Connection {
    fn page<'a>(&'a self, request: PageRequest<'a>) -> LocalBoxFuture<'a, Result<Page>> {
        Box::pin(fetch_page(self, request))
    }

    fn get<'a>(&'a self, target: &'a ObjectRef) -> LocalBoxFuture<'a, Result<Value>> {
        Box::pin(objects::get(self, target, None))
    }
}

/// The URL of a page request.
pub(crate) fn page_url(request: &PageRequest<'_>) -> Result<String> {
    let mut query = request.selectors.query();
    if let Some(limit) = request.limit {
        query.push("limit", limit.to_string());
    }
    if let Some(t) = request.token {
        query.push("continue", t);
    }
    Ok(query.on(&request_url::collection_path(request.resource, request.namespace)?))
}

async fn fetch_page(conn: &Connection, request: PageRequest<'_>) -> Result<Page> {
    let mut http = Request::get(page_url(&request)?);
    if request.representation == Representation::Metadata {
        http = http.header(http::header::ACCEPT, PARTIAL_METADATA_LIST);
    }
    let answer = send(conn, http.body(Vec::new())).await?;
    Ok(page_of(answer, request.resource))
}

/// A list answer as a [`Page`]: list items carry no `apiVersion`/`kind` (metadata-only
/// items say `meta.k8s.io/v1 PartialObjectMetadata`); they get the type's, so every object
/// reads the same whether it came from GET or LIST.
pub(crate) fn page_of(mut answer: Value, resource: &ResourceType) -> Page {
    let mut items = Vec::new();
    if let Some(Value::Array(page_items)) = answer.get_mut("items").map(Value::take) {
        items.reserve(page_items.len());
        let api_version = Value::String(resource.api_version());
        let kind = Value::String(resource.kind.clone());
        for mut item in page_items {
            if let Value::Object(map) = &mut item {
                map.insert("apiVersion".into(), api_version.clone());
                map.insert("kind".into(), kind.clone());
            }
            items.push(item);
        }
    }
    let meta = answer.get("metadata");
    let next = meta.and_then(|m| m.get("continue")).and_then(Value::as_str).filter(|t| !t.is_empty());
    let remaining = meta.and_then(|m| m.get("remainingItemCount")).and_then(Value::as_u64);
    let resource_version = meta.and_then(|m| m.get("resourceVersion")).and_then(Value::as_str).map(str::to_string);
    Page { items, next: next.map(str::to_string), remaining, resource_version }
}
