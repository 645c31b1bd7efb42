//! JUnit XML reports, the format CI systems read test results from (GitLab, Jenkins,
//! Azure Pipelines, GitHub actions that publish test reports): one `<testsuite>` of
//! `<testcase>`s, each passed, failed (a finding), in error (it could not be checked) or
//! skipped (not checked, allowed).

use crate::api::unread::Unreadable;

/// How one test case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing found.
    Passed,
    /// A finding: `message` is its one-line summary, `kind` its type, `body` the details.
    Failed {
        /// One line.
        message: String,
        /// The failure's type attribute.
        kind: String,
        /// The details, as text.
        body: String,
    },
    /// It was not checked, and that is allowed (`--allow-unreadable`): `message` says why.
    Skipped {
        /// Why, in one line.
        message: String,
    },
    /// It could not be checked.
    Error {
        /// Why, in one line.
        message: String,
        /// The details, as text (none: an empty element).
        body: String,
    },
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// The `classname` attribute (a kind, `deployment.apps`).
    pub classname: String,
    /// The `name` attribute (an object, `prod/web`).
    pub name: String,
    /// The `file` attribute, when the case comes from a file.
    pub file: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
}

/// The whole report: one suite named `suite` (`kubectl owners drift`) holding `cases`.
///
/// ```
/// use fieldwise_kube::output::junit::{report, Outcome, TestCase};
/// let case = TestCase { classname: "configmap".into(), name: "a&b".into(), file: None, outcome: Outcome::Passed };
/// let xml = report("kubectl owners drift", &[case]);
/// assert!(xml.contains(r#"<testcase classname="configmap" name="a&amp;b">"#));
/// assert!(xml.contains(r#"tests="1" failures="0" errors="0""#));
/// ```
pub fn report(suite: &str, cases: &[TestCase]) -> String {
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    let mut body = String::new();
    for case in cases {
        body.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            escape(&case.classname),
            escape(&case.name)
        ));
        if let Some(file) = &case.file {
            body.push_str(&format!(" file=\"{}\"", escape(file)));
        }
        body.push_str(">\n");
        match &case.outcome {
            Outcome::Passed => {}
            Outcome::Failed { message, kind, body: details } => {
                failures += 1;
                body.push_str(&format!(
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                    escape(message),
                    escape(kind),
                    escape(details)
                ));
            }
            Outcome::Skipped { message } => {
                skipped += 1;
                body.push_str(&format!("      <skipped message=\"{}\"/>\n", escape(message)));
            }
            Outcome::Error { message, body: details } if details.is_empty() => {
                errors += 1;
                body.push_str(&format!("      <error message=\"{}\"/>\n", escape(message)));
            }
            Outcome::Error { message, body: details } => {
                errors += 1;
                body.push_str(&format!("      <error message=\"{}\">{}</error>\n", escape(message), escape(details)));
            }
        }
        body.push_str("    </testcase>\n");
    }
    let tests = cases.len();
    let suite = escape(suite);
    // `skipped` only when some are: the reports of runs that read everything stay as they were.
    let mut counts = format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\"");
    if skipped > 0 {
        counts.push_str(&format!(" skipped=\"{skipped}\""));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{suite}\" {counts}>\n  <testsuite name=\"{suite}\" {counts}>\n{body}  </testsuite>\n</testsuites>\n"
    )
}

/// One test case per type or object a check could not read (classname: the type; name: the
/// object, or `(every object)` for a whole type), so a CI job sees them and `tests` is never
/// 0 for a check that could not look: in error, or skipped when `--allow-unreadable` allows them.
pub fn unread_cases(unreadable: &Unreadable) -> Vec<TestCase> {
    unreadable
        .items()
        .iter()
        .map(|u| TestCase {
            classname: u.resource.clone(),
            name: match (&u.name, &u.namespace) {
                (Some(name), Some(ns)) => format!("{ns}/{name}"),
                (Some(name), None) => name.clone(),
                (None, _) => "(every object)".into(),
            },
            file: None,
            outcome: if unreadable.allowed() {
                Outcome::Skipped { message: format!("not read (allowed by --allow-unreadable): {}", u.reason) }
            } else {
                Outcome::Error { message: format!("not read: {}", u.reason), body: String::new() }
            },
        })
        .collect()
}

/// Text as XML attribute or element content: markup characters as entities, newlines as
/// `&#10;` (kept inside attributes), other control characters (which XML 1.0 cannot hold)
/// left out.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            c if (c as u32) < 0x20 && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_errors_are_counted_and_escaped() {
        let cases = [
            TestCase {
                classname: "deployment.apps".into(),
                name: "prod/web".into(),
                file: Some("p.yaml".into()),
                outcome: Outcome::Failed {
                    message: "2 violations".into(),
                    kind: "drift".into(),
                    body: "a <b>\nc".into(),
                },
            },
            TestCase {
                classname: "configmap".into(),
                name: "prod/c".into(),
                file: None,
                outcome: Outcome::Error { message: "bad \u{1}entry".into(), body: String::new() },
            },
        ];
        let xml = report("s", &cases);
        assert!(xml.contains("tests=\"2\" failures=\"1\" errors=\"1\""), "{xml}");
        assert!(xml.contains("<failure message=\"2 violations\" type=\"drift\">a &lt;b&gt;&#10;c</failure>"), "{xml}");
        assert!(xml.contains("<error message=\"bad entry\"/>"), "{xml}");
        assert!(xml.contains("file=\"p.yaml\""), "{xml}");
    }

    fn unreadable(allowed: bool) -> Unreadable {
        let mut gate = Unreadable::new(allowed);
        gate.add(crate::api::unread::Unread {
            api_version: "v1".into(),
            resource: "secrets".into(),
            namespace: None,
            name: None,
            reason: "Forbidden: secrets is forbidden".into(),
        });
        gate
    }

    #[test]
    fn each_type_not_read_is_a_case_in_error_or_skipped_when_allowed() {
        let xml = report("s", &unread_cases(&unreadable(false)));
        assert!(xml.contains("tests=\"1\" failures=\"0\" errors=\"1\">"), "{xml}");
        assert!(xml.contains("<testcase classname=\"secrets\" name=\"(every object)\">"), "{xml}");
        assert!(xml.contains("<error message=\"not read: Forbidden: secrets is forbidden\"/>"), "{xml}");
        let xml = report("s", &unread_cases(&unreadable(true)));
        assert!(xml.contains("tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\""), "{xml}");
        assert!(xml.contains("<skipped message=\"not read (allowed by --allow-unreadable): Forbidden"), "{xml}");
    }
}
