//! Printing drift: a table per object with violations and a summary line for people; the
//! DriftReport document (`-o json|yaml`, shape in docs/ownership-policy.md), a JUnit
//! report (one test case per object) or a SARIF 2.1.0 log (one result per violation) for
//! CI; and with `--learn`, the policy learned.

use fieldwise_core::fieldpath::value_at;
use fieldwise_core::ownership::policy::defaults::DEFAULT_RULE;
use fieldwise_core::ownership::policy::{emit, DriftFix, ObjectCheck, Policy};
use fieldwise_core::ownership::ManagedFieldsEntry;
use fieldwise_kube::api::unread::Unreadable;
use fieldwise_kube::conn::version;
use fieldwise_kube::output::junit::{self, Outcome, TestCase};
use fieldwise_kube::output::sarif;
use fieldwise_kube::output::{printer, values, OutputFormat};
use fieldwise_kube::{redact, Result};
use jiff::Timestamp;
use serde_json::{json, Value};

use super::{DriftOutput, GitOpsTool};
use crate::age::{self, TimeStyle};
use crate::report::REPORT_API_VERSION;
use crate::summary::table;

/// One violation, as printed.
#[derive(Debug, Clone)]
pub struct ViolationReport {
    field: String,
    manager: String,
    operation: &'static str,
    subresource: String,
    time: Option<String>,
    class: &'static str,
    value: Value,
    rule: String,
    action: &'static str,
    fix: String,
}

/// One checked object: who it is, and its violations (none when clean).
#[derive(Debug, Clone)]
pub struct ObjectReport {
    display: String,
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
    violations: Vec<ViolationReport>,
}

impl ObjectReport {
    /// The report of `object` (`display`: `deployment.apps/web`) from its check.
    pub fn new(display: String, object: &Value, entries: &[ManagedFieldsEntry], check: ObjectCheck) -> Self {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).map(String::from);
        let namespace = text("/metadata/namespace");
        let is_secret = text("/kind").as_deref() == Some("Secret") && text("/apiVersion").as_deref() == Some("v1");
        let violations = check
            .violations
            .into_iter()
            .map(|v| {
                let entry = &entries[v.entry];
                let field = v.path.to_string();
                let value = value_at(object, v.path.elements())
                    .map(|live| redact::value_at_path(is_secret, &v.path, live))
                    .unwrap_or(Value::Null);
                let fix = fix_text(&v.fix, &display, namespace.as_deref(), entry, &field);
                ViolationReport {
                    manager: entry.manager.clone(),
                    operation: entry.operation.as_str(),
                    subresource: entry.subresource.clone(),
                    time: entry.time.clone(),
                    class: v.class,
                    value,
                    rule: v.rule,
                    action: v.fix.name(),
                    fix,
                    field,
                }
            })
            .collect();
        ObjectReport {
            api_version: text("/apiVersion").unwrap_or_default(),
            kind: text("/kind").unwrap_or_default(),
            name: text("/metadata/name").unwrap_or_default(),
            namespace,
            display,
            violations,
        }
    }

    fn json(&self) -> Value {
        let violations: Vec<Value> = self
            .violations
            .iter()
            .map(|v| {
                json!({"field": v.field, "manager": v.manager, "operation": v.operation, "subresource": v.subresource,
                       "time": v.time, "class": v.class, "value": v.value, "rule": v.rule, "action": v.action,
                       "fix": v.fix})
            })
            .collect();
        let mut out = json!({"apiVersion": self.api_version, "kind": self.kind});
        if let Some(ns) = &self.namespace {
            out["namespace"] = ns.clone().into();
        }
        out["name"] = self.name.clone().into();
        out["violations"] = Value::Array(violations);
        out
    }

    /// `prod/deployment.apps/web`, or the display name of a cluster-scoped object.
    fn qualified(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.display),
            None => self.display.clone(),
        }
    }

    /// The object's heading and table.
    fn text(&self, style: TimeStyle, now: Timestamp) -> String {
        let header = ["FIELD", "MANAGER", "OPERATION", "CLASS", "TIME", "VALUE", "FIX"].map(String::from);
        let rows: Vec<[String; 7]> = self
            .violations
            .iter()
            .map(|v| {
                let operation = match v.subresource.as_str() {
                    "" => v.operation.to_string(),
                    sub => format!("{}/{sub}", v.operation),
                };
                let value = if v.value.is_null() { String::new() } else { values::cut(&values::one_line(&v.value)) };
                [
                    v.field.clone(),
                    v.manager.clone(),
                    operation,
                    v.class.to_string(),
                    age::show(v.time.as_deref(), style, now),
                    value,
                    v.fix.clone(),
                ]
            })
            .collect();
        let heading = match &self.namespace {
            Some(ns) => format!("{} (namespace {ns})", self.display),
            None => self.display.clone(),
        };
        let count = self.violations.len();
        format!("{heading}: {count} violation{}\n{}", plural(count), table(&header, &rows))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The fix as the user types or does it.
fn fix_text(fix: &DriftFix, display: &str, namespace: Option<&str>, entry: &ManagedFieldsEntry, field: &str) -> String {
    match fix {
        DriftFix::Transfer { to } => {
            let from = match entry.subresource.as_str() {
                "" => entry.manager.clone(),
                sub => format!("{}/{sub}", entry.manager),
            };
            let ns = namespace.map(|ns| format!(" -n {ns}")).unwrap_or_default();
            format!("kubectl owners transfer {display}{ns} --from {from} --to {}", to.as_deref().unwrap_or("MANAGER"))
        }
        DriftFix::Drop => format!("drop {field} from what {} applies", entry.manager),
        DriftFix::Allow => format!("allow {} on {field} in the policy", entry.manager),
    }
}

/// Counts of the whole run.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Objects checked.
    pub objects: usize,
    /// Objects with at least one violation.
    pub objects_with_violations: usize,
    /// Violations in all.
    pub violations: usize,
}

