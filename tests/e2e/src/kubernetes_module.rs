//! The Go module of Kubernetes the test harness builds its cluster from, in the Go module
//! cache: its manifests (`cluster/addons`, `test/e2e/testing-manifests`) are a corpus nobody
//! here wrote. Read in place, never copied into the repository.
//!
//! The version is the one `scripts/cluster` builds for `FIELDWISE_KUBE_VERSION` (1.37, the
//! default: `tests/cluster/go.mod`; 1.33: `tests/cluster/go-1.33.mod`), read from the same
//! `require` line.

use std::path::PathBuf;
use std::process::Command;

use crate::{run, text, workspace_root};

/// The harness's module file for `FIELDWISE_KUBE_VERSION`, as `scripts/cluster` picks it.
fn modfile() -> &'static str {
    match std::env::var("FIELDWISE_KUBE_VERSION").as_deref() {
        Ok("1.33") => "go-1.33.mod",
        _ => "go.mod",
    }
}

/// The `k8s.io/kubernetes` version the harness pins (`v1.37.2`).
pub fn kubernetes_module_version() -> String {
    let path = workspace_root().join("tests/cluster").join(modfile());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find_map(|words| match words.as_slice() {
            ["k8s.io/kubernetes", version, ..] if version.starts_with('v') => Some(version.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no k8s.io/kubernetes version in {}", path.display()))
}

/// The module's directory in the Go module cache (`$(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2`);
/// fails the test, naming what to run, when the harness has not downloaded it.
pub fn kubernetes_module_dir() -> PathBuf {
    let version = kubernetes_module_version();
    let out = run(Command::new("go").args(["env", "GOMODCACHE"]));
    assert!(out.status.success(), "`go env GOMODCACHE` failed: {}", text(&out.stderr));
    let dir = PathBuf::from(text(&out.stdout).trim()).join(format!("k8s.io/kubernetes@{version}"));
    assert!(
        dir.join("cluster/addons").is_dir(),
        "{} is missing: the cluster harness downloads it (`scripts/cluster up` with FIELDWISE_KUBE_VERSION={})",
        dir.display(),
        std::env::var("FIELDWISE_KUBE_VERSION").unwrap_or_else(|_| "1.37".into())
    );
    dir
}
