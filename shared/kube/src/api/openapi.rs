//! The cluster's own schema: what the engines need to know about a type (list
//! types, map keys, map types, patch strategies, merge keys), read from the
//! server the command talks to instead of the schema embedded at build time.
//!
//! Why: the embedded schema knows only the built-in types of the Kubernetes
//! version it was generated from. Custom resources (their CRD's
//! `openAPIV3Schema`) and built-in types or fields newer than that version are
//! only known to the server. [`Schemas::for_gvk`] answers, for one
//! group-version-kind, the schema and root type to use, in this order:
//!
//! 1. **`/openapi/v3`** (Kubernetes 1.27+): the index lists one document per
//!    group-version with a `serverRelativeURL` that carries a content hash
//!    (`/openapi/v3/apis/apps/v1?hash=...`). Only the group-versions a command
//!    touches are fetched, and each document is cached on disk per server
//!    ([`crate::local::cache::ServerCache`], `openapi/v3/<group-version>/<hash>.json`):
//!    a hash names one content forever, so a cached entry never goes stale, as in
//!    kubectl's cache. The index itself is read on every run (a few KB).
//! 2. **`/openapi/v2`**, when the server has no v3 or its index lacks the
//!    group-version: one document for every type, read once per command (not
//!    cached: it has no content hash).
//! 3. **The embedded built-in schema** only offline ([`Schemas::offline`],
//!    `--local`): a note on stderr says so, once.
//!
//! A served type the schema does not describe gets `root: None`; the engines
//! then treat the object as upstream treats a type it knows nothing about.

use std::collections::HashMap;
use std::sync::Arc;

use fieldwise_core::schema::{builtin, openapi as reader, Gvk, Schema, TypeId};
use http::Request;
use serde_json::Value;

use crate::api::media_type::STRATEGIC_MERGE_PATCH as STRATEGIC;
use crate::conn::client::Connection;
use crate::error::{Error, Result};
use crate::local::cache::ServerCache;

/// Where a schema came from, for messages and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The server's `/openapi/v3` document of the type's group-version.
    ServerV3,
    /// The server's `/openapi/v2` document.
    ServerV2,
    /// The schema embedded at build time (offline only).
    Embedded,
}

impl Origin {
    /// How messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            Origin::ServerV3 => "the server's /openapi/v3",
            Origin::ServerV2 => "the server's /openapi/v2",
            Origin::Embedded => "the embedded built-in schema",
        }
    }
}

/// The schema of one group-version-kind: what the plugins hand to the engines.
#[derive(Debug, Clone)]
pub struct TypeSchema {
    /// The schema graph holding the type (shared by every kind of the group-version).
    pub schema: Arc<Schema>,
    /// The root type of the kind; `None` when the schema does not describe it.
    pub root: Option<TypeId>,
    /// Where the schema came from.
    pub origin: Origin,
    /// Whether the server accepts strategic merge patches for the kind (built-in
    /// types do; custom resources do not), read from the PATCH operation the
    /// schema document describes; `None` when the document does not say.
    pub strategic: Option<bool>,
}

impl TypeSchema {
    /// Whether strategic merge patches are the kind's natural patch: what the server says,
    /// else whether the schema describes the kind (the embedded schema holds built-in types only).
    pub fn takes_strategic(&self) -> bool {
        self.strategic.unwrap_or(self.root.is_some())
    }

    /// The schema under which `kubectl apply` (client-side) merges objects of this kind:
    /// the type's own for types that take strategic merge patches (lists merged by key);
    /// none for custom resources, whose client-side apply is a JSON merge patch that
    /// replaces every list whole, so a list differs as a whole, never entry by entry.
    pub fn for_client_side_apply(&self) -> (&Schema, Option<TypeId>) {
        static NONE: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
        match self.strategic {
            Some(false) => (NONE.get_or_init(Schema::new), None),
            _ => (&self.schema, self.root),
        }
    }
}

/// The schemas of one command: one per group-version, fetched at most once.
pub struct Schemas {
    source: Source,
    /// Parsed documents by group-version path (`apis/apps/v1`); `None` when absent.
    v3: HashMap<String, Option<Arc<Document>>>,
    /// `None`: not asked yet; `Some(None)`: the server has no v3 index.
    index: Option<Option<HashMap<String, String>>>,
    /// The v2 document, once read.
    v2: Option<Arc<Document>>,
    /// Whether the offline note was printed.
    noted: bool,
    /// Whether `/openapi/v3` is asked at all.
    use_v3: bool,
}

