//! What a caller of the engine says about each page ([`PageCheck`]), and what the engine
//! tells it back ([`TypeEvent`]).
//!
//! A check decides which objects of a page need their full object ([`PageCheck::wanted`]):
//! the engine lists metadata first and reads full objects only for those (a GET each, or
//! the whole page again in full when many are wanted), and the share wanted decides how
//! the next page is read. Then it runs the check's own work on the page
//! ([`PageCheck::check`]) while the server lists the next one. Listing whole objects is the
//! check that wants everything ([`AsListed`]).
//!
//! Checks run on the plugin's one thread, between requests: on the 2-core machines the
//! benchmarks run on, worker threads finished no sooner (the apiserver has the other core)
//! and, with the allocator the plugins ship (mimalloc), pages made on one thread and freed
//! on another more than doubled the peak memory of `last-applied scan -A` (160 to 190 MB
//! instead of 65 to 75 MB at 100,000 objects).

use std::future::Future;

use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::listing::Representation;
use crate::error::{Error, Result};

/// One object of a page, as the check gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The object: whole when [`Listed::full`], else its metadata (labels, annotations,
    /// ownerReferences, managedFields) without the body.
    pub object: Value,
    /// Whether `object` is the whole object. An object the check wanted is whole unless it
    /// was deleted between the list and its GET.
    pub full: bool,
}

/// A caller's work on the pages of one type (one value per type: it may remember what it
/// learnt from earlier pages, such as the type's schema).
pub trait PageCheck {
    /// What the check makes of a page.
    type Output;

    /// Which objects of `page` need their whole object, in order. Called on every page
    /// (metadata or whole): when more than one object in ten is wanted, the next page is
    /// listed whole. May read what it needs first (a schema) before answering.
    fn wanted<'a>(&'a self, page: &'a [Value]) -> impl Future<Output = Result<Vec<bool>>> + 'a;

    /// The work on one page: gets every object of the page, the wanted ones whole.
    fn check(&self, page: Vec<Listed>) -> Self::Output;

    /// A page of `objects` objects was read (for a progress line).
    fn page_read(&self, _objects: usize) {}
}

/// What a listing of several types tells, type by type in the order the types were given:
/// the type's pages, then how it ended.
#[derive(Debug)]
pub enum TypeEvent<T> {
    /// A checked page.
    Page(T),
    /// The type was listed to the end.
    Done {
        /// The type.
        resource: ResourceType,
        /// How many objects it had.
        objects: usize,
    },
    /// The user may not list the type, the server will not (403 to 406), or no longer serves
    /// it ([`ConnError::NoLongerServed`](crate::conn::error::ConnError::NoLongerServed): removed since discovery was read): the others are
    /// listed all the same.
    Skipped {
        /// The type.
        resource: ResourceType,
        /// The server's answer.
        error: Error,
    },
    /// The type could not be listed to the end (its earlier pages were given).
    Failed {
        /// The type.
        resource: ResourceType,
        /// Why.
        error: Error,
    },
}

/// The check of a plain listing: every object in the representation asked for, nothing
/// fetched beside the list (whole objects: all wanted, so every page is listed whole;
/// metadata: none wanted, so every page stays metadata).
#[derive(Debug, Clone, Copy)]
pub struct AsListed(pub Representation);

impl PageCheck for AsListed {
    type Output = Vec<Value>;

    fn wanted<'a>(&'a self, page: &'a [Value]) -> impl Future<Output = Result<Vec<bool>>> + 'a {
        futures::future::ready(Ok(vec![self.0 == Representation::Full; page.len()]))
    }

    fn check(&self, page: Vec<Listed>) -> Vec<Value> {
        page.into_iter().map(|l| l.object).collect()
    }
}