/// Every object checked, and the counts.
#[derive(Debug, Clone, Default)]
pub struct DriftReport {
    objects: Vec<ObjectReport>,
    /// The counts.
    pub summary: Summary,
}

impl DriftReport {
    /// Adds one checked object.
    pub fn add(&mut self, object: ObjectReport) {
        self.summary.objects += 1;
        if !object.violations.is_empty() {
            self.summary.objects_with_violations += 1;
            self.summary.violations += object.violations.len();
        }
        self.objects.push(object);
    }

    fn failing(&self) -> impl Iterator<Item = &ObjectReport> {
        self.objects.iter().filter(|o| !o.violations.is_empty())
    }

    /// The report in `output` (`None`: the tables and the summary line).
    /// Every format names what could not be read (`unread`): a line, a list, a test case
    /// each, a notification each.
    pub fn render(
        &self,
        output: Option<DriftOutput>,
        policy: &Policy,
        policy_path: &str,
        unread: &Unreadable,
        style: TimeStyle,
        now: Timestamp,
    ) -> Result<String> {
        Ok(match output {
            None => self.text(unread, style, now),
            Some(DriftOutput::Json) => printer::render(&self.document(policy_path, unread), OutputFormat::Json)?,
            Some(DriftOutput::Yaml) => printer::render(&self.document(policy_path, unread), OutputFormat::Yaml)?,
            Some(DriftOutput::Junit) => self.junit(unread, now),
            Some(DriftOutput::Sarif) => {
                let mut text = serde_json::to_string_pretty(&self.sarif(policy, policy_path, unread))?;
                text.push('\n');
                text
            }
        })
    }

