//! Shared helpers for end-to-end tests against the real local cluster
//! started by `scripts/cluster up`.
//!
//! A test that needs the cluster is marked
//! `#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]`,
//! so a plain `cargo test` reports it as ignored, never as passed, and calls
//! [`require_cluster!`] first. Run with `--include-ignored` (as `scripts/test` does), it
//! fails with the way to start a cluster when none is running: a test that was asked
//! to run never passes without having run.

pub mod audit;
pub mod connect_proxy;
pub mod helm;
pub mod keyed_race;
pub mod kubernetes_module;
pub mod plan_check;
pub mod private_cluster;
pub mod raw_api;
pub mod run_info;
pub mod sarif_schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The running local cluster.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Its state directory.
    pub dir: PathBuf,
    /// Admin kubeconfig (contexts `fieldwise` and `fieldwise-restricted`).
    pub kubeconfig: PathBuf,
}

/// The state directory `scripts/cluster` uses: `$FIELDWISE_CLUSTER_DIR`, else
/// one per Kubernetes version (`FIELDWISE_KUBE_VERSION`, default 1.37) so that
/// both versions' clusters can run at once.
pub fn cluster_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FIELDWISE_CLUSTER_DIR") {
        return PathBuf::from(dir);
    }
    let tmp = std::env::var_os("TMPDIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let suffix = match std::env::var("FIELDWISE_KUBE_VERSION").as_deref() {
        Ok("1.33") => "-1.33",
        _ => "",
    };
    tmp.join(format!("fieldwise-cluster-{}{suffix}", uid.unwrap_or_default()))
}

/// The running cluster, or a failure that says how to start one: see the crate docs.
pub fn cluster() -> Cluster {
    let dir = cluster_dir();
    let kubeconfig = dir.join("kubeconfig");
    if dir.join("ready").exists() && kubeconfig.exists() {
        return Cluster { dir, kubeconfig };
    }
    panic!(
        "this end-to-end test needs the local cluster, and none is running at {} \
         (start one with `scripts/cluster up`, or run everything with `scripts/test`)",
        dir.display()
    );
}

/// The running cluster; fails the test when there is none (see the crate docs).
#[macro_export]
macro_rules! require_cluster {
    () => {
        $crate::cluster()
    };
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// Where tests write the reports they generate (`target/reports`, or under
/// `$CARGO_TARGET_DIR`): never the source tree, so a test run cannot slip a report into a
/// commit. `scripts/publish-reports` copies them to `docs/` when a run is worth publishing.
pub fn reports_dir() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    target.join("reports")
}

/// Where cargo put the plugin binaries (built by `cargo build --workspace --bins`).
pub fn bin_dir() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    let dir = target.join("debug");
    assert!(
        dir.join("kubectl-owners").exists(),
        "plugin binaries missing in {}: run `cargo build --workspace --bins` first",
        dir.display()
    );
    dir
}

/// The names of the plugin executables, as kubectl discovers them.
pub const PLUGINS: [&str; 3] = ["kubectl-safe_patch", "kubectl-owners", "kubectl-last_applied"];

/// A directory holding only the plugin executables (symlinks), for PATH:
/// cargo's own target directory also holds files like `kubectl-owners.d`
/// that `kubectl plugin list` would warn about.
pub fn plugin_path_dir() -> PathBuf {
    let dir = workspace_root().join("target").join("e2e-plugin-path");
    std::fs::create_dir_all(&dir).expect("create plugin dir");
    let bins = bin_dir();
    for entry in std::fs::read_dir(&bins).expect("read bin dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let is_plugin = (name.starts_with("kubectl-") || name.starts_with("kubectl_complete-")) && !name.contains('.');
        if is_plugin {
            let link = dir.join(&name);
            let _ = std::fs::remove_file(&link);
            // Tests run in parallel: another one may have made the same link in between.
            if let Err(e) = std::os::unix::fs::symlink(entry.path(), &link) {
                assert!(link.exists(), "symlink plugin {}: {e}", link.display());
            }
        }
    }
    dir
}

/// PATH with the plugin directory first.
pub fn path_with_plugins() -> String {
    let old = std::env::var("PATH").unwrap_or_default();
    format!("{}:{old}", plugin_path_dir().display())
}