enum Source {
    Server { conn: Box<Connection>, cache: Option<ServerCache> },
    Offline,
}

/// One parsed OpenAPI document and what its PATCH operations accept, by kind.
struct Document {
    schema: Arc<Schema>,
    patch_types: HashMap<Gvk, Vec<String>>,
}

impl Schemas {
    /// Schemas read from the server `conn` talks to, cached in its default
    /// [`ServerCache`] (no disk cache when the platform has no cache directory).
    pub fn connected(conn: &Connection) -> Self {
        let cache = ServerCache::for_server(&conn.server);
        Self::with_cache(conn, cache)
    }

    /// Schemas read from the server, cached in `cache` (for tests: a private directory).
    pub fn with_cache(conn: &Connection, cache: Option<ServerCache>) -> Self {
        Self::new(Source::Server { conn: Box::new(conn.clone()), cache })
    }

    /// The embedded built-in schema, for commands that never talk to a server (`--local`).
    pub fn offline() -> Self {
        Self::new(Source::Offline)
    }

    fn new(source: Source) -> Self {
        Schemas { source, v3: HashMap::new(), index: None, v2: None, noted: false, use_v3: true }
    }

    /// Schemas read from the server's `/openapi/v2` only: for a server whose v3 is disabled
    /// or broken, and to check the fallback against a server that has both.
    pub fn v2_only(conn: &Connection) -> Self {
        Schemas { use_v3: false, ..Self::with_cache(conn, None) }
    }

    /// The schema and root type of objects of `gvk` (see the module docs for the order).
    pub async fn for_gvk(&mut self, gvk: &Gvk) -> Result<TypeSchema> {
        if matches!(self.source, Source::Offline) {
            if !self.noted {
                self.noted = true;
                eprintln!(
                    "note: offline (--local): using the embedded Kubernetes v1.33 schema; \
                     custom resources and newer types are read without a schema"
                );
            }
            let schema = embedded();
            let root = schema.root(gvk);
            return Ok(TypeSchema { schema, root, origin: Origin::Embedded, strategic: Some(root.is_some()) });
        }
        let path = group_version_path(gvk);
        let from_v3 = if self.use_v3 { self.v3_document(&path).await? } else { None };
        if let Some(document) = from_v3 {
            if document.schema.root(gvk).is_some() {
                return Ok(document.type_schema(gvk, Origin::ServerV3));
            }
        }
        let document = self.v2_document().await?;
        Ok(document.type_schema(gvk, Origin::ServerV2))
    }

    /// The schema and root type of an object, by its `apiVersion` and `kind`.
    pub async fn for_object(&mut self, object: &Value) -> Result<TypeSchema> {
        let gvk = Gvk::of_object(object)
            .ok_or_else(|| Error::usage("the object has no apiVersion or kind: add both to read it with its schema"))?;
        self.for_gvk(&gvk).await
    }

    async fn v3_document(&mut self, path: &str) -> Result<Option<Arc<Document>>> {
        if let Some(known) = self.v3.get(path) {
            return Ok(known.clone());
        }
        let Source::Server { conn, cache } = &self.source else { return Ok(None) };
        if self.index.is_none() {
            self.index = Some(fetch_index(conn).await?);
        }
        let url = self.index.as_ref().and_then(|i| i.as_ref()).and_then(|index| index.get(path)).cloned();
        let document = match url {
            Some(url) => Some(Arc::new(fetch_v3(conn, cache.as_ref(), path, &url).await?)),
            None => None,
        };
        self.v3.insert(path.to_string(), document.clone());
        Ok(document)
    }

    async fn v2_document(&mut self) -> Result<Arc<Document>> {
        if let Some(document) = &self.v2 {
            return Ok(document.clone());
        }
        let Source::Server { conn, .. } = &self.source else {
            return Err(Error::Unsupported { what: "no server to read /openapi/v2 from".into() });
        };
        let bytes = get_bytes(conn, "/openapi/v2").await?;
        let value = decode(conn, "/openapi/v2", &bytes)?;
        let schema = reader::from_v2(&value).map_err(|e| bad_document(conn, "/openapi/v2", e))?;
        let document = Arc::new(Document { schema: Arc::new(schema), patch_types: patch_types(&value) });
        self.v2 = Some(document.clone());
        Ok(document)
    }
}

