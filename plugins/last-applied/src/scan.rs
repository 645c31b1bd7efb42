//! `scan`: every listable type (or the chosen ones) read page by page as metadata, findings
//! streamed out as they are found, in a deterministic order (type, then the server's list
//! order: namespace, name).
//!
//! Memory is bounded by the page size and the concurrency, not by the cluster: each page is
//! checked and dropped before the next is asked for, full objects are fetched only for the
//! candidates that need values (missing annotations, to size the one kubectl would write;
//! possibly stale ones) and dropped once checked, and findings leave through a bounded
//! channel per type (a type ahead of the printer waits when its channel is full).
//!
//! No type is listed twice. A type starts with a small metadata page (its candidates fetched
//! with a GET each); when a page has many candidates, the following pages of that type are
//! listed as full objects instead (the same `continue` snapshot, another representation),
//! and when a full page has few, the type goes back to metadata and a GET per candidate. A
//! metadata page that turns out dense is read once more in full from its `continue` token,
//! one request instead of hundreds of GETs: only then is an object's metadata read twice.
//!
//! A dense type's full pages overlap: while one page is checked on a worker thread (rebuilding
//! and sizing the annotation of every candidate is the scan's own CPU work), the next page is
//! already being listed in full, so the server and the client work at the same time. When a
//! full page turns out sparse, the page read ahead is still checked in full, and the type goes
//! back to metadata after it.
//!
//! [`events`] is the streaming entry point `scan`, `repair --from-scan` and
//! `migrate --from-scan` share ([`flagged`] is its view for the commands that write).

use std::process::ExitCode;
use std::rc::Rc;

use clap::Args;
use fieldwise_core::last_applied::{annotation_of, check, encode, migratable, rebuild, Finding};
use fieldwise_core::schema::{Gvk, Schema};
use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::metadata_list::PARTIAL_METADATA_LIST;
use fieldwise_kube::api::objects::{self, ListOptions, Pager};
use fieldwise_kube::api::openapi::{Schemas, TypeSchema};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::output::OutputFormat;
use futures::channel::mpsc;
use futures::stream::{self, Stream, StreamExt};
use futures::SinkExt;
use serde_json::Value;
use tokio::sync::Semaphore;

pub use crate::flagged::{Flagged, Skipped};
use crate::progress::Progress;
use crate::report::{Format, ReportWriter};
use crate::ScopeArgs;

/// Exit code when the scan found problems.
pub const EXIT_FINDINGS: u8 = 2;
/// Page size for lists.
const PAGE: u32 = 500;
/// The first page of each type: small, because its candidates are fetched with a GET each
/// (a first page cannot be read again from the same snapshot), and it decides the next page.
const FIRST_PAGE: u32 = 20;
/// A later metadata page with more candidates than this (and dense, see [`DENSE_ONE_IN`]) is
/// read once more as full objects, from the same snapshot, instead of a GET per candidate.
const REREAD_OVER: usize = 8;
/// A page where more than one object in this many is a candidate makes the next page a
/// full list: one large answer beats that many GETs.
const DENSE_ONE_IN: usize = 10;
/// Events a type may run ahead of the printer: bounds the memory of types scanned in
/// parallel while an earlier type is still being printed.
const EVENTS_AHEAD: usize = 64;

/// `scan`'s flags.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,

    /// Print the report as json or yaml (shape: docs/last-applied-output.md; details never quote a value),
    /// streamed as found, or name (kind.group/name of each object with findings).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// Print one JSON object per finding and line (JSON Lines) instead of one document.
    #[arg(long, conflicts_with = "output")]
    pub json_lines: bool,
}

/// What a scan reports, in order: per type, its flagged objects, then that the type is done
/// (or that it was skipped).
#[derive(Debug)]
pub enum ScanEvent {
    /// An object with findings.
    Flagged(Flagged),
    /// A type the user may not (or the server will not) list.
    Skipped(Skipped),
    /// A type listed to the end.
    TypeDone {
        /// How many objects it had.
        objects: usize,
    },
}

/// Runs `kubectl last-applied scan`: findings are printed as they arrive.
pub async fn run(kube: KubeFlags, args: ScanArgs) -> Result<ExitCode> {
    let format = match (args.output, args.json_lines) {
        (Some(OutputFormat::Name), _) => Format::Name,
        (Some(OutputFormat::Json), _) => Format::Json,
        (Some(OutputFormat::Yaml), _) => Format::Yaml,
        (None, true) => Format::JsonLines,
        (None, false) => Format::Table,
    };
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let types = types_to_scan(&catalog, &args.scope)?;
    let namespace = namespace_of(&conn, &args.scope);
    let progress = Progress::new(types.len());
    let mut report = ReportWriter::new(std::io::stdout(), format, namespace.clone(), &progress);
    report.begin()?;
    let mut stream = std::pin::pin!(events(&conn, types, namespace, &args.scope, false, &progress));
    while let Some(event) = stream.next().await {
        match event? {
            ScanEvent::Flagged(f) => report.flagged(&f)?,
            ScanEvent::Skipped(s) => report.skipped(s)?,
            ScanEvent::TypeDone { objects, .. } => report.type_done(objects)?,
        }
    }
    progress.finish();
    let findings = report.finish()?;
    Ok(if findings == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FINDINGS) })
}

