//! `history`: the backups the write path keeps of an object, the bulk runs on the
//! cluster (`--runs`), or a prune of old backups (`--prune`). Listing first settles the
//! records a stopped command left `pending` ([`settle`]).

use std::process::ExitCode;

use clap::Args;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::Result;
use fieldwise_kube::write::backup::{parse_age, parse_keep, BackupStore, ClusterKey, ObjectKey, Retention, WriteState};
use fieldwise_kube::write::runs::{self, Run};
use fieldwise_kube::write::settle;
use serde_json::Value;

use crate::undo::one_target;

/// `kubectl safe-patch history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The object: TYPE/NAME or TYPE NAME (with --prune: optional; without, every object).
    #[arg(value_name = "TYPE/NAME", required_unless_present_any = ["prune", "runs"])]
    targets: Vec<String>,
    /// List the bulk runs on the cluster (newest last), with their ids for `undo --run ID`.
    #[arg(long, conflicts_with_all = ["targets", "prune"])]
    runs: bool,
    /// Remove the backups the retention policy does not keep, instead of listing them.
    #[arg(long)]
    prune: bool,
    /// With --prune: keep at most this many backups per object (default: $FIELDWISE_BACKUP_KEEP, else 20; 0 for any number).
    #[arg(long, value_name = "N", requires = "prune")]
    keep: Option<String>,
    /// With --prune: remove backups older than this, e.g. 30d, 12h (default: $FIELDWISE_BACKUP_MAX_AGE, else 30d; 0 for never).
    #[arg(long, value_name = "AGE", requires = "prune")]
    max_age: Option<String>,
}

/// Lists the backups of one object, the runs on the cluster, or prunes backups.
pub async fn history(kube: KubeFlags, args: HistoryArgs) -> Result<ExitCode> {
    let store = BackupStore::open_default()?;
    if args.runs {
        let conn = client::connect(&kube).await?;
        settle::abandoned_writes(&conn, &store).await?;
        print_runs(&runs::runs(&store, &ClusterKey::of(&conn))?, &conn.server);
        return Ok(ExitCode::SUCCESS);
    }
    if args.prune {
        let mut policy = Retention::from_env()?;
        if let Some(keep) = &args.keep {
            policy.keep = parse_keep(keep, "--keep")?;
        }
        if let Some(age) = &args.max_age {
            policy.max_age = parse_age(age, "--max-age")?;
        }
        let (report, scope) = if args.targets.is_empty() {
            (store.prune_all(policy)?, "every object".to_string())
        } else {
            let (conn, target) = one_target(&kube, &args.targets).await?;
            (store.prune(&ObjectKey::of(&conn, &target), policy)?, target.display())
        };
        println!("Pruned {} backup(s) of {scope}; {} kept.", report.removed, report.kept);
        return Ok(ExitCode::SUCCESS);
    }
    let (conn, target) = one_target(&kube, &args.targets).await?;
    settle::abandoned_writes(&conn, &store).await?;
    let backups = store.list(&ObjectKey::of(&conn, &target))?;
    if backups.is_empty() {
        println!("No backups of {} on this cluster ({}).", target.display(), conn.server);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<26} {:<30} {:<14} {:<14} FILE", "TIME", "OPERATION", "BEFORE", "AFTER");
    for b in &backups {
        let before = b.record.before.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or("-");
        let after = match (b.record.state, b.record.after_resource_version.as_deref()) {
            (WriteState::Written, Some(rv)) => rv,
            (WriteState::Unknown, _) => "(unknown)",
            _ => "(not confirmed)",
        };
        let mut operation = match &b.record.subresource {
            Some(sub) => format!("{} ({sub})", b.record.operation),
            None => b.record.operation.clone(),
        };
        if let Some(run) = &b.record.provenance.run {
            operation = format!("{operation} [run {run}]");
        }
        println!("{:<26} {:<30} {:<14} {:<14} {}", b.record.time, operation, before, after, b.file.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The runs table: id, start, operation, objects written (and unknown), what it undid.
fn print_runs(runs: &[Run], server: &str) {
    if runs.is_empty() {
        println!("No bulk runs on this cluster ({server}).");
        return;
    }
    println!("{:<22} {:<26} {:<22} {:<10} UNDOES", "RUN", "STARTED", "OPERATION", "OBJECTS");
    for run in runs {
        let objects = match run.unknown() {
            0 => run.written().to_string(),
            unknown => format!("{}+{unknown}?", run.written()),
        };
        let undoes = run.undoes_run.as_deref().unwrap_or("-");
        println!("{:<22} {:<26} {:<22} {:<10} {undoes}", run.id, run.started, run.operation, objects);
    }
}
