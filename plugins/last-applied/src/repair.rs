//! `repair`: make the annotation what it should be, and change nothing else.
//!
//! From a file, it becomes exactly what `kubectl apply -f FILE` would store; from
//! the live object, it is rebuilt from the fields kubectl's managers own
//! (`fieldwise_core::last_applied::rebuild`). The write is a JSON merge patch of
//! the annotation and `metadata.resourceVersion` (refused if the object changed
//! since it was read; then it is read and computed again), after a backup of the
//! pre-image. An annotation that is already right is left alone ("unchanged").

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::{
    annotation_of, annotations_size_with, encode, rebuild, FindingKind, LAST_APPLIED_ANNOTATION,
    TOTAL_ANNOTATIONS_LIMIT,
};
use fieldwise_kube::backup::BackupStore;
use fieldwise_kube::client::{self, Connection};
use fieldwise_kube::diff::unified;
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::{DryRun, KubeFlags, OutputFormat};
use fieldwise_kube::target::ObjectRef;
use fieldwise_kube::write::PatchType;
use fieldwise_kube::{objects, printer, redact};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};

use crate::guarded::{self, resource_version, Write, MAX_ATTEMPTS};
use crate::{scan, targets, ScopeArgs, WriteArgs};

/// `repair`'s flags.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// The objects: TYPE/NAME or TYPE NAME...; the annotation is rebuilt from the live object.
    #[arg(value_name = "TYPE/NAME")]
    pub targets: Vec<String>,

    /// Files (or directories, or - for stdin) holding the configuration kubectl apply would apply.
    #[arg(short = 'f', long = "filename", value_name = "FILE", conflicts_with_all = ["targets", "from_scan"])]
    pub filename: Vec<String>,

    /// Scan first (with -A/-l/--kinds), then repair every missing or stale annotation found.
    #[arg(long, conflicts_with = "targets")]
    pub from_scan: bool,

    /// The field manager of the write (by default the one kubectl apply writes the annotation as).
    #[arg(long, default_value = "kubectl-client-side-apply")]
    pub field_manager: String,

    #[command(flatten)]
    pub scope: ScopeArgs,

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
}

