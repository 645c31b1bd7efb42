//! Reading objects as plain JSON values, so nothing the server sent is lost
//! to a typed struct: unknown fields, field order and managedFields survive.

use http::Request;
use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::reference::ObjectRef;
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// GETs one object (or one of its subresources). A subresource discovery says the type
/// does not have is refused before anything is sent, as kubectl refuses it: the server's
/// 404 would read like a type it no longer serves.
pub async fn get(conn: &Connection, target: &ObjectRef, subresource: Option<&str>) -> Result<Value> {
    if let Some(name) = subresource {
        target.resource.check_subresource(name)?;
    }
    send(conn, Request::get(target.path(subresource)).body(Vec::new())).await
}

/// GETs what is at an API path (`/api/v1/namespaces/x/configmaps/y`), as
/// [`ObjectRef::path`] spells it.
pub async fn get_path(conn: &Connection, path: &str) -> Result<Value> {
    send(conn, Request::get(path).body(Vec::new())).await
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
/// (see [`crate::api::metadata_list`]); `None` asks for full objects.
pub async fn list_as(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
    accept: Option<&str>,
) -> Result<Vec<Value>> {
    let mut items = Vec::new();
    let mut pager = Pager::new(resource, namespace, options);
    while let Some(page) = pager.next_page(conn, options.limit, accept).await? {
        items.extend(page);
    }
    Ok(items)
}

/// A paginated list read one page at a time, so a caller can process each page as it
/// arrives and drop it before asking for the next: memory stays bounded by the page size,
/// not by the size of the collection.
///
/// Every page comes from the same snapshot (the `continue` token carries the first page's
/// resourceVersion), and the page size and representation (`Accept`: full objects or
/// metadata only) may change from one page to the next: a scan can switch a type from
/// metadata to full objects halfway without listing any object twice.
#[derive(Debug)]
pub struct Pager<'a> {
    resource: &'a ResourceType,
    namespace: Option<&'a str>,
    options: &'a ListOptions,
    /// The token of the next page, and of the page last returned (`None` for the first).
    token: Option<String>,
    current: Option<String>,
    finished: bool,
}

impl<'a> Pager<'a> {
    /// A pager at the first page of `resource` in `namespace` (all namespaces when `None`).
    /// `options.limit` is ignored: each [`Pager::next_page`] names its own page size.
    pub fn new(resource: &'a ResourceType, namespace: Option<&'a str>, options: &'a ListOptions) -> Self {
        Pager { resource, namespace, options, token: None, current: None, finished: false }
    }

    /// The next page (items with their `apiVersion` and `kind` restored), `None` after the
    /// last. `limit` is the page size (`None`: the server's choice, usually everything);
    /// `accept` the representation (`None`: full objects).
    pub async fn next_page(
        &mut self,
        conn: &Connection,
        limit: Option<u32>,
        accept: Option<&str>,
    ) -> Result<Option<Vec<Value>>> {
        if self.finished {
            return Ok(None);
        }
        let token = self.token.take();
        let (items, next) = self.fetch(conn, token.as_deref(), limit, accept).await?;
        self.current = token;
        self.finished = next.is_none();
        self.token = next;
        Ok(Some(items))
    }

    /// The page [`Pager::next_page`] last returned, read again in another representation
    /// (`limit` must be the same), from the same snapshot. `None` for the first page, which
    /// has no `continue` token to pin its snapshot: a second read could see other objects.
    pub async fn reread_page(
        &self,
        conn: &Connection,
        limit: Option<u32>,
        accept: Option<&str>,
    ) -> Result<Option<Vec<Value>>> {
        let Some(token) = &self.current else { return Ok(None) };
        Ok(Some(self.fetch(conn, Some(token), limit, accept).await?.0))
    }

    /// One page from `token` (the first page when `None`), and the token of the next.
    async fn fetch(
        &self,
        conn: &Connection,
        token: Option<&str>,
        limit: Option<u32>,
        accept: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>)> {
        let mut query = Vec::new();
        if let Some(s) = &self.options.label_selector {
            query.push(format!("labelSelector={}", encode(s)));
        }
        if let Some(s) = &self.options.field_selector {
            query.push(format!("fieldSelector={}", encode(s)));
        }
        if let Some(limit) = limit {
            query.push(format!("limit={limit}"));
        }
        if let Some(t) = token {
            query.push(format!("continue={}", encode(t)));
        }
        let mut url = self.resource.collection_path(self.namespace);
        if !query.is_empty() {
            url = format!("{url}?{}", query.join("&"));
        }
        let mut request = Request::get(url);
        if let Some(accept) = accept {
            request = request.header(http::header::ACCEPT, accept);
        }
        let mut page = send(conn, request.body(Vec::new())).await?;
        let mut items = Vec::new();
        if let Some(Value::Array(page_items)) = page.get_mut("items").map(Value::take) {
            items.reserve(page_items.len());
            for mut item in page_items {
                // List items carry no apiVersion/kind; restore them so every
                // object reads the same whether it came from GET or LIST.
                if let Value::Object(map) = &mut item {
                    map.insert("apiVersion".into(), Value::String(self.resource.api_version()));
                    map.insert("kind".into(), Value::String(self.resource.kind.clone()));
                }
                items.push(item);
            }
        }
        let next =
            page.pointer("/metadata/continue").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_string);
        Ok((items, next))
    }
}

/// Sends a request and decodes the JSON answer; errors become user errors naming the server.
/// The answer is decoded by `fieldwise_core::json` (serde_json's result, faster: LIST
/// answers of thousands of objects are the plugins' largest inputs).
pub async fn send(conn: &Connection, request: http::Result<Request<Vec<u8>>>) -> Result<Value> {
    let request = request.map_err(|e| Error::malformed("the request", e))?;
    let text = conn.client.request_text(request).await.map_err(|e| conn.error(e))?;
    let answer = fieldwise_core::json::from_str(&text)
        .map_err(|e| Error::malformed(format!("the answer of the server {}", conn.server), e))?;
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
