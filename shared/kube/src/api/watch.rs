//! Watching: the objects of a selection listed once, then every change to them as it
//! happens, as `kubectl get -w` follows them, without losing or repeating one.
//!
//! - [`queries`]: what a [`Selection`] lists and watches: a named object is its namespace's
//!   list with `metadata.name=NAME`; a `TYPE -l ...` query is the type's list in `-n`'s
//!   namespace (or every namespace with `-A`); kubectl's refusals are [`selection`]'s.
//! - [`watch`] (and [`watch_from`] a known version): one query's list ([`listing::snapshot`]) and then its changes from the list's
//!   `resourceVersion`, with bookmarks. A watch the server ends (its `timeoutSeconds`) is
//!   resumed from the last `resourceVersion` seen; when that version is too old (410 Gone)
//!   the query is listed again and the list is handed on as [`Event::Relisted`], so the
//!   caller can compare it with what it had.
//!
//! Faults never end a watch, only the reader does (`--for`, a signal): a request that fails
//! in a way that may pass (refused, reset, timed out, an answer 429 or 5xx) or a connection
//! that goes silent (no event and no bookmark within [`Timing::silence`], while the server
//! sends a bookmark about every minute) starts an outage, reported once
//! ([`Event::Lost`]); the watch then tries again with jittered exponential backoff
//! ([`crate::conn::backoff`]) until a request succeeds ([`Event::Reconnected`]), and goes on
//! from the last `resourceVersion` seen, so no change is missed, or, when the server no
//! longer has it, from a new list ([`Event::Relisted`]). Only an answer that will not change
//! by asking again (403, 404, 400...) ends the watch with an error.
//!
//! `--request-timeout` bounds each list request and the opening of each watch request, never
//! the watch stream itself: a quiet watch is not a slow answer ([`Timing`]).

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::Instant;

use futures::stream::{self, LocalBoxStream, Stream, StreamExt};
use http::Request;
use kube::core::WatchEvent;
use serde_json::Value;

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::listing::{self, Scope, Selectors};
use crate::api::reference::{NamespaceScope, ObjectRef};
use crate::api::request_url;
use crate::api::selection::{self, Selection};
use crate::conn::backoff::Backoff;
use crate::conn::client::Connection;
use crate::conn::error::ConnError;
use crate::error::{Error, Result};

/// How long the server keeps one watch request open before the watch is resumed with a
/// new one (client-go's reflector asks for 5 to 10 minutes; this is in that range's spirit,
/// and keeps each request short enough that a proxy's own idle limits rarely cut it).
const WATCH_SECONDS: u32 = 290;

/// How often the apiserver sends a bookmark to a watch that asks for them: about every
/// minute (`defaultBookmarkFrequency` in k8s.io/apiserver's cacher, the same in 1.33 and
/// 1.37, checked by a one-second timer), and once 2 s before the request's timeout.
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// No event and no bookmark for this long and the connection is taken as dead: twice the
/// bookmark interval, so one late bookmark is not an outage.
pub const SILENCE: Duration = Duration::from_secs(2 * 60);

/// A watch request the server ends sooner than this after it opened, without an event, is
/// treated as a failure (waited for), not resumed at once: a server that keeps closing at
/// once would otherwise be asked again in a tight loop.
const TOO_SHORT: Duration = Duration::from_secs(1);

/// The first wait before reconnecting (full jitter: a random fraction of it), doubling up
/// to [`RECONNECT_CAP`] while the outage lasts.
const RECONNECT_BASE: Duration = Duration::from_millis(500);
/// The longest wait between two reconnect attempts.
const RECONNECT_CAP: Duration = Duration::from_secs(8);

/// The bounds of a watch's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// No event and no bookmark for this long: the connection is dead, reconnect.
    pub silence: Duration,
    /// The longest wait for a watch request's answer to start (its headers): the user's
    /// `--request-timeout`, else [`Timing::silence`].
    pub open: Duration,
}

