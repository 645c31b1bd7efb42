//! `undo` and `history` (backups of pre-images), and `--edit` (a safe kubectl edit).

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::schema::{Schema, TypeId};
use fieldwise_core::{merge_patch, strategic};
use fieldwise_kube::backup::{Backup, BackupRecord, BackupStore};
use fieldwise_kube::client::{self, Connection};
use fieldwise_kube::diff::{redact_pair, unified, without_server_noise};
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::KubeFlags;
use fieldwise_kube::target::{ObjectRef, TargetArgs};
use fieldwise_kube::write::{self, PatchRequest, PatchType};
use fieldwise_kube::{objects, printer};
use serde_json::{Map, Value};

use crate::flow::{EXIT_CHANGED, EXIT_REFUSED};
use crate::prompt;

/// `kubectl safe-patch undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The object: TYPE/NAME or TYPE NAME.
    #[arg(value_name = "TYPE/NAME", required = true)]
    targets: Vec<String>,
    /// Restore the pre-image of the backup taken at this time (as `history` prints it, or a prefix of it).
    #[arg(long, value_name = "TIME")]
    to: Option<String>,
    /// Restore even if the object changed since the write being undone.
    #[arg(long)]
    force: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    yes: bool,
    /// Field manager recorded for the restoring write.
    #[arg(long, default_value = "kubectl-safe-patch")]
    field_manager: String,
    /// Show Secret values in the diff.
    #[arg(long)]
    show_secrets: bool,
}

/// `kubectl safe-patch history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The object: TYPE/NAME or TYPE NAME.
    #[arg(value_name = "TYPE/NAME", required = true)]
    targets: Vec<String>,
}

