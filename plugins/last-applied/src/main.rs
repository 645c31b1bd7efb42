//! `kubectl last-applied`: find and repair missing, stale or oversized last-applied annotations.

use std::process::ExitCode;

use clap::Parser;
use fieldwise_kube::{cli, flags::KubeFlags, version};

const EXAMPLES: &str = "Examples:
  # Find objects whose last-applied annotation is missing, stale or oversized
  kubectl last-applied scan -A";

/// Scan, view, diff, repair and migrate the kubectl.kubernetes.io/last-applied-configuration annotation.
#[derive(Debug, Parser)]
#[command(name = "kubectl last-applied", bin_name = "kubectl last-applied", version = version::LONG_VERSION, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    kube: KubeFlags,
}

fn main() -> ExitCode {
    let _cli: Cli = cli::parse();
    cli::fail(&fieldwise_kube::Error::usage("last-applied is not implemented yet; see `kubectl last-applied --help`"))
}
