//! Planning one object: find its type and live state, predict the apply
//! (`fieldwise_core::ownership::ApplyPlan`), ask the server for the same apply as a dry
//! run (the write layer's [`ApplyDryRun`]), and check the one against the other. `owners
//! plan` and `owners --conflicts` (without force) both plan through here.

use std::collections::{BTreeMap, BTreeSet};

use fieldwise_core::fieldpath::Path;
use fieldwise_core::ownership::{
    causes_after_conversion, helm_conversion, managed_fields_of, verify_after_conversion, verify_forced,
    verify_removals, verify_unforced, ApplyInput, ApplyOptions, ApplyPlan, ClassifiedConflict, Conflict, Fate,
    ManagedFieldsEntry, Operation, ReleasedField, ServerAnswer, Verification,
};
use fieldwise_core::schema::{deduced, Gvk, Schema, TypeId};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::manifests::Manifest;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::{display_name, NamespaceScope, ObjectRef};
use fieldwise_kube::api::unread::{self, Unread};
use fieldwise_kube::conn::client::Connection;
use fieldwise_kube::write::classify::is_transport_failure;
use fieldwise_kube::write::{self, Answers, ApplyDryRun, DryRunAnswer, DryRuns, Judged};
use fieldwise_kube::{redact, Error, ReferenceError, Result};
use serde_json::Value;
use tokio::sync::Mutex;

use super::report::{
    Check, ConflictRow, Conversion, ObjectReport, Owner, Planned, Refusal, ReleasedRow, SharedRow, Shown,
};

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
    /// Helm 4's first server-side upgrade of a release written client-side: each object's
    /// `--field-manager` `Update` entries become its `Apply` entry before the apply
    /// ([`helm_conversion`]), and the apply is planned on the object as that leaves it.
    pub helm_conversion: bool,
    /// The dry runs each plan is checked with.
    pub dry_runs: DryRuns,
    /// The Namespaces the input holds: the apply creates them before the objects in them.
    pub namespaces_created: BTreeSet<String>,
    /// Which of those namespaces the server was asked about, and whether each is absent.
    pub namespaces_absent: Mutex<BTreeMap<String, bool>>,
}

