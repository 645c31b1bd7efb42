//! `kubectl safe-patch`: preview, lint, dry-run and then write a patch under a
//! resourceVersion guard, with backup and undo. Thin: flags here (`--type` maps
//! onto the core's `PatchType`), semantics in `fieldwise-core` (the plan of a
//! patch is `fieldwise_core::plan`, what a restore leaves out is
//! `fieldwise_core::ownership`), cluster I/O in `fieldwise-kube`.

mod edit;
mod flow;
mod history;
mod input;
mod many;
mod plan;
mod prepared;
mod preview;
mod restore;
mod run_preview;
mod steps;
mod undo;
mod undo_args;
mod undo_run;

use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use fieldwise_core::plan::PatchType;
use fieldwise_kube::cli::selection_flags::SelectionFlags;
use fieldwise_kube::cli::{self, completion};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::conn::version;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::write::DryRun;
use fieldwise_kube::write::FieldValidation;

/// mimalloc rather than the system allocator: the plugins decode whole objects into
/// many small allocations, where it is markedly faster (see docs/BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXAMPLES: &str = "Exit codes: 0 written (or no change), 1 error, 2 refused (a lint needs --force, a Secret's
value would be exposed, declined, no terminal and no --yes for many objects, more than --max-objects,
or an undo of a write never confirmed without --force), 3 stopped because the object changed since the
preview (for undo: since the write, or it was created again), 130/143 stopped by Ctrl-C or SIGTERM.
With many objects, the worst object's code.

Examples:
  # Preview, lint, dry-run and write a strategic merge patch, guarded by resourceVersion
  kubectl safe-patch deploy/busybox-demo -p '{\"spec\":{\"replicas\":2}}'

  # The same without the confirmation prompt (for scripts)
  kubectl safe-patch deployment busybox-demo -p '{\"spec\":{\"replicas\":2}}' --yes

  # Every Deployment labelled app=web in every namespace: one preview (objects grouped by
  # identical change), all dry-run on the server, one confirmation, guarded writes as one run
  kubectl safe-patch deploy -l app=web -A -p '{\"spec\":{\"replicas\":3}}'

  # Several types, every object of them in the namespace, more than the default 100 objects
  kubectl safe-patch deploy,sts --all -n shop --max-objects 500 -p '{\"spec\":{\"paused\":true}}'

  # The objects of several files and a directory tree
  kubectl safe-patch -f web.yaml -f manifests/ -R --patch-file owner-label.yaml

  # A JSON Patch from a file: an index into a keyed list gets a test of the entry's key first
  # (errors number your operations from 0, as you wrote them; the added tests are not counted)
  kubectl safe-patch deploy/busybox-demo --type json --patch-file image.json

  # Only show what would happen: local preview and lints, then a server-side dry-run
  kubectl safe-patch deploy/busybox-demo -p '{\"spec\":{\"replicas\":null}}' --dry-run=server

  # Patch a file offline and print the result, like kubectl patch --local
  kubectl safe-patch -f deploy.yaml --local -p '{\"spec\":{\"replicas\":3}}' -o yaml

  # Apply the proposed fix for a one-of switch (a probe from tcpSocket to httpGet)
  kubectl safe-patch deploy/web --fix --patch-file probe-http.yaml

  # A safe kubectl edit: edit the live object, send only the two-way patch, guarded
  kubectl safe-patch deploy/busybox-demo --edit

  # The backups of an object; preview an undo, then undo (a second undo steps further back)
  kubectl safe-patch history deploy/busybox-demo
  kubectl safe-patch undo deploy/busybox-demo --dry-run
  kubectl safe-patch undo deploy/busybox-demo

  # List the bulk runs, and undo one run, or the last one still in effect
  kubectl safe-patch history --runs
  kubectl safe-patch undo --run 20260503-204512-7f3a
  kubectl safe-patch undo --last-run

  # Remove old backups (default policy: 20 per object, 30 days; see README)
  kubectl safe-patch history --prune --keep 5 --max-age 7d";

const UNDO_EXAMPLES: &str = "Exit codes: 0 restored (or no change), 1 error, 2 declined (or, for a run, no terminal
and no --yes), 3 the object changed since the write being undone (nothing written; --force
restores anyway). With a run, the worst object's code.

Examples:
  # Preview the restore of the last write of an object, then restore it
  kubectl safe-patch undo deploy/web --dry-run
  kubectl safe-patch undo deploy/web

  # Undo again: steps back to the write before (it does not re-do the first undo)
  kubectl safe-patch undo deploy/web

  # Restore the backup taken at a time history shows
  kubectl safe-patch undo deploy/web --to 2026-05-03T20:45

  # Undo every object of a bulk run, previewing first; or the last run still in effect
  kubectl safe-patch undo --run 20260503-204512-7f3a --dry-run
  kubectl safe-patch undo --run 20260503-204512-7f3a --yes
  kubectl safe-patch undo --last-run";

