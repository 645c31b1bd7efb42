//! The API layer: what the server serves and how objects are named and read.
//!
//! - [`discovery`]: resource types (kubectl's short names, plurals, groups), cached 6 h.
//! - [`openapi`]: the server's own schema, for custom resources and newer types.
//! - [`media_type`]: the Content-Types that tell the four patch flavours apart.
//! - [`target`]: `TYPE/NAME` and `TYPE NAME` arguments as kubectl parses them.
//! - [`reference`](mod@reference): the one object reference, from arguments, manifests or
//!   owner references, with kubectl's namespace rules.
//! - [`manifests`]: `-f FILE|DIR|-` documents.
//! - [`helm_release`]: a Helm release read as Helm stores it (Secrets or ConfigMaps), no helm binary.
//! - [`object_prune`]: the objects an apply of a new set deletes, read live with what may block them.
//! - [`applyset`]: an ApplySet's parent and the members `kubectl apply --prune --applyset` deletes.
//! - [`request_url`]: every request URL, from checked, percent-encoded path segments and an
//!   encoded query, in one place.
//! - [`objects`]: GET of one object, and the one request path every read goes through.
//! - [`listing`]: every LIST: scope and selectors, "every type", the bounded, paged,
//!   metadata-first engine, and the bounded fan-out the plugins use.
//! - [`selection`]: the objects a command acts on, named, selected (`-l`, `--all`, `-A`) or from `-f`.
//! - [`unread`]: what a check could not read, and the gate that fails it for that.
//! - [`watch`](mod@watch): a selection listed, then followed change by change (resumed, relisted on 410 Gone).

pub mod applyset;
pub mod discovery;
pub mod helm_release;
pub mod listing;
pub mod manifests;
pub mod media_type;
pub mod object_prune;
pub mod objects;
pub mod openapi;
pub mod reference;
pub mod request_url;
pub mod selection;
pub mod target;
pub mod unread;
pub mod watch;