/// The namespace a scope scans: `None` with `-A`.
pub fn namespace_of(conn: &Connection, scope: &ScopeArgs) -> Option<String> {
    (!scope.all_namespaces).then(|| conn.namespace.clone())
}

/// The types to scan, sorted by `plural.group` (the report's order): the ones named, else
/// every preferred type that can be listed and read (one per kind and plural: `events` and
/// `events.events.k8s.io` are the same objects).
pub fn types_to_scan(catalog: &ResourceCatalog, scope: &ScopeArgs) -> Result<Vec<ResourceType>> {
    let mut out: Vec<ResourceType> = Vec::new();
    if !scope.kinds.is_empty() {
        for name in scope.kinds.iter().map(|k| k.trim()).filter(|k| !k.is_empty()) {
            let t = catalog.resolve(name)?;
            if !t.supports("list") {
                return Err(Error::usage(format!(
                    "{} cannot be listed (the server does not allow it)",
                    t.plural_group()
                )));
            }
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    } else {
        let mut seen = std::collections::HashSet::new();
        out = catalog
            .types()
            .iter()
            .filter(|t| t.preferred && t.supports("list") && t.supports("get"))
            .filter(|t| scope.all_namespaces || t.namespaced)
            .filter(|t| seen.insert((t.plural.clone(), t.kind.clone())))
            .cloned()
            .collect();
    }
    out.sort_by_key(ResourceType::plural_group);
    Ok(out)
}

/// The scan as a stream, in order (type, namespace, name): the entry point for consumers
/// that act on findings as they come (`scan` prints them; `repair --from-scan` can repair
/// them with its own bounded concurrency while the scan goes on).
///
/// Up to `scope.concurrency` types are scanned at once and at most `scope.concurrency`
/// requests are in flight; a type ahead of the consumer pauses after [`EVENTS_AHEAD`]
/// events, so memory stays bounded however slowly the consumer goes. With `keep_live`,
/// each [`Flagged`] carries the full object when the scan fetched one (missing and stale
/// candidates), so a repair need not GET it again. The first `Err` ends the scan; types
/// the user may not list are [`ScanEvent::Skipped`], not errors. Dropping the stream stops
/// the scan.
pub fn events<'a>(
    conn: &'a Connection,
    types: Vec<ResourceType>,
    namespace: Option<String>,
    scope: &'a ScopeArgs,
    keep_live: bool,
    progress: &'a Progress,
) -> impl Stream<Item = Result<ScanEvent>> + 'a {
    let concurrency = usize::from(scope.concurrency);
    let (senders, receivers): (Vec<_>, Vec<_>) = types.iter().map(|_| mpsc::channel(EVENTS_AHEAD)).unzip();
    let scanner = Rc::new(TypeScanner {
        conn,
        namespace,
        scope,
        keep_live,
        progress,
        requests: Semaphore::new(concurrency),
        schemas: tokio::sync::Mutex::new(Schemas::connected(conn)),
    });
    let producers = stream::iter(types.into_iter().zip(senders)).for_each_concurrent(concurrency, move |(t, tx)| {
        let scanner = Rc::clone(&scanner);
        async move { scanner.run(t, tx).await }
    });
    // The producers yield nothing themselves: polled beside the ordered receivers, they
    // run as far ahead as the channels allow.
    let producers = stream::once(producers).filter_map(|()| futures::future::ready(None));
    stream::select(producers, stream::iter(receivers).flatten())
}

/// The flagged objects of a scan as they are found, for the commands that act on them
/// (`repair --from-scan`, `migrate --from-scan`): nothing is collected. Types that could
/// not be listed are reported on stderr as warnings and the scan goes on; the first error
/// ends the stream.
pub fn flagged<'a>(
    conn: &'a Connection,
    types: Vec<ResourceType>,
    namespace: Option<String>,
    scope: &'a ScopeArgs,
    progress: &'a Progress,
) -> impl Stream<Item = Result<Flagged>> + 'a {
    events(conn, types, namespace, scope, true, progress).filter_map(move |event| {
        futures::future::ready(match event {
            Ok(ScanEvent::Flagged(f)) => Some(Ok(f)),
            Ok(ScanEvent::Skipped(s)) => {
                progress.suspend(|| eprintln!("warning: skipped {}: {}", s.resource.plural_group(), s.reason));
                None
            }
            Ok(ScanEvent::TypeDone { .. }) => None,
            Err(e) => Some(Err(e)),
        })
    })
}

