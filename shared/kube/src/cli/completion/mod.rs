//! Shell completion for the plugins, for both ways a user runs them.
//!
//! **Through kubectl** (`kubectl safe-patch <TAB>`): the shell asks kubectl,
//! not us. kubectl >= 1.26 (its own completion loaded with
//! `source <(kubectl completion bash)`, or zsh/fish) looks on `$PATH` for an
//! executable named `kubectl_complete-<plugin>`, with `_` for each `-` in the
//! plugin name (`kubectl_complete-safe_patch`, `kubectl_complete-owners`,
//! `kubectl_complete-last_applied`). It runs it with the words typed after
//! the plugin name, the word under the cursor last (`""` when it is empty),
//! and reads cobra's `__complete` answer from stdout: one candidate per line
//! (optionally `candidate<TAB>description`), then a last line
//! `:<directive>` (see [`Directive`]). Our completer executable is the plugin
//! binary itself under that name (a symlink:
//! `ln -s kubectl-safe_patch kubectl_complete-safe_patch` in the same
//! directory, e.g. `~/.krew/bin`, which `kubectl safe-patch completion install`
//! makes: see [`install`]); [`serve_if_requested`] notices the name and
//! answers. `kubectl-safe_patch __complete ARGS...` gives the same answer,
//! for scripts and tests.
//!
//! **Directly** (`kubectl-safe_patch <TAB>`): [`write_script`] prints a
//! static clap_complete script for bash, zsh, fish or PowerShell, registered
//! for the executable name `kubectl-safe_patch`.
//!
//! What is completed: flag names from the clap [`Command`] (global kube flags
//! included), the values clap knows (`-o json`, `--dry-run=server`), files for
//! path flags, contexts from kubeconfig (no request), namespaces for `-n`,
//! resource types from discovery and, after `TYPE/` or `TYPE `, the names of
//! that type, using `--kubeconfig`, `--context` and `-n` found on the line.
//! Cluster errors give no candidates and never print to the terminal.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::builder::ValueHint;
use clap::{Arg, Command};

use crate::api::discovery::ResourceCatalog;
use crate::api::discovery::ResourceType;
use crate::api::listing::{self, ListOptions, Lister, Representation, Scope, Selectors};
use crate::conn::client;
use crate::conn::flags::KubeFlags;

/// The word that asks a plugin binary for completions: `kubectl-owners __complete ARGS...`.
pub const COMPLETE_ARG: &str = "__complete";

/// How long one completion may wait for the cluster when `--request-timeout` was not typed.
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(5);

/// A shell we print a completion script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// GNU bash: `source <(kubectl-owners completion bash)`.
    Bash,
    /// zsh: `kubectl-owners completion zsh > "${fpath[1]}/_kubectl-owners"`.
    Zsh,
    /// fish: `kubectl-owners completion fish | source`.
    Fish,
    /// PowerShell: `kubectl-owners completion powershell | Out-String | Invoke-Expression`.
    Powershell,
}

/// What a plugin's `completion` subcommand does: print a script, or manage kubectl's completer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    /// Print the bash script for the plugin's executable.
    Bash,
    /// Print the zsh script for the plugin's executable.
    Zsh,
    /// Print the fish script for the plugin's executable.
    Fish,
    /// Print the PowerShell script for the plugin's executable.
    Powershell,
    /// Create `kubectl_complete-<plugin>` next to this binary, for `kubectl <plugin> <TAB>`.
    Install,
    /// Remove the `kubectl_complete-<plugin>` that `install` made.
    Uninstall,
}

/// The arguments of a plugin's `completion` subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct CompletionArgs {
    /// A shell to print a completion script for, or install/uninstall kubectl's completer link.
    #[arg(value_enum, value_name = "SHELL|install|uninstall")]
    pub action: Action,
}

/// The plugin name a user types after `kubectl`: `safe-patch` for a command named `kubectl safe-patch`.
pub fn plugin_name(cmd: &Command) -> String {
    let name = cmd.get_name();
    name.strip_prefix("kubectl ").unwrap_or(name).trim().to_string()
}

