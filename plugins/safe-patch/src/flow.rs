//! `kubectl safe-patch`: the selection, then the run. One object is the run of one: the
//! same steps as every object of a run over many ([`crate::steps`]: read, plan, lint,
//! dry-run, refuse by the findings, then the one write path, which guards, backs up and
//! re-plans on a race), shown as its own diff and confirmed by name. Several objects (a
//! selection, several names or files) go to [`crate::many`], which shows one preview for
//! the run. `--local` patches the objects of files offline.

use std::process::ExitCode;
use std::time::Duration;

use fieldwise_core::lint::{self, Finding};
use fieldwise_core::ownership;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::{self, ObjectRef};
use fieldwise_kube::api::selection::{self, Selection, SelectionLimit};
use fieldwise_kube::cli::prompt;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::diff::without_server_noise;
use fieldwise_kube::output::printer;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::write::backup::Provenance;
use fieldwise_kube::write::DryRun;
use fieldwise_kube::write::{Committed, PatchType, WriteOptions};
use serde_json::Value;

use crate::plan::{choose_type, plan, plan_input};
use crate::prepared::Prepared;
use crate::preview::{finding_line, show_diff};
use crate::steps::{self, Patching};
use crate::PatchArgs;
use crate::{edit, input, many};

/// Where the patch comes from.
pub enum PatchSource {
    /// `-p` or `--patch-file`.
    Given(Value),
    /// `--edit`: the edit of the live object, made once it is read.
    Edit,
}

/// Runs `kubectl safe-patch`.
pub async fn run(kube: KubeFlags, args: PatchArgs) -> Result<ExitCode> {
    if args.local {
        return run_local(&args).await;
    }
    let retry_budget = WriteOptions::retry_budget(&kube)?;
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let selection = selection_of(&args);
    let targets = selection::select(&conn, &catalog, &selection).await?;
    if let Some(t) = targets.iter().find(|t| !t.resource.supports("patch")) {
        return Err(Error::usage(format!(
            "{} cannot be patched (the server does not allow it)",
            t.resource.display_name()
        )));
    }
    if targets.is_empty() {
        let scope = if args.selection.query.all_namespaces {
            "any namespace".to_string()
        } else {
            format!("namespace {}", conn.namespace)
        };
        return Err(Error::usage(format!("no objects passed to patch: nothing matches the selection in {scope}")));
    }
    if selection.is_query() || targets.len() > 1 {
        if args.edit {
            return Err(Error::usage("--edit edits one object: name it (TYPE/NAME)"));
        }
        let patch = input::read_patch(args.patch.as_deref(), args.patch_file.as_deref(), args.validate)?;
        return many::run(&conn, targets, &patch, &args, retry_budget).await;
    }
    let source = if args.edit {
        PatchSource::Edit
    } else {
        PatchSource::Given(input::read_patch(args.patch.as_deref(), args.patch_file.as_deref(), args.validate)?)
    };
    patch_one(&conn, &targets[0], &source, &args, retry_budget).await
}

/// The objects the command line selects (see [`selection::select`]): a writer's selection,
/// refused as soon as it holds more than `--max-objects`.
fn selection_of(args: &PatchArgs) -> Selection<'_> {
    let limit = SelectionLimit { max: args.max_objects, flag: "--max-objects" };
    Selection { limit: Some(limit), ..args.selection.for_writing() }
}

