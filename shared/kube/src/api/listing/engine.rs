//! The listing engine: every list a command sends goes through a [`Lister`].
//!
//! - **Bounded.** At most [`ListOptions::concurrency`] requests are in flight, lists and
//!   GETs together, however many types and namespaces are listed at once.
//! - **Paged.** Pages of [`ListOptions::page_size`] objects (kubectl's `--chunk-size`, 500),
//!   each handed on and dropped before long: memory is bounded by pages, not by the cluster.
//! - **Read ahead.** While a page of whole objects is checked, the next one is already being
//!   listed, so the server and the client work at the same time (a split type's namespaces
//!   overlap with each other instead).
//! - **Metadata first** ([`Lister::check_types`]): a type starts with a small metadata page;
//!   the objects the caller wants whole are read with a GET each, or, when many are, the page
//!   is read again whole from its `continue` token (one request instead of hundreds of
//!   GETs), and the following pages are listed whole until they thin out again. No object is
//!   listed twice except the metadata of such a page.
//! - **Split by namespace.** A large type across all namespaces goes on namespace by
//!   namespace, in parallel (see [`super::split`]).
//! - **In order.** Types come out in the order given, each type's objects in the server's
//!   list order (namespace, name), whatever ran first.

use std::cell::Cell;

use futures::future::LocalBoxFuture;
use futures::stream::{self, Stream, StreamExt};
use futures::SinkExt;
use serde_json::Value;
use tokio::sync::{OnceCell, Semaphore, SemaphorePermit};

use crate::api::discovery::ResourceType;
use crate::api::listing::check::{AsListed, Listed, PageCheck, TypeEvent};
use crate::api::listing::fan_out::{forward_ordered, ordered, ordered_parts, Outlet};
use crate::api::listing::pager::Pager;
use crate::api::listing::source::{PageRequest, Representation, Source};
use crate::api::listing::{split, Scope, Selectors};
use crate::api::reference::ObjectRef;
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// The first page of a type listed metadata first: small, because its wanted objects are
/// read with a GET each (a first page cannot be read again from the same snapshot), and it
/// decides how the next page is read.
pub(crate) const FIRST_PAGE: u32 = 20;
/// A metadata page with more wanted objects than this (and dense, see [`DENSE_ONE_IN`]) is
/// read once more whole, from the same snapshot, instead of a GET per object.
pub(crate) const REREAD_OVER: usize = 8;
/// A page where more than one object in this many is wanted makes the next page a whole list:
/// one large answer beats that many GETs.
pub(crate) const DENSE_ONE_IN: usize = 10;
/// Pages a type may run ahead of the consumer.
const PAGES_AHEAD: usize = 2;
/// Pages a namespace of a split type may run ahead of the consumer, besides the one its
/// `send` waits with: the namespaces of every split type in flight wait so, and their
/// results are what the listing holds most of.
const NAMESPACE_PAGES_AHEAD: usize = 0;

/// The smallest page a namespace of a split type reads (see [`Lister::split_page_size`]):
/// below it, the round trips cost more than the memory saved.
const MIN_SPLIT_PAGE: u32 = 50;

/// How a [`Lister`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListOptions {
    /// Requests in flight at once, lists and GETs together, across every type and namespace.
    pub concurrency: usize,
    /// Objects per page (kubectl's `--chunk-size`).
    pub page_size: u32,
}

impl Default for ListOptions {
    /// 8 requests at once, pages of 500 (kubectl's chunk size).
    fn default() -> Self {
        ListOptions { concurrency: 8, page_size: 500 }
    }
}

impl ListOptions {
    /// The defaults with `concurrency` requests at once (at least one).
    pub fn with_concurrency(concurrency: usize) -> Self {
        ListOptions { concurrency: concurrency.max(1), ..Default::default() }
    }
}

/// Lists objects of one or many types in a [`Scope`], filtered by [`Selectors`]: the one way
/// the plugins and the glue read collections.
pub struct Lister<'c> {
    source: &'c dyn Source,
    scope: Scope,
    selectors: Selectors,
    options: ListOptions,
    /// At most `options.concurrency` requests in flight.
    requests: Semaphore,
    /// The cluster's namespaces in the server's key order, read once when a type is first
    /// split (`None`: they could not be read, and nothing is split).
    namespaces: OnceCell<Option<Vec<String>>>,
}