/// The executable kubectl runs for a plugin: `kubectl-safe_patch` for `safe-patch`.
pub fn executable_name(plugin: &str) -> String {
    format!("kubectl-{}", plugin.replace('-', "_"))
}

/// The executable kubectl asks for completions: `kubectl_complete-safe_patch` for `safe-patch`.
pub fn completer_name(plugin: &str) -> String {
    format!("kubectl_complete-{}", plugin.replace('-', "_"))
}

/// Writes a completion script for `shell`, registered for the plugin's executable name.
pub fn write_script(mut cmd: Command, shell: Shell, out: &mut dyn Write) -> io::Result<()> {
    let bin = executable_name(&plugin_name(&cmd));
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
        Shell::Powershell => clap_complete::Shell::PowerShell,
    };
    // clap_complete panics on a broken pipe (`| head`); write to memory first.
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut cmd, bin, &mut script);
    out.write_all(&script)
}

/// Answers a completion request if this process is one: started as
/// `kubectl_complete-<plugin>`, or as `<plugin binary> __complete ARGS...`.
/// Call first thing in `main`; `None` means "run normally".
pub fn serve_if_requested(cmd: impl FnOnce() -> Command) -> Option<ExitCode> {
    let mut args = std::env::args();
    let argv0 = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    let words = if is_completer_name(&argv0) {
        rest
    } else if rest.first().map(String::as_str) == Some(COMPLETE_ARG) {
        rest[1..].to_vec()
    } else {
        return None;
    };
    let completions = complete_blocking(cmd(), &words);
    let mut stdout = io::stdout().lock();
    // A closed stdout means nobody is listening: nothing to report.
    let _ = write!(stdout, "{completions}").and_then(|()| stdout.flush());
    Some(ExitCode::SUCCESS)
}

/// Whether `argv0` names a completer executable (`.../kubectl_complete-owners`).
fn is_completer_name(argv0: &str) -> bool {
    let base = argv0.rsplit(['/', '\\']).next().unwrap_or(argv0);
    base.starts_with("kubectl_complete-")
}

/// A cobra `ShellCompDirective`: bit flags telling the shell what to do with the candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Directive(pub u32);

impl Directive {
    /// Complete files too when there are no candidates; add a space after a single one.
    pub const DEFAULT: Directive = Directive(0);
    /// Something went wrong: show nothing.
    pub const ERROR: Directive = Directive(1);
    /// No space after the completed word (e.g. after `deploy/`).
    pub const NO_SPACE: Directive = Directive(2);
    /// Never fall back to file names.
    pub const NO_FILE_COMP: Directive = Directive(4);
    /// The candidates are file extensions to filter files by.
    pub const FILTER_FILE_EXT: Directive = Directive(8);
    /// Complete directory names only.
    pub const FILTER_DIRS: Directive = Directive(16);
    /// Keep the candidates in the order given.
    pub const KEEP_ORDER: Directive = Directive(32);

    /// Both directives' flags.
    pub fn with(self, other: Directive) -> Directive {
        Directive(self.0 | other.0)
    }
}

/// One completion candidate and what zsh and fish show beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The word that replaces what was typed.
    pub value: String,
    /// One line of help, if any.
    pub description: Option<String>,
}

impl Candidate {
    fn new(value: impl Into<String>, description: Option<String>) -> Self {
        // A newline or tab would break the line-based protocol.
        let description = description
            .map(|d| d.lines().next().unwrap_or_default().replace('\t', " ").trim().to_string())
            .filter(|d| !d.is_empty());
        Candidate { value: value.into(), description }
    }
}

/// An answer to kubectl: candidates, then the directive, printed as cobra's `__complete` does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Completions {
    /// The candidates, already filtered by what was typed.
    pub candidates: Vec<Candidate>,
    /// What the shell should do with them.
    pub directive: Directive,
}

impl Completions {
    /// No candidates and no file names.
    pub fn none() -> Self {
        Completions { candidates: vec![], directive: Directive::NO_FILE_COMP }
    }

