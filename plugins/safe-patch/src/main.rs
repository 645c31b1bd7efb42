//! `kubectl safe-patch`: preview, lint, dry-run and then write a patch under a resourceVersion guard.

use std::process::ExitCode;

use clap::Parser;
use fieldwise_kube::{cli, flags::KubeFlags, version};

const EXAMPLES: &str = "Examples:
  # Preview, lint and apply a strategic merge patch, guarded by resourceVersion
  kubectl safe-patch deploy/busybox-demo -p '{\"spec\":{\"replicas\":2}}'";

/// Patch a Kubernetes object safely: preview, lint, dry-run, guarded write, backup and undo.
#[derive(Debug, Parser)]
#[command(name = "kubectl safe-patch", bin_name = "kubectl safe-patch", version = version::LONG_VERSION, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    kube: KubeFlags,
}

fn main() -> ExitCode {
    let _cli: Cli = cli::parse();
    cli::fail(&fieldwise_kube::Error::usage("safe-patch is not implemented yet; see `kubectl safe-patch --help`"))
}