/// The run of one object: the same steps as a run of many ([`steps`]), its preview the
/// object's own diff (with the server's result where it differs from the prediction), its
/// approval a question about this object.
async fn patch_one(
    conn: &Connection,
    target: &ObjectRef,
    source: &PatchSource,
    args: &PatchArgs,
    retry_budget: Duration,
) -> Result<ExitCode> {
    let display = target.display();
    // The object is read once, here: `--edit` edits it, and the patch is planned on it.
    let live = objects::get(conn, target, args.subresource.as_deref()).await?;
    let plan = steps::type_plan(&mut Schemas::connected(conn), target, &display, args).await?;
    let patch = match source {
        PatchSource::Given(patch) => patch.clone(),
        PatchSource::Edit => {
            let (schema, ty) = (&*plan.typed.schema, plan.typed.root);
            match edit::edit_to_patch(&live, plan.patch_type, schema, ty, &display, args.show_secrets)? {
                Some(patch) => patch,
                None => {
                    eprintln!("Edit cancelled, no changes made.");
                    return Ok(ExitCode::SUCCESS);
                }
            }
        }
    };
    let patching = Patching { conn, patch: &patch, args, retry_budget };
    let prepared = match patching.prepare(target.clone(), Some(live), &plan).await {
        Ok(prepared) => prepared,
        Err(not_prepared) => {
            print_findings(&not_prepared.findings);
            return Err(not_prepared.error);
        }
    };
    let (preview, findings) = (&prepared.preview, &prepared.findings);
    // Refused with the findings and the change they refuse. Such a change never reaches the
    // server (not even as a dry run, which would hand the value to admission webhooks), unless
    // the dry run's re-plan against a newer object is what exposes it: refused all the same,
    // with --dry-run too, as a run of many refuses it.
    if !args.allow_secret_exposure && lint::exposes_secret(findings) {
        print_findings(findings);
        let label = |side: &str| format!("{display} ({side})");
        let (live, result) = (&preview.live, &preview.planned.result);
        if let Some(diff) = show_diff(&label("live"), &label("patched"), live, result, args.show_secrets, false) {
            eprint!("{diff}");
        }
        return Ok(refuse(&prepared, args, &display));
    }
    if let Some(server) = &preview.server_result {
        if without_server_noise(server) != without_server_noise(&preview.planned.result) {
            if let Some(d) = show_diff(
                "local prediction",
                "server dry-run",
                &preview.planned.result,
                server,
                args.show_secrets,
                false,
            ) {
                eprintln!(
                    "note: the server's result differs from the local prediction (defaulting or admission):\n{d}"
                );
            }
        }
    }
    // A patch of metadata.managedFields changes the managers, so they are the diff (and the change).
    let managers = ownership::sets_managed_fields(&preview.live, &preview.planned.result);
    let diff = show_diff(
        &format!("{display} (live)"),
        &format!("{display} (patched)"),
        &preview.live,
        preview.result(),
        args.show_secrets,
        managers,
    );
    print_findings(findings);
    let Some(diff) = diff else {
        // A dry run says so even when it would change nothing: nothing was written either way.
        let verb = match args.dry_run {
            DryRun::None => "patched (no change)",
            DryRun::Server => "patched (no change) (server dry run)",
            DryRun::Client => "patched (no change) (dry run)",
        };
        print_outcome(args, &display, &preview.live, verb)?;
        return Ok(ExitCode::SUCCESS);
    };
    eprint!("{diff}");
    if args.dry_run != DryRun::None {
        let how = if args.dry_run == DryRun::Server { "server dry run" } else { "dry run" };
        print_outcome(args, &display, preview.result(), &format!("patched ({how})"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if prepared.refusal(args.force, args.allow_secret_exposure).is_some() {
        return Ok(refuse(&prepared, args, &display));
    }
    if !prompt::approved(args.yes, &format!("Patch {display}?")) {
        eprintln!("Not patched.");
        return Ok(exit_code::exit(exit_code::REFUSED));
    }
    let committed = patching.commit(prepared, &plan, Provenance::default()).await?;
    match committed {
        Committed::Written(written) => print_outcome(args, &display, &written, "patched")?,
        Committed::NoChange(object) => print_outcome(args, &display, &object, "patched (no change)")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The refusal of a write by its findings ([`crate::prepared::Prepared::refusal`], the words
/// of a run of many): exit 2, nothing was sent.
fn refuse(prepared: &Prepared, args: &PatchArgs, display: &str) -> ExitCode {
    let why = prepared.refusal(args.force, args.allow_secret_exposure).unwrap_or_default();
    eprintln!("error: not writing {display}: {why}");
    exit_code::exit(exit_code::REFUSED)
}

fn print_findings(findings: &[Finding]) {
    for f in findings {
        eprintln!("{}", finding_line(f));
    }
}

fn print_outcome(args: &PatchArgs, display: &str, object: &Value, verb: &str) -> Result<()> {
    printer::print_outcome(display, object, verb, args.output, args.show_secrets)
}

/// `--local`: patch every object of the `-f` files (`-R`), or of stdin, offline (embedded
/// schema) and print the results, as `kubectl patch --local -f` does: a YAML stream (or one
/// JSON document each). Every object is planned before anything is printed, so a patch
/// that does not apply to one of them prints nothing but the error naming it.
async fn run_local(args: &PatchArgs) -> Result<ExitCode> {
    if !args.selection.for_writing().names_by_documents() {
        return Err(Error::usage("--local patches the objects of files: give -f FILE (\"-\" for stdin) or -k DIR"));
    }
    let manifests = selection::documents(&args.selection.for_writing())?;
    let patch = input::read_patch(args.patch.as_deref(), args.patch_file.as_deref(), args.validate)?;
    let mut schemas = Schemas::offline();
    let mut results = Vec::with_capacity(manifests.len());
    for manifest in &manifests {
        let object = &manifest.value;
        let display = reference::display_name(object);
        let in_source = |e: Error| Error::usage(format!("{display} ({}): {e}", manifest.source));
        let typed = schemas.for_object(object).await.map_err(in_source)?;
        let patch_type = choose_type(args.patch_type, typed.takes_strategic(), &display);
        if patch_type == PatchType::Apply {
            return Err(Error::usage("--type apply needs the server's managedFields; it cannot run with --local"));
        }
        let input = plan_input(object, &patch, patch_type, &typed, typed.takes_strategic(), args, &display);
        let planned = plan(&input).map_err(in_source)?;
        print_findings(&planned.findings);
        results.push(planned.result);
    }
    for mut shown in results {
        if !args.show_secrets {
            fieldwise_kube::redact::redact(&mut shown);
        }
        printer::print_object(&shown, args.output.unwrap_or(OutputFormat::Yaml))?;
    }
    Ok(ExitCode::SUCCESS)
}