impl std::fmt::Debug for Lister<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister").field("scope", &self.scope).field("selectors", &self.selectors).finish()
    }
}

/// Where one chain of pages lists: a type, in one namespace or across them.
#[derive(Clone, Copy)]
struct Unit<'u> {
    resource: &'u ResourceType,
    namespace: Option<&'u str>,
    /// Whether it may go on namespace by namespace (a namespaced type across all of them).
    splittable: bool,
    /// Whether a whole page is read ahead while the one before is checked. The namespaces
    /// of a split type do not: they overlap with each other already, and a page read ahead
    /// in each, waiting with its results for the consumer, would hold that many more pages.
    read_ahead: bool,
    /// Objects per page after the first (see [`Lister::split_page_size`]).
    page_size: u32,
}

/// How the next page of a unit is read.
#[derive(Debug, Clone, Copy)]
struct State {
    representation: Representation,
    limit: u32,
    /// Whether the page before was dense: only then is a whole page read ahead.
    last_dense: bool,
}

type Events<T> = Outlet<TypeEvent<T>>;

impl<'c> Lister<'c> {
    /// A lister on `conn`.
    pub fn new(conn: &'c Connection, scope: Scope, selectors: Selectors, options: ListOptions) -> Self {
        Lister::over(conn, scope, selectors, options)
    }

    pub(crate) fn over(source: &'c dyn Source, scope: Scope, selectors: Selectors, options: ListOptions) -> Self {
        let options = ListOptions { concurrency: options.concurrency.max(1), page_size: options.page_size.max(1) };
        Lister {
            source,
            scope,
            selectors,
            options,
            requests: Semaphore::new(options.concurrency),
            namespaces: OnceCell::new(),
        }
    }

    /// The scope it lists in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Every object of `resource`, whole, collected.
    pub async fn list(&self, resource: &ResourceType) -> Result<Vec<Value>> {
        let mut all = Vec::new();
        let mut pages = std::pin::pin!(self.pages(resource, Representation::Full));
        while let Some(page) = pages.next().await {
            all.extend(page?);
        }
        Ok(all)
    }

    /// The objects of `resource`, whole, one at a time in list order: pages are listed (and
    /// read ahead) as the stream is consumed, so memory stays bounded by a few pages.
    pub fn objects<'a>(&'a self, resource: &'a ResourceType) -> impl Stream<Item = Result<Value>> + 'a {
        self.pages(resource, Representation::Full).flat_map(|page| match page {
            Ok(items) => stream::iter(items.into_iter().map(Ok).collect::<Vec<_>>()),
            Err(e) => stream::iter(vec![Err(e)]),
        })
    }

