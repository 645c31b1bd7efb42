//! Runs every case of the RFC 6902 test suite (npm `json-patch-test-suite`) through `json_patch::apply`.
//!
//! The suite says what RFC 6902 requires; this crate does what the apiserver does. Where the two
//! differ, the case is listed in [`apiserver_deviations`] with the apiserver's outcome (checked
//! against evanphx/json-patch v4.12.0 through the Go oracle in tests/oracle), and that outcome is
//! asserted instead. `docs/json-patch-deviations.md` explains each one.
//!
//! Cases marked `disabled` in the suite are run too: the apiserver's behaviour is defined for all
//! of them, so each is asserted (against the suite, or against the deviation table).
//!
//! The data is fetched by `scripts/fetch-test-data`; without it this test fails, never skips.

use std::path::PathBuf;

use fieldwise_core::json_patch;
use serde_json::{json, Value};

/// What the apiserver does with a case.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Applies, giving this document.
    Patched(Value),
    /// Applies (the suite gives no document to compare with).
    Applies,
    /// Refuses the patch.
    Refused,
}

/// Cases where the apiserver departs from the suite: file, index, the case's comment (to catch a
/// reordered suite), and what the apiserver does instead.
fn apiserver_deviations() -> Vec<(&'static str, usize, &'static str, Outcome)> {
    vec![
        // A scalar document cannot be decoded for patching (only objects reach the apiserver anyway).
        ("tests.json", 10, "Toplevel scalar values OK?", Outcome::Refused),
        // Negative indices count from the end: -1 inserts after the last element.
        ("tests.json", 16, "", Outcome::Patched(json!({"bar": [1, 2, "5"]}))),
        // `add` cannot address the whole document ("" names no member upstream).
        ("tests.json", 59, "replacing the root of the document is possible with add", Outcome::Refused),
        // A missing `value` is read as null by add and replace.
        ("tests.json", 70, "missing 'value' parameter to add", Outcome::Patched(json!([1, null]))),
        ("tests.json", 71, "missing 'value' parameter to replace", Outcome::Patched(json!([null]))),
        // json-patch v4.13 (Kubernetes 1.37) tests a missing `value` as null; the element is null.
        ("tests.json", 72, "missing 'value' parameter to test", Outcome::Patched(json!([null]))),
        // Members an op does not use (here `value` on move) are ignored.
        ("tests.json", 76, "duplicate ops", Outcome::Patched(json!({"baz": "bar"}))),
    ]
}

struct Case {
    file: &'static str,
    index: usize,
    raw: Value,
}

impl Case {
    fn comment(&self) -> &str {
        self.raw.get("comment").and_then(Value::as_str).unwrap_or("")
    }

    fn disabled(&self) -> bool {
        self.raw.get("disabled").and_then(Value::as_bool).unwrap_or(false)
    }

    /// What the suite expects.
    fn suite_outcome(&self) -> Outcome {
        if self.raw.get("error").is_some() {
            Outcome::Refused
        } else if let Some(expected) = self.raw.get("expected") {
            Outcome::Patched(expected.clone())
        } else {
            Outcome::Applies
        }
    }

    fn actual(&self) -> Result<Value, json_patch::JsonPatchError> {
        json_patch::apply(&self.raw["doc"], &self.raw["patch"])
    }
}

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-data/json-patch-test-suite")
}

fn load_suite() -> Vec<Case> {
    let dir = suite_dir();
    let mut cases = Vec::new();
    for file in ["tests.json", "spec_tests.json"] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e}\nThe JSON Patch test suite is not fetched yet: run scripts/fetch-test-data \
                 from the repository root (it uses npm).",
                path.display()
            )
        });
        let parsed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Value::Array(items) = parsed else { panic!("{}: expected an array of cases", path.display()) };
        cases.extend(items.into_iter().enumerate().map(|(index, raw)| Case { file, index, raw }));
    }
    cases
}

fn matches(outcome: &Outcome, actual: &Result<Value, json_patch::JsonPatchError>) -> bool {
    match (outcome, actual) {
        (Outcome::Patched(expected), Ok(got)) => expected == got,
        (Outcome::Applies, Ok(_)) => true,
        (Outcome::Refused, Err(_)) => true,
        _ => false,
    }
}

#[test]
fn every_suite_case_behaves_as_the_apiserver() {
    let cases = load_suite();
    let deviations = apiserver_deviations();
    let mut failures = Vec::new();
    let mut disabled = Vec::new();
    for case in &cases {
        if case.disabled() {
            disabled.push(format!("{} #{} {:?}", case.file, case.index, case.comment()));
        }
        let deviation = deviations.iter().find(|(f, i, _, _)| *f == case.file && *i == case.index);
        let expected = match deviation {
            Some((_, _, comment, outcome)) => {
                assert_eq!(
                    case.comment(),
                    *comment,
                    "{} #{}: the suite changed; review the deviation",
                    case.file,
                    case.index
                );
                outcome.clone()
            }
            None => case.suite_outcome(),
        };
        let actual = case.actual();
        if !matches(&expected, &actual) {
            failures.push(format!(
                "{} #{} {:?}: expected {:?}, got {:?}\n  doc: {}\n  patch: {}",
                case.file,
                case.index,
                case.comment(),
                expected,
                actual,
                case.raw["doc"],
                case.raw["patch"]
            ));
        }
    }
    println!("{} suite cases run, {} disabled in the suite (run and asserted too):", cases.len(), disabled.len());
    for d in &disabled {
        println!("  {d}");
    }
    assert!(cases.len() >= 95, "expected the whole suite (95 cases in 1.1.0), found {}", cases.len());
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn deviations_are_real_departures_from_the_suite() {
    // Every listed deviation must contradict the suite, so the table never hides an agreement.
    let cases = load_suite();
    for (file, index, comment, outcome) in apiserver_deviations() {
        let case = cases.iter().find(|c| c.file == file && c.index == index);
        let case = case.unwrap_or_else(|| panic!("{file} #{index} ({comment}) is not in the suite"));
        assert_ne!(case.suite_outcome(), outcome, "{file} #{index}: the suite agrees with the apiserver");
    }
}

#[test]
fn refused_cases_name_the_operation() {
    // Error messages carry the index and op of the failing operation, for every refused case
    // that has a well-formed op.
    for case in load_suite() {
        let Err(err) = case.actual() else { continue };
        let message = err.to_string();
        if let json_patch::JsonPatchError::Operation { index, op, .. } = &err {
            assert!(message.starts_with(&format!("operation {index} ({op}")), "{message}");
        }
    }
}
