//! [`GuardedWrite`]: read, plan, dry-run, back up, send under a guard, classify
//! the answer, re-read and re-plan, retry or stop. Every command that writes
//! goes through here, so every write has the same guarantees.
//!
//! A command describes *what* to change as a planner: a function from the live
//! object to a [`Planned`] change (the patch without its guard, and the object it
//! should produce). The first plan is what the user previews and approves: its
//! [`Approved`] change (the fields it touches, with their values before and after,
//! and where it puts list entries) is the approved intent.
//!
//! The guard is the core's [`guard`]: where it can, the write is sent as a JSON
//! Patch whose `test`s pin exactly the fields the change depends on, so writers of
//! other fields never make it fail; otherwise (server-side apply, a change derived
//! from the whole object, values the server cannot test) the planned patch is sent
//! with the object's resourceVersion. When the write loses a race (409, or a failed
//! `test`: 422), the object is read again and planned again, and the core's
//! [`decide`] says what follows: send the new plan without asking again (it makes
//! the approved change), succeed "(no change)" (somebody made the same change), or
//! write nothing and exit 3 naming what moved.

use std::time::Duration;

use fieldwise_core::schema::{Gvk, Schema, TypeId};
use fieldwise_core::write::guard::{guard, server_values_on_plan};
use fieldwise_core::write::replan::{decide, Approved, Conflict, Replan};
use serde_json::Value;

use super::classify::{classify, Answer};
use super::guard::{request_of, resource_version, GuardedRequest};
use super::interrupt::{self, InFlight};
use super::request::{patch, FieldValidation, PatchRequest, PatchType};
use super::settle;
use crate::api::objects;
use crate::api::reference::ObjectRef;
use crate::conn::backoff::Backoff;
use crate::conn::client::Connection;
use crate::conn::error::ConnError;
use crate::conn::flags::KubeFlags;
use crate::error::{Error, Result, StatusCause};
use crate::output::diff;
use crate::write::backup::{off_thread, BackupRecord, BackupStore, ObjectKey, PendingBackup, Provenance, Retention};

/// How long a write keeps retrying when `--request-timeout` does not say.
pub const DEFAULT_RETRY_BUDGET: Duration = Duration::from_secs(30);

/// A change as a command plans it against one version of the object (patch type,
/// patch without its guard, result, findings); defined in the core crate, where the
/// planning is.
pub use fieldwise_core::plan::Planned;

/// A planner: from the live object to the change. It is called again after every lost race.
pub type Planner<'p> = dyn FnMut(&Value) -> Result<Planned> + 'p;

/// What the user approved, and so which re-plans may be sent without asking again, and
/// which guard a write can carry; defined in the core crate, beside the re-plan decision.
pub use fieldwise_core::write::replan::Intent;

/// How to write.
#[derive(Debug, Clone)]
pub struct WriteOptions<'a> {
    /// What the user approved (see [`Intent`]).
    pub intent: Intent,
    /// What the backup records as the operation (`safe-patch strategic`, `last-applied repair`).
    pub operation: String,
    /// The field manager recorded in managedFields.
    pub field_manager: &'a str,
    /// For server-side apply: take fields other managers own.
    pub force: bool,
    /// Write through this subresource (`status`, `scale`).
    pub subresource: Option<&'a str>,
    /// What the server does with fields the type does not have (`--validate`).
    pub validation: FieldValidation,
    /// The schema that tells list entries apart when effects are compared.
    pub schema: &'a Schema,
    /// The object's type in `schema`, if known.
    pub ty: Option<TypeId>,
    /// How long to keep retrying lost races (and to learn the outcome of a broken connection).
    pub retry_budget: Duration,
    /// Show Secret values in the diff of what moved.
    pub show_secrets: bool,
}

impl<'a> WriteOptions<'a> {
    /// The retry budget the flags ask for: `--request-timeout`, else [`DEFAULT_RETRY_BUDGET`].
    pub fn retry_budget(flags: &KubeFlags) -> Result<Duration> {
        Ok(flags.timeout()?.unwrap_or(DEFAULT_RETRY_BUDGET))
    }

