//! The `kubectl.kubernetes.io/last-applied-configuration` annotation.

/// The annotation client-side `kubectl apply` stores its intent in.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";
