//! `repair`: make the annotation what it should be, and change nothing else.
//!
//! From a file, it becomes exactly what `kubectl apply -f FILE` would store; from
//! the live object, it is rebuilt from the fields kubectl's managers own
//! (`fieldwise_core::last_applied::rebuild`). The write is a JSON merge patch of
//! the annotation and `metadata.resourceVersion` (refused if the object changed
//! since it was read; then it is read and computed again), after a backup of the
//! pre-image. An annotation that is already right is left alone ("unchanged").
//!
//! A Secret's annotation would hold its values in clear text, the very leak `scan`
//! reports: without `--store-secret-values`, a single repair of such a Secret is
//! refused (exit 2) and a bulk repair skips it, each saying why and suggesting
//! `kubectl last-applied migrate` (`fieldwise_core::last_applied::secret_values`).

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::secret_values::{refusal_reason, repair_decision, RepairDecision};
use fieldwise_core::last_applied::{
    annotation_of, check, plan_removal, plan_repair, rebuild, FindingKind, RepairError, CLIENT_SIDE_APPLY_MANAGER,
};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Refusal, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::diff;
use fieldwise_kube::output::printer;
use fieldwise_kube::write::DryRun;
use fieldwise_kube::write::{Committed, GuardedWrite, Intent, Planned, WriteOptions};
use serde_json::{json, Value};

use crate::from_scan::{self, Ask, FromScan};
use crate::scan_scope::{self, ScanFlags, ScanScope};
use crate::{scan, targets, WriteArgs};
use fieldwise_kube::cli::selection_flags::SelectionFlags;

/// `repair`'s flags.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// The objects: TYPE/NAME (the annotation is rebuilt from the live object), or -f/-k (the
    /// configuration kubectl apply would apply); with --from-scan, TYPE[,TYPE...] and -l,
    /// --field-selector, -A choose what the scan reads.
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// Scan first (the TYPEs, -l, --field-selector and -A given), then repair every missing or
    /// stale annotation found.
    #[arg(long)]
    pub from_scan: bool,

    /// The field manager of the write (by default the one kubectl apply writes the annotation as).
    #[arg(long, default_value = CLIENT_SIDE_APPLY_MANAGER)]
    pub field_manager: String,

    /// Store a Secret's values in its annotation, in clear text readable by anyone who can read its metadata.
    /// Without it a repair that would do so is refused (bulk: the Secret is skipped); `kubectl last-applied
    /// migrate` moves the Secret to server-side apply, which needs no annotation.
    #[arg(long)]
    pub store_secret_values: bool,

    #[command(flatten)]
    pub scan: ScanFlags,

    #[command(flatten)]
    pub write: WriteArgs,
}

/// Where the wanted annotation comes from.
#[derive(Debug, Clone)]
enum Source {
    /// A configuration file's object.
    File(Value),
    /// kubectl's fields on the live object.
    Live,
}

/// What happened to one object.
#[derive(Debug)]
enum Outcome {
    Repaired(Value),
    Unchanged(Value),
    Declined,
    /// The annotation would hold this many Secret values and the user did not ask for that.
    Refused(usize),
}

/// Runs `kubectl last-applied repair`.
pub async fn run(kube: KubeFlags, args: RepairArgs) -> Result<ExitCode> {
    let selection = args.selection.for_writing();
    scan_scope::check_writer(&args.selection, args.from_scan, &args.scan)?; // before anything is read
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    if args.from_scan {
        return bulk_repair(&conn, &catalog, &args, retry_budget).await;
    }
    let work: Vec<(ObjectRef, Source)> = if selection.names_by_documents() {
        targets::from_documents(&selection, &catalog, &conn)?.into_iter().map(|(t, v)| (t, Source::File(v))).collect()
    } else {
        targets::from_args(selection.args, &catalog, &conn)?.into_iter().map(|t| (t, Source::Live)).collect()
    };
    // Several objects are a run: without a terminal to confirm each on, nothing is written
    // without --yes, as every writer's run over many objects refuses (one object's repair
    // proceeds after its preview, as safe-patch's does).
    if work.len() > 1 && args.write.dry_run == DryRun::None && !args.write.yes && !prompt::interactive() {
        if let Some(code) = prompt::run_refusal(false, "", "repairing", "repaired", work.len()) {
            return Ok(code);
        }
    }
    let mut code = ExitCode::SUCCESS;
    for (target, source) in &work {
        let repair = Repair { conn: &conn, target, source, args: &args, retry_budget, interactive: true };
        match repair.run(None).await? {
            Outcome::Declined => {
                eprintln!("Not repaired: {}.", target.display());
                code = exit_code::exit(exit_code::REFUSED);
            }
            Outcome::Refused(values) => {
                eprintln!("{}", Error::Refused { object: target.display(), rule: Refusal::SecretValues { values } });
                code = exit_code::exit(exit_code::REFUSED);
            }
            outcome => report(&args, target, &outcome, false)?,
        }
    }
    Ok(code)
}