/// Runs a command and returns its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// The text of a stream.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The stdout of a command that must have succeeded; its exit code and both streams otherwise.
pub fn ok(out: &Output) -> String {
    assert!(out.status.success(), "failed ({:?}): {}\n{}", out.status.code(), text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// Writes `content` to `dir/name` and returns the file's path, for `-f`.
pub fn write_file(dir: &Path, name: &str, content: &str) -> String {
    let file = dir.join(name);
    std::fs::write(&file, content).unwrap();
    file.to_str().unwrap().to_string()
}

/// Writes a shell script `body` to `dir/name`, executable by its owner only, and returns its
/// path: a fake editor, exec credential plugin or hook.
pub fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(name);
    std::fs::write(&file, body).unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", file.display()));
    file
}

impl Cluster {
    /// The real `kubectl`, pointed at this cluster, with the plugins on PATH.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.env("KUBECONFIG", &self.kubeconfig).env("PATH", path_with_plugins()).env("NO_COLOR", "1");
        cmd
    }

    /// A plugin binary run directly, pointed at this cluster.
    pub fn plugin(&self, exe: &str) -> Command {
        let mut cmd = Command::new(bin_dir().join(exe));
        cmd.env("KUBECONFIG", &self.kubeconfig).env("NO_COLOR", "1");
        cmd
    }

    /// A plugin binary run under another name (`argv[0]`), so its User-Agent
    /// (`NAME/v0.1.0 (linux/amd64) fieldwise/abc1234`) singles out this run's
    /// requests in the audit log ([`Cluster::audited_by`]).
    pub fn plugin_named(&self, exe: &str, name: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let mut cmd = self.plugin(exe);
        cmd.arg0(name);
        cmd
    }

    /// The audit events (stage `ResponseComplete`, one per request) whose
    /// User-Agent starts with `name/`: the requests of a [`Cluster::plugin_named`] run.
    pub fn audited_by(&self, name: &str) -> Vec<serde_json::Value> {
        let log = std::fs::read_to_string(self.dir.join("audit.log")).unwrap_or_default();
        let prefix = format!("{name}/");
        log.lines()
            .filter(|l| l.contains(&prefix))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["stage"] == "ResponseComplete")
            .filter(|e| e["userAgent"].as_str().is_some_and(|ua| ua.starts_with(&prefix)))
            .collect()
    }

    /// Runs kubectl and asserts it succeeded.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = run(self.kubectl().args(args));
        assert!(out.status.success(), "kubectl {args:?} failed: {}", text(&out.stderr));
        text(&out.stdout)
    }

    /// Runs kubectl with `stdin` as input and asserts it succeeded.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_stdin_output(args, stdin);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", text(&out.stderr));
        text(&out.stdout)
    }

    /// Runs kubectl with `stdin` as input and returns what it did, for a caller that judges the
    /// failure itself.
    pub fn kubectl_stdin_output(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .kubectl()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn kubectl");
        child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
        child.wait_with_output().expect("kubectl output")
    }

    /// Creates a fresh namespace for one test and returns its name.
    pub fn namespace(&self, prefix: &str) -> String {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name = format!("{prefix}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        self.kubectl_ok(&["create", "namespace", &name]);
        name
    }

    /// A token of a new ServiceAccount `name` in `namespace` (from `kubectl create token`),
    /// bound to nothing: it may read no object (only discovery, as every authenticated user),
    /// until a test binds it to a role.
    pub fn service_account_token(&self, namespace: &str, name: &str) -> String {
        self.kubectl_ok(&["create", "serviceaccount", name, "-n", namespace]);
        self.kubectl_ok(&["create", "token", name, "-n", namespace, "--duration=30m"]).trim().to_string()
    }

    /// Reads an object as JSON with kubectl.
    pub fn get_json(&self, namespace: &str, what: &str) -> serde_json::Value {
        let out = self.kubectl_ok(&["get", "-n", namespace, what, "-o", "json", "--show-managed-fields"]);
        serde_json::from_str(&out).expect("kubectl JSON")
    }

    /// Global kube flags for the glue crate, pointed at this cluster.
    pub fn flags(&self, namespace: &str) -> fieldwise_kube::conn::flags::KubeFlags {
        fieldwise_kube::conn::flags::KubeFlags {
            kubeconfig: Some(self.kubeconfig.clone()),
            namespace: Some(namespace.to_string()),
            request_timeout: "30s".into(),
            ..Default::default()
        }
    }
}

/// A fixture file's path.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// Polls `check` every 200 ms until it returns `Some`, or panics after `timeout`.
pub fn eventually<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(start.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Installs the Widget custom resource (`fixtures/widget-crd.yaml`: every list and map type
/// server-side apply knows, nested) and waits until it is served and its schema is published
/// at `/openapi/v3`, which the apiserver does a moment after the CRD is Established.
/// Cluster-scoped and shared by every test: it is installed idempotently and never deleted.
pub fn install_widget_crd(cluster: &Cluster) {
    let file = fixture("widget-crd.yaml");
    cluster.kubectl_ok(&["apply", "--server-side", "--force-conflicts", "-f", file.to_str().expect("UTF-8 path")]);
    cluster.kubectl_ok(&["wait", "--for=condition=Established", "crd/widgets.fieldwise.test", "--timeout=60s"]);
    eventually("the Widget schema at /openapi/v3", Duration::from_secs(60), || {
        let out = run(cluster.kubectl().args(["get", "--raw", "/openapi/v3/apis/fieldwise.test/v1"]));
        (out.status.success() && text(&out.stdout).contains("\"workers\"")).then_some(())
    });
}

/// Every regular file below `dir` (recursively), leaving out the subtree `skip`:
/// tests search what a command wrote (backups, caches, temporary files).
pub fn files_below(dir: &Path, skip: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if Some(path.as_path()) == skip {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_below(&path, skip)),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
    out
}

/// The `busybox-demo.yaml` fixture declaring `namespace` in its metadata, for tests of
/// kubectl's namespace rules on `-f` files.
pub fn busybox_in(namespace: &str) -> String {
    let fixture = std::fs::read_to_string(fixture("busybox-demo.yaml")).expect("the busybox fixture");
    fixture.replacen("  name: busybox-demo\n", &format!("  name: busybox-demo\n  namespace: {namespace}\n"), 1)
}

/// kubectl's refusal of a manifest in namespace `object` when `-n` named `flag`, as every
/// plugin prints it after the file's name.
pub fn namespace_mismatch(object: &str, flag: &str) -> String {
    format!(
        "the namespace from the provided object \"{object}\" does not match the namespace \"{flag}\". You must pass '--namespace={object}' to perform this operation."
    )
}