impl Timing {
    /// The bounds for `conn`: [`SILENCE`] (or, in a build with the `test-hooks` feature,
    /// `FIELDWISE_WATCH_SILENCE`, a Go duration, so that a test need not wait two minutes),
    /// and `--request-timeout` for opening each request.
    pub fn of(conn: &Connection) -> Timing {
        let silence = silence_from_env().unwrap_or(SILENCE);
        Timing { silence, open: conn.request_timeout().unwrap_or(silence) }
    }
}

/// `FIELDWISE_WATCH_SILENCE`: the end-to-end suite's shorter silence bound. Compiled only
/// with the `test-hooks` feature: shipped binaries take no timing from the environment.
#[cfg(feature = "test-hooks")]
fn silence_from_env() -> Option<Duration> {
    let text = std::env::var("FIELDWISE_WATCH_SILENCE").ok()?;
    crate::conn::duration::parse(&text, crate::conn::duration::Units::Go).ok().filter(|d| !d.is_zero())
}

/// Without the `test-hooks` feature the bound is [`SILENCE`].
#[cfg(not(feature = "test-hooks"))]
fn silence_from_env() -> Option<Duration> {
    None
}

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
    /// A watch the server ended (its timeout) was resumed from the last version seen.
    Resumed {
        /// The `resourceVersion` it resumed from.
        from: String,
    },
    /// The connection failed, or went silent: the watch reconnects with backoff for as long
    /// as the stream is read. Once per outage, at its first failure.
    Lost {
        /// What failed, in a few words.
        reason: String,
    },
    /// The first request that succeeded after [`Event::Lost`]: the outage is over.
    Reconnected {
        /// How long since the first failure.
        down: Duration,
        /// How many attempts failed (the first failure included).
        failed: u32,
        /// The `resourceVersion` the watch resumed from (nothing missed); `None` when it had
        /// to list (an [`Event::Listed`] or [`Event::Relisted`] follows).
        resumed_from: Option<String>,
    },
}

/// An open watch request's events.
type Events = LocalBoxStream<'static, kube::Result<WatchEvent<Value>>>;

/// Where a watch's requests go: the cluster ([`Remote`]), or a unit test's script.
trait Source {
    /// The query's objects and the list's `resourceVersion`.
    async fn list(&self) -> Result<(Vec<Value>, String)>;
    /// A watch request from `version`, opened (its answer started).
    async fn open(&self, version: &str) -> Result<Events>;
    /// The client library's error as ours, naming the server.
    fn error(&self, err: kube::Error) -> Error;
}

/// The cluster: lists on one connection (with `--request-timeout`), watch streams on
/// another (without it; see [`Connection::for_streams`]).
struct Remote {
    lists: Connection,
    streams: Connection,
    query: Query,
    timing: Timing,
}

impl Source for Remote {
    async fn list(&self) -> Result<(Vec<Value>, String)> {
        let query = &self.query;
        listing::snapshot(&self.lists, &query.resource, query.namespace.as_deref(), &query.selectors).await
    }

    async fn open(&self, version: &str) -> Result<Events> {
        match tokio::time::timeout(self.timing.open, open_watch(&self.streams, &self.query, version)).await {
            Ok(opened) => opened,
            Err(_) => Err(Error::Conn(ConnError::Unreachable {
                server: self.streams.server.clone(),
                reason: format!("no answer to the watch request within {:?}", self.timing.open),
                maybe_sent: true,
            })),
        }
    }

    fn error(&self, err: kube::Error) -> Error {
        self.streams.error(err).into()
    }
}

/// An outage: since when, how many attempts failed, the waits between them.
struct Outage {
    since: Instant,
    failed: u32,
    backoff: Backoff,
    /// The version a reopened watch resumed from, while it has not yet proved itself (an
    /// event, a bookmark, or [`TOO_SHORT`] open): the outage ends then, or goes on.
    resumed: Option<String>,
}

/// Why a step of the watch failed.
enum Fault {
    /// Asking again may succeed (the connection, a timeout, 429, 5xx, silence).
    Passing(String),
    /// Asking again will get the same answer: the watch ends with it.
    Final(Error),
}

