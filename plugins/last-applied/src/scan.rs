//! `scan`: every listable type (or the chosen ones) read page by page as metadata, findings
//! streamed out as they are found, in a deterministic order (type, then the server's list
//! order: namespace, name).
//!
//! The listing is the glue's engine ([`fieldwise_kube::api::listing`]): bounded requests,
//! metadata first, whole objects only where needed, a large type across all namespaces
//! listed namespace by namespace in parallel. The scan is its [`PageCheck`]: which objects
//! need their values (missing annotations, to size the one kubectl would write; possibly
//! stale ones), and the findings of each page, computed while the server lists the next. Memory is bounded by the page size and the concurrency, not by the
//! cluster: each page is checked and dropped, and a type ahead of the printer waits.
//!
//! Objects a controller made that carry a copy of their owner's annotation (ControllerRevisions)
//! are not applied objects: they are left out on their metadata alone (no read of the owner, no
//! fetch of the object) and counted ([`ScanEvent::ControllerCopies`]).
//!
//! [`Scan::events`] is the streaming entry point `scan`, `repair --from-scan` and
//! `migrate --from-scan` share ([`Scan::flagged`] is its view for the commands that write).

use std::cell::RefCell;
use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::{annotation_of, check, encode, is_controller_copy, migratable, rebuild, Finding};
use fieldwise_core::schema::{Gvk, Schema};
use fieldwise_kube::api::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::api::listing::{
    listable_types, require_listable, ListOptions, Listed, Lister, PageCheck, Scope, Selectors, TypeEvent,
};
use fieldwise_kube::api::openapi::{Schemas, TypeSchema};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::api::unread;
use fieldwise_kube::cli::gate_flags::GateFlags;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::Result;
use fieldwise_kube::exit_code;
use fieldwise_kube::output::OutputFormat;
use futures::stream::{self, Stream, StreamExt};
use serde_json::Value;
use tokio::sync::Mutex;

pub use crate::flagged::{Flagged, Skipped};
use crate::report::{Format, ReportWriter};
use crate::scan_scope::{ScanFlags, ScanScope};
use fieldwise_kube::cli::selection_flags::QueryFlags;
use fieldwise_kube::output::listing_progress::ListingProgress;

/// `scan`'s flags.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The types to scan, TYPE[,TYPE...] as kubectl get takes them (e.g. deploy,cm secrets.v1.);
    /// default: every listable type (cluster-scoped ones only with -A).
    #[arg(value_name = "TYPE")]
    pub types: Vec<String>,

    /// -l, --field-selector, -A.
    #[command(flatten)]
    pub query: QueryFlags,

    #[command(flatten)]
    pub scan: ScanFlags,

    /// Print the report as json or yaml (shape: docs/last-applied-output.md; details never quote a value),
    /// streamed as found, or name (kind.group/name of each object with findings).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// Print one JSON object per finding and line (JSON Lines) instead of one document.
    #[arg(long, conflicts_with = "output")]
    pub json_lines: bool,

    /// --allow-unreadable.
    #[command(flatten)]
    pub gate: GateFlags,
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
    /// Objects of a page left out: a controller made them, and their annotation is a copy of
    /// their owner's ([`fieldwise_core::last_applied::controller_copy`]).
    ControllerCopies(usize),
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
    let scan = Scan::new(&conn, &catalog, &ScanScope::of_scan(&args.types, &args.query, &args.scan))?;
    let progress = ListingProgress::new(scan.types.len());
    let mut report = ReportWriter::new(std::io::stdout(), format, scan.namespace(), &progress);
    report.begin()?;
    // What the scan could not read fails it (the gate); a type removed since discovery, of
    // every type, has nothing left to read and is only reported as skipped.
    let mut unread = args.gate.gate();
    let namespace = scan.namespace();
    let mut stream = std::pin::pin!(scan.events(false, &progress));
    while let Some(event) = stream.next().await {
        match event? {
            ScanEvent::Flagged(f) => report.flagged(&f)?,
            ScanEvent::Skipped(s) => {
                if !s.gone || !args.types.is_empty() {
                    unread.add(s.unread(namespace.as_deref()));
                }
                report.skipped(s)?
            }
            ScanEvent::TypeDone { objects, .. } => report.type_done(objects),
            ScanEvent::ControllerCopies(count) => report.controller_copies(count),
        }
    }
    progress.finish();
    let findings = report.finish(&unread)?;
    unread.end(if findings > 0 { exit_code::FOUND } else { exit_code::DONE })
}

