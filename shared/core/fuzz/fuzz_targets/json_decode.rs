//! Fuzzes the JSON decoder: on any bytes, `fieldwise_core::json::from_slice` gives what
//! `serde_json::from_slice` gives, the same value (key order and number types included)
//! or the same error message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The outcome as text: the value re-encoded (key order and number types show) or the error.
fn outcome(result: Result<Value, serde_json::Error>) -> String {
    match result {
        Ok(value) => format!("ok {}", serde_json::to_string(&value).expect("encode")),
        Err(e) => format!("error {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(outcome(fieldwise_core::json::from_slice(data)), outcome(serde_json::from_slice(data)));
});
