//! The one write path: every command that changes a cluster object goes through
//! here, so every write is guarded, backed up, classified and re-planned the same way.
//!
//! - [`request`]: the PATCH request in its four flavours.
//! - [`apply_dry_run`]: a server-side apply sent as a dry run to check a prediction
//!   (`owners plan`, `owners --conflicts --verify`, `owners transfer -f`): guarded,
//!   classified, and made again when the object moves.
//! - [`guard`]: the guard a write carries on the wire: the core's field guard (a JSON
//!   Patch of `test`s and changes), or the resourceVersion precondition.
//! - [`classify`]: what a failed write means: lost race, field-manager conflict,
//!   refusal, throttling, or a broken connection after which the outcome is unknown.
//!   Retries wait as [`crate::conn::backoff`] says.
//! - [`guarded`]: [`GuardedWrite`], the read, plan, dry-run, back up, send,
//!   re-plan, retry cycle of one object, driven by the command's planner.
//! - [`bulk`]: many guarded writes with bounded concurrency and a circuit breaker.
//! - [`interrupt`]: Ctrl-C and SIGTERM: writes in flight finish, nothing new starts.
//! - [`backup`]: the pre-image of every write, for `history` and `undo`.
//! - [`runs`]: the writes of one bulk command, listed and undone as one.
//! - [`settle`]: the `pending` records of a process that died, settled by the next command.
//! - [`dry_run`]: kubectl's `--dry-run` values.
//!
//! Plugins describe *what* to change (a planner from the live object to a
//! [`Planned`] patch and result); they never build a guard, sleep, retry or touch
//! a backup file.

pub mod apply_dry_run;
pub mod backup;
pub mod bulk;
pub mod classify;
pub mod dry_run;
pub mod guard;
pub mod guarded;
pub mod interrupt;
pub mod request;
pub mod runs;
pub mod settle;

pub use apply_dry_run::{Answers, ApplyDryRun, DryRunAnswer, DryRuns, Judged};
pub use dry_run::DryRun;
pub use guarded::{Committed, GuardedWrite, Intent, Planned, Planner, Preview, WriteOptions, DEFAULT_RETRY_BUDGET};
pub use request::{
    content_type, dry_run_left, dry_run_merge_patch, patch, FieldValidation, PatchRequest, PatchType,
    STRATEGIC_MERGE_PATCH,
};
