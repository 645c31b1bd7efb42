//! Whether an object is ready, and why not: the READY and REASON columns that
//! `kubectl tree` users read, derived from `status` alone.
//!
//! Kubernetes has no single readiness field. Most types that have one say it
//! with a `Ready` condition; others only have conditions of their own
//! (`Available`, `Progressing`, `ReplicaFailure`); a Pod also has a phase and
//! per-container states that `kubectl get pods` folds into its STATUS column.
//! The rule here, in order:
//!
//! 1. the `Ready` condition: READY is its status, REASON its reason;
//! 2. else the first condition that is not in its healthy state: READY is
//!    `False` (or `Unknown`), REASON its reason (its type when it has none).
//!    Healthy means `True`, except for the conditions whose `True` is the
//!    trouble ([`TRUE_MEANS_TROUBLE`]: `ReplicaFailure`, `Failed`, ...);
//! 3. else nothing (shown as `-`): no condition, or every one is healthy.
//!
//! For a Pod, REASON is what `kubectl get pods` shows as STATUS: `Terminating`
//! while it is being deleted, else `status.reason` (`Evicted`), else the first
//! container's waiting or terminated reason (`CrashLoopBackOff`,
//! `ImagePullBackOff`, `Error`), else the phase (`Pending`, `Running`); READY is
//! still its `Ready` condition.

use serde_json::Value;

/// Condition types whose status `True` reports a problem (the opposite of most).
pub const TRUE_MEANS_TROUBLE: [&str; 7] =
    ["ReplicaFailure", "Failed", "Stalled", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"];

/// What the READY and REASON cells of one object say; `None` is shown as `-`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Readiness {
    /// `True`, `False` or `Unknown` (a condition's status).
    pub ready: Option<String>,
    /// Why: a condition's reason or type, or a Pod's status.
    pub reason: Option<String>,
}

impl Readiness {
    /// The READY cell: the status, or `-`.
    pub fn ready_cell(&self) -> &str {
        self.ready.as_deref().unwrap_or("-")
    }

    /// The REASON cell: the reason, or `-`.
    pub fn reason_cell(&self) -> &str {
        self.reason.as_deref().unwrap_or("-")
    }
}

/// The readiness of any object (see the module docs for the rule).
pub fn readiness(object: &Value) -> Readiness {
    let conditions: Vec<&Value> =
        object.pointer("/status/conditions").and_then(Value::as_array).into_iter().flatten().collect();
    let from_conditions = from_conditions(&conditions);
    if is_pod(object) {
        return Readiness { ready: from_conditions.ready, reason: pod_status(object).or(from_conditions.reason) };
    }
    from_conditions
}

fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn from_conditions(conditions: &[&Value]) -> Readiness {
    if let Some(ready) = conditions.iter().find(|c| text(c, "type") == Some("Ready")) {
        return Readiness {
            ready: text(ready, "status").map(str::to_string),
            reason: text(ready, "reason").map(str::to_string),
        };
    }
    for condition in conditions {
        let (Some(kind), Some(status)) = (text(condition, "type"), text(condition, "status")) else { continue };
        let troubled = TRUE_MEANS_TROUBLE.contains(&kind);
        let healthy = if troubled { status == "False" } else { status == "True" };
        if healthy {
            continue;
        }
        // A trouble condition that is True means "not ready"; an unknown one stays Unknown.
        let ready = if status == "Unknown" { "Unknown" } else { "False" };
        let reason = text(condition, "reason").unwrap_or(kind);
        return Readiness { ready: Some(ready.to_string()), reason: Some(reason.to_string()) };
    }
    Readiness::default()
}

fn is_pod(object: &Value) -> bool {
    text(object, "kind") == Some("Pod") && text(object, "apiVersion") == Some("v1")
}