/// Where a watch is.
struct State<S> {
    source: S,
    timing: Timing,
    /// The last `resourceVersion` seen; `None` before the first list.
    version: Option<String>,
    /// Whether the first list succeeded (a later list is a relist).
    listed: bool,
    /// Whether the next step lists again (410 Gone).
    relist: bool,
    /// The open watch; `None` between requests.
    open: Option<Events>,
    /// When the open watch opened, and whether an event (or bookmark) came on it since.
    opened: Option<(Instant, bool)>,
    /// Whether the next watch request resumes one the server ended.
    resuming: bool,
    /// The outage under way, if any.
    outage: Option<Outage>,
    /// Events due before the next step's (a [`Event::Reconnected`] before a list).
    queued: VecDeque<Event>,
}

/// `query`'s objects ([`Event::Listed`] first), then each change to them, for as long as the
/// stream is read. Faults that may pass are waited out ([`Event::Lost`], then
/// [`Event::Reconnected`]); an error that will not pass ends the stream (after it, nothing
/// more comes).
pub fn watch(conn: &Connection, query: Query) -> impl Stream<Item = Result<Event>> + '_ {
    follow_remote(conn, query, None, Timing::of(conn))
}

/// Each change to `query`'s objects after `version` (a `resourceVersion` seen before, as
/// `kubectl get -w --resource-version` takes it), without listing first: when the server no
/// longer has that version (410 Gone) the first event is [`Event::Relisted`].
pub fn watch_from(conn: &Connection, query: Query, version: String) -> impl Stream<Item = Result<Event>> + '_ {
    follow_remote(conn, query, Some(version), Timing::of(conn))
}

/// The watch of `query` on the cluster, with `timing`.
fn follow_remote(
    conn: &Connection,
    query: Query,
    version: Option<String>,
    timing: Timing,
) -> impl Stream<Item = Result<Event>> + '_ {
    // The stream connection fails a little after the silence bound, so that the bound (which
    // says why) is what notices a silent connection; the transport's limit is the backstop.
    let source = conn.for_streams(timing.silence + Duration::from_secs(5)).map_err(Error::Conn).map(|streams| {
        // Lists keep `--request-timeout` when given; without it, the stream's idle limit.
        let lists = if conn.request_timeout().is_some() { conn.clone() } else { streams.clone() };
        Remote { lists, streams, query, timing }
    });
    stream::once(async move { source }).flat_map(move |source| match source {
        Ok(source) => follow(source, version.clone(), timing).boxed_local(),
        Err(err) => stream::once(async move { Err(err) }).boxed_local(),
    })
}

/// The watch from `version`, or from a list first when there is none.
fn follow<S: Source>(source: S, version: Option<String>, timing: Timing) -> impl Stream<Item = Result<Event>> {
    let listed = version.is_some();
    let state = State {
        source,
        timing,
        version,
        listed,
        relist: false,
        open: None,
        opened: None,
        resuming: false,
        outage: None,
        queued: VecDeque::new(),
    };
    stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        match state.next().await {
            Ok(event) => Some((Ok(event), Some(state))),
            Err(err) => Some((Err(err), None)),
        }
    })
}

impl<S: Source> State<S> {
    /// The next event: listing, opening, reading, or waiting out an outage as needed.
    async fn next(&mut self) -> Result<Event> {
        loop {
            if let Some(event) = self.queued.pop_front() {
                return Ok(event);
            }
            if let Some(outage) = self.outage.as_mut().filter(|o| o.resumed.is_none()) {
                // Within an outage every attempt waits first; the deadline is the reader's.
                let wait = outage.backoff.next_wait().unwrap_or(RECONNECT_CAP);
                tokio::time::sleep(wait).await;
            }
            match self.step().await {
                Ok(Some(event)) => return Ok(event),
                Ok(None) => {}
                Err(Fault::Final(err)) => return Err(err),
                Err(Fault::Passing(reason)) => {
                    (self.open, self.opened) = (None, None);
                    match self.outage.as_mut() {
                        Some(outage) => (outage.failed, outage.resumed) = (outage.failed + 1, None),
                        None => {
                            self.outage = Some(Outage {
                                since: Instant::now(),
                                failed: 1,
                                backoff: Backoff::with_steps(RECONNECT_BASE, RECONNECT_CAP, Duration::MAX),
                                resumed: None,
                            });
                            return Ok(Event::Lost { reason });
                        }
                    }
                }
            }
        }
    }

