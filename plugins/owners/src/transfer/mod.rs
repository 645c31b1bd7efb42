//! `kubectl owners transfer`: hand the fields of some managers (by name, or by class:
//! `human`, `helm-update`) to another, so that its next server-side apply can delete what
//! its configuration drops (kubernetes#99003).
//!
//! Thin: the new `metadata.managedFields` are the core's
//! ([`fieldwise_core::ownership::plan_object_transfer`]), and so is the prediction of the
//! target's next apply ([`fieldwise_core::ownership::predict_next_apply`]). This module
//! finds the objects ([`objects`]), shows one preview of them all ([`preview`]), asks
//! once, and writes each through the one write path (guard, backup, re-plan on a lost
//! race), many at once through the bulk runner; after the write, the target's next apply
//! is checked with a server dry run ([`check`]).

mod check;
mod field_list;
mod objects;
mod preview;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use fieldwise_core::ownership::{plan_object_transfer, ManagerSelection, Operation, TransferTarget};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::cli::selection_flags::SelectionFlags;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::exit_code;
use fieldwise_kube::output::printer;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::write::backup::Provenance;
use fieldwise_kube::write::bulk::{self, BulkOptions};
use fieldwise_kube::write::runs::new_run_id;
use fieldwise_kube::write::{Committed, DryRun, GuardedWrite, Intent, PatchType, Planned, WriteOptions};
use fieldwise_kube::{Error, Result};
use jiff::Timestamp;
use serde_json::{json, Value};

use self::objects::Subject;
use self::preview::ObjectPlan;
use crate::report::REPORT_API_VERSION;

/// The field manager the transfer's own write is sent as. It changes no field, so the
/// apiserver records no entry for it.
pub(crate) const WRITER: &str = "kubectl-owners";

/// The operation of the target's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToOperation {
    /// A server-side applier (Argo CD, Flux, Helm 4, `kubectl apply --server-side`).
    #[value(name = "Apply")]
    Apply,
    /// A controller or tool that updates.
    #[value(name = "Update")]
    Update,
}

/// `transfer`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct TransferArgs {
    /// The objects: TYPE/NAME, TYPE with -l, --field-selector or --all (and -A), -f or -k (the one
    /// selection). Files and kustomizations are the --to manager's configuration: the objects they
    /// describe are transferred, and the preview shows what its next apply of them removes.
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// The objects of the Helm release NAME of the namespace (-n), as stored in the cluster (the
    /// last deployed revision), its manifest being the --to manager's configuration: hand the
    /// fields Helm 4's first server-side upgrade would conflict on to helm beforehand.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["targets", "filenames", "kustomize", "selector", "field_selector", "all", "all_namespaces"]
    )]
    pub helm_release: Option<String>,

    /// The release revision --helm-release reads [default: the last deployed one].
    #[arg(long, value_name = "N", requires = "helm_release")]
    pub revision: Option<u64>,

    /// The managers whose fields move, comma-separated: names, NAME/SUBRESOURCE for a
    /// subresource entry, or classes: human (kubectl-edit, kubectl-patch, kubectl-create,
    /// kubectl-set, kubectl-label, kubectl-annotate, kubectl-client-side-apply,
    /// before-first-apply) and helm-update (Helm 3's updates). Classes never take
    /// controllers or subresource entries.
    #[arg(long, value_name = "MANAGERS", required = true)]
    pub from: Vec<String>,

    /// The manager that takes the fields (e.g. argocd, flux, helm, kubectl).
    #[arg(long, value_name = "NAME", required = true)]
    pub to: String,

    /// The operation of the --to manager's entry: Apply for a server-side applier, Update for
    /// a controller that updates.
    #[arg(long, value_enum, default_value = "Apply", value_name = "OPERATION")]
    pub to_operation: ToOperation,

    /// none: write; client: only show; server: also a server-side dry-run, no write.
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, default_missing_value = "client", require_equals = true)]
    pub dry_run: DryRun,

    /// Do not ask for confirmation (without a terminal, nothing is written without it).
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// Print the transfer as json or yaml (each object's moves, shared fields, next apply and
    /// outcome), or name (kind.group/name of each object transferred).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// How many objects are written at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
}

const EXAMPLES: &str = "Exit codes: 0 done (or nothing to move); 1 error; 2 not written (declined, or no
terminal and no --yes); 3 the object changed since the preview in a way the transfer cannot follow. With many
objects, the worst object's code.

