//! SARIF 2.1.0 logs (OASIS Static Analysis Results Interchange Format), the format code
//! scanning dashboards read findings from (GitHub code scanning, GitLab, Azure DevOps):
//! one run of one tool, its rules, and one result per finding. Findings about cluster
//! objects have no source line: each points at the file that states the rule (a policy)
//! and names the object as a logical location.

use serde_json::{json, Value};

use crate::api::unread::Unreadable;

/// The `$schema` of a SARIF 2.1.0 log.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// One rule of the tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Its `id`, what results name in `ruleId`.
    pub id: String,
    /// One sentence about it.
    pub description: String,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The rule it breaks (one of the log's rules).
    pub rule_id: String,
    /// What was found and what to do, as text.
    pub message: String,
    /// The file the finding is attributed to (a URI reference, e.g. a relative path).
    pub file: String,
    /// The object it is about, fully qualified (`prod/deployment.apps/web`).
    pub object: String,
    /// The field inside it (`.spec.replicas`).
    pub field: String,
    /// Extra properties (`properties` of the result).
    pub properties: Value,
}

/// The log: tool `tool` at `version`, its `rules` and `findings` (all at level `error`), and
/// its invocation: what it could not read (`unread`), one `toolExecutionNotifications` entry
/// each (level `error`, or `warning` when `--allow-unreadable` allows it), and
/// `executionSuccessful: false` when that fails the run, as SARIF reports a tool's failures.
///
/// ```
/// use fieldwise_kube::output::sarif::{log, Rule};
/// let rules = [Rule { id: "web".into(), description: "who owns web".into() }];
/// let log = log("kubectl-owners", "0.1.0", &rules, &[], &Default::default());
/// assert_eq!(log["version"], "2.1.0");
/// assert_eq!(log["runs"][0]["tool"]["driver"]["rules"][0]["id"], "web");
/// ```
pub fn log(tool: &str, version: &str, rules: &[Rule], findings: &[Finding], unread: &Unreadable) -> Value {
    let rule_values: Vec<Value> =
        rules.iter().map(|r| json!({"id": r.id, "shortDescription": {"text": r.description}})).collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let mut result = json!({
                "ruleId": f.rule_id,
                "level": "error",
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": f.file}},
                    "logicalLocations": [
                        {"name": f.field, "fullyQualifiedName": format!("{}:{}", f.object, f.field), "kind": "member"}
                    ]
                }],
                "properties": f.properties,
            });
            if let Some(index) = rules.iter().position(|r| r.id == f.rule_id) {
                result["ruleIndex"] = index.into();
            }
            result
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": tool,
                "version": version,
                "informationUri": env!("CARGO_PKG_HOMEPAGE"),
                "rules": rule_values,
            }},
            "invocations": [invocation(unread)],
            "results": results,
        }]
    })
}

/// The run's invocation: whether it succeeded, and a notification per thing not read.
fn invocation(unread: &Unreadable) -> Value {
    let level = if unread.allowed() { "warning" } else { "error" };
    let notifications: Vec<Value> = unread
        .items()
        .iter()
        .map(|u| {
            let allowed = if unread.allowed() { " (allowed by --allow-unreadable)" } else { "" };
            json!({
                "level": level,
                "descriptor": {"id": "not-read"},
                "message": {"text": format!("{} was not read{allowed}: {}", u.what(), u.reason)},
                "locations": [{"logicalLocations": [{"fullyQualifiedName": u.what(), "kind": "resource"}]}],
            })
        })
        .collect();
    let mut out = json!({"executionSuccessful": !unread.fails()});
    if !notifications.is_empty() {
        out["toolExecutionNotifications"] = Value::Array(notifications);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_name_their_rule_file_and_object() {
        let rules =
            [Rule { id: "a".into(), description: "A".into() }, Rule { id: "b".into(), description: "B".into() }];
        let finding = Finding {
            rule_id: "b".into(),
            message: "m".into(),
            file: "policy.yaml".into(),
            object: "prod/deployment.apps/web".into(),
            field: ".spec.replicas".into(),
            properties: json!({"manager": "kubectl"}),
        };
        let log = log("t", "1", &rules, &[finding], &Unreadable::default());
        let result = &log["runs"][0]["results"][0];
        assert_eq!(result["ruleIndex"], 1);
        assert_eq!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "policy.yaml");
        assert_eq!(
            result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "prod/deployment.apps/web:.spec.replicas"
        );
        assert_eq!(result["properties"]["manager"], "kubectl");
        assert_eq!(log["runs"][0]["invocations"][0], json!({"executionSuccessful": true}));
    }

    #[test]
    fn what_was_not_read_is_a_notification_and_fails_the_execution_unless_allowed() {
        for allowed in [false, true] {
            let mut unread = Unreadable::new(allowed);
            unread.add(crate::api::unread::Unread {
                api_version: "v1".into(),
                resource: "secrets".into(),
                namespace: None,
                name: None,
                reason: "Forbidden: secrets is forbidden".into(),
            });
            let log = log("t", "1", &[], &[], &unread);
            let invocation = &log["runs"][0]["invocations"][0];
            assert_eq!(invocation["executionSuccessful"], allowed, "{invocation}");
            let note = &invocation["toolExecutionNotifications"][0];
            assert_eq!(note["level"], if allowed { "warning" } else { "error" });
            assert!(note["message"]["text"].as_str().unwrap().starts_with("secrets was not read"), "{note}");
            assert_eq!(note["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "secrets");
        }
    }
}
