//! Fuzzes `json_patch::apply`: any document and any patch, parsed from the fuzzer's bytes.
//!
//! The input is a JSON array `[doc, patch]`; anything else is skipped. Checks, beyond "no panic":
//! an error names an operation inside the patch, and a successful patch applies the same way twice
//! (the engine is deterministic and keeps no state between calls).
#![no_main]

use fieldwise_core::json_patch::{self, JsonPatchError};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(parts)) = serde_json::from_slice::<Value>(data) else { return };
    let [doc, patch] = parts.as_slice() else { return };
    let first = json_patch::apply(doc, patch);
    if let Err(JsonPatchError::Operation { index, .. }) = &first {
        assert!(patch.as_array().is_some_and(|ops| *index < ops.len()));
    }
    assert_eq!(first, json_patch::apply(doc, patch));
    let _ = json_patch::parse(patch);
});
