//! The steps of one object's patch, the same whether the object is one of a run over many
//! ([`crate::many`]: one preview for the run) or the only one ([`crate::flow`]: the object's
//! own diff): the plan of its type ([`TypePlan`]: schema, strategic or not, the patch type),
//! then [`Patching::prepare`] (read, plan, lint, dry-run on the server), and
//! [`Patching::commit`] (the one guarded write path, which re-plans on a race). What differs between the two is how the preview is
//! shown, refused by its findings (the same rules: a Secret's value exposed, then a finding
//! that needs `--force`) and approved.

use std::time::Duration;

use fieldwise_core::change::effect::Effect;
use fieldwise_core::lint::{self, Finding};
use fieldwise_core::schema::Gvk;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::{Schemas, TypeSchema};
use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::output::diff::without_server_noise;
use fieldwise_kube::write::backup::Provenance;
use fieldwise_kube::write::DryRun;
use fieldwise_kube::write::{Committed, GuardedWrite, PatchType, Planned, WriteOptions};
use serde_json::Value;

use crate::plan::{choose_type, explain_rejection, plan_input, takes_strategic};
use crate::prepared::Prepared;
use crate::PatchArgs;

/// How the objects of one resource type are patched: the schema of the object read, and
/// the patch type (chosen once per type, so its note is printed once).
pub struct TypePlan {
    /// The schema of the object read (the `Scale` through the scale subresource).
    pub typed: TypeSchema,
    /// Whether the server takes strategic merge patches here.
    pub strategic: bool,
    /// The patch type sent.
    pub patch_type: PatchType,
}

/// The plan of `target`'s type; `label` names what the patch type's note is about (the
/// object in a run of one, its type in a run of many).
pub async fn type_plan(schemas: &mut Schemas, target: &ObjectRef, label: &str, args: &PatchArgs) -> Result<TypePlan> {
    let subresource = args.subresource.as_deref();
    let resource = &target.resource;
    let read = match subresource {
        Some("scale") => Gvk::new("autoscaling", "v1", "Scale"),
        _ => Gvk::new(&resource.group, &resource.version, &resource.kind),
    };
    let typed = schemas.for_gvk(&read).await?;
    let strategic = takes_strategic(schemas, &typed, target, subresource).await?;
    let patch_type = choose_type(args.patch_type, strategic, label);
    Ok(TypePlan { typed, strategic, patch_type })
}

/// An object [`Patching::prepare`] could not prepare: the error, and what the lints had found by then
/// (they usually say why the server refused, and how to fix it).
pub struct NotPrepared {
    /// Why.
    pub error: Error,
    /// The lints' findings on the planned change (empty when it was not planned).
    pub findings: Vec<Finding>,
}

impl From<Error> for NotPrepared {
    fn from(error: Error) -> Self {
        NotPrepared { error, findings: Vec::new() }
    }
}

/// What every object of one `safe-patch` command is patched with: the connection, the patch,
/// the command line and the time a write may keep retrying.
#[derive(Clone, Copy)]
pub struct Patching<'a> {
    /// The cluster.
    pub conn: &'a Connection,
    /// The patch, as given (or made by `--edit`).
    pub patch: &'a Value,
    /// The command line.
    pub args: &'a PatchArgs,
    /// How long a guarded write may keep losing races before it gives up.
    pub retry_budget: Duration,
}

impl Patching<'_> {
    /// Reads `target` (unless `live` is the object already read), plans the patch on it,
    /// lints it and (unless `--dry-run=client`, no change, or a change that would put a
    /// Secret's value where it is not secret: that is never sent, not even as a dry run)
    /// dry-runs it.
    pub async fn prepare(
        self,
        target: ObjectRef,
        live: Option<Value>,
        plan: &TypePlan,
    ) -> std::result::Result<Prepared, NotPrepared> {
        let (conn, args) = (self.conn, self.args);
        let display = target.display();
        let live = match live {
            Some(live) => live,
            None => objects::get(conn, &target, args.subresource.as_deref()).await?,
        };
        let writer = GuardedWrite::new(conn, &target, self.write_options(plan));
        let mut planner = self.planner(plan, &display);
        let mut preview = writer.plan(live, &mut planner)?;
        let exposes = !args.allow_secret_exposure && lint::exposes_secret(&preview.planned.findings);
        if args.dry_run != DryRun::Client && !preview.is_no_change() && !exposes {
            if let Err(e) = writer.dry_run(&mut preview, &mut planner).await {
                let findings = preview.planned.findings.clone();
                return Err(NotPrepared { error: explain_rejection(e, &display), findings });
            }
        }
        let mut findings = preview.planned.findings.clone();
        if let Some(server) = &preview.server_result {
            findings.extend(lint::nulls::null_resets(&preview.planned.patch, server));
        }
        let (before, after) = (without_server_noise(&preview.live), without_server_noise(preview.result()));
        let change_key = Effect::between(&before, &after, &plan.typed.schema, plan.typed.root).to_string();
        drop(writer);
        Ok(Prepared { target, preview, findings, change_key })
    }

    /// Writes an approved change through the one write path (re-planned against the newer
    /// object when another writer got there first), its backup under `provenance`.
    pub async fn commit(self, prepared: Prepared, plan: &TypePlan, provenance: Provenance) -> Result<Committed> {
        let Prepared { target, preview, .. } = prepared;
        let display = target.display();
        let writer = GuardedWrite::new(self.conn, &target, self.write_options(plan)).with_provenance(provenance);
        let mut planner = self.planner(plan, &display);
        writer.commit(preview, &mut planner).await.map_err(|e| explain_rejection(e, &display))
    }

    /// How every write of the patch is made.
    fn write_options<'p>(&self, plan: &'p TypePlan) -> WriteOptions<'p>
    where
        Self: 'p,
    {
        let args = self.args;
        WriteOptions::new(
            format!("safe-patch {}", plan.patch_type.name()),
            &args.field_manager,
            &Value::Null,
            self.retry_budget,
        )
        .force(args.force)
        .subresource(args.subresource.as_deref())
        .validation(args.validate)
        .schema(&plan.typed.schema, plan.typed.root)
        .show_secrets(args.show_secrets)
    }

    /// The planner of one object: the patch planned against whatever version is live.
    fn planner<'p>(&self, plan: &'p TypePlan, display: &'p str) -> impl FnMut(&Value) -> Result<Planned> + 'p
    where
        Self: 'p,
    {
        let (patch, args) = (self.patch, self.args);
        move |live: &Value| {
            crate::plan::plan(&plan_input(live, patch, plan.patch_type, &plan.typed, plan.strategic, args, display))
        }
    }
}
