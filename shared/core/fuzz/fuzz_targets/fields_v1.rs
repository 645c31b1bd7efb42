//! Fuzzes the FieldsV1 parser (the `fieldsV1` of every managedFields entry) and the set algebra.
//!
//! Checks: no panic, no hang; a parsed set re-encodes to text that parses back to the same set.
#![no_main]

use fieldwise_core::fieldpath::Set;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(set) = Set::from_fields_v1_str(text) else { return };
    let encoded = set.to_fields_v1_string();
    let again = Set::from_fields_v1_str(&encoded).expect("our own encoding parses");
    assert_eq!(again, set);
    let _ = set.union(&again).difference(&set).leaves();
});