    /// One step: a list, an open, or a read. `None` when it gave nothing to report.
    async fn step(&mut self) -> std::result::Result<Option<Event>, Fault> {
        if self.version.is_none() || self.relist {
            let (items, version) = self.source.list().await.map_err(fault)?;
            let reconnected = self.reconnected();
            (self.version, self.relist, self.open, self.opened) = (Some(version), false, None, None);
            let event =
                if std::mem::replace(&mut self.listed, true) { Event::Relisted(items) } else { Event::Listed(items) };
            return Ok(Some(self.after(reconnected, Some(event))));
        }
        let Some(open) = self.open.as_mut() else {
            let from = self.version.clone().unwrap_or_default();
            let events = match self.source.open(&from).await {
                Ok(events) => events,
                // Too old a version, said before the stream starts rather than in it.
                Err(err) if err.server_code() == Some(410) => {
                    self.relist = true;
                    return Ok(None);
                }
                Err(err) => return Err(fault(err)),
            };
            (self.open, self.opened) = (Some(events), Some((Instant::now(), false)));
            if let Some(outage) = self.outage.as_mut() {
                // Back once this request proves itself: an event, a bookmark, or staying open.
                (outage.resumed, self.resuming) = (Some(from), false);
                return Ok(None);
            }
            return Ok(std::mem::take(&mut self.resuming).then_some(Event::Resumed { from }));
        };
        let confirming = self.outage.as_ref().is_some_and(|o| o.resumed.is_some());
        let bound = match self.opened {
            Some((at, _)) if confirming => TOO_SHORT.saturating_sub(at.elapsed()),
            _ => self.timing.silence,
        };
        let event = match tokio::time::timeout(bound, Pin::new(open).next()).await {
            // A reopened watch that stayed open: the outage is over.
            Err(_) if confirming => return Ok(self.reconnected()),
            Err(_) => {
                return Err(Fault::Passing(format!(
                    "no event and no bookmark for {:?}: the connection is silent",
                    self.timing.silence
                )))
            }
            Ok(Some(Ok(event))) => event,
            // The server ended the watch (its timeout): resume from the last version, at once
            // unless it ended as soon as it opened.
            Ok(None) => {
                let too_short = self.opened.is_some_and(|(at, heard)| !heard && at.elapsed() < TOO_SHORT);
                (self.open, self.opened) = (None, None);
                if too_short {
                    return Err(Fault::Passing("the server ended the watch as soon as it opened".into()));
                }
                self.resuming = true;
                return Ok(None);
            }
            Ok(Some(Err(err))) => return Err(self.stream_fault(err)),
        };
        if let Some((_, heard)) = self.opened.as_mut() {
            *heard = true;
        }
        let reconnected = if confirming { self.reconnected() } else { None };
        let (object, event): (Value, fn(Value) -> Event) = match event {
            WatchEvent::Added(o) => (o, Event::Added),
            WatchEvent::Modified(o) => (o, Event::Modified),
            WatchEvent::Deleted(o) => (o, Event::Deleted),
            WatchEvent::Bookmark(bookmark) => {
                self.version = Some(bookmark.metadata.resource_version);
                return Ok(reconnected);
            }
            WatchEvent::Error(status) if status.code == 410 => {
                self.relist = true;
                return Ok(reconnected);
            }
            WatchEvent::Error(status) => return Err(self.stream_fault(kube::Error::Api(status))),
        };
        // The one read path's rule: every Secret value the process sees is known to redaction.
        crate::redact::remember(&object);
        if let Some(version) = object.pointer("/metadata/resourceVersion").and_then(Value::as_str) {
            self.version = Some(version.to_string());
        }
        Ok(Some(self.after(reconnected, Some(event(object)))))
    }