    /// The candidates among `all` that start with `typed`, without file names.
    fn matching(typed: &str, all: impl IntoIterator<Item = Candidate>) -> Self {
        let mut candidates: Vec<Candidate> = Vec::new();
        for c in all {
            if c.value.starts_with(typed) && !candidates.iter().any(|seen| seen.value == c.value) {
                candidates.push(c);
            }
        }
        Completions { candidates, directive: Directive::NO_FILE_COMP }
    }
}

impl fmt::Display for Completions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.candidates {
            match &c.description {
                Some(d) => writeln!(f, "{}\t{}", c.value, d)?,
                None => writeln!(f, "{}", c.value)?,
            }
        }
        writeln!(f, ":{}", self.directive.0)
    }
}

/// What the word under the cursor is, decided from the command line alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// A flag name: `--na` becomes `--namespace`.
    FlagName,
    /// The value of the flag (or positional) with this id; `prefix` is `--flag=` when typed in one word.
    Value {
        /// The clap id of the argument, e.g. `namespace`.
        arg: String,
        /// Text before the value in the same word (`--output=`), kept in each candidate.
        prefix: String,
    },
    /// A subcommand of the command reached so far.
    Subcommand,
    /// A resource type, as the first word of `TYPE/NAME` or `TYPE NAME`.
    ResourceType,
    /// A name of the resource type `resource_type`; `prefix` is `TYPE/` in the `TYPE/NAME` form.
    ResourceName {
        /// The type as typed, e.g. `deploy`.
        resource_type: String,
        /// Text before the name in the same word (`deploy/`), kept in each candidate.
        prefix: String,
    },
    /// A value we know nothing about.
    Other,
}

/// A parsed completion request: where the cursor is and the connection flags typed so far.
#[derive(Debug, Clone)]
pub struct Request {
    /// The names of the subcommands typed, from the root down.
    pub subcommands: Vec<String>,
    /// What kind of word is being completed.
    pub slot: Slot,
    /// The word under the cursor, as typed so far (after any `prefix` of the slot).
    pub typed: String,
    /// `--kubeconfig`, `--context`, `-n` and `--request-timeout` as typed.
    pub kube: KubeFlags,
    /// Whether `-A`/`--all-namespaces` was typed.
    pub all_namespaces: bool,
    /// The ids of the flags already given.
    pub given: Vec<String>,
    /// Whether the word is the first positional of its command, where a subcommand may go too.
    pub first_positional: bool,
}

/// Reads the words typed after the plugin name (the last one is the word under the cursor).
pub fn parse_request(root: &Command, words: &[String]) -> Request {
    let (typed, before) = match words.split_last() {
        Some((last, before)) => (last.clone(), before),
        None => (String::new(), &[][..]),
    };
    let mut cmd = root;
    let mut subcommands = Vec::new();
    let mut positionals: Vec<String> = Vec::new();
    let mut values: Vec<(String, String)> = Vec::new();
    let mut given = Vec::new();
    let mut pending: Option<&Arg> = None;
    let mut only_positionals = false;
    for word in before {
        if let Some(arg) = pending.take() {
            values.push((arg.get_id().to_string(), word.clone()));
            continue;
        }
        if !only_positionals && word == "--" {
            only_positionals = true;
        } else if !only_positionals && word.starts_with("--") {
            let (name, value) = match word[2..].split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (&word[2..], None),
            };
            if let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                given.push(arg.get_id().to_string());
                match value {
                    Some(v) => values.push((arg.get_id().to_string(), v.to_string())),
                    None if takes_value(arg) => pending = Some(arg),
                    None => {}
                }
            }
        } else if !only_positionals && word.starts_with('-') && word.len() > 1 {
            for (i, c) in word.char_indices().skip(1) {
                let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(c)) else { break };
                given.push(arg.get_id().to_string());
                if takes_value(arg) {
                    let rest = word[i + c.len_utf8()..].trim_start_matches('=');
                    if rest.is_empty() {
                        pending = Some(arg);
                    } else {
                        values.push((arg.get_id().to_string(), rest.to_string()));
                    }
                    break;
                }
            }
        } else if let Some(sub) = positionals.is_empty().then(|| find_subcommand(cmd, word)).flatten() {
            cmd = sub;
            subcommands.push(sub.get_name().to_string());
        } else {
            positionals.push(word.clone());
        }
    }
    let value = |id: &str| values.iter().rev().find(|(k, _)| k == id).map(|(_, v)| v.clone());
    let kube = KubeFlags {
        kubeconfig: value("kubeconfig").map(Into::into),
        context: value("context"),
        namespace: value("namespace"),
        request_timeout: value("request_timeout").unwrap_or_else(|| format!("{}s", CLUSTER_TIMEOUT.as_secs())),
        // Completing against a cluster connects the way the command would.
        as_user: value("as_user"),
        as_group: values.iter().filter(|(k, _)| k == "as_group").map(|(_, v)| v.clone()).collect(),
        as_uid: value("as_uid"),
        user: value("user"),
        cluster: value("cluster"),
        server: value("server"),
        token: value("token").map(crate::conn::flags::SecretFlag),
        certificate_authority: value("certificate_authority").map(Into::into),
        client_certificate: value("client_certificate").map(Into::into),
        client_key: value("client_key").map(Into::into),
        insecure_skip_tls_verify: given.iter().any(|g| g == "insecure_skip_tls_verify"),
        tls_server_name: value("tls_server_name"),
    };
    let all_namespaces = given.iter().any(|g| g == "all_namespaces");
    let (slot, typed) = match pending {
        Some(arg) => (Slot::Value { arg: arg.get_id().to_string(), prefix: String::new() }, typed),
        None => slot_for(cmd, &positionals, typed, only_positionals),
    };
    let first_positional = positionals.is_empty()
        && pending.is_none()
        && match &slot {
            Slot::ResourceType | Slot::Other => true,
            Slot::Value { prefix, .. } => prefix.is_empty(),
            _ => false,
        };
    Request { subcommands, slot, typed, kube, all_namespaces, given, first_positional }
}

