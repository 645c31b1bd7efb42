//! Listing: the one engine every command that reads collections goes through
//! (`last-applied scan`, `owners --tree`, completion, bulk commands over `-l` and `-A`).
//!
//! - [`Scope`] and [`Selectors`]: kubectl's `-n`/`-A` and `-l`/`--field-selector`.
//! - [`listable_types`]: the one place that chooses "every type" (and [`is_listable`], the
//!   names completion offers; [`require_listable`], the refusal of a named type the server
//!   does not list).
//! - [`Lister`]: bounded, paged, read-ahead listing of one type ([`Lister::list`],
//!   [`Lister::objects`], [`Lister::pages`]) or many ([`Lister::list_each`]), and the
//!   metadata-first listing for checks that need whole objects only for some
//!   ([`Lister::check_types`] with a [`PageCheck`]); a large type across all namespaces is
//!   listed namespace by namespace, in parallel.
//! - [`for_each_concurrently`], [`map_concurrently`], [`ordered`] (and [`ordered_parts`]): the bounded fan-out the
//!   glue (bulk writes included) and the plugins use instead of their own semaphores and tasks.
//!
//! ```no_run
//! # async fn example(conn: &fieldwise_kube::conn::client::Connection,
//! #                  catalog: &fieldwise_kube::api::discovery::ResourceCatalog) -> fieldwise_kube::Result<()> {
//! use fieldwise_kube::api::listing::{ListOptions, Lister, Scope, Selectors};
//! use futures::StreamExt;
//!
//! // `kubectl get deployments -A -l app=web`, one object at a time.
//! let deployments = catalog.resolve("deployments")?;
//! let lister = Lister::new(conn, Scope::AllNamespaces, Selectors::label(Some("app=web")), ListOptions::default());
//! let mut objects = std::pin::pin!(lister.objects(deployments));
//! while let Some(object) = objects.next().await {
//!     println!("{}", object?["metadata"]["name"]);
//! }
//! # Ok(()) }
//! ```

mod check;
mod engine;
mod fan_out;
mod pager;
mod scope;
mod source;
mod split;
mod types;

#[cfg(test)]
mod tests;

pub use check::{AsListed, Listed, PageCheck, TypeEvent};
pub use engine::{list, snapshot, ListOptions, Lister};
pub use fan_out::{for_each_concurrently, forward_ordered, map_concurrently, ordered, ordered_parts, Outlet};
pub use scope::{Scope, Selectors};
pub use source::{Representation, PARTIAL_METADATA_LIST};
pub use types::{is_listable, listable_types, require_listable};