    /// The options of a write to `live` recorded as `operation` by `field_manager`: the
    /// built-in schema with `live`'s type, the approved intent the values, no force, no
    /// subresource, strict validation, Secret values hidden. The setters below change one each.
    pub fn new(operation: impl Into<String>, field_manager: &'a str, live: &Value, retry_budget: Duration) -> Self {
        let schema = fieldwise_core::schema::builtin();
        WriteOptions {
            intent: Intent::Values,
            operation: operation.into(),
            field_manager,
            force: false,
            subresource: None,
            validation: FieldValidation::Strict,
            schema,
            ty: Gvk::of_object(live).and_then(|gvk| schema.root(&gvk)),
            retry_budget,
            show_secrets: false,
        }
    }

    /// What the user approved.
    pub fn intent(self, intent: Intent) -> Self {
        WriteOptions { intent, ..self }
    }

    /// Take fields other managers own (server-side apply's force).
    pub fn force(self, force: bool) -> Self {
        WriteOptions { force, ..self }
    }

    /// Write through this subresource.
    pub fn subresource(self, subresource: Option<&'a str>) -> Self {
        WriteOptions { subresource, ..self }
    }

    /// What the server does with fields the type does not have.
    pub fn validation(self, validation: FieldValidation) -> Self {
        WriteOptions { validation, ..self }
    }

    /// A schema of the object's type other than the built-in one (the server's OpenAPI).
    pub fn schema(self, schema: &'a Schema, ty: Option<TypeId>) -> Self {
        WriteOptions { schema, ty, ..self }
    }

    /// Show Secret values in the diff of what moved.
    pub fn show_secrets(self, show_secrets: bool) -> Self {
        WriteOptions { show_secrets, ..self }
    }
}

/// A planned change, before it is written: what the user sees and approves.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The object the change was planned against.
    pub live: Value,
    /// The change.
    pub planned: Planned,
    /// What it does, field by field and entry by entry: the approved intent.
    pub approved: Approved,
    /// The server's result of the exact request as a dry run, when one was made.
    pub server_result: Option<Value>,
}

impl Preview {
    /// Whether the change changes nothing (nothing is sent then).
    pub fn is_no_change(&self) -> bool {
        self.approved.is_no_change()
    }

    /// The expected result: the server's dry run if there was one, else the local plan's.
    pub fn result(&self) -> &Value {
        self.server_result.as_ref().unwrap_or(&self.planned.result)
    }
}

/// How a write ended well.
#[derive(Debug, Clone)]
pub enum Committed {
    /// Written; the object the server answered with.
    Written(Value),
    /// Nothing to write: the object already is what the change makes it.
    NoChange(Value),
}

impl Committed {
    /// The object after the write.
    pub fn object(&self) -> &Value {
        match self {
            Committed::Written(o) | Committed::NoChange(o) => o,
        }
    }
}

/// One guarded write of one object.
pub struct GuardedWrite<'a> {
    conn: &'a Connection,
    target: &'a ObjectRef,
    options: WriteOptions<'a>,
    provenance: Provenance,
}

impl<'a> GuardedWrite<'a> {
    /// A write of `target` (through `options.subresource`, if any).
    pub fn new(conn: &'a Connection, target: &'a ObjectRef, options: WriteOptions<'a>) -> Self {
        GuardedWrite { conn, target, options, provenance: Provenance::default() }
    }

    /// The same write, its backup record naming its bulk run (and, for a restore, what it
    /// undoes): see [`Provenance`].
    pub fn with_provenance(mut self, provenance: Provenance) -> Self {
        self.provenance = provenance;
        self
    }

    /// Reads the object (or its subresource) as it is now.
    pub async fn read(&self) -> Result<Value> {
        objects::get(self.conn, self.target, self.options.subresource).await
    }

    /// Plans the change against `live`, locally.
    pub fn plan(&self, live: Value, planner: &mut Planner<'_>) -> Result<Preview> {
        let planned = planner(&live)?;
        let approved = Approved::new(self.options.intent, &live, &planned.result, self.options.schema, self.options.ty);
        Ok(Preview { live, planned, approved, server_result: None })
    }

