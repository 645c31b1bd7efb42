//! Planning one object: find its type and live state, predict the apply
//! (`fieldwise_core::ownership::ApplyPlan`), ask the server for the same apply as a dry
//! run, and check the one against the other.

use std::collections::{BTreeMap, BTreeSet};

use fieldwise_core::fieldpath::{Path, PathElement};
use fieldwise_core::ownership::{
    managed_fields_of, verify_forced, verify_removals, verify_unforced, ApplyInput, ApplyOptions, ApplyPlan,
    ClassifiedConflict, Conflict, Fate, ReleasedField, ServerAnswer, Verification,
};
use fieldwise_core::schema::{deduced, Gvk, Schema, TypeId};
use fieldwise_core::well_known::LAST_APPLIED_ANNOTATION;
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::manifests::Manifest;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::{display_name, NamespaceScope, ObjectRef};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::{self, FieldValidation, PatchRequest, PatchType};
use fieldwise_kube::{redact, Error, ReferenceError, Result};
use serde_json::Value;
use tokio::sync::Mutex;

use super::report::{Check, ConflictRow, ObjectReport, Owner, Planned, Refusal, ReleasedRow, SharedRow, Shown};

/// How many times a plan is made again when the object changes under it.
const MAX_ATTEMPTS: u32 = 5;

/// What every object's plan shares: the connection, the types, the schemas and the flags.
pub struct Planner<'a> {
    /// The cluster.
    pub conn: &'a Connection,
    /// Discovery, read once.
    pub catalog: &'a ResourceCatalog,
    /// kubectl's namespace rules for objects without one.
    pub scope: NamespaceScope,
    /// Schemas by group-version, fetched once each.
    pub schemas: Mutex<Schemas>,
    /// `--field-manager`.
    pub field_manager: String,
    /// `--force-conflicts`.
    pub force: bool,
    /// `--show-secrets`.
    pub show_secrets: bool,
    /// The Namespaces the input holds: the apply creates them before the objects in them.
    pub namespaces_created: BTreeSet<String>,
    /// Which of those namespaces the server was asked about, and whether each is absent.
    pub namespaces_absent: Mutex<BTreeMap<String, bool>>,
}

