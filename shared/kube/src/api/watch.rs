//! Watching: the objects of a selection listed once, then every change to them as it
//! happens, as `kubectl get -w` follows them, without losing or repeating one.
//!
//! - [`queries`]: what a [`Selection`] lists and watches: a named object is its namespace's
//!   list with `metadata.name=NAME`; a `TYPE -l ...` query is the type's list in `-n`'s
//!   namespace (or every namespace with `-A`); kubectl's refusals are [`selection`]'s.
//! - [`watch`] (and [`watch_from`] a known version): one query's list ([`listing::snapshot`]) and then its changes from the list's
//!   `resourceVersion`, with bookmarks. A watch the server or the network ends is resumed
//!   from the last `resourceVersion` seen; when that version is too old (410 Gone) the query
//!   is listed again and the list is handed on as [`Event::Relisted`], so the caller can
//!   compare it with what it had.

use std::pin::Pin;

use futures::stream::{self, LocalBoxStream, Stream, StreamExt};
use http::Request;
use kube::core::WatchEvent;
use serde_json::Value;

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::listing::{self, Scope, Selectors};
use crate::api::reference::{NamespaceScope, ObjectRef};
use crate::api::request_url;
use crate::api::selection::{self, Selection};
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// How long the server keeps one watch request open before the watch is resumed with a
/// new one: under kube's read timeout, as client-go's reflector chooses.
const WATCH_SECONDS: u32 = 290;

/// One list-and-watch: a type, where, and which objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The type.
    pub resource: ResourceType,
    /// Its namespace; `None` for every namespace or a cluster-scoped type.
    pub namespace: Option<String>,
    /// `-l`, `--field-selector`, or `metadata.name=NAME` for a named object.
    pub selectors: Selectors,
    /// The object's name when the query follows one named object (`TYPE/NAME`, `-f`): a list
    /// without it means the object does not exist, which `kubectl get -w` refuses with NotFound.
    pub object: Option<String>,
}

impl Query {
    /// The query that follows one object.
    fn of_object(target: ObjectRef) -> Query {
        Query {
            namespace: target.namespace,
            selectors: Selectors { label: None, field: Some(format!("metadata.name={}", target.name)) },
            resource: target.resource,
            object: Some(target.name),
        }
    }

    /// The named object it follows, when it follows one.
    pub fn target(&self) -> Option<ObjectRef> {
        let name = self.object.clone()?;
        Some(ObjectRef { resource: self.resource.clone(), namespace: self.namespace.clone(), name })
    }
}

/// The queries that list and watch what `selection` names: each named object (arguments or
/// `-f`) by its name, each type of a query by `-l`/`--field-selector`, in `-n`'s namespace or
/// every namespace (`-A`). Refused as [`selection`] refuses it (names with a selector, a type
/// alone without a query...).
pub fn queries(conn: &Connection, catalog: &ResourceCatalog, selection: &Selection<'_>) -> Result<Vec<Query>> {
    let scope = NamespaceScope::of(conn);
    let mut out: Vec<Query> = Vec::new();
    if selection.names_by_documents() {
        for found in selection::from_documents(catalog, &scope, selection)? {
            out.push(Query::of_object(found.into_target()));
        }
    } else {
        let parsed = selection::parse_args(selection)?;
        if parsed.items.iter().any(|(_, name)| !name.is_empty()) {
            out.extend(selection::named(catalog, &scope, selection)?.into_iter().map(Query::of_object));
        } else {
            let listed = Scope::of(conn, selection.all_namespaces);
            let selectors = Selectors {
                label: selection.label_selector.map(String::from),
                field: selection.field_selector.map(String::from),
            };
            for (types, _) in &parsed.items {
                for text in types.split(',').filter(|t| !t.is_empty()) {
                    let resource = catalog.resolve(text)?;
                    selection::require_query(resource, selection)?;
                    out.push(Query {
                        namespace: listed.namespace_for(resource).map(String::from),
                        resource: resource.clone(),
                        selectors: selectors.clone(),
                        object: None,
                    });
                }
            }
        }
    }
    out.dedup();
    Ok(out)
}

/// What a watch reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The query's objects when the watch starts.
    Listed(Vec<Value>),
    /// An object appeared.
    Added(Value),
    /// An object changed.
    Modified(Value),
    /// An object went away (its last state).
    Deleted(Value),
    /// The watch could not resume from its last version (410 Gone): the query's objects now,
    /// listed again. Changes in between are seen only by comparing.
    Relisted(Vec<Value>),
    /// A watch the server or the network ended was resumed from the last version seen.
    Resumed {
        /// The `resourceVersion` it resumed from.
        from: String,
    },
}

/// Where a watch is.
struct State<'c> {
    conn: &'c Connection,
    query: Query,
    /// The last `resourceVersion` seen; `None` before the first list.
    version: Option<String>,
    /// The open watch; `None` between requests.
    open: Option<LocalBoxStream<'static, kube::Result<WatchEvent<Value>>>>,
    /// Whether the next watch request resumes an interrupted one.
    resuming: bool,
    /// Connections dropped since the last event: a watch that keeps failing ends.
    drops: u32,
}

