use super::*;
use proptest::prelude::*;

/// The outcome as text: the value re-encoded (key order and number types show) or the error message.
fn outcome(result: Result<Value, serde_json::Error>) -> String {
    match result {
        Ok(value) => format!("ok {}", serde_json::to_string(&value).expect("encode")),
        Err(e) => format!("error {e}"),
    }
}

fn assert_same_as_serde_json(bytes: &[u8]) {
    let ours = outcome(from_slice(bytes));
    let theirs = outcome(serde_json::from_slice(bytes));
    assert_eq!(ours, theirs, "input {:?}", String::from_utf8_lossy(bytes));
    if let Ok(text) = std::str::from_utf8(bytes) {
        assert_eq!(outcome(from_str(text)), outcome(serde_json::from_str(text)), "input {text:?}");
    }
}

#[test]
fn decodes_what_serde_json_decodes() {
    for text in [
        r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1","b":"two"}}"#,
        " \t\r\n{ \"a\" : [ 1 , 2 , { } , [ ] ] , \"b\" : null , \"c\" : true , \"d\" : false } \n",
        r#"{"b":1,"a":2,"b":3}"#,
        r#""esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC \ud83d\ude00 end""#,
        r#"["é", "日本", "\u0000"]"#,
        "[0, 7, 1234567890123456789, 9999999999999999999, 18446744073709551615, 18446744073709551616]",
        "[-0, -1, -9223372036854775808, -9223372036854775809, 0.0, 1.5, 1e2, 1E-2, 2.5e+3, 1e400, 0.1]",
        "[1.7976931348623157e308, 5e-324, 123456789012345678901234567890]",
        "3",
        r#""""#,
        "[[[[[[[[[[]]]]]]]]]]",
    ] {
        assert_same_as_serde_json(text.as_bytes());
        if serde_json::from_str::<Value>(text).is_ok() {
            assert!(decode(text).is_some(), "{text:?} is left to serde_json");
        }
    }
}

#[test]
fn rejects_what_serde_json_rejects_with_its_message() {
    for text in [
        "",
        " ",
        "{",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1,]",
        "[1 2]",
        "{a:1}",
        "01",
        "[01]",
        "-",
        "1.",
        ".5",
        "+1",
        "1e",
        "[1-2]",
        "tru",
        "nul",
        "truex",
        "{} {}",
        "\"unterminated",
        "\"tab\tinside\"",
        "\"bad \\x escape\"",
        "\"\\u12\"",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "[\"a\" \"b\"]",
        "{\"a\":1 \"b\":2}",
        "NaN",
        "[Infinity]",
    ] {
        assert!(serde_json::from_str::<Value>(text).is_err(), "serde_json accepts {text:?}");
        assert_same_as_serde_json(text.as_bytes());
    }
    assert_same_as_serde_json(b"\"\xff\"");
    assert_same_as_serde_json(b"{\"a\":\"\xc3\"}");
}

#[test]
fn deep_nesting_is_decided_by_serde_json() {
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 127, 128, 129, 1000] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_same_as_serde_json(text.as_bytes());
        let text = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert_same_as_serde_json(text.as_bytes());
    }
}

#[test]
fn containers_are_built_at_their_final_size() {
    let Value::Object(map) = from_str(r#"{"a":[1,2,3],"b":{"c":1}}"#).unwrap() else { panic!("object") };
    let Value::Array(items) = &map["a"] else { panic!("array") };
    assert_eq!(items.capacity(), 3);
}

#[test]
fn the_lowest_flag_of_a_word_is_its_first_byte_to_decode() {
    let special = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..200_000 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        // Bias bytes towards the interesting ones.
        let bytes = rng.to_le_bytes().map(|b| match b % 8 {
            0 => b'"',
            1 => b'\\',
            2 => b % 0x21,
            _ => b,
        });
        let bytes = if rng.is_multiple_of(3) { rng.to_le_bytes() } else { bytes };
        let flags = decoding_flags(u64::from_le_bytes(bytes));
        let first = bytes.iter().position(|&b| special(b));
        assert_eq!((flags != 0).then(|| flags.trailing_zeros() as usize / 8), first, "{bytes:?}");
    }
}

#[test]
fn long_strings_decode_as_with_serde_json() {
    let line = "v2-0000: the quick brown fox jumps over the lazy dog 0123456789\\n";
    for text in [line.repeat(40), format!(r#"é{}\"q\u00e9{}"#, line.repeat(3), "x".repeat(17))] {
        let doc = format!(r#"{{"data": {{"a": "{text}", "b{text}": 1}}}}"#);
        assert_same_as_serde_json(doc.as_bytes());
        assert!(decode(&doc).is_some());
    }
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        (0u64..1000).prop_map(Value::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_.-]{0,12}",
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![Just('"'), Just('\\'), Just('\u{1}'), Just('é'), Just('😀'), Just('a')],
            0..8
        )
        .prop_map(|cs| cs.into_iter().collect()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf =
        prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::Bool), number(), text().prop_map(Value::String)];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn encoded_values_decode_as_with_serde_json(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        assert_same_as_serde_json(text.as_bytes());
    }

    /// Damaged documents: every outcome, value or error message, is serde_json's.
    #[test]
    fn damaged_documents_decode_as_with_serde_json(
        value in json_value(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(
            b"{}[]\",:\\ 0-.eE+tfnu\x01\xc3\xa9".to_vec())), 1..4),
    ) {
        let mut bytes = serde_json::to_vec(&value).unwrap();
        for (at, kind, byte) in edits {
            let i = at.index(bytes.len() + 1);
            match kind {
                0 => bytes.insert(i, byte),
                1 if i < bytes.len() => { bytes.remove(i); }
                _ if i < bytes.len() => bytes[i] = byte,
                _ => bytes.push(byte),
            }
        }
        assert_same_as_serde_json(&bytes);
    }
}
