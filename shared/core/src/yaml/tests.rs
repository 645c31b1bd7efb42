//! The module's behaviour end to end: text in, values out, and back.

use super::*;
use serde_json::{json, Value};

fn one(text: &str) -> Value {
    let docs = read_stream(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(docs.len(), 1, "{text:?}: {docs:?}");
    docs.into_iter().next().map(|d| d.value).unwrap_or_default()
}

fn error(text: &str) -> ReadError {
    read_stream(text).expect_err(text)
}

#[test]
fn keys_and_values_are_read_by_yaml_1_1() {
    assert_eq!(one("y: 2\n"), json!({"true": 2}));
    assert_eq!(
        one("a: yes\nb: on\nc: off\nd: n\ne: ~\nf:\n"),
        json!({"a": true, "b": true, "c": false, "d": false, "e": null, "f": null})
    );
    assert_eq!(
        one("a: 0777\nb: 0x1F\nc: 1_000\nd: 1e3\ne: 1.5\nf: 2001-12-14\n"),
        json!({"a": 511, "b": 31, "c": 1000, "d": 1000, "e": 1.5, "f": "2001-12-14"})
    );
    assert_eq!(
        one("a: 'yes'\nb: \"0777\"\nc: !!str 12\nd: |\n  on\n"),
        json!({"a": "yes", "b": "0777", "c": "12", "d": "on\n"})
    );
    // Typed keys: 1, 0x1 and 1.0 are not the same Go key, but `y` and `yes` are.
    assert_eq!(one("1: a\n2.5: b\ntrue: c\nyes: d\n"), json!({"1": "a", "2.5": "b", "true": "d"}));
}

#[test]
fn duplicate_keys_keep_the_last_value_in_the_first_place() {
    assert_eq!(one("a: 1\nb: 2\na: 3\n"), json!({"a": 3, "b": 2}));
    let keys: Vec<String> = one("a: 1\nb: 2\na: 3\n").as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["a", "b"]);
}

#[test]
fn merges_are_positional_as_in_go_yaml_v2() {
    let text = "base: &b {x: 1, p: 2}\nother: &o {x: 9, z: 3}\nm:\n  x: 0\n  <<: [*b, *o]\n  z: 4\n";
    assert_eq!(one(text)["m"], json!({"x": 1, "p": 2, "z": 4}));
    assert_eq!(one("m:\n  '<<': {a: 1}\n")["m"], json!({"<<": {"a": 1}}));
    assert!(error("a: &a 1\nm:\n  <<: *a\n").problem.contains("map merge requires"));
}

#[test]
fn aliases_expand_and_cycles_and_bombs_are_refused() {
    assert_eq!(one("a: &x [1, {b: 2}]\nc: *x\n"), json!({"a": [1, {"b": 2}], "c": [1, {"b": 2}]}));
    assert!(error("a: &x [*x]\n").problem.contains("contains itself"));
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let started = std::time::Instant::now();
    assert_eq!(error(&bomb).problem, "document contains excessive aliasing");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn streams_are_cut_at_separator_lines_and_skip_empty_documents() {
    let docs = read_stream("---\n# only a comment\n---\na: 1\n--- # two\nnull\n---\n[1]\n").unwrap();
    let seen: Vec<(usize, usize, Value)> = docs.into_iter().map(|d| (d.index, d.line, d.value)).collect();
    assert_eq!(seen, [(2, 4, json!({"a": 1})), (4, 8, json!([1]))]);
    // A `---` with nothing before it opens the next document, as in kubectl.
    assert_eq!(read_stream("---\n\n...\n---\na: 1\n").unwrap()[0].index, 2);
    assert!(read_stream("a: 1\n---\n\n...\n---\nb: 1\n").is_err());
    assert_eq!(read_stream("a: 1\r\n---\r\nb: 2\r\n").unwrap().len(), 2);
    let e = error("a: 1\n--- b: 2\n");
    assert_eq!((e.document, e.line), (2, 2));
    assert!(e.problem.contains("invalid document separator"), "{}", e.problem);
}

#[test]
fn json_streams_and_their_turn_to_yaml() {
    let docs = read_stream("\u{feff} {\"a\": 1.0}\n{\"b\": [1]}\n").unwrap();
    assert_eq!(docs.iter().map(|d| d.value.clone()).collect::<Vec<_>>(), [json!({"a": 1.0}), json!({"b": [1]})]);
    // One JSON value, then YAML.
    let docs = read_stream("{\"a\": 1}\n---\nb: yes\n").unwrap();
    assert_eq!(docs[1].value, json!({"b": true}));
    // Flow YAML that is not JSON is read as YAML from the start.
    assert_eq!(one("{a: on}"), json!({"a": true}));
    // kubectl turns to YAML only with four bytes left at each step.
    assert!(read_stream("{}\nn\n").is_err());
    assert_eq!(read_stream("{}\nno\n").unwrap()[1].value, json!(false));
    // After two JSON values there is no turning back.
    assert!(read_stream("{} {} x: 1\n").is_err());
}

#[test]
fn errors_name_document_line_and_column() {
    let e = error("a: 1\n---\nb: 1\nc: [\n");
    assert_eq!((e.document, e.line), (2, 5));
    let e = error("a: 1\n---\nb: c: d\n");
    assert_eq!((e.document, e.line, e.column), (2, 3, 5));
    assert_eq!(e.to_string(), "document 2, line 3, column 5: mapping values are not allowed in this context");
    let e = error("x: !!int abc\n");
    assert_eq!((e.line, e.column, e.problem.as_str()), (1, 4, "cannot decode !!str `abc` as a !!int"));
    let e = error("x: .inf\n");
    assert!(e.problem.contains("unsupported value: +Inf"), "{}", e.problem);
    let e = error("~: 1\n");
    assert!(e.problem.contains("null"), "{}", e.problem);
    // JSON that fails is read again as YAML, and this is not YAML either.
    let e = error("{\"a\": 1\n");
    assert_eq!(e.document, 1);
}

#[test]
fn deep_nesting_is_refused_quickly() {
    let started = std::time::Instant::now();
    for text in [
        "[".repeat(200_000),
        "{\"a\":".repeat(200_000),
        "- ".repeat(200_000),
        (0..2000).map(|i| format!("{}a:\n", " ".repeat(i))).collect(),
    ] {
        let e = error(&text);
        assert!(e.problem.contains("nested more than 1000"), "{}", e.problem);
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    let fits = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(read_stream(&fits).unwrap().len(), 1);
    let fits_json = format!("{{\"a\":{}1{}}}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
    assert_eq!(read_stream(&fits_json).unwrap().len(), 1);
}

#[test]
fn to_json_reads_a_patch_like_kubectl_patch() {
    assert_eq!(to_json("spec:\n  replicas: 0x10\n").unwrap(), json!({"spec": {"replicas": 16}}));
    assert_eq!(to_json("a: 1\n---\nb: 2\n").unwrap(), json!({"a": 1}));
    assert_eq!(to_json(" {\"a\": 1.0}").unwrap(), json!({"a": 1.0}));
    assert!(to_json("{\"a\": 1} x").is_err());
    assert_eq!(to_json("").unwrap(), Value::Null);
}

#[test]
fn written_yaml_reads_back_to_the_same_value() {
    let value = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"a\":\"b\"}\n"}},
        "data": {
            "yes": "yes", "on": "on", "no": "no", "y": "y", "date": "2001-12-14", "mode": "0777", "exp": "1e3",
            "null": "null", "tilde": "~", "empty": "", "hex": "0x1F", "sexagesimal": "12:30", "merge": "<<",
            "spaces": "  a  ", "colon": "a: b", "hash": "a #b", "dash": "- x", "quote": "it's \"q\"",
            "multi": "line1\n  line2\n", "crlf": "a\r\nb", "tab": "\tx", "unicode": "é ✓ \u{2028} \u{85}",
            "control": "\u{1}\u{7f}", "doc": "---", "end": "...",
        },
        "numbers": [0, -1, 1.5, 1e300, -2.5e-10, 9007199254740993u64],
        "nested": [[[]], [{}], {"a": [null, true, false]}],
        "long": {"k".repeat(1500): "v"},
    });
    let written = to_yaml(&value);
    assert_eq!(one(&written), value, "{written}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

    /// Any text is values or an error, never a panic; weighted toward YAML's own syntax
    /// (quotes, escapes, flow and block indicators), where the parser's edge cases are.
    #[test]
    fn reading_never_panics_on_any_text(
        text in proptest::prop_oneof![
            "\\PC{0,60}",
            "[\"'\\\\:|>\\-?,\\[\\]{}#&*!%@` \\nax0]{0,40}",
        ]
    ) {
        let _ = read_stream(&text);
        let _ = to_json(&text);
    }
}

