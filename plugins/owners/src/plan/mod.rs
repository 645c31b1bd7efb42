//! `kubectl owners plan`: the server-side apply plan of files, directories, a
//! kustomization, a Helm render (stdin) or a Helm release read from the cluster, object by
//! object, checked against the apiserver's own dry run, and the objects a Helm upgrade
//! prunes. Thin: the predictions and their checks are
//! `fieldwise_core::ownership`'s; the requests, the bounded concurrency and the
//! progress bar are the glue's; this module parses, calls and prints.

mod machine;
pub mod object;
pub mod report;
mod text;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::process::ExitCode;

use fieldwise_core::ownership::ManagerKind;
use fieldwise_core::release::applyset::with_member_label;
use fieldwise_core::release::helm::{with_release_metadata, Release};
use fieldwise_kube::api::applyset::ApplySet;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::helm_release;
use fieldwise_kube::api::manifests::{self, Manifest};
use fieldwise_kube::api::object_prune::{self, Prune};
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::NamespaceScope;
use fieldwise_kube::api::unread::Unreadable;
use fieldwise_kube::cli::gate_flags::GateFlags;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::exit_code;
use fieldwise_kube::output::progress::Progress;
use fieldwise_kube::output::{color, printer};
use fieldwise_kube::write::bulk::{self, BulkOptions};
use fieldwise_kube::write::DryRuns;
use fieldwise_kube::{Error, Result};

use self::machine::RunInfo;
use self::object::Planner;
use self::report::{FailOn, ObjectReport, Summary};

const EXAMPLES: &str = "Exit codes: 0 nothing fails --fail-on; 3 an object fails it (by default: a conflict or a
server refusal; with --fail-on prunes, an object the Helm upgrade or the ApplySet's prune
deletes); 1 an error (a file that cannot be read, an object that cannot be planned, a
prediction the apiserver's dry run disagrees with, the server unreachable, or a live object the
account may not read, unless --allow-unreadable: every format names it either way).

Examples:
  # The plan of a directory, as kubectl apply --server-side would apply it
  kubectl owners plan -f manifests/ -R

  # A kustomization (built by kubectl kustomize) or a Helm render
  kubectl owners plan -k overlays/prod --field-manager ci
  helm template web ./chart | kubectl owners plan -f - --field-manager helm

  # A Helm release as deployed (its last deployed revision, read from the cluster), as manager helm
  kubectl owners plan --helm-release web -n shop

  # Its upgrade to a new render: the plan, and the objects the upgrade deletes (prune)
  helm template web ./chart -n shop | kubectl owners plan --helm-release web -n shop -f - --fail-on conflicts,prunes

  # An ApplySet's apply: the plan, and the members kubectl apply --prune --applyset deletes
  kubectl owners plan -f manifests/ -R --prune --applyset web-set -n shop --fail-on conflicts,prunes

  # What --force-conflicts would take, and fail on takeovers and removals too
  kubectl owners plan -f app.yaml --force-conflicts --fail-on takeovers,removals

  # List the fields the apply drops that the server sets again to the same value (no change)
  kubectl owners plan -f app.yaml --show-defaulted

  # For CI: JSON (shape: docs/owners-output.md), JUnit, or the objects with findings
  kubectl owners plan -f manifests/ -o json
  kubectl owners plan -f manifests/ -o junit > plan.xml
  kubectl owners plan -f manifests/ -o name";

/// Output formats of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanOutput {
    /// The OwnersPlan document as JSON.
    Json,
    /// The OwnersPlan document as YAML.
    Yaml,
    /// `kind.group/name` of each object with a finding.
    Name,
    /// A JUnit report: one test case per object.
    Junit,
}