    /// The last line. With types or objects not read it says so, never a bare "No
    /// violations" as if all was checked.
    fn summary_line(&self, unread: &Unreadable) -> String {
        let s = &self.summary;
        if !unread.is_empty() {
            return format!(
                "{} violation{} in the {} object{} read; {} not read.",
                s.violations,
                plural(s.violations),
                s.objects,
                plural(s.objects),
                unread.count_text()
            );
        }
        match s.violations {
            0 => format!("No violations in {} object{}.", s.objects, plural(s.objects)),
            n => format!(
                "{n} violation{} in {} of {} object{}.",
                plural(n),
                s.objects_with_violations,
                s.objects,
                plural(s.objects)
            ),
        }
    }

    fn text(&self, unread: &Unreadable, style: TimeStyle, now: Timestamp) -> String {
        let mut out = String::new();
        for object in self.failing() {
            out.push_str(&object.text(style, now));
            out.push('\n');
        }
        if let Some(line) = unread.text_line() {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&self.summary_line(unread));
        out.push('\n');
        out
    }

    fn document(&self, policy_path: &str, unread: &Unreadable) -> Value {
        json!({
            "apiVersion": REPORT_API_VERSION,
            "kind": "DriftReport",
            "policy": policy_path,
            "objects": self.failing().map(ObjectReport::json).collect::<Vec<_>>(),
            "unread": unread.to_json(),
            "summary": {
                "objects": self.summary.objects,
                "objectsWithViolations": self.summary.objects_with_violations,
                "violations": self.summary.violations,
                "unread": unread.items().len(),
                "complete": unread.is_empty(),
            },
        })
    }

    fn junit(&self, unread: &Unreadable, now: Timestamp) -> String {
        let mut cases: Vec<TestCase> = self
            .objects
            .iter()
            .map(|o| TestCase {
                classname: o.display.split('/').next().unwrap_or_default().to_string(),
                name: match &o.namespace {
                    Some(ns) => format!("{ns}/{}", o.name),
                    None => o.name.clone(),
                },
                file: None,
                outcome: match o.violations.len() {
                    0 => Outcome::Passed,
                    n => Outcome::Failed {
                        message: format!("{n} field{} owned against the policy", plural(n)),
                        kind: "drift".into(),
                        body: o.text(TimeStyle::Absolute, now),
                    },
                },
            })
            .collect();
        cases.extend(junit::unread_cases(unread));
        junit::report("kubectl owners drift", &cases)
    }

    fn sarif(&self, policy: &Policy, policy_path: &str, unread: &Unreadable) -> Value {
        let mut rules: Vec<sarif::Rule> = policy
            .rules
            .iter()
            .map(|r| sarif::Rule {
                id: r.name.clone(),
                description: format!("Ownership rule {} of the policy", r.name),
            })
            .collect();
        rules.push(sarif::Rule {
            id: DEFAULT_RULE.into(),
            description: "Objects no rule selects: only the default controllers may own their fields".into(),
        });
        let findings: Vec<sarif::Finding> = self
            .failing()
            .flat_map(|o| {
                o.violations.iter().map(move |v| sarif::Finding {
                    rule_id: v.rule.clone(),
                    message: format!(
                        "{} is owned by {} ({}, {}), which the policy does not expect there. Fix: {}",
                        v.field, v.manager, v.class, v.operation, v.fix
                    ),
                    file: policy_path.to_string(),
                    object: o.qualified(),
                    field: v.field.clone(),
                    properties: json!({"manager": v.manager, "class": v.class, "subresource": v.subresource,
                                       "time": v.time, "action": v.action}),
                })
            })
            .collect();
        sarif::log("kubectl-owners", version::LONG_VERSION, &rules, &findings, unread)
    }
}

/// The learned policy: YAML (with a heading comment) unless `-o json`.
pub fn learned(policy: &Policy, output: Option<DriftOutput>) -> Result<String> {
    let value = policy.to_value();
    Ok(match output {
        Some(DriftOutput::Json) => printer::render(&value, OutputFormat::Json)?,
        _ => format!(
            "# Learned by kubectl owners drift --learn: the owners of today, kind by kind.\n# Check with: kubectl owners drift ... --policy FILE (schema: docs/ownership-policy.md)\n{}",
            printer::render(&value, OutputFormat::Yaml)?
        ),
    })
}