impl Planner<'_> {
    /// Plans one object. Only a failure to reach the server is an `Err` (so a run against a
    /// dead server stops); every other problem is reported in the object's result.
    pub async fn plan(&self, manifest: Manifest) -> Result<ObjectReport> {
        let Manifest { source, value: mut config } = manifest;
        let mut report = ObjectReport {
            api_version: text_at(&config, "/apiVersion"),
            kind: text_at(&config, "/kind"),
            namespace: None,
            name: text_at(&config, "/metadata/name"),
            display: display_name(&config),
            source: source.clone(),
            result: Err(String::new()),
        };
        let target = match ObjectRef::from_manifest(&config, &source, self.catalog, &self.scope) {
            Ok(target) => target,
            Err(Error::Reference(ReferenceError::NoMatchForKind { kind, api_version, .. })) => {
                report.result = Ok(Planned {
                    refused: Some(Refusal {
                        code: 404,
                        reason: "NoMatchForKind".into(),
                        message: format!(
                            "the server serves no {kind} in {api_version}: create its CustomResourceDefinition (or enable its API) first"
                        ),
                    }),
                    ..Planned::default()
                });
                return Ok(report);
            }
            Err(e) => {
                report.result = Err(e.to_string());
                return Ok(report);
            }
        };
        report.display = target.display();
        report.namespace = target.namespace.clone();
        // As kubectl apply does: an object without a namespace gets the one it is applied in.
        if let (Some(namespace), Value::Object(object)) = (&target.namespace, &mut config) {
            if let Some(Value::Object(meta)) = object.get_mut("metadata") {
                meta.entry("namespace").or_insert_with(|| namespace.clone().into());
            }
        }
        match self.plan_target(&target, &config).await {
            Ok(planned) => report.result = Ok(planned),
            Err(e) if is_transport(&e) => return Err(e),
            Err(e) => report.result = Err(e.to_string()),
        }
        Ok(report)
    }

    async fn plan_target(&self, target: &ObjectRef, config: &Value) -> Result<Planned> {
        let gvk = Gvk::of_object(config).ok_or_else(|| Error::usage("the object has no apiVersion or kind"))?;
        let typed = self.schemas.lock().await.for_gvk(&gvk).await?;
        let (schema, ty) = match typed.root {
            Some(root) => (typed.schema.as_ref(), root),
            None => deduced(),
        };
        let mut options = ApplyOptions::for_main_resource_of(&target.resource.subresources);
        if typed.strategic == Some(false) {
            // A custom resource: its strategy resets status for the version applied through only.
            options = options.for_custom_resource(&target.resource.api_version());
        }
        // A controller may change the object between the read and the dry runs: the dry runs
        // are guarded by the resourceVersion read, and a plan the object moved under is made again.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let live = match objects::get(self.conn, target, None).await {
                Ok(live) => Some(live),
                Err(e) if e.is_not_found() => None,
                Err(e) => return Err(e),
            };
            let managed = match &live {
                Some(live) => managed_fields_of(live).map_err(|e| Error::semantics(target.display(), e))?,
                None => Vec::new(),
            };
            let input = ApplyInput {
                live: live.as_ref(),
                managed: &managed,
                config,
                manager: &self.field_manager,
                schema,
                ty,
                options: &options,
            };
            let mut plan = ApplyPlan::new(&input, self.force);
            let version = live.as_ref().and_then(|l| l.pointer("/metadata/resourceVersion")).and_then(Value::as_str);
            let typed = (schema, ty);
            match self.check(target, config, version, &mut plan, live.as_ref(), typed).await? {
                Some(planned) => return self.in_namespace_created(target, config, &plan, planned).await,
                None if attempt < MAX_ATTEMPTS => continue,
                None => {
                    return Err(Error::usage(format!(
                        "{} kept changing while it was planned ({MAX_ATTEMPTS} attempts): plan it again",
                        target.display()
                    )))
                }
            }
        }
    }

    /// The plan of an object the server refused with 404 because its namespace does not
    /// exist yet, when the input holds that Namespace: kubectl applies Namespaces first, so
    /// the apply creates the object in it. The server cannot dry-run an object in a namespace
    /// that does not exist, so the plan is the prediction alone, a creation (no live object:
    /// no conflicts, every field the applier's), marked unchecked. Any other plan is returned
    /// as it is: an object refused for another reason (a schema error the prediction sees
    /// too) or in a namespace neither on the server nor in the input stays a refusal.
    async fn in_namespace_created(
        &self,
        target: &ObjectRef,
        config: &Value,
        plan: &ApplyPlan,
        planned: Planned,
    ) -> Result<Planned> {
        let namespace = match (&planned.refused, &target.namespace) {
            (Some(Refusal { code: 404, .. }), Some(namespace))
                if planned.new && plan.outcome.errors.is_empty() && self.namespaces_created.contains(namespace) =>
            {
                namespace
            }
            _ => return Ok(planned),
        };
        if !self.namespace_absent(namespace).await? {
            return Ok(planned);
        }
        let unchecked = Verification { checked: false, disagreements: Vec::new() };
        let mut created = self.rows(plan, None, config, None, unchecked);
        created.namespace_created = Some(namespace.clone());
        Ok(created)
    }

    /// Whether the server has no namespace `name`, asked once per name.
    async fn namespace_absent(&self, name: &str) -> Result<bool> {
        if let Some(absent) = self.namespaces_absent.lock().await.get(name) {
            return Ok(*absent);
        }
        let namespaces = self
            .catalog
            .by_gvk(&Gvk::new("", "v1", "Namespace"))
            .ok_or_else(|| Error::usage("the server serves no v1 Namespace"))?;
        let namespace = ObjectRef::of_object(namespaces, &serde_json::json!({"metadata": {"name": name}}));
        let absent = match objects::get(self.conn, &namespace, None).await {
            Ok(_) => false,
            Err(e) if e.is_not_found() => true,
            Err(e) => return Err(e),
        };
        self.namespaces_absent.lock().await.insert(name.to_string(), absent);
        Ok(absent)
    }

    /// The server's dry runs of the apply planned against `live` (at `version`), compared
    /// with the plan, its removals sorted by the object the server returned (the fields it
    /// sets again to the same value are defaulted, not removed); `None` when the object
    /// changed in between.
    async fn check(
        &self,
        target: &ObjectRef,
        config: &Value,
        version: Option<&str>,
        plan: &mut ApplyPlan,
        live: Option<&Value>,
        (schema, ty): (&Schema, TypeId),
    ) -> Result<Option<Planned>> {
        let Some((unforced, unforced_reason)) = self.dry_run(target, config, version, false).await? else {
            return Ok(None);
        };
        let mut verification = verify_unforced(&plan.outcome, &unforced);
        let forced = match &unforced {
            ServerAnswer::Conflict(_) => match self.dry_run(target, config, version, true).await? {
                Some(answer) => Some(answer),
                None => return Ok(None),
            },
            _ => None,
        };
        if let Some((forced, _)) = &forced {
            // The conflicts were checked; the forced run checks the managers afterwards too,
            // unless the server refuses the forced object (then there is nothing more to compare).
            verification.disagreements.extend(verify_forced(&plan.outcome, forced).disagreements);
        }
        // The object as the apply leaves it: the accepted run's (the forced one's when only
        // the forced apply goes through, which is where the removals would happen).
        let result =
            [Some(&unforced), forced.as_ref().map(|(answer, _)| answer)].into_iter().flatten().find_map(|answer| {
                match answer {
                    ServerAnswer::Accepted(object) => Some(object),
                    _ => None,
                }
            });
        if let (Some(live), Some(result)) = (live, result) {
            plan.settle(live, result);
            verification.disagreements.extend(verify_removals(&plan.outcome, live, result, schema, ty));
        }
        // A 409's causes come before the resourceVersion is compared: a disagreement may
        // be a race. The object read again says.
        if !verification.disagreements.is_empty() && version.is_some() {
            let now = objects::get(self.conn, target, None).await?;
            if now.pointer("/metadata/resourceVersion").and_then(Value::as_str) != version {
                return Ok(None);
            }
        }
        // The answer to the apply the user would run: forced or not.
        let (effective, reason) = match &forced {
            Some((answer, reason)) if self.force => (answer, reason),
            _ => (&unforced, &unforced_reason),
        };
        let refused = match effective {
            ServerAnswer::Refused { code, message } => {
                Some(Refusal { code: *code, reason: reason.clone(), message: message.clone() })
            }
            _ => None,
        };
        let mut planned = self.rows(plan, live, config, refused, verification);
        if let ServerAnswer::Conflict(causes) = &unforced {
            planned.server_conflicts = causes.len();
        }
        Ok(Some(planned))
    }

    /// A server-side apply of `config` with `dryRun=All`, forced or not, guarded by the
    /// resourceVersion the plan read: the answer to check, with the Status reason of a
    /// refusal; `None` when the object changed since it was read.
    async fn dry_run(
        &self,
        target: &ObjectRef,
        config: &Value,
        version: Option<&str>,
        force: bool,
    ) -> Result<Option<(ServerAnswer, String)>> {
        let guarded;
        let body = match version {
            Some(version) => {
                let mut copy = config.clone();
                copy["metadata"]["resourceVersion"] = version.into();
                guarded = copy;
                &guarded
            }
            None => config,
        };
        let request = PatchRequest {
            patch_type: PatchType::Apply,
            body,
            field_manager: &self.field_manager,
            dry_run: true,
            force,
            subresource: None,
            validation: FieldValidation::Strict,
        };
        match write::patch(self.conn, target, &request).await {
            Ok(object) => Ok(Some((ServerAnswer::Accepted(object), String::new()))),
            Err(e) if e.is_conflict() && !e.causes().is_empty() => {
                let causes = e.causes().iter().map(|c| (c.field.clone(), c.message.clone())).collect();
                Ok(Some((ServerAnswer::Conflict(causes), String::new())))
            }
            // The resourceVersion guard: the object moved.
            Err(e) if e.is_conflict() => Ok(None),
            Err(e) if is_transport(&e) => Err(e),
            Err(Error::Api { code, reason, message, .. }) => {
                Ok(Some((ServerAnswer::Refused { code, message }, reason_or_status(reason, code))))
            }
            Err(e) => Err(e),
        }
    }

    /// The plan as rows to print, values hidden where they must be.
    fn rows(
        &self,
        plan: &ApplyPlan,
        live: Option<&Value>,
        config: &Value,
        refused: Option<Refusal>,
        verification: Verification,
    ) -> Planned {
        let secret = redact::is_secret(config) && !self.show_secrets;
        let show = |path: &Path, value: &Option<Value>| shown(path, value.as_ref(), secret);
        let conflict_row = |c: &ClassifiedConflict| ConflictRow {
            field: c.conflict.field(),
            owner: Owner::of(&c.conflict.manager),
            class: c.class,
            fix: c.fix,
            advice: c.advice(),
            live: show(&c.conflict.path, &c.conflict.theirs),
            yours: show(&c.conflict.path, &c.conflict.yours),
        };
        let upgraded_row = |c: &Conflict| {
            let classified = ClassifiedConflict {
                conflict: c.clone(),
                class: c.manager.kind(),
                fix: fieldwise_core::ownership::Fix::Force,
            };
            conflict_row(&classified)
        };
        let released_row = |r: &ReleasedField| ReleasedRow {
            field: r.path.to_string(),
            live: show(&r.path, &r.live),
            owners: match &r.fate {
                Fate::Survives(owners) => owners.iter().map(Owner::of).collect(),
                Fate::Removed | Fate::Defaulted => Vec::new(),
            },
        };
        Planned {
            new: live.is_none(),
            before_first_apply: plan.outcome.before_first_apply,
            conflicts: plan.refusing_conflicts().iter().map(conflict_row).collect(),
            takeovers: plan.takeovers().iter().map(conflict_row).collect(),
            upgraded: plan.outcome.upgraded.iter().map(upgraded_row).collect(),
            shared: plan
                .outcome
                .shared
                .iter()
                .map(|s| SharedRow { field: s.path.to_string(), with: Owner::of(&s.with) })
                .collect(),
            removed: plan.removed().map(released_row).collect(),
            defaulted: plan.defaulted().map(released_row).collect(),
            removals_unverified: !plan.settled && plan.removed().next().is_some(),
            survives: plan.survivors().map(released_row).collect(),
            lints: plan.lints.clone(),
            refused,
            server_conflicts: 0,
            namespace_created: None,
            forced: self.force,
            check: Check { checked: verification.checked, disagreements: verification.disagreements },
        }
    }
}

