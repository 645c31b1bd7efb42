//! Who a manager is, in one of three classes, and what to do when an apply conflicts
//! with it. Every command says the same word for the same manager: `owners --summary`
//! and the field view (`kind` in JSON), `owners plan` and `--conflicts` (`class`),
//! safe-patch's lint of foreign owners, and `last-applied`.
//!
//! - **human**: a one-off write by a person or a tool run by hand, which nothing repeats:
//!   `kubectl edit`, `patch`, `label`, `annotate`, `set`, `create`, `replace`, `kubectl
//!   scale` (manager `kubectl` or `kubectl-scale` through the `scale` subresource), the
//!   apiserver's `before-first-apply` and `ancient-changes` placeholders, and any other
//!   `Update` of the main resource (Helm 3's upgrades, scripts). Taking the field back with
//!   `--force-conflicts` overwrites it, as intended ([`Fix::Force`]).
//! - **controller**: a control loop that changes the field again after any apply:
//!   `kube-controller-manager`, `kube-scheduler`, `kubelet`, `*-controller`, `*-operator`,
//!   autoscalers, CA-bundle injectors, and any other writer through the `status` or
//!   `scale` subresource. The file should not set the field ([`Fix::DropField`]).
//! - **applier**: a manager that records intent: another server-side applier (a second
//!   file, a GitOps tool (Argo CD's and Flux's controllers, [`GitOpsTool`], whatever their
//!   operation), a team), and client-side apply (`kubectl-client-side-apply`,
//!   whose last-applied annotation is a file's intent too). Two sources of truth: hand
//!   the field over explicitly with `kubectl owners transfer` ([`Fix::Transfer`]), or drop
//!   it from one file. Where client-side apply owns only a value the server defaulted (a
//!   field its annotation never set, recorded as its own when it created the object),
//!   nobody chose that value: move client-side apply's fields to the applier
//!   ([`Fix::Migrate`]) and the conflict does not come back.
//!
//! A manager is classified by its name first, then by where and how it writes: kubectl's
//! names are people (a `kubectl scale` through `/scale` is human) unless kubectl applies
//! server-side; a control loop's name is a controller whatever it writes through; an
//! unknown name is a controller through `/status` or `/scale`, an applier when it applies,
//! human otherwise.
//!
//! ```
//! use fieldwise_core::ownership::{Manager, ManagerKind, Operation};
//!
//! let scale_by_hand = Manager {
//!     name: "kubectl".into(),
//!     operation: Operation::Update,
//!     api_version: Some("apps/v1".into()),
//!     subresource: "scale".into(),
//! };
//! assert_eq!(ManagerKind::of(&scale_by_hand).name(), "human");
//! let autoscaler = Manager { name: "horizontal-pod-autoscaler".into(), ..scale_by_hand };
//! assert_eq!(ManagerKind::of(&autoscaler).name(), "controller");
//! assert_eq!(ManagerKind::of(&Manager::applier("argocd")).name(), "applier");
//! ```

use super::managers::{ManagedFieldsEntry, Manager, Operation};
use crate::well_known::{ANCIENT_CHANGES_MANAGER, BEFORE_FIRST_APPLY_MANAGER, CLIENT_SIDE_APPLY_MANAGER};

/// What kind of actor a manager is: the one classification every command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManagerKind {
    /// A one-off write: kubectl's imperative commands, `before-first-apply`, other updates
    /// of the main resource (Helm 3, scripts).
    Human,
    /// A control loop: it writes the field again after any apply.
    Controller,
    /// A manager that records intent: a server-side applier, or client-side apply.
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

/// Control loops that ship with Kubernetes (and kubebuilder's default name, `manager`).
const CONTROLLERS: &[&str] = &[
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
    "kube-proxy",
    "cloud-controller-manager",
    "manager",
];

/// Names of CA-bundle injectors, which write `caBundle` fields of webhooks, CRDs and API services.
const CA_INJECTOR_MARKERS: &[&str] = &["cainjector", "ca-injector", "ca-bundle", "cabundle"];

/// Whether `name` is one of kubectl's field managers (`kubectl`, `kubectl-edit`,
/// `kubectl-client-side-apply`, `kubectl.exe`, ...).
pub fn is_kubectl_manager(name: &str) -> bool {
    name == "kubectl" || name.starts_with("kubectl-") || name.starts_with("kubectl.")
}

/// Whether `name` is a manager the apiserver makes up: `before-first-apply` (fields set
/// before the first server-side apply) and `ancient-changes` (the oldest update managers, merged).
pub fn is_placeholder_manager(name: &str) -> bool {
    name == BEFORE_FIRST_APPLY_MANAGER || name == ANCIENT_CHANGES_MANAGER
}

