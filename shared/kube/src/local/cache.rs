//! The on-disk cache of what a server tells every command the same way
//! (discovery, OpenAPI schemas), so a command does not pay for it on every run,
//! as kubectl keeps `~/.kube/cache`.
//!
//! One directory per server: `$FIELDWISE_CACHE_DIR`, else the user cache dir
//! (`~/.cache/fieldwise`), then `servers/<host_port>-<hash of the URL>/`. Files are
//! written whole (a temporary file, then a rename), readable by the user alone,
//! so a reader never sees half a file and a crash leaves the old one in place.
//! What a file means (and when it is stale) is its writer's business: this
//! module only stores bytes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::local::error::{LocalError, LocalResult as Result};
use crate::local::private_fs::{create_dirs, create_file};

/// The cache directory of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCache {
    dir: PathBuf,
}

impl ServerCache {
    /// The cache of `server` (its URL) in the default location; `None` when the
    /// platform has no cache directory and `FIELDWISE_CACHE_DIR` is unset (no cache, then).
    pub fn for_server(server: &str) -> Option<Self> {
        let base = match std::env::var_os("FIELDWISE_CACHE_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => dirs::cache_dir()?.join("fieldwise"),
        };
        Some(Self::under(&base, server))
    }

    /// The cache of `server` below `base` (for tests).
    pub fn under(base: &Path, server: &str) -> Self {
        ServerCache { dir: base.join("servers").join(server_dir_name(server)) }
    }

    /// The directory itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bytes stored under `name` (a relative path such as `discovery/apis.json`), if any.
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        crate::local::input::read_own_file(&self.dir.join(name)).ok()
    }

    /// Stores `bytes` under `name`, replacing what was there in one step.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let path = self.dir.join(name);
        let parent = path.parent().unwrap_or(&self.dir).to_path_buf();
        create_dirs(&parent).map_err(|e| LocalError::io("create the cache directory", &parent, e))?;
        let tmp = parent.join(format!(
            ".{}.{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
            std::process::id()
        ));
        let fail = |e: std::io::Error| LocalError::io("write the cache file", &path, e);
        let mut file = create_file(&tmp, false).map_err(fail)?;
        file.write_all(bytes).map_err(fail)?;
        drop(file);
        fs::rename(&tmp, &path).map_err(|e| {
            fs::remove_file(&tmp).ok();
            fail(e)
        })
    }

    /// How long ago the entry under `name` was written, if it exists.
    pub fn age(&self, name: &str) -> Option<std::time::Duration> {
        let modified = fs::metadata(self.dir.join(name)).ok()?.modified().ok()?;
        // A clock that went backwards makes the entry new, not invalid.
        Some(modified.elapsed().unwrap_or_default())
    }

    /// Removes the entry under `name`, if any.
    pub fn remove(&self, name: &str) {
        fs::remove_file(self.dir.join(name)).ok();
    }

    /// Removes everything cached for this server (after the server said the cache is wrong).
    pub fn clear(&self) {
        fs::remove_dir_all(&self.dir).ok();
    }

    /// Drops the cached discovery documents (after the server contradicted them).
    pub fn forget_discovery(&self) {
        self.remove(CORE_DISCOVERY);
        self.remove(GROUPS_DISCOVERY);
    }
}

/// The cache entry of the core group's aggregated discovery document (`/api`), as the server sent it.
///
/// The discovery entries are named here, where they are stored, because two layers use them
/// without using each other: discovery reads and writes them, and the connection drops them
/// when the server contradicts them ([`ServerCache::forget_discovery`]).
pub const CORE_DISCOVERY: &str = "discovery/api.json";

/// The cache entry of the named groups' aggregated discovery document (`/apis`), as the server sent it.
pub const GROUPS_DISCOVERY: &str = "discovery/apis.json";

/// `127.0.0.1_6443-1a2b3c4d`: readable, and distinct for distinct URLs.
fn server_dir_name(server: &str) -> String {
    let host = server.split("://").nth(1).unwrap_or(server).trim_end_matches('/');
    let readable: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    format!("{readable}-{:016x}", fnv1a(server.as_bytes()))
}

/// FNV-1a: a stable hash (the standard library's is not stable across releases), for names
/// of directories kept across runs.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_per_server_and_stay_private() {
        let base = std::env::temp_dir().join(format!("fw-cache-test-{}", std::process::id()));
        let a = ServerCache::under(&base, "https://127.0.0.1:6443");
        let b = ServerCache::under(&base, "https://127.0.0.1:6444");
        assert_ne!(a.dir(), b.dir());
        assert!(a.dir().ends_with(format!("127.0.0.1_6443-{:016x}", fnv1a(b"https://127.0.0.1:6443"))));
        assert_eq!(a.read("discovery/apis.json"), None);
        a.write("discovery/apis.json", b"{}").unwrap();
        a.write("discovery/apis.json", b"{\"v\":2}").unwrap();
        assert_eq!(a.read("discovery/apis.json").as_deref(), Some(&b"{\"v\":2}"[..]));
        assert_eq!(b.read("discovery/apis.json"), None);
        assert!(a.age("discovery/apis.json").is_some_and(|age| age < std::time::Duration::from_secs(60)));
        assert_eq!(b.age("discovery/apis.json"), None);
        a.remove("discovery/apis.json");
        assert_eq!(a.read("discovery/apis.json"), None);
        a.write("discovery/apis.json", b"{}").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&a.dir().join("discovery/apis.json")), 0o600);
            assert_eq!(mode(&a.dir().join("discovery")), 0o700);
        }
        a.clear();
        assert_eq!(a.read("discovery/apis.json"), None);
        fs::remove_dir_all(base).ok();
    }
}
