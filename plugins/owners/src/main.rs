//! `kubectl owners`: who owns each field of an object, and who owns the object.
//! Thin: flags and rendering here; the ownership questions (who owns a path, and
//! how; what kind of actor a manager is) are answered by `fieldwise_core::ownership`.

mod age;
mod annotate;
mod conflicts;
mod drift;
mod fields;
mod load;
mod manager;
mod plan;
mod report;
mod subject;
mod summary;
mod transfer;
mod tree;
mod tree_view;
mod view;
mod watch;

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use fieldwise_kube::cli;
use fieldwise_kube::cli::selection_flags::SelectionFlags;
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::conn::version;
use fieldwise_kube::output::OutputFormat;

use crate::age::TimeStyle;

/// mimalloc rather than the system allocator: the plugins decode whole objects into
/// many small allocations, where it is markedly faster (see docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXAMPLES: &str = "Exit codes: 0 success; 1 error (bad input, cluster errors, a --verify mismatch);
3 with --conflicts when a conflict is predicted.

Examples:
  # The object as YAML, each line marked with its owners and their age
  kubectl owners deploy/busybox-demo

  # One row per manager: operation, subresource, time, fields owned, kind
  kubectl owners deploy/busybox-demo --summary

  # Who owns one field, and since when (kubectl or JSONPath spellings)
  kubectl owners deploy/busybox-demo --field spec.replicas
  kubectl owners deploy/busybox-demo --field '{.spec.replicas}'
  kubectl owners deploy/x --field 'spec.template.spec.containers[name=app].image'

  # Only what one manager owns, as YAML you could apply
  kubectl owners deploy/busybox-demo --manager kubectl-client-side-apply

  # Would a server-side apply conflict? Exit 3 if so; --verify asks the server
  kubectl owners --conflicts -f deploy.yaml --field-manager ci --verify

  # The whole apply plan of a directory or kustomization, for CI (see kubectl owners plan --help)
  kubectl owners plan -f manifests/ -R --field-manager ci

  # The ownerReferences tree: Deployment -> ReplicaSet -> Pods, with READY, REASON and AGE
  kubectl owners pod/busybox-demo-5d8f9-abcde --tree
  kubectl owners deploy/busybox-demo --tree --kinds pods,replicasets
  kubectl owners deploy/busybox-demo --tree -o yaml

  # Many objects: by label, in every namespace, or from files and directories
  kubectl owners deploy -l app=busybox -A --summary
  kubectl owners -f manifests/

  # Offline: managedFields from a file or stdin (kubectl get --show-managed-fields)
  kubectl owners --local -f deploy.yaml
  kubectl owners --local -f - < deploy.yaml

  # Fields owned against a policy, for CI (see kubectl owners drift --help)
  kubectl owners drift -A --policy policy.yaml
  # Live: who changes which field, and fights between managers (see kubectl owners watch --help)
  kubectl owners watch deploy/busybox-demo --for 10m

  # Machine output (shape: docs/owners-output.md)
  kubectl owners deploy/busybox-demo -o json";

