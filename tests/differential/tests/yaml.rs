//! `fieldwise_core::yaml` against kubectl's own reading of YAML: the
//! apimachinery `YAMLOrJSONDecoder` (as `kubectl apply -f` runs it) and
//! `yaml.ToJSON` (as `kubectl patch --patch-file` does), on sigs.k8s.io/yaml and
//! go-yaml v2; and the writer against the same reader.

use fieldwise_core::yaml;
use fieldwise_differential::oracle::Oracle;
use fieldwise_differential::outcome::{from_oracle, judge, Compare, Outcome, Verdict};
use fieldwise_differential::rng::Rng;
use fieldwise_differential::runner::{check, Engine};
use fieldwise_differential::yaml_texts::{kubectl_normalized, TextGen, ValueGen, CORPUS};
use serde_json::{json, Value};

/// Our reading of a stream, as the oracle answers it: the array of documents.
fn read_stream(text: &str) -> Outcome {
    match yaml::read_stream(text) {
        Ok(documents) => Outcome::Accepted(Value::Array(documents.into_iter().map(|d| d.value).collect())),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

fn to_json(text: &str) -> Outcome {
    match yaml::to_json(text) {
        Ok(value) => Outcome::Accepted(value),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

/// Runs `op` on every corpus text and compares with `ours`.
fn corpus_agrees(op: &str, ours: fn(&str) -> Outcome) {
    let mut oracle = Oracle::start().unwrap_or_else(|e| panic!("the Go oracle is required: {e}"));
    let cases: Vec<Value> = CORPUS.iter().map(|text| json!({"op": op, "text": text})).collect();
    let answers = oracle.ask_all(&cases).expect("oracle answers");
    let mut failures = Vec::new();
    let mut rejected = 0;
    for (text, answer) in CORPUS.iter().zip(answers) {
        let upstream = from_oracle(&answer).unwrap_or_else(|e| panic!("unusable case {text:?}: {e}"));
        rejected += usize::from(matches!(upstream, Outcome::Rejected(_)));
        let rust = ours(text);
        let verdict = judge(&rust, &upstream, Compare::Json);
        if verdict != Verdict::Identical {
            failures.push(format!("{verdict:?} on {text:?}\n  rust:     {rust:?}\n  upstream: {upstream:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus texts disagree:\n{}",
        failures.len(),
        CORPUS.len(),
        failures.join("\n")
    );
    // The corpus must exercise both answers.
    assert!(rejected > 10 && rejected < CORPUS.len() - 10, "{rejected} rejected");
}

#[test]
fn yaml_corpus_reads_as_kubectl_apply_reads_it() {
    corpus_agrees("yaml.stream", read_stream);
}

#[test]
fn yaml_corpus_reads_as_kubectl_patch_reads_it() {
    corpus_agrees("yaml.to_json", to_json);
}

#[test]
fn yaml_generated_streams_read_as_kubectl_reads_them() {
    check(Engine {
        op: "yaml.stream",
        generate: Box::new(|rng: &mut Rng| Some(json!({"op": "yaml.stream", "text": TextGen::new(rng).text()}))),
        run: Box::new(|case| read_stream(case["text"].as_str().unwrap_or_default())),
        compare: Compare::Json,
    });
}

#[test]
fn yaml_generated_patches_read_as_kubectl_patch_reads_them() {
    check(Engine {
        op: "yaml.to_json",
        generate: Box::new(|rng: &mut Rng| {
            let mut text = TextGen::new(rng).text();
            // As `--patch` text is typed: mostly without a final line break.
            if rng.percent(60) {
                text.truncate(text.trim_end_matches(['\n', '\r']).len());
            }
            Some(json!({"op": "yaml.to_json", "text": text}))
        }),
        run: Box::new(|case| to_json(case["text"].as_str().unwrap_or_default())),
        compare: Compare::Json,
    });
}

/// The case of a written value: our YAML for it, and the value.
fn written_case(rng: &mut Rng) -> Value {
    let mut values = ValueGen::new(rng);
    let value = match values.value(0) {
        // Mostly objects, as kubectl writes and applies them.
        Value::Null | Value::Bool(_) => Value::Object(values.object(3)),
        other if other.is_string() || other.is_number() => other,
        _ => Value::Object(values.object(3)),
    };
    json!({"op": "yaml.stream", "text": yaml::to_yaml(&value), "value": value})
}

/// What kubectl must read from a written case: the value, its integral floats
/// as integers; and our own reader must read the same.
fn read_back(case: &Value) -> Outcome {
    let value = &case["value"];
    let text = case["text"].as_str().unwrap_or_default();
    if yaml::to_yaml(value) != text {
        return Outcome::Rejected("the case's text is not to_yaml(value) (a shrunk case)".into());
    }
    let expected = Value::Array(vec![kubectl_normalized(value)]);
    match read_stream(text) {
        Outcome::Accepted(ours) if ours == expected => Outcome::Accepted(expected),
        other => Outcome::Panicked(format!("fieldwise reads its own YAML as {other:?}")),
    }
}

#[test]
fn yaml_written_values_read_back_unchanged_by_kubectl() {
    check(Engine {
        op: "yaml.stream",
        generate: Box::new(|rng: &mut Rng| Some(written_case(rng))),
        run: Box::new(read_back),
        compare: Compare::Json,
    });
}

#[test]
fn yaml_written_streams_read_back_document_by_document() {
    let mut oracle = Oracle::start().unwrap_or_else(|e| panic!("the Go oracle is required: {e}"));
    let mut rng = Rng::new(7);
    let documents: Vec<Value> = (0..5).map(|_| Value::Object(ValueGen::new(&mut rng).object(3))).collect();
    let text = yaml::to_yaml_stream(&documents);
    let answer = oracle.ask(&json!({"op": "yaml.stream", "text": text})).expect("oracle answers");
    let expected: Vec<Value> = documents.iter().filter(|d| !d.is_null()).map(kubectl_normalized).collect();
    assert_eq!(from_oracle(&answer), Ok(Outcome::Accepted(Value::Array(expected))), "{text}");
}
