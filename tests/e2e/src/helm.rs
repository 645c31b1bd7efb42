//! Real Helm for the end-to-end tests: the helm v3 and v4 binaries `scripts/build-helm`
//! builds from the Go module proxy, and a tiny chart written by the test, installed and
//! upgraded in the test's namespace. `scripts/test` builds them in the background and sets
//! `FIELDWISE_HELM3` and `FIELDWISE_HELM4`; without them the script is run here (a build of
//! minutes the first time), except in CI (`CI=true`), where a missing binary fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::{run, text, workspace_root, Cluster};

/// Helm's two major versions, as the tests run them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Helm {
    /// Helm 3: client-side apply, manager `helm` with `Update` entries.
    V3,
    /// Helm 4: server-side apply as manager `helm`, `--server-side` on upgrades of Helm 3 releases.
    V4,
}

/// The paths of both binaries: from the environment, else built by `scripts/build-helm`.
fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINARIES: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINARIES.get_or_init(|| {
        let from_env = |name: &str| std::env::var_os(name).filter(|p| !p.is_empty()).map(PathBuf::from);
        if let (Some(v3), Some(v4)) = (from_env("FIELDWISE_HELM3"), from_env("FIELDWISE_HELM4")) {
            return (v3, v4);
        }
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "FIELDWISE_HELM3 and FIELDWISE_HELM4 are not set: scripts/test builds helm with scripts/build-helm and sets them"
        );
        let script = workspace_root().join("scripts/build-helm");
        let out = run(Command::new("bash").arg(&script));
        assert!(out.status.success(), "{} failed: {}", script.display(), text(&out.stderr));
        let stdout = text(&out.stdout);
        let path = |name: &str| {
            let prefix = format!("{name}=");
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("{} printed no {name}: {stdout}", script.display()))
        };
        (path("FIELDWISE_HELM3"), path("FIELDWISE_HELM4"))
    })
}

impl Helm {
    /// The binary's path (named `helm`: Helm records its executable's base name as its field manager).
    pub fn path(self) -> &'static Path {
        let (v3, v4) = binaries();
        let path = match self {
            Helm::V3 => v3,
            Helm::V4 => v4,
        };
        assert!(path.is_file(), "helm binary missing: {}", path.display());
        path
    }

    /// `helm ARGS -n NAMESPACE` against `cluster`, with Helm's own directories in `home`.
    pub fn command(self, cluster: &Cluster, home: &Path, namespace: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.path());
        cmd.env("KUBECONFIG", &cluster.kubeconfig)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .env("NO_COLOR", "1")
            .args(args)
            .args(["-n", namespace]);
        cmd
    }

    /// Runs helm and returns what it did.
    pub fn output(self, cluster: &Cluster, home: &Path, namespace: &str, args: &[&str]) -> Output {
        run(&mut self.command(cluster, home, namespace, args))
    }

    /// Runs helm, asserts it succeeded and returns its stdout.
    pub fn ok(self, cluster: &Cluster, home: &Path, namespace: &str, args: &[&str]) -> String {
        let out = self.output(cluster, home, namespace, args);
        assert!(
            out.status.success(),
            "{self:?} helm {args:?} failed ({:?}): {}\n{}",
            out.status.code(),
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }
}

/// Writes a chart named `name` into `dir/name`: `Chart.yaml` and each `(file, text)` under
/// `templates/`; returns its directory.
pub fn write_chart(dir: &Path, name: &str, templates: &[(&str, &str)]) -> String {
    let chart = dir.join(name);
    let _ = std::fs::remove_dir_all(&chart);
    std::fs::create_dir_all(chart.join("templates")).expect("chart directory");
    std::fs::write(chart.join("Chart.yaml"), format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"))
        .expect("Chart.yaml");
    for (file, body) in templates {
        std::fs::write(chart.join("templates").join(file), body).expect("chart template");
    }
    chart.to_str().expect("chart path").to_string()
}
