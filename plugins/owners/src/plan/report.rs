//! What the plan found for one object, already shown as it may be printed (Secret
//! values hidden unless `--show-secrets`), and the run's summary and exit status.

use fieldwise_core::lint::Finding;
use fieldwise_core::ownership::{Fix, Manager, ManagerKind};
use fieldwise_kube::api::unread::Unread;
use serde_json::Value;

/// One manager, as reports name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    /// The field manager name.
    pub name: String,
    /// `Apply` or `Update`.
    pub operation: &'static str,
    /// `status`, `scale`, or empty for the main resource.
    pub subresource: String,
    /// The API version of an `Update` manager's identity.
    pub api_version: Option<String>,
}

impl Owner {
    /// The owner as the core names it.
    pub fn of(manager: &Manager) -> Self {
        Owner {
            name: manager.name.clone(),
            operation: manager.operation.as_str(),
            subresource: manager.subresource.clone(),
            api_version: manager.api_version.clone(),
        }
    }

    /// `kube-controller-manager (Update, scale)`.
    pub fn label(&self) -> String {
        if self.subresource.is_empty() {
            format!("{} ({})", self.name, self.operation)
        } else {
            format!("{} ({}, {})", self.name, self.operation, self.subresource)
        }
    }
}

/// A value as it may be printed.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// The field is not set.
    Unset,
    /// The value, through the redaction boundary's path-level policy
    /// ([`fieldwise_kube::redact::value_at_path`]: a Secret's data as `*** (N bytes)`).
    Value(Value),
}

/// A field another manager owns that the apply changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictRow {
    /// The field, in the apiserver's notation (`.spec.containers[name="app"].image`).
    pub field: String,
    /// Its owner.
    pub owner: Owner,
    /// Its owner's identity, as the apiserver words it (`"kubectl" with subresource "scale" using apps/v1`).
    pub manager: Manager,
    /// The apiserver's 409 cause message for it (`conflict with "kubectl" ...`).
    pub message: String,
    /// What kind of owner it is.
    pub class: ManagerKind,
    /// The way out.
    pub fix: Fix,
    /// The fix, as a sentence.
    pub advice: String,
    /// The live value.
    pub live: Shown,
    /// The value after the apply.
    pub yours: Shown,
}

/// A field set to the value it has, now co-owned.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRow {
    /// The field.
    pub field: String,
    /// The manager that keeps owning it too.
    pub with: Owner,
}

/// A field the manager stops owning (absent from the file).
#[derive(Debug, Clone, PartialEq)]
pub struct ReleasedRow {
    /// The field.
    pub field: String,
    /// Its live value.
    pub live: Shown,
    /// The managers that keep it (empty for a removed field, or one that stays unowned).
    pub owners: Vec<Owner>,
}

/// The server's refusal of the apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The HTTP status.
    pub code: u16,
    /// Its reason (`Invalid`, `NotFound`, `Forbidden`...), or why no request was sent.
    pub reason: String,
    /// The server's message, redacted.
    pub message: String,
}

impl Refusal {
    /// The refusal as kubectl prints the server's error.
    pub fn error(&self) -> fieldwise_kube::Error {
        fieldwise_kube::Error::Conn(fieldwise_kube::ConnError::Api {
            code: self.code,
            reason: self.reason.clone(),
            message: self.message.clone(),
            causes: Vec::new(),
        })
    }
}

/// How the prediction compares with the server's dry run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Check {
    /// Whether the server's answer could be compared (not after a refusal).
    pub checked: bool,
    /// Each difference; empty when the prediction holds.
    pub disagreements: Vec<String>,
}

/// Helm 4's conversion of an object before its first server-side apply of a release
/// written client-side: Helm's `Update` entries become its `Apply` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    /// The manager converted (`helm`).
    pub manager: String,
    /// The API versions of the `Update` entries converted (fields of another version than the
    /// first entry's are dropped, as client-go's csaupgrade drops them).
    pub api_versions: Vec<String>,
    /// How many fields (leaves) they own.
    pub fields: usize,
}

