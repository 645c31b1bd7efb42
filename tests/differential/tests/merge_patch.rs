//! `fieldwise_core::merge_patch` against the apiserver's merge patch
//! (json-patch.v4 `MergePatch`), `CreateMergePatch`, and
//! `jsonmergepatch.CreateThreeWayJSONMergePatch`.

use fieldwise_differential::cases::CaseGen;
use fieldwise_differential::outcome::{Compare, Outcome};
use fieldwise_differential::runner::{check, Engine};
use serde_json::Value;

/// An engine result as an outcome.
fn outcome<E: std::fmt::Display>(result: Result<Value, E>) -> Outcome {
    match result {
        Ok(value) => Outcome::Accepted(value),
        Err(e) => Outcome::Rejected(e.to_string()),
    }
}

#[test]
fn merge_patch_apply_matches_upstream() {
    let gen = CaseGen::builtin();
    // `try_apply` is the function that answers exactly as the apiserver,
    // errors included; `apply` falls back to the RFC result where it refuses.
    check(Engine {
        op: "merge_patch.apply",
        generate: Box::new(|rng| gen.merge_patch_apply(rng)),
        run: Box::new(|case| outcome(fieldwise_core::merge_patch::try_apply(&case["doc"], &case["patch"]))),
        compare: Compare::Json,
    });
}

#[test]
fn merge_patch_create_two_way_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "merge_patch.create_two_way",
        generate: Box::new(|rng| gen.merge_patch_two_way(rng)),
        run: Box::new(|case| {
            outcome(fieldwise_core::merge_patch::create_two_way(&case["original"], &case["modified"]))
        }),
        compare: Compare::Json,
    });
}

#[test]
fn merge_patch_create_three_way_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "merge_patch.create_three_way",
        generate: Box::new(|rng| gen.merge_patch_three_way(rng)),
        run: Box::new(|case| {
            outcome(fieldwise_core::merge_patch::create_three_way(
                &case["original"],
                &case["modified"],
                &case["current"],
            ))
        }),
        compare: Compare::Json,
    });
}