/// Decides the slot of the word under the cursor, when it is not a separate flag value.
fn slot_for(cmd: &Command, positionals: &[String], typed: String, only_positionals: bool) -> (Slot, String) {
    if !only_positionals && typed.starts_with("--") {
        if let Some((name, value)) = typed[2..].split_once('=') {
            return match cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                Some(arg) => {
                    let prefix = format!("--{name}=");
                    (Slot::Value { arg: arg.get_id().to_string(), prefix }, value.to_string())
                }
                None => (Slot::Other, typed),
            };
        }
    }
    if !only_positionals && typed.starts_with('-') {
        return (Slot::FlagName, typed);
    }
    if positionals.is_empty() && cmd.get_positionals().next().is_none() && has_subcommands(cmd) {
        return (Slot::Subcommand, typed);
    }
    let mut args: Vec<&Arg> = cmd.get_positionals().collect();
    args.sort_by_key(|a| a.get_index().unwrap_or(usize::MAX));
    // Each positional takes one word, except a last one that takes many.
    let index = positionals.len().min(args.len().saturating_sub(1));
    let Some(arg) = args.get(index) else { return (Slot::Other, typed) };
    if !is_resource_arg(arg) {
        return (Slot::Value { arg: arg.get_id().to_string(), prefix: String::new() }, typed);
    }
    let own = &positionals[index.min(positionals.len())..];
    if let Some((kind, name)) = typed.split_once('/') {
        let slot = Slot::ResourceName { resource_type: kind.to_string(), prefix: format!("{kind}/") };
        return (slot, name.to_string());
    }
    match own.first() {
        Some(kind) if !kind.contains('/') => {
            (Slot::ResourceName { resource_type: kind.clone(), prefix: String::new() }, typed)
        }
        _ => (Slot::ResourceType, typed),
    }
}

/// Whether a positional takes kubectl's `TYPE/NAME` or `TYPE NAME` words.
fn is_resource_arg(arg: &Arg) -> bool {
    arg.get_value_names().is_some_and(|names| names.iter().any(|n| n.as_str().starts_with("TYPE")))
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

fn find_subcommand<'a>(cmd: &'a Command, word: &str) -> Option<&'a Command> {
    cmd.get_subcommands().find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
}