/// `--from-scan`: every missing or stale finding, repaired as the scan finds it.
async fn bulk_repair(
    conn: &Connection,
    catalog: &ResourceCatalog,
    args: &RepairArgs,
    retry_budget: std::time::Duration,
) -> Result<ExitCode> {
    let question = |count: usize| format!("Repair the annotation of {count} object(s)?");
    let ask = Ask { question: &question, doing: "repairing", done: "repaired" };
    let ask = Ask::unless(args.write.yes, args.write.dry_run, ask);
    let repair = |target: ObjectRef, live: Option<Value>| async move {
        let repair = Repair { conn, target: &target, source: &Source::Live, args, retry_budget, interactive: false };
        let outcome = repair.run(live).await?;
        report(args, &target, &outcome, true)?;
        Ok(match outcome {
            Outcome::Repaired(_) => "repaired",
            Outcome::Unchanged(_) | Outcome::Declined => "unchanged",
            Outcome::Refused(values) => {
                return Err(Error::Refused { object: target.display(), rule: Refusal::SecretValues { values } })
            }
        })
    };
    let scope = ScanScope::of_selection(&args.selection.for_writing(), &args.scan)?;
    match from_scan::run(conn, catalog, &scope, ask, |f| repairable(f, args), repair).await? {
        FromScan::Nothing => {
            eprintln!("Nothing to repair.");
            Ok(ExitCode::SUCCESS)
        }
        FromScan::NotApproved(code) => Ok(code),
        FromScan::Ran(summary) => {
            summary.print();
            Ok(exit_code::exit(summary.exit_code()))
        }
    }
}

/// Whether a flagged object is one a repair is for (a missing or stale annotation). A
/// Secret whose annotation would hold its values is skipped with a line saying why,
/// unless `--store-secret-values`.
fn repairable(flagged: &scan::Flagged, args: &RepairArgs) -> bool {
    if !flagged.findings.iter().any(|x| matches!(x.kind, FindingKind::Missing | FindingKind::Stale)) {
        return false;
    }
    if !args.store_secret_values && holds_secret_values(flagged) {
        eprintln!("skipped: {}", refusal_reason(&flagged.target.display(), secret_values_of(flagged)));
        return false;
    }
    true
}

/// The configuration the annotation of `target` should hold.
fn wanted_config(target: &ObjectRef, source: &Source, live: &Value) -> Result<Value> {
    match source {
        Source::File(config) => Ok(config.clone()),
        Source::Live => rebuild(live).map_err(|e| Error::semantics(target.display(), e)),
    }
}

/// How many Secret values the rebuilt annotation of a flagged object would hold; a
/// Secret whose live object was not fetched counts as holding some.
fn secret_values_of(flagged: &scan::Flagged) -> usize {
    match &flagged.live {
        Some(live) => rebuild(live).map_or(0, |config| match repair_decision(&config, false) {
            RepairDecision::Refuse { values } => values,
            RepairDecision::Write => 0,
        }),
        None => usize::from(flagged.target.resource.kind == "Secret" && flagged.target.resource.group.is_empty()),
    }
}

fn holds_secret_values(flagged: &scan::Flagged) -> bool {
    secret_values_of(flagged) > 0
}

/// Whether the live object's annotation is left over after a move to server-side apply
/// (`fieldwise_core::last_applied::check::left_over`): rebuilt from the live object, it is removed.
fn removes_left_over(source: &Source, live: &Value) -> bool {
    matches!(source, Source::Live) && check::left_over(live).is_some()
}

