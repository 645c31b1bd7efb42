//! JUnit XML reports, the format CI systems read test results from (GitLab, Jenkins,
//! Azure Pipelines, GitHub actions that publish test reports): one `<testsuite>` of
//! `<testcase>`s, each passed, failed (a finding) or in error (it could not be checked).

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
    let (mut failures, mut errors) = (0, 0);
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
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n  <testsuite name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{body}  </testsuite>\n</testsuites>\n"
    )
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
}