/// The plan of one object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Planned {
    /// The apply creates the object.
    pub new: bool,
    /// The object exists without managedFields (everything it holds is `before-first-apply`'s).
    pub before_first_apply: bool,
    /// Conflicts that refuse the apply (without `--force-conflicts`).
    pub conflicts: Vec<ConflictRow>,
    /// Fields `--force-conflicts` takes over.
    pub takeovers: Vec<ConflictRow>,
    /// Conflicts with client-side apply that `kubectl` takes over silently.
    pub upgraded: Vec<ConflictRow>,
    /// Fields that become co-owned.
    pub shared: Vec<SharedRow>,
    /// Fields the manager stops owning that leave the object (or change: the server sets
    /// another default).
    pub removed: Vec<ReleasedRow>,
    /// Fields the manager stops owning that the server sets again to the value they have:
    /// no change (shown with `--show-defaulted`).
    pub defaulted: Vec<ReleasedRow>,
    /// The server returned no object to sort the removals by (it refused the apply, or
    /// was not asked): a removal may be a field it sets again to the same value.
    pub removals_unverified: bool,
    /// Fields the manager stops owning that another manager keeps.
    pub survives: Vec<ReleasedRow>,
    /// Traps in the file.
    pub lints: Vec<Finding>,
    /// The server's refusal, if it refused.
    pub refused: Option<Refusal>,
    /// The conflicts the server's dry run without force answered 409 with, as sorted
    /// `(field, message)` (the truth when it disagrees with [`Planned::conflicts`]); empty
    /// when it did not, or was not asked.
    pub server_causes: Vec<(String, String)>,
    /// The namespace the object goes in when it does not exist yet and the input creates it
    /// (a Namespace in the same input): the object is planned as new there, unchecked.
    pub namespace_created: Option<String>,
    /// Helm's conversion before the apply (`--helm-release` of a release written
    /// client-side), when the object has client-side entries of Helm's.
    pub conversion: Option<Conversion>,
    /// Whether the apply is planned with `--force-conflicts`.
    pub forced: bool,
    /// The server's dry run compared with the prediction.
    pub check: Check,
}

impl Planned {
    /// Whether the apply (without `--force-conflicts`) is refused with 409: as predicted,
    /// or as the server answered when it disagrees.
    pub fn is_conflicting(&self) -> bool {
        !self.forced && (!self.conflicts.is_empty() || !self.server_causes.is_empty())
    }
}

/// One object of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectReport {
    /// `apiVersion` from the file.
    pub api_version: String,
    /// `kind` from the file.
    pub kind: String,
    /// Where the apply goes (none for cluster-scoped types, or when the type is unknown).
    pub namespace: Option<String>,
    /// `metadata.name` from the file.
    pub name: String,
    /// The file (and document) it came from.
    pub source: String,
    /// kubectl's name: `deployment.apps/web`.
    pub display: String,
    /// The plan, or why there is none.
    pub result: Result<Planned, String>,
    /// The live object could not be read (forbidden): no plan, and the gate decides
    /// (`--allow-unreadable`).
    pub unread: Option<Unread>,
}

/// What fails the run (`--fail-on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// An apply the apiserver refuses with 409 Conflict.
    Conflicts,
    /// Fields `--force-conflicts` would take from other managers.
    Takeovers,
    /// Fields the manager stops owning because the file no longer sets them (removed or
    /// surviving; not those the server sets again to the same value).
    Removals,
    /// An apply the apiserver refuses for another reason (schema, admission, unknown kind, missing namespace).
    Refusals,
    /// Objects of the Helm release (`--helm-release`) that the new render no longer has, which
    /// the upgrade deletes (not those `helm.sh/resource-policy: keep` keeps), or members of the
    /// ApplySet (`--applyset`) the apply deletes.
    Prunes,
}