Examples:
  # What moves if Argo CD takes over what kubectl edit/patch/create and client-side apply set
  kubectl owners transfer deploy/web --from human --to argocd --dry-run

  # Argo CD's configuration: also shows what its next apply deletes (and checks it after the write)
  kubectl owners transfer -f web.yaml --from human,helm-update --to argocd

  # Before Helm 4's first server-side upgrade of a Helm 3 release: what people set by hand (and
  # kubectl scale's replicas) goes to helm, so the upgrade needs no --force-conflicts
  kubectl owners transfer --helm-release web -n shop --from human,kubectl/scale --to helm

  # Every Deployment labelled app=web, in every namespace, one preview and one confirmation
  kubectl owners transfer deploy -l app=web -A --from human --to flux --yes

  # A controller that updates takes a script's fields
  kubectl owners transfer cm/settings --from my-script --to settings-operator --to-operation Update

  # Undo it: one object, or a transfer of several objects by the run ID it printed
  kubectl safe-patch undo deploy/web
  kubectl safe-patch undo --last-run";

/// Runs `kubectl owners transfer`.
pub async fn run(kube: &KubeFlags, args: &TransferArgs) -> Result<ExitCode> {
    if args.output.is_none() {
        fieldwise_kube::output::color::init();
    } else {
        colored::control::set_override(false);
    }
    let from = ManagerSelection::parse(&args.from).map_err(|e| Error::usage(format!("--from: {e}")))?;
    if args.to.trim().is_empty() {
        return Err(Error::usage("--to needs the name of the manager that takes the fields"));
    }
    let to = TransferTarget {
        manager: args.to.clone(),
        operation: match args.to_operation {
            ToOperation::Apply => Operation::Apply,
            ToOperation::Update => Operation::Update,
        },
    };
    let retry_budget = WriteOptions::retry_budget(kube)?;
    let conn = client::connect(kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let subjects = objects::resolve(&conn, &catalog, args).await?;
    if subjects.is_empty() {
        eprintln!("No resources found.");
        return Ok(ExitCode::SUCCESS);
    }
    let now = Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let run = Run { conn: &conn, args, from: &from, to: &to, now: &now, retry_budget };
    let mut schemas = Schemas::connected(&conn);
    let mut plans = Vec::new();
    for subject in subjects {
        plans.push(run.plan(subject, &mut schemas).await?);
    }
    if args.output.is_none() {
        print!("{}", preview::render(&plans, &to));
    }
    let moving: Vec<&ObjectPlan> = plans.iter().filter(|p| !p.transfer.plan.is_empty()).collect();
    let outcomes = RefCell::new(BTreeMap::new());
    let code = if moving.is_empty() {
        if args.output.is_none() {
            eprintln!("Nothing to transfer.");
        }
        ExitCode::SUCCESS
    } else {
        run.write_all(&moving, &outcomes).await?
    };
    if let Some(format) = args.output {
        print_document(&plans, &outcomes.borrow(), format)?;
    }
    Ok(code)
}

/// What one run of the command shares between its objects.
struct Run<'a> {
    conn: &'a Connection,
    args: &'a TransferArgs,
    from: &'a ManagerSelection,
    to: &'a TransferTarget,
    now: &'a str,
    retry_budget: Duration,
}