    /// The pages of `resource` in `representation`, in list order.
    pub fn pages<'a>(
        &'a self,
        resource: &'a ResourceType,
        representation: Representation,
    ) -> impl Stream<Item = Result<Vec<Value>>> + 'a {
        let start = State { representation, limit: self.options.page_size, last_dense: true };
        self.types_from(vec![resource.clone()], move |_| AsListed(representation), start).filter_map(|event| {
            futures::future::ready(match event {
                TypeEvent::Page(items) => Some(Ok(items)),
                TypeEvent::Done { .. } => None,
                TypeEvent::Skipped { error, .. } | TypeEvent::Failed { error, .. } => Some(Err(error)),
            })
        })
    }

    /// Every object of each type, whole, types listed in parallel: per type (in the order
    /// given) its objects, or why it could not be listed.
    pub async fn list_each(&self, types: Vec<ResourceType>) -> Vec<(ResourceType, Result<Vec<Value>>)> {
        let start = State { representation: Representation::Full, limit: self.options.page_size, last_dense: true };
        let mut out = Vec::new();
        let mut current = Vec::new();
        let mut events = std::pin::pin!(self.types_from(types, |_| AsListed(Representation::Full), start));
        while let Some(event) = events.next().await {
            match event {
                TypeEvent::Page(items) => current.extend(items),
                TypeEvent::Done { resource, .. } => out.push((resource, Ok(std::mem::take(&mut current)))),
                TypeEvent::Skipped { resource, error } | TypeEvent::Failed { resource, error } => {
                    current.clear();
                    out.push((resource, Err(error)));
                }
            }
        }
        out
    }

    /// Lists each type metadata first for a [`PageCheck`] (`check_of` makes one per type),
    /// types in parallel, and yields, type by type in the order given, the checked pages and
    /// how the type ended. Dropping the stream stops the listing.
    pub fn check_types<'a, C, M>(
        &'a self,
        types: Vec<ResourceType>,
        check_of: M,
    ) -> impl Stream<Item = TypeEvent<C::Output>> + 'a
    where
        C: PageCheck + 'a,
        M: Fn(&ResourceType) -> C + 'a,
    {
        let start = State { representation: Representation::Metadata, limit: FIRST_PAGE, last_dense: false };
        self.types_from(types, check_of, start)
    }

    fn types_from<'a, C, M>(
        &'a self,
        types: Vec<ResourceType>,
        check_of: M,
        start: State,
    ) -> impl Stream<Item = TypeEvent<C::Output>> + 'a
    where
        C: PageCheck + 'a,
        M: Fn(&ResourceType) -> C + 'a,
    {
        ordered(types, self.options.concurrency, PAGES_AHEAD, move |resource, mut tx| {
            let check = check_of(&resource);
            async move {
                let unit = Unit {
                    resource: &resource,
                    namespace: self.scope.namespace_for(&resource),
                    splittable: self.scope.spans_namespaces(&resource),
                    read_ahead: true,
                    page_size: self.options.page_size,
                };
                let result = self.run_unit(&check, unit, start, &mut tx).await;
                let last = match result {
                    Ok(objects) => TypeEvent::Done { resource, objects },
                    Err(error) => match Error::no_longer_served(error) {
                        // On a live cluster types come and go: one removed since discovery is skipped.
                        Ok(gone) => TypeEvent::Skipped { resource, error: gone },
                        Err(error) if matches!(error.server_code(), Some(403..=406)) => {
                            TypeEvent::Skipped { resource, error }
                        }
                        Err(error) => TypeEvent::Failed { resource, error },
                    },
                };
                // A closed channel means the consumer stopped: nothing left to tell.
                let _ = tx.send(last).await;
            }
        })
    }

    /// Lists one unit page by page into `tx`; returns how many objects it had.
    async fn run_unit<C: PageCheck>(
        &self,
        check: &C,
        unit: Unit<'_>,
        mut state: State,
        tx: &mut Events<C::Output>,
    ) -> Result<usize> {
        let mut pager = Pager::new(unit.resource, unit.namespace, &self.selectors);
        let mut count = 0;
        // The namespace of the last object given: a split must not list it again.
        let mut last_given: Option<String> = None;
        // A whole page read ahead while the one before was checked.
        let mut prefetched: Option<Vec<Value>> = None;
        let mut exhausted = false;
        loop {
            let (items, representation) = match prefetched.take() {
                Some(items) => (items, Representation::Full),
                None if exhausted => break,
                None => match self.next_page(&mut pager, state.limit, state.representation).await? {
                    Some(items) => (items, state.representation),
                    None => break,
                },
            };
            let size = items.len();
            check.page_read(size);
            let wanted = check.wanted(&items).await?;
            let candidates = wanted.iter().filter(|w| **w).count();
            let dense = candidates * DENSE_ONE_IN > size;
            let next_state = State {
                representation: if dense { Representation::Full } else { Representation::Metadata },
                limit: unit.page_size,
                last_dense: dense,
            };
            let last_namespace = items.last().and_then(split::namespace_of).map(str::to_string);
            // A page that ends in the namespace the pages before ended in cannot split there
            // (part of that namespace was given already): the chain goes on until it leaves it.
            if unit.splittable
                && last_namespace != last_given
                && split::worth_splitting(count + size, pager.remaining(), pager.more())
            {
                if let Some(namespaces) = self.namespaces().await {
                    let (kept, rest) = split::partition(items, namespaces);
                    count += kept.len();
                    if !kept.is_empty() {
                        let wanted = &wanted[..kept.len()];
                        let listed = self.complete(unit.resource, kept, wanted, representation).await?;
                        send(tx, TypeEvent::Page(check.check(listed))).await?;
                    }
                    return Ok(count + self.split(check, unit.resource, rest, next_state, tx).await?);
                }
            }
            count += size;
            last_given = last_namespace;
            let checked = match representation {
                Representation::Full => {
                    let listed = items.into_iter().map(|object| Listed { object, full: true }).collect();
                    let read_ahead = async {
                        if !(state.last_dense && unit.read_ahead) {
                            return Result::Ok(None);
                        }
                        self.next_page(&mut pager, unit.page_size, Representation::Full).await.map(Some)
                    };
                    let check_page = async {
                        // The request of the page read ahead leaves first: the server lists it
                        // while this thread checks.
                        tokio::task::yield_now().await;
                        check.check(listed)
                    };
                    let (next, checked) = futures::join!(read_ahead, check_page);
                    match next? {
                        Some(Some(items)) => prefetched = Some(items),
                        Some(None) => exhausted = true,
                        None => {}
                    }
                    checked
                }
                Representation::Metadata => {
                    // Many wanted: one whole read of this page (same snapshot) beats a GET each.
                    let whole = if candidates > REREAD_OVER && dense {
                        let _permit = self.permit().await?;
                        pager.reread_page(self.source, Some(state.limit), Representation::Full).await?
                    } else {
                        None
                    };
                    let listed = match whole {
                        Some(items) => items.into_iter().map(|object| Listed { object, full: true }).collect(),
                        None => self.complete(unit.resource, items, &wanted, Representation::Metadata).await?,
                    };
                    check.check(listed)
                }
            };
            send(tx, TypeEvent::Page(checked)).await?;
            state = next_state;
        }
        Ok(count)
    }

    /// Lists the rest of a type namespace by namespace, in parallel, into `tx` in order;
    /// returns how many objects they had.
    async fn split<C: PageCheck>(
        &self,
        check: &C,
        resource: &ResourceType,
        namespaces: Vec<String>,
        state: State,
        tx: &mut Events<C::Output>,
    ) -> Result<usize> {
        let total = Cell::new(0);
        let failed: Cell<Option<Error>> = Cell::new(None);
        let page_size = self.split_page_size();
        let state = State { limit: state.limit.min(page_size), ..state };
        let produce = |namespace: String, mut sub: Events<C::Output>| {
            let (total, failed) = (&total, &failed);
            async move {
                let unit =
                    Unit { resource, namespace: Some(&namespace), splittable: false, read_ahead: false, page_size };
                // Boxed: a unit may split, and a split runs units.
                let run: LocalBoxFuture<'_, Result<usize>> = Box::pin(self.run_unit(check, unit, state, &mut sub));
                match run.await {
                    Ok(n) => total.set(total.get() + n),
                    Err(e) => {
                        failed.set(Some(e));
                        // Ends the listing at this namespace (the stream stops taking pages).
                        sub.close_channel();
                    }
                }
            }
        };
        let (producers, events) = ordered_parts(namespaces, self.options.concurrency, NAMESPACE_PAGES_AHEAD, produce);
        // The namespaces run while their pages wait for room in `tx`: a namespace granted a
        // request slot is always polled to use it (see `ordered_parts`).
        let forward = async {
            let mut events = std::pin::pin!(events);
            while let Some(event) = events.next().await {
                if let Some(e) = failed.take() {
                    return Err(e);
                }
                send(tx, event).await?;
            }
            match failed.take() {
                Some(e) => Err(e),
                None => Ok(total.get()),
            }
        };
        forward_ordered(producers, forward).await
    }

    /// Objects per page in each namespace of a split type: the page size shared by the
    /// namespaces listed at once. Why: each holds a page it listed and one waiting for the
    /// consumer, so pages of the whole size in every namespace held up to 16 pages (8,000
    /// objects) of one large type: memory grew with the type up to there. Shared, the
    /// namespaces together hold about what a type listed alone holds (its page and the one
    /// read ahead), whatever the size of the cluster.
    fn split_page_size(&self) -> u32 {
        let share = self.options.page_size / u32::try_from(self.options.concurrency).unwrap_or(u32::MAX).max(1);
        share.max(MIN_SPLIT_PAGE).min(self.options.page_size)
    }

    /// A page's objects, the wanted ones read whole with a GET each (in parallel, in order);
    /// an object deleted since the list stays as listed.
    async fn complete(
        &self,
        resource: &ResourceType,
        items: Vec<Value>,
        wanted: &[bool],
        representation: Representation,
    ) -> Result<Vec<Listed>> {
        if representation == Representation::Full {
            return Ok(items.into_iter().map(|object| Listed { object, full: true }).collect());
        }
        let targets: Vec<ObjectRef> = items
            .iter()
            .zip(wanted)
            .filter(|(_, w)| **w)
            .map(|(item, _)| ObjectRef::of_object(resource, item))
            .collect();
        let fetched: Vec<Result<Option<Value>>> = stream::iter(&targets)
            .map(|target| async move {
                let _permit = self.permit().await?;
                match self.source.get(target).await {
                    Ok(object) => Ok(Some(object)),
                    Err(e) if e.is_not_found() => Ok(None), // deleted since the list
                    Err(e) => Err(e),
                }
            })
            .buffered(self.options.concurrency)
            .collect()
            .await;
        let mut fetched = fetched.into_iter();
        let mut listed = Vec::with_capacity(items.len());
        for (object, wanted) in items.into_iter().zip(wanted) {
            let whole = if *wanted { fetched.next().transpose()?.flatten() } else { None };
            listed.push(match whole {
                Some(object) => Listed { object, full: true },
                None => Listed { object, full: false },
            });
        }
        Ok(listed)
    }

    /// The next page of a pager, within the request limit.
    async fn next_page(
        &self,
        pager: &mut Pager<'_>,
        limit: u32,
        representation: Representation,
    ) -> Result<Option<Vec<Value>>> {
        let _permit = self.permit().await?;
        pager.next_page(self.source, Some(limit), representation).await
    }

    async fn permit(&self) -> Result<SemaphorePermit<'_>> {
        self.requests.acquire().await.map_err(|_| Error::Stopped("the listing's request limiter"))
    }

    /// The cluster's namespaces in the server's key order, read once; `None` when they
    /// cannot be read (the user may not list namespaces): then nothing is split.
    async fn namespaces(&self) -> Option<&[String]> {
        self.namespaces.get_or_init(|| async { self.read_namespaces().await.ok() }).await.as_deref()
    }

    async fn read_namespaces(&self) -> Result<Vec<String>> {
        let resource = namespaces_type();
        let everything = Selectors::default();
        let mut pager = Pager::new(&resource, None, &everything);
        let mut names = Vec::new();
        while let Some(items) = self.next_page(&mut pager, self.options.page_size, Representation::Metadata).await? {
            names.extend(items.iter().filter_map(|n| n.pointer("/metadata/name")?.as_str().map(str::to_string)));
        }
        split::key_order(&mut names);
        Ok(names)
    }
}