/// The scan's per-type work, shared by the types scanned in parallel.
struct TypeScanner<'a> {
    conn: &'a Connection,
    namespace: Option<String>,
    scope: &'a ScopeArgs,
    keep_live: bool,
    progress: &'a Progress,
    /// At most `--concurrency` requests in flight, lists and GETs together.
    requests: Semaphore,
    /// The server's schemas, one reader for every type: each group-version is read once.
    schemas: tokio::sync::Mutex<Schemas>,
}

/// How the next page of a type is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Representation {
    /// Metadata only, then a GET per candidate.
    Metadata,
    /// Full objects: candidates are checked from the list itself.
    Full,
}

/// An object read from a page: what its metadata says, and whether its values are needed.
struct Checked {
    target: ObjectRef,
    findings: Vec<Finding>,
    /// No annotation (but kubectl wrote it): size the annotation repair would write.
    missing: bool,
    /// The full object is needed (missing, or possibly stale).
    needs_values: bool,
    /// A migration would move fields of it (client-side apply or `before-first-apply` still own some).
    migratable: bool,
}

type Events = mpsc::Sender<Result<ScanEvent>>;

impl TypeScanner<'_> {
    /// Scans one type into its channel, ending with `TypeDone`, `Skipped` or the error.
    async fn run(&self, resource: ResourceType, mut tx: Events) {
        let last = match self.scan_type(&resource, &mut tx).await {
            Ok(objects) => Ok(ScanEvent::TypeDone { objects }),
            // Not allowed, or not really listable: report it and go on with the rest.
            Err(Error::Api { code: 403..=406, reason, message, .. }) => {
                Ok(ScanEvent::Skipped(Skipped { resource, reason: format!("{reason}: {message}") }))
            }
            Err(e) => Err(e),
        };
        // A closed channel means the consumer stopped: nothing left to tell.
        let _ = tx.send(last).await;
        self.progress.type_done();
    }

    /// Reads the type page by page and sends its flagged objects; returns how many objects it had.
    async fn scan_type(&self, resource: &ResourceType, tx: &mut Events) -> Result<usize> {
        let ns = if resource.namespaced { self.namespace.as_deref() } else { None };
        let options = ListOptions { label_selector: self.scope.selector.clone(), ..Default::default() };
        let mut pager = Pager::new(resource, ns, &options);
        let (mut representation, mut limit, mut count) = (Representation::Metadata, FIRST_PAGE, 0);
        // Compared as `kubectl apply` merges the kind (server's schema: by key for built-in
        // types, whole lists for custom resources), read once an object carries an annotation.
        let mut typed: Option<TypeSchema> = None;
        let untyped = Schema::new();
        // A full page read ahead while the previous one was checked (see below).
        let mut prefetched: Option<Vec<Value>> = None;
        let mut exhausted = false;
        // Whether the page before this one was dense: only then is the next page read ahead
        // in full (a type whose candidates thin out goes back to metadata after one more page).
        let mut last_dense = false;
        loop {
            let items = match prefetched.take() {
                Some(items) => {
                    representation = Representation::Full;
                    items
                }
                None if exhausted => break,
                None => {
                    let accept = (representation == Representation::Metadata).then_some(PARTIAL_METADATA_LIST);
                    let _permit = self.permit().await?;
                    match pager.next_page(self.conn, Some(limit), accept).await? {
                        Some(items) => items,
                        None => break,
                    }
                }
            };
            let size = items.len();
            count += size;
            if typed.is_none() && items.iter().any(|item| annotation_of(item).is_some()) {
                let gvk = Gvk::new(&resource.group, &resource.version, &resource.kind);
                typed = Some(self.schemas.lock().await.for_gvk(&gvk).await?);
            }
            let schema: &Schema = typed.as_ref().map_or(&untyped, |t| t.for_client_side_apply().0);
            self.progress.page(&resource.plural_group(), size);
            let (flagged, candidates) = match representation {
                Representation::Full => {
                    // A dense type: its page is checked on a worker thread (rebuilding and sizing
                    // hundreds of annotations is the scan's own CPU work) while the next page,
                    // full again, is read: the server lists while the client checks.
                    let check = {
                        let (resource, typed, keep_live) = (resource.clone(), typed.clone(), self.keep_live);
                        tokio::task::spawn_blocking(move || {
                            let untyped = Schema::new();
                            let schema = typed.as_ref().map_or(&untyped, |t| t.for_client_side_apply().0);
                            check_full_page(&resource, items, schema, keep_live)
                        })
                    };
                    let next = async {
                        if !last_dense {
                            return Ok(None);
                        }
                        let _permit = self.permit().await?;
                        pager.next_page(self.conn, Some(PAGE), None).await.map(Some)
                    };
                    let (checked, next) = futures::join!(check, next);
                    match next? {
                        Some(Some(items)) => prefetched = Some(items),
                        Some(None) => exhausted = true,
                        None => {}
                    }
                    match checked {
                        Ok(checked) => checked,
                        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                        Err(_) => return Err(Error::Stopped("the scan's page check")),
                    }
                }
                Representation::Metadata => {
                    let checked: Vec<Checked> =
                        items.iter().map(|item| check_metadata(resource, item, schema)).collect();
                    drop(items);
                    let candidates = checked.iter().filter(|c| c.needs_values).count();
                    // Many candidates: one full read of this page (same snapshot) beats a GET each.
                    let full = if candidates > REREAD_OVER && candidates * DENSE_ONE_IN > size {
                        let _permit = self.permit().await?;
                        pager.reread_page(self.conn, Some(limit), None).await?
                    } else {
                        None
                    };
                    match full {
                        Some(items) => (check_full_page(resource, items, schema, self.keep_live).0, candidates),
                        None => (self.check_metadata_page(checked, schema).await?, candidates),
                    }
                }
            };
            for f in flagged {
                tx.send(Ok(ScanEvent::Flagged(f))).await.map_err(|_| Error::Stopped("the scan"))?;
            }
            last_dense = candidates * DENSE_ONE_IN > size;
            representation = if last_dense { Representation::Full } else { Representation::Metadata };
            limit = PAGE;
        }
        Ok(count)
    }

    async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>> {
        self.requests.acquire().await.map_err(|_| Error::Stopped("the scan's request limiter"))
    }

    /// A metadata page's objects: a GET per candidate (in parallel, in order), then the
    /// flagged objects.
    async fn check_metadata_page(&self, checked: Vec<Checked>, schema: &Schema) -> Result<Vec<Flagged>> {
        let fetched: Vec<Result<Option<Value>>> = stream::iter(checked.iter().filter(|c| c.needs_values))
            .map(|c| async move {
                let _permit = self.permit().await?;
                match objects::get(self.conn, &c.target, None).await {
                    Ok(object) => Ok(Some(object)),
                    Err(e) if e.is_not_found() => Ok(None), // deleted since the list
                    Err(e) => Err(e),
                }
            })
            .buffered(usize::from(self.scope.concurrency))
            .collect()
            .await;
        let mut fetched = fetched.into_iter();
        let mut flagged = Vec::new();
        for c in checked {
            let live = if c.needs_values { fetched.next().transpose()?.flatten() } else { None };
            flagged.extend(finish(c, live, schema, self.keep_live));
        }
        Ok(flagged)
    }
}