/// The server-side apply plan of files, a directory, a kustomization or a Helm render:
/// conflicts (classified, with the fix), takeovers, shared fields, fields the manager stops
/// owning (removed, or surviving because another manager co-owns them), new objects and
/// server refusals, each object checked against the apiserver's dry run.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct PlanArgs {
    /// Files or directories of YAML/JSON objects to apply ("-" for stdin, e.g. a Helm render); repeatable.
    #[arg(short = 'f', long = "filename", value_name = "FILE", required_unless_present_any = ["kustomize", "helm_release"])]
    filenames: Vec<String>,

    /// Read directories given with -f recursively.
    #[arg(short = 'R', long)]
    recursive: bool,

    /// A kustomization directory, built with `kubectl kustomize DIR` by the kubectl that runs the plugin.
    #[arg(short = 'k', long = "kustomize", value_name = "DIR", conflicts_with = "filenames")]
    kustomize: Option<String>,

    /// The manager that would apply (as kubectl apply --server-side --field-manager) [default: kubectl; helm with --helm-release].
    #[arg(long, value_name = "NAME")]
    field_manager: Option<String>,

    /// Plan the Helm release NAME of the namespace (-n) as stored in the cluster, no helm binary needed (a release
    /// Helm 3 wrote: as Helm 4's first upgrade --server-side=true, its conversion first); with -f or -k, plan its
    /// upgrade to that render and list the objects the upgrade deletes.
    #[arg(long, value_name = "NAME")]
    helm_release: Option<String>,

    /// The release revision --helm-release reads [default: the last deployed one].
    #[arg(long, value_name = "N", requires = "helm_release")]
    revision: Option<u64>,

    /// With --applyset: list in prune the members of the ApplySet the apply deletes, as
    /// kubectl apply --server-side --prune --applyset does.
    #[arg(long, requires = "applyset")]
    prune: bool,

    /// The ApplySet parent (kubectl's flag): NAME (a Secret), configmaps/NAME or TYPE.GROUP/NAME, in the
    /// namespace (-n); the objects are planned with its member label.
    #[arg(long, value_name = "[TYPE[.GROUP]/]NAME", requires = "prune", conflicts_with = "helm_release")]
    applyset: Option<String>,

    /// Plan the apply with --force-conflicts: conflicts become the fields forcing takes over.
    #[arg(long)]
    force_conflicts: bool,

    /// What makes the command exit 3, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [FailOn::Conflicts, FailOn::Refusals])]
    fail_on: Vec<FailOn>,

    /// Machine output: json or yaml (shape: docs/owners-output.md), junit, or name (the objects with findings).
    #[arg(short = 'o', long, value_enum)]
    output: Option<PlanOutput>,

    /// List the fields the apply drops that the server sets again to the value they have (defaulted: no change).
    #[arg(long = "show-defaulted")]
    show_defaulted: bool,

    /// Show Secret values (hidden as *** by default; an unset value is shown as unset).
    #[arg(long = "show-secrets")]
    show_secrets: bool,

    /// --allow-unreadable.
    #[command(flatten)]
    gate: GateFlags,

    /// How many objects are planned at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: u16,
}

/// One thing read from the inputs, numbered in reading order.
enum Input {
    Object(usize, Manifest),
    Unreadable(usize, String),
}

