//! The safe-patch flow: read, plan, lint, dry-run, show, confirm, back up,
//! write under a resourceVersion guard, and re-plan on conflict.

use std::process::ExitCode;
use std::time::Duration;

use colored::Colorize;
use fieldwise_core::lint::{Finding, Severity};
use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_kube::backup::{BackupRecord, BackupStore};
use fieldwise_kube::client::{self, Connection};
use fieldwise_kube::diff::{redact_pair, unified, without_server_noise};
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::{DryRun, KubeFlags, OutputFormat};
use fieldwise_kube::target::{ObjectRef, TargetArgs};
use fieldwise_kube::write::{self, PatchRequest, PatchType};
use fieldwise_kube::{objects, printer};
use serde_json::Value;

use crate::input;
use crate::plan::{change_signature, plan, Plan, PlanInput};
use crate::prompt;
use crate::PatchArgs;

/// Exit code when a lint needs `--force` or the user declined.
pub const EXIT_REFUSED: u8 = 2;
/// Exit code when the object changed since the preview and the change differs.
pub const EXIT_CHANGED: u8 = 3;
/// How many times a write is retried after a conflict whose re-plan is identical.
const MAX_ATTEMPTS: u32 = 5;

/// Runs `kubectl safe-patch`.
pub async fn run(kube: KubeFlags, args: PatchArgs) -> Result<ExitCode> {
    if args.local {
        return run_local(&args);
    }
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let targets = resolve_targets(&args, &catalog, &conn)?;
    let patch =
        if args.edit { None } else { Some(input::read_patch(args.patch.as_deref(), args.patch_file.as_deref())?) };
    let mut worst = ExitCode::SUCCESS;
    for target in &targets {
        let code = patch_one(&conn, target, patch.as_ref(), &args).await?;
        if code != ExitCode::SUCCESS {
            worst = code;
        }
    }
    Ok(worst)
}