/// A scan ready to run: its types (sorted by `plural.group`, the report's order) and the
/// listing of its scope.
pub struct Scan<'a> {
    lister: Lister<'a>,
    /// The types scanned.
    pub types: Vec<ResourceType>,
    /// The server's schemas, one reader for every type: each group-version is read once.
    schemas: Mutex<Schemas>,
}

impl<'a> Scan<'a> {
    /// The scan `scope` asks for: the types it names, else every listable type of the scope
    /// (cluster-scoped ones only with `-A`).
    pub fn new(conn: &'a Connection, catalog: &ResourceCatalog, scope: &ScanScope) -> Result<Self> {
        let listing_scope = Scope::of(conn, scope.all_namespaces);
        let types = types_to_scan(catalog, scope, &listing_scope)?;
        let selectors = Selectors { label: scope.label_selector.clone(), field: scope.field_selector.clone() };
        let options = ListOptions::with_concurrency(scope.concurrency);
        let lister = Lister::new(conn, listing_scope, selectors, options);
        Ok(Scan { lister, types, schemas: Mutex::new(Schemas::connected(conn)) })
    }

    /// The namespace scanned: `None` with `-A`.
    pub fn namespace(&self) -> Option<String> {
        self.lister.scope().namespace().map(str::to_string)
    }

    /// The scan as a stream, in order (type, namespace, name): the entry point for consumers
    /// that act on findings as they come (`scan` prints them; `repair --from-scan` repairs
    /// them with the bulk runner while the scan goes on).
    ///
    /// Up to `--concurrency` requests are in flight; a type ahead of the consumer pauses
    /// after a page or two, so memory stays bounded however slowly the consumer goes. With
    /// `keep_live`, each [`Flagged`] carries the full object when the scan fetched one
    /// (missing and stale candidates), so a repair need not GET it again. The first `Err`
    /// ends the scan; types the user may not list are [`ScanEvent::Skipped`], not errors.
    /// Dropping the stream stops the scan.
    pub fn events<'s>(
        &'s self,
        keep_live: bool,
        progress: &'s ListingProgress,
    ) -> impl Stream<Item = Result<ScanEvent>> + 's {
        let check_of = move |resource: &ResourceType| ScanCheck {
            resource: resource.clone(),
            keep_live,
            progress,
            schemas: &self.schemas,
            typed: RefCell::new(None),
        };
        self.lister.check_types(self.types.clone(), check_of).flat_map(move |event| {
            let events: Vec<Result<ScanEvent>> = match event {
                TypeEvent::Page(page) => {
                    let copies =
                        (page.controller_copies > 0).then_some(ScanEvent::ControllerCopies(page.controller_copies));
                    page.flagged.into_iter().map(ScanEvent::Flagged).chain(copies).map(Ok).collect()
                }
                TypeEvent::Done { objects, .. } => {
                    progress.type_done();
                    vec![Ok(ScanEvent::TypeDone { objects })]
                }
                // Not allowed, or not really listable: report it and go on with the rest.
                TypeEvent::Skipped { resource, error } => {
                    progress.type_done();
                    let skipped = Skipped { resource, reason: unread::reason(&error), gone: unread::is_gone(&error) };
                    vec![Ok(ScanEvent::Skipped(skipped))]
                }
                TypeEvent::Failed { error, .. } => {
                    progress.type_done();
                    vec![Err(error)]
                }
            };
            stream::iter(events)
        })
    }

    /// The flagged objects of a scan as they are found, for the commands that act on them
    /// (`repair --from-scan`, `migrate --from-scan`): nothing is collected. Types that could
    /// not be listed are reported on stderr as warnings and the scan goes on; the first error
    /// ends the stream.
    pub fn flagged<'s>(&'s self, progress: &'s ListingProgress) -> impl Stream<Item = Result<Flagged>> + 's {
        self.events(true, progress).filter_map(move |event| {
            futures::future::ready(match event {
                Ok(ScanEvent::Flagged(f)) => Some(Ok(f)),
                Ok(ScanEvent::Skipped(s)) => {
                    progress.suspend(|| eprintln!("warning: skipped {}: {}", s.resource.plural_group(), s.reason));
                    None
                }
                Ok(ScanEvent::TypeDone { .. } | ScanEvent::ControllerCopies(_)) => None,
                Err(e) => Some(Err(e)),
            })
        })
    }
}