/// A GitOps tool: an applier whose configuration lives in Git, and which has its own rules
/// for fields it must leave to others (`kubectl owners drift --emit`, the fix of a fight).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GitOpsTool {
    /// Argo CD: `ignoreDifferences` in an Application's spec.
    ArgoCd,
    /// Flux: `driftDetection.ignore` in a HelmRelease's spec.
    Flux,
}

/// The field managers the GitOps tools write with: Argo CD's application controller
/// (`argocd-controller` with server-side apply, `argocd-application-controller` otherwise)
/// and Flux's kustomize-controller and helm-controller.
const GITOPS_MANAGERS: [(&str, GitOpsTool); 4] = [
    ("argocd-controller", GitOpsTool::ArgoCd),
    ("argocd-application-controller", GitOpsTool::ArgoCd),
    ("kustomize-controller", GitOpsTool::Flux),
    ("helm-controller", GitOpsTool::Flux),
];

impl GitOpsTool {
    /// The GitOps tool whose field manager `name` is, if it is one.
    pub fn of_manager(name: &str) -> Option<GitOpsTool> {
        GITOPS_MANAGERS.iter().find(|(manager, _)| *manager == name).map(|(_, tool)| *tool)
    }

    /// The tool's word, as `owners drift --emit` and JSON records name it: `argocd`, `flux`.
    pub fn word(self) -> &'static str {
        match self {
            GitOpsTool::ArgoCd => "argocd",
            GitOpsTool::Flux => "flux",
        }
    }

    /// The tool's name: `Argo CD`, `Flux`.
    pub fn name(self) -> &'static str {
        match self {
            GitOpsTool::ArgoCd => "Argo CD",
            GitOpsTool::Flux => "Flux",
        }
    }
}

/// Whether `name` is a control loop's name.
fn is_controller_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    CONTROLLERS.contains(&name)
        || name.ends_with("-controller")
        || name.ends_with("-controller-manager")
        || name.ends_with("-operator")
        || name.starts_with("system:")
        || lower.contains("autoscaler")
        || CA_INJECTOR_MARKERS.iter().any(|m| lower.contains(m))
}

impl ManagerKind {
    /// Every class, in the order documentation lists them.
    pub const ALL: [ManagerKind; 3] = [ManagerKind::Human, ManagerKind::Controller, ManagerKind::Applier];

    /// Classifies a manager: by its name first, then by its operation and subresource.
    pub fn of(manager: &Manager) -> Self {
        let name = manager.name.as_str();
        if name == CLIENT_SIDE_APPLY_MANAGER {
            return ManagerKind::Applier;
        }
        if is_kubectl_manager(name) || is_placeholder_manager(name) {
            return match manager.operation {
                Operation::Apply => ManagerKind::Applier,
                Operation::Update => ManagerKind::Human,
            };
        }
        // A GitOps tool's controller applies what Git says, whatever its name or operation.
        if GitOpsTool::of_manager(name).is_some() && manager.subresource.is_empty() {
            return ManagerKind::Applier;
        }
        if is_controller_name(name) || manager.subresource == "scale" || manager.subresource == "status" {
            return ManagerKind::Controller;
        }
        match manager.operation {
            Operation::Apply => ManagerKind::Applier,
            Operation::Update => ManagerKind::Human,
        }
    }

    /// The word in tables and JSON: `human`, `controller`, `applier`.
    pub fn name(self) -> &'static str {
        match self {
            ManagerKind::Human => "human",
            ManagerKind::Controller => "controller",
            ManagerKind::Applier => "applier",
        }
    }

    /// The class a word names, if it names one.
    pub fn from_name(word: &str) -> Option<Self> {
        ManagerKind::ALL.into_iter().find(|k| k.name() == word)
    }

    /// The fix for a conflict with this kind of owner (client-side apply owning a server
    /// default is [`Fix::Migrate`], which only the plan, knowing the annotation, can tell).
    pub fn fix(self) -> Fix {
        match self {
            ManagerKind::Controller => Fix::DropField,
            ManagerKind::Human => Fix::Force,
            ManagerKind::Applier => Fix::Transfer,
        }
    }
}

impl Manager {
    /// What kind of actor the manager is.
    pub fn kind(&self) -> ManagerKind {
        ManagerKind::of(self)
    }
}

