//! Who a conflicting manager is, and what to do about the conflict.
//!
//! An apply that conflicts is refused until someone decides. The decision depends
//! on who owns the field:
//! - a **controller** (the HPA or `kubectl scale` through the `scale` subresource,
//!   `kube-controller-manager`, a status writer, a CA-bundle injector) changes the
//!   field again after any apply: the file should not set it ([`Fix::DropField`]);
//! - a **human edit** (`kubectl edit`, `patch`, `create`, client-side `apply`, the
//!   apiserver's `before-first-apply`, Helm's updates) was a one-off: taking the field
//!   back with `--force-conflicts` overwrites it, as intended ([`Fix::Force`]);
//! - **another applier** (a second file, a GitOps tool, a team) means two sources of
//!   truth: hand the field over explicitly with `kubectl owners transfer`
//!   ([`Fix::Transfer`]), or drop it from one file;
//! - **client-side apply owning a server default** (a field its last-applied annotation
//!   never set, recorded as its own when it created the object): nobody chose that value;
//!   move client-side apply's fields to the applier ([`Fix::Migrate`]) and the conflict
//!   does not come back.

use super::managers::{Manager, ManagerKind, Operation};

/// What kind of owner a conflicting manager is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConflictClass {
    /// A control loop, or a write through the `scale` or `status` subresource.
    Controller,
    /// A one-off write outside server-side apply: kubectl edit/patch/create/client-side
    /// apply, `before-first-apply`, Helm and other tools' updates.
    HumanEdit,
    /// Another server-side applier.
    Applier,
}

/// The way out of a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fix {
    /// Remove the field from the file: its owner keeps changing it.
    DropField,
    /// Take it over with `--force-conflicts`: the one-off edit is overwritten.
    Force,
    /// Move its ownership to the applier with `kubectl owners transfer` (or drop it from one file).
    Transfer,
    /// Client-side apply owns a value the server defaulted (its last-applied annotation never
    /// set the field): move client-side apply's fields to the applier with `kubectl
    /// last-applied migrate` or `kubectl owners transfer`, or take it with `--force-conflicts`.
    Migrate,
}

/// Names of CA-bundle injectors, which write `caBundle` fields of webhooks, CRDs and API services.
const CA_INJECTOR_MARKERS: &[&str] = &["cainjector", "ca-injector", "ca-bundle", "cabundle"];

impl ConflictClass {
    /// Classifies the manager of a conflicting field.
    pub fn of(manager: &Manager) -> Self {
        if manager.subresource == "scale" || manager.subresource == "status" {
            return ConflictClass::Controller;
        }
        let name = manager.name.to_ascii_lowercase();
        if ManagerKind::of(&manager.name) == ManagerKind::Controller
            || CA_INJECTOR_MARKERS.iter().any(|m| name.contains(m))
            || name.contains("autoscaler")
        {
            return ConflictClass::Controller;
        }
        match manager.operation {
            Operation::Apply => ConflictClass::Applier,
            Operation::Update => ConflictClass::HumanEdit,
        }
    }

    /// The word in tables and JSON: `controller`, `edit`, `applier`.
    pub fn name(self) -> &'static str {
        match self {
            ConflictClass::Controller => "controller",
            ConflictClass::HumanEdit => "edit",
            ConflictClass::Applier => "applier",
        }
    }

    /// The fix for a conflict with this kind of owner.
    pub fn fix(self) -> Fix {
        match self {
            ConflictClass::Controller => Fix::DropField,
            ConflictClass::HumanEdit => Fix::Force,
            ConflictClass::Applier => Fix::Transfer,
        }
    }
}

impl Fix {
    /// The word in tables and JSON: `drop`, `force`, `transfer`.
    pub fn name(self) -> &'static str {
        match self {
            Fix::DropField => "drop",
            Fix::Force => "force",
            Fix::Transfer => "transfer",
            Fix::Migrate => "migrate",
        }
    }

    /// One sentence saying what to do about `fields` (one, or several comma-separated)
    /// owned by the manager named `owner`.
    pub fn advice(self, fields: &str, owner: &str) -> String {
        match self {
            Fix::DropField => format!("drop {fields} from the file: {owner:?} keeps changing it"),
            Fix::Force => format!(
                "apply with --force-conflicts to take {fields} from {owner:?} (its values are overwritten), or drop it from the file to keep them"
            ),
            Fix::Transfer => format!(
                "hand {fields} over from {owner:?} with `kubectl owners transfer`, or drop it from one of the two files"
            ),
            Fix::Migrate => format!(
                "{owner:?} owns the server's default in {fields} (its last-applied annotation never set it): move client-side apply's fields to your field manager with `kubectl last-applied migrate TYPE/NAME --field-manager MANAGER` or `kubectl owners transfer TYPE/NAME --from {owner} --to MANAGER`, or apply with --force-conflicts"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(name: &str, operation: Operation, subresource: &str) -> Manager {
        Manager {
            name: name.into(),
            operation,
            api_version: (operation == Operation::Update).then(|| "apps/v1".to_string()),
            subresource: subresource.into(),
        }
    }

    #[test]
    fn classifies_the_owners_users_meet() {
        use ConflictClass::*;
        use Operation::*;
        for (name, operation, subresource, class) in [
            ("kube-controller-manager", Update, "scale", Controller),
            ("kubectl", Update, "scale", Controller),
            ("kube-controller-manager", Update, "", Controller),
            ("widget-controller", Update, "status", Controller),
            ("cert-manager-cainjector", Update, "", Controller),
            ("cluster-autoscaler", Update, "", Controller),
            ("kubectl-edit", Update, "", HumanEdit),
            ("kubectl-patch", Update, "", HumanEdit),
            ("kubectl-create", Update, "", HumanEdit),
            ("kubectl-client-side-apply", Update, "", HumanEdit),
            ("before-first-apply", Update, "", HumanEdit),
            ("helm", Update, "", HumanEdit),
            ("team-a", Apply, "", Applier),
            ("kubectl", Apply, "", Applier),
        ] {
            let m = manager(name, operation, subresource);
            assert_eq!(ConflictClass::of(&m), class, "{name} {operation:?} {subresource}");
        }
        assert_eq!(Controller.fix(), Fix::DropField);
        assert_eq!(HumanEdit.fix(), Fix::Force);
        assert_eq!(Applier.fix(), Fix::Transfer);
        let advice = Fix::Transfer.advice(".spec.replicas", "team-a");
        assert!(advice.contains("kubectl owners transfer") && advice.contains("\"team-a\""), "{advice}");
        let advice = Fix::Migrate.advice(".spec.x", "kubectl-client-side-apply");
        assert!(
            advice.contains("kubectl last-applied migrate") && advice.contains("kubectl owners transfer"),
            "{advice}"
        );
    }
}
