//! Plain JSON reads and patches from inside a test, without a kubectl process.
//!
//! A test that drives hundreds of plugin runs spends most of its time starting
//! kubectl for its own bookkeeping (resetting an object, reading it back).
//! [`RawApi`] does that bookkeeping over one kept connection, so the measured
//! commands, not the harness, take the machine's time. It never stands in for
//! the commands under test.

use serde_json::Value;

use crate::Cluster;

/// One connection to the cluster, with a runtime to drive it from plain threads.
pub struct RawApi {
    runtime: tokio::runtime::Runtime,
    conn: fieldwise_kube::conn::client::Connection,
}

impl RawApi {
    /// Connects to `cluster` as the admin user (namespace `ns` for the flags only).
    pub fn connect(cluster: &Cluster, ns: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
        let conn = runtime
            .block_on(fieldwise_kube::conn::client::connect(&cluster.flags(ns)))
            .expect("connect to the cluster");
        Self { runtime, conn }
    }

    /// `GET path` (e.g. `/api/v1/namespaces/x/configmaps/y`) as JSON.
    pub fn get(&self, path: &str) -> Value {
        let request = http::Request::get(path).body(Vec::new()).expect("GET request");
        self.send(request)
    }

    /// `PATCH path` with `patch` of `content_type` (e.g. `application/merge-patch+json`); the stored result.
    pub fn patch(&self, path: &str, content_type: &str, patch: &Value) -> Value {
        let request = http::Request::patch(path)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(serde_json::to_vec(patch).expect("patch JSON"))
            .expect("PATCH request");
        self.send(request)
    }

    fn send(&self, request: http::Request<Vec<u8>>) -> Value {
        let what = format!("{} {}", request.method(), request.uri());
        self.runtime.block_on(self.conn.client.request::<Value>(request)).unwrap_or_else(|e| panic!("{what}: {e}"))
    }
}
