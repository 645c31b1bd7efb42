//! Tests of shell completion that need no cluster.

use clap::{Args, CommandFactory, Parser, Subcommand};

use super::*;
use crate::api::discovery::ResourceType;
use crate::output::OutputFormat;
use crate::write::DryRun;

/// Shaped like `kubectl owners`: kube flags, TYPE/NAME targets, a value enum, `completion`.
#[derive(Debug, Parser)]
#[command(name = "kubectl owners", bin_name = "kubectl owners", version = "0.1.0 (commit abc)")]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct Owners {
    #[command(subcommand)]
    command: Option<OwnersCommand>,
    #[command(flatten)]
    kube: KubeFlags,
    /// The object.
    #[arg(value_name = "TYPE/NAME")]
    targets: Vec<String>,
    /// One row per manager.
    #[arg(long)]
    summary: bool,
    /// Output format.
    #[arg(short, long, value_enum)]
    output: Option<OutputFormat>,
    /// Every namespace.
    #[arg(short = 'A', long)]
    all_namespaces: bool,
}

#[derive(Debug, Subcommand)]
enum OwnersCommand {
    /// Print a shell completion script.
    Completion(CompletionArgs),
}

/// Shaped like `kubectl last-applied`: subcommands under global kube flags.
#[derive(Debug, Parser)]
#[command(name = "kubectl last-applied", bin_name = "kubectl last-applied")]
struct LastApplied {
    #[command(flatten)]
    kube: KubeFlags,
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Find missing, stale or oversized annotations.
    Scan {
        /// Write for real or not.
        #[arg(long, value_enum, default_value = "none")]
        dry_run: DryRun,
    },
    /// Show the annotation of one object.
    View(ViewArgs),
    /// Print a shell completion script.
    Completion(CompletionArgs),
}

#[derive(Debug, Args)]
struct ViewArgs {
    #[arg(value_name = "TYPE/NAME")]
    target: String,
}

fn built<T: CommandFactory>() -> Command {
    let mut cmd = T::command();
    cmd.build();
    cmd
}

fn words(text: &str) -> Vec<String> {
    // The last word may be empty: "a b " means "complete a new word after b".
    text.split(' ').map(str::to_string).collect()
}

fn offline<T: CommandFactory>(text: &str) -> Completions {
    let cmd = built::<T>();
    let request = parse_request(&cmd, &words(text));
    complete_offline(&cmd, &request).unwrap_or_else(|| panic!("{text:?} needs the cluster: {request:?}"))
}

fn values(c: &Completions) -> Vec<String> {
    c.candidates.iter().map(|c| c.value.clone()).collect()
}

fn has(values: &[String], wanted: &str) -> bool {
    values.iter().any(|v| v == wanted)
}

#[test]
fn names_follow_kubectl_plugin_naming() {
    let cmd = Owners::command();
    assert_eq!(plugin_name(&cmd), "owners");
    assert_eq!(executable_name("safe-patch"), "kubectl-safe_patch");
    assert_eq!(completer_name("safe-patch"), "kubectl_complete-safe_patch");
    assert_eq!(completer_name("last-applied"), "kubectl_complete-last_applied");
    assert!(is_completer_name("/home/u/.krew/bin/kubectl_complete-owners"));
    assert!(!is_completer_name("/home/u/.krew/bin/kubectl-owners"));
}

#[test]
fn output_is_cobra_complete_format() {
    let c = Completions {
        candidates: vec![
            Candidate::new("--namespace", Some("The namespace\nsecond line".into())),
            Candidate::new("deploy/", None),
        ],
        directive: Directive::NO_SPACE.with(Directive::NO_FILE_COMP),
    };
    assert_eq!(c.to_string(), "--namespace\tThe namespace\ndeploy/\n:6\n");
    assert_eq!(Completions::none().to_string(), ":4\n");
}