async fn one_target(kube: &KubeFlags, targets: &[String]) -> Result<(Connection, ObjectRef)> {
    let conn = client::connect(kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let mut resolved = TargetArgs::parse(targets)?.resolve(&catalog, &conn.namespace)?;
    if resolved.len() != 1 || resolved[0].name.is_empty() {
        return Err(Error::usage("exactly one object is required: TYPE/NAME"));
    }
    Ok((conn, resolved.remove(0)))
}

fn backups_of(conn: &Connection, target: &ObjectRef) -> Result<Vec<Backup>> {
    BackupStore::open_default()?.list(
        &conn.context,
        target.namespace.as_deref().unwrap_or(""),
        &target.resource.plural_group(),
        &target.name,
    )
}

/// Lists the backups of one object.
pub async fn history(kube: KubeFlags, args: HistoryArgs) -> Result<ExitCode> {
    let (conn, target) = one_target(&kube, &args.targets).await?;
    let backups = backups_of(&conn, &target)?;
    if backups.is_empty() {
        println!("No backups of {} in context {}.", target.display(), conn.context);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<26} {:<24} {:<14} {:<14} FILE", "TIME", "OPERATION", "BEFORE", "AFTER");
    for b in &backups {
        let before = b.record.before.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("-");
        let after = b.record.after_resource_version.as_deref().unwrap_or("(not written)");
        println!("{:<26} {:<24} {:<14} {:<14} {}", b.record.time, b.record.operation, before, after, b.file.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// What a restore writes: everything a user could have set, none of what
/// the server or a controller owns (status, server metadata, and labels or
/// annotations a controller manages, like `deployment.kubernetes.io/revision`).
fn restorable(object: &Value, controller_keys: &[(String, String)]) -> Value {
    let mut copy = object.clone();
    if let Value::Object(map) = &mut copy {
        map.remove("status");
        if let Some(Value::Object(meta)) = map.get_mut("metadata") {
            for key in ["managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"] {
                meta.remove(key);
            }
            for (field, key) in controller_keys {
                if let Some(Value::Object(entries)) = meta.get_mut(field) {
                    entries.remove(key);
                }
            }
        }
    }
    copy
}

/// `(labels|annotations, key)` pairs that controllers own in `live`'s managedFields.
fn controller_owned_metadata(live: &Value) -> Vec<(String, String)> {
    use fieldwise_core::fieldpath::PathElement;
    use fieldwise_core::ownership::{managed_fields_of, ManagerKind};
    let mut keys = Vec::new();
    for entry in managed_fields_of(live).unwrap_or_default() {
        if entry.kind() != ManagerKind::Controller {
            continue;
        }
        for path in entry.fields.leaves().iter() {
            if let [PathElement::Field(m), PathElement::Field(field), PathElement::Field(key), ..] = path.elements() {
                if m == "metadata" && (field == "labels" || field == "annotations") {
                    keys.push((field.clone(), key.clone()));
                }
            }
        }
    }
    keys
}

/// Whether someone other than a controller changed the object since `after`:
/// controllers' own writes (status, revision annotations) do not count.
fn changed_by_others(after: &Value, live: &Value) -> bool {
    let keys = controller_owned_metadata(live);
    restorable(after, &keys) != restorable(live, &keys)
}

/// Restores a pre-image with a guarded JSON merge patch (lists restored whole).
pub async fn undo(kube: KubeFlags, args: UndoArgs) -> Result<ExitCode> {
    let (conn, target) = one_target(&kube, &args.targets).await?;
    let display = target.display();
    let backups = backups_of(&conn, &target)?;
    let chosen = match &args.to {
        Some(time) => backups.iter().rev().find(|b| b.record.time.starts_with(time.as_str())),
        None => backups.iter().rev().find(|b| b.record.after_resource_version.is_some()),
    }
    .ok_or_else(|| match &args.to {
        Some(time) => {
            Error::usage(format!("no backup of {display} at {time}; see `kubectl safe-patch history {display}`"))
        }
        None => Error::usage(format!("no backup of {display} to undo (context {})", conn.context)),
    })?;
    let live = objects::get(&conn, &target, None).await?;
    let live_rv = live.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
    let untouched = chosen.record.after.as_ref().is_some_and(|after| !changed_by_others(after, &live));
    match chosen.record.after_resource_version.as_deref() {
        Some(after) if after == live_rv || untouched => {}
        _ if args.force => eprintln!("warning: {display} changed since that write; restoring anyway (--force)"),
        Some(after) => {
            eprintln!(
                "error: {display} changed since the write being undone (resourceVersion {after}, now {live_rv}); nothing was written. Use --force to restore anyway."
            );
            return Ok(ExitCode::from(EXIT_CHANGED));
        }
        None => {
            eprintln!("error: the write of that backup never completed; use --force to restore its pre-image anyway");
            return Ok(ExitCode::from(EXIT_CHANGED));
        }
    }
    // What the restore changes, for the preview; the write below recomputes it against what it guards.
    let controller_keys = controller_owned_metadata(&live);
    let preview = merge_patch::create_two_way(
        &restorable(&live, &controller_keys),
        &restorable(&chosen.record.before, &controller_keys),
    )
    .map_err(|e| Error::Other(format!("cannot compute the restore patch: {e}")))?;
    if preview.as_object().is_some_and(Map::is_empty) {
        println!("{display} restored (no change)");
        return Ok(ExitCode::SUCCESS);
    }
    // Show exactly what is restored: no status, no server metadata, no controller-owned keys.
    let (old, new) = (restorable(&live, &controller_keys), restorable(&chosen.record.before, &controller_keys));
    let (old, new) = if args.show_secrets { (old, new) } else { redact_pair(&old, &new) };
    if let Some(d) = unified(
        "live",
        &format!("backup {}", chosen.record.time),
        &old,
        &new,
        colored::control::SHOULD_COLORIZE.should_colorize(),
    ) {
        eprint!("{d}");
    }
    if !args.yes && prompt::interactive() && !prompt::confirm(&format!("Restore {display}?")) {
        eprintln!("Not restored.");
        return Ok(ExitCode::from(EXIT_REFUSED));
    }
    // The restore is a write like any other: guarded, and backed up. A conflict
    // caused by a controller (status, revision annotations) is re-planned and
    // retried; a change by anyone else stops the restore.
    let store = BackupStore::open_default()?;
    let mut live = live;
    for attempt in 1..=MAX_RESTORE_ATTEMPTS {
        let keys = controller_owned_metadata(&live);
        let mut patch =
            merge_patch::create_two_way(&restorable(&live, &keys), &restorable(&chosen.record.before, &keys))
                .map_err(|e| Error::Other(format!("cannot compute the restore patch: {e}")))?;
        if patch.as_object().is_some_and(Map::is_empty) {
            println!("{display} restored (no change)");
            return Ok(ExitCode::SUCCESS);
        }
        let resource_version = live.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null);
        if let Value::Object(map) = &mut patch {
            let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert("resourceVersion".into(), resource_version);
            }
        }
        let mut record = BackupRecord::before_write(&conn, &target, "safe-patch undo", &patch, &live);
        let file = store.save(&record)?;
        let request = PatchRequest {
            patch_type: PatchType::Merge,
            body: &patch,
            field_manager: &args.field_manager,
            dry_run: false,
            force: false,
            subresource: None,
        };
        match write::patch(&conn, &target, &request).await {
            Ok(written) => {
                record.written(&written);
                store.update(&file, &record)?;
                println!("{display} restored to the backup of {}", chosen.record.time);
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => {
                std::fs::remove_file(&file).ok();
                if !e.is_conflict() {
                    return Err(e);
                }
                live = objects::get(&conn, &target, None).await?;
                let only_controllers =
                    chosen.record.after.as_ref().is_some_and(|after| !changed_by_others(after, &live));
                if !(only_controllers || args.force) {
                    eprintln!("error: {display} changed while restoring; nothing was written. Run undo again.");
                    return Ok(ExitCode::from(EXIT_CHANGED));
                }
                tokio::time::sleep(std::time::Duration::from_millis(100 * u64::from(attempt))).await;
            }
        }
    }
    Err(Error::Other(format!("{display} kept changing while restoring; gave up after {MAX_RESTORE_ATTEMPTS} attempts")))
}

/// How many times a restore is retried after a controller's write got in between.
const MAX_RESTORE_ATTEMPTS: u32 = 5;

/// `--edit`: opens `$KUBE_EDITOR`/`$EDITOR` (else `vi`) on the live object and
/// returns the two-way patch of the edit; `None` when nothing was changed.
pub fn edit_to_patch(
    live: &Value,
    patch_type: PatchType,
    schema: &Schema,
    ty: Option<TypeId>,
    display: &str,
) -> Result<Option<Value>> {
    let original = without_server_noise(live);
    let text = printer::yaml(&original)?;
    let path = std::env::temp_dir().join(format!("safe-patch-edit-{}.yaml", std::process::id()));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::Other(format!("cannot create {}: {e}", path.display())))?;
        f.write_all(
            format!("# Editing {display}. Save and quit to preview the patch; an unchanged file cancels.\n{text}")
                .as_bytes(),
        )
        .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
    }
    let editor = std::env::var("KUBE_EDITOR").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("editor")
        .arg(&path)
        .status()
        .map_err(|e| Error::Other(format!("cannot run the editor {editor:?}: {e}")))?;
    let edited_text =
        std::fs::read_to_string(&path).map_err(|e| Error::Other(format!("cannot read {}: {e}", path.display())));
    std::fs::remove_file(&path).ok();
    if !status.success() {
        return Err(Error::Other(format!("the editor {editor:?} failed; nothing was changed")));
    }
    let edited: Value = serde_yaml::from_str(&edited_text?).map_err(|e| {
        Error::usage(format!("the edited object is not valid YAML: {}", e.to_string().lines().next().unwrap_or("")))
    })?;
    if edited == original {
        return Ok(None);
    }
    let patch = match (patch_type, ty) {
        (PatchType::Strategic, Some(ty)) => strategic::create_two_way(&original, &edited, schema, ty)
            .map_err(|e| Error::usage(format!("cannot turn the edit into a patch: {e}")))?,
        _ => merge_patch::create_two_way(&original, &edited)
            .map_err(|e| Error::usage(format!("cannot turn the edit into a patch: {e}")))?,
    };
    Ok(Some(patch))
}
