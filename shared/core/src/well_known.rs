//! Names Kubernetes and kubectl give meaning to, defined once for every crate:
//! the annotation client-side apply keeps its intent in, and the field manager
//! names kubectl and the apiserver write under. The glue crate and the plugins
//! import them from here (or through the modules that re-export them), so a
//! name can never be spelled two ways.

/// The annotation client-side `kubectl apply` stores its intent in
/// (kubectl's `LastAppliedConfigAnnotation`).
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager client-side `kubectl apply` writes as.
pub const CLIENT_SIDE_APPLY_MANAGER: &str = "kubectl-client-side-apply";

/// The manager `kubectl create` writes as.
pub const CREATE_MANAGER: &str = "kubectl-create";

/// The manager `kubectl replace` writes as.
pub const REPLACE_MANAGER: &str = "kubectl-replace";

/// The manager the apiserver records for fields set before an object's first
/// server-side apply (upstream's `BeforeFirstApplyManager`).
pub const BEFORE_FIRST_APPLY_MANAGER: &str = "before-first-apply";

/// The manager the apiserver merges the oldest update managers into when an
/// object has too many (upstream's `ancient-changes` bucket).
pub const ANCIENT_CHANGES_MANAGER: &str = "ancient-changes";

/// The annotation by which Helm keeps an object an upgrade or uninstall would delete
/// (Helm's `ResourcePolicyAnno`).
pub const HELM_RESOURCE_POLICY_ANNOTATION: &str = "helm.sh/resource-policy";

/// The value of [`HELM_RESOURCE_POLICY_ANNOTATION`] that keeps the object (Helm's `KeepPolicy`).
pub const HELM_KEEP_POLICY: &str = "keep";