    /// Sends the exact request as a server-side dry run and keeps the server's result, so that
    /// the preview differs from the plan only by what the server adds (defaulting, admission),
    /// never by another writer's change. A whole-object guard is pinned to the version planned
    /// against by its resourceVersion; a field guard is not, so that writers of other fields
    /// do not make each other's dry runs fail: when it met a newer version, only the values
    /// where it writes are taken from the server (`fieldwise_core::write::guard::server_values_on_plan`).
    /// When what the change depends on moved, nothing is approved yet: the object is read and
    /// planned again.
    pub async fn dry_run(&self, preview: &mut Preview, planner: &mut Planner<'_>) -> Result<()> {
        let mut backoff = Backoff::new(self.options.retry_budget);
        run_hook_before_dry_run(self.target);
        loop {
            if preview.is_no_change() {
                return Ok(());
            }
            let request = self.request(&preview.live, &preview.planned)?;
            let planned_on = resource_version(&preview.live).map(String::from);
            let err = match self.send(&request, true).await {
                // Somebody added an entry this change adds, meanwhile: plan again on it.
                Ok(server) if request.taking_back(&server).is_some() => None,
                Ok(server) => {
                    preview.server_result = Some(if resource_version(&server) == planned_on.as_deref() {
                        server
                    } else {
                        server_values_on_plan(&preview.planned.result, &server, &request.body, &request.appended)
                    });
                    return Ok(());
                }
                Err(e) => Some(e),
            };
            if let Some(err) = err {
                match classify(err, request.patch_type) {
                    Answer::Moved(e) | Answer::Throttled(e) => {
                        let Some(wait) = backoff.next_wait() else { return Err(e) };
                        tokio::time::sleep(wait).await;
                        let fresh = self.read().await?;
                        let unmoved = resource_version(&fresh) == planned_on.as_deref();
                        if unmoved && e.server_code() != Some(429) {
                            return Err(e); // not a race: the server refuses this request
                        }
                        *preview = self.plan(fresh, planner)?;
                        continue;
                    }
                    Answer::FieldManagerConflict(causes) => return Err(self.field_manager_conflict(causes)),
                    Answer::Refused(e) | Answer::NotSent(e) | Answer::MaybeSent(e) => return Err(e),
                }
            }
            let fresh = self.read().await?;
            *preview = self.plan(fresh, planner)?;
        }
    }

