//! `fieldwise_core::json_patch::apply` against the apiserver's JSON Patch
//! (gopkg.in/evanphx/json-patch.v4, as k8s.io/apiserver v0.33 applies it).

use fieldwise_differential::cases::CaseGen;
use fieldwise_differential::outcome::{Compare, Outcome};
use fieldwise_differential::runner::{check, Engine};

#[test]
fn json_patch_apply_matches_upstream() {
    let gen = CaseGen::builtin();
    check(Engine {
        op: "json_patch.apply",
        generate: Box::new(|rng| gen.json_patch_apply(rng)),
        run: Box::new(|case| match fieldwise_core::json_patch::apply(&case["doc"], &case["patch"]) {
            Ok(value) => Outcome::Accepted(value),
            Err(e) => Outcome::Rejected(e.to_string()),
        }),
        compare: Compare::Json,
    });
}