impl Document {
    fn type_schema(&self, gvk: &Gvk, origin: Origin) -> TypeSchema {
        let strategic = self.patch_types.get(gvk).map(|types| types.iter().any(|t| t == STRATEGIC));
        TypeSchema { schema: self.schema.clone(), root: self.schema.root(gvk), origin, strategic }
    }
}

/// The embedded schema, shared: copied out of the core's static once per process.
fn embedded() -> Arc<Schema> {
    static EMBEDDED: std::sync::OnceLock<Arc<Schema>> = std::sync::OnceLock::new();
    EMBEDDED.get_or_init(|| Arc::new(builtin().clone())).clone()
}

/// `api/v1` for the core group, `apis/<group>/<version>` otherwise, as the v3 index names them.
pub fn group_version_path(gvk: &Gvk) -> String {
    if gvk.group.is_empty() {
        format!("api/{}", gvk.version)
    } else {
        format!("apis/{}/{}", gvk.group, gvk.version)
    }
}

/// The v3 index: group-version path -> server-relative URL; `None` when the server has no v3.
async fn fetch_index(conn: &Connection) -> Result<Option<HashMap<String, String>>> {
    let bytes = match get_bytes(conn, "/openapi/v3").await {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let value = decode(conn, "/openapi/v3", &bytes)?;
    Ok(Some(parse_index(&value)))
}

/// Reads the `paths` of a v3 index.
fn parse_index(index: &Value) -> HashMap<String, String> {
    let Some(paths) = index.get("paths").and_then(Value::as_object) else { return HashMap::new() };
    paths
        .iter()
        .filter_map(|(path, entry)| {
            let url = entry.get("serverRelativeURL").and_then(Value::as_str)?;
            Some((path.clone(), url.to_string()))
        })
        .collect()
}

/// The `hash` query parameter of a server-relative URL: the document's content hash.
fn content_hash(url: &str) -> Option<&str> {
    let query = url.split_once('?')?.1;
    let hash = query.split('&').find_map(|pair| pair.strip_prefix("hash="))?;
    // It becomes a file name: accept only what a hash is made of.
    (!hash.is_empty() && hash.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(hash)
}

/// The cache entry of a v3 document: `openapi/v3/apis_apps_v1/<hash>.json`.
fn cache_name(path: &str, hash: &str) -> String {
    let dir: String =
        path.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    format!("openapi/v3/{dir}/{hash}.json")
}

/// One group-version's v3 document: from the cache when its hash is there, else from the server.
async fn fetch_v3(conn: &Connection, cache: Option<&ServerCache>, path: &str, url: &str) -> Result<Document> {
    let entry = content_hash(url).zip(cache).map(|(hash, cache)| (cache, cache_name(path, hash)));
    if let Some((cache, name)) = &entry {
        if let Some(bytes) = cache.read(name) {
            // A damaged entry (a disk error, a hand edit) is fetched again, not trusted.
            if let Ok(document) = parse_v3(conn, url, &bytes) {
                return Ok(document);
            }
        }
    }
    let bytes = get_bytes(conn, url).await?;
    let document = parse_v3(conn, url, &bytes)?;
    if let Some((cache, name)) = &entry {
        forget_older_versions(cache, name);
        // A cache that cannot be written only costs the next run a fetch.
        cache.write(name, &bytes).ok();
    }
    Ok(document)
}

/// Removes the other hashes of the same group-version, so the cache holds one per group-version.
fn forget_older_versions(cache: &ServerCache, name: &str) {
    let path = cache.dir().join(name);
    let (Some(dir), Some(keep)) = (path.parent(), path.file_name()) else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name() != keep {
            std::fs::remove_file(entry.path()).ok();
        }
    }
}

fn parse_v3(conn: &Connection, url: &str, bytes: &[u8]) -> Result<Document> {
    let value = decode(conn, url, bytes)?;
    let schema = reader::from_v3(&value).map_err(|e| bad_document(conn, url, e))?;
    Ok(Document { schema: Arc::new(schema), patch_types: patch_types(&value) })
}

/// The content types each kind's PATCH operations accept: v3 `requestBody.content`, v2 `consumes`.
fn patch_types(document: &Value) -> HashMap<Gvk, Vec<String>> {
    let mut out: HashMap<Gvk, Vec<String>> = HashMap::new();
    let Some(paths) = document.get("paths").and_then(Value::as_object) else { return out };
    for operation in paths.values().filter_map(|p| p.get("patch")) {
        let Some(gvk) = operation.get("x-kubernetes-group-version-kind") else { continue };
        let text = |key: &str| gvk.get(key).and_then(Value::as_str);
        let (Some(version), Some(kind)) = (text("version"), text("kind")) else { continue };
        let gvk = Gvk::new(text("group").unwrap_or(""), version, kind);
        let types: Vec<String> = match operation.pointer("/requestBody/content").and_then(Value::as_object) {
            Some(content) => content.keys().cloned().collect(),
            None => operation
                .get("consumes")
                .and_then(Value::as_array)
                .map(|c| c.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
        };
        let known = out.entry(gvk).or_default();
        for t in types {
            if !known.contains(&t) {
                known.push(t);
            }
        }
    }
    out
}

async fn get_bytes(conn: &Connection, url: &str) -> Result<Vec<u8>> {
    let request = Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| Error::malformed(format!("the request for {url}"), e))?;
    let text = conn.client.request_text(request).await.map_err(|e| conn.error(e))?;
    Ok(text.into_bytes())
}

fn decode(conn: &Connection, url: &str, bytes: &[u8]) -> Result<Value> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::malformed(format!("{url} from the server {}", conn.server), e))?;
    fieldwise_core::json::from_str(text)
        .map_err(|e| Error::malformed(format!("{url} from the server {}", conn.server), e))
}

