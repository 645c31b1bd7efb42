//! `migrate`: hand an object from client-side to server-side apply, as
//! `kubectl apply --server-side` does on its first run (client-go's csaupgrade):
//! the fields of the client-side managers move into the applier's `Apply`
//! entry, in one JSON Patch of `metadata.managedFields` guarded by a `test` (and,
//! as csaupgrade does, a `replace`) of `metadata.resourceVersion`. With
//! `--drop-annotation` the same patch removes the annotation, the cure for one
//! that is too large to keep.
//!
//! The client-side managers are the `Update` managers owning the annotation (what
//! kubectl picks) plus `kubectl-client-side-apply` and `kubectl-create`: fields a
//! `kubectl create -f` set would otherwise stay co-owned by `kubectl-create`, and
//! a later server-side apply without them could never delete them.

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::fieldpath::Path;
use fieldwise_core::last_applied::{
    annotation_of, upgrade_managed_fields, CLIENT_SIDE_APPLY_MANAGER, CREATE_MANAGER, LAST_APPLIED_ANNOTATION,
};
use fieldwise_core::ownership::{managed_fields_of, Operation};
use fieldwise_kube::backup::BackupStore;
use fieldwise_kube::client::{self, Connection};
use fieldwise_kube::discovery::ResourceCatalog;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::{DryRun, KubeFlags};
use fieldwise_kube::target::ObjectRef;
use fieldwise_kube::write::PatchType;
use fieldwise_kube::{objects, printer};
use serde_json::{json, Value};

use crate::guarded::{self, resource_version, Write, MAX_ATTEMPTS};
use crate::{scan, targets, ScopeArgs, WriteArgs};

/// `migrate`'s flags.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The objects: TYPE/NAME or TYPE NAME...
    #[arg(value_name = "TYPE/NAME")]
    pub targets: Vec<String>,

    /// Scan first (with -A/-l/--kinds), then migrate every object with a finding.
    #[arg(long, conflicts_with = "targets")]
    pub from_scan: bool,

    /// The server-side apply manager that takes the fields (kubectl apply --server-side uses kubectl).
    #[arg(long, default_value = "kubectl")]
    pub field_manager: String,

    /// Also remove the last-applied annotation.
    #[arg(long)]
    pub drop_annotation: bool,

    #[command(flatten)]
    pub scope: ScopeArgs,

    #[command(flatten)]
    pub write: WriteArgs,
}

/// Runs `kubectl last-applied migrate`.
pub async fn run(kube: KubeFlags, args: MigrateArgs) -> Result<ExitCode> {
    if args.targets.is_empty() && !args.from_scan {
        return Err(Error::usage("an object is required: TYPE/NAME or --from-scan (see --help)"));
    }
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let store = BackupStore::open_default()?;
    let work = if args.from_scan {
        scan::scan(&conn, &catalog, &args.scope).await?.flagged.into_iter().map(|f| f.target).collect()
    } else {
        targets::from_args(&args.targets, &catalog, &conn)?
    };
    let mut failed = 0;
    for target in &work {
        match migrate_one(&conn, target, &args, &store).await {
            Ok((object, verb)) => report(&args, target, &object, &verb)?,
            Err(e) if args.from_scan => {
                failed += 1;
                eprintln!("error: {}: {}", target.display(), e.to_string().trim_start_matches("error: "));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// The client-side managers to upgrade, in a fixed order.
fn client_side_managers(live: &Value) -> Result<Vec<String>> {
    let entries = managed_fields_of(live).map_err(|e| Error::Other(e.to_string()))?;
    let annotation = Path::fields(["metadata", "annotations", LAST_APPLIED_ANNOTATION]);
    let mut names = vec![CLIENT_SIDE_APPLY_MANAGER.to_string(), CREATE_MANAGER.to_string()];
    let mut owners: Vec<String> = entries
        .iter()
        .filter(|e| e.operation == Operation::Update && e.fields.has(annotation.elements()))
        .map(|e| e.manager.clone())
        .collect();
    owners.sort();
    for name in owners {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

async fn migrate_one(
    conn: &Connection,
    target: &ObjectRef,
    args: &MigrateArgs,
    store: &BackupStore,
) -> Result<(Value, String)> {
    for _ in 0..MAX_ATTEMPTS {
        let live = objects::get(conn, target, None).await?;
        let names = client_side_managers(&live)?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let raw = live.pointer("/metadata/managedFields").and_then(Value::as_array).cloned().unwrap_or_default();
        let upgraded = upgrade_managed_fields(&raw, &names, &args.field_manager, "")
            .map_err(|e| Error::Other(format!("{}: {e}", target.display())))?;
        let drop = args.drop_annotation && annotation_of(&live).is_some();
        if upgraded.is_none() && !drop {
            return Ok((live, "unchanged".into()));
        }
        let rv = resource_version(&live).unwrap_or_default().to_string();
        let mut ops = vec![json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv})];
        let moved: Vec<&str> = names.iter().copied().filter(|n| raw.iter().any(|e| e["manager"] == *n)).collect();
        if let Some(list) = &upgraded {
            ops.push(json!({"op": "replace", "path": "/metadata/managedFields", "value": list}));
        }
        ops.push(json!({"op": "replace", "path": "/metadata/resourceVersion", "value": rv}));
        if drop {
            let key = LAST_APPLIED_ANNOTATION.replace('~', "~0").replace('/', "~1");
            ops.push(json!({"op": "remove", "path": format!("/metadata/annotations/{key}")}));
        }
        if upgraded.is_some() {
            eprintln!("{}: fields of {} move to {} (Apply)", target.display(), moved.join(", "), args.field_manager);
        }
        let body = Value::Array(ops);
        let write = Write {
            target,
            before: &live,
            patch_type: PatchType::Json,
            body: &body,
            field_manager: &args.field_manager,
            operation: "last-applied migrate",
        };
        match guarded::send(conn, &write, args.write.dry_run, store).await {
            Ok(written) => {
                let mut verb = format!("migrated to server-side apply ({})", args.field_manager);
                if upgraded.is_none() {
                    verb = "annotation dropped".into();
                } else if drop {
                    verb.push_str(", annotation dropped");
                }
                match args.write.dry_run {
                    DryRun::Client => verb.push_str(" (dry run)"),
                    DryRun::Server => verb.push_str(" (server dry run)"),
                    DryRun::None => {}
                }
                return Ok((written, verb));
            }
            // A failed `test` is refused as invalid (422); a stale resourceVersion as a conflict.
            Err(e) if e.is_conflict() || is_failed_test(&e) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::Other(format!("{} kept changing; gave up after {MAX_ATTEMPTS} attempts", target.display())))
}

fn is_failed_test(err: &Error) -> bool {
    matches!(err, Error::Api { code: 422 | 500, message, .. } if message.contains("test"))
}

fn report(args: &MigrateArgs, target: &ObjectRef, object: &Value, verb: &str) -> Result<()> {
    printer::print_outcome(&target.display(), object, verb, args.write.output, args.write.show_secrets)
}
