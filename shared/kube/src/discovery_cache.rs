//! Where discovery is kept in a server's cache ([`crate::cache`]), and how it is
//! dropped. Its own module because two others use it without using each other's
//! insides: [`crate::discovery`] reads and writes the entries, and the client
//! ([`crate::client::Connection::error`]) drops them when the server contradicts them.

use crate::cache::ServerCache;

/// The cache entry of the core group's aggregated discovery document (`/api`), as the server sent it.
pub const CORE_ENTRY: &str = "discovery/api.json";

/// The cache entry of the named groups' aggregated discovery document (`/apis`), as the server sent it.
pub const GROUPS_ENTRY: &str = "discovery/apis.json";

/// Drops the cached discovery of a server (after the server contradicted it).
pub fn forget(cache: &ServerCache) {
    cache.remove(CORE_ENTRY);
    cache.remove(GROUPS_ENTRY);
}