/// The repair of one object, planned against whatever version of it the write path holds
/// (the core's [`plan_repair`], or [`plan_removal`] of a left-over annotation; a re-plan that
/// now meets Secret values is refused too).
fn plan_repair_of(target: &ObjectRef, source: &Source, live: &Value, store_secret_values: bool) -> Result<Planned> {
    let refused = |e: RepairError| match e {
        RepairError::SecretValues { values } => {
            Error::Refused { object: target.display(), rule: Refusal::SecretValues { values } }
        }
        RepairError::TooLarge { size, limit } => {
            Error::Refused { object: target.display(), rule: Refusal::AnnotationTooLarge { size, limit } }
        }
        RepairError::Patch(e) => Error::semantics(target.display(), e),
    };
    if removes_left_over(source, live) {
        return plan_removal(live).map_err(refused);
    }
    let config = wanted_config(target, source, live)?;
    plan_repair(live, &config, target.namespace.as_deref(), store_secret_values).map_err(refused)
}

/// One object's repair.
struct Repair<'a> {
    conn: &'a Connection,
    target: &'a ObjectRef,
    source: &'a Source,
    args: &'a RepairArgs,
    retry_budget: std::time::Duration,
    /// Show the diff and ask (single repairs); bulk repairs asked once for all.
    interactive: bool,
}

impl Repair<'_> {
    async fn run(&self, prefetched: Option<Value>) -> Result<Outcome> {
        let live = match prefetched {
            Some(live) => live,
            None => objects::get(self.conn, self.target, None).await?,
        };
        let options = WriteOptions::new("last-applied repair", &self.args.field_manager, &live, self.retry_budget)
            .intent(Intent::Rule)
            .show_secrets(self.args.write.show_secrets);
        let writer = GuardedWrite::new(self.conn, self.target, options);
        if !removes_left_over(self.source, &live) {
            let config = wanted_config(self.target, self.source, &live)?;
            if let RepairDecision::Refuse { values } = repair_decision(&config, self.args.store_secret_values) {
                return Ok(Outcome::Refused(values));
            }
        }
        let store = self.args.store_secret_values;
        let mut planner = |live: &Value| plan_repair_of(self.target, self.source, live, store);
        let mut preview = writer.plan(live, &mut planner)?;
        if preview.is_no_change() {
            return Ok(Outcome::Unchanged(preview.live));
        }
        if self.interactive {
            show_diff(self.target, &preview.live, &preview.planned.result, self.args.write.show_secrets);
        }
        match self.args.write.dry_run {
            DryRun::Client => return Ok(Outcome::Repaired(preview.planned.result)),
            DryRun::Server => {
                writer.dry_run(&mut preview, &mut planner).await?;
                return Ok(Outcome::Repaired(preview.result().clone()));
            }
            DryRun::None => {}
        }
        if self.interactive
            && !prompt::approved(self.args.write.yes, &format!("Repair the annotation of {}?", self.target.display()))
        {
            return Ok(Outcome::Declined);
        }
        Ok(match writer.commit(preview, &mut planner).await? {
            Committed::Written(written) => Outcome::Repaired(written),
            Committed::NoChange(object) => Outcome::Unchanged(object),
        })
    }
}

/// The annotation before and after, as YAML, Secret values hidden.
fn show_diff(target: &ObjectRef, live: &Value, result: &Value, show_secrets: bool) {
    let parse = |t: Option<&str>| t.and_then(|t| serde_json::from_str::<Value>(t).ok()).unwrap_or(json!({}));
    let (old, new) = (parse(annotation_of(live)), parse(annotation_of(result)));
    let name = target.display();
    if let Some(d) =
        diff::human(&format!("{name} (annotation)"), &format!("{name} (repaired)"), &old, &new, show_secrets)
    {
        eprint!("{d}");
    }
}

/// Prints an object's result line; `many`: one of a run over many objects (`--from-scan`).
fn report(args: &RepairArgs, target: &ObjectRef, outcome: &Outcome, many: bool) -> Result<()> {
    let (object, verb) = match outcome {
        Outcome::Unchanged(o) => (o, "unchanged".to_string()),
        Outcome::Repaired(o) => match args.write.dry_run {
            DryRun::None => (o, "repaired".to_string()),
            DryRun::Client => (o, "repaired (dry run)".to_string()),
            DryRun::Server => (o, "repaired (server dry run)".to_string()),
        },
        Outcome::Declined | Outcome::Refused(_) => return Ok(()),
    };
    let (output, show_secrets) = (args.write.output, args.write.show_secrets);
    if many {
        printer::print_run_outcome(target, object, &verb, output, show_secrets)
    } else {
        printer::print_outcome(&target.display(), object, &verb, output, show_secrets)
    }
}