fn resolve_targets(args: &PatchArgs, catalog: &ResourceCatalog, conn: &Connection) -> Result<Vec<ObjectRef>> {
    let mut items = TargetArgs::parse(&args.targets)?;
    if let Some(file) = &args.filename {
        if !items.items.is_empty() {
            return Err(Error::usage("give either -f FILE or TYPE/NAME, not both"));
        }
        let object = input::read_object_file(file)?;
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or_default();
        let api_version = object.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        if kind.is_empty() || name.is_empty() {
            return Err(Error::usage(format!("{file}: the object needs kind and metadata.name")));
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let spelled = if group.is_empty() { kind.to_string() } else { format!("{kind}.{version}.{group}") };
        items.items.push((spelled, name.to_string()));
        let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or(&conn.namespace);
        return items.resolve(catalog, namespace);
    }
    if items.items.is_empty() {
        return Err(Error::usage("an object is required: TYPE/NAME, TYPE NAME or -f FILE (see --help)"));
    }
    let targets = items.resolve(catalog, &conn.namespace)?;
    if let Some(t) = targets.iter().find(|t| t.name.is_empty()) {
        return Err(Error::usage(format!("a name is required: {}/NAME", t.resource.display_name())));
    }
    if let Some(t) = targets.iter().find(|t| !t.resource.supports("patch")) {
        return Err(Error::usage(format!(
            "{} cannot be patched (the server does not allow it)",
            t.resource.display_name()
        )));
    }
    Ok(targets)
}

/// The patch type: the flag, else strategic for types with strategic metadata, else merge.
fn choose_type(requested: Option<PatchType>, has_schema: bool, display: &str) -> PatchType {
    match requested {
        Some(t) => t,
        None if has_schema => PatchType::Strategic,
        None => {
            eprintln!("note: {display} has no strategic merge metadata (a custom resource?): using --type merge");
            PatchType::Merge
        }
    }
}

async fn patch_one(conn: &Connection, target: &ObjectRef, patch: Option<&Value>, args: &PatchArgs) -> Result<ExitCode> {
    let display = target.display();
    let subresource = args.subresource.as_deref();
    let mut live = objects::get(conn, target, subresource).await?;
    let schema = builtin();
    let mut preview_attempts = 0;
    let ty = Gvk::of_object(&live).and_then(|g| schema.root(&g));
    let patch_type = choose_type(args.patch_type, ty.is_some(), &display);
    let owned_patch;
    let patch = match patch {
        Some(p) => p,
        None => {
            owned_patch = crate::undo::edit_to_patch(&live, patch_type, schema, ty, &display)?;
            match &owned_patch {
                Some(p) => p,
                None => {
                    eprintln!("Edit cancelled, no changes made.");
                    return Ok(ExitCode::SUCCESS);
                }
            }
        }
    };
    let make_plan = |live: &Value| plan(&plan_input(live, patch, patch_type, ty, args, &display));
    let mut current = make_plan(&live)?;
    let (preview, findings) = loop {
        if current.is_no_change(&live) {
            print_findings(&current.findings);
            print_outcome(args, &display, &live, "patched (no change)")?;
            return Ok(ExitCode::SUCCESS);
        }

        // The server's view of the exact request: defaulting, admission, validation.
        let mut preview = current.result.clone();
        let mut findings = current.findings.clone();
        if args.dry_run != DryRun::Client {
            let request = request(&current, patch_type, args, true);
            let server = match write::patch(conn, target, &request).await {
                Ok(server) => server,
                // Changed between our read and the dry-run (a controller, usually):
                // nothing is approved yet, so read again and plan again.
                Err(e) if e.is_conflict() && preview_attempts < MAX_ATTEMPTS => {
                    preview_attempts += 1;
                    live = objects::get(conn, target, subresource).await?;
                    current = make_plan(&live)?;
                    continue;
                }
                Err(e) => {
                    // The lints usually say why the server refused, and how to fix it.
                    print_findings(&findings);
                    return Err(explain_rejection(e, &display));
                }
            };
            findings.extend(fieldwise_core::lint::nulls::null_resets(&current.patch, &server));
            if without_server_noise(&server) != without_server_noise(&current.result) {
                if let Some(d) = show_diff("local prediction", "server dry-run", &current.result, &server, args) {
                    eprintln!(
                        "note: the server's result differs from the local prediction (defaulting or admission):\n{d}"
                    );
                }
            }
            preview = server;
        }
        break (preview, findings);
    };
    match show_diff(&format!("{display} (live)"), &format!("{display} (patched)"), &live, &preview, args) {
        Some(d) => eprint!("{d}"),
        None => {
            print_findings(&findings);
            print_outcome(args, &display, &live, "patched (no change)")?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    print_findings(&findings);
    let blocking: Vec<&Finding> = findings.iter().filter(|f| f.severity == Severity::NeedsForce).collect();
    if args.dry_run != DryRun::None {
        let how = if args.dry_run == DryRun::Server { "server dry run" } else { "dry run" };
        print_outcome(args, &display, &preview, &format!("patched ({how})"))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !blocking.is_empty() && !args.force {
        eprintln!("error: not writing {display}: {} finding(s) above need --force", blocking.len());
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    if !args.yes && prompt::interactive() && !prompt::confirm(&format!("Patch {display}?")) {
        eprintln!("Not patched.");
        return Ok(ExitCode::from(EXIT_REFUSED));
    }

    let approved = change_signature(&live, &current.result);
    let store = BackupStore::open_default()?;
    let mut record = backup_record(conn, target, &live, &current, patch_type);
    let mut backup_file = store.save(&record)?;
    for attempt in 1..=MAX_ATTEMPTS {
        // A test and automation hook: a command run once between the preview and the write.
        if let (1, Ok(hook)) = (attempt, std::env::var("FIELDWISE_HOOK_BEFORE_WRITE")) {
            run_hook(&hook);
        }
        match write::patch(conn, target, &request(&current, patch_type, args, false)).await {
            Ok(written) => {
                record.written(&written);
                store.update(&backup_file, &record)?;
                print_outcome(args, &display, &written, "patched")?;
                return Ok(ExitCode::SUCCESS);
            }
            Err(err) => {
                let fresh = objects::get(conn, target, subresource).await?;
                if rv(&fresh) == rv(&live) {
                    // Not a concurrency problem: the server refused the write itself.
                    return Err(explain_rejection(err, &display));
                }
                let replanned = make_plan(&fresh)?;
                if change_signature(&fresh, &replanned.result) != approved || replanned.is_no_change(&fresh) {
                    eprintln!("error: {display} changed since the preview, and the patch would now do something else; nothing was written.");
                    if let Some(d) = show_diff("previewed", "now", &live, &fresh, args) {
                        eprint!("What changed underneath:\n{d}");
                    }
                    return Ok(ExitCode::from(EXIT_CHANGED));
                }
                eprintln!("note: {display} changed since the preview (attempt {attempt}), but the patch does the same: retrying");
                live = fresh;
                current = replanned;
                record = backup_record(conn, target, &live, &current, patch_type);
                std::fs::remove_file(&backup_file).ok();
                backup_file = store.save(&record)?;
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
            }
        }
    }
    std::fs::remove_file(&backup_file).ok();
    Err(Error::Other(format!("{display} kept changing; gave up after {MAX_ATTEMPTS} attempts, nothing written")))
}

/// The planner's input from the command line's choices.
fn plan_input<'a>(
    live: &'a Value,
    patch: &'a Value,
    patch_type: PatchType,
    ty: Option<fieldwise_core::schema::TypeId>,
    args: &'a PatchArgs,
    display: &'a str,
) -> PlanInput<'a> {
    PlanInput {
        live,
        patch,
        patch_type,
        schema: builtin(),
        ty,
        field_manager: &args.field_manager,
        fix: args.fix,
        force: args.force,
        display,
    }
}

fn request<'a>(plan: &'a Plan, patch_type: PatchType, args: &'a PatchArgs, dry_run: bool) -> PatchRequest<'a> {
    PatchRequest {
        patch_type,
        body: &plan.body,
        field_manager: &args.field_manager,
        dry_run,
        force: args.force,
        subresource: args.subresource.as_deref(),
    }
}

fn backup_record(
    conn: &Connection,
    target: &ObjectRef,
    live: &Value,
    plan: &Plan,
    patch_type: PatchType,
) -> BackupRecord {
    BackupRecord::before_write(conn, target, format!("safe-patch {}", patch_type.name()), &plan.patch, live)
}

fn rv(object: &Value) -> Option<&str> {
    object.pointer("/metadata/resourceVersion").and_then(Value::as_str)
}

/// A server refusal with what to do about it.
fn explain_rejection(err: Error, display: &str) -> Error {
    match err {
        Error::Api { code: 422, reason, message, causes } => Error::Api {
            code: 422,
            reason,
            message: format!(
                "{message} (the server validated the patched {display} and refused it; nothing was written)"
            ),
            causes,
        },
        other => other,
    }
}

fn run_hook(command: &str) {
    let status = std::process::Command::new("sh").arg("-c").arg(command).status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!("warning: FIELDWISE_HOOK_BEFORE_WRITE failed: {command}");
    }
}

fn show_diff(old_label: &str, new_label: &str, old: &Value, new: &Value, args: &PatchArgs) -> Option<String> {
    let (old, new) = (without_server_noise(old), without_server_noise(new));
    let (old, new) = if args.show_secrets { (old, new) } else { redact_pair(&old, &new) };
    unified(old_label, new_label, &old, &new, colored::control::SHOULD_COLORIZE.should_colorize())
}

fn print_findings(findings: &[Finding]) {
    for f in findings {
        let label = match f.severity {
            Severity::Info => "info".normal(),
            Severity::Warning => "warning".yellow(),
            Severity::NeedsForce => "needs --force".red().bold(),
        };
        match &f.fix {
            Some(fix) => eprintln!("{label}: {} (fix: {fix})", f.message),
            None => eprintln!("{label}: {}", f.message),
        }
    }
}

fn print_outcome(args: &PatchArgs, display: &str, object: &Value, verb: &str) -> Result<()> {
    printer::print_outcome(display, object, verb, args.output, args.show_secrets)
}

/// `--local`: patch the object in the -f file offline and print the result.
fn run_local(args: &PatchArgs) -> Result<ExitCode> {
    let file = args.filename.as_deref().unwrap_or("-");
    let object = input::read_object_file(file)?;
    let patch = input::read_patch(args.patch.as_deref(), args.patch_file.as_deref())?;
    let schema = builtin();
    let ty = Gvk::of_object(&object).and_then(|g| schema.root(&g));
    let display = format!(
        "{}/{}",
        object.get("kind").and_then(Value::as_str).unwrap_or("object").to_lowercase(),
        object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
    );
    let patch_type = choose_type(args.patch_type, ty.is_some(), &display);
    if patch_type == PatchType::Apply {
        return Err(Error::usage("--type apply needs the server's managedFields; it cannot run with --local"));
    }
    let mut with_version = object.clone();
    if rv(&with_version).is_none() {
        if let Some(Value::Object(meta)) = with_version.get_mut("metadata") {
            meta.insert("resourceVersion".into(), Value::String("local".into()));
        }
    }
    let planned = plan(&plan_input(&with_version, &patch, patch_type, ty, args, &display))?;
    print_findings(&planned.findings);
    let mut result = planned.result;
    if rv(&object).is_none() {
        if let Some(Value::Object(meta)) = result.get_mut("metadata") {
            meta.remove("resourceVersion");
        }
    }
    let mut shown = result;
    if !args.show_secrets {
        fieldwise_kube::redact::redact(&mut shown);
    }
    print!("{}", printer::render(&shown, args.output.unwrap_or(OutputFormat::Yaml))?);
    Ok(ExitCode::SUCCESS)
}
