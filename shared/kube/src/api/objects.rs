//! Reading objects as plain JSON values, so nothing the server sent is lost
//! to a typed struct: unknown fields, field order and managedFields survive.
//! Lists are [`crate::api::listing`]'s; every read goes through [`send`].

use http::Request;
use serde_json::Value;

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
    send(conn, Request::get(target.path(subresource)?).body(Vec::new())).await
}

/// GETs what is at an API path (`/api/v1/namespaces/x/configmaps/y`), as
/// [`ObjectRef::path`] spells it.
pub async fn get_path(conn: &Connection, path: &str) -> Result<Value> {
    send(conn, Request::get(path).body(Vec::new())).await
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
