//! Fuzzes Strategic Merge Patch: apply, two-way and three-way creation under the built-in schema.
//!
//! The input is a JSON array `[kind index, original, patch-or-modified, current]`; the kind index
//! picks one of a few built-in kinds so the fuzzer explores keyed lists, primitive sets,
//! retainKeys fields and directives. Checks: no panic, no hang.
#![no_main]

use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_core::strategic;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const KINDS: &[(&str, &str, &str)] = &[
    ("apps", "v1", "Deployment"),
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
    ("", "v1", "ConfigMap"),
    ("apps", "v1", "StatefulSet"),
];

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(docs)) = serde_json::from_slice::<Value>(data) else { return };
    let index = docs.first().and_then(Value::as_u64).unwrap_or(0) as usize % KINDS.len();
    let (group, version, kind) = KINDS[index];
    let schema = builtin();
    let Some(ty) = schema.root(&Gvk::new(group, version, kind)) else { return };
    let null = Value::Null;
    let original = docs.get(1).unwrap_or(&null);
    let second = docs.get(2).unwrap_or(&null);
    let current = docs.get(3).unwrap_or(&null);
    let _ = strategic::apply(original, second, schema, ty);
    let _ = strategic::create_two_way(original, second, schema, ty);
    let _ = strategic::create_three_way(original, second, current, schema, ty, false);
    let _ = strategic::create_three_way(original, second, current, schema, ty, true);
});