#[test]
fn flag_names_come_from_the_command() {
    let c = offline::<Owners>("--");
    let v = values(&c);
    for flag in ["--kubeconfig", "--context", "--namespace", "--request-timeout", "--summary", "--output", "--help"] {
        assert!(has(&v, flag), "{flag} missing from {v:?}");
    }
    assert!(!v.iter().any(|f| !f.starts_with("--")), "{v:?}");
    assert_eq!(c.directive, Directive::NO_FILE_COMP);
    assert_eq!(values(&offline::<Owners>("--na")), ["--namespace"]);
    let shorts = values(&offline::<Owners>("-"));
    assert!(has(&shorts, "-n") && has(&shorts, "-o") && has(&shorts, "--summary"), "{shorts:?}");
    let described = offline::<Owners>("--summ");
    assert_eq!(described.to_string(), "--summary\tOne row per manager\n:4\n");
}

#[test]
fn flags_already_given_are_not_offered_again() {
    let v = values(&offline::<Owners>("--summary deploy/x --s"));
    assert!(!has(&v, "--summary"), "{v:?}");
}

#[test]
fn known_values_of_flags() {
    assert_eq!(values(&offline::<Owners>("-o ")), ["json", "yaml", "name"]);
    assert_eq!(values(&offline::<Owners>("-o y")), ["yaml"]);
    assert_eq!(values(&offline::<Owners>("--output=j")), ["--output=json"]);
    assert_eq!(values(&offline::<LastApplied>("scan --dry-run=s")), ["--dry-run=server"]);
    // Paths complete as files; a free-form value completes nothing.
    assert_eq!(offline::<Owners>("--kubeconfig ").directive, Directive::DEFAULT);
    assert_eq!(offline::<Owners>("--request-timeout ").to_string(), ":4\n");
}

#[test]
fn subcommands_and_global_flags_below_them() {
    let c = offline::<LastApplied>("");
    assert_eq!(values(&c), ["scan", "view", "completion"]);
    assert!(c.to_string().starts_with("scan\tFind missing"), "{c}");
    assert_eq!(values(&offline::<LastApplied>("-n prod v")), ["view"]);
    assert_eq!(
        values(&offline::<LastApplied>("completion ")),
        ["bash", "zsh", "fish", "powershell", "install", "uninstall"]
    );
    assert_eq!(values(&offline::<LastApplied>("scan --con")), ["--context"]);
}

#[test]
fn resource_words_and_connection_flags_are_found() {
    let cmd = built::<Owners>();
    let r = parse_request(&cmd, &words("--context kind -n=prod --kubeconfig /tmp/kc deploy/bu"));
    assert_eq!(r.slot, Slot::ResourceName { resource_type: "deploy".into(), prefix: "deploy/".into() });
    assert_eq!(r.typed, "bu");
    assert_eq!(r.kube.context.as_deref(), Some("kind"));
    assert_eq!(r.kube.namespace.as_deref(), Some("prod"));
    assert_eq!(r.kube.kubeconfig.as_deref(), Some(std::path::Path::new("/tmp/kc")));
    assert_eq!(r.kube.request_timeout, "5s");
    assert!(complete_offline(&cmd, &r).is_none());

    let r = parse_request(&cmd, &words("-nprod deploy "));
    assert_eq!(r.kube.namespace.as_deref(), Some("prod"));
    assert_eq!(r.slot, Slot::ResourceName { resource_type: "deploy".into(), prefix: String::new() });
    assert_eq!(parse_request(&cmd, &words("-A de")).slot, Slot::ResourceType);
    assert!(parse_request(&cmd, &words("-A de")).all_namespaces);
    assert_eq!(parse_request(&cmd, &words("deploy/a ")).slot, Slot::ResourceType);
    let r = parse_request(&cmd, &words("-n "));
    assert_eq!(r.slot, Slot::Value { arg: "namespace".into(), prefix: String::new() });
    let r = parse_request(&built::<LastApplied>(), &words("-n x view po/"));
    assert_eq!(r.subcommands, ["view"]);
    assert_eq!(r.slot, Slot::ResourceName { resource_type: "po".into(), prefix: "po/".into() });
}

