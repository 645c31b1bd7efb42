//! `kubectl last-applied`: find and repair missing, stale, oversized or leaking
//! `kubectl.kubernetes.io/last-applied-configuration` annotations, and move
//! objects from client-side to server-side apply. Thin: flags here, semantics in
//! `fieldwise_core::last_applied` (and `fieldwise_core::ownership` for which
//! managers are client-side), cluster I/O in `fieldwise-kube`.

mod flagged;
mod from_scan;
mod migrate;
mod repair;
mod report;
mod scan;
mod scan_scope;
mod targets;
mod view;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use fieldwise_kube::cli::{self, completion};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::conn::version;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::write::DryRun;

/// mimalloc rather than the system allocator: the plugins decode whole objects into
/// many small allocations, where it is markedly faster (see docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXAMPLES: &str = "Exit codes: 0 clean (or done), 1 error,
2 refused (repair of a Secret without --store-secret-values, the confirmation declined, or --from-scan and
several objects without a terminal and without --yes), 3 found (scan: problems; view --diff: drift), 130/143
stopped by Ctrl-C or SIGTERM (writes in flight finished, summary printed). With many objects, the worst
object's code.

Examples:
  # Find objects whose annotation is missing, stale, oversized or leaking, everywhere
  kubectl last-applied scan -A

  # Only Deployments and ConfigMaps labelled app=web, as JSON
  kubectl last-applied scan deploy,cm -n prod -l app=web -o json

  # Show an object's annotation, and how the live object drifted from it
  kubectl last-applied view deploy/web
  kubectl last-applied view deploy/web --diff

  # Store exactly what `kubectl apply -f web.yaml` would have stored
  kubectl last-applied repair -f web.yaml

  # Rebuild the annotation from the fields kubectl's managers own
  kubectl last-applied repair deploy/web --dry-run=server

  # Repair every missing or stale annotation the scan finds
  kubectl last-applied repair --from-scan -n prod

  # Move an object to server-side apply and drop its (oversized) annotation
  kubectl last-applied migrate cm/big --drop-annotation

  # Hand it to Argo CD, with what kubectl edit, patch, set and label set (else they stay co-owned)
  kubectl last-applied migrate deploy/web --field-manager argocd --also human";

/// Scan, view, repair and migrate the kubectl.kubernetes.io/last-applied-configuration annotation.
#[derive(Debug, Parser)]
#[command(name = "kubectl last-applied", bin_name = "kubectl last-applied", version = version::LONG_VERSION, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    kube: KubeFlags,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Report objects whose annotation is missing, stale, oversized or leaking (exit 3 when any).
    #[command(after_help = "Exit codes: 0 clean; 3 problems found; 1 an error, or types the account may not list
(named in every format) unless --allow-unreadable.

Examples:
  # Every namespace and every listable type
  kubectl last-applied scan -A

  # As an account that may not read everything: scan what it may, name the rest, exit as if complete
  kubectl last-applied scan -A --allow-unreadable

  # Only Deployments and ConfigMaps labelled app=web, as JSON
  kubectl last-applied scan deploy,cm -n prod -l app=web -o json")]
    Scan(scan::ScanArgs),
    /// Print an object's annotation as YAML, or (--diff) its drift from the live object.
    #[command(after_help = "Examples:
  # The annotation, as YAML
  kubectl last-applied view deploy/web

  # How the live object drifted from it (exit 3 when it did)
  kubectl last-applied view deploy/web --diff")]
    View(view::ViewArgs),
    /// Rewrite the annotation: from a file (as kubectl apply would), or from kubectl's fields on the live object.
    #[command(after_help = "Examples:
  # Store exactly what `kubectl apply -f web.yaml` would have stored
  kubectl last-applied repair -f web.yaml

  # Rebuild it from the fields kubectl's managers own; a server dry run first
  kubectl last-applied repair deploy/web --dry-run=server

  # Repair every missing or stale annotation a scan finds
  kubectl last-applied repair --from-scan -n prod")]
    Repair(repair::RepairArgs),
    /// Move ownership from client-side to server-side apply, as kubectl apply --server-side does.
    #[command(after_help = "Examples:
  # Move an object to server-side apply and drop its (oversized) annotation
  kubectl last-applied migrate cm/big --drop-annotation

  # Everything a scan finds in a namespace, for the manager argocd
  kubectl last-applied migrate --from-scan -n prod --field-manager argocd")]
    Migrate(migrate::MigrateArgs),
    /// Print a completion script (bash, zsh, fish, powershell), or install/uninstall kubectl's completer.
    Completion(completion::CompletionArgs),
}

/// The write flags `repair` and `migrate` share.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// none: write; client: only show; server: also a server-side dry-run, no write.
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRun,

    /// Print the written objects instead of the usual messages: json or yaml (no managedFields, ConfigMap
    /// data in clear, Secret values as *** unless --show-secrets), or name (kind.group/name).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// Show Secret values in diffs, messages and -o json|yaml (hidden as *** by default; ConfigMaps are always shown).
    #[arg(long)]
    pub show_secrets: bool,

    /// Do not ask for confirmation (asked only on a terminal; without one, --from-scan and several objects
    /// are written only with --yes).
    #[arg(short = 'y', long)]
    pub yes: bool,
}

fn main() -> ExitCode {
    use clap::CommandFactory;
    if let Some(code) = completion::serve_if_requested(Cli::command) {
        return code;
    }
    let cli: Cli = cli::parse_with_subcommands();
    fieldwise_kube::output::color::init();
    fieldwise_kube::redact::set_show_secrets(match &cli.command {
        Command::View(args) => args.show_secrets,
        Command::Repair(args) => args.write.show_secrets,
        Command::Migrate(args) => args.write.show_secrets,
        Command::Scan(_) | Command::Completion(_) => false,
    });
    match cli.command {
        Command::Completion(args) => completion::run(Cli::command(), args.action),
        Command::Scan(args) => cli::run(scan::run(cli.kube, args)),
        Command::View(args) => cli::run(view::run(cli.kube, args)),
        Command::Repair(args) => cli::run(repair::run(cli.kube, args)),
        Command::Migrate(args) => cli::run(migrate::run(cli.kube, args)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_subcommand_shows_examples_and_connection_flags_come_last() {
        assert_eq!(cli::help_convention_problems(Cli::command()), Vec::<String>::new());
    }
}
