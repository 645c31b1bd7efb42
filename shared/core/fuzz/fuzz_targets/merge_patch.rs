//! Fuzzes the merge patch engine: apply, two-way and three-way creation on the fuzzer's documents.
//!
//! The input is a JSON array of up to three documents; anything else is skipped. Checks, beyond
//! "no panic": a two-way patch between objects without nulls takes the first to the second.
#![no_main]

use fieldwise_core::merge_patch;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn holds_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(holds_null),
        Value::Object(members) => members.values().any(holds_null),
        _ => false,
    }
}

/// Whether every number is an integer that a Go float64 holds exactly (created patches carry float64s).
fn numbers_survive_float64(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53),
        Value::Array(items) => items.iter().all(numbers_survive_float64),
        Value::Object(members) => members.values().all(numbers_survive_float64),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(docs)) = serde_json::from_slice::<Value>(data) else { return };
    let null = Value::Null;
    let a = docs.first().unwrap_or(&null);
    let b = docs.get(1).unwrap_or(&null);
    let c = docs.get(2).unwrap_or(&null);

    let _ = merge_patch::apply(a, b);
    let _ = merge_patch::try_apply(a, b);
    if let Ok(patch) = merge_patch::create_two_way(a, b) {
        if a.is_object() && b.is_object() && !holds_null(b) && numbers_survive_float64(b) {
            assert_eq!(merge_patch::try_apply(a, &patch).as_ref(), Ok(b));
        }
    }
    let _ = merge_patch::create_three_way(a, b, c);
});
