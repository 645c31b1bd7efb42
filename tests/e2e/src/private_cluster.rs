//! A cluster of one test's own, for faults that must not hit the shared one.
//!
//! Killing or restarting the apiserver would break every other test running
//! against the shared cluster, so a fault test starts its own with
//! `scripts/cluster up` in a private `FIELDWISE_CLUSTER_DIR`, and stops it when
//! the [`PrivateCluster`] is dropped (also when the test panics).

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::{run, text, workspace_root, Cluster};

/// A running cluster in a private state directory, stopped on drop.
#[derive(Debug)]
pub struct PrivateCluster {
    /// The cluster, like the shared one.
    pub cluster: Cluster,
}

impl PrivateCluster {
    /// Starts a cluster in `$TMPDIR/fw-<name>-cluster-<pid>` (about 7 s from the cached harness binary).
    pub fn up(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fw-{name}-cluster-{}", std::process::id()));
        let out = run(Self::script(&dir).arg("up"));
        assert!(out.status.success(), "scripts/cluster up for {}: {}", dir.display(), text(&out.stderr));
        let kubeconfig = dir.join("kubeconfig");
        Self { cluster: Cluster { dir, kubeconfig } }
    }

    /// `scripts/cluster` pointed at the state directory `dir`.
    fn script(dir: &PathBuf) -> Command {
        let mut cmd = Command::new(workspace_root().join("scripts/cluster"));
        cmd.current_dir(workspace_root()).env("FIELDWISE_CLUSTER_DIR", dir);
        cmd
    }

    /// `scripts/cluster apiserver stop|start` for this cluster: kills the
    /// kube-apiserver alone (etcd and the state stay), or starts it again and
    /// waits until it is ready.
    pub fn apiserver(&self, verb: &str) -> Output {
        run(Self::script(&self.cluster.dir).args(["apiserver", verb]))
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let out = run(Self::script(&self.cluster.dir).arg("down"));
        if !out.status.success() {
            eprintln!("scripts/cluster down for {}: {}", self.cluster.dir.display(), text(&out.stderr));
        }
    }
}