impl ManagedFieldsEntry {
    /// What kind of actor the entry's manager is.
    pub fn kind(&self) -> ManagerKind {
        ManagerKind::of(&self.identity())
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
            // Client-side apply's file is the other source of truth: its fields move all at once.
            Fix::Transfer if owner == CLIENT_SIDE_APPLY_MANAGER => format!(
                "hand {fields} over from {owner:?} with `kubectl last-applied migrate TYPE/NAME --field-manager MANAGER` (all its fields) or `kubectl owners transfer`, or drop it from one of the two files"
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
        use ManagerKind::*;
        use Operation::*;
        for (name, operation, subresource, class) in [
            // human: one-off writes, kubectl scale by hand included
            ("kubectl", Update, "scale", Human),
            ("kubectl-scale", Update, "scale", Human),
            ("kubectl", Update, "", Human),
            ("kubectl-edit", Update, "", Human),
            ("kubectl-patch", Update, "", Human),
            ("kubectl-label", Update, "", Human),
            ("kubectl-create", Update, "", Human),
            ("kubectl-edit", Update, "status", Human),
            ("before-first-apply", Update, "", Human),
            ("ancient-changes", Update, "", Human),
            ("helm", Update, "", Human),
            ("my-script", Update, "", Human),
            // controller: by name whatever it writes through, or through /status and /scale
            ("kube-controller-manager", Update, "scale", Controller),
            ("kube-controller-manager", Update, "", Controller),
            ("kube-scheduler", Update, "", Controller),
            ("cert-manager-controller", Update, "", Controller),
            ("widget-operator", Apply, "", Controller),
            ("system:serviceaccount:x:y", Update, "", Controller),
            ("horizontal-pod-autoscaler", Update, "scale", Controller),
            ("cluster-autoscaler", Update, "", Controller),
            ("cert-manager-cainjector", Update, "", Controller),
            ("widget-writer", Update, "status", Controller),
            ("keda", Update, "scale", Controller),
            // applier: server-side appliers and client-side apply
            ("team-a", Apply, "", Applier),
            ("kubectl", Apply, "", Applier),
            ("helm", Apply, "", Applier),
            ("kubectl-client-side-apply", Update, "", Applier),
            // GitOps tools apply Git's configuration, whatever their name says or their operation
            ("argocd-controller", Apply, "", Applier),
            ("argocd-application-controller", Update, "", Applier),
            ("kustomize-controller", Apply, "", Applier),
            ("helm-controller", Update, "", Applier),
            ("helm-controller", Update, "status", Controller),
        ] {
            let m = manager(name, operation, subresource);
            assert_eq!(ManagerKind::of(&m), class, "{name} {operation:?} {subresource}");
        }
        assert_eq!(ManagerKind::ALL.map(ManagerKind::name), ["human", "controller", "applier"]);
        for kind in ManagerKind::ALL {
            assert_eq!(ManagerKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(ManagerKind::from_name("edit"), None);
        assert_eq!(Controller.fix(), Fix::DropField);
        assert_eq!(Human.fix(), Fix::Force);
        assert_eq!(Applier.fix(), Fix::Transfer);
        let advice = Fix::Transfer.advice(".spec.replicas", "team-a");
        assert!(advice.contains("kubectl owners transfer") && advice.contains("\"team-a\""), "{advice}");
        let advice = Fix::Migrate.advice(".spec.x", "kubectl-client-side-apply");
        assert!(
            advice.contains("kubectl last-applied migrate") && advice.contains("kubectl owners transfer"),
            "{advice}"
        );
    }

    #[test]
    fn an_entry_is_classified_by_its_identity() {
        let entry = ManagedFieldsEntry::from_value(&serde_json::json!({"manager": "kubectl", "operation": "Update",
            "apiVersion": "apps/v1", "fieldsType": "FieldsV1", "subresource": "scale"}))
        .unwrap();
        assert_eq!(entry.kind(), ManagerKind::Human);
        assert_eq!(entry.identity().kind(), ManagerKind::Human);
        assert!(is_kubectl_manager("kubectl-client-side-apply") && !is_kubectl_manager("kubectlish"));
        assert!(is_placeholder_manager("before-first-apply") && !is_placeholder_manager("kubectl"));
    }

    #[test]
    fn gitops_tools_are_known_by_their_managers_names() {
        assert_eq!(GitOpsTool::of_manager("argocd-controller"), Some(GitOpsTool::ArgoCd));
        assert_eq!(GitOpsTool::of_manager("argocd-application-controller"), Some(GitOpsTool::ArgoCd));
        assert_eq!(GitOpsTool::of_manager("kustomize-controller"), Some(GitOpsTool::Flux));
        assert_eq!(GitOpsTool::of_manager("helm-controller"), Some(GitOpsTool::Flux));
        assert_eq!(GitOpsTool::of_manager("argocd"), None, "a team's own name is no tool's");
        assert_eq!((GitOpsTool::ArgoCd.name(), GitOpsTool::Flux.name()), ("Argo CD", "Flux"));
        assert_eq!((GitOpsTool::ArgoCd.word(), GitOpsTool::Flux.word()), ("argocd", "flux"));
    }
}
