//! `fieldwise_core::fieldpath` against structured-merge-diff v4.6.0: FieldsV1
//! decode/encode (`Set.FromJSON`/`ToJSON`, byte for byte), set operations,
//! and the field set of an object under the built-in schema
//! (`TypedValue.ToFieldSet` through client-go's embedded schema).

use fieldwise_core::fieldpath::{field_set, Set};
use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_differential::cases::{self, CaseGen};
use fieldwise_differential::outcome::{Compare, Outcome};
use fieldwise_differential::runner::{check, Engine};
use serde_json::Value;

/// Decodes a FieldsV1 text field of a case.
fn decode(case: &Value, field: &str) -> Result<Set, String> {
    let text = case[field].as_str().ok_or_else(|| format!("case has no {field} text"))?;
    Set::from_fields_v1_str(text).map_err(|e| e.to_string())
}

#[test]
fn fieldpath_roundtrip_matches_upstream_byte_for_byte() {
    check(Engine {
        op: "fieldpath.roundtrip",
        generate: Box::new(|rng| Some(cases::fieldpath_roundtrip(rng))),
        run: Box::new(|case| match decode(case, "fieldsV1") {
            Ok(set) => Outcome::Accepted(Value::String(set.to_fields_v1_string())),
            Err(e) => Outcome::Rejected(e),
        }),
        compare: Compare::Bytes,
    });
}

#[test]
fn fieldpath_set_operations_match_upstream() {
    check(Engine {
        op: "fieldpath.set_op",
        generate: Box::new(|rng| Some(cases::fieldpath_set_op(rng))),
        run: Box::new(|case| {
            let (a, b) = match (decode(case, "a"), decode(case, "b")) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return Outcome::Rejected(e),
            };
            let result = match case["set_op"].as_str() {
                Some("union") => a.union(&b),
                Some("intersection") => a.intersection(&b),
                Some("difference") => a.difference(&b),
                other => return Outcome::Rejected(format!("unknown set op {other:?}")),
            };
            Outcome::Accepted(Value::String(result.to_fields_v1_string()))
        }),
        compare: Compare::JsonText,
    });
}

#[test]
fn fieldpath_from_value_matches_upstream() {
    let gen = CaseGen::builtin();
    assert_eq!(gen.kind_count(), cases::kinds().len(), "the built-in schema lacks some workload kinds");
    check(Engine {
        op: "fieldpath.from_value",
        generate: Box::new(|rng| gen.fieldpath_from_value(rng)),
        run: Box::new(|case| {
            let schema = builtin();
            let Some(ty) = cases::gvk_of(case).and_then(|g: Gvk| schema.root(&g)) else {
                return Outcome::Rejected("kind not in the built-in schema".into());
            };
            match field_set(&case["object"], schema, ty) {
                Ok(set) => Outcome::Accepted(Value::String(set.to_fields_v1_string())),
                Err(errors) => Outcome::Rejected(format!("{} typed errors", errors.len())),
            }
        }),
        compare: Compare::JsonText,
    });
}