/// The types to scan, sorted by `plural.group` (the report's order): the ones named, else
/// every listable type of the scope (see [`listable_types`]).
fn types_to_scan(catalog: &ResourceCatalog, scope: &ScanScope, listing_scope: &Scope) -> Result<Vec<ResourceType>> {
    let mut out: Vec<ResourceType> = Vec::new();
    if !scope.types.is_empty() {
        for name in &scope.types {
            let t = catalog.resolve(name)?;
            require_listable(t)?;
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    } else {
        out = listable_types(catalog, listing_scope);
    }
    out.sort_by_key(ResourceType::plural_group);
    Ok(out)
}

/// The scan's work on the pages of one type.
struct ScanCheck<'a> {
    resource: ResourceType,
    keep_live: bool,
    progress: &'a ListingProgress,
    schemas: &'a Mutex<Schemas>,
    /// How `kubectl apply` merges the kind (server's schema: by key for built-in types,
    /// whole lists for custom resources), read once an object carries an annotation.
    typed: RefCell<Option<TypeSchema>>,
}

/// What the scan makes of one page.
pub struct CheckedPage {
    /// Its objects with findings (or, for the commands that write, that a migration would move).
    flagged: Vec<Flagged>,
    /// How many of its objects were left out as a controller's copy of their owner's annotation.
    controller_copies: usize,
}

impl PageCheck for ScanCheck<'_> {
    type Output = CheckedPage;

    /// Missing annotations (to size the one kubectl would write) and possibly stale ones.
    async fn wanted<'p>(&'p self, page: &'p [Value]) -> Result<Vec<bool>> {
        let applied = |item: &Value| annotation_of(item).is_some() && !is_controller_copy(item);
        if self.typed.borrow().is_none() && page.iter().any(applied) {
            let r = &self.resource;
            let gvk = Gvk::new(&r.group, &r.version, &r.kind);
            let typed = self.schemas.lock().await.for_gvk(&gvk).await?;
            *self.typed.borrow_mut() = Some(typed);
        }
        let untyped = Schema::new();
        let typed = self.typed.borrow();
        let schema = typed.as_ref().map_or(&untyped, |t| t.for_client_side_apply().0);
        Ok(page.iter().map(|item| needs_values(item, schema)).collect())
    }

    /// Rebuilding and sizing the annotation of every candidate is the scan's own CPU work.
    fn check(&self, page: Vec<Listed>) -> CheckedPage {
        let untyped = Schema::new();
        let typed = self.typed.borrow();
        let schema = typed.as_ref().map_or(&untyped, |t| t.for_client_side_apply().0);
        let mut checked = CheckedPage { flagged: Vec::new(), controller_copies: 0 };
        for Listed { object, full } in page {
            if is_controller_copy(&object) {
                checked.controller_copies += 1;
                continue;
            }
            let c = check_metadata(&self.resource, &object, schema);
            let live = (c.needs_values && full).then_some(object);
            checked.flagged.extend(finish(c, live, schema, self.keep_live));
        }
        checked
    }

    fn page_read(&self, objects: usize) {
        self.progress.page(&self.resource.plural_group(), objects);
    }
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

/// Whether deciding an object's findings needs its values: its annotation is missing (to
/// size the one kubectl would write), or possibly stale. A controller's copy of its owner's
/// annotation is left out on its metadata alone.
fn needs_values(item: &Value, schema: &Schema) -> bool {
    !is_controller_copy(item) && (check::missing(item).is_some() || check::stale_candidate(item, schema))
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