/// The command reached by `subcommands` from `root`.
fn descend<'a>(root: &'a Command, subcommands: &[String]) -> &'a Command {
    subcommands.iter().fold(root, |cmd, name| find_subcommand(cmd, name).unwrap_or(cmd))
}

/// Completes what needs no cluster: flag names, known values, subcommands, paths and contexts.
/// `None` means the answer needs the cluster (namespaces, resource types and names).
pub fn complete_offline(root: &Command, request: &Request) -> Option<Completions> {
    let cmd = descend(root, &request.subcommands);
    let typed = request.typed.as_str();
    match &request.slot {
        Slot::FlagName => Some(flag_names(cmd, typed, &request.given)),
        Slot::Subcommand => Some(Completions::matching(typed, subcommand_names(cmd))),
        Slot::Value { arg: id, prefix } => {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id.as_str())?;
            let known = arg.get_possible_values();
            if !known.is_empty() {
                let values = known
                    .iter()
                    .filter(|v| !v.is_hide_set())
                    .map(|v| Candidate::new(format!("{prefix}{}", v.get_name()), v.get_help().map(|h| h.to_string())));
                return Some(Completions::matching(&format!("{prefix}{typed}"), values));
            }
            match arg.get_value_hint() {
                ValueHint::DirPath => Some(Completions { candidates: vec![], directive: Directive::FILTER_DIRS }),
                ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => {
                    Some(Completions { candidates: vec![], directive: Directive::DEFAULT })
                }
                _ if id == "context" => Some(contexts(request)),
                _ if id == "namespace" => None,
                _ => Some(Completions::none()),
            }
        }
        Slot::ResourceType | Slot::ResourceName { .. } => None,
        Slot::Other => Some(Completions::none()),
    }
}

fn has_subcommands(cmd: &Command) -> bool {
    !subcommand_names(cmd).is_empty()
}

fn subcommand_names(cmd: &Command) -> Vec<Candidate> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| Candidate::new(s.get_name(), s.get_about().map(|a| a.to_string())))
        .collect()
}

fn flag_names(cmd: &Command, typed: &str, given: &[String]) -> Completions {
    let mut all = Vec::new();
    for arg in cmd.get_arguments().filter(|a| !a.is_positional() && !a.is_hide_set()) {
        let repeatable = matches!(arg.get_action(), clap::ArgAction::Append | clap::ArgAction::Count);
        if !repeatable && given.iter().any(|g| g == arg.get_id().as_str()) {
            continue;
        }
        let help = arg.get_help().map(|h| h.to_string());
        if let Some(long) = arg.get_long() {
            all.push(Candidate::new(format!("--{long}"), help.clone()));
        }
        // Like cobra: short forms only once the user typed a single dash.
        if let (Some(short), false) = (arg.get_short(), typed.starts_with("--")) {
            all.push(Candidate::new(format!("-{short}"), help));
        }
    }
    Completions::matching(typed, all)
}

fn contexts(request: &Request) -> Completions {
    let names = match client::load_kubeconfig(&request.kube) {
        Ok(config) => config.contexts.into_iter().map(|c| Candidate::new(c.name, None)).collect(),
        Err(_) => Vec::new(),
    };
    Completions::matching(&request.typed, names)
}

/// Completes the words typed after the plugin name, asking the cluster when needed.
pub async fn complete(root: &Command, words: &[String]) -> Completions {
    let request = parse_request(root, words);
    let mut answer = match complete_offline(root, &request) {
        Some(answer) => answer,
        None => complete_from_cluster(&request).await.unwrap_or_else(|_| Completions::none()),
    };
    // A command with both positionals and subcommands (`kubectl owners completion`,
    // `kubectl owners deploy/x`) offers its subcommands beside the first positional.
    let cmd = descend(root, &request.subcommands);
    if request.first_positional && !matches!(request.slot, Slot::Subcommand) && has_subcommands(cmd) {
        let subs = Completions::matching(&request.typed, subcommand_names(cmd));
        answer.candidates.splice(0..0, subs.candidates);
    }
    answer
}