impl Run<'_> {
    /// The transfer of one object, and its target's next apply when a configuration is at hand.
    async fn plan(&self, subject: Subject, schemas: &mut Schemas) -> Result<ObjectPlan> {
        let display = subject.target.display();
        let transfer = plan_object_transfer(&subject.live, self.from, self.to, Some(self.now))
            .map_err(|e| Error::semantics(display.clone(), e))?;
        let next = match (&subject.config, self.to.operation) {
            (Some(config), Operation::Apply) => Some(
                check::predict(self.conn, schemas, &subject.target, &transfer.result, config, &self.to.manager).await?,
            ),
            _ => None,
        };
        Ok(ObjectPlan { subject, transfer, next })
    }

    /// Asks once, then writes every object that has something to move.
    async fn write_all(
        &self,
        moving: &[&ObjectPlan],
        outcomes: &RefCell<BTreeMap<OutcomeKey, Outcome>>,
    ) -> Result<ExitCode> {
        if self.args.dry_run == DryRun::None {
            let question = match moving {
                [one] => format!("Transfer the fields of {} to {}?", one.subject.target.display(), self.to.manager),
                many => format!("Transfer the fields of {} objects to {}?", many.len(), self.to.manager),
            };
            if let Some(code) =
                prompt::run_refusal(self.args.yes, &question, "transferring", "transferred", moving.len())
            {
                return Ok(code);
            }
        }
        if let [one] = moving {
            let outcome = self.write_one(one, None, false).await?;
            outcomes.borrow_mut().insert(outcome_key(&one.subject.target), outcome);
            return Ok(ExitCode::SUCCESS);
        }
        // Many objects are one run: `kubectl safe-patch undo --run ID` puts all their managers back.
        let run_id = (self.args.dry_run == DryRun::None).then(new_run_id);
        let options = BulkOptions::with_concurrency(usize::from(self.args.concurrency));
        let summary = bulk::run(
            moving.iter().copied(),
            options,
            |p| p.subject.target.located(),
            |p| async {
                let outcome = self.write_one(p, run_id.as_deref(), true).await?;
                let label = if outcome.verb == UNCHANGED { UNCHANGED } else { "transferred" };
                outcomes.borrow_mut().insert(outcome_key(&p.subject.target), outcome);
                Ok(label)
            },
        )
        .await;
        summary.print();
        if let Some(id) = run_id.filter(|_| summary.succeeded.get("transferred").is_some_and(|n| *n > 0)) {
            eprintln!("Run {id}; undo it with: kubectl safe-patch undo --run {id}");
        }
        Ok(exit_code::exit(summary.exit_code()))
    }

    /// Writes (or dry-runs) one object's transfer through the write path, prints its result
    /// line and, after a real write with a configuration, the server's check of the next apply.
    /// `run`: the id of the run the write belongs to (its backup record names it); `many`: the
    /// object is one of several, whose result lines name their namespaces.
    async fn write_one(&self, plan: &ObjectPlan, run: Option<&str>, many: bool) -> Result<Outcome> {
        let target = &plan.subject.target;
        let display = target.display();
        let options =
            WriteOptions::new("owners transfer", WRITER, &plan.subject.live, self.retry_budget).intent(Intent::Rule);
        let provenance = Provenance { run: run.map(String::from), ..Provenance::default() };
        let writer = GuardedWrite::new(self.conn, target, options).with_provenance(provenance);
        let mut planner = |live: &Value| -> Result<Planned> {
            let t = plan_object_transfer(live, self.from, self.to, Some(self.now))
                .map_err(|e| Error::semantics(display.clone(), e))?;
            Ok(Planned { patch_type: PatchType::Json, patch: t.patch, result: t.result, findings: Vec::new() })
        };
        let mut preview = writer.plan(plan.subject.live.clone(), &mut planner)?;
        let to = format!("to {} ({})", self.to.manager, self.to.operation.as_str());
        let (object, verb) = match self.args.dry_run {
            DryRun::Client => (preview.planned.result.clone(), format!("transferred {to} (dry run)")),
            DryRun::Server => {
                writer.dry_run(&mut preview, &mut planner).await?;
                (preview.result().clone(), format!("transferred {to} (server dry run)"))
            }
            DryRun::None => match writer.commit(preview, &mut planner).await? {
                Committed::Written(written) => (written, format!("transferred {to}")),
                Committed::NoChange(object) => (object, UNCHANGED.to_string()),
            },
        };
        match self.args.output {
            None | Some(OutputFormat::Name) if many => {
                printer::print_run_outcome(target, &object, &verb, self.args.output, false)?
            }
            None | Some(OutputFormat::Name) => {
                printer::print_outcome(&display, &object, &verb, self.args.output, false)?
            }
            Some(_) => {} // the document at the end says it
        }
        let mut checked = None;
        if let (Some(config), Some(next), DryRun::None) = (&plan.subject.config, &plan.next, self.args.dry_run) {
            let check = check::verify(self.conn, target, &object, config, &self.to.manager, next).await;
            if self.args.output.is_none() {
                eprint!("{}", check::render(&display, &self.to.manager, &check));
            }
            checked = Some(check);
        }
        Ok(Outcome { verb, checked })
    }
}

/// An object's place in the outcomes: its namespace and name (objects of one name in several
/// namespaces are several objects).
type OutcomeKey = (Option<String>, String);

fn outcome_key(target: &ObjectRef) -> OutcomeKey {
    (target.namespace.clone(), target.display())
}

/// The result line's verb for an object whose managers already are what the transfer makes them.
const UNCHANGED: &str = "unchanged";

/// What became of one object.
#[derive(Debug)]
struct Outcome {
    /// The result line's verb: `transferred to argocd (Apply)`, `unchanged`, ... (dry run).
    verb: String,
    /// The server's check of the next apply, after a real write with `-f`.
    checked: Option<check::Checked>,
}

/// The `-o json|yaml` document: every object's plan and what became of it.
fn print_document(plans: &[ObjectPlan], outcomes: &BTreeMap<OutcomeKey, Outcome>, format: OutputFormat) -> Result<()> {
    if format == OutputFormat::Name {
        return Ok(()); // the names were printed as each object was written
    }
    let items: Vec<Value> = plans
        .iter()
        .map(|p| {
            let mut item = preview::json(p);
            let outcome = match outcomes.get(&outcome_key(&p.subject.target)) {
                Some(outcome) => {
                    if let (Some(checked), Some(next)) = (&outcome.checked, item.get_mut("nextApply")) {
                        next["checked"] = check::json(checked);
                    }
                    outcome.verb.clone()
                }
                None if p.transfer.plan.is_empty() => "nothing to transfer".into(),
                None => "not written".into(),
            };
            item["outcome"] = outcome.into();
            item
        })
        .collect();
    let doc = json!({"apiVersion": REPORT_API_VERSION, "kind": "OwnersTransfer", "items": items});
    print!("{}", printer::render(&doc, format)?);
    Ok(())
}