    /// Writes the approved change: backs up the pre-image, sends it under a guard,
    /// and on a lost race re-reads and re-plans (see the module docs). A preview that
    /// changes nothing sends nothing.
    pub async fn commit(&self, preview: Preview, planner: &mut Planner<'_>) -> Result<Committed> {
        if preview.is_no_change() {
            return Ok(Committed::NoChange(preview.live));
        }
        // From here to the settled record, a first Ctrl-C lets the write finish (see [`interrupt`]).
        let _in_flight = InFlight::start();
        if let Some(err) = self.interrupted() {
            return Err(err);
        }
        let store = BackupStore::open_default()?;
        settle::abandoned_writes_once(self.conn, &store).await;
        let Preview { mut live, mut planned, approved, .. } = preview;
        let mut record = BackupRecord::before_write(
            self.conn,
            self.target,
            self.options.subresource,
            &self.options.operation,
            &planned.patch,
            &live,
        );
        record.provenance = self.provenance.clone();
        record.patch_type = Some(planned.patch_type.name().to_string());
        let (key, settle_against) = (ObjectKey::of(self.conn, self.target), live.clone());
        let read_path = self.target.path(self.options.subresource)?;
        let mut pending = off_thread({
            let store = store.clone();
            move || {
                // Earlier writes whose outcome was unknown, and that this version shows never landed.
                if let Err(e) = store.settle_unknown(&key, &settle_against) {
                    eprintln!("warning: {}", e);
                }
                store.begin(record, &read_path)
            }
        })
        .await?;
        run_hook_before_write(self.target);
        if let Some(err) = self.interrupted() {
            return Err(discarded(pending, err));
        }
        let mut backoff = Backoff::new(self.options.retry_budget);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let request = match self.request(&live, &planned) {
                Ok(request) => request,
                Err(e) => return Err(discarded(pending, e)),
            };
            let planned_against = resource_version(&live).map(String::from);
            let moved = |fresh: &Value| resource_version(fresh) != planned_against.as_deref();
            let fresh = match self.send(&request, false).await {
                Ok(written) => match self.take_back_if_added_twice(&request, &written).await {
                    None => {
                        self.record_written(pending, &store, &written).await?;
                        return Ok(Committed::Written(written));
                    }
                    // Nothing of this write is left: plan again on what the other writer made.
                    Some(Ok(after)) => after,
                    Some(Err(e)) => {
                        self.record_written(pending, &store, &written).await?;
                        return Err(e);
                    }
                },
                Err(err) => {
                    match classify(err, request.patch_type) {
                        Answer::FieldManagerConflict(causes) => {
                            return Err(discarded(pending, self.field_manager_conflict(causes)));
                        }
                        Answer::Refused(e) | Answer::NotSent(e) => return Err(discarded(pending, e)),
                        Answer::Throttled(e) => {
                            let Some(wait) = backoff.next_wait() else { return Err(discarded(pending, e)) };
                            tokio::time::sleep(wait).await;
                            if let Some(err) = self.interrupted() {
                                return Err(discarded(pending, err));
                            }
                            continue;
                        }
                        Answer::MaybeSent(e) => {
                            let Some(fresh) = self.read_after_failure(&mut backoff).await else {
                                let backup = pending.unknown()?;
                                return Err(Error::OutcomeUnknown {
                                    object: self.target.display(),
                                    reason: transport_reason(&e),
                                    backup: Some(backup),
                                });
                            };
                            if moved(&fresh) && approved.holds_in(&fresh, self.options.schema) {
                                eprintln!(
                                    "note: the connection failed after the write of {} was sent; reading it again shows the write landed",
                                    self.target.display()
                                );
                                self.record_written(pending, &store, &fresh).await?;
                                return Ok(Committed::Written(fresh));
                            }
                            fresh
                        }
                        Answer::Moved(e) => {
                            let fresh = match self.read().await {
                                Ok(fresh) => fresh,
                                Err(read_error) => return Err(discarded(pending, read_error)),
                            };
                            if !moved(&fresh) {
                                return Err(discarded(pending, e)); // not a race: the server refuses this request
                            }
                            fresh
                        }
                    }
                }
            };
            // Another object under the same name is not the one previewed: nothing is planned on it.
            if let Some(recreated) = approved.recreated_as(&fresh) {
                return Err(discarded(pending, self.changed(&live, &fresh, &recreated)));
            }
            // The object moved (or the write did not land): plan again, and let the core decide.
            let replanned = match planner(&fresh) {
                Ok(p) => p,
                Err(e) => {
                    let conflict = Conflict::NoLongerApplies { reason: e.to_string() };
                    return Err(discarded(pending, self.changed(&live, &fresh, &conflict)));
                }
            };
            match decide(&approved, &fresh, &replanned.result, self.options.schema, self.options.ty) {
                Replan::Proceed => {}
                Replan::AlreadyDone => {
                    pending.discard();
                    return Ok(Committed::NoChange(fresh)); // somebody else made the same change
                }
                Replan::Conflict(conflict) => return Err(discarded(pending, self.changed(&live, &fresh, &conflict))),
            }
            let Some(wait) = backoff.next_wait() else {
                pending.discard();
                return Err(Error::KeptChanging { object: self.target.display(), attempts, waited: backoff.elapsed() });
            };
            tokio::time::sleep(wait).await;
            if let Some(err) = self.interrupted() {
                return Err(discarded(pending, err));
            }
            pending.rebase(&fresh, &replanned.patch)?;
            live = fresh;
            planned = replanned;
        }
    }

    /// The request that writes `planned`, planned against `live`, under its guard (see the module docs).
    fn request(&self, live: &Value, planned: &Planned) -> Result<GuardedRequest> {
        let guard = guard(live, planned, self.options.intent, self.options.schema, self.options.ty);
        request_of(guard, planned, live).ok_or_else(|| Error::Unsupported {
            what: format!("{} has no metadata.resourceVersion to guard the write with", self.target.display()),
        })
    }

    /// When the write named an entry it added twice (somebody else added the same entry at
    /// the same time; the guard could not pin that, see `fieldwise_core::write::guard`): takes this
    /// write's copies out again. `Some(Ok(object))`, the object without them, to plan again
    /// on; `Some(Err(_))` when that failed and both copies stay; `None` when every added entry
    /// is there once.
    async fn take_back_if_added_twice(&self, request: &GuardedRequest, written: &Value) -> Option<Result<Value>> {
        let back = request.taking_back(written)?;
        let lists: Vec<String> = request.appended.iter().map(|a| a.list.clone()).collect();
        eprintln!(
            "note: another writer added the same entry to {} of {} at the same time; taking this write's copy out again",
            lists.join(", "),
            self.target.display()
        );
        let taking_back = GuardedRequest { body: back, patch_type: PatchType::Json, appended: Vec::new() };
        Some(self.send(&taking_back, false).await.map_err(|e| Error::AddedTwice {
            object: self.target.display(),
            lists,
            reason: e.to_string(),
        }))
    }

    /// After a stop signal nothing new is sent: the error to end this write with.
    fn interrupted(&self) -> Option<Error> {
        interrupt::received().map(|signal| Error::Interrupted { object: self.target.display(), signal: signal.name() })
    }

    async fn send(&self, request: &GuardedRequest, dry_run: bool) -> Result<Value> {
        let request = PatchRequest {
            patch_type: request.patch_type,
            body: &request.body,
            field_manager: self.options.field_manager,
            dry_run,
            force: self.options.force,
            subresource: self.options.subresource,
            validation: self.options.validation,
        };
        patch(self.conn, self.target, &request).await
    }

    /// After a broken connection: read until the server answers or the budget runs out.
    async fn read_after_failure(&self, backoff: &mut Backoff) -> Option<Value> {
        loop {
            match self.read().await {
                Ok(fresh) => return Some(fresh),
                Err(e) if e.is_transport() || e.server_code().is_some_and(|code| code >= 500) => {
                    tokio::time::sleep(backoff.next_wait()?).await;
                }
                Err(_) => return None,
            }
        }
    }

    /// Marks the backup written and prunes the object's old backups (see [`off_thread`]).
    async fn record_written(&self, pending: PendingBackup, store: &BackupStore, written: &Value) -> Result<()> {
        let (store, key, written, name) =
            (store.clone(), ObjectKey::of(self.conn, self.target), written.clone(), self.target.display());
        off_thread(move || {
            pending.written(&written)?;
            if let Err(e) = Retention::from_env().and_then(|policy| store.prune(&key, policy)) {
                eprintln!("warning: backups of {name} were not pruned: {}", e);
            }
            Ok(())
        })
        .await
    }

    fn field_manager_conflict(&self, conflicts: Vec<StatusCause>) -> Error {
        Error::FieldManagerConflict {
            object: self.target.display(),
            field_manager: self.options.field_manager.to_string(),
            conflicts,
        }
    }

    fn changed(&self, previewed: &Value, now: &Value, conflict: &Conflict) -> Error {
        Error::ChangedSincePreview {
            object: self.target.display(),
            reason: conflict.to_string(),
            what_moved: diff::human("previewed", "now", previewed, now, self.options.show_secrets),
        }
    }
}

