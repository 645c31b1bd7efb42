//! Lists of object metadata only (`PartialObjectMetadataList`): names, labels,
//! annotations and managedFields without the bodies, so a scan over every type
//! in a cluster moves a fraction of the bytes a full list would.

use http::Request;
use serde_json::Value;

use crate::client::Connection;
use crate::discovery::ResourceType;
use crate::error::Result;
use crate::objects::{encode, send, ListOptions};

/// The Accept header that asks the apiserver for metadata-only lists.
pub const PARTIAL_METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// Lists the metadata of every object of a type in `namespace` (all namespaces when `None`),
/// following `continue` tokens. Items get the type's `apiVersion` and `kind` back (the server
/// answers `meta.k8s.io/v1 PartialObjectMetadata`), so they read like full objects without bodies.
pub async fn list_metadata(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Result<Vec<Value>> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut query = Vec::new();
        if let Some(s) = &options.label_selector {
            query.push(format!("labelSelector={}", encode(s)));
        }
        if let Some(s) = &options.field_selector {
            query.push(format!("fieldSelector={}", encode(s)));
        }
        if let Some(limit) = options.limit {
            query.push(format!("limit={limit}"));
        }
        if let Some(t) = &token {
            query.push(format!("continue={}", encode(t)));
        }
        let mut url = resource.collection_path(namespace);
        if !query.is_empty() {
            url = format!("{url}?{}", query.join("&"));
        }
        let request = Request::get(url).header(http::header::ACCEPT, PARTIAL_METADATA_LIST).body(Vec::new());
        let mut page = send(conn, request).await?;
        if let Some(Value::Array(page_items)) = page.get_mut("items").map(Value::take) {
            for mut item in page_items {
                if let Value::Object(map) = &mut item {
                    map.insert("apiVersion".into(), Value::String(resource.api_version()));
                    map.insert("kind".into(), Value::String(resource.kind.clone()));
                }
                items.push(item);
            }
        }
        token =
            page.pointer("/metadata/continue").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        if token.is_none() {
            return Ok(items);
        }
    }
}