impl ObjectReport {
    /// Whether the object has anything to report (for `-o name`): a conflict, takeover,
    /// removal, surviving field, refusal, lint, disagreement or error.
    pub fn has_findings(&self) -> bool {
        match &self.result {
            Err(_) => true,
            Ok(p) => {
                !p.conflicts.is_empty()
                    || !p.takeovers.is_empty()
                    || !p.removed.is_empty()
                    || !p.survives.is_empty()
                    || p.refused.is_some()
                    || !p.lints.is_empty()
                    || !p.check.disagreements.is_empty()
            }
        }
    }

    /// The reasons this object fails the run under `fail_on` (empty: it passes).
    pub fn failures(&self, fail_on: &[FailOn]) -> Vec<String> {
        let Ok(p) = &self.result else { return Vec::new() };
        let mut out = Vec::new();
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        for rule in fail_on {
            match rule {
                FailOn::Conflicts if p.is_conflicting() => {
                    out.push(count(p.conflicts.len().max(p.server_causes.len()), "conflict"))
                }
                FailOn::Takeovers if !p.takeovers.is_empty() => out.push(count(p.takeovers.len(), "takeover")),
                FailOn::Removals if !p.removed.is_empty() || !p.survives.is_empty() => {
                    out.push(count(p.removed.len() + p.survives.len(), "removal"))
                }
                FailOn::Refusals => {
                    if let Some(r) = &p.refused {
                        out.push(format!("refused ({} {})", r.code, r.reason));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// The counts of the summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Objects in the plan (errors included).
    pub objects: usize,
    /// Objects whose apply is refused with 409 Conflict.
    pub conflicting: usize,
    /// Objects the server refuses for another reason.
    pub refused: usize,
    /// Objects the apply creates.
    pub new: usize,
    /// Objects with fields `--force-conflicts` takes over.
    pub takeovers: usize,
    /// Objects with fields the manager stops owning that leave, change or survive.
    pub removals: usize,
    /// Objects with fields the apply prunes and the server sets again to the same value.
    pub defaulted: usize,
    /// Objects whose removals no server result could confirm.
    pub unverified: usize,
    /// Objects whose prediction disagrees with the server's dry run.
    pub disagreements: usize,
    /// Objects that could not be planned.
    pub errors: usize,
    /// Objects whose live state could not be read (forbidden): not planned.
    pub unread: usize,
    /// Objects failing `--fail-on`.
    pub failing: usize,
}

impl Summary {
    /// Counts one object.
    pub fn add(&mut self, report: &ObjectReport, fail_on: &[FailOn]) {
        self.objects += 1;
        if report.unread.is_some() {
            self.unread += 1;
            return;
        }
        let Ok(p) = &report.result else {
            self.errors += 1;
            return;
        };
        self.conflicting += usize::from(p.is_conflicting());
        self.refused += usize::from(p.refused.is_some());
        self.new += usize::from(p.new && p.refused.is_none());
        self.takeovers += usize::from(!p.takeovers.is_empty());
        self.removals += usize::from(!p.removed.is_empty() || !p.survives.is_empty());
        self.defaulted += usize::from(!p.defaulted.is_empty());
        self.unverified += usize::from(p.removals_unverified);
        self.disagreements += usize::from(!p.check.disagreements.is_empty());
        self.failing += usize::from(!report.failures(fail_on).is_empty());
    }

    /// `Plan: 12 objects, 2 conflicting, 1 refused, 3 new.` and the optional counts.
    pub fn line(&self) -> String {
        let mut line = format!(
            "Plan: {} object{}, {} conflicting, {} refused, {} new",
            self.objects,
            if self.objects == 1 { "" } else { "s" },
            self.conflicting,
            self.refused,
            self.new
        );
        for (n, what) in [
            (self.takeovers, "with takeovers"),
            (self.removals, "with removals"),
            (self.unverified, "with removals unverified"),
            (self.defaulted, "with fields defaulted again (no change)"),
            (self.disagreements, "disagreeing with the server"),
            (self.errors, "not planned (errors)"),
            (self.unread, "not read"),
        ] {
            if n > 0 {
                line.push_str(&format!(", {n} {what}"));
            }
        }
        line.push('.');
        line
    }
}