/// Runs the plan.
pub async fn run(kube: &KubeFlags, args: &PlanArgs) -> Result<ExitCode> {
    if matches!(args.output, None | Some(PlanOutput::Name)) {
        color::init();
    } else {
        colored::control::set_override(false);
    }
    fieldwise_kube::redact::set_show_secrets(args.show_secrets);
    // Read whole before planning: an object may come before the Namespace it goes in.
    let render: Option<Vec<Result<Manifest>>> = match &args.kustomize {
        Some(dir) => Some(manifests::kustomize(dir)?.into_iter().map(Ok).collect()),
        None if args.filenames.is_empty() => None,
        None => Some(manifests::stream(&args.filenames, args.recursive).collect()),
    };
    let conn = client::connect(kube).await?;
    let mut scope = NamespaceScope::of(&conn);
    let release = match &args.helm_release {
        Some(name) => {
            let release = helm_release::read(&conn, &conn.namespace, name, args.revision).await?;
            // As Helm: namespaced objects without a namespace go to the release's; objects
            // naming another namespace are applied there (no kubectl -n refusal).
            scope = NamespaceScope { namespace: release.namespace.clone(), explicit: false };
            let objects = helm_release::objects(&release)?;
            Some((release, objects))
        }
        None => None,
    };
    // The render is the input; without one, the release's manifest is. A render with a
    // release is an upgrade: the release's objects it no longer has are pruned.
    let (mut inputs, previous): (Vec<Result<Manifest>>, Option<Vec<Manifest>>) = match (render, &release) {
        (Some(render), Some((_, objects))) => (render, Some(objects.clone())),
        (Some(render), None) => (render, None),
        (None, Some((_, objects))) => (objects.iter().cloned().map(Ok).collect(), None),
        (None, None) => return Err(Error::usage("give the objects to plan with -f, -k or --helm-release")),
    };
    if let Some((release, _)) = &release {
        // As Helm sends them: its label and release annotations over what the chart renders.
        for manifest in inputs.iter_mut().flatten() {
            let object = std::mem::take(&mut manifest.value);
            manifest.value = with_release_metadata(object, &release.name, &release.namespace);
        }
    }
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let applyset = match &args.applyset {
        Some(text) => {
            let set = ApplySet::resolve(text, &catalog, &conn.namespace)?;
            // As kubectl applies them: with the member label.
            for manifest in inputs.iter_mut().flatten() {
                let object = std::mem::take(&mut manifest.value);
                manifest.value = with_member_label(object, &set.id);
            }
            Some(set)
        }
        None => None,
    };
    let next: Vec<Manifest> = match (&previous, &applyset) {
        (None, None) => Vec::new(),
        _ => inputs.iter().flatten().cloned().collect(),
    };
    let field_manager =
        args.field_manager.clone().unwrap_or_else(|| if release.is_some() { "helm" } else { "kubectl" }.to_string());
    let namespaces_created = inputs.iter().flatten().filter_map(|m| m.namespace_declared()).map(String::from).collect();
    let planner = Planner {
        conn: &conn,
        catalog: &catalog,
        scope: scope.clone(),
        schemas: tokio::sync::Mutex::new(Schemas::connected(&conn)),
        field_manager: field_manager.clone(),
        force: args.force_conflicts,
        helm_conversion: release.as_ref().is_some_and(|(r, _)| r.written_client_side()),
        dry_runs: DryRuns::UnforcedThenForced,
        namespaces_created,
        namespaces_absent: tokio::sync::Mutex::new(BTreeMap::new()),
    };
    let progress = Progress::growing("objects planned");
    let results = RefCell::new(Results::new(args, field_manager.clone(), release.as_ref().map(|(r, _)| r)));
    let numbered = inputs.into_iter().enumerate().map(|(i, item)| {
        progress.found();
        Ok(match item {
            Ok(manifest) => Input::Object(i, manifest),
            Err(e) => Input::Unreadable(i, e.to_string()),
        })
    });
    let name = |input: &Input| match input {
        Input::Object(_, m) => m.source.clone(),
        Input::Unreadable(_, _) => String::new(),
    };
    let (planner_ref, results_ref, progress_ref) = (&planner, &results, &progress);
    // Dry runs only: a stop signal ends the plan at once, saying nothing was written.
    let options = BulkOptions::reading(usize::from(args.concurrency));
    let run = bulk::run_stream(futures::stream::iter(numbered), options, name, |input| async move {
        let (index, entry, outcome) = match input {
            Input::Unreadable(i, message) => (i, Entry::Unreadable(message), Ok("unreadable")),
            Input::Object(i, manifest) => match planner_ref.plan(manifest).await {
                Ok(report) => (i, Entry::Object(Box::new(report)), Ok("planned")),
                // The bulk runner reports it (the first of a run of them) and stops after a few.
                Err(e) => (i, Entry::Failed, Err(e)),
            },
        };
        progress_ref.advance();
        progress_ref.suspend(|| results_ref.borrow_mut().record(index, entry));
        outcome
    })
    .await;
    progress.finish();
    let mut results = results.into_inner();
    results.flush();
    if run.stopped.is_some() {
        run.print();
        return Ok(exit_code::exit(exit_code::ERROR));
    }
    if let Some(previous) = &previous {
        results.prunes = object_prune::prunes(&conn, &catalog, &scope, previous, &next, &field_manager).await?;
    }
    if let Some(set) = &applyset {
        results.prunes = set.prunes(&conn, &catalog, &scope, &next, &field_manager).await?;
    }
    results.finish()
}

/// What one input became.
enum Entry {
    Object(Box<ObjectReport>),
    Unreadable(String),
    /// The server could not be reached for it (already reported).
    Failed,
}

/// The results as they arrive: printed in reading order (text, `-o name`) or kept for one
/// document at the end (json, yaml, junit).
struct Results<'a> {
    args: &'a PlanArgs,
    /// `--field-manager`, or its default.
    field_manager: String,
    /// The Helm release read (`--helm-release`).
    release: Option<&'a Release>,
    /// The objects the upgrade to the render prunes (`--helm-release` with a render).
    prunes: Vec<Prune>,
    /// The human managers the apply conflicts with, as `owners transfer --from` names them
    /// (`kubectl-label`, `kubectl/scale`), for the transfer a release's plan suggests.
    conflicting: std::collections::BTreeSet<String>,
    pending: BTreeMap<usize, Entry>,
    next: usize,
    kept: Vec<ObjectReport>,
    unreadable: Vec<String>,
    failed: usize,
    summary: Summary,
    /// Live objects that could not be read, and `--allow-unreadable`: the gate.
    unread: Unreadable,
}

impl<'a> Results<'a> {
    fn new(args: &'a PlanArgs, field_manager: String, release: Option<&'a Release>) -> Self {
        Results {
            args,
            field_manager,
            release,
            prunes: Vec::new(),
            conflicting: std::collections::BTreeSet::new(),
            pending: BTreeMap::new(),
            next: 0,
            kept: Vec::new(),
            unreadable: Vec::new(),
            failed: 0,
            summary: Summary::default(),
            unread: args.gate.gate(),
        }
    }

