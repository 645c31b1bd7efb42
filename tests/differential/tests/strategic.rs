//! `fieldwise_core::strategic` against k8s.io/apimachinery v0.33.13
//! `strategicpatch` with the Go types as schema: `StrategicMergeMapPatch` (the
//! apiserver's path for `application/strategic-merge-patch+json`),
//! `CreateTwoWayMergePatch`, and `CreateThreeWayMergePatch` (kubectl apply).

use fieldwise_core::schema::{builtin, Gvk};
use fieldwise_differential::cases::{self, CaseGen};
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

/// The root type of the case's kind in the built-in schema.
fn root(case: &Value) -> Option<fieldwise_core::schema::TypeId> {
    cases::gvk_of(case).and_then(|g: Gvk| builtin().root(&g))
}

#[test]
fn strategic_apply_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "strategic.apply",
        generate: Box::new(|rng| gen.strategic_apply(rng)),
        run: Box::new(|case| match root(case) {
            Some(ty) => outcome(fieldwise_core::strategic::apply(&case["original"], &case["patch"], builtin(), ty)),
            None => Outcome::Rejected("kind not in the built-in schema".into()),
        }),
        compare: Compare::Json,
    });
}

#[test]
fn strategic_create_two_way_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "strategic.create_two_way",
        generate: Box::new(|rng| gen.strategic_two_way(rng)),
        run: Box::new(|case| match root(case) {
            Some(ty) => {
                outcome(fieldwise_core::strategic::create_two_way(&case["original"], &case["modified"], builtin(), ty))
            }
            None => Outcome::Rejected("kind not in the built-in schema".into()),
        }),
        compare: Compare::Json,
    });
}

#[test]
fn strategic_create_three_way_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "strategic.create_three_way",
        generate: Box::new(|rng| gen.strategic_three_way(rng)),
        run: Box::new(|case| match root(case) {
            Some(ty) => outcome(fieldwise_core::strategic::create_three_way(
                &case["original"],
                &case["modified"],
                &case["current"],
                builtin(),
                ty,
                case["overwrite"].as_bool().unwrap_or(false),
            )),
            None => Outcome::Rejected("kind not in the built-in schema".into()),
        }),
        compare: Compare::Json,
    });
}