/// [`complete`] on a small runtime of its own, for `main`.
pub fn complete_blocking(mut root: Command, words: &[String]) -> Completions {
    // Propagates global flags (`-n`, `--context`) into subcommands.
    root.build();
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(complete(&root, words)),
        Err(_) => Completions::none(),
    }
}

async fn complete_from_cluster(request: &Request) -> crate::Result<Completions> {
    let conn = client::connect(&request.kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let typed = request.typed.as_str();
    match &request.slot {
        Slot::Value { prefix, .. } => {
            let namespaces = catalog.resolve("namespaces")?;
            let names = object_names(&conn, namespaces, Scope::AllNamespaces).await?;
            let all = names.into_iter().map(|n| Candidate::new(format!("{prefix}{n}"), None));
            Ok(Completions::matching(&format!("{prefix}{typed}"), all))
        }
        Slot::ResourceType => Ok(Completions::matching(typed, resource_types(&catalog))),
        Slot::ResourceName { resource_type, prefix } => {
            let resource = catalog.resolve(resource_type)?;
            let names = object_names(&conn, resource, Scope::of(&conn, request.all_namespaces)).await?;
            let all = names.into_iter().map(|n| Candidate::new(format!("{prefix}{n}"), None));
            Ok(Completions::matching(&format!("{prefix}{typed}"), all))
        }
        _ => Ok(Completions::none()),
    }
}

/// Type names a user can type, as `kubectl api-resources -o name` lists them: the plural,
/// qualified with the group when another group already took that plural. Every listable
/// type ([`listing::is_listable`]), aliases of the same objects included.
pub fn resource_types(catalog: &ResourceCatalog) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    for t in catalog.types().iter().filter(|t| listing::is_listable(t)) {
        let name = if taken.contains(&t.plural.as_str()) { t.plural_group() } else { t.plural.clone() };
        taken.push(&t.plural);
        let description = format!("{} ({})", t.kind, t.api_version());
        out.push(Candidate::new(name, Some(description)));
    }
    out
}

/// The names of the objects of `resource` in `scope`, sorted: read as metadata only (names
/// are all a completion needs), page by page.
async fn object_names(conn: &client::Connection, resource: &ResourceType, scope: Scope) -> crate::Result<Vec<String>> {
    let lister = Lister::new(conn, scope, Selectors::default(), ListOptions::default());
    let mut pages = std::pin::pin!(lister.pages(resource, Representation::Metadata));
    let mut names = Vec::new();
    while let Some(page) = futures::StreamExt::next(&mut pages).await {
        names.extend(page?.iter().filter_map(|o| o.pointer("/metadata/name")?.as_str().map(str::to_string)));
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// The `completion` subcommand of every plugin: a script on stdout, or the
/// completer link installed or removed next to the running binary.
pub fn run(cmd: Command, action: Action) -> ExitCode {
    let shell = match action {
        Action::Bash => Shell::Bash,
        Action::Zsh => Shell::Zsh,
        Action::Fish => Shell::Fish,
        Action::Powershell => Shell::Powershell,
        Action::Install | Action::Uninstall => return manage_completer(&plugin_name(&cmd), action),
    };
    print_script(cmd, shell)
}

/// `completion install|uninstall` for the binary this process was started as.
fn manage_completer(plugin: &str, action: Action) -> ExitCode {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    let path_var = std::env::var_os("PATH");
    let result = install::installed_binary(&argv0, path_var.as_deref(), std::env::current_exe()).and_then(|binary| {
        if action == Action::Install {
            install::install(&binary, plugin)
        } else {
            install::uninstall(&binary, plugin)
        }
    });
    match result {
        Ok(outcome) => {
            println!("{outcome}");
            ExitCode::SUCCESS
        }
        Err(e) => crate::cli::entry::fail(&crate::Error::Completion(e)),
    }
}

/// The `completion` subcommand of every plugin: prints the script to stdout and
/// turns a write failure (a closed pipe) into kubectl's one-line error.
pub fn print_script(cmd: Command, shell: Shell) -> ExitCode {
    match write_script(cmd, shell, &mut io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::cli::entry::fail(&crate::LocalError::io_without_path("write the completion script", e).into()),
    }
}

pub mod install;

#[cfg(test)]
mod tests;