/// The policy's allowed and ignored fields for a GitOps tool: YAML, with what it could not
/// express as comments (with `-o json`: JSON, and those notes on stderr).
pub fn emitted(policy: &Policy, tool: GitOpsTool, output: Option<DriftOutput>) -> Result<String> {
    let (emitted, place) = match tool {
        GitOpsTool::Argocd => (emit::argocd(policy), "an Argo CD Application's spec"),
        GitOpsTool::Flux => (emit::flux(policy), "a Flux HelmRelease's spec (helm-controller drift detection)"),
    };
    if output == Some(DriftOutput::Json) {
        for note in &emitted.notes {
            eprintln!("note: {note}");
        }
        return printer::render(&emitted.value, OutputFormat::Json);
    }
    let mut text = format!("# From the ownership policy, for {place}.\n");
    for note in &emitted.notes {
        text.push_str(&format!("# note: {note}\n"));
    }
    text.push_str(&printer::render(&emitted.value, OutputFormat::Yaml)?);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::ownership::policy::parse_policy;
    use fieldwise_kube::api::unread::Unread;

    fn policy() -> Policy {
        parse_policy(
            "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: web\n  match:\n    kinds: [ConfigMap]\n  managers: [ci]\n",
        )
        .unwrap()
    }

    /// Secrets not read; `allowed`: with --allow-unreadable.
    fn secrets_unread(allowed: bool) -> Unreadable {
        let mut unread = Unreadable::new(allowed);
        unread.add(Unread {
            api_version: "v1".into(),
            resource: "secrets".into(),
            namespace: Some("prod".into()),
            name: None,
            reason: "Forbidden: secrets is forbidden: User \"x\" cannot list resource \"secrets\"".into(),
        });
        unread
    }

    fn render(output: Option<DriftOutput>, unread: &Unreadable) -> String {
        let now = Timestamp::now();
        DriftReport::default().render(output, &policy(), "p.yaml", unread, TimeStyle::Absolute, now).unwrap()
    }

    #[test]
    fn a_run_that_read_nothing_never_reads_as_clean_in_any_format() {
        let unread = secrets_unread(false);
        let text = render(None, &unread);
        assert_eq!(
            text,
            "Not read (1 type): secrets (Forbidden); the check is incomplete.\n0 violations in the 0 objects read; 1 type not read.\n"
        );
        for output in [DriftOutput::Json, DriftOutput::Yaml] {
            let rendered = render(Some(output), &unread);
            let doc: Value = match output {
                DriftOutput::Json => serde_json::from_str(&rendered).unwrap(),
                _ => fieldwise_core::yaml::to_json(&rendered).unwrap(),
            };
            assert_eq!(doc["unread"][0]["resource"], "secrets", "{rendered}");
            assert_eq!(doc["summary"]["complete"], false, "{rendered}");
            assert_eq!(doc["summary"]["unread"], 1, "{rendered}");
        }
        let xml = render(Some(DriftOutput::Junit), &unread);
        assert!(xml.contains("tests=\"1\" failures=\"0\" errors=\"1\">"), "{xml}");
        let log: Value = serde_json::from_str(&render(Some(DriftOutput::Sarif), &unread)).unwrap();
        assert_eq!(log["runs"][0]["invocations"][0]["executionSuccessful"], false, "{log}");
    }

    #[test]
    fn everything_read_keeps_the_clean_line_and_an_empty_list() {
        let all_read = Unreadable::new(false);
        assert_eq!(render(None, &all_read), "No violations in 0 objects.\n");
        let doc: Value = serde_json::from_str(&render(Some(DriftOutput::Json), &all_read)).unwrap();
        assert_eq!(doc["unread"], json!([]));
        assert_eq!(doc["summary"]["complete"], true);
        let allowed = render(None, &secrets_unread(true));
        assert!(allowed.starts_with("Not read (1 type): secrets (Forbidden); allowed by --allow-unreadable.\n"));
    }
}