/// A value as it may be printed: a Secret's data (and its last-applied copy) hidden.
fn shown(path: &Path, value: Option<&Value>, secret: bool) -> Shown {
    let Some(value) = value else { return Shown::Unset };
    let field = |i: usize| match path.elements().get(i) {
        Some(PathElement::Field(name)) => Some(name.as_str()),
        _ => None,
    };
    let hidden = secret
        && match (field(0), field(1), field(2)) {
            (Some("data" | "stringData"), _, _) => true,
            (Some("metadata"), None, _) | (Some("metadata"), Some("annotations"), None) => true,
            (Some("metadata"), Some("annotations"), Some(key)) => key == LAST_APPLIED_ANNOTATION,
            _ => false,
        };
    if hidden {
        // The size a reader of the Secret gets: `data` values decoded from base64.
        let size = value.as_str().map(|s| if field(0) == Some("data") { decoded_len(s) } else { s.len() });
        Shown::Hidden(size)
    } else {
        Shown::Value(value.clone())
    }
}

/// The Status reason, or the name of the HTTP status when the server gave none.
fn reason_or_status(reason: String, code: u16) -> String {
    if !reason.is_empty() && !reason.bytes().all(|b| b.is_ascii_digit()) {
        return reason;
    }
    match code {
        400 => "BadRequest",
        403 => "Forbidden",
        404 => "NotFound",
        422 => "Invalid",
        500 => "InternalError",
        _ => "Refused",
    }
    .to_string()
}

/// The length of a base64 text once decoded.
fn decoded_len(text: &str) -> usize {
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (text.len() / 4 * 3).saturating_sub(padding)
}

/// A failure to reach the server (not a refusal of this object).
fn is_transport(e: &Error) -> bool {
    e.is_transport() || matches!(e, Error::Api { code: 502..=504, .. })
}

fn text_at(value: &Value, pointer: &str) -> String {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string()
}