const HISTORY_EXAMPLES: &str = "Examples:
  # The backups of one object, oldest first
  kubectl safe-patch history deploy/web

  # The bulk runs of the current context, with the ids undo --run takes
  kubectl safe-patch history --runs

  # Remove old backups
  kubectl safe-patch history --prune --keep 5 --max-age 7d";

/// The field manager safe-patch writes as unless `--field-manager` says otherwise (patch and undo).
pub const FIELD_MANAGER: &str = "kubectl-safe-patch";

/// Patch a Kubernetes object safely: preview, lint, dry-run, guarded write, backup and undo.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl safe-patch",
    bin_name = "kubectl safe-patch",
    version = version::LONG_VERSION,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(flatten)]
    kube: KubeFlags,

    #[command(subcommand)]
    command: Option<Command>,

    #[command(flatten)]
    patch: PatchArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Take back the last safe-patch write of an object (or restore a chosen backup), or every write of a bulk run.
    #[command(after_help = UNDO_EXAMPLES)]
    Undo(undo_args::UndoArgs),
    /// List the backups saved for an object, the bulk runs (--runs), or prune old backups (--prune).
    #[command(after_help = HISTORY_EXAMPLES)]
    History(history::HistoryArgs),
    /// Print a completion script (bash, zsh, fish, powershell), or install/uninstall kubectl's completer.
    Completion(completion::CompletionArgs),
}

/// The patch command's own flags (kubectl patch's, plus the safety ones).
#[derive(Debug, Args)]
pub struct PatchArgs {
    /// The objects: TYPE/NAME, TYPE[,TYPE...] with -l, --field-selector or --all, -f, -k (the
    /// one selection); with --local, the objects of -f or -k themselves.
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// Refuse a selection of more objects than this (nothing is written); raise it to go ahead.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_objects: usize,

    /// With many objects: how many are read, dry-run and written at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,

    /// The patch, as JSON or YAML.
    #[arg(short = 'p', long, value_name = "PATCH", conflicts_with = "patch_file")]
    pub patch: Option<String>,

    /// A file holding the patch (JSON or YAML; - for stdin).
    #[arg(long, value_name = "FILE")]
    pub patch_file: Option<String>,

    /// The kind of patch: strategic (default for built-in types), merge (default for custom resources), json, apply.
    #[arg(long = "type", value_parser = patch_type_parser())]
    pub patch_type: Option<PatchType>,

    /// Patch this subresource (status, scale, ...).
    #[arg(long, value_name = "NAME")]
    pub subresource: Option<String>,

    /// The field manager recorded in managedFields.
    #[arg(long, default_value = FIELD_MANAGER)]
    pub field_manager: String,

    /// What the server does with fields the type does not have: strict refuses the patch (the
    /// default here, unlike kubectl patch, which lets the server drop them), warn drops them
    /// with a warning, ignore drops them silently.
    #[arg(long, value_enum, default_value = "strict", num_args = 0..=1, default_missing_value = "strict", require_equals = true)]
    pub validate: FieldValidation,

    /// none: write; client: preview and lint only; server: also a server-side dry-run, no write.
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRun,

    /// Print the result instead of the usual message: json or yaml (as kubectl patch -o: no managedFields,
    /// ConfigMap data in clear, Secret values as *** unless --show-secrets), or name (kind.group/name).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// Patch the objects of the files given with -f offline and print the results; no cluster needed.
    #[arg(long, conflicts_with_all = ["targets", "selector", "field_selector", "all", "all_namespaces"])]
    pub local: bool,

    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// Write even when a lint says another owner (a controller, a server-side applier) owns the fields.
    #[arg(long)]
    pub force: bool,

    /// Write even when the patch copies, moves or pastes a Secret's value out of data or stringData
    /// (into a label, an annotation or any other field, whole or inside a longer value, where anyone
    /// who can read the Secret's metadata sees it). Without it such a patch is refused (exit 2)
    /// before anything is sent, dry runs included.
    #[arg(long)]
    pub allow_secret_exposure: bool,

    /// Use the fixed patch the lints propose (e.g. null the old member of a one-of).
    #[arg(long)]
    pub fix: bool,

    /// Open $EDITOR on the live object and turn the edit into a two-way patch (a safe kubectl edit).
    #[arg(long, conflicts_with_all = ["patch", "patch_file", "local", "selector", "field_selector", "all", "all_namespaces"])]
    pub edit: bool,

    /// Show Secret values in diffs, messages and -o json|yaml (hidden as *** by default; ConfigMaps are always shown),
    /// and put them in clear in the --edit file (by default it holds placeholders, merged back after the edit).
    #[arg(long)]
    pub show_secrets: bool,
}

/// `--type`'s values: the core's patch types, as kubectl names them, each with its summary
/// (the core's [`PatchType`] knows nothing of clap).
fn patch_type_parser() -> impl TypedValueParser<Value = PatchType> {
    PossibleValuesParser::new(PatchType::ALL.map(|t| PossibleValue::new(t.name()).help(t.summary())))
        .try_map(|name| name.parse::<PatchType>())
}