/// What `kubectl get pods` shows as STATUS, in its order of precedence.
fn pod_status(pod: &Value) -> Option<String> {
    if pod.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Some("Terminating".into());
    }
    let status = pod.get("status")?;
    if let Some(reason) = text(status, "reason") {
        return Some(reason.into());
    }
    let containers = status.get("containerStatuses").and_then(Value::as_array).into_iter().flatten();
    for container in containers {
        for state in ["waiting", "terminated"] {
            let Some(reason) = container.pointer(&format!("/state/{state}")).and_then(|s| text(s, "reason")) else {
                continue;
            };
            // A container that completed while the Pod still runs is not the Pod's story.
            if reason == "Completed" && text(status, "phase") == Some("Running") {
                continue;
            }
            return Some(reason.into());
        }
    }
    text(status, "phase").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cells(object: Value) -> (String, String) {
        let r = readiness(&object);
        (r.ready_cell().to_string(), r.reason_cell().to_string())
    }

    fn pair(ready: &str, reason: &str) -> (String, String) {
        (ready.to_string(), reason.to_string())
    }

    #[test]
    fn the_ready_condition_wins() {
        let object = json!({"kind": "Widget", "status": {"conditions": [
            {"type": "Synced", "status": "False", "reason": "Pending"},
            {"type": "Ready", "status": "True", "reason": "AllGood"},
        ]}});
        assert_eq!(cells(object), pair("True", "AllGood"));
        let no_reason = json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        assert_eq!(cells(no_reason), pair("Unknown", "-"));
    }

    #[test]
    fn else_the_first_unhealthy_condition() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": {"conditions": [
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
        ]}});
        assert_eq!(cells(deployment), pair("False", "MinimumReplicasUnavailable"));
        // True is the trouble for ReplicaFailure; False is its healthy state.
        let failing = json!({"kind": "ReplicaSet", "status": {"conditions": [
            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"},
        ]}});
        assert_eq!(cells(failing), pair("False", "FailedCreate"));
        let fine = json!({"kind": "ReplicaSet", "status": {"conditions": [
            {"type": "ReplicaFailure", "status": "False"},
            {"type": "Progressing", "status": "Unknown"},
        ]}});
        assert_eq!(cells(fine), pair("Unknown", "Progressing"));
    }

    #[test]
    fn a_dash_when_nothing_says() {
        assert_eq!(cells(json!({"kind": "ConfigMap", "data": {}})), pair("-", "-"));
        assert_eq!(cells(json!({"kind": "ReplicaSet", "status": {"replicas": 1}})), pair("-", "-"));
        let healthy = json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
        assert_eq!(cells(healthy), pair("-", "-"));
        // Malformed conditions are skipped, never a panic.
        let odd = json!({"status": {"conditions": [7, {"type": "X"}, {"status": "False"}]}});
        assert_eq!(cells(odd), pair("-", "-"));
    }

    #[test]
    fn pods_read_like_kubectl_get_pods() {
        let pod =
            |status: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": status});
        assert_eq!(cells(pod(json!({"phase": "Pending"}))), pair("-", "Pending"));
        let running = pod(json!({"phase": "Running", "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "True"},
        ]}));
        assert_eq!(cells(running), pair("True", "Running"));
        let crashing = pod(json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
        "containerStatuses": [
            {"name": "sidecar", "state": {"terminated": {"reason": "Completed"}}},
            {"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]}));
        assert_eq!(cells(crashing), pair("False", "CrashLoopBackOff"));
        assert_eq!(cells(pod(json!({"phase": "Failed", "reason": "Evicted"}))), pair("-", "Evicted"));
        let mut deleting = pod(json!({"phase": "Running"}));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(cells(deleting), pair("-", "Terminating"));
        // No status at all: the Ready rule's answer, which is nothing.
        assert_eq!(cells(json!({"apiVersion": "v1", "kind": "Pod"})), pair("-", "-"));
        // A kind named Pod in another group is not a Pod.
        let other = json!({"apiVersion": "x.dev/v1", "kind": "Pod", "status": {"phase": "Running"}});
        assert_eq!(cells(other), pair("-", "-"));
    }
}
