//! What a generated report says about its run: the commit, the time, the Kubernetes
//! version and the machine's load (the reliability suite and the real-world corpus use it).

use std::process::Command;

use crate::{run, text, workspace_root, Cluster};

/// The commit the run built, `` `abc1234` `` (with a note when the tree had uncommitted changes).
pub fn commit() -> String {
    let git = |args: &[&str]| text(&run(Command::new("git").current_dir(workspace_root()).args(args)).stdout);
    let hash = git(&["rev-parse", "--short", "HEAD"]).trim().to_string();
    let dirty = !git(&["status", "--porcelain", "--untracked-files=no"]).trim().is_empty();
    if dirty {
        format!("`{hash}` with uncommitted changes")
    } else {
        format!("`{hash}`")
    }
}

/// The server's and kubectl's versions, from `kubectl version -o json`.
pub fn kubernetes_version(cluster: &Cluster) -> String {
    let out = run(cluster.kubectl().args(["version", "-o", "json"]));
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
        return format!("unknown (`kubectl version -o json` failed: {})", text(&out.stderr).trim());
    };
    let field = |pointer: &str| v.pointer(pointer).and_then(|s| s.as_str()).unwrap_or("unknown").to_string();
    let git_version = field("/serverVersion/gitVersion");
    let server = if git_version.starts_with("v0.0.0") {
        // Built from Go modules, the harness's apiserver carries no stamped gitVersion.
        format!(
            "{}.{} (major.minor; gitVersion unstamped: `{git_version}`)",
            field("/serverVersion/major"),
            field("/serverVersion/minor")
        )
    } else {
        git_version
    };
    format!("server {server}, kubectl {} (`kubectl version -o json`)", field("/clientVersion/gitVersion"))
}

/// The UTC time now, as `2026-11-27T23:19:59Z`.
pub fn utc_now() -> String {
    text(&run(Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])).stdout).trim().to_string()
}