fn main() -> ExitCode {
    use clap::CommandFactory;
    if let Some(code) = completion::serve_if_requested(Cli::command) {
        return code;
    }
    let cli: Cli = cli::parse_with_subcommands();
    fieldwise_kube::output::color::init();
    let show_secrets = match &cli.command {
        Some(Command::Undo(args)) => args.show_secrets,
        _ => cli.patch.show_secrets,
    };
    fieldwise_kube::redact::set_show_secrets(show_secrets);
    match cli.command {
        Some(Command::Completion(args)) => completion::run(Cli::command(), args.action),
        Some(Command::Undo(args)) => cli::run(undo::undo(cli.kube, args)),
        Some(Command::History(args)) => cli::run(history::history(cli.kube, args)),
        None => cli::run(flow::run(cli.kube, cli.patch)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn type_takes_the_core_patch_types_by_kubectl_name_with_their_summaries() {
        for t in PatchType::ALL {
            let cli = Cli::try_parse_from(["kubectl-safe_patch", "deploy/x", "--type", t.name()]).unwrap();
            assert_eq!(cli.patch.patch_type, Some(t));
        }
        let err = Cli::try_parse_from(["kubectl-safe_patch", "deploy/x", "--type", "Merge"]).unwrap_err().to_string();
        assert!(err.contains("invalid value 'Merge' for '--type <PATCH_TYPE>'"), "{err}");
        assert!(err.contains("[possible values: strategic, merge, json, apply]"), "{err}");
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("- strategic: Strategic Merge Patch (built-in types only)"), "{help}");
        assert!(help.contains("- apply:     Server-Side Apply"), "{help}");
    }

    #[test]
    fn selection_flags_parse_like_kubectls() {
        let cli = Cli::try_parse_from([
            "kubectl-safe_patch",
            "deploy,sts",
            "-l",
            "app=web",
            "-A",
            "--field-selector",
            "metadata.name!=x",
            "-p",
            "{}",
        ])
        .unwrap();
        assert_eq!(cli.patch.selection.targets, ["deploy,sts"]);
        assert_eq!(
            (cli.patch.selection.query.selector.as_deref(), cli.patch.selection.query.all_namespaces),
            (Some("app=web"), true)
        );
        assert_eq!(cli.patch.selection.query.field_selector.as_deref(), Some("metadata.name!=x"));
        assert_eq!((cli.patch.max_objects, cli.patch.concurrency), (100, 8));
        let cli = Cli::try_parse_from(["kubectl-safe_patch", "-f", "a.yaml", "-f", "dir", "-R", "-p", "{}"]).unwrap();
        assert_eq!(
            (cli.patch.selection.filenames.as_slice(), cli.patch.selection.recursive),
            (&["a.yaml".to_string(), "dir".into()][..], true)
        );
        let err = Cli::try_parse_from(["kubectl-safe_patch", "deploy", "-l", "a=b", "--edit"]).unwrap_err();
        assert!(err.to_string().contains("cannot be used with"), "{err}");
        let undo = Cli::try_parse_from(["kubectl-safe_patch", "undo", "--last-run", "--dry-run"]).unwrap();
        let Some(Command::Undo(args)) = undo.command else { panic!("undo") };
        assert!(args.last_run && args.dry_run == DryRun::Client);
        assert!(Cli::try_parse_from(["kubectl-safe_patch", "undo", "deploy/x", "--run", "r"]).is_err());
        assert!(Cli::try_parse_from(["kubectl-safe_patch", "undo"]).is_err(), "undo needs an object or a run");
        assert!(Cli::try_parse_from(["kubectl-safe_patch", "history", "--runs"]).is_ok());
    }

    #[test]
    fn every_example_is_a_kubectl_command_and_every_flag_is_documented() {
        let mut command = Cli::command();
        command.build();
        let mut helps = vec![command.render_long_help().to_string()];
        for sub in ["undo", "history"] {
            helps.push(command.find_subcommand_mut(sub).unwrap().render_long_help().to_string());
        }
        for help in &helps {
            let examples = help.split("Examples:").nth(1).expect("examples");
            let commands: Vec<&str> =
                examples.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
            assert!(!commands.is_empty());
            for line in commands {
                assert!(line.starts_with("kubectl safe-patch "), "{line}");
            }
        }
        let all = helps.join("\n");
        for flag in [
            "--selector",
            "--field-selector",
            "--all ",
            "--all-namespaces",
            "--recursive",
            "--max-objects",
            "--concurrency",
            "--run ",
            "--last-run",
            "--dry-run",
            "--runs",
        ] {
            assert!(all.contains(flag), "{flag} is not in --help");
        }
        for command in [Cli::command()] {
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(arg.get_help().is_some() || arg.is_positional(), "{:?} has no help", arg.get_id());
            }
        }
    }

    #[test]
    fn every_subcommand_shows_examples_and_connection_flags_come_last() {
        assert_eq!(cli::help_convention_problems(Cli::command()), Vec::<String>::new());
    }
}
