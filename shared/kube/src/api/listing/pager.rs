//! One list read a page at a time, so a caller can process each page as it arrives and
//! drop it before asking for the next: memory stays bounded by the page size, not by the
//! size of the collection.
//!
//! Every page comes from the same snapshot (the `continue` token carries the first page's
//! resourceVersion), and the page size and representation (full objects or metadata only)
//! may change from one page to the next: a scan can switch a type from metadata to full
//! objects halfway without listing any object twice.

use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::listing::source::{PageRequest, Representation, Source};
use crate::api::listing::Selectors;
use crate::error::Result;

/// A list of one type in one place, read page by page.
#[derive(Debug)]
pub(crate) struct Pager<'a> {
    resource: &'a ResourceType,
    namespace: Option<&'a str>,
    selectors: &'a Selectors,
    /// The token of the next page.
    token: Option<String>,
    /// The token of the page last returned (`None` for the first).
    current: Option<String>,
    /// What the server said the pages after the last one returned hold.
    remaining: Option<u64>,
    finished: bool,
}

impl<'a> Pager<'a> {
    /// A pager at the first page of `resource` in `namespace` (all namespaces, or a
    /// cluster-scoped type, when `None`).
    pub(crate) fn new(resource: &'a ResourceType, namespace: Option<&'a str>, selectors: &'a Selectors) -> Self {
        Pager { resource, namespace, selectors, token: None, current: None, remaining: None, finished: false }
    }

    /// The next page, `None` after the last. `limit` is the page size (`None`: the server's
    /// choice, usually everything).
    pub(crate) async fn next_page(
        &mut self,
        source: &dyn Source,
        limit: Option<u32>,
        representation: Representation,
    ) -> Result<Option<Vec<Value>>> {
        if self.finished {
            return Ok(None);
        }
        let token = self.token.take();
        let page = source.page(self.request(token.as_deref(), limit, representation)).await?;
        self.current = token;
        self.finished = page.next.is_none();
        self.token = page.next;
        self.remaining = page.remaining;
        Ok(Some(page.items))
    }

    /// The page [`Pager::next_page`] last returned, read again in another representation
    /// (`limit` must be the same), from the same snapshot. `None` for the first page, which
    /// has no `continue` token to pin its snapshot: a second read could see other objects.
    pub(crate) async fn reread_page(
        &self,
        source: &dyn Source,
        limit: Option<u32>,
        representation: Representation,
    ) -> Result<Option<Vec<Value>>> {
        let Some(token) = &self.current else { return Ok(None) };
        Ok(Some(source.page(self.request(Some(token), limit, representation)).await?.items))
    }

    /// Whether pages follow the one last returned.
    pub(crate) fn more(&self) -> bool {
        !self.finished
    }

    /// How many objects the pages after the last one returned hold, when the server said.
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    fn request<'r>(
        &'r self,
        token: Option<&'r str>,
        limit: Option<u32>,
        representation: Representation,
    ) -> PageRequest<'r> {
        PageRequest {
            resource: self.resource,
            namespace: self.namespace,
            selectors: self.selectors,
            limit,
            token,
            representation,
        }
    }
}