/// Dropped connections in a row, without an event between them, that end a watch.
const DROPS_IN_A_ROW: u32 = 3;

/// `query`'s objects ([`Event::Listed`] first), then each change to them, for as long as the
/// stream is read. An error ends the stream (after it, nothing more comes).
pub fn watch(conn: &Connection, query: Query) -> impl Stream<Item = Result<Event>> + '_ {
    follow(conn, query, None)
}

/// Each change to `query`'s objects after `version` (a `resourceVersion` seen before, as
/// `kubectl get -w --resource-version` takes it), without listing first: when the server no
/// longer has that version (410 Gone) the first event is [`Event::Relisted`].
pub fn watch_from(conn: &Connection, query: Query, version: String) -> impl Stream<Item = Result<Event>> + '_ {
    follow(conn, query, Some(version))
}

/// The watch of `query` from `version`, or from a list first when there is none.
fn follow(conn: &Connection, query: Query, version: Option<String>) -> impl Stream<Item = Result<Event>> + '_ {
    let state = State { conn, query, version, open: None, resuming: false, drops: 0 };
    stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        match next(&mut state).await {
            Ok(event) => Some((Ok(event), Some(state))),
            Err(err) => Some((Err(err), None)),
        }
    })
}

/// The next event of a watch: listing, opening, reading or resuming as needed.
async fn next(state: &mut State<'_>) -> Result<Event> {
    if state.version.is_none() {
        return relist(state).await.map(Event::Listed);
    }
    loop {
        let Some(open) = state.open.as_mut() else {
            let from = state.version.clone().unwrap_or_default();
            state.open = Some(open_watch(state.conn, &state.query, &from).await?);
            if std::mem::take(&mut state.resuming) {
                return Ok(Event::Resumed { from });
            }
            continue;
        };
        let event = match Pin::new(open).next().await {
            Some(Ok(event)) => event,
            // The server ended the watch (its timeout), or the connection dropped: resume
            // from the last version, unless it keeps dropping.
            None => {
                (state.open, state.resuming) = (None, true);
                continue;
            }
            Some(Err(err)) => {
                state.drops += 1;
                if state.drops >= DROPS_IN_A_ROW {
                    return Err(state.conn.error(err).into());
                }
                (state.open, state.resuming) = (None, true);
                continue;
            }
        };
        state.drops = 0;
        let (object, event): (Value, fn(Value) -> Event) = match event {
            WatchEvent::Added(o) => (o, Event::Added),
            WatchEvent::Modified(o) => (o, Event::Modified),
            WatchEvent::Deleted(o) => (o, Event::Deleted),
            WatchEvent::Bookmark(bookmark) => {
                state.version = Some(bookmark.metadata.resource_version);
                continue;
            }
            WatchEvent::Error(status) if status.code == 410 => {
                return relist(state).await.map(Event::Relisted);
            }
            WatchEvent::Error(status) => return Err(state.conn.error(kube::Error::Api(status)).into()),
        };
        // The one read path's rule: every Secret value the process sees is known to redaction.
        crate::redact::remember(&object);
        if let Some(version) = object.pointer("/metadata/resourceVersion").and_then(Value::as_str) {
            state.version = Some(version.to_string());
        }
        return Ok(event(object));
    }
}

/// Lists the query again and remembers the list's version.
async fn relist(state: &mut State<'_>) -> Result<Vec<Value>> {
    let query = &state.query;
    let (items, version) =
        listing::snapshot(state.conn, &query.resource, query.namespace.as_deref(), &query.selectors).await?;
    state.version = Some(version);
    state.open = None;
    Ok(items)
}

/// Opens a watch request from `version`, with bookmarks.
async fn open_watch(
    conn: &Connection,
    query: &Query,
    version: &str,
) -> Result<LocalBoxStream<'static, kube::Result<WatchEvent<Value>>>> {
    let mut params = query.selectors.query();
    params
        .push("watch", "1")
        .push("allowWatchBookmarks", "true")
        .push("resourceVersion", version)
        .push("timeoutSeconds", WATCH_SECONDS.to_string());
    let url = params.on(&request_url::collection_path(&query.resource, query.namespace.as_deref())?);
    let request = Request::get(url).body(Vec::new()).map_err(|e| Error::malformed("the watch request", e))?;
    let events = conn.client.request_events::<Value>(request).await.map_err(|e| conn.error(e))?;
    Ok(events.boxed_local())
}

/// Every query's [`watch`] at once, merged as events come, each with the index of its query
/// in `queries` (an object's versions always come from the same query, in order).
pub fn watch_all(conn: &Connection, queries: Vec<Query>) -> impl Stream<Item = (usize, Result<Event>)> + '_ {
    stream::select_all(
        queries
            .into_iter()
            .enumerate()
            .map(|(index, query)| watch(conn, query).map(move |event| (index, event)).boxed_local()),
    )
}