/// Show who owns each field of a Kubernetes object (managedFields), and who owns the object.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl owners",
    bin_name = "kubectl owners",
    version = version::LONG_VERSION,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(flatten)]
    kube: KubeFlags,

    #[command(subcommand)]
    command: Option<OwnersCommand>,

    /// The objects: TYPE/NAME, TYPE (every object of it, or those -l, --field-selector select;
    /// -A in every namespace), -f or -k (the one selection); with --conflicts, -f or -k are the
    /// configurations to apply.
    #[command(flatten)]
    selection: SelectionFlags,

    /// Read objects (with their managedFields) from -f or -k only; never contact a cluster.
    #[arg(long)]
    local: bool,

    /// One row per manager: operation, subresource, apiVersion, last time, fields owned, kind.
    #[arg(long, group = "mode")]
    summary: bool,

    /// Who owns this field and since when, e.g. spec.replicas or
    /// spec.template.spec.containers[name=app].image.
    #[arg(long, value_name = "PATH", group = "mode")]
    field: Option<String>,

    /// Only the fields this manager owns, as YAML you could apply.
    #[arg(long, value_name = "NAME", group = "mode")]
    manager: Option<String>,

    /// Predict what a server-side apply of -f (or -k) would conflict with (exit 3 if anything), under the
    /// type's schema read from the server (built-in types and custom resources alike).
    #[arg(long, group = "mode")]
    conflicts: bool,

    /// With --conflicts: the manager that would apply (as kubectl apply --server-side --field-manager).
    #[arg(long, value_name = "NAME", default_value = "kubectl")]
    field_manager: String,

    /// With --conflicts: also run a server-side dry-run apply and check the prediction (exit 1 if it differs).
    #[arg(long, requires = "conflicts")]
    verify: bool,

    /// The ownerReferences chain up to the root and the objects owned below it, as a table
    /// (NAMESPACE, NAME drawn as a tree, READY, REASON, AGE) or nested with -o json|yaml. An object
    /// with several owners is shown once, under its controller owner (else the owner nearest the
    /// root), the others named beside it.
    #[arg(long, group = "mode")]
    tree: bool,

    /// With --tree: only objects of these types, comma-separated (e.g. pods,rs or
    /// deployments.apps), and the objects on the way to them; the root and the object asked
    /// about are always shown.
    #[arg(long, value_name = "TYPES", value_delimiter = ',', requires = "tree")]
    kinds: Vec<String>,

    /// How to show when managers wrote.
    #[arg(long, value_enum, default_value_t = TimeStyle::Relative)]
    time: TimeStyle,

    /// Show status (hidden by default).
    #[arg(long)]
    show_status: bool,

    /// Show server-set metadata: uid, resourceVersion, creationTimestamp, generation.
    #[arg(long)]
    show_metadata: bool,

    /// Show Secret values, in the view and in -o json|yaml (redacted as *** by default; ConfigMaps are
    /// always shown).
    #[arg(long = "show-secrets", visible_alias = "show-values")]
    show_values: bool,

    /// Machine output: json or yaml (shape: docs/owners-output.md; Secret values as *** unless
    /// --show-secrets), or name (kind.group/name of each object).
    #[arg(short = 'o', long, value_enum)]
    output: Option<OutputFormat>,
}

/// Commands beside the report itself.
#[derive(Debug, clap::Subcommand)]
enum OwnersCommand {
    /// The server-side apply plan of files, a directory, a kustomization (-k) or a Helm render
    /// (-f -): conflicts with their owners and fixes, takeovers, shared and removed fields,
    /// new objects and refusals, each checked against the apiserver's dry run.
    Plan(plan::PlanArgs),
    /// Print a completion script (bash, zsh, fish, powershell), or install/uninstall kubectl's completer.
    Completion(fieldwise_kube::cli::completion::CompletionArgs),
    /// Hand the fields of some managers (by name, or class: human, helm-update) to another.
    Transfer(transfer::TransferArgs),
    /// Fields owned by managers an ownership policy does not expect there (exit 3), or with
    /// --learn, the policy today's owners satisfy.
    Drift(drift::DriftArgs),
    /// Follow objects live: each changed field, before and after, with the manager whose
    /// managedFields entry moved; fights between managers over a field, with the fix.
    Watch(watch::WatchArgs),
}

fn main() -> ExitCode {
    if let Some(code) = fieldwise_kube::cli::completion::serve_if_requested(Cli::command) {
        return code;
    }
    let cli: Cli = cli::parse_with_subcommands();
    match &cli.command {
        Some(OwnersCommand::Completion(args)) => {
            return fieldwise_kube::cli::completion::run(Cli::command(), args.action)
        }
        Some(OwnersCommand::Plan(args)) => return cli::run(plan::run(&cli.kube, args)),
        Some(OwnersCommand::Transfer(args)) => return cli::run(transfer::run(&cli.kube, args)),
        Some(OwnersCommand::Drift(args)) => return cli::run(drift::run(&cli.kube, args)),
        Some(OwnersCommand::Watch(args)) => return cli::run(watch::run(&cli.kube, args)),
        None => {}
    }
    fieldwise_kube::redact::set_show_secrets(cli.show_values);
    cli::run(report::run(cli))
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