/// A page of full objects: every check from the page itself; also how many were candidates.
fn check_full_page(
    resource: &ResourceType,
    items: Vec<Value>,
    schema: &Schema,
    keep_live: bool,
) -> (Vec<Flagged>, usize) {
    let mut candidates = 0;
    let mut flagged = Vec::new();
    for item in items {
        let c = check_metadata(resource, &item, schema);
        let live = c.needs_values.then_some(item);
        candidates += usize::from(live.is_some());
        flagged.extend(finish(c, live, schema, keep_live));
    }
    (flagged, candidates)
}

/// Completes an object's findings with its values (when fetched); `None` when it is clean.
/// The full object stays in the finding only with `keep_live`, which also keeps an object a
/// migration would move without findings: the commands that write see it (`migrate
/// --from-scan` moves it, `repair` finds nothing to repair in it), the report never does.
fn finish(mut c: Checked, live: Option<Value>, schema: &Schema, keep_live: bool) -> Option<Flagged> {
    if let Some(live) = &live {
        if c.missing {
            let would_write = rebuild(live).ok().map(|config| encode(&config, c.target.namespace.as_deref()));
            c.findings.extend(check::oversized(live, would_write.as_deref()));
        } else {
            c.findings.extend(check::stale(live, schema));
        }
    }
    if c.findings.is_empty() && !(keep_live && c.migratable) {
        return None;
    }
    c.findings.sort_by_key(|x| x.kind);
    Some(Flagged { target: c.target, findings: c.findings, live: live.filter(|_| keep_live) })
}

/// What an object's metadata decides (missing, leaking, oversized as it stands) and whether
/// its values are needed to decide the rest.
fn check_metadata(resource: &ResourceType, item: &Value, schema: &Schema) -> Checked {
    let mut findings = Vec::new();
    findings.extend(check::missing(item));
    let missing = !findings.is_empty();
    findings.extend(check::leaking(item));
    if !missing {
        findings.extend(check::oversized(item, None));
    }
    let needs_values = missing || check::stale_candidate(item, schema);
    let target = ObjectRef::of_object(resource, item);
    Checked { target, findings, missing, needs_values, migratable: migratable(item) }
}
