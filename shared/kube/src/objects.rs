//! Reading objects as plain JSON values, so nothing the server sent is lost
//! to a typed struct: unknown fields, field order and managedFields survive.

use http::Request;
use serde_json::Value;

use crate::client::Connection;
use crate::discovery::ResourceType;
use crate::error::{Error, Result};
use crate::target::ObjectRef;

/// GETs one object (or one of its subresources).
pub async fn get(conn: &Connection, target: &ObjectRef, subresource: Option<&str>) -> Result<Value> {
    send(conn, Request::get(target.path(subresource)).body(Vec::new())).await
}

/// Options for listing a collection.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `-l` label selector.
    pub label_selector: Option<String>,
    /// `--field-selector`.
    pub field_selector: Option<String>,
    /// Page size; `None` lets the server choose.
    pub limit: Option<u32>,
}

/// Lists every object of a type in `namespace` (all namespaces when `None`),
/// following `continue` tokens until the last page.
pub async fn list(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Result<Vec<Value>> {
    list_as(conn, resource, namespace, options, None).await
}

/// [`list`] with an `Accept` header, e.g. for metadata-only lists
/// (see [`crate::metadata_list`]); `None` asks for full objects.
pub async fn list_as(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
    accept: Option<&str>,
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
        let mut request = Request::get(url);
        if let Some(accept) = accept {
            request = request.header(http::header::ACCEPT, accept);
        }
        let mut page = send(conn, request.body(Vec::new())).await?;
        if let Some(Value::Array(page_items)) = page.get_mut("items").map(Value::take) {
            for mut item in page_items {
                // List items carry no apiVersion/kind; restore them so every
                // object reads the same whether it came from GET or LIST.
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

/// Sends a request and decodes the JSON answer; errors become user errors naming the server.
/// The answer is decoded by `fieldwise_core::json` (serde_json's result, faster: LIST
/// answers of thousands of objects are the plugins' largest inputs).
pub async fn send(conn: &Connection, request: http::Result<Request<Vec<u8>>>) -> Result<Value> {
    let request = request.map_err(|e| Error::Other(format!("cannot build request: {e}")))?;
    let text = conn.client.request_text(request).await.map_err(|e| conn.error(e))?;
    let answer = fieldwise_core::json::from_str(&text).map_err(|e| {
        Error::Other(format!("the server {} answered with JSON that cannot be decoded: {e}", conn.server))
    })?;
    // The one read path: every Secret value the process sees is known to the redaction boundary.
    crate::redact::remember(&answer);
    Ok(answer)
}

/// Percent-encodes a query value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