fn bad_document(conn: &Connection, url: &str, err: reader::SchemaError) -> Error {
    Error::malformed(format!("the schema {url} from the server {}", conn.server), err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn group_versions_are_named_as_the_index_names_them() {
        assert_eq!(group_version_path(&Gvk::new("", "v1", "Pod")), "api/v1");
        assert_eq!(group_version_path(&Gvk::new("apps", "v1", "Deployment")), "apis/apps/v1");
    }

    #[test]
    fn the_index_gives_urls_and_their_hashes_become_safe_file_names() {
        let index = json!({"paths": {
            "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=ABC123"},
            "api": {"serverRelativeURL": "/openapi/v3/api?hash=F00"},
            "broken": {}
        }});
        let paths = parse_index(&index);
        assert_eq!(paths.len(), 2);
        assert_eq!(content_hash(&paths["apis/apps/v1"]), Some("ABC123"));
        assert_eq!(content_hash("/openapi/v3/api/v1"), None);
        assert_eq!(content_hash("/x?hash=../../etc"), None, "a hash is never a path");
        assert_eq!(cache_name("apis/apps/v1", "ABC123"), "openapi/v3/apis_apps_v1/ABC123.json");
    }

    #[test]
    fn patch_content_types_tell_built_in_types_from_custom_resources() {
        let v3 = json!({"paths": {
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}": {"patch": {
                "x-kubernetes-group-version-kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "requestBody": {"content": {"application/json-patch+json": {}, STRATEGIC: {}}}}},
            "/apis/x.test/v1/namespaces/{namespace}/widgets/{name}": {"patch": {
                "x-kubernetes-group-version-kind": {"group": "x.test", "version": "v1", "kind": "Widget"},
                "requestBody": {"content": {"application/merge-patch+json": {}, "application/apply-patch+yaml": {}}}}}
        }});
        let types = patch_types(&v3);
        assert!(types[&Gvk::new("apps", "v1", "Deployment")].iter().any(|t| t == STRATEGIC));
        assert!(!types[&Gvk::new("x.test", "v1", "Widget")].iter().any(|t| t == STRATEGIC));
        let widget = Arc::new(Schema::new());
        let custom =
            TypeSchema { schema: widget.clone(), root: None, origin: Origin::ServerV3, strategic: Some(false) };
        assert!(custom.for_client_side_apply().0.is_empty(), "a merge patch knows no keyed lists");
        let v2 = json!({"paths": {"/api/v1/namespaces/{namespace}/pods/{name}": {"patch": {
            "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Pod"},
            "consumes": [STRATEGIC, "application/merge-patch+json"]}}}});
        assert_eq!(patch_types(&v2)[&Gvk::new("", "v1", "Pod")].len(), 2);
    }
}