/// Sends an event, or says the consumer stopped listening.
async fn send<T>(tx: &mut Events<T>, event: TypeEvent<T>) -> Result<()> {
    tx.send(event).await.map_err(|_| Error::Stopped("the listing"))
}

/// The core `namespaces` type (cluster-scoped, v1), as discovery describes it.
fn namespaces_type() -> ResourceType {
    ResourceType { short_names: vec!["ns".into()], ..ResourceType::core_v1("namespaces", "Namespace", false) }
}

/// Every object of `resource` in `scope` that `selectors` select, whole: [`Lister::list`]
/// with the default options, for a caller that lists one type once.
pub async fn list(
    conn: &Connection,
    resource: &ResourceType,
    scope: &Scope,
    selectors: &Selectors,
) -> Result<Vec<Value>> {
    Lister::new(conn, scope.clone(), selectors.clone(), ListOptions::default()).list(resource).await
}

/// Every object of `resource` in `namespace` (`None`: every namespace, or a cluster-scoped
/// type) that `selectors` select, whole, with the list's `resourceVersion`: the point a watch
/// of the same objects starts from, missing no change ([`crate::api::watch`]). One
/// consistent snapshot, page after page from the first page's `continue` token, so never
/// split by namespace.
pub async fn snapshot(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    selectors: &Selectors,
) -> Result<(Vec<Value>, String)> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    let mut version = None;
    loop {
        let request = PageRequest {
            resource,
            namespace,
            selectors,
            limit: Some(ListOptions::default().page_size),
            token: token.as_deref(),
            representation: Representation::Full,
        };
        let page = conn.page(request).await?;
        items.extend(page.items);
        version = version.or(page.resource_version);
        match page.next {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    let version = version.ok_or_else(|| {
        Error::usage(format!("the list of {} came without a resourceVersion: it cannot be watched", resource.plural))
    })?;
    Ok((items, version))
}