/// Removes the backup of a write that did not happen, and passes the error on.
fn discarded(pending: PendingBackup, err: Error) -> Error {
    pending.discard();
    err
}

fn transport_reason(err: &Error) -> String {
    match err {
        Error::Conn(ConnError::Unreachable { reason, .. }) => reason.clone(),
        other => other.to_string(),
    }
}

/// `FIELDWISE_HOOK_BEFORE_WRITE`: a shell command run once between the preview and
/// the write (of each object, in a bulk run), for the end-to-end suite, which plays the
/// concurrent writer (or freezes the apiserver) with it; it finds the object in
/// `FIELDWISE_HOOK_NAMESPACE` and `FIELDWISE_HOOK_NAME`. Compiled only with the
/// `test-hooks` feature, which the end-to-end crate turns on: shipped binaries never run
/// a command from the environment.
#[cfg(feature = "test-hooks")]
fn run_hook_before_write(target: &ObjectRef) {
    run_hook("FIELDWISE_HOOK_BEFORE_WRITE", target);
}

/// `FIELDWISE_HOOK_BEFORE_DRY_RUN`: the same, run once between the read the preview is
/// planned on and its first server dry run (the concurrent writer the dry run must not
/// attribute to the change).
#[cfg(feature = "test-hooks")]
fn run_hook_before_dry_run(target: &ObjectRef) {
    run_hook("FIELDWISE_HOOK_BEFORE_DRY_RUN", target);
}

#[cfg(feature = "test-hooks")]
fn run_hook(variable: &str, target: &ObjectRef) {
    let Ok(command) = std::env::var(variable) else { return };
    if command.trim().is_empty() {
        return;
    }
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env("FIELDWISE_HOOK_NAMESPACE", target.namespace.as_deref().unwrap_or_default())
        .env("FIELDWISE_HOOK_NAME", &target.name)
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!("warning: {variable} failed: {command}");
    }
}

/// Without the `test-hooks` feature there is no hook.
#[cfg(not(feature = "test-hooks"))]
fn run_hook_before_write(_target: &ObjectRef) {}

/// Without the `test-hooks` feature there is no hook.
#[cfg(not(feature = "test-hooks"))]
fn run_hook_before_dry_run(_target: &ObjectRef) {}