    /// `event`, or `reconnected` first with `event` queued after it.
    fn after(&mut self, reconnected: Option<Event>, event: Option<Event>) -> Event {
        match (reconnected, event) {
            (Some(back), Some(event)) => {
                self.queued.push_back(event);
                back
            }
            (Some(back), None) => back,
            (None, Some(event)) => event,
            (None, None) => unreachable!("called with an event or a reconnection"),
        }
    }

    /// A failure while reading an open watch: the server's error event by its code; anything
    /// else (the connection cut or reset mid-stream, a line cut short) may pass.
    fn stream_fault(&self, err: kube::Error) -> Fault {
        match err {
            kube::Error::Api(status) if !(status.code == 429 || status.code >= 500) => {
                Fault::Final(self.source.error(kube::Error::Api(status)))
            }
            kube::Error::Api(status) => {
                Fault::Passing(format!("the server answered {}: {}", status.code, status.message))
            }
            other => Fault::Passing(format!("the watch's connection failed: {}", one_line(&other))),
        }
    }

    /// Ends the outage under way, if any: its [`Event::Reconnected`], resumed from the
    /// version its reopened watch started at (none when it listed).
    fn reconnected(&mut self) -> Option<Event> {
        let outage = self.outage.take()?;
        Some(Event::Reconnected { down: outage.since.elapsed(), failed: outage.failed, resumed_from: outage.resumed })
    }
}

/// Whether a failed list or watch request may succeed when asked again: the connection
/// (refused, reset, timed out, cut mid-answer), a server overloaded (429) or failing (5xx).
fn fault(err: Error) -> Fault {
    let passing = match &err {
        Error::Conn(ConnError::Unreachable { .. }) => true,
        Error::Conn(ConnError::Api { code, .. }) => *code == 429 || *code >= 500,
        Error::Conn(ConnError::Client(e)) => {
            matches!(**e, kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_))
        }
        _ => false,
    };
    if passing {
        Fault::Passing(reason(&err))
    } else {
        Fault::Final(err)
    }
}

/// What a failure that may pass was, in a few words.
fn reason(err: &Error) -> String {
    match err {
        Error::Conn(ConnError::Unreachable { reason, .. }) => reason.clone(),
        other => other.to_string(),
    }
}