#[test]
fn documents_are_read_one_at_a_time_and_the_rest_is_never_parsed() {
    // A reader that stops after two documents never meets the broken third (YAML and JSON).
    for text in ["a: 1\n---\nb: 2\n---\nc: [\n", "{\"a\": 1}\n{\"b\": 2}\n{\"c\": [\n"] {
        let mut docs = documents(text);
        let first_two: Vec<Value> = docs.by_ref().take(2).map(|d| d.unwrap().value).collect();
        assert_eq!(first_two, [json!({"a": 1}), json!({"b": 2})], "{text:?}");
        assert!(docs.next().unwrap().is_err(), "{text:?}: the third is broken");
        assert!(docs.next().is_none(), "{text:?}: the stream ends at its error");
        assert!(read_stream(text).is_err(), "{text:?}: read whole, it fails");
    }
    // A bad separator is reached only after the documents before it (the one it cuts short
    // is never read).
    let mut docs = documents("a: 1\n---\nb: 2\n--- c\n");
    assert_eq!(docs.next().unwrap().unwrap().value, json!({"a": 1}));
    assert!(docs.next().unwrap().unwrap_err().problem.contains("invalid document separator"));
}

#[test]
fn each_document_carries_its_duplicate_fields_as_duplicate_fields_finds_them() {
    for text in [
        "data:\n  a: 1\n  a: 2\n---\nb: [{k: 1, k: 2}]\n---\nc: 1\n",
        "{\"data\": {\"a\": 1, \"a\": 2}}\n{\"b\": [{\"k\": 1, \"k\": 2}]}",
    ] {
        let per_document: Vec<(usize, String)> = read_stream(text)
            .unwrap()
            .into_iter()
            .flat_map(|d| d.duplicates.into_iter().map(move |path| (d.index, path)))
            .collect();
        assert_eq!(per_document, duplicate_fields(text), "{text:?}");
    }
}

#[test]
fn lines_of_many_json_values_on_one_line_are_counted_once() {
    // Each position is counted from the one before: the line and column of the last value
    // of a long line are still right.
    let text = "{\"a\": 1}".repeat(3) + "\n\n  {\"b\": 2}";
    let docs = read_stream(&text).unwrap();
    assert_eq!(docs.iter().map(|d| (d.index, d.line)).collect::<Vec<_>>(), [(1, 1), (2, 1), (3, 1), (4, 3)]);
    let e = error("{\"a\": 1}{\"b\": 2} {\"c\": tru}");
    assert_eq!((e.document, e.line), (3, 1));
    assert!((24..=27).contains(&e.column), "at the broken literal, column {}", e.column);
}
