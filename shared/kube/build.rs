//! Records the git commit the plugins are built from, for `--version`.
use std::process::Command;

fn main() {
    let commit = std::env::var("FIELDWISE_COMMIT").ok().filter(|c| !c.is_empty()).or_else(|| {
        let out = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    });
    println!("cargo:rustc-env=FIELDWISE_COMMIT={}", commit.unwrap_or_else(|| "unknown".into()));
    println!("cargo:rerun-if-env-changed=FIELDWISE_COMMIT");
    // Where git keeps HEAD (in a worktree, `.git` is a file naming another directory):
    // a path that does not exist would make cargo rebuild this crate every time.
    for name in ["HEAD", "refs/heads"] {
        let out = Command::new("git").args(["rev-parse", "--git-path", name]).output();
        if let Some(out) = out.ok().filter(|o| o.status.success()) {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