/// An error and its causes on one line.
fn one_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// Opens a watch request from `version`, with bookmarks.
async fn open_watch(conn: &Connection, query: &Query, version: &str) -> Result<Events> {
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

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use futures::stream;
    use kube::core::response::Status;
    use serde_json::json;

    use super::*;

    /// What one scripted watch request does after it opened.
    enum Then {
        /// The server ends it (its timeout).
        End,
        /// Nothing more comes and the connection stays open.
        Silence,
        /// The connection breaks.
        Break,
    }

    /// A scripted list's answer.
    type Listed = Result<(Vec<Value>, String)>;
    /// A scripted open's answer: the events, then what the request does.
    type Opened = Result<(Vec<WatchEvent<Value>>, Then)>;

    /// A scripted cluster: each list and each open takes the next answer.
    #[derive(Default)]
    struct Script {
        lists: RefCell<VecDeque<Listed>>,
        opens: RefCell<VecDeque<Opened>>,
        /// The versions each open was from.
        opened_from: RefCell<Vec<String>>,
    }

    impl Source for &Script {
        async fn list(&self) -> Result<(Vec<Value>, String)> {
            self.lists.borrow_mut().pop_front().expect("a scripted list")
        }

        async fn open(&self, version: &str) -> Result<Events> {
            self.opened_from.borrow_mut().push(version.to_string());
            let (events, then) = self.opens.borrow_mut().pop_front().expect("a scripted open")?;
            let events = stream::iter(events.into_iter().map(Ok));
            Ok(match then {
                Then::End => events.boxed_local(),
                Then::Silence => events.chain(stream::pending()).boxed_local(),
                Then::Break => events
                    .chain(stream::once(async {
                        Err(kube::Error::ReadEvents(std::io::Error::from(std::io::ErrorKind::ConnectionReset)))
                    }))
                    .boxed_local(),
            })
        }

        fn error(&self, err: kube::Error) -> Error {
            ConnError::from_kube(err, "https://test").into()
        }
    }

    const TIMING: Timing = Timing { silence: Duration::from_secs(120), open: Duration::from_secs(120) };

    fn object(version: &str) -> Value {
        json!({"metadata": {"name": "x", "uid": "u", "resourceVersion": version}})
    }

    fn refused() -> Error {
        Error::Conn(ConnError::Unreachable {
            server: "https://test".into(),
            reason: "Connection refused (os error 111)".into(),
            maybe_sent: false,
        })
    }

    fn api(code: u16) -> Error {
        Error::Conn(ConnError::Api { code, reason: "X".into(), message: "m".into(), causes: Vec::new() })
    }

    fn status(code: u16) -> WatchEvent<Value> {
        WatchEvent::Error(Box::new(Status { code, message: "gone".into(), ..Status::default() }))
    }

    /// The first `n` items of the watch of `script`.
    async fn first(script: &Script, n: usize) -> Vec<Result<Event>> {
        follow(script, None, TIMING).take(n).collect().await
    }

    fn events(items: Vec<Result<Event>>) -> Vec<Event> {
        items.into_iter().map(|item| item.expect("no error")).collect()
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn refused_reconnects_are_one_outage_that_resumes_from_the_last_version() {
        let script = Script::default();
        script.lists.borrow_mut().push_back(Ok((vec![object("1")], "1".into())));
        {
            let mut opens = script.opens.borrow_mut();
            opens.push_back(Ok((vec![WatchEvent::Modified(object("2"))], Then::Break)));
            opens.extend([Err(refused()), Err(refused()), Err(api(503)), Err(api(429))]);
            opens.push_back(Ok((vec![WatchEvent::Modified(object("7"))], Then::Silence)));
        }
        let started = Instant::now();
        let seen = events(first(&script, 5).await);
        assert_eq!(seen[..2], [Event::Listed(vec![object("1")]), Event::Modified(object("2"))]);
        let Event::Lost { reason } = &seen[2] else { panic!("lost: {seen:?}") };
        assert!(reason.contains("connection failed"), "{reason}");
        let Event::Reconnected { down, failed, resumed_from } = &seen[3] else { panic!("back: {seen:?}") };
        assert_eq!((*failed, resumed_from.as_deref()), (5, Some("2")), "the break and four failed opens");
        assert!(*down > Duration::ZERO && *down <= 4 * RECONNECT_CAP, "{down:?}");
        assert_eq!(*down, started.elapsed(), "waited with backoff, not in a tight loop");
        assert_eq!(seen[4], Event::Modified(object("7")));
        assert_eq!(*script.opened_from.borrow(), ["1", "2", "2", "2", "2", "2"], "no change skipped");
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_silent_connection_is_dropped_after_the_bound_and_reopened() {
        let script = Script::default();
        script.lists.borrow_mut().push_back(Ok((Vec::new(), "1".into())));
        {
            let mut opens = script.opens.borrow_mut();
            let bookmark: WatchEvent<Value> =
            serde_json::from_value(json!({"type": "BOOKMARK", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"resourceVersion": "4"}}}))
                .expect("a bookmark");
            opens.push_back(Ok((vec![bookmark], Then::Silence)));
            opens.push_back(Ok((vec![WatchEvent::Added(object("6"))], Then::Silence)));
        }
        let started = Instant::now();
        let seen = events(first(&script, 4).await);
        let Event::Lost { reason } = &seen[1] else { panic!("lost: {seen:?}") };
        assert!(reason.contains("no event and no bookmark for 120s"), "{reason}");
        assert!(started.elapsed() >= TIMING.silence, "noticed at the bound, not before");
        assert!(
            matches!(&seen[2], Event::Reconnected { failed: 1, resumed_from: Some(v), .. } if v == "4"),
            "resumed from the bookmark's version: {seen:?}"
        );
        assert_eq!(seen[3], Event::Added(object("6")));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_watch_the_server_ends_resumes_at_once_without_an_outage() {
        let script = Script::default();
        script.lists.borrow_mut().push_back(Ok((Vec::new(), "1".into())));
        {
            let mut opens = script.opens.borrow_mut();
            opens.push_back(Ok((vec![WatchEvent::Added(object("2"))], Then::End)));
            opens.push_back(Ok((vec![WatchEvent::Deleted(object("3"))], Then::Silence)));
        }
        let started = Instant::now();
        let seen = events(first(&script, 4).await);
        assert_eq!(
            seen,
            [
                Event::Listed(Vec::new()),
                Event::Added(object("2")),
                Event::Resumed { from: "2".into() },
                Event::Deleted(object("3"))
            ]
        );
        assert_eq!(started.elapsed(), Duration::ZERO, "no wait");
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_server_that_ends_every_watch_at_once_is_an_outage_waited_out() {
        let script = Script::default();
        script.lists.borrow_mut().push_back(Ok((Vec::new(), "1".into())));
        {
            let mut opens = script.opens.borrow_mut();
            opens.extend([Ok((Vec::new(), Then::End)), Ok((Vec::new(), Then::End))]);
            opens.push_back(Ok((vec![WatchEvent::Added(object("2"))], Then::Silence)));
        }
        let seen = events(first(&script, 4).await);
        assert!(matches!(&seen[1], Event::Lost { reason } if reason.contains("as soon as it opened")), "{seen:?}");
        assert!(matches!(&seen[2], Event::Reconnected { failed: 2, .. }), "{seen:?}");
        assert_eq!(seen[3], Event::Added(object("2")));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_version_gone_lists_again_and_a_list_failing_meanwhile_is_waited_out() {
        let script = Script::default();
        {
            let mut lists = script.lists.borrow_mut();
            lists.push_back(Ok((vec![object("1")], "1".into())));
            lists.extend([Err(refused()), Err(api(500))]);
            lists.push_back(Ok((vec![object("9")], "9".into())));
        }
        {
            let mut opens = script.opens.borrow_mut();
            opens.push_back(Ok((vec![status(410)], Then::Silence)));
            opens.push_back(Ok((vec![WatchEvent::Modified(object("10"))], Then::Silence)));
        }
        let seen = events(first(&script, 5).await);
        assert!(matches!(&seen[1], Event::Lost { .. }), "{seen:?}");
        assert!(matches!(&seen[2], Event::Reconnected { failed: 2, resumed_from: None, .. }), "{seen:?}");
        assert_eq!(seen[3], Event::Relisted(vec![object("9")]));
        assert_eq!(seen[4], Event::Modified(object("10")));
        assert_eq!(*script.opened_from.borrow(), ["1", "9"]);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_answer_that_will_not_change_ends_the_watch() {
        for (answer, event) in [(Some(api(403)), None), (None, Some(status(403))), (Some(api(404)), None)] {
            let script = Script::default();
            script.lists.borrow_mut().push_back(Ok((Vec::new(), "1".into())));
            match (answer, event) {
                (Some(answer), _) => script.opens.borrow_mut().push_back(Err(answer)),
                (_, Some(event)) => script.opens.borrow_mut().push_back(Ok((vec![event], Then::Silence))),
                _ => unreachable!(),
            }
            let seen = follow(&script, None, TIMING).collect::<Vec<_>>().await;
            assert_eq!(seen.len(), 2, "the list, then the error ends the stream");
            let err = seen[1].as_ref().expect_err("an error");
            assert!(matches!(err.server_code(), Some(403 | 404)), "{err}");
        }
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_server_error_event_is_an_outage_not_the_end() {
        let script = Script::default();
        script.lists.borrow_mut().push_back(Ok((Vec::new(), "1".into())));
        {
            let mut opens = script.opens.borrow_mut();
            opens.push_back(Ok((vec![status(500)], Then::Silence)));
            opens.push_back(Ok((vec![WatchEvent::Added(object("2"))], Then::Silence)));
        }
        let seen = events(first(&script, 4).await);
        assert!(matches!(&seen[1], Event::Lost { reason } if reason.contains("500")), "{seen:?}");
        assert_eq!(seen[3], Event::Added(object("2")));
    }
}