/// Runs `kubectl last-applied repair`.
pub async fn run(kube: KubeFlags, args: RepairArgs) -> Result<ExitCode> {
    if args.targets.is_empty() && args.filename.is_empty() && !args.from_scan {
        return Err(Error::usage("an object is required: TYPE/NAME, -f FILE or --from-scan (see --help)"));
    }
    if args.write.output == Some(OutputFormat::Name) && args.from_scan {
        return Err(Error::usage("-o name is not supported with --from-scan"));
    }
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let store = BackupStore::open_default()?;
    if args.from_scan {
        return bulk(&conn, &catalog, &args, &store).await;
    }
    let work: Vec<(ObjectRef, Source)> = if args.filename.is_empty() {
        targets::from_args(&args.targets, &catalog, &conn)?.into_iter().map(|t| (t, Source::Live)).collect()
    } else {
        targets::from_files(&args.filename, &catalog, &conn)?.into_iter().map(|(t, v)| (t, Source::File(v))).collect()
    };
    for (target, source) in &work {
        let outcome = repair_one(&conn, target, source, None, &args, &store, true).await?;
        report(&args, target, &outcome)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--from-scan`: every missing or stale finding, in parallel; failures are reported, not fatal.
async fn bulk(
    conn: &Connection,
    catalog: &ResourceCatalog,
    args: &RepairArgs,
    store: &BackupStore,
) -> Result<ExitCode> {
    let result = scan::scan(conn, catalog, &args.scope).await?;
    for s in &result.skipped {
        eprintln!("warning: skipped {}: {}", s.resource.plural_group(), s.reason);
    }
    let work: Vec<_> = result
        .flagged
        .into_iter()
        .filter(|f| f.findings.iter().any(|x| matches!(x.kind, FindingKind::Missing | FindingKind::Stale)))
        .collect();
    let outcomes: Vec<_> = stream::iter(work)
        .map(|f| async move {
            let outcome = repair_one(conn, &f.target, &Source::Live, f.live.clone(), args, store, false).await;
            (f.target, outcome)
        })
        .buffer_unordered(usize::from(args.scope.concurrency))
        .collect()
        .await;
    let (mut repaired, mut unchanged, mut failed) = (0, 0, 0);
    for (target, outcome) in &outcomes {
        match outcome {
            Ok(o) => {
                match o {
                    Outcome::Repaired(_) => repaired += 1,
                    Outcome::Unchanged(_) => unchanged += 1,
                }
                report(args, target, o)?;
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {}", target.display(), e.to_string().trim_start_matches("error: "));
            }
        }
    }
    eprintln!("{repaired} repaired, {unchanged} unchanged, {failed} failed");
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The annotation `target` should carry.
fn wanted(target: &ObjectRef, source: &Source, live: &Value) -> Result<String> {
    let config = match source {
        Source::File(config) => config.clone(),
        Source::Live => rebuild(live).map_err(|e| Error::Other(format!("{}: {e}", target.display())))?,
    };
    Ok(encode(&config, target.namespace.as_deref()))
}

async fn repair_one(
    conn: &Connection,
    target: &ObjectRef,
    source: &Source,
    mut live: Option<Value>,
    args: &RepairArgs,
    store: &BackupStore,
    show: bool,
) -> Result<Outcome> {
    for _ in 0..MAX_ATTEMPTS {
        let current = match live.take() {
            Some(v) => v,
            None => objects::get(conn, target, None).await?,
        };
        let text = wanted(target, source, &current)?;
        if annotation_of(&current) == Some(text.as_str()) {
            return Ok(Outcome::Unchanged(current));
        }
        let size = annotations_size_with(&current, &text);
        if size > TOTAL_ANNOTATIONS_LIMIT {
            return Err(Error::Other(format!(
                "{}: the annotation would make the annotations {size} bytes, over the {TOTAL_ANNOTATIONS_LIMIT}-byte limit; use `kubectl last-applied migrate {} --drop-annotation` and server-side apply instead",
                target.display(),
                target.display()
            )));
        }
        if show {
            show_diff(target, &current, &text, args.write.show_secrets);
        }
        let rv = resource_version(&current).unwrap_or_default().to_string();
        let body = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: text}, "resourceVersion": rv}});
        let write = Write {
            target,
            before: &current,
            patch_type: PatchType::Merge,
            body: &body,
            field_manager: &args.field_manager,
            operation: "last-applied repair",
        };
        match guarded::send(conn, &write, args.write.dry_run, store).await {
            Ok(written) => return Ok(Outcome::Repaired(written)),
            Err(e) if e.is_conflict() => continue, // changed since read: read and compute again
            Err(e) => return Err(e),
        }
    }
    Err(Error::Other(format!("{} kept changing; gave up after {MAX_ATTEMPTS} attempts", target.display())))
}

/// The annotation before and after, as YAML, Secret values hidden.
fn show_diff(target: &ObjectRef, live: &Value, text: &str, show_secrets: bool) {
    let parse = |t: Option<&str>| t.and_then(|t| serde_json::from_str::<Value>(t).ok()).unwrap_or(json!({}));
    let (mut old, mut new) = (parse(annotation_of(live)), parse(Some(text)));
    if !show_secrets {
        redact::redact(&mut old);
        redact::redact(&mut new);
    }
    let color = colored::control::SHOULD_COLORIZE.should_colorize();
    let name = target.display();
    if let Some(d) = unified(&format!("{name} (annotation)"), &format!("{name} (repaired)"), &old, &new, color) {
        eprint!("{d}");
    }
}

fn report(args: &RepairArgs, target: &ObjectRef, outcome: &Outcome) -> Result<()> {
    let (object, verb) = match outcome {
        Outcome::Unchanged(o) => (o, "unchanged".to_string()),
        Outcome::Repaired(o) => match args.write.dry_run {
            DryRun::None => (o, "repaired".to_string()),
            DryRun::Client => (o, "repaired (dry run)".to_string()),
            DryRun::Server => (o, "repaired (server dry run)".to_string()),
        },
    };
    printer::print_outcome(&target.display(), object, &verb, args.write.output, args.write.show_secrets)
}