    fn record(&mut self, index: usize, entry: Entry) {
        self.pending.insert(index, entry);
        while let Some(entry) = self.pending.remove(&self.next) {
            self.next += 1;
            self.emit(entry);
        }
    }

    /// Emits what is left after a run that stopped early, in order, skipping what never came.
    fn flush(&mut self) {
        let rest = std::mem::take(&mut self.pending);
        for (_, entry) in rest {
            self.emit(entry);
        }
    }

    fn emit(&mut self, entry: Entry) {
        let report = match entry {
            Entry::Failed => {
                self.failed += 1;
                return;
            }
            Entry::Unreadable(message) => {
                if self.args.output.is_none() || self.args.output == Some(PlanOutput::Name) {
                    eprintln!("error: {message}");
                }
                self.unreadable.push(message);
                return;
            }
            Entry::Object(report) => *report,
        };
        self.summary.add(&report, &self.args.fail_on);
        if let Some(unread) = &report.unread {
            self.unread.add(unread.clone());
        }
        if let Ok(planned) = &report.result {
            // A person's one-off writes go to Helm; a controller's would be written again.
            for row in planned.conflicts.iter().filter(|r| r.class == ManagerKind::Human) {
                let sub = &row.owner.subresource;
                self.conflicting.insert(if sub.is_empty() {
                    row.owner.name.clone()
                } else {
                    format!("{}/{sub}", row.owner.name)
                });
            }
        }
        match self.args.output {
            None => print!("{}", text::render(&report, self.args.force_conflicts, self.args.show_defaulted)),
            Some(PlanOutput::Name) => {
                if report.has_findings() {
                    println!("{}", report.display);
                }
            }
            Some(_) => self.kept.push(report),
        }
    }

    fn finish(self) -> Result<ExitCode> {
        let info = RunInfo {
            field_manager: &self.field_manager,
            force: self.args.force_conflicts,
            fail_on: &self.args.fail_on,
            helm_release: self.release,
        };
        let pruned = self.prunes.iter().filter(|p| !p.kept()).count();
        let kept = self.prunes.len() - pruned;
        let mut line = self.summary.line();
        if !self.prunes.is_empty() {
            line.pop();
            line.push_str(&format!(", {pruned} pruned, {kept} kept."));
        }
        match self.args.output {
            None => {
                if let (Some(release), false) = (self.release, self.conflicting.is_empty()) {
                    let from = self.conflicting.iter().cloned().collect::<Vec<_>>().join(",");
                    println!(
                        "To hand the fields set by hand to {} before the upgrade: kubectl owners transfer --helm-release {} -n {} --from {from} --to {}",
                        self.field_manager, release.name, release.namespace, self.field_manager
                    );
                }
                print!("{}", text::prunes(&self.prunes));
                if let Some(unread) = self.unread.text_line() {
                    println!("{unread}");
                }
                println!("{line}");
            }
            Some(PlanOutput::Name) => {
                for p in self.prunes.iter().filter(|p| !p.kept()) {
                    println!("{}", p.target.display());
                }
                eprintln!("{line}");
            }
            Some(PlanOutput::Junit) => print!("{}", machine::junit(&self.kept, &self.unreadable, &self.args.fail_on)),
            Some(PlanOutput::Json) => {
                let mut doc = machine::document(&info, &self.kept, &self.unreadable, &self.summary, &self.prunes);
                doc["unread"] = self.unread.to_json();
                print!("{}", printer::render(&doc, fieldwise_kube::output::OutputFormat::Json)?);
            }
            Some(PlanOutput::Yaml) => {
                let mut doc = machine::document(&info, &self.kept, &self.unreadable, &self.summary, &self.prunes);
                doc["unread"] = self.unread.to_json();
                print!("{}", printer::render(&doc, fieldwise_kube::output::OutputFormat::Yaml)?);
            }
        }
        let errors = self.summary.errors + self.unreadable.len() + self.failed;
        if errors > 0 || self.summary.disagreements > 0 {
            let mut why = Vec::new();
            if errors > 0 {
                why.push(format!("{errors} input{} could not be planned", if errors == 1 { "" } else { "s" }));
            }
            if self.summary.disagreements > 0 {
                why.push(format!(
                    "the apiserver's dry run disagrees with the prediction for {} object{}",
                    self.summary.disagreements,
                    if self.summary.disagreements == 1 { "" } else { "s" }
                ));
            }
            return Err(Error::usage(why.join("; ")));
        }
        let prunes_fail = self.args.fail_on.contains(&FailOn::Prunes) && pruned > 0;
        let found = self.summary.failing > 0 || prunes_fail;
        self.unread.end(if found { exit_code::FOUND } else { exit_code::DONE })
    }
}