#[test]
fn subcommands_beside_a_resource_positional() {
    let cmd = built::<Owners>();
    let r = parse_request(&cmd, &words(""));
    assert_eq!((r.slot, r.first_positional), (Slot::ResourceType, true));
    assert!(!parse_request(&cmd, &words("deploy ")).first_positional);
    assert!(!parse_request(&cmd, &words("-n ")).first_positional);
    // No cluster to ask (the kubeconfig does not exist): the subcommand is still offered.
    let answer = complete_blocking(Owners::command(), &words("--kubeconfig /nonexistent/config co"));
    assert_eq!(answer.to_string(), "completion\tPrint a shell completion script\n:4\n");
    let answer = complete_blocking(Owners::command(), &words("--kubeconfig /nonexistent/config deploy/"));
    assert_eq!(answer, Completions::none());
    assert_eq!(values(&offline::<Owners>("completion z")), ["zsh"]);
}

#[test]
fn contexts_come_from_kubeconfig_without_a_cluster() {
    let dir = std::env::temp_dir().join(format!("fieldwise-completion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config");
    let config = "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncurrent-context: dev\ncontexts:\n\
        - name: dev\n  context: {cluster: c, user: u}\n- name: prod\n  context: {cluster: c, user: u}\n";
    std::fs::write(&path, config).unwrap();
    let text = format!("--kubeconfig {} --context p", path.display());
    assert_eq!(values(&offline::<Owners>(&text)), ["prod"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resource_types_read_like_api_resources() {
    let rt = |group: &str, plural: &str, kind: &str| ResourceType {
        group: group.into(),
        version: "v1".into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        kind: kind.into(),
        short_names: vec![],
        namespaced: true,
        verbs: vec!["get".into(), "list".into()],
        subresources: vec![],
        preferred: true,
    };
    let catalog = ResourceCatalog::from_types(vec![
        rt("", "events", "Event"),
        rt("apps", "deployments", "Deployment"),
        rt("events.k8s.io", "events", "Event"),
    ]);
    let types = resource_types(&catalog);
    let names: Vec<_> = types.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(names, ["events", "deployments", "events.events.k8s.io"]);
    assert_eq!(types[1].description.as_deref(), Some("Deployment (apps/v1)"));
}

#[test]
fn scripts_name_the_executable() {
    for (shell, needle) in [
        (Shell::Bash, "-o default kubectl-owners"),
        (Shell::Zsh, "#compdef kubectl-owners"),
        (Shell::Fish, "complete -c kubectl-owners"),
        (Shell::Powershell, "Register-ArgumentCompleter -Native -CommandName 'kubectl-owners'"),
    ] {
        let mut out = Vec::new();
        write_script(Owners::command(), shell, &mut out).unwrap();
        let script = String::from_utf8(out).unwrap();
        assert!(script.contains(needle), "{shell:?}: {needle:?} not in\n{script}");
        assert!(script.contains("summary"), "{shell:?}");
    }
}

#[test]
fn the_completion_subcommand_takes_a_shell_or_install_or_uninstall() {
    for (word, action) in [
        ("bash", Action::Bash),
        ("powershell", Action::Powershell),
        ("install", Action::Install),
        ("uninstall", Action::Uninstall),
    ] {
        let parsed = Owners::try_parse_from(["kubectl-owners", "completion", word]).unwrap();
        assert!(
            matches!(parsed.command, Some(OwnersCommand::Completion(CompletionArgs { action: a })) if a == action),
            "{word}"
        );
    }
    assert!(Owners::try_parse_from(["kubectl-owners", "completion", "tcsh"]).is_err());
    assert_eq!(values(&offline::<Owners>("completion in")), ["install"]);
}