impl Planner<'_> {
    /// Plans one object. Only a failure to reach the server is an `Err` (so a run against a
    /// dead server stops); every other problem is reported in the object's result.
    pub async fn plan(&self, manifest: Manifest) -> Result<ObjectReport> {
        let Manifest { source, value: config } = manifest;
        let mut report = ObjectReport {
            api_version: text_at(&config, "/apiVersion"),
            kind: text_at(&config, "/kind"),
            namespace: None,
            name: text_at(&config, "/metadata/name"),
            display: display_name(&config),
            source: source.clone(),
            result: Err(String::new()),
            unread: None,
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
        match self.plan_resolved(&target, config).await {
            Ok(planned) => report.result = Ok(planned),
            Err(e) if is_transport_failure(&e) => return Err(e),
            // The object (or its type's schema) may not be read: there is no plan, and the
            // run's gate decides; a dry run the server refuses is a refusal in the plan.
            Err(e) if unread::is_refusal_to_read(&e) => {
                report.unread = Some(Unread::of_object(&target, &e));
                report.result = Err(e.to_string());
            }
            Err(e) => report.result = Err(e.to_string()),
        }
        Ok(report)
    }

    /// Plans the apply of `config` to `target`, the object it names
    /// ([`ObjectRef::from_manifest`]): every problem, a failure to reach the server included,
    /// is an `Err`.
    pub async fn plan_resolved(&self, target: &ObjectRef, mut config: Value) -> Result<Planned> {
        // As kubectl apply does: an object without a namespace gets the one it is applied in.
        if let (Some(namespace), Value::Object(object)) = (&target.namespace, &mut config) {
            if let Some(Value::Object(meta)) = object.get_mut("metadata") {
                meta.entry("namespace").or_insert_with(|| namespace.clone().into());
            }
        }
        self.plan_target(target, &config).await
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
        // are guarded by the resourceVersion read, and a plan the object moved under is made
        // again (the write layer's guarded dry run).
        let request = ApplyDryRun { config, field_manager: &self.field_manager };
        let (mut plan, mut planned, converted) = request
            .checked(self.conn, target, self.dry_runs, |live, answers| {
                let converted = match (live, self.helm_conversion) {
                    (Some(live), true) => {
                        helm_conversion(live, &self.field_manager).map_err(|e| Error::semantics(target.display(), e))?
                    }
                    _ => None,
                };
                // The apply meets the object as the conversion leaves it.
                let seen = converted.as_ref().or(live);
                let managed = match seen {
                    Some(seen) => managed_fields_of(seen).map_err(|e| Error::semantics(target.display(), e))?,
                    None => Vec::new(),
                };
                let input = ApplyInput {
                    live: seen,
                    managed: &managed,
                    config,
                    manager: &self.field_manager,
                    schema,
                    ty,
                    options: &options,
                };
                let mut plan = ApplyPlan::new(&input, self.force);
                let planned = match (&converted, live) {
                    (Some(converted), Some(live)) => {
                        let mut planned = self.judge_converted(&plan, converted, config, answers);
                        planned.conversion = Some(conversion_of(live, &self.field_manager));
                        planned
                    }
                    _ => self.judge(&mut plan, live, config, answers, (schema, ty)),
                };
                Ok(Judged { agrees: planned.check.disagreements.is_empty(), value: (plan, planned, converted) })
            })
            .await?;
        if let Some(converted) = &converted {
            planned = self.settle_converted(target, &mut plan, converted, config, planned).await;
        }
        self.in_namespace_created(target, config, &plan, planned).await
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

    /// The plan checked against the server's dry runs of the same apply (`answers`; `None`:
    /// not asked, the prediction alone), its removals sorted by the object the server
    /// returned (the fields it sets again to the same value are defaulted, not removed).
    fn judge(
        &self,
        plan: &mut ApplyPlan,
        live: Option<&Value>,
        config: &Value,
        answers: Option<&Answers>,
        (schema, ty): (&Schema, TypeId),
    ) -> Planned {
        let Some(Answers { unforced, forced }) = answers else {
            let unchecked = Verification { checked: false, disagreements: Vec::new() };
            return self.rows(plan, live, config, None, unchecked);
        };
        let mut verification = verify_unforced(&plan.outcome, &unforced.answer);
        if let Some(forced) = forced {
            // The conflicts were checked; the forced run checks the managers afterwards too,
            // unless the server refuses the forced object (then there is nothing more to compare).
            verification.disagreements.extend(verify_forced(&plan.outcome, &forced.answer).disagreements);
        }
        // The object as the apply leaves it: the accepted run's (the forced one's when only
        // the forced apply goes through, which is where the removals would happen).
        let result = [Some(unforced), forced.as_ref()].into_iter().flatten().find_map(|a| match &a.answer {
            ServerAnswer::Accepted(object) => Some(object),
            _ => None,
        });
        if let (Some(live), Some(result)) = (live, result) {
            plan.settle(live, result);
            verification.disagreements.extend(verify_removals(&plan.outcome, live, result, schema, ty));
        }
        let refused = self.refusal(unforced, forced.as_ref());
        let mut planned = self.rows(plan, live, config, refused, verification);
        planned.server_causes = unforced.sorted_causes();
        planned
    }

    /// The server's refusal of the apply the user would run (forced with `--force-conflicts`,
    /// else not), if it refused it.
    fn refusal(&self, unforced: &DryRunAnswer, forced: Option<&DryRunAnswer>) -> Option<Refusal> {
        let effective = match forced {
            Some(forced) if self.force => forced,
            _ => unforced,
        };
        match &effective.answer {
            ServerAnswer::Refused { code, message } => {
                Some(Refusal { code: *code, reason: effective.reason.clone(), message: message.clone() })
            }
            _ => None,
        }
    }

    /// The plan of an apply after Helm's conversion, checked against the server's dry runs
    /// of the same apply on the object before it (a dry run cannot see a conversion that is
    /// not stored): the conflicts with anyone but the converted entries must be the
    /// predicted ones ([`verify_after_conversion`]); the removals are sorted afterwards
    /// ([`Planner::settle_converted`]).
    fn judge_converted(
        &self,
        plan: &ApplyPlan,
        converted: &Value,
        config: &Value,
        answers: Option<&Answers>,
    ) -> Planned {
        let Some(Answers { unforced, forced }) = answers else {
            let unchecked = Verification { checked: false, disagreements: Vec::new() };
            return self.rows(plan, Some(converted), config, None, unchecked);
        };
        let verification = verify_after_conversion(&plan.outcome, &unforced.answer, &self.field_manager);
        let refused = self.refusal(unforced, forced.as_ref());
        let mut planned = self.rows(plan, Some(converted), config, refused, verification);
        planned.server_causes = causes_after_conversion(&unforced.sorted_causes(), &self.field_manager);
        planned
    }

    /// The removals of an apply after Helm's conversion, sorted by a server dry run of the
    /// object the plan leaves (which fields the server sets again to the value they have);
    /// left unverified when the server refused or could not say.
    async fn settle_converted(
        &self,
        target: &ObjectRef,
        plan: &mut ApplyPlan,
        converted: &Value,
        config: &Value,
        planned: Planned,
    ) -> Planned {
        if planned.refused.is_some() || plan.removed().next().is_none() {
            return planned;
        }
        let Ok(server) =
            write::dry_run_left(self.conn, target, converted, &plan.outcome.object, &self.field_manager).await
        else {
            return planned;
        };
        plan.settle(converted, &server);
        let check = Verification { checked: planned.check.checked, disagreements: planned.check.disagreements.clone() };
        let mut settled = self.rows(plan, Some(converted), config, planned.refused.clone(), check);
        settled.server_causes = planned.server_causes;
        settled.conversion = planned.conversion;
        settled
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
        let secret = redact::is_secret(config);
        let show = |path: &Path, value: &Option<Value>| shown(path, value.as_ref(), secret);
        let conflict_row = |c: &ClassifiedConflict| ConflictRow {
            field: c.conflict.field(),
            owner: Owner::of(&c.conflict.manager),
            manager: c.conflict.manager.clone(),
            message: c.conflict.message(),
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
            server_causes: Vec::new(),
            namespace_created: None,
            conversion: None,
            forced: self.force,
            check: Check { checked: verification.checked, disagreements: verification.disagreements },
        }
    }
}

/// A value as it may be printed: the redaction boundary's path-level policy (a Secret's
/// data and its last-applied copy hidden, Secret values inside any other value masked).
fn shown(path: &Path, value: Option<&Value>, secret: bool) -> Shown {
    match value {
        Some(value) => Shown::Value(redact::value_at_path(secret, path, value)),
        None => Shown::Unset,
    }
}

fn text_at(value: &Value, pointer: &str) -> String {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// What Helm's conversion moves in `live`: `manager`'s client-side entries of the main
/// resource and how many fields they own (counted once).
fn conversion_of(live: &Value, manager: &str) -> Conversion {
    let entries: Vec<ManagedFieldsEntry> = managed_fields_of(live)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.manager == manager && e.operation == Operation::Update && e.subresource.is_empty())
        .collect();
    let fields = entries.iter().fold(fieldwise_core::fieldpath::Set::new(), |all, e| all.union(&e.fields));
    Conversion {
        manager: manager.to_string(),
        api_versions: entries.iter().map(|e| e.api_version.clone()).collect(),
        fields: fields.leaves().len(),
    }
}
